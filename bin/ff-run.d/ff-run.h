/*
 * ff-run.h - what the engine's files share: main.c (the commands and
 * their options), validate.c (their checks), run.c (the pipeline of a
 * run, flamegraph's page), stages.c (the pipeline's stages: groups, stops, ends), hosts.c
 * and hosts_check.c (--hosts) and summary.c (the human summaries).
 */
#ifndef FF_RUN_H
#define FF_RUN_H

#include "ff.h"

#include <limits.h>

/* A command: its name and ff-capture's mode ("none": run). */
struct cmd {
	const char *name, *mode, *help;
};

/* The perf options of the sampling commands. */
struct perf_opt {
	const char *call_graph;
	long freq;
};

/*
 * A run: main's, passed to whatever reads or makes its state. Its options
 * as parsed and checked (lib/ff_runspec.h), perf's, the command's usage
 * for its errors; flamegraph.html in the current directory and its
 * writer; offcpu.html and the time it holds.
 */
struct run {
	struct ff_runspec spec;
	struct perf_opt perf;
	char usage[4096];
	char flame_html[PATH_MAX];
	struct ff_out flame_out;
	char offcpu_html[PATH_MAX + 16];
	double offcpu_us;	/* -1 until folded */
};

/* main.c */
const char *freq_arg(const struct run *run);
int samples(const struct cmd *c);

/* validate.c: what can be known before anything starts */
void validate_run(struct run *run);
void capture_usage(const struct run *run, const struct cmd *c);
void capture_check(const struct run *run, const struct cmd *c);

/* run.c */
noreturn void stopped_by(int sig, const char *rundir);
json_t *run_pipeline(const struct run *run, const struct cmd *c, const char *rundir);
void outputs_check(struct run *run, const struct cmd *c);
void render_flamegraph(struct run *run, json_t *events, const char *rundir);
/* offcpu.c: offcpu's page (offcpu.html here) of the run's recording, and its summary */
void render_offcpu(struct run *run, json_t *events, const char *rundir);
void summarize_offcpu(const struct run *run, json_t *events);
void flamegraph_builds(struct run *run, const struct cmd *c);

/* soak.c: the progress line's figures of the last interval; each relay's growth in the summary */
void progress_interval(const struct run *run, const json_t *ev);
const char *progress_text(void);	/* " | 9.4 Gbit/s | R1 16.8 MiB, 23 files ..." or "" */
int progress_note(const struct run *run, double win_end, double now);	/* not on a terminal: a line now and then */
void growth_line(const char *role, const json_t *r);

/* stages.c: the pipeline's stages, each in a process group of its own */
struct pipeline;
struct pipecmd *stage_argv(const char *role, const char *label, const char *name, struct ff_argv *a);
void stages_start(struct pipeline *p, int json);	/* pipeline_start, the stages watched; json: error events */
void stages_stop(int sig);		/* passed on; the grace starts */
int stages_timeout_ms(void);		/* until the grace ends (-1: no stop yet) */
void stages_enforce(void);		/* past the grace: kill those left, saying so */
int stages_all_ended(void);
void stages_close_sessions(void);
int stages_reap(int *sig);		/* 1 if any failed */

/* hosts.c: --hosts, the stages on other hosts over ssh */
struct pipecmd;
int hosts_parse(const char *spec, int nrelays, int need_address, struct ff_buf *why);
int hosts_any(void);
int hosts_any_remote(void);
const char *hosts_dest(const char *role);	/* [USER@]HOST, or NULL: here */
const char *hosts_address(const char *role);	/* its data address, or NULL: 127.0.0.1 */
int hosts_same(const char *a, const char *b);
int hosts_relays_together(int nrelays);	/* r1 ... rN on one host */
int hosts_relays_remote(int nrelays);	/* any of r1 ... rN on another */
struct pipecmd *hosts_stage(const char *role, const char *name, char *const argv[], int own_dir);
int hosts_fetch(const char *role, const char *remote, const char *local, struct ff_buf *why);
const char *hosts_send_private(const char *role, const char *label, const char *const paths[], int n,
			       const char *scratch, struct ff_buf *why);
void hosts_connect(const char *rundir);
void hosts_disconnect(void);
const char *hosts_lost(const char *role, int status);	/* status: the stage's, or 0 */
/* For hosts_check.c: the roles of --hosts, by place; a command on a host. */
int hosts_count(void);
const char *hosts_role_at(int i);
char *hosts_remote_program(const char *local_path, const char *name);	/* malloc'd */
char *hosts_remote_run(const char *dest, const char *line, int *status);	/* its output, or NULL */
char *hosts_first_line(char *s);	/* trimmed in place, ssh's "\r" too */

/* hosts_check.c: check --hosts */
int hosts_check(const char *workload, const char *relay);

/* summary.c */
const char *role_name(const char *role);
void summarize(const struct run *run, json_t *events, const char *rundir);
void summarize_capture(const struct run *run, const struct cmd *c, json_t *events);

#endif
