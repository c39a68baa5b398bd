/*
 * Unit tests of ff-bench's statistics (bin/ff-bench.d/stats.c), run by
 * t/unit.bats. Every expected value was computed apart from the code under
 * test: the Mann-Whitney ones by t/unit/mw-reference.py (python3, standard
 * library only: U counted pair by pair from its definition, the exact p by
 * enumerating every split of the pooled values, ties or none, the normal p
 * from Lehmann's tie-corrected variance), the Hodges-Lehmann and Benjamini-Hochberg ones
 * by t/unit/hl-reference.py (every pairwise difference sorted, the critical
 * value by enumerating every split of the ranks), the others by hand as
 * noted.
 */
#include "../../bin/ff-bench.d/ff-bench.h"

#include <math.h>

static int failures;

static void
near(const char *what, double got, double want)
{
	if (fabs(got - want) > 1e-12 * fmax(1, fabs(want))) {
		printf("not ok: %s: got %.17g, expected %.17g\n", what, got, want);
		failures++;
	} else
		printf("ok: %s = %.17g\n", what, got);
}

static void
check_mw(const char *what, const double *x, int n1, const double *y, int n2,
	 double u, double p, int exact)
{
	struct utest t;
	char buf[128];

	mann_whitney(x, n1, y, n2, &t);
	snprintf(buf, sizeof(buf), "%s: U", what);
	near(buf, t.u, u);
	snprintf(buf, sizeof(buf), "%s: p", what);
	near(buf, t.p, p);
	snprintf(buf, sizeof(buf), "%s: exact", what);
	near(buf, t.exact, exact);
}

static void
check_hl(const char *what, const double *x, int n1, const double *y, int n2,
	 double est, long long k, double lo, double hi)
{
	struct shift s;
	char buf[128];

	hodges_lehmann(x, n1, y, n2, 0.05, &s);
	snprintf(buf, sizeof(buf), "%s: shift", what);
	near(buf, s.est, est);
	snprintf(buf, sizeof(buf), "%s: k", what);
	near(buf, s.k, k);
	snprintf(buf, sizeof(buf), "%s: interval", what);
	if (isnan(lo))
		near(buf, isnan(s.lo) && isnan(s.hi), 1);
	else {
		near(buf, s.lo, lo);
		near(buf, s.hi, hi);
	}
}

/*
 * hodges_lehmann finds its order statistics by bisection, never writing the
 * differences down; here they are all written down and sorted, for random
 * samples (a fixed LCG) with ties, negative values and unequal sizes. The
 * count of disagreements should be 0.
 */
static int
brute_force_mismatches(void)
{
	static double x[40], y[40], d[1600];
	unsigned long long seed = 12345;
	struct shift s;
	long long k, n;
	int trial, n1, n2, i, j, bad = 0, ex;
	double est;

	for (trial = 0; trial < 300; trial++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		n1 = 1 + (int)((seed >> 35) % 40);
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		n2 = 1 + (int)((seed >> 40) % 40);
		for (i = 0; i < n1 + n2; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* trial % 2: coarse values, many ties; else fine ones, around -5e3 */
			double v = trial % 2 ? (double)((seed >> 33) % 7) :
				   ((double)(seed >> 11) / 9007199254740992.0 - 0.5) * 1e4;

			if (i < n1)
				x[i] = v;
			else
				y[i - n1] = v + (trial % 5);
		}
		n = (long long)n1 * n2;
		for (i = 0; i < n1; i++)
			for (j = 0; j < n2; j++)
				d[i * n2 + j] = y[j] - x[i];
		qsort(d, n, sizeof(*d), ff_cmp_double);
		est = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
		hodges_lehmann(x, n1, y, n2, 0.05, &s);
		k = moses_k(n1, n2, 0.05, &ex);
		if (s.est != est || s.k != k ||
		    (k >= 1 ? s.lo != d[k - 1] || s.hi != d[n - k] : !isnan(s.lo) || !isnan(s.hi))) {
			printf("mismatch: n1 %d n2 %d: shift %.17g want %.17g, k %lld want %lld\n",
			       n1, n2, s.est, est, s.k, k);
			bad++;
		}
	}
	return bad;
}

