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

/* ff-capture's mode that captures nothing: run's (a command of the table has it or not). */
static const char no_capture[] = "none";

static const struct cmd cmds[] = {
	{ "check", "ff-check", NULL, EXEC,
	  "Check for required programs and system configuration" },
	{ "run", NULL, no_capture, PIPELINE,
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
	"  -w WORKLOAD, --workload WORKLOAD\n"
	"                        The selected workload (default 'builtin')\n"
	"  -r RELAY, --relay RELAY\n"
	"                        The intermediary standing between the workload client and\n"
	"                        server (default 'skrouterd')\n"
	"  -p PROTOCOL, --protocol PROTOCOL\n"
	"                        The selected protocol (default 'tcp')\n"
	"  --jobs JOBS           The number of concurrent workload jobs (default 2)\n"
	"  --warmup SECONDS      The warmup time in seconds (default 5)\n"
	"  --duration SECONDS    The execution time (excluding warmup) in seconds (default 5)\n"
	"  --cpu-limit COUNT     The max per-process relay CPU usage (0 means no limit)\n"
	"                        (default 1)\n"
	"  --hops N              The relays in a chain, client -> R1 -> ... -> RN -> server\n"
	"                        (1 to 8; default 2; relay none has none)\n"
	"  --json                Print the event stream (JSON lines) instead of the summary\n"
	"  --request-size BYTES  builtin-rr, builtin-crr: the request's size (default 1)\n"
	"  --response-size BYTES builtin-rr, builtin-crr: the response's size (default 1)\n"
	"  --rate N              builtin-rr, builtin-crr: N transactions a second in all,\n"
	"                        latency from when each was due (default: closed loop)\n"
	"  --interval SECONDS    The window as a time series: figures every SECONDS\n"
	"                        (0.1 to the duration; default 1)\n"
	"  --tls                 The links between relays use mutual TLS, with certificates\n"
	"                        made for the run (the client and server stay plain)\n"
	"  --build LABEL=PATH    Run the relay from PATH (its binary, or an install prefix\n"
	"                        whose sbin/ or bin/ holds it) in that build's own\n"
	"                        environment%s\n"
	"  --hosts ROLE=[USER@]HOST[/ADDRESS],...\n"
	"                        Run roles (client, r1 ... rN of --hops, server) on other\n"
	"                        hosts over ssh; ADDRESS is the host's address for the\n"
	"                        workload's traffic (default: HOST's). Unnamed roles run here\n"
	"  --relay-cmd COMMAND   Relay cmd: the program each relay runs, as words (no shell),\n"
	"                        with {listen_port} and {upstream} (or {listen}, {upstream_port},\n"
	"                        {listen_host}, {upstream_host}, {dir}, {role}) filled in\n"
	"%s"
	"\n"
	"Workloads: builtin, iperf3, h2load, h2load-h1, builtin-rr, builtin-crr.\n"
	"Relays: skrouterd, nghttpx, nginx, haproxy, cmd, none. Protocols: tcp, http1, http2.\n";

static char run_usage[4096];

enum { OPT_JSON = FF_OPT_OWN, OPT_CALL_GRAPH, OPT_FREQ, OPT_HOPS, OPT_TLS, OPT_HOSTS, OPT_RELAY_CMD };

static const struct option run_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	{ "workload", required_argument, NULL, 'w' },
	{ "relay", required_argument, NULL, 'r' },
	{ "protocol", required_argument, NULL, 'p' },
	FF_RUN_LONGOPTS,
	{ "json", no_argument, NULL, OPT_JSON },
	{ "tls", no_argument, NULL, OPT_TLS },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ "hops", required_argument, NULL, OPT_HOPS },
	{ "hosts", required_argument, NULL, OPT_HOSTS },
	{ "relay-cmd", required_argument, NULL, OPT_RELAY_CMD },
	FF_LONGOPT_BUILD,
	{ NULL, 0, NULL, 0 }
};

