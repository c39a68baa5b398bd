/*
 * ff-bench's statistics, pure functions of their arguments: the median and
 * spread of a sample, and the Mann-Whitney U test (t/unit/stats-test.c
 * checks them against values computed independently).
 */
#include "ff-bench.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Sorts v. */
void
stats_of(double *v, int n, struct stats *s)
{
	s->n = n;
	s->median = s->spread_pct = 0;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), ff_cmp_double);
	/* Halves first: the sum of +-1.5e308 would be infinite. */
	s->median = n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
	if (s->median != 0)
		s->spread_pct = fabs((v[n - 1] - v[0]) / 2 / s->median * 100);
}

struct obs {
	double v;
	int g;
};

static int
cmp_obs(const void *a, const void *b)
{
	return ff_cmp_double(&((const struct obs *)a)->v, &((const struct obs *)b)->v);
}

/*
 * The number of the C(m+n, m) orderings of two samples of m and n values
 * (no ties) with U = u, for u = 0 .. m n: the coefficients of the Gaussian
 * binomial coefficient (ff-bench.h). Freed by the caller.
 */
static int64_t *
u_counts(int m, int n)
{
	int64_t *c = calloc((size_t)m * n + m + 2, sizeof(*c));
	int i, k, deg = 0, a;

	if (!c)
		ff_die("out of memory");
	c[0] = 1;
	for (i = 1; i <= m; i++) {
		a = n + i;
		for (k = deg + a; k >= a; k--)
			c[k] -= c[k - a];
		deg += a;
		for (k = i; k <= deg; k++)
			c[k] += c[k - i];
		deg -= i;
	}
	return c;
}

double
exact_p(int m, int n, double u)
{
	int64_t *c = u_counts(m, n), total = 0, below = 0;
	int k;

	for (k = 0; k <= m * n; k++) {
		total += c[k];
		if (k <= u)
			below += c[k];
	}
	free(c);
	return fmin(1.0, 2.0 * (double)below / (double)total);
}

/*
 * The exact two-sided p of a rank sum with ties: under the null hypothesis
 * each of the C(n, n1) ways of choosing the first sample's places among the
 * n pooled values is equally likely, and its rank sum is the sum of the
 * midranks at those places. twice[i]: twice the midrank of place i (a whole
 * number); w2: twice the first sample's rank sum. Counts by dynamic
 * programming over the places, ways[j][s] the choices of j places whose
 * doubled ranks sum to s; p = 2 min(P(W <= w), P(W >= w)), at most 1.
 */
static double
exact_p_ties(const int *twice, int n, int n1, long w2)
{
	long smax = 0, s;
	int i, j;
	int64_t *ways, total = 0, le = 0, ge = 0;

	for (i = 0; i < n; i++)
		smax += twice[i];
	ways = calloc((size_t)(n1 + 1) * (smax + 1), sizeof(*ways));
	if (!ways)
		ff_die("out of memory");
	ways[0] = 1;
	for (i = 0; i < n; i++)
		for (j = i + 1 < n1 ? i + 1 : n1; j >= 1; j--)
			for (s = smax; s >= twice[i]; s--)
				ways[j * (smax + 1) + s] += ways[(j - 1) * (smax + 1) + s - twice[i]];
	for (s = 0; s <= smax; s++) {
		int64_t c = ways[n1 * (smax + 1) + s];

		total += c;
		le += s <= w2 ? c : 0;
		ge += s >= w2 ? c : 0;
	}
	free(ways);
	return fmin(1.0, 2.0 * (double)(le < ge ? le : ge) / (double)total);
}

