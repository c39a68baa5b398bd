/*
 * ff_num.c - option values: whole numbers, decimals and names; and
 * quantities written for people.
 */
#include "ff.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

long
ff_parse_long(const char *usage, const char *opt, const char *s,
	      long min, long max)
{
	char *end;
	long v;

	double d;

	if (!s || !*s)
		ff_usage_error(usage, "%s: expected a whole number", opt);
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end && end != s && s[0] != ' ' && strspn(s, "+-0123456789.eE") == strlen(s)) {
		/* 1e3, 1.5e3: a whole number in decimal notation is one */
		d = strtod(s, &end);
		if (*end)
			ff_usage_error(usage, "%s: '%s' is not a number", opt, s);
		if (isfinite(d) && d != floor(d))
			ff_usage_error(usage, "%s: '%s' is not a whole number", opt, s);
		if (!isfinite(d) || d < min || d > max)
			ff_usage_error(usage, "%s: %s is out of range (%ld to %ld)", opt, s, min, max);
		return (long)d;
	}
	if (*end || end == s || s[0] == ' ')
		ff_usage_error(usage, "%s: '%s' is not a number", opt, s);
	if (errno == ERANGE || v < min || v > max)
		ff_usage_error(usage, "%s: %s is out of range (%ld to %ld)",
			       opt, s, min, max);
	return v;
}

double
ff_parse_double(const char *usage, const char *opt, const char *s,
		double min, double max)
{
	char *end;
	double v;

	if (!s || !*s)
		ff_usage_error(usage, "%s: expected a number", opt);
	errno = 0;
	v = strtod(s, &end);
	if (*end || end == s || !isfinite(v) || s[0] == ' ')
		ff_usage_error(usage, "%s: '%s' is not a number", opt, s);
	if (errno == ERANGE || v < min || v > max)
		ff_usage_error(usage, "%s: %s is out of range (%g to %g)",
			       opt, s, min, max);
	return v;
}

/* "a, b, c" from a NULL-terminated list (static buffer). */
static const char *
ff_join_names(const char *const names[])
{
	static char buf[512];
	size_t n = 0;
	int i;

	buf[0] = 0;
	for (i = 0; names[i]; i++)
		n += snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) - n : 0,
			      "%s%s", i ? ", " : "", names[i]);
	return buf;
}

int
ff_parse_name(const char *usage, const char *what, const char *s,
	      const char *const names[])
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(s, names[i]))
			return i;
	ff_usage_error(usage, "unknown %s '%s' (expected %s)", what, s,
		       ff_join_names(names));
}

/*
 * The long option `arg` ("--name" or "--name=value") names: an exact match,
 * or the one option it abbreviates. NULL when none; *ambiguous set when it
 * abbreviates several.
 */
static const struct option *
long_named(const struct option *longopts, const char *arg, int *ambiguous)
{
	const char *name = arg + 2;
	size_t len = strcspn(name, "=");
	const struct option *o, *found = NULL;

	*ambiguous = 0;
	for (o = longopts; o && o->name; o++) {
		if (strncmp(o->name, name, len))
			continue;
		if (strlen(o->name) == len)
			return o;
		if (found && found->val != o->val)
			*ambiguous = 1;
		found = o;
	}
	return *ambiguous ? NULL : found;
}

/* The option `val` by its long name ("--jobs"), else its letter ("-w"); static. */
static const char *
opt_name(const struct option *longopts, int val)
{
	static char buf[128];
	const struct option *o;

	for (o = longopts; o && o->name; o++)
		if (o->val == val) {
			snprintf(buf, sizeof(buf), "--%s", o->name);
			return buf;
		}
	if (val > ' ' && val < 127)
		snprintf(buf, sizeof(buf), "-%c", val);
	else
		snprintf(buf, sizeof(buf), "-\\x%02x", val & 0xff);
	return buf;
}

