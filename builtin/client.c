/*
 * ff-builtin-client - the client of the builtin streaming TCP workload.
 * Opens --jobs connections to 127.0.0.1:PORT (usually a relay in front of
 * ff-builtin-server), streams on each without pause, and counts the bytes
 * the server echoes back. Only the bytes received inside the window are
 * counted: the window opens --warmup seconds after the client starts
 * (once every connection is up) and lasts --duration seconds.
 *
 * Events on stdout (ff-workload adds start and end around them):
 *   window  when the window opens
 *   sample  once a second of the window, from its own interval
 *   result  when it closes, then the connections are closed
 *
 * A few threads, each with an epoll set of its non-blocking connections
 * (edge-triggered); each turn writes and reads until the socket would
 * block, so the echo never deadlocks. What the server echoes is taken off
 * the socket with recv(MSG_TRUNC), which for TCP consumes the bytes and
 * returns their count without copying them out (tcp(7)): the client never
 * looks at them, and the copy was a fifth of its CPU (bench/README.md).
 * Every byte taken is added to the thread's own counter (one relaxed atomic
 * store, no I/O); the main thread reads the counters on a CLOCK_MONOTONIC
 * timer.
 */
#include "ff.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-builtin-client --port PORT [--jobs N] [--warmup SECONDS]\n"
	"                         [--duration SECONDS]\n"
	"\n"
	"Stream to 127.0.0.1:PORT on N connections (default 2) and count the\n"
	"bytes echoed back during a window of --duration seconds (default 5)\n"
	"that opens --warmup seconds (default 5) after the start.\n"
	"--version prints the version. --pipeline-stage (ff-workload gives it as\n"
	"flimflam's stage): a signal stops it without a \"stopped by\" line.\n";

/* Bytes per write and recv: bench/README.md (-DIO_BYTES=n to try). */
#ifndef IO_BYTES
#define IO_BYTES (1024 * 1024)
#endif
/* Bytes one connection may move per turn before the others get theirs. */
#define TURN_BYTES (4 * IO_BYTES)
#define MAX_THREADS 8

struct conn {
	int fd;
	int id;			/* 1..jobs, for messages */
	int queued;
};

struct worker {
	_Atomic uint64_t bytes;	/* received; written by this worker only */
	pthread_t tid;
	int epfd;
	int wakefd;		/* eventfd: the main thread says stop */
	struct conn **ready;	/* connections with work left over */
	int nready;
} __attribute__((aligned(64)));

static int port;
static struct conn *conns;	/* jobs of them */
static const char *wbuf;	/* what we send: constant, shared */
static atomic_int stopping;

static void
fail(const struct conn *c, const char *why)
{
	if (!atomic_load(&stopping))
		ff_load_fail(c->id, why);
}

/*
 * Write and read until both would block. Returns 1 when the turn's budget
 * ran out first (more to do), 0 when done for now, -1 on failure.
 */
static int
pump(struct worker *w, struct conn *c)
{
	size_t moved = 0;
	int progress;
	ssize_t n;

	do {
		progress = 0;
		n = write(c->fd, wbuf, IO_BYTES);
		if (n > 0) {
			moved += n;
			progress = 1;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			fail(c, strerror(errno));
			return -1;
		}
		n = recv(c->fd, NULL, IO_BYTES, MSG_TRUNC);
		if (n > 0) {
			/* Single writer: a relaxed load and store, no locked add. */
			atomic_store_explicit(&w->bytes,
				atomic_load_explicit(&w->bytes, memory_order_relaxed) + n,
				memory_order_relaxed);
			moved += n;
			progress = 1;
		} else if (n == 0) {
			fail(c, "closed by the other end");
			return -1;
		} else if (errno != EAGAIN && errno != EINTR) {
			fail(c, strerror(errno));
			return -1;
		}
	} while (progress && moved < TURN_BYTES);
	return progress;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[64];
	int n, k, i, nbatch;

	while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
		n = epoll_wait(w->epfd, evs, FF_ARRAY_SIZE(evs),
			       w->nready ? 0 : -1);
		if (n < 0 && errno != EINTR)
			ff_die("epoll_wait: %s", strerror(errno));
		for (k = 0; k < n; k++) {
			struct conn *c = evs[k].data.ptr;

			if (!c || c->queued)
				continue;	/* the wake-up, or on the list */
			switch (pump(w, c)) {
			case -1:
				return NULL;
			case 1:
				c->queued = 1;
				w->ready[w->nready++] = c;
			}
		}
		/* One more turn for each connection that had more to do. */
		nbatch = w->nready;
		for (i = 0; i < nbatch; i++) {
			struct conn *c = w->ready[i];

			switch (pump(w, c)) {
			case -1:
				return NULL;
			case 0:
				c->queued = 0;
				w->ready[i] = NULL;
			}
		}
		for (i = k = 0; i < nbatch; i++)
			if (w->ready[i])
				w->ready[k++] = w->ready[i];
		w->nready = k;
	}
	return NULL;
}

static int
connect_one(void)
{
	struct sockaddr_in sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		ff_die("cannot create a socket: %s", strerror(errno));
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno != EINTR)
			ff_die("cannot connect to 127.0.0.1:%d: %s", port,
			       strerror(errno));
		if (ff_signalled())
			ff_exit_signalled();
	}
	return fd;
}

static uint64_t
count(const struct worker *ws, int n)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += atomic_load_explicit(&ws[i].bytes, memory_order_relaxed);
	return sum;
}

