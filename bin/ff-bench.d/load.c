/*
 * ff-bench's results files: read as streams and checked line by line, each
 * case record taken into the results (results.c).
 */
#include "ff-bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <unistd.h>

/* Checking records read from a file */

enum { T_STR = 1, T_INT = 2, T_NUM = 4, T_OBJ = 8, T_ARR = 16, T_NULL = 32, T_BOOL = 64 };

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "a whole number";
	case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "true or false";
	default: return "null";
	}
}

static int
type_ok(const json_t *v, int types)
{
	return ((types & T_STR) && json_is_string(v)) ||
	       ((types & T_INT) && json_is_integer(v)) ||
	       ((types & T_NUM) && json_is_number(v)) ||
	       ((types & T_OBJ) && json_is_object(v)) ||
	       ((types & T_ARR) && json_is_array(v)) ||
	       ((types & T_NULL) && json_is_null(v)) ||
	       ((types & T_BOOL) && json_is_boolean(v));
}

static const char *
types_name(int types)
{
	static char buf[128];

	buf[0] = 0;
	if (types & T_OBJ)
		strcat(buf, " or an object");
	if (types & T_ARR)
		strcat(buf, " or an array");
	if (types & T_STR)
		strcat(buf, " or a string");
	if (types & T_INT)
		strcat(buf, " or a whole number");
	else if (types & T_NUM)
		strcat(buf, " or a number");
	if (types & T_BOOL)
		strcat(buf, " or true/false");
	if (types & T_NULL)
		strcat(buf, " or null");
	return buf + 4;
}

/* 0 if obj.key is there with one of the types (or absent and optional). */
static int
field(const json_t *obj, const char *where, const char *key, int types,
      int required, struct ff_buf *err)
{
	json_t *v = json_object_get(obj, key);

	if (!v) {
		if (!required)
			return 0;
		ff_why(err, "'%s%s' is missing", where, key);
		return -1;
	}
	if (!type_ok(v, types)) {
		ff_why(err, "'%s%s' should be %s, not %s", where, key,
		       types_name(types), type_name(v));
		return -1;
	}
	if (json_is_number(v) && !isfinite(json_number_value(v))) {
		ff_why(err, "'%s%s' is not a finite number", where, key);
		return -1;
	}
	return 0;
}

/*
 * 0 if obj.key, when a number, is in [min, max]: figures no run can give
 * (a negative rate, 1e300 bits/s) are refused, not tabled.
 */
static int
in_range(const json_t *obj, const char *where, const char *key, double min, double max,
	 struct ff_buf *err)
{
	json_t *v = json_object_get(obj, key);
	double x;

	if (!json_is_number(v))
		return 0;
	x = json_number_value(v);
	if (x >= min && x <= max)
		return 0;
	ff_why(err, "'%s%s' is %g: out of range (%g to %g)", where, key, x, min, max);
	return -1;
}

/*
 * Is a record one we can use? 0, or -1 with the reason in err. Fields
 * other programs may add are ignored; those we read must have their types.
 */
