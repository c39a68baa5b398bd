/*
 * ff-bench compare's rows: every metric of every case both sides have (and
 * every metric either side has), one table per metric with a geometric
 * mean per workload, the cases without a successful run on a side, the
 * cases on one side only, and what each of them means for the gate.
 */
#include "ff-bench.h"

#include <math.h>

struct cmp_row {
	const struct group *b, *n;
	int m;			/* -1: a case without a successful run on a side */
	struct metric_change c;
	int have_b, have_n;	/* the metric, on each side */
	double q;		/* p adjusted for the table; NAN: not tested */
	int tested, significant;
	const char *doubt;	/* the case's, or NULL */
	enum gate gate;
	char verdict[1024];
	const char *direction;	/* of the change, or NULL */
	const char *test;	/* the paired test (paired.c), or NULL: Mann-Whitney */
	int pairs;		/* its pairs */
};

/* The sweep's dimensions that differ among the compared cases: in their labels (compare_cases). */
static unsigned points;

/*
 * The runs of one interleaved bench pair up by round: then the paired test
 * of their log ratios (paired.c) replaces Mann-Whitney's p, change and
 * interval (an interval unbounded on a side is none).
 */
static void
paired_row(struct cmp_row *r)
{
	struct paired pc;

	if (!r->have_b || !r->have_n || r->c.nonpositive ||
	    !paired_change(r->b, r->n, r->m, decision_metric(r->b, r->n), ALPHA, &pc))
		return;
	r->test = pc.test;
	r->pairs = pc.n;
	r->c.t.p = pc.p;
	r->c.t.exact = pc.exact;
	r->c.chg = pct_of_log(pc.est);
	r->c.lo = isinf(pc.lo) || isinf(pc.hi) ? NAN : pct_of_log(pc.lo);
	r->c.hi = isnan(r->c.lo) ? NAN : pct_of_log(pc.hi);
	r->c.too_few = pc.n < MIN_RUNS;
	r->tested = !r->c.too_few;
	r->direction = pc.est == 0 || isnan(pc.est) ? NULL :
		       (pc.est > 0) == metrics[r->m].higher_better ? "better" : "worse";
}

/* The figures of one case and metric, before the table's q. */
static void
compare_row(const struct group *b, const struct group *n, int m, const char *doubt, struct cmp_row *r)
{
	double *x, *y;
	int nx = group_values(b, m, &x), ny = group_values(n, m, &y);

	memset(r, 0, sizeof(*r));
	r->b = b;
	r->n = n;
	r->m = m;
	r->doubt = doubt;
	r->have_b = nx > 0;
	r->have_n = ny > 0;
	change_figures(x, nx, y, ny, &r->c);
	free(x);
	free(y);
	r->q = NAN;
	r->tested = r->have_b && r->have_n && !r->c.too_few;
	/* The direction of the change is the shift's, not the medians'. */
	if (r->have_b && r->have_n && r->c.sh.est != 0 && !isnan(r->c.sh.est))
		r->direction = (r->c.sh.est > 0) == metrics[m].higher_better ? "better" : "worse";
	paired_row(r);
}

/* The verdict, once the table's q are known. */
static void
row_verdict(struct cmp_row *r)
{
	int ok_b = group_count(r->b, 'o'), ok_n = group_count(r->n, 'o');
	int fb = group_count(r->b, 'f'), fn = group_count(r->n, 'f');
	struct verdict_in in;

	r->significant = r->tested && r->q < ALPHA;
	if (!r->have_n) {
		snprintf(r->verdict, sizeof(r->verdict), "missing in new");
		r->gate = G_FAIL;
	} else if (!r->have_b) {
		snprintf(r->verdict, sizeof(r->verdict), "missing in base");
		r->gate = G_INFO;
	} else {
		/* Paired, the medians' spread is not the test's: no "too spread to tell". */
		in = (struct verdict_in){ r->m, r->c.too_few, r->c.nonpositive, r->q, r->c.chg, r->c.lo,
					  r->c.hi, r->test ? NAN : r->c.delta_pct, r->doubt, cmpopt.threshold };
		r->gate = verdict_decide(&in, r->verdict, sizeof(r->verdict));
		/* A rise in failures fails the case, whatever its successful runs say (worse stays worse). */
		if (r->gate != G_FAIL && failures_rose(ok_b, fb, ok_n, fn)) {
			snprintf(r->verdict, sizeof(r->verdict), "more failures in new");
			r->gate = G_FAIL;
		}
	}
}

