/*
 * ff-bench's private header: what the files of bin/ff-bench.d share. The
 * program is one binary, bin/ff-bench, linked from their objects.
 */
#ifndef FF_BENCH_H
#define FF_BENCH_H

#include "ff.h"

#include <getopt.h>
#include <string.h>

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

/* Metrics, their formats and their meaning (table.c) */

enum {
	M_BITS, M_OPS, M_LAT, M_P50, M_P99, M_CPU_GB, M_CPU_KREQ,	/* compared */
	M_R1CPU, M_R1RSS, M_R2CPU, M_R2RSS, M_RELAYCPU, M_P999, M_LATMAX,
	M_N
};
#define M_NCMP (M_CPU_KREQ + 1)

struct metric {
	const char *key;	/* in compare's JSON */
	const char *title;	/* compare's section */
	int higher_better;
	void (*fmt)(double, char *, size_t);
};
extern const struct metric metrics[M_N];

/* Results: the runs of a results file or a bench, by case (results.c) */

struct key {
	const char *workload, *relay, *protocol;
	long jobs, cpu_limit;
	double duration, warmup;
	long request_size, response_size, rate;	/* builtin-rr, builtin-crr; 1, 1, 0 otherwise */
	int tls;		/* --tls: the links between relays were TLS */
};

/*
 * One run of a case: what the statistics and the table need, not the
 * record (a results file may hold hundreds of thousands).
 */
struct run {
	char status;		/* 'o'k, 'f'ailed, 's'kipped */
	unsigned have;		/* bit m: v[m] is there */
	double v[M_N];
	long repeat;
	char *reason, *run_dir;	/* failed and skipped runs only */
};

struct group {
	struct key k;		/* its names are the group's own */
	struct run *runs;	/* in order */
	int nruns, cap;
	int order;		/* of first appearance */
};

/* The environment fields compare shows, and their names there. */
#define N_ENV_FIELDS 4
extern const char *const env_fields[N_ENV_FIELDS];
extern const char *const env_field_names[N_ENV_FIELDS];

/* The runs of a results file or a bench, by case. */
struct results {
	int with_warmup;	/* cases differ by warmup too (compare's do not) */
	struct group *g;	/* in order of first appearance */
	int ng, cap;
	int *slot;		/* hash of the keys: index into g + 1, or 0 */
	size_t nslot;
	json_t *env;		/* the first environment */
	json_t *router_env;	/* the first of an ok skrouterd run */
	char envv[N_ENV_FIELDS][2048];	/* distinct values, " | " between */
};

int num(const json_t *obj, const char *key, double *out);
int is_status(const json_t *rec, const char *status);
int key_eq(const struct key *a, const struct key *b, int with_warmup);
void results_free(struct results *r);
void results_of(json_t *records, int with_warmup, struct results *r);
const char *status_name(char status);
int group_values(const struct group *g, int m, double **out);
void group_stats(const struct group *g, int m, struct stats *s);
int group_count(const struct group *g, char status);
int group_has(const struct group *g, int m);
void load_results(const char *path, int with_warmup, struct results *r);

/* Tables and the bench's table (table.c) */

#define MAXCOLS 12

struct row {
	int n;			/* fewer than the columns: the last cell spans the rest */
	char *c[MAXCOLS];
};

struct table {
	int ncols;
	const char *align;	/* 'l' or 'r' per column */
	struct row *rows;	/* rows[0] is the heading */
	int nrows;
};

void fmt_si(double v, char *buf, size_t n);
void fmt_stats(const struct stats *s, int m, const char *pm, char *buf, size_t n);
void trow_v(struct table *t, int n, const char *const cells[]);
void trow(struct table *t, int n, ...);
void table_free(struct table *t);
void table_print(const struct table *t);
void table_print_markdown(const struct table *t);
void print_env(const json_t *env, const char *const progs[]);
const char *const *progs_for(const struct results *r);
int cmp_group(const void *a, const void *b);
void print_results(struct results *res);

/* ff-bench compare (compare.c) */

int compare_main(int argc, char *argv[]);

/* ff-bench: running the matrix (bench.c), one run at a time (run.c) */

struct bcase {
	const char *workload, *relay, *protocol;
	char skip[256];		/* why it is not run, or "" */
};

/*
 * The bench's options and what every run needs: set up by bench.c, read by
 * run.c. The only mutable file-scope state shared between files.
 */
struct bench_opts {
	const char *workloads[8], *relays[8], *protocols[8];
	int nw, nr, np;
	struct ff_run_opts run;
	long repeat;
	const char *output;
	int force, append, tls;
};
extern struct bench_opts opt;
extern char *flimflam;		/* the dispatcher beside us */
extern json_t *bench_env;	/* the environment of the bench */
extern int progress_tty;	/* progress on a terminal */
extern int output_gone;		/* stdout's reader is gone: the bench stops (exit 141) */

int bench_main(int argc, char *argv[]);
json_t *new_record(const struct bcase *c, const char *status, const char *reason,
		   int repeat, const char *time);
const char *clock_str(double s);
double run_estimate(void);
json_t *run_case(const struct bcase *c, int repeat, int k, int n);

#endif
