/*
 * bench --slo pNN=MS: the capacity of each case at a latency target. For
 * the workloads that take an open-loop --rate (requests a second over all
 * jobs: builtin-rr's and builtin-crr's transactions, h2load's requests),
 * the rate is searched for the highest one that passes: no error, the percentile at most MS, and the
 * achieved rate within 2% of the asked. From the start rate (--rate, else
 * 1000/s) it doubles while runs pass (halves while they fail), then
 * bisects (geometric means) between the highest pass and the lowest
 * failure until they are within 10% of each other: the knee. At most
 * SLO_RUNS runs a case; every run is a record of the results file.
 */
#include "ff-bench.h"

#include <math.h>

#define SLO_RUNS 12		/* runs a case at most */
#define SLO_CLOSE 1.10		/* the knee: the lowest failure within 10% of the highest pass */
#define SLO_RATE_PCT 2.0	/* the achieved rate within 2% of the asked */

static const char *const pcts[] = { "p50", "p90", "p99", "p999", "p9999", NULL };

/* What the search found for each case it ran. */
struct capacity {
	const struct bcase *c;
	long rate, fail_rate;	/* the highest pass, the lowest failure; 0: none */
	int runs;
	char how[512];		/* how the search ended, and why */
};
static struct capacity *found;
static int nfound;

void
slo_parse(const char *usage, const char *arg)
{
	const char *eq = strchr(arg, '=');
	int i;

	for (i = 0; eq && pcts[i] && (strlen(pcts[i]) != (size_t)(eq - arg) ||
				      strncmp(arg, pcts[i], eq - arg)); i++)
		;
	if (!eq || !pcts[i])
		ff_usage_error(usage, "--slo: expected pNN=MS (p50, p90, p99, p999 or p9999), not '%s'", arg);
	opt.slo_pct = pcts[i];
	opt.slo_ms = ff_parse_double(usage, "--slo", eq + 1, 0.001, 3600e3);
}

void
slo_check(const char *usage)
{
	int w;

	if (!opt.slo_pct)
		return;
	for (w = 0; w < opt.nw; w++)
		if (!ff_workload_takes_rate(opt.workloads[w]))
			ff_usage_error(usage, "--slo searches the open-loop --rate of %s, not of '%s'",
				       ff_workloads_taking(1), opt.workloads[w]);
	if (opt.nsweep[SW_RATE] > 1)
		ff_usage_error(usage, "--slo searches the rate: give --rate one start value, not a list");
	if (opt.repeat > 1 || opt.pool)
		ff_usage_error(usage, "--slo runs each rate once, here: not with --repeat or --pool");
}

/* Does run `rec` at `rate` meet the target? 1, or 0 with why not. */
static int
slo_met(const json_t *rec, long rate, struct ff_buf *why)
{
	const json_t *res = json_object_get(rec, "result");
	char key[32];
	double lat, ops, errors;

	snprintf(key, sizeof(key), "latency_%s_us", opt.slo_pct);
	if (!is_status(rec, "ok")) {
		ff_why(why, "the run failed: %s", ff_json_str_or(rec, "reason", "no reason given"));
		return 0;
	}
	if (!num(res, "ops_per_s", &ops) || !num(res, key, &lat)) {
		ff_why(why, "the run has no ops_per_s or %s", key);
		return 0;
	}
	if (num(res, "errors", &errors) && errors > 0) {
		ff_why(why, "%.0f errors", errors);
		return 0;
	}
	if (lat > opt.slo_ms * 1000) {
		ff_why(why, "%s %.3g ms > %g ms", opt.slo_pct, lat / 1000, opt.slo_ms);
		return 0;
	}
	if (ops < rate * (1 - SLO_RATE_PCT / 100)) {
		ff_why(why, "%.0f/s achieved of %ld/s asked (the client or the relays saturated)", ops, rate);
		return 0;
	}
	return 1;
}

/* The next rate to try, or 0 when the search is over (how it ended in cap->how). */
static long
next_rate(struct capacity *cap, long rate, const char *why)
{
	long r;

	if (cap->rate && cap->fail_rate) {
		if (cap->fail_rate <= cap->rate * SLO_CLOSE || cap->fail_rate - cap->rate <= 1) {
			snprintf(cap->how, sizeof(cap->how), "knee found: %ld/s meets it, %ld/s does not (%s)",
				 cap->rate, cap->fail_rate, why);
			return 0;
		}
		return lround(sqrt((double)cap->rate * cap->fail_rate));
	}
	if (cap->rate) {
		if (rate >= 10000000) {
			snprintf(cap->how, sizeof(cap->how), "%ld/s, --rate's largest, meets it", rate);
			return 0;
		}
		return rate * 2 > 10000000 ? 10000000 : rate * 2;
	}
	r = rate / 2;
	if (r < 1)
		snprintf(cap->how, sizeof(cap->how), "nothing meets it: 1/s does not (%s)", why);
	return r;
}

