/*
 * ff-capture --check: what this machine can capture, before anything starts.
 * Each check that fails says why (its reason) and, when there is one, what
 * would work (its fix): one line `ff-capture: REASON; FIX` and exit 1, or,
 * with --json, one `check` event on stdout. Notes (what will be missing)
 * are lines `ff-capture: note: ...`, or the event's notes.
 */
#include "ff-capture.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

static json_t *notes;		/* --check --json: the notes so far */

/* The `check` event; ok, or why not and what would work (NULL: none). */
noreturn static void
answer(const char *reason, const char *sep, const char *fix)
{
	json_t *ev = ff_event("check");
	char *message = reason ? ff_asprintf("%s%s%s", reason, fix ? sep : "", fix ? fix : "") : NULL;
	int st;

	json_object_set_new(ev, "mode", json_string(modes[opt.mode]));
	json_object_set_new(ev, "ok", json_boolean(!reason));
	json_object_set_new(ev, "reason", ff_json_text(reason));
	json_object_set_new(ev, "fix", ff_json_text(fix));
	json_object_set_new(ev, "message", ff_json_text(message));
	json_object_set_new(ev, "notes", notes ? notes : json_array());
	ff_emit(ev);
	free(message);
	st = ff_finish();
	ff_quit(reason ? 1 : st);
}

/*
 * This machine cannot capture in the mode: the reason (formatted), then,
 * after `sep`, the fix (NULL: none). Exits 1.
 */
__attribute__((format(printf, 3, 4)))
noreturn static void
cannot(const char *sep, const char *fix, const char *fmt, ...)
{
	char reason[2 * PATH_MAX + 1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (opt.json)
		answer(reason, sep, fix);
	ff_die("%s%s%s", reason, fix ? sep : "", fix ? fix : "");
}

/* What the capture will lack; said by --check, and by ff-capture alone. */
static void
note(const char *text)
{
	if (opt.json) {
		if (!notes)
			notes = json_array();
		json_array_append_new(notes, ff_json_text(text));
	} else if (!opt.pipeline_stage) {
		ff_warn("note: %s", text);
	}
}

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
	char *const *env;
	char *path = skstat_program(&env), *out, *last, *nl;
	char *argv[] = { "skstat", "--help", NULL };
	const char *pp;
	char *pps, *saved[FF_ARRAY_SIZE(((struct ff_build *)0)->skstat_env)] = { NULL };
	int status;
	size_t i;

	if (!path && opt.build)
		cannot(": ", "a router build's skstat is PREFIX/bin/skstat, beside its sbin/skrouterd",
		       "skstat is not beside the router build");
	if (!path)
		cannot(": ", "it comes with the router (its bin directory), and needs Proton's "
		       "Python binding on PYTHONPATH", "skstat is not on PATH");
	/* A build's skstat runs with the build's settings, for this check too. */
	for (i = 0; env && env[i]; i++) {
		char *name = strndup(env[i], strcspn(env[i], "="));

		saved[i] = getenv(name) ? ff_asprintf("%s=%s", name, getenv(name)) : name;
		if (saved[i] != name)
			free(name);
		putenv(ff_strdup(env[i]));
	}
	pp = getenv("PYTHONPATH");
	pps = ff_asprintf("%s%s%s", pp ? "'" : "", pp ? pp : "unset", pp ? "'" : "");
	argv[0] = path;
	/* Python and Proton starting on a busy machine: longer than a version probe. */
	out = ff_run_within(argv, &status, 30);
	for (i = 0; env && env[i]; i++)
		putenv(saved[i]);
	if (!out)
		cannot("", NULL, "cannot run '%s'", path);
	if (status != 0 || strstr(out, "No module named")) {
		/* The traceback's last line says what failed. */
		while ((nl = strrchr(out, '\n')) && nl[1] == 0)
			*nl = 0;
		last = strrchr(out, '\n');
		last = last ? last + 1 : out;
		if (strstr(out, "proton"))
			cannot("; ", ff_asprintf("set PYTHONPATH to the directory holding Proton's "
						 "Python binding (PYTHONPATH is %s)", pps),
			       "'%s' cannot import the Python module 'proton' (%s)", path, last);
		cannot("; ", ff_asprintf("check PYTHONPATH (%s)", pps), "'%s --help' fails (%s)",
		       path, last);
	}
	free(pps);
	free(out);
	free(path);
}

/*
 * perf.data and perf.data.old can be written as ff_out says, and no other
 * record writes them now: this one holds a lock on the directory for its
 * run (as a stage of flimflam, --pipeline-stage, flimflam holds it).
 */
static void
check_data(const char *cwd)
{
	struct ff_buf why = FF_BUF_INIT;

	snprintf(data, sizeof(data), "%s/perf.data", cwd);
	if (ff_out_check(&data_out, data, 0, "*.old") < 0)
		cannot("", NULL, "%s", data_out.err);
	if (!opt.pipeline_stage && ff_lock_dir(cwd, "perf.data", &why) < 0)
		cannot("", NULL, "%s", why.s);
}

