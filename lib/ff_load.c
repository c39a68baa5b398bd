/*
 * ff_load.c - what the builtin programs share: the clients' window event,
 * their waits on the clock and their failure record, and how every one of
 * them starts its threads.
 */
#include "ff.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
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
ff_emit_window(long warmup, long duration, double monotonic, double ready)
{
	json_t *ev = ff_event("window");

	json_object_set_new(ev, "warmup_s", json_integer(warmup));
	json_object_set_new(ev, "duration_s", json_integer(duration));
	json_object_set_new(ev, "time", json_string(ff_iso_time()));
	json_object_set_new(ev, "monotonic_s", json_real(ff_usec(monotonic)));
	if (ready >= 0)
		json_object_set_new(ev, "ready_s", json_real(ff_usec(ready)));
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

double
ff_load_margin_s(long warmup, long duration, long jobs)
{
	double margin = 0.2 * (double)(warmup + duration);

	return (margin > 10 ? margin : 10) + jobs * 0.002;
}

double
ff_load_first_bytes_s(long warmup, long duration, long jobs)
{
	return 0.7 * ff_load_margin_s(warmup, duration, jobs);
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

void
ff_load_watch(int epfd, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { events, { .ptr = ptr } };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		ff_die("epoll_ctl: %s", strerror(errno));
}

void
ff_load_unwatch_close(int epfd, int fd)
{
	/* ENOENT, EBADF: not in the set, or closed already; nothing to undo. */
	epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

int
ff_load_events(int epfd, struct epoll_event *evs, int max, int timeout)
{
	int n = epoll_wait(epfd, evs, max, timeout);

	if (n < 0 && errno != EINTR)
		ff_die("epoll_wait: %s", strerror(errno));
	return n < 0 ? 0 : n;
}

/* The failure record: the first failure wins; the eventfd wakes the main thread. */
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int fail_id;	/* 0: none yet */
static atomic_int stopping;
static char fail_why[256];
static int fail_fd = -1, fail_port;
static const char *fail_host;

void
ff_load_fail_init(const char *host, int port)
{
	fail_host = host;
	fail_port = port;
	fail_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fail_fd < 0)
		ff_die("cannot create an eventfd: %s", strerror(errno));
}

void
ff_load_fail(int id, const char *why)
{
	uint64_t one = 1;

	if (ff_load_stopping())
		return;
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
ff_load_stop(void)
{
	atomic_store(&stopping, 1);
}

int
ff_load_stopping(void)
{
	return atomic_load(&stopping);
}

void
ff_load_check(const char *phase)
{
	if (ff_signalled())
		ff_exit_signalled();
	if (atomic_load(&fail_id)) {
		/* Held to the end: no thread rewrites fail_why under us. */
		pthread_mutex_lock(&fail_lock);
		ff_die("connection %d to %s:%d failed during the %s: %s",
		       atomic_load(&fail_id), fail_host, fail_port, phase, fail_why);
	}
}

void
ff_load_wait(double when, const char *phase)
{
	while (ff_wait_until(when, fail_fd) != 0)
		ff_load_check(phase);
	ff_load_check(phase);
}

void
ff_load_options(struct ff_load_opts *o, int argc, char *argv[])
{
	const char *addr = o->server ? "--address" : "--host";
	struct option own[16];
	const struct option *m, *longopts;
	size_t n = 0;
	long port = -1;
	int c;

	ff_setprog(argv[0]);
	own[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	own[n++] = (struct option)FF_LONGOPT_VERSION;
	if (!o->server)
		own[n++] = (struct option)FF_LONGOPT_PIPELINE_STAGE;
	own[n++] = (struct option){ "port", required_argument, NULL, 'p' };
	own[n++] = (struct option){ addr + 2, required_argument, NULL, 'a' };
	for (m = o->more; m && m->name && n < FF_ARRAY_SIZE(own) - 1; m++)
		own[n++] = *m;
	own[n] = (struct option){ NULL, 0, NULL, 0 };
	longopts = ff_runspec_options(own, o->mask);
	if (o->rs)
		ff_runspec_init(o->rs);
	o->host = "127.0.0.1";
	memset(&o->sa, 0, sizeof(o->sa));
	o->sa.sin_family = AF_INET;
	o->sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	opterr = 0;
	while ((c = ff_getopt(argc, argv, ":h", longopts, o->usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(o->usage, 0);
		case 'p':
			port = ff_parse_long(o->usage, "--port", optarg, 1, 65535);
			break;
		case 'a':
			o->host = ff_parse_ipv4(o->usage, addr, optarg);
			ff_inet_addr(o->host, &o->sa.sin_addr);
			break;
		default:
			if ((!o->rs || !ff_runspec_take(o->rs, o->usage, c, optarg)) && o->take)
				o->take(c, optarg);
		}
	if (optind < argc)
		ff_usage_error(o->usage, "unexpected argument '%s'", argv[optind]);
	if (port < 0)
		ff_usage_error(o->usage, "missing --port");
	o->port = (int)port;
	o->sa.sin_port = htons(o->port);
}

/* The server's workers, and its adopt, for deal(). */
static int serve_n;
static void (*serve_adopt)(int fd, int k);

static void
deal(int fd)
{
	static int next;

	serve_adopt(fd, next++ % serve_n);
}

int
ff_load_serve(const struct ff_load_opts *o, void (*start)(int n), void (*adopt)(int fd, int k))
{
	int lfd;

	ff_signals_init();
	ff_raise_nofile(LONG_MAX);
	lfd = ff_listen_on(o->host, o->port);
	serve_n = ff_load_threads(FF_LOAD_MOST, 0);
	serve_adopt = adopt;
	start(serve_n);
	ff_accept_loop(lfd, deal);
	/* Terminated: that is how a server's life ends. */
	return ff_finish();
}
