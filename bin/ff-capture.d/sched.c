/*
 * ff-capture: how often each relay left the CPU over the window, from
 * counters every kernel keeps without a PMU or tracing: the voluntary
 * (it blocked: a wait, a lock, an empty socket) and involuntary (it was
 * preempted) context switches of each thread, /proc/PID/task/TID/status,
 * and the syscalls of the read(2) and write(2) families of each process,
 * /proc/PID/io (syscr, syscw: read, readv, write, writev and the like; not
 * recv or send).
 * The wakeups of the relay's threads, and those they made: from each
 * thread's schedstat (nr_wakeups in /proc/PID/task/TID/sched) where the
 * kernel keeps it, else the scheduler's tracepoints (wakeups.c).
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
	long long vol, invol, syscr, syscw, wakeups;
	int have_io;
	int have_wakeups;	/* every thread had its schedstat nr_wakeups */
};

/* A thread's switches (and schedstat wakeups, -1: none) at the window's start. */
struct task0 {
	pid_t tid;
	long long vol, invol, wakeups;
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

/*
 * A thread's wakeups from its schedstat: nr_wakeups (se.statistics.nr_wakeups
 * before Linux 5.13) in /proc/PID/task/TID/sched, there only while the
 * kernel keeps schedstats. -1: none.
 */
static long long
task_wakeups(pid_t pid, const char *tid)
{
	char path[320], line[256];
	long long v = -1;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/sched", (int)pid, tid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (v < 0 && fgets(line, sizeof(line), f)) {
		n = strcspn(line, " :");
		if ((n == 10 || (n > 10 && line[n - 11] == '.')) && !strncmp(line + n - 10, "nr_wakeups", 10) &&
		    sscanf(line + n + strspn(line + n, " :"), "%lld", &v) != 1)
			v = -1;
	}
	fclose(f);
	return v;
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
	c->have_io = c->have_wakeups = 1;
	for (i = 0; i < t->npids; i++) {
		char dir[64];
		struct dirent *d;
		DIR *dp;

		snprintf(dir, sizeof(dir), "/proc/%d/task", (int)t->pids[i]);
		if (!(dp = opendir(dir)))
			continue;	/* gone: relays_lost_check says so */
		while ((d = readdir(dp))) {
			long long vol, invol, wakeups;
			pid_t tid = (pid_t)atol(d->d_name);

			if (d->d_name[0] == '.' || task_switches(t->pids[i], d->d_name, &vol, &invol) < 0)
				continue;
			ntasks++;
			wakeups = task_wakeups(t->pids[i], d->d_name);
			if (i0 >= 0) {
				tasks0[i0] = ff_realloc(tasks0[i0], (ntasks0[i0] + 1) * sizeof(**tasks0));
				tasks0[i0][ntasks0[i0]++] = (struct task0){ tid, vol, invol, wakeups };
				continue;
			}
			for (j = 0; j < ntasks0[-1 - i0]; j++)
				if (tasks0[-1 - i0][j].tid == tid) {
					vol -= tasks0[-1 - i0][j].vol;
					invol -= tasks0[-1 - i0][j].invol;
					wakeups = tasks0[-1 - i0][j].wakeups < 0 ? -1 : wakeups - tasks0[-1 - i0][j].wakeups;
					break;
				}
			c->vol += vol;
			c->invol += invol;
			if (wakeups < 0)
				c->have_wakeups = 0;
			c->wakeups += wakeups;
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
	pid_t *tids;
	int i, j;

	for (i = 0; i < opt.n; i++) {
		have0[i] = read_counts(&opt.t[i], &c0[i], i) == 0;
		tids = ff_realloc(NULL, (ntasks0[i] + 1) * sizeof(*tids));
		for (j = 0; j < ntasks0[i]; j++)
			tids[j] = tasks0[i][j].tid;
		wakeups_open(i, tids, ntasks0[i]);
		free(tids);
	}
}

/*
 * Relay i's wakeups over the window into o: the wakeups of its threads
 * from schedstat where every thread has it (c1: since the start), else
 * the tracepoint's count, and the wakeups they made (the tracepoint's);
 * which source, or why there are none.
 */
static void
wakeups_end(int i, const struct sched_counts *c1, int ok, json_t *o)
{
	long long woken, made;
	const char *why = wakeups_read(i, &woken, &made);
	int schedstat = ok && c0[i].have_wakeups && c1->have_wakeups;

	if (schedstat)
		woken = c1->wakeups;
	json_object_set_new(o, "wakeups", woken >= 0 ? json_integer(woken) : json_null());
	json_object_set_new(o, "wakeups_made", made >= 0 ? json_integer(made) : json_null());
	json_object_set_new(o, "wakeups_source", schedstat ? json_string("schedstat") :
			    woken >= 0 ? json_string("sched:sched_wakeup") : json_null());
	json_object_set_new(o, "wakeups_missing", woken >= 0 && made >= 0 ? json_null() :
			    ff_json_text(why ? why : "the counters could not be read"));
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
	wakeups_end(i, &c1, ok, o);
	ok = ok && c0[i].have_io && c1.have_io;
#define DELTA(f) (ok ? json_integer(c1.f - c0[i].f) : json_null())
	json_object_set_new(o, "syscalls_read", DELTA(syscr));
	json_object_set_new(o, "syscalls_write", DELTA(syscw));
#undef DELTA
}
