/*
 * ff_base.h - the base floor of flimflam's library: what any program could
 * use, knowing nothing of relays, workloads, perf or flimflam's runs.
 * lib/ff.h, the upper floor, includes it; no file of this floor calls a
 * function of the upper one (t/lib-floors.bats checks the objects).
 *
 * Sections follow the implementing files, each below the ones it uses:
 *   ff_err.c    program name, messages, usage, exit; integer variables
 *   ff_mem.c    memory: allocation, growing arrays, buffers, argument vectors
 *   ff_num.c    numbers: option values, names; quantities for people; random
 *   ff_getopt.c getopt_long for every program: --version, --pipeline-stage
 *   ff_time.c   clocks and timestamps
 *   ff_dir.c    directories: absolute paths, mkdir -p, room for files
 *   ff_file.c   data files, helper programs, whole files and their lines
 *   ff_proc.c   children: spawn, watch, stop; signals
 *   ff_procfs.c what /proc says of a process: its tree, CPU, memory, files
 *   ff_json.c   JSON strings from elsewhere; JSON-lines events: emit, read
 *   ff_net.c    free ports, LISTEN readiness, listeners
 *   ff_cpu.c    CPU sets and slots of them
 *   ff_out.c    output files: atomic replacement, devices, FIFOs, symlinks
 *   ff_probe.c  programs run for their output, with a deadline
 *   ff_elf.c    a program's RUNPATH and frame pointers, from its ELF sections
 *
 * lib/ff_int.h declares what only the library's files share.
 *
 * Memory: a function returning char * or json_t * hands the caller a
 * reference it must free (free() or json_decref()), unless its comment
 * says "static". ff_emit() steals its argument's reference.
 */
#ifndef FF_BASE_H
#define FF_BASE_H


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


#define FF_VERSION "0.1.0"


#define FF_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A macro's value as a string literal: a bound and the message that names it agree. */
#define FF_STR_(x) #x
#define FF_STR(x) FF_STR_(x)

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
/*
 * A hook ff_die and ff_fail run first (one; last one wins): the upper
 * floor's way to end otherwise (ff_signals_init sets one that exits as
 * signalled when a stage is being stopped).
 */
void ff_set_before_fail(void (*fn)(void));
/*
 * Called once with the message of a failure (ff_die, ff_fail) before it is
 * said and we exit; when it returns nonzero, the message reached whoever
 * says it for us and no line of ours goes to stderr.
 */
void ff_set_fail_hook(int (*fn)(const char *msg));
/*
 * An integer environment variable in [min, max]; `dflt` when unset or
 * empty. Anything else is "prog: NAME: 'abc' is not a whole number from
 * MIN to MAX" and exit 2.
 */
long ff_env_long(const char *name, long dflt, long min, long max);

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
/*
 * Error text, the one way: a function that can fail says why into a
 * `struct ff_buf *why` its caller gives (FF_BUF_INIT), with ff_why, whose
 * text replaces what the buffer held; no length to pass, nothing cut
 * short. The caller reads why.s once the function failed (it is then
 * set), and frees it with ff_buf_free.
 */
