/*
 * flimflam - the dispatcher: maps the documented subcommands onto the
 * ff-* programs.
 *
 * check, bench and compare exec their program. run and the capture
 * commands build the pipeline
 *
 *   ff-workload serve | ff-topology | ff-workload drive | ff-capture MODE
 *
 * with libpipeline, read its events, and print a human summary (or, with
 * --json, the events themselves).
 */
#include "ff.h"

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
	"\n"
	"commands:\n"
	"  {command}\n";

enum kind { EXEC, PIPELINE };

static const struct cmd {
	const char *name, *prog, *mode;
	enum kind kind;
	const char *help;
} cmds[] = {
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
	{ "bench", "ff-bench", NULL, EXEC,
	  "Run each workload on each relay and summarize the results" },
	{ "compare", "ff-bench", "compare", EXEC,
	  "Compare two results files from bench" },
};

static const char run_usage_fmt[] =
	"usage: flimflam %s [-h] [-w WORKLOAD] [-r RELAY] [-p PROTOCOL] [--jobs JOBS]\n"
	"       [--warmup SECONDS] [--duration SECONDS] [--cpu-limit COUNT] [--json]\n"
	"       [--request-size BYTES] [--response-size BYTES] [--rate N]%s\n"
	"\n"
	"%s\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
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
	"  --json                Print the event stream (JSON lines) instead of the summary\n"
	"  --request-size BYTES  builtin-rr, builtin-crr: the request's size (default 1)\n"
	"  --response-size BYTES builtin-rr, builtin-crr: the response's size (default 1)\n"
	"  --rate N              builtin-rr, builtin-crr: N transactions a second in all,\n"
	"                        latency from when each was due (default: closed loop)\n"
	"%s"
	"\n"
	"Workloads: builtin, iperf3, h2load, h2load-h1, builtin-rr, builtin-crr.\n"
	"Relays: skrouterd, nghttpx, nginx, none. Protocols: tcp, http1, http2.\n";

static char run_usage[4096];

enum { OPT_JSON = FF_OPT_OWN, OPT_CALL_GRAPH, OPT_FREQ };

static const struct option run_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "workload", required_argument, NULL, 'w' },
	{ "relay", required_argument, NULL, 'r' },
	{ "protocol", required_argument, NULL, 'p' },
	FF_RUN_LONGOPTS,
	{ "json", no_argument, NULL, OPT_JSON },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ NULL, 0, NULL, 0 }
};

static struct {
	const char *workload, *relay, *protocol;
	struct ff_run_opts run;
	int json;
} opt = { "builtin", "skrouterd", "tcp", FF_RUN_OPTS_DEFAULTS, 0 };

/* The perf options of the sampling commands: record, c2c, mem, flamegraph. */
static const char perf_synopsis[] = "\n       [--call-graph METHOD] [--freq HZ]";
static const char perf_options[] =
	"  --call-graph METHOD   How perf records call stacks: fp, dwarf or lbr (default 'fp')\n"
	"  --freq HZ             perf's sampling frequency per second (default 997)\n";
static const char *const call_graphs[] = { "fp", "dwarf", "lbr", NULL };

static struct {
	const char *call_graph;
	long freq;
} perf_opt = { "fp", 997 };

/* --freq as an argument (static). */
static const char *
freq_arg(void)
{
	static char buf[24];

	snprintf(buf, sizeof(buf), "%ld", perf_opt.freq);
	return buf;
}

static int
samples(const struct cmd *c)
{
	return c->mode && (!strcmp(c->mode, "record") || !strcmp(c->mode, "c2c") ||
			   !strcmp(c->mode, "mem"));
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
	exit(code);
}

/* Find a program beside us, in $FLIMFLAM_EXEC_PATH, or on PATH. */
static char *
program(const char *name)
{
	char *p = ff_helper_path(name), *w;

	if (strchr(p, '/'))
		return p;
	w = ff_which(p);
	free(p);
	return w;
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
		 samples(c) ? perf_synopsis : "", c->help, samples(c) ? perf_options : "");
	optind = 1;
	while ((ch = getopt_long(argc, argv, ":hw:r:p:", run_longopts, NULL)) != -1)
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
		case OPT_CALL_GRAPH:
		case OPT_FREQ:
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
			if (!ff_take_run_opt(run_usage, ch, optarg, &opt.run))
				ff_bad_option(run_usage, ch, argv);
		}
	if (optind < argc)
		ff_usage_error(run_usage, "unexpected argument '%s'", argv[optind]);
}