static int
record_check(const json_t *rec, struct ff_buf *err)
{
	const json_t *c = json_object_get(rec, "config"), *res, *rsc, *r;
	const char *st;
	size_t i;
	char where[64];

	if (field(rec, "", "status", T_STR, 1, err) < 0)
		return -1;
	st = ff_json_str(rec, "status");
	if (strcmp(st, "ok") && strcmp(st, "failed") && strcmp(st, "skipped")) {
		ff_why(err, "'status' is '%s' (expected ok, failed or skipped)", st);
		return -1;
	}
	if (field(rec, "", "config", T_OBJ, 1, err) < 0 ||
	    field(c, "config.", "workload", T_STR, 1, err) < 0 ||
	    field(c, "config.", "relay", T_STR, 1, err) < 0 ||
	    field(c, "config.", "protocol", T_STR, 1, err) < 0 ||
	    field(c, "config.", "jobs", T_INT, 1, err) < 0 ||
	    field(c, "config.", "warmup_s", T_NUM, 1, err) < 0 ||
	    field(c, "config.", "duration_s", T_NUM, 1, err) < 0 ||
	    field(c, "config.", "cpu_limit", T_INT, 1, err) < 0 ||
	    field(c, "config.", "hops", T_INT, 0, err) < 0 ||
	    field(c, "config.", "tls", T_BOOL, 0, err) < 0 ||
	    field(c, "config.", "workers", T_INT | T_NULL, 0, err) < 0 ||
	    field(rec, "", "time", T_STR | T_NULL, 0, err) < 0 ||
	    field(rec, "", "repeat", T_INT, 0, err) < 0 ||
	    field(rec, "", "reason", T_STR | T_NULL, 0, err) < 0 ||
	    field(rec, "", "run_dir", T_STR | T_NULL, 0, err) < 0 ||
	    field(rec, "", "environment", T_OBJ | T_NULL, 0, err) < 0 ||
	    field(rec, "", "result", T_OBJ | T_NULL, 0, err) < 0 ||
	    field(rec, "", "resources", T_OBJ | T_NULL, 0, err) < 0)
		return -1;
	/* The ranges of the options that made them (ff_parse_run_opt's). */
	if (in_range(c, "config.", "jobs", 1, 65536, err) < 0 ||
	    in_range(c, "config.", "warmup_s", 0, 86400, err) < 0 ||
	    in_range(c, "config.", "duration_s", 0, 86400, err) < 0 ||
	    in_range(c, "config.", "cpu_limit", 0, CPU_SETSIZE, err) < 0 ||
	    in_range(c, "config.", "hops", 0, FF_HOPS_MAX, err) < 0 ||
	    in_range(c, "config.", "workers", 1, 1024, err) < 0 ||
	    in_range(rec, "", "repeat", 1, 1e9, err) < 0)
		return -1;
	if (strcmp(st, "ok"))
		return 0;
	res = json_object_get(rec, "result");
	if (field(rec, "", "result", T_OBJ, 1, err) < 0 ||
	    field(res, "result.", "bits_per_s", T_NUM | T_NULL, 1, err) < 0 ||
	    field(res, "result.", "ops_per_s", T_NUM | T_NULL, 0, err) < 0 ||
	    field(res, "result.", "latency_avg_us", T_NUM | T_NULL, 0, err) < 0)
		return -1;
	/* Up to 1 Pbit/s, 1e12 operations a second, a day's latency: far past any run here. */
	if (in_range(res, "result.", "bits_per_s", 0, 1e15, err) < 0 ||
	    in_range(res, "result.", "ops_per_s", 0, 1e12, err) < 0 ||
	    in_range(res, "result.", "latency_avg_us", 0, 86400e6, err) < 0)
		return -1;
	rsc = json_object_get(rec, "resources");
	if (!json_is_object(rsc))
		return 0;
	if (field(rsc, "resources.", "relays", T_ARR, 1, err) < 0)
		return -1;
	json_array_foreach(json_object_get(rsc, "relays"), i, r) {
		snprintf(where, sizeof(where), "resources.relays[%zu]", i);
		if (!json_is_object(r)) {
			ff_why(err, "'%s' should be an object, not %s", where, type_name(r));
			return -1;
		}
		snprintf(where, sizeof(where), "resources.relays[%zu].", i);
		if (field(r, where, "role", T_STR, 1, err) < 0 ||
		    field(r, where, "cpu_fraction", T_NUM | T_NULL, 1, err) < 0 ||
		    field(r, where, "max_rss_bytes", T_NUM | T_NULL, 1, err) < 0 ||
		    in_range(r, where, "cpu_fraction", 0, CPU_SETSIZE, err) < 0 ||
		    in_range(r, where, "max_rss_bytes", 0, 1e18, err) < 0)
			return -1;
	}
	return 0;
}

/*
 * A case record is ff-bench's, of a schema this program knows: another
 * tool's lines, or a newer bench's (whose fields may mean something else),
 * are refused rather than compared.
 */
static void
source_check(const char *name, long line, const json_t *rec)
{
	const json_t *schema = json_object_get(rec, "schema");
	const char *tool = ff_json_str(rec, "tool");

	if (!json_object_get(rec, "tool"))
		ff_die("%s:%ld: 'tool' is missing: not a bench result (\"tool\":\"ff-bench\")", name, line);
	if (!tool || strcmp(tool, "ff-bench"))
		ff_die("%s:%ld: a case of %s%s%s, not of ff-bench: not a bench result", name, line,
		       tool ? "'" : "", tool ? tool : "a tool that is not a string", tool ? "'" : "");
	if (!json_is_integer(schema))
		ff_die("%s:%ld: 'schema' %s: not a bench result", name, line,
		       schema ? "should be a whole number" : "is missing");
	if (json_integer_value(schema) > FF_SCHEMA)
		ff_die("%s:%ld: schema %lld is newer than this flimflam's (%d): read it with a newer flimflam",
		       name, line, (long long)json_integer_value(schema), FF_SCHEMA);
}

