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
	{ "run", FF_CAPTURE_NONE, "Run a workload without capturing any data" },
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
	"usage: %s %s [-h]%s\n"	/* the rows' synopsis (ff_runspec_synopsis) */
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

enum { OPT_CALL_GRAPH = FF_OPT_OWN, OPT_FREQ };

/* Its own; the run's are the rows of FF_RS_RUN (lib/ff_runspec.c). */
static const struct option run_own[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ NULL, 0, NULL, 0 }
};

/* The perf options of the sampling commands: record, c2c, mem, flamegraph. */
static const char *const perf_synopsis[] = { "[--call-graph METHOD]", "[--freq HZ]", NULL };
static const char perf_options[] =
	"  --call-graph METHOD   How perf records call stacks: fp, dwarf or lbr (default 'fp')\n"
	"  --freq HZ             perf's sampling frequency per second (default 997)\n";
static const char *const call_graphs[] = { "fp", "dwarf", "lbr", NULL };

/* --freq as an argument (static). */
const char *
freq_arg(const struct run *run)
{
	static char buf[24];

	snprintf(buf, sizeof(buf), "%ld", run->perf.freq);
	return buf;
}

int
samples(const struct cmd *c)
{
	return c->mode && (!strcmp(c->mode, "record") || !strcmp(c->mode, "c2c") ||
			   !strcmp(c->mode, "mem") || !strcmp(c->mode, "offcpu"));
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
check_hosts(struct run *run, int argc, char *argv[])
{
	static const struct option own[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct option *longopts = ff_runspec_options(own, FF_RS_PLACE);
	struct ff_buf why = FF_BUF_INIT;
	char *check_hosts_usage;
	int ch;

	/* Its continuation under the first option, as the name is long. */
	check_hosts_usage = ff_asprintf(check_hosts_fmt, ff_prog(), (int)strlen(ff_prog()) + 8, "");
	optind = 1;
	while ((ch = ff_getopt(argc, argv, ":hw:r:", longopts, check_hosts_usage)) != -1)
		if (ch == 'h')
			ff_usage(check_hosts_usage, 0);
		else
			ff_runspec_take(&run->spec, check_hosts_usage, ch, optarg);
	if (optind < argc)
		ff_usage_error(check_hosts_usage, "unexpected argument '%s'", argv[optind]);
	/* The roles r1 ... rN are the chain's, as for run. */
	if (run->spec.hops < 0)
		run->spec.hops = ff_relay_hops(run->spec.relay);
	if (!ff_hops_fit(run->spec.relay, run->spec.hops, &why))
		ff_usage_error(check_hosts_usage, "%s", why.s);
	if (hosts_parse(run->spec.hosts, (int)run->spec.hops, 0, &why) < 0)
		ff_usage_error(check_hosts_usage, "%s", why.s);
	if (!hosts_any_remote())
		ff_usage_error(check_hosts_usage, "--hosts names no other host (all are localhost); 'flimflam check' checks this one");
	ch = hosts_check(run->spec.workload, run->spec.relay);
	exit(ff_finish() ? 1 : ch);
}

/* The run options */

static void
parse_run(struct run *run, const struct cmd *c, int argc, char *argv[])
{
	const struct option *longopts = ff_runspec_options(run_own, FF_RS_RUN);
	struct ff_buf help = FF_BUF_INIT, synopsis = FF_BUF_INIT;
	int ch;

	ff_runspec_synopsis(&synopsis, FF_RS_RUN, samples(c) ? perf_synopsis : NULL);
	ff_runspec_help(&help, FF_RS_RUN, "build", !strcmp(c->name, "flamegraph") ?
			"; twice (A=PATH --build B=PATH):\neach build's flamegraph and the differential one" : NULL);
	snprintf(run->usage, sizeof(run->usage), run_usage_fmt, ff_prog(), c->name, synopsis.s,
		 c->help, help.s, samples(c) ? perf_options : "");
	ff_buf_free(&synopsis);
	ff_buf_free(&help);
	run->spec.cmd = c->name;
	run->spec.mode = c->mode;
	optind = 1;
	while ((ch = ff_getopt(argc, argv, ":hw:r:p:", longopts, run->usage)) != -1)
		switch (ch) {
		case 'h':
			ff_usage(run->usage, 0);
		case FF_OPT_BUILD:
			if (run->spec.nbuild == (strcmp(c->name, "flamegraph") ? 1 : 2))
				ff_fail(2, "--build is given %s: '%s' runs %s", run->spec.nbuild == 1 ?
					"twice" : "three times", c->name, run->spec.nbuild == 1 ?
					"one build (flamegraph compares two)" : "two builds at most");
			ff_runspec_take(&run->spec, run->usage, ch, optarg);
			break;
		case OPT_CALL_GRAPH:
		case OPT_FREQ:
			if (ch == OPT_FREQ && !strcmp(c->name, "offcpu"))
				ff_usage_error(run->usage, "--freq is not for offcpu, which records every switch of the relays' threads");
			if (!samples(c))
				ff_usage_error(run->usage, "%s is for record, c2c, mem and flamegraph, not '%s'",
					       ch == OPT_FREQ ? "--freq" : "--call-graph", c->name);
			if (ch == OPT_FREQ)
				run->perf.freq = ff_parse_run_opt(run->usage, "--freq", optarg);
			else
				run->perf.call_graph = call_graphs[ff_parse_name(run->usage, "call graph method",
										optarg, call_graphs)];
			break;
		default:
			ff_runspec_take(&run->spec, run->usage, ch, optarg);
		}
	if (optind < argc)
		ff_usage_error(run->usage, "unexpected argument '%s'", argv[optind]);
}


/* The command named argv[1], or a usage error. */
static const struct cmd *
command(struct run *run, int argc, char *argv[])
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
		check_hosts(run, argc - 1, argv + 1);
	}
	ff_usage_error(usage, "'%s' is not a command of ff-run", argv[1]);
}

/* One run (one build's): its pipeline, its page, its summary. */
static void
run_one(struct run *run, const struct cmd *c)
{
	const char *rundir = ff_rundir(NULL);
	json_t *events = run_pipeline(run, c, rundir);

	if (!strcmp(c->name, "flamegraph"))
		render_flamegraph(run, events, rundir);
	if (!strcmp(c->name, "offcpu"))
		render_offcpu(run, events, rundir);
	if (!run->spec.json) {
		summarize(run, events, rundir);
		summarize_capture(run, c, events);
		if (!strcmp(c->name, "offcpu"))
			summarize_offcpu(run, events);
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
	struct run one = { .perf = { "fp", 997 }, .offcpu_us = -1 }, *run = &one;
	const struct cmd *c;

	ff_setprog(argv[0]);
	ff_runspec_init(&run->spec);
	c = command(run, argc, argv);
	parse_run(run, c, argc - 1, argv + 1);
	if (run->spec.json)
		ff_set_fail_hook(ff_error_event);	/* why we failed, in the stream too */
	capture_usage(run, c);
	validate_run(run);
	capture_check(run, c);
	outputs_check(run, c);
	ff_check_stdout();	/* not a whole run for a summary that cannot be printed */
	ff_signals_init();
	if (run->spec.nbuild == 2)
		flamegraph_builds(run, c);	/* each build's run, pages and summary */
	else
		run_one(run, c);
	return ff_finish();
}
