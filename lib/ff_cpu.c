/*
 * ff_cpu.c - CPU sets: what this process may use, slots of n CPUs each
 * and what is left after them, and their names ("0-1,3").
 */
#include "ff_base.h"

#include <errno.h>
#include <string.h>

int
ff_cpus_available(cpu_set_t *set)
{
	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof(*set), set) < 0)
		ff_die("cannot read this process's CPU affinity: %s",
		       strerror(errno));
	return CPU_COUNT(set);
}

int
ff_cpus_slot(const cpu_set_t *avail, int n, int index, cpu_set_t *out)
{
	int cpus[CPU_SETSIZE], ncpus = 0, i, first;

	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, avail))
			cpus[ncpus++] = i;
	CPU_ZERO(out);
	if (!ncpus || n <= 0)
		return 0;
	first = index * n;
	for (i = 0; i < n; i++)
		CPU_SET(cpus[(first + i) % ncpus], out);
	return first + n <= ncpus;
}

const char *
ff_cpus_str(const cpu_set_t *set)
{
	static char buf[1024];
	size_t n = 0;
	int i, j;

	buf[0] = 0;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, set))
			continue;
		for (j = i; j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, set); j++)
			;
		if (n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%d", n ? "," : "", i);
		if (j > i && n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n, "-%d", j);
		i = j;
	}
	return buf;
}

int
ff_cpus_workload(const cpu_set_t *avail, int limit, int nrelays, cpu_set_t *out)
{
	int cpus[CPU_SETSIZE], ncpus = 0, i, used = limit * nrelays;

	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, avail))
			cpus[ncpus++] = i;
	CPU_ZERO(out);
	if (limit <= 0 || used >= ncpus) {
		*out = *avail;
		return 0;
	}
	for (i = used; i < ncpus; i++)
		CPU_SET(cpus[i], out);
	return 1;
}
