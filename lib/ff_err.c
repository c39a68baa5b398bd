/*
 * ff_err.c - program name, messages, usage errors and exits.
 *
 * Each message is built whole and written with one write(2), so the
 * stages of a pipeline sharing a terminal do not interleave mid-line.
 */
#include "ff_base.h"
#include "ff_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int ff_verbosity;

static const char *prog = "flimflam";
static const char *usage_self;	/* the program's name in its usage texts */
static void (*cleanup)(void);
static void (*before_fail)(void);	/* ff_set_before_fail's hook */
static int pipeline_stage;	/* --pipeline-stage was given */
/* FLIMFLAM_STAGE_ERRORS=events: a stage on another host, whose reader says its failure. */
static int errors_in_events;
static int (*fail_hook)(const char *msg);

void
ff_setprog(const char *argv0)
{
	const char *slash;
	int fd;

	/*
	 * A standard fd closed at start would be the next one opened (a pipe,
	 * a log): /dev/null, read-only, holds its place. Reading it gives EOF;
	 * writing to it fails (EBADF), so a closed stdout is still an error.
	 */
	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", O_RDONLY) != fd)
			_exit(1);

	if (argv0 && *argv0) {
		slash = strrchr(argv0, '/');
		prog = slash ? slash + 1 : argv0;
	}
	ff_verbosity = ff_env_long("FLIMFLAM_VERBOSITY", 0, -1, 2);
}

const char *
ff_prog(void)
{
	return prog;
}
long
ff_env_long(const char *name, long dflt, long min, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || end == v || n < min || n > max || (min >= 0 && *v == '-'))
		ff_fail(2, "%s: '%s' is not a whole number from %ld to %ld", name, v, min, max);
	return n;
}

size_t
ff_utf8_len(const unsigned char *s)
{
	unsigned c = s[0], min, n, i, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 1, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i <= n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n + 1;
}

size_t
ff_printable_n(char *dst, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src, *end = s + len;
	char *d = dst;
	size_t n, i;

	while (s < end) {
		n = ff_utf8_len(s);
		if (n > (size_t)(end - s))
			n = 0;
		/* C0 controls (but newline and tab), DEL, C1, bytes not UTF-8. */
		if (n == 1 && (*s >= 0x20 || *s == '\n' || *s == '\t') && *s != 0x7f) {
			*d++ = *s++;
			continue;
		}
		if (n > 1 && !(s[0] == 0xc2 && s[1] < 0xa0)) {
			for (i = 0; i < n; i++)
				*d++ = *s++;
			continue;
		}
		for (i = 0; i < (n ? n : 1); i++)
			d += sprintf(d, "\\x%02x", *s++);
	}
	*d = 0;
	return d - dst;
}

/* A printable copy of `s` (malloc'd; NULL for NULL), as ff_printable_n. */
static char *
ff_printable(const char *s)
{
	char *out;

	if (!s)
		return NULL;
	out = malloc(4 * strlen(s) + 1);
	if (!out)
		ff_die("out of memory");
	ff_printable_n(out, s, strlen(s));
	return out;
}

void
ff_print(const char *fmt, ...)
{
	char *text, *shown;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		ff_die("out of memory");
	shown = ff_printable(text);
	fputs(shown, stdout);
	free(shown);
	free(text);
}

static int live_shown;	/* ff_live's line is on the terminal */

static void
vreport(const char *pfx, const char *fmt, va_list ap)
{
	char msg[4096], line[4 * sizeof(msg) + 256];
	int n, saved = errno;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		msg[0] = 0;
	n = snprintf(line, sizeof(line), "%s%s: ", pfx, prog);
	if (n < 0)
		n = 0;
	n += ff_printable_n(line + n, msg, strlen(msg));
	line[n++] = '\n';
	ff_live_clear();	/* a message takes the status line's place */
	if (write(2, line, n) < 0) {
		/* nowhere left to report it */
	}
	errno = saved;
}

