/*
 * ff.h - the helper library every flimflam program shares.
 *
 * Sections follow the implementing files:
 *   ff_err.c    program name, messages, usage, exit
 *   ff_num.c    option values: numbers, lists; quantities for people
 *   ff_json.c   JSON-lines events (jansson): emit, read
 *   ff_time.c   clocks and timestamps
 *   ff_proc.c   children: spawn, watch, stop; signals
 *   ff_net.c    free ports, LISTEN readiness from /proc/net/tcp
 *   ff_run.c    run directories, data files, templates, CPU sets
 *   ff_stage.c  pipeline stages: holding children, the relay/workload matrix
 *   ff_env.c    environment: versions, Proton, skrouterd schema, perf, frame pointers
 *   ff_hist.c   latency histograms: record, merge, percentiles, files
 *   ff_load.c   the builtin workload clients: window event, waits on the clock
 *
 * Memory: a function returning char * or json_t * hands the caller a
 * reference it must free (free() or json_decref()), unless its comment
 * says "static". ff_emit() steals its argument's reference.
 */
#ifndef FF_H
#define FF_H

#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <sys/types.h>

#include <jansson.h>

#define FF_VERSION "0.1.0"
#define FF_SCHEMA 1

#define FF_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ff_err.c */

/*
 * Verbosity, from FLIMFLAM_VERBOSITY (set by the dispatcher's --quiet,
 * --verbose, --debug): -1 quiet, 0 normal, 1 verbose, 2 debug.
 */
extern int ff_verbosity;

/* Remember the program name (basename of argv0) and read the verbosity. */
void ff_setprog(const char *argv0);
const char *ff_prog(void);

/* "prog: message\n" to stderr, written in one write(2); errno kept. */
void ff_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Like ff_warn, only at verbosity >= 1 (ff_info) or 2 (ff_debug). */
void ff_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ff_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Plain text to stderr unless quiet (progress, human notes). */
void ff_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * ff_warn, then run the cleanup hook (stops children), then exit(1).
 * ff_fail is the same with an explicit exit status.
 */
noreturn void ff_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void ff_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The hook ff_die and ff_fail run before exiting (one; last one wins). */
void ff_set_cleanup(void (*fn)(void));

/* A formatted string (malloc'd); dies when out of memory. */
char *ff_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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

/* ff_num.c */

/*
 * Parse a whole decimal integer for option `opt` in [min, max]; anything
 * else (empty, sign where min >= 0, fraction, junk, overflow) is a usage
 * error naming the option.
 */
long ff_parse_long(const char *usage, const char *opt, const char *s,
		   long min, long max);
/*
 * The run options every program shares, each with its one range:
 * "--jobs" 1..4096, "--warmup" 0..86400, "--duration" 1..86400,
 * "--cpu-limit" 0..CPU_SETSIZE, "--freq" 1..1000000, "--request-size" and
 * "--response-size" 1..16777216, "--rate" 1..10000000. A usage error like
 * ff_parse_long.
 */
long ff_parse_run_opt(const char *usage, const char *opt, const char *s);
/*
 * The four run options of flimflam run, ff-bench and ff-workload, taken
 * together: FF_RUN_LONGOPTS in a getopt_long table, and in its loop's
 * default case ff_take_run_opt(), which parses the one getopt returned
 * (returning 1), or returns 0 when it is none of them. A program's own
 * long-only options number from FF_OPT_OWN.
 */
struct ff_run_opts {
	long jobs, warmup, duration, cpu_limit;
	/* The request/response workloads (builtin-rr, builtin-crr): bytes, and transactions/s (0: closed loop). */
	long request_size, response_size, rate;
};
#define FF_RUN_OPTS_DEFAULTS { 2, 5, 5, 1, 1, 1, 0 }	/* the original's defaults */
enum { FF_OPT_JOBS = 0x100, FF_OPT_WARMUP, FF_OPT_DURATION, FF_OPT_CPU_LIMIT,
       FF_OPT_REQUEST_SIZE, FF_OPT_RESPONSE_SIZE, FF_OPT_RATE, FF_OPT_OWN };