/* The search for one case: its runs kept in `records`; returns the failed runs. */
static int
search(const struct bcase *c, json_t *records, int *done, int k, int n)
{
	struct capacity *cap = &found[nfound++];
	struct bcase probe = *c;
	struct ff_buf why = FF_BUF_INIT;
	long rate = opt.run.rate ? opt.run.rate : 1000;
	int failed = 0, met;
	json_t *rec;

	memset(cap, 0, sizeof(*cap));
	cap->c = c;
	while (rate && !ff_signalled() && !output_gone && !output_lost) {
		if (cap->runs == SLO_RUNS) {
			if (cap->rate && cap->fail_rate)
				snprintf(cap->how, sizeof(cap->how), "budget spent (%d runs): between %ld/s (met) and %ld/s (not)",
					 SLO_RUNS, cap->rate, cap->fail_rate);
			else
				snprintf(cap->how, sizeof(cap->how), "budget spent (%d runs): %s %ld/s", SLO_RUNS,
					 cap->rate ? "still met at" : "not met down to", cap->rate ? cap->rate : cap->fail_rate);
			break;
		}
		probe.rate = rate;
		if (!(rec = run_case(&probe, 1, k, n)))
			break;
		cap->runs++;
		++*done;
		failed += is_status(rec, "failed");
		met = slo_met(rec, rate, &why);
		if (met)
			cap->rate = rate;
		else if (!cap->fail_rate || rate < cap->fail_rate)
			cap->fail_rate = rate;
		/* The target and whether this run met it: the report marks the knee. */
		json_object_set_new(rec, "slo", json_pack("{s:s,s:f,s:b,s:s?}", "percentile", opt.slo_pct,
							  "ms", opt.slo_ms, "met", met, "why", met ? NULL : why.s));
		json_array_append_new(records, rec);
		output_save(records);
		rate = next_rate(cap, rate, why.s ? why.s : "");
	}
	if (!cap->how[0])
		snprintf(cap->how, sizeof(cap->how), "stopped");
	ff_buf_free(&why);
	return failed;
}

int
run_capacity(const struct bcase *cases, int ncases, json_t *records, int *done)
{
	int i, failed = 0, nrun = 0, k = 0;

	for (i = 0; i < ncases; i++)
		nrun += !cases[i].skip[0];
	found = ff_realloc(NULL, (ncases + 1) * sizeof(*found));
	for (i = 0; i < ncases && !ff_signalled() && !output_gone && !output_lost; i++)
		if (!cases[i].skip[0])
			failed += search(&cases[i], records, done, ++k, nrun);
	return failed;
}

void
print_capacity(void)
{
	struct table t = { 5, "lllrl", NULL, 0 };
	char rate[64], how[600], wl[160], relay[160];
	int i;

	if (!nfound)
		return;
	trow(&t, 5, "Workload", "Relay", "Protocol", "Capacity", "Runs: how the search ended");
	for (i = 0; i < nfound; i++) {
		const struct capacity *cap = &found[i];

		if (cap->rate)
			snprintf(rate, sizeof(rate), "%ld/s", cap->rate);
		else
			snprintf(rate, sizeof(rate), "-");
		snprintf(how, sizeof(how), "%d: %s", cap->runs, cap->how);
		snprintf(wl, sizeof(wl), "%s jobs=%ld", cap->c->workload, cap->c->jobs);
		snprintf(relay, sizeof(relay), "%s%s%s%s%s", cap->c->relay, opt.tls ? " tls" : "",
			 hops_label(cap->c->relay, cap->c->hops), cap->c->build >= 0 ? " " : "",
			 cap->c->build >= 0 ? opt.builds[cap->c->build].label : "");
		trow(&t, 5, wl, relay, cap->c->protocol, rate, how);
	}
	printf("\nCapacity at %s <= %g ms, no errors, the achieved rate within %g%% of the asked\n\n",
	       opt.slo_pct, opt.slo_ms, SLO_RATE_PCT);
	table_print(&t);
	table_free(&t);
}
