/*
 * ff-builtin-client - the client of the builtin streaming TCP workload.
 * Opens --jobs connections to 127.0.0.1:PORT (usually a relay in front of
 * ff-builtin-server), streams on each without pause, and counts the bytes
 * the server echoes back. Only the bytes received inside the window are
 * counted: the window opens --warmup seconds after every connection has
 * carried its first bytes back (first_bytes) and lasts --duration seconds.
 *
 * Events on stdout (ff-workload adds start and end around them):
 *   window  when the window opens
 *   sample  once a second of the window, from its own interval
 *   interval  every --interval seconds of the window, likewise
 *   result  when it closes, then the connections are closed
 *
 * A few threads, each with an epoll set of its non-blocking connections
 * (edge-triggered); each turn writes and reads until the socket would
 * block, so the echo never deadlocks. What the server echoes is taken off
 * the socket with recv(MSG_TRUNC), which for TCP consumes the bytes and
 * returns their count without copying them out (tcp(7)): the client never
 * looks at them, and the copy was a fifth of its CPU (bench/README.md).
 * The window is cut by timestamps, not by when the main thread wakes: the
 * bytes of every recv count in the part of the window (between two edges:
 * each second, each --interval) that the CLOCK_MONOTONIC time just after it
 * falls in, in the thread's own counter of that part (one clock read and a
 * relaxed store, no I/O). Once an edge has passed, the main thread waits
 * for any thread still inside its count (the `busy` flag), and then the
 * parts before the edge are final: the samples, the intervals and the
 * result add up exactly, and a main thread that wakes late (a busy
 * machine) stretches nothing.
 */
#include "ff.h"

#include <errno.h>
#include <fcntl.h>
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
	"usage: ff-builtin-client --port PORT [--host ADDRESS] [--jobs N]\n"
	"                         [--warmup SECONDS] [--duration SECONDS]\n"
	"                         [--interval SECONDS]\n"
	"\n"
	"Stream to ADDRESS:PORT (default 127.0.0.1) on N connections (default 2) and count the\n"
	"bytes echoed back during a window of --duration seconds (default 5)\n"
	"that opens --warmup seconds (default 5) after the start; an interval\n"
	"event every --interval seconds of it (default 1).\n"
	"--version prints the version. --pipeline-stage (ff-workload gives it as\n"
	"flimflam's stage): a signal stops it without a \"stopped by\" line.\n";

struct conn {
	int fd;
	int id;			/* 1..jobs, for messages */
	int queued;
	uint64_t sent, back;	/* bytes written, and echoed back (with a window: inflight_max) */
};

struct worker {
	_Atomic uint64_t *part;	/* bytes received in each part of the window (below) */
	atomic_int busy;	/* between its clock read and its count */
	int cur;		/* the part of the last count: they only go forward */
	pthread_t tid;
	int epfd;
	int wakefd;		/* eventfd: the main thread says stop */
	struct conn **ready;	/* connections with work left over */
	int nready;
} __attribute__((aligned(64)));

/*
 * The window's edges on CLOCK_MONOTONIC, in ns: edge[0] opens it, edge[k]
 * (k = 1..nedges) ends part k, edge[nedges] closes it. Part 0 is before the
 * window, part nedges + 1 after it.
 */
static uint64_t *edge;
static int nedges;

static int port;
static struct sockaddr_in sa;	/* where to connect: --host, --port */
static const char *host_str;	/* as given */
static struct conn *conns;	/* jobs of them */
static const char *wbuf;	/* what we send: constant, shared */
/*
 * The most bytes a connection may have sent and not had back (0: no
 * bound). Every byte sent is in some socket buffer of the chain until it
 * comes back, and the kernel's TCP memory is one pool (net.ipv4.tcp_mem):
 * thousands of streams each filling buffers autotuned to megabytes put it
 * under pressure, and then past its limit, where every socket stalls for
 * seconds (1000 jobs through no relay took 2 GiB and moved nothing for
 * 1 s). So with many jobs each keeps a share of a quarter of the pressure
 * threshold in flight, and few jobs are not bound (window_for).
 */
static size_t inflight_max;

