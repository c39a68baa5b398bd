/*
 * ff-bench sweeps: --jobs, --request-size, --response-size, --rate and
 * --workers take a comma list where a run takes one value, and each value
 * is a case of its own ("points" of the sweep, in the order given). A
 * workload runs each point of the options it does not take once, with
 * their defaults (the sizes are the request/response workloads', --rate
 * the open-loop ones'); a relay whose worker count
 * flimflam does not set (cmd, none: no FF_RELAY_WORKERS) runs once, with
 * its own.
 */
#include "ff-bench.h"

#include <limits.h>
#include <math.h>

/* In the order of enum sweep_dim. */
static const char *const sweep_opt[SW_N] = { "--jobs", "--request-size", "--response-size", "--rate",
					      "--workers" };

/*
 * A comma list of numbers for option `name`, each in its range
 * (ff_parse_run_opt), none empty nor given twice: their count, into out.
 */
int
parse_num_list(const char *usage, const char *name, const char *arg, long out[], int max)
{
	char *copy = ff_strdup(arg), *tok, *save = NULL;
	int n = 0, j;

	if (!*arg || arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
		ff_usage_error(usage, "%s: empty number in '%s'", name, arg);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v = ff_parse_run_opt(usage, name, tok);

		for (j = 0; j < n; j++)
			if (out[j] == v)
				ff_usage_error(usage, "%s: %ld is given twice", name, v);
		if (n == max)
			ff_usage_error(usage, "%s: %d values at most", name, max);
		out[n++] = v;
	}
	free(copy);
	return n;
}

int
sweep_take_opt(const char *usage, const char *name, const char *arg, struct ff_run_opts *run)
{
	long *field[SW_N] = { &run->jobs, &run->request_size, &run->response_size, &run->rate,
			      &run->workers };
	int d, i;

	for (d = 0; d < SW_N && strcmp(name, sweep_opt[d]); d++)
		;
	if (d == SW_N)
		return 0;
	opt.nsweep[d] = parse_num_list(usage, sweep_opt[d], arg, opt.sweep[d], SWEEP_MAX);
	/* run holds the largest, which the checks before any run take. */
	*field[d] = opt.sweep[d][0];
	for (i = 1; i < opt.nsweep[d]; i++)
		if (opt.sweep[d][i] > *field[d])
			*field[d] = opt.sweep[d][i];
	return 1;
}

/* The k-th value of dimension d: the list's, else opt.run's one value. */
static long
value_of(int d, int k)
{
	const long one[SW_N] = { opt.run.jobs, opt.run.request_size, opt.run.response_size,
				 opt.run.rate, opt.run.workers };

	return opt.nsweep[d] ? opt.sweep[d][k] : one[d];
}

static int
count_of(int d)
{
	return opt.nsweep[d] ? opt.nsweep[d] : 1;
}

int
sweep_points(void)
{
	int d, n = 1;

	for (d = 0; d < SW_N; d++)
		n *= count_of(d);
	return n;
}

int
sweep_point(int i, const char *workload, const char *relay, struct bcase *c)
{
	struct ff_run_opts def = FF_RUN_OPTS_DEFAULTS;
	int k[SW_N], d, rr = ff_workload_is_rr(workload), ol = ff_workload_takes_rate(workload),
	    w = ff_relay_has(relay, FF_RELAY_WORKERS);

	/* The last dimension turns fastest: jobs outermost, workers innermost. */
	for (d = SW_N - 1; d >= 0; d--) {
		k[d] = i % count_of(d);
		i /= count_of(d);
	}
	if ((!rr && (k[SW_REQUEST] || k[SW_RESPONSE])) || (!ol && k[SW_RATE]))
		return 0;	/* one point per the values it takes */
	if (!w && k[SW_WORKERS])
		return 0;	/* one point per the others: the relay's own workers */
	c->jobs = value_of(SW_JOBS, k[SW_JOBS]);
	c->request_size = rr ? value_of(SW_REQUEST, k[SW_REQUEST]) : def.request_size;
	c->response_size = rr ? value_of(SW_RESPONSE, k[SW_RESPONSE]) : def.response_size;
	c->rate = ol ? value_of(SW_RATE, k[SW_RATE]) : def.rate;
	c->workers = w ? value_of(SW_WORKERS, k[SW_WORKERS]) : 0;
	return 1;
}

void
case_run_opts(const struct bcase *c, struct ff_run_opts *run)
{
	*run = opt.run;
	run->jobs = c->jobs;
	run->request_size = c->request_size;
	run->response_size = c->response_size;
	run->rate = c->rate;
	run->workers = c->workers;
}

/* The sweep's dimensions that differ among the cases g[0..ng) (bits 1 << SW_...). */
unsigned
sweep_dims(const struct group *g, int ng)
{
	unsigned dims = 0;
	int i;

	for (i = 1; i < ng; i++) {
		dims |= (g[i].k.jobs != g[0].k.jobs) << SW_JOBS;
		dims |= (g[i].k.workers != g[0].k.workers) << SW_WORKERS;
		if (ff_workload_takes_rate(g[i].k.workload))
			dims |= (g[i].k.rate != g[0].k.rate) << SW_RATE;
		if (!ff_workload_is_rr(g[i].k.workload))
			continue;
		dims |= (g[i].k.request_size != g[0].k.request_size) << SW_REQUEST;
		dims |= (g[i].k.response_size != g[0].k.response_size) << SW_RESPONSE;
	}
	return dims;
}

