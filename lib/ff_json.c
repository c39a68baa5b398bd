/*
 * ff_json.c - JSON-lines events over jansson.
 *
 * One compact object per line, "event" first (jansson keeps insertion
 * order), flushed per line because stdio buffers pipes fully.
 */
#include "ff_base.h"
#include "ff_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

json_t *
ff_event(const char *name)
{
	json_t *ev = json_object();

	json_object_set_new(ev, "event", json_string(name));
	return ev;
}

void
ff_emit(json_t *ev)
{
	char *s;

	if (!ev)
		return;
	s = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(10));
	json_decref(ev);
	if (!s)
		ff_die("cannot encode an event: out of memory");
	if (fputs(s, stdout) == EOF || putchar('\n') == EOF || fflush(stdout) == EOF)
		ff_write_failed();
	free(s);
}

void
ff_write_failed(void)
{
	/* Nothing more can be said on stdout: stdio must not try again. */
	int err = errno;

	if (fcntl(1, F_GETFD) >= 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0 && dup2(fd, 1) >= 0)
			close(fd);
	}
	clearerr(stdout);
	if (err == EPIPE)
		ff_quit(128 + SIGPIPE);
	ff_die("cannot write to standard output: %s", strerror(err));
}

/* 1 when stdout is a pipe whose reader has closed it (checked without writing). */
static int
ff_stdout_gone(void)
{
	struct pollfd pfd = { 1, 0, 0 };

	/* A pipe whose reader closed reports POLLERR, even for events 0. */
	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLERR | POLLHUP));
}

void
ff_check_stdout(void)
{
	/* A write of nothing still fails on a closed or read-only fd. */
	if (write(1, "", 0) < 0)
		ff_write_failed();
	if (ff_stdout_gone()) {
		errno = EPIPE;
		ff_write_failed();
	}
}

static int error_said;	/* an error event is on its way */
static int error_out;	/* and it went out whole */

/* An `error` event of ours: "said": false when our reader says it (ff_base.h). */
static json_t *
error_ev(const char *msg)
{
	json_t *ev = ff_event("error");

	json_object_set_new(ev, "program", json_string(ff_prog()));
	json_object_set_new(ev, "message", ff_json_text(msg));
	if (ff_stage_errors_in_events())
		json_object_set_new(ev, "said", json_false());
	return ev;
}

static void
emit_error(const char *msg)
{
	error_said = 1;
	ff_emit(error_ev(msg));
	error_out = 1;
}

int
ff_error_event(const char *msg)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	json_t *ev;
	char *s;

	if (error_said || ff_stdout_gone())
		return error_out && ff_stage_errors_in_events();
	error_said = 1;
	ev = error_ev(msg);
	s = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(10));
	json_decref(ev);
	/* Written as it can be: a reader gone is no SIGPIPE here, and no new failure. */
	sigaction(SIGPIPE, &ign, &old);
	error_out = s && fflush(stdout) != EOF && write(1, s, strlen(s)) == (ssize_t)strlen(s) &&
		    write(1, "\n", 1) == 1;
	sigaction(SIGPIPE, &old, NULL);
	free(s);
	return error_out && ff_stage_errors_in_events();
}

void
ff_die_event(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit_error(msg);
	ff_die("%s", msg);
}

static int
utf8_valid(const char *s)
{
	size_t n;

	for (; *s; s += n)
		if (!(n = ff_utf8_len((const unsigned char *)s)))
			return 0;
	return 1;
}

json_t *
ff_json_text(const char *s)
{
	char *buf, *q;
	json_t *j;
	size_t n;

	if (!s)
		return json_null();
	if (utf8_valid(s))
		return json_string(s);
	q = buf = ff_realloc(NULL, 3 * strlen(s) + 1);
	for (; *s; s += n ? n : 1)
		if ((n = ff_utf8_len((const unsigned char *)s)))
			q = mempcpy(q, s, n);
		else
			q = stpcpy(q, "\xEF\xBF\xBD");	/* U+FFFD */
	*q = 0;
	j = json_string(buf);
	free(buf);
	return j;
}