/*
 * Count n bytes just received in the part of the window of this moment.
 * busy is set (a full barrier) before the clock is read, so the main
 * thread, finding it clear once an edge has passed, knows every count of a
 * time before the edge is in. Single writer of its parts: a relaxed load
 * and store, no locked add.
 */
static void
take(struct worker *w, ssize_t n)
{
	uint64_t t;
	_Atomic uint64_t *p;

	atomic_store(&w->busy, 1);
	t = ff_now_ns();
	while (w->cur <= nedges && t >= edge[w->cur])
		w->cur++;
	p = &w->part[w->cur];
	atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + n,
			      memory_order_relaxed);
	atomic_store_explicit(&w->busy, 0, memory_order_release);
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
		size_t room = FF_LOAD_IO;

		progress = 0;
		if (inflight_max)
			room = c->sent - c->back >= inflight_max ? 0 :
			       inflight_max - (c->sent - c->back) < room ?
			       inflight_max - (c->sent - c->back) : room;
		n = room ? write(c->fd, wbuf, room) : 0;
		if (n > 0) {
			c->sent += n;
			moved += n;
			progress = 1;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			ff_load_fail(c->id, strerror(errno));
			return -1;
		}
		n = recv(c->fd, NULL, FF_LOAD_IO, MSG_TRUNC);
		if (n > 0) {
			c->back += n;
			take(w, n);
			moved += n;
			progress = 1;
		} else if (n == 0) {
			ff_load_fail(c->id, "closed by the other end");
			return -1;
		} else if (errno != EAGAIN && errno != EINTR) {
			ff_load_fail(c->id, strerror(errno));
			return -1;
		}
	} while (progress && moved < FF_LOAD_TURN);
	return progress;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[64];
	int n, k, i, nbatch;

	while (!ff_load_stopping()) {
		n = ff_load_events(w->epfd, evs, FF_ARRAY_SIZE(evs), w->nready ? 0 : -1);
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
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		ff_die("cannot create a socket: %s", strerror(errno));
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno != EINTR)
			ff_die("cannot connect to %s:%d: %s", host_str, port,
			       strerror(errno));
		if (ff_signalled())
			ff_exit_signalled();
	}
	return fd;
}

/*
 * The bytes of part k (1..nedges), once edge[k] has passed: any thread
 * still counting is waited for (its count is a few instructions, unless
 * the machine took its CPU away), so part k is final.
 */
static uint64_t
part_bytes(struct worker *ws, int n, int k)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < n; i++) {
		while (atomic_load_explicit(&ws[i].busy, memory_order_acquire))
			sched_yield();
		sum += atomic_load_explicit(&ws[i].part[k], memory_order_relaxed);
	}
	return sum;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The end of second k and of interval k of a window opening at `open`, in ns. */
static uint64_t
second_end(uint64_t open, int k)
{
	return open + (uint64_t)k * 1000000000ULL;
}

static uint64_t
interval_end(uint64_t open, double interval, long duration, int k)
{
	return open + (uint64_t)llround(ff_interval_edge(interval, duration, k) * 1e9);
}

/*
 * The edges of a window opening at `open` (ns): each second and each
 * interval's end (ff_interval_edge), once each, in order.
 */
static void
make_edges(uint64_t open, long duration, double interval)
{
	int niv = ff_intervals_count(interval, duration), k, m = 0;

	edge = ff_realloc(NULL, (duration + niv + 1) * sizeof(*edge));
	edge[m++] = open;
	for (k = 1; k <= duration; k++)
		edge[m++] = second_end(open, k);
	for (k = 1; k <= niv; k++)
		edge[m++] = interval_end(open, interval, duration, k);
	qsort(edge, m, sizeof(*edge), cmp_u64);
	for (nedges = 0, k = 1; k < m; k++)
		if (edge[k] != edge[nedges])
			edge[++nedges] = edge[k];
}

/*
 * The window of each of `jobs` connections: a quarter of the TCP memory
 * pressure threshold (net.ipv4.tcp_mem's second number, in pages) shared
 * among them; 0 (no bound) when that is more than a turn's bytes, or the
 * threshold cannot be read.
 */
