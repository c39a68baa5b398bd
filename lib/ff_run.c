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

const char *
ff_runs_base(void)
{
	static char buf[PATH_MAX];
	const char *v = getenv("FLIMFLAM_RUNS"), *home;

	if (v && *v)
		return v;
	if ((v = getenv("XDG_STATE_HOME")) && *v)
		snprintf(buf, sizeof(buf), "%s/flimflam/runs", v);
	else {
		home = getenv("HOME");
		snprintf(buf, sizeof(buf), "%s/.local/state/flimflam/runs",
			 home && *home ? home : "/");
	}
	return buf;
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
	const char *v = getenv("FLIMFLAM_KEEP_RUNS");
	long keep = v && *v ? strtol(v, NULL, 10) : 20;
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
		if (n == cap && !(names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names))))
			break;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	/* Room for the one about to be made. */
	if (names && n > (size_t)keep - 1) {
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

const char *
ff_rundir(const char *given)
{
	static char buf[PATH_MAX];
	const char *base;
	struct stat st;
	struct tm tm;
	time_t t;

	if (buf[0])
		return buf;
	if (given) {
		if (ff_mkdirs(given, 0700) < 0)
			ff_die("cannot create '%s': %s", given, strerror(errno));
		if (stat(given, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid())
			ff_die("run directory '%s': not a directory of ours", given);
		snprintf(buf, sizeof(buf), "%s", given);
		return buf;
	}
	base = ff_runs_base();
	if (ff_mkdirs(base, 0700) < 0)
		ff_die("cannot create '%s': %s", base, strerror(errno));
	prune_runs(base);
	t = time(NULL);
	localtime_r(&t, &tm);
	snprintf(buf, sizeof(buf), "%s/", base);
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

	if (env && *env && (p = existing(env, name)))
		return p;
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
	return strdup(name);
}

char *
ff_which(const char *prog)
{
	const char *path = getenv("PATH"), *p, *colon;
	char buf[PATH_MAX];
	struct stat st;

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? strdup(prog) : NULL;
	for (p = path ? path : "/usr/bin:/bin"; p; p = colon ? colon + 1 : NULL) {
		colon = strchr(p, ':');
		snprintf(buf, sizeof(buf), "%.*s/%s",
			 colon ? (int)(colon - p) : (int)strlen(p), p, prog);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(buf, X_OK) == 0)
			return strdup(buf);
	}
	return NULL;
}

char *
ff_read_file(const char *path, size_t *lenp)
{
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), saved;

	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			nb = realloc(buf, cap);
			if (!nb) {
				saved = ENOMEM;
				goto fail;
			}
			buf = nb;
		}
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

char *
ff_template_fill(const char *tmpl_path, const char *const vars[])
{
	char *tmpl = ff_read_file(tmpl_path, NULL), *out, *p, *q;
	size_t cap, len = 0;
	int i;

	if (!tmpl) {
		ff_warn("cannot read '%s': %s", tmpl_path, strerror(errno));
		return NULL;
	}
	for (i = 0; vars[i]; i += 2)
		if (strpbrk(vars[i + 1], fragment(vars[i]) ? "{}@" : "\n\r{};\"'@#")) {
			ff_warn("%s: value of %s would change the configuration: '%s'",
				tmpl_path, vars[i], vars[i + 1]);
			free(tmpl);
			return NULL;
		}
	cap = strlen(tmpl) + 1;
	out = malloc(cap);
	for (p = tmpl; out && *p; ) {
		const char *val = NULL;
		size_t vlen;

		if (*p != '@' || !(q = strchr(p + 1, '@')) || q == p + 1 ||
		    strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != (size_t)(q - p - 1)) {
			val = p;
			vlen = 1;
			q = p;
		} else {
			for (i = 0; vars[i]; i += 2)
				if (strlen(vars[i]) == (size_t)(q - p - 1) &&
				    !strncmp(vars[i], p + 1, q - p - 1))
					val = vars[i + 1];
			if (!val) {
				ff_warn("%s: unknown placeholder '%.*s'", tmpl_path,
					(int)(q - p + 1), p);
				free(out);
				free(tmpl);
				return NULL;
			}
			vlen = strlen(val);
		}
		if (len + vlen + 1 > cap) {
			cap = (len + vlen + 1) * 2;
			out = realloc(out, cap);
			if (!out)
				break;
		}
		memcpy(out + len, val, vlen);
		len += vlen;
		p = q + 1;
	}
	free(tmpl);
	if (!out)
		ff_die("out of memory");
	out[len] = 0;
	return out;
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
