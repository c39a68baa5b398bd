/*
 * flimflam - the limits that bind a run of many connections, checked before
 * the load: open files, local ports, and a relay's own connection limit
 * (nginx's worker_connections). Each names itself when it binds, in one line.
 */
#include "ff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* /proc/sys/fs/nr_open: how far a privileged process may raise RLIMIT_NOFILE. */
static rlim_t
nr_open(void)
{
	char *text = ff_read_file("/proc/sys/fs/nr_open", NULL);
	unsigned long long v = text ? strtoull(text, NULL, 10) : 0;

	free(text);
	return v ? (rlim_t)v : 1048576;
}

long
ff_fds_per_job(const char *relay, long hops)
{
	const struct ff_relay *r = ff_relay_find(relay);

	if (!r || !r->processes)
		return 1;
	return r->caps & FF_RELAY_ROUTED && hops != 1 ? 1 : 2;
}

int
ff_nofile_for_jobs(long jobs, long per_job, struct ff_buf *why)
{
	struct rlimit rl;
	long need = per_job * jobs + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max == RLIM_INFINITY ||
	    rl.rlim_max >= (rlim_t)need)
		return 0;
	/* Privileged (CAP_SYS_RESOURCE): the hard limit rises to what the run needs. */
	if ((rlim_t)need <= nr_open()) {
		struct rlimit up = { rl.rlim_cur, (rlim_t)need };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return 0;
	}
	ff_why(why, "--jobs %ld needs %ld open files per process (%ld a job), and this process may open at most %llu (ulimit -Hn): use fewer jobs, or raise the limit",
	       jobs, need, per_job, (unsigned long long)rl.rlim_max);
	return -1;
}

int
ff_ports_for_jobs(long jobs, struct ff_buf *why)
{
	char *text = ff_read_file("/proc/sys/net/ipv4/ip_local_port_range", NULL);
	long lo, hi;

	if (!text || sscanf(text, "%ld %ld", &lo, &hi) != 2 || hi < lo) {
		free(text);
		return 0;	/* not Linux's, or unreadable: nothing to say */
	}
	free(text);
	if (jobs <= hi - lo + 1)
		return 0;
	ff_why(why, "--jobs %ld needs %ld local ports to one address, and net.ipv4.ip_local_port_range (%ld to %ld) has %ld: use fewer jobs, or widen the range",
	       jobs, jobs, lo, hi, hi - lo + 1);
	return -1;
}

int
ff_nginx_jobs_fit(const char *protocol, long jobs, struct ff_buf *why)
{
	char rel[64], *path, *text, *p;
	long wc;

	snprintf(rel, sizeof(rel), "relay-conf/nginx-%s.conf", protocol);
	path = ff_datapath(rel);
	text = path ? ff_read_file(path, NULL) : NULL;
	free(path);
	if (!text)
		return 0;	/* ff-topology says so when it starts the relay */
	p = strstr(text, "worker_connections");
	wc = p ? strtol(p + strlen("worker_connections"), NULL, 10) : 0;
	free(text);
	/* Each proxied connection takes two (its client's and its upstream's), the listener one. */
	if (wc <= 0 || 2 * jobs + 1 <= wc)
		return 0;
	ff_why(why, "--jobs %ld needs %ld connections of an nginx worker, and its worker_connections is %ld (%s)",
	       jobs, 2 * jobs + 1, wc, rel);
	return -1;
}

int
ff_jobs_fit(const char *relay, const char *protocol, long hops, long jobs, struct ff_buf *why)
{
	const struct ff_relay *r = ff_relay_find(relay);

	if (ff_nofile_for_jobs(jobs, ff_fds_per_job(relay, hops), why) < 0 || ff_ports_for_jobs(jobs, why) < 0)
		return -1;
	return r && r->jobs_fit ? r->jobs_fit(protocol, jobs, why) : 0;
}