struct run_opt opt = {
	.workload = "builtin", .relay = "skrouterd", .protocol = "tcp",
	.run = FF_RUN_OPTS_DEFAULTS, .hops = -1,
};

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
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "hosts", required_argument, NULL, OPT_HOSTS },
		{ "workload", required_argument, NULL, 'w' },
		{ "relay", required_argument, NULL, 'r' },
		{ "hops", required_argument, NULL, OPT_HOPS },
		{ NULL, 0, NULL, 0 }
	};
	const char *spec = NULL;
	char why[512];
	int ch;

	optind = 1;
	while ((ch = ff_getopt(argc, argv, ":hw:r:", longopts, check_hosts_usage)) != -1)
		switch (ch) {
		case 'h':
			ff_usage(check_hosts_usage, 0);
		case 'w':
			opt.workload = ff_workloads[ff_parse_name(check_hosts_usage, "workload", optarg, ff_workloads)];
			break;
		case 'r':
			opt.relay = ff_relays[ff_parse_name(check_hosts_usage, "relay", optarg, ff_relays)];
			break;
		case OPT_HOSTS:
			spec = optarg;
			break;
		case OPT_HOPS:
			opt.hops = ff_parse_run_opt(check_hosts_usage, "--hops", optarg);
			break;
		}
	if (optind < argc)
		ff_usage_error(check_hosts_usage, "unexpected argument '%s'", argv[optind]);
	/* The roles r1 ... rN are the chain's, as for run. */
	if (opt.hops < 0)
		opt.hops = ff_relay_hops(opt.relay);
	if (!ff_hops_fit(opt.relay, opt.hops, why, sizeof(why)))
		ff_usage_error(check_hosts_usage, "%s", why);
	if (hosts_parse(spec, (int)opt.hops, 0, why, sizeof(why)) < 0)
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
	int ch;

	snprintf(run_usage, sizeof(run_usage), run_usage_fmt, c->name,
		 samples(c) ? perf_synopsis : "", c->help,
		 !strcmp(c->name, "flamegraph") ? "; twice (A=PATH --build B=PATH):\n"
		 "                        each build's flamegraph and the differential one" : "",
		 samples(c) ? perf_options : "");
	optind = 1;
	while ((ch = ff_getopt(argc, argv, ":hw:r:p:", run_longopts, run_usage)) != -1)
		switch (ch) {
		case 'h':
			ff_usage(run_usage, 0);
		case 'w':
			opt.workload = ff_workloads[ff_parse_name(run_usage, "workload", optarg, ff_workloads)];
			break;
		case 'r':
			opt.relay = ff_relays[ff_parse_name(run_usage, "relay", optarg, ff_relays)];
			break;
		case 'p':
			opt.protocol = ff_protocols[ff_parse_name(run_usage, "protocol", optarg, ff_protocols)];
			break;
		case OPT_JSON:
			opt.json = 1;
			break;
		case OPT_TLS:
			opt.tls = 1;
			break;
		case OPT_HOSTS:
			opt.hosts = optarg;
			break;
		case OPT_RELAY_CMD:
			opt.relay_cmd = optarg;
			break;
		case OPT_HOPS:
			opt.hops = ff_parse_run_opt(run_usage, "--hops", optarg);
			break;
		case FF_OPT_BUILD:
			if (opt.nbuild == (strcmp(c->name, "flamegraph") ? 1 : 2))
				ff_fail(2, "--build is given %s: '%s' runs %s", opt.nbuild == 1 ?
					"twice" : "three times", c->name, opt.nbuild == 1 ?
					"one build (flamegraph compares two)" : "two builds at most");
			opt.build[opt.nbuild++] = optarg;
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
			ff_take_run_opt(run_usage, ch, optarg, &opt.run);
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
validate_hosts(const struct cmd *c)
{
	if (!hosts_any())
		return;
	if (!strcmp(c->name, "flamegraph") && opt.nbuild == 2 && !hosts_relays_together((int)opt.hops))
		ff_usage_error(run_usage, "--hosts: a differential flamegraph compares one recording of each build, and relays on different hosts make one each: put them on one host for two builds");
	if (opt.tls && !ff_relay_has(opt.relay, FF_RELAY_TLS_REMOTE) && !hosts_relays_together((int)opt.hops))
		ff_usage_error(run_usage, "--hosts: --tls over %s proves each link from the relay it comes to, so its relays go on one host (these take --tls across hosts: %s)",
			       opt.relay, ff_relays_with(FF_RELAY_TLS_REMOTE));
	if (!ff_relay_has(opt.relay, FF_RELAY_ONE_ADDRESS) || !hosts_relays_together((int)opt.hops))
		return;
	for (int k = 2; k <= opt.hops; k++) {
		char rk[16];
		const char *a = hosts_address("r1"), *b;

		snprintf(rk, sizeof(rk), "r%d", k);
		b = hosts_address(rk);
		if (a != b && (!a || !b || strcmp(a, b)))
			ff_usage_error(run_usage, "--hosts: r1 ... r%ld name one host for %s, with one address",
				       opt.hops, opt.relay);
	}
}

/*
 * What the relay's row says it cannot do: --tls without a proof of its
 * links; relay cmd without its --relay-cmd (whose words and program are
 * checked here, one line before anything starts), or across hosts.
 */
static void
validate_relay_caps(void)
{
	char why[512], *p;

	if (opt.tls && !ff_relay_has(opt.relay, FF_RELAY_TLS) && ff_relay_hops(opt.relay))
		ff_usage_error(run_usage, "--tls: relay '%s' cannot prove its links (these can: %s)", opt.relay,
			       ff_relays_with(FF_RELAY_TLS));
	if (opt.relay_cmd && !ff_relay_has(opt.relay, FF_RELAY_COMMAND))
		ff_usage_error(run_usage, "--relay-cmd is for relay %s, not '%s'",
			       ff_relays_with(FF_RELAY_COMMAND), opt.relay);
	if (!ff_relay_has(opt.relay, FF_RELAY_COMMAND))
		return;
	if (!opt.relay_cmd)
		ff_usage_error(run_usage, "relay '%s' runs the command of --relay-cmd, and none is given", opt.relay);
	if (hosts_relays_remote((int)opt.hops))
		ff_usage_error(run_usage, "--hosts: relay '%s' runs its command on this host: leave r1 ... rN out of --hosts", opt.relay);
	switch (ff_relay_cmd_program(opt.relay_cmd, &p, why, sizeof(why))) {
	case 2:
		ff_usage_error(run_usage, "%s", why);
	case 1:
		ff_die("%s", why);
	}
	free(p);
}

/* Is the role's program checked here, or on its host (by its stage)? */
static int
checked_here(const char *role)
{
	return !hosts_dest(role);
}

/*
 * The builds: each resolves to the relay asked for (a usage error, one
 * line, when not), their labels differ, and their relay runs a program.
 */
static void
validate_builds(void)
{
	char why[1024];
	int i;

	for (i = 0; i < opt.nbuild; i++) {
		if (!ff_relay_find(opt.relay)->program)
			ff_fail(2, "--build is for a relay that runs a program, and relay '%s' runs none",
				opt.relay);
		if (ff_build_parse(opt.build[i], opt.relay, &opt.builds[i], why, sizeof(why)) < 0)
			ff_fail(2, "%s", why);
		if (i && !strcmp(opt.builds[0].label, opt.builds[i].label))
			ff_fail(2, "--build: the label '%s' is given twice: each build needs its own",
				opt.builds[i].label);
	}
}

/* Everything that can be known before starting anything. */
static void
validate_run(const struct cmd *c)
{
	const struct ff_relay *rl = ff_relay_find(opt.relay);
	const char *need[3], *role[3];
	cpu_set_t avail;
	char why[512];
	int n = 0, i, ncpus, relay_at = -1;

	if (!ff_carries(opt.workload, opt.relay, opt.protocol, NULL, NULL, why, sizeof(why)))
		ff_usage_error(run_usage, "%s; these work for %s: %s", why, opt.workload,
			       ff_combos_for(opt.workload, NULL));
	if (c->mode != no_capture && !rl->processes)
		ff_usage_error(run_usage, "'%s' captures in the relays, and relay '%s' has none",
			       c->name, opt.relay);
	if (opt.hops < 0)
		opt.hops = ff_relay_hops(opt.relay);
	if (!ff_hops_fit(opt.relay, opt.hops, why, sizeof(why)))
		ff_usage_error(run_usage, "%s", why);
	/* The roles r1 ... rN are the chain's: known once --hops is. */
	if (opt.hosts && hosts_parse(opt.hosts, (int)opt.hops, 1, why, sizeof(why)) < 0)
		ff_usage_error(run_usage, "%s", why);
	if (ff_workload_limits(opt.workload, &opt.run, why, sizeof(why)) < 0)
		ff_usage_error(run_usage, "%s", why);
	ff_check_interval(run_usage, opt.run.interval, opt.run.duration);
	if (opt.tls && opt.hops < 2)
		ff_usage_error(run_usage, "--tls is for the links between relays, and %s",
			       opt.hops ? "--hops 1 has one relay and no link" :
			       "relay 'none' has none");
	if (ff_rr_opts_set(&opt.run) && !ff_workload_is_rr(opt.workload))
		ff_usage_error(run_usage, "--request-size, --response-size and --rate are for workloads builtin-rr and builtin-crr, not '%s'",
			       opt.workload);
	/* The stages and what they start inherit our limit, raised to the hard one. */
	if (ff_jobs_fit(opt.relay, opt.protocol, opt.run.jobs, why, sizeof(why)) < 0)
		ff_die("%s", why);
	ff_raise_nofile(LONG_MAX);
	ncpus = ff_cpus_available(&avail);
	if (opt.run.cpu_limit > ncpus)
		ff_usage_error(run_usage, "--cpu-limit: %ld is more than the %d CPU%s this process may use",
			       opt.run.cpu_limit, ncpus, ncpus == 1 ? "" : "s");
	if (rl->program && !opt.nbuild) {
		relay_at = n;
		role[n] = "r1";
		need[n++] = rl->program;
	}
	for (i = 0; i < opt.nbuild; i++) {
		struct ff_build *b = &opt.builds[i];
		void *saved;
		int can;

		saved = ff_build_env_enter(b);
		can = ff_carries(opt.workload, opt.relay, opt.protocol, b->path, NULL, why, sizeof(why));
		ff_build_env_leave(b, saved);
		if (can < 0)
			ff_die("%s", why);
		if (!can)
			ff_fail(2, "--build %s: %s", b->label, why);
	}
	if (ff_workload_server_program(opt.workload)) {
		role[n] = "server";
		need[n++] = ff_workload_server_program(opt.workload);
	}
	if (ff_workload_client_program(opt.workload)) {
		role[n] = "client";
		need[n++] = ff_workload_client_program(opt.workload);
	}
	validate_hosts(c);
	validate_relay_caps();
	if (opt.tls) {
		char *p = ff_which("openssl");

		if (!p)
			ff_die("--tls makes the run's certificates with openssl, which is not on PATH: install openssl");
		free(p);
	}
	for (i = 0; i < n; i++) {
		char *p;

		if (!checked_here(role[i]))
			continue;	/* its stage checks it there */
		p = ff_which(need[i]);

		if (p) {
			int can;

			/* A router that does not answer, or not as a router, before anything starts. */
			if (i == relay_at && rl->check && rl->check(p, why, sizeof(why)) < 0)
				ff_die("%s", why);
			can = i == relay_at ?
				ff_carries(opt.workload, opt.relay, opt.protocol, p, NULL, why, sizeof(why)) : 1;
			free(p);
			if (can < 0)
				ff_die("%s", why);
			if (!can)
				ff_usage_error(run_usage, "%s", why);
			continue;
		}
		if (i == relay_at)
			ff_die("relay '%s' needs %s, which is not on PATH (the other relays: %s)",
			       opt.relay, need[i], ff_other_relays(opt.relay));
		ff_die("workload '%s' needs %s, which is not on PATH; 'flimflam check' says how to install it",
		       opt.workload, need[i]);
	}
}

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

	if (c->mode == no_capture || hosts_relays_remote((int)opt.hops))
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
	validate_builds();
	validate_run(c);
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
