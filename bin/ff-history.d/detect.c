/*
 * Change points of a series by E-divisive means, and the newest point's
 * verdict: pure functions of their arguments (t/unit/edivisive-test.c
 * checks them against brute force and synthetic histories).
 *
 * E-divisive means: Matteson and James, "A Nonparametric Approach for
 * Multiple Change Point Analysis of Multivariate Data", Journal of the
 * American Statistical Association 109(505), 2014, pp. 334-345; the ecp
 * package's e.divisive is theirs. For a split of a segment Z into
 * X = Z[0..tau) (m points) and Y = Z[tau..n) (k points), with alpha = 1,
 *
 *   E = 2/(m k) sum |x - y| - 1/C(m,2) sum |x - x'| - 1/C(k,2) sum |y - y'|
 *   Q = m k / (m + k) E
 *
 * The split is the tau of the largest Q; the segment's end is fixed at its
 * end (the "kappa" of the paper is not searched), as in MongoDB's
 * signal-processing-algorithms (Daly et al., "The Use of Change Point
 * Detection to Identify Software Performance Regressions in a Continuous
 * Integration System", ICPE 2020). Change points are found one at a time:
 * the best split of every segment so far, the largest of them tested.
 *
 * The test is the paper's permutation test (section 3.2): the points of
 * each segment are shuffled within it, R times, and the best split of the
 * shuffled series found again; p = (1 + #{shuffles whose Q >= the
 * observed}) / (R + 1). The change point stands when p <= the significance
 * level; otherwise the search stops. (Apache Otava, formerly Hunter, uses a
 * Student's t-test of the two sides instead.) The shuffles stop as soon as
 * p can no longer reach the level.
 *
 * Speed: in one dimension with alpha = 1 the three sums need no n^2 pairs.
 * The within-sum of a prefix grows by the distances from each new point to
 * those before it: with a Fenwick tree of counts and sums over the values'
 * ranks, sum |v - s| = v c_less - S_less + S_greater - v c_greater, in
 * O(log n). Prefix sums L(tau) left to right, suffix sums R(tau) right to
 * left, and the between-sum is the whole's less both: T - L - R. A scan of
 * a segment is O(n log n), a shuffle of the series too.
 *
 * The step of a change point: the Hodges-Lehmann shift between the
 * segments on either side, with Moses's 95% interval (stats.c, as compare
 * gives), in % of the earlier segment's median.
 */
#include "ff-history.h"

#include <math.h>
#include <string.h>

/*
 * Fenwick tree of counts and sums over ranks 1..m (node[r]), and the count
 * and sum at each rank (at[r]: the points equal to a value, at distance 0
 * from it). A count and its sum share a cache line: a shuffled series
 * visits the tree at random.
 */
struct cs {
	double cnt, sum;
};

struct bit {
	int m;
	struct cs *node, *at;
};

/* Counts are whole numbers, exact; a sum whose count is back to 0 is made 0 again. */
static void
bit_add(struct bit *b, int r, double c, double v)
{
	struct cs *p = &b->at[r];

	p->cnt += c;
	p->sum = p->cnt ? p->sum + c * v : 0;
	for (; r <= b->m; r += r & -r) {
		p = &b->node[r];
		p->cnt += c;
		p->sum = p->cnt ? p->sum + c * v : 0;
	}
}

/*
 * The sum of |v - s| over the points s in the tree (total count tc, sum
 * ts): v c_less - S_less + S_greater - v c_greater.
 */
static double
dist_to(const struct bit *b, int r, double v, double tc, double ts)
{
	double cl = 0, sl = 0, cg, sg;
	int i;

	for (i = r - 1; i > 0; i -= i & -i) {
		cl += b->node[i].cnt;
		sl += b->node[i].sum;
	}
	cg = tc - cl - b->at[r].cnt;
	sg = ts - sl - b->at[r].sum;
	return v * cl - sl + sg - v * cg;
}

/* Workspace of one series: its tree, and the prefix and suffix sums. */
struct work {
	struct bit b;
	double *L, *R;
};

