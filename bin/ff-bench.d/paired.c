/*
 * ff-bench's paired statistics: the runs of two builds in one round of an
 * interleaved bench are a pair, and the log of their ratio, new over base,
 * is free of whatever moved the machine between rounds. Pure functions of
 * their arguments, but for paired_change, which finds the pairs of two
 * groups (t/unit/power-sim.c checks them and simulates them).
 *
 * Why these tests. Within a round, bench shuffles the order of the builds,
 * so when the two builds are the same program (an A/A bench), which of a
 * pair's runs is labelled "new" is a coin toss made apart from the machine:
 * the log ratio is then symmetric about 0 whatever the noise is (heavy
 * tails, load episodes, drift). Both tests below rest on that symmetry
 * alone, not on normality, so their false-positive rate under A/A holds
 * exactly, not approximately:
 *
 * - fixed rounds (bench --repeat N): the Wilcoxon signed-rank test, its p
 *   from the exact sign-flip distribution of the midranks (ties and all),
 *   and the Hodges-Lehmann estimate (the median of the Walsh averages) with
 *   Tukey's interval (Hollander and Wolfe, Nonparametric Statistical
 *   Methods, 3rd ed., sections 3.1-3.3). A t interval on the log ratios
 *   would assume normality, which one loaded run in a pair breaks.
 * - rounds added until decided (bench --repeat auto): a confidence
 *   sequence, valid at every round at once, so that looking after each
 *   round and stopping when decided does not inflate the error (Ville's
 *   inequality), at a fifth of alpha; and for what it leaves undecided
 *   when the budget ends, the signed-rank test at the rest. See
 *   conf_seq and seq_analysis.
 */
#include "ff-bench.h"

#include <math.h>

#define CS_SCALE_PAIRS 3	/* the confidence sequence's scale: the first pairs */
#define CS_PRIOR 4.0		/* its prior, in pairs of that scale (see conf_seq) */
#define WALSH_MAX 2000		/* pairs, beyond which Walsh averages are too many */
#define SEQ_CS_SHARE 0.2	/* of alpha, the sequence's (seq_analysis); the rest the end's test */

/*
 * The exact sign-flip distribution of the sum of w[i] (whole numbers) over
 * a random subset, each in it with probability 1/2: P(sum = s) for s = 0 ..
 * *total (malloc'd).
 */
static double *
flip_dist(const int *w, int n, long *total)
{
	double *p;
	long s;
	int i;

	for (*total = 0, i = 0; i < n; i++)
		*total += w[i];
	p = calloc(*total + 1, sizeof(*p));
	if (!p)
		ff_die("out of memory");
	p[0] = 1;
	for (i = 0; i < n; i++)
		for (s = *total; s >= 0; s--)
			p[s] = p[s] / 2 + (s >= w[i] ? p[s - w[i]] / 2 : 0);
	return p;
}

struct mag {
	double a;
	int pos;
};

static int
cmp_mag(const void *x, const void *y)
{
	return ff_cmp_double(&((const struct mag *)x)->a, &((const struct mag *)y)->a);
}

/*
 * The two-sided p of the signed-rank test of d[0..n-1] against 0: zeros
 * left out (Wilcoxon's way), ranks of |d| with midranks for ties (doubled,
 * so they are whole), their sum over the positive d against its exact
 * distribution when every sign is a coin toss; the normal approximation
 * with the tie correction beyond 300 pairs.
 */
static double
signed_rank_p(const double *d, int n, int *exact)
{
	struct mag *o = malloc((n + 1) * sizeof(*o));
	int *w = malloc((n + 1) * sizeof(*w)), k = 0, i, j, l;
	long tplus = 0, total = 0;
	double below, above, var = 0, z;

	if (!o || !w)
		ff_die("out of memory");
	for (i = 0; i < n; i++)
		if (d[i] != 0)
			o[k++] = (struct mag){ fabs(d[i]), d[i] > 0 };
	qsort(o, k, sizeof(*o), cmp_mag);
	for (i = 0; i < k; i = j) {
		for (j = i + 1; j < k && o[j].a == o[i].a; j++)
			;
		for (l = i; l < j; l++) {
			w[l] = i + 1 + j;	/* twice the midrank of positions i+1 .. j */
			tplus += o[l].pos ? w[l] : 0;
			total += w[l];
			var += (double)w[l] * w[l] / 4;
		}
	}
	*exact = k <= 300;
	if (!k)
		below = above = 1;
	else if (*exact) {
		double *p = flip_dist(w, k, &total);
		long t;

		for (below = above = 0, t = 0; t <= total; t++) {
			below += t <= tplus ? p[t] : 0;
			above += t >= tplus ? p[t] : 0;
		}
		free(p);
	} else {
		/* Each doubled rank w is in the sum with probability 1/2: mean total/2, variance sum w^2/4. */
		z = (fabs(tplus - total / 2.0) - 1) / sqrt(var);
		below = above = z <= 0 ? 0.5 : erfc(z / M_SQRT2) / 2;
	}
	free(o);
	free(w);
	return fmin(1.0, 2 * fmin(below, above));
}

