/*
 * ff_json.c - JSON-lines events over jansson.
 *
 * One compact object per line, "event" first (jansson keeps insertion
 * order), flushed per line because stdio buffers pipes fully.
 */
#include "ff.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static int stdout_closed;

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
	if (!stdout_closed) {
		if (fputs(s, stdout) == EOF || putchar('\n') == EOF ||
		    fflush(stdout) == EOF) {
			if (errno != EPIPE)
				ff_die("cannot write to standard output: %s",
				       strerror(errno));
			stdout_closed = 1;
			clearerr(stdout);
		}
	}
	free(s);
}

int
ff_stdout_closed(void)
{
	return stdout_closed;
}

void
ff_emit_start(void)
{
	json_t *ev = ff_event("start");

	json_object_set_new(ev, "schema", json_integer(FF_SCHEMA));
	json_object_set_new(ev, "tool", json_string(ff_prog()));
	json_object_set_new(ev, "version", json_string(FF_VERSION));
	json_object_set_new(ev, "time", json_string(ff_iso_time()));
	json_object_set_new(ev, "pid", json_integer(getpid()));
	ff_emit(ev);
}

void
ff_emit_end(int status)
{
	json_t *ev = ff_event("end");

	json_object_set_new(ev, "program", json_string(ff_prog()));
	json_object_set_new(ev, "status", json_integer(status));
	ff_emit(ev);
}

void
ff_emit_error(const char *fmt, ...)
{
	char msg[2048];
	json_t *ev;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev = ff_event("error");
	json_object_set_new(ev, "program", json_string(ff_prog()));
	json_object_set_new(ev, "message", json_string(msg));
	ff_emit(ev);
}

void
ff_die_event(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ff_emit_error("%s", msg);
	ff_die("%s", msg);
}

const char *
ff_event_name(const json_t *ev)
{
	const char *s = json_string_value(json_object_get(ev, "event"));

	return s ? s : "";
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

ssize_t
ff_reader_fill(struct ff_reader *r)
{
	ssize_t n;

	if (r->eof)
		return 0;
	if (r->cap - r->len < 65536) {
		size_t cap = r->cap ? r->cap * 2 : 131072;
		char *b = realloc(r->buf, cap);

		if (!b)
			ff_die("out of memory");
		r->buf = b;
		r->cap = cap;
	}
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
	char *nl;
	json_t *ev;
	json_error_t err;
	size_t linelen;

	while (r->len) {
		nl = memchr(r->buf, '\n', r->len);
		if (!nl) {
			if (!r->eof)
				return NULL;
			nl = r->buf + r->len;	/* last line without newline */
			r->buf[r->len] = '\n';
		}
		*nl = 0;
		linelen = nl - r->buf;
		r->line++;
		ev = NULL;
		if (linelen)
			ev = json_loadb(r->buf, linelen, 0, &err);
		if (linelen && (!ev || !json_is_object(ev))) {
			ff_warn("%s:%ld: expected a JSON object", r->name,
				r->line);
			json_decref(ev);
			ev = NULL;
		}
		linelen = linelen + 1 > r->len ? r->len : linelen + 1;
		memmove(r->buf, r->buf + linelen, r->len - linelen);
		r->len -= linelen;
		if (ev)
			return ev;
	}
	return NULL;
}

json_t *
ff_reader_get(struct ff_reader *r)
{
	json_t *ev;

	for (;;) {
		ev = ff_reader_next(r);
		if (ev || r->eof)
			return ev;
		if (ff_reader_fill(r) < 0) {
			if (ff_signalled())
				return NULL;
			ff_die("cannot read %s: %s", r->name, strerror(errno));
		}
	}
}

void
ff_reader_free(struct ff_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->len = r->cap = 0;
}
