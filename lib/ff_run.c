/*
 * ff_run.c - run directories, data files, configuration templates and CPU
 * sets.
 */
#include "ff.h"

#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <ftw.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#ifndef FF_PREFIX
#define FF_PREFIX "/usr/local"
#endif

int
ff_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/*
 * The runs' base, and the part of it that is the user's (it must exist:
 * only what is below it is made). FLIMFLAM_RUNS is the user's but for its
 * last component; XDG_STATE_HOME (absolute only, as the XDG Base Directory
 * specification says) and the home directory are the user's whole.
 */
static const char *
runs_base(const char **users)
{
	static char buf[PATH_MAX], root[PATH_MAX];
	const char *v = getenv("FLIMFLAM_RUNS"), *home;
	struct passwd *pw;
	char *slash;

	if (v && *v) {
		snprintf(buf, sizeof(buf), "%s", v);
		snprintf(root, sizeof(root), "%s", v);
		while ((slash = strrchr(root, '/')) && slash > root && !slash[1])
			*slash = 0;	/* trailing slashes */
		slash = strrchr(root, '/');
		if (!slash)
			snprintf(root, sizeof(root), ".");
		else
			slash[slash == root] = 0;
	} else if ((v = getenv("XDG_STATE_HOME")) && v[0] == '/') {
		snprintf(buf, sizeof(buf), "%s/flimflam/runs", v);
		snprintf(root, sizeof(root), "%s", v);
	} else {
		home = getenv("HOME");
		if ((!home || !*home) && (pw = getpwuid(geteuid())) && pw->pw_dir && *pw->pw_dir)
			home = pw->pw_dir;
		if (!home || !*home)
			ff_die("no home directory to keep run directories in (HOME is unset and the user has none): set FLIMFLAM_RUNS");
		snprintf(buf, sizeof(buf), "%s/.local/state/flimflam/runs", home);
		snprintf(root, sizeof(root), "%s", home);
	}
	if (users)
		*users = root;
	return buf;
}

