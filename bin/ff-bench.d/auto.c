/*
 * ff-bench --repeat auto[:BUDGET]: interleaved rounds added until every
 * case is decided or the budget ends; and, after any bench of builds, how
 * steady each metric was across its rounds.
 *
 * Each case compares every build with the first (the base) on one metric:
 * relay CPU per 1k requests for request workloads, relay CPU per GB for
 * streams (the steadiest on a shared machine: it does not fall with the
 * CPU time a relay is left, where throughput does), throughput with relay
 * none. After each round, the pairs of each undecided comparison get the
 * confidence sequence of paired.c, and after the last round the budget
 * holds, those it left undecided get the signed-rank test too
 * (seq_analysis), at alpha split evenly over the comparisons
 * (Bonferroni), so that the chance of any wrong decision in the whole
 * bench stays under alpha however many rounds are looked at:
 * - worse or better: the interval lies on one side of 0;
 * - equivalent: it lies within +-THRESHOLD (2%, compare's default);
 * - undecided: neither, when the budget ended.
 * A decided case runs no more rounds.
 */
#include "ff-bench.h"

#include <math.h>

static double budget_s;		/* 0: --repeat N */
static double started;		/* the first round's start (ff_now) */
static int nruns_done;

/* One comparison: a case's build against its base build, on its metric. */
struct verdict {
	struct key k;		/* the case, with the base's label (strings its own) */
	char *new_label;
	int m;
	int decided_round;	/* 0: not yet */
	const char *what;	/* better, worse, equivalent, undecided */
	struct paired p;
};

static struct verdict *verdicts;
static int nverdicts;

/* "10m", "600", "90s", "1h", "1.5m": seconds, or -1. */
static double
parse_budget(const char *s)
{
	char *end;
	double v;

	if (!*s || strchr(" \t+-", *s))
		return -1;
	v = strtod(s, &end);
	if (end == s || isnan(v) || isinf(v))
		return -1;
	if (!strcmp(end, "h"))
		v *= 3600;
	else if (!strcmp(end, "m"))
		v *= 60;
	else if (*end && strcmp(end, "s"))
		return -1;
	return v;
}

int
repeat_auto(const char *arg)
{
	if (strncmp(arg, "auto", 4) || (arg[4] && arg[4] != ':'))
		return 0;
	budget_s = arg[4] ? parse_budget(arg + 5) : 600;
	if (budget_s <= 0 || budget_s > 7 * 86400)
		ff_fail(2, "--repeat %s: expected auto or auto:BUDGET, a time over 0 and at most a week "
			"(auto:10m, auto:90s, auto:600)", arg);
	return 1;
}

int
auto_on(void)
{
	return budget_s > 0;
}

double
auto_budget(void)
{
	return budget_s;
}

void
auto_check(void)
{
	if (!auto_on())
		return;
	if (opt.nbuild < 2)
		ff_fail(2, "--repeat auto compares builds: give two or more --build LABEL=PATH");
	if (opt.pool)
		ff_fail(2, "--repeat auto decides after each round here, and --pool plans every run ahead: give one");
	/* The most rounds the budget can hold: each has a run of each build, each run its window at least. */
	opt.repeat = (long)(budget_s * runs_at_once() / (opt.nbuild * (double)(opt.run.warmup + opt.run.duration)));
	opt.repeat = opt.repeat < 1 ? 1 : opt.repeat > 10000 ? 10000 : opt.repeat;
}

/* The metric a case is decided on (see the top), or -1. */
int
decision_metric(const struct group *b, const struct group *n)
{
	static const int pref[] = { M_CPU_KREQ, M_CPU_GB, M_OPS, M_BITS };
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(pref); i++)
		if (group_has(b, pref[i]) && group_has(n, pref[i]))
			return pref[i];
	return -1;
}

/* The group of case k with build `label` in r, or NULL. */
static const struct group *
find_group(const struct results *r, const struct key *k, const char *label)
{
	int i;

	for (i = 0; i < r->ng; i++)
		if (case_eq(&r->g[i].k, k) && same_label(r->g[i].k.build, label))
			return &r->g[i];
	return NULL;
}

