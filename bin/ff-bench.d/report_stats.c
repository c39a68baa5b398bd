/*
 * ff-bench report's statistics: each series' median with its interval,
 * and the changes between two files or two builds (change_of, the one
 * place that asks compare's statistics).
 */
#include "report.h"

#include <math.h>

/* The metrics drawn per case. */
static const int strip_metrics[] = { M_BITS, M_OPS, M_CPU_GB, M_CPU_KREQ };

/*
 * The median's interval from order statistics, which assumes no
 * distribution: [x(k), x(n+1-k)] with the largest k such that
 * P(B < k) <= 2.5% for B ~ Binomial(n, 1/2), covering the median with
 * probability 1 - 2 P(B < k), at least 95%. With 5 runs or fewer no k
 * reaches that: the interval is then the range, and its coverage
 * (1 - 2^(1-n): 94% for 5 runs, 75% for 3) says what it is worth.
 * `v` sorted.
 */
static void
median_interval(const double *v, int n, double *lo, double *hi, double *coverage)
{
	double below = 0, pj;
	int k = 0, j;

	for (j = 0; j < n; j++) {
		pj = exp(lgamma(n + 1) - lgamma(j + 1) - lgamma(n - j + 1) - n * M_LN2);
		if (below + pj > 0.025)
			break;
		below += pj;
		k = j + 1;
	}
	if (k == 0) {
		k = 1;
		below = pow(0.5, n);
	}
	*lo = v[k - 1];
	*hi = v[n - k];
	*coverage = fmax(0, 1 - 2 * below);
}

/* The values of metric m over the ok runs of series s. */
static int
series_values(const struct page *pg, int s, int m, double **out)
{
	double *v = calloc(pg->nr + 1, sizeof(*v));
	const struct run *ru;
	size_t i;
	int n = 0;

	if (!v)
		ff_die("out of memory");
	for (i = 0; i < pg->nr; i++) {
		if (pg->runs[i].s != s)
			continue;
		ru = &pg->res[pg->runs[i].file].g[pg->runs[i].group].runs[pg->runs[i].run];
		if (ru->status == 'o' && (ru->have & (1u << m)))
			v[n++] = ru->v[m];
	}
	*out = v;
	return n;
}

json_t *
series_stats(const struct page *pg, int s)
{
	json_t *o = json_object();
	double *v, lo, hi, cov;
	struct stats st;
	size_t i;
	int n, m;

	for (i = 0; i < FF_ARRAY_SIZE(strip_metrics); i++) {
		m = strip_metrics[i];
		if (!metric_applies(m, pg->cases[pg->series[s].c].k.workload))
			continue;
		n = series_values(pg, s, m, &v);
		if (n) {
			stats_of(v, n, &st);	/* sorts v */
			median_interval(v, n, &lo, &hi, &cov);
			json_object_set_new(o, metrics[m].key, json_pack("{s:i,s:f,s:f,s:f,s:f}",
				"n", n, "median", st.median, "lo", lo, "hi", hi, "coverage", cov));
		}
		free(v);
	}
	return o;
}

/*
 * The change of NEW against BASE for metric m, as compare judges it: the
 * Hodges-Lehmann shift (the median of every difference new - base) with
 * its 95% interval, in % of the base median, and the Mann-Whitney p; the
 * q and the verdict come once every change of the page is known
 * (all_changes). Beside it the medians and their change, in % of the base
 * median: when that and the shift point opposite ways, the runs are too
 * spread to tell (spread).
 */
struct change {
	double pct, lo, hi, p, base_median, new_median, median_pct;
	int too_few, spread;
};

static void
change_of(double *x, int nx, double *y, int ny, struct change *c)
{
	struct metric_change mc;	/* compare's figures (verdict.c) */
	struct stats b, nw;

	change_figures(x, nx, y, ny, &mc);
	c->pct = mc.chg;
	c->lo = mc.lo;
	c->hi = mc.hi;
	c->p = mc.t.p;
	c->too_few = mc.too_few;
	stats_of(x, nx, &b);
	c->median_pct = median_change_pct(x, nx, y, ny);
	c->base_median = b.median;
	stats_of(y, ny, &nw);
	c->new_median = nw.median;
	c->spread = signs_disagree(c->pct, c->median_pct);
}

