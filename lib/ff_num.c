/*
 * ff_num.c - numbers: option values (whole numbers, decimals, names) and
 * quantities written for people.
 */
#include "ff_base.h"

#include <errno.h>
#include <math.h>
#include <string.h>

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

int
ff_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
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

uint64_t
ff_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double
ff_random_unit(uint64_t *state)
{
	return ((ff_random(state) >> 11) + 0.5) * 0x1.0p-53;
}