/* New comparisons: each build of a case against the case's base build (the first --build). */
static void
take_comparisons(const struct results *r)
{
	int i, j, k;

	for (i = 0; i < r->ng; i++) {
		/* Not a case that is skipped (a build that cannot carry it). */
		if (build_rank(&r->g[i]) != 0 || group_count(&r->g[i], 's') == r->g[i].nruns)
			continue;
		for (j = 0; j < r->ng; j++) {
			const struct group *n = &r->g[j];

			if (j == i || build_rank(n) <= 0 || !case_eq(&r->g[i].k, &n->k) ||
			    group_count(n, 's') == n->nruns)
				continue;
			for (k = 0; k < nverdicts && !(case_eq(&verdicts[k].k, &n->k) &&
						       same_label(verdicts[k].new_label, n->k.build)); k++)
				;
			if (k < nverdicts)
				continue;
			verdicts = ff_realloc(verdicts, (nverdicts + 1) * sizeof(*verdicts));
			verdicts[k] = (struct verdict){ .k = r->g[i].k, .what = "undecided", .m = -1 };
			verdicts[k].k.workload = ff_strdup(r->g[i].k.workload);
			verdicts[k].k.relay = ff_strdup(r->g[i].k.relay);
			verdicts[k].k.protocol = ff_strdup(r->g[i].k.protocol);
			verdicts[k].k.build = r->g[i].k.build ? ff_strdup(r->g[i].k.build) : NULL;
			verdicts[k].new_label = n->k.build ? ff_strdup(n->k.build) : NULL;
			nverdicts++;
		}
	}
}

/*
 * Each undecided comparison's analysis after `round` rounds, the last if
 * `final`, at alpha split over `split` comparisons; returns how many
 * remain undecided.
 */
static int
decide(const struct results *r, int round, int split, int final)
{
	double thr = log1p(THRESHOLD / 100), *d;
	int i, np, lone, seq, open = 0;

	for (i = 0; i < nverdicts; i++) {
		struct verdict *v = &verdicts[i];
		const struct group *b = find_group(r, &v->k, v->k.build);
		const struct group *n = find_group(r, &v->k, v->new_label);

		if (v->decided_round)
			continue;
		v->m = b && n ? decision_metric(b, n) : -1;
		if (v->m < 0) {
			open++;
			continue;
		}
		np = pair_runs(b, n, v->m, &d, &lone, &seq);
		seq_analysis(d, np, ALPHA / split, final, &v->p);
		free(d);
		switch (paired_decision(&v->p, thr)) {
		case PAIRED_CHANGED:
			v->what = (v->p.lo > 0) == metrics[v->m].higher_better ? "better" : "worse";
			break;
		case PAIRED_EQUIVALENT:
			v->what = "equivalent";
			break;
		default:
			open++;
			continue;
		}
		v->decided_round = round;
	}
	return open;
}

int
auto_more(json_t *records, int rounds_done, int runs_per_round)
{
	struct results r;
	double now = ff_now(), per_run, left;
	int open, i, nruns, more;

	if (!auto_on())
		return 1;
	if (!rounds_done) {
		started = now;
		return 1;
	}
	results_of(records, 1, &r);
	take_comparisons(&r);
	for (i = 0, nruns = 0; i < r.ng; i++)
		nruns += group_count(&r.g[i], 'o') + group_count(&r.g[i], 'f');
	nruns_done = nruns;
	per_run = nruns ? (now - started) / nruns : 0;
	left = budget_s - (now - started);
	/* Another round only when it should end within the budget: else this was the last. */
	more = left >= per_run * (runs_per_round > 0 ? runs_per_round : 1);
	open = decide(&r, rounds_done, nverdicts, !more);
	results_free(&r);
	ff_say("%s: round %d done: %d of %d comparison%s decided, %s of the budget left\n", ff_prog(),
	       rounds_done, nverdicts - open, nverdicts, nverdicts == 1 ? "" : "s",
	       clock_str(left > 0 ? left : 0));
	if (!open && nverdicts)
		return 0;
	return more;
}