static void
check_stats(const char *what, double *v, int n, double median, double spread)
{
	struct stats s;
	char buf[128];

	stats_of(v, n, &s);
	snprintf(buf, sizeof(buf), "%s: n", what);
	near(buf, s.n, n);
	snprintf(buf, sizeof(buf), "%s: median", what);
	near(buf, s.median, median);
	snprintf(buf, sizeof(buf), "%s: spread", what);
	near(buf, s.spread_pct, spread);
}

/* 3 below 3, and 31 below 31 (no ties): Mann-Whitney's and Hodges-Lehmann's. */
static const double sep3x[] = { 1, 2, 3 }, sep3y[] = { 4, 5, 6 };
static double bigx[31], bigy[31];

/* Hodges-Lehmann shifts and Moses intervals (hl-reference.py). */
static void
test_hl(void)
{
	static const double m10x[] = { 98, 101, 97, 103, 100, 99, 102, 96, 104, 100.5 };
	static const double m10y[] = { 105, 108, 103, 110, 107, 104, 109, 106, 111, 102 };
	static const double isx[] = { 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5 };
	static const double isy[] = { 1, 1, 1, 1, 1, 1, 1, 1.5, 1.5, 1.5 };
	static const double s5x[] = { 1, 2, 3, 4, 5 }, s5y[] = { 6, 7, 8, 9, 10 };
	static const double p4[] = { 0.01, 0.04, 0.03, 0.005 }, p3[] = { 0.5, 0.02, 0.02 };
	double q[4];
	int ex;

	check_hl("5 below 5", s5x, 5, s5y, 5, 5, 3, 2, 8);
	check_hl("3 below 3: no interval", sep3x, 3, sep3y, 3, 3, 0, NAN, NAN);
	check_hl("the issue's ties", isx, 10, isy, 10, 0.5, 24, 0, 0.5);
	check_hl("10 and 10 mixed", m10x, 10, m10y, 10, 6.25, 24, 3.5, 9);
	check_hl("31 and 31, normal", bigx, 31, bigy, 31, 10.5, 341, 5.5, 15.5);
	near("300 random samples against every difference sorted: mismatches",
	     brute_force_mismatches(), 0);
	/* The published critical values of U at two-sided 0.05 are k - 1. */
	near("moses_k(4, 4)", moses_k(4, 4, 0.05, &ex), 1);
	near("moses_k(5, 8)", moses_k(5, 8, 0.05, &ex), 7);
	near("moses_k(10, 10)", moses_k(10, 10, 0.05, &ex), 24);
	near("moses_k(10, 10) exact", ex, 1);
	near("moses_k(31, 31)", moses_k(31, 31, 0.05, &ex), 341);
	near("moses_k(31, 31) exact", ex, 0);
	bh_adjust(p4, 4, q);
	near("bh 4: q1", q[0], 0.02);
	near("bh 4: q2", q[1], 0.04);
	near("bh 4: q3", q[2], 0.04);
	near("bh 4: q4", q[3], 0.02);
	bh_adjust(p3, 3, q);
	near("bh 3: q1", q[0], 0.5);
	near("bh 3: q2", q[1], 0.03);
	near("bh 3: q3", q[2], 0.03);
}

/* Median and half the range over it, in percent (by hand). */
static void
test_stats(void)
{
	double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 }, zero[] = { -1, 0, 1 };
	double narrow[] = { 100, 101, 99 }, none[1] = { 0 };
	double huge[] = { 1.5e308, 1.5e308, 1.5e308, 1.5e308 };
	struct stats hs;

	check_stats("odd", odd, 3, 2, 50);		/* (3 - 1) / 2 / 2 */
	check_stats("even", even, 4, 2.5, 60);		/* (4 - 1) / 2 / 2.5 */
	check_stats("median 0", zero, 3, 0, 0);		/* no percentage of 0 */
	check_stats("narrow", narrow, 3, 100, 1);	/* (101 - 99) / 2 / 100 */
	check_stats("empty", none, 0, 0, 0);
	/* An even count of huge values: halves before adding, never inf. */
	stats_of(huge, 4, &hs);
	near("huge: median", hs.median, 1.5e308);
}