void
ff_bad_option(const char *usage, const struct option *longopts, int c, char *const argv[])
{
	const char *arg = argv[optind - 1];
	const struct option *o = NULL;
	int ambiguous = 0, len;

	if (strncmp(arg, "--", 2) == 0 && arg[2]) {
		o = long_named(longopts, arg, &ambiguous);
		len = (int)strcspn(arg, "=");
		if (ambiguous)
			ff_usage_error(usage, "option '%.*s' is ambiguous (it begins more than one option's name)",
				       len, arg);
		if (c == ':' && o)
			ff_usage_error(usage, "option '--%s' needs a value", o->name);
		if (o && o->val == optopt && o->has_arg == no_argument && arg[len] == '=')
			ff_usage_error(usage, "option '--%s' takes no value (given '%s')", o->name,
				       arg + len + 1);
		if (!o && !optopt)
			ff_usage_error(usage, "unknown option '%.*s'", len, arg);
	}
	/* A short option, alone or in a cluster (-hx): getopt names it in optopt. */
	if (c == ':')
		ff_usage_error(usage, "option '%s' needs a value", opt_name(NULL, optopt));
	ff_usage_error(usage, "unknown option '%s'", opt_name(NULL, optopt));
}

static int pipeline_stage;	/* --pipeline-stage was given */

int
ff_pipeline_stage(void)
{
	return pipeline_stage;
}

int
ff_getopt(int argc, char *const argv[], const char *optstring,
	  const struct option *longopts, const char *usage)
{
	static struct {
		int val;
		const char *arg;
	} seen[64];
	static int nseen, last_optind = -1;
	static char *const *last_argv;
	const struct option *o;
	const char *name, *sp;
	char prog[128];
	int c, i, valued;

	if (optind != last_optind || argv != last_argv)
		nseen = 0;	/* the caller (re)started a parse, or began another */
	last_argv = argv;
	opterr = 0;
	c = getopt_long(argc, argv, optstring, longopts, NULL);
	last_optind = optind;
	if (c == ':' || c == '?')
		ff_bad_option(usage, longopts, c, argv);
	if (c == FF_OPT_VERSION) {
		name = ff_prog();
		sp = strchr(name, ' ');
		snprintf(prog, sizeof(prog), "%.*s", sp ? (int)(sp - name) : (int)strlen(name), name);
		printf("%s %s\n", prog, FF_VERSION);
		exit(ff_finish());
	}
	if (c == FF_OPT_PIPELINE_STAGE) {
		pipeline_stage = 1;
		ff_set_fail_hook(ff_error_event);	/* a stage that fails says why in the stream */
		return ff_getopt(argc, argv, optstring, longopts, usage);
	}
	if (c == -1)
		return c;
	valued = c > 0 && c < 256 && (sp = strchr(optstring, c)) && sp[1] == ':';
	for (o = longopts; o && o->name; o++)
		if (o->val == c)
			valued = o->has_arg == required_argument;
	if (!valued || c == FF_OPT_BUILD)
		return c;
	for (i = 0; i < nseen && seen[i].val != c; i++)
		;
	if (i < nseen)
		ff_usage_error(usage, "option '%s' is given twice ('%s', then '%s'): give it once",
			       opt_name(longopts, c), seen[i].arg, optarg);
	if (nseen < (int)FF_ARRAY_SIZE(seen)) {
		seen[nseen].val = c;
		seen[nseen++].arg = optarg;
	}
	return c;
}

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

const char *
ff_fmt_sig3(double v, const char *unit, char *buf, size_t n)
{
	double a = fabs(v);

	if (a == 0)
		snprintf(buf, n, "0%s", unit);
	else if (a >= 99.95)
		snprintf(buf, n, "%.0f%s", v, unit);
	else if (a >= 9.995)
		snprintf(buf, n, "%.1f%s", v, unit);
	else if (a >= 0.9995)
		snprintf(buf, n, "%.2f%s", v, unit);
	else if (a >= 0.001)
		snprintf(buf, n, "%#.3g%s", v, unit);
	else
		snprintf(buf, n, "%.2e%s", v, unit);
	return buf;
}

const char *
ff_fmt_prefixed(double v, int base, const char *sep, const char *unit,
		char *buf, size_t n)
{
	static const char *const si[] = { "", "K", "M", "G", "T", "P" };
	static const char *const bin[] = { "", "Ki", "Mi", "Gi", "Ti" };
	const char *const *pfx = base == 1024 ? bin : si;
	int i = 0, last = base == 1024 ? 4 : 5;
	char tail[64];

	/* 999.5 would print as 1000: it is 1.00 of the next prefix. */
	while (fabs(v) >= base - 0.5 && i < last) {
		v /= base;
		i++;
	}
	snprintf(tail, sizeof(tail), "%s%s%s", sep, pfx[i], unit);
	return ff_fmt_sig3(v, tail, buf, n);
}

int
ff_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}