static size_t
window_for(int jobs)
{
	char *text = ff_read_file("/proc/sys/net/ipv4/tcp_mem", NULL);
	unsigned long long lo, pressure, hi;
	size_t w = 0;

	if (text && sscanf(text, "%llu %llu %llu", &lo, &pressure, &hi) == 3 && pressure) {
		unsigned long long share = pressure * (unsigned long long)sysconf(_SC_PAGESIZE) / 4 / jobs;

		w = share >= FF_LOAD_TURN ? 0 : share < 4096 ? 4096 : (size_t)share;
	}
	free(text);
	return w;
}

static struct worker *
start(int jobs, int *nw)
{
	struct worker *ws;
	struct epoll_event ev;
	int n = ff_load_threads(FF_LOAD_MOST, jobs), i;
	char *b;

	b = aligned_alloc(4096, FF_LOAD_IO);
	ws = aligned_alloc(64, n * sizeof(*ws));
	conns = calloc(jobs, sizeof(*conns));
	if (!b || !ws || !conns)
		ff_die("out of memory");
	memset(b, 'x', FF_LOAD_IO);
	wbuf = b;
	inflight_max = window_for(jobs);
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

	*nw = n;
	return ws;
}

/* The bytes each connection sends first, before the threads stream. */
enum { FIRST_BYTES = 64 };

/*
 * Every connection carries its first bytes before the window opens: a
 * relay that has accepted a connection may still be making its way to the
 * server (nginx connects upstream once it accepts; a router sets up a
 * stream, and at 10,000 connections skrouterd was still at it when every
 * socket was connected), and a window opened on connected sockets alone
 * measured that setup. Each sends FIRST_BYTES, and the main thread waits
 * on an epoll set of its own until each has had some back, at most
 * `limit` seconds (ff_load_first_bytes_s: most of the margin ff-workload
 * allows the client past its warmup and window; the first bytes once had
 * the warmup and window's length, 1 s for a 1 s run, which a loaded machine
 * starting two nginx relays overran): a connection still silent then is
 * an error, as nothing back in the window is.
 */
static void
first_bytes(int jobs, double limit)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[256];
	double deadline = ff_now() + limit;
	int epfd = ff_load_epoll(), left = jobs, i, k, n;
	ssize_t got;

	for (i = 0; i < jobs; i++) {
		ev.data.ptr = &conns[i];
		got = write(conns[i].fd, wbuf, FIRST_BYTES);
		if (got < 0 && errno != EAGAIN)
			ff_die("connection %d to %s:%d failed before the warmup: %s", conns[i].id, host_str, port,
			       strerror(errno));
		conns[i].sent = got > 0 ? (uint64_t)got : 0;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, conns[i].fd, &ev) < 0)
			ff_die("cannot watch a connection: %s", strerror(errno));
	}
	while (left > 0) {
		if (ff_signalled())
			ff_exit_signalled();
		if (ff_now() >= deadline)
			ff_die("nothing came back on %d of %d connections in %.0f s (before the warmup): the relay or the server passed no data",
			       left, jobs, limit);
		n = epoll_wait(epfd, evs, FF_ARRAY_SIZE(evs), 100);
		for (k = 0; k < n; k++) {
			struct conn *c = evs[k].data.ptr;

			got = recv(c->fd, NULL, FF_LOAD_IO, MSG_TRUNC);
			if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
				ff_die("connection %d to %s:%d failed before its first bytes came back: %s", c->id,
				       host_str, port, got ? strerror(errno) : "closed by the other end");
			if (got > 0 && !c->back) {
				c->back = (uint64_t)got;
				epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
				left--;
			} else if (got > 0)
				c->back += (uint64_t)got;
		}
	}
	close(epfd);
}

/* The threads, once the window's edges are known: each counts into its parts. */
static void
go(struct worker *ws, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		ws[i].part = calloc(nedges + 2, sizeof(*ws[i].part));
		if (!ws[i].part)
			ff_die("out of memory");
		ff_load_thread(&ws[i].tid, NULL, worker_main, &ws[i]);
	}
}

