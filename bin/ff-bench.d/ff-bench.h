/*
 * ff-bench's private header: what the files of bin/ff-bench.d share. The
 * program is one binary, bin/ff-bench, linked from their objects.
 */
#ifndef FF_BENCH_H
#define FF_BENCH_H

#include "ff.h"

#include <getopt.h>
#include <stdint.h>
#include <string.h>

#define ALPHA 0.05	/* compare's significance level, and its false discovery rate */
#define MIN_RUNS 5	/* compare's verdict needs this many runs per side */
#define THRESHOLD 2.0	/* compare's --threshold, in percent, by default */

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
 * - With n1 + n2 <= 60, the p-value is exact: under the null hypothesis
 *   each of the C(n1+n2, n1) orderings is equally likely. Without ties,
 *   the number with U = u is the coefficient of q^u in the Gaussian
 *   binomial coefficient [n1+n2 choose n1]_q (the partitions of u that fit
 *   in an n1 x n2 box; e.g. Andrews, The Theory of Partitions, 1976,
 *   Theorem 3.1), which is the product of (1 - q^(n2+i)) / (1 - q^i) for
 *   i = 1..n1. p = 2 P(U <= u), at most 1. (C(60, 30) < 2^63.) With ties,
 *   the permutation distribution of the first sample's sum of midranks,
 *   counted over every choice of its places among the pooled values;
 *   p = 2 min(P(W <= w), P(W >= w)), at most 1 (the distribution need not
 *   be symmetric). So 5 runs of 1.00 against 5 of 0.97 give 2 / 252, the
 *   least any 5 + 5 outcome can, not the normal approximation's 0.0040.
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

/*
 * The Hodges-Lehmann estimate of the shift from a base sample x to a new
 * one y (Hodges and Lehmann, "Estimates of location based on rank tests",
 * Annals of Mathematical Statistics 34(2), 1963, pp. 598-611): the median of
 * the n1 n2 differences y[j] - x[i]. Its confidence interval is Moses's,
 * the one the Mann-Whitney test gives (Lehmann 1975, section 2.6;
 * Hollander and Wolfe, Nonparametric Statistical Methods, section 4.3):
 * with the differences in order D(1) <= ... <= D(n1 n2), the interval
 * [D(k), D(n1 n2 + 1 - k)] covers the true shift with probability
 * 1 - 2 P(U <= k - 1) for continuous data, so k is the largest with
 * 2 P(U <= k - 1) <= alpha:
 * - for n1 + n2 <= 60, from the exact distribution of U (as exact_p);
 * - otherwise k = floor(n1 n2 / 2 - z sqrt(n1 n2 (n1 + n2 + 1) / 12)),
 *   z the 1 - alpha/2 quantile of the standard normal (1.96).
 * k = 0: no interval at this confidence (3 and 3 runs), lo and hi NAN.
 * Without ties the interval leaves out 0 exactly when the exact test's
 * p <= alpha.
 */
struct shift {
	double est, lo, hi;	/* new - base */
	long long k;
	int exact;
};

/* stats.c */
void stats_of(double *v, int n, struct stats *s);
double exact_p(int m, int n, double u);
void mann_whitney(const double *x, int n1, const double *y, int n2, struct utest *t);
double min_p(int n1, int n2);
int need_runs(double alpha);
long long moses_k(int n1, int n2, double alpha, int *exact);
void hodges_lehmann(const double *base, int n1, const double *new, int n2, double alpha,
		    struct shift *s);
void bh_adjust(const double *p, int n, double *q);
/* The change of the medians from x (base) to y (new), in % of the base median; NAN if 0. Sorts both. */
double median_change_pct(double *x, int nx, double *y, int ny);
/* Do the shift and the change of the medians point opposite ways? (Too spread to tell.) */
int signs_disagree(double shift_pct, double median_pct);
double upper_quantile(double a);

/* Metrics, their formats and their meaning (table.c) */