const char *
ff_runs_base(void)
{
	return runs_base(NULL);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Keep the newest $FLIMFLAM_KEEP_RUNS (default 20) run directories of ours
 * under `base`, whose names start with their time, so they sort by age.
 */
static void
prune_runs(const char *base)
{
	long keep = ff_env_long("FLIMFLAM_KEEP_RUNS", 20, 0, FF_KEEP_RUNS_MAX);
	char **names = NULL, path[PATH_MAX];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (keep <= 0 || !(d = opendir(base)))
		return;
	while ((de = readdir(d))) {
		/* 20261129-223426-fBbLCO */
		if (strlen(de->d_name) != 22 || de->d_name[8] != '-' || de->d_name[15] != '-' ||
		    strspn(de->d_name, "0123456789") != 8)
			continue;
		FF_GROW(names, n + 1, cap);
		names[n++] = ff_strdup(de->d_name);
	}
	closedir(d);
	/* Room for the one about to be made. */
	if (n > (size_t)keep - 1) {
		qsort(names, n, sizeof(*names), cmp_names);
		for (i = 0; i < n - (keep - 1); i++) {
			snprintf(path, sizeof(path), "%s/%s", base, names[i]);
			if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
				ff_remove_tree(path);
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int
ff_remove_tree(const char *path)
{
	return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* `path` made absolute (a child runs in another directory), into buf. */
static void
absolute(const char *path, char *buf, size_t n)
{
	char cwd[PATH_MAX];
	int len;

	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
		len = snprintf(buf, n, "%s/%s", cwd, path);
	else
		len = snprintf(buf, n, "%s", path);
	if (len < 0 || (size_t)len >= n)
		ff_die("'%s': %s", path, strerror(ENAMETOOLONG));
}

/* mkdir of the last component only: the parent is the user's, and must exist. */
static void
mkdir_last(const char *what, const char *path)
{
	if (mkdir(path, 0700) == 0 || errno == EEXIST)
		return;
	if (errno == ENOENT)
		ff_die("%s '%s': its parent directory does not exist (flimflam makes only the last component)",
		       what, path);
	ff_die("cannot create %s '%s': %s", what, path, strerror(errno));
}

const char *
ff_rundir(const char *given)
{
	static char buf[PATH_MAX];
	const char *base, *users;
	struct stat st;
	struct tm tm;
	time_t t;

	if (buf[0])
		return buf;
	if (given) {
		mkdir_last("run directory", given);
		if (stat(given, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid())
			ff_die("run directory '%s': not a directory of ours", given);
		absolute(given, buf, sizeof(buf));
		return buf;
	}
	base = runs_base(&users);
	if (getenv("FLIMFLAM_RUNS") && *getenv("FLIMFLAM_RUNS"))
		mkdir_last("FLIMFLAM_RUNS", base);
	else if (stat(users, &st) < 0 || !S_ISDIR(st.st_mode))
		ff_die("cannot keep run directories under '%s': it is not a directory (%s); set FLIMFLAM_RUNS",
		       users, stat(users, &st) < 0 ? strerror(errno) : "not a directory");
	else if (ff_mkdirs(base, 0700) < 0)
		ff_die("cannot create '%s': %s", base, strerror(errno));
	prune_runs(base);
	t = time(NULL);
	localtime_r(&t, &tm);
	absolute(base, buf, sizeof(buf));
	if (strlen(buf) + 1 < sizeof(buf))
		strcat(buf, "/");
	strftime(buf + strlen(buf), sizeof(buf) - strlen(buf),
		 "%Y%m%d-%H%M%S-XXXXXX", &tm);
	if (!mkdtemp(buf))
		ff_die("cannot create a run directory under '%s': %s", base,
		       strerror(errno));
	return buf;
}

const char *
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
ff_helper_path(const char *name)
{
	char dir[PATH_MAX], *p;
	const char *env = getenv("FLIMFLAM_EXEC_PATH");

	if (env && *env && (p = existing(env, name))) {
		char full[PATH_MAX];

		absolute(p, full, sizeof(full));
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

			absolute(buf, full, sizeof(full));
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

int
ff_dir_writable(const char *dir, unsigned long long need, char *why, size_t n)
{
	char path[PATH_MAX];
	struct statvfs vfs;
	int fd;

	snprintf(path, sizeof(path), "%s/.flimflam-probe-%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(why, n, "cannot write in '%s': %s", dir, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(path);
	if (need && statvfs(dir, &vfs) == 0 &&
	    (unsigned long long)vfs.f_bavail * vfs.f_frsize < need) {
		snprintf(why, n, "'%s' has %llu KiB free, less than the %llu KiB needed",
			 dir, (unsigned long long)vfs.f_bavail * vfs.f_frsize / 1024, need / 1024);
		return -1;
	}
	return 0;
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

int
ff_cpus_available(cpu_set_t *set)
{
	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof(*set), set) < 0)
		ff_die("cannot read this process's CPU affinity: %s",
		       strerror(errno));
	return CPU_COUNT(set);
}

int
ff_cpus_slot(const cpu_set_t *avail, int n, int index, cpu_set_t *out)
{
	int cpus[CPU_SETSIZE], ncpus = 0, i, first;

	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, avail))
			cpus[ncpus++] = i;
	CPU_ZERO(out);
	if (!ncpus || n <= 0)
		return 0;
	first = index * n;
	for (i = 0; i < n; i++)
		CPU_SET(cpus[(first + i) % ncpus], out);
	return first + n <= ncpus;
}

const char *
ff_cpus_str(const cpu_set_t *set)
{
	static char buf[1024];
	size_t n = 0;
	int i, j;

	buf[0] = 0;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, set))
			continue;
		for (j = i; j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, set); j++)
			;
		if (n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%d", n ? "," : "", i);
		if (j > i && n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n, "-%d", j);
		i = j;
	}
	return buf;
}

const char *
ff_user_name(void)
{
	struct passwd *pw = getpwuid(geteuid());

	return pw ? pw->pw_name : "nobody";
}
