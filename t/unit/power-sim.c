/*
 * power-sim - simulate ff-bench's paired statistics (bin/ff-bench.d/paired.c,
 * the code itself): how often an A/A bench reads better or worse, and how
 * soon a real change is found, looking after every round as bench --repeat
 * auto does.
 *
 *   power-sim [options] cs      one case, rounds added until its confidence
 *                               sequence decides (excludes 0, or lies within
 *                               +-threshold) or the rounds run out, then the
 *                               signed-rank test too (seq_analysis)
 *   power-sim [options] table   an A/A table: cases x metrics, each case's
 *                               first metric deciding when it stops (alpha
 *                               split over the cases), then every metric's
 *                               p at the stop, Benjamini-Hochberg over the
 *                               table, as compare does; and the same table
 *                               at a fixed number of rounds with the
 *                               signed-rank test
 *   power-sim [options] fixed   one case, the signed-rank test at -r rounds
 *   power-sim signed|seq        the signed-rank test (or the sequence) of the
 *                               numbers on standard input: n, p, est, lo, hi
 *
 * The log ratio of a pair is the difference of two runs' log values: noise
 * -d normal (sd -s percent per run), t3 (Student t, 3 degrees of freedom,
 * the same scale), episodes (normal, and each run with probability 0.15
 * slowed by up to 40%, as a load episode does), or a file of measured log
 * ratios of A/A pairs, drawn with replacement and a random sign. -e adds
 * that change (percent) to every pair. Prints one line of key=value.
 */
#include "../../bin/ff-bench.d/ff-bench.h"

#include <math.h>
#include <stdio.h>

static const char usage[] =
	"usage: power-sim [-t TRIES] [-r ROUNDS] [-s SD_PCT] [-d normal|t3|episodes|FILE]\n"
	"                 [-e CHANGE_PCT] [-c CASES] [-m METRICS] [-T THRESHOLD_PCT] [-x SEED]\n"
	"                 cs|table|fixed|signed|seq\n";

static uint64_t state = 1;

static double
unif(void)
{
	return ff_random_unit(&state);
}

static double
gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

static const char *dist = "normal";
static double sd = 0.03, *measured;
static int nmeasured;

/* One run's log value (noise only). */
static double
run_noise(void)
{
	double z;

	if (!strcmp(dist, "t3")) {
		z = gauss();
		double chi = 0;

		for (int i = 0; i < 3; i++) {
			double g = gauss();

			chi += g * g;
		}
		/* Scaled to the same sd: t3 has variance 3. */
		return sd * z / sqrt(chi / 3) / sqrt(3);
	}
	z = sd * gauss();
	if (!strcmp(dist, "episodes") && unif() < 0.15)
		z += log(1 + 0.4 * unif());
	return z;
}

/* A pair's log ratio with change e (a log ratio). */
static double
pair(double e)
{
	if (measured) {
		double d = measured[(int)(unif() * nmeasured) % nmeasured];

		return e + (unif() < 0.5 ? d : -d);
	}
	/* A drift of the round (+-30%) moves both runs: it cancels. */
	double drift = 0.3 * (2 * unif() - 1);

	return e + (drift + run_noise()) - (drift + run_noise());
}

static void
load_measured(const char *path)
{
	FILE *f = fopen(path, "r");
	double v;
	int cap = 0;

	if (!f) {
		fprintf(stderr, "power-sim: cannot open '%s'\n", path);
		exit(2);
	}
	while (fscanf(f, "%lf", &v) == 1) {
		if (nmeasured == cap)
			measured = ff_realloc(measured, (cap = cap ? 2 * cap : 64) * sizeof(*measured));
		measured[nmeasured++] = v;
	}
	fclose(f);
	if (nmeasured < 2) {
		fprintf(stderr, "power-sim: '%s' holds fewer than 2 numbers\n", path);
		exit(2);
	}
}

/*
 * What bench's analysis says of d[0..n-1], the last round if `final`
 * (paired_decision); its direction in *dir.
 */
static int
decide(const double *d, int n, double alpha, double thr, int final, int *dir)
{
	struct paired r;

	seq_analysis(d, n, alpha, final, &r);
	*dir = r.est > 0 ? 1 : -1;
	return paired_decision(&r, thr);
}

static int
cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void
sim_cs(int tries, int rounds, double e, double thr)
{
	double *d = malloc(rounds * sizeof(*d));
	int *stop = malloc(tries * sizeof(*stop)), found = 0, wrong = 0, equiv = 0, t, n, k = 0, dir;

	for (t = 0; t < tries; t++) {
		int how = 0;

		for (n = 1; n <= rounds && !how; n++) {
			d[n - 1] = pair(e);
			how = decide(d, n, ALPHA, thr, n == rounds, &dir);
		}
		n--;
		if (how == PAIRED_CHANGED && (e == 0 || (dir > 0) == (e > 0)))
			found++;
		else if (how == PAIRED_CHANGED)
			wrong++;
		else if (how == PAIRED_EQUIVALENT)
			equiv++;
		if (how)
			stop[k++] = n;
	}
	qsort(stop, k, sizeof(*stop), cmp_int);
	printf("mode=cs tries=%d rounds=%d change_pct=%g changed=%.4f wrong_direction=%.4f "
	       "equivalent=%.4f undecided=%.4f median_rounds=%d p90_rounds=%d\n", tries, rounds,
	       expm1(e) * 100, (double)found / tries, (double)wrong / tries, (double)equiv / tries,
	       (double)(tries - found - wrong - equiv) / tries, k ? stop[k / 2] : -1,
	       k ? stop[(int)(k * 0.9)] : -1);
	free(d);
	free(stop);
}

