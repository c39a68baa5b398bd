/*
 * ff_mem.c - memory that dies when it runs out: allocation, arrays that
 * grow, byte buffers, argument vectors.
 */
#include "ff_base.h"

#include <stdint.h>
#include <string.h>

void *
ff_realloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		ff_die("out of memory");
	return p;
}

char *
ff_strdup(const char *s)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		ff_die("out of memory");
	return d;
}

/* vasprintf(3) that dies rather than fail; the length in *len. */
static char *
vformat(const char *fmt, va_list ap, size_t *len)
{
	char *s;
	int r = vasprintf(&s, fmt, ap);

	if (r < 0)
		ff_die("out of memory");
	*len = (size_t)r;
	return s;
}

char *
ff_asprintf(const char *fmt, ...)
{
	va_list ap;
	size_t len;
	char *s;

	va_start(ap, fmt);
	s = vformat(fmt, ap, &len);
	va_end(ap);
	return s;
}

void *
ff_grow(void *p, size_t need, size_t *cap, size_t size, size_t first)
{
	size_t n = *cap;

	if (need <= n)
		return p;
	if (!n)
		n = first ? first : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			ff_die("out of memory");
		n *= 2;
	}
	if (n > SIZE_MAX / size)
		ff_die("out of memory");
	p = ff_realloc(p, n * size);
	*cap = n;
	return p;
}

void
ff_buf_add(struct ff_buf *b, const char *s, size_t n)
{
	if (n > SIZE_MAX - b->len - 1)
		ff_die("out of memory");
	FF_GROW(b->s, b->len + n + 1, b->cap);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void
ff_buf_addstr(struct ff_buf *b, const char *s)
{
	ff_buf_add(b, s, strlen(s));
}

void
ff_buf_shell_word(struct ff_buf *b, const char *s)
{
	ff_buf_addstr(b, "'");
	for (; *s; s++)
		if (*s == '\'')
			ff_buf_addstr(b, "'\\''");
		else
			ff_buf_add(b, s, 1);
	ff_buf_addstr(b, "'");
}

static void
vbuf_printf(struct ff_buf *b, const char *fmt, va_list ap)
{
	size_t len;
	char *s = vformat(fmt, ap, &len);

	ff_buf_add(b, s, len);
	free(s);
}

void
ff_buf_printf(struct ff_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vbuf_printf(b, fmt, ap);
	va_end(ap);
}

void
ff_why(struct ff_buf *why, const char *fmt, ...)
{
	va_list ap;

	why->len = 0;
	va_start(ap, fmt);
	vbuf_printf(why, fmt, ap);
	va_end(ap);
}

char *
ff_buf_take(struct ff_buf *b)
{
	char *s = b->s ? b->s : ff_strdup("");

	*b = (struct ff_buf)FF_BUF_INIT;
	return s;
}

void
ff_buf_free(struct ff_buf *b)
{
	free(b->s);
	*b = (struct ff_buf)FF_BUF_INIT;
}

void
ff_argv_add(struct ff_argv *a, const char *s)
{
	FF_GROW(a->v, a->n + 2, a->cap);
	a->v[a->n++] = ff_strdup(s);
	a->v[a->n] = NULL;
}

void
ff_argv_addl(struct ff_argv *a, ...)
{
	const char *s;
	va_list ap;

	va_start(ap, a);
	while ((s = va_arg(ap, const char *)))
		ff_argv_add(a, s);
	va_end(ap);
}

void
ff_argv_addf(struct ff_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		ff_die("out of memory");
	va_end(ap);
	FF_GROW(a->v, a->n + 2, a->cap);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

void
ff_argv_free(struct ff_argv *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	*a = (struct ff_argv)FF_ARGV_INIT;
}
