/*
 * ff-capture --check: what this machine can capture, before anything starts.
 */
#include "ff-capture.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

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

void
check_mode(void)
{
	if (opt.mode == SKSTAT)
		check_skstat();
	else if (opt.mode != NONE)
		check_perf();
}

