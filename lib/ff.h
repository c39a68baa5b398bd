/*
 * ff.h - the helper library every flimflam program shares: the base floor
 * (ff_base.h: errors, memory, buffers, argv, numbers, getopt, time,
 * files, processes, JSON, ports, CPU sets, output files, probes) and, on
 * it, what is flimflam's own: the matrix of workloads, relays and
 * protocols (ff_matrix.h), and
 *
 *   ff_limits.c    what binds a run of many connections, checked before the load
 *   ff_stage.c     pipeline stages: the stage loop, start and end events, holding children
 *   ff_rundir.c    run directories: made, named, held, pruned
 *   ff_template.c  the relays' configuration templates
 *   ff_tcpstat.c   TCP's stall counters
 *   ff_env.c       the environment: versions, OS, CPU, host
 *   ff_skrouterd.c the router: usable?, its schema's features, Proton
 *   ff_perf.c      what perf can open; perf script started for its lines
 *   ff_hist.c      latency histograms: record, merge, percentiles, files
 *   ff_load.c      the builtin programs: options, window event, waits on the clock,
 *                  threads, failures, a server's life
 *   ff_tls.c       --tls: the run's CA, the relays' certificates and keys
 *   ff_build.c     relay builds (--build LABEL=PATH): binary, environment, name
 *   ff_series.c    the window as a time series: steadiness, sparklines
 *   ff_relaycmd.c  the user's own relay (--relay-cmd)
 *   ff_machine.c   what a window shared the machine with: others' CPU, steal, load
 *   ff_page.c      HTML pages made from a template with the data inlined; their -o
 *   ff_runspec.c, ff_runcheck.c  a run described once: its option rows (and the
 *                  options one at a time, the window's intervals), its
 *                  check (lib/ff_runspec.h)
 *
 * Programs include this one header. Files of the upper floor call the
 * base; the base never calls up (t/lib-floors.bats).
 */
#ifndef FF_H
#define FF_H

#include "ff_base.h"
#include "ff_matrix.h"	/* the workloads, relays and protocols */

#define FF_SCHEMA 1

/*
 * A differential flamegraph with fewer samples than this on either side
 * is too coarse to rank what grew and shrank: ff-flame's page and
 * flimflam flamegraph's summary say so.
 */
#define FF_FLAME_RANK_MIN_SAMPLES 1000

/* ff_runspec.c: the run options one at a time, the window's intervals */

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
 * The run options: their rows and parsing are ff_runspec.c's (struct
 * ff_runspec). A program's own long-only options number from FF_OPT_OWN.
 */
struct ff_run_opts {
	long jobs, warmup, duration, cpu_limit;
	/* The request/response workloads (builtin-rr, builtin-crr): bytes, and transactions/s (0: closed loop). */
	long request_size, response_size, rate;
	/* Seconds between `interval` events of the window (0.1 to the duration). */
	double interval;
	/* --workers: each relay's worker threads or processes (0: the relay's own setting). */
	long workers;
};
#define FF_RUN_OPTS_DEFAULTS { 2, 5, 5, 1, 1, 1, 0, 1.0, 0 }	/* the original's defaults */
enum { FF_OPT_OWN = 0x100 };	/* below FF_RS_VAL */
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
/*
 * The run options as the programs take them: "--jobs" N "--warmup" N
 * "--duration" N, "--cpu-limit" N when `with_cpu_limit`, then those of the
 * request/response workloads that differ from their defaults
 * ("--request-size" N, "--response-size" N, "--rate" N), and "--interval" S.
 */
void ff_argv_run_opts(struct ff_argv *a, const struct ff_run_opts *o, int with_cpu_limit);
/*
 * FF_CHAIN_LONGOPTS: the options of the relay chain that ff-topology
 * takes: --hops N, --tls, --relay-cmd COMMAND and --build (ff-bench and
 * ff-run take theirs from the rows, lib/ff_runspec.c).
 */
#define FF_OPT_HOPS 0x7ff9
#define FF_OPT_TLS 0x7ffa
#define FF_OPT_RELAY_CMD 0x7ffb
#define FF_CHAIN_LONGOPTS \
	{ "hops", required_argument, NULL, FF_OPT_HOPS }, \
	{ "tls", no_argument, NULL, FF_OPT_TLS }, \
	{ "relay-cmd", required_argument, NULL, FF_OPT_RELAY_CMD }, \
	FF_LONGOPT_BUILD

/* ff_limits.c: what binds a run of many connections, checked before the load */

