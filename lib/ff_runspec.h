/*
 * ff_runspec.h - a run, described once (lib/ff_runspec.c).
 *
 * A run is a workload through a relay chain over a protocol, with its run
 * options, --tls, its builds and its hosts: struct ff_runspec. Its options
 * are rows (name, argument, help, default, range or names) from which every
 * program that takes some of them gets its getopt_long table
 * (ff_runspec_options), its help lines (ff_runspec_help), its parser and
 * range checks (ff_runspec_take), and the argv it hands its stages
 * (ff_runspec_argv). ff_runspec_check checks a whole run before anything
 * starts; a stage (--pipeline-stage) parses its argv with the same rows and
 * trusts it.
 */
#ifndef FF_RUNSPEC_H
#define FF_RUNSPEC_H

/* Which programs take a row (a mask); FF_RS_OPTS marks struct ff_run_opts' own. */
enum {
	FF_RS_RUN = 1 << 0,	/* flimflam run and the capture commands */
	FF_RS_WORKLOAD = 1 << 1,	/* ff-workload serve and drive */
	FF_RS_STREAM = 1 << 2,	/* ff-builtin-client */
	FF_RS_RR = 1 << 3,	/* ff-builtin-rr-client */
	FF_RS_RR_SERVE = 1 << 4,	/* ff-builtin-rr-server */
	FF_RS_PLACE = 1 << 5,	/* flimflam check --hosts */
	FF_RS_OPTS = 1 << 6,	/* a member of struct ff_run_opts */
	FF_RS_BENCH = 1 << 7,	/* ff-bench, which takes some as comma lists */
};

/* ff-capture's mode that captures nothing (run's): a mode, not relay none. */
#define FF_CAPTURE_NONE "none"

struct ff_runspec {
	const char *cmd, *mode;	/* the command as called, and its capture mode ("none": run) */
	const char *workload, *relay, *protocol;
	long hops;		/* -1 until checked: the relay's own */
	struct ff_run_opts run;
	int json, tls;
	const char *hosts;	/* --hosts, as given */
	const char *relay_cmd;	/* --relay-cmd, for relay cmd */
	/* --build LABEL=PATH: as given, then parsed by ff_runspec_check */
	const char *build[2];
	struct ff_build builds[2];
	int nbuild;
	int cur;		/* the build this run runs (flamegraph runs two in turn) */
};

/* Each row's default (hops -1: the relay's own). */
void ff_runspec_init(struct ff_runspec *rs);
/*
 * getopt_long's table: `own` (up to its { NULL } row), then the rows of
 * `mask`, then { NULL } (static storage, valid until the next call). A
 * row's val is its letter (-w, -r, -p), FF_OPT_BUILD for --build, else
 * FF_RS_VAL and up.
 */
#define FF_RS_VAL 0x1000
struct option;
const struct option *ff_runspec_options(const struct option *own, unsigned mask);
/*
 * Option `val` (from ff_getopt) with `arg`, if it is a row's: parsed into
 * `rs` by the row (a usage error naming the option, with its range), 1;
 * 0 when it is none. --build is kept as given, up to two.
 */
int ff_runspec_take(struct ff_runspec *rs, const char *usage, int val, const char *arg);
/*
 * The help lines of the rows of `mask`, in their order, as flimflam run -h
 * prints them ("  --jobs JOBS           The number..."), `tail` appended to
 * row `name`'s help (or NULL).
 */
void ff_runspec_help(struct ff_buf *b, unsigned mask, const char *name, const char *tail);
/*
 * ff-bench's numbers given as a comma list, each its row's range
 * (--jobs, --hops, --request-size, --response-size, --rate): "--jobs" for
 * option `val` if its row is one of them, else NULL. (Its -w, -r and -p
 * take names, as --workloads, --relays and --protocols: the mask
 * FF_RS_BENCH names them so in ff_runspec_options.)
 */
const char *ff_runspec_list(int val);
/*
 * The synopsis of the rows of `mask`, then of `more` (items such as
 * "[--freq HZ]", or NULL), after "usage: PROG CMD [-h]": " [-w WORKLOAD]
 * [--jobs JOBS] ...", each line at most 80 columns, the next under
 * "usage: " (the first counted from there too, whatever PROG CMD is).
 */
void ff_runspec_synopsis(struct ff_buf *b, unsigned mask, const char *const more[]);
/* The rows' range of option `opt` ("--jobs"), for ff_parse_run_opt: 1, or 0 if none. */
int ff_runspec_range(const char *opt, long *min, long *max);
/*
 * The argv of the rows of `mask` for a stage: "--name" VALUE each, but the
 * request/response options only when they differ from their defaults (no
 * --build, --hosts, --relay-cmd: those are the caller's).
 */
void ff_runspec_argv(struct ff_argv *a, const struct ff_runspec *rs, unsigned mask);

/*
 * Where the roles run (flimflam's --hosts): ff_runspec_check asks through
 * these. `parse` the spec for `nrelays` relays (0, or -1 with why);
 * `check` what the hosts cannot run (usage errors); `here` 1 if the role's
 * program is checked on this host; `relays_remote` 1 if a relay runs on
 * another host.
 */
struct ff_runspec_place {
	int (*parse)(const char *spec, int nrelays, struct ff_buf *why);
	void (*check)(const struct ff_runspec *rs, const char *usage);
	int (*here)(const char *role);
	int (*relays_remote)(int nrelays);
};
/*
 * Everything that can be known before starting anything (usage errors,
 * exit 2; a machine that cannot, exit 1): the builds, the combination,
 * hops, the hosts, the options together, the relay's capabilities, the
 * programs. hops is the relay's own when not given.
 */
void ff_runspec_check(struct ff_runspec *rs, const char *usage, const struct ff_runspec_place *place);
/*
 * The options together, for a program run by hand (ff-workload): the
 * request/response options for those workloads, the workload's limits,
 * --interval within --duration. Usage errors.
 */
void ff_runspec_check_opts(const struct ff_runspec *rs, const char *usage);

#endif
