/*
 * ff_template.c - the relays' configurations: templates filled with values
 * written as each syntax needs (nginx, nghttpx, skrouterd), nginx's quoted
 * strings, and the user name the configurations carry.
 */
#include "ff.h"
#include "ff_int.h"

#include <errno.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

/* NAME_LINES values are configuration lines the program built itself. */
static int
fragment(const char *name)
{
	size_t n = strlen(name);

	return n > 6 && !strcmp(name + n - 6, "_LINES");
}

/* A value placed as a bare word: a number or a name of ours. */
static int
plain(const char *v)
{
	return strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		      "0123456789._:/+-") == strlen(v);
}

char *
ff_nginx_quote(const char *s)
{
	size_t n = 2;
	const char *p;
	char *out, *q;

	for (p = s; *p; p++)
		n += 1 + (*p == '"' || *p == '\\');
	q = out = ff_realloc(NULL, n + 1);
	*q++ = '"';
	for (p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			*q++ = '\\';
		*q++ = *p;
	}
	*q++ = '"';
	*q = 0;
	return out;
}

/*
 * Can `val` stand at this place of the template? `quoted`: inside an nginx
 * "..." string of the template, where it is escaped. Returns the reason it
 * cannot, or NULL.
 */
static const char *
refused(enum ff_conf_syntax syntax, const char *name, const char *val, int quoted)
{
	if (fragment(name))
		return strpbrk(val, "{}@") ? "it holds a brace or '@'" : NULL;
	if (strpbrk(val, "\n\r"))
		return "a configuration line cannot hold a newline";
	switch (syntax) {
	case FF_CONF_NGINX:
		/* Bare words of nginx end at whitespace, ';', '{', quotes... */
		return quoted || plain(val) ? NULL :
			"it is not a plain word (the template must quote it)";
	case FF_CONF_NGHTTPX:
		/* key=value: the value is the rest of the line, as it is. */
		return NULL;
	case FF_CONF_SKROUTERD:
		/* key: value, unquoted. */
		return plain(val) ? NULL : "it is not a plain word";
	}
	return "unknown syntax";
}

char *
ff_template_fill(const char *tmpl_path, enum ff_conf_syntax syntax, const char *const vars[])
{
	char *tmpl = ff_read_file(tmpl_path, NULL), *p, *q, *esc;
	struct ff_buf out = FF_BUF_INIT;
	const char *why;
	int i, quoted = 0, comment = 0;

	if (!tmpl) {
		ff_warn("cannot read '%s': %s", tmpl_path, strerror(errno));
		return NULL;
	}
	for (p = tmpl; *p; ) {
		const char *val = NULL;
		size_t vlen;

		esc = NULL;
		if (*p != '@' || !(q = strchr(p + 1, '@')) || q == p + 1 ||
		    strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != (size_t)(q - p - 1)) {
			/* nginx strings: "..." with \" and \\ inside. */
			if (syntax == FF_CONF_NGINX && *p == '\\' && quoted && p[1]) {
				val = p;
				vlen = 2;
				q = p + 1;
			} else {
				if (syntax == FF_CONF_NGINX && *p == '#' && !quoted)
					comment = 1;
				else if (*p == '\n')
					comment = 0;
				else if (syntax == FF_CONF_NGINX && *p == '"' && !comment)
					quoted = !quoted;
				val = p;
				vlen = 1;
				q = p;
			}
		} else {
			for (i = 0; vars[i]; i += 2)
				if (strlen(vars[i]) == (size_t)(q - p - 1) &&
				    !strncmp(vars[i], p + 1, q - p - 1))
					break;
			if (!vars[i]) {
				ff_warn("%s: unknown placeholder '%.*s'", tmpl_path,
					(int)(q - p + 1), p);
				goto fail;
			}
			val = vars[i + 1];
			if ((why = refused(syntax, vars[i], val, quoted))) {
				ff_warn("%s: value of %s cannot be written in the configuration: '%s': %s",
					tmpl_path, vars[i], val, why);
				goto fail;
			}
			if (quoted) {
				/* Without the quotes ff_nginx_quote puts around it. */
				esc = ff_nginx_quote(val);
				esc[strlen(esc) - 1] = 0;
				val = esc + 1;
			}
			vlen = strlen(val);
		}
		ff_buf_add(&out, val, vlen);
		free(esc);
		p = q + 1;
	}
	free(tmpl);
	return ff_buf_take(&out);
fail:
	ff_buf_free(&out);
	free(tmpl);
	return NULL;
}

const char *
ff_user_name(void)
{
	struct passwd *pw = getpwuid(geteuid());

	return pw ? pw->pw_name : "nobody";
}
