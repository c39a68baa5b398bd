/*
 * rr-many.c - ff-builtin-rr-client's epoll path: many jobs on a few
 * threads (ff_load_threads: one per CPU we may use, at most FF_LOAD_MOST),
 * each driving its share of the connections, non-blocking, through an
 * epoll set of its own (edge-triggered). Each connection is a job as on
 * the blocking path: closed loop, one request outstanding, the next sent
 * as its response ends; with --rate, each transaction at its due time
 * (the thread's heap of waiting connections, earliest first), its latency
 * counted from then. builtin-crr's job connects (non-blocking) for each
 * transaction. A connect, request or response making no progress for
 * --timeout seconds fails as a blocking call would (each thread looks
 * once a second). The counters and histograms are the thread's (struct
 * job, rr.h), as a job's are on the other path.
 */
#include "rr.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

enum { WAITING, CONNECTING, SENDING, RECEIVING, DONE };

struct rrconn {
	int fd;			/* -1 between (crr) */
	int id;			/* 1..jobs */
	int state;
	int answered;		/* a transaction ended in the window */
	long left;		/* bytes of the request to send, or of the response to come */
	uint64_t due;		/* --rate: when the next transaction is due */
	uint64_t wake;		/* WAITING: when to begin */
	uint64_t start, connected, last;	/* this transaction's; last: its last progress */
};

struct many {
	struct job *acct;
	int epfd, wakefd;
	struct rrconn **c;	/* this thread's connections */
	int n;
	struct rrconn **heap;	/* the WAITING ones, by wake */
	int nheap;
};

static struct many *ms;
static int nms, njobs_all;
static struct rrconn *conns;
static int first;		/* many_first: a response ends in WAITING, uncounted */

static void
heap_push(struct many *m, struct rrconn *c)
{
	int i = m->nheap++, p;

	while (i > 0 && m->heap[p = (i - 1) / 2]->wake > c->wake) {
		m->heap[i] = m->heap[p];
		i = p;
	}
	m->heap[i] = c;
}

static struct rrconn *
heap_pop(struct many *m)
{
	struct rrconn *top = m->heap[0], *last = m->heap[--m->nheap];
	int i = 0, k;

	while ((k = 2 * i + 1) < m->nheap) {
		if (k + 1 < m->nheap && m->heap[k + 1]->wake < m->heap[k]->wake)
			k++;
		if (last->wake <= m->heap[k]->wake)
			break;
		m->heap[i] = m->heap[k];
		i = k;
	}
	m->heap[i] = last;
	return top;
}

/* Wait until `when` to begin the next transaction. */
static void
wait_until(struct many *m, struct rrconn *c, uint64_t when)
{
	c->state = WAITING;
	c->wake = when;
	heap_push(m, c);
}

/* A failure of c's transaction: rr's ends the run, crr's is counted and retried. */
static void
failed(struct many *m, struct rrconn *c, const char *why, int timed_out)
{
	uint64_t now = ff_now_ns(), later = now + 10000000;

	if (!crr) {
		ff_load_fail(c->id, why);
		epoll_ctl(m->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		c->state = DONE;
		return;
	}
	crr_failed(m->acct, why, timed_out);
	if (c->fd >= 0)
		ff_load_unwatch_close(m->epfd, c->fd);
	c->fd = -1;
	/* No spinning on a refused port; the run fails anyway. */
	wait_until(m, c, interval_ns && c->due > later ? c->due : later);
}

/* Begin c's next transaction at `now`, if the window has room for it. */
static void
begin(struct many *m, struct rrconn *c, uint64_t now)
{
	char why[192];

	if (interval_ns) {
		if (c->due >= close_ns) {
			c->state = DONE;
			return;
		}
		c->start = c->due;
		c->due += interval_ns;
	} else {
		if (now >= close_ns) {
			c->state = DONE;
			return;
		}
		c->start = now;
	}
	c->last = now;
	c->left = req_size;
	c->state = SENDING;
	if (!crr)
		return;
	m->acct->attempts++;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0) {
		snprintf(why, sizeof(why), "cannot create a socket: %s", strerror(errno));
		failed(m, c, why, 0);
		return;
	}
	sock_opts(c->fd);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		c->connected = ff_now_ns();
	else if (errno == EINPROGRESS)
		c->state = CONNECTING;
	else {
		snprintf(why, sizeof(why), "cannot connect to %s:%d: %s", host_str, port, strerror(errno));
		failed(m, c, why, 0);
		return;
	}
	/* Watched once connecting: an unconnected socket polls as hung up. */
	ff_load_watch(m->epfd, c->fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, c);
}