#define FF_RUN_LONGOPTS \
	{ "jobs", required_argument, NULL, FF_OPT_JOBS }, \
	{ "warmup", required_argument, NULL, FF_OPT_WARMUP }, \
	{ "duration", required_argument, NULL, FF_OPT_DURATION }, \
	{ "cpu-limit", required_argument, NULL, FF_OPT_CPU_LIMIT }, \
	{ "request-size", required_argument, NULL, FF_OPT_REQUEST_SIZE }, \
	{ "response-size", required_argument, NULL, FF_OPT_RESPONSE_SIZE }, \
	{ "rate", required_argument, NULL, FF_OPT_RATE }
int ff_take_run_opt(const char *usage, int c, const char *arg, struct ff_run_opts *o);
/*
 * Append to argv the request/response options that differ from their
 * defaults ("--request-size N", "--response-size N", "--rate N"), their
 * values written in buf. Returns how many strings were appended (0..6).
 */
int ff_rr_opts_argv(const struct ff_run_opts *o, char *argv[], char buf[3][24]);
/* 1 if any of those differs from its default. */
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
 * After getopt_long (with a leading ':' in optstring) returned ':' or '?':
 * the usage error for a missing value or an unknown option.
 */
noreturn void ff_bad_option(const char *usage, int c, char *const argv[]);
/* qsort's comparison of two doubles, ascending. */
int ff_cmp_double(const void *a, const void *b);
/* "a, b, c" from a NULL-terminated list (static buffer). */
const char *ff_join_names(const char *const names[]);
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
 * A closed stdout (EPIPE) is not an error here: ff_stdout_closed() says so.
 */
void ff_emit(json_t *ev);
int ff_stdout_closed(void);
/* The standard events. */
void ff_emit_start(void);
void ff_emit_end(int status);
void ff_emit_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The "event" member, or "" (static). */
const char *ff_event_name(const json_t *ev);
/* Number members: the value, or `dflt` when absent, null or not a number. */
double ff_json_num(const json_t *obj, const char *key, double dflt);
/* String member or NULL (borrowed). */
const char *ff_json_str(const json_t *obj, const char *key);

/*
 * Line reader for event streams over a file descriptor, usable with poll:
 * ff_reader_fill() reads what is there (returns bytes read, 0 at EOF, -1 on
 * error); ff_reader_next() returns the next complete event or NULL. A line
 * that is not a JSON object is a warning naming `name` and its line number,
 * and is skipped.
 */
struct ff_reader {
	int fd;
	const char *name;
	char *buf;
	size_t len, cap;
	long line;
	int eof;
};
#define FF_READER_INIT(fd, name) { (fd), (name), NULL, 0, 0, 0, 0 }
ssize_t ff_reader_fill(struct ff_reader *r);
json_t *ff_reader_next(struct ff_reader *r);
/* Blocking: the next event, or NULL at EOF. */
json_t *ff_reader_get(struct ff_reader *r);
void ff_reader_free(struct ff_reader *r);

/* ff_time.c */

/* Monotonic seconds. */
double ff_now(void);
/* Current UTC time as "2025-06-01T12:00:00Z" (static). */
const char *ff_iso_time(void);

/* ff_proc.c */

/*
 * Raise this process's soft limit on open files to its hard limit when
 * the soft one is under `need` (LONG_MAX: whenever it is lower).
 */
void ff_raise_nofile(long need);

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
};

struct ff_spawn_opts {
	const char *log;	/* NULL: stdout to /dev/null, stderr inherited */
	int out_fd;		/* >= 0: the child's stdout (overrides log) */
	const cpu_set_t *cpus;	/* NULL: inherit affinity */
	const char *dir;	/* working directory, or NULL */
	char *const *env;	/* extra NAME=VALUE settings, NULL-terminated */
};
#define FF_SPAWN_OPTS_INIT { NULL, -1, NULL, NULL, NULL }