static void
sim_fixed(int tries, int rounds, double e)
{
	double *d = malloc(rounds * sizeof(*d));
	int found = 0, t, i;
	struct paired r;

	for (t = 0; t < tries; t++) {
		for (i = 0; i < rounds; i++)
			d[i] = pair(e);
		signed_rank(d, rounds, ALPHA, &r);
		found += r.p < ALPHA && (e == 0 || (r.est > 0) == (e > 0));
	}
	printf("mode=fixed tries=%d rounds=%d change_pct=%g found=%.4f\n", tries, rounds,
	       expm1(e) * 100, (double)found / tries);
	free(d);
}

/* Benjamini-Hochberg over the n p values (their q in q): 1 if any q is below ALPHA. */
static int
any_found(const double *p, double *q, int n)
{
	int i, any = 0;

	bh_adjust(p, n, q);
	for (i = 0; i < n; i++)
		any |= q[i] < ALPHA;
	return any;
}

/* An A/A table of c cases x m metrics, adaptive and fixed: does any read better or worse? */
static void
sim_table(int tries, int rounds, int c, int m, double thr)
{
	double *d = malloc((size_t)c * m * rounds * sizeof(*d)), *p = malloc(c * m * sizeof(*p));
	double *q = malloc(c * m * sizeof(*q));
	int *stopped = malloc(c * sizeof(*stopped)), t, n, i, j, dir, any_auto = 0, any_fixed = 0;
	long total_rounds = 0;
	struct paired r;

	for (t = 0; t < tries; t++) {
		int open = c;

		for (i = 0; i < c; i++)
			stopped[i] = 0;
		/* Rounds until every case's first metric is decided, at alpha / c each. */
		for (n = 1; n <= rounds && open; n++) {
			for (i = 0; i < c * m; i++)
				d[(size_t)i * rounds + n - 1] = pair(0);
			for (i = 0; i < c; i++)
				if (!stopped[i] && decide(d + (size_t)i * m * rounds, n, ALPHA / c, thr, n == rounds, &dir)) {
					stopped[i] = n;
					open--;
				}
		}
		n--;
		total_rounds += n;
		/*
		 * compare on the file: every metric's p at the stop, BH over the
		 * table; a case whose first metric's sequence never decided (at
		 * compare's alpha) ran to the end, and gets the test there too.
		 */
		for (i = 0; i < c * m; i++) {
			const double *first = d + (size_t)(i / m) * m * rounds;

			seq_analysis(d + (size_t)i * rounds, n, ALPHA, !cs_ever_decided(first, n, ALPHA, thr), &r);
			p[i] = r.p;
		}
		any_auto += any_found(p, q, c * m);
		/* The same table with every round run, and the signed-rank test. */
		for (i = 0; i < c * m; i++) {
			for (j = n; j < rounds; j++)
				d[(size_t)i * rounds + j] = pair(0);
			signed_rank(d + (size_t)i * rounds, rounds, ALPHA, &r);
			p[i] = r.p;
		}
		any_fixed += any_found(p, q, c * m);
	}
	printf("mode=table tries=%d cases=%d metrics=%d rounds=%d aa_any_auto=%.4f aa_any_fixed=%.4f "
	       "mean_rounds_auto=%.1f\n", tries, c, m, rounds, (double)any_auto / tries,
	       (double)any_fixed / tries, (double)total_rounds / tries);
	free(d);
	free(p);
	free(q);
	free(stopped);
}

int
main(int argc, char *argv[])
{
	int tries = 1000, rounds = 40, c = 4, m = 7, o;
	double e = 0, thr = log1p(THRESHOLD / 100);

	ff_setprog("power-sim");
	while ((o = getopt(argc, argv, "t:r:s:d:e:c:m:T:x:h")) != -1)
		switch (o) {
		case 't': tries = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 's': sd = atof(optarg) / 100; break;
		case 'd': dist = optarg; break;
		case 'e': e = log1p(atof(optarg) / 100); break;
		case 'c': c = atoi(optarg); break;
		case 'm': m = atoi(optarg); break;
		case 'T': thr = log1p(atof(optarg) / 100); break;
		case 'x': state = strtoull(optarg, NULL, 10); break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	if (optind != argc - 1 || tries < 1 || rounds < 1 || c < 1 || m < 1) {
		fputs(usage, stderr);
		return 2;
	}
	if (strcmp(dist, "normal") && strcmp(dist, "t3") && strcmp(dist, "episodes"))
		load_measured(dist);
	if (!strcmp(argv[optind], "signed") || !strcmp(argv[optind], "seq")) {
		struct paired r;

		load_measured("/dev/stdin");
		if (!strcmp(argv[optind], "seq"))
			conf_seq(measured, nmeasured, ALPHA, &r);
		else
			signed_rank(measured, nmeasured, ALPHA, &r);
		printf("n=%d p=%.10g est=%.10g lo=%.10g hi=%.10g\n", r.n, r.p, r.est, r.lo, r.hi);
	} else if (!strcmp(argv[optind], "cs"))
		sim_cs(tries, rounds, e, thr);
	else if (!strcmp(argv[optind], "table"))
		sim_table(tries, rounds, c, m, thr);
	else if (!strcmp(argv[optind], "fixed"))
		sim_fixed(tries, rounds, e);
	else {
		fputs(usage, stderr);
		return 2;
	}
	return 0;
}
