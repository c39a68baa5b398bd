/*
 * ff-capture - measure and capture in the relays during the window.
 *
 * Reads the stream, forwarding every event; takes the relays' pids from
 * `topology`, and on `window` measures them for exactly the window's
 * duration: their CPU time and peak memory (every mode), plus what the
 * mode captures: perf stat per relay, one perf record / c2c / mem of all
 * relays, or skstat of each router at the window's end. Emits `resources`,
 * `capture` (every mode but none), `skstat` per router, and, once the
 * workload's `result` is known, `stat` per relay; then its own `end`
 * after the upstream's. Alone, --pid and --duration measure any processes,
 * starting at once.
 */
#include "ff-capture.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <string.h>

static const char usage[] =
	"usage: ff-capture [--pid PID[,PID...]] [--duration SECONDS] [--run-dir DIR]\n"
	"                  [--call-graph fp|dwarf|lbr] [--freq HZ] [--check [--json]]\n"
	"                  [--interval SECONDS] [--roles ROLE[,ROLE...]] [--pipeline-stage]\n"
	"                  [--build LABEL=PATH] [MODE]\n"
	"\n"
	"Modes:\n"
	"  none    each relay's CPU time and peak memory over the window (default)\n"
	"  stat    perf stat of each relay: counters, and CPU per byte and operation\n"
	"  record  perf record of the relays: perf.data in the current directory\n"
	"  c2c     perf c2c record (cache-line sharing): perf.data, likewise\n"
	"  mem     perf mem record (memory accesses): perf.data, likewise\n"
	"  skstat  skstat -g and -m of each router (relay skrouterd) at the window's end\n"
	"  offcpu  perf record of the relays' scheduler switches and wakeups (every one,\n"
	"          with its stack): where their threads wait; perf.data, likewise\n"
	"  lock    perf lock record of the relays: their contended kernel locks\n"
	"          (perf lock contention of perf.data, likewise)\n"
	"Every mode reports the relays' resources. An existing perf.data is kept as\n"
	"perf.data.old. Reads the event stream on stdin, unless --pid and --duration\n"
	"are given (then it starts at once; not for skstat).\n"
	"  --call-graph METHOD  record, c2c, mem: fp (default), dwarf or lbr\n"
	"  --freq HZ            record, c2c, mem: samples per second (default 997)\n"
	"  --check              only check that this machine can capture in MODE\n"
	"  --json               with --check: the answer as one `check` event on stdout\n"
	"  --build LABEL=PATH   skstat: the skstat beside that router build (PATH/bin),\n"
	"                       run in the build's environment, not the one on PATH\n"
	"  --interval SECONDS   each relay's CPU and RSS every SECONDS of the window\n"
	"                       (default 1), added to the workload's interval events\n"
	"  --roles ROLES        only these relays of the topology (those on this host,\n"
	"                       when flimflam --hosts puts the relays on hosts of their own)\n"
	"  --pipeline-stage     flimflam's stage, after its --check: no notes, no lock,\n"
	"                       no \"stopped by\" line (flimflam says them)\n"
	"  --version            print the version and exit\n";

enum { OPT_PID = 256, OPT_DURATION, OPT_RUN_DIR, OPT_CALL_GRAPH, OPT_FREQ, OPT_CHECK, OPT_JSON,
       OPT_INTERVAL, OPT_ROLES };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	FF_LONGOPT_PIPELINE_STAGE,
	{ "pid", required_argument, NULL, OPT_PID },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "json", no_argument, NULL, OPT_JSON },
	FF_LONGOPT_BUILD,
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "roles", required_argument, NULL, OPT_ROLES },
	{ NULL, 0, NULL, 0 }
};

const char *const modes[] = { FF_CAPTURE_NONE, "stat", "record", "c2c", "mem", "skstat", "offcpu", "lock", NULL };
static const char *const call_graphs[] = { "fp", "dwarf", "lbr", NULL };

struct capture_opt opt = { .mode = NONE, .call_graph = "fp", .freq = 997, .interval = 1 };

json_t *result;

int
sampling(void)
{
	return opt.mode == RECORD || opt.mode == C2C || opt.mode == MEM || opt.mode == OFFCPU ||
	       opt.mode == LOCK;
}

static void
cleanup(void)
{
	ff_children_stop_all();
	if (data_out.tmp[0])
		ff_out_abort(&data_out);
}


/* The relays */

static void
add_target(const char *role, pid_t pid, const char *program, int mgmt_port)
{
	struct target *t;

	if (opt.n == MAX_TARGETS)
		ff_die("too many processes to measure (at most %d)", MAX_TARGETS);
	t = &opt.t[opt.n++];
	snprintf(t->role, sizeof(t->role), "%s", role);
	snprintf(t->program, sizeof(t->program), "%s", program ? program : "");
	t->pid = pid;
	t->mgmt_port = mgmt_port;
}