/* Start argv[0] (PATH search). Returns 0, or -1 with a message already warned. */
int ff_spawn(struct ff_child *c, const char *role, char *const argv[],
	     const struct ff_spawn_opts *o);
/* Non-blocking: 1 if the child has exited (then reaped, status set). */
int ff_child_check(struct ff_child *c);
/* Block until it exits, or `timeout` seconds (< 0: forever). 1 if exited. */
int ff_child_wait(struct ff_child *c, double timeout);
/* SIGTERM, up to `grace` seconds, then SIGKILL to its process group; reap. */
void ff_child_stop(struct ff_child *c, double grace);
/* Stop every live child, most recently started first. */
void ff_children_stop_all(void);
/* "exited with status 1" / "was killed by signal 9 (Killed)" (static). */
const char *ff_child_how(const struct ff_child *c);
/* Warn that the child ended unexpectedly, with the tail of its log. */
void ff_child_report(const struct ff_child *c);
/* The last `lines` lines of a file, to stderr, indented. */
void ff_log_tail(const char *path, int lines);

/*
 * Signals: SIGINT, SIGTERM and SIGHUP are caught and recorded; the fd
 * becomes readable when one arrives (for poll). SIGPIPE is ignored.
 * ff_signalled() is the signal number or 0. ff_exit_signalled() stops the
 * children, says so in one line and exits 128+n.
 */
void ff_signals_init(void);
int ff_signal_fd(void);
int ff_signalled(void);
noreturn void ff_exit_signalled(void);
/*
 * Sleep up to `seconds`, waking early for a signal. Returns 0 when the time
 * passed, -1 on a signal.
 */
int ff_sleep(double seconds);

/* CPU time (user + system) of a process and its descendants, in seconds; -1 if gone. */
double ff_proc_cpu_s(pid_t pid);
/* Peak RSS (VmHWM) summed over a process and its descendants, bytes; -1 if gone. */
long long ff_proc_hwm_bytes(pid_t pid);
/* pid and its descendants (from /proc/PID/task/TID/children); returns count. */
int ff_proc_tree(pid_t pid, pid_t *out, int max);
/* Is the process's own executable gone or a zombie? 1 alive, 0 not. */
int ff_proc_alive(pid_t pid);

/* ff_net.c */

/* A TCP port on 127.0.0.1 that was free a moment ago; dies if none. */
int ff_free_port(void);
/*
 * 1 if a socket bound to `port` on loopback or any address is in LISTEN
 * state and belongs to `pid` or one of its descendants; 0 if not.
 */
int ff_port_listening(int port, pid_t pid);
/* 1 if anything listens on the port (any owner). */
int ff_port_in_use(int port);
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
 * The workload servers: a non-blocking listener on 127.0.0.1:PORT (dies
 * with "cannot listen on 127.0.0.1:PORT: why"), and the loop that accepts
 * on it (non-blocking, close-on-exec connections, each handed to `adopt`)
 * until SIGTERM or SIGINT; a lack of descriptors or memory is a warning
 * and a pause, not the end.
 */
int ff_listen_loopback(int port);
void ff_accept_loop(int lfd, void (*adopt)(int fd));

/* ff_run.c */

/*
 * The run directory: `given` if not NULL (created if missing, must be
 * ours), else a new one (mode 0700) under ff_runs_base(). Static result.
 */
const char *ff_rundir(const char *given);
/*
 * A new run directory is named by its start time (20261129-223426-XXXXXX);
 * making one removes the oldest beyond the newest $FLIMFLAM_KEEP_RUNS
 * (default 20; 0 keeps all).
 */
