/*
 * ff_runopts.c - the run options every program shares (--jobs,
 * --duration, ..., --interval): their ranges, their parsing, the window's
 * intervals, and the same options written back as arguments.
 */
#include "ff.h"

#include <math.h>
#include <string.h>

long
ff_parse_run_opt(const char *usage, const char *opt, const char *s)
{
	static const struct {
		const char *opt;
		long min, max;
	} ranges[] = {
		{ "--jobs", 1, 65536 },
		{ "--warmup", 0, 86400 },
		{ "--duration", 1, 86400 },
		{ "--cpu-limit", 0, CPU_SETSIZE },
		{ "--freq", 1, 1000000 },
		{ "--request-size", 1, 16 << 20 },
		{ "--response-size", 1, 16 << 20 },
		{ "--rate", 1, 10000000 },
		{ "--hops", 1, FF_HOPS_MAX },
	};
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(ranges); i++)
		if (!strcmp(opt, ranges[i].opt))
			return ff_parse_long(usage, opt, s, ranges[i].min, ranges[i].max);
	ff_die("no range known for option '%s'", opt);
}

int
ff_take_run_opt(const char *usage, int c, const char *arg, struct ff_run_opts *o)
{
	/* In the order of the FF_OPT_ codes. */
	static const char *const names[] = { "--jobs", "--warmup", "--duration", "--cpu-limit",
					     "--request-size", "--response-size", "--rate" };
	long *fields[] = { &o->jobs, &o->warmup, &o->duration, &o->cpu_limit,
			   &o->request_size, &o->response_size, &o->rate };

	if (c == FF_OPT_INTERVAL) {
		o->interval = ff_parse_interval(usage, arg);
		return 1;
	}
	if (c < FF_OPT_JOBS || c > FF_OPT_RATE)
		return 0;
	*fields[c - FF_OPT_JOBS] = ff_parse_run_opt(usage, names[c - FF_OPT_JOBS], arg);
	return 1;
}

double
ff_parse_interval(const char *usage, const char *s)
{
	double v = ff_parse_double(usage, "--interval", s, -HUGE_VAL, HUGE_VAL);

	/* its upper bound is the duration, checked once every option is known */
	if (v < FF_INTERVAL_MIN || v > 86400)
		ff_usage_error(usage, "--interval: %s is out of range (%g s to the duration)",
			       s, FF_INTERVAL_MIN);
	return v;
}

void
ff_check_interval(const char *usage, double interval, long duration)
{
	if (interval > duration)
		ff_usage_error(usage, "--interval: %g s is longer than the window (--duration %ld s): give %g to %ld",
			       interval, duration, FF_INTERVAL_MIN, duration);
}

int
ff_intervals_count(double interval, double duration)
{
	/* 1e-9: 5 / 0.1 is 50.000000000000007 in binary */
	int n = (int)ceil(duration / interval - 1e-9);

	return n < 1 ? 1 : n;
}

double
ff_interval_edge(double interval, double duration, int k)
{
	double t = k * interval;

	return k >= ff_intervals_count(interval, duration) || t > duration ? duration : t;
}

int
ff_rr_opts_set(const struct ff_run_opts *o)
{
	return o->request_size > 1 || o->response_size > 1 || o->rate > 0;
}

void
ff_argv_run_opts(struct ff_argv *a, const struct ff_run_opts *o, int with_cpu_limit)
{
	ff_argv_add(a, "--jobs");
	ff_argv_addf(a, "%ld", o->jobs);
	ff_argv_add(a, "--warmup");
	ff_argv_addf(a, "%ld", o->warmup);
	ff_argv_add(a, "--duration");
	ff_argv_addf(a, "%ld", o->duration);
	if (with_cpu_limit) {
		ff_argv_add(a, "--cpu-limit");
		ff_argv_addf(a, "%ld", o->cpu_limit);
	}
	if (o->request_size > 1) {
		ff_argv_add(a, "--request-size");
		ff_argv_addf(a, "%ld", o->request_size);
	}
	if (o->response_size > 1) {
		ff_argv_add(a, "--response-size");
		ff_argv_addf(a, "%ld", o->response_size);
	}
	if (o->rate > 0) {
		ff_argv_add(a, "--rate");
		ff_argv_addf(a, "%ld", o->rate);
	}
	ff_argv_add(a, "--interval");
	ff_argv_addf(a, "%.9g", o->interval);
}