/* c's transaction has ended: counted, and the next one begun or waited for. */
static void
ended(struct many *m, struct rrconn *c)
{
	uint64_t end = ff_now_ns();

	if (count(m->acct, c->start, c->connected, end) && !c->answered) {
		c->answered = 1;
		m->acct->answered++;
	}
	if (crr) {
		ff_load_unwatch_close(m->epfd, c->fd);
		c->fd = -1;
	}
	if (interval_ns && c->due > end)
		wait_until(m, c, c->due);
	else
		begin(m, c, end);
}

/*
 * Move c on as far as its socket lets it: connect, send, receive, and on
 * to the next transaction, until a call would block.
 */
static void
step(struct many *m, struct rrconn *c)
{
	char why[192];
	socklen_t len;
	ssize_t r;
	int err;

	for (;;) {
		switch (c->state) {
		case CONNECTING:
			len = sizeof(err);
			if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
				err = errno;
			if (err) {
				snprintf(why, sizeof(why), "cannot connect to %s:%d: %s", host_str, port,
					 strerror(err));
				failed(m, c, why, 0);
				return;
			}
			/* Not yet connected: the event was another's. */
			if (send(c->fd, NULL, 0, MSG_NOSIGNAL) < 0)
				return;
			c->connected = c->last = ff_now_ns();
			c->state = SENDING;
			break;
		case SENDING:
			r = send(c->fd, reqbuf, c->left < CHUNK ? c->left : CHUNK, MSG_NOSIGNAL);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				return;
			if (r < 0) {
				snprintf(why, sizeof(why), "cannot send the request: %s", strerror(errno));
				failed(m, c, why, 0);
				return;
			}
			c->last = ff_now_ns();
			if (!(c->left -= r)) {
				c->left = resp_size;
				c->state = RECEIVING;
			}
			break;
		case RECEIVING:
			r = recv(c->fd, NULL, c->left, MSG_TRUNC);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				return;
			if (r <= 0) {
				snprintf(why, sizeof(why), r ? "cannot receive the response: %s" : "closed by the other end",
					 strerror(errno));
				failed(m, c, why, 0);
				return;
			}
			c->last = ff_now_ns();
			if (!(c->left -= r)) {
				if (first)
					c->state = WAITING;
				else
					ended(m, c);
			}
			break;
		default:
			return;
		}
	}
}

/* The connections making no progress for --timeout seconds fail as a blocking call's would. */
static void
timeouts(struct many *m, uint64_t now)
{
	uint64_t limit = (uint64_t)timeout_s * 1000000000ULL;
	char why[192];
	int i;

	for (i = 0; i < m->n; i++) {
		struct rrconn *c = m->c[i];

		if (c->state == WAITING || c->state == DONE || c->last + limit > now)
			continue;
		if (c->state == CONNECTING)
			snprintf(why, sizeof(why), "connect timed out after %d s", timeout_s);
		else if (c->state == SENDING)
			snprintf(why, sizeof(why), "the request waited %d s to be sent", timeout_s);
		else
			snprintf(why, sizeof(why), "no response in %d s", timeout_s);
		failed(m, c, why, 1);
	}
}

static void *
many_main(void *arg)
{
	struct many *m = arg;
	struct epoll_event evs[256];
	uint64_t now, scan = ff_now_ns() + 1000000000ULL;
	int n, k, wait_ms;

	while (!ff_load_stopping()) {
		now = ff_now_ns();
		while (m->nheap && m->heap[0]->wake <= now) {
			struct rrconn *c = heap_pop(m);

			begin(m, c, now);
			step(m, c);
		}
		if (now >= scan) {
			timeouts(m, now);
			scan = now + 1000000000ULL;
		}
		wait_ms = (int)((scan - now + 999999) / 1000000);
		if (m->nheap && m->heap[0]->wake < scan)
			wait_ms = (int)((m->heap[0]->wake - now + 999999) / 1000000);
		n = ff_load_events(m->epfd, evs, FF_ARRAY_SIZE(evs), wait_ms);
		for (k = 0; k < n; k++)
			if (evs[k].data.ptr)	/* not the wake-up */
				step(m, evs[k].data.ptr);
	}
	iv_flush(m->acct);
	return NULL;
}