/* Remove a directory tree (no symlinks followed). 0 or -1. */
int ff_remove_tree(const char *path);
/* $FLIMFLAM_RUNS, else ${XDG_STATE_HOME:-$HOME/.local/state}/flimflam/runs. */
const char *ff_runs_base(void);
/* mkdir -p with mode; 0 or -1 (errno). */
int ff_mkdirs(const char *path, mode_t mode);

/*
 * Data files: relay-conf/, share/ and the builtin programs, found beside the
 * executable (a checkout) first, then under the install prefix.
 * ff_datapath("relay-conf/nginx-tcp.conf") -> malloc'd path, or NULL.
 */
char *ff_datapath(const char *rel);
/* The directory of this program's executable (static). */
const char *ff_exedir(void);
/* Path of a helper program: beside us, in libexec, or bare name for PATH. */
char *ff_helper_path(const char *name);
/* Full path of `prog` on PATH, or NULL (malloc'd). */
char *ff_which(const char *prog);

/*
 * Fill a template: each @NAME@ is replaced by the value of NAME in the
 * NULL-terminated {name, value, ...} list. An unknown @NAME@ or a value
 * holding a newline, brace, semicolon, quote, '#' or '@' is an error (the
 * value would inject configuration). Values of names ending in _LINES are
 * whole lines the program built itself: they may hold newlines and
 * semicolons, never braces. Returns the text or NULL with a warning.
 */
char *ff_template_fill(const char *tmpl_path, const char *const vars[]);
/* This process's user name, for the relays' configs ("nobody" if unknown; static). */
const char *ff_user_name(void);
/* Read a whole file (malloc'd, NUL-terminated) or NULL with errno. */
char *ff_read_file(const char *path, size_t *len);
/*
 * Can files be written in `dir`, with at least `need` bytes free? Tried by
 * creating (and removing) a file, since root passes access(2) everywhere.
 * 0, or -1 with the reason in `why`.
 */
int ff_dir_writable(const char *dir, unsigned long long need, char *why, size_t n);
/* Write `text` to `path` atomically (temp + rename). 0 or -1 with a warning. */
int ff_write_file(const char *path, const char *text, mode_t mode);

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

/* ff_stage.c */

/*
 * Hold what a stage started until its reader closes the pipe (stdout
 * POLLERR), watching the children and, when `watch_stdin`, the upstream.
 * Returns 0 when the reader closed, 1 when a child exited (reported with
 * its log tail), 2 when the upstream ended (stdin EOF), -1 on a signal.
 */
int ff_hold(struct ff_child *const kids[], int n, int watch_stdin);

/* The matrix of DESIGN.md: workloads, relays, protocols. */
extern const char *const ff_workloads[];	/* builtin, iperf3, h2load, h2load-h1, builtin-rr, builtin-crr */
extern const char *const ff_relays[];		/* skrouterd, nghttpx, nginx, none */
extern const char *const ff_protocols[];	/* tcp, http1, http2 */
/* 1 if the workload can use the protocol and the relay can carry it. */
int ff_combo_ok(const char *workload, const char *relay, const char *protocol);
/* "builtin/none/tcp, ..." the combinations that work for a workload or relay (static). */
const char *ff_combos_for(const char *workload, const char *relay);
/*
 * Can the relay program at `path` carry `protocol`, and take the tcp
 * `encapsulation` (NULL: the router's default)? For skrouterd the installed
 * schema decides (the HTTP adaptor is gone from 3.1 on; `encapsulation`
 * exists from 2.5 to 3.0). 1 yes; 0 no, with the reason in `why`; -1 when
 * the schema cannot be found or read (reason in `why`).
 */
int ff_relay_can(const char *relay, const char *path, const char *protocol,
		 const char *encapsulation, char *why, size_t n);
/*
 * The same for the skrouterd at `path`, with what it lacks in a few words
 * ("no HTTP adaptor", "no tcp encapsulation setting") in *lacks when it
 * cannot: 1 yes, 0 no, -1 no readable schema (reason in `why`).
 */
int ff_skrouterd_can(const char *path, const char *protocol, const char *encapsulation,
		     const char **lacks, char *why, size_t n);