static void
fmt_delta(double d, char *buf, size_t n)
{
	if (isnan(d))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%+.1f%%", d);
}

/* "-9.3% [-14.1, -4.2]": the change and its interval, in %. */
static void
fmt_change(const struct cmp_row *r, char *buf, size_t n)
{
	if (isnan(r->c.chg))
		snprintf(buf, n, "-");
	else if (isnan(r->c.lo))
		snprintf(buf, n, "%+.1f%% [no interval]", r->c.chg);
	else
		snprintf(buf, n, "%+.1f%% [%+.1f, %+.1f]", r->c.chg, r->c.lo, r->c.hi);
}

/* p and q with 2 significant digits: 0.04987 is 0.050, not 0.05 next to "better". */
static void
fmt_p(double p, char *buf, size_t n)
{
	if (isnan(p))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%#.2g", p);
}

static json_t *
num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static const char *
gate_name(enum gate g)
{
	return g == G_PASS ? "pass" : g == G_FAIL ? "fail" : g == G_UNDECIDED ? "undecided" : "none";
}

static void
emit_row_json(const struct cmp_row *r, const struct side *b, const struct side *n)
{
	json_t *ev = ff_event("comparison");
	int m = r->m, both = m >= 0 && r->have_b && r->have_n;

	key_json(ev, &r->b->k);
	json_object_set_new(ev, "base_build", b->label ? json_string(b->label) : json_null());
	json_object_set_new(ev, "new_build", n->label ? json_string(n->label) : json_null());
	json_object_set_new(ev, "metric", m < 0 ? json_null() : json_string(metrics[m].key));
	json_object_set_new(ev, "better", m < 0 ? json_null() :
			    json_string(metrics[m].higher_better ? "higher" : "lower"));
	json_object_set_new(ev, "n_base", json_integer(m < 0 ? group_count(r->b, 'o') : r->c.base.n));
	json_object_set_new(ev, "n_new", json_integer(m < 0 ? group_count(r->n, 'o') : r->c.new.n));
	json_object_set_new(ev, "failed_base", json_integer(group_count(r->b, 'f')));
	json_object_set_new(ev, "failed_new", json_integer(group_count(r->n, 'f')));
	if (m >= 0) {
		json_object_set_new(ev, "base_median", r->have_b ? num_or_null(r->c.base.median) : json_null());
		json_object_set_new(ev, "new_median", r->have_n ? num_or_null(r->c.new.median) : json_null());
		json_object_set_new(ev, "base_spread_pct", r->have_b ? num_or_null(r->c.base.spread_pct) : json_null());
		json_object_set_new(ev, "new_spread_pct", r->have_n ? num_or_null(r->c.new.spread_pct) : json_null());
		json_object_set_new(ev, "delta_pct", num_or_null(r->c.delta_pct));
		json_object_set_new(ev, "shift", both ? num_or_null(r->c.sh.est) : json_null());
		json_object_set_new(ev, "change_pct", num_or_null(r->c.chg));
		json_object_set_new(ev, "ci_low_pct", num_or_null(r->c.lo));
		json_object_set_new(ev, "ci_high_pct", num_or_null(r->c.hi));
		json_object_set_new(ev, "ci_method", !both ? json_null() :
				    json_string(r->c.sh.exact ? "exact" : "normal"));
		json_object_set_new(ev, "u", both ? json_real(r->c.t.u) : json_null());
		json_object_set_new(ev, "p", both ? json_real(r->c.t.p) : json_null());
		json_object_set_new(ev, "q", num_or_null(r->q));
		json_object_set_new(ev, "method", !both ? json_null() :
				    json_string(r->c.t.exact ? "exact" : "normal"));
		json_object_set_new(ev, "test", !both ? json_null() :
				    json_string(r->test ? r->test : "Mann-Whitney U"));
		json_object_set_new(ev, "significant", json_boolean(r->significant));
		json_object_set_new(ev, "too_few", json_boolean(r->c.too_few));
		json_object_set_new(ev, "direction", r->direction ? json_string(r->direction) : json_null());
		json_object_set_new(ev, "doubt", r->doubt ? ff_json_text(r->doubt) : json_null());
	}
	json_object_set_new(ev, "threshold_pct", json_real(cmpopt.threshold));
	json_object_set_new(ev, "verdict", ff_json_text(r->verdict));
	json_object_set_new(ev, "gate", json_string(gate_name(r->gate)));
	json_object_set_new(ev, "regression", json_boolean(!strcmp(r->verdict, "worse")));
	json_object_set_new(ev, "beyond_threshold", json_boolean(cmpopt.threshold_set && r->gate == G_FAIL));
	ff_emit(ev);
}