/*
 * The descriptors the busiest process of a run holds per job: a proxy's
 * two (the client's end and the upstream's); a network of routers' one
 * (r1 holds the clients', rN the server's; the links between routers are
 * a few connections), two with --hops 1; relay none's one (the client's
 * and the server's processes).
 */
long ff_fds_per_job(const char *relay, long hops);
/*
 * The worker threads or processes each relay runs: --workers (`workers`),
 * else one per CPU of --cpu-limit, else its row's (ff-topology's count).
 */
long ff_relay_workers(const char *relay, long workers, long cpu_limit);
/*
 * The most jobs one process of the relay may hold, of `jobs` over its
 * `workers`: all of them, but for a relay whose workers are processes of
 * their own (FF_RELAY_WORKER_PROCESSES), among which the kernel spreads
 * the connections (SO_REUSEPORT hashes each to one worker's socket, a
 * binomial split): the even share and 5 standard deviations of the split,
 * sqrt(jobs p (1 - p)) with p = 1/workers (at 10,000 jobs over 2, 5250;
 * a given worker is past it once in some 3.5 million runs).
 */
long ff_jobs_per_process(const char *relay, long jobs, long workers);
/*
 * The open files the busiest process of a run of `relay` (`hops` of them)
 * needs at the options' jobs and workers: ff_fds_per_job's for its share
 * of the jobs (ff_jobs_per_process), or the client's and the server's one
 * a job when that is more, and 64 more.
 */
long ff_fds_needed(const char *relay, long hops, const struct ff_run_opts *o);
/*
 * Do those fit under the hard limit on open files? A privileged process
 * (CAP_SYS_RESOURCE) raises its hard limit to that, up to fs.nr_open, and
 * what it starts inherits it. 0, or -1 with the reason.
 */
int ff_nofile_for_jobs(const char *relay, long hops, const struct ff_run_opts *o, struct ff_buf *why);
/* Do --jobs connections from one address to one port fit net.ipv4.ip_local_port_range? */
int ff_ports_for_jobs(long jobs, struct ff_buf *why);
/*
 * nginx's worker_connections (relay-conf/nginx-PROTOCOL.conf): two per job
 * of the busiest worker's `share` of `jobs` (ff_jobs_per_process), and the
 * listener.
 */
int ff_nginx_jobs_fit(const char *protocol, long jobs, long share, long workers, struct ff_buf *why);
/*
 * All of them for a run of `relay` (`hops` of them) over `protocol` at the
 * options' jobs, workers and CPU limit: 0, or -1 with the one that binds
 * in `why`, and, for a relay with worker processes of their own, the
 * --workers that would fit when one would (up to 64).
 */
int ff_jobs_fit(const char *relay, const char *protocol, long hops, const struct ff_run_opts *o,
		struct ff_buf *why);

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
/* The standard events. */
void ff_emit_start(void);
void ff_emit_end(int status);

/* ff_rundir.c */

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

/* ff_template.c */

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

/* ff_tcpstat.c */

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

/* ff_env.c */

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

/* ff_skrouterd.c */

/*
 * Can flimflam use the skrouterd at `path`? Its --version and --help run
 * together, within 5 s: --version must succeed and print a version, and
 * --help must name the Python directory of a schema that reads (or
 * FLIMFLAM_SKROUTERD_SCHEMA one). 0, or -1 with the reason in `why`.
 */
int ff_skrouterd_check(const char *path, struct ff_buf *why);
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
int ff_skrouterd_tls(const char *path, struct ff_skr_tls *t, struct ff_buf *why);

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
		     const char **lacks, struct ff_buf *why);

/* ff_perf.c */

/*
 * perf: open events on a child process. Returns FF_PERF_* bits; `why`
 * says what failed, "; "-separated, or "" (its text replaced).
 */
#define FF_PERF_EVENTS   1	/* a software event (task-clock) opens: stat, record */
#define FF_PERF_KERNEL   2	/* ... kernel included (perf_event_paranoid <= 1) */
#define FF_PERF_HARDWARE 4	/* cycles opens: a PMU */
#define FF_PERF_MEMORY   8	/* load sampling for c2c and mem (mem-loads, IBS, SPE) */
#define FF_PERF_LOCK_BPF 16	/* perf lock contention -b (BPF skeletons built in); ff_perf_lock_bpf */
int ff_perf_probe(struct ff_buf *why);
/*
 * Is `perf lock contention -b` built into the perf on PATH (BUILD_BPF_SKEL=1)?
 * 1, or 0 with why not in `why`. FLIMFLAM_TEST_PERF's "bpf" says it instead.
 */
