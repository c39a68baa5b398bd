/*
 * ff-capture lock: the relays' contended kernel locks over the window.
 * perf lock record (the kernel's lock:contention_begin and
 * contention_end tracepoints, Linux 5.19 and later) attached to the
 * relays writes perf.data; perf lock contention reads it back: the
 * callers that waited most, and each thread's waits, each thread given
 * its relay. A `lock` event carries both. Locks of user space (a
 * pthread mutex) are not kernel locks: their waits are futex waits,
 * which `flimflam offcpu` shows.
 */
#include "ff-capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "12.34 ms" -> microseconds; -1 when not a time. */
static double
wait_us(const char *num, const char *unit)
{
	double v = strtod(num, NULL);

	if (!strcmp(unit, "ns"))
		return v / 1000;
	if (!strcmp(unit, "us"))
		return v;
	if (!strcmp(unit, "ms"))
		return v * 1000;
	if (!strcmp(unit, "s"))
		return v * 1e6;
	return -1;
}

/* The relay a thread belongs to (its role), or NULL. */
static const char *
relay_of_tid(long tid)
{
	char path[64];
	int i, j;

	for (i = 0; i < opt.n; i++)
		for (j = 0; j < opt.t[i].npids; j++) {
			snprintf(path, sizeof(path), "/proc/%d/task/%ld", (int)opt.t[i].pids[j], tid);
			if (opt.t[i].pids[j] == tid || access(path, F_OK) == 0)
				return opt.t[i].role;
		}
	return NULL;
}

/*
 * perf lock contention -t's rows: "contended total unit max unit avg
 * unit pid comm".
 */
static json_t *
thread_rows(const char *text)
{
	json_t *rows = json_array();
	const char *line, *next;

	for (line = text; *line; line = next) {
		char tu[8], mu[8], au[8], comm[64], tot[32], max[32], avg[32];
		long long n;
		long tid;
		const char *role;

		next = line + strcspn(line, "\n");
		next += *next == '\n';
		/* sscanf's spaces would read on into the next line */
		if (line[strspn(line, " \t")] == '\n')
			continue;
		if (sscanf(line, " %lld %31s %7s %31s %7s %31s %7s %ld %63s", &n, tot, tu, max, mu, avg, au,
			   &tid, comm) != 9 || wait_us(tot, tu) < 0)
			continue;
		role = relay_of_tid(tid);
		json_array_append_new(rows, json_pack("{s:s?, s:I, s:s, s:I, s:f, s:f, s:f}",
			"role", role, "tid", (json_int_t)tid, "comm", comm, "contended", (json_int_t)n,
			"wait_total_us", wait_us(tot, tu), "wait_max_us", wait_us(max, mu),
			"wait_avg_us", wait_us(avg, au)));
	}
	return rows;
}

/* perf lock contention of the recording: the `lock` event. */
void
collect_locks(void)
{
	char *callers_argv[] = { "perf", "lock", "contention", "-i", data, "-E", "15", NULL };
	char *threads_argv[] = { "perf", "lock", "contention", "-i", data, "-t", "-E", "50", NULL };
	char *callers, *threads;
	int s1, s2;
	json_t *ev;

	callers = ff_run_within(callers_argv, &s1, 120);
	threads = ff_run_within(threads_argv, &s2, 120);
	if (!callers || !threads || s1 != 0 || s2 != 0)
		ff_die_event("perf lock contention could not read '%s': %.200s", data,
			     callers && s1 ? callers : threads ? threads : "it did not start");
	ev = ff_event("lock");
	json_object_set_new(ev, "file", ff_json_path(data));
	json_object_set_new(ev, "callers", ff_json_text(callers));
	json_object_set_new(ev, "threads", thread_rows(threads));
	ff_emit(ev);
	free(callers);
	free(threads);
}
