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
#include "ff.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-capture [--pid PID[,PID...]] [--duration SECONDS] [--run-dir DIR]\n"
	"                  [--call-graph fp|dwarf|lbr] [--freq HZ] [--check] [MODE]\n"
	"\n"
	"Modes:\n"
	"  none    each relay's CPU time and peak memory over the window (default)\n"
	"  stat    perf stat of each relay: counters, and CPU per byte and operation\n"
	"  record  perf record of the relays: perf.data in the current directory\n"
	"  c2c     perf c2c record (cache-line sharing): perf.data, likewise\n"
	"  mem     perf mem record (memory accesses): perf.data, likewise\n"
	"  skstat  skstat -g and -m of each router (relay skrouterd) at the window's end\n"
	"Every mode reports the relays' resources. An existing perf.data is kept as\n"
	"perf.data.old. Reads the event stream on stdin, unless --pid and --duration\n"
	"are given (then it starts at once; not for skstat).\n"
	"  --call-graph METHOD  record, c2c, mem: fp (default), dwarf or lbr\n"
	"  --freq HZ            record, c2c, mem: samples per second (default 997)\n"
	"  --check              only check that this machine can capture in MODE\n"
	"  --version            print the version and exit\n";

enum { OPT_PID = 256, OPT_DURATION, OPT_RUN_DIR, OPT_CALL_GRAPH, OPT_FREQ, OPT_CHECK };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	{ "pid", required_argument, NULL, OPT_PID },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ NULL, 0, NULL, 0 }
};

enum mode { NONE, STAT, RECORD, C2C, MEM, SKSTAT };
static const char *const modes[] = { "none", "stat", "record", "c2c", "mem", "skstat", NULL };
static const char *const call_graphs[] = { "fp", "dwarf", "lbr", NULL };

#define MAX_TARGETS 16
#define MAX_PIDS 256

struct target {
	char role[16], program[64];
	pid_t pid;
	int mgmt_port;
	double cpu0;
	pid_t pids[MAX_PIDS];	/* the process and its descendants at window start */
	int npids;
	struct ff_child perf;	/* stat: perf stat of this relay */
	char *stat_file;
	json_t *stat;		/* the parsed counters */
};

static struct {
	enum mode mode;
	const char *run_dir, *call_graph;
	long duration, freq;
	int check;
	struct target t[MAX_TARGETS];
	int n;
} opt = { .mode = NONE, .call_graph = "fp", .freq = 997 };

/*
 * record, c2c, mem: one perf for all relays, writing data_out.tmp, which
 * becomes `data` (./perf.data), the previous one kept as perf.data.old.
 */
static struct ff_child perf;
static struct ff_out data_out;
static char data[PATH_MAX + 16], perf_log[PATH_MAX + 32];
static const char *sample_event;	/* NULL: perf's default (cycles) */
static json_t *result;			/* the workload's result, once seen */
static json_t *stats;			/* stat events to emit at the end */

static int
sampling(void)
{
	return opt.mode == RECORD || opt.mode == C2C || opt.mode == MEM;
}

static void
cleanup(void)
{
	ff_children_stop_all();
	if (data_out.tmp[0])
		ff_out_abort(&data_out);
}


/* Checks: what this machine can capture, before anything starts */

static long
read_long_file(const char *path, long dflt)
{
	char *s = ff_read_file(path, NULL);
	long v = dflt;

	if (s)
		v = strtol(s, NULL, 10);
	free(s);
	return v;
}

static void
check_skstat(void)
{
	char *path = ff_which("skstat"), *out, *last, *nl;
	char *argv[] = { "skstat", "--help", NULL };
	const char *pp = getenv("PYTHONPATH");
	int status;

	if (!path)
		ff_die("skstat is not on PATH: it comes with the router (its bin directory), "
		       "and needs Proton's Python binding on PYTHONPATH");
	argv[0] = path;
	out = ff_env_run(argv, &status);
	if (!out)
		ff_die("cannot run '%s'", path);
	if (status != 0 || strstr(out, "No module named")) {
		/* The traceback's last line says what failed. */
		while ((nl = strrchr(out, '\n')) && nl[1] == 0)
			*nl = 0;
		last = strrchr(out, '\n');
		last = last ? last + 1 : out;
		if (strstr(out, "proton"))
			ff_die("'%s' cannot import the Python module 'proton' (%s); set PYTHONPATH "
			       "to the directory holding Proton's Python binding (PYTHONPATH is %s%s%s)",
			       path, last, pp ? "'" : "", pp ? pp : "unset", pp ? "'" : "");
		ff_die("'%s --help' fails (%s); check PYTHONPATH (%s%s%s)", path, last,
		       pp ? "'" : "", pp ? pp : "unset", pp ? "'" : "");
	}
	free(out);
	free(path);
}