enum {
	M_BITS, M_OPS, M_LAT, M_P50, M_P99, M_CPU_GB, M_CPU_KREQ,	/* compared */
	M_CSW_MB, M_CSW_KOP,	/* compared: the relays' context switches per MB, per 1k ops */
	M_WAKE_MB, M_WAKE_KOP,	/* compared: the wakeups of the relays' threads per MB, per 1k ops */
	M_SYS_MB, M_SYS_KOP,	/* compared: the relays' read and write syscalls per MB, per 1k ops */
	M_R1CPU, M_R1RSS, M_R2CPU, M_R2RSS, M_RELAYCPU, M_P999, M_LATMAX,
	M_RSSEND,		/* every relay's RSS at the window's end, summed */
	M_N
};
#define M_NCMP (M_SYS_KOP + 1)

struct metric {
	const char *key;	/* in compare's JSON */
	const char *title;	/* compare's section */
	int higher_better;
	void (*fmt)(double, char *, size_t);
};
extern const struct metric metrics[M_N];
/* Does metric m mean something for the workload? (Not CPU per GB for request/response.) */
int metric_applies(int m, const char *workload);

/* Results: the runs of a results file or a bench, by case (results.c) */

struct key {
	const char *workload, *relay, *protocol;
	long hops;		/* the relays of the chain; 2 (none: 0) in records without it */
	const char *build;	/* the build's label (bench --build), or NULL */
	long jobs, cpu_limit;
	double duration, warmup;
	long request_size, response_size, rate;	/* builtin-rr, builtin-crr; 1, 1, 0 otherwise */
	long workers;		/* --workers (config.workers); 0: the relay's own setting */
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
	int unsteady;		/* its window was not steady (the record's steadiness) */
	uint64_t id;		/* its identity: run directory, time and repeat, else the whole record */
	/* What its window shared the machine with (ok runs); -1 or NAN: not in the record */
	signed char steady, stalled, shared;	/* steady window; TCP stalled; another run on its CPUs */
	double other_cpu, steal;	/* resources.machine: others' share of the CPUs, steal's of the window */
	int mshared;		/* its window shared the machine (ff_machine_shared) */
	long seed;		/* the bench's shuffle seed (with repeat: its round); -1: none */
	int sequential;		/* a run of bench --repeat auto */
};

struct group {
	struct key k;		/* its names are the group's own */
	struct run *runs;	/* in order */
	int nruns, cap;
	int order;		/* of first appearance */
	json_t *build;		/* the build of its first record, or NULL */
	char *other_sha256;	/* a second build under its label (another sha256), or NULL */
	struct env_kv *env;	/* the distinct environment values of its runs */
	int nenv;
};

/* A field of the environment (or a setting) and one of its values ("none": null or absent). */
#define ENV_NONE "none"
struct env_kv {
	char *name, *value;
};

/* The runs of a results file or a bench, by case. */
struct results {
	int with_warmup;	/* cases differ by warmup too (compare's do not) */
	struct group *g;	/* in order of first appearance */
	int ng, cap;
	int *slot;		/* hash of the keys: index into g + 1, or 0 */
	size_t nslot;
	json_t *env;		/* the first environment */
	json_t *router_env;	/* the first of an ok skrouterd run */
	uint64_t *seen;		/* the identities of the records taken (0: free) */
	long *seen_line;	/* and their lines */
	size_t nseen, cap_seen;
	long line;		/* the line being taken */
	long ndup, dup_line, dup_of;	/* duplicates left out; the first, and its original */
};

int num(const json_t *obj, const char *key, double *out);
int is_status(const json_t *rec, const char *status);
int key_eq(const struct key *a, const struct key *b, int with_warmup);
int same_label(const char *a, const char *b);
int case_eq(const struct key *a, const struct key *b);
void results_free(struct results *r);
void results_of(json_t *records, int with_warmup, struct results *r);
/* Take what the statistics need of a (checked) case record into r; its group (NULL: a duplicate). */
struct group *results_add(struct results *r, const json_t *rec);
const char *status_name(char status);
int group_values(const struct group *g, int m, double **out);
void group_stats(const struct group *g, int m, struct stats *s);
int group_count(const struct group *g, char status);
int group_has(const struct group *g, int m);
void load_results(const char *path, int with_warmup, struct results *r);
/*
 * load_results, calling `fn` with each case record it takes (checked) and
 * where that run went: r->g[group].runs[run]. (The groups move as they
 * grow: keep indices, not pointers.)
 */
typedef void record_fn(const json_t *rec, const struct results *r, int group, int run, void *arg);
void load_results_each(const char *path, int with_warmup, struct results *r, record_fn *fn, void *arg);