static void
work_init(struct work *w, int n, int m)
{
	w->b.m = m;
	w->b.node = calloc(m + 1, sizeof(struct cs));
	w->b.at = calloc(m + 1, sizeof(struct cs));
	w->L = calloc(n + 1, sizeof(double));
	w->R = calloc(n + 1, sizeof(double));
	if (!w->b.node || !w->b.at || !w->L || !w->R)
		ff_die("out of memory");
}

static void
work_free(struct work *w)
{
	free(w->b.node);
	free(w->b.at);
	free(w->L);
	free(w->R);
}

/*
 * Q of every split of v[0..n) (ranks rk) into q (when not NULL); returns
 * the best tau in [min, n - min] (0: none) and its Q in *best.
 */
static int
scan(struct work *w, const double *v, const int *rk, int n, int min, double *q, double *best)
{
	double tc = 0, ts = 0, T, m, k, e, Q;
	int i, tau, arg = 0;

	*best = -INFINITY;
	if (min < 1)
		min = 1;
	if (n < 2 * min)
		return 0;
	/* Prefixes: each point joins the tree, after its distances to those before. */
	w->L[0] = 0;
	for (i = 0; i < n; i++) {
		w->L[i + 1] = w->L[i] + dist_to(&w->b, rk[i], v[i], tc, ts);
		bit_add(&w->b, rk[i], 1, v[i]);
		tc++, ts += v[i];
	}
	/* Suffixes: each point leaves it again, less its distances to those after; it ends empty. */
	T = w->R[0] = w->L[n];
	for (i = 0; i < n; i++) {
		bit_add(&w->b, rk[i], -1, v[i]);
		tc--, ts -= v[i];
		w->R[i + 1] = w->R[i] - dist_to(&w->b, rk[i], v[i], tc, ts);
	}
	for (tau = min; tau <= n - min; tau++) {
		m = tau, k = n - tau;
		e = 2 * (T - w->L[tau] - w->R[tau]) / (m * k);
		if (m > 1)
			e -= 2 * w->L[tau] / (m * (m - 1));
		if (k > 1)
			e -= 2 * w->R[tau] / (k * (k - 1));
		Q = m * k / (m + k) * e;
		if (q)
			q[tau] = Q;
		if (Q > *best) {
			*best = Q;
			arg = tau;
		}
	}
	return arg;
}

struct ranked {
	double v;
	int i;
};