/* "(n=10+9, 1 failed in new)" */
static void
fmt_n(const struct cmp_row *r, char *buf, size_t n)
{
	int fb = group_count(r->b, 'f'), fn = group_count(r->n, 'f');
	int len = r->test ? snprintf(buf, n, "n=%d pairs", r->pairs) :
		  snprintf(buf, n, "n=%d+%d", r->c.base.n, r->c.new.n);

	if (fb && (size_t)len < n)
		len += snprintf(buf + len, n - len, ", %d failed in base", fb);
	if (fn && (size_t)len < n)
		snprintf(buf + len, n - len, ", %d failed in new", fn);
}

/*
 * The notes of a table: each reason a verdict is inconclusive, said once
 * under the table, the rows pointing at it: "inconclusive [1] (n=3+3)".
 */
struct notes {
	const char *why[64];
	int n;
};

static int
note_of(struct notes *nt, const char *why)
{
	int i;

	for (i = 0; i < nt->n && strcmp(nt->why[i], why); i++)
		;
	if (i == nt->n && nt->n < (int)FF_ARRAY_SIZE(nt->why))
		nt->why[nt->n++] = why;
	return i + 1;
}

/*
 * Per workload, the geometric means of the cases' medians (Base, New, and
 * their change) and of their changes (Change): what they are, not a
 * verdict; "too spread to tell" when the two disagree in sign.
 */
static void
geomean_rows(int m, const struct cmp_row *rows, int nrows, struct table *t, int md)
{
	char base[64], new[64], med[64], chg[64], rel[64];
	double lb, ln, lc;
	int i, j, k, dup;

	for (i = 0; i < nrows; i++) {
		for (dup = 0, j = 0; j < i && !dup; j++)
			dup = !strcmp(rows[j].b->k.workload, rows[i].b->k.workload);
		if (dup)
			continue;
		lb = ln = lc = 0;
		for (k = 0, j = i; j < nrows; j++) {
			const struct cmp_row *r = &rows[j];

			if (strcmp(r->b->k.workload, rows[i].b->k.workload) || !r->have_b || !r->have_n ||
			    r->c.nonpositive || isnan(r->c.chg))
				continue;
			lb += log(r->c.base.median);
			ln += log(r->c.new.median);
			lc += log1p(r->c.chg / 100);
			k++;
		}
		if (k < 2)
			continue;
		lb = exp(lb / k);
		ln = exp(ln / k);
		lc = expm1(lc / k) * 100;
		metrics[m].fmt(lb, base, sizeof(base));
		metrics[m].fmt(ln, new, sizeof(new));
		fmt_delta((ln - lb) / lb * 100, med, sizeof(med));
		fmt_delta(lc, chg, sizeof(chg));
		snprintf(rel, sizeof(rel), "%s of %d", md ? "*geomean*" : "geomean", k);
		trow(t, 10, rows[i].b->k.workload, rel, "", base, new, med, chg, "", "",
		     (ln - lb) * lc < 0 ? "geometric means, not a verdict: too spread to tell" :
		     "geometric means, not a verdict");
		if (cmpopt.json) {
			json_t *ev = ff_event("geomean");

			json_object_set_new(ev, "metric", json_string(metrics[m].key));
			json_object_set_new(ev, "workload", json_string(rows[i].b->k.workload));
			json_object_set_new(ev, "cases", json_integer(k));
			json_object_set_new(ev, "base", json_real(lb));
			json_object_set_new(ev, "new", json_real(ln));
			json_object_set_new(ev, "delta_pct", json_real((ln - lb) / lb * 100));
			json_object_set_new(ev, "change_pct", json_real(lc));
			ff_emit(ev);
		}
	}
}