/*
 * Paired statistics (paired.c): the runs of two builds in one round of an
 * interleaved bench, as log ratios new/base. est, lo and hi are log ratios
 * (pct_of_log makes them percent); lo, hi NAN: no interval; +-INFINITY: the
 * confidence sequence is unbounded on that side.
 */
struct paired {
	int n, lone;		/* pairs; ok runs without a partner, left out */
	double est, lo, hi, p;
	int exact;
	const char *test;
};
/* The Wilcoxon signed-rank test of d against 0, Hodges-Lehmann and Tukey's interval. */
void signed_rank(const double *d, int n, double alpha, struct paired *r);
/* The anytime-valid confidence sequence and p of d (in round order) after n pairs. */
void conf_seq(const double *d, int n, double alpha, struct paired *r);
/*
 * An adaptive bench's analysis of d after n rounds: the sequence at part
 * of alpha, and with `final` (the case ran to the budget's end, its
 * sequence never deciding) the signed-rank test at the rest; whether the
 * sequence decided at any round (equivalence: within +-thr); the metric
 * the bench decides a case on (-1: none).
 */
void seq_analysis(const double *d, int n, double alpha, int final, struct paired *r);
/* What an interval of log ratios decides: excludes 0 (changed), lies within +-thr (equivalent), neither. */
enum { PAIRED_UNDECIDED, PAIRED_CHANGED, PAIRED_EQUIVALENT };
int paired_decision(const struct paired *p, double thr);
int cs_ever_decided(const double *d, int n, double alpha, double thr);
int decision_metric(const struct group *b, const struct group *n);
int pair_runs(const struct group *b, const struct group *n, int m, double **d, int *lone, int *seq);
/*
 * 1 and r filled when the runs of b and n pair up (one interleaved bench),
 * else 0; of an adaptive bench's, dm is the metric it decided the case on.
 */
int paired_change(const struct group *b, const struct group *n, int m, int dm, double alpha, struct paired *r);
double pct_of_log(double x);

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
const char *hops_label(const char *relay, long hops);

/* Verdicts (verdict.c): what a change is called, and what the gate makes of it */

/* The figures of a change of one metric, NEW (y) against BASE (x). */
struct metric_change {
	struct stats base, new;	/* medians and spreads */
	struct utest t;		/* Mann-Whitney */
	struct shift sh;	/* Hodges-Lehmann, new - base, in the metric's unit */
	double delta_pct;	/* the medians' change, in % of the base median */
	/*
	 * The change in %: the Hodges-Lehmann shift of the logarithms and its
	 * interval, exponentiated (a ratio's interval, not the shift's over
	 * the base median); NAN when a value is <= 0, lo and hi NAN when there
	 * is no interval (too few runs).
	 */
	double chg, lo, hi;
	int too_few;		/* fewer than MIN_RUNS a side */
	int nonpositive;	/* a value <= 0: no ratio, no verdict */
};
void change_figures(const double *x, int nx, const double *y, int ny, struct metric_change *c);

/* What the --threshold gate makes of a verdict. */
enum gate {
	G_PASS,			/* better, no change: decided, not worse */
	G_FAIL,			/* worse, failed, vanished: exit 1 */
	G_UNDECIDED,		/* inconclusive: exit 3 unless something failed */
	G_INFO			/* only in new: nothing to gate */
};

/* What a verdict on one metric of one case rests on. */
struct verdict_in {
	int m;			/* the metric (its direction) */
	int too_few, nonpositive;
	double q;		/* p adjusted for the table (NAN: not tested) */
	double chg, lo, hi;	/* the change and its interval, in % */
	double delta_pct;	/* the medians' change in % (NAN: unknown) */
	const char *doubt;	/* why the sides cannot be held against each other, or NULL */
	double threshold;	/* in % */
};
/*
 * The verdict into text: "better" or "worse" when q < ALPHA and the whole
 * interval lies beyond +-threshold; "no change" when it lies within; else
 * "inconclusive: WHY" (too few runs, a value <= 0, a doubt, the medians and
 * the shift moving apart, no interval, neither within nor beyond). Returns
 * its gate.
 */
