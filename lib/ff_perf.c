/*
 * ff_perf.c - what perf can open here: software, kernel, hardware and
 * memory-sampling events, tried on a child process.
 */
#include "ff.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pipeline.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int
ff_perf_paranoid(void)
{
	char *s = ff_read_file("/proc/sys/kernel/perf_event_paranoid", NULL);
	int v = INT_MIN;

	if (s)
		v = atoi(s);
	free(s);
	return v;
}

static int
perf_open(struct perf_event_attr *a, pid_t pid)
{
	return syscall(SYS_perf_event_open, a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int
sysfs_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* One more reason in `why` (a struct ff_buf *), after "; " when it holds some. */
#define append(why, ...) do {				\
		if ((why)->len)				\
			ff_buf_addstr((why), "; ");	\
		ff_buf_printf((why), __VA_ARGS__);	\
	} while (0)

/*
 * FLIMFLAM_TEST_PERF=events,kernel,hardware,memory,bpf (any of them, or none):
 * what the probe reports instead of opening events, so that the suite sees
 * both sides of a PMU on a machine that has only one. -1 when unset.
 */
static int
perf_test_bits(struct ff_buf *why)
{
	static const struct { const char *name; int bit; } names[] = {
		{ "events", FF_PERF_EVENTS }, { "kernel", FF_PERF_KERNEL },
		{ "hardware", FF_PERF_HARDWARE }, { "memory", FF_PERF_MEMORY },
		{ "bpf", FF_PERF_LOCK_BPF },
	};
	const char *v = getenv("FLIMFLAM_TEST_PERF"), *p;
	int bits = 0;
	size_t i;

	if (!v)
		return -1;
	for (p = v; *p; p += strcspn(p, ","), p += *p == ',')
		for (i = 0; i < FF_ARRAY_SIZE(names); i++)
			if (strcspn(p, ",") == strlen(names[i].name) &&
			    !strncmp(p, names[i].name, strlen(names[i].name)))
				bits |= names[i].bit;
	append(why, "FLIMFLAM_TEST_PERF='%s'", v);
	return bits;
}

/* What perf may count on the process `child`: FF_PERF_EVENTS, _KERNEL and _HARDWARE; why not in `why`. */
static int
probe_events(pid_t child, int paranoid, struct ff_buf *why)
{
	struct perf_event_attr a;
	int fd, bits = 0, err;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.disabled = 1;
	a.exclude_hv = 1;
	if ((fd = perf_open(&a, child)) >= 0) {
		bits |= FF_PERF_EVENTS | FF_PERF_KERNEL;
		close(fd);
	} else {
		a.exclude_kernel = 1;
		if ((fd = perf_open(&a, child)) >= 0) {
			bits |= FF_PERF_EVENTS;
			close(fd);
		} else {
			err = errno;
			append(why, "task-clock on a child process: %s (perf_event_paranoid=%d)",
			       strerror(err), paranoid);
		}
	}

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_hv = 1;
	a.exclude_kernel = 1;
	if ((fd = perf_open(&a, child)) >= 0) {
		bits |= FF_PERF_HARDWARE;
		close(fd);
	} else {
		err = errno;
		append(why, "cycles: %s%s", strerror(err),
		       err == ENOENT || err == EOPNOTSUPP || err == ENODEV ?
		       " (no hardware PMU: a virtual machine without PMU passthrough?)" : "");
	}
	return bits;
}

int
ff_perf_probe(struct ff_buf *why)
{
	int pipefd[2], bits = 0, paranoid = ff_perf_paranoid();
	pid_t child;
	char c;

	why->len = 0;
	ff_buf_addstr(why, "");
	if ((bits = perf_test_bits(why)) >= 0)
		return bits;
	bits = 0;
	/* A child that waits for the pipe to close, as a relay would run. */
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		append(why, "cannot create a pipe: %s", strerror(errno));
		return 0;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		append(why, "cannot fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return 0;
	}
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pipefd[1]);
		while (read(pipefd[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(pipefd[0]);

	bits = probe_events(child, paranoid, why);
	close(pipefd[1]);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;

	/*
	 * perf mem and perf c2c sample loads and stores: Intel's mem-loads
	 * event (cpu_core on hybrid parts), AMD's IBS, Arm's SPE.
	 */
	if ((bits & FF_PERF_HARDWARE) &&
	    (sysfs_exists("/sys/bus/event_source/devices/cpu/events/mem-loads") ||
	     sysfs_exists("/sys/bus/event_source/devices/cpu_core/events/mem-loads") ||
	     sysfs_exists("/sys/bus/event_source/devices/ibs_op") ||
	     sysfs_exists("/sys/bus/event_source/devices/arm_spe_0")))
		bits |= FF_PERF_MEMORY;
	else
		append(why, "memory sampling: %s", bits & FF_PERF_HARDWARE ?
		       "no mem-loads event, IBS or SPE in /sys/bus/event_source/devices" :
		       "needs hardware counters");
	return bits;
}

int
ff_perf_lock_bpf(struct ff_buf *why)
{
	char *argv[] = { "perf", "lock", "contention", "-h", NULL };
	struct ff_buf test = FF_BUF_INIT;
	int bits = perf_test_bits(&test), status, ok = 0;
	char *out, *b;

	if (bits >= 0) {
		if (!(ok = !!(bits & FF_PERF_LOCK_BPF)))
			ff_why(why, "%s has no bpf", test.s);
		ff_buf_free(&test);
		return ok;
	}
	ff_buf_free(&test);
	/* -h prints the options (to stderr, exit 129); -b's line says when it is not built in. */
	if (!(out = ff_run_within(argv, &status, 20)))
		ff_why(why, "cannot run 'perf lock contention -h'");
	else if (!(b = strstr(out, "--use-bpf")))
		ff_why(why, "this perf's 'lock contention' has no -b (--use-bpf): perf 5.19 or later has it");
	else if (strstr(b, "not built-in"))
		ff_why(why, "this perf is built without BPF skeletons: 'perf lock contention -b' says "
		       "\"not built-in because no BUILD_BPF_SKEL=1\"");
	else
		ok = 1;
	free(out);
	return ok;
}

/* The tracepoint's id in tracefs ("sched/sched_wakeup"), or -1. */
static long
tracepoint_id(const char *tp)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256], *s;
	long id = -1;
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(dirs) && id < 0; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/id", dirs[i], tp);
		if ((s = ff_read_file(path, NULL)))
			id = strtol(s, NULL, 10);
		free(s);
	}
	return id;
}

int
ff_perf_tracepoint(const char *tp, int cpu, const char *filter)
{
	struct perf_event_attr a;
	long id = tracepoint_id(tp);
	int fd, err;

	if (id < 0) {
		errno = ENOENT;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (unsigned long long)id;
	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0 && filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

pipeline *
ff_perf_script(const char *arg, ...)
{
	pipecmd *cmd = pipecmd_new_args("perf", "script", arg, (void *)0);
	pipeline *p;
	va_list ap;

	va_start(ap, arg);
	pipecmd_argv(cmd, ap);
	va_end(ap);
	pipecmd_setenv(cmd, "LC_ALL", "C");
	pipecmd_discard_err(cmd, 1);
	p = pipeline_new_commands(cmd, (void *)0);
	pipeline_want_out(p, -1);
	pipeline_start(p);
	return p;
}
