/*
 * ff-workload's private header: what the files of bin/ff-workload.d share.
 * The program is one binary, bin/ff-workload, linked from their objects.
 *
 *   main.c    options, the workload's row and CPUs, spawning
 *   serve.c   `serve`: the workload's server, started and held
 *   drive.c   `drive`: the client run through the relays, watched, its
 *             events forwarded, its failure named
 *   iperf3.c  iperf3's client, and its JSON read
 *   h2load.c  h2load's client, and its summary and request log read
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
extern cpu_set_t workload_cpus;
extern int have_workload_cpus;
extern struct ff_stage stage;
void spawn_or_die(struct ff_child *c, const char *role, char *const argv[],
		  const char *log, int out_fd);
char *run_path(const char *name);	/* malloc'd: NAME in the run directory */

/* serve.c */
int serve(void);

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

/* iperf3.c */
void start_iperf3(struct drive *d);
int finish_iperf3(struct drive *d);

/* h2load.c */
void start_h2load(struct drive *d);
int finish_h2load(struct drive *d);

#endif