enum gate verdict_decide(const struct verdict_in *in, char *text, size_t n);
/* verdict_decide without doubts or medians (report.c); a static buffer. */
const char *verdict_of(int m, int too_few, double q, double chg, double lo, double hi, double threshold);
/* Did NEW fail more often than BASE (any failure where base had none)? */
int failures_rose(int ok_b, int failed_b, int ok_n, int failed_n);

struct gate_count {
	int worse, failed, more_failures, only_base, missing_new;	/* exit 1 */
	int undecided;							/* exit 3 */
};
int gate_exit(const struct gate_count *g);
const char *gate_str(const struct gate_count *g, double threshold, char *buf, size_t n);

/* ff-bench compare (compare.c, sides.c, cmprows.c) */

int compare_main(int argc, char *argv[]);
/* The place of a group's build among bench's --build options (the first is the base); else after them. */
int build_rank(const struct group *g);
void compare_builds(const struct results *r);

/* compare's options */
struct cmp_opts {
	const char *format;	/* text, markdown */
	int json, threshold_set;
	double threshold;
	const char *base_label, *new_label;
};
extern struct cmp_opts cmpopt;

/* A side: a file, and the build of it compared. */
struct side {
	const char *path, *name;	/* name: as the output shows it */
	const struct results *r;
	const char *label;
	int own_file;			/* NEW is a file of its own, not BASE's runs of another build */
};

/*
 * sides.c: what each side ran on, and why two sides' runs may not compare.
 * Conditions differ when the share of runs with unsteady windows, TCP
 * stalls or another run on the relays' CPUs differs by more than
 * DOUBT_SHARE; when the medians of other processes' share of the machine
 * (resources.machine.other_cpu_fraction) differ by more than
 * DOUBT_OTHER_CPU; when steal's median share of the window exceeds
 * DOUBT_STEAL on a side; or when the CPU lists differ. Fields a record
 * lacks are unknown, not a doubt.
 */
#define BENCH_BUILDS_MAX 16	/* --build, at most */
#define DOUBT_SHARE 0.3
#define DOUBT_OTHER_CPU 0.10
#define DOUBT_STEAL 0.05
int compare_env(const struct side *base, const struct side *new);
/* A warning (stderr, the output, a same_build event) when both sides are one sha256. */
void same_build(const struct side *base, const struct side *new, int md);
const char *side_str(const struct results *r, const char *label, char *buf, size_t n);
/* Why case b (base) and n (new) cannot be held against each other: "; " between; NULL for none (malloc'd). */
char *case_doubts(const struct group *b, const struct group *n, int two_files);
void key_json(json_t *ev, const struct key *k);

/* cmprows.c: the tables, and the gate's counts into *gate (added to) */
void compare_cases(const struct side *bs, const struct side *ns, int md, int *matched,
		   struct gate_count *gate);
void compare_unmatched(const struct side *bs, const struct side *ns, int md, int matched,
		       struct gate_count *gate);

/* ff-bench report (report.c): the HTML page of results files */

int report_main(int argc, char *argv[]);
/* explain.c: which functions changed between two builds' recordings */
int explain_main(int argc, char *argv[]);
/* The page of the results files `paths` (n of them) into `out`; 0, or -1 with a warning. */
int report_write(const char *const paths[], int n, const char *out);
/* "Report: PATH", then "Open it in a browser: file://..." on stdout. */
void report_say(const char *path);
/* Where bench puts the page of its results file RESULTS.jsonl: RESULTS.html (malloc'd). */
char *report_path_for(const char *results);

/* ff-bench: running the matrix (bench.c), one run at a time (run.c) */

/* The dimensions of a sweep (sweep.c), each a list of at most SWEEP_MAX values. */
enum sweep_dim { SW_JOBS, SW_REQUEST, SW_RESPONSE, SW_RATE, SW_WORKERS, SW_N };
#define SWEEP_MAX 16

struct bcase {
	const char *workload, *relay, *protocol;
	long hops;		/* the relays of its chain (none: 0) */
	int build;		/* index in opt.builds; -1: no --build */
	long jobs, request_size, response_size, rate;	/* its point of the sweep (sweep.c) */
	long workers;		/* --workers' point; 0: the relay's own setting */
	char skip[384];		/* why it is not run, or "" */
};

