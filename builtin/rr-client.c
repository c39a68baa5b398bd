/*
 * ff-builtin-rr-client - the client of the request/response workloads.
 *
 * builtin-rr: --jobs connections to 127.0.0.1:PORT, or --host's address
 * (usually a relay in front of ff-builtin-rr-server); on each, a request
 * of --request-size bytes, then the response of --response-size bytes,
 * one at a time, as fast as they go (netperf's TCP_RR).
 * builtin-crr (--crr): --jobs at a time, each transaction on a connection
 * of its own: connect, request, response, close (netperf's TCP_CRR).
 * --rate N: open loop, N transactions a second in all, each job's due at
 * even intervals; a transaction's latency counts from when it was due,
 * not when it could be sent, so a stall shows in full (no coordinated
 * omission).
 *
 * Only transactions that complete inside the window count: it opens
 * --warmup seconds after the start (once every rr connection is up; on
 * the epoll path, once each has carried a first transaction, uncounted:
 * rr-many.c) and lasts --duration seconds; each transaction is stamped when it ends and
 * counted, or not, by that stamp.
 *
 * Events on stdout (ff-workload adds start and end around them):
 *   window  when the window opens
 *   sample  once a second of the window: the transactions of that second
 *   interval  when it closes, one for every --interval seconds of it:
 *           the transactions that ended in it, their latency percentiles
 *   result  when it closes: counts, rates, latency percentiles
 *
 * Two ways to hold the jobs, by their number (threaded() says which):
 * up to as many as the threads the other way would start (the CPUs we may
 * use, at most FF_LOAD_MOST), one thread per job, each with a blocking
 * socket: the fewest system calls a transaction can take, a write and a
 * read, which is what builtin-rr at 1 or 2 jobs is measured for (against
 * sockperf, bench/rr.sh; an epoll_wait a transaction cost 10-40% of the
 * transactions/s there). Above that, the epoll threads of rr-many.c, each
 * driving its share of the connections, non-blocking: thousands of jobs on
 * a few threads, where one epoll_wait serves the connections ready at once.
 * Either way each thread has its own latency histogram (lib/ff_hist.c) and
 * counters (struct job, rr.h); the main thread reads the counters on the
 * clock and merges the histograms at the end.
 */
#include "rr.h"

#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-builtin-rr-client --port PORT [--host ADDRESS] [--crr] [--jobs N]\n"
	"                            [--warmup SECONDS] [--duration SECONDS]\n"
	"                            [--request-size BYTES] [--response-size BYTES]\n"
	"                            [--rate N] [--interval SECONDS]\n"
	"                            [--timeout SECONDS] [--histogram-dir DIR]\n"
	"\n"
	"Request/response transactions with ADDRESS:PORT (default 127.0.0.1) on\n"
	"N connections (default 2), or with --crr on a new connection each,\n"
	"during a window of --duration seconds (default 5) that opens --warmup\n"
	"seconds (default 5) after the start. --rate: N transactions a second\n"
	"in all (open loop). --timeout: a connect, request or response taking\n"
	"longer fails (default 10). --histogram-dir: write the latency histograms\n"
	"there. --interval: an interval event for every SECONDS of the window\n"
	"(default 1), at its end.\n"
	"--version prints the version. --pipeline-stage (ff-workload gives it as\n"
	"flimflam's stage): a signal stops it without a \"stopped by\" line.\n";

int port, crr, timeout_s = 10;
struct sockaddr_in sa;		/* where to connect: --host, --port */
const char *host_str;		/* as given */
static const char *histogram_dir;	/* --histogram-dir */
long req_size = 1, resp_size = 1;
static long rate;
uint64_t t0_ns, open_ns, close_ns, interval_ns;
/* The window's intervals (--interval): niv of them, each's sums. */
static double iv_s = 1;
static int niv;
static struct ivsum {
	uint64_t done, bytes;
} *ivs;
static struct ff_hist *iv_hists;
static pthread_mutex_t iv_lock = PTHREAD_MUTEX_INITIALIZER;
char *reqbuf;
static struct job *jobs_v;	/* nacct of them: one a job, or one an epoll thread */
static int njobs, nacct, many;