/* Is s valid UTF-8 (no overlong forms, no surrogates)? */
static int
utf8_ok(const unsigned char *s, size_t n)
{
	size_t i = 0, k, need;
	unsigned c, min;

	while (i < n) {
		c = s[i++];
		if (c < 0x80)
			continue;
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, c &= 0x1f, min = 0x80;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, c &= 0x0f, min = 0x800;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, c &= 0x07, min = 0x10000;
		else
			return 0;
		if (n - i < need)
			return 0;
		for (k = 0; k < need; k++) {
			if ((s[i] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (s[i++] & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return 0;
	}
	return 1;
}

/* One line of a results file: a case record is checked and taken, other events skipped. */
static void
take_line(const char *name, long line, const char *text, size_t len, int whole,
	  struct results *r, record_fn *fn, void *arg)
{
	struct group *g;
	json_error_t jerr;
	json_t *rec;
	struct ff_buf err = FF_BUF_INIT;

	if (len == 0 || strspn(text, " \t\r") >= len)
		return;
	rec = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!rec && !utf8_ok((const unsigned char *)text, len))
		ff_die("%s:%ld: binary data (not UTF-8 text), not a JSON line", name, line);
	if (!rec && !whole)
		ff_die("%s:%ld: the last line is cut short (%s)", name, line, jerr.text);
	if (!rec)
		ff_die("%s:%ld: not JSON: %s", name, line, jerr.text);
	if (!json_is_object(rec))
		ff_die("%s:%ld: expected a JSON object, not %s", name, line, type_name(rec));
	if (!json_is_string(json_object_get(rec, "event")))
		ff_die("%s:%ld: %s", name, line, json_object_get(rec, "event") ?
		       "'event' should be a string" :
		       "'event' is missing (a bench result has \"event\":\"case\")");
	if (!strcmp(ff_event_name(rec), "case")) {
		if (record_check(rec, &err) < 0)
			ff_die("%s:%ld: %s", name, line, err.s);
		source_check(name, line, rec);
		r->line = line;
		g = results_add(r, rec);
		if (g && fn)
			fn(rec, r, g - r->g, g->nruns - 1, arg);
	}
	json_decref(rec);
}

/* A bench result is a few kilobytes: a line this long is not one. */
#define MAX_LINE (1 << 20)

/*
 * The case records of a results file ("-": standard input), read as a
 * stream and checked line by line; anything wrong is fatal and names the
 * file and line, binary data and over-long lines as soon as they are seen.
 * Lines of other events are ignored, as readers of our streams do.
 */
void
load_results(const char *path, int with_warmup, struct results *r)
{
	load_results_each(path, with_warmup, r, NULL, NULL);
}

/* load_results, handing `fn` each case record as it is taken. */
void
load_results_each(const char *path, int with_warmup, struct results *r, record_fn *fn, void *arg)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	char *line = malloc(MAX_LINE), *chunk = malloc(65536), *p, *end, *nl;
	size_t len = 0, seg;
	unsigned long long total = 0;
	long lineno = 0;
	ssize_t n;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;

	if (!line || !chunk)
		ff_die("out of memory");
	if (fd < 0)
		ff_die("cannot read '%s': %s", name, strerror(errno));
	memset(r, 0, sizeof(*r));
	r->with_warmup = with_warmup;
	for (;;) {
		n = read(fd, chunk, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ff_die("cannot read '%s': %s", name, strerror(errno));
		if (n == 0)
			break;
		total += n;
		for (p = chunk, end = chunk + n; p < end; ) {
			nl = memchr(p, '\n', end - p);
			seg = (nl ? nl : end) - p;
			if (memchr(p, 0, seg))
				ff_die("%s:%ld: binary data (a NUL byte), not a JSON line", name, lineno + 1);
			if (len + seg >= MAX_LINE)
				ff_die("%s:%ld: a line of more than %d MiB: not bench results (one JSON object per line)",
				       name, lineno + 1, MAX_LINE >> 20);
			memcpy(line + len, p, seg);
			len += seg;
			p += seg;
			if (nl) {
				take_line(name, ++lineno, line, len, 1, r, fn, arg);
				len = 0;
				p++;
			}
		}
	}
	if (len)
		take_line(name, ++lineno, line, len, 0, r, fn, arg);
	if (fd != 0)
		close(fd);
	free(line);
	free(chunk);
	if (total == 0)
		ff_die("%s: the file is empty (expected bench results, one JSON object per line)", name);
	if (!r->ng)
		ff_die("%s: no bench results in the file (no line has \"event\":\"case\")", name);
	if (r->ndup)
		ff_warn("%s: %ld duplicate record%s (the same case, build, run directory, time and repeat as an earlier line, or the same line when it has neither run directory nor time; the first at line %ld, a copy of line %ld), counted once",
			name, r->ndup, r->ndup == 1 ? "" : "s", r->dup_line, r->dup_of);
}
