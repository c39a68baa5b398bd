/*
 * ff_tcpstat.c - the counters of TCP (/proc/net/netstat) that tell of
 * stalls in a run's window: timeouts, window probes, memory pressure,
 * receive-queue drops.
 */
#include "ff.h"

#include <stdio.h>
#include <string.h>

int
ff_tcp_stalls_read(struct ff_tcp_stalls *s)
{
	static const char *const names[] = { "TCPTimeouts", "TCPWinProbe", "TCPMemoryPressures", "TCPRcvQDrop" };
	long long *out[] = { &s->timeouts, &s->window_probes, &s->memory_pressures, &s->rcvq_drops };
	char nl[8192] = "", vl[8192] = "", *sn, *sv, *n, *v;
	FILE *f = fopen("/proc/net/netstat", "re");
	size_t i, found = 0;

	if (!f)
		return -1;
	while (fgets(nl, sizeof(nl), f) && fgets(vl, sizeof(vl), f))
		if (!strncmp(nl, "TcpExt:", 7) && !strncmp(vl, "TcpExt:", 7))
			break;
	fclose(f);
	if (strncmp(nl, "TcpExt:", 7) || strncmp(vl, "TcpExt:", 7))
		return -1;
	for (i = 0; i < FF_ARRAY_SIZE(names); i++)
		*out[i] = -1;
	/* The names line and the values line, walked together once. */
	for (n = strtok_r(nl, " \n", &sn), v = strtok_r(vl, " \n", &sv); n && v;
	     n = strtok_r(NULL, " \n", &sn), v = strtok_r(NULL, " \n", &sv))
		for (i = 0; i < FF_ARRAY_SIZE(names); i++)
			if (!strcmp(n, names[i]) && *out[i] < 0) {
				*out[i] = strtoll(v, NULL, 10);
				found++;
			}
	return found == FF_ARRAY_SIZE(names) ? 0 : -1;
}