/*
 * perf.data and perf.data.old can be written as ff_out says, and no other
 * record writes them now: this one holds a lock on the directory for its
 * run (under flimflam, flimflam holds it).
 */
static void
check_data(const char *cwd)
{
	char why[PATH_MAX + 128];

	snprintf(data, sizeof(data), "%s/perf.data", cwd);
	if (ff_out_check(&data_out, data, 0, "*.old") < 0)
		ff_die("%s", data_out.err);
	if ((opt.check || !getenv("FLIMFLAM_PIPELINE")) &&
	    ff_lock_dir(cwd, "perf.data", why, sizeof(why)) < 0)
		ff_die("%s", why);
}

static void
check_perf(void)
{
	char why[1024], cwd[PATH_MAX], *path = ff_which("perf");
	int bits, paranoid = ff_perf_paranoid();
	long max_rate;

	if (!path)
		ff_die("'%s' needs perf, which is not on PATH; 'flimflam check' says how to install it",
		       modes[opt.mode]);
	free(path);
	bits = ff_perf_probe(why, sizeof(why));
	if (!(bits & FF_PERF_EVENTS)) {
		if (paranoid > 1 || paranoid == INT_MIN)
			ff_die("perf cannot attach to the relays (%s); as root, run "
			       "'sysctl -w kernel.perf_event_paranoid=-1' "
			       "(or: echo -1 > /proc/sys/kernel/perf_event_paranoid)", why);
		ff_die("perf cannot attach to the relays (%s), although perf_event_paranoid is %d: "
		       "in a container, perf_event_open must be allowed (seccomp profile, CAP_PERFMON)",
		       why, paranoid);
	}
	if (sampling() && !(bits & FF_PERF_KERNEL) && (opt.check || !getenv("FLIMFLAM_PIPELINE")))
		ff_warn("note: kernel frames will be missing (perf_event_paranoid=%d); as root, "
			"'sysctl -w kernel.perf_event_paranoid=-1' includes them", paranoid);
	if ((opt.mode == C2C || opt.mode == MEM) && !(bits & FF_PERF_MEMORY))
		ff_die("'%s' samples memory accesses, which needs a hardware PMU with load sampling "
		       "(Intel's mem-loads, AMD's IBS or Arm's SPE), and this machine has none (%s); "
		       "it works on bare metal or in a VM with PMU passthrough; here, 'record' and "
		       "'stat' work", modes[opt.mode], why);
	if (sampling() && !strcmp(opt.call_graph, "lbr") &&
	    (!(bits & FF_PERF_HARDWARE) ||
	     access("/sys/bus/event_source/devices/cpu/caps/branches", F_OK) != 0))
		ff_die("--call-graph lbr needs the CPU's last branch records (Intel, or AMD Zen 4 "
		       "and later, on bare metal or with PMU passthrough), which this machine lacks; "
		       "use fp (the default, with a router built with frame pointers) or dwarf");
	max_rate = read_long_file("/proc/sys/kernel/perf_event_max_sample_rate", 0);
	if (sampling() && max_rate > 0 && opt.freq > max_rate)
		ff_die("--freq %ld is above kernel.perf_event_max_sample_rate (%ld); use a lower "
		       "rate, or raise the limit as root: sysctl -w kernel.perf_event_max_sample_rate=%ld",
		       opt.freq, max_rate, opt.freq);
	/* perf.data of a few seconds takes megabytes; far less is a full disk. */
	if (sampling() && ff_dir_writable(getcwd(cwd, sizeof(cwd)) ? cwd : ".", 16 << 20,
					  why, sizeof(why)) < 0)
		ff_die("'%s' writes perf.data in the current directory: %s", modes[opt.mode], why);
	if (sampling())
		check_data(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
	/* Without a PMU, perf's default event (cycles) does not exist. */
	if (!(bits & FF_PERF_HARDWARE))
		sample_event = "cpu-clock";
}

static void
check_mode(void)
{
	if (opt.mode == SKSTAT)
		check_skstat();
	else if (opt.mode != NONE)
		check_perf();
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

static void
topology(const json_t *ev)
{
	json_t *relays = json_object_get(ev, "relays"), *r;
	size_t i;

	json_array_foreach(relays, i, r) {
		const char *program = ff_json_str(r, "program");

		add_target(ff_json_str(r, "role") ? ff_json_str(r, "role") : "relay",
			   (pid_t)ff_json_num(r, "pid", 0), program,
			   (int)ff_json_num(r, "management_port", 0));
		if (opt.mode == SKSTAT && (!program || strcmp(program, "skrouterd")))
			ff_die_event("skstat reads skrouterd's statistics, and relay %s is %s",
			     opt.t[opt.n - 1].role, program ? program : "unknown");
		if (opt.mode == SKSTAT && !opt.t[opt.n - 1].mgmt_port)
			ff_die_event("relay %s has no management port for skstat", opt.t[opt.n - 1].role);
	}
}

static json_t *
pids_json(const pid_t *pids, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(pids[i]));
	return a;
}

/* "1,2,3" of the pids of every target, or of one (malloc'd). */
static char *
pid_list(const struct target *only)
{
	size_t cap = 16, len = 0;
	char *s = malloc(cap), num[24];
	int i, j;

	s[0] = 0;
	for (i = 0; i < opt.n; i++) {
		if (only && &opt.t[i] != only)
			continue;
		for (j = 0; j < opt.t[i].npids; j++) {
			int k = snprintf(num, sizeof(num), "%s%d", len ? "," : "", (int)opt.t[i].pids[j]);

			if (len + k + 1 > cap) {
				cap = 2 * (len + k + 1);
				s = realloc(s, cap);
				if (!s)
					ff_die("out of memory");
			}
			memcpy(s + len, num, k + 1);
			len += k;
		}
	}
	return s;
}

static json_t *
relays_json(void)
{
	json_t *a = json_array(), *o;
	int i;

	for (i = 0; i < opt.n; i++) {
		o = json_object();
		json_object_set_new(o, "role", json_string(opt.t[i].role));
		json_object_set_new(o, "pid", json_integer(opt.t[i].pid));
		json_object_set_new(o, "pids", pids_json(opt.t[i].pids, opt.t[i].npids));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
all_pids_json(void)
{
	json_t *a = json_array();
	int i, j;

	for (i = 0; i < opt.n; i++)
		for (j = 0; j < opt.t[i].npids; j++)
			json_array_append_new(a, json_integer(opt.t[i].pids[j]));
	return a;
}

/* Starting perf at the window's start */

/*
 * Each perf starts with its events off (-D -1) and a control fifo: we turn
 * them on and wait for its ack, so the window is timed from when perf
 * counts, not from when it was started (on a loaded machine perf takes a
 * second or more to attach, and a short window then had no samples).
 */
#define MAX_PERFS (MAX_TARGETS + 1)
static struct perf_ctl {
	struct ff_child *c;
	int ctl, ack;
	char *ctl_path, *ack_path;
	char arg[2 * PATH_MAX + 16];	/* fifo:CTL,ACK */
} perf_ctls[MAX_PERFS];
static int nperf_ctls;

static struct perf_ctl *
perf_ctl_new(struct ff_child *c, const char *role_file)
{
	struct perf_ctl *pc = &perf_ctls[nperf_ctls++];
	char *ctl = ff_asprintf("%s/%s.ctl", ff_rundir(opt.run_dir), role_file);
	char *ack = ff_asprintf("%s/%s.ack", ff_rundir(opt.run_dir), role_file);

	unlink(ctl);
	unlink(ack);
	/* O_RDWR: a fifo so opened never blocks, whether or not perf has it open. */
	if (mkfifo(ctl, 0600) < 0 || mkfifo(ack, 0600) < 0 ||
	    (pc->ctl = open(ctl, O_RDWR | O_CLOEXEC)) < 0 ||
	    (pc->ack = open(ack, O_RDWR | O_CLOEXEC | O_NONBLOCK)) < 0)
		ff_die_event("cannot make perf's control fifos in '%s': %s", ff_rundir(opt.run_dir),
			     strerror(errno));
	snprintf(pc->arg, sizeof(pc->arg), "fifo:%s,%s", ctl, ack);
	pc->c = c;
	pc->ctl_path = ctl;
	pc->ack_path = ack;
	return pc;
}

/* Turn every perf's events on; return once each has said so. */
static void
perfs_enable(void)
{
	double until = ff_now() + 60;
	char buf[64];
	int i, left = nperf_ctls;

	for (i = 0; i < nperf_ctls; i++)
		if (write(perf_ctls[i].ctl, "enable\n", 7) != 7)
			ff_die_event("cannot write to perf's control fifo: %s", strerror(errno));
	while (left > 0) {
		struct pollfd pfd[1 + 2 * MAX_PERFS];
		int n = 0;

		pfd[n++] = (struct pollfd){ ff_signal_fd(), POLLIN, 0 };
		for (i = 0; i < nperf_ctls; i++) {
			pfd[n++] = (struct pollfd){ perf_ctls[i].ack, POLLIN, 0 };
			pfd[n++] = (struct pollfd){ perf_ctls[i].c->pidfd, POLLIN, 0 };
		}
		poll(pfd, n, 200);
		if (ff_signalled())
			ff_exit_signalled();
		for (i = 0; i < nperf_ctls; i++) {
			struct perf_ctl *pc = &perf_ctls[i];

			if (pc->ack >= 0 && read(pc->ack, buf, sizeof(buf)) > 0) {
				close(pc->ack);
				close(pc->ctl);
				pc->ack = pc->ctl = -1;
				/* Opened by perf already: the names are no longer needed. */
				unlink(pc->ctl_path);
				unlink(pc->ack_path);
				free(pc->ctl_path);
				free(pc->ack_path);
				left--;
			} else if (pc->ack >= 0 && ff_child_check(pc->c)) {
				ff_child_report(pc->c);
				ff_die_event("%s ended before it attached (%s)", pc->c->role,
					     ff_child_how(pc->c));
			}
		}
		if (left > 0 && ff_now() > until)
			ff_die_event("perf did not attach to the relays within 60 s");
	}
	nperf_ctls = 0;
}

static void
spawn_perf(struct ff_child *c, const char *role, char **argv, const char *log)
{
	/* perf's numbers without thousands separators, whatever the user's locale. */
	static char lc_all[] = "LC_ALL=C";
	char *env[] = { lc_all, NULL };
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;

	o.log = log;
	o.env = env;
	unlink(log);
	if (ff_spawn(c, role, argv, &o) < 0)
		ff_die_event("cannot start %s", role);
}

static const char stat_events[] =
	"task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,"
	"branches,branch-misses,cache-references,cache-misses";

static void
start_stat(struct target *t)
{
	char *pids = pid_list(t), *log = ff_asprintf("%s/%s-perf-stat.log", ff_rundir(opt.run_dir), t->role);
	char *ctl_name = ff_asprintf("%s-perf-stat", t->role);
	struct perf_ctl *pc = perf_ctl_new(&t->perf, ctl_name);
	char *argv[] = { "perf", "stat", "--no-big-num", "-e", (char *)stat_events,
			 "-D", "-1", "--control", pc->arg, "-p", pids, "-o", NULL, NULL };

	free(ctl_name);
	t->stat_file = ff_asprintf("%s/%s-perf-stat.txt", ff_rundir(opt.run_dir), t->role);
	argv[12] = t->stat_file;
	unlink(t->stat_file);
	spawn_perf(&t->perf, "perf stat", argv, log);
	free(pids);
	free(log);
}

static void
start_sampling(void)
{
	char *pids = pid_list(NULL), freq[24];
	char *argv[24];
	int n = 0;

	/* perf writes the temporary file; a perf.data device gets a copy. */
	if (ff_out_open(&data_out, data, FF_OUT_DEFER, "*.old", 0600) < 0)
		ff_die_event("%s", data_out.err);
	snprintf(perf_log, sizeof(perf_log), "%s/perf-%s.log", ff_rundir(opt.run_dir), modes[opt.mode]);
	snprintf(freq, sizeof(freq), "%ld", opt.freq);
	argv[n++] = "perf";
	if (opt.mode == RECORD) {
		argv[n++] = "record";
		if (sample_event) {
			argv[n++] = "-e";
			argv[n++] = (char *)sample_event;
		}
	} else {
		/* perf c2c/mem record [their options] -- [perf record's options] */
		argv[n++] = opt.mode == C2C ? "c2c" : "mem";
		argv[n++] = "record";
		argv[n++] = "--";
	}
	argv[n++] = "-D";
	argv[n++] = "-1";
	argv[n++] = "--control";
	argv[n++] = perf_ctl_new(&perf, modes[opt.mode])->arg;
	argv[n++] = "-F";
	argv[n++] = freq;
	argv[n++] = "--call-graph";
	argv[n++] = (char *)opt.call_graph;
	argv[n++] = "-p";
	argv[n++] = pids;
	/* Always a file: perf record writes to stdout when that is a pipe. */
	argv[n++] = "-o";
	argv[n++] = data_out.tmp;
	argv[n] = NULL;
	spawn_perf(&perf, opt.mode == RECORD ? "perf record" : opt.mode == C2C ? "perf c2c" : "perf mem",
		   argv, perf_log);
	free(pids);
}

static double window_start;

static void
window_begin(void)
{
	int i;

	if (opt.mode != NONE && opt.n == 0)
		ff_die_event("there is no relay to capture in (relay none)");
	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];

		t->npids = ff_proc_tree(t->pid, t->pids, MAX_PIDS);
		if (!ff_proc_alive(t->pid))
			ff_die_event("%s (pid %d) is gone before the window", t->role, (int)t->pid);
	}
	if (opt.mode == STAT)
		for (i = 0; i < opt.n; i++)
			start_stat(&opt.t[i]);
	else if (sampling())
		start_sampling();
	perfs_enable();
	/* The window, for perf and for the relays' CPU, starts as perf counts. */
	window_start = ff_now();
	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];

		t->cpu0 = ff_proc_cpu_s(t->pid);
		if (t->cpu0 < 0)
			ff_die_event("%s (pid %d) is gone before the window", t->role, (int)t->pid);
	}
}