int ff_perf_lock_bpf(struct ff_buf *why);
/*
 * A counter of tracepoint `tp` ("sched/sched_wakeup", its id read from
 * tracefs) on `cpu`, every task's, disabled, with the tracepoint filter
 * `filter` (NULL: none). The fd, or -1 with errno: ENOENT when tracefs
 * has no id for it, ENODEV for an offline CPU, EACCES when CPU-wide
 * counting is not allowed (perf_event_paranoid > 0 without root).
 */
int ff_perf_tracepoint(const char *tp, int cpu, const char *filter);
/* /proc/sys/kernel/perf_event_paranoid, or INT_MIN if unreadable. */
int ff_perf_paranoid(void);
/*
 * `perf script ARG...` (NULL-terminated) started in the C locale, its
 * stderr discarded: its lines for pipeline_readline, then pipeline_wait.
 */
struct pipeline;
struct pipeline *ff_perf_script(const char *arg, ...) __attribute__((sentinel));

/* ff_load.c */

/*
 * The `window` event: warmup_s, duration_s, time (now, ISO) and
 * monotonic_s, when the window opened on CLOCK_MONOTONIC (ff_now()'s
 * clock, the same in every process of the machine); and, when `ready` is
 * not negative, ready_s: the seconds from the client's start until every
 * connection had carried its first bytes back.
 */
void ff_emit_window(long warmup, long duration, double monotonic, double ready);
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
int ff_tls_certs(const char *rundir, const char *const roles[], int nroles, struct ff_buf *why);
/* RUNDIR/tls/NAME ("ca.crt", "r1.key"; malloc'd). */
char *ff_tls_file(const char *rundir, const char *name);

/* The most threads of one kind a builtin program starts. */
#define FF_LOAD_MOST 8
/*
 * The streaming pair (ff-builtin-client and -server): bytes per write and
 * recv (bench/README.md; -DFF_LOAD_IO=n to try), and the bytes one
 * connection may move per turn before the others get theirs.
 */
#ifndef FF_LOAD_IO
#define FF_LOAD_IO (1024 * 1024)
#endif
#define FF_LOAD_TURN (4 * FF_LOAD_IO)
/*
 * The threads of the builtin programs. ff_load_threads: how many to start:
 * the CPUs we may use, at most `most` (and at most `jobs` when jobs > 0),
 * at least 1. ff_load_thread: start one that takes no signals (the main
 * thread takes them); dies when it cannot.
 */
int ff_load_threads(int most, long jobs);
/*
 * How long past its warmup and window a client may run (ff-workload's
 * allowance): for a loaded machine, 20% of warmup and window, at least
 * 10 s; and 2 ms a job for connecting and each connection's first bytes
 * (10,000 through two nginx relays took 11 s on a loaded 2-CPU machine).
 * ff_load_first_bytes_s: the part of it the builtin client may wait for
 * every connection's first bytes before its warmup (70%: the rest is for
 * its start and report).
 */
double ff_load_margin_s(long warmup, long duration, long jobs);
double ff_load_first_bytes_s(long warmup, long duration, long jobs);
void ff_load_thread(pthread_t *tid, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
/* A new epoll instance (close-on-exec); dies when it cannot. */
int ff_load_epoll(void);
/* Add fd to the epoll set epfd for `events`, with data.ptr `ptr`; dies when it cannot. */
void ff_load_watch(int epfd, int fd, uint32_t events, void *ptr);
/*
 * Take fd out of the epoll set epfd, then close it. close() alone leaves
 * the registration while anyone else holds the file, even for a moment
 * (a reader of /proc/PID/fd takes each one in turn), and epoll_wait may
 * then return the pointer of a connection already freed.
 */
void ff_load_unwatch_close(int epfd, int fd);
/*
 * epoll_wait on epfd for up to `max` events (timeout ms, -1: none): how
 * many came, 0 when a signal came first; dies on any other failure.
 */
struct epoll_event;
int ff_load_events(int epfd, struct epoll_event *evs, int max, int timeout);
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
/*
 * The client is stopping its threads and closing its connections
 * (ff_load_stop): from then on ff_load_stopping is 1, and failures are
 * dropped.
 */
void ff_load_stop(void);
int ff_load_stopping(void);
void ff_load_check(const char *phase);
void ff_load_wait(double when, const char *phase);
/*
 * A builtin program's options (ff_load_options): -h/--help, --version,
 * --port PORT (required), and the address, 127.0.0.1 unless given: a
 * client's --host ADDRESS (where it connects; a client also takes
 * --pipeline-stage) or a server's --address ADDRESS (where it listens).
 * Then its own others, `more` (up to a { NULL } row; NULL: none), each
 * handed to take(val, optarg), and the run's rows of `mask` into *rs
 * (initialised here; NULL: none). Sets the program's name first; a usage
 * error for an argument left over or no --port.
 */
struct ff_load_opts {
	const char *usage;
	int server;
	const struct option *more;
	void (*take)(int val, const char *arg);
	struct ff_runspec *rs;
	unsigned mask;
	/* What was given. */
	int port;
	const char *host;	/* the address as given */
	struct sockaddr_in sa;	/* the address and port */
};
void ff_load_options(struct ff_load_opts *o, int argc, char *argv[]);
/*
 * A server's life, once its options are taken: start(n) starts its n
 * workers (the CPUs we may use, at most FF_LOAD_MOST), then it accepts on
 * the address and port of `o`, handing each connection to a worker in
 * turn, adopt(fd, k) with k 0..n-1, until a signal ends it. Returns the
 * exit status.
 */
int ff_load_serve(const struct ff_load_opts *o, void (*start)(int n), void (*adopt)(int fd, int k));
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
	char *at;		/* PATH as given, absolute */
	int binding;		/* the Proton binding is under PREFIX: skstat gets its libraries */
};
/* Is s[0..len) a label: 1 to 64 of [A-Za-z0-9._-]? */
int ff_build_label_ok(const char *s, size_t len);
/*
 * "LABEL=PATH" for `relay`: the label is well formed, PATH exists, is (or
 * holds) an executable, and that answers as the relay (its version output;
 * skrouterd: ff_skrouterd_check, run in the build's environment). 0, or -1
 * with "--build LABEL: why" (or "--build 'ARG': why") in `why`.
 */
