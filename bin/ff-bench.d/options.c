/*
 * ff-bench's options: its usage, the bench's own options and the run's,
 * the lists and builds they name checked, into opt (bench.c runs them).
 */
#include "ff-bench.h"

#include <time.h>

const char bench_usage[] =
	"usage: ff-bench [-h] [-w WORKLOADS] [-r RELAYS] [-p PROTOCOLS] [--jobs JOBS]\n"
	"                [--warmup SECONDS] [--duration SECONDS] [--cpu-limit COUNT]\n"
	"                [--hops N[,N...]] [--repeat N] [--output FILE [--force | --append]]\n"
	"                [--request-size BYTES] [--response-size BYTES] [--rate N] [--tls]\n"
	"                [--interval SECONDS] [--build LABEL=PATH ...] [--seed N]\n"
	"                [--pool HOST,HOST,...] [--slo pNN=MS]\n"
	"                [--relay-cmd COMMAND] [--workers N[,N...]] [--record]\n"
	"                [--together]\n"
	"       ff-bench summarize [FILE]\n"
	"       ff-bench compare [--threshold PCT] [--format text|markdown] [--json]\n"
	"                        BASE NEW | FILE --base LABEL --new LABEL\n"
	"       ff-bench report [-o FILE] FILE...\n"
	"\n"
	"Run each workload on each relay and summarize the results\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"  -w WORKLOADS, --workloads WORKLOADS\n"
	"                        The selected workloads (comma-separated list) (default\n"
	"                        'builtin,iperf3,h2load,h2load-h1,builtin-rr,builtin-crr')\n"
	"  -r RELAYS, --relays RELAYS\n"
	"                        The selected relays (comma-separated list) (default\n"
	"                        'skrouterd,nghttpx,nginx,haproxy,cmd,none')\n"
	"  -p PROTOCOLS, --protocols PROTOCOLS\n"
	"                        The selected protocols (comma-separated list) (default\n"
	"                        'tcp,http1,http2')\n"
	"  --jobs JOBS           The number of concurrent workload jobs (default 2); a\n"
	"                        list sweeps them, each value a case of its own\n"
	"  --warmup SECONDS      The warmup time in seconds (default 5)\n"
	"  --duration SECONDS    The execution time (excluding warmup) in seconds (default 5)\n"
	"  --cpu-limit COUNT     The max per-process relay CPU usage (0 means no limit)\n"
	"                        (default 1)\n"
	"  --hops N[,N...]       Chains of N relays (1 to 8), each a case of its own\n"
	"                        (default 2); relay none runs once, with no relay\n"
	"  --workers N[,N...]    Each relay's worker threads or processes (1 to 1024),\n"
	"                        as in flimflam run, each a case of its own; relays\n"
	"                        cmd and none run once, with their own\n"
	"  --repeat N            Run every case N times, interleaved (default 1)\n"
	"  --repeat auto[:BUDGET]\n"
	"                        With builds: rounds until each case is decided, for\n"
	"                        BUDGET at most (default 10m)\n"
	"  --output FILE         Keep the results (JSON lines) in FILE (default\n"
	"                        flimflam-bench-YYYYmmdd-HHMMSS.jsonl, in the current\n"
	"                        directory), and their report in FILE without .jsonl,\n"
	"                        with .html; an existing FILE is refused\n"
	"  --force               Replace an existing FILE (and report)\n"
	"  --append              Add the new runs to an existing results FILE\n"
	"  --request-size BYTES, --response-size BYTES, --rate N\n"
	"                        As in flimflam run (the sizes builtin-rr's and\n"
	"                        builtin-crr's, --rate theirs and h2load's too); each\n"
	"                        takes a comma list too, each value a case of its own\n"
	"  --interval SECONDS    Each run's window as a time series, as in flimflam run;\n"
	"                        unsteady runs are marked in the table (default 1)\n"
	"  --tls                 The links between relays use mutual TLS, as in flimflam\n"
	"                        run (part of each case; relay none and --hops 1 are skipped)\n"
	"  --build LABEL=PATH    A build of the relay under test (-r names one relay):\n"
	"                        its binary, or an install prefix whose sbin/ or bin/\n"
	"                        holds it; repeat it for each build. Each round runs\n"
	"                        every case with every build once, in a shuffled order\n"
	"  --seed N              The seed of that shuffle (default: a new one, printed\n"
	"                        and kept in each result); the same N replays the order.\n"
	"                        Without --build, cases are shuffled only with --seed\n"
	"  --together            With builds: each round runs a case's builds at the\n"
	"                        same time, side by side, so that what slows the\n"
	"                        machine slows them alike and their pairs vary less\n"
	"  --record              Each run records the relays with perf, as flimflam\n"
	"                        record does: its perf.data kept in its run directory,\n"
	"                        named by its row's capture (for flimflam explain)\n"
	"  --pool HOST,HOST,...  Spread the cases over these hosts with GNU parallel\n"
	"                        (--sshlogin), one case at a time per host, each a whole\n"
	"                        topology there; without GNU parallel they run here\n"
	"  --relay-cmd COMMAND   Relay cmd's command, as in run (cmd runs only with it)\n"
	"  --slo pNN=MS          builtin-rr, builtin-crr, h2load, h2load-h1: search each\n"
	"                        case's open-loop\n"
	"                        --rate (from --rate, default 1000) for the highest that\n"
	"                        keeps pNN (p50, p90, p99, p999, p9999) at most MS ms,\n"
	"                        with no errors and the rate achieved within 2%\n"
	"\n"
	"Unsupported combinations, and cases the skrouterd on PATH cannot carry (no\n"
	"HTTP adaptor), are not run. A relay or workload whose program is not on\n"
	"PATH is skipped. A failed case is reported and the bench goes on; the exit\n"
	"status is then 1, as it is when no case can run.\n";