/* One table per metric, as benchstat prints one per unit, with its geomeans. */
static void
compare_metric(int m, struct cmp_row *rows, int nrows, const struct side *bs,
	       const struct side *ns, int md)
{
	struct table t = { 10, "lllrrrrrrl", NULL, 0 };
	struct notes nt = { { NULL }, 0 };
	char base[128], new[128], med[64], change[128], p[32], q[32], verdict[1200], nb[96], relay[128];
	char wl[160];
	int i, strong;
	const char *pm = md ? "±" : "+/-";

	trow(&t, 10, "Workload", "Relay", "Protocol", "Base", "New", "Medians", "Change [95% CI]", "p", "q",
	     "Verdict");
	for (i = 0; i < nrows; i++) {
		struct cmp_row *r = &rows[i];

		if (cmpopt.json)
			emit_row_json(r, bs, ns);
		if (r->have_b)
			fmt_stats(&r->c.base, m, pm, base, sizeof(base));
		else
			snprintf(base, sizeof(base), "-");
		if (r->have_n)
			fmt_stats(&r->c.new, m, pm, new, sizeof(new));
		else
			snprintf(new, sizeof(new), "-");
		fmt_delta(r->c.delta_pct, med, sizeof(med));
		fmt_change(r, change, sizeof(change));
		fmt_p(r->have_b && r->have_n ? r->c.t.p : NAN, p, sizeof(p));
		fmt_p(r->q, q, sizeof(q));
		fmt_n(r, nb, sizeof(nb));
		strong = md && r->gate == G_FAIL;
		if (!strncmp(r->verdict, "inconclusive: ", 14))
			snprintf(verdict, sizeof(verdict), "inconclusive [%d] (%s)", note_of(&nt, r->verdict + 14), nb);
		else
			snprintf(verdict, sizeof(verdict), "%s%s%s (%s)", strong || (md && r->gate == G_PASS &&
				 strcmp(r->verdict, "no change")) ? "**" : "", r->verdict,
				 strong || (md && r->gate == G_PASS && strcmp(r->verdict, "no change")) ? "**" : "", nb);
		/* --tls, and a chain other than the relay's own: "nginx tls (4 hops)". */
		snprintf(relay, sizeof(relay), "%s%s%s", r->b->k.relay, r->b->k.tls ? " tls" : "",
			 hops_label(r->b->k.relay, r->b->k.hops));
		snprintf(wl, sizeof(wl), "%s%s", r->b->k.workload, point_label(&r->b->k, points));
		trow(&t, 10, wl, relay, r->b->k.protocol, base, new, med, change, p, q, verdict);
	}
	geomean_rows(m, rows, nrows, &t, md);
	if (!cmpopt.json) {
		printf(md ? "\n#### %s (%s is better)\n\n" : "\n%s (%s is better)\n\n", metrics[m].title,
		       metrics[m].higher_better ? "higher" : "lower");
		if (md)
			table_print_markdown(&t);
		else
			table_print(&t);
		if (nt.n)
			printf("\n");
		for (i = 0; i < nt.n; i++)
			printf("%s[%d] inconclusive: %s\n", md ? "- " : "  ", i + 1, nt.why[i]);
	}
	table_free(&t);
}