const char *
point_label(const struct key *k, unsigned dims)
{
	static char buf[4][96];
	static int n;
	char *b = buf[n++ % 4];
	size_t len = 0;

	b[0] = 0;
	if (dims & 1u << SW_JOBS)
		len += snprintf(b + len, sizeof(buf[0]) - len, " jobs=%ld", k->jobs);
	if (ff_workload_is_rr(k->workload)) {
		if (dims & 1u << SW_REQUEST)
			len += snprintf(b + len, sizeof(buf[0]) - len, " req=%ld", k->request_size);
		if (dims & 1u << SW_RESPONSE)
			len += snprintf(b + len, sizeof(buf[0]) - len, " resp=%ld", k->response_size);
	}
	if (ff_workload_takes_rate(k->workload) && dims & 1u << SW_RATE && len < sizeof(buf[0]))
		len += snprintf(b + len, sizeof(buf[0]) - len, k->rate ? " rate=%ld" : " rate=max", k->rate);
	if (dims & 1u << SW_WORKERS && len < sizeof(buf[0]))
		snprintf(b + len, sizeof(buf[0]) - len, k->workers ? " workers=%ld" : " workers=own", k->workers);
	return b;
}

/* Cases a and b are points of one --jobs sweep: equal in all but their jobs. */
static int
same_line(const struct key *a, const struct key *b)
{
	return !strcmp(a->workload, b->workload) && !strcmp(a->relay, b->relay) &&
	       !strcmp(a->protocol, b->protocol) && a->hops == b->hops && a->tls == b->tls &&
	       same_label(a->build, b->build) && a->cpu_limit == b->cpu_limit &&
	       a->duration == b->duration && a->warmup == b->warmup &&
	       a->request_size == b->request_size && a->response_size == b->response_size &&
	       a->rate == b->rate && a->workers == b->workers;
}

/*
 * The least-squares slope of y against x over n points, or NAN when the
 * x do not differ.
 */
static double
slope(const double *x, const double *y, int n)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0;
	int i;

	for (i = 0; i < n; i++) {
		mx += x[i] / n;
		my += y[i] / n;
	}
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	return sxx > 0 ? sxy / sxx : NAN;
}

/* One sweep's row, from the cases of g like g[first]; 0 when it has fewer than two points. */
static int
per_conn_row(struct table *t, const struct group *g, int ng, int first, unsigned pts)
{
	double *x = ff_realloc(NULL, ng * sizeof(*x)), *y = ff_realloc(NULL, ng * sizeof(*y)), b;
	char wl[160], relay[160], jobs[64], per[64];
	long lo = LONG_MAX, hi = 0;
	struct stats s;
	int i, n = 0;

	for (i = first; i < ng; i++) {
		if (!same_line(&g[i].k, &g[first].k))
			continue;
		group_stats(&g[i], M_RSSEND, &s);
		if (!s.n)
			continue;
		x[n] = g[i].k.jobs;
		y[n++] = s.median;
		lo = g[i].k.jobs < lo ? g[i].k.jobs : lo;
		hi = g[i].k.jobs > hi ? g[i].k.jobs : hi;
	}
	b = n >= 2 ? slope(x, y, n) : NAN;
	free(x);
	free(y);
	if (isnan(b))
		return 0;
	snprintf(wl, sizeof(wl), "%s%s", g[first].k.workload, point_label(&g[first].k, pts & ~(1u << SW_JOBS)));
	snprintf(relay, sizeof(relay), "%s%s%s%s%s", g[first].k.relay, g[first].k.tls ? " tls" : "",
		 hops_label(g[first].k.relay, g[first].k.hops), g[first].k.build ? " " : "",
		 g[first].k.build ? g[first].k.build : "");
	snprintf(jobs, sizeof(jobs), "%ld to %ld (%d)", lo, hi, n);
	ff_fmt_prefixed(b, 1024, "", "B", per, sizeof(per));
	trow(t, 5, wl, relay, g[first].k.protocol, jobs, per);
	return 1;
}

void
print_per_conn(const struct group *g, int ng)
{
	struct table t = { 5, "lllrr", NULL, 0 };
	unsigned pts = sweep_dims(g, ng);
	int i, j;

	if (!(pts & 1u << SW_JOBS))
		return;
	trow(&t, 5, "Workload", "Relay", "Protocol", "Jobs (points)", "Bytes/conn");
	for (i = 0; i < ng; i++) {
		for (j = 0; j < i && !same_line(&g[j].k, &g[i].k); j++)
			;
		if (j == i)
			per_conn_row(&t, g, ng, i, pts);
	}
	if (t.nrows > 1) {
		printf("\nRelay memory per connection (every relay's RSS at the window's end against\n"
		       "--jobs: the least-squares slope over the points' medians)\n\n");
		table_print(&t);
	}
	table_free(&t);
}