/*
 * The bench's options and what every run needs: set up by bench.c, read by
 * run.c. The only mutable file-scope state shared between files.
 */
struct bench_opts {
	const char *workloads[8], *relays[8], *protocols[8];
	int nw, nr, np;
	/* --jobs, --request-size, --response-size, --rate, --workers as lists (nsweep 0: opt.run's one value) */
	long sweep[SW_N][SWEEP_MAX];
	int nsweep[SW_N];
	/* --slo pNN=MS: the capacity search's percentile ("p99") and target; NULL: none */
	const char *slo_pct;
	double slo_ms;
	long hops[FF_HOPS_MAX];	/* --hops: each chain length; nh 0: each relay's own */
	int nh;
	struct ff_run_opts run;
	long repeat;
	const char *output;
	int force, append, tls;
	const char *pool;	/* --pool HOST,HOST,...: GNU parallel's --sshlogin */
	const char *relay_cmd;	/* --relay-cmd: relay cmd's command */
	/* --build LABEL=PATH of the relay under test (-r, one relay) */
	const char *build_args[BENCH_BUILDS_MAX];
	struct ff_build builds[BENCH_BUILDS_MAX];
	json_t *build_json[BENCH_BUILDS_MAX];	/* each build's object, made once */
	int nbuild;
	/* The order of each round's runs: shuffled when set (--build or --seed) */
	long seed;
	int shuffle;
	int record;	/* --record: each run records the relays (record.c) */
	int together;	/* --together: a round's builds of a case run at once */
};
extern struct bench_opts opt;
extern char *engine;		/* ff-run, the engine, beside us */
extern json_t *bench_env;	/* the environment of the bench */
extern int progress_tty;	/* progress on a terminal */
extern int output_gone;		/* stdout's reader is gone: the bench stops (exit 141) */

int bench_main(int argc, char *argv[]);

/*
 * A case that is not run: unsupported by the matrix (lacks NULL), or by the
 * skrouterd on PATH (lacks says what it lacks: "no HTTP adaptor").
 */
struct notrun {
	const char *workload, *relay, *protocol, *lacks;
};

/* The cases of the matrix: those to run or skip, and those not run. */
struct plan {
	struct bcase cases[8 * 8 * 8 * FF_HOPS_MAX];
	struct notrun notrun[8 * 8 * 8];
	int ncases, nnot, nlacks, nrun;
};

/* The order of one round of the plan (shuffled from *state when opt.shuffle), into order. */
void round_order(const struct plan *pl, int *order, uint64_t *state);

/* explain's test (explain_stats.c) */

#define XFN_RUNS 64
/* A function, "sym (module)": its cost in each run of each side, and its test. */
struct xfn {
	char *key;
	double share[2][XFN_RUNS];	/* its samples over the run's (or per MB, per 1k operations) */
	double med[2];			/* median of each side */
	struct utest t;			/* Mann-Whitney */
	struct shift sh;		/* Hodges-Lehmann, new - base, 95% */
	double q;			/* Benjamini-Hochberg across those tested */
	int changed;			/* q < alpha */
};
/*
 * Sort f by the larger median of a side, test the first `top` (changed:
 * q < alpha); returns how many were tested, and *changed how many changed.
 */
int explain_test(struct xfn *f, size_t n, const int nruns[2], long top, double alpha, int *changed);

/* bench --record (record.c) */

void record_opts_check(const char *usage);
void record_start(char *dir, size_t n);
void record_discard(char *dir);
const char *record_finish(char *scratch, const char *run_dir, const json_t *cap, int ok, json_t **capture);

/* bench --pool (pool.c) */

/* Every host of the pool has each build, before anything runs (usage error, or failure, when not). */
void pool_check_builds(const struct plan *pl);
/* Every run of the plan over the pool with GNU parallel; the records into `records`; returns the failed runs. */
int run_pool(const struct plan *pl, const char *parallel, json_t *records, int *done);

/* ff-bench: where the results go (output.c) */

extern int output_lost;		/* the results file took no more: the bench stops (exit 1) */
/*
 * opt.output (a new default name claimed when not given) and its page
 * checked, before anything runs; a new file and page claimed at once.
 */