int ff_build_parse(const char *arg, const char *relay, struct ff_build *b, struct ff_buf *why);
/* The same for a label (or NULL) and a path. */
int ff_build_at(const char *label, const char *path, const char *relay, struct ff_build *b,
		struct ff_buf *why);
/*
 * A checked build as a stage's arguments: "--build" and the build as the
 * parse found it (one JSON object: its label, PATH as given made absolute,
 * the binary, its prefix, version and environment).
 */
void ff_build_argv(struct ff_argv *a, const struct ff_build *b);
/*
 * --build's argument for `relay`, as a stage reads it: a build as
 * ff_build_argv passed it, of which only what another host must is checked
 * again (PATH is there and holds the binary; the messages of
 * ff_build_parse), else LABEL=PATH as given by hand (ff_build_parse).
 */
int ff_build_read(const char *arg, const char *relay, struct ff_build *b, struct ff_buf *why);
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
/*
 * Growth over time, per hour: the Theil-Sen slope of y against t (seconds;
 * NAN values of y left out; more than 600 points averaged into 600) with
 * Sen's 95% interval. {points, per_h, low_per_h, high_per_h, band_per_h,
 * verdict}: "flat" when the interval lies within +-band_per_h, else
 * "growing" when it lies above zero, else "undecided" (so too with fewer
 * than three points, the figures null).
 */
json_t *ff_growth(const double *t, const double *y, size_t n, double band_per_h);

/* ff_relaycmd.c */

/*
 * Relay cmd's --relay-cmd: its words into `words` (split as plain shell
 * words with '...' and "..." quotes and \ escapes, never run by a shell),
 * each {placeholder} known, the program first, and the command naming
 * where to listen ({listen} or {listen_port}) and where to send
 * ({upstream} or {upstream_port}). 0, or -1 with a usage-error message.
 */
int ff_relay_cmd_split(const char *cmd, struct ff_argv *words, struct ff_buf *why);
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
int ff_relay_cmd_program(const char *cmd, char **path, struct ff_buf *why);

/* ff_machine.c */

/*
 * /proc/stat's figures: busy_s the whole machine's time on a CPU, all but
 * idle, iowait and steal (user, nice, system, interrupts and softirqs;
 * guests' included), steal_s the hypervisor's steal, both in seconds
 * since boot (-1: not there); procs_running the runnable tasks now (-1:
 * not there); cpus its cpuN lines (0: none). ff_cpu_stat_parse reads
 * `text` (NULL: nothing), ff_cpu_stat_read the file: 0, or -1 when the
 * busy time or the CPUs are missing.
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
/* A process's CPU ticks at a moment, told from a later one of its pid by its start time. */
struct ff_proc_ticks {
	pid_t pid;
	unsigned long long start;
	long long ticks;
};
/*
 * A window's readings: ff_machine_begin at its start, ff_machine_sample
 * as it goes (runnable tasks and the clock are means of the samples),
 * ff_machine_end at its end (it frees what begin took), the same roots
 * each time (the run's processes); ff_machine_json then gives the
 * `machine` object of the `resources` event: {load1, procs_running,
 * steal_s, other_cpu_s, other_cpu_fraction, run_cpu_s, cpus, cpu_mhz},
 * null what could not be read. other_cpu_s is the CPU time of every
 * process outside the roots' trees (kernel threads aside): each one's
 * own and its reaped children's over the window, all of it for one that
 * started in the window, less what one seen at the start and reaped in
 * the window had by then; other_cpu_fraction that over window x cpus;
 * run_cpu_s the machine's busy time less others' (never below 0): the
 * run's processes and the kernel's work for them, softirqs included.
 */
