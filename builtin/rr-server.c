/*
 * ff-builtin-rr-server - the server of the request/response workloads
 * (builtin-rr, builtin-crr). Listens on 127.0.0.1:PORT (or --address);
 * on every connection, each --request-size bytes received are answered
 * with --response-size bytes, until the client closes. Prints nothing on
 * stdout; ends on SIGTERM or SIGINT.
 *
 * One thread per CPU we may use (up to 8), each with its own epoll set
 * (level-triggered) of non-blocking connections; the main thread accepts
 * and deals the connections out in turn. A transaction there costs the
 * server one epoll_wait, one recv and one write: the request's bytes are
 * taken off the socket with recv(MSG_TRUNC) (counted, not copied), the
 * response comes from one constant buffer.
 *
 * A connection that has answered LONG requests (builtin-rr's do, builtin-
 * crr's never) moves to a thread of its own, if one is free: as many of
 * those as epoll threads, each serving one connection at a time with
 * blocking calls, one recv and one write a transaction, as sockperf's
 * server. When the CPUs are busy, the epoll_wait saved is what sets the
 * transactions/s (bench/rr.sh). A connection moves once at most, handed
 * over by the epoll thread that holds it, never while a response is owed.
 */
#include "ff.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-builtin-rr-server --port PORT [--address ADDRESS]\n"
	"                            [--request-size BYTES] [--response-size BYTES]\n"
	"\n"
	"Answer every --request-size bytes (default 1) received on a TCP\n"
	"connection to ADDRESS:PORT (default 127.0.0.1) with --response-size\n"
	"bytes (default 1), until SIGTERM or SIGINT.\n"
	"--version prints the version.\n";

/* The largest write of a response; a larger one is written in pieces. */
#define CHUNK (1024 * 1024)
/* Requests answered through epoll before a connection asks for a thread of its own. */
#define LONG 64

struct conn {
	int fd;
	long need;		/* bytes of the request still to come */
	long long owe;		/* bytes of responses still to write */
	int waiting_out;	/* EPOLLOUT asked for: the socket was full */
	unsigned long answered, ask_at;	/* requests answered; when to ask for a thread */
};

struct worker {
	pthread_t tid;
	int epfd;
};

/* A thread for one connection at a time, blocking: idle until posted. */
struct own {
	pthread_t tid;
	sem_t go;
	struct conn *c;
	atomic_int busy;	/* taken for c, or serving it */
};

static struct worker workers[FF_LOAD_MOST];
static struct own owns[FF_LOAD_MOST];
static int nworkers;
static long request_size = 1, response_size = 1;
static char *response;		/* min(response_size, CHUNK) bytes */

static void
watch(struct worker *w, struct conn *c, int out)
{
	struct epoll_event ev = { EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0), { .ptr = c } };

	if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
		ff_die("epoll_ctl: %s", strerror(errno));
	c->waiting_out = out;
}

/* Write what is owed; 0 when all is written or the socket is full, -1 when the connection is over. */
static int
flush(struct worker *w, struct conn *c)
{
	ssize_t n;

	while (c->owe > 0) {
		n = write(c->fd, response, c->owe < CHUNK ? c->owe : CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (!c->waiting_out)
				watch(w, c, 1);
			return 0;
		}
		if (n < 0)
			return -1;
		c->owe -= n;
	}
	if (c->waiting_out)
		watch(w, c, 0);
	return 0;
}

/*
 * One turn of a connection: what is owed first; then, if all of it went,
 * the request's bytes that are there, and the response when it is whole.
 * Level-triggered, so what is left in the socket comes round again.
 * Returns -1 when the connection is over (closed, reset: no error here,
 * the client decides when a run ends).
 */