/*
 * Tukey's interval from the Walsh averages: leave out k at each end, k the
 * largest with P(T <= k - 1) <= alpha / 2 for the signed-rank sum T of n
 * pairs without ties; 0 when none (fewer than 6 pairs at 95%).
 */
static long
walsh_k(int n, double alpha)
{
	int *w = malloc((n + 1) * sizeof(*w)), i;
	double below = 0, *p;
	long k, total;

	if (!w)
		ff_die("out of memory");
	for (i = 0; i < n; i++)
		w[i] = i + 1;
	p = flip_dist(w, n, &total);
	/* P(T <= t) rises with t: the first t where it passes alpha / 2 is k. */
	for (k = 0; k <= total && (below += p[k]) <= alpha / 2; k++)
		;
	free(p);
	free(w);
	return k;
}

void
signed_rank(const double *d, int n, double alpha, struct paired *r)
{
	long nw = (long)n * (n + 1) / 2, k, i, j, l = 0;
	double *wa;

	r->n = n;
	r->est = r->lo = r->hi = NAN;
	r->p = 1;
	r->test = "Wilcoxon signed-rank";
	if (!n)
		return;
	r->p = signed_rank_p(d, n, &r->exact);
	if (n > WALSH_MAX) {
		r->test = "Wilcoxon signed-rank (no interval past 2000 pairs)";
		return;
	}
	wa = malloc(nw * sizeof(*wa));
	if (!wa)
		ff_die("out of memory");
	for (i = 0; i < n; i++)
		for (j = i; j < n; j++)
			wa[l++] = (d[i] + d[j]) / 2;
	qsort(wa, nw, sizeof(*wa), ff_cmp_double);
	r->est = nw % 2 ? wa[nw / 2] : (wa[nw / 2 - 1] + wa[nw / 2]) / 2;
	k = n <= 300 ? walsh_k(n, alpha) :
	    (long)floor(nw / 2.0 - upper_quantile(alpha / 2) * sqrt(n * (n + 1.0) * (2 * n + 1) / 24));
	if (k >= 1 && k <= nw - k + 1) {
		r->lo = wa[k - 1];
		r->hi = wa[nw - k];
	}
	free(wa);
}

/*
 * The confidence sequence. For pairs whose log ratios d_i are symmetric
 * about theta given the past (the A/A coin toss above; a shift theta of
 * every pair's log ratio otherwise), with y_i = d_i - theta,
 * S_n = sum y_i and V_n = sum y_i^2,
 *
 *   exp(lambda S_n - lambda^2 V_n / 2)
 *
 * is a nonnegative supermartingale for each lambda (de la Pena, "A general
 * class of exponential inequalities for martingales and ratios", Annals of
 * Probability 27(1), 1999, Theorem 6.1: conditionally symmetric
 * increments); so is its mixture over lambda ~ N(0, 1/c) (Robbins's method
 * of mixtures; Howard, Ramdas, McAuliffe and Sekhon, "Time-uniform,
 * nonparametric, nonasymptotic confidence sequences", Annals of
 * Statistics 49(2), 2021, section 3):
 *
 *   M_n(theta) = sqrt(c / (V_n + c)) exp(S_n^2 / (2 (V_n + c)))
 *
 * and by Ville's inequality P(M_n(theta) >= 1/alpha for some n) <= alpha.
 * So {theta: M_n(theta) < 1/alpha} covers the true theta at every round at
 * once with probability >= 1 - alpha, however the rounds are stopped.
 *
 * c sets the scale of the mixture: CS_PRIOR times the mean y_i^2 of the
 * first CS_SCALE_PAIRS pairs. Their magnitudes say nothing of their signs
 * under the symmetry, so they may set it (the supermartingale holds for the
 * filtration that knows them from the start), and the sequence needs no
 * guess of the metric's spread. Before that many pairs there is none.
 *
 * The p at round n is min(1, 1 / max over rounds j <= n of M_j(0)): at
 * most alpha at any stopping round with probability <= alpha.
 */

