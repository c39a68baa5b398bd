/*
 * ff_out.c - output files: what a program writes for the user (ff-flame -o,
 * bench --output, perf.data, flamegraph.html) and its own files, by what is
 * at the path. A regular file (or none) is replaced atomically; a device or
 * a FIFO is written into; a symlink is followed; anything else is refused.
 */
#include "ff_base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Say why `o` failed, for the caller to report; returns -1. */
static int
failed(struct ff_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->err, sizeof(o->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* The directory part of `path` ("." if none) into buf. */
static void
dir_of(const char *path, char *buf, size_t n)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, n, ".");
	else if (slash == path)
		snprintf(buf, n, "/");
	else
		snprintf(buf, n, "%.*s", (int)(slash - path), path);
}

/*
 * Follow symlinks from `path` to what they name (which may not exist: a
 * dangling link names the file to create). 0 with *st filled (st_mode 0
 * when missing), or -1 with errno.
 */
static int
resolve(const char *path, char *target, size_t n, struct stat *st)
{
	char link[PATH_MAX], dir[PATH_MAX];
	ssize_t len;
	int hops;

	if (snprintf(target, n, "%s", path) >= (int)n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (hops = 0; hops < 40; hops++) {
		if (lstat(target, st) < 0) {
			if (errno != ENOENT)
				return -1;
			memset(st, 0, sizeof(*st));
			return 0;
		}
		if (!S_ISLNK(st->st_mode))
			return 0;
		if ((len = readlink(target, link, sizeof(link) - 1)) < 0)
			return -1;
		link[len] = 0;
		dir_of(target, dir, sizeof(dir));
		if ((link[0] == '/' ? snprintf(target, n, "%s", link) :
		     snprintf(target, n, "%s/%s", dir, link)) >= (int)n) {
			errno = ENAMETOOLONG;
			return -1;
		}
	}
	errno = ELOOP;
	return -1;
}

/* `pattern` with its '*' replaced by the base name of `path`, beside it. */
static void
old_name(const char *path, const char *pattern, char *buf, size_t n)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	const char *star = strchr(pattern, '*');

	snprintf(buf, n, "%.*s%.*s%s%s", (int)(base - path), path,
		 (int)(star - pattern), pattern, base, star + 1);
}

/* What ff_out_check and ff_out_open share: where, and how. */
static int
plan(struct ff_out *o, const char *path, int flags, const char *old, struct ff_buf *why)
{
	char dir[PATH_MAX];
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->flags = flags;
	snprintf(o->given, sizeof(o->given), "%s", path);
	/* /dev/stdout to a pipe: /proc's links name no path, yet open them. */
	if (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		snprintf(o->path, sizeof(o->path), "%s", path);
		o->direct = 1;
		return 0;
	}
	if (resolve(path, o->path, sizeof(o->path), &st) < 0) {
		ff_why(why, "%s", strerror(errno));
		return -1;
	}
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		o->direct = 1;
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		ff_why(why, "it is a directory");
		return -1;
	}
	if (st.st_mode && !S_ISREG(st.st_mode)) {
		ff_why(why, "it is not a regular file, a character device or a FIFO");
		return -1;
	}
	o->exists = st.st_mode != 0;
	o->mode = st.st_mode & 07777;
	if (o->exists && (flags & FF_OUT_NEW)) {
		ff_why(why, "it exists");
		return -1;
	}
	dir_of(o->path, dir, sizeof(dir));
	if (ff_dir_writable(dir, 0, why) < 0)
		return -1;
	if (old && o->exists) {
		old_name(o->path, old, o->old, sizeof(o->old));
		if (lstat(o->old, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			ff_why(why, "'%s', where the previous one is kept, is %s", o->old,
			       S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
			return -1;
		}
	}
	return 0;
}

int
ff_out_check(struct ff_out *o, const char *path, int flags, const char *old)
{
	struct ff_buf why = FF_BUF_INIT;
	int r = 0;

	if (plan(o, path, flags, old, &why) < 0)
		r = failed(o, "cannot write '%s': %s", path, why.s);
	ff_buf_free(&why);
	return r;
}

int
ff_out_open(struct ff_out *o, const char *path, int flags, const char *old, mode_t mode)
{
	if (ff_out_check(o, path, flags, old) < 0)
		return -1;
	if (o->direct && (flags & FF_OUT_DEFER)) {
		/* The other program's file goes beside the name given. */
		snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%d", path, (int)getpid());
		return 0;
	}
	if (o->direct) {
		/* No O_TRUNC, no O_CREAT: it is there, and is not ours to replace. */
		if ((o->fd = open(o->path, O_WRONLY | O_CLOEXEC)) < 0)
			goto fail;
		return 0;
	}
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%d", o->path, (int)getpid());
	if (flags & FF_OUT_DEFER)
		return 0;
	/* Ours by its pid: one left by a process that had it before is replaced. */
	if ((o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode)) < 0) {
		o->tmp[0] = 0;
		goto fail;
	}
	/* A replaced file keeps its permissions. */
	if (o->exists && fchmod(o->fd, o->mode) < 0)
		goto fail;
	return 0;
fail:
	failed(o, "cannot write '%s': %s", path, strerror(errno));
	ff_out_abort(o);
	return -1;
}

