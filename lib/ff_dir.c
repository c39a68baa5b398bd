/*
 * ff_dir.c - directories: paths made absolute, trees made (mkdir -p), and
 * whether a directory can take files.
 */
#include "ff_base.h"
#include "ff_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

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

void
ff_absolute(const char *path, char *buf, size_t n)
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

int
ff_dir_writable(const char *dir, unsigned long long need, struct ff_buf *why)
{
	char path[PATH_MAX];
	struct statvfs vfs;
	int fd;

	snprintf(path, sizeof(path), "%s/.flimflam-probe-%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		ff_why(why, "cannot write in '%s': %s", dir, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(path);
	if (need && statvfs(dir, &vfs) == 0 &&
	    (unsigned long long)vfs.f_bavail * vfs.f_frsize < need) {
		ff_why(why, "'%s' has %llu KiB free, less than the %llu KiB needed",
			 dir, (unsigned long long)vfs.f_bavail * vfs.f_frsize / 1024, need / 1024);
		return -1;
	}
	return 0;
}