/* perf can attach to the relays. Returns what ff_perf_probe says perf can do. */
static int
check_attach(struct ff_buf *why)
{
	char *path = ff_which("perf");
	int bits, paranoid = ff_perf_paranoid();

	if (!path)
		cannot("; ", "'flimflam check' says how to install it",
		       "'%s' needs perf, which is not on PATH", modes[opt.mode]);
	free(path);
	bits = ff_perf_probe(why);
	if (!(bits & FF_PERF_EVENTS)) {
		if (paranoid > 1 || paranoid == INT_MIN)
			cannot("; ", "as root, run 'sysctl -w kernel.perf_event_paranoid=-1' "
			       "(or: echo -1 > /proc/sys/kernel/perf_event_paranoid)",
			       "perf cannot attach to the relays (%s)", why->s);
		cannot(": ", "in a container, perf_event_open must be allowed (seccomp profile, "
		       "CAP_PERFMON)", "perf cannot attach to the relays (%s), although "
		       "perf_event_paranoid is %d", why->s, paranoid);
	}
	if (sampling() && !(bits & FF_PERF_KERNEL)) {
		char *text = ff_asprintf("kernel frames will be missing (perf_event_paranoid=%d); as "
					 "root, 'sysctl -w kernel.perf_event_paranoid=-1' includes "
					 "them", paranoid);

		note(text);
		free(text);
	}
	return bits;
}

/*
 * offcpu opens the scheduler's tracepoints, which need tracefs (mounted
 * and readable: root, or its files opened to a group) and the kernel's
 * permission: the kernel says which when perf opens one.
 */
static void
check_tracepoints(void)
{
	const char *tp = opt.mode == LOCK ? "lock:contention_begin" : "sched:sched_switch";
	const char *what = opt.mode == LOCK ? "the kernel's lock contention tracepoints" :
			   "the scheduler's tracepoints";
	char *out, *argv[] = { "perf", "stat", "-e", (char *)tp, "true", NULL };
	char id[128];
	int status;

	if (access("/sys/kernel/tracing/events/sched/sched_switch/id", R_OK) != 0 &&
	    access("/sys/kernel/debug/tracing/events/sched/sched_switch/id", R_OK) != 0)
		cannot("; ", "as root, mount tracefs (mount -t tracefs nodev /sys/kernel/tracing) "
		       "or run flimflam as root", "'%s' reads %s (%s), and tracefs is not mounted "
		       "or not readable here", modes[opt.mode], what, tp);
	snprintf(id, sizeof(id), "/sys/kernel/tracing/events/%s/id", tp);
	*strchr(id + 26, ':') = '/';
	if (opt.mode == LOCK && access(id, F_OK) != 0)
		cannot("; ", "it needs Linux 5.19 or later; 'offcpu' shows the waits of any kernel",
		       "'lock' reads the kernel's lock contention tracepoints, and this kernel "
		       "has none (no %s)", id);
	out = ff_run_within(argv, &status, 20);
	if (!out || status != 0) {
		const char *why = out ? out + strspn(out, " \n") : "";

		cannot("; ", "as root, 'sysctl -w kernel.perf_event_paranoid=-1' allows them",
		       "'%s' reads %s, and perf cannot open %s here (%.*s)", modes[opt.mode],
		       what, tp, *why ? (int)strcspn(why, "\n") : 9,
		       *why ? why : "no answer");
	}
	free(out);
}

static void
check_perf(void)
{
	char cwd[PATH_MAX];
	struct ff_buf why = FF_BUF_INIT, dir_why = FF_BUF_INIT;
	int bits = check_attach(&why);
	long max_rate;

	if ((opt.mode == C2C || opt.mode == MEM) && !(bits & FF_PERF_MEMORY))
		cannot("; ", "it works on bare metal or in a VM with PMU passthrough; here, 'record' "
		       "and 'stat' work", "'%s' samples memory accesses, which needs a hardware PMU "
		       "with load sampling (Intel's mem-loads, AMD's IBS or Arm's SPE), and this "
		       "machine has none (%s)", modes[opt.mode], why.s);
	if (sampling() && !strcmp(opt.call_graph, "lbr") &&
	    (!(bits & FF_PERF_HARDWARE) ||
	     access("/sys/bus/event_source/devices/cpu/caps/branches", F_OK) != 0))
		cannot("; ", "use fp (the default, with a router built with frame pointers) or dwarf",
		       "--call-graph lbr needs the CPU's last branch records (Intel, or AMD Zen 4 "
		       "and later, on bare metal or with PMU passthrough), which this machine lacks");
	max_rate = read_long_file("/proc/sys/kernel/perf_event_max_sample_rate", 0);
	if (sampling() && max_rate > 0 && opt.freq > max_rate)
		cannot("; ", ff_asprintf("use a lower rate, or raise the limit as root: sysctl -w "
					 "kernel.perf_event_max_sample_rate=%ld", opt.freq),
		       "--freq %ld is above kernel.perf_event_max_sample_rate (%ld)",
		       opt.freq, max_rate);
	/* perf.data of a few seconds takes megabytes; far less is a full disk. */
	if (sampling() && ff_dir_writable(getcwd(cwd, sizeof(cwd)) ? cwd : ".", 16 << 20,
					  &dir_why) < 0)
		cannot("", NULL, "'%s' writes perf.data in the current directory: %s",
		       modes[opt.mode], dir_why.s);
	if (sampling())
		check_data(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
	if (opt.mode == OFFCPU || opt.mode == LOCK)
		check_tracepoints();
	/* Without a PMU, perf's default event (cycles) does not exist. */
	if (!(bits & FF_PERF_HARDWARE))
		sample_event = "cpu-clock";
	ff_buf_free(&why);
	ff_buf_free(&dir_why);
}

void
check_mode(void)
{
	if (opt.mode == SKSTAT)
		check_skstat();
	else if (opt.mode != NONE)
		check_perf();
	if (opt.json)
		answer(NULL, NULL, NULL);
}
