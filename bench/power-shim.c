/*
 * power-shim.so - a known cost per byte written, for bench/power.sh: loaded
 * into a relay with LD_PRELOAD, it runs FF_SHIM_LOOPS_PER_KB turns of a
 * loop (whose CPU cost bench/power.sh measures) for each KiB that
 * write(), writev(), send(), sendto(), sendmsg() or sendfile() passes on,
 * before passing the call on unchanged. 0 (or unset): no cost, a build
 * that only goes through the same wrapper.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static double loops_per_byte;
static double owed;		/* turns not yet run (fractions carry over) */

/* The loop bench/power.sh calibrates (power-shim -c): the same body. */
unsigned long
power_shim_spin(unsigned long n)
{
	volatile unsigned long x = 0;

	while (n--)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

/* Read at load: nginx's workers lose the environment, not what the master had read. */
__attribute__((constructor)) static void
init(void)
{
	const char *e = getenv("FF_SHIM_LOOPS_PER_KB");

	loops_per_byte = e ? atof(e) / 1024 : 0;
}

static void
cost(long bytes)
{
	unsigned long n;

	if (bytes <= 0 || loops_per_byte <= 0)
		return;
	owed += bytes * loops_per_byte;
	n = (unsigned long)owed;
	owed -= n;
	power_shim_spin(n);
}

/* The next definition of `name` (libc's), found once. */
#define NEXT(name) \
	static __typeof__(name) *next_##name; \
	if (!next_##name) \
		next_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* `name` (ssize_t, with `params`): libc's, given `args`, then the cost of what it passed on. */
#define WRAP(name, params, args) \
	ssize_t name params \
	{ \
		NEXT(name); \
		ssize_t r = next_##name args; \
		cost(r); \
		return r; \
	}

WRAP(write, (int fd, const void *buf, size_t len), (fd, buf, len))
WRAP(writev, (int fd, const struct iovec *iov, int n), (fd, iov, n))
WRAP(send, (int fd, const void *buf, size_t len, int flags), (fd, buf, len, flags))
WRAP(sendto, (int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tl),
     (fd, buf, len, flags, to, tl))
WRAP(sendmsg, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags))
WRAP(sendfile, (int out, int in, off_t *off, size_t count), (out, in, off, count))