char *
ff_file_url(const char *path)
{
	char cwd[PATH_MAX], *full, *buf, *q;
	const unsigned char *p;

	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
		full = ff_asprintf("%s/%s", cwd, path);
	else
		full = ff_asprintf("%s", path);
	q = buf = ff_realloc(NULL, sizeof("file://") + 3 * strlen(full));
	q = stpcpy(q, "file://");
	for (p = (const unsigned char *)full; *p; p++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			   "0123456789-._~/", *p))
			*q++ = *p;
		else
			q += sprintf(q, "%%%02X", *p);
	*q = 0;
	free(full);
	return buf;
}

json_t *
ff_json_path(const char *s)
{
	char *url;
	json_t *j;

	if (!s)
		return json_null();
	if (utf8_valid(s))
		return json_string(s);
	url = ff_file_url(s);
	j = json_string(url);
	free(url);
	return j;
}

static int
hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10);
}

char *
ff_json_path_value(const json_t *v)
{
	const char *s = json_string_value(v), *p;
	char *out, *q;

	if (!s)
		return NULL;
	if (strncmp(s, "file://", 7))
		return ff_strdup(s);
	q = out = ff_realloc(NULL, strlen(s) + 1);
	/* Each %XX decoded where it stands (sscanf would measure the rest each time). */
	for (p = s + 7; *p; p++)
		if (*p == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			*q++ = (char)(hexval(p[1]) << 4 | hexval(p[2]));
			p += 2;
		} else
			*q++ = *p;
	*q = 0;
	return out;
}

const char *
ff_event_name(const json_t *ev)
{
	const char *s = json_string_value(json_object_get(ev, "event"));

	return s ? s : "";
}

json_t *
ff_event_find(const json_t *events, const char *name)
{
	size_t i;
	json_t *ev;

	json_array_foreach(events, i, ev)
		if (!strcmp(ff_event_name(ev), name))
			return ev;
	return NULL;
}

double
ff_json_num(const json_t *obj, const char *key, double dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

const char *
ff_json_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

const char *
ff_json_str_or(const json_t *obj, const char *key, const char *dflt)
{
	const char *s = ff_json_str(obj, key);

	return s ? s : dflt;
}

ssize_t
ff_reader_fill(struct ff_reader *r)
{
	ssize_t n;

	if (r->eof)
		return 0;
	/* What ff_reader_next took goes, once per fill: linear in the stream. */
	if (r->off) {
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	/* An event is a few kilobytes: a line this long is not one (/dev/zero). */
	if (r->len >= FF_READER_MAX_LINE && !memchr(r->buf, '\n', r->len))
		ff_die("%s:%ld: a line of more than %d MiB: not an event stream (one JSON object per line)",
		       r->name, r->line + 1, FF_READER_MAX_LINE >> 20);
	if (r->cap - r->len < 65536)
		r->buf = ff_grow(r->buf, r->cap + 1, &r->cap, 1, 131072);
	do
		n = read(r->fd, r->buf + r->len, r->cap - r->len - 1);
	while (n < 0 && errno == EINTR && !ff_signalled());
	if (n == 0)
		r->eof = 1;
	if (n > 0)
		r->len += n;
	return n;
}

json_t *
ff_reader_next(struct ff_reader *r)
{
	char *line, *nl;
	json_t *ev;
	json_error_t err;
	size_t linelen;

	while (r->off < r->len) {
		line = r->buf + r->off;
		nl = memchr(line, '\n', r->len - r->off);
		if (!nl) {
			if (!r->eof)
				return NULL;
			nl = r->buf + r->len;	/* last line without newline */
			r->buf[r->len] = '\n';
		}
		*nl = 0;
		linelen = nl - line;
		r->line++;
		ev = NULL;
		if (linelen)
			ev = json_loadb(line, linelen, 0, &err);
		if (linelen && (!ev || !json_is_object(ev))) {
			json_decref(ev);
			ev = NULL;
			if (r->strict)
				ff_die_event("%s:%ld: expected an event (a JSON object per line): "
					     "%s reads the event stream of flimflam's programs",
					     r->name, r->line, ff_prog());
			ff_warn("%s:%ld: expected a JSON object", r->name,
				r->line);
		}
		r->off += linelen + 1 > r->len - r->off ? r->len - r->off : linelen + 1;
		if (ev)
			return ev;
	}
	return NULL;
}

void
ff_reader_free(struct ff_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->len = r->cap = 0;
}
