/*
 * ff-builtin-server - the server of the builtin streaming TCP workload.
 * Listens on 127.0.0.1:PORT and echoes every byte of every connection back
 * to its sender until SIGTERM or SIGINT. Prints nothing on stdout.
 *
 * One thread per CPU we may use (up to 8), each with its own epoll set of
 * non-blocking connections (edge-triggered); the main thread accepts and
 * deals the connections out in turn. See pump() for how a connection
 * echoes without a buffer of its own.
 */
#include "ff.h"

#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-builtin-server --port PORT [--address ADDRESS]\n"
	"\n"
	"Echo every TCP connection on ADDRESS:PORT (default 127.0.0.1) until\n"
	"SIGTERM or SIGINT.\n"
	"--version prints the version.\n";

struct conn {
	int fd;
	int queued;		/* on its worker's ready list */
	int blocked;		/* it took less than we had: wait for EPOLLOUT */
};

struct worker {
	pthread_t tid;
	int epfd;
	char *buf;
	struct conn **ready;	/* connections with work left over */
	size_t nready, readycap;
};

static struct worker workers[FF_LOAD_MOST];

static void
conn_close(struct worker *w, struct conn *c)
{
	ff_load_unwatch_close(w->epfd, c->fd);
	free(c);	/* never queued: pump() queues only what goes on */
}

static void
queue(struct worker *w, struct conn *c)
{
	w->ready = ff_grow(w->ready, w->nready + 1, &w->readycap, sizeof(*w->ready), 64);
	w->ready[w->nready++] = c;
	c->queued = 1;
}

/*
 * Echo what the socket will take now: peek at the received bytes, write
 * them back, then drop from the receive queue exactly what was written
 * (MSG_TRUNC discards without copying). So a connection needs no buffer
 * of its own, and while its peer does not read, the echo waits in the
 * kernel's receive queue and TCP pushes back on the sender.
 * Stops when the socket would block either way, or when this turn's
 * budget is spent (then the connection goes on the ready list). Returns
 * -1 when the connection is over: peer closed or reset, which is no error
 * here, since the client decides when a run ends.
 */
static int
pump(struct worker *w, struct conn *c, uint32_t events)
{
	size_t moved = 0;
	ssize_t n, m;

	if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
		c->blocked = 0;
	if (c->blocked)
		return 0;	/* more to read, but nowhere to write it yet */
	for (;;) {
		n = recv(c->fd, w->buf, FF_LOAD_IO, MSG_PEEK);
		if (n == 0)
			return -1;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		m = write(c->fd, w->buf, n);
		if (m < 0 && (errno == EAGAIN || errno == EINTR))
			m = 0;
		else if (m < 0)
			return -1;
		if (m > 0 && recv(c->fd, NULL, m, MSG_TRUNC) != m)
			return -1;
		if (m < n) {
			c->blocked = 1;
			return 0;
		}
		moved += m;
		if (moved >= FF_LOAD_TURN) {
			queue(w, c);
			return 0;
		}
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[64];
	struct conn **batch = NULL;
	size_t nbatch, batchcap = 0, i;
	int n, k;

	for (;;) {
		n = ff_load_events(w->epfd, evs, FF_ARRAY_SIZE(evs), w->nready ? 0 : -1);
		for (k = 0; k < n; k++) {
			struct conn *c = evs[k].data.ptr;

			if (!c->queued && pump(w, c, evs[k].events) < 0)
				conn_close(w, c);
		}
		/* Then one more turn for each connection left with work. */
		nbatch = w->nready;
		if (!nbatch)
			continue;
		FF_GROW(batch, nbatch, batchcap);
		memcpy(batch, w->ready, nbatch * sizeof(*batch));
		w->nready = 0;
		for (i = 0; i < nbatch; i++) {
			struct conn *c = batch[i];

			c->queued = 0;
			if (pump(w, c, 0) < 0)
				conn_close(w, c);
		}
	}
	return NULL;
}

/* Hand a new connection to worker k (ff_load_serve deals them out in turn). */
static void
adopt(int fd, int k)
{
	struct worker *w = &workers[k];
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		ff_die("out of memory");
	c->fd = fd;
	ff_load_watch(w->epfd, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, c);
}

static void
start(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		workers[i].epfd = ff_load_epoll();
		workers[i].buf = ff_realloc(NULL, FF_LOAD_IO);
		ff_load_thread(&workers[i].tid, NULL, worker_main, &workers[i]);
	}
}

int
main(int argc, char *argv[])
{
	struct ff_load_opts lo = { .usage = usage, .server = 1 };

	ff_load_options(&lo, argc, argv);
	return ff_load_serve(&lo, start, adopt);
}
