/*
 * ff-bench's limits: once every option is known, what the options and the
 * machine allow (CPUs, each workload's own limits, the interval, open
 * files and local ports for the largest point of a sweep).
 */
#include "ff-bench.h"

#include <sched.h>

/* The options' limits, the machine's among them, once all are known (usage errors, or failures). */
void
bench_limits(const char *usage)
{
	cpu_set_t avail;
	struct ff_buf limit = FF_BUF_INIT;
	int ncpus, w, h;
	long fewest = 0, relay_hops = 0;
	const char *relay = NULL;

	auto_check();
	slo_check(usage);
	ncpus = ff_cpus_available(&avail);
	if (opt.run.cpu_limit > ncpus)
		ff_usage_error(usage, "--cpu-limit: %ld is more than the %d CPU%s this process may use",
			       opt.run.cpu_limit, ncpus, ncpus == 1 ? "" : "s");
	for (w = 0; w < opt.nw; w++)
		if (ff_workload_limits(opt.workloads[w], &opt.run, &limit) < 0)
			ff_usage_error(usage, "%s", limit.s);
	ff_check_interval(usage, opt.run.interval, opt.run.duration);
	/*
	 * The machine's limits bind every case: the largest point's (jobs and
	 * workers), before anything runs, for the selected relay that needs
	 * the fewest open files (the others' cases are skipped, named).
	 */
	for (w = 0; w < opt.nr; w++)
		for (h = 0; h < (opt.nh ? opt.nh : 1); h++) {
			long hops = opt.nh ? opt.hops[h] : ff_relay_hops(opt.relays[w]);
			long k = ff_fds_needed(opt.relays[w], hops, &opt.run);

			if (!fewest || k < fewest) {
				fewest = k;
				relay = opt.relays[w];
				relay_hops = hops;
			}
		}
	if (ff_nofile_for_jobs(relay, relay_hops, &opt.run, &limit) < 0 ||
	    ff_ports_for_jobs(opt.run.jobs, &limit) < 0)
		ff_die("%s", limit.s);
	ff_buf_free(&limit);
}