void
sock_opts(int fd)
{
	struct timeval tv = { timeout_s, 0 };
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		ff_die("cannot set socket options: %s", strerror(errno));
}

/*
 * Connect a new socket (blocking, with the timeouts). Returns the fd, or -1
 * with the reason in why; *timed_out set when the timeout passed. With a
 * slot, the socket is put there before connecting, so that stop() can cut
 * a connect short too; -1 with why "" when stopping.
 */
int
connect_new(_Atomic int *slot, char *why, size_t n, int *timed_out)
{
	int fd;

	*timed_out = 0;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, n, "cannot create a socket: %s", strerror(errno));
		return -1;
	}
	sock_opts(fd);
	if (slot) {
		atomic_store(slot, fd);
		if (ff_load_stopping()) {
			atomic_store(slot, -1);
			close(fd);
			why[0] = 0;
			return -1;
		}
	}
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == EINTR)
			continue;
		*timed_out = errno == EINPROGRESS || errno == EAGAIN;
		if (*timed_out)
			snprintf(why, n, "connect timed out after %d s", timeout_s);
		else
			snprintf(why, n, "cannot connect to %s:%d: %s", host_str, port, strerror(errno));
		if (slot)
			atomic_store(slot, -1);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One transaction on a connected socket: the request, then the whole
 * response (taken off the socket uncopied, MSG_TRUNC). 0, or -1 with the
 * reason in why (*timed_out when the timeout passed).
 */