void
many_connect(struct job *acct, int nthreads, int njobs)
{
	char why[192];
	int i, timed_out;

	nms = nthreads;
	njobs_all = njobs;
	ms = calloc(nms, sizeof(*ms));
	conns = calloc(njobs, sizeof(*conns));
	if (!ms || !conns)
		ff_die("out of memory");
	for (i = 0; i < nms; i++) {
		ms[i].acct = &acct[i];
		ms[i].epfd = ff_load_epoll();
		ms[i].wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ms[i].c = calloc(njobs / nms + 1, sizeof(*ms[i].c));
		ms[i].heap = calloc(njobs / nms + 1, sizeof(*ms[i].heap));
		if (ms[i].wakefd < 0)
			ff_die("cannot create an eventfd: %s", strerror(errno));
		if (!ms[i].c || !ms[i].heap)
			ff_die("out of memory");
		ff_load_watch(ms[i].epfd, ms[i].wakefd, EPOLLIN, NULL);
	}
	for (i = 0; i < njobs; i++) {
		struct rrconn *c = &conns[i];
		struct many *m = &ms[i % nms];

		c->id = i + 1;
		c->fd = -1;
		m->c[m->n++] = c;
		if (crr)
			continue;
		/* rr: every connection first; failing to connect is an error. */
		c->fd = connect_new(NULL, why, sizeof(why), &timed_out);
		if (c->fd < 0)
			ff_die("%s", why);
		if (fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0)
			ff_die("cannot make a connection non-blocking: %s", strerror(errno));
		ff_load_watch(m->epfd, c->fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, c);
		if (ff_signalled())
			ff_exit_signalled();
	}
}

void
many_first(void)
{
	struct epoll_event evs[256];
	uint64_t now = ff_now_ns(), scan = now + 1000000000ULL;
	int epfd = ff_load_epoll(), left = njobs_all, i, k, n, was;

	first = 1;
	for (i = 0; i < njobs_all; i++) {
		conns[i].state = SENDING;
		conns[i].left = req_size;
		conns[i].last = now;
		ff_load_watch(epfd, conns[i].fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &conns[i]);
	}
	while (left > 0) {
		ff_load_check("first transaction");
		n = ff_load_events(epfd, evs, FF_ARRAY_SIZE(evs), 100);
		for (k = 0; k < n; k++) {
			struct rrconn *c = evs[k].data.ptr;

			was = c->state;
			step(&ms[(c->id - 1) % nms], c);
			left -= was != WAITING && c->state == WAITING;
		}
		if ((now = ff_now_ns()) >= scan) {
			for (i = 0; i < nms; i++)
				timeouts(&ms[i], now);
			scan = now + 1000000000ULL;
		}
	}
	ff_load_check("first transaction");
	close(epfd);
	first = 0;
}

void
many_go(void)
{
	int i;

	for (i = 0; i < njobs_all; i++) {
		struct rrconn *c = &conns[i];

		/* each job's transactions due at even intervals (--rate), or at once */
		c->due = t0_ns + (interval_ns ? interval_ns * i / njobs_all : 0);
		wait_until(&ms[i % nms], c, c->due);
	}
	for (i = 0; i < nms; i++)
		ff_load_thread(&ms[i].acct->tid, NULL, many_main, &ms[i]);
}

void
many_stop(void)
{
	uint64_t one = 1;
	int i;

	for (i = 0; i < nms; i++)
		if (write(ms[i].wakefd, &one, sizeof(one)) < 0) {
			/* already woken */
		}
	for (i = 0; i < nms; i++)
		pthread_join(ms[i].acct->tid, NULL);
	for (i = 0; i < njobs_all; i++)
		if (conns[i].fd >= 0)
			close(conns[i].fd);
}
