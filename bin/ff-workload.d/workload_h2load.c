/*
 * ff-workload's driver for workload h2load: nghttpd's command line, and
 * h2load's client (h2load-h1's too): its command line, its summary and its
 * per-request log read into intervals and the result.
 */
#include "ff-workload.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* nghttpd, plain HTTP/2, serving a docroot of its own. */
static void
server_nghttpd(int port, struct ff_argv *a)
{
	char *docroot = run_path("docroot");

	write_docroot(docroot);
	ff_argv_addl(a, wl->server, "--no-tls", "--address", opt.listen, "--htdocs", docroot, NULL);
	ff_argv_addf(a, "%d", port);
	free(docroot);
}

/* h2load's client, its summary to h2load.out, its request log beside it. */
void
start_h2load(struct drive *d, int out_fd)
{
	struct ff_argv a = FF_ARGV_INIT;
	int fd;

	(void)out_fd;
	d->out_file = run_path("h2load.out");
	d->log_file = run_path("h2load-requests.log");
	ff_argv_add(&a, "h2load");
	if (wl->client_option)
		ff_argv_add(&a, wl->client_option);
	arg_num(&a, "--clients", opt.run.jobs);
	arg_num(&a, "--threads", opt.run.jobs);
	arg_num(&a, "--warm-up-time", opt.run.warmup);
	arg_num(&a, "--duration", opt.run.duration);
	/*
	 * --rate N: N requests a second over all clients, each client --rps
	 * N/jobs (h2load's own --rate is connections a period, not requests).
	 * A client has one request in flight at most (-m 1): one due while
	 * another is waits for it, and h2load times it from when it is sent.
	 */
	if (opt.run.rate) {
		ff_argv_add(&a, "--rps");
		ff_argv_addf(&a, "%.9g", (double)opt.run.rate / opt.run.jobs);
	}
	ff_argv_addl(&a, "--log-file", d->log_file, NULL);
	ff_argv_addf(&a, "http://%s:%d%s", d->host, d->port, d->path ? d->path : wl->url_path);
	fd = open(d->out_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		ff_die("cannot create '%s': %s", d->out_file, strerror(errno));
	spawn_or_die(&d->client, "client", a.v, d->client_log, fd);
	close(fd);
	ff_argv_free(&a);
}

/* The value at quantile q of sorted v[n] (nearest rank). */
static double
quantile(const double *v, size_t n, double q)
{
	size_t k = (size_t)(q * n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* A successful request of h2load's log: when it started (us), its latency. */
struct req {
	double start, us;
};

static int
cmp_req(const void *a, const void *b)
{
	const struct req *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * h2load's intervals, from its requests: each in the interval of its start
 * (the first started at the window's start; one after its end is in the
 * last), latency percentiles of each, and the window's bytes shared out by
 * requests (h2load does not log them; each response is the same object),
 * so that they add up to its total.
 */
static void
h2load_intervals(struct req *r, size_t n, double seconds, double bytes)
{
	/* The intervals of the window asked; the last one ends where h2load's did. */
	int niv = ff_intervals_count(opt.run.interval, opt.run.duration), k;
	size_t i = 0, j, cum = 0;
	double *lat = ff_realloc(NULL, (n + 1) * sizeof(*lat)), given = 0;

	qsort(r, n, sizeof(*r), cmp_req);
	ff_stop_if_signalled();
	for (k = 0; k < niv; k++) {
		double t = ff_interval_edge(opt.run.interval, opt.run.duration, k),
		       t1 = k == niv - 1 ? fmax(t, seconds) :
			    ff_interval_edge(opt.run.interval, opt.run.duration, k + 1), share;
		json_t *l = json_null();

		ff_stop_if_signalled();
		for (j = 0; i < n && (k == niv - 1 || (r[i].start - r[0].start) / 1e6 < t1); i++)
			lat[j++] = r[i].us;
		cum += j;
		share = n ? round(bytes * cum / n) - given : 0;
		given += share;
		if (j) {
			qsort(lat, j, sizeof(*lat), ff_cmp_double);
			l = json_object();
			json_object_set_new(l, "p50", json_real(quantile(lat, j, 0.50)));
			json_object_set_new(l, "p90", json_real(quantile(lat, j, 0.90)));
			json_object_set_new(l, "p99", json_real(quantile(lat, j, 0.99)));
			json_object_set_new(l, "p99.9", json_real(quantile(lat, j, 0.999)));
			json_object_set_new(l, "max", json_real(lat[j - 1]));
		}
		emit_interval(t, t1 - t, (json_int_t)share, json_integer((json_int_t)j), l);
	}
	free(lat);
}

/*
 * One line of h2load's request log, cut at its end: three numbers (start,
 * status, latency) and nothing else; 0, or -1 when it is not such a line.
 */
static int
parse_req_line(const char *line, double *start, double *status, double *us)
{
	char *e;

	*start = strtod(line, &e);
	if (e == line)
		return -1;
	*status = strtod(line = e, &e);
	if (e == line)
		return -1;
	*us = strtod(line = e, &e);
	if (e == line)
		return -1;
	return e[strspn(e, " \t\r")] ? -1 : 0;
}

/*
 * The latencies of the successful requests, sorted, from h2load's request
 * log, and their sum; its intervals emitted (`seconds` the window, `bytes`
 * its total). The log holds a line per request of the main duration: whole
 * lines, as many 2xx as h2load counted, or it was cut short. Each line is
 * parsed once cut (ff_lines): linear in the log, which holds a line per
 * request (millions in a minute over a fast relay).
 */
static double *
h2load_latencies(const struct drive *d, double s2xx, size_t *n, double *sum,
		 double seconds, double bytes)
{
	struct req *reqs = NULL;
	size_t rcap = 0, len;
	char *logtext, *line;
	struct ff_lines lines;
	double *lat = NULL;
	size_t nlat = 0, cap = 0;
	int bad = 0;

	if (!(logtext = ff_read_file(d->log_file, &len)))
		ff_die_event("cannot read h2load's request log '%s': %s", d->log_file, strerror(errno));
	ff_lines_init(&lines, logtext, len);
	while ((line = ff_lines_next(&lines))) {
		double start, status, us;

		if (!(lines.n & 0xffff))
			ff_stop_if_signalled();
		if (!lines.complete || parse_req_line(line, &start, &status, &us) < 0) {
			bad = 1;
			break;
		}
		if (status < 200 || status >= 300)
			continue;
		lat = ff_grow(lat, nlat + 1, &cap, sizeof(*lat), 65536);
		reqs = ff_grow(reqs, nlat + 1, &rcap, sizeof(*reqs), 65536);
		reqs[nlat] = (struct req){ start, us };
		lat[nlat++] = us;
		*sum += us;
	}
	free(logtext);
	if (bad || nlat != (size_t)s2xx) {
		free(lat);
		free(reqs);
		ff_die_event("h2load's request log '%s' is incomplete (%zu of the %.0f successful requests h2load counted%s: a full disk?); no latency from it",
			     d->log_file, nlat, s2xx, bad ? ", and a line cut short" : "");
	}
	ff_stop_if_signalled();
	h2load_intervals(reqs, nlat, seconds, bytes);
	free(reqs);
	qsort(lat, nlat, sizeof(*lat), ff_cmp_double);
	ff_stop_if_signalled();
	*n = nlat;
	return lat;
}

/*
 * h2load's summary, line by line (each cut before it is parsed): req/s,
 * the request counts, status codes and bytes. Its summary ends with the
 * latency table: every line of it must be there, whole, or the file was cut
 * short (a full disk) and holds no figures: then -1.
 */
struct h2load_summary {
	double rps, total, done, succeeded, failed, errored, timeout,
	       s2xx, s3xx, s4xx, s5xx, bytes;
};

static int
h2load_summary(char *text, size_t len, struct h2load_summary *h)
{
	struct ff_lines lines;
	char *line, *p;
	int have = 0;	/* a bit per line found */

	*h = (struct h2load_summary){ .rps = -1 };
	ff_lines_init(&lines, text, len);
	while ((line = ff_lines_next(&lines))) {
		/*
		 * "finished in" counts the warm-up too; the req/s beside it is
		 * the main duration's, so total / (req/s) is the window h2load
		 * measured.
		 */
		if (!strncmp(line, "finished in ", 12) && (p = strstr(line, "s, ")))
			h->rps = strtod(p + 3, NULL), have |= 1;
		else if (sscanf(line, "requests: %lf total, %*f started, %lf done, %lf succeeded, %lf failed, %lf errored, %lf timeout",
				&h->total, &h->done, &h->succeeded, &h->failed, &h->errored, &h->timeout) == 6)
			have |= 2;
		else if (sscanf(line, "status codes: %lf 2xx, %lf 3xx, %lf 4xx, %lf 5xx",
				&h->s2xx, &h->s3xx, &h->s4xx, &h->s5xx) == 4)
			have |= 4;
		else if (sscanf(line, "traffic: %*s (%lf) total", &h->bytes) == 1)
			have |= 8;
		else if (!strncmp(line, "time for request: ", 18))
			have |= 16;
		else if (!strncmp(line, "time to 1st byte: ", 18) && lines.complete)
			have |= 32;
	}
	return have == 63 && h->rps >= 0 ? 0 : -1;
}

/*
 * h2load: counts from its summary; latency from the per-request log, whose
 * lines are "start-time-us<TAB>status<TAB>latency-us" for the requests of
 * the main duration.
 */
int
finish_h2load(struct drive *d)
{
	size_t len, nlat = 0;
	char *text = ff_read_file(d->out_file, &len);
	struct h2load_summary h;
	double seconds = -1, *lat, sum = 0;
	json_t *ev;

	if (!text) {
		ff_warn("cannot read h2load's output '%s': %s", d->out_file, strerror(errno));
		return -1;
	}
	if (h2load_summary(text, len, &h) < 0) {
		free(text);
		ff_die_event("h2load's output '%s' is incomplete (its summary is cut short: a full disk?); no figures from it",
			     d->out_file);
	}
	free(text);
	if (h.rps > 0 && h.total > 0)
		seconds = h.total / h.rps;
	else if (h.rps == 0)
		seconds = opt.run.duration;	/* nothing completed: judged below */
	if (seconds <= 0) {
		ff_warn("h2load's output '%s' has no summary", d->out_file);
		return -1;
	}
	if (h.s2xx > 0)
		check_window("h2load", seconds, d->out_file);
	if (h.s2xx <= 0)
		ff_die_event("h2load: no request succeeded (%.0f total, %.0f failed, %.0f errored, %.0f 4xx, %.0f 5xx); see '%s'",
			     h.total, h.failed, h.errored, h.s4xx, h.s5xx, d->out_file);
	lat = h2load_latencies(d, h.s2xx, &nlat, &sum, seconds, h.bytes);

	moving_check();
	ev = ff_event("result");
	json_object_set_new(ev, "workload", json_string(opt.workload));
	json_object_set_new(ev, "jobs", json_integer(opt.run.jobs));
	json_object_set_new(ev, "duration_s", json_real(seconds));
	json_object_set_new(ev, "bytes", json_integer((json_int_t)h.bytes));
	json_object_set_new(ev, "bits", json_integer((json_int_t)(8 * h.bytes)));
	json_object_set_new(ev, "bits_per_s", json_real(8 * h.bytes / seconds));
	json_object_set_new(ev, "operations", json_integer((json_int_t)h.s2xx));
	json_object_set_new(ev, "ops_per_s", json_real(h.s2xx / seconds));
	json_object_set_new(ev, "requests", json_integer((json_int_t)h.total));
	json_object_set_new(ev, "rate_per_s", opt.run.rate ? json_integer(opt.run.rate) : json_null());
	json_object_set_new(ev, "failed", json_integer((json_int_t)(h.total - h.s2xx)));
	json_object_set_new(ev, "errors", json_integer((json_int_t)(h.errored + h.timeout)));
	json_object_set_new(ev, "status_4xx", json_integer((json_int_t)h.s4xx));
	json_object_set_new(ev, "status_5xx", json_integer((json_int_t)h.s5xx));
	if (nlat) {
		json_object_set_new(ev, "latency_avg_us", json_real(sum / nlat));
		json_object_set_new(ev, "latency_p50_us", json_real(quantile(lat, nlat, 0.50)));
		json_object_set_new(ev, "latency_p90_us", json_real(quantile(lat, nlat, 0.90)));
		json_object_set_new(ev, "latency_p99_us", json_real(quantile(lat, nlat, 0.99)));
		json_object_set_new(ev, "latency_p999_us", json_real(quantile(lat, nlat, 0.999)));
		json_object_set_new(ev, "latency_p9999_us", json_real(quantile(lat, nlat, 0.9999)));
		json_object_set_new(ev, "latency_max_us", json_real(lat[nlat - 1]));
	} else {
		json_object_set_new(ev, "latency_avg_us", json_null());
		json_object_set_new(ev, "latency_p50_us", json_null());
		json_object_set_new(ev, "latency_p90_us", json_null());
		json_object_set_new(ev, "latency_p99_us", json_null());
		json_object_set_new(ev, "latency_p999_us", json_null());
		json_object_set_new(ev, "latency_p9999_us", json_null());
		json_object_set_new(ev, "latency_max_us", json_null());
	}
	ff_emit(ev);
	free(lat);
	if (h.total > h.s2xx)
		ff_warn("h2load: %.0f of %.0f request%s did not succeed (%.0f failed, %.0f errored, %.0f timeout, %.0f 4xx, %.0f 5xx)",
			h.total - h.s2xx, h.total, h.total == 1 ? "" : "s", h.failed, h.errored, h.timeout, h.s4xx, h.s5xx);
	d->have_result = 1;
	return 0;
}

const struct workload_driver workload_h2load = {
	.name = "h2load",
	.server_args = server_nghttpd,
	.start = start_h2load,
	.finish = finish_h2load,
};
