/*
 * ff-workload's private header: what the files of bin/ff-workload.d share.
 * The program is one binary, bin/ff-workload, linked from their objects.
 *
 *   main.c    options, the workload's row, driver and CPUs, spawning
 *   serve.c   `serve`: the workload's server, started and held
 *   drive.c   `drive`: the client run through the relays, watched, its
 *             events forwarded, its failure named
 *   workload_NAME.c  a workload's driver (struct workload_driver): its
 *             server's and client's command lines, its output read into
 *             the result (builtin_rr: builtin-rr and builtin-crr; h2load_h1:
 *             h2load-h1, with h2load's client)
 */
#ifndef FF_WORKLOAD_H
#define FF_WORKLOAD_H

#include "ff.h"

#include <sched.h>

/* main.c */
struct workload_opt {
	const char *workload;
	struct ff_run_opts run;
	const char *run_dir;
	long hops;		/* the relays on CPUs of their own before ours */
	const char *listen;	/* serve's server's address */
};
extern struct workload_opt opt;
extern const struct ff_workload *wl;	/* opt.workload's row of the matrix */
extern const struct workload_driver *wdrv;	/* and its driver */
extern cpu_set_t workload_cpus;
extern int have_workload_cpus;
extern struct ff_stage stage;
void spawn_or_die(struct ff_child *c, const char *role, char *const argv[],
		  const char *log, int out_fd);
char *run_path(const char *name);	/* malloc'd: NAME in the run directory */

/* serve.c */
int serve(void);
/* The object the HTTP servers serve, written in `docroot`. */
void write_docroot(const char *docroot);

/* drive.c */
struct drive {
	struct ff_reader client_out;	/* the builtin client's events */
	struct ff_child client;
	json_t *topology;
	const char *host, *path;
	int port;
	pid_t server_pid;		/* from serve's server event */
	double started, window_at;
	double deadline;		/* when the client has overrun */
	int window_sent, client_done, have_result, have_environment;
	char *out_file;			/* iperf3 JSON / h2load text output */
	char *log_file;			/* h2load per-request log */
	char *client_log;
};
int drive(void);
void check_window(const char *tool, double seconds, const char *file);
/* An interval event of the window (every workload's passes moving_check's watch). */
void emit_interval(double t, double dt, json_int_t bytes, json_t *operations, json_t *latency);
/*
 * Before the result: the run fails when nothing moved (no byte, no
 * operation) for MOVING_STILL_S or more of consecutive intervals.
 */
#define MOVING_STILL_S 1.0
void moving_check(void);
void arg_num(struct ff_argv *a, const char *name, long v);

/*
 * A workload's driver: everything ff-workload does differently per
 * workload. Its facts (name, protocols, programs, what it measures, its
 * limits, its version probe) are its row of the matrix (lib/ff_matrix.c);
 * the driver is the code, one file each (workload_NAME.c), listed in
 * main.c's drivers[]. A NULL hook does the common thing.
 */
struct workload_driver {
	const char *name;
	/* The server's command line, program first, listening on opt.listen:`port`. */
	void (*server_args)(int port, struct ff_argv *a);
	/*
	 * Start the client (d->client, its log d->client_log) against
	 * d->host:d->port; `out_fd`: the pipe of its events when the row's
	 * own, else -1.
	 */
	void (*start)(struct drive *d, int out_fd);
	/*
	 * The client exited 0: its output read into samples, intervals and
	 * the result (or the run failed, ff_die_event); 0, or -1 when it
	 * reported none.
	 */
	int (*finish)(struct drive *d);
	/* Why the client failed, from its output beyond its log (malloc'd); NULL: its log only. */
	char *(*said)(const struct drive *d);
};

extern const struct workload_driver workload_builtin, workload_builtin_rr, workload_builtin_crr,
	workload_iperf3, workload_h2load, workload_h2load_h1;

/* workload_builtin.c: flimflam's own programs (the row's own), a driver's hooks. */
void own_server_args(int port, struct ff_argv *a);
void own_start(struct drive *d, int out_fd);
int own_finish(struct drive *d);

/* workload_h2load.c: h2load's client, for h2load-h1 too. */
void start_h2load(struct drive *d, int out_fd);
int finish_h2load(struct drive *d);

#endif