void
ff_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void
ff_info(const char *fmt, ...)
{
	va_list ap;

	if (ff_verbosity < 1)
		return;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void
ff_debug(const char *fmt, ...)
{
	va_list ap;

	if (ff_verbosity < 2)
		return;
	va_start(ap, fmt);
	vreport("debug: ", fmt, ap);
	va_end(ap);
}

void
ff_say(const char *fmt, ...)
{
	char text[4096], line[4 * sizeof(text)];
	va_list ap;
	int n;

	if (ff_verbosity < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = ff_printable_n(line, text, strlen(text));
	ff_live_clear();
	if (n > 0 && write(2, line, n) < 0) {
		/* nowhere left to report it */
	}
}

int
ff_live_on(void)
{
	static int on = -1;

	if (on < 0)
		on = isatty(2) && ff_verbosity >= 0;
	return on;
}

void
ff_live(const char *fmt, ...)
{
	static char last[512];
	char text[sizeof(last)], line[4 * sizeof(text)];
	struct winsize ws;
	int n, width = 80;
	va_list ap;

	if (!ff_live_on())
		return;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		width = ws.ws_col;
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > width - 1)
		text[width - 1] = 0;
	if (live_shown && !strcmp(text, last))
		return;		/* the same line again */
	snprintf(last, sizeof(last), "%s", text);
	memcpy(line, "\r\033[K", 4);
	n = ff_printable_n(line + 4, text, strlen(text));
	live_shown = 1;
	if (n >= 0 && write(2, line, 4 + n) < 0) {
		/* nowhere to show it */
	}
}

void
ff_live_clear(void)
{
	if (live_shown && write(2, "\r\033[K", 4) < 0) {
		/* nowhere to show it */
	}
	live_shown = 0;
}

void
ff_set_cleanup(void (*fn)(void))
{
	cleanup = fn;
}

void
ff_set_pipeline_stage(void)
{
	const char *e = getenv("FLIMFLAM_STAGE_ERRORS");

	pipeline_stage = 1;
	/* Taken, not passed on: a stage this one starts says its own failures to it. */
	errors_in_events = e && !strcmp(e, "events");
	unsetenv("FLIMFLAM_STAGE_ERRORS");
}

int
ff_stage_errors_in_events(void)
{
	return errors_in_events;
}

int
ff_pipeline_stage(void)
{
	return pipeline_stage;
}

void
ff_set_before_fail(void (*fn)(void))
{
	before_fail = fn;
}

void
ff_set_fail_hook(int (*fn)(const char *msg))
{
	fail_hook = fn;
}

void
ff_quit(int status)
{
	if (cleanup) {
		void (*fn)(void) = cleanup;

		cleanup = NULL;	/* a failure inside cleanup must not loop */
		fn();
	}
	/* What stdio still holds is lost with a closed or full output. */
	if (fflush(stdout) == EOF)
		_exit(status);
	exit(status);
}

noreturn static void
vfail(int status, const char *fmt, va_list ap)
{
	if (before_fail)
		before_fail();
	if (fail_hook) {
		int (*fn)(const char *) = fail_hook;
		char msg[2048];
		va_list aq;

		fail_hook = NULL;	/* a failure inside it must not loop */
		va_copy(aq, ap);
		vsnprintf(msg, sizeof(msg), fmt, aq);
		va_end(aq);
		/* Its reader says it: a line on our stderr could be lost on its way. */
		if (fn(msg))
			ff_quit(status);
	}
	vreport("", fmt, ap);
	ff_quit(status);
}

void
ff_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(1, fmt, ap);
}

void
ff_fail(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(status, fmt, ap);
}

void
ff_usage_self(const char *self)
{
	usage_self = self;
}

/*
 * Write `usage`, only its synopsis (up to the first blank line) when
 * `synopsis`; renamed as ff_usage_self says when flimflam ran us as one of
 * its commands.
 */
static void
put_usage(FILE *f, const char *usage, int synopsis)
{
	int rename = usage_self && !strncmp(prog, "flimflam ", 9) && strcmp(prog, usage_self);
	size_t selflen = rename ? strlen(usage_self) : 0;
	int delta = rename ? (int)strlen(prog) - (int)selflen : 0, shift = 0, in_synopsis = 1;
	const char *line = usage, *end, *at, *p;

	for (; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end + 1 : line + strlen(line);
		if (*line == '\n') {
			if (synopsis)
				return;
			in_synopsis = 0;
		}
		p = line;
		if (rename && in_synopsis && *line == ' ' && !memmem(line, end - line, usage_self, selflen)) {
			/* a line aligned under the name: move it as the name grew */
			if (shift > 0)
				fprintf(f, "%*s", shift, "");
			else
				while (p < end && p - line < -shift && *p == ' ')
					p++;
		}
		while (rename && (at = memmem(p, end - p, usage_self, selflen))) {
			fwrite(p, 1, at - p, f);
			fputs(prog, f);
			p = at + selflen;
			shift = delta;
		}
		fwrite(p, 1, end - p, f);
	}
}

void
ff_usage(const char *usage, int code)
{
	int e;

	errno = 0;
	put_usage(code ? stderr : stdout, usage, 0);
	/*
	 * A text longer than stdio's buffer meets a full disk while it is
	 * written, and stdio keeps no errno for the flush: say it now.
	 */
	e = !code && ferror(stdout) ? errno : 0;
	if (e && e != EPIPE) {
		ff_warn("cannot write to standard output: %s", strerror(e));
		exit(1);
	}
	exit(ff_finish() ? 1 : code);
}

void
ff_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	/* The synopsis only: -h gives the rest. */
	put_usage(stderr, usage, 1);
	exit(2);
}

int
ff_finish(void)
{
	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (errno == EPIPE)
			return 0;
		ff_warn("cannot write to standard output: %s",
			errno ? strerror(errno) : "write error");
		return 1;
	}
	return 0;
}