static void
parse_pids(const char *s)
{
	char *copy = strdup(s), *tok, *save;
	char role[16];

	if (!s[strspn(s, ",")])
		ff_usage_error(usage, "--pid: expected PID[,PID...], not '%s'", s);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		snprintf(role, sizeof(role), "p%d", opt.n + 1);
		add_target(role, (pid_t)ff_parse_long(usage, "--pid", tok, 1, 1L << 22), NULL, 0);
	}
	free(copy);
}

/* Is `role` one of --roles (a comma-separated list)? */
static int
role_listed(const char *role)
{
	size_t n = role ? strlen(role) : 0;
	const char *p;

	for (p = opt.roles; role && p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0))
		if (strcspn(p, ",") == n && !strncmp(p, role, n))
			return 1;
	return 0;
}

static void
topology(const json_t *ev)
{
	json_t *relays = json_object_get(ev, "relays"), *r;
	size_t i;

	json_array_foreach(relays, i, r) {
		const char *program = ff_json_str(r, "program");

		if (opt.roles && !role_listed(ff_json_str(r, "role")))
			continue;	/* on another host: its own capture's */
		add_target(ff_json_str_or(r, "role", "relay"),
			   (pid_t)ff_json_num(r, "pid", 0), program,
			   (int)ff_json_num(r, "management_port", 0));
		if (opt.mode == SKSTAT && !ff_relay_has(program, FF_RELAY_STATS))
			ff_die_event("skstat reads skrouterd's statistics, and relay %s is %s",
			     opt.t[opt.n - 1].role, program ? program : "unknown");
		if (opt.mode == SKSTAT && !opt.t[opt.n - 1].mgmt_port)
			ff_die_event("relay %s has no management port for skstat", opt.t[opt.n - 1].role);
	}
}

static void
window_begin(double duration)
{
	int i;

	if (opt.mode != NONE && opt.n == 0)
		ff_die_event("there is no relay to capture in (relay none)");
	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];

		t->npids = ff_proc_tree(t->pid, t->pids, MAX_PIDS);
		t->holder = ff_proc_parent(t->pid);
		if (!ff_proc_alive(t->pid))
			ff_die_event("%s (pid %d) is gone before the window", t->role, (int)t->pid);
	}
	if (opt.mode == STAT)
		for (i = 0; i < opt.n; i++)
			start_stat(&opt.t[i]);
	else if (sampling())
		start_sampling();
	perfs_enable();
	perf_cpu_note(0);
	/* The window, for perf and for the relays' CPU, starts as perf counts. */
	resources_begin(duration);
	/* The routers' pools as the window opens: their deltas are the window's. */
	if (opt.mode == SKSTAT)
		skstat_before(ff_now());
}

/* Stop at the deadline: perf first, then the resources, then collect. */
static void
window_close(void)
{
	int i;

	watch_perfs();
	perf_cpu_note(1);
	for (i = 0; i < opt.n; i++)
		interrupt(&opt.t[i].perf);
	interrupt(&perf);
	resources_end();
	intervals_done();
	if (opt.mode == STAT)
		collect_stats();
	else if (sampling())
		collect_sampling();
	if (opt.mode == LOCK)
		collect_locks();
	else if (opt.mode == SKSTAT)
		collect_skstat();
}

/* The stream */

static struct ff_stage stage;

/* How long a relay gone at the window's end waits for its holder to end. */
#define RELAY_GONE_WAIT_S 15

/*
 * A relay gone at the window's end. In a run its ff-topology holds it:
 * when the relay died, ff-topology says so; when a stage before it failed
 * (the server died), ff-topology stops its relays in its teardown, and
 * that stage said why. Either way the holder ends, and then so do we,
 * quietly (exit 1), the reason said already. Returns when the holder does
 * not end within RELAY_GONE_WAIT_S, or alone (--pid): the caller says it
 * died.
 */
void
relay_gone(const struct target *t)
{
	double until = ff_now() + RELAY_GONE_WAIT_S;

	if (!opt.pipeline_stage || t->holder <= 1)
		return;
	while (ff_proc_alive(t->holder) && ff_now() < until)
		ff_stage_wait(&stage, NULL, 0, 100);
	if (!ff_proc_alive(t->holder))
		ff_quit(1);
}

/*
 * Wait for the window's deadline (0: none), the stream, or a perf that ends
 * early; the stage loop stops us on a signal or a closed output.
 */
static void
wait_turn(double deadline)
{
	struct pollfd pfd[MAX_TARGETS + 1];
	int n = 0, i, timeout = -1;

	if (deadline > 0) {
		double left = deadline - ff_now();

		timeout = left > 0 ? (int)(left * 1000) + 1 : 0;
	}
	for (i = 0; deadline > 0 && i < opt.n; i++)
		pfd[n++] = (struct pollfd){ opt.t[i].perf.live ? opt.t[i].perf.pidfd : -1, POLLIN, 0 };
	pfd[n++] = (struct pollfd){ deadline > 0 && perf.live ? perf.pidfd : -1, POLLIN, 0 };
	ff_stage_wait(&stage, pfd, n, timeout);
}

