/*
 * ff_rundir.c - run directories: made, named by time, held while in use,
 * the oldest not in use pruned.
 */
#include "ff.h"
#include "ff_int.h"

#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <ftw.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

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

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove a directory tree (no symlinks followed). 0 or -1. */
static int
ff_remove_tree(const char *path)
{
	return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Is the run directory `path` in use (a run, or a bench that names it, holds
 * a shared flock on its FF_IN_USE)? When not, *fd holds an exclusive lock on
 * it (or -1: a directory without one, from before FF_IN_USE), for as long as
 * the directory is being removed.
 */
static int
in_use(const char *path, int *fd)
{
	char file[PATH_MAX];

	*fd = -1;
	if (snprintf(file, sizeof(file), "%s/%s", path, FF_IN_USE) >= (int)sizeof(file))
		return 1;
	if ((*fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno != ENOENT;
	if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	close(*fd);
	*fd = -1;
	return 1;
}

/*
 * Keep the newest $FLIMFLAM_KEEP_RUNS (default 20) run directories of ours
 * under `base`, whose names start with their time, so they sort by age;
 * one in use is never removed (it is kept beside the newest).
 */
static void
prune_runs(const char *base)
{
	long keep = ff_env_long("FLIMFLAM_KEEP_RUNS", 20, 0, FF_KEEP_RUNS_MAX);
	char **names = NULL, path[PATH_MAX];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	int fd;
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
			if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
			    in_use(path, &fd))
				continue;
			ff_remove_tree(path);
			if (fd >= 0)
				close(fd);
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int
ff_rundir_hold(const char *dir)
{
	char file[PATH_MAX];
	int fd;

	if (snprintf(file, sizeof(file), "%s/%s", dir, FF_IN_USE) >= (int)sizeof(file)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(file, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		return -1;
	if (flock(fd, LOCK_SH) < 0) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
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

static char buf[PATH_MAX];	/* the run directory, once made or given */

const char *
ff_rundir_known(void)
{
	return buf[0] ? buf : NULL;
}

const char *
ff_rundir(const char *given)
{
	const char *base, *users;
	struct stat st;
	struct tm tm;
	time_t t;
	int lock;

	if (buf[0])
		return buf;
	if (given) {
		mkdir_last("run directory", given);
		if (stat(given, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid())
			ff_die("run directory '%s': not a directory of ours", given);
		ff_absolute(given, buf, sizeof(buf));
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
	/*
	 * The runs base locked while it is pruned and the new directory made
	 * and held: no pruner sees the new one before it is in use.
	 */
	if ((lock = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || flock(lock, LOCK_EX) < 0)
		ff_die("cannot lock '%s': %s", base, strerror(errno));
	prune_runs(base);
	t = time(NULL);
	localtime_r(&t, &tm);
	ff_absolute(base, buf, sizeof(buf));
	if (strlen(buf) + 1 < sizeof(buf))
		strcat(buf, "/");
	strftime(buf + strlen(buf), sizeof(buf) - strlen(buf),
		 "%Y%m%d-%H%M%S-XXXXXX", &tm);
	if (!mkdtemp(buf))
		ff_die("cannot create a run directory under '%s': %s", base,
		       strerror(errno));
	/* Held until exit: its fd is kept, and not inherited. */
	if (ff_rundir_hold(buf) < 0)
		ff_die("cannot mark run directory '%s' in use: %s", buf, strerror(errno));
	close(lock);
	return buf;
}
