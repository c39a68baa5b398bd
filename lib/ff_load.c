/*
 * ff_load.c - what the builtin programs share: the clients' window event,
 * their waits on the clock and their failure record, and how every one of
 * them starts its threads.
 */
#include "ff.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

void
ff_emit_window(long warmup, long duration, double monotonic)
{
	json_t *ev = ff_event("window");

	json_object_set_new(ev, "warmup_s", json_integer(warmup));
	json_object_set_new(ev, "duration_s", json_integer(duration));
	json_object_set_new(ev, "time", json_string(ff_iso_time()));
	json_object_set_new(ev, "monotonic_s", json_real(ff_usec(monotonic)));
	ff_emit(ev);
}

int
ff_wait_until(double when, int fd)
{
	struct pollfd pfd[2] = {
		{ ff_signal_fd(), POLLIN, 0 },
		{ fd, POLLIN, 0 },
	};
	struct timespec ts;
	double left;

	for (;;) {
		if (ff_signalled())
			return -1;
		if (pfd[1].revents)
			return 1;
		left = when - ff_now();
		if (left <= 0)
			return 0;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		if (ppoll(pfd, 2, &ts, NULL) < 0 && errno != EINTR)
			ff_die("ppoll: %s", strerror(errno));
	}
}

double
ff_usec(double s)
{
	return round(s * 1e6) / 1e6;
}

int
ff_load_threads(int most, long jobs)
{
	cpu_set_t set;
	int n = ff_cpus_available(&set);

	if (jobs > 0 && n > jobs)
		n = (int)jobs;
	return n < 1 ? 1 : n > most ? most : n;
}

void
ff_load_thread(pthread_t *tid, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(tid, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		ff_die("cannot start a thread: %s", strerror(err));
}

int
ff_load_epoll(void)
{
	int fd = epoll_create1(EPOLL_CLOEXEC);

	if (fd < 0)
		ff_die("cannot create an event queue: %s", strerror(errno));
	return fd;
}

/* The failure record: the first failure wins; the eventfd wakes the main thread. */
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int fail_id;	/* 0: none yet */
static char fail_why[256];
static int fail_fd = -1, fail_port;

void
ff_load_fail_init(int port)
{
	fail_port = port;
	fail_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fail_fd < 0)
		ff_die("cannot create an eventfd: %s", strerror(errno));
}

void
ff_load_fail(int id, const char *why)
{
	uint64_t one = 1;

	pthread_mutex_lock(&fail_lock);
	if (!atomic_load(&fail_id)) {
		snprintf(fail_why, sizeof(fail_why), "%s", why);
		atomic_store(&fail_id, id);
	}
	pthread_mutex_unlock(&fail_lock);
	if (write(fail_fd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero */
	}
}

void
ff_load_check(const char *phase)
{
	if (ff_signalled())
		ff_exit_signalled();
	if (atomic_load(&fail_id)) {
		/* Held to the end: no thread rewrites fail_why under us. */
		pthread_mutex_lock(&fail_lock);
		ff_die("connection %d to 127.0.0.1:%d failed during the %s: %s",
		       atomic_load(&fail_id), fail_port, phase, fail_why);
	}
}

void
ff_load_wait(double when, const char *phase)
{
	while (ff_wait_until(when, fail_fd) != 0)
		ff_load_check(phase);
	ff_load_check(phase);
}
