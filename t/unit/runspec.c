/*
 * t/unit/runspec: a run's stage argv (ff_runspec_argv) read back by the
 * same rows (ff_runspec_options, ff_runspec_take) gives the same run, for
 * t/unit.bats: prints "ok: ..." or "not ok: ..." per check, then the count
 * of failures. Built by `make`, never installed.
 */
#include "ff.h"

#include <getopt.h>
#include <string.h>

static int failures;

static void
check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

/* `in` through a stage's argv of `mask` and back. */
static void
round_trip(const struct ff_runspec *in, unsigned mask, struct ff_runspec *out)
{
	struct ff_argv a = FF_ARGV_INIT;
	const struct option *longopts = ff_runspec_options(NULL, mask);
	int c;

	ff_argv_add(&a, "stage");
	ff_runspec_argv(&a, in, mask);
	ff_runspec_init(out);
	optind = 1;
	while ((c = ff_getopt((int)a.n, a.v, ":w:", longopts, "usage: stage\n")) != -1)
		if (!ff_runspec_take(out, "usage: stage\n", c, optarg))
			check(0, "each option is a row's");
	ff_argv_free(&a);
}

static int
same_opts(const struct ff_run_opts *a, const struct ff_run_opts *b)
{
	return a->jobs == b->jobs && a->warmup == b->warmup && a->duration == b->duration &&
	       a->cpu_limit == b->cpu_limit && a->request_size == b->request_size &&
	       a->response_size == b->response_size && a->rate == b->rate && a->interval == b->interval;
}

int
main(int argc, char *argv[])
{
	struct ff_runspec rs, back;
	long min, max;

	(void)argc;
	ff_setprog(argv[0]);
	ff_runspec_init(&rs);
	check(!strcmp(rs.workload, "builtin") && !strcmp(rs.relay, "skrouterd") &&
	      !strcmp(rs.protocol, "tcp") && rs.hops == -1 && rs.run.jobs == 2 &&
	      rs.run.interval == 1, "the rows' defaults");
	round_trip(&rs, FF_RS_WORKLOAD, &back);
	check(same_opts(&rs.run, &back.run) && back.hops == -1, "defaults through a stage's argv");
	rs.workload = "builtin-rr";
	rs.hops = 3;
	rs.run = (struct ff_run_opts){ 7, 0, 9, 0, 100, 2000, 50, 0.25, 0 };
	round_trip(&rs, FF_RS_WORKLOAD, &back);
	check(same_opts(&rs.run, &back.run) && back.hops == 3 && !strcmp(back.workload, "builtin-rr"),
	      "every option through ff-workload's argv");
	round_trip(&rs, FF_RS_RR, &back);
	check(same_opts(&back.run, &(struct ff_run_opts){ 7, 0, 9, 1, 100, 2000, 50, 0.25, 0 }) &&
	      back.hops == -1, "the rr client's rows: all but --cpu-limit and --hops");
	rs.hops = 0;
	round_trip(&rs, FF_RS_WORKLOAD, &back);
	check(back.hops == -1, "relay none's 0 hops are not passed on");
	check(ff_runspec_range("--hops", &min, &max) && min == 1 && max == FF_HOPS_MAX,
	      "--hops' range is its row's");
	check(ff_parse_run_opt("usage: x\n", "--duration", "86400") == 86400, "ff_parse_run_opt by the rows");
	rs.run.workers = 3;
	round_trip(&rs, FF_RS_OPTS, &back);
	check(back.run.workers == 3, "--workers through a run's argv (ff_argv_run_opts's rows)");
	round_trip(&rs, FF_RS_WORKLOAD, &back);
	check(back.run.workers == 0, "--workers is the relays', not ff-workload's");
	check(ff_runspec_range("--workers", &min, &max) && min == 1 && max == 1024,
	      "--workers' range is its row's");
	/* The busiest worker's share of the jobs, which the limits count (ff_limits.c). */
	check(ff_jobs_per_process("nginx", 10000, 2) == 5250, "10,000 over 2 nginx workers: 5000 and 5 sd of 50");
	check(ff_jobs_per_process("nginx", 10000, 4) == 2717, "over 4: 2500 and 5 sd of 43.3");
	check(ff_jobs_per_process("nginx", 10000, 1) == 10000, "one worker holds them all");
	check(ff_jobs_per_process("nginx", 3, 2) == 3, "a few jobs: never more than all of them");
	check(ff_jobs_per_process("haproxy", 10000, 2) == 10000, "threads of one process share its open files");
	check(ff_relay_workers("nginx", 0, 2) == 2 && ff_relay_workers("nginx", 3, 2) == 3 &&
	      ff_relay_workers("skrouterd", 0, 0) == 4, "the workers: --workers, else --cpu-limit's CPUs, else the row's");
	printf("%d failures\n", failures);
	return failures != 0;
}