/* Stop the workers, then the streams: close every connection. */
static void
stop(struct worker *ws, int n, int jobs)
{
	uint64_t one = 1;
	int i;

	ff_load_stop();
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

/* An `interval` of the window: t_s from its start, dt_s long. */
static void
emit_interval(double t, double dt, uint64_t bytes)
{
	json_t *ev = ff_event("interval");

	json_object_set_new(ev, "t_s", json_real(ff_usec(t)));
	json_object_set_new(ev, "dt_s", json_real(ff_usec(dt)));
	json_object_set_new(ev, "bytes", json_integer(bytes));
	json_object_set_new(ev, "operations", json_null());
	json_object_set_new(ev, "latency_us", json_null());
	ff_emit(ev);
}

static void
run(int jobs, long warmup, long duration, double interval)
{
	uint64_t begin, ready, open, b, total = 0, sbytes = 0, ibytes = 0;
	double t, sprev = 0, iprev = 0;
	struct worker *ws;
	json_t *ev;
	int nw, k, sec = 1, iv = 1, niv = ff_intervals_count(interval, duration);

	ff_load_fail_init(host_str, port);
	/*
	 * The warmup is the load's: it starts once every connection has
	 * carried its first bytes back (ready_s says how long after the start
	 * that was), and the window opens --warmup seconds later, as the clock
	 * says. Thousands of connections start streaming at once, and their
	 * first burst fills the chain's buffers for a while.
	 */
	begin = ff_now_ns();
	ws = start(jobs, &nw);
	first_bytes(jobs, ff_load_first_bytes_s(warmup, duration, jobs));
	ready = ff_now_ns();
	open = ready + (uint64_t)warmup * 1000000000ULL;
	make_edges(open, duration, interval);
	go(ws, nw);
	ff_load_wait(open / 1e9, "warmup");
	ff_emit_window(warmup, duration, open / 1e9, (ready - begin) / 1e9);

	/*
	 * A sample at each second's edge and an interval at each --interval's,
	 * from the parts of the window: they add up to the result exactly.
	 * Each is told a moment (2 ms) after its edge, once the counts of that
	 * time are in.
	 */
	for (k = 1; k <= nedges; k++) {
		ff_load_wait((edge[k] + 2000000) / 1e9, "window");
		b = part_bytes(ws, nw, k);
		total += b;
		sbytes += b;
		ibytes += b;
		t = (edge[k] - open) / 1e9;
		if (sec <= duration && edge[k] == second_end(open, sec)) {
			emit_sample(t, t - sprev, sbytes);
			sprev = t;
			sbytes = 0;
			sec++;
		}
		if (iv <= niv && edge[k] == interval_end(open, interval, duration, iv)) {
			emit_interval(iprev, t - iprev, ibytes);
			iprev = t;
			ibytes = 0;
			iv++;
		}
	}
	ff_load_check("window");
	stop(ws, nw, jobs);
	/* A relay that took the connections but passes nothing: no figures, not zeros. */
	if (total == 0)
		ff_die("nothing came back in the %ld s window: the relay or the server passed no data", duration);

	ev = ff_event("result");
	json_object_set_new(ev, "workload", json_string("builtin"));
	json_object_set_new(ev, "jobs", json_integer(jobs));
	json_object_set_new(ev, "duration_s", json_real(duration));
	json_object_set_new(ev, "bytes", json_integer(total));
	json_object_set_new(ev, "bits", json_integer(8 * total));
	json_object_set_new(ev, "bits_per_s", json_real(8.0 * total / duration));
	json_object_set_new(ev, "operations", json_null());
	json_object_set_new(ev, "ops_per_s", json_null());
	json_object_set_new(ev, "errors", json_integer(0));
	ff_emit(ev);
}

int
main(int argc, char *argv[])
{
	struct ff_runspec rs;	/* the rows of FF_RS_STREAM (lib/ff_runspec.c) */
	struct ff_load_opts lo = { .usage = usage, .rs = &rs, .mask = FF_RS_STREAM };

	ff_load_options(&lo, argc, argv);
	port = lo.port;
	sa = lo.sa;
	host_str = lo.host;
	if (!ff_pipeline_stage())	/* a stage's argv was checked by flimflam */
		ff_check_interval(usage, rs.run.interval, rs.run.duration);

	ff_signals_init();
	ff_raise_nofile(rs.run.jobs + 64);
	run(rs.run.jobs, rs.run.warmup, rs.run.duration, rs.run.interval);
	return ff_finish();
}