/* The window's end */

static void
window_end(void)
{
	double window = ff_now() - window_start;
	json_t *ev = ff_event("resources"), *arr = json_array();
	int i;

	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];
		double cpu = ff_proc_cpu_s(t->pid);
		long long rss = ff_proc_hwm_bytes(t->pid);
		json_t *o;

		if (cpu < 0 || rss < 0 || !ff_proc_alive(t->pid))
			ff_die_event("%s (pid %d) died during the window", t->role, (int)t->pid);
		o = json_object();
		json_object_set_new(o, "role", json_string(t->role));
		json_object_set_new(o, "pid", json_integer(t->pid));
		json_object_set_new(o, "cpu_s", json_real(cpu - t->cpu0));
		json_object_set_new(o, "cpu_fraction", json_real((cpu - t->cpu0) / window));
		json_object_set_new(o, "max_rss_bytes", json_integer(rss));
		json_array_append_new(arr, o);
	}
	json_object_set_new(ev, "window_s", json_real(window));
	json_object_set_new(ev, "relays", arr);
	ff_emit(ev);
}

/* A perf that ended before we stopped it failed: say why, with its log. */
static void
check_early_exit(struct ff_child *c)
{
	if (c->pid && !c->live && c->exited) {
		ff_child_report(c);
		ff_die_event("%s ended before the window did (%s)", c->role, ff_child_how(c));
	}
}

