/*
 * ff_data.c - data files and helper programs, found beside the executable
 * or under the install prefix; whole files read; configuration templates
 * filled; the user name the relays' configurations carry.
 */
#include "ff.h"
#include "ff_int.h"

#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FF_PREFIX
#define FF_PREFIX "/usr/local"
#endif

/* The directory of this program's executable (static). */
static const char *
ff_exedir(void)
{
	static char buf[PATH_MAX];
	ssize_t n;
	char *slash;

	if (buf[0])
		return buf;
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0) {
		snprintf(buf, sizeof(buf), ".");
		return buf;
	}
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (slash)
		*slash = 0;
	return buf;
}

static char *
existing(const char *dir, const char *rel)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, rel) < 0)
		return NULL;
	if (access(p, F_OK) == 0)
		return p;
	free(p);
	return NULL;
}

char *
ff_datapath(const char *rel)
{
	char dir[PATH_MAX], *p;

	/* A checkout: bin/../relay-conf. */
	snprintf(dir, sizeof(dir), "%s/..", ff_exedir());
	if ((p = existing(dir, rel)))
		return p;
	/* Installed: PREFIX/bin/../share/flimflam, then the built-in prefix. */
	snprintf(dir, sizeof(dir), "%s/../share/flimflam", ff_exedir());
	if ((p = existing(dir, rel)))
		return p;
	return existing(FF_PREFIX "/share/flimflam", rel);
}

char *
ff_data_text(const char *rel)
{
	char *path = ff_datapath(rel), *text;

	if (!path)
		ff_die("cannot find '%s' beside the program or under the install prefix", rel);
	text = ff_read_file(path, NULL);
	if (!text)
		ff_die("cannot read '%s': %s", path, strerror(errno));
	free(path);
	return text;
}

char *
ff_helper_path(const char *name)
{
	char dir[PATH_MAX], *p;
	const char *env = getenv("FLIMFLAM_EXEC_PATH");

	if (env && *env && (p = existing(env, name))) {
		char full[PATH_MAX];

		ff_absolute(p, full, sizeof(full));
		free(p);
		return ff_strdup(full);
	}
	if ((p = existing(ff_exedir(), name)))
		return p;
	snprintf(dir, sizeof(dir), "%s/../builtin", ff_exedir());
	if ((p = existing(dir, name)))
		return p;
	snprintf(dir, sizeof(dir), "%s/../libexec/flimflam", ff_exedir());
	if ((p = existing(dir, name)))
		return p;
	if ((p = existing(FF_PREFIX "/libexec/flimflam", name)))
		return p;
	return ff_strdup(name);
}

char *
ff_which(const char *prog)
{
	const char *path = getenv("PATH"), *p, *colon;
	char buf[PATH_MAX];
	struct stat st;

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? ff_strdup(prog) : NULL;
	for (p = path ? path : "/usr/bin:/bin"; p; p = colon ? colon + 1 : NULL) {
		int len;

		colon = strchr(p, ':');
		len = colon ? (int)(colon - p) : (int)strlen(p);
		/* An empty entry is the current directory, as for the shell. */
		snprintf(buf, sizeof(buf), "%.*s/%s", len ? len : 1, len ? p : ".", prog);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(buf, X_OK) == 0) {
			/* Absolute: children run in other directories. */
			char full[PATH_MAX];

			ff_absolute(buf, full, sizeof(full));
			return ff_strdup(full);
		}
	}
	return NULL;
}

char *
ff_read_file(const char *path, size_t *lenp)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), saved;

	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - len < 4096)
			buf = ff_grow(buf, cap + 1, &cap, 1, 8192);
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
fail:
	close(fd);
	free(buf);
	errno = saved;
	return NULL;
}

void
ff_lines_init(struct ff_lines *l, char *text, size_t len)
{
	*l = (struct ff_lines){ text, text ? text + len : NULL, 0, 0 };
}

char *
ff_lines_next(struct ff_lines *l)
{
	char *line = l->p, *nl;

	if (!line || line >= l->end)
		return NULL;
	nl = memchr(line, '\n', l->end - line);
	l->complete = nl != NULL;
	if (!nl)
		nl = l->end;	/* the text's own NUL */
	*nl = 0;
	l->p = nl + 1;
	l->n++;
	return line;
}

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
