/*
 * ff_runopts.c - the run options every program shares (--jobs,
 * --duration, ..., --interval): their ranges, their parsing, the window's
 * intervals (their rows, and the arguments they are written back as, are
 * ff_runspec.c's).
 */
#include "ff.h"

#include <math.h>
#include <string.h>

long
ff_parse_run_opt(const char *usage, const char *opt, const char *s)
{
	long min, max;

	/* The run's options have their ranges in their rows (ff_runspec.c); perf's is here. */
	if (!strcmp(opt, "--freq"))
		return ff_parse_long(usage, opt, s, 1, 1000000);
	if (!ff_runspec_range(opt, &min, &max))
		ff_die("no range known for option '%s'", opt);
	return ff_parse_long(usage, opt, s, min, max);
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