/* log M_n(theta) from the sums: of the d (s1, s2) and of the first CS_SCALE_PAIRS (q1, q2). */
static double
log_m(int n, double s1, double s2, double q1, double q2, double theta)
{
	double s = s1 - n * theta, v = s2 - 2 * theta * s1 + n * theta * theta;
	double c = CS_PRIOR * (q2 - 2 * theta * q1 + CS_SCALE_PAIRS * theta * theta) / CS_SCALE_PAIRS;

	if (v < 0)
		v = 0;
	if (c <= 0)
		return 0;	/* every pair of the scale at theta: nothing to tell */
	return 0.5 * log(c / (v + c)) + s * s / (2 * (v + c));
}

/*
 * The edge of the sequence on one side (dir +1 or -1) of the mean: the
 * farthest theta still in it, scanned out to e^5 (a ratio of 148) and then
 * bisected; INFINITY (signed) when it reaches that far. Taking the farthest
 * makes it the hull of the set, an interval that holds all of it.
 */
static double
cs_edge(int n, double s1, double s2, double q1, double q2, double mean, int dir, double lim)
{
	double u, last_in = 0, out = NAN, a, b, mid;
	int i;

	for (i = 0; i <= 600; i++) {
		u = 1e-7 * pow(5e7, i / 600.0);
		if (log_m(n, s1, s2, q1, q2, mean + dir * u) < lim)
			last_in = u, out = NAN;
		else if (isnan(out))
			out = u;
	}
	if (isnan(out))
		return dir * INFINITY;
	for (a = last_in, b = out, i = 0; i < 60; i++) {
		mid = (a + b) / 2;
		if (log_m(n, s1, s2, q1, q2, mean + dir * mid) < lim)
			a = mid;
		else
			b = mid;
	}
	return mean + dir * a;
}

void
conf_seq(const double *d, int n, double alpha, struct paired *r)
{
	double s1 = 0, s2 = 0, q1 = 0, q2 = 0, best = 0, lim = log(1 / alpha);
	int i;

	r->n = n;
	r->est = r->lo = r->hi = NAN;
	r->p = 1;
	r->exact = 1;
	r->test = "confidence sequence (sign-symmetric normal mixture)";
	for (i = 0; i < n; i++) {
		s1 += d[i];
		s2 += d[i] * d[i];
		if (i < CS_SCALE_PAIRS) {
			q1 += d[i];
			q2 += d[i] * d[i];
		}
		if (i + 1 >= CS_SCALE_PAIRS)
			best = fmax(best, log_m(i + 1, s1, s2, q1, q2, 0));
	}
	if (n < CS_SCALE_PAIRS)
		return;
	r->p = fmin(1.0, exp(-best));
	r->est = s1 / n;
	r->lo = cs_edge(n, s1, s2, q1, q2, r->est, -1, lim);
	r->hi = cs_edge(n, s1, s2, q1, q2, r->est, +1, lim);
}

int
paired_decision(const struct paired *p, double thr)
{
	if (p->lo > 0 || p->hi < 0)
		return PAIRED_CHANGED;
	if (p->lo > -thr && p->hi < thr)
		return PAIRED_EQUIVALENT;
	return PAIRED_UNDECIDED;
}

/* Does the sequence of d[0..k-1] decide at some round k <= n (paired_decision)? */
int
cs_ever_decided(const double *d, int n, double alpha, double thr)
{
	struct paired c;
	int k;

	for (k = CS_SCALE_PAIRS; k <= n; k++) {
		conf_seq(d, k, alpha * SEQ_CS_SHARE, &c);
		if (paired_decision(&c, thr) != PAIRED_UNDECIDED)
			return 1;
	}
	return 0;
}

/*
 * The analysis of an adaptive bench (--repeat auto), whose rounds stop
 * when its sequence decides or the budget ends. Alpha is split: the
 * confidence sequence gets SEQ_CS_SHARE of it, looked at every round; the
 * signed-rank test of every pair the rest, once, at the end (`final`),
 * and only for a case whose sequence never decided on the way (the bench
 * stops a case on its decision metric: cs_ever_decided of that metric's
 * pairs). That case's rounds ran on to the budget's end whatever its
 * pairs said, so the test's n is fixed apart from their signs, and the
 * test keeps its level. The chance of a wrong call is then at most the
 * sequence's plus the test's (a union bound), alpha in all; the p is
 * min(p_seq / share, p_test / (1 - share)), and the interval the two
 * intervals' overlap. A continuous sequence pays for its every look: at
 * 130 rounds of pairs varying 10%, it finds a 5% change 84% of the time,
 * the split 97% (t/unit/power-sim).
 */