void output_prepare(void);
/* The page beside the results file, or NULL (a device or FIFO). */
const char *output_page(void);
/*
 * Keep `records` in the results file (locked, written whole; --append's and
 * other benches' lines kept). 0, or -1 after saying what the file keeps,
 * with `records` cut back to it and output_lost set.
 */
int output_save(json_t *records);
/* Room for the bench's runs under $FLIMFLAM_KEEP_RUNS, for its own runs' pruning. */
void keep_runs_room(int nrun);
/* Hold run directory `dir` (see ff_rundir_hold) until the bench ends; one not here is left. */
void hold_run_dir(const char *dir);
json_t *build_of(const struct bcase *c);
json_t *new_record(const struct bcase *c, const char *status, const char *reason,
		   int repeat, const char *time);
const char *clock_str(double s);
int runs_at_once(void);
double run_estimate(void);
/* options.c: the usage, and the options of a bench into opt */
extern const char bench_usage[];
void bench_options(int argc, char *argv[]);
json_t *run_case(const struct bcase *c, int repeat, int k, int n);
int run_cases(const struct bcase *const *cs, int ncs, int repeat, int k, int n, json_t **recs);
/* A run that GNU parallel ran on `host`: its events, stderr and exit code in files. */
json_t *replay_case(const struct bcase *c, int repeat, const char *host, const char *out,
		    const char *err, int exit_status, double elapsed);
/* The last line of `text` that is not empty, without ssh's "\r" (static), or NULL. */
const char *last_line(const char *text);
/* The arguments of `ff-run run --json` for case c after the program, into a. */
void case_args(struct ff_argv *a, const struct bcase *c);

/* Sweeps (sweep.c) */

/* A comma list of numbers for option `name` (ranges as ff_parse_run_opt; none empty or twice): their count. */
int parse_num_list(const char *usage, const char *name, const char *arg, long out[], int max);
/* Sweep option `name` ("--jobs") into opt.sweep, run keeping the largest: 1, or 0 for another option. */
int sweep_take_opt(const char *usage, const char *name, const char *arg, struct ff_run_opts *run);
/* The points of the sweep (the product of the lists' lengths). */
int sweep_points(void);
/* Point i's values into c for `workload`: 1, or 0 when the workload has no such point. */
int sweep_point(int i, const char *workload, const char *relay, struct bcase *c);
/* The run options of case c: opt.run with its point's values. */
void case_run_opts(const struct bcase *c, struct ff_run_opts *run);
/* The sweep's dimensions that differ among g[0..ng), bits 1 << SW_...; "" labels without. */
unsigned sweep_dims(const struct group *g, int ng);
/* " jobs=100 req=64" of k in the dimensions `dims` (static, 4 in turn), or "". */
const char *point_label(const struct key *k, unsigned dims);
/* The relays' memory per connection of each --jobs sweep in g (sorted by cmp_group); nothing without one. */
void print_per_conn(const struct group *g, int ng);

/* bench --slo: the capacity at a latency target (capacity.c) */

/* --slo pNN=MS into opt (a usage error otherwise). */
void slo_parse(const char *usage, const char *arg);
/* --slo's conditions on the other options, once they are known (usage errors). */
void slo_check(const char *usage);
/* Search each case's rate; the runs into `records` (kept as they end); returns the failed runs. */
int run_capacity(const struct bcase *cases, int ncases, json_t *records, int *done);
/* The table of what the searches found, and how each ended. */
void print_capacity(void);

/* bench --repeat auto (auto.c) */

/* 1 when arg is auto[:BUDGET] (kept; a bad budget is one line, exit 2), 0 for a number. */
int repeat_auto(const char *arg);
int auto_on(void);
double auto_budget(void);
/* --repeat auto's conditions on the other options (one line, exit 2). */
void auto_check(void);
/* limits.c: the options' limits, the machine's among them (usage errors, or failures). */
void bench_limits(const char *usage);
/* Before each round (after rounds_done of them): 1 for another (always without auto). */
int auto_more(json_t *records, int rounds_done, int runs_per_round);
/* Case c is decided: it runs no more rounds. */
int auto_decided(const struct bcase *c);
/* After the bench's table: the steadiness of each metric across rounds, and auto's decisions. */
void auto_report(json_t *records);
/* The steadiness table alone (bench summarize too). */
void print_steadiness(const struct results *r);

#endif