struct ff_machine {
	double t0, t1;
	struct ff_cpu_stat s0, s1;
	struct ff_proc_ticks *others0;	/* the others at the start, by pid */
	int nothers0;
	double other_s;			/* -1: /proc could not be read */
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
 * A bench row of --together has together_cpu_s in its machine: the CPU of
 * the runs that ran beside it by design, which is not counted as others'.
 */
#define FF_SHARED_OTHER_PCT 10
#define FF_SHARED_STEAL_PCT 5
const char *ff_machine_shared(const json_t *resources, char *buf, size_t n);
/* A machine object's other_cpu_fraction less its together_cpu_s's share; -1: unknown. */
double ff_machine_others(const json_t *machine);


/* ff_page.c */

/*
 * A self-contained HTML page into `b`: the template files[0] (a data file,
 * "share/report/report.html") with marks[0] replaced by the text of
 * files[1] (its style), marks[1] by `data` as compact JSON (each '<' as
 * \u003c, so nothing in it can end its <script> element), marks[2] by the
 * text of files[2] (its script). A template without a mark is fatal.
 */
void ff_page_html(struct ff_buf *b, const char *const files[3], const char *const marks[3],
		  const json_t *data);
/*
 * The same page with marks[1] filled by `data(b, arg)`: for data written
 * straight into the page (a flamegraph's million nodes as jansson values
 * would cost hundreds of megabytes); ff_page_script_json adds JSON text
 * as ff_page_html does.
 */
void ff_page_fill(struct ff_buf *b, const char *const files[3], const char *const marks[3],
		  void (*data)(struct ff_buf *b, void *arg), void *arg);
void ff_page_script_json(struct ff_buf *b, const char *json, size_t n);
/*
 * The options every page's program takes, for its getopt loop: -h (the
 * usage, exit 0) and -o FILE (into *out; - is stdout; a usage error when
 * empty). 1 when `c` was one of them, else 0.
 */
int ff_page_opt(const char *usage, int c, const char *arg, const char **out);
/*
 * Before anything is read: that the page `out` can be written, or for -
 * that stdout can be; a fatal error that says why when not.
 */
void ff_page_check(const char *out);
/* The page written to `out` (- is stdout) through ff_out: 0, or -1 with a warning. */
int ff_page_write(const char *out, const struct ff_buf *b);
/* "Report: PATH", a blank line, "Open it in a browser: file://..." on stdout. */
void ff_page_say(const char *path);

/* For the library's own files (and t/fixtures' probes): */

/* ff_env.c */

/* FNV-1a 64 of a file's bytes as 16 hex digits, or NULL. */
char *ff_env_fnv1a64(const char *path);

/* ff_skrouterd.c */

/* What the installed schema offers. */
struct ff_skr_features {
	int has_http;			/* httpListener exists (2.x, 3.0) */
	int tcp_encapsulation;		/* tcpListener has `encapsulation` (2.5 .. 3.0) */
	char encapsulation_default[32];	/* its default in the schema, or "" */
	int worker_threads;		/* router has workerThreads */
};
/* The libqpid-proton*.so ldd resolves for the binary (core preferred), or NULL. */
char *ff_env_proton_ldd(const char *skrouterd_path);
/*
 * The router's management schema: $FLIMFLAM_SKROUTERD_SCHEMA if set, else
 * PYDIR/skupper_router/management/skrouter.json where PYDIR is the -I
 * default `skrouterd --help` prints (the file may not exist); NULL if
 * neither (skrouterd NULL, or no -I line).
 */
char *ff_skrouterd_schema_path(const char *skrouterd);
/* Read entityTypes (attributes follow "extends"). 0, or -1 with a warning. */
int ff_skrouterd_features(const char *schema_json_path, struct ff_skr_features *out);
/* {"http":b,"tcp_encapsulation":b,"encapsulation_default":s|null,"worker_threads":b} */
json_t *ff_skr_features_json(const struct ff_skr_features *f);
#include "ff_hist.h"	/* latency histograms */
#include "ff_runspec.h"	/* a run, described once */

#endif