/* Is bench case c decided: every comparison it is in (as base or build)? Then it runs no more. */
int
auto_decided(const struct bcase *c)
{
	const char *label;
	int i, in = 0;

	if (!auto_on() || c->build < 0)
		return 0;
	label = opt.builds[c->build].label;
	for (i = 0; i < nverdicts; i++) {
		const struct verdict *v = &verdicts[i];

		if (strcmp(v->k.workload, c->workload) || strcmp(v->k.relay, c->relay) ||
		    strcmp(v->k.protocol, c->protocol) || v->k.hops != c->hops ||
		    (!same_label(v->k.build, label) && !same_label(v->new_label, label)))
			continue;
		if (!v->decided_round)
			return 0;
		in = 1;
	}
	return in;
}

/* "-1.2% [-3.0, +0.6]" of a paired change; "-inf" or "+inf" for an unbounded side. */
static void
fmt_paired(const struct paired *p, char *buf, size_t n)
{
	char lo[32], hi[32];

	if (isnan(p->est)) {
		snprintf(buf, n, "-");
		return;
	}
	if (isinf(p->lo))
		snprintf(lo, sizeof(lo), "-inf");
	else
		snprintf(lo, sizeof(lo), "%+.1f", pct_of_log(p->lo));
	if (isinf(p->hi))
		snprintf(hi, sizeof(hi), "+inf");
	else
		snprintf(hi, sizeof(hi), "%+.1f", pct_of_log(p->hi));
	snprintf(buf, n, "%+.1f%% [%s, %s]", pct_of_log(p->est), lo, hi);
}

/* After a --repeat auto bench: each comparison's decision, and the cases left undecided. */
static void
print_decisions(void)
{
	struct table t = { 8, "llllllrl", NULL, 0 };
	char change[96], rounds[32], relay[128], undecided[2048] = "";
	size_t len = 0;
	int i, nund = 0;

	trow(&t, 8, "Workload", "Relay", "Protocol", "Build", "Metric", "Change [95% CI]",
	     "Rounds", "Decision");
	for (i = 0; i < nverdicts; i++) {
		const struct verdict *v = &verdicts[i];

		fmt_paired(&v->p, change, sizeof(change));
		snprintf(rounds, sizeof(rounds), "%d", v->decided_round ? v->decided_round : v->p.n);
		snprintf(relay, sizeof(relay), "%s%s%s", v->k.relay, v->k.tls ? " tls" : "",
			 hops_label(v->k.relay, v->k.hops));
		trow(&t, 8, v->k.workload, relay, v->k.protocol, v->new_label ? v->new_label : "-",
		     v->m >= 0 ? metrics[v->m].key : "-", change, rounds, v->what);
		if (v->decided_round)
			continue;
		nund++;
		if (len < sizeof(undecided))
			len += snprintf(undecided + len, sizeof(undecided) - len, "%s%s %s %s%s build %s",
					len ? ", " : "", v->k.workload, relay, v->k.protocol, "",
					v->new_label ? v->new_label : "-");
	}
	printf("\nAdaptive rounds (--repeat auto, budget %s): each build against %s, on relay CPU\n"
	       "per GB (per 1k requests for request workloads); decided when the interval of its\n"
	       "pairs' log ratios, 95%% for the whole bench, lies beyond 0 (better, worse) or\n"
	       "within +-%g%% (equivalent): the confidence sequence after each round, and for\n"
	       "what it left undecided, with the signed-rank test's at the budget's end\n\n", clock_str(budget_s),
	       nverdicts && verdicts[0].k.build ? verdicts[0].k.build : "the base", THRESHOLD);
	table_print(&t);
	table_free(&t);
	if (nund)
		printf("\nUndecided when the budget ended (%d of %d): %s\n(a longer budget, or a "
		       "steadier machine, may decide them)\n", nund, nverdicts, undecided);
	else if (nverdicts)
		printf("\nEvery comparison decided, after %d run%s\n", nruns_done, nruns_done == 1 ? "" : "s");
}