/* The program a relay or workload server/client needs on PATH. */
const char *ff_relay_program(const char *relay);
const char *ff_workload_server_program(const char *workload);
const char *ff_workload_client_program(const char *workload);
/* 1 for the request/response workloads (builtin-rr, builtin-crr): their sizes, rate and latency. */
int ff_workload_is_rr(const char *workload);
/*
 * CPUs for the workload: those left after `nrelays` relays of `limit` CPUs
 * each, if any are left (returns 1), else all available (returns 0).
 */
int ff_cpus_workload(const cpu_set_t *avail, int limit, int nrelays, cpu_set_t *out);

/* ff_env.c */

/*
 * The environment, for `check`, a topology's `environment` event and every
 * result: an object with kernel, os (PRETTY_NAME of os-release, or null),
 * os_id, os_id_like, cpu_model, cpus_online, cpus_available, cpu_list,
 * hostname; for each of skrouterd, h2load, nghttpd, nghttpx, iperf3, nginx,
 * perf, gcc: {path, version} or null; skrouterd_hash_fnv1a64 (16 hex
 * digits), proton_ldd, skrouterd_schema, skrouterd_features (see
 * ff_skr_features_json), skrouterd_frame_pointers (bool or null),
 * nginx_stream_module (path, "builtin" or null), perf_event_paranoid and
 * perf_hardware_counters. FLIMFLAM_OS_RELEASE names another os-release file.
 * Programs run without a shell, each within 5 s.
 */
json_t *ff_env_collect(void);
/* The machine's lines of an environment (os, kernel, cpu, host), to stdout. */
void ff_env_print_machine(const json_t *env);
/*
 * Run argv (no shell; argv[0] a path or a name on PATH) and return its
 * stdout and stderr together (at most 1 MiB), or NULL if it cannot start.
 * *status (if not NULL) gets the wait status, or -1 when it was stopped
 * after 5 s.
 */
char *ff_env_run(char *const argv[], int *status);
/* First line of `path arg` (stdout and stderr), or NULL if it fails. */
char *ff_env_version(const char *path, const char *arg);
/* FNV-1a 64 of a file's bytes as 16 hex digits, or NULL. */
char *ff_env_fnv1a64(const char *path);
/*
 * The ngx_stream_module.so the nginx at `nginx` would load (from its
 * --modules-path, or where Debian and Fedora put it), "builtin" when nginx
 * was built with --with-stream, else NULL.
 */
char *ff_env_nginx_stream_module(const char *nginx);
/* The libqpid-proton*.so ldd resolves for the binary (core preferred), or NULL. */
char *ff_env_proton_ldd(const char *skrouterd_path);
/* The libqpid-proton*.so mapped in a running process (core preferred), or NULL. */
char *ff_env_proton_maps(pid_t pid);

/*
 * The router's management schema: $FLIMFLAM_SKROUTERD_SCHEMA if set, else
 * PYDIR/skupper_router/management/skrouter.json where PYDIR is the -I
 * default `skrouterd --help` prints (the file may not exist); NULL if
 * neither (skrouterd NULL, or no -I line).
 */
char *ff_skrouterd_schema_path(const char *skrouterd);
struct ff_skr_features {
	int has_http;			/* httpListener exists (2.x, 3.0) */
	int tcp_encapsulation;		/* tcpListener has `encapsulation` (2.5 .. 3.0) */
	char encapsulation_default[32];	/* its default in the schema, or "" */
	int worker_threads;		/* router has workerThreads */
};
/* Read entityTypes (attributes follow "extends"). 0, or -1 with a warning. */
int ff_skrouterd_features(const char *schema_json_path, struct ff_skr_features *out);
/* {"http":b,"tcp_encapsulation":b,"encapsulation_default":s|null,"worker_threads":b} */
json_t *ff_skr_features_json(const struct ff_skr_features *f);

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

#endif