void ff_why(struct ff_buf *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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
void ff_argv_free(struct ff_argv *a);

/* ff_num.c */

/*
 * Parse a whole decimal integer for option `opt` in [min, max] (written
 * also as 1e3 or 1.5e3 when whole); anything else (empty, sign where min
 * >= 0, fraction, junk, out of range) is a usage error naming the option.
 */
long ff_parse_long(const char *usage, const char *opt, const char *s,
		   long min, long max);
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
 * Seeded pseudo-random numbers: SplitMix64 (Steele, Lea and Flood, OOPSLA
 * 2014), the next of the sequence `state` is at; ff_random_unit, one in
 * (0, 1) from its top 53 bits.
 */
uint64_t ff_random(uint64_t *state);
double ff_random_unit(uint64_t *state);
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
 * is 1. A stage that flimflam starts on another host, through ssh, has
 * FLIMFLAM_STAGE_ERRORS=events: its failure is only its `error` event,
 * with "said": false, and flimflam writes the line (ssh may lose what the
 * stage writes on stderr as it exits); ff_stage_errors_in_events() is 1
 * then, and the variable is not passed on to what the stage starts.
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
#define FF_OPT_PIPELINE_STAGE 0x7ffd
#define FF_LONGOPT_PIPELINE_STAGE { "pipeline-stage", no_argument, NULL, FF_OPT_PIPELINE_STAGE }
/* ff_err.c keeps it (ff_getopt sets it): what every floor may ask. */
int ff_pipeline_stage(void);
void ff_set_pipeline_stage(void);
int ff_stage_errors_in_events(void);
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

/* ff_time.c */

/* Monotonic seconds. */
double ff_now(void);
/* The same clock in nanoseconds. */
uint64_t ff_now_ns(void);
/* Current UTC time as "2025-06-01T12:00:00Z" (static). */
const char *ff_iso_time(void);

/* ff_dir.c */

/* mkdir -p with mode; 0 or -1 (errno). */
int ff_mkdirs(const char *path, mode_t mode);
/*
 * Can files be written in `dir`, with at least `need` bytes free? Tried by
 * creating (and removing) a file, since root passes access(2) everywhere.
 * 0, or -1 with the reason in `why`.
 */
int ff_dir_writable(const char *dir, unsigned long long need, struct ff_buf *why);

/* ff_file.c */

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
/* A program of ours found as ff_helper_path finds it, else on PATH: its full path, or NULL. */
char *ff_program(const char *name);
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

/* ff_proc.c */

/*
 * Raise this process's soft limit on open files to its hard limit when
 * the soft one is under `need` (LONG_MAX: whenever it is lower). In
 * ff_procfs.c.
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

/* ff_procfs.c */

/*
 * CPU time (user + system) of a process and its descendants, in seconds,
 * to the nanosecond (schedstat; ticks where the kernel has none); -1 if gone.
 */
double ff_proc_cpu_s(pid_t pid);
/* Peak RSS (VmHWM) summed over a process and its descendants, bytes; -1 if gone. */
long long ff_proc_hwm_bytes(pid_t pid);
/* Current RSS (VmRSS) summed likewise, bytes; -1 if gone. */
long long ff_proc_rss_bytes(pid_t pid);
/* Open file descriptors (/proc/PID/fd) summed likewise; -1 if unreadable. */
long ff_proc_fds(pid_t pid);
/* pid and its descendants (from /proc/PID/task/TID/children); returns count. */
int ff_proc_tree(pid_t pid, pid_t *out, int max);
/* Is the process's own executable gone or a zombie? 1 alive, 0 not. */
int ff_proc_alive(pid_t pid);
/* Its parent's pid, or 0 if it is gone. */
pid_t ff_proc_parent(pid_t pid);

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
/*
 * An `error` event with the message, unless one was emitted already; a
 * stdout that cannot take it is let be (the message goes to stderr too).
 * The fail hook of a pipeline stage and of ff-run --json: 1 when the event
 * went out and stands for the stderr line (ff_stage_errors_in_events).
 */
int ff_error_event(const char *msg);
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
/* String member or NULL (borrowed); ff_json_str_or: `dflt` for NULL. */
const char *ff_json_str(const json_t *obj, const char *key);
const char *ff_json_str_or(const json_t *obj, const char *key, const char *dflt);

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
/*
 * CPUs for the workload: those left after `nrelays` relays of `limit` CPUs
 * each, if any are left (returns 1), else all available (returns 0).
 */
int ff_cpus_workload(const cpu_set_t *avail, int limit, int nrelays, cpu_set_t *out);

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
int ff_lock_dir(const char *dir, const char *what, struct ff_buf *why);

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

#endif