/* A comma list of names: unknown, empty or repeated ones are usage errors. */
static int
parse_list(const char *what, const char *arg, const char *const names[], const char *out[])
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int n = 0, i, j;

	if (!copy)
		ff_die("out of memory");
	if (!*arg || arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
		ff_usage_error(bench_usage, "empty %s name in '%s'", what, arg);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		i = ff_parse_name(bench_usage, what, tok, names);
		for (j = 0; j < n; j++)
			if (out[j] == names[i])
				ff_usage_error(bench_usage, "%s '%s' is given twice", what, tok);
		out[n++] = names[i];
	}
	free(copy);
	return n;
}

static int
all_names(const char *const names[], const char *out[])
{
	int n;

	for (n = 0; names[n]; n++)
		out[n] = names[n];
	return n;
}

/*
 * Relay cmd runs --relay-cmd: named without it, a usage error; left out
 * of the default relays without it; here only (not over --pool).
 */
static void
relay_cmd_check(int by_default)
{
	struct ff_argv words = FF_ARGV_INIT;
	struct ff_buf why = FF_BUF_INIT;
	int i, k, cmd = 0;

	for (i = k = 0; i < opt.nr; i++) {
		if (!ff_relay_has(opt.relays[i], FF_RELAY_COMMAND))
			opt.relays[k++] = opt.relays[i];
		else if (opt.relay_cmd || !by_default) {
			opt.relays[k++] = opt.relays[i];
			cmd = 1;
		}
	}
	opt.nr = k;
	if (opt.relay_cmd && !cmd)
		ff_usage_error(bench_usage, "--relay-cmd is for relay %s, and it is not selected",
			       ff_relays_with(FF_RELAY_COMMAND));
	if (cmd && !opt.relay_cmd)
		ff_usage_error(bench_usage, "relay 'cmd' runs the command of --relay-cmd, and none is given");
	if (cmd && opt.pool)
		ff_usage_error(bench_usage, "--pool: relay 'cmd' runs its command on this host");
	if (cmd && ff_relay_cmd_split(opt.relay_cmd, &words, &why) < 0)
		ff_usage_error(bench_usage, "%s", why.s);
	ff_argv_free(&words);
}

