/*
 * ff.h - the helper library every flimflam program shares.
 *
 * Sections follow the implementing files:
 *   ff_err.c    program name, messages, usage, exit
 *   ff_mem.c    memory: allocation, growing arrays, buffers, argument vectors
 *   ff_num.c    option values: numbers, lists; quantities for people
 *   ff_json.c   JSON-lines events (jansson): emit, read
 *   ff_time.c   clocks and timestamps
 *   ff_proc.c   children: spawn, watch, stop; signals
 *   ff_net.c    free ports, LISTEN readiness from /proc/net/tcp
 *   ff_dir.c    run directories
 *   ff_data.c   data files, helper programs, whole files, templates
 *   ff_cpu.c    CPU sets
 *   ff_out.c    output files: atomic replacement, devices, FIFOs, symlinks
 *   ff_stage.c  pipeline stages: the stage loop, holding children
 *   ff_env.c    the environment: versions, OS, CPU, host; integer variables
 *   ff_probe.c  programs run for their output, with a deadline
 *   ff_skrouterd.c  the router: usable?, its schema's features, Proton
 *   ff_elf.c    frame pointers, from a program's debug sections
 *   ff_perf.c   what perf can open
 *   ff_hist.c   latency histograms: record, merge, percentiles, files
 *   ff_load.c   the builtin programs: window event, waits on the clock, threads, failures
 *   ff_build.c  relay builds (--build LABEL=PATH): binary, environment, name
 *   ff_series.c the window as a time series: steadiness, sparklines
 *   ff_tls.c    --tls: the run's CA, the relays' certificates and keys
 *   ff_machine.c what a window shared the machine with: others' CPU, steal, load
 *
 * lib/ff_int.h declares what only the library's files share.
 *
 * Memory: a function returning char * or json_t * hands the caller a
 * reference it must free (free() or json_decref()), unless its comment
 * says "static". ff_emit() steals its argument's reference.
 */
#ifndef FF_H
#define FF_H

#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <sys/types.h>

#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>

#include "ff_matrix.h"	/* the workloads, relays and protocols */

#define FF_VERSION "0.1.0"
#define FF_SCHEMA 1

#define FF_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A macro's value as a string literal: a bound and the message that names it agree. */
#define FF_STR_(x) #x
#define FF_STR(x) FF_STR_(x)

/*
 * A differential flamegraph with fewer samples than this on either side
 * is too coarse to rank what grew and shrank: ff-flame's page and
 * flimflam flamegraph's summary say so.
 */
#define FF_FLAME_RANK_MIN_SAMPLES 1000

/* ff_err.c */

/*
 * Verbosity, from FLIMFLAM_VERBOSITY (set by the dispatcher's --quiet,
 * --verbose, --debug): -1 quiet, 0 normal, 1 verbose, 2 debug.
 */
extern int ff_verbosity;

/*
 * Remember the program name (basename of argv0) and read the verbosity.
 * Every program calls it first: it also puts /dev/null (read-only) in the
 * place of a standard fd that was closed at start, so that no pipe or file
 * opened later becomes stdin, stdout or stderr by accident.
 */
void ff_setprog(const char *argv0);
const char *ff_prog(void);

/* "prog: message\n" to stderr, written in one write(2); errno kept. */
void ff_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Like ff_warn, only at verbosity >= 1 (ff_info) or 2 (ff_debug). */
void ff_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ff_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * What reaches the terminal is printable: these messages, ff_say, ff_print
 * and the log tails of ff_child_report show C0 controls but newline and
 * tab, DEL, C1 controls and bytes that are not UTF-8 as \xHH (the files
 * keep their bytes).
 */
/* printf to stdout, made printable likewise: human text quoting other programs. */
void ff_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Plain text to stderr unless quiet (progress, human notes). */
void ff_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * A status line on a terminal (stderr a tty, not --quiet), rewritten in
 * place and cut to the terminal's width: ff_live shows it, ff_live_clear
 * takes it away. Elsewhere they do nothing: logs stay quiet.
 */