/* Everything that can be known before starting anything. */
static void
validate_run(const struct cmd *c)
{
	const char *need[3];
	cpu_set_t avail;
	int n = 0, i, ncpus;

	if (!ff_combo_ok(opt.workload, opt.relay, opt.protocol))
		ff_usage_error(run_usage,
			       "workload '%s' over relay '%s' with protocol '%s' is not supported; these work for %s: %s",
			       opt.workload, opt.relay, opt.protocol, opt.workload,
			       ff_combos_for(opt.workload, NULL));
	if (strcmp(c->mode, "none") && !strcmp(opt.relay, "none"))
		ff_usage_error(run_usage, "'%s' captures in the relays, and relay 'none' has none", c->name);
	if (ff_rr_opts_set(&opt.run) && !ff_workload_is_rr(opt.workload))
		ff_usage_error(run_usage, "--request-size, --response-size and --rate are for workloads builtin-rr and builtin-crr, not '%s'",
			       opt.workload);
	ncpus = ff_cpus_available(&avail);
	if (opt.run.cpu_limit > ncpus)
		ff_usage_error(run_usage, "--cpu-limit: %ld is more than the %d CPUs this process may use",
			       opt.run.cpu_limit, ncpus);
	if (ff_relay_program(opt.relay))
		need[n++] = ff_relay_program(opt.relay);
	if (ff_workload_server_program(opt.workload))
		need[n++] = ff_workload_server_program(opt.workload);
	if (ff_workload_client_program(opt.workload))
		need[n++] = ff_workload_client_program(opt.workload);
	for (i = 0; i < n; i++) {
		char *p = ff_which(need[i]), why[512];

		if (p) {
			int can = !strcmp(need[i], opt.relay) ?
				ff_relay_can(opt.relay, p, opt.protocol, NULL, why, sizeof(why)) : 1;

			free(p);
			if (can < 0)
				ff_die("%s", why);
			if (!can)
				ff_usage_error(run_usage, "%s", why);
			continue;
		}
		if (!strcmp(need[i], opt.relay))
			ff_die("relay '%s' needs %s, which is not on PATH (the other relays: %s)",
			       opt.relay, need[i],
			       !strcmp(opt.relay, "skrouterd") ? "nghttpx, nginx, none" :
			       !strcmp(opt.relay, "nginx") ? "skrouterd, nghttpx, none" :
			       "skrouterd, nginx, none");
		ff_die("workload '%s' needs %s, which is not on PATH; 'flimflam check' says how to install it",
		       opt.workload, need[i]);
	}
}

/* Running the pipeline */

