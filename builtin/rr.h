/*
 * rr.h - what the two paths of ff-builtin-rr-client share: rr-client.c
 * (options, the thread per job, the window's events and the result) and
 * rr-many.c (many connections on each of a few epoll threads).
 */
#ifndef RR_H
#define RR_H

#include "ff.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>

/* The largest write of a request; a larger one is written in pieces. */
#define CHUNK (1024 * 1024)

/*
 * A thread's transactions: a job's (one connection, or builtin-crr's one at
 * a time) on the blocking path, all of an epoll thread's connections on the
 * other. Written by that thread only; the main thread reads the counters on
 * the clock and merges the histograms at the end.
 */
struct job {
	pthread_t tid;
	int id;				/* 1..jobs (blocking), 1..threads (epoll) */
	_Atomic int fd;			/* the connection, -1 between (crr; blocking) */
	uint64_t phase_ns;		/* first due time after the start (--rate; blocking) */
	_Atomic uint64_t done, bytes;	/* in the window */
	struct ff_hist *lat, *conn;	/* in the window */
	/* The interval being counted: its transactions, added to ivs[] as the next begins. */
	struct ff_hist *iv_lat;
	uint64_t iv_done, iv_bytes;
	int iv_k;
	uint64_t attempts, errors, timeouts;	/* crr, the whole run */
	uint64_t answered;		/* jobs with a transaction in the window */
	char why[192];			/* the first failure */
} __attribute__((aligned(64)));

extern int crr, timeout_s, port;
extern struct sockaddr_in sa;
extern const char *host_str;
extern long req_size, resp_size;
extern uint64_t t0_ns, open_ns, close_ns, interval_ns;
extern char *reqbuf;

void sock_opts(int fd);
int connect_new(_Atomic int *slot, char *why, size_t n, int *timed_out);
int count(struct job *j, uint64_t start, uint64_t connected, uint64_t end);
void iv_flush(struct job *j);
/* A builtin-crr failure of job j's: counted, the first one's reason kept. */
void crr_failed(struct job *j, const char *why, int timed_out);

/*
 * rr-many.c: the epoll path. many_connect: njobs connections shared among
 * the nthreads of acct (their accounting, set up), each connected now for
 * rr (a failure is fatal). many_first (rr): a first transaction on every
 * connection, uncounted, before the warmup begins: a relay may connect on
 * to the server only once the first bytes come (nginx does), and thousands
 * of those connects at once take seconds (a listener's queue overflowing:
 * SYNs resent after 1 s, 3 s...); a failure or a --timeout ends the
 * program. many_go, once the clock is set (t0_ns,
 * interval_ns, ...): the threads started. many_stop, after ff_load_stop:
 * the threads woken and joined, every connection closed.
 */
void many_connect(struct job *acct, int nthreads, int njobs);
void many_first(void);
void many_go(void);
void many_stop(void);

#endif
