/*
 * flimflam - the matrix: workloads, relays, protocols (lib/ff_matrix.c).
 * One row per workload and per relay; everything that asks "which one is
 * this and what does it do" reads a row. Included by ff.h.
 */
#ifndef FF_MATRIX_H
#define FF_MATRIX_H

#include <stddef.h>

struct ff_run_opts;
struct ff_buf;

/* The protocols, a bit each, in the order of ff_protocols[]. */
enum { FF_TCP = 1 << 0, FF_HTTP1 = 1 << 1, FF_HTTP2 = 1 << 2 };
/* The protocols over HTTP: a relay carries them with an HTTP adaptor or proxy. */
#define FF_HTTP (FF_HTTP1 | FF_HTTP2)
/* What a workload's result measures. */
enum { FF_BYTES = 1 << 0, FF_OPERATIONS = 1 << 1, FF_LATENCY = 1 << 2 };

/* A run option's ceiling set by the workload's own tool. */
struct ff_limit {
	const char *option;	/* "--jobs" or "--warmup"; NULL: no more */
	long max;
	const char *what;	/* the tool's name for it, for the message */
};

struct ff_workload {
	const char *name;
	int protocols;		/* FF_TCP | ...: what its client can speak */
	/*
	 * The server and client programs. own: both are flimflam's own, in
	 * builtin/ (ff_helper_path finds them; the client writes events on a
	 * pipe); else the programs on PATH.
	 */
	int own;
	const char *server, *client;
	const char *client_option;	/* one more client option ("--h1"), or NULL */
	const char *url_path;	/* the object an HTTP client fetches, or NULL */
	int measures;		/* FF_BYTES | ... */
	/*
	 * A request/response workload: takes --request-size, --response-size
	 * and --rate, and its result counts transactions with latency
	 * percentiles.
	 */
	int request_response;
	/*
	 * Takes --rate N: an open loop of N requests a second over all its
	 * jobs, its result's ops_per_s the achieved rate (builtin-rr's and
	 * builtin-crr's transactions, h2load's requests with --rps N/jobs).
	 */
	int open_loop;
	struct ff_limit limits[2];
	/* The argument its server and client programs print their versions with (not own); NULL: none. */
	const char *version_arg;
};

/*
 * What a relay can do beyond carrying protocols, a bit each (its row's
 * caps; ff_relay_has asks).
 */
enum {
	FF_RELAY_TLS = 1 << 0,		/* --tls: makes its links TLS, and proves them */
	FF_RELAY_TLS_REMOTE = 1 << 1,	/* proves a link from the relay it leaves (--tls across hosts) */
	FF_RELAY_PROTON = 1 << 2,	/* loads Proton: its library in the environment and the build */
	FF_RELAY_ROUTED = 1 << 3,	/* a network of routers: r1 listens once the route to rN is up */
	FF_RELAY_ONE_ADDRESS = 1 << 4,	/* its relays on one host share one address (--hosts) */
	FF_RELAY_STATS = 1 << 5,	/* keeps statistics skstat reads (flimflam skstat) */
	FF_RELAY_ENCAPSULATION = 1 << 6,	/* takes --encapsulation */
	FF_RELAY_COMMAND = 1 << 7,	/* runs the user's command (--relay-cmd), no program of its own */
	FF_RELAY_FORKS = 1 << 8,	/* its processes may come and go with connections (socat's fork) */
	FF_RELAY_WORKERS = 1 << 9,	/* takes --workers: its driver sets its worker count */
	/*
	 * Its workers are processes, each with open files of its own, and the
	 * kernel spreads the connections among them (its driver listens with
	 * SO_REUSEPORT when there are two or more): ff_jobs_per_process.
	 */
	FF_RELAY_WORKER_PROCESSES = 1 << 10,
};

struct ff_relay {
	const char *name;
	int protocols;		/* what it carries */
	const char *program;	/* on PATH; NULL: no relay runs */
	/*
	 * Relays it starts by default (R1, R2): 2, or 0 for none. --hops N
	 * (1 to FF_HOPS_MAX) chains N of them; none has only its own 0.
	 */
	int processes;
	long threads;		/* threads/workers per relay when --cpu-limit is 0 */
	int start_seconds;	/* how long a relay may take to listen */
	int caps;		/* FF_RELAY_* */
	/*
	 * Its version: `program version_arg` prints a first line that starts
	 * with version_line (NULL: any); the version is that line, or with
	 * version_strip the word that follows version_line.
	 */
	const char *version_arg, *version_line;
	int version_strip;
	/* Does the program at `path` answer as this relay (-1: no, why in `why`); NULL: not asked. */
	int (*check)(const char *path, struct ff_buf *why);
	/*
	 * What the program installed at `path` carries beyond the table (the
	 * skrouterd schema: ff_skrouterd_carries); NULL: all of `protocols`.
	 */
	int (*can)(const char *path, const char *protocol, const char *encapsulation,
		   struct ff_buf *why);
	/*
	 * Its own limit on --jobs over a protocol, of which its busiest worker
	 * holds `share` (ff_jobs_per_process) of `workers` (-1: binds, why in
	 * `why`); NULL: none known.
	 */
	int (*jobs_fit)(const char *protocol, long jobs, long share, long workers, struct ff_buf *why);
};

