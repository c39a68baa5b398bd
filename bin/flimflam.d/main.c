/*
 * flimflam - the dispatcher: maps the documented subcommands onto the
 * ff-* programs.
 *
 * check, bench, compare and report exec their program. run and the capture
 * commands build the pipeline
 *
 *   ff-workload serve | ff-topology | ff-workload drive | ff-capture MODE
 *
 * with libpipeline, read its events, and print a human summary (or, with
 * --json, the events themselves).
 */
#include "flimflam.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pipeline.h>

/* ff-capture --check before a run: it opens perf events and starts programs. */
#define CAPTURE_CHECK_SECONDS 30

static const char usage[] =
	"usage: flimflam [--verbose] [--quiet] [--debug] [-h] {command} ...\n"
	"\n"
	"A tool for examining Skupper router performance\n"
	"\n"
	"options:\n"
	"  --verbose   Print detailed logging to the console\n"
	"  --quiet     Print no logging to the console\n"
	"  --debug     Print debugging output to the console\n"
	"  -h, --help  Show this help message and exit\n"
	"  --version   Show the version and exit\n"
	"\n"
	"commands:\n"
	"  {command}\n";

static const struct cmd cmds[] = {
	{ "check", "ff-check", NULL, EXEC,
	  "Check for required programs and system configuration" },
	{ "run", NULL, "none", PIPELINE,
	  "Run a workload without capturing any data" },
	{ "stat", NULL, "stat", PIPELINE, "Capture 'perf stat' output" },
	{ "skstat", NULL, "skstat", PIPELINE, "Capture 'skstat' output" },
	{ "record", NULL, "record", PIPELINE,
	  "Capture perf events using 'perf record'" },
	{ "c2c", NULL, "c2c", PIPELINE, "Capture perf events using 'perf c2c'" },
	{ "mem", NULL, "mem", PIPELINE, "Capture perf events using 'perf mem'" },
	{ "flamegraph", NULL, "record", PIPELINE, "Generate a flamegraph" },
	{ "offcpu", NULL, "offcpu", PIPELINE,
	  "Generate a flamegraph of where the relays wait (off-CPU time)" },
	{ "lock", NULL, "lock", PIPELINE,
	  "Capture the relays' contended kernel locks using 'perf lock'" },
	{ "bench", "ff-bench", NULL, EXEC,
	  "Run each workload on each relay and summarize the results" },
	{ "compare", "ff-bench", "compare", EXEC,
	  "Compare two results files from bench" },
	{ "explain", "ff-bench", "explain", EXEC,
	  "Which functions changed between two builds' recordings, beyond noise" },
	{ "report", "ff-bench", "report", EXEC,
	  "Write an HTML page of results files from bench" },
	{ "history", "ff-history", NULL, EXEC,
	  "Keep bench results over time and find their change points" },
	{ "bisect", "ff-bisect", NULL, EXEC,
	  "Find the commit that changed a relay's cost (git bisect)" },
};

static const char run_usage_fmt[] =
	"usage: flimflam %s [-h] [-w WORKLOAD] [-r RELAY] [-p PROTOCOL] [--jobs JOBS]\n"
	"       [--warmup SECONDS] [--duration SECONDS] [--cpu-limit COUNT] [--json]\n"
	"       [--hops N] [--request-size BYTES] [--response-size BYTES] [--rate N]\n"
	"       [--interval SECONDS] [--tls] [--build LABEL=PATH]\n"
	"       [--hosts ROLE=[USER@]HOST[/ADDRESS],...] [--relay-cmd COMMAND]%s\n"
	"\n"
	"%s\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"%s"	/* the rows' help (ff_runspec_help) */
	"%s"
	"\n"
	"Workloads: builtin, iperf3, h2load, h2load-h1, builtin-rr, builtin-crr.\n"
	"Relays: skrouterd, nghttpx, nginx, haproxy, cmd, none. Protocols: tcp, http1, http2.\n";

static char run_usage[4096];

