/*
 * ff_err.c - program name, messages, usage errors and exits.
 *
 * Each message is built whole and written with one write(2), so the
 * stages of a pipeline sharing a terminal do not interleave mid-line.
 */
#include "ff.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int ff_verbosity;

static const char *prog = "flimflam";
static void (*cleanup)(void);

void
ff_setprog(const char *argv0)
{
	const char *slash, *v;

	if (argv0 && *argv0) {
		slash = strrchr(argv0, '/');
		prog = slash ? slash + 1 : argv0;
	}
	v = getenv("FLIMFLAM_VERBOSITY");
	if (v)
		ff_verbosity = atoi(v);
}

const char *
ff_prog(void)
{
	return prog;
}

static void
vreport(const char *pfx, const char *fmt, va_list ap)
{
	char line[4096];
	int n, saved = errno;

	n = snprintf(line, sizeof(line), "%s%s: ", pfx, prog);
	if (n < 0)
		n = 0;
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
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
	char line[4096];
	va_list ap;
	int n;

	if (ff_verbosity < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	if (n > 0 && write(2, line, n) < 0) {
		/* nowhere left to report it */
	}
}

void
ff_set_cleanup(void (*fn)(void))
{
	cleanup = fn;
}

noreturn static void
vfail(int status, const char *fmt, va_list ap)
{
	vreport("", fmt, ap);
	if (cleanup) {
		void (*fn)(void) = cleanup;

		cleanup = NULL;	/* a failure inside cleanup must not loop */
		fn();
	}
	fflush(stdout);
	exit(status);
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
ff_usage(const char *usage, int code)
{
	fputs(usage, code ? stderr : stdout);
	fflush(stdout);
	exit(code);
}

void
ff_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	const char *end = strstr(usage, "\n\n");

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	/* The synopsis only: -h gives the rest. */
	fwrite(usage, 1, end ? (size_t)(end - usage) + 1 : strlen(usage), stderr);
	exit(2);
}

int
ff_finish(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (errno == EPIPE)
			return 0;
		ff_warn("cannot write to standard output: %s", strerror(errno));
		return 1;
	}
	return 0;
}

char *
ff_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		ff_die("out of memory");
	return s;
}