static int
transact(int fd, char *why, size_t n, int *timed_out)
{
	long left;
	ssize_t r;

	*timed_out = 0;
	for (left = req_size; left > 0; left -= r) {
		r = write(fd, reqbuf, left < CHUNK ? left : CHUNK);
		if (r < 0 && errno == EINTR) {
			r = 0;
			continue;
		}
		if (r < 0) {
			*timed_out = errno == EAGAIN;
			if (*timed_out)
				snprintf(why, n, "the request waited %d s to be sent", timeout_s);
			else
				snprintf(why, n, "cannot send the request: %s", strerror(errno));
			return -1;
		}
	}
	for (left = resp_size; left > 0; left -= r) {
		r = recv(fd, NULL, left, MSG_TRUNC);
		if (r < 0 && errno == EINTR) {
			r = 0;
			continue;
		}
		if (r == 0) {
			snprintf(why, n, "closed by the other end");
			return -1;
		}
		if (r < 0) {
			*timed_out = errno == EAGAIN;
			if (*timed_out)
				snprintf(why, n, "no response in %d s", timeout_s);
			else
				snprintf(why, n, "cannot receive the response: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void
sleep_until(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * The job's interval into the sums, once per interval and job (a lock
 * then is cheap); its histogram emptied, writing only the buckets used,
 * so untouched pages stay unmapped.
 */
void
iv_flush(struct job *j)
{
	struct ff_hist *h = j->iv_lat;
	int i;

	if (!j->iv_done)
		return;
	pthread_mutex_lock(&iv_lock);
	ff_hist_merge(&iv_hists[j->iv_k], h);
	ivs[j->iv_k].done += j->iv_done;
	ivs[j->iv_k].bytes += j->iv_bytes;
	pthread_mutex_unlock(&iv_lock);
	for (i = 0; i < FF_HIST_BUCKETS; i++)
		if (h->counts[i])
			h->counts[i] = 0;
	h->count = h->over = h->min_ns = h->max_ns = h->sum_ns = 0;
	j->iv_done = j->iv_bytes = 0;
}

/* The interval (0-based) that holds `end`, a moment of the window. */
static int
iv_of(uint64_t end)
{
	int k = (int)((end - open_ns) / (iv_s * 1e9));

	/* the edges as every program cuts them (ff_interval_edge), in ns */
	while (k + 1 < niv && end >= open_ns + (uint64_t)(ff_interval_edge(iv_s, (close_ns - open_ns) / 1e9, k + 1) * 1e9))
		k++;
	while (k > 0 && end < open_ns + (uint64_t)(ff_interval_edge(iv_s, (close_ns - open_ns) / 1e9, k) * 1e9))
		k--;
	return k < niv ? k : niv - 1;
}

/* A transaction that ended at `end` counts (1) if the window holds that moment. */
int
count(struct job *j, uint64_t start, uint64_t connected, uint64_t end)
{
	int k;

	if (end < open_ns || end >= close_ns)
		return 0;
	k = iv_of(end);
	if (k != j->iv_k) {
		iv_flush(j);
		j->iv_k = k;
	}
	ff_hist_record(j->iv_lat, end - start);
	j->iv_done++;
	j->iv_bytes += req_size + resp_size;
	ff_hist_record(j->lat, end - start);
	if (j->conn)
		ff_hist_record(j->conn, connected - start);
	/* Single writer: relaxed load and store, no locked add. */
	atomic_store_explicit(&j->done, atomic_load_explicit(&j->done, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&j->bytes, atomic_load_explicit(&j->bytes, memory_order_relaxed) +
			      req_size + resp_size, memory_order_relaxed);
	return 1;
}

void
crr_failed(struct job *j, const char *why, int timed_out)
{
	if (!j->errors)
		snprintf(j->why, sizeof(j->why), "%s", why);
	j->errors++;
	j->timeouts += timed_out;
}

static void *
job_main(void *arg)
{
	struct job *j = arg;
	uint64_t due = t0_ns + j->phase_ns, start, connected = 0, end;
	int fd = atomic_load(&j->fd), timed_out, r;
	char why[192];

	for (;;) {
		if (interval_ns) {
			/* Open loop: each transaction at its time, or at once when late. */
			if (due >= close_ns)
				break;
			sleep_until(due);
			start = due;
			due += interval_ns;
		} else {
			start = ff_now_ns();
			if (start >= close_ns)
				break;
		}
		if (ff_load_stopping())
			break;
		if (crr) {
			j->attempts++;
			/* In j->fd, which stop() shuts down to cut it short. */
			fd = connect_new(&j->fd, why, sizeof(why), &timed_out);
			connected = ff_now_ns();
			r = fd >= 0 ? transact(fd, why, sizeof(why), &timed_out) : -1;
			end = ff_now_ns();
			if (fd >= 0) {
				atomic_store(&j->fd, -1);
				close(fd);
			}
			if (ff_load_stopping())
				break;
			if (r < 0) {
				crr_failed(j, why, timed_out);
				/* No spinning on a refused port; the run fails anyway. */
				sleep_until(ff_now_ns() + 10000000);
				continue;
			}
		} else {
			r = transact(fd, why, sizeof(why), &timed_out);
			end = ff_now_ns();
			if (r < 0) {
				ff_load_fail(j->id, why);
				break;
			}
		}
		if (count(j, start, connected, end) && !j->answered)
			j->answered = 1;
	}
	iv_flush(j);
	return NULL;
}

/*
 * n zeroed histograms in one anonymous mapping: a page costs memory only
 * once a value lands in it, so 4096 jobs' histograms (30 KiB each) cost a
 * few pages each, not 120 MiB.
 */
static struct ff_hist *
new_hists(size_t n)
{
	void *p = mmap(NULL, n * sizeof(struct ff_hist), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ff_die("out of memory for %zu histograms", n);
	return p;
}

/*
 * The blocking path's jobs: each its connection first (rr; failing to
 * connect is an error), then, once the clock is set, a thread each.
 */
static void
threads_connect(void)
{
	char why[192];
	int i, fd, timed_out;

	for (i = 0; i < njobs && !crr; i++) {
		fd = connect_new(NULL, why, sizeof(why), &timed_out);
		if (fd < 0)
			ff_die("%s", why);
		atomic_store(&jobs_v[i].fd, fd);
		if (ff_signalled())
			ff_exit_signalled();
	}
}

static void
threads_go(void)
{
	pthread_attr_t attr;
	int i;

	for (i = 0; i < njobs && interval_ns; i++)
		jobs_v[i].phase_ns = interval_ns * i / njobs;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < njobs; i++)
		ff_load_thread(&jobs_v[i].tid, &attr, job_main, &jobs_v[i]);
	pthread_attr_destroy(&attr);
}

/*
 * Up to as many jobs as the epoll path would have threads, a thread each
 * (see the top of this file); 0: the epoll path.
 */
static int
threaded(void)
{
	return njobs <= ff_load_threads(FF_LOAD_MOST, 0);
}

static void
start(long warmup, long duration)
{
	struct ff_hist *lats, *conns, *ivlats;
	int i;

	many = !threaded();
	nacct = many ? ff_load_threads(FF_LOAD_MOST, njobs) : njobs;
	lats = new_hists(nacct);
	conns = crr ? new_hists(nacct) : NULL;
	ivlats = new_hists(nacct);
	niv = ff_intervals_count(iv_s, duration);
	iv_hists = new_hists(niv);
	ivs = calloc(niv, sizeof(*ivs));
	if (!ivs)
		ff_die("out of memory");

	jobs_v = aligned_alloc(64, nacct * sizeof(*jobs_v));
	reqbuf = malloc(req_size < CHUNK ? req_size : CHUNK);
	if (!jobs_v || !reqbuf)
		ff_die("out of memory");
	memset(reqbuf, 'q', req_size < CHUNK ? req_size : CHUNK);
	memset(jobs_v, 0, nacct * sizeof(*jobs_v));
	for (i = 0; i < nacct; i++) {
		struct job *j = &jobs_v[i];

		j->id = i + 1;
		j->lat = &lats[i];
		j->conn = crr ? &conns[i] : NULL;
		j->iv_lat = &ivlats[i];
		atomic_store(&j->fd, -1);
	}
	if (many)
		many_connect(jobs_v, nacct, njobs);
	else
		threads_connect();
	if (many && !crr)
		many_first();
	t0_ns = ff_now_ns();
	open_ns = t0_ns + warmup * 1000000000ULL;
	close_ns = open_ns + duration * 1000000000ULL;
	if (rate) {
		interval_ns = (uint64_t)(1e9 * njobs / rate);
		if (!interval_ns)
			interval_ns = 1;
	}
	if (many)
		many_go();
	else
		threads_go();
}

/*
 * Stop the jobs: those still in a transaction when the window closed are
 * woken by shutting their connection down (or their epoll thread by its
 * eventfd), and then none counts anything.
 */
static void
stop(void)
{
	int i, fd;

	ff_load_stop();
	if (many) {
		many_stop();
		return;
	}
	for (i = 0; i < njobs; i++)
		if ((fd = atomic_load(&jobs_v[i].fd)) >= 0)
			shutdown(fd, SHUT_RDWR);
	for (i = 0; i < njobs; i++)
		pthread_join(jobs_v[i].tid, NULL);
	for (i = 0; i < njobs; i++)
		if (!crr)
			close(atomic_load(&jobs_v[i].fd));
}

static void
sums(uint64_t *done, uint64_t *bytes)
{
	int i;

	*done = *bytes = 0;
	for (i = 0; i < nacct; i++) {
		*done += atomic_load_explicit(&jobs_v[i].done, memory_order_relaxed);
		*bytes += atomic_load_explicit(&jobs_v[i].bytes, memory_order_relaxed);
	}
}

static void
emit_counts(json_t *ev, uint64_t done, uint64_t bytes, double seconds)
{
	json_object_set_new(ev, "bytes", json_integer((json_int_t)bytes));
	json_object_set_new(ev, "bits", json_integer((json_int_t)(8 * bytes)));
	json_object_set_new(ev, "bits_per_s", json_real(8 * bytes / seconds));
	json_object_set_new(ev, "operations", json_integer((json_int_t)done));
	json_object_set_new(ev, "ops_per_s", json_real(done / seconds));
}

static char *
write_hist(const char *dir, const char *name, const struct ff_hist *h)
{
	char *path;

	if (!dir)
		return NULL;
	path = ff_asprintf("%s/%s", dir, name);
	if (ff_hist_write(path, h) < 0)
		ff_die("cannot keep the latency histogram");
	return path;
}

static void
result(long duration, const char *hist_dir)
{
	struct ff_hist *lat = new_hists(2), *conn = lat + 1;
	uint64_t done, bytes, attempts = 0, errors = 0, timeouts = 0;
	uint64_t answered = 0;
	const char *why = NULL;
	char *lat_path, *conn_path = NULL;
	json_t *ev;
	int i;

	for (i = 0; i < nacct; i++) {
		ff_hist_merge(lat, jobs_v[i].lat);
		answered += jobs_v[i].answered;
		if (crr)
			ff_hist_merge(conn, jobs_v[i].conn);
		attempts += jobs_v[i].attempts;
		errors += jobs_v[i].errors;
		timeouts += jobs_v[i].timeouts;
		if (!why && jobs_v[i].errors)
			why = jobs_v[i].why;
	}
	if (errors)
		ff_die("%llu of %llu connections failed (%llu timed out); the first: %s",
		       (unsigned long long)errors, (unsigned long long)attempts,
		       (unsigned long long)timeouts, why);
	sums(&done, &bytes);
	if (!done)
		ff_die("no transaction completed in the window");
	lat_path = write_hist(hist_dir, "latency-hist.json", lat);
	if (crr)
		conn_path = write_hist(hist_dir, "connect-latency-hist.json", conn);

	ev = ff_event("result");
	json_object_set_new(ev, "workload", json_string(crr ? "builtin-crr" : "builtin-rr"));
	json_object_set_new(ev, "jobs", json_integer(njobs));
	json_object_set_new(ev, "duration_s", json_real(duration));
	json_object_set_new(ev, "request_size", json_integer(req_size));
	json_object_set_new(ev, "response_size", json_integer(resp_size));
	json_object_set_new(ev, "rate_per_s", rate ? json_integer(rate) : json_null());
	emit_counts(ev, done, bytes, duration);
	json_object_set_new(ev, "transactions", json_integer((json_int_t)done));
	json_object_set_new(ev, "errors", json_integer(0));
	json_object_set_new(ev, "jobs_answered", json_integer((json_int_t)answered));
	json_object_set_new(ev, "client_threads", json_integer(nacct));
	ff_hist_summary_json(ev, "latency", lat);
	json_object_set_new(ev, "latency_distribution", ff_hist_distribution_json(lat));
	json_object_set_new(ev, "histogram", lat_path ? json_string(lat_path) : json_null());
	if (crr) {
		json_object_set_new(ev, "connections", json_integer((json_int_t)done));
		ff_hist_summary_json(ev, "connect_latency", conn);
		json_object_set_new(ev, "connect_latency_distribution",
				    ff_hist_distribution_json(conn));
		json_object_set_new(ev, "connect_histogram",
				    conn_path ? json_string(conn_path) : json_null());
	}
	ff_emit(ev);
	if (rate && done < 0.95 * rate * duration)
		ff_warn("%.0f transactions/s of the %ld asked: the relay (or the server) did not keep up",
			(double)done / duration, rate);
	free(lat_path);
	free(conn_path);
	munmap(lat, 2 * sizeof(*lat));
}

/*
 * The window's intervals, once the jobs are stopped: each transaction in
 * the one its end falls in, so they add up to the result exactly.
 */
static void
emit_intervals(long duration)
{
	json_t *ev, *lat;
	int k;

	for (k = 0; k < niv; k++) {
		double t = ff_interval_edge(iv_s, duration, k),
		       dt = ff_interval_edge(iv_s, duration, k + 1) - t;
		const struct ff_hist *h = &iv_hists[k];

		ev = ff_event("interval");
		json_object_set_new(ev, "t_s", json_real(ff_usec(t)));
		json_object_set_new(ev, "dt_s", json_real(ff_usec(dt)));
		json_object_set_new(ev, "bytes", json_integer((json_int_t)ivs[k].bytes));
		json_object_set_new(ev, "operations", json_integer((json_int_t)ivs[k].done));
		if (h->count) {
			lat = json_object();
			json_object_set_new(lat, "p50", json_real(ff_hist_percentile(h, 50) / 1e3));
			json_object_set_new(lat, "p90", json_real(ff_hist_percentile(h, 90) / 1e3));
			json_object_set_new(lat, "p99", json_real(ff_hist_percentile(h, 99) / 1e3));
			json_object_set_new(lat, "p99.9", json_real(ff_hist_percentile(h, 99.9) / 1e3));
			json_object_set_new(lat, "max", json_real(h->max_ns / 1e3));
		} else
			lat = json_null();
		json_object_set_new(ev, "latency_us", lat);
		ff_emit(ev);
	}
}

static void
run(long warmup, long duration, const char *hist_dir)
{
	uint64_t d, b, dprev, bprev, prev, t, begin = ff_now_ns();
	json_t *ev;
	int i;

	ff_load_fail_init(host_str, port);
	start(warmup, duration);
	ff_load_wait(open_ns / 1e9, "warmup");
	/* ready_s: when every connection had carried its first transaction (the epoll path's rr) */
	ff_emit_window(warmup, duration, open_ns / 1e9, many && !crr ? (t0_ns - begin) / 1e9 : -1);

	prev = open_ns;
	dprev = bprev = 0;
	for (i = 1; i <= duration; i++) {
		ff_load_wait((open_ns + i * 1000000000ULL) / 1e9, "window");
		t = ff_now_ns();
		/*
		 * The last second's count waits for the jobs to end: one that
		 * took its end stamp inside the window may not have counted it
		 * yet, and the samples must add up to the result.
		 */
		if (i == duration) {
			ff_load_check("window");
			stop();
		}
		sums(&d, &b);
		ev = ff_event("sample");
		json_object_set_new(ev, "elapsed_s", json_real(ff_usec((t - open_ns) / 1e9)));
		emit_counts(ev, d - dprev, b - bprev, (t - prev) / 1e9);
		ff_emit(ev);
		prev = t;
		dprev = d;
		bprev = b;
	}
	emit_intervals(duration);
	result(duration, hist_dir);
}

/* Its own options, but for those of every builtin program (ff_load_options). */
static void
take(int c, const char *arg)
{
	switch (c) {
	case 'c':
		crr = 1;
		break;
	case 't':
		timeout_s = (int)ff_parse_long(usage, "--timeout", arg, 1, 3600);
		break;
	case 'H':
		histogram_dir = arg;
		break;
	}
}

int
main(int argc, char *argv[])
{
	static const struct option more[] = {
		{ "crr", no_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "histogram-dir", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct ff_runspec rs;	/* the rows of FF_RS_RR (lib/ff_runspec.c) */
	struct ff_load_opts lo = { .usage = usage, .more = more, .take = take, .rs = &rs, .mask = FF_RS_RR };
	const struct ff_run_opts *o = &rs.run;

	ff_load_options(&lo, argc, argv);
	port = lo.port;
	sa = lo.sa;
	host_str = lo.host;
	njobs = o->jobs;
	req_size = o->request_size;
	resp_size = o->response_size;
	rate = o->rate;
	if (!ff_pipeline_stage())	/* a stage's argv was checked by flimflam */
		ff_check_interval(usage, o->interval, o->duration);
	iv_s = o->interval;
	if (histogram_dir) {
		struct ff_buf why = FF_BUF_INIT;

		if (ff_dir_writable(histogram_dir, 1 << 20, &why) < 0)
			ff_usage_error(usage, "--histogram-dir: %s", why.s);
	}

	ff_signals_init();
	ff_raise_nofile(njobs + 64);
	run(o->warmup, o->duration, histogram_dir);
	return ff_finish();
}
