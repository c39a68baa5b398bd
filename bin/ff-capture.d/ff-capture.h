/*
 * ff-capture's private header: what the files of bin/ff-capture.d share.
 * The program is one binary, bin/ff-capture, linked from their objects.
 *
 *   main.c       options, the stream and the window's stages
 *   check.c      what this machine can capture (--check, --check --json)
 *   perf.c       starting perf (control fifos), watching and finishing it,
 *                perf.data, the pids and the `capture` event
 *   stat.c       perf stat's output parsed, and its figures per byte and op
 *   skstat.c     skstat of each router at the window's end
 *   resources.c  the relays' CPU time and peak memory over the window
 *   machine.c    what the window shared the machine with (resources.machine)
 *   sched.c      the relays' context switches, wakeups and syscalls over the window
 *   wakeups.c    the relays' wakeups from the scheduler's tracepoints
 *   lock.c       lock: perf lock contention of the relays' recording
 */
#ifndef FF_CAPTURE_H
#define FF_CAPTURE_H

#include "ff.h"

#include <limits.h>
#include <sys/types.h>

enum mode { NONE, STAT, RECORD, C2C, MEM, SKSTAT, OFFCPU, LOCK };

#define MAX_TARGETS 16
#define MAX_PIDS 256

struct target {
	char role[16], program[64];
	pid_t pid;
	pid_t holder;		/* its parent at window start (in a run, its ff-topology) */
	int mgmt_port;
	double cpu0, cpu_tick;	/* CPU time at the window's start, at the last interval's end */
	long long rss0;		/* RSS (all its processes) at the window's start; -1: unknown */
	pid_t pids[MAX_PIDS];	/* the process and its descendants at window start */
	int npids;
	struct ff_child perf;	/* stat: perf stat of this relay */
	char *stat_file;
	json_t *stat;		/* the parsed counters */
};

struct capture_opt {
	enum mode mode;
	const char *run_dir, *call_graph;
	const char *roles;	/* --roles: the relays of the topology to capture, or NULL: all */
	long duration, freq;
	double interval;
	int check, json, pipeline_stage;
	int alone;		/* --pid: no stream */
	const char *build;	/* --build LABEL=PATH: skstat is that router's */
	struct target t[MAX_TARGETS];
	int n;
};

/* main.c */
extern struct capture_opt opt;
extern const char *const modes[];
extern json_t *result;		/* the workload's result, once seen */
int sampling(void);

/* check.c: exits (1, or 0 with --check) when the mode cannot capture here */
void check_mode(void);

/*
 * perf.c. record, c2c, mem: one perf for all relays, writing data_out.tmp,
 * which becomes `data` (./perf.data), the previous one kept as
 * perf.data.old.
 */
extern struct ff_child perf;
extern struct ff_out data_out;
extern char data[PATH_MAX + 16];
extern const char *sample_event;	/* NULL: perf's default (cycles) */
json_t *pids_json(const pid_t *pids, int n);
void start_stat(struct target *t);
void start_sampling(void);
void perfs_enable(void);
void watch_perfs(void);
void interrupt(struct ff_child *c);
void finish_child(struct ff_child *c, double timeout);
json_t *capture_event(const char *tool, json_t *files);
void collect_sampling(void);
/* offcpu: perf's own CPU time, at the window's start (end 0) and its end (1) */
void perf_cpu_note(int end);

/*
 * skstat.c: the skstat to run (malloc'd; NULL: none) and its environment
 * settings (NULL: ours): with --build, the build's, else the one on PATH.
 */
char *skstat_program(char *const **env);

/* stat.c */
json_t *parse_stat(const char *text, char **table, const char **missing);
void collect_stats(void);
void emit_stats(void);

/* skstat.c */
void collect_skstat(void);
/* skstat -m of each router as the window opens, for collect_skstat's pool deltas over the window. */
void skstat_before(double window_at);

/* lock.c: perf lock contention of the recording, the `lock` event */
void collect_locks(void);

/* main.c: a relay gone at the window's end; returns when its holder did not end it */
void relay_gone(const struct target *t);

/* resources.c */
extern double window_start;
void resources_begin(double duration);
void resources_end(void);
/*
 * The intervals: when the next one (but the last, which resources_end
 * measures) ends, 0 if none; tick() measures the relays then. A workload's
 * `interval` event (stolen) waits for the relays' figures of the same
 * interval (the n-th of each), or for intervals_done() after the window;
 * emit_result() emits the result (stolen) with them and their steadiness.
 */
double next_tick(void);
void tick(void);
void interval_event(json_t *ev);
void intervals_flush(void);
void intervals_done(void);
void emit_result(json_t *ev);

/* machine.c: readings at the window's start, each interval's end, its end (the object) */
void machine_begin(int alone);
void machine_tick(void);
json_t *machine_end(void);

/* sched.c: the relays' counts at the window's start; relay i's over it, into its object */
void sched_begin(void);
void sched_end(int i, json_t *o);

/*
 * wakeups.c: counters of the wakeups of relay i's threads tids[0..n) and
 * of those they make, opened and enabled now; read (and closed) at the
 * window's end: -1 each when not counted, and why not (NULL: counted).
 */
void wakeups_open(int i, const pid_t *tids, int n);
const char *wakeups_read(int i, long long *woken, long long *made);

#endif