/*
 * The builds: one relay under test, which runs a program; each build
 * resolves to it (one line, exit 2, when not); labels differ. With builds
 * (or --seed) each round is shuffled; the seed is new unless given.
 */
static void
bench_builds(void)
{
	struct ff_buf why = FF_BUF_INIT;
	int i, j;

	if (opt.nbuild) {
		if (opt.nr != 1)
			ff_fail(2, "--build is a build of the relay under test: name one relay with -r, not several");
		if (!ff_relay_program(opt.relays[0]))
			ff_fail(2, "--build is for a relay that runs a program, and relay '%s' runs none",
				opt.relays[0]);
		opt.shuffle = opt.shuffle ? opt.shuffle : 1;
	}
	for (i = 0; i < opt.nbuild; i++) {
		if (ff_build_parse(opt.build_args[i], opt.relays[0], &opt.builds[i], &why) < 0)
			ff_fail(2, "%s", why.s);
		for (j = 0; j < i; j++)
			if (!strcmp(opt.builds[j].label, opt.builds[i].label))
				ff_fail(2, "--build: the label '%s' is given twice: each build needs its own",
					opt.builds[i].label);
	}
	if (opt.shuffle == 1) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		opt.seed = ((long)ts.tv_nsec ^ ((long)getpid() << 12) ^ (long)ts.tv_sec) & 0x7fffffffL;
		opt.seed = opt.seed ? opt.seed : 1;
	}
}

enum { OPT_REPEAT = FF_OPT_OWN, OPT_OUTPUT, OPT_FORCE, OPT_APPEND, OPT_SEED, OPT_POOL,
       OPT_SLO, OPT_RECORD, OPT_TOGETHER };
/* The bench's own; the run's (-w, -r, -p as lists, --jobs, ..., --workers) are their rows'. */
static const struct option own_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "append", no_argument, NULL, OPT_APPEND },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "pool", required_argument, NULL, OPT_POOL },
	{ "slo", required_argument, NULL, OPT_SLO },
	{ "record", no_argument, NULL, OPT_RECORD },
	{ "together", no_argument, NULL, OPT_TOGETHER },
	{ NULL, 0, NULL, 0 }
};

/*
 * Option c of a bench (getopt's), with its argument, into opt; the run's
 * one-value options by their rows into rs (--warmup, --tls, ...), and the
 * sweeps' largest values.
 */
static void
take_option(struct ff_runspec *rs, int c, char *arg)
{
	const char *list = ff_runspec_list(c);

	switch (c) {
	case 'h':
		ff_usage(bench_usage, 0);
	case 'w':
		opt.nw = parse_list("workload", arg, ff_workloads, opt.workloads);
		break;
	case 'r':
		opt.nr = parse_list("relay", arg, ff_relays, opt.relays);
		break;
	case 'p':
		opt.np = parse_list("protocol", arg, ff_protocols, opt.protocols);
		break;
	case OPT_REPEAT:
		opt.repeat = repeat_auto(arg) ? 10000 : ff_parse_long(bench_usage, "--repeat", arg, 1, 10000);
		break;
	case OPT_OUTPUT:
		if (!*arg)
			ff_usage_error(bench_usage, "--output: expected a file name");
		opt.output = arg;
		break;
	case OPT_FORCE:
		opt.force = 1;
		break;
	case OPT_APPEND:
		opt.append = 1;
		break;
	case FF_OPT_BUILD:
		if (opt.nbuild == (int)FF_ARRAY_SIZE(opt.build_args))
			ff_fail(2, "--build: %d builds at most", opt.nbuild);
		opt.build_args[opt.nbuild++] = arg;
		break;
	case OPT_SEED:
		opt.seed = ff_parse_long(bench_usage, "--seed", arg, 0, 2147483647L);
		opt.shuffle = 2;	/* given */
		break;
	case OPT_POOL:
		if (!arg[strspn(arg, ", ")] || strpbrk(arg, " \t\n'\"\\"))
			ff_usage_error(bench_usage, "--pool: expected HOST,HOST,..., not '%s'", arg);
		opt.pool = arg;
		break;
	case OPT_SLO:
		slo_parse(bench_usage, arg);
		break;
	case OPT_RECORD:
		opt.record = 1;
		break;
	case OPT_TOGETHER:
		opt.together = 1;
		break;
	default:
		if (list && !strcmp(list, "--hops"))
			opt.nh = parse_num_list(bench_usage, list, arg, opt.hops, FF_HOPS_MAX);
		else if (!list || !sweep_take_opt(bench_usage, list, arg, &rs->run))
			ff_runspec_take(rs, bench_usage, c, arg);
	}
}