int
ff_out_write(struct ff_out *o, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(o->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			failed(o, "cannot write '%s': %s", o->given, strerror(errno));
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* Deferred into a device or FIFO: copy the other program's file into it. */
static int
copy_into(struct ff_out *o)
{
	char buf[65536];
	ssize_t n;
	int in = open(o->tmp, O_RDONLY | O_CLOEXEC), saved;

	if (in < 0 || (o->fd = open(o->path, O_WRONLY | O_CLOEXEC)) < 0) {
		saved = errno;
		if (in >= 0)
			close(in);
		failed(o, "cannot write '%s': %s", o->given, strerror(saved));
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			close(in);
			failed(o, "cannot read '%s': %s", o->tmp, strerror(saved));
			return -1;
		}
		if (ff_out_write(o, buf, n) < 0) {
			close(in);
			return -1;
		}
	}
	close(in);
	return 0;
}

int
ff_out_commit(struct ff_out *o)
{
	int fd = o->fd;
	struct stat st;

	if (o->direct && o->tmp[0] && copy_into(o) < 0)
		goto fail;
	fd = o->fd;
	o->fd = -1;
	if (fd >= 0 && close(fd) < 0) {
		failed(o, "cannot write '%s': %s", o->given, strerror(errno));
		goto fail;
	}
	if (o->direct) {
		if (o->tmp[0])
			unlink(o->tmp);
		o->tmp[0] = 0;
		return 0;
	}
	/* Another program's file, too, keeps the replaced file's permissions. */
	if ((o->flags & FF_OUT_DEFER) && o->exists && chmod(o->tmp, o->mode) < 0) {
		failed(o, "cannot write '%s': %s", o->given, strerror(errno));
		goto fail;
	}
	if (o->old[0] && lstat(o->path, &st) == 0 && S_ISREG(st.st_mode) &&
	    rename(o->path, o->old) < 0) {
		failed(o, "cannot keep the previous '%s' as '%s': %s", o->given, o->old,
			strerror(errno));
		goto fail;
	}
	if (rename(o->tmp, o->path) < 0) {
		failed(o, "cannot write '%s': %s", o->given, strerror(errno));
		goto fail;
	}
	o->tmp[0] = 0;
	return 0;
fail:
	ff_out_abort(o);
	return -1;
}

void
ff_out_abort(struct ff_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = 0;
}

int
ff_write_file(const char *path, const char *text, mode_t mode)
{
	struct ff_out o;

	if (ff_out_open(&o, path, 0, NULL, mode) < 0 ||
	    ff_out_write(&o, text, strlen(text)) < 0 || ff_out_commit(&o) < 0) {
		ff_warn("%s", o.err);
		ff_out_abort(&o);
		return -1;
	}
	return 0;
}

int
ff_lock_dir(const char *dir, const char *what, struct ff_buf *why)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			ff_why(why, "another flimflam is writing %s in '%s' now; wait for it "
			       "to finish, or work in another directory", what, dir);
		else
			ff_why(why, "cannot lock '%s': %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Names claimed and not yet replaced: removed at exit while still empty. */
static struct {
	char path[PATH_MAX];
	dev_t dev;
	ino_t ino;
} claims[8];
static int nclaims;

static void
unclaim(void)
{
	struct stat st;
	int i;

	for (i = 0; i < nclaims; i++)
		if (lstat(claims[i].path, &st) == 0 && st.st_dev == claims[i].dev &&
		    st.st_ino == claims[i].ino && st.st_size == 0)
			unlink(claims[i].path);
}

int
ff_out_claim(const char *path)
{
	static int registered;
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && nclaims < (int)FF_ARRAY_SIZE(claims) &&
	    snprintf(claims[nclaims].path, PATH_MAX, "%s", path) < PATH_MAX) {
		claims[nclaims].dev = st.st_dev;
		claims[nclaims++].ino = st.st_ino;
		if (!registered++)
			atexit(unclaim);
	}
	close(fd);
	return 0;
}

/* Give up the claim of `path`, the last made, removing its file. */
static void
unclaim_last(const char *path)
{
	if (nclaims && !strcmp(claims[nclaims - 1].path, path))
		nclaims--;
	unlink(path);
}

int
ff_out_claim_new(const char *stem, const char *const ext[], int next, char *buf, size_t n)
{
	char path[PATH_MAX];
	int i, j, saved;

	for (i = 1; i < 10000; i++) {
		if ((i == 1 ? snprintf(buf, n, "%s", stem) : snprintf(buf, n, "%s-%d", stem, i)) >= (int)n ||
		    strlen(buf) + 16 >= sizeof(path)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		for (j = 0; j < next; j++) {
			snprintf(path, sizeof(path), "%s%s", buf, ext[j]);
			if (ff_out_claim(path) < 0)
				break;
		}
		if (j == next)
			return 0;
		saved = errno;
		while (j--) {
			snprintf(path, sizeof(path), "%s%s", buf, ext[j]);
			unclaim_last(path);
		}
		if (saved != EEXIST) {
			errno = saved;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}