/* The reason of the last failed run of a case, or NULL. */
static const char *
last_reason(const struct group *g)
{
	const char *why = NULL;
	int i;

	for (i = 0; i < g->nruns; i++)
		if (g->runs[i].status == 'f')
			why = g->runs[i].reason ? g->runs[i].reason : "no reason given";
	return why;
}

/* The reason of the last skipped run of a case, or NULL. */
static const char *
skip_reason(const struct group *g)
{
	const char *why = NULL;
	int i;

	for (i = 0; i < g->nruns; i++)
		if (g->runs[i].status == 's')
			why = g->runs[i].reason ? g->runs[i].reason : "no reason given";
	return why;
}

/* A case with no successful run on a side: its row and what the gate makes of it. */
static void
case_row(const struct group *b, const struct group *n, struct cmp_row *r)
{
	int ok_b = group_count(b, 'o'), ok_n = group_count(n, 'o');

	memset(r, 0, sizeof(*r));
	r->b = b;
	r->n = n;
	r->m = -1;
	r->q = NAN;
	if (!ok_n && !ok_b) {
		snprintf(r->verdict, sizeof(r->verdict), "%s", group_count(n, 'f') || group_count(b, 'f') ?
			 "failed on both sides" : "no run on either side");
		r->gate = G_UNDECIDED;
	} else if (!ok_n) {
		snprintf(r->verdict, sizeof(r->verdict), "%s", group_count(n, 'f') ? "failed in new" : "no run in new");
		r->gate = G_FAIL;
	} else {
		snprintf(r->verdict, sizeof(r->verdict), "%s", group_count(b, 'f') ? "failed in base" : "no run in base");
		r->gate = G_INFO;
	}
}

/* The cases with no successful run on a side: rows of their own. */
static void
print_failed_cases(struct cmp_row *rows, int nrows, const struct side *bs, const struct side *ns,
		   int md)
{
	struct table t = { 6, "llllll", NULL, 0 };
	char b[96], n[96], verdict[4096], wl[160];
	int i;

	trow(&t, 6, "Workload", "Relay", "Protocol", "Base", "New", "Verdict");
	for (i = 0; i < nrows; i++) {
		const struct cmp_row *r = &rows[i];
		const struct group *g = strstr(r->verdict, " new") ? r->n : r->b;
		const char *why = last_reason(g) ? last_reason(g) : skip_reason(g);

		if (cmpopt.json)
			emit_row_json(r, bs, ns);
		snprintf(b, sizeof(b), "%d ok, %d failed", group_count(r->b, 'o'), group_count(r->b, 'f'));
		snprintf(n, sizeof(n), "%d ok, %d failed", group_count(r->n, 'o'), group_count(r->n, 'f'));
		snprintf(verdict, sizeof(verdict), "%s%s%s%s%s", md ? "**" : "", r->verdict,
			 md ? "**" : "", why ? ": " : "", why ? why : "");
		snprintf(wl, sizeof(wl), "%s%s", r->b->k.workload, point_label(&r->b->k, points));
		trow(&t, 6, wl, r->b->k.relay, r->b->k.protocol, b, n, verdict);
	}
	if (!cmpopt.json && t.nrows > 1) {
		printf(md ? "\n#### Failed cases (no successful run on a side)\n\n" :
		       "\nFailed cases (no successful run on a side)\n\n");
		if (md)
			table_print_markdown(&t);
		else
			table_print(&t);
	}
	table_free(&t);
}

/* "builtin nginx tcp" */
static const char *
case_str(const struct group *g, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s %s%s%s %s", g->k.workload, point_label(&g->k, points),
		 g->k.relay, g->k.tls ? " tls" : "", hops_label(g->k.relay, g->k.hops), g->k.protocol);
	return buf;
}

