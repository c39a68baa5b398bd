/*
 * Unit tests of ff-history's change point detection
 * (bin/ff-history.d/detect.c), run by t/history.bats:
 *  - the fast E-statistic scan against the definition, pair by pair;
 *  - synthetic histories with steps of known place and size: each found
 *    within one point of its place, its size inside its interval;
 *  - A/A histories (100 series of 200 points, no step): at most 5 series
 *    with a change point.
 * `edivisive-test --bench N` times the detection of a history of N points
 * with two steps (bench/history.sh).
 * The noise is Gaussian from a seeded generator: every run is the same.
 */
#include "../../bin/ff-history.d/ff-history.h"

#include <math.h>
#include <string.h>
#include <time.h>

static int failures;

static void
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf(cond ? "ok: " : "not ok: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failures += !cond;
}

static uint64_t rng = 42;

static double
uniform(void)
{
	return ff_random_unit(&rng);
}

/* Box-Muller. */
static double
gauss(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* Q of split tau from the definition (Matteson and James 2014, alpha 1). */
static double
brute_q(const double *x, int n, int tau)
{
	double b = 0, wl = 0, wr = 0, m = tau, k = n - tau, e;
	int i, j;

	for (i = 0; i < tau; i++)
		for (j = tau; j < n; j++)
			b += fabs(x[i] - x[j]);
	for (i = 0; i < tau; i++)
		for (j = i + 1; j < tau; j++)
			wl += fabs(x[i] - x[j]);
	for (i = tau; i < n; i++)
		for (j = i + 1; j < n; j++)
			wr += fabs(x[i] - x[j]);
	e = 2 * b / (m * k) - (m > 1 ? wl / (m * (m - 1) / 2) : 0) -
	    (k > 1 ? wr / (k * (k - 1) / 2) : 0);
	return m * k / (m + k) * e;
}

static void
test_scan(void)
{
	double x[41], q[42];
	int n = 41, i, tau, bad = 0;

	/* Ties included: values rounded to a few levels. */
	for (i = 0; i < n; i++)
		x[i] = round(gauss() * 3) + (i >= 25 ? 4 : 0);
	energy_scan(x, n, 2, q);
	for (tau = 2; tau <= n - 2; tau++)
		if (fabs(q[tau] - brute_q(x, n, tau)) > 1e-9 * fmax(1, fabs(brute_q(x, n, tau))))
			bad++;
	ok(!bad, "the scan's Q equals the definition's at every split (%d of %d differ)", bad, n - 3);
}

/* A history of n points around 1000 with noise sd (in %), steps at[k] of pct[k] %. */
static void
history(double *x, int n, double sd, const int *at, const double *pct, int nsteps)
{
	double level = 1000;
	int i, k = 0;

	for (i = 0; i < n; i++) {
		while (k < nsteps && at[k] == i)
			level *= 1 + pct[k++] / 100;
		x[i] = level * (1 + sd / 100 * gauss());
	}
}

static void
test_steps(const char *what, int n, double sd, const int *at, const double *pct, int nsteps)
{
	struct detect_opts o = DETECT_OPTS_INIT;
	double *x = malloc(n * sizeof(*x)), true_pct;
	struct cp *cps;
	int ncp, k, j;

	history(x, n, sd, at, pct, nsteps);
	ncp = edivisive(x, n, &o, &cps);
	ok(ncp == nsteps, "%s: %d change points found, %d made", what, ncp, nsteps);
	for (k = 0; k < nsteps; k++) {
		for (j = 0; j < ncp && abs(cps[j].at - at[k]) > 1; j++)
			;
		if (j == ncp) {
			ok(0, "%s: the step at %d is found within one point", what, at[k]);
			continue;
		}
		ok(1, "%s: the step at %d is found at %d (p %.3f)", what, at[k], cps[j].at, cps[j].p);
		/* The true step between the levels on either side. */
		true_pct = pct[k];
		ok(cps[j].lo_pct <= true_pct && true_pct <= cps[j].hi_pct,
		   "%s: its size %.2f%% is in its interval [%.2f%%, %.2f%%] (estimate %.2f%%)",
		   what, true_pct, cps[j].lo_pct, cps[j].hi_pct, cps[j].step_pct);
	}
	free(cps);
	free(x);
}

static void
test_aa(void)
{
	struct detect_opts o = DETECT_OPTS_INIT;
	double x[200];
	struct cp *cps;
	int s, with = 0, total = 0, ncp;
	clock_t t0 = clock();

	for (s = 0; s < 100; s++) {
		history(x, 200, 2, NULL, NULL, 0);
		ncp = edivisive(x, 200, &o, &cps);
		with += ncp > 0;
		total += ncp;
		free(cps);
	}
	ok(with <= 5, "A/A: %d of 100 series of 200 points have a change point (%d in all; at most 5 allowed), %.2f s",
	   with, total, (double)(clock() - t0) / CLOCKS_PER_SEC);
}

static void
test_verdict(void)
{
	double x[41];
	struct newest nv;
	int i;

	for (i = 0; i < 40; i++)
		x[i] = 1000 * (1 + 0.01 * gauss());
	x[40] = 900;
	newest_verdict(x, 41, NULL, 0, 1, 2.0, &nv);
	ok(nv.v == V_WORSE, "a newest throughput 10%% under a steady history is a regression (%s, %.1f%%)",
	   verdict_name(nv.v), nv.change_pct);
	newest_verdict(x, 41, NULL, 0, 0, 2.0, &nv);
	ok(nv.v == V_BETTER, "the same for a latency is an improvement (%s)", verdict_name(nv.v));
	x[40] = 1005;
	newest_verdict(x, 41, NULL, 0, 1, 2.0, &nv);
	ok(nv.v == V_SAME, "a newest point within the noise is no change (%s)", verdict_name(nv.v));
	x[40] = 970;
	newest_verdict(x, 41, NULL, 0, 1, 5.0, &nv);
	ok(nv.v == V_SAME, "3%% under, with a threshold of 5%%, is no change (%s)", verdict_name(nv.v));
	newest_verdict(x, 3, NULL, 0, 1, 2.0, &nv);
	ok(nv.v == V_FEW, "three points are too few (%s)", verdict_name(nv.v));
}

static int
bench(int n)
{
	struct detect_opts o = DETECT_OPTS_INIT;
	double *x = malloc(n * sizeof(*x)), pct[2] = { -5, 5 };
	int at[2] = { n / 3, 2 * n / 3 }, ncp;
	struct timespec a, b, ca, cb;
	struct cp *cps;

	history(x, n, 2, at, pct, 2);
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	ncp = edivisive(x, n, &o, &cps);
	clock_gettime(CLOCK_MONOTONIC, &b);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	printf("%d points: %d change points in %.3f s (CPU %.3f s)\n", n, ncp,
	       (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
	       (cb.tv_sec - ca.tv_sec) + (cb.tv_nsec - ca.tv_nsec) / 1e9);
	free(cps);
	free(x);
	return 0;
}

int
main(int argc, char *argv[])
{
	static const int at1[] = { 30 }, at3[] = { 40, 90, 150 }, at_end[] = { 195 };
	static const double p1[] = { -10 }, p3[] = { -5, 8, -3 }, p_end[] = { -10 };

	ff_setprog(argv[0]);
	if (argc == 3 && !strcmp(argv[1], "--bench"))
		return bench(atoi(argv[2]));
	test_scan();
	test_steps("one step of -10% at 30 of 60, noise 2%", 60, 2, at1, p1, 1);
	test_steps("three steps (-5%, +8%, -3%) in 200 points, noise 1%", 200, 1, at3, p3, 3);
	test_steps("a step of -10% five points from the end of 200, noise 2%", 200, 2, at_end, p_end, 1);
	test_aa();
	test_verdict();
	printf("%d failures\n", failures);
	return failures != 0;
}
