/*
 * ff-run - flimflam's engine: run and the capture commands (stat, skstat,
 * record, c2c, mem, flamegraph, offcpu, lock) build the pipeline
 *
 *   ff-workload serve | ff-topology | ff-workload drive | ff-capture MODE
 *
 * with libpipeline, read its events, and print a human summary (or, with
 * --json, the events themselves). The dispatcher, flimflam, execs it as
 * "flimflam COMMAND ...", so that its messages say "flimflam: ..."; check
 * --hosts is here too, as it shares --hosts with the runs.
 */
#include "ff-run.h"

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

/* The commands: each a capture mode of ff-capture (none: run, captures nothing). */
static const struct cmd cmds[] = {
	{ "run", "none", "Run a workload without capturing any data" },
	{ "stat", "stat", "Capture 'perf stat' output" },
	{ "skstat", "skstat", "Capture 'skstat' output" },
	{ "record", "record", "Capture perf events using 'perf record'" },
	{ "c2c", "c2c", "Capture perf events using 'perf c2c'" },
	{ "mem", "mem", "Capture perf events using 'perf mem'" },
	{ "flamegraph", "record", "Generate a flamegraph" },
	{ "offcpu", "offcpu", "Generate a flamegraph of where the relays wait (off-CPU time)" },
	{ "lock", "lock", "Capture the relays' contended kernel locks using 'perf lock'" },
};

static const char usage[] =
	"usage: ff-run COMMAND [OPTION]...\n"
	"       ff-run check --hosts ROLE=[USER@]HOST[/ADDRESS],... [-w WORKLOAD] [-r RELAY]\n"
	"                    [--hops N]\n"
	"\n"
	"flimflam's engine: runs the pipeline\n"
	"\n"
	"  ff-workload serve | ff-topology | ff-workload drive | ff-capture MODE\n"
	"\n"
	"reads its events, and prints a summary (or, with --json, the events). COMMAND\n"
	"is run, stat, skstat, record, c2c, mem, flamegraph, offcpu or lock, with the\n"
	"options of 'flimflam COMMAND' ('ff-run COMMAND -h'); check --hosts checks the\n"
	"hosts of --hosts over ssh. Its messages are named as it was run: flimflam runs\n"
	"it as 'flimflam'.\n";

static const char run_usage_fmt[] =
	"usage: %s %s [-h] [-w WORKLOAD] [-r RELAY] [-p PROTOCOL] [--jobs JOBS]\n"
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

char run_usage[4096];

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

static const char check_hosts_fmt[] =
	"usage: %s --hosts ROLE=[USER@]HOST[/ADDRESS],... [-w WORKLOAD] [-r RELAY]\n"
	"%*s[--hops N]\n"
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
	char why[512], *check_hosts_usage;
	int ch;

	/* Its continuation under the first option, as the name is long. */
	check_hosts_usage = ff_asprintf(check_hosts_fmt, ff_prog(), (int)strlen(ff_prog()) + 8, "");
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

/* The run options */

static void
parse_run(const struct cmd *c, int argc, char *argv[])
{
	int ch;

	snprintf(run_usage, sizeof(run_usage), run_usage_fmt, ff_prog(), c->name,
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


/* The command named argv[1], or a usage error. */
static const struct cmd *
command(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ NULL, 0, NULL, 0 }
	};
	size_t i;

	/* Before the command: -h, --version (ff_getopt's), or a usage error naming the option. */
	optind = 1;
	while (argc > 1 && argv[1][0] == '-' && ff_getopt(argc, argv, "+:h", longopts, usage) != -1)
		ff_usage(usage, 0);
	if (argc < 2)
		ff_usage_error(usage, "expected a command");
	for (i = 0; i < FF_ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return &cmds[i];
	if (!strcmp(argv[1], "check")) {
		/* check --hosts: flimflam's own (ff-check checks this machine). */
		ff_setprog(ff_asprintf("%s check", ff_prog()));
		check_hosts(argc - 1, argv + 1);
	}
	ff_usage_error(usage, "'%s' is not a command of ff-run", argv[1]);
}

/* One run (one build's): its pipeline, its page, its summary. */
static void
run_one(const struct cmd *c)
{
	const char *rundir = ff_rundir(NULL);
	json_t *events = run_pipeline(c, rundir);

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
}

/*
 * ff-run COMMAND [OPTION]...: argv[0] names us in messages ("flimflam"
 * when the dispatcher runs us, as users of 'flimflam run' see it).
 */
int
main(int argc, char *argv[])
{
	const struct cmd *c;

	ff_setprog(argv[0]);
	c = command(argc, argv);
	parse_run(c, argc - 1, argv + 1);
	if (opt.json)
		ff_set_fail_hook(ff_error_event);	/* why we failed, in the stream too */
	capture_usage(c);
	validate_builds();
	validate_run(c);
	capture_check(c);
	outputs_check(c);
	ff_check_stdout();	/* not a whole run for a summary that cannot be printed */
	ff_signals_init();
	if (opt.nbuild == 2)
		flamegraph_builds(c);	/* each build's run, pages and summary */
	else
		run_one(c);
	return ff_finish();
}