/* The sd of v[0..n-1] (n >= 2), and its mean into *mean. */
static double
sd_of(const double *v, int n, double *mean)
{
	double ss = 0;
	int i;

	for (*mean = 0, i = 0; i < n; i++)
		*mean += v[i] / n;
	for (i = 0; i < n; i++)
		ss += (v[i] - *mean) * (v[i] - *mean);
	return sqrt(ss / (n - 1));
}

/* The sd of v over its mean, in percent; NAN when the mean is 0. */
static double
cv_pct(const double *v, int n)
{
	double mean, sd = sd_of(v, n, &mean);

	return mean != 0 ? sd / fabs(mean) * 100 : NAN;
}

/*
 * How steady each compared metric was across the rounds of each case: the
 * CV of its runs (per build, averaged), and the sd of its pairs' log
 * ratios against the base build (what the paired tests see through); the
 * steadiest named. For benches of builds with 3 rounds or more.
 */
void
print_steadiness(const struct results *r)
{
	struct table t = { 6, "llllrr", NULL, 0 };
	char cv[32], sd[32], relay[128], best[256] = "";
	double bestsd = INFINITY, mean, *v, *d;
	int i, j, m, n, np, lone, seq, nb, rows = 0;

	trow(&t, 6, "Workload", "Relay", "Protocol", "Metric", "CV of runs", "SD of pair log ratios");
	for (i = 0; i < r->ng; i++) {
		const struct group *b = &r->g[i];

		if (build_rank(b) != 0)
			continue;
		for (m = 0; m < M_NCMP; m++) {
			double sumcv = 0, sumsd = 0;
			int ncv = 0, nsd = 0;

			for (j = 0, nb = 0; j < r->ng; j++) {
				const struct group *g = &r->g[j];

				if (!case_eq(&g->k, &b->k) || !group_has(g, m))
					continue;
				nb++;
				if ((n = group_values(g, m, &v)) >= 3 && !isnan(cv_pct(v, n)))
					sumcv += cv_pct(v, n), ncv++;
				free(v);
				if (g == b)
					continue;
				np = pair_runs(b, g, m, &d, &lone, &seq);
				if (np >= 3)
					sumsd += sd_of(d, np, &mean) * 100, nsd++;
				free(d);
			}
			if (nb < 2 || !ncv)
				continue;
			snprintf(cv, sizeof(cv), "%.1f%%", sumcv / ncv);
			snprintf(sd, sizeof(sd), nsd ? "%.1f%%" : "-", sumsd / (nsd ? nsd : 1));
			snprintf(relay, sizeof(relay), "%s%s%s", b->k.relay, b->k.tls ? " tls" : "",
				 hops_label(b->k.relay, b->k.hops));
			trow(&t, 6, b->k.workload, relay, b->k.protocol, metrics[m].title, cv, sd);
			rows++;
			if (nsd && sumsd / nsd < bestsd) {
				bestsd = sumsd / nsd;
				snprintf(best, sizeof(best), "%s (%s %s %s): its pairs vary %.1f%%",
					 metrics[m].title, b->k.workload, relay, b->k.protocol, bestsd);
			}
		}
	}
	if (rows) {
		printf("\nSteadiness across rounds: the CV of each build's runs, and the sd of the\n"
		       "log ratios new/base of the runs paired by round, in %% (what a paired test\n"
		       "must see through: the smaller, the fewer rounds a change needs)\n\n");
		table_print(&t);
		if (best[0])
			printf("\nSteadiest: %s\n", best);
	}
	table_free(&t);
}

void
auto_report(json_t *records)
{
	struct results r;

	if (!json_array_size(records))
		return;
	results_of(records, 1, &r);
	print_steadiness(&r);
	if (auto_on()) {
		int i, j, last = 0;

		/* The last round too (the loop looks before each round, and may end without another). */
		for (i = 0; i < r.ng; i++)
			for (j = 0; j < r.g[i].nruns; j++)
				last = r.g[i].runs[j].repeat > last ? (int)r.g[i].runs[j].repeat : last;
		take_comparisons(&r);
		decide(&r, last, nverdicts, 1);
		print_decisions();
	}
	results_free(&r);
}