int
main(void)
{
	/* Exact p, no ties (mw-reference.py: sep3, sep4, sep5x4, inter4, mid5). */
	static const double sep4x[] = { 1, 2, 3, 4 }, sep4y[] = { 5, 6, 7, 8 };
	static const double s54x[] = { 10, 11, 12, 13, 14 }, s54y[] = { 1, 2, 3, 4 };
	static const double i4x[] = { 1, 3, 5, 7 }, i4y[] = { 2, 4, 6, 8 };
	static const double m5x[] = { 1, 4, 6, 9, 10 }, m5y[] = { 2, 3, 5, 7, 8 };
	/* Ties, n1 + n2 <= 60: exact (ties4, ties6, five); no ties but n1 + n2 > 60 (big). */
	static const double t4x[] = { 1, 2, 2, 3 }, t4y[] = { 2, 3, 3, 4 };
	static const double t6x[] = { 5, 5, 6, 7, 7, 8 }, t6y[] = { 7, 8, 8, 9, 9, 9 };
	static const double same[] = { 3, 3, 3 };
	static const double five100[] = { 1, 1, 1, 1, 1 }, five097[] = { 0.97, 0.97, 0.97, 0.97, 0.97 };
	int i;

	check_mw("3 below 3", sep3x, 3, sep3y, 3, 0, 0.1, 1);		/* 2 of C(6,3) = 20 */
	check_mw("4 below 4", sep4x, 4, sep4y, 4, 0, 2.0 / 70, 1);	/* 2 of C(8,4) = 70 */
	check_mw("5 above 4", s54x, 5, s54y, 4, 0, 2.0 / 126, 1);	/* 2 of C(9,4) = 126 */
	check_mw("4 interleaved", i4x, 4, i4y, 4, 6, 48.0 / 70, 1);	/* 0.68571428571428572 */
	check_mw("5 mixed", m5x, 5, m5y, 5, 10, 0.6904761904761905, 1);	/* 174 of 252 */
	check_mw("4 and 4 with ties", t4x, 4, t4y, 4, 3, 0.2857142857142857, 1);
	check_mw("6 and 6 with ties", t6x, 6, t6y, 6, 3, 0.021645021645021644, 1);
	/* 5 x 1.00 against 5 x 0.97: 2 of C(10, 5) = 252, not the normal 0.0040. */
	check_mw("5 tied above 5 tied", five100, 5, five097, 5, 0, 2.0 / 252, 1);
	for (i = 0; i < 31; i++) {
		bigx[i] = i;
		bigy[i] = i + 10.5;
	}
	check_mw("31 and 31, no ties", bigx, 31, bigy, 31, 210, 0.0001439883723027259, 0);
	/* Every value the same: no evidence of a difference at all (by hand). */
	check_mw("all tied", same, 3, same, 3, 4.5, 1, 1);

	/* 2 / C(n1+n2, n1), by hand: 2/20; 2/70; and 4 runs a side are needed for 0.05. */
	near("min_p(3, 3)", min_p(3, 3), 0.1);
	near("min_p(4, 4)", min_p(4, 4), 2.0 / 70);
	near("need_runs(0.05)", need_runs(0.05), 4);
	near("need_runs(0.1)", need_runs(0.1), 3);
	/* The exact distribution's tail directly: U <= 1 of 4 and 4 is 2 of 70, doubled. */
	near("exact_p(4, 4, 1)", exact_p(4, 4, 1), 4.0 / 70);

	test_hl();
	test_stats();

	printf("%d failure%s\n", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