int ff_live_on(void);
void ff_live(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ff_live_clear(void);

/*
 * ff_warn, then run the cleanup hook (stops children), then exit(1).
 * ff_fail is the same with an explicit exit status.
 */
noreturn void ff_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void ff_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The hook ff_die and ff_fail run before exiting (one; last one wins). */
void ff_set_cleanup(void (*fn)(void));
/* Run the cleanup hook and exit(status), saying nothing. */
noreturn void ff_quit(int status);

/*
 * The name a program's usage texts give it ("ff-bench compare"). When
 * flimflam runs the program as one of its commands, it names it so in
 * argv[0] ("flimflam compare"): the usage texts then say that instead,
 * and the synopsis lines aligned under the name move with it.
 */
void ff_usage_self(const char *self);
/* Usage text to stdout and exit(code) (for -h). */
noreturn void ff_usage(const char *usage, int code);
/* "prog: message\n" then the usage synopsis (up to its first blank line), to stderr; exit(2). */
noreturn void ff_usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Flush stdout; a write error other than EPIPE is reported. Returns 0 or 1. */
int ff_finish(void);

/* ff_mem.c */

/* Each of these dies ("out of memory") rather than return NULL. */
/* A formatted string (malloc'd). */
char *ff_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* realloc(3) (n 0 is 1 byte) and strdup(3) (NULL gives NULL). */
void *ff_realloc(void *p, size_t n);
char *ff_strdup(const char *s);
/*
 * An array that grows: room for at least `need` elements of `size` bytes,
 * `*cap` counting what there is room for (0 at first: `first` elements,
 * or 16 when 0, then doubling). FF_GROW(arr, need, cap) for an array
 * variable and its capacity (a size_t).
 */
void *ff_grow(void *p, size_t need, size_t *cap, size_t size, size_t first);
#define FF_GROW(arr, need, cap) \
	((arr) = ff_grow((arr), (need), &(cap), sizeof(*(arr)), 0))
/* A byte buffer, always NUL-terminated once anything was added. */
struct ff_buf {
	char *s;
	size_t len, cap;
};
#define FF_BUF_INIT { NULL, 0, 0 }
void ff_buf_add(struct ff_buf *b, const char *s, size_t n);
void ff_buf_addstr(struct ff_buf *b, const char *s);
void ff_buf_printf(struct ff_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `s` as one word of a POSIX shell's command line: in '...', each ' as '\''. */
void ff_buf_shell_word(struct ff_buf *b, const char *s);
/* The text (malloc'd; "" when empty); the buffer is empty again. */
char *ff_buf_take(struct ff_buf *b);
void ff_buf_free(struct ff_buf *b);
/* An argument vector, NULL-terminated, of copies it owns. */
struct ff_argv {
	char **v;
	size_t n, cap;
};
#define FF_ARGV_INIT { NULL, 0, 0 }
void ff_argv_add(struct ff_argv *a, const char *s);
/* Each argument up to a NULL. */
void ff_argv_addl(struct ff_argv *a, ...) __attribute__((sentinel));
void ff_argv_addf(struct ff_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * The run options as the programs take them: "--jobs" N "--warmup" N
 * "--duration" N, "--cpu-limit" N when `with_cpu_limit`, then those of the
 * request/response workloads that differ from their defaults
 * ("--request-size" N, "--response-size" N, "--rate" N), and "--interval" S.
 */
struct ff_run_opts;
void ff_argv_run_opts(struct ff_argv *a, const struct ff_run_opts *o, int with_cpu_limit);
void ff_argv_free(struct ff_argv *a);

/* ff_num.c */

/*
 * Parse a whole decimal integer for option `opt` in [min, max] (written
 * also as 1e3 or 1.5e3 when whole); anything else (empty, sign where min
 * >= 0, fraction, junk, out of range) is a usage error naming the option.
 */
long ff_parse_long(const char *usage, const char *opt, const char *s,
		   long min, long max);
/*
 * The run options every program shares, each with its one range:
 * "--jobs" 1..65536, "--warmup" 0..86400, "--duration" 1..86400,
 * "--cpu-limit" 0..CPU_SETSIZE, "--freq" 1..1000000, "--request-size" and
 * "--response-size" 1..16777216, "--rate" 1..10000000, "--hops" 1..8
 * (FF_HOPS_MAX). A usage error like
 * ff_parse_long.
 */
long ff_parse_run_opt(const char *usage, const char *opt, const char *s);
/*
 * The run options of flimflam run, ff-bench and ff-workload, taken
 * together: FF_RUN_LONGOPTS in a getopt_long table, and in its loop's
 * default case ff_take_run_opt(), which parses the one getopt returned
 * (returning 1), or returns 0 when it is none of them. A program's own
 * long-only options number from FF_OPT_OWN.
 */
struct ff_run_opts {
	long jobs, warmup, duration, cpu_limit;
	/* The request/response workloads (builtin-rr, builtin-crr): bytes, and transactions/s (0: closed loop). */
	long request_size, response_size, rate;
	/* Seconds between `interval` events of the window (0.1 to the duration). */
	double interval;
};
#define FF_RUN_OPTS_DEFAULTS { 2, 5, 5, 1, 1, 1, 0, 1.0 }	/* the original's defaults */
enum { FF_OPT_JOBS = 0x100, FF_OPT_WARMUP, FF_OPT_DURATION, FF_OPT_CPU_LIMIT,
       FF_OPT_REQUEST_SIZE, FF_OPT_RESPONSE_SIZE, FF_OPT_RATE, FF_OPT_INTERVAL, FF_OPT_OWN };
#define FF_RUN_LONGOPTS \
	{ "jobs", required_argument, NULL, FF_OPT_JOBS }, \
	{ "warmup", required_argument, NULL, FF_OPT_WARMUP }, \
	{ "duration", required_argument, NULL, FF_OPT_DURATION }, \
	{ "cpu-limit", required_argument, NULL, FF_OPT_CPU_LIMIT }, \
	{ "request-size", required_argument, NULL, FF_OPT_REQUEST_SIZE }, \
	{ "response-size", required_argument, NULL, FF_OPT_RESPONSE_SIZE }, \
	{ "rate", required_argument, NULL, FF_OPT_RATE }, \
	{ "interval", required_argument, NULL, FF_OPT_INTERVAL }
int ff_take_run_opt(const char *usage, int c, const char *arg, struct ff_run_opts *o);
/*
 * --interval: "--interval" SECONDS, a number from FF_INTERVAL_MIN; and,
 * once every option is parsed, no longer than --duration (usage errors).
 */
#define FF_INTERVAL_MIN 0.1
double ff_parse_interval(const char *usage, const char *s);
void ff_check_interval(const char *usage, double interval, long duration);
/*
 * The intervals of a window of `duration` s: how many (the last one may be
 * shorter), and where the k-th (0-based) starts and ends, in s from its
 * start. Every program cuts the window the same way.
 */
int ff_intervals_count(double interval, double duration);
double ff_interval_edge(double interval, double duration, int k);
/* 1 if a request/response option differs from its default (ff_argv_run_opts passes those). */
int ff_rr_opts_set(const struct ff_run_opts *o);
/* A decimal number (fractions allowed) in [min, max]; usage error otherwise. */
double ff_parse_double(const char *usage, const char *opt, const char *s,
		       double min, double max);
/*
 * Index of `s` in the NULL-terminated `names`, or a usage error that lists
 * the names: "prog: unknown WHAT 'x' (expected a, b, c)".
 */
int ff_parse_name(const char *usage, const char *what, const char *s,
		  const char *const names[]);
/*
 * getopt_long for every program, with one way of saying what is wrong:
 * an unknown or ambiguous option, a value given to an option that takes
 * none (--json=yes), a missing value, and an option with a value given
 * twice (-w a -w b) are usage errors naming the option. FF_LONGOPT_VERSION
 * in `longopts` is --version: "NAME VERSION" on stdout, exit 0. Returns
 * the option's val, or -1 after the last option (optind as getopt's).
 *
 * FF_LONGOPT_PIPELINE_STAGE in `longopts` is --pipeline-stage, which
 * flimflam gives the stages of its pipelines (and ff-workload the builtin
 * workload it starts): whoever started the program reports why the run
 * ended, so ff_getopt takes it (it is never returned), a signal then stops
 * the program without its own "stopped by" line, and ff_pipeline_stage()
 * is 1.
 */
struct option;
#define FF_OPT_VERSION 0x7ffe
#define FF_LONGOPT_VERSION { "version", no_argument, NULL, FF_OPT_VERSION }
/*
 * FF_LONGOPT_BUILD is --build LABEL=PATH (ff_build.c): the one option
 * ff_getopt lets come more than once (bench takes several builds); a
 * program that takes one says so itself.
 */
#define FF_OPT_BUILD 0x7ffc
#define FF_LONGOPT_BUILD { "build", required_argument, NULL, FF_OPT_BUILD }
/*
 * FF_CHAIN_LONGOPTS: the options of the relay chain that ff-bench and
 * ff-topology both take: --hops N, --tls, --relay-cmd COMMAND and --build.
 */
#define FF_OPT_HOPS 0x7ff9
#define FF_OPT_TLS 0x7ffa
#define FF_OPT_RELAY_CMD 0x7ffb
#define FF_CHAIN_LONGOPTS \
	{ "hops", required_argument, NULL, FF_OPT_HOPS }, \
	{ "tls", no_argument, NULL, FF_OPT_TLS }, \
	{ "relay-cmd", required_argument, NULL, FF_OPT_RELAY_CMD }, \
	FF_LONGOPT_BUILD
#define FF_OPT_PIPELINE_STAGE 0x7ffd
#define FF_LONGOPT_PIPELINE_STAGE { "pipeline-stage", no_argument, NULL, FF_OPT_PIPELINE_STAGE }
int ff_pipeline_stage(void);
int ff_getopt(int argc, char *const argv[], const char *optstring,
	      const struct option *longopts, const char *usage);
/* The usage error for getopt_long's ':' or '?' (ff_getopt calls it). */
noreturn void ff_bad_option(const char *usage, const struct option *longopts, int c,
			    char *const argv[]);
/* qsort's comparison of two doubles, ascending. */
int ff_cmp_double(const void *a, const void *b);
/*
 * Quantities for people: `v` to three significant digits, then `unit`
 * ("2.84", "16.4", "512"; into buf, which is returned).
 */
const char *ff_fmt_sig3(double v, const char *unit, char *buf, size_t n);
/*
 * The same scaled by a prefix, base 1000 (K, M, G, T, P) or 1024 (Ki, Mi,
 * Gi, Ti), with `sep` between number and prefix: ff_fmt_prefixed(2.536e10,
 * 1000, " ", "bit/s") is "25.4 Gbit/s", (17.7e6, 1024, "", "B") "16.9MiB".
 */
const char *ff_fmt_prefixed(double v, int base, const char *sep, const char *unit,
			    char *buf, size_t n);

/* ff_json.c */

/* A new event object {"event": name} (add fields with json_object_set_new). */
json_t *ff_event(const char *name);
/*
 * Write one event as a compact line to stdout and flush; steals `ev`.
 * A write that fails stops the program (ff_write_failed).
 */
void ff_emit(json_t *ev);
/*
 * Stdout cannot be written: a closed pipe (EPIPE) runs the cleanup hook and
 * exits 141 (128 + SIGPIPE) quietly; any other error (ENOSPC, EBADF, EIO)
 * is ff_die's "cannot write to standard output: why".
 */
noreturn void ff_write_failed(void);
/*
 * Before long work whose output comes at its end: ff_write_failed now if
 * stdout is closed (or read-only) or its reader is already gone.
 */
void ff_check_stdout(void);
/* Fail the run: an `error` event with the message, then ff_die with it. */
noreturn void ff_die_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The standard events. */
void ff_emit_start(void);
void ff_emit_end(int status);
/*
 * Strings that come from elsewhere: jansson refuses text that is not
 * UTF-8, so these always make a string (NULL makes null).
 * ff_json_text: human text (messages, a tool's output, versions); each
 *   byte that is not UTF-8 becomes U+FFFD.
 * ff_json_path: a path, as it is when it is UTF-8, else a file: URI
 *   (RFC 8089: "file://" and the absolute path, its bytes but letters,
 *   digits, "-._~/" as %XX). A path itself always starts with '/' (or is
 *   relative), never with "file:", so readers can tell them apart.
 * ff_json_path_value: the path back from either form (malloc'd), or NULL
 *   when `v` is not a string.
 */
json_t *ff_json_text(const char *s);
json_t *ff_json_path(const char *s);
/* The file: URI of a path, as ff_json_path writes it (malloc'd). */
char *ff_file_url(const char *path);
char *ff_json_path_value(const json_t *v);
/* The "event" member, or "" (static). */
const char *ff_event_name(const json_t *ev);
/* The first event of this name in an array of events, or NULL (borrowed). */
json_t *ff_event_find(const json_t *events, const char *name);
/* Number members: the value, or `dflt` when absent, null or not a number. */
double ff_json_num(const json_t *obj, const char *key, double dflt);
/* String member or NULL (borrowed). */
const char *ff_json_str(const json_t *obj, const char *key);

/*
 * Line reader for event streams over a file descriptor, usable with poll:
 * ff_reader_fill() reads what is there (returns bytes read, 0 at EOF, -1 on
 * error); ff_reader_next() returns the next complete event or NULL. A line
 * that is not a JSON object is a warning naming `name` and its line number,
 * and is skipped; with `strict` set, it fails the program (ff_die_event).
 * A line of FF_READER_MAX_LINE bytes without its end is fatal (ff_die),
 * before memory runs out.
 */
#define FF_READER_MAX_LINE (1 << 20)
struct ff_reader {
	int fd;
	const char *name;
	char *buf;
	size_t len, cap;
	long line;
	int eof;
	int strict;
	size_t off;	/* buf[off..len) is not read yet: moved down once per fill, not per line */
};
#define FF_READER_INIT(fd, name) { (fd), (name), NULL, 0, 0, 0, 0, 0, 0 }
ssize_t ff_reader_fill(struct ff_reader *r);
json_t *ff_reader_next(struct ff_reader *r);
void ff_reader_free(struct ff_reader *r);

/* ff_time.c */

/* Monotonic seconds. */
double ff_now(void);
/* The same clock in nanoseconds. */
uint64_t ff_now_ns(void);
/* Current UTC time as "2025-06-01T12:00:00Z" (static). */
const char *ff_iso_time(void);

/* ff_proc.c */

/*
 * Raise this process's soft limit on open files to its hard limit when
 * the soft one is under `need` (LONG_MAX: whenever it is lower).
 */
void ff_raise_nofile(long need);

/* ff_limits.c: what binds a run of many connections, checked before the load */

/*
 * Can --jobs connections be held, a relay's two descriptors per job and
 * 64 more, under the hard limit on open files? A privileged process
 * (CAP_SYS_RESOURCE) raises its hard limit to that, up to fs.nr_open, and
 * what it starts inherits it. 0, or -1 with the reason.
 */
int ff_nofile_for_jobs(long jobs, char *why, size_t n);
/* Do --jobs connections from one address to one port fit net.ipv4.ip_local_port_range? */
int ff_ports_for_jobs(long jobs, char *why, size_t n);
/* nginx's worker_connections (relay-conf/nginx-PROTOCOL.conf): two per job and the listener. */
int ff_nginx_jobs_fit(const char *protocol, long jobs, char *why, size_t n);
/* All of them for a run of `relay` over `protocol`: 0, or -1 with the one that binds in `why`. */
int ff_jobs_fit(const char *relay, const char *protocol, long jobs, char *why, size_t n);

/*
 * A child process in a known role ("server", "r1", "client", ...). It runs
 * in a process group of its own (so a terminal's Ctrl-C reaches flimflam's
 * programs, which then stop their children in order), with
 * PR_SET_PDEATHSIG(SIGTERM) so it does not outlive us even if we are
 * SIGKILLed, stdin from /dev/null, stdout and stderr to `log` (appended)
 * unless out_fd/err_fd say otherwise.
 */
struct ff_child {
	pid_t pid;
	int pidfd;
	char role[32];
	char log[4096];
	int status;	/* wait status once exited */
	int exited;
	int live;	/* in the registry of children to stop */
	int stopped;	/* ff_child_stop stopped it */
};

struct ff_spawn_opts {
	const char *log;	/* NULL: stdout to /dev/null, stderr inherited */
	int out_fd;		/* >= 0: the child's stdout (overrides log) */
	const cpu_set_t *cpus;	/* NULL: inherit affinity */
	const char *dir;	/* working directory, or NULL */
	char *const *env;	/* extra NAME=VALUE settings, NULL-terminated */
	const char *in;		/* a file for its stdin; NULL: /dev/null */
};
#define FF_SPAWN_OPTS_INIT { NULL, -1, NULL, NULL, NULL, NULL }

/* Start argv[0] (PATH search). Returns 0, or -1 with a message already warned. */
int ff_spawn(struct ff_child *c, const char *role, char *const argv[],
	     const struct ff_spawn_opts *o);
/*
 * fork, with the child registered as ff_spawn's are (stopped with the
 * others); 0 in the child, which has no children and default signals.
 */
pid_t ff_fork(struct ff_child *c, const char *role);
/* Non-blocking: 1 if the child has exited (then reaped, status set). */
int ff_child_check(struct ff_child *c);
/* Block until it exits, or `timeout` seconds (< 0: forever). 1 if exited. */
int ff_child_wait(struct ff_child *c, double timeout);
/* SIGTERM, up to `grace` seconds, then SIGKILL to its process group; reap. */
void ff_child_stop(struct ff_child *c, double grace);
/* Stop every live child, most recently started first. */
void ff_children_stop_all(void);
/*
 * How a child ended, for messages (static): "exited with status 1", "was
 * killed by signal 9 (Killed)", "was stopped by ff-capture" when
 * ff_child_stop stopped it, else as ff_status_how.
 */
const char *ff_child_how(const struct ff_child *c);
/*
 * The one wording of a wait status (static): "exited with status 1",
 * "could not run (status 127)", "was killed by signal 9 (Killed)", and
 * "was stopped by SIGINT" for SIGINT, SIGTERM and SIGHUP, and for the exit
 * statuses 128+n that flimflam's programs use when a signal stops them
 * (SIGPIPE too: a closed output).
 */
const char *ff_status_how(int status);
/* "SIGINT", "SIGTERM", ... (static). */
const char *ff_sig_name(int sig);
/*
 * Warn that the child ended unexpectedly, with the tail of its log (of a
 * log that ends with a tool's help text, the lines before the help).
 */
void ff_child_report(const struct ff_child *c);

/*
 * Signals: SIGINT, SIGTERM and SIGHUP are caught and recorded; the fd
 * becomes readable when one arrives (for poll). SIGPIPE is ignored.
 * ff_signalled() is the signal number or 0. ff_exit_signalled() stops the
 * children, says so in one line (not with --pipeline-stage) and exits 128+n.
 */
void ff_signals_init(void);
int ff_signal_fd(void);
int ff_signalled(void);
/*
 * Empty the fd once its wakeup is taken (ff_signalled() stays set): a loop
 * that goes on polling after a signal would otherwise wake at once, always.
 */
void ff_signal_drain(void);
noreturn void ff_exit_signalled(void);
/*
 * In a loop that computes (parses, sorts, sums) for long: a stop that
 * arrived ends the program there (ff_exit_signalled), so a stage honours
 * SIGTERM and SIGINT within a bounded time also while it is busy.
 */
void ff_stop_if_signalled(void);
/*
 * Sleep up to `seconds`, waking early for a signal. Returns 0 when the time
 * passed, -1 on a signal.
 */
int ff_sleep(double seconds);

/*
 * CPU time (user + system) of a process and its descendants, in seconds,
 * to the nanosecond (schedstat; ticks where the kernel has none); -1 if gone.
 */
double ff_proc_cpu_s(pid_t pid);
/* Peak RSS (VmHWM) summed over a process and its descendants, bytes; -1 if gone. */
long long ff_proc_hwm_bytes(pid_t pid);
/* Current RSS (VmRSS) summed likewise, bytes; -1 if gone. */
long long ff_proc_rss_bytes(pid_t pid);
/* pid and its descendants (from /proc/PID/task/TID/children); returns count. */
int ff_proc_tree(pid_t pid, pid_t *out, int max);
/* Is the process's own executable gone or a zombie? 1 alive, 0 not. */
int ff_proc_alive(pid_t pid);
/* Its parent's pid, or 0 if it is gone. */
pid_t ff_proc_parent(pid_t pid);

/* ff_net.c */

/* A TCP port on 127.0.0.1 that was free a moment ago; dies if none. */
int ff_free_port(void);
/*
 * 1 if a socket bound to `port` on loopback or any address is in LISTEN
 * state and belongs to `pid` or one of its descendants; 0 if not.
 */
int ff_port_listening(int port, pid_t pid);
/*
 * Wait until the child listens on `port`. Returns 0 when it does; -1 if the
 * child exited (not reported: see ff_child_lost_port, ff_child_report);
 * -2 if the timeout passed (reported with its log tail) or a signal
 * arrived (ff_signalled() says).
 */
int ff_wait_listen(struct ff_child *c, int port, double timeout);
/*
 * Did the child fail because its port was taken (its log says "in use")?
 * Then the caller retries with another port.
 */
int ff_child_lost_port(const struct ff_child *c);
/*
 * The workload servers: a non-blocking listener on ADDR:PORT (`addr`
 * dotted IPv4, NULL: 127.0.0.1; another address for --hosts; dies with
 * "cannot listen on ADDR:PORT: why"), and the loop that accepts on it
 * (non-blocking, close-on-exec connections, each handed to `adopt`) until
 * SIGTERM or SIGINT; a lack of descriptors or memory is a warning and a
 * pause, not the end.
 */
int ff_listen_on(const char *addr, int port);
/* `addr` parsed as a dotted IPv4 address into *out (network order): 0, or -1. */
int ff_inet_addr(const char *addr, struct in_addr *out);
/* Option `opt`'s value `s`, a dotted IPv4 address, returned; else a usage error naming both. */
const char *ff_parse_ipv4(const char *usage, const char *opt, const char *s);
void ff_accept_loop(int lfd, void (*adopt)(int fd));
/*
 * The counters of this network namespace's TCP (/proc/net/netstat) that
 * tell of stalls: retransmission timeouts (TCPTimeouts), zero-window
 * probes (TCPWinProbe: a sender waited 200 ms or more for its receiver's
 * window to open), entries into memory pressure (TCPMemoryPressures),
 * segments dropped for a full receive queue (TCPRcvQDrop). 0, or -1 when
 * they cannot be read.
 */
struct ff_tcp_stalls {
	long long timeouts, window_probes, memory_pressures, rcvq_drops;
};
int ff_tcp_stalls_read(struct ff_tcp_stalls *s);

/* ff_dir.c */

/*
 * The run directory, always absolute: `given` if not NULL (its last
 * component made if missing, never its parents; it must be ours), else a
 * new one (mode 0700) under the runs directory: $FLIMFLAM_RUNS (only its
 * last component is made), else $XDG_STATE_HOME/flimflam/runs when
 * XDG_STATE_HOME is absolute, else HOME/.local/state/flimflam/runs with
 * HOME from the environment or, unset or empty, the passwd entry (the home
 * must exist; what is below it is made). Static result.
 */
const char *ff_rundir(const char *given);
/* The run directory if ff_rundir has made or taken one, else NULL (makes none). */
const char *ff_rundir_known(void);
/*
 * A new run directory is named by its start time (20261129-223426-XXXXXX);
 * making one removes the oldest not in use beyond the newest $FLIMFLAM_KEEP_RUNS
 * (default 20; 0 keeps all; anything but a whole number up to
 * FF_KEEP_RUNS_MAX is refused).
 */
#define FF_KEEP_RUNS_MAX 100000000L
/*
 * A run directory is in use while a process holds a shared flock on this
 * file in it: the run that made it (from ff_rundir to its exit), a bench
 * that names it. Pruning skips it.
 */
#define FF_IN_USE ".in-use"
/*
 * Hold run directory `dir` (a shared flock on its FF_IN_USE, made if
 * missing) until the returned fd is closed; -1 with errno.
 */
int ff_rundir_hold(const char *dir);
/* mkdir -p with mode; 0 or -1 (errno). */
int ff_mkdirs(const char *path, mode_t mode);
/*
 * Can files be written in `dir`, with at least `need` bytes free? Tried by
 * creating (and removing) a file, since root passes access(2) everywhere.
 * 0, or -1 with the reason in `why`.
 */
int ff_dir_writable(const char *dir, unsigned long long need, char *why, size_t n);

/* ff_data.c */

/*
 * Data files: relay-conf/, share/ and the builtin programs, found beside the
 * executable (a checkout) first, then under the install prefix.
 * ff_datapath("relay-conf/nginx-tcp.conf") -> malloc'd path, or NULL.
 */
char *ff_datapath(const char *rel);
/* The text of data file `rel` (malloc'd); dies, naming it, when it cannot be found or read. */
char *ff_data_text(const char *rel);
/* Path of a helper program: beside us, in libexec, or bare name for PATH. */
char *ff_helper_path(const char *name);
/* Full path of `prog` on PATH, or NULL (malloc'd). */
char *ff_which(const char *prog);
/* Read a whole file (malloc'd, NUL-terminated) or NULL with errno. */
char *ff_read_file(const char *path, size_t *len);
/*
 * The lines of a text in memory (NUL-terminated, as ff_read_file gives it),
 * in one pass: ff_lines_next() cuts the next line at its newline in place
 * (the '\n' becomes NUL) and returns it, or NULL past the end; `complete`
 * says whether that line had its newline (a file cut short has a last line
 * without one), `n` counts the lines returned. Parse a line only once it
 * is cut: sscanf on a line still joined to the rest of a file measures the
 * whole rest (glibc), which makes reading the file quadratic.
 */
struct ff_lines {
	char *p, *end;
	long n;
	int complete;
};
void ff_lines_init(struct ff_lines *l, char *text, size_t len);
char *ff_lines_next(struct ff_lines *l);

/*
 * Fill a template: each @NAME@ is replaced by the value of NAME in the
 * NULL-terminated {name, value, ...} list, written as `syntax` needs so
 * that it stays one value whatever it holds (spaces, tabs, quotes...):
 * nginx: a placeholder inside a "..." string of the template is escaped
 *   (\" and \\); one outside must be a plain word (letters, digits, ._:/+-);
 * nghttpx: key=value lines whose value is the rest of the line, as it is;
 * skrouterd: key: value lines, unquoted: plain words only.
 * No value may hold a newline. An unknown @NAME@ or a value that cannot be
 * written is an error. Values of names ending in _LINES are whole lines the
 * program built itself (quoting what it took from elsewhere): they may hold
 * newlines, never braces. Returns the text or NULL with a warning.
 */
enum ff_conf_syntax { FF_CONF_NGINX, FF_CONF_NGHTTPX, FF_CONF_SKROUTERD };
char *ff_template_fill(const char *tmpl_path, enum ff_conf_syntax syntax,
		       const char *const vars[]);
/* `s` as an nginx "..." string, with " and \ escaped (malloc'd). */
char *ff_nginx_quote(const char *s);
/* This process's user name, for the relays' configs ("nobody" if unknown; static). */
const char *ff_user_name(void);

/* ff_cpu.c */

/* CPUs this process may run on. Returns how many. */
int ff_cpus_available(cpu_set_t *set);
/*
 * The CPUs for slot `index` (0 = R1, 1 = R2, ...) of `n` CPUs each, taken in
 * order from `avail`. Returns 1 if the slot is disjoint from the others,
 * 0 if there were too few CPUs and it wraps (shares).
 */
int ff_cpus_slot(const cpu_set_t *avail, int n, int index, cpu_set_t *out);
/* "0-1,3" (static). */
const char *ff_cpus_str(const cpu_set_t *set);

/* ff_out.c */

/*
 * Every file a program writes goes through these, by what is at its path:
 *  - nothing, or a regular file: written to a temporary file beside it
 *    (NAME.tmp.PID), renamed over it on commit, so no one ever sees half of
 *    it and a failure leaves what was there; a replaced file keeps its mode;
 *  - a character device or a FIFO (/dev/null, /dev/stdout, a named pipe):
 *    written straight into, never replaced;
 *  - a symlink: followed (a dangling one names the file to create), and
 *    the rules apply to what it names;
 *  - a directory, a socket, a block device: refused.
 * `old` (or NULL): keep the file being replaced as `old`, in which '*'
 * stands for its name ("*.old", "old.*"), beside it; a directory or other
 * non-file in that place is refused.
 */
#define FF_OUT_NEW	1	/* refuse an existing regular file ("it exists") */
#define FF_OUT_DEFER	2	/* another program writes `tmp`; nothing is opened */
struct ff_out {
	char given[PATH_MAX];	/* the path as given, for messages */
	char path[PATH_MAX];	/* where it goes, symlinks followed */
	char tmp[PATH_MAX + 32];	/* the temporary file, or "" */
	char old[PATH_MAX + 16];	/* where the replaced file goes, or "" */
	int fd;			/* open for ff_out_write, or -1 */
	int flags, direct, exists;
	mode_t mode;		/* of the existing file */
	char err[2 * PATH_MAX];	/* after a failure: "cannot write 'x': why" */
};
/*
 * Could `path` be written, and the previous one kept as `old`? Fills `o`
 * (path, direct, exists) and writes nothing: for the checks before
 * anything starts. 0, or -1 with `err` ("cannot write 'x': it is a
 * directory", "...: it exists", "...: cannot write in 'DIR': ...").
 */
int ff_out_check(struct ff_out *o, const char *path, int flags, const char *old);
/*
 * Open `path` for writing (the temporary file with `mode`, or the device),
 * or with FF_OUT_DEFER only name `tmp`. A FIFO's open waits for its reader.
 * 0, or -1 with the message in `err` (these functions warn nothing
 * themselves: the caller reports it once, as an event too if it has one).
 */
int ff_out_open(struct ff_out *o, const char *path, int flags, const char *old, mode_t mode);
/* Write it all; 0, or -1 (`err`: ENOSPC on /dev/full). */
int ff_out_write(struct ff_out *o, const void *buf, size_t len);
/*
 * Close, keep the old one, rename into place (or copy a deferred file into
 * the device). 0 or -1 (`err`); the temporary file is gone either way.
 */
int ff_out_commit(struct ff_out *o);
/* Close and remove the temporary file: what was at the path stays. */
void ff_out_abort(struct ff_out *o);
/* ff_out_open, ff_out_write and ff_out_commit of `text`. 0 or -1 with a warning. */
int ff_write_file(const char *path, const char *text, mode_t mode);
/*
 * Claim `path` for a new file of ours: made empty with O_EXCL (two programs
 * at once never both get it), removed at exit while still empty (nothing
 * was written: ff_out_commit's rename replaces it). 0, or -1 with errno
 * (EEXIST: it is taken).
 */
int ff_out_claim(const char *path);
/*
 * Claim a new name: `stem` with each of the `next` endings `ext` (all or
 * none), else stem-2, stem-3...; the stem taken into buf. 0, or -1 (errno).
 */
int ff_out_claim_new(const char *stem, const char *const ext[], int next, char *buf, size_t n);
/*
 * Hold an exclusive flock on directory `dir` until exit (the fd is kept),
 * so that two runs writing `what` ("perf.data") there do not both write it.
 * Returns the fd, or -1 with the reason in `why` ("another flimflam is
 * writing perf.data in 'DIR' now; ...").
 */
int ff_lock_dir(const char *dir, const char *what, char *why, size_t n);

/* ff_stage.c */

/*
 * The stage loop, one for every stage of a pipeline:
 *
 *	ff_stage_begin(&s, 1);			reader on stdin; emits our start
 *	while (!s.ended) {
 *		ff_stage_wait(&s, fds, n, timeout);	poll; read what came
 *		while ((ev = ff_stage_next(&s)))
 *			consume it, or ff_emit(ev) to forward it
 *	}
 *	ff_stage_end(&s, 0);			our end
 *	return ff_stage_hold(&s, kids, n);	(stages that hold processes)
 *
 * Every event is forwarded unless consumed, `start` and `end` included:
 * the stream has one of each per program. The upstream has ended when each
 * start read has its end (`ended`). ff_stage_wait stops the program itself,
 * running the cleanup hook first (which stops its children, in reverse
 * order of start): on SIGINT, SIGTERM or SIGHUP (ff_exit_signalled, exit
 * 128+n); when the reader of stdout has closed it (exit 141, quietly); when
 * stdin cannot be read. ff_emit stops it on a write error. ff_stage_next
 * stops it when the upstream ends without its end: quietly (exit 1) if a
 * stage was upstream (it said why), else with an error; and a line that is
 * not an event is an error too. Up to FF_STAGE_MAX_FDS extra fds (a child's
 * pidfd, a pipe) are polled with the rest; their revents are set on return.
 * The return value is poll's (0: the timeout passed).
 */
#define FF_STAGE_MAX_FDS 64
struct ff_stage {
	struct ff_reader up;	/* fd -1: no upstream (read nothing) */
	int starts, depth;	/* start events read; starts less ends */
	long events;		/* events read */
	int ended;		/* the upstream's stream is complete */
	int done;		/* our end is written */
};
void ff_stage_begin(struct ff_stage *s, int read_upstream);
int ff_stage_wait(struct ff_stage *s, struct pollfd *extra, int n, int timeout_ms);
json_t *ff_stage_next(struct ff_stage *s);
void ff_stage_end(struct ff_stage *s, int status);
/*
 * After our end: hold what the stage started (`kids`) until the reader
 * closes stdout, or a signal says stop (both exit 0: the work was done, as
 * our end said); a held child that exits is reported, and so is the
 * upstream closing the pipe (it said why). Stops every child; returns the
 * exit status (0 or 1).
 */
int ff_stage_hold(struct ff_stage *s, struct ff_child *const kids[], int n);

/*
 * Can the skrouterd at `path` carry `protocol`, and take the tcp
 * `encapsulation` (NULL: the router's default)? Its schema decides (the
 * HTTP adaptor is gone from 3.1 on; `encapsulation` exists from 2.5 to
 * 3.0). What it lacks, in a few words ("no HTTP adaptor", "no tcp
 * encapsulation setting"), in *lacks when it cannot: 1 yes, 0 no, -1 no
 * readable schema (reason in `why`). ff_skrouterd_carries (ff_matrix.h,
 * the skrouterd row's `can`) says it in a sentence.
 */
int ff_skrouterd_can(const char *path, const char *protocol, const char *encapsulation,
		     const char **lacks, char *why, size_t n);
/*
 * CPUs for the workload: those left after `nrelays` relays of `limit` CPUs
 * each, if any are left (returns 1), else all available (returns 0).
 */
int ff_cpus_workload(const cpu_set_t *avail, int limit, int nrelays, cpu_set_t *out);

/* ff_env.c */

/*
 * An integer environment variable in [min, max]; `dflt` when unset or
 * empty. Anything else is "prog: NAME: 'abc' is not a whole number from
 * MIN to MAX" and exit 2.
 */
long ff_env_long(const char *name, long dflt, long min, long max);

/*
 * The environment, for `check`, a topology's `environment` event and every
 * result: an object with kernel, os (PRETTY_NAME of os-release, or null),
 * os_id, os_id_like, cpu_model, cpus_online, cpus_available, cpu_list,
 * hostname; for each of skrouterd, h2load, nghttpd, nghttpx, iperf3, nginx,
 * perf, gcc: {path, version} or null; skrouterd_hash_fnv1a64 (16 hex
 * digits), proton_ldd, skrouterd_schema, skrouterd_features ({http,
 * tcp_encapsulation, encapsulation_default, worker_threads}),
 * skrouterd_frame_pointers (bool or null),
 * nginx_stream_module (path, "builtin" or null), perf_event_paranoid and
 * perf_hardware_counters. FLIMFLAM_OS_RELEASE names another os-release file.
 * Programs run without a shell, each within 5 s.
 */
json_t *ff_env_collect(void);
/* The machine's lines of an environment (os, kernel, cpu, host), to stdout. */
void ff_env_print_machine(const json_t *env);
/*
 * The ngx_stream_module.so the nginx at `nginx` would load (from its
 * --modules-path, or where Debian and Fedora put it), "builtin" when nginx
 * was built with --with-stream, else NULL.
 */
char *ff_env_nginx_stream_module(const char *nginx);

/* ff_probe.c */

/*
 * Run argv (no shell; argv[0] a path or a name on PATH) and return its
 * stdout and stderr together (at most 1 MiB), or NULL if it cannot start.
 * *status (if not NULL) gets the wait status, or -1 when it was stopped
 * after 5 s.
 */
char *ff_env_run(char *const argv[], int *status);
/* The same, stopped after `seconds` (work that takes a while: openssl). */
char *ff_run_within(char *const argv[], int *status, double seconds);
/* The same, its stdin read from the file `in` (no shell to redirect it). */
char *ff_run_from(char *const argv[], const char *in, int *status, double seconds);

/* ff_skrouterd.c */

/*
 * Can flimflam use the skrouterd at `path`? Its --version and --help run
 * together, within 5 s: --version must succeed and print a version, and
 * --help must name the Python directory of a schema that reads (or
 * FLIMFLAM_SKROUTERD_SCHEMA one). 0, or -1 with the reason in `why`.
 */
int ff_skrouterd_check(const char *path, char *why, size_t n);
/* Is this what skrouterd --version prints ("2.7.6", "0.0.0+1a2b3c-main")? */
int ff_skrouterd_version_ok(const char *line);
/* The libqpid-proton*.so mapped in a running process (core preferred), or NULL. */
char *ff_env_proton_maps(pid_t pid);
/*
 * --tls: the names the router at `path` gives, in its own schema, to an
 * sslProfile's CA, certificate and private key (caCertFile or the older
 * certDb, certFile, privateKeyFile or the older keyFile), and whether its
 * listener has requireSsl and its connector verifyHostname and
 * saslMechanisms. 0, or -1 with the reason (no schema, no sslProfile).
 */
struct ff_skr_tls {
	char ca[32], cert[32], key[32];
	int require_ssl, verify_hostname, connector_sasl;
};
int ff_skrouterd_tls(const char *path, struct ff_skr_tls *t, char *why, size_t n);

/* ff_elf.c */

/*
 * Frame pointers from the DW_AT_producer strings GCC leaves in .debug_str
 * or .debug_info: 1 every unit kept them, 0 some did not (counted, with an
 * example producer; the linker merges equal strings, so the counts are of
 * distinct producers, i.e. sets of compiler flags, not of units), -1 unknown (`example` then says why: no debug info at
 * all, i.e. stripped or no -g; compressed; no GCC producer strings).
 */
struct ff_fp_info {
	int units_with, units_without;
	char example[512];
};
int ff_env_frame_pointers(const char *elf_path, struct ff_fp_info *fp);

/* ff_perf.c */

/*
 * perf: open events on a child process. Returns FF_PERF_* bits; `why`
 * (n bytes) says what failed, "; "-separated, or "".
 */
#define FF_PERF_EVENTS   1	/* a software event (task-clock) opens: stat, record */
#define FF_PERF_KERNEL   2	/* ... kernel included (perf_event_paranoid <= 1) */
#define FF_PERF_HARDWARE 4	/* cycles opens: a PMU */
#define FF_PERF_MEMORY   8	/* load sampling for c2c and mem (mem-loads, IBS, SPE) */
int ff_perf_probe(char *why, size_t n);
/* /proc/sys/kernel/perf_event_paranoid, or INT_MIN if unreadable. */
int ff_perf_paranoid(void);

/* ff_hist.c */

/*
 * A latency histogram in nanoseconds, log-linear in the HdrHistogram
 * style: exact below 256 ns, then FF_HIST_SUB buckets per power of two,
 * so a percentile is at most 1/128 (0.8%) above the true value, from
 * 1 us to FF_HIST_MAX_NS. Values beyond are counted in `over` (a
 * percentile among them is the exact maximum). Constant memory (30 KiB),
 * no locks: one per thread, merged at the end.
 */
#define FF_HIST_SUB 128
#define FF_HIST_MAX_NS 60000000000ULL
#define FF_HIST_BUCKETS (29 * FF_HIST_SUB + FF_HIST_SUB)
struct ff_hist {
	uint64_t counts[FF_HIST_BUCKETS];
	uint64_t count, over, min_ns, max_ns, sum_ns;
};
void ff_hist_init(struct ff_hist *h);
void ff_hist_record(struct ff_hist *h, uint64_t ns);
void ff_hist_merge(struct ff_hist *into, const struct ff_hist *from);
/*
 * The value at percentile p (0..100): the top of the bucket holding the
 * ceil(p% of count)-th value, within [min, max]; p 0 is the minimum, 100
 * the maximum; 0 when empty.
 */
uint64_t ff_hist_percentile(const struct ff_hist *h, double p);
double ff_hist_mean_ns(const struct ff_hist *h);
/* [{"percentile":50,"us":12.3}, ...] from the minimum (0) to the maximum (100). */
json_t *ff_hist_distribution_json(const struct ff_hist *h);
/*
 * Into ev: PREFIX_count, PREFIX_avg_us, PREFIX_p50_us, _p90_us, _p99_us,
 * _p999_us (99.9), _p9999_us (99.99) and _max_us (null when empty).
 */
void ff_hist_summary_json(json_t *ev, const char *prefix, const struct ff_hist *h);
/*
 * The histogram file: a JSON object with format "flimflam-histogram",
 * unit "ns", count, over, min_ns, max_ns, sum_ns, buckets (the non-empty
 * ones as [low_ns, high_ns, count]) and distribution. ff_hist_write
 * writes it atomically; ff_hist_read reads it back (-1 with a warning).
 */
json_t *ff_hist_to_json(const struct ff_hist *h);
int ff_hist_from_json(const json_t *o, struct ff_hist *h);
int ff_hist_write(const char *path, const struct ff_hist *h);
int ff_hist_read(const char *path, struct ff_hist *h);

/* ff_load.c */

/*
 * The `window` event: warmup_s, duration_s, time (now, ISO) and
 * monotonic_s, when the window opened on CLOCK_MONOTONIC (ff_now()'s
 * clock, the same in every process of the machine).
 */
void ff_emit_window(long warmup, long duration, double monotonic);
/*
 * Sleep until the monotonic time `when` (ff_now()'s clock). Returns 0 when
 * it came, 1 as soon as `fd` is readable (-1: none), -1 on a signal.
 */
int ff_wait_until(double when, int fd);
/* Seconds rounded to the microsecond, for events. */
double ff_usec(double s);

/* ff_tls.c */

/*
 * The certificates of a --tls run, in RUNDIR/tls (mode 0700): ca.key and
 * ca.crt, a CA of the run's own, and for each role ("r1", ...) ROLE.key
 * and ROLE.crt (CN flimflam-ROLE, subjectAltName DNS:flimflam-ROLE and
 * IP:127.0.0.1, for server and client use), signed by it: EC P-256 keys,
 * mode 0600, made by the openssl command (on PATH) with no configuration
 * file of the machine's. The CA's key stays there: no relay is given it.
 * With FLIMFLAM_TLS_CERTS set to a directory, ca.crt and each ROLE.crt and
 * ROLE.key are copied from there instead (and no CA key exists). 0, or -1
 * with the reason in `why`.
 */
int ff_tls_certs(const char *rundir, const char *const roles[], int nroles, char *why, size_t n);
/* RUNDIR/tls/NAME ("ca.crt", "r1.key"; malloc'd). */
char *ff_tls_file(const char *rundir, const char *name);

/*
 * The threads of the builtin programs. ff_load_threads: how many to start:
 * the CPUs we may use, at most `most` (and at most `jobs` when jobs > 0),
 * at least 1. ff_load_thread: start one that takes no signals (the main
 * thread takes them); dies when it cannot.
 */
int ff_load_threads(int most, long jobs);
void ff_load_thread(pthread_t *tid, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
/* A new epoll instance (close-on-exec); dies when it cannot. */
int ff_load_epoll(void);
/*
 * A client's failure record: its threads report the first failure of a
 * connection (ff_load_fail: connection id 1.., why; later ones are dropped),
 * which wakes the main thread; the main thread waits with ff_load_wait,
 * which, like ff_load_check, ends the program on a signal, or with
 * "connection ID to HOST:PORT failed during the PHASE: WHY" once a
 * connection failed. ff_load_fail_init first, in the main thread (HOST:
 * the address the client connects to, kept).
 */
void ff_load_fail_init(const char *host, int port);
void ff_load_fail(int id, const char *why);
void ff_load_check(const char *phase);
void ff_load_wait(double when, const char *phase);
/* ff_build.c */

/*
 * A relay build: `--build LABEL=PATH`, PATH a relay binary or an install
 * prefix whose sbin/ or bin/ holds it. Its processes run in an environment
 * derived from the build alone (`env`, for ff_spawn_opts): LD_LIBRARY_PATH
 * is the binary's RUNPATH (else RPATH; $ORIGIN expanded), else PREFIX/lib
 * and PREFIX/lib64 where they exist, else unset; for skrouterd, PYTHONPATH
 * is its Python directory (the -I default of its --help, where its schema
 * is) and the Proton binding under PREFIX (a lib directory's
 * python3.N/site-packages or dist-packages holding proton), and `skstat` the PREFIX/bin/skstat beside it (run with
 * `skstat_env`: the build's libraries only with the build's binding).
 * A build without a label is the relay found on PATH, as without --build:
 * its processes inherit the caller's environment.
 */
struct ff_build {
	char *label;		/* NULL: no --build (the program on PATH) */
	const char *relay;	/* static: skrouterd, nginx, nghttpx */
	char *path;		/* the binary, absolute */
	char *prefix;		/* its install prefix, or NULL */
	char *version;		/* the first line of its version output */
	char *ld_library_path, *pythonpath;	/* NULL: unset */
	char *skstat;		/* skrouterd: PREFIX/bin/skstat, or NULL */
	char *env[3];		/* "NAME=VALUE", or "NAME" to unset; NULL-terminated */
	char *skstat_env[3];
};
/* Is s[0..len) a label: 1 to 64 of [A-Za-z0-9._-]? */
int ff_build_label_ok(const char *s, size_t len);
/*
 * "LABEL=PATH" for `relay`: the label is well formed, PATH exists, is (or
 * holds) an executable, and that answers as the relay (its version output;
 * skrouterd: ff_skrouterd_check, run in the build's environment). 0, or -1
 * with "--build LABEL: why" (or "--build 'ARG': why") in `why`.
 */
int ff_build_parse(const char *arg, const char *relay, struct ff_build *b, char *why, size_t n);
/* The same for a label (or NULL) and a path. */
int ff_build_at(const char *label, const char *path, const char *relay, struct ff_build *b,
		char *why, size_t n);
/* The relay's program on PATH as a build without a label; -1 when there is none usable. */
int ff_build_of_path(const char *relay, struct ff_build *b);
void ff_build_free(struct ff_build *b);
/*
 * Put the build's LD_LIBRARY_PATH and PYTHONPATH in this process's
 * environment (for the probes it runs: ff_env_run) until ..._leave puts
 * the caller's back. A build without a label changes nothing.
 */
void *ff_build_env_enter(const struct ff_build *b);
void ff_build_env_leave(const struct ff_build *b, void *saved);
/*
 * The `build` object: {label (null without --build), relay, path, version,
 * sha256 (of the binary), proton: {path, version} or null}. Proton (for
 * skrouterd) is the libqpid-proton*.so mapped in process `pid` when > 0,
 * else what the loader would pick (ldd in the build's environment); its
 * version from pkgconfig/libqpid-proton-core.pc beside it, else null.
 */
json_t *ff_build_json(const struct ff_build *b, pid_t pid);
/* "build main: skrouterd /p/sbin/skrouterd, version V, sha256 0123456789ab; Proton /p/lib/libqpid-proton-core.so.10 0.41.0" */
const char *ff_build_line(const json_t *build, char *buf, size_t n);

/* ff_series.c */

/*
 * The window's steadiness, from its `interval` events (or the intervals of
 * a result): throughput is bytes / dt_s of each interval (operations when
 * no bytes moved), a last interval under half the longest left out. An
 * object {cv_pct, trend_pct, steady, reason}: cv_pct the coefficient of
 * variation of throughput, trend_pct the change from the mean of the first
 * half of the intervals to that of the second, over the mean (an odd
 * count's middle one in neither); unsteady (steady false, reason saying
 * why) when cv_pct is above FF_STEADY_CV_PCT or |trend_pct| above
 * FF_STEADY_TREND_PCT. With fewer than two intervals: nulls, and a reason.
 */
#define FF_STEADY_CV_PCT 10
#define FF_STEADY_TREND_PCT 10
json_t *ff_steadiness(const json_t *intervals);
/* Is the user's locale's character set (LC_ALL, LC_CTYPE, LANG) UTF-8? */
int ff_utf8_locale(void);
/*
 * A sparkline of v[n] (malloc'd): at most `width` columns, each the mean
 * of its share of the values, scaled from the smallest column to the
 * largest (a flat series is a flat line, at the bottom when all zero); the
 * Unicode blocks U+2581..U+2588 when `utf8`, else the ASCII "_.-:=+*#".
 */
char *ff_sparkline(const double *v, size_t n, size_t width, int utf8);

/* ff_relaycmd.c */

/*
 * Relay cmd's --relay-cmd: its words into `words` (split as plain shell
 * words with '...' and "..." quotes and \ escapes, never run by a shell),
 * each {placeholder} known, the program first, and the command naming
 * where to listen ({listen} or {listen_port}) and where to send
 * ({upstream} or {upstream_port}). 0, or -1 with a usage-error message.
 */
int ff_relay_cmd_split(const char *cmd, struct ff_argv *words, char *why, size_t n);
/*
 * A word with its placeholders filled (malloc'd): `values` in the order
 * {listen} (HOST:PORT), {listen_host}, {listen_port}, {upstream},
 * {upstream_host}, {upstream_port}, {dir} (the relay's directory), {role}.
 */
char *ff_relay_cmd_fill(const char *word, const char *const values[]);
/*
 * The program --relay-cmd runs, found on PATH (or the path it names) into
 * `*path` (malloc'd): 0; 2 for a usage error; 1 when it is not there; why
 * in `why`.
 */
int ff_relay_cmd_program(const char *cmd, char **path, char *why, size_t n);

/* ff_machine.c */

/*
 * /proc/stat's figures: busy_s the whole machine's user, nice and system
 * time (guests' included, interrupts not), steal_s the hypervisor's
 * steal, both in seconds since boot (-1: not there); procs_running the
 * runnable tasks now (-1: not there); cpus its cpuN lines (0: none).
 * ff_cpu_stat_parse reads `text` (NULL: nothing), ff_cpu_stat_read the
 * file: 0, or -1 when the busy time or the CPUs are missing.
 */
struct ff_cpu_stat {
	double busy_s, steal_s;
	long long procs_running;
	int cpus;
};
int ff_cpu_stat_parse(const char *text, struct ff_cpu_stat *s);
int ff_cpu_stat_read(struct ff_cpu_stat *s);
/* /proc/loadavg's 1-minute load average (of `text`; NULL: nothing), or -1. */
double ff_loadavg_parse(const char *text);
double ff_load1(void);
/* The mean of /proc/cpuinfo's "cpu MHz" lines (of `text`), or -1. */
double ff_cpuinfo_mhz_parse(const char *text);
/* The CPUs' mean clock in MHz: cpufreq's where readable, else /proc/cpuinfo's; -1: neither. */
double ff_cpu_mhz(void);
/*
 * The CPU seconds of the processes of the trees of roots[n] (each process
 * once): each one's threads', live and ended, and its reaped children's
 * (so a process that ends in a window still counts); -1 if none is there.
 */
double ff_procs_cpu_s(const pid_t *roots, int n);
/*
 * A window's readings: ff_machine_begin at its start, ff_machine_sample
 * as it goes (runnable tasks and the clock are means of the samples),
 * ff_machine_end at its end, the same roots each time (the run's
 * processes); ff_machine_json then gives the `machine` object of the
 * `resources` event: {load1, procs_running, steal_s, other_cpu_s,
 * other_cpu_fraction, run_cpu_s, cpus, cpu_mhz}, null what could not be
 * read. other_cpu_s is the machine's busy time less the run's (never
 * below 0), other_cpu_fraction that over window x cpus.
 */
struct ff_machine {
	double t0, t1;
	struct ff_cpu_stat s0, s1;
	double run0, run1;
	double load1;
	double running_sum, mhz_sum;
	int running_n, mhz_n;
};
void ff_machine_begin(struct ff_machine *m, const pid_t *roots, int n);
void ff_machine_sample(struct ff_machine *m);
void ff_machine_end(struct ff_machine *m, const pid_t *roots, int n);
json_t *ff_machine_json(const struct ff_machine *m);
/*
 * Did the window share the machine? Of a `resources` object (event or a
 * bench row's): a reason in buf ("other processes used 34% of the CPUs")
 * when other_cpu_fraction is over FF_SHARED_OTHER_PCT or steal over
 * FF_SHARED_STEAL_PCT of window_s x cpus; NULL otherwise, or unknown.
 */
#define FF_SHARED_OTHER_PCT 10
#define FF_SHARED_STEAL_PCT 5
const char *ff_machine_shared(const json_t *resources, char *buf, size_t n);

#endif
