/*
 * flimflam - the limits that bind a run of many connections, checked before
 * the load: open files, local ports, and a relay's own connection limit
 * (nginx's worker_connections). Each names itself when it binds, in one line.
 */
#include "ff.h"

#include <stdio.h>
#include <math.h>
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

long
ff_relay_workers(const char *relay, long workers, long cpu_limit)
{
	const struct ff_relay *r = ff_relay_find(relay);

	return workers ? workers : cpu_limit ? cpu_limit : r ? r->threads : 1;
}

/* The margin over the even share, in standard deviations of the split (ff_jobs_per_process). */
#define SPLIT_SIGMAS 5

long
ff_jobs_per_process(const char *relay, long jobs, long workers)
{
	double p, most;

	if (workers < 2 || !ff_relay_has(relay, FF_RELAY_WORKER_PROCESSES))
		return jobs;
	p = 1.0 / (double)workers;
	most = ceil((double)jobs * p + SPLIT_SIGMAS * sqrt((double)jobs * p * (1 - p)));
	return most < (double)jobs ? (long)most : jobs;
}

long
ff_fds_needed(const char *relay, long hops, const struct ff_run_opts *o)
{
	long share = ff_jobs_per_process(relay, o->jobs, ff_relay_workers(relay, o->workers, o->cpu_limit));
	long busiest = ff_fds_per_job(relay, hops) * share;

	/* The client's and the server's processes hold one a job each. */
	return (busiest > o->jobs ? busiest : o->jobs) + 64;
}

int
ff_nofile_for_jobs(const char *relay, long hops, const struct ff_run_opts *o, struct ff_buf *why)
{
	struct rlimit rl;
	long need = ff_fds_needed(relay, hops, o), per_job = ff_fds_per_job(relay, hops);
	long workers = ff_relay_workers(relay, o->workers, o->cpu_limit);
	long share = ff_jobs_per_process(relay, o->jobs, workers);

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max == RLIM_INFINITY ||
	    rl.rlim_max >= (rlim_t)need)
		return 0;
	/* Privileged (CAP_SYS_RESOURCE): the hard limit rises to what the run needs. */
	if ((rlim_t)need <= nr_open()) {
		struct rlimit up = { rl.rlim_cur, (rlim_t)need };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return 0;
	}
	if (share < o->jobs)
		ff_why(why, "--jobs %ld needs %ld open files per process (%ld a job, and the busiest of %ld %s worker processes may hold %ld jobs: its even share and %d standard deviations of the kernel's split), and this process may open at most %llu (ulimit -Hn): use fewer jobs, or raise the limit",
		       o->jobs, need, per_job, workers, relay, share, SPLIT_SIGMAS,
		       (unsigned long long)rl.rlim_max);
	else
		ff_why(why, "--jobs %ld needs %ld open files per process (%ld a job), and this process may open at most %llu (ulimit -Hn): use fewer jobs, or raise the limit",
		       o->jobs, need, per_job, (unsigned long long)rl.rlim_max);
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
ff_nginx_jobs_fit(const char *protocol, long jobs, long share, long workers, struct ff_buf *why)
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
	if (wc <= 0 || 2 * share + 1 <= wc)
		return 0;
	if (share < jobs)
		ff_why(why, "--jobs %ld needs %ld connections of an nginx worker (the busiest of %ld may hold %ld jobs), and its worker_connections is %ld (%s)",
		       jobs, 2 * share + 1, workers, share, wc, rel);
	else
		ff_why(why, "--jobs %ld needs %ld connections of an nginx worker, and its worker_connections is %ld (%s)",
		       jobs, 2 * jobs + 1, wc, rel);
	return -1;
}

/* Every limit at these options: 0, or -1 with the one that binds in `why`. */
static int
fit(const char *relay, const char *protocol, long hops, const struct ff_run_opts *o, struct ff_buf *why)
{
	const struct ff_relay *r = ff_relay_find(relay);
	long workers = ff_relay_workers(relay, o->workers, o->cpu_limit);

	if (ff_nofile_for_jobs(relay, hops, o, why) < 0 || ff_ports_for_jobs(o->jobs, why) < 0)
		return -1;
	return r && r->jobs_fit ?
	       r->jobs_fit(protocol, o->jobs, ff_jobs_per_process(relay, o->jobs, workers), workers, why) : 0;
}

/* The most workers a refusal looks through for a count that would fit. */
#define WORKERS_SUGGESTED_MAX 64

int
ff_jobs_fit(const char *relay, const char *protocol, long hops, const struct ff_run_opts *o,
	    struct ff_buf *why)
{
	struct ff_run_opts more = *o;
	struct ff_buf scratch = FF_BUF_INIT;
	long w;

	if (fit(relay, protocol, hops, o, why) == 0)
		return 0;
	/* Worker processes of their own share the jobs: would more of them fit? */
	if (!ff_relay_has(relay, FF_RELAY_WORKER_PROCESSES))
		return -1;
	for (w = ff_relay_workers(relay, o->workers, o->cpu_limit) + 1; w <= WORKERS_SUGGESTED_MAX; w++) {
		more.workers = w;
		if (fit(relay, protocol, hops, &more, &scratch) == 0) {
			ff_buf_printf(why, "; with --workers %ld, %s's worker processes share the jobs, and they fit",
				      w, relay);
			break;
		}
	}
	ff_buf_free(&scratch);
	return -1;
}