/* Each thing that fails the gate, named on stderr; the counts into *gate. */
static void
tell_gate(const struct cmp_row *rows, int nrows, const struct cmp_row *failed, int nfail,
	  struct gate_count *gate)
{
	char change[128], pb[32], qb[32], cs[512];
	const struct cmp_row *r;
	const struct group *last = NULL;
	int i;

	for (i = 0; i < nrows; i++) {
		r = &rows[i];
		if (r->gate == G_UNDECIDED)
			gate->undecided++;
		if (r->gate != G_FAIL)
			continue;
		case_str(r->b, cs, sizeof(cs));
		if (!strcmp(r->verdict, "worse")) {
			gate->worse++;
			fmt_change(r, change, sizeof(change));
			fmt_p(r->c.t.p, pb, sizeof(pb));
			fmt_p(r->q, qb, sizeof(qb));
			if (cmpopt.threshold_set)
				ff_warn("regression beyond %g%%: %s %s %s (p=%s q=%s)", cmpopt.threshold,
					cs, metrics[r->m].key, change, pb, qb);
		} else if (!strcmp(r->verdict, "missing in new")) {
			gate->missing_new++;
			if (cmpopt.threshold_set)
				ff_warn("missing in new: %s %s (null or absent in every successful run of new, %d in base)",
					cs, metrics[r->m].key, r->c.base.n);
		}
		if (r->b != last && failures_rose(group_count(r->b, 'o'), group_count(r->b, 'f'),
						  group_count(r->n, 'o'), group_count(r->n, 'f'))) {
			last = r->b;	/* once per case */
			gate->more_failures++;
			if (cmpopt.threshold_set)
				ff_warn("more failures in new: %s (%d of %d runs failed, %d of %d in base: %s)", cs,
					group_count(r->n, 'f'), group_count(r->n, 'f') + group_count(r->n, 'o'),
					group_count(r->b, 'f'), group_count(r->b, 'f') + group_count(r->b, 'o'),
					last_reason(r->n));
		}
	}
	for (i = 0; i < nfail; i++) {
		r = &failed[i];
		gate->undecided += r->gate == G_UNDECIDED;
		if (r->gate != G_FAIL)
			continue;
		gate->failed++;
		if (!cmpopt.threshold_set)
			continue;
		case_str(r->b, cs, sizeof(cs));
		if (group_count(r->n, 'f'))
			ff_warn("failed in new: %s (%d of %d runs failed: %s)", cs, group_count(r->n, 'f'),
				r->n->nruns, last_reason(r->n));
		else
			ff_warn("no run in new: %s (%d skipped%s%s)", cs, group_count(r->n, 's'),
				skip_reason(r->n) ? ": " : "", skip_reason(r->n) ? skip_reason(r->n) : "");
	}
}

/* The cases of side s that o does not have; counted into *only. */
static void
print_unmatched(const char *side, const struct side *s, const struct side *o, int md, int *only)
{
	const struct group *g = s->r->g;
	char cs[512];
	int i, j;
	json_t *ev;

	for (i = 0; i < s->r->ng; i++) {
		if (!same_label(g[i].k.build, s->label))
			continue;
		for (j = 0; j < o->r->ng && !(same_label(o->r->g[j].k.build, o->label) &&
					     case_eq(&g[i].k, &o->r->g[j].k)); j++)
			;
		if (j < o->r->ng)
			continue;
		++*only;
		if (cmpopt.json) {
			ev = ff_event("unmatched");
			json_object_set_new(ev, "side", json_string(side));
			key_json(ev, &g[i].k);
			json_object_set_new(ev, "gate", json_string(!strcmp(side, "base") ? "fail" : "none"));
			ff_emit(ev);
		} else
			printf("%sonly in %s: %s%s %s%s%s %s (jobs %ld, CPU limit %ld, duration %g s)\n",
			       md ? "- " : "  ", side, g[i].k.workload, point_label(&g[i].k, points),
			       g[i].k.relay, g[i].k.tls ? " tls" : "",
			       hops_label(g[i].k.relay, g[i].k.hops), g[i].k.protocol,
			       g[i].k.jobs, g[i].k.cpu_limit, g[i].k.duration);
		if (cmpopt.threshold_set && !strcmp(side, "base"))
			ff_warn("only in base: %s (new has no run of it)", case_str(&g[i], cs, sizeof(cs)));
	}
}