static void
watch_perfs(void)
{
	int i;

	for (i = 0; i < opt.n; i++)
		if (opt.t[i].perf.pid && ff_child_check(&opt.t[i].perf))
			check_early_exit(&opt.t[i].perf);
	if (perf.pid && ff_child_check(&perf))
		check_early_exit(&perf);
}

static void
interrupt(struct ff_child *c)
{
	if (c->pid && !c->exited)
		kill(c->pid, SIGINT);
}

/*
 * Wait for a perf we interrupted to write its data (or for skstat). Up to
 * `timeout` seconds (perf record reads its data back for build ids); a
 * signal stops everything.
 */
static void
finish_child(struct ff_child *c, double timeout)
{
	double until = ff_now() + timeout;
	int st;

	while (!ff_child_wait(c, 0.2)) {
		if (ff_signalled())
			ff_exit_signalled();
		if (ff_now() > until) {
			ff_child_stop(c, 1.0);
			ff_die_event("%s did not finish writing within %.0f s; its log: %s", c->role,
			     timeout, c->log);
		}
	}
	st = c->status;
	/* perf ends with 130 (128 + SIGINT) when interrupted, or 0. */
	if ((WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 128 + SIGINT)) ||
	    (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT))
		return;
	ff_child_report(c);
	ff_die_event("%s %s", c->role, ff_child_how(c));
}

