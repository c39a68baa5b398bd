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
	"  --version   Show the version and exit\n"
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
	FF_LONGOPT_VERSION,
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
	exit(ff_finish() ? 1 : code);
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
			ff_take_run_opt(run_usage, ch, optarg, &opt.run);
		}
	if (optind < argc)
		ff_usage_error(run_usage, "unexpected argument '%s'", argv[optind]);
}

/* Everything that can be known before starting anything. */
static void
validate_run(const struct cmd *c)
{
	const struct ff_relay *rl = ff_relay_find(opt.relay);
	const char *need[3];
	cpu_set_t avail;
	char why[512];
	int n = 0, i, ncpus, relay_at = -1;

	if (!ff_carries(opt.workload, opt.relay, opt.protocol, NULL, NULL, why, sizeof(why)))
		ff_usage_error(run_usage, "%s; these work for %s: %s", why, opt.workload,
			       ff_combos_for(opt.workload, NULL));
	if (strcmp(c->mode, "none") && !rl->processes)
		ff_usage_error(run_usage, "'%s' captures in the relays, and relay '%s' has none",
			       c->name, opt.relay);
	if (ff_workload_limits(opt.workload, &opt.run, why, sizeof(why)) < 0)
		ff_usage_error(run_usage, "%s", why);
	if (ff_rr_opts_set(&opt.run) && !ff_workload_is_rr(opt.workload))
		ff_usage_error(run_usage, "--request-size, --response-size and --rate are for workloads builtin-rr and builtin-crr, not '%s'",
			       opt.workload);
	/* The stages and what they start inherit our limit, raised to the hard one. */
	if (ff_nofile_for_jobs(opt.run.jobs, why, sizeof(why)) < 0)
		ff_die("%s", why);
	ff_raise_nofile(LONG_MAX);
	ncpus = ff_cpus_available(&avail);
	if (opt.run.cpu_limit > ncpus)
		ff_usage_error(run_usage, "--cpu-limit: %ld is more than the %d CPU%s this process may use",
			       opt.run.cpu_limit, ncpus, ncpus == 1 ? "" : "s");
	if (rl->program) {
		relay_at = n;
		need[n++] = rl->program;
	}
	if (ff_workload_server_program(opt.workload))
		need[n++] = ff_workload_server_program(opt.workload);
	if (ff_workload_client_program(opt.workload))
		need[n++] = ff_workload_client_program(opt.workload);
	for (i = 0; i < n; i++) {
		char *p = ff_which(need[i]);

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

/* A signal stopped the run (or the rendering): say so, exit 128+n. */
noreturn static void
stopped_by(int sig, const char *rundir)
{
	ff_warn("stopped by %s; nothing is left running; the run's files are in '%s'",
		ff_sig_name(sig), rundir);
	exit(128 + sig);
}

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
	/* flimflam says why the run stopped, and made ff-capture's checks itself. */
	pipecmd_arg(cmd, "--pipeline-stage");
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

static pipeline *running;

/* Send every stage `sig`: each stops what it started, in order. */
static void
signal_stages(int sig)
{
	int i;

	for (i = 0; running && i < pipeline_get_ncommands(running); i++)
		kill(pipeline_get_pid(running, i), sig);
}

/*
 * The cleanup hook while the pipeline runs: our output closed or failed
 * (ff_emit), or we failed; the stages stop as for Ctrl-C, and are waited for.
 */
static void
stop_pipeline(void)
{
	if (!running)
		return;
	signal_stages(SIGTERM);
	pipeline_wait(running);
	running = NULL;
}

/*
 * On a terminal, the run's phase and the seconds left, once a second:
 * starting (skrouterd: waiting for the route), warming up, measuring.
 * Returns how long poll may wait before the next update (-1: no need).
 */
static int
show_phase(double started, double warm_end, double win_end)
{
	double now = ff_now(), left;

	if (!ff_live_on())
		return -1;
	if (!warm_end)
		ff_live(!strcmp(opt.relay, "skrouterd") ?
			"flimflam: starting the routers; R1 listens once it has the route to R2 (%.0f s)" :
			"flimflam: starting the server and relays (%.0f s)", floor(now - started));
	else if (!win_end)
		ff_live("flimflam: warming up: %.0f s left", ceil(fmax(0, warm_end - now)));
	else if (now < win_end)
		ff_live("flimflam: measuring: %.0f s left", ceil(win_end - now));
	else
		ff_live("flimflam: measured; collecting the results");
	left = (!warm_end ? now - started : !win_end ? warm_end - now : win_end - now);
	return 1 + (int)(1000 * (left - floor(left)));
}

/* Another run's relays on our CPUs: said at once, and in the summary. */
static void
warn_other_runs(const json_t *topo)
{
	size_t i;
	json_t *o;

	json_array_foreach(json_object_get(topo, "cpus_other_runs"), i, o)
		ff_warn("another flimflam run (ff-topology pid %lld) has its relays on CPU %s too: the two runs disturb each other's figures",
			(long long)json_integer_value(json_object_get(o, "pid")),
			ff_json_str(o, "cpus") ? ff_json_str(o, "cpus") : "?");
}

/* The four stages of a run, started: serve | topology | drive | capture. */
static pipeline *
start_pipeline(const struct cmd *c, const char *rundir)
{
	struct ff_run_opts drive = opt.run;
	struct ff_argv args = FF_ARGV_INIT;
	char cpu[16];
	pipecmd *cmd;
	pipeline *p;
	size_t i;

	drive.cpu_limit = ff_relay_find(opt.relay)->processes ? opt.run.cpu_limit : 0;
	snprintf(cpu, sizeof(cpu), "%ld", drive.cpu_limit);

	p = pipeline_new();
	cmd = stage("ff-workload", "serve", "-w", opt.workload, "--cpu-limit", cpu,
		    "--run-dir", rundir, NULL);
	if (ff_workload_is_rr(opt.workload)) {
		/* The server's framing: the sizes (the rate is the client's). */
		pipecmd_arg(cmd, "--request-size");
		pipecmd_argf(cmd, "%ld", opt.run.request_size);
		pipecmd_arg(cmd, "--response-size");
		pipecmd_argf(cmd, "%ld", opt.run.response_size);
	}
	pipeline_command(p, cmd);
	pipeline_command(p, stage("ff-topology", "-r", opt.relay, "-p", opt.protocol,
				  "--cpu-limit", cpu, "--run-dir", rundir, NULL));
	cmd = stage("ff-workload", "drive", "-w", opt.workload, NULL);
	ff_argv_run_opts(&args, &drive, 1);
	ff_argv_addl(&args, "--run-dir", rundir, NULL);
	for (i = 0; i < args.n; i++)
		pipecmd_arg(cmd, args.v[i]);
	ff_argv_free(&args);
	pipeline_command(p, cmd);
	pipeline_command(p, samples(c) ?
			 stage("ff-capture", c->mode, "--run-dir", rundir, "--call-graph",
			       perf_opt.call_graph, "--freq", freq_arg(), NULL) :
			 stage("ff-capture", c->mode, "--run-dir", rundir, NULL));
	pipeline_want_infile(p, "/dev/null");	/* the first stage reads nothing */
	pipeline_want_out(p, -1);
	pipeline_ignore_signals(p, 0);
	pipeline_install_post_fork(post_fork);
	pipeline_start(p);
	running = p;
	ff_set_cleanup(stop_pipeline);
	return p;
}

/* The phases as the events come: the warmup from topology, the window. */
struct phases {
	double started, warm_end, win_end;
};

/* One event of the pipeline: kept, passed on with --json, and its phase noted. */
static void
take_event(json_t *events, json_t *ev, struct phases *ph, int sig)
{
	if (opt.json)
		ff_emit(json_incref(ev));
	if (!strcmp(ff_event_name(ev), "topology")) {
		ph->warm_end = ff_now() + opt.run.warmup;
		warn_other_runs(ev);
		if (!opt.json && ff_verbosity >= 0 && !sig)
			ff_say("flimflam: relays up; warming up for %ld s, then measuring for %ld s\n",
			       opt.run.warmup, opt.run.duration);
	}
	if (!strcmp(ff_event_name(ev), "window"))
		ph->win_end = ff_now() + opt.run.duration;
	json_array_append_new(events, ev);
}

/*
 * The pipeline's events until it ends, into `events`; a signal is passed
 * to every stage, each stopping what it started, in order. Returns the
 * signal that stopped the run, or 0.
 */
static int
read_pipeline(pipeline *p, json_t *events)
{
	struct ff_reader out = FF_READER_INIT(fileno(pipeline_get_outfile(p)), "the pipeline");
	struct phases ph = { ff_now(), 0, 0 };
	json_t *ev;
	int sig = 0;

	for (;;) {
		/* events 0 on stdout: POLLERR when its reader is gone. */
		struct pollfd pfd[3] = {
			{ ff_signal_fd(), POLLIN, 0 }, { out.fd, POLLIN, 0 }, { 1, 0, 0 }
		};

		if (!sig && ff_signalled()) {
			sig = ff_signalled();
			signal_stages(sig);
		}
		if (poll(pfd, 3, sig ? -1 : show_phase(ph.started, ph.warm_end, ph.win_end)) < 0 &&
		    errno != EINTR)
			ff_die("poll: %s", strerror(errno));
		if ((pfd[2].revents & (POLLERR | POLLHUP)) && !sig)
			ff_quit(128 + SIGPIPE);	/* no one reads us: stop, as for Ctrl-C */
		if (pfd[1].revents) {
			ssize_t r = ff_reader_fill(&out);

			while ((ev = ff_reader_next(&out)))
				take_event(events, ev, &ph, sig);
			if (r == 0)
				break;
		}
	}
	ff_live_clear();
	ff_reader_free(&out);
	return sig;
}

/*
 * The stages reaped: 1 if any failed (those that did not say why, worded
 * unless a signal stopped the run; *sig gets one that came meanwhile).
 */
static int
reap_pipeline(pipeline *p, int *sig)
{
	int *statuses, nstatuses, i, failed = 0;

	pipeline_wait_all(p, &statuses, &nstatuses);
	running = NULL;
	ff_set_cleanup(NULL);
	if (!*sig && ff_signalled())
		*sig = ff_signalled();
	for (i = 0; i < nstatuses; i++) {
		int st = statuses[i];

		if (st == 0)
			continue;
		failed = 1;
		/*
		 * A stage that failed said why; one that did not, we word. One
		 * whose reader went away (141) stopped for the stage after it.
		 */
		if (!*sig && (WIFSIGNALED(st) || (WEXITSTATUS(st) >= 126 &&
						 WEXITSTATUS(st) != 128 + SIGPIPE)))
			ff_warn("%s %s", stage_name(p, i), ff_status_how(st));
	}
	free(statuses);
	return failed;
}

static json_t *
run_pipeline(const struct cmd *c, const char *rundir)
{
	pipeline *p = start_pipeline(c, rundir);
	json_t *events = json_array();
	int sig = read_pipeline(p, events), failed = reap_pipeline(p, &sig);

	pipeline_free(p);
	if (sig)
		stopped_by(sig, rundir);
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

/* "R1", "R2": a relay's role as the summaries print it. */
static const char *
role_name(const char *role)
{
	return !role ? "?" : !strcmp(role, "r1") ? "R1" : !strcmp(role, "r2") ? "R2" : role;
}

/* A rate for the summary, "25.4 Gbit/s"; "-" when the event had none. */
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

	ff_print("  Operations:  %s (%.0f transactions in the window%s)\n", human(got, "op/s", a, sizeof(a)),
		 ff_json_num(res, "transactions", 0),
		 json_object_get(res, "connections") ? ", each on a connection of its own" : "");
	if (asked > 0)
		ff_print("  Rate asked:  %.0f/s, %s%s\n", asked, got < 0.95 * asked ? "NOT kept: " : "",
			 human(got, "/s achieved", a, sizeof(a)));
	for (k = 0; k < FF_ARRAY_SIZE(prefixes); k++) {
		snprintf(key, sizeof(key), "%s_p50_us", prefixes[k]);
		if (!json_is_number(json_object_get(res, key)))
			continue;
		ff_print("  %s", k ? "Connect:     " : "Latency:     ");
		for (i = 0; i < FF_ARRAY_SIZE(cols); i++) {
			double us;

			snprintf(key, sizeof(key), "%s_%s_us", prefixes[k], cols[i]);
			us = ff_json_num(res, key, 0);
			ff_print("%s%s %s", i ? ", " : "", names[i],
				 us < 1000 ? ff_fmt_sig3(us, " us", a, sizeof(a)) :
				 us < 1e6 ? ff_fmt_sig3(us / 1e3, " ms", a, sizeof(a)) :
				 ff_fmt_sig3(us / 1e6, " s", a, sizeof(a)));
		}
		ff_print("\n");
	}
	if (ff_json_str(res, "histogram"))
		ff_print("  Histogram:   %s\n", ff_json_str(res, "histogram"));
}

static void
summarize(json_t *events, const char *rundir)
{
	json_t *topo = find_event(events, "topology"), *res = find_event(events, "result"),
	       *rsc = find_event(events, "resources"), *r;
	char a[64];
	size_t i;

	ff_print("Configuration\n");
	ff_print("  Workload:    %s\n", opt.workload);
	ff_print("  Relay:       %s\n", opt.relay);
	ff_print("  Protocol:    %s\n", opt.protocol);
	ff_print("  Jobs:        %ld\n", opt.run.jobs);
	ff_print("  Warmup:      %ld s\n", opt.run.warmup);
	ff_print("  Duration:    %ld s\n", opt.run.duration);
	if (ff_relay_find(opt.relay)->processes) {
		ff_print("  CPU limit:   %ld", opt.run.cpu_limit);
		if (opt.run.cpu_limit > 0) {
			json_array_foreach(json_object_get(topo, "relays"), i, r)
				ff_print("%s%s on CPU %s", i ? ", " : " (", ff_json_str(r, "role"),
				       ff_json_str(r, "cpus") ? ff_json_str(r, "cpus") : "any");
			ff_print(")");
		}
		ff_print("\n");
		json_array_foreach(json_object_get(topo, "cpus_other_runs"), i, r)
			printf("  Note:        another flimflam run (pid %lld) has its relays on CPU %s too: the two runs disturb each other's figures\n",
			       (long long)json_integer_value(json_object_get(r, "pid")),
			       ff_json_str(r, "cpus") ? ff_json_str(r, "cpus") : "?");
		if (json_is_true(json_object_get(topo, "cpus_shared")))
			ff_print("  Note:        too few CPUs for each relay to have its own: the relays share CPUs\n");
		/* with too few for the relays, none are left for the workload either */
		if (opt.run.cpu_limit > 0 && !ff_json_str(find_event(events, "server"), "cpus"))
			ff_print("  Note:        no CPUs are left for the workload: it shares CPUs with the relays\n");
	}
	ff_print("\nResults\n");
	ff_print("  Throughput:  %s\n", human(ff_json_num(res, "bits_per_s", -1), "bit/s", a, sizeof(a)));
	if (json_is_number(json_object_get(res, "ops_per_s")) && !ff_workload_is_rr(opt.workload))
		ff_print("  Operations:  %s\n", human(ff_json_num(res, "ops_per_s", -1), "op/s", a, sizeof(a)));
	if (ff_workload_is_rr(opt.workload))
		summarize_rr(res);
	else if (json_is_number(json_object_get(res, "latency_avg_us")))
		ff_print("  Latency:     %.3f ms average, %.3f ms p99\n",
		       ff_json_num(res, "latency_avg_us", 0) / 1000,
		       ff_json_num(res, "latency_p99_us", 0) / 1000);
	ff_print("  Window:      %.3f s\n", ff_json_num(res, "duration_s", 0));
	if (ff_json_num(res, "failed", 0) > 0)
		ff_print("  Failed:      %.0f of %.0f request%s\n", ff_json_num(res, "failed", 0),
		       ff_json_num(res, "requests", 0), ff_json_num(res, "requests", 0) == 1 ? "" : "s");
	if (json_array_size(json_object_get(rsc, "relays"))) {
		ff_print("\nResources\n");
		json_array_foreach(json_object_get(rsc, "relays"), i, r) {
			const char *role = role_name(ff_json_str(r, "role"));

			ff_print("  %s CPU:      %.1f%%\n", role, 100 * ff_json_num(r, "cpu_fraction", 0));
			ff_print("  %s RSS:      %.1f MiB\n", role,
			       ff_json_num(r, "max_rss_bytes", 0) / 1048576.0);
		}
	}
	ff_print("\nRun directory: %s\n", rundir);
}

/* The capture commands: stat, skstat, record, c2c, mem, flamegraph */

/* What is wrong with the request itself, before anything else is checked. */
static void
capture_usage(const struct cmd *c)
{
	char *p, why[512];

	if (strcmp(c->mode, "skstat") || !ff_relay_find(opt.relay)->processes)
		return;		/* relay none: validate_run says it */
	if (strcmp(opt.relay, "skrouterd"))
		ff_usage_error(run_usage, "'skstat' reads the routers' statistics, so it needs relay "
			       "'skrouterd', not '%s'", opt.relay);
	if (!ff_carries(opt.workload, opt.relay, opt.protocol, NULL, NULL, why, sizeof(why)))
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
 * --check --json knows, the same check it makes itself, and answers with
 * one `check` event; its notes and its reason are ours to say.
 */
static void
capture_check(const struct cmd *c)
{
	char *path = program("ff-capture"), *out, *line, *next;
	char *argv[] = { path, "--check", "--json", (char *)c->mode, "--call-graph",
			 (char *)perf_opt.call_graph, "--freq", (char *)freq_arg(), NULL };
	json_t *ev = NULL, *note;
	size_t i;
	int status;

	if (!strcmp(c->mode, "none"))
		return;
	if (!path)
		ff_die("cannot find ff-capture beside flimflam nor on PATH");
	if (!samples(c))
		argv[4] = NULL;
	out = ff_env_run(argv, &status);
	if (!out)
		ff_die("cannot run '%s'", path);
	if (status == -1)
		ff_die("checking what this machine can capture took too long");
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

static char flame_html[PATH_MAX];
static struct ff_out flame_out;

/*
 * record, c2c, mem, flamegraph: flamegraph.html (and old.flamegraph.html)
 * can be written, before anything starts (ff-capture --check said so of
 * perf.data); then this run holds the lock on the directory that says
 * another record is writing there, for its whole run.
 */
static void
outputs_check(const struct cmd *c)
{
	char cwd[PATH_MAX - 32], why[PATH_MAX + 128];

	if (!samples(c))
		return;
	if (!getcwd(cwd, sizeof(cwd)))
		ff_die("cannot find the current directory: %s", strerror(errno));
	snprintf(flame_html, sizeof(flame_html), "%s/flamegraph.html", cwd);
	if (!strcmp(c->name, "flamegraph") && ff_out_check(&flame_out, flame_html, 0, "old.*") < 0)
		ff_die("%s", flame_out.err);
	if (ff_lock_dir(cwd, "perf.data", why, sizeof(why)) < 0)
		ff_die("%s", why);
}

/*
 * The run's events into `file`, one a line as --json prints them: ff-flame
 * takes the relays' towers and the page's title from them (--events).
 */
static void
write_events(json_t *events, const char *file)
{
	struct ff_out out;
	json_t *ev;
	char *line;
	size_t i;

	if (ff_out_open(&out, file, 0, NULL, 0644) < 0)
		ff_die("%s", out.err);
	json_array_foreach(events, i, ev) {
		line = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(10));
		if (!line) {
			ff_out_abort(&out);
			ff_die("cannot encode an event: out of memory");
		}
		if (ff_out_write(&out, line, strlen(line)) < 0 || ff_out_write(&out, "\n", 1) < 0) {
			ff_out_abort(&out);
			ff_die("%s", out.err);
		}
		free(line);
	}
	if (ff_out_commit(&out) < 0)
		ff_die("%s", out.err);
}

/*
 * flamegraph: ff-flame renders the recording as flamegraph.html in the
 * current directory, one tower per relay (roles, pids and program from the
 * capture and topology events, which it reads from the run's events.jsonl);
 * an existing one becomes old.flamegraph.html.
 */
static void
render_flamegraph(json_t *events, const char *rundir)
{
	json_t *cap = find_event(events, "capture");
	char *data = ff_json_path_value(json_array_get(json_object_get(cap, "files"), 0));
	char evfile[PATH_MAX + 32], *path = program("ff-flame"), *argv[7];
	static struct ff_child flame;

	if (!data)
		ff_die("the recording named no perf.data; the run's files are in '%s'", rundir);
	if (!path)
		ff_die("cannot find ff-flame beside flimflam nor on PATH");
	snprintf(evfile, sizeof(evfile), "%s/events.jsonl", rundir);
	write_events(events, evfile);
	/* ff-flame writes the temporary file; the old page stays until it is done. */
	if (ff_out_open(&flame_out, flame_html, FF_OUT_DEFER, "old.*", 0644) < 0)
		ff_die("%s", flame_out.err);
	if (!opt.json)
		ff_say("flimflam: rendering %s\n", flame_html);
	/*
	 * Its own process group, as every child: Ctrl-C comes to us, and we
	 * stop it; its end is then ours to word, not a failure of its own.
	 */
	argv[0] = path;
	argv[1] = "-o";
	argv[2] = flame_out.tmp;
	argv[3] = "--events";
	argv[4] = evfile;
	argv[5] = data;
	argv[6] = NULL;
	if (ff_spawn(&flame, "ff-flame", argv, NULL) < 0) {
		ff_out_abort(&flame_out);
		ff_die("cannot render '%s'; the recording is kept", data);
	}
	ff_set_cleanup(ff_children_stop_all);
	while (!ff_child_check(&flame)) {
		struct pollfd pfd[2] = { { ff_signal_fd(), POLLIN, 0 }, { flame.pidfd, POLLIN, 0 } };

		if (ff_signalled()) {
			ff_child_stop(&flame, 1.0);
			ff_out_abort(&flame_out);
			stopped_by(ff_signalled(), rundir);
		}
		poll(pfd, 2, -1);
	}
	ff_set_cleanup(NULL);
	if (flame.status != 0) {
		ff_out_abort(&flame_out);
		ff_die("ff-flame %s rendering '%s'; the recording is kept", ff_child_how(&flame), data);
	}
	if (ff_out_commit(&flame_out) < 0)
		ff_die("%s; the recording is kept", flame_out.err);
	free(data);
	free(path);
	if (opt.json) {
		char *url = ff_file_url(flame_html);

		ff_say("flimflam: open %s in a browser\n", url);
		free(url);
	}
}

/*
 * A figure of a stat event, if it has one; fmt NULL: a figure in
 * milliseconds, shown in seconds to three significant digits as bench does.
 */
static void
print_figure(const json_t *ev, const char *key, const char *label, const char *fmt)
{
	const json_t *v = json_object_get(ev, key);
	char buf[64];

	if (!json_is_number(v))
		return;
	printf("  %-26s", label);
	if (fmt)
		printf(fmt, json_number_value(v));
	else
		printf("%s", ff_fmt_sig3(json_number_value(v) / 1000, "", buf, sizeof(buf)));
	printf("\n");
}

static void
summarize_capture(const struct cmd *c, json_t *events)
{
	json_t *cap = find_event(events, "capture"), *ev, *r, *pid;
	char *data = ff_json_path_value(json_array_get(json_object_get(cap, "files"), 0));
	char old[PATH_MAX + 8];
	size_t i, j;

	json_array_foreach(events, i, ev) {
		const char *name = ff_event_name(ev), *role = ff_json_str(ev, "role");

		role = role ? role : "?";
		if (!strcmp(name, "stat")) {
			ff_print("\nperf stat: %s\n\n", role_name(role));
			ff_print("%s\n\n", ff_json_str(ev, "table") ? ff_json_str(ev, "table") : "");
			/* in bench's unit and words: CPU-seconds per GB, per 1,000 requests */
			print_figure(ev, "cpu_ms_per_gb", "CPU s/GB:", NULL);
			print_figure(ev, "cpu_ms_per_kop", "CPU s/1k req:", NULL);
			print_figure(ev, "instructions_per_byte", "Instructions per byte:", "%.2f");
			print_figure(ev, "cycles_per_byte", "Cycles per byte:", "%.2f");
		} else if (!strcmp(name, "skstat")) {
			ff_print("\n%s\n\n", !strcmp(role, "r1") ? "Router 1" :
			       !strcmp(role, "r2") ? "Router 2" : role);
			ff_print("%s\n", ff_json_str(ev, "general") ? ff_json_str(ev, "general") : "");
			ff_print("%s", ff_json_str(ev, "memory") ? ff_json_str(ev, "memory") : "");
		}
	}
	if (!samples(c) || !data)
		return;
	ff_print("\nCaptured\n");
	ff_print("  Data:        %s (%s: %s at %s Hz, call graph %s)\n", data,
	       ff_json_str(cap, "tool"), ff_json_str(cap, "perf_event") ?
	       ff_json_str(cap, "perf_event") : "cycles", freq_arg(), perf_opt.call_graph);
	ff_print("  Processes:  ");
	json_array_foreach(json_object_get(cap, "relays"), i, r) {
		ff_print("%s %s", i ? ";" : "", role_name(ff_json_str(r, "role")));
		json_array_foreach(json_object_get(r, "pids"), j, pid)
			ff_print("%s%lld", j ? ", " : " pid ", (long long)json_integer_value(pid));
	}
	ff_print("\n");
	snprintf(old, sizeof(old), "%s.old", data);
	if (access(old, F_OK) == 0)
		ff_print("  Previous:    %s\n", old);
	if (!strcmp(c->name, "flamegraph")) {
		ff_print("  Flamegraph:  %s\n", flame_html);
		if (flame_out.old[0])
			ff_print("  Previous:    %s\n", flame_out.old);
		char *url = ff_file_url(flame_html);

		ff_print("\nOpen it in a browser: %s\n", url);
		free(url);
	} else {
		ff_print("\nNext step: %s\n", !strcmp(c->mode, "c2c") ? "perf c2c report" :
		       !strcmp(c->mode, "mem") ? "perf mem report" : "perf report --no-children");
	}
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
	if (c->kind == EXEC)
		exec_cmd(c, argc, argv);

	parse_run(c, argc, argv);
	capture_usage(c);
	validate_run(c);
	capture_check(c);
	outputs_check(c);
	ff_check_stdout();	/* not a whole run for a summary that cannot be printed */
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