/* "Cases not in both", and each; a case only in base counts against the gate. */
void
compare_unmatched(const struct side *bs, const struct side *ns, int md, int matched,
		  struct gate_count *gate)
{
	int nb = 0, nn = 0, i, only_new = 0;

	for (i = 0; i < bs->r->ng; i++)
		nb += same_label(bs->r->g[i].k.build, bs->label);
	for (i = 0; i < ns->r->ng; i++)
		nn += same_label(ns->r->g[i].k.build, ns->label);
	if (!cmpopt.json && matched && (matched < nb || matched < nn))
		printf("\nCases not in both:\n%s", md ? "\n" : "");
	print_unmatched("base", bs, ns, md, &gate->only_base);
	print_unmatched("new", ns, bs, md, &only_new);
}

/* The header of the tables: what each figure is, and the rule of the verdicts. */
static void
print_method(int ncmp, int ntested)
{
	if (cmpopt.json) {
		json_t *ev = ff_event("method");

		json_object_set_new(ev, "test", json_string("Mann-Whitney U, two-sided"));
		json_object_set_new(ev, "change", json_string("Hodges-Lehmann shift of the logarithms, as a % change"));
		json_object_set_new(ev, "medians", json_string("the change of the medians, % of the base median"));
		json_object_set_new(ev, "confidence", json_real(1 - ALPHA));
		json_object_set_new(ev, "adjustment", json_string("Benjamini-Hochberg"));
		json_object_set_new(ev, "false_discovery_rate", json_real(ALPHA));
		json_object_set_new(ev, "comparisons", json_integer(ncmp));
		json_object_set_new(ev, "tested", json_integer(ntested));
		json_object_set_new(ev, "threshold_pct", json_real(cmpopt.threshold));
		json_object_set_new(ev, "min_runs", json_integer(MIN_RUNS));
		ff_emit(ev);
		return;
	}
	printf("\nMedians: the change of the medians. Change: the Hodges-Lehmann shift of the\n"
	       "logarithms of new against base, as a percent change, with its 95%% confidence\n"
	       "interval. p: the two-sided Mann-Whitney U test; ");
	if (ntested)
		printf("q: p adjusted for the %d\n"
		       "comparison%s with at least %d runs a side, of the %d of these tables\n"
		       "(Benjamini-Hochberg, false discovery rate %g). ",
		       ntested, ntested == 1 ? "" : "s", MIN_RUNS, ncmp, ALPHA);
	else
		printf("q: none, as none of the %d\n"
		       "comparison%s of these tables has %d runs a side. ", ncmp, ncmp == 1 ? "" : "s", MIN_RUNS);
	printf("better or worse when q < %g\n"
	       "and the whole interval lies beyond %g%%; no change when it lies within +-%g%%;\n"
	       "otherwise inconclusive, and why under the table.\n",
	       ALPHA, cmpopt.threshold, cmpopt.threshold);
}

/* q for every tested row: Benjamini-Hochberg over them. */
static int
adjust_rows(struct cmp_row *rows, int nrows)
{
	double *p = ff_realloc(NULL, (nrows + 1) * sizeof(*p)), *q = ff_realloc(NULL, (nrows + 1) * sizeof(*q));
	int i, k, ntested = 0;

	for (i = 0; i < nrows; i++)
		if (rows[i].tested)
			p[ntested++] = rows[i].c.t.p;
	bh_adjust(p, ntested, q);
	for (i = 0, k = 0; i < nrows; i++) {
		if (rows[i].tested)
			rows[i].q = q[k++];
		row_verdict(&rows[i]);
	}
	free(p);
	free(q);
	return ntested;
}