/* perf stat's table */

struct counter {
	const char *perf, *key;
	int is_ms;
};

static const struct counter counters[] = {
	{ "task-clock", "task_clock_ms", 1 },
	{ "context-switches", "context_switches", 0 },
	{ "cpu-migrations", "cpu_migrations", 0 },
	{ "page-faults", "page_faults", 0 },
	{ "cycles", "cycles", 0 },
	{ "instructions", "instructions", 0 },
	{ "branches", "branches", 0 },
	{ "branch-misses", "branch_misses", 0 },
	{ "cache-references", "cache_references", 0 },
	{ "cache-misses", "cache_misses", 0 },
};

/*
 * "cycles:u" -> "cycles"; "cpu_core/cycles/" (hybrid CPUs, one line per
 * PMU, summed) -> "cycles".
 */
static void
base_event_name(const char *word, char *out, size_t n)
{
	const char *slash = strchr(word, '/'), *end;
	size_t len;

	if (slash && (end = strchr(slash + 1, '/'))) {
		word = slash + 1;
		len = end - word;
	} else {
		len = strcspn(word, ":");
	}
	if (len >= n)
		len = n - 1;
	memcpy(out, word, len);
	out[len] = 0;
}

/*
 * perf stat's human output, as written with -o under LC_ALL=C and
 * --no-big-num: "   1234.56 msec task-clock   # ...", "  <not supported>
 * cycles", "   2.001 seconds time elapsed". Returns an object with every
 * counter's key (null when not counted or not supported) and elapsed_s,
 * and *table the text from "Performance counter stats" on.
 */
