/*
 * ff-capture: how often each relay's threads were woken over the window,
 * and how often they woke another task, counted by the kernel's
 * scheduler tracepoints without a PMU and without perf's program.
 *
 * sched:sched_wakeup fires when a task is woken, on whatever CPU does
 * it, often not in the woken task's context (an interrupt, the waker, a
 * remote CPU's queue): a counter attached to a thread counts the events
 * that fire while the thread runs, not its wakeups (tried on Linux 6.18:
 * a thread that slept 1,000 times counted 0 with a filter on its pid).
 * So the wakeups of a relay are counted on every CPU (a counter per CPU,
 * pid -1) with a filter on the woken task's pid: the relay's threads at
 * the window's start, "pid == T1 || pid == T2 ...". The wakeups it makes
 * are sched:sched_waking, which fires in the waker's context, with a
 * filter on common_pid. The kernel counts and filters; nothing is
 * written or read until the window's end. A CPU-wide counter needs
 * perf_event_paranoid <= 0 (or CAP_PERFMON) and the tracepoints' ids in
 * tracefs; where they are missing, the counts are null and the source
 * says why.
 *
 * Where the kernel keeps schedstats (CONFIG_SCHEDSTATS and
 * kernel.sched_schedstats=1), each thread's nr_wakeups in
 * /proc/PID/task/TID/sched gives the wakeups instead (sched.c reads it);
 * the tracepoint counts the wakeups made.
 *
 * FLIMFLAM_WAKEUPS=off opens nothing (bench/wakeups.sh measures the cost
 * against it).
 */
#include "ff-capture.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Pids a filter names: "common_pid == 4194304 || " is 25 bytes; the kernel takes a page. */
#define PIDS_PER_FILTER 64

enum { WOKEN, MADE, NKINDS };

static const char *const tracepoints[NKINDS] = { "sched/sched_wakeup", "sched/sched_waking" };
static const char *const fields[NKINDS] = { "pid", "common_pid" };

/* The counters of each relay, of each kind: one per CPU and filter. */
static int *fds[MAX_TARGETS][NKINDS];
static int nfds[MAX_TARGETS][NKINDS];
/* Why a relay's wakeups cannot be counted (NULL: they are). */
static char *why_not[MAX_TARGETS];

/* "FIELD == P1 || FIELD == P2 ...", of pids[0..n). */
static char *
filter_of(const char *field, const pid_t *pids, int n)
{
	struct ff_buf b = FF_BUF_INIT;
	int i;

	ff_buf_addstr(&b, "");
	for (i = 0; i < n; i++)
		ff_buf_printf(&b, "%s%s == %d", i ? " || " : "", field, (int)pids[i]);
	return b.s;
}

static void
close_all(int i)
{
	int k, j;

	for (k = 0; k < NKINDS; k++) {
		for (j = 0; j < nfds[i][k]; j++)
			close(fds[i][k][j]);
		free(fds[i][k]);
		fds[i][k] = NULL;
		nfds[i][k] = 0;
	}
}

/* Relay i's counters of one kind, on every CPU, for its threads tids[0..n); 0, or -1 and why_not. */
static int
open_kind(int i, int k, const pid_t *tids, int n)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	int cpu, at, fd;

	for (at = 0; at < n; at += PIDS_PER_FILTER) {
		char *filter = filter_of(fields[k], tids + at, n - at < PIDS_PER_FILTER ? n - at : PIDS_PER_FILTER);

		for (cpu = 0; cpu < ncpus; cpu++) {
			if ((fd = ff_perf_tracepoint(tracepoints[k], cpu, filter)) < 0) {
				if (errno == ENODEV)
					continue;	/* offline */
				why_not[i] = errno == ENOENT ?
					ff_asprintf("no %s/id in tracefs (not mounted, or not readable)",
						    tracepoints[k]) :
					ff_asprintf("sched:%s: %s (perf_event_paranoid=%d; counted "
						    "on every CPU, which needs 0 or less, or root)",
						    tracepoints[k] + 6, strerror(errno), ff_perf_paranoid());
				free(filter);
				return -1;
			}
			fds[i][k] = ff_realloc(fds[i][k], (nfds[i][k] + 1) * sizeof(int));
			fds[i][k][nfds[i][k]++] = fd;
		}
		free(filter);
	}
	return 0;
}

void
wakeups_open(int i, const pid_t *tids, int n)
{
	const char *env = getenv("FLIMFLAM_WAKEUPS");
	int k, j;

	if (env && !strcmp(env, "off")) {
		why_not[i] = ff_strdup("off (FLIMFLAM_WAKEUPS=off)");
		return;
	}
	if (n <= 0) {
		why_not[i] = ff_strdup("no thread of the relay could be read at the window's start");
		return;
	}
	for (k = 0; k < NKINDS; k++) {
		if (open_kind(i, k, tids, n) < 0) {
			close_all(i);
			return;
		}
	}
	for (k = 0; k < NKINDS; k++)
		for (j = 0; j < nfds[i][k]; j++)
			ioctl(fds[i][k][j], PERF_EVENT_IOC_ENABLE, 0);
}

/* The sum of counters fd[0..n); -1 when one cannot be read. */
static long long
sum_counters(const int *fd, int n)
{
	long long sum = 0, v;
	int j;

	for (j = 0; j < n; j++) {
		if (read(fd[j], &v, sizeof(v)) != sizeof(v))
			return -1;
		sum += v;
	}
	return sum;
}

const char *
wakeups_read(int i, long long *woken, long long *made)
{
	*woken = *made = -1;
	if (!why_not[i]) {
		*woken = sum_counters(fds[i][WOKEN], nfds[i][WOKEN]);
		*made = sum_counters(fds[i][MADE], nfds[i][MADE]);
	}
	close_all(i);
	return why_not[i];
}