static void
post_fork(void)
{
	/* Nothing outlives flimflam, even when it is SIGKILLed. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
}

static pipecmd *
stage(const char *name, ...)
{
	char *path = program(name);
	pipecmd *cmd;
	const char *arg;
	va_list ap;

	if (!path)
		ff_die("cannot find %s beside flimflam nor on PATH", name);
	cmd = pipecmd_new(path);
	va_start(ap, name);
	while ((arg = va_arg(ap, const char *)))
		pipecmd_arg(cmd, arg);
	va_end(ap);
	free(path);
	return cmd;
}

static const char *
stage_name(pipeline *p, int i)
{
	static const char *const names[] = {
		"ff-workload serve", "ff-topology", "ff-workload drive", "ff-capture"
	};

	(void)p;
	return i < (int)FF_ARRAY_SIZE(names) ? names[i] : "a stage";
}

/* builtin-rr, builtin-crr: their sizes (serve and drive) and rate (drive). */
static pipecmd *
rr_stage(pipecmd *cmd, int drive)
{
	struct ff_run_opts o = opt.run;
	char buf[3][24], *argv[6];
	int i, n;

	if (!drive)
		o.rate = 0;
	n = ff_rr_opts_argv(&o, argv, buf);
	for (i = 0; i < n; i++)
		pipecmd_arg(cmd, argv[i]);
	return cmd;
}

static json_t *
run_pipeline(const struct cmd *c, const char *rundir)
{
	char jobs[16], warmup[16], duration[16], cpu[16];
	struct ff_reader out;
	json_t *events = json_array(), *ev;
	pipeline *p;
	int *statuses, nstatuses, i, sig = 0, failed = 0;

	snprintf(jobs, sizeof(jobs), "%ld", opt.run.jobs);
	snprintf(warmup, sizeof(warmup), "%ld", opt.run.warmup);
	snprintf(duration, sizeof(duration), "%ld", opt.run.duration);
	snprintf(cpu, sizeof(cpu), "%ld", !strcmp(opt.relay, "none") ? 0 : opt.run.cpu_limit);

	setenv("FLIMFLAM_PIPELINE", "1", 1);
	p = pipeline_new();
	pipeline_command(p, rr_stage(stage("ff-workload", "serve", "-w", opt.workload,
					   "--cpu-limit", cpu, "--run-dir", rundir, NULL), 0));
	pipeline_command(p, stage("ff-topology", "-r", opt.relay, "-p", opt.protocol,
				  "--cpu-limit", cpu, "--run-dir", rundir, NULL));
	pipeline_command(p, rr_stage(stage("ff-workload", "drive", "-w", opt.workload,
					   "--jobs", jobs, "--warmup", warmup, "--duration", duration,
					   "--cpu-limit", cpu, "--run-dir", rundir, NULL), 1));
	pipeline_command(p, samples(c) ?
			 stage("ff-capture", c->mode, "--run-dir", rundir, "--call-graph",
			       perf_opt.call_graph, "--freq", freq_arg(), NULL) :
			 stage("ff-capture", c->mode, "--run-dir", rundir, NULL));
	pipeline_want_infile(p, "/dev/null");	/* the first stage reads nothing */
	pipeline_want_out(p, -1);
	pipeline_ignore_signals(p, 0);
	pipeline_install_post_fork(post_fork);
	pipeline_start(p);

	out = (struct ff_reader)FF_READER_INIT(fileno(pipeline_get_outfile(p)), "the pipeline");
	for (;;) {
		struct pollfd pfd[2] = {
			{ ff_signal_fd(), POLLIN, 0 }, { out.fd, POLLIN, 0 }
		};

		if (!sig && ff_signalled()) {
			/* Each stage stops what it started, in order. */
			sig = ff_signalled();
			for (i = 0; i < pipeline_get_ncommands(p); i++)
				kill(pipeline_get_pid(p, i), sig);
		}
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			ff_die("poll: %s", strerror(errno));
		if (pfd[1].revents) {
			ssize_t r = ff_reader_fill(&out);

			while ((ev = ff_reader_next(&out))) {
				if (opt.json)
					ff_emit(json_incref(ev));
				if (!strcmp(ff_event_name(ev), "topology") && !opt.json &&
				    ff_verbosity >= 0 && !sig)
					ff_say("flimflam: relays up; warming up for %ld s, then measuring for %ld s\n",
					       opt.run.warmup, opt.run.duration);
				json_array_append_new(events, ev);
			}
			if (r == 0)
				break;
		}
	}
	ff_reader_free(&out);
	pipeline_wait_all(p, &statuses, &nstatuses);
	if (!sig && ff_signalled())
		sig = ff_signalled();
	for (i = 0; i < nstatuses; i++) {
		int st = statuses[i];

		if (st == 0)
			continue;
		failed = 1;
		if (sig)
			continue;
		if (WIFSIGNALED(st))
			ff_warn("%s was killed by signal %d (%s)", stage_name(p, i),
				WTERMSIG(st), strsignal(WTERMSIG(st)));
		else if (WIFEXITED(st) && WEXITSTATUS(st) >= 126)
			ff_warn("%s could not run (status %d)", stage_name(p, i), WEXITSTATUS(st));
	}
	free(statuses);
	pipeline_free(p);
	if (sig) {
		ff_warn("stopped by %s; nothing is left running; the run's files are in '%s'",
			sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM", rundir);
		exit(128 + sig);
	}
	if (failed) {
		ff_warn("the run failed; its files are in '%s'", rundir);
		exit(1);
	}
	return events;
}

/* The summary */

static json_t *
find_event(json_t *events, const char *name)
{
	size_t i;
	json_t *ev;

	json_array_foreach(events, i, ev)
		if (!strcmp(ff_event_name(ev), name))
			return ev;
	return NULL;
}

/* A rate for the summary, "25.4 Gbit/s"; "-" when the event had none. */
/* "R1", "R2": a relay's role as the summaries print it. */
static const char *
role_name(const char *role)
{
	return !role ? "?" : !strcmp(role, "r1") ? "R1" : !strcmp(role, "r2") ? "R2" : role;
}

static const char *
human(double v, const char *unit, char *buf, size_t n)
{
	if (v < 0 || isnan(v)) {
		snprintf(buf, n, "-");
		return buf;
	}
	return ff_fmt_prefixed(v, 1000, " ", unit, buf, n);
}

/* builtin-rr and builtin-crr: transactions, the rate asked, latency percentiles. */
static void
summarize_rr(const json_t *res)
{
	static const char *const prefixes[] = { "latency", "connect_latency" };
	static const char *const cols[] = { "p50", "p90", "p99", "p999", "p9999", "max" };
	static const char *const names[] = { "p50", "p90", "p99", "p99.9", "p99.99", "max" };
	char a[64], key[64];
	size_t i, k;
	double asked = ff_json_num(res, "rate_per_s", -1), got = ff_json_num(res, "ops_per_s", -1);

	printf("  Operations:  %s (%.0f transactions in the window%s)\n", human(got, "op/s", a, sizeof(a)),
	       ff_json_num(res, "transactions", 0),
	       json_object_get(res, "connections") ? ", each on a connection of its own" : "");
	if (asked > 0)
		printf("  Rate asked:  %.0f/s, %s%s\n", asked, got < 0.95 * asked ? "NOT kept: " : "",
		       human(got, "/s achieved", a, sizeof(a)));
	for (k = 0; k < FF_ARRAY_SIZE(prefixes); k++) {
		snprintf(key, sizeof(key), "%s_p50_us", prefixes[k]);
		if (!json_is_number(json_object_get(res, key)))
			continue;
		printf("  %s", k ? "Connect:     " : "Latency:     ");
		for (i = 0; i < FF_ARRAY_SIZE(cols); i++) {
			double us;

			snprintf(key, sizeof(key), "%s_%s_us", prefixes[k], cols[i]);
			us = ff_json_num(res, key, 0);
			printf("%s%s %s", i ? ", " : "", names[i],
			       us < 1000 ? ff_fmt_sig3(us, " us", a, sizeof(a)) :
			       us < 1e6 ? ff_fmt_sig3(us / 1e3, " ms", a, sizeof(a)) :
			       ff_fmt_sig3(us / 1e6, " s", a, sizeof(a)));
		}
		printf("\n");
	}
	if (ff_json_str(res, "histogram"))
		printf("  Histogram:   %s\n", ff_json_str(res, "histogram"));
}

static void
summarize(json_t *events, const char *rundir)
{
	json_t *topo = find_event(events, "topology"), *res = find_event(events, "result"),
	       *rsc = find_event(events, "resources"), *r;
	char a[64];
	size_t i;

	printf("Configuration\n");
	printf("  Workload:    %s\n", opt.workload);
	printf("  Relay:       %s\n", opt.relay);
	printf("  Protocol:    %s\n", opt.protocol);
	printf("  Jobs:        %ld\n", opt.run.jobs);
	printf("  Warmup:      %ld s\n", opt.run.warmup);
	printf("  Duration:    %ld s\n", opt.run.duration);
	if (strcmp(opt.relay, "none")) {
		printf("  CPU limit:   %ld", opt.run.cpu_limit);
		if (opt.run.cpu_limit > 0) {
			json_array_foreach(json_object_get(topo, "relays"), i, r)
				printf("%s%s on CPU %s", i ? ", " : " (", ff_json_str(r, "role"),
				       ff_json_str(r, "cpus") ? ff_json_str(r, "cpus") : "any");
			printf(")");
		}
		printf("\n");
		if (json_is_true(json_object_get(topo, "cpus_shared")))
			printf("  Note:        too few CPUs for each relay to have its own: the relays share CPUs\n");
		/* with too few for the relays, none are left for the workload either */
		if (opt.run.cpu_limit > 0 && !ff_json_str(find_event(events, "server"), "cpus"))
			printf("  Note:        no CPUs are left for the workload: it shares CPUs with the relays\n");
	}
	printf("\nResults\n");
	printf("  Throughput:  %s\n", human(ff_json_num(res, "bits_per_s", -1), "bit/s", a, sizeof(a)));
	if (json_is_number(json_object_get(res, "ops_per_s")) && !ff_workload_is_rr(opt.workload))
		printf("  Operations:  %s\n", human(ff_json_num(res, "ops_per_s", -1), "op/s", a, sizeof(a)));
	if (ff_workload_is_rr(opt.workload))
		summarize_rr(res);
	else if (json_is_number(json_object_get(res, "latency_avg_us")))
		printf("  Latency:     %.3f ms average, %.3f ms p99\n",
		       ff_json_num(res, "latency_avg_us", 0) / 1000,
		       ff_json_num(res, "latency_p99_us", 0) / 1000);
	printf("  Window:      %.3f s\n", ff_json_num(res, "duration_s", 0));
	if (ff_json_num(res, "failed", 0) > 0)
		printf("  Failed:      %.0f of %.0f requests\n", ff_json_num(res, "failed", 0),
		       ff_json_num(res, "requests", 0));
	if (json_array_size(json_object_get(rsc, "relays"))) {
		printf("\nResources\n");
		json_array_foreach(json_object_get(rsc, "relays"), i, r) {
			const char *role = role_name(ff_json_str(r, "role"));

			printf("  %s CPU:      %.1f%%\n", role, 100 * ff_json_num(r, "cpu_fraction", 0));
			printf("  %s RSS:      %.1f MiB\n", role,
			       ff_json_num(r, "max_rss_bytes", 0) / 1048576.0);
		}
	}
	printf("\nRun directory: %s\n", rundir);
}

/* The capture commands: stat, skstat, record, c2c, mem, flamegraph */

/* What is wrong with the request itself, before anything else is checked. */
static void
capture_usage(const struct cmd *c)
{
	char *p;

	if (strcmp(c->mode, "skstat") || !strcmp(opt.relay, "none"))
		return;		/* relay none: validate_run says it */
	if (strcmp(opt.relay, "skrouterd"))
		ff_usage_error(run_usage, "'skstat' reads the routers' statistics, so it needs relay "
			       "'skrouterd', not '%s'", opt.relay);
	if (!ff_combo_ok(opt.workload, opt.relay, opt.protocol))
		return;		/* a usage error first */
	p = ff_which("skrouterd");
	if (!p)
		ff_die("'skstat' reads the statistics of two skrouterd routers, and skrouterd is not "
		       "on PATH: put the router under test on PATH (skstat beside it, Proton's Python "
		       "binding on PYTHONPATH)");
	free(p);
}

/*
 * What this machine can capture (perf can attach, memory events for c2c and
 * mem, lbr, skstat and its Proton), before anything starts: ff-capture
 * --check knows, the same check it makes itself; its messages are ours.
 */
static void
capture_check(const struct cmd *c)
{
	char *path = program("ff-capture"), *out, *line, *next;
	char *argv[] = { path, "--check", (char *)c->mode, "--call-graph",
			 (char *)perf_opt.call_graph, "--freq", (char *)freq_arg(), NULL };
	int status;

	if (!strcmp(c->mode, "none"))
		return;
	if (!path)
		ff_die("cannot find ff-capture beside flimflam nor on PATH");
	if (!samples(c))
		argv[3] = NULL;
	out = ff_env_run(argv, &status);
	if (!out)
		ff_die("cannot run '%s'", path);
	for (line = out; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		else
			next = line + strlen(line);
		if (!strncmp(line, "ff-capture: ", 12))
			line += 12;
		if (*line)
			ff_warn("%s", line);
	}
	free(out);
	free(path);
	if (status == -1)
		ff_die("checking what this machine can capture took too long");
	if (status != 0)
		exit(WIFEXITED(status) && WEXITSTATUS(status) == 2 ? 2 : 1);
}

static char flame_html[PATH_MAX], flame_old[PATH_MAX];

/*
 * flamegraph: ff-flame renders the recording as flamegraph.html in the
 * current directory, one tower per relay (roles, pids and program from the
 * capture and topology events); an existing one becomes old.flamegraph.html.
 */
static void
render_flamegraph(json_t *events, const char *rundir)
{
	json_t *cap = find_event(events, "capture"), *topo = find_event(events, "topology");
	json_t *meta, *relays = json_array(), *cr, *tr;
	const char *data = json_string_value(json_array_get(json_object_get(cap, "files"), 0));
	char cwd[PATH_MAX - 32], title[256], metafile[PATH_MAX + 32], metaarg[PATH_MAX + 40];
	size_t i, j;
	pipeline *p;
	int status;

	if (!data)
		ff_die("the recording named no perf.data; the run's files are in '%s'", rundir);
	if (!getcwd(cwd, sizeof(cwd)))
		ff_die("cannot find the current directory: %s", strerror(errno));
	json_array_foreach(json_object_get(cap, "relays"), i, cr) {
		const char *program = NULL;

		json_array_foreach(json_object_get(topo, "relays"), j, tr)
			if (ff_json_str(tr, "role") && ff_json_str(cr, "role") &&
			    !strcmp(ff_json_str(tr, "role"), ff_json_str(cr, "role")))
				program = ff_json_str(tr, "program");
		json_array_append_new(relays, json_pack("{s:s?, s:O?, s:O?, s:s?}",
			"role", ff_json_str(cr, "role"), "pid", json_object_get(cr, "pid"),
			"pids", json_object_get(cr, "pids"), "program", program));
	}
	snprintf(title, sizeof(title), "flimflam: %s over %s (%s)", opt.workload, opt.relay,
		 opt.protocol);
	meta = json_pack("{s:s, s:s, s:s, s:s, s:o}", "title", title, "workload", opt.workload,
			 "relay", opt.relay, "protocol", opt.protocol, "relays", relays);
	snprintf(metafile, sizeof(metafile), "%s/flamegraph-meta.json", rundir);
	if (!meta || json_dump_file(meta, metafile, JSON_COMPACT) < 0)
		ff_die("cannot write '%s'", metafile);
	json_decref(meta);
	snprintf(metaarg, sizeof(metaarg), "@%s", metafile);
	snprintf(flame_html, sizeof(flame_html), "%s/flamegraph.html", cwd);
	snprintf(flame_old, sizeof(flame_old), "%s/old.flamegraph.html", cwd);
	if (access(flame_html, F_OK) == 0 && rename(flame_html, flame_old) < 0)
		ff_die("cannot rename '%s' to '%s': %s", flame_html, flame_old, strerror(errno));
	if (access(flame_old, F_OK) != 0)
		flame_old[0] = 0;
	if (!opt.json)
		ff_say("flimflam: rendering %s\n", flame_html);
	p = pipeline_new_commands(stage("ff-flame", "-o", flame_html, "--meta", metaarg, data, NULL),
				  (void *)NULL);
	status = pipeline_run(p);
	if (status != 0)
		ff_die("ff-flame could not render '%s' (status %d); the recording is kept", data, status);
	if (opt.json)
		ff_say("flimflam: open file://%s in a browser\n", flame_html);
}

/* A figure of a stat event, if it has one. */
static void
print_figure(const json_t *ev, const char *key, const char *label, const char *fmt)
{
	const json_t *v = json_object_get(ev, key);

	if (!json_is_number(v))
		return;
	printf("  %-26s", label);
	printf(fmt, json_number_value(v));
	printf("\n");
}

static void
summarize_capture(const struct cmd *c, json_t *events)
{
	json_t *cap = find_event(events, "capture"), *ev, *r, *pid;
	const char *data = json_string_value(json_array_get(json_object_get(cap, "files"), 0));
	char old[PATH_MAX + 8];
	size_t i, j;

	json_array_foreach(events, i, ev) {
		const char *name = ff_event_name(ev), *role = ff_json_str(ev, "role");

		role = role ? role : "?";
		if (!strcmp(name, "stat")) {
			printf("\nperf stat: %s\n\n", role_name(role));
			printf("%s\n\n", ff_json_str(ev, "table") ? ff_json_str(ev, "table") : "");
			print_figure(ev, "cpu_ms_per_gb", "CPU per GB relayed:", "%.1f ms");
			print_figure(ev, "cpu_ms_per_kop", "CPU per 1,000 operations:", "%.3f ms");
			print_figure(ev, "instructions_per_byte", "Instructions per byte:", "%.2f");
			print_figure(ev, "cycles_per_byte", "Cycles per byte:", "%.2f");
		} else if (!strcmp(name, "skstat")) {
			printf("\n%s\n\n", !strcmp(role, "r1") ? "Router 1" :
			       !strcmp(role, "r2") ? "Router 2" : role);
			printf("%s\n", ff_json_str(ev, "general") ? ff_json_str(ev, "general") : "");
			printf("%s", ff_json_str(ev, "memory") ? ff_json_str(ev, "memory") : "");
		}
	}
	if (!samples(c) || !data)
		return;
	printf("\nCaptured\n");
	printf("  Data:        %s (%s: %s at %s Hz, call graph %s)\n", data,
	       ff_json_str(cap, "tool"), ff_json_str(cap, "perf_event") ?
	       ff_json_str(cap, "perf_event") : "cycles", freq_arg(), perf_opt.call_graph);
	printf("  Processes:  ");
	json_array_foreach(json_object_get(cap, "relays"), i, r) {
		printf("%s %s", i ? ";" : "", role_name(ff_json_str(r, "role")));
		json_array_foreach(json_object_get(r, "pids"), j, pid)
			printf("%s%lld", j ? ", " : " pid ", (long long)json_integer_value(pid));
	}
	printf("\n");
	snprintf(old, sizeof(old), "%s.old", data);
	if (access(old, F_OK) == 0)
		printf("  Previous:    %s\n", old);
	if (!strcmp(c->name, "flamegraph")) {
		printf("  Flamegraph:  %s\n", flame_html);
		if (flame_old[0])
			printf("  Previous:    %s\n", flame_old);
		printf("\nOpen it in a browser: file://%s\n", flame_html);
	} else {
		printf("\nNext step: %s\n", !strcmp(c->mode, "c2c") ? "perf c2c report" :
		       !strcmp(c->mode, "mem") ? "perf mem report" : "perf report --no-children");
	}
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
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
	while ((ch = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1)
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
		default:
			ff_bad_option(usage, ch, argv);
		}
	if (optind >= argc) {
		ff_warn("expected a command");
		top_usage(2);
	}
	for (i = 0; i < FF_ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[optind], cmds[i].name))
			c = &cmds[i];
	if (!strcmp(argv[optind], "help"))
		top_usage(0);
	if (!c) {
		ff_warn("'%s' is not a flimflam command; see 'flimflam --help'", argv[optind]);
		exit(2);
	}
	snprintf(level, sizeof(level), "%d", ff_verbosity);
	setenv("FLIMFLAM_VERBOSITY", level, 1);
	argc -= optind;
	argv += optind;
	if (c->kind == EXEC)
		exec_cmd(c, argc, argv);

	parse_run(c, argc, argv);
	capture_usage(c);
	validate_run(c);
	capture_check(c);
	ff_signals_init();
	rundir = ff_rundir(NULL);
	events = run_pipeline(c, rundir);
	if (!strcmp(c->name, "flamegraph"))
		render_flamegraph(events, rundir);
	if (!opt.json) {
		summarize(events, rundir);
		summarize_capture(c, events);
	}
	json_decref(events);
	return ff_finish();
}