static json_t *
parse_stat(const char *text, char **table, const char **missing)
{
	json_t *o = json_object();
	const char *line, *next, *start = strstr(text, "Performance counter stats");
	int seen[FF_ARRAY_SIZE(counters)] = { 0 }, elapsed = 0;
	size_t i, len;

	for (i = 0; i < FF_ARRAY_SIZE(counters); i++)
		json_object_set_new(o, counters[i].key, json_null());
	json_object_set_new(o, "elapsed_s", json_null());
	for (line = text; *line; line = next) {
		char buf[512], word[128], name[128], *p, *end;
		double v;
		int counted = 1;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		len = next - line < (long)sizeof(buf) ? (size_t)(next - line) : sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = 0;
		p = buf + strspn(buf, " \t");
		if (*p == '<') {
			counted = 0;
			p = strchr(p, '>');
			if (!p)
				continue;
			p++;
			v = 0;
		} else {
			v = strtod(p, &end);
			if (end == p)
				continue;
			p = end;
		}
		if (sscanf(p, " %127s", word) != 1)
			continue;
		if (!strcmp(word, "msec") && sscanf(p, " msec %127s", word) != 1)
			continue;
		if (!strcmp(word, "seconds") && strstr(p, "time elapsed")) {
			json_object_set_new(o, "elapsed_s", json_real(v));
			elapsed = 1;
			continue;
		}
		base_event_name(word, name, sizeof(name));
		for (i = 0; i < FF_ARRAY_SIZE(counters); i++) {
			const json_t *old;

			if (strcmp(name, counters[i].perf))
				continue;
			seen[i] = 1;
			if (!counted)
				break;
			old = json_object_get(o, counters[i].key);
			if (counters[i].is_ms)
				json_object_set_new(o, counters[i].key,
						    json_real(v + (json_is_number(old) ? json_number_value(old) : 0)));
			else
				json_object_set_new(o, counters[i].key,
						    json_integer((json_int_t)(v + (json_is_number(old) ?
							json_number_value(old) : 0) + 0.5)));
			break;
		}
	}
	/* A line for every event asked, and the last line: else it was cut short. */
	*missing = elapsed ? NULL : "seconds time elapsed";
	for (i = 0; i < FF_ARRAY_SIZE(counters) && !*missing; i++)
		if (!seen[i])
			*missing = counters[i].perf;
	if (table) {
		/* From the start of perf's line, its indentation kept. */
		start = start ? start : text;
		while (start > text && start[-1] != '\n')
			start--;
		len = strlen(start);
		while (len && (start[len - 1] == '\n' || start[len - 1] == ' '))
			len--;
		*table = strndup(start, len);
	}
	return o;
}