static struct worker *
start(int jobs, int *nw)
{
	struct worker *ws;
	struct epoll_event ev;
	int n = ff_load_threads(MAX_THREADS, jobs), i;
	char *b;

	b = aligned_alloc(4096, IO_BYTES);
	ws = aligned_alloc(64, n * sizeof(*ws));
	conns = calloc(jobs, sizeof(*conns));
	if (!b || !ws || !conns)
		ff_die("out of memory");
	memset(b, 'x', IO_BYTES);
	wbuf = b;
	memset(ws, 0, n * sizeof(*ws));
	for (i = 0; i < n; i++) {
		ws[i].epfd = ff_load_epoll();
		ws[i].wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ws[i].ready = calloc(jobs / n + 1, sizeof(*ws[i].ready));
		if (ws[i].wakefd < 0)
			ff_die("cannot create an eventfd: %s", strerror(errno));
		if (!ws[i].ready)
			ff_die("out of memory");
		ev.events = EPOLLIN;
		ev.data.ptr = NULL;
		epoll_ctl(ws[i].epfd, EPOLL_CTL_ADD, ws[i].wakefd, &ev);
	}

	/* Every connection first: failing to connect is an error. */
	for (i = 0; i < jobs; i++) {
		struct worker *w = &ws[i % n];

		conns[i].fd = connect_one();
		conns[i].id = i + 1;
		ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
		ev.data.ptr = &conns[i];
		if (fcntl(conns[i].fd, F_SETFL, O_NONBLOCK) < 0 ||
		    epoll_ctl(w->epfd, EPOLL_CTL_ADD, conns[i].fd, &ev) < 0)
			ff_die("cannot watch a connection: %s",
			       strerror(errno));
	}

	for (i = 0; i < n; i++)
		ff_load_thread(&ws[i].tid, NULL, worker_main, &ws[i]);
	*nw = n;
	return ws;
}

/* Stop the workers, then the streams: close every connection. */
static void
stop(struct worker *ws, int n, int jobs)
{
	uint64_t one = 1;
	int i;

	atomic_store(&stopping, 1);
	for (i = 0; i < n; i++)
		if (write(ws[i].wakefd, &one, sizeof(one)) < 0) {
			/* already woken */
		}
	for (i = 0; i < n; i++)
		pthread_join(ws[i].tid, NULL);
	for (i = 0; i < jobs; i++)
		close(conns[i].fd);
}

static void
emit_sample(double elapsed, double interval, uint64_t bytes)
{
	json_t *ev = ff_event("sample");

	json_object_set_new(ev, "elapsed_s", json_real(ff_usec(elapsed)));
	json_object_set_new(ev, "bytes", json_integer(bytes));
	json_object_set_new(ev, "bits", json_integer(8 * bytes));
	json_object_set_new(ev, "bits_per_s", json_real(8 * bytes / interval));
	ff_emit(ev);
}

static void
run(int jobs, long warmup, long duration)
{
	double t0 = ff_now(), open, t, prev, len;
	uint64_t b0, b, bprev;
	struct worker *ws;
	json_t *ev;
	int nw, i;

	ff_load_fail_init(port);
	ws = start(jobs, &nw);
	ff_load_wait(t0 + warmup, "warmup");

	open = ff_now();
	b0 = count(ws, nw);
	ff_emit_window(warmup, duration, open);

	prev = open;
	bprev = b0;
	for (i = 1; i <= duration; i++) {
		ff_load_wait(open + i, "window");
		t = ff_now();
		b = count(ws, nw);
		emit_sample(t - open, t - prev, b - bprev);
		prev = t;
		bprev = b;
	}
	ff_load_check("window");
	stop(ws, nw, jobs);

	len = ff_usec(prev - open);
	ev = ff_event("result");
	json_object_set_new(ev, "workload", json_string("builtin"));
	json_object_set_new(ev, "jobs", json_integer(jobs));
	json_object_set_new(ev, "duration_s", json_real(len));
	json_object_set_new(ev, "bytes", json_integer(bprev - b0));
	json_object_set_new(ev, "bits", json_integer(8 * (bprev - b0)));
	json_object_set_new(ev, "bits_per_s", json_real(8 * (bprev - b0) / len));
	json_object_set_new(ev, "operations", json_null());
	json_object_set_new(ev, "ops_per_s", json_null());
	json_object_set_new(ev, "errors", json_integer(0));
	ff_emit(ev);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		FF_LONGOPT_PIPELINE_STAGE,
		{ "port", required_argument, NULL, 'p' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	long jobs = 2, warmup = 5, duration = 5, p = -1;
	int c;

	ff_setprog(argv[0]);
	opterr = 0;
	while ((c = ff_getopt(argc, argv, ":h", longopts, usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case 'p':
			p = ff_parse_long(usage, "--port", optarg, 1, 65535);
			break;
		case 'j':
			jobs = ff_parse_run_opt(usage, "--jobs", optarg);
			break;
		case 'w':
			warmup = ff_parse_run_opt(usage, "--warmup", optarg);
			break;
		case 'd':
			duration = ff_parse_run_opt(usage, "--duration", optarg);
			break;
		}
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (p < 0)
		ff_usage_error(usage, "missing --port");
	port = p;

	ff_signals_init();
	ff_raise_nofile(jobs + 64);
	run(jobs, warmup, duration);
	return ff_finish();
}
