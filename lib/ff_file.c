/*
 * ff_file.c - files: data files and helper programs, found beside the
 * executable or under the install prefix; programs on PATH; whole files
 * read, and their lines.
 */
#include "ff_base.h"
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
ff_program(const char *name)
{
	char *p = ff_helper_path(name), *w;

	if (strchr(p, '/'))
		return p;
	w = ff_which(p);
	free(p);
	return w;
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