static void
collect_stat(struct target *t)
{
	char *text, *table = NULL;
	const char *missing;
	json_t *ev;

	finish_child(&t->perf, 60);
	text = ff_read_file(t->stat_file, NULL);
	if (!text || !strstr(text, "Performance counter stats")) {
		ff_child_report(&t->perf);
		ff_die_event("perf stat of %s wrote no counters to '%s'", t->role, t->stat_file);
	}
	ev = ff_event("stat");
	json_object_set_new(ev, "role", json_string(t->role));
	json_object_set_new(ev, "pid", json_integer(t->pid));
	json_object_set_new(ev, "pids", pids_json(t->pids, t->npids));
	t->stat = parse_stat(text, &table, &missing);
	if (missing)
		ff_die_event("perf stat's table for %s in '%s' is incomplete (no '%s' line: cut short, a full disk?); no figures from it",
			     t->role, t->stat_file, missing);
	json_object_update(ev, t->stat);
	json_object_set_new(ev, "file", ff_json_path(t->stat_file));
	json_object_set_new(ev, "table", ff_json_text(table));
	json_array_append_new(stats, ev);
	free(table);
	free(text);
}

static double
num_or(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : -1;
}

static json_t *
ratio(double a, double b, double scale)
{
	return a >= 0 && b > 0 ? json_real(a / b * scale) : json_null();
}

/* The figures per byte and operation, now that the result is known. */
static void
emit_stats(void)
{
	double bytes = result ? num_or(result, "bytes") : -1;
	double ops = result ? num_or(result, "operations") : -1;
	size_t i;
	json_t *ev;

	json_array_foreach(stats, i, ev) {
		double ms = num_or(ev, "task_clock_ms");

		json_object_set_new(ev, "bytes", bytes >= 0 ? json_integer((json_int_t)bytes) : json_null());
		json_object_set_new(ev, "operations", ops >= 0 ? json_integer((json_int_t)ops) : json_null());
		json_object_set_new(ev, "cpu_ms_per_gb", ratio(ms, bytes, 1e9));
		json_object_set_new(ev, "cpu_ms_per_kop", ratio(ms, ops, 1e3));
		json_object_set_new(ev, "instructions_per_byte", ratio(num_or(ev, "instructions"), bytes, 1));
		json_object_set_new(ev, "cycles_per_byte", ratio(num_or(ev, "cycles"), bytes, 1));
		ff_emit(json_incref(ev));
	}
}

/* perf record, c2c, mem: keep the data as perf would */


/* The `capture` event every mode emits: the tool, its files (stolen), the pids. */
static json_t *
capture_event(const char *tool, json_t *files)
{
	json_t *ev = ff_event("capture");

	json_object_set_new(ev, "tool", json_string(tool));
	json_object_set_new(ev, "mode", json_string(modes[opt.mode]));
	json_object_set_new(ev, "files", files);
	json_object_set_new(ev, "pids", all_pids_json());
	json_object_set_new(ev, "relays", relays_json());
	return ev;
}

static void
collect_sampling(void)
{
	struct stat st;
	json_t *ev, *files;

	finish_child(&perf, 300);
	if (stat(data_out.tmp, &st) < 0 || st.st_size == 0) {
		ff_child_report(&perf);
		ff_die_event("%s wrote no data", perf.role);
	}
	/* As perf does: the previous perf.data becomes perf.data.old. */
	if (ff_out_commit(&data_out) < 0)
		ff_die_event("%s", data_out.err);
	files = json_array();
	json_array_append_new(files, ff_json_path(data));
	ev = capture_event(perf.role, files);
	json_object_set_new(ev, "perf_event", sample_event ? json_string(sample_event) : json_null());
	json_object_set_new(ev, "call_graph", json_string(opt.call_graph));
	json_object_set_new(ev, "freq", json_integer(opt.freq));
	json_object_set_new(ev, "log", ff_json_path(perf_log));
	ff_emit(ev);
}

static void
collect_stats(void)
{
	json_t *files = json_array();
	int i;

	for (i = 0; i < opt.n; i++) {
		collect_stat(&opt.t[i]);
		json_array_append_new(files, ff_json_path(opt.t[i].stat_file));
	}
	ff_emit(capture_event("perf stat", files));
}

/* skstat */

