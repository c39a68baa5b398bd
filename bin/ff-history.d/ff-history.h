/*
 * ff-history's private header: what the files of bin/ff-history.d share.
 * The program is one binary, bin/ff-history, linked from their objects and
 * from two of ff-bench's (results.o reads results files, stats.o gives the
 * medians and the Hodges-Lehmann shift with its interval), with -lsqlite3.
 */
#ifndef FF_HISTORY_H
#define FF_HISTORY_H

#include "../ff-bench.d/ff-bench.h"

#include <sqlite3.h>

/* The schema this program writes (PRAGMA user_version; db.c documents it). */
#define HISTORY_SCHEMA 1
/* PRAGMA application_id: "flhi", so another program's database is told apart. */
#define HISTORY_APP_ID 0x666c6869

/* Detection defaults (detect.c) */
#define CP_SIGNIFICANCE 0.01	/* a change point's permutation p must be at most this */
#define CP_PERMUTATIONS 199	/* as the ecp package's e.divisive (R = 199) */
#define CP_MIN_SIZE 2		/* points on each side of a split, at least */
#define CP_SEED 1		/* the permutations are the same on every run */
#define STABLE_MIN 3		/* the last stable segment has at least this many points */

/* The E-divisive change points of a series (detect.c) */

struct cp {
	int at;			/* the first point after the change */
	double q, p;		/* the statistic, its permutation p-value */
	double before, after;	/* the medians of the segments on either side */
	double step_pct, lo_pct, hi_pct;	/* Hodges-Lehmann shift, Moses 95% interval, % of before */
};

struct detect_opts {
	double significance;
	int permutations, min_size;
	uint64_t seed;
};
#define DETECT_OPTS_INIT { CP_SIGNIFICANCE, CP_PERMUTATIONS, CP_MIN_SIZE, CP_SEED }

/*
 * The change points of x[0..n) by E-divisive means, in order of place
 * (*out malloc'd; returns how many), each with its step; see detect.c.
 */
int edivisive(const double *x, int n, const struct detect_opts *o, struct cp **out);
/* The E-statistic Q of each split tau of x[0..n) (q[tau], 0 outside [min, n - min]). */
void energy_scan(const double *x, int n, int min_size, double *q);

/*
 * The newest point against the last stable segment: the last segment of
 * STABLE_MIN points or more before it (the newest point left out).
 */
enum verdict { V_FEW, V_SAME, V_NOISE, V_BETTER, V_WORSE };
struct newest {
	enum verdict v;
	int from, to;		/* the stable segment [from, to) */
	double median, change_pct, noise;	/* noise: 3 x 1.4826 x its MAD */
};
void newest_verdict(const double *x, int n, const struct cp *cps, int ncp, int higher_better,
		    double threshold, struct newest *nv);
const char *verdict_name(enum verdict v);
/* Is a step of step_pct worse, beyond the threshold? (1 worse, -1 better, 0 neither) */
int step_sign(double step_pct, int higher_better, double threshold);

/* The database (db.c) */

/* The default path: $XDG_STATE_HOME/flimflam/history.db, else ~/.local/state/... (malloc'd). */
char *db_default_path(void);
/* Open (create when `create`) and check or make the schema; dies with the reason. */
sqlite3 *db_open(const char *path, int create);
void db_close(sqlite3 *db);
/* Run SQL that returns no rows; dies with the reason. */
void db_exec(sqlite3 *db, const char *sql);
sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql);
noreturn void db_die(sqlite3 *db, const char *what);
/* The path being used, for messages (static). */
const char *db_name(void);

/* Adding results files (import.c) */

struct add_opts {
	const char *commit, *label;
};
int add_main(int argc, char *argv[]);

/* Series: points of one case, build label, label, machine and metric (series.c) */

struct filter {
	const char *workload, *relay, *protocol, *label, *host, *metric;
	int all_metrics;	/* --metric all, or export: else the headline metrics only */
};

struct point {
	double v;
	const char *time, *commit, *sha256, *proton, *version;	/* borrowed from the series' strings */
	long long run;
};

struct series {
	char *case_key, *build_label, *label, *env_key, *metric;
	char *title, *machine;	/* for people */
	int higher_better;
	struct point *pts;
	int n;
	size_t cap;
	struct cp *cps;
	int ncp;
	struct newest nv;
	char **strs;		/* strings the points borrow */
	int nstrs;
	size_t capstrs;
};

struct history {
	struct series *s;
	int n;
	size_t cap;
};

/* Filter options in a getopt_long table and their parsing (series.c). */
enum { OPT_DB = FF_OPT_OWN, OPT_LABEL, OPT_HOST, OPT_METRIC, OPT_CHECK, OPT_THRESHOLD,
       OPT_COMMIT, OPT_FORMAT, OPT_JSON };
#define FILTER_LONGOPTS \
	{ "workload", required_argument, NULL, 'w' }, \
	{ "relay", required_argument, NULL, 'r' }, \
	{ "protocol", required_argument, NULL, 'p' }, \
	{ "label", required_argument, NULL, OPT_LABEL }, \
	{ "host", required_argument, NULL, OPT_HOST }, \
	{ "metric", required_argument, NULL, OPT_METRIC }, \
	{ "db", required_argument, NULL, OPT_DB }
int filter_opt(int c, const char *arg, struct filter *f, const char **db);
/* The series the filter selects, each detected when `detect`; dies when none match. */
void history_load(sqlite3 *db, const struct filter *f, int detect, double threshold,
		  struct history *h);
/* Series i and j are of the same case, build label, label and machine. */
int same_group(const struct series *a, const struct series *b);
void history_free(struct history *h);
/* Higher is better for this metric? (Throughput: yes; latency, CPU, memory, errors: no.) */
int metric_higher_better(const char *name);
/* A value of a metric for people ("1.23 Gbit/s", "412 us"), into buf. */
const char *fmt_metric(const char *metric, double v, char *buf, size_t n);
/* One series as JSON: points, change points, the newest point's verdict. */
json_t *series_json(const struct series *s, double threshold);
int show_main(int argc, char *argv[]);

/* export (export.c), report (report.c) */
int export_main(int argc, char *argv[]);
int report_main_h(int argc, char *argv[]);

#endif