static int
turn(struct worker *w, struct conn *c)
{
	ssize_t n;

	if (flush(w, c) < 0)
		return -1;
	if (c->owe > 0)
		return 0;	/* the peer is not reading: do not read either */
	n = recv(c->fd, NULL, c->need, MSG_TRUNC | MSG_DONTWAIT);
	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	c->need -= n;
	if (c->need > 0)
		return 0;
	c->need = request_size;
	c->owe += response_size;
	c->answered++;
	return flush(w, c);
}

/*
 * The connection, all answered, to a free thread of its own: 1, or 0 when
 * none is free (asked again LONG requests later).
 */
static int
move_out(struct worker *w, struct conn *c)
{
	int i, idle;

	c->ask_at = c->answered + LONG;
	for (i = 0; i < nworkers; i++) {
		idle = 0;
		if (atomic_compare_exchange_strong(&owns[i].busy, &idle, 1))
			break;
	}
	if (i == nworkers)
		return 0;
	if (epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL) < 0)
		ff_die("epoll_ctl: %s", strerror(errno));
	owns[i].c = c;
	sem_post(&owns[i].go);
	return 1;
}

/* A moved connection, served with blocking calls until it is over. */
static void
converse(struct conn *c)
{
	long long owe;
	ssize_t n;

	/* F_SETFL changes only the status flags: O_NONBLOCK off. */
	if (fcntl(c->fd, F_SETFL, 0) < 0)
		return;
	for (;;) {
		n = recv(c->fd, NULL, c->need, MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		c->need -= n;
		if (c->need > 0)
			continue;
		c->need = request_size;
		for (owe = response_size; owe > 0; owe -= n) {
			n = write(c->fd, response, owe < CHUNK ? owe : CHUNK);
			if (n < 0 && errno == EINTR)
				n = 0;
			else if (n < 0)
				return;
		}
	}
}

static void *
own_main(void *arg)
{
	struct own *o = arg;

	for (;;) {
		while (sem_wait(&o->go) < 0)
			;
		converse(o->c);
		close(o->c->fd);
		free(o->c);
		atomic_store(&o->busy, 0);
	}
	return NULL;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[64];
	int n, k;

	for (;;) {
		n = ff_load_events(w->epfd, evs, FF_ARRAY_SIZE(evs), -1);
		for (k = 0; k < n; k++) {
			struct conn *c = evs[k].data.ptr;

			if (turn(w, c) < 0) {
				ff_load_unwatch_close(w->epfd, c->fd);
				free(c);
			} else if (c->answered >= c->ask_at && !c->owe)
				move_out(w, c);
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
	int one = 1;

	if (!c)
		ff_die("out of memory");
	/* Each response goes out whole at once, as the client's requests do. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		ff_die("cannot set TCP_NODELAY: %s", strerror(errno));
	c->fd = fd;
	c->need = request_size;
	c->ask_at = LONG;
	ff_load_watch(w->epfd, fd, EPOLLIN | EPOLLRDHUP, c);
}

static void
start(int n)
{
	int i;

	for (nworkers = n, i = 0; i < n; i++) {
		workers[i].epfd = ff_load_epoll();
		ff_load_thread(&workers[i].tid, NULL, worker_main, &workers[i]);
		if (sem_init(&owns[i].go, 0, 0) < 0)
			ff_die("sem_init: %s", strerror(errno));
		ff_load_thread(&owns[i].tid, NULL, own_main, &owns[i]);
	}
}

int
main(int argc, char *argv[])
{
	struct ff_runspec rs;	/* the rows of FF_RS_RR_SERVE (lib/ff_runspec.c) */
	struct ff_load_opts lo = { .usage = usage, .server = 1, .rs = &rs, .mask = FF_RS_RR_SERVE };

	ff_load_options(&lo, argc, argv);
	request_size = rs.run.request_size;
	response_size = rs.run.response_size;
	response = malloc(response_size < CHUNK ? response_size : CHUNK);
	if (!response)
		ff_die("out of memory");
	memset(response, 'r', response_size < CHUNK ? response_size : CHUNK);
	return ff_load_serve(&lo, start, adopt);
}