/* Run skstat FLAG against a router; its output (and messages) go to `file`. */
static char *
run_skstat(const struct target *t, const char *flag, const char *file)
{
	char bus[64], *path = ff_which("skstat");
	char *argv[] = { path, "-b", bus, (char *)flag, NULL };
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	struct ff_child c;
	char *text;

	if (!path)
		ff_die_event("skstat is not on PATH");
	snprintf(bus, sizeof(bus), "127.0.0.1:%d", t->mgmt_port);
	unlink(file);
	o.log = file;
	if (ff_spawn(&c, "skstat", argv, &o) < 0)
		ff_die_event("cannot start skstat");
	finish_child(&c, 30);
	free(path);
	/* Whole lines of something, or the file was cut short (a full disk). */
	text = ff_read_file(file, NULL);
	if (!text || !text[strspn(text, " \t\n")] || text[strlen(text) - 1] != '\n')
		ff_die_event("skstat %s of %s wrote %s to '%s' (a full disk?); no figures from it",
			     flag, t->role, !text ? "nothing readable" : !*text ? "nothing" :
			     "an incomplete last line", file);
	return text;
}

static void
collect_skstat(void)
{
	json_t *files = json_array(), *ev;
	int i;

	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];
		char *g = ff_asprintf("%s/%s-skstat-g.txt", ff_rundir(opt.run_dir), t->role);
		char *m = ff_asprintf("%s/%s-skstat-m.txt", ff_rundir(opt.run_dir), t->role);
		char *gt = run_skstat(t, "-g", g), *mt = run_skstat(t, "-m", m);
		json_t *f = json_array();

		json_array_append_new(f, ff_json_path(g));
		json_array_append_new(f, ff_json_path(m));
		json_array_append_new(files, ff_json_path(g));
		json_array_append_new(files, ff_json_path(m));
		ev = ff_event("skstat");
		json_object_set_new(ev, "role", json_string(t->role));
		json_object_set_new(ev, "pid", json_integer(t->pid));
		json_object_set_new(ev, "management_port", json_integer(t->mgmt_port));
		json_object_set_new(ev, "files", f);
		json_object_set_new(ev, "general", ff_json_text(gt));
		json_object_set_new(ev, "memory", ff_json_text(mt));
		ff_emit(ev);
		free(g);
		free(m);
		free(gt);
		free(mt);
	}
	ff_emit(capture_event("skstat", files));
}

/* Stop at the deadline: perf first, then the resources, then collect. */
static void
window_close(void)
{
	int i;

	watch_perfs();
	for (i = 0; i < opt.n; i++)
		interrupt(&opt.t[i].perf);
	interrupt(&perf);
	window_end();
	if (opt.mode == STAT)
		collect_stats();
	else if (sampling())
		collect_sampling();
	else if (opt.mode == SKSTAT)
		collect_skstat();
}

/* The stream */

static struct ff_stage stage;

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
	json_t *ev;

	for (;;) {
		while ((ev = ff_stage_next(&stage))) {
			const char *name = ff_event_name(ev);

			if (!strcmp(name, "topology"))
				topology(ev);
			if (!strcmp(name, "result")) {
				json_decref(result);
				result = json_incref(ev);
			}
			if (!strcmp(name, "window") && !in_window && !measured) {
				double d = opt.duration > 0 ? opt.duration :
					   ff_json_num(ev, "duration_s", 0);

				ff_emit(ev);
				window_begin();
				in_window = 1;
				deadline = window_start + d;
				continue;
			}
			ff_emit(ev);
		}
		if (in_window) {
			watch_perfs();
			if (ff_now() >= deadline) {
				window_close();
				in_window = 0;
				measured = 1;
			}
		}
		if (stage.ended && !in_window)
			break;
		wait_turn(in_window ? deadline : 0);
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

	window_begin();
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
	int c, alone;

	ff_setprog(argv[0]);
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
		}
	if (optind < argc)
		opt.mode = ff_parse_name(usage, "mode", argv[optind++], modes);
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	alone = opt.n > 0;
	if (alone && !opt.duration)
		ff_usage_error(usage, "--pid needs --duration");
	if (alone && opt.mode == SKSTAT)
		ff_usage_error(usage, "skstat takes the routers' management ports from the stream, not --pid");

	ff_set_cleanup(cleanup);
	check_mode();
	if (opt.check)
		return 0;
	ff_signals_init();
	stats = json_array();
	ff_stage_begin(&stage, !alone);
	return alone ? run_alone() : run_stream();
}