json_t *
num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Every metric compare compares, for series `sb` (base) against `sn` (new). */
static void
changes_of(const struct page *pg, int sb, int sn, json_t *out)
{
	struct change ch;
	json_t *o;
	double *x, *y;
	int m, nx, ny;

	for (m = 0; m < M_NCMP; m++) {
		if (!metric_applies(m, pg->cases[pg->series[sb].c].k.workload))
			continue;
		nx = series_values(pg, sb, m, &x);
		ny = series_values(pg, sn, m, &y);
		if (nx && ny) {
			change_of(x, nx, y, ny, &ch);
			json_array_append_new(out, json_pack("{s:i,s:i,s:i,s:s,s:i,s:b,s:o,s:o,s:o,s:f,s:i,s:i,s:b}",
				"case", pg->series[sb].c, "base", sb, "new", sn,
				"metric", metrics[m].key, "m", m, "higher_better", metrics[m].higher_better,
				"pct", num_or_null(ch.pct), "lo", num_or_null(ch.lo), "hi", num_or_null(ch.hi),
				"p", ch.p, "n_base", nx, "n_new", ny, "too_few", ch.too_few));
			o = json_array_get(out, json_array_size(out) - 1);
			json_object_set_new(o, "base_median", json_real(ch.base_median));
			json_object_set_new(o, "new_median", json_real(ch.new_median));
			json_object_set_new(o, "median_pct", num_or_null(ch.median_pct));
			json_object_set_new(o, "too_spread", json_boolean(ch.spread));
		}
		free(x);
		free(y);
	}
}

/*
 * The changes: with two files, each series of the second against the same
 * series (relay or build) of the first; else, in each case with builds,
 * each build against the first build of its file.
 */
static json_t *
all_changes(const struct page *pg)
{
	json_t *out = json_array();
	size_t i, j;

	for (i = 0; i < pg->ns; i++) {
		const struct rseries *a = &pg->series[i];

		for (j = 0; j < pg->ns; j++) {
			const struct rseries *b = &pg->series[j];

			if (j == i || b->c != a->c || b->build != a->build)
				continue;
			if (pg->nfiles == 2 && a->file == 0 && b->file == 1 && !strcmp(a->name, b->name))
				changes_of(pg, i, j, out);
		}
	}
	if (pg->nfiles == 2 && json_array_size(out))
		return out;
	for (i = 0; i < pg->ns; i++) {
		const struct rseries *a = &pg->series[i];
		size_t first;

		if (!a->build)
			continue;
		/* The base: the first --build of the case (in its file). */
		for (first = i, j = 0; j < pg->ns; j++)
			if (pg->series[j].build && pg->series[j].c == a->c &&
			    pg->series[j].file == a->file && pg->series[j].rank < pg->series[first].rank)
				first = j;
		if (first != i)
			changes_of(pg, first, i, out);
	}
	return out;
}

/*
 * The q (Benjamini-Hochberg over the page's changes, as compare's over its
 * table) and the verdict of each change, by compare's rule.
 */
static void
judge_changes(json_t *changes)
{
	size_t i, n = json_array_size(changes), k = 0;
	double *p = ff_realloc(NULL, (n + 1) * sizeof(*p)), *q = ff_realloc(NULL, (n + 1) * sizeof(*q));
	json_t *ch;

	json_array_foreach(changes, i, ch)
		if (!json_is_true(json_object_get(ch, "too_few")))
			p[k++] = json_real_value(json_object_get(ch, "p"));
	bh_adjust(p, (int)k, q);
	k = 0;
	json_array_foreach(changes, i, ch) {
		int too_few = json_is_true(json_object_get(ch, "too_few"));
		double qv = too_few ? NAN : q[k++];

		json_object_set_new(ch, "q", num_or_null(qv));
		json_object_set_new(ch, "significant", json_boolean(!too_few && qv < ALPHA));
		json_object_set_new(ch, "verdict", json_string(verdict_of(
			(int)json_integer_value(json_object_get(ch, "m")), too_few, qv,
			ff_json_num(ch, "pct", NAN), ff_json_num(ch, "lo", NAN), ff_json_num(ch, "hi", NAN),
			THRESHOLD)));
		json_object_del(ch, "m");
	}
	free(p);
	free(q);
}

json_t *
page_changes(const struct page *pg)
{
	json_t *ch = all_changes(pg);

	judge_changes(ch);
	return ch;
}
