/*
 * ff-bench's private header: what its files (the .c files of bin/ff-bench.d) share.
 * The program is one binary, bin/ff-bench, linked from their objects.
 */
#ifndef FF_BENCH_H
#define FF_BENCH_H

#include "ff.h"

#define ALPHA 0.05	/* compare's significance level */

/* Statistics (stats.c) */

struct stats {
	int n;
	double median, spread_pct;	/* half the min-max range over the median */
};

/*
 * The Mann-Whitney U test (Mann and Whitney, "On a test of whether one of
 * two random variables is stochastically larger than the other", Annals of
 * Mathematical Statistics 18(1), 1947, pp. 50-60), two-sided.
 *
 * U for a sample is the number of pairs in which its value is the larger,
 * ties counting one half; computed from midranks as R1 - n1(n1+1)/2. We
 * report the smaller of the two, U = min(U1, U2), the figure tables of
 * critical values use.
 *
 * - Without ties and with n1 + n2 <= 60, the p-value is exact: under the
 *   null hypothesis each of the C(n1+n2, n1) orderings is equally likely,
 *   and the number with U = u is the coefficient of q^u in the Gaussian
 *   binomial coefficient [n1+n2 choose n1]_q (the partitions of u that fit
 *   in an n1 x n2 box; e.g. Andrews, The Theory of Partitions, 1976,
 *   Theorem 3.1), which is the product of (1 - q^(n2+i)) / (1 - q^i) for
 *   i = 1..n1. p = 2 P(U <= u), at most 1. (C(60, 30) < 2^63.)
 * - Otherwise, the normal approximation with the tie correction of the
 *   variance and a continuity correction of 1/2:
 *     mu = n1 n2 / 2
 *     sigma^2 = n1 n2 / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1)))
 *   where n = n1 + n2 and t runs over the sizes of the groups of tied
 *   values (Lehmann, Nonparametrics: Statistical Methods Based on Ranks,
 *   1975, eq. 1.3.18 ff.; the same as the "asymptotic" method of SciPy's
 *   mannwhitneyu), z = (|U1 - mu| - 1/2) / sigma, p = erfc(z / sqrt 2).
 *
 * The smallest p any outcome can reach is 2 / C(n1+n2, n1): when that
 * exceeds alpha, no difference can ever be significant with so few runs
 * (3 and 3 runs: 0.1), which is what benchstat's "need >= 4 samples to
 * detect a difference at alpha level 0.05" says.
 */
struct utest {
	double u, p;
	int exact;
};

/* stats.c */
void stats_of(double *v, int n, struct stats *s);
double exact_p(int m, int n, double u);
void mann_whitney(const double *x, int n1, const double *y, int n2, struct utest *t);
double min_p(int n1, int n2);
int need_runs(double alpha);

#endif