enum { OPT_CALL_GRAPH = FF_OPT_OWN, OPT_FREQ };

/* Its own; the run's are the rows of FF_RS_RUN (lib/ff_runspec.c). */
static const struct option run_own[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ NULL, 0, NULL, 0 }
};

struct ff_runspec opt;

/* The perf options of the sampling commands: record, c2c, mem, flamegraph. */
static const char perf_synopsis[] = "\n       [--call-graph METHOD] [--freq HZ]";
static const char perf_options[] =
	"  --call-graph METHOD   How perf records call stacks: fp, dwarf or lbr (default 'fp')\n"
	"  --freq HZ             perf's sampling frequency per second (default 997)\n";
static const char *const call_graphs[] = { "fp", "dwarf", "lbr", NULL };

struct perf_opt perf_opt = { "fp", 997 };

/* --freq as an argument (static). */
const char *
freq_arg(void)
{
	static char buf[24];

	snprintf(buf, sizeof(buf), "%ld", perf_opt.freq);
	return buf;
}

int
samples(const struct cmd *c)
{
	return c->mode && (!strcmp(c->mode, "record") || !strcmp(c->mode, "c2c") ||
			   !strcmp(c->mode, "mem") || !strcmp(c->mode, "offcpu"));
}
static void
print_commands(FILE *f)
{
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(cmds); i++)
		fprintf(f, "    %-10s%s%s\n", cmds[i].name,
			strlen(cmds[i].name) >= 10 ? "\n              " : "",
			cmds[i].help);
}

noreturn static void
top_usage(int code)
{
	FILE *f = code ? stderr : stdout;

	fputs(usage, f);
	print_commands(f);
	exit(ff_finish() ? 1 : code);
}

/* Find a program beside us, in $FLIMFLAM_EXEC_PATH, or on PATH. */
char *
program(const char *name)
{
	char *p = ff_helper_path(name), *w;

	if (strchr(p, '/'))
		return p;
	w = ff_which(p);
	free(p);
	return w;
}

static const char check_hosts_usage[] =
	"usage: flimflam check --hosts ROLE=[USER@]HOST[/ADDRESS],... [-w WORKLOAD] [-r RELAY]\n"
	"                      [--hops N]\n"
	"\n"
	"Check each host of --hosts over ssh: the same flimflam version as here, the\n"
	"programs its role needs (the workload's client or server, the relay), perf's\n"
	"permission to attach where a relay runs, and its clock against this one's.\n"
	"-w, -r and --hops name the run's workload, relay and chain (default builtin,\n"
	"skrouterd, and the relay's own hops as for run: 2): the roles are client,\n"
	"r1 ... rN, server.\n";

/* check --hosts: flimflam's own (ff-check checks this machine). */
noreturn static void
check_hosts(int argc, char *argv[])
{
	static const struct option own[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct option *longopts = ff_runspec_options(own, FF_RS_PLACE);
	char why[512];
	int ch;

	optind = 1;
	while ((ch = ff_getopt(argc, argv, ":hw:r:", longopts, check_hosts_usage)) != -1)
		if (ch == 'h')
			ff_usage(check_hosts_usage, 0);
		else
			ff_runspec_take(&opt, check_hosts_usage, ch, optarg);
	if (optind < argc)
		ff_usage_error(check_hosts_usage, "unexpected argument '%s'", argv[optind]);
	/* The roles r1 ... rN are the chain's, as for run. */
	if (opt.hops < 0)
		opt.hops = ff_relay_hops(opt.relay);
	if (!ff_hops_fit(opt.relay, opt.hops, why, sizeof(why)))
		ff_usage_error(check_hosts_usage, "%s", why);
	if (hosts_parse(opt.hosts, (int)opt.hops, 0, why, sizeof(why)) < 0)
		ff_usage_error(check_hosts_usage, "%s", why);
	if (!hosts_any_remote())
		ff_usage_error(check_hosts_usage, "--hosts names no other host (all are localhost); 'flimflam check' checks this one");
	ch = hosts_check(opt.workload, opt.relay);
	exit(ff_finish() ? 1 : ch);
}

/* Does the command line name --hosts (check's own case)? */
static int
has_hosts(int argc, char *argv[])
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--hosts") || !strncmp(argv[i], "--hosts=", 8))
			return 1;
	return 0;
}

