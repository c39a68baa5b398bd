/*
 * ff-bench's verdicts, in one place: the figures of a change of one metric
 * (NEW against BASE), the verdict they support, and what the --threshold
 * gate makes of each verdict. compare and report judge by these; a test of
 * another design (paired runs, more rounds) fills a verdict_in and asks
 * verdict_decide.
 */
#include "ff-bench.h"

#include <math.h>

/*
 * The Hodges-Lehmann shift of the logarithms, exponentiated: the change as
 * a ratio, its interval a ratio's too, rather than a shift of the values
 * divided by the base median as if that median were exact. Needs every
 * value > 0.
 */
static void
log_change(const double *x, int nx, const double *y, int ny, struct metric_change *c)
{
	double *lx = ff_realloc(NULL, (nx + 1) * sizeof(*lx)), *ly = ff_realloc(NULL, (ny + 1) * sizeof(*ly));
	struct shift ls;
	int i;

	for (i = 0; i < nx; i++)
		lx[i] = log(x[i]);
	for (i = 0; i < ny; i++)
		ly[i] = log(y[i]);
	hodges_lehmann(lx, nx, ly, ny, ALPHA, &ls);
	c->chg = expm1(ls.est) * 100;
	c->lo = isnan(ls.lo) ? NAN : expm1(ls.lo) * 100;
	c->hi = isnan(ls.hi) ? NAN : expm1(ls.hi) * 100;
	free(lx);
	free(ly);
}

void
change_figures(const double *x, int nx, const double *y, int ny, struct metric_change *c)
{
	double *sx = ff_realloc(NULL, (nx + 1) * sizeof(*sx)), *sy = ff_realloc(NULL, (ny + 1) * sizeof(*sy));
	int i;

	memset(c, 0, sizeof(*c));
	c->chg = c->lo = c->hi = c->delta_pct = NAN;
	c->too_few = nx < MIN_RUNS || ny < MIN_RUNS;
	memcpy(sx, x, nx * sizeof(*sx));
	memcpy(sy, y, ny * sizeof(*sy));
	stats_of(sx, nx, &c->base);	/* sorts */
	stats_of(sy, ny, &c->new);
	free(sx);
	free(sy);
	if (!nx || !ny)
		return;
	mann_whitney(x, nx, y, ny, &c->t);
	hodges_lehmann(x, nx, y, ny, ALPHA, &c->sh);
	for (i = 0; i < nx; i++)
		c->nonpositive |= !(x[i] > 0);
	for (i = 0; i < ny; i++)
		c->nonpositive |= !(y[i] > 0);
	if (c->nonpositive)
		return;
	c->delta_pct = (c->new.median - c->base.median) / c->base.median * 100;
	log_change(x, nx, y, ny, c);
}

static int
sign(double v)
{
	return v > 0 ? 1 : v < 0 ? -1 : 0;
}

enum gate
verdict_decide(const struct verdict_in *in, char *text, size_t n)
{
	double t = in->threshold;

	if (in->too_few)
		snprintf(text, n, "inconclusive: fewer than %d runs per side", MIN_RUNS);
	else if (in->nonpositive || isnan(in->chg))
		snprintf(text, n, "inconclusive: a value <= 0, no ratio to judge");
	else if (in->doubt)
		snprintf(text, n, "inconclusive: %s", in->doubt);
	else if (!isnan(in->delta_pct) && sign(in->delta_pct) * sign(in->chg) < 0)
		snprintf(text, n, "inconclusive: too spread to tell (the medians moved %+.1f%%, the shift %+.1f%%)",
			 in->delta_pct, in->chg);
	else if (isnan(in->lo) || isnan(in->hi))
		snprintf(text, n, "inconclusive: no %g%% interval with so few runs", (1 - ALPHA) * 100);
	else if (in->lo >= -t && in->hi <= t)
		snprintf(text, n, "no change");
	else if (in->lo > t || in->hi < -t) {
		if (in->q < ALPHA) {
			int better = (in->lo > 0) == metrics[in->m].higher_better;

			snprintf(text, n, "%s", better ? "better" : "worse");
			return better ? G_PASS : G_FAIL;
		}
		snprintf(text, n, "inconclusive: beyond %g%%, but not significant over the table (q %.2g)",
			 t, in->q);
	} else
		snprintf(text, n, "inconclusive: neither within nor beyond +-%g%%", t);
	return !strcmp(text, "no change") ? G_PASS : G_UNDECIDED;
}

/* The old interface, for report.c: no doubts, no medians' change. */
const char *
verdict_of(int m, int too_few, double q, double chg, double lo, double hi, double threshold)
{
	static char buf[256];
	struct verdict_in in = { m, too_few, 0, q, chg, lo, hi, NAN, NULL, threshold };

	verdict_decide(&in, buf, sizeof(buf));
	return buf;
}

/*
 * A case's runs, failed and ok, on each side: the failures of NEW beyond
 * BASE's rate fail the gate, whatever the successful runs say.
 */
int
failures_rose(int ok_b, int failed_b, int ok_n, int failed_n)
{
	if (!failed_n)
		return 0;
	if (!failed_b)
		return 1;
	/* failed_n / (ok_n + failed_n) > failed_b / (ok_b + failed_b), in whole numbers */
	return (long long)failed_n * (ok_b + failed_b) > (long long)failed_b * (ok_n + failed_n);
}

/* The exit status of the gate: 1 for anything that fails it, 3 for anything undecided, else 0. */
int
gate_exit(const struct gate_count *g)
{
	if (g->worse || g->failed || g->more_failures || g->only_base || g->missing_new)
		return 1;
	return g->undecided ? 3 : 0;
}

/* "1 worse verdict, 1 case failed in new, 2 undecided": what the gate counted. */
const char *
gate_str(const struct gate_count *g, double threshold, char *buf, size_t n)
{
	static const char *const one[] = {
		"worse verdict", "case failed in new", "case with more failures in new",
		"case only in base", "metric missing in new", "comparison undecided"
	}, *const many[] = {
		"worse verdicts", "cases failed in new", "cases with more failures in new",
		"cases only in base", "metrics missing in new", "comparisons undecided"
	};
	int count[6] = { g->worse, g->failed, g->more_failures, g->only_base, g->missing_new, g->undecided };
	size_t len;
	int i, any = 0;

	len = snprintf(buf, n, "the gate at %g%%: ", threshold);
	for (i = 0; i < 6 && len < n; i++)
		if (count[i]) {
			len += snprintf(buf + len, n - len, "%s%d %s", any++ ? ", " : "", count[i],
					count[i] == 1 ? one[i] : many[i]);
		}
	if (!any && len < n)
		len += snprintf(buf + len, n - len, "every comparison decided, none worse");
	if (len < n)
		snprintf(buf + len, n - len, " (exit %d)", gate_exit(g));
	return buf;
}