void
mann_whitney(const double *x, int n1, const double *y, int n2, struct utest *t)
{
	int n = n1 + n2, i, j, k, *twice = malloc((n + 1) * sizeof(*twice));
	struct obs *o = malloc((n + 1) * sizeof(*o));
	double r1 = 0, ties = 0, rank, u1, mu, var, z;

	if (!o || !twice)
		ff_die("out of memory");
	for (i = 0; i < n1; i++)
		o[i] = (struct obs){ x[i], 0 };
	for (i = 0; i < n2; i++)
		o[n1 + i] = (struct obs){ y[i], 1 };
	qsort(o, n, sizeof(*o), cmp_obs);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && o[j].v == o[i].v; j++)
			;
		rank = (i + 1 + j) / 2.0;	/* the midrank of positions i+1 .. j */
		for (k = i; k < j; k++) {
			twice[k] = i + 1 + j;
			if (o[k].g == 0)
				r1 += rank;
		}
		if (j - i > 1)
			ties += (double)(j - i) * (j - i) * (j - i) - (j - i);
	}
	free(o);
	u1 = r1 - n1 * (n1 + 1) / 2.0;
	t->u = fmin(u1, (double)n1 * n2 - u1);
	t->exact = n <= 60 && n1 && n2;
	if (t->exact) {
		t->p = ties == 0 ? exact_p(n1, n2, t->u) : exact_p_ties(twice, n, n1, lround(2 * r1));
		free(twice);
		return;
	}
	free(twice);
	mu = n1 * (double)n2 / 2;
	var = n1 * (double)n2 / 12 * ((n + 1) - ties / ((double)n * (n - 1)));
	if (var <= 0) {
		t->p = 1;	/* every value the same */
		return;
	}
	z = (fabs(u1 - mu) - 0.5) / sqrt(var);
	t->p = z <= 0 ? 1 : fmin(1.0, erfc(z / M_SQRT2));
}

/* 2 / C(n1+n2, n1): the smallest two-sided p with these sample sizes. */
double
min_p(int n1, int n2)
{
	double c = 1;
	int i;

	for (i = 1; i <= n1; i++)
		c = c * (n2 + i) / i;
	return 2 / c;
}

/* The fewest runs per side that can reach alpha. */
int
need_runs(double alpha)
{
	int k = 1;

	while (min_p(k, k) > alpha)
		k++;
	return k;
}

/*
 * The Hodges-Lehmann estimate of a shift and its distribution-free
 * confidence interval (ff-bench.h), from order statistics of the n1 n2
 * differences y[j] - x[i], found without writing them all down: x and y
 * sorted, the differences up to a value counted in O(n1 + n2).
 */

/* How many differences y[j] - x[i] are <= t (x and y ascending). */
static long long
diffs_upto(const double *x, int n1, const double *y, int n2, double t)
{
	long long count = 0;
	int i, j = 0;

	/* y[j] - x[i] rises with j and falls with i, in floating point too. */
	for (i = 0; i < n1; i++) {
		while (j < n2 && y[j] - x[i] <= t)
			j++;
		count += j;
	}
	return count;
}

/* The smallest difference greater than t. */
static double
diff_above(const double *x, int n1, const double *y, int n2, double t)
{
	double best = INFINITY;
	int i, j = 0;

	/* As i rises, the first j with y[j] - x[i] > t does not fall. */
	for (i = 0; i < n1; i++) {
		while (j < n2 && y[j] - x[i] <= t)
			j++;
		if (j < n2 && y[j] - x[i] < best)
			best = y[j] - x[i];
	}
	return best;
}

/*
 * The k-th smallest (from 1) of the differences: bisection on the value
 * until no double lies between a bound with fewer than k differences at or
 * below it and one with k or more; the k-th is then the smallest
 * difference above the lower bound.
 */
static double
kth_diff(const double *x, int n1, const double *y, int n2, long long k)
{
	double lo = y[0] - x[n1 - 1], hi = y[n2 - 1] - x[0], mid;
	int i;

	lo = nextafter(lo, -INFINITY);	/* no difference at or below it */
	for (i = 0; i < 4000; i++) {
		mid = lo + (hi - lo) / 2;
		if (!(mid > lo && mid < hi))
			break;
		if (diffs_upto(x, n1, y, n2, mid) >= k)
			hi = mid;
		else
			lo = mid;
	}
	return diff_above(x, n1, y, n2, lo);
}

