/*
 * ff-bench explain's test, apart from its input and output so that
 * t/unit/explain-test runs it on synthetic runs: the functions ranked by
 * the larger median of a side, the first TOP tested base against new with
 * the Mann-Whitney test, their p values given Benjamini-Hochberg's q, and
 * each change's Hodges-Lehmann estimate with Moses's 95% interval.
 */
#include "ff-bench.h"

#include <math.h>
#include <stdlib.h>

static double
median_of(const double *v, int n)
{
	double *c = ff_realloc(NULL, n * sizeof(*c)), m;

	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), ff_cmp_double);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

static int
cmp_med(const void *a, const void *b)
{
	const struct xfn *x = a, *y = b;
	double mx = fmax(x->med[0], x->med[1]), my = fmax(y->med[0], y->med[1]);

	return mx < my ? 1 : mx > my ? -1 : strcmp(x->key, y->key);
}

int
explain_test(struct xfn *f, size_t n, const int nruns[2], long top, double alpha, int *changed)
{
	int tested = n < (size_t)top ? (int)n : (int)top, r, s;
	double *p = ff_realloc(NULL, (tested + 1) * sizeof(*p)), *q = ff_realloc(NULL, (tested + 1) * sizeof(*q));
	size_t i;

	for (i = 0; i < n; i++)
		for (s = 0; s < 2; s++)
			f[i].med[s] = median_of(f[i].share[s], nruns[s]);
	qsort(f, n, sizeof(*f), cmp_med);
	for (r = 0; r < tested; r++) {
		mann_whitney(f[r].share[0], nruns[0], f[r].share[1], nruns[1], &f[r].t);
		hodges_lehmann(f[r].share[0], nruns[0], f[r].share[1], nruns[1], 0.05, &f[r].sh);
		p[r] = f[r].t.p;
	}
	bh_adjust(p, tested, q);
	*changed = 0;
	for (r = 0; r < tested; r++) {
		f[r].q = q[r];
		f[r].changed = q[r] < alpha;
		*changed += f[r].changed;
	}
	free(p);
	free(q);
	return tested;
}
