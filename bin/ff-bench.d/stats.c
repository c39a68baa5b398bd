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
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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

double
exact_p(int m, int n, double u)
{
	int64_t *c = calloc((size_t)m * n + m + 2, sizeof(*c)), total = 0, below = 0;
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
	for (k = 0; k <= deg; k++) {
		total += c[k];
		if (k <= u)
			below += c[k];
	}
	free(c);
	return fmin(1.0, 2.0 * (double)below / (double)total);
}

void
mann_whitney(const double *x, int n1, const double *y, int n2, struct utest *t)
{
	int n = n1 + n2, i, j, k;
	struct obs *o = malloc(n * sizeof(*o));
	double r1 = 0, ties = 0, rank, u1, mu, var, z;

	if (!o)
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
		for (k = i; k < j; k++)
			if (o[k].g == 0)
				r1 += rank;
		if (j - i > 1)
			ties += (double)(j - i) * (j - i) * (j - i) - (j - i);
	}
	free(o);
	u1 = r1 - n1 * (n1 + 1) / 2.0;
	t->u = fmin(u1, (double)n1 * n2 - u1);
	t->exact = ties == 0 && n <= 60;
	if (t->exact) {
		t->p = exact_p(n1, n2, t->u);
		return;
	}
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