static int
run_stream(void)
{
	double deadline = 0;
	int measured = 0, in_window = 0;
	json_t *ev, *held = NULL;

	for (;;) {
		while ((ev = ff_stage_next(&stage))) {
			const char *name = ff_event_name(ev);

			if (!strcmp(name, "topology"))
				topology(ev);
			if (!strcmp(name, "result")) {
				/* held until the window is measured: it gets the intervals */
				json_decref(result);
				result = json_incref(ev);
				if (!measured) {
					held = ev;
					continue;
				}
				emit_result(ev);
				continue;
			}
			if (!strcmp(name, "interval")) {
				interval_event(ev);
				continue;
			}
			if (!strcmp(name, "window") && !in_window && !measured) {
				double d = opt.duration > 0 ? opt.duration :
					   ff_json_num(ev, "duration_s", 0);

				ff_emit(ev);
				window_begin(d);
				in_window = 1;
				deadline = window_start + d;
				continue;
			}
			ff_emit(ev);
		}
		if (in_window) {
			watch_perfs();
			while (next_tick() && ff_now() >= next_tick())
				tick();
			if (ff_now() >= deadline) {
				window_close();
				in_window = 0;
				measured = 1;
				if (held)
					emit_result(held);
				held = NULL;
			}
		}
		if (stage.ended && !in_window)
			break;
		wait_turn(!in_window ? 0 : next_tick() && next_tick() < deadline ? next_tick() : deadline);
	}
	if (!measured)
		ff_die_event("the stream had no window to measure");
	emit_stats();
	ff_stage_end(&stage, 0);
	return 0;
}

static int
run_alone(void)
{
	double deadline;

	/* Alone there are no workload intervals to pair: one, the window. */
	opt.interval = opt.duration;
	window_begin(opt.duration);
	deadline = window_start + opt.duration;
	while (ff_now() < deadline) {
		wait_turn(deadline);
		watch_perfs();
	}
	window_close();
	emit_stats();
	ff_stage_end(&stage, 0);
	return 0;
}

int
main(int argc, char *argv[])
{
	int c, alone, interval_given = 0;

	ff_setprog(argv[0]);
	/* First: a SIGTERM while the capture is checked is caught, not fatal. */
	ff_signals_init();
	opterr = 0;
	while ((c = ff_getopt(argc, argv, ":h", longopts, usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case OPT_PID:
			parse_pids(optarg);
			break;
		case OPT_DURATION:
			opt.duration = ff_parse_run_opt(usage, "--duration", optarg);
			break;
		case OPT_RUN_DIR:
			opt.run_dir = optarg;
			break;
		case OPT_CALL_GRAPH:
			opt.call_graph = call_graphs[ff_parse_name(usage, "call graph method",
								   optarg, call_graphs)];
			break;
		case OPT_FREQ:
			opt.freq = ff_parse_run_opt(usage, "--freq", optarg);
			break;
		case OPT_CHECK:
			opt.check = 1;
			break;
		case OPT_JSON:
			opt.json = 1;
			break;
		case FF_OPT_BUILD:
			if (opt.build)
				ff_usage_error(usage, "--build is given twice: skstat reads one build");
			opt.build = optarg;
			break;
		case OPT_INTERVAL:
			opt.interval = ff_parse_interval(usage, optarg);
			interval_given = 1;
			break;
		case OPT_ROLES:
			if (!optarg[strspn(optarg, ",")])
				ff_usage_error(usage, "--roles: expected ROLE[,ROLE...], not '%s'", optarg);
			opt.roles = optarg;
			break;
		}
	if (optind < argc)
		opt.mode = ff_parse_name(usage, "mode", argv[optind++], modes);
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (opt.json && !opt.check)
		ff_usage_error(usage, "--json is the answer of --check: give it with --check");
	opt.pipeline_stage = ff_pipeline_stage();
	alone = opt.alone = opt.n > 0;
	if (alone && !opt.duration)
		ff_usage_error(usage, "--pid needs --duration");
	if (alone && interval_given)
		ff_usage_error(usage, "--interval pairs the relays' figures with the workload's intervals in the stream; with --pid there are none");
	if (opt.duration)
		ff_check_interval(usage, opt.interval, opt.duration);
	if (alone && opt.mode == SKSTAT)
		ff_usage_error(usage, "skstat takes the routers' management ports from the stream, not --pid");

	ff_set_cleanup(cleanup);
	check_mode();
	if (opt.check)
		return 0;
	ff_stage_begin(&stage, !alone);
	return alone ? run_alone() : run_stream();
}
