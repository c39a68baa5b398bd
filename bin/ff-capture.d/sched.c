/*
 * ff-capture: how often each relay left the CPU over the window, from
 * counters every kernel keeps without a PMU or tracing: the voluntary
 * (it blocked: a wait, a lock, an empty socket) and involuntary (it was
 * preempted) context switches of each thread, /proc/PID/task/TID/status,
 * and the syscalls of the read(2) and write(2) families of each process,
 * /proc/PID/io (syscr, syscw: read, readv, write, writev and the like; not
 * recv or send).
 * Summed over the relay's processes of the window's start and their
 * threads; a thread that ended within the window takes its switches with
 * it (the kernel keeps no total of a process's threads), so the switches
 * are of the threads alive at the window's end. Added to each relay of
 * the `resources` event; ff-bench and the summary make them per MB and
 * per 1,000 operations from the result.
 */
#include "ff-capture.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sched_counts {
	long long vol, invol, syscr, syscw;
	int have_io;
};

/* A thread's switches at the window's start. */
struct task0 {
	pid_t tid;
	long long vol, invol;
};

static struct sched_counts c0[MAX_TARGETS];
static struct task0 *tasks0[MAX_TARGETS];
static int ntasks0[MAX_TARGETS], have0[MAX_TARGETS];

/* One thread's switches; -1 when they cannot be read (gone). */
static int
task_switches(pid_t pid, const char *tid, long long *vol, long long *invol)
{
	char path[320], line[256];
	int got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, tid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %lld", vol) == 1)
			got++;
		else if (sscanf(line, "nonvoluntary_ctxt_switches: %lld", invol) == 1)
			got++;
	}
	fclose(f);
	return got == 2 ? 0 : -1;
}

/* A process's read and write syscalls (all its threads', the ended ones too). */
static int
proc_io(pid_t pid, struct sched_counts *c)
{
	char path[64], line[128];
	long long v;
	int got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "syscr: %lld", &v) == 1) {
			c->syscr += v;
			got++;
		} else if (sscanf(line, "syscw: %lld", &v) == 1) {
			c->syscw += v;
			got++;
		}
	}
	fclose(f);
	return got == 2 ? 0 : -1;
}

/*
 * The relay's counts now; -1 when its threads cannot be read. At the
 * start (i0 = i >= 0), each thread's switches are kept; at the end
 * (i0 = -1 - i), each thread's switches since the start are added (since
 * it began, for a thread begun in the window).
 */
static int
read_counts(const struct target *t, struct sched_counts *c, int i0)
{
	int i, j, ntasks = 0;

	memset(c, 0, sizeof(*c));
	c->have_io = 1;
	for (i = 0; i < t->npids; i++) {
		char dir[64];
		struct dirent *d;
		DIR *dp;

		snprintf(dir, sizeof(dir), "/proc/%d/task", (int)t->pids[i]);
		if (!(dp = opendir(dir)))
			continue;	/* gone: relays_lost_check says so */
		while ((d = readdir(dp))) {
			long long vol, invol;
			pid_t tid = (pid_t)atol(d->d_name);

			if (d->d_name[0] == '.' || task_switches(t->pids[i], d->d_name, &vol, &invol) < 0)
				continue;
			ntasks++;
			if (i0 >= 0) {
				tasks0[i0] = ff_realloc(tasks0[i0], (ntasks0[i0] + 1) * sizeof(**tasks0));
				tasks0[i0][ntasks0[i0]++] = (struct task0){ tid, vol, invol };
				continue;
			}
			for (j = 0; j < ntasks0[-1 - i0]; j++)
				if (tasks0[-1 - i0][j].tid == tid) {
					vol -= tasks0[-1 - i0][j].vol;
					invol -= tasks0[-1 - i0][j].invol;
					break;
				}
			c->vol += vol;
			c->invol += invol;
		}
		closedir(dp);
		if (proc_io(t->pids[i], c) < 0)
			c->have_io = 0;
	}
	return ntasks ? 0 : -1;
}

void
sched_begin(void)
{
	int i;

	for (i = 0; i < opt.n; i++)
		have0[i] = read_counts(&opt.t[i], &c0[i], i) == 0;
}

/* Relay i's switches and syscalls over the window, into its `resources` object o. */
void
sched_end(int i, json_t *o)
{
	struct sched_counts c1;
	int ok = have0[i] && read_counts(&opt.t[i], &c1, -1 - i) == 0;

	/* The switches are since the start already (per thread). */
	json_object_set_new(o, "ctx_switches_voluntary", ok ? json_integer(c1.vol) : json_null());
	json_object_set_new(o, "ctx_switches_involuntary", ok ? json_integer(c1.invol) : json_null());
	json_object_set_new(o, "ctx_switches", ok ? json_integer(c1.vol + c1.invol) : json_null());
	ok = ok && c0[i].have_io && c1.have_io;
#define DELTA(f) (ok ? json_integer(c1.f - c0[i].f) : json_null())
	json_object_set_new(o, "syscalls_read", DELTA(syscr));
	json_object_set_new(o, "syscalls_write", DELTA(syscw));
#undef DELTA
}