void
seq_analysis(const double *d, int n, double alpha, int final, struct paired *r)
{
	struct paired w;

	conf_seq(d, n, alpha * SEQ_CS_SHARE, r);
	r->p = fmin(1.0, r->p / SEQ_CS_SHARE);
	if (!final || n < CS_SCALE_PAIRS)
		return;
	signed_rank(d, n, alpha * (1 - SEQ_CS_SHARE), &w);
	r->test = "confidence sequence, then Wilcoxon signed-rank at the budget's end";
	r->p = fmin(r->p, fmin(1.0, w.p / (1 - SEQ_CS_SHARE)));
	r->exact = w.exact;
	r->est = w.est;
	/* The overlap; were they apart (one of them missed), the sequence's alone. */
	if (fmax(r->lo, w.lo) <= fmin(r->hi, w.hi)) {
		r->lo = fmax(r->lo, w.lo);
		r->hi = fmin(r->hi, w.hi);
	}
}

/*
 * The pairs of two groups for metric m: the ok runs with the same bench
 * (seed) and round (repeat), one on each side, their log ratios new/base
 * into d in round order (malloc'd). Returns how many; *lone counts the ok
 * runs without a partner (its run failed, or another bench's). Values that
 * are not positive have no log: *lone counts them too.
 */
int
pair_runs(const struct group *b, const struct group *n, int m, double **d, int *lone, int *seq)
{
	const struct run *x, *y;
	long *round = calloc(b->nruns + 1, sizeof(*round));
	double *out = calloc(b->nruns + 1, sizeof(*out)), t;
	int np = 0, i, j, k, hits, okb = 0, okn = 0;

	if (!round || !out)
		ff_die("out of memory");
	*seq = 0;
	for (i = 0; i < n->nruns; i++)
		okn += n->runs[i].status == 'o' && (n->runs[i].have & (1u << m));
	for (i = 0; i < b->nruns; i++) {
		x = &b->runs[i];
		if (x->status != 'o' || !(x->have & (1u << m)))
			continue;
		okb++;
		if (x->seed < 0)
			continue;
		for (j = 0, hits = 0, y = NULL; j < n->nruns; j++)
			if (n->runs[j].seed == x->seed && n->runs[j].repeat == x->repeat &&
			    n->runs[j].status == 'o' && (n->runs[j].have & (1u << m)))
				y = &n->runs[j], hits++;
		for (j = 0; j < b->nruns; j++)
			hits += j != i && b->runs[j].seed == x->seed && b->runs[j].repeat == x->repeat;
		if (hits != 1 || !y || x->v[m] <= 0 || y->v[m] <= 0)
			continue;	/* no partner, or two: no pair */
		*seq |= x->sequential || y->sequential;
		/* In round order, as the sequence saw them. */
		t = log(y->v[m] / x->v[m]);
		for (k = np; k > 0 && round[k - 1] > x->repeat; k--) {
			round[k] = round[k - 1];
			out[k] = out[k - 1];
		}
		round[k] = x->repeat;
		out[k] = t;
		np++;
	}
	free(round);
	*lone = okb + okn - 2 * np;
	*d = out;
	return np;
}

int
paired_change(const struct group *b, const struct group *n, int m, int dm, double alpha, struct paired *r)
{
	double *d;
	int seq, np = pair_runs(b, n, m, &d, &r->lone, &seq);

	/* Paired when the runs come from one interleaved bench: no more than a quarter of the ok runs alone. */
	if (np < 2 || 4 * r->lone > 2 * np + r->lone) {
		free(d);
		return 0;
	}
	if (seq) {
		/* Did the bench stop the case on its decision? Else its rounds ran to the end. */
		int final = dm >= 0, ndm, lone, dseq;
		double *dd;

		if (final) {
			ndm = pair_runs(b, n, dm, &dd, &lone, &dseq);
			final = !cs_ever_decided(dd, ndm, alpha, log1p(THRESHOLD / 100));
			free(dd);
		}
		seq_analysis(d, np, alpha, final, r);
	}
	else
		signed_rank(d, np, alpha, r);
	free(d);
	return 1;
}

/* A log ratio as a change in percent: e^x - 1. */
double
pct_of_log(double x)
{
	return isnan(x) ? NAN : isinf(x) ? (x > 0 ? INFINITY : -100) : expm1(x) * 100;
}