/* z with P(Z > z) = a for a standard normal Z, by bisection (a in (0, 0.5]). */
double
upper_quantile(double a)
{
	double lo = 0, hi = 40, mid;
	int i;

	for (i = 0; i < 200; i++) {
		mid = (lo + hi) / 2;
		if (erfc(mid / M_SQRT2) / 2 > a)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * How many of the ordered differences to leave out at each end for a
 * two-sided interval of confidence at least 1 - alpha; 0 when there is no
 * such interval (too few runs). Exact for n1 + n2 <= 60, from the
 * distribution of U; the normal approximation otherwise.
 */
long long
moses_k(int n1, int n2, double alpha, int *exact)
{
	double z, sigma, total = 0, below = 0;
	int64_t *c;
	long long k;
	int u;

	*exact = n1 + n2 <= 60;
	if (*exact) {
		c = u_counts(n1, n2);
		for (u = 0; u <= n1 * n2; u++)
			total += (double)c[u];
		/* The largest k with 2 P(U <= k - 1) <= alpha. */
		for (k = 0, u = 0; u <= n1 * n2; u++) {
			below += (double)c[u];
			if (2 * below / total > alpha)
				break;
			k = u + 1;
		}
		free(c);
		return k;
	}
	z = upper_quantile(alpha / 2);
	sigma = sqrt(n1 * (double)n2 * (n1 + n2 + 1) / 12);
	k = (long long)floor(n1 * (double)n2 / 2 - z * sigma);
	return k < 0 ? 0 : k;
}

void
hodges_lehmann(const double *base, int n1, const double *new, int n2, double alpha,
	       struct shift *s)
{
	double *x = malloc((n1 + 1) * sizeof(*x)), *y = malloc((n2 + 1) * sizeof(*y));
	long long n = (long long)n1 * n2;

	if (!x || !y)
		ff_die("out of memory");
	s->est = s->lo = s->hi = NAN;
	s->k = 0;
	s->exact = 0;
	if (n1 && n2) {
		memcpy(x, base, n1 * sizeof(*x));
		memcpy(y, new, n2 * sizeof(*y));
		qsort(x, n1, sizeof(*x), ff_cmp_double);
		qsort(y, n2, sizeof(*y), ff_cmp_double);
		s->est = n % 2 ? kth_diff(x, n1, y, n2, (n + 1) / 2) :
			 kth_diff(x, n1, y, n2, n / 2) / 2 + kth_diff(x, n1, y, n2, n / 2 + 1) / 2;
		s->k = moses_k(n1, n2, alpha, &s->exact);
		if (s->k >= 1 && s->k <= n - s->k + 1) {
			s->lo = kth_diff(x, n1, y, n2, s->k);
			s->hi = kth_diff(x, n1, y, n2, n + 1 - s->k);
		}
	}
	free(x);
	free(y);
}

struct pidx {
	double p;
	int i;
};

static int
cmp_pidx(const void *a, const void *b)
{
	const struct pidx *x = a, *y = b;

	return x->p < y->p ? -1 : x->p > y->p ? 1 : x->i - y->i;
}

/*
 * Benjamini-Hochberg adjusted p-values ("q"): with the n p-values in
 * ascending order p(1) <= ... <= p(n), q(i) = min over j >= i of
 * p(j) n / j, at most 1. Declaring q < alpha significant keeps the
 * expected share of false discoveries among them at most alpha
 * (Benjamini and Hochberg, JRSS B 57(1), 1995, pp. 289-300).
 */
void
bh_adjust(const double *p, int n, double *q)
{
	struct pidx *o = malloc((n + 1) * sizeof(*o));
	double run = 1;
	int i;

	if (!o)
		ff_die("out of memory");
	for (i = 0; i < n; i++)
		o[i] = (struct pidx){ p[i], i };
	qsort(o, n, sizeof(*o), cmp_pidx);
	for (i = n - 1; i >= 0; i--) {
		run = fmin(run, o[i].p * n / (i + 1));
		q[o[i].i] = run;
	}
	free(o);
}

/*
 * The change of the medians from a base sample x to a new one y, in % of
 * the base median (NAN when that is 0). Sorts x and y.
 */
double
median_change_pct(double *x, int nx, double *y, int ny)
{
	struct stats b, n;

	stats_of(x, nx, &b);
	stats_of(y, ny, &n);
	return b.median != 0 ? (n.median - b.median) / fabs(b.median) * 100 : NAN;
}

/*
 * Do the Hodges-Lehmann shift and the change of the medians point opposite
 * ways (one above 0, the other below)? Then the runs are too spread to
 * tell which way the change goes, whatever the test says.
 */
int
signs_disagree(double shift_pct, double median_pct)
{
	return (shift_pct > 0 && median_pct < 0) || (shift_pct < 0 && median_pct > 0);
}