static int
cmp_ranked(const void *a, const void *b)
{
	return ff_cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

/* Dense ranks (1..) of x[0..n), equal values one rank; returns the count of ranks. */
static int
rank_of(const double *x, int n, int *rk)
{
	struct ranked *s = malloc((n + 1) * sizeof(*s));
	int i, r = 0;

	if (!s)
		ff_die("out of memory");
	for (i = 0; i < n; i++)
		s[i] = (struct ranked){ x[i], i };
	qsort(s, n, sizeof(*s), cmp_ranked);
	for (i = 0; i < n; i++) {
		if (i == 0 || s[i].v != s[i - 1].v)
			r++;
		rk[s[i].i] = r;
	}
	free(s);
	return r;
}

void
energy_scan(const double *x, int n, int min_size, double *q)
{
	int *rk = malloc((n + 1) * sizeof(*rk));
	struct work w;
	double best;

	if (!rk)
		ff_die("out of memory");
	memset(q, 0, (n + 1) * sizeof(*q));
	work_init(&w, n, rank_of(x, n, rk));
	scan(&w, x, rk, n, min_size, q, &best);
	work_free(&w);
	free(rk);
}

/* Fisher-Yates over idx[a..b). */
static void
shuffle(int *idx, int a, int b, uint64_t *seed)
{
	int i, j, t;

	for (i = b - 1; i > a; i--) {
		j = a + (int)((ff_random(seed) >> 11) * 0x1.0p-53 * (i - a + 1));
		t = idx[i], idx[i] = idx[j], idx[j] = t;
	}
}

/* The series being divided: its values (centred), ranks, segment bounds. */
struct division {
	int n;
	double *v, *pv;		/* values; shuffled values */
	int *rk, *prk, *idx;	/* ranks; shuffled ranks; the shuffle */
	int *bounds, nb;	/* 0 = b0 < b1 < ... < b(nb-1) = n */
	int *tau;		/* each segment's best split (0: none) */
	double *q;		/* and its Q */
	struct work w;
};

/* The best split of segment s of the observed series. */
static void
segment_best(struct division *d, int s, int min)
{
	int a = d->bounds[s], b = d->bounds[s + 1];

	d->tau[s] = scan(&d->w, d->v + a, d->rk + a, b - a, min, NULL, &d->q[s]);
}

/* The largest best-split Q of the series shuffled within its segments. */
static double
shuffled_best(struct division *d, int min, uint64_t *seed)
{
	double best = -INFINITY, q;
	int s, i, a, b;

	for (s = 0; s + 1 < d->nb; s++) {
		a = d->bounds[s], b = d->bounds[s + 1];
		for (i = a; i < b; i++)
			d->idx[i] = i;
		shuffle(d->idx, a, b, seed);
		for (i = a; i < b; i++) {
			d->pv[i] = d->v[d->idx[i]];
			d->prk[i] = d->rk[d->idx[i]];
		}
		if (scan(&d->w, d->pv + a, d->prk + a, b - a, min, NULL, &q) && q > best)
			best = q;
	}
	return best;
}

/* The permutation p-value of a best split of Q `q`, given up once above `level`. */
static double
permutation_p(struct division *d, double q, const struct detect_opts *o, uint64_t *seed)
{
	int r, ge = 0;

	for (r = 0; r < o->permutations; r++) {
		ge += shuffled_best(d, o->min_size, seed) >= q;
		if ((ge + 1.0) / (o->permutations + 1.0) > o->significance)
			return (ge + 1.0) / (r + 2.0);	/* too many already: an estimate */
	}
	return (ge + 1.0) / (o->permutations + 1.0);
}

static double
median_of(const double *x, int n)
{
	double *c = malloc((n + 1) * sizeof(*c));
	struct stats st;

	if (!c)
		ff_die("out of memory");
	memcpy(c, x, n * sizeof(*c));
	stats_of(c, n, &st);
	free(c);
	return st.median;
}

/* The step at bounds[k] between segments k - 1 and k. */
static void
step_of(const double *x, const int *bounds, int k, struct cp *c)
{
	int a = bounds[k - 1], m = bounds[k], b = bounds[k + 1];
	struct shift sh;

	c->at = m;
	c->before = median_of(x + a, m - a);
	c->after = median_of(x + m, b - m);
	hodges_lehmann(x + a, m - a, x + m, b - m, 0.05, &sh);
	if (c->before != 0) {
		c->step_pct = sh.est / fabs(c->before) * 100;
		c->lo_pct = sh.lo / fabs(c->before) * 100;
		c->hi_pct = sh.hi / fabs(c->before) * 100;
	} else {
		c->step_pct = c->lo_pct = c->hi_pct = NAN;
	}
}

static void
division_init(struct division *d, const double *x, int n)
{
	double med = median_of(x, n);
	int i;

	d->n = n;
	d->v = malloc((n + 1) * sizeof(double));
	d->pv = malloc((n + 1) * sizeof(double));
	d->rk = malloc((n + 1) * sizeof(int));
	d->prk = malloc((n + 1) * sizeof(int));
	d->idx = malloc((n + 1) * sizeof(int));
	d->bounds = malloc((n + 2) * sizeof(int));
	d->tau = malloc((n + 1) * sizeof(int));
	d->q = malloc((n + 1) * sizeof(double));
	if (!d->v || !d->pv || !d->rk || !d->prk || !d->idx || !d->bounds || !d->tau || !d->q)
		ff_die("out of memory");
	/* Centred: the sums stay small whatever the values' magnitude. */
	for (i = 0; i < n; i++)
		d->v[i] = x[i] - med;
	work_init(&d->w, n, rank_of(d->v, n, d->rk));
	d->bounds[0] = 0;
	d->bounds[1] = n;
	d->nb = 2;
}

static void
division_free(struct division *d)
{
	work_free(&d->w);
	free(d->v);
	free(d->pv);
	free(d->rk);
	free(d->prk);
	free(d->idx);
	free(d->bounds);
	free(d->tau);
	free(d->q);
}

int
edivisive(const double *x, int n, const struct detect_opts *o, struct cp **out)
{
	struct division d;
	uint64_t seed = o->seed;
	double *ps = calloc(n + 1, sizeof(double)), *qs = calloc(n + 1, sizeof(double)), p;
	int s, best, k, ncp = 0, at;

	*out = NULL;
	if (!ps || !qs)
		ff_die("out of memory");
	if (n < 2 * o->min_size) {
		free(ps);
		free(qs);
		return 0;
	}
	division_init(&d, x, n);
	segment_best(&d, 0, o->min_size);
	for (;;) {
		best = -1;
		for (s = 0; s + 1 < d.nb; s++)
			if (d.tau[s] && d.q[s] > 0 && (best < 0 || d.q[s] > d.q[best]))
				best = s;
		if (best < 0)
			break;
		p = permutation_p(&d, d.q[best], o, &seed);
		if (p > o->significance)
			break;
		at = d.bounds[best] + d.tau[best];
		ps[at] = p;
		qs[at] = d.q[best];
		memmove(d.bounds + best + 2, d.bounds + best + 1, (d.nb - best - 1) * sizeof(int));
		memmove(d.tau + best + 1, d.tau + best, (d.nb - best - 1) * sizeof(int));
		memmove(d.q + best + 1, d.q + best, (d.nb - best - 1) * sizeof(double));
		d.bounds[best + 1] = at;
		d.nb++;
		segment_best(&d, best, o->min_size);
		segment_best(&d, best + 1, o->min_size);
		ncp++;
	}
	if (ncp) {
		*out = calloc(ncp, sizeof(**out));
		if (!*out)
			ff_die("out of memory");
		for (k = 1; k + 1 < d.nb; k++) {
			step_of(x, d.bounds, k, &(*out)[k - 1]);
			(*out)[k - 1].p = ps[d.bounds[k]];
			(*out)[k - 1].q = qs[d.bounds[k]];
		}
	}
	division_free(&d);
	free(ps);
	free(qs);
	return ncp;
}

int
step_sign(double step_pct, int higher_better, double threshold)
{
	if (!isfinite(step_pct) || fabs(step_pct) <= threshold)
		return 0;
	return (step_pct < 0) == (higher_better != 0) ? 1 : -1;
}

const char *
verdict_name(enum verdict v)
{
	switch (v) {
	case V_WORSE: return "regression";
	case V_BETTER: return "improvement";
	case V_SAME: return "no change";
	case V_NOISE: return "within noise";
	default: return "too few points";
	}
}

/* The median absolute deviation of x[0..n) from med. */
static double
mad_of(const double *x, int n, double med)
{
	double *d = malloc((n + 1) * sizeof(*d)), r;
	int i;

	if (!d)
		ff_die("out of memory");
	for (i = 0; i < n; i++)
		d[i] = fabs(x[i] - med);
	r = median_of(d, n);
	free(d);
	return r;
}

/*
 * The newest point is a regression (or an improvement) when it is beyond
 * the threshold from the stable segment's median, on the worse (better)
 * side, and beyond that segment's noise: 3 robust standard deviations
 * (1.4826 MAD estimates one for normal data), which one earlier outlier
 * hardly moves.
 */
void
newest_verdict(const double *x, int n, const struct cp *cps, int ncp, int higher_better,
	       double threshold, struct newest *nv)
{
	int to = n - 1, from, k = ncp, sign;

	memset(nv, 0, sizeof(*nv));
	nv->v = V_FEW;
	nv->change_pct = NAN;
	for (;;) {
		from = k > 0 ? cps[k - 1].at : 0;
		if (from > to)
			from = to;
		if (to - from >= STABLE_MIN)
			break;
		if (k == 0)
			return;
		to = from;
		k--;
	}
	nv->from = from;
	nv->to = to;
	nv->median = median_of(x + from, to - from);
	nv->noise = 3 * 1.4826 * mad_of(x + from, to - from, nv->median);
	nv->change_pct = nv->median != 0 ? (x[n - 1] - nv->median) / fabs(nv->median) * 100 : NAN;
	sign = step_sign(nv->change_pct, higher_better, threshold);
	/* Beyond the threshold but not beyond the noise is not "no change". */
	if (sign && fabs(x[n - 1] - nv->median) > nv->noise)
		nv->v = sign > 0 ? V_WORSE : V_BETTER;
	else
		nv->v = sign ? V_NOISE : V_SAME;
}