/*
 * The names, in the table's order, NULL-terminated, for ff_parse_name and
 * the matrix's order in listings.
 */
extern const char *ff_workloads[];	/* builtin, iperf3, h2load, h2load-h1, builtin-rr, builtin-crr */
extern const char *ff_relays[];		/* skrouterd, nghttpx, nginx, haproxy, cmd, none */
extern const char *const ff_protocols[];	/* tcp, http1, http2 */

/* The row of that name, or NULL. */
const struct ff_workload *ff_workload_find(const char *name);
const struct ff_relay *ff_relay_find(const char *name);
/* The protocol's bit (FF_TCP...), or 0 for an unknown name. */
int ff_protocol_bit(const char *name);

/*
 * THE question of the matrix: does `relay` carry `workload` over
 * `protocol`? workload NULL: some workload (does the relay carry the
 * protocol at all). `path` NULL: the table only; else also the relay
 * program installed there, with the tcp `encapsulation` (NULL: the
 * default), through the row's `can` (skrouterd: its schema).
 * 1 yes; 0 no, with why in `why` ("workload 'W' over relay 'R' with
 * protocol 'P' is not supported", "relay 'R' does not carry protocol 'P'",
 * or what the installed program lacks); -1 when the installed program
 * cannot be asked (why in `why`).
 */
int ff_carries(const char *workload, const char *relay, const char *protocol,
	       const char *path, const char *encapsulation, struct ff_buf *why);
/* "builtin/none/tcp, ..." the combinations that work for a workload or relay (static). */
const char *ff_combos_for(const char *workload, const char *relay);
/* The relays other than `relay`, "a, b, c", in the table's order (static). */
const char *ff_other_relays(const char *relay);
/*
 * The limits a workload's own tool sets on the run options (iperf3: --jobs
 * at most 128, --warmup at most 60): 0 when `o` fits them, else -1 with a
 * usage-error message naming the option and the limit in `why`.
 */
int ff_workload_limits(const char *workload, const struct ff_run_opts *o, struct ff_buf *why);
/* 1 when the relay has every capability of `caps` (FF_RELAY_*). */
int ff_relay_has(const char *relay, int caps);
/* The relays that have them, "a, b, c", in the table's order (static). */
const char *ff_relays_with(int caps);
/* The relays that run relays (processes), "a, b, c" (static). */
const char *ff_relays_running(void);
/* Those that run a program of their own, which --build can name (static). */
const char *ff_relays_built(void);
/* The program a relay or workload server/client needs on PATH (NULL: none, or our own). */
const char *ff_relay_program(const char *relay);
const char *ff_workload_server_program(const char *workload);
const char *ff_workload_client_program(const char *workload);
/* 1 for a request/response workload (the row's request_response): builtin-rr, builtin-crr. */
int ff_workload_is_rr(const char *workload);
/* 1 for a workload that takes --rate (the row's open_loop): h2load, h2load-h1, builtin-rr, builtin-crr. */
int ff_workload_takes_rate(const char *workload);
/* The workloads that take the sizes (rate 0) or --rate (rate 1), "a, b", in the table's order (static). */
const char *ff_workloads_taking(int rate);

/*
 * Chains of relays: client -> R1 -> ... -> RN -> server, N the hops
 * (--hops, 1 to FF_HOPS_MAX). ff_relay_hops: the relay's own when --hops
 * is not given (its row's processes: 2, none's 0). ff_hops_fit: can
 * `relay` run `hops` relays? 1, or 0 with a usage-error message in `why`
 * (none runs no relay: any --hops is refused).
 */
#define FF_HOPS_MAX 8
long ff_relay_hops(const char *relay);
int ff_hops_fit(const char *relay, long hops, struct ff_buf *why);

/*
 * The skrouterd at `path` (lib/ff_stage.c, from its schema): the skrouterd
 * row's `can`. 1 yes; 0 no, why in `why`; -1 no readable schema.
 */
int ff_skrouterd_carries(const char *path, const char *protocol, const char *encapsulation,
			 struct ff_buf *why);

#endif
