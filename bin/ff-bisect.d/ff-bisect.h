/*
 * ff-bisect's private header: what the files of bin/ff-bisect.d share.
 *
 * main.c (options, the loop of steps, the end), git.c (git and the other
 * children, run so that a stop reaches them and leaves git's commit
 * checked out), build.c (the user's build command and the cache of
 * builds), step.c (a step's interleaved rounds and their log ratios),
 * call.c (what the log ratios say, valid however often they are looked
 * at), state.c (the state file that lets an interrupted bisect resume).
 */
#ifndef FF_BISECT_H
#define FF_BISECT_H

#include "ff.h"
#include "../ff-bench.d/ff-bench.h"

#include <jansson.h>

/* The options, kept in the state file for --resume. */
struct bopts {
	char *good, *bad;	/* full commit names */
	char *build_cmd;
	const char *workload, *relay, *protocol;
	long warmup, duration, jobs, cpu_limit;
	long rounds, max_rounds;
	char *cache;		/* the builds of this build command: CACHE/<hash> */
	char *output;		/* the results file (absolute) */
	int flamegraph;
};

/* What a step's rounds say about its commit. */
enum call { C_NONE, C_GOOD, C_BAD, C_SKIP };

struct step {
	char *commit;		/* full */
	enum call call;
	int rounds, runs;
	double est, lo, hi;	/* log(mid / good) in %, with its anytime 95% interval */
	double p;		/* the anytime p of the call (mid against the side it is not like) */
	int shown;		/* the call shown (else called by the nearer side) */
	char *why;		/* a skip's reason, or NULL */
	json_t *files;		/* its benches' results files */
};

struct state {
	struct bopts o;
	char *repo;		/* the checkout's top */
	char *path;		/* the state file */
	char *dir;		/* its directory of step files */
	struct step *steps;
	int nsteps, cap;
	int established;	/* GOOD and BAD shown to differ */
};

/* git.c */
extern char *want_head;		/* the commit to leave checked out when stopped */
int git(const char *repo, struct ff_buf *out, ...) __attribute__((sentinel));
char *git_line(const char *repo, ...) __attribute__((sentinel));
void checkout(const char *repo, const char *commit);
/* Run argv in dir (NULL: here), output to log; env NULL-terminated extras. The wait status. */
int run_child(const char *role, char *const argv[], const char *dir, const char *log, char *const env[]);
/* A stop arrived: leave git's commit checked out, save the state, exit 128+n. */
void stop_if_signalled(struct state *s);

/* build.c */
int split_words(const char *s, struct ff_argv *a, struct ff_buf *why);
char *cache_root(const char *given, const char *build_cmd);
char *prefix_of(const struct state *s, const char *commit);
/* Build commit (checked out by this) unless cached; NULL on failure, *why set. */
char *ensure_build(struct state *s, const char *commit, char **why);

/* step.c */
int bench_batch(struct state *s, struct step *st, const char *const commits[3], long rounds);
void step_figures(struct state *s, struct step *st, const char *good, const char *bad);
int gb_change(struct state *s, struct paired *pr);
int metric_of(const char *workload);
char *label_of(const char *commit);

/* call.c */
/* GOOD against BAD, d = log(bad / good) of every round so far in order: 1 when shown to differ. */
int gb_shown(const double *d, int n, struct paired *pr);
/*
 * The midpoint's side from mg = log(mid / good) and mb = log(mid / bad) of
 * its rounds in order, gb_est the sign of BAD's change: C_GOOD, C_BAD, or
 * C_NONE before 3 rounds; *shown when the call is shown, not the nearer side.
 */
enum call mid_call(const double *mg, const double *mb, int n, double gb_est, struct paired *pg,
		   struct paired *pb, int *shown);

/* state.c */
void state_save(const struct state *s);
int state_load(struct state *s);
struct step *step_new(struct state *s, const char *commit);

#endif