noreturn static void
exec_cmd(const struct cmd *c, int argc, char *argv[])
{
	char **args = calloc(argc + 3, sizeof(*args)), *path = program(c->prog);
	int i, n = 0;

	if (!path) {
		ff_warn("'%s' needs %s, which is not installed beside flimflam nor on PATH",
			c->name, c->prog);
		exit(127);
	}
	/* Named as the user called it: its messages and usage say so. */
	args[n++] = ff_asprintf("flimflam %s", c->name);
	if (c->mode)
		args[n++] = (char *)c->mode;
	for (i = 1; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	execv(path, args);
	ff_warn("cannot run '%s': %s", path, strerror(errno));
	exit(errno == ENOENT ? 127 : 126);
}

/* The run options */

static void
parse_run(const struct cmd *c, int argc, char *argv[])
{
	const struct option *longopts = ff_runspec_options(run_own, FF_RS_RUN);
	struct ff_buf help = FF_BUF_INIT;
	int ch;

	ff_runspec_help(&help, FF_RS_RUN, "build", !strcmp(c->name, "flamegraph") ?
			"; twice (A=PATH --build B=PATH):\neach build's flamegraph and the differential one" : NULL);
	snprintf(run_usage, sizeof(run_usage), run_usage_fmt, c->name,
		 samples(c) ? perf_synopsis : "", c->help, help.s, samples(c) ? perf_options : "");
	ff_buf_free(&help);
	opt.cmd = c->name;
	opt.mode = c->mode;
	optind = 1;
	while ((ch = ff_getopt(argc, argv, ":hw:r:p:", longopts, run_usage)) != -1)
		switch (ch) {
		case 'h':
			ff_usage(run_usage, 0);
		case FF_OPT_BUILD:
			if (opt.nbuild == (strcmp(c->name, "flamegraph") ? 1 : 2))
				ff_fail(2, "--build is given %s: '%s' runs %s", opt.nbuild == 1 ?
					"twice" : "three times", c->name, opt.nbuild == 1 ?
					"one build (flamegraph compares two)" : "two builds at most");
			ff_runspec_take(&opt, run_usage, ch, optarg);
			break;
		case OPT_CALL_GRAPH:
		case OPT_FREQ:
			if (ch == OPT_FREQ && !strcmp(c->name, "offcpu"))
				ff_usage_error(run_usage, "--freq is not for offcpu, which records every switch of the relays' threads");
			if (!samples(c))
				ff_usage_error(run_usage, "%s is for record, c2c, mem and flamegraph, not '%s'",
					       ch == OPT_FREQ ? "--freq" : "--call-graph", c->name);
			if (ch == OPT_FREQ)
				perf_opt.freq = ff_parse_run_opt(run_usage, "--freq", optarg);
			else
				perf_opt.call_graph = call_graphs[ff_parse_name(run_usage, "call graph method",
										optarg, call_graphs)];
			break;
		default:
			ff_runspec_take(&opt, run_usage, ch, optarg);
		}
	if (optind < argc)
		ff_usage_error(run_usage, "unexpected argument '%s'", argv[optind]);
}

/*
 * What --hosts can run: every workload (each server listens on its host's
 * address, each client connects to one), and relays that listen on one;
 * skrouterd's routers on one host share its address.
 */
static void
validate_hosts(const struct ff_runspec *rs, const char *use)
{
	if (!hosts_any())
		return;
	if (!strcmp(rs->cmd, "flamegraph") && rs->nbuild == 2 && !hosts_relays_together((int)rs->hops))
		ff_usage_error(use, "--hosts: a differential flamegraph compares one recording of each build, and relays on different hosts make one each: put them on one host for two builds");
	if (rs->tls && !ff_relay_has(rs->relay, FF_RELAY_TLS_REMOTE) && !hosts_relays_together((int)rs->hops))
		ff_usage_error(use, "--hosts: --tls over %s proves each link from the relay it comes to, so its relays go on one host (these take --tls across hosts: %s)",
			       rs->relay, ff_relays_with(FF_RELAY_TLS_REMOTE));
	if (!ff_relay_has(rs->relay, FF_RELAY_ONE_ADDRESS) || !hosts_relays_together((int)rs->hops))
		return;
	for (int k = 2; k <= rs->hops; k++) {
		char rk[16];
		const char *a = hosts_address("r1"), *b;

		snprintf(rk, sizeof(rk), "r%d", k);
		b = hosts_address(rk);
		if (a != b && (!a || !b || strcmp(a, b)))
			ff_usage_error(use, "--hosts: r1 ... r%ld name one host for %s, with one address",
				       rs->hops, rs->relay);
	}
}

/* --hosts for a run: every role named has its address. */
static int
run_hosts_parse(const char *spec, int nrelays, char *why, size_t n)
{
	return hosts_parse(spec, nrelays, 1, why, n);
}

/* Is the role's program checked here, or on its host (by its stage)? */
static int
checked_here(const char *role)
{
	return !hosts_dest(role);
}

/* Where the roles of a run go, for ff_runspec_check. */
static const struct ff_runspec_place place = {
	run_hosts_parse, validate_hosts, checked_here, hosts_relays_remote,
};

/* Running the pipeline */

/* What is wrong with the request itself, before anything else is checked. */
static void
capture_usage(const struct cmd *c)
{
	char *p, why[512];

	if (strcmp(c->mode, "skstat") || !ff_relay_find(opt.relay)->processes)
		return;		/* relay none: validate_run says it */
	if (!ff_relay_has(opt.relay, FF_RELAY_STATS))
		ff_usage_error(run_usage, "'skstat' reads the routers' statistics, so it needs relay "
			       "'%s', not '%s'", ff_relays_with(FF_RELAY_STATS), opt.relay);
	if (!ff_carries(opt.workload, opt.relay, opt.protocol, NULL, NULL, why, sizeof(why)))
		return;		/* a usage error first */
	if (opt.nbuild)
		return;		/* ff-capture --check finds the build's skstat */
	p = ff_which(ff_relay_program(opt.relay));
	if (!p)
		ff_die("'skstat' reads the statistics of two %s routers, and %s is not "
		       "on PATH: put the router under test on PATH (skstat beside it, Proton's Python "
		       "binding on PYTHONPATH)", opt.relay, ff_relay_program(opt.relay));
	free(p);
}

/*
 * What this machine can capture (perf can attach, memory events for c2c and
 * mem, lbr, skstat and its Proton), before anything starts: ff-capture
 * --check --json knows, the same check it makes itself, and answers with
 * one `check` event; its notes and its reason are ours to say.
 */
static void
capture_check(const struct cmd *c)
{
	char *path = program("ff-capture"), *out, *line, *next;
	char *argv[] = { path, "--check", "--json", (char *)c->mode, "--call-graph",
			 (char *)perf_opt.call_graph, "--freq", (char *)freq_arg(), NULL, NULL, NULL };
	json_t *ev = NULL, *note;
	size_t i;
	int status;

	if (!strcmp(c->mode, "none") || hosts_relays_remote((int)opt.hops))
		return;		/* relays elsewhere: ff-capture checks there, as their stage */
	if (!path)
		ff_die("cannot find ff-capture beside flimflam nor on PATH");
	if (!samples(c))
		argv[4] = NULL;
	if (opt.nbuild && !strcmp(c->mode, "skstat")) {
		argv[samples(c) ? 8 : 4] = "--build";
		argv[samples(c) ? 9 : 5] = (char *)opt.build[0];
	}
	/* It opens perf events and starts programs: longer than a version probe on a busy machine. */
	out = ff_run_within(argv, &status, CAPTURE_CHECK_SECONDS);
	if (!out)
		ff_die("cannot run '%s'", path);
	if (status == -1)
		ff_die("checking what this machine can capture took more than " FF_STR(CAPTURE_CHECK_SECONDS) " s");
	/* Its stdout and stderr together: the answer is the line that is a check event. */
	for (line = out; *line && !ev; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		ev = json_loads(line, 0, NULL);
		if (!json_is_object(ev) || strcmp(ff_event_name(ev), "check"))
			ev = (json_decref(ev), NULL);
	}
	if (!ev)
		ff_fail(WIFEXITED(status) && WEXITSTATUS(status) == 2 ? 2 : 1,
			"'%s --check %s' gave no answer (%s): %s", path, c->mode,
			ff_status_how(status), out[0] ? out : "it said nothing");
	free(out);
	free(path);
	json_array_foreach(json_object_get(ev, "notes"), i, note)
		ff_warn("note: %s", json_string_value(note));
	if (!json_is_true(json_object_get(ev, "ok")))
		ff_die("%s", ff_json_str(ev, "message"));
	json_decref(ev);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "debug", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *c = NULL;
	const char *rundir;
	json_t *events;
	char level[8];
	size_t i;
	int ch;

	ff_setprog(argv[0]);
	ff_runspec_init(&opt);
	opterr = 0;
	while ((ch = ff_getopt(argc, argv, "+:h", longopts, usage)) != -1)
		switch (ch) {
		case 'h':
			top_usage(0);
		case 'v':
			ff_verbosity = ff_verbosity > 1 ? ff_verbosity : 1;
			break;
		case 'q':
			ff_verbosity = -1;
			break;
		case 'd':
			ff_verbosity = 2;
			break;
		}
	if (optind >= argc) {
		ff_warn("expected a command");
		top_usage(2);
	}
	if (!strcmp(argv[optind], "help")) {
		/* help CMD is CMD -h */
		static char h[] = "-h";

		if (optind + 1 >= argc)
			top_usage(0);
		if (optind + 2 < argc) {
			ff_warn("unexpected argument '%s'; 'help' takes one command", argv[optind + 2]);
			exit(2);
		}
		optind++;
		argv[optind + 1] = h;
		argc = optind + 2;
	}
	for (i = 0; i < FF_ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[optind], cmds[i].name))
			c = &cmds[i];
	if (!c) {
		ff_warn("'%s' is not a flimflam command; see 'flimflam --help'", argv[optind]);
		exit(2);
	}
	snprintf(level, sizeof(level), "%d", ff_verbosity);
	setenv("FLIMFLAM_VERBOSITY", level, 1);
	argc -= optind;
	argv += optind;
	if (!strcmp(c->name, "check") && has_hosts(argc, argv)) {
		ff_setprog("flimflam check");
		check_hosts(argc, argv);
	}
	if (c->kind == EXEC)
		exec_cmd(c, argc, argv);

	parse_run(c, argc, argv);
	capture_usage(c);
	ff_runspec_check(&opt, run_usage, &place);
	capture_check(c);
	outputs_check(c);
	ff_check_stdout();	/* not a whole run for a summary that cannot be printed */
	ff_signals_init();
	if (opt.nbuild == 2) {
		flamegraph_builds(c);	/* each build's run, pages and summary */
		return ff_finish();
	}
	rundir = ff_rundir(NULL);
	events = run_pipeline(c, rundir);
	if (!strcmp(c->name, "flamegraph"))
		render_flamegraph(events, rundir);
	if (!strcmp(c->name, "offcpu"))
		render_offcpu(events, rundir);
	if (!opt.json) {
		summarize(events, rundir);
		summarize_capture(c, events);
		if (!strcmp(c->name, "offcpu"))
			summarize_offcpu(events);
	}
	json_decref(events);
	return ff_finish();
}