/* What an option needs of the selected workloads or relays, for one of them at least. */
enum need { NEED_RR, NEED_RATE, NEED_HOPS, NEED_WORKERS };

static int
selected(enum need need)
{
	int i, n = need == NEED_RR || need == NEED_RATE ? opt.nw : opt.nr;

	for (i = 0; i < n; i++)
		if ((need == NEED_RR && ff_workload_is_rr(opt.workloads[i])) ||
		    (need == NEED_RATE && ff_workload_takes_rate(opt.workloads[i])) ||
		    (need == NEED_HOPS && ff_relay_hops(opt.relays[i])) ||
		    (need == NEED_WORKERS && ff_relay_has(opt.relays[i], FF_RELAY_WORKERS)))
			return 1;
	return 0;
}

/* The options of a bench, into opt. */
void
bench_options(int argc, char *argv[])
{
	const struct option *longopts = ff_runspec_options(own_longopts, FF_RS_BENCH);
	struct ff_runspec rs;
	int c, w;

	ff_runspec_init(&rs);
	optind = 1;
	while ((c = ff_getopt(argc, argv, ":hw:r:p:", longopts, bench_usage)) != -1)
		take_option(&rs, c, optarg);
	opt.run = rs.run;
	opt.tls = rs.tls;
	opt.relay_cmd = rs.relay_cmd;
	if (optind < argc)
		ff_usage_error(bench_usage, "unexpected argument '%s'", argv[optind]);
	record_opts_check(bench_usage);
	if (opt.force && opt.append)
		ff_usage_error(bench_usage, "--force replaces the results file, --append adds to it: "
			       "give one");
	if (!opt.nw)
		opt.nw = all_names(ff_workloads, opt.workloads);
	if (!opt.nr && opt.nbuild)
		ff_fail(2, "--build is a build of the relay under test: name it with -r (%s)", ff_relays_built());
	w = !opt.nr;
	if (!opt.nr)
		opt.nr = all_names(ff_relays, opt.relays);
	relay_cmd_check(w);
	if (!opt.np)
		opt.np = all_names(ff_protocols, opt.protocols);
	if ((opt.run.request_size > 1 || opt.run.response_size > 1) && !selected(NEED_RR))
		ff_usage_error(bench_usage, "--request-size and --response-size are for workloads %s, and none is selected",
			       ff_workloads_taking(0));
	if (opt.run.rate > 0 && !selected(NEED_RATE))
		ff_usage_error(bench_usage, "--rate is for workloads %s, and none is selected", ff_workloads_taking(1));
	if (opt.nh && !selected(NEED_HOPS))
		ff_usage_error(bench_usage, "--hops is for the relays that run (%s), and only relay none is selected",
			       ff_relays_running());
	if (opt.run.workers && !selected(NEED_WORKERS))
		ff_usage_error(bench_usage, "--workers is for relays %s, and none of them is selected",
			       ff_relays_with(FF_RELAY_WORKERS));
	if (opt.together && opt.nbuild < 2)
		ff_fail(2, "--together runs a case's builds at once: give two or more --build LABEL=PATH");
	if (opt.together && (opt.pool || opt.slo_pct || opt.record))
		ff_fail(2, "--together runs a round's builds side by side here, each run the other's only company: "
			"not with %s", opt.pool ? "--pool" : opt.slo_pct ? "--slo" : "--record");
	bench_builds();
	bench_limits(bench_usage);
}