/* A case's doubts: a `doubt` event, and the words its rows' verdicts carry. */
static char *
doubts_of(const struct group *b, const struct group *n, const struct side *bs, const struct side *ns)
{
	char *d = case_doubts(b, n, ns->own_file);
	json_t *ev;

	if (d && cmpopt.json) {
		ev = ff_event("doubt");
		key_json(ev, &b->k);
		json_object_set_new(ev, "base_build", bs->label ? json_string(bs->label) : json_null());
		json_object_set_new(ev, "new_build", ns->label ? json_string(ns->label) : json_null());
		json_object_set_new(ev, "doubt", ff_json_text(d));
		ff_emit(ev);
	}
	return d;
}

/*
 * Every metric of the cases both sides have, one table per metric, and
 * the cases that failed on a side; the gate's counts into *gate.
 * matched: the cases in both.
 */
void
compare_cases(const struct side *bs, const struct side *ns, int md, int *matched,
	      struct gate_count *gate)
{
	const struct results *base = bs->r, *new = ns->r;
	int i, j, m, nrows = 0, nfail = 0, ntested, first, k, ndoubt = 0;
	struct cmp_row *rows = ff_realloc(NULL, ((size_t)base->ng * M_NCMP + 1) * sizeof(*rows));
	struct cmp_row *failed = ff_realloc(NULL, (base->ng + 1) * sizeof(*failed));
	char **doubts = ff_realloc(NULL, (base->ng + 1) * sizeof(*doubts));

	*matched = 0;
	points = sweep_dims(base->g, base->ng) | sweep_dims(new->g, new->ng);
	/* Every row first: q needs every p of the table. */
	for (i = 0; i < base->ng; i++) {
		const struct group *b = &base->g[i], *n = NULL;

		if (!same_label(b->k.build, bs->label))
			continue;
		for (j = 0; j < new->ng && !n; j++)
			if (same_label(new->g[j].k.build, ns->label) && case_eq(&b->k, &new->g[j].k))
				n = &new->g[j];
		if (!n)
			continue;
		++*matched;
		if (!group_count(b, 'o') || !group_count(n, 'o')) {
			case_row(b, n, &failed[nfail++]);
			continue;
		}
		doubts[ndoubt] = doubts_of(b, n, bs, ns);
		/* Every metric either side has: one that vanished is a row too. */
		for (m = 0; m < M_NCMP; m++)
			if (group_has(b, m) || group_has(n, m))
				compare_row(b, n, m, doubts[ndoubt], &rows[nrows++]);
		ndoubt++;
	}
	ntested = adjust_rows(rows, nrows);
	print_method(nrows, ntested);
	for (i = 0; i < nrows && !rows[i].test; i++)
		;
	if (i < nrows && !cmpopt.json)
		printf("Paired (n=N pairs): the runs of each round of one interleaved bench pair up;\n"
		       "p and the change come from the log ratios new/base of the pairs: %s.\n",
		       strstr(rows[i].test, "sequence") ? "the anytime-\nvalid confidence "
		       "sequence of bench --repeat auto" : "the Wilcoxon\nsigned-rank test, the "
		       "Hodges-Lehmann estimate and Tukey's interval");
	for (m = 0; m < M_NCMP; m++) {
		for (i = 0, first = -1, k = 0; i < nrows; i++)
			if (rows[i].m == m) {
				if (first < 0)
					first = i;
				k++;
			}
		if (k) {
			/* A metric's rows are not adjacent: gather them in case order. */
			struct cmp_row *mr = ff_realloc(NULL, k * sizeof(*mr));

			for (i = first, j = 0; i < nrows; i++)
				if (rows[i].m == m)
					mr[j++] = rows[i];
			compare_metric(m, mr, k, bs, ns, md);
			free(mr);
		}
	}
	print_failed_cases(failed, nfail, bs, ns, md);
	tell_gate(rows, nrows, failed, nfail, gate);
	for (i = 0; i < ndoubt; i++)
		free(doubts[i]);
	free(doubts);
	free(rows);
	free(failed);
}
