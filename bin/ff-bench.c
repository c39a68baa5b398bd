/*
 * ff-bench - run the relay matrix, keep every result, and tell noise from
 * effect when two sets of results are compared.
 *
 *   ff-bench [options]          runs `flimflam run --json` for each supported
 *                               workload x relay x protocol (x repeat), keeps
 *                               each run as a JSON line, prints the table
 *   ff-bench summarize [FILE]   prints the table again from a results file
 *   ff-bench compare BASE NEW   medians, deltas and a Mann-Whitney U test per
 *                               case and metric
 *
 * `flimflam bench` and `flimflam compare` run this.
 */
#include "ff.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-bench [-h] [-w WORKLOADS] [-r RELAYS] [-p PROTOCOLS] [--jobs JOBS]\n"
	"                [--warmup SECONDS] [--duration SECONDS] [--cpu-limit COUNT]\n"
	"                [--repeat N] [--output FILE] [--request-size BYTES]\n"
	"                [--response-size BYTES] [--rate N]\n"
	"       ff-bench summarize [FILE]\n"
	"       ff-bench compare [--threshold PCT] [--format text|markdown] [--json]\n"
	"                        BASE NEW\n"
	"\n"
	"Run each workload on each relay and summarize the results\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  -w WORKLOADS, --workloads WORKLOADS\n"
	"                        The selected workloads (comma-separated list) (default\n"
	"                        'builtin,iperf3,h2load,h2load-h1,builtin-rr,builtin-crr')\n"
	"  -r RELAYS, --relays RELAYS\n"
	"                        The selected relays (comma-separated list) (default\n"
	"                        'skrouterd,nghttpx,nginx,none')\n"
	"  -p PROTOCOLS, --protocols PROTOCOLS\n"
	"                        The selected protocols (comma-separated list) (default\n"
	"                        'tcp,http1,http2')\n"
	"  --jobs JOBS           The number of concurrent workload jobs (default 2)\n"
	"  --warmup SECONDS      The warmup time in seconds (default 5)\n"
	"  --duration SECONDS    The execution time (excluding warmup) in seconds (default 5)\n"
	"  --cpu-limit COUNT     The max per-process relay CPU usage (0 means no limit)\n"
	"                        (default 1)\n"
	"  --repeat N            Run every case N times, interleaved (default 1)\n"
	"  --output FILE         Keep the results (JSON lines) in FILE (default\n"
	"                        flimflam-bench-YYYYmmdd-HHMMSS.jsonl, in the current\n"
	"                        directory)\n"
	"  --request-size BYTES, --response-size BYTES, --rate N\n"
	"                        For builtin-rr and builtin-crr, as in flimflam run\n"
	"\n"
	"Unsupported combinations, and cases the skrouterd on PATH cannot carry (no\n"
	"HTTP adaptor), are not run. A relay or workload whose program is not on\n"
	"PATH is skipped. A failed case is reported and the bench goes on; the exit\n"
	"status is then 1, as it is when no case can run.\n";

static const char summarize_usage[] =
	"usage: ff-bench summarize [-h] [FILE]\n"
	"\n"
	"Print the table of a bench results file (standard input without FILE or with -)\n";

static const char compare_usage[] =
	"usage: ff-bench compare [-h] [--threshold PCT] [--format text|markdown] [--json]\n"
	"                        BASE NEW\n"
	"\n"
	"Compare two bench results files, case by case\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --threshold PCT       Exit 1 when a significant regression exceeds PCT percent\n"
	"  --format FORMAT       text (default) or markdown, to paste into a pull request\n"
	"  --json                JSON lines: start, environment..., comparison...,\n"
	"                        geomean..., end\n"
	"\n"
	"Cases match by workload, relay, protocol, jobs, cpu limit and duration. Each\n"
	"metric gets the median of each side, the change, and a two-sided Mann-Whitney\n"
	"U test: '~' when the change is not significant at alpha 0.05.\n";

#define ALPHA 0.05
#define MAXCOLS 12

/* Values, their formats and their meaning */

/* 16.4G, 2.84K: the original's quantities, SI prefixes. */
static void
fmt_si(double v, char *buf, size_t n)
{
	ff_fmt_prefixed(v, 1000, "", "", buf, n);
}

static void
fmt_bytes(double v, char *buf, size_t n)
{
	ff_fmt_prefixed(v, 1024, "", "B", buf, n);
}

static void
fmt_us(double v, char *buf, size_t n)
{
	if (v >= 999500)
		ff_fmt_sig3(v / 1e6, "s", buf, n);
	else if (v >= 999.5)
		ff_fmt_sig3(v / 1000, "ms", buf, n);
	else
		ff_fmt_sig3(v, "us", buf, n);
}

static void
fmt_fraction(double v, char *buf, size_t n)
{
	snprintf(buf, n, "%.1f%%", 100 * v);
}

static void
fmt_plain(double v, char *buf, size_t n)
{
	ff_fmt_sig3(v, "", buf, n);
}

enum {
	M_BITS, M_OPS, M_LAT, M_P50, M_P99, M_CPU_GB, M_CPU_KREQ,	/* compared */
	M_R1CPU, M_R1RSS, M_R2CPU, M_R2RSS, M_RELAYCPU, M_P999, M_LATMAX,
	M_N
};
#define M_NCMP (M_CPU_KREQ + 1)

static const struct metric {
	const char *key;	/* in compare's JSON */
	const char *title;	/* compare's section */
	int higher_better;
	void (*fmt)(double, char *, size_t);
} metrics[M_N] = {
	{ "bits_per_s", "Bits/s", 1, fmt_si },
	{ "ops_per_s", "Ops/s", 1, fmt_si },
	{ "latency_avg_us", "Average latency", 0, fmt_us },
	{ "latency_p50_us", "Latency p50", 0, fmt_us },
	{ "latency_p99_us", "Latency p99", 0, fmt_us },
	{ "relay_cpu_s_per_gb", "Relay CPU-seconds per GB, R1 + R2", 0, fmt_plain },
	{ "relay_cpu_s_per_1k_requests", "Relay CPU-seconds per 1,000 requests, R1 + R2", 0, fmt_plain },
	{ "r1_cpu_fraction", "R1 CPU", 0, fmt_fraction },
	{ "r1_max_rss_bytes", "R1 RSS", 0, fmt_bytes },
	{ "r2_cpu_fraction", "R2 CPU", 0, fmt_fraction },
	{ "r2_max_rss_bytes", "R2 RSS", 0, fmt_bytes },
	{ "relay_cpu_fraction", "Relay CPU", 0, fmt_fraction },
	{ "latency_p999_us", "Latency p99.9", 0, fmt_us },
	{ "latency_max_us", "Latency max", 0, fmt_us },
};

static int
num(const json_t *obj, const char *key, double *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return 0;
	*out = json_number_value(v);
	return 1;
}

static json_t *
relay_of(const json_t *rec, const char *role)
{
	json_t *relays = json_object_get(json_object_get(rec, "resources"), "relays"), *r;
	size_t i;

	json_array_foreach(relays, i, r)
		if (ff_json_str(r, "role") && !strcmp(ff_json_str(r, "role"), role))
			return r;
	return NULL;
}

/* R1 + R2 CPU (1.0 = one CPU); needs every relay's figure. */
static int
relay_cpu(const json_t *rec, double *out)
{
	json_t *relays = json_object_get(json_object_get(rec, "resources"), "relays"), *r;
	double sum = 0, v;
	size_t i;

	if (!json_array_size(relays))
		return 0;
	json_array_foreach(relays, i, r) {
		if (!num(r, "cpu_fraction", &v))
			return 0;
		sum += v;
	}
	*out = sum;
	return 1;
}

/*
 * The value of a metric in one record, if it has one. Efficiency is the
 * relays' CPU over the work they carried, both as rates over the window:
 * CPU-seconds per second over GB per second is CPU-seconds per GB.
 */
static int
rec_value(const json_t *rec, int m, double *out)
{
	json_t *res = json_object_get(rec, "result");
	double cpu, v;

	switch (m) {
	case M_BITS:
		return num(res, "bits_per_s", out);
	case M_OPS:
		return num(res, "ops_per_s", out);
	case M_LAT:
		return num(res, "latency_avg_us", out);
	case M_P50:
		return num(res, "latency_p50_us", out);
	case M_P99:
		return num(res, "latency_p99_us", out);
	case M_P999:
		return num(res, "latency_p999_us", out);
	case M_LATMAX:
		return num(res, "latency_max_us", out);
	case M_R1CPU:
		return num(relay_of(rec, "r1"), "cpu_fraction", out);
	case M_R1RSS:
		return num(relay_of(rec, "r1"), "max_rss_bytes", out);
	case M_R2CPU:
		return num(relay_of(rec, "r2"), "cpu_fraction", out);
	case M_R2RSS:
		return num(relay_of(rec, "r2"), "max_rss_bytes", out);
	case M_RELAYCPU:
		return relay_cpu(rec, out);
	case M_CPU_GB:
		if (!relay_cpu(rec, &cpu) || !num(res, "bits_per_s", &v) || v <= 0)
			return 0;
		*out = cpu / (v / 8e9);
		return 1;
	case M_CPU_KREQ:
		if (!relay_cpu(rec, &cpu) || !num(res, "ops_per_s", &v) || v <= 0)
			return 0;
		*out = cpu / (v / 1000);
		return 1;
	}
	return 0;
}

struct stats {
	int n;
	double median, spread_pct;	/* half the min-max range over the median */
};

/* Sorts v. */
static void
stats_of(double *v, int n, struct stats *s)
{
	s->n = n;
	s->median = s->spread_pct = 0;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), ff_cmp_double);
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	if (s->median != 0)
		s->spread_pct = fabs((v[n - 1] - v[0]) / 2 / s->median * 100);
}

static void
fmt_stats(const struct stats *s, int m, const char *pm, char *buf, size_t n)
{
	char v[64];

	if (!s->n) {
		snprintf(buf, n, "-");
		return;
	}
	metrics[m].fmt(s->median, v, sizeof(v));
	if (s->spread_pct > 2)
		snprintf(buf, n, "%s %s%.*f%%", v, pm, s->spread_pct < 9.95 ? 1 : 0, s->spread_pct);
	else
		snprintf(buf, n, "%s", v);
}

/* Results records */

static int
is_status(const json_t *rec, const char *status)
{
	const char *s = ff_json_str(rec, "status");

	return s && !strcmp(s, status);
}

struct key {
	const char *workload, *relay, *protocol;
	long jobs, cpu_limit;
	double duration, warmup;
	long request_size, response_size, rate;	/* builtin-rr, builtin-crr; 1, 1, 0 otherwise */
};

static void
rec_key(const json_t *rec, struct key *k)
{
	json_t *c = json_object_get(rec, "config");

	k->workload = ff_json_str(c, "workload");
	k->relay = ff_json_str(c, "relay");
	k->protocol = ff_json_str(c, "protocol");
	k->jobs = (long)ff_json_num(c, "jobs", 0);
	k->cpu_limit = (long)ff_json_num(c, "cpu_limit", 0);
	k->duration = ff_json_num(c, "duration_s", 0);
	k->warmup = ff_json_num(c, "warmup_s", 0);
	k->request_size = (long)ff_json_num(c, "request_size", 1);
	k->response_size = (long)ff_json_num(c, "response_size", 1);
	k->rate = (long)ff_json_num(c, "rate_per_s", 0);
}

/* compare's match leaves warmup out, as the issue that asked for it says. */
static int
key_eq(const struct key *a, const struct key *b, int with_warmup)
{
	return !strcmp(a->workload, b->workload) && !strcmp(a->relay, b->relay) &&
	       !strcmp(a->protocol, b->protocol) && a->jobs == b->jobs &&
	       a->cpu_limit == b->cpu_limit && a->duration == b->duration &&
	       a->request_size == b->request_size && a->response_size == b->response_size &&
	       a->rate == b->rate && (!with_warmup || a->warmup == b->warmup);
}

struct group {
	struct key k;
	json_t *recs;	/* the records of the case, in order */
	int order;	/* of first appearance */
};

/* Records grouped by case, in order of first appearance. */
static int
groups_of(json_t *records, int with_warmup, struct group **out)
{
	struct group *g = NULL;
	int n = 0, i;
	size_t j;
	json_t *rec;
	struct key k;

	json_array_foreach(records, j, rec) {
		rec_key(rec, &k);
		for (i = 0; i < n && !key_eq(&g[i].k, &k, with_warmup); i++)
			;
		if (i == n) {
			g = realloc(g, (n + 1) * sizeof(*g));
			if (!g)
				ff_die("out of memory");
			g[n].k = k;
			g[n].recs = json_array();
			g[n].order = n;
			n++;
		}
		json_array_append(g[i].recs, rec);
	}
	*out = g;
	return n;
}

static void
groups_free(struct group *g, int n)
{
	int i;

	for (i = 0; i < n; i++)
		json_decref(g[i].recs);
	free(g);
}

/* The values of a metric over the successful runs of a case. */
static int
group_values(const struct group *g, int m, double **out)
{
	double *v = calloc(json_array_size(g->recs) + 1, sizeof(*v));
	int n = 0;
	size_t i;
	json_t *rec;

	if (!v)
		ff_die("out of memory");
	json_array_foreach(g->recs, i, rec)
		if (is_status(rec, "ok") && rec_value(rec, m, &v[n]))
			n++;
	*out = v;
	return n;
}

/* The statistics of a metric over the successful runs of a case. */
static void
group_stats(const struct group *g, int m, struct stats *s)
{
	double *v;
	int n = group_values(g, m, &v);

	stats_of(v, n, s);
	free(v);
}

static int
group_count(const struct group *g, const char *status)
{
	int n = 0;
	size_t i;
	json_t *rec;

	json_array_foreach(g->recs, i, rec)
		n += is_status(rec, status);
	return n;
}

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
      int required, char *err, size_t n)
{
	json_t *v = json_object_get(obj, key);

	if (!v) {
		if (!required)
			return 0;
		snprintf(err, n, "'%s%s' is missing", where, key);
		return -1;
	}
	if (!type_ok(v, types)) {
		snprintf(err, n, "'%s%s' should be %s, not %s", where, key,
			 types_name(types), type_name(v));
		return -1;
	}
	if (json_is_number(v) && !isfinite(json_number_value(v))) {
		snprintf(err, n, "'%s%s' is not a finite number", where, key);
		return -1;
	}
	return 0;
}

/*
 * Is a record one we can use? 0, or -1 with the reason in err. Fields
 * other programs may add are ignored; those we read must have their types.
 */
static int
record_check(const json_t *rec, char *err, size_t n)
{
	const json_t *c = json_object_get(rec, "config"), *res, *rsc, *r;
	const char *st;
	size_t i;
	char where[64];

	if (field(rec, "", "status", T_STR, 1, err, n) < 0)
		return -1;
	st = ff_json_str(rec, "status");
	if (strcmp(st, "ok") && strcmp(st, "failed") && strcmp(st, "skipped")) {
		snprintf(err, n, "'status' is '%s' (expected ok, failed or skipped)", st);
		return -1;
	}
	if (field(rec, "", "config", T_OBJ, 1, err, n) < 0 ||
	    field(c, "config.", "workload", T_STR, 1, err, n) < 0 ||
	    field(c, "config.", "relay", T_STR, 1, err, n) < 0 ||
	    field(c, "config.", "protocol", T_STR, 1, err, n) < 0 ||
	    field(c, "config.", "jobs", T_INT, 1, err, n) < 0 ||
	    field(c, "config.", "warmup_s", T_NUM, 1, err, n) < 0 ||
	    field(c, "config.", "duration_s", T_NUM, 1, err, n) < 0 ||
	    field(c, "config.", "cpu_limit", T_INT, 1, err, n) < 0 ||
	    field(rec, "", "time", T_STR | T_NULL, 0, err, n) < 0 ||
	    field(rec, "", "repeat", T_INT, 0, err, n) < 0 ||
	    field(rec, "", "reason", T_STR | T_NULL, 0, err, n) < 0 ||
	    field(rec, "", "run_dir", T_STR | T_NULL, 0, err, n) < 0 ||
	    field(rec, "", "environment", T_OBJ | T_NULL, 0, err, n) < 0 ||
	    field(rec, "", "result", T_OBJ | T_NULL, 0, err, n) < 0 ||
	    field(rec, "", "resources", T_OBJ | T_NULL, 0, err, n) < 0)
		return -1;
	if (strcmp(st, "ok"))
		return 0;
	res = json_object_get(rec, "result");
	if (field(rec, "", "result", T_OBJ, 1, err, n) < 0 ||
	    field(res, "result.", "bits_per_s", T_NUM | T_NULL, 1, err, n) < 0 ||
	    field(res, "result.", "ops_per_s", T_NUM | T_NULL, 0, err, n) < 0 ||
	    field(res, "result.", "latency_avg_us", T_NUM | T_NULL, 0, err, n) < 0)
		return -1;
	rsc = json_object_get(rec, "resources");
	if (!json_is_object(rsc))
		return 0;
	if (field(rsc, "resources.", "relays", T_ARR, 1, err, n) < 0)
		return -1;
	json_array_foreach(json_object_get(rsc, "relays"), i, r) {
		snprintf(where, sizeof(where), "resources.relays[%zu]", i);
		if (!json_is_object(r)) {
			snprintf(err, n, "'%s' should be an object, not %s", where, type_name(r));
			return -1;
		}
		snprintf(where, sizeof(where), "resources.relays[%zu].", i);
		if (field(r, where, "role", T_STR, 1, err, n) < 0 ||
		    field(r, where, "cpu_fraction", T_NUM | T_NULL, 1, err, n) < 0 ||
		    field(r, where, "max_rss_bytes", T_NUM | T_NULL, 1, err, n) < 0)
			return -1;
	}
	return 0;
}

static char *
read_all(int fd, size_t *len)
{
	char *buf = NULL, *nb;
	size_t cap = 0;
	ssize_t r;

	*len = 0;
	for (;;) {
		if (cap - *len < 65536) {
			cap = cap ? cap * 2 : 131072;
			nb = realloc(buf, cap);
			if (!nb)
				ff_die("out of memory");
			buf = nb;
		}
		r = read(fd, buf + *len, cap - *len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		*len += r;
	}
	buf[*len] = 0;
	return buf;
}

/*
 * The case records of a results file, checked line by line; anything
 * wrong is fatal and names the file and line. Lines of other events are
 * ignored, as readers of our streams do.
 */
static json_t *
load_results(const char *path)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	json_t *records = json_array(), *rec;
	json_error_t jerr;
	size_t len, off, linelen;
	long line = 0;
	char *text, *nl, err[512];

	if (!strcmp(path, "-"))
		text = read_all(0, &len);
	else
		text = ff_read_file(path, &len);
	if (!text)
		ff_die("cannot read '%s': %s", name, strerror(errno));
	if (len == 0)
		ff_die("%s: the file is empty (expected bench results, one JSON object per line)", name);
	for (off = 0; off < len; off += linelen + 1) {
		nl = memchr(text + off, '\n', len - off);
		linelen = nl ? (size_t)(nl - (text + off)) : len - off;
		line++;
		if (linelen == 0 || strspn(text + off, " \t\r") >= linelen)
			continue;
		if (memchr(text + off, 0, linelen))
			ff_die("%s:%ld: binary data (a NUL byte), not a JSON line", name, line);
		rec = json_loadb(text + off, linelen, JSON_REJECT_DUPLICATES, &jerr);
		if (!rec && !nl)
			ff_die("%s:%ld: the last line is cut short (%s)", name, line, jerr.text);
		if (!rec)
			ff_die("%s:%ld: not JSON: %s", name, line, jerr.text);
		if (!json_is_object(rec))
			ff_die("%s:%ld: expected a JSON object, not %s", name, line, type_name(rec));
		if (!json_is_string(json_object_get(rec, "event")))
			ff_die("%s:%ld: %s", name, line, json_object_get(rec, "event") ?
			       "'event' should be a string" :
			       "'event' is missing (a bench result has \"event\":\"case\")");
		if (strcmp(ff_event_name(rec), "case")) {
			json_decref(rec);
			continue;
		}
		if (record_check(rec, err, sizeof(err)) < 0)
			ff_die("%s:%ld: %s", name, line, err);
		json_array_append_new(records, rec);
	}
	free(text);
	if (!json_array_size(records))
		ff_die("%s: no bench results in the file (no line has \"event\":\"case\")", name);
	return records;
}

/* Tables */

struct row {
	int n;			/* fewer than the columns: the last cell spans the rest */
	char *c[MAXCOLS];
};

struct table {
	int ncols;
	const char *align;	/* 'l' or 'r' per column */
	struct row *rows;	/* rows[0] is the heading */
	int nrows;
};

static void
trow_v(struct table *t, int n, const char *const cells[])
{
	struct row *r;
	int i;

	t->rows = realloc(t->rows, (t->nrows + 1) * sizeof(*t->rows));
	if (!t->rows)
		ff_die("out of memory");
	r = &t->rows[t->nrows++];
	r->n = n;
	for (i = 0; i < n; i++)
		r->c[i] = strdup(cells[i] ? cells[i] : "");
}

static void
trow(struct table *t, int n, ...)
{
	const char *cells[MAXCOLS];
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		cells[i] = va_arg(ap, const char *);
	va_end(ap);
	trow_v(t, n, cells);
}

static void
table_free(struct table *t)
{
	int i, j;

	for (i = 0; i < t->nrows; i++)
		for (j = 0; j < t->rows[i].n; j++)
			free(t->rows[i].c[j]);
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

/* The original's layout: three spaces between columns, dashes under the heading. */
static void
table_print(const struct table *t)
{
	int w[MAXCOLS] = { 0 }, i, j, len, last;
	char *line;
	size_t size;
	FILE *f;

	for (i = 0; i < t->nrows; i++)
		for (j = 0; j < t->rows[i].n; j++)
			if (t->rows[i].n == t->ncols || j < t->rows[i].n - 1) {
				len = strlen(t->rows[i].c[j]);
				w[j] = len > w[j] ? len : w[j];
			}
	for (i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[i];

		f = open_memstream(&line, &size);
		if (!f)
			ff_die("out of memory");
		for (j = 0; j < r->n; j++) {
			last = j == r->n - 1;
			if (last && (r->n < t->ncols || t->align[j] == 'l'))
				fprintf(f, "%s", r->c[j]);
			else if (t->align[j] == 'r')
				fprintf(f, "%*s", w[j], r->c[j]);
			else
				fprintf(f, "%-*s", w[j], r->c[j]);
			if (!last)
				fprintf(f, "   ");
		}
		fclose(f);
		while (size && line[size - 1] == ' ')
			line[--size] = 0;
		printf("%s\n", line);
		free(line);
		if (i == 0) {
			for (j = 0, len = 0; j < t->ncols; j++)
				len += w[j] + (j ? 3 : 0);
			for (j = 0; j < len; j++)
				putchar('-');
			printf("\n");
		}
	}
}

static void
md_cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			putchar('\\');
		putchar(*s);
	}
}

static void
table_print_markdown(const struct table *t)
{
	int i, j;

	for (i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[i];

		printf("|");
		for (j = 0; j < t->ncols; j++) {
			printf(" ");
			if (j < r->n)
				md_cell(r->c[j]);
			printf(" |");
		}
		printf("\n");
		if (i == 0) {
			printf("|");
			for (j = 0; j < t->ncols; j++)
				printf(t->align[j] == 'r' ? " --: |" : " :-- |");
			printf("\n");
		}
	}
}

/* The environment, as `flimflam check` prints it, kept short */

static const char *
prog_str(const json_t *env, const char *prog, char *buf, size_t n)
{
	json_t *p = json_object_get(env, prog);
	const char *path = ff_json_str(p, "path"), *ver = ff_json_str(p, "version");

	if (!path)
		snprintf(buf, n, "missing");
	else
		snprintf(buf, n, "%s (%s)", ver ? ver : "version unknown", path);
	return buf;
}

static void
print_env(const json_t *env, const char *const progs[])
{
	const char *s;
	char buf[1024];
	int i;

	printf("Environment\n");
	if (!env) {
		printf("  unknown (the results hold none)\n");
		return;
	}
	ff_env_print_machine(env);
	printf("  %-10s %s\n", "skrouterd", prog_str(env, "skrouterd", buf, sizeof(buf)));
	if (ff_json_str(json_object_get(env, "skrouterd"), "path")) {
		if ((s = ff_json_str(env, "proton_library")))
			printf("  %-10s %s (loaded)\n", "proton", s);
		else
			printf("  %-10s %s\n", "proton", (s = ff_json_str(env, "proton_ldd")) ? s :
			       "no libqpid-proton in ldd");
		printf("  %-10s %s\n", "hash", (s = ff_json_str(env, "skrouterd_hash_fnv1a64")) ? s :
		       "unreadable");
	}
	for (i = 0; progs[i]; i++)
		if (strcmp(progs[i], "skrouterd"))
			printf("  %-10s %s\n", progs[i], prog_str(env, progs[i], buf, sizeof(buf)));
}

/* The programs the cases need, each once, in a NULL-terminated static list. */
static const char *const *
progs_for(json_t *records)
{
	static const char *list[16];
	const char *cand[3];
	int n = 0, i, j;
	size_t k;
	json_t *rec;
	struct key key;

	json_array_foreach(records, k, rec) {
		rec_key(rec, &key);
		cand[0] = ff_relay_program(key.relay);
		cand[1] = ff_workload_server_program(key.workload);
		cand[2] = ff_workload_client_program(key.workload);
		for (i = 0; i < 3; i++) {
			if (!cand[i])
				continue;
			for (j = 0; j < n && strcmp(list[j], cand[i]); j++)
				;
			if (j == n && n < 15)
				list[n++] = cand[i];
		}
	}
	list[n] = NULL;
	return list;
}

static const json_t *
first_env(json_t *records)
{
	size_t i;
	json_t *rec;

	json_array_foreach(records, i, rec)
		if (json_is_object(json_object_get(rec, "environment")))
			return json_object_get(rec, "environment");
	return NULL;
}

/* The bench table */

static int
name_index(const char *const names[], const char *s)
{
	int i;

	for (i = 0; names[i] && strcmp(names[i], s); i++)
		;
	return i;
}

/* The matrix's order (workload, relay, protocol), whatever order the runs came in. */
static int
cmp_group(const void *a, const void *b)
{
	const struct key *x = &((const struct group *)a)->k, *y = &((const struct group *)b)->k;
	int d;

	if ((d = name_index(ff_workloads, x->workload) - name_index(ff_workloads, y->workload)))
		return d;
	if ((d = name_index(ff_relays, x->relay) - name_index(ff_relays, y->relay)))
		return d;
	if ((d = name_index(ff_protocols, x->protocol) - name_index(ff_protocols, y->protocol)))
		return d;
	return ((const struct group *)a)->order - ((const struct group *)b)->order;
}

/*
 * The latency percentiles of the cases that have them (builtin-rr,
 * builtin-crr, h2load): transactions/s, p50, p99, and for those with a
 * histogram p99.9 and the maximum.
 */
static void
print_latency(struct group *g, int ng)
{
	static const int cols[] = { M_OPS, M_P50, M_P99, M_P999, M_LATMAX };
	struct table t = { 8, "lllrrrrr", NULL, 0 };
	char cells[8][128], *cp[8];
	struct stats s;
	int i, j;

	trow(&t, 8, "Workload", "Relay", "Protocol", "Ops/s", "p50", "p99", "p99.9", "Max");
	for (j = 0; j < 8; j++)
		cp[j] = cells[j];
	for (i = 0; i < ng; i++) {
		group_stats(&g[i], M_P50, &s);
		if (!s.n)
			continue;
		snprintf(cells[0], 128, "%s", g[i].k.workload);
		snprintf(cells[1], 128, "%s", g[i].k.relay);
		snprintf(cells[2], 128, "%s", g[i].k.protocol);
		for (j = 0; j < 5; j++) {
			group_stats(&g[i], cols[j], &s);
			fmt_stats(&s, cols[j], "+/-", cells[3 + j], 128);
		}
		trow_v(&t, 8, (const char *const *)cp);
	}
	if (t.nrows > 1) {
		printf("\nLatency (lower is better; Ops/s: transactions, connections for builtin-crr)\n\n");
		table_print(&t);
	}
	table_free(&t);
}

static void
print_results(json_t *records)
{
	static const char *const head[] = {
		"Workload", "Relay", "Protocol", "Bits/s", "Ops/s", "Lat",
		"R1 CPU", "R1 RSS", "R2 CPU", "R2 RSS"
	};
	static const int cols[] = { M_BITS, M_OPS, M_LAT, M_R1CPU, M_R1RSS, M_R2CPU, M_R2RSS };
	struct table t = { 10, "lllrrrrrrr", NULL, 0 }, e = { 6, "lllrrr", NULL, 0 };
	struct group *g;
	struct stats s;
	char cells[MAXCOLS][128], reason[4096], *cp[MAXCOLS];
	int ng = groups_of(records, 1, &g), i, j, maxn = 0, uniform = 1, nfoot = 0;
	size_t k;
	json_t *rec;

	qsort(g, ng, sizeof(*g), cmp_group);
	trow_v(&t, 10, head);
	trow(&e, 6, "Workload", "Relay", "Protocol", "Relay CPU", "CPU-s/GB", "CPU-s/1k req");
	for (j = 0; j < MAXCOLS; j++)
		cp[j] = cells[j];
	for (i = 0; i < ng; i++) {
		int ok = group_count(&g[i], "ok"), failed = group_count(&g[i], "failed");
		const json_t *last_bad = NULL;

		uniform &= g[i].k.jobs == g[0].k.jobs && g[i].k.warmup == g[0].k.warmup &&
			   g[i].k.duration == g[0].k.duration && g[i].k.cpu_limit == g[0].k.cpu_limit;
		maxn = ok > maxn ? ok : maxn;
		snprintf(cells[0], 128, "%s", g[i].k.workload);
		snprintf(cells[1], 128, "%s", g[i].k.relay);
		snprintf(cells[2], 128, "%s", g[i].k.protocol);
		json_array_foreach(g[i].recs, k, rec)
			if (!is_status(rec, "ok"))
				last_bad = rec;
		if (!ok && last_bad) {
			const char *dir = ff_json_str(last_bad, "run_dir"),
				   *why = ff_json_str(last_bad, "reason");

			if (dir && why && strstr(why, dir))
				dir = NULL;	/* the reason names it */

			snprintf(reason, sizeof(reason), "%s: %s%s%s%s", ff_json_str(last_bad, "status"),
				 ff_json_str(last_bad, "reason") ? ff_json_str(last_bad, "reason") : "no reason given",
				 dir ? " (run directory " : "", dir ? dir : "", dir ? ")" : "");
			cp[3] = reason;
			trow_v(&t, 4, (const char *const *)cp);
			cp[3] = cells[3];
			continue;
		}
		for (j = 0; j < 7; j++) {
			group_stats(&g[i], cols[j], &s);
			fmt_stats(&s, cols[j], "+/-", cells[3 + j], 128);
		}
		if (failed)
			snprintf(cells[2] + strlen(cells[2]), 128 - strlen(cells[2]), " [%d]", ++nfoot);
		trow_v(&t, 10, (const char *const *)cp);
		group_stats(&g[i], M_RELAYCPU, &s);
		if (!s.n)
			continue;
		snprintf(cells[2], 128, "%s", g[i].k.protocol);
		fmt_stats(&s, M_RELAYCPU, "+/-", cells[3], 128);
		group_stats(&g[i], M_CPU_GB, &s);
		fmt_stats(&s, M_CPU_GB, "+/-", cells[4], 128);
		group_stats(&g[i], M_CPU_KREQ, &s);
		fmt_stats(&s, M_CPU_KREQ, "+/-", cells[5], 128);
		trow_v(&e, 6, (const char *const *)cp);
	}

	printf("\nBenchmark results");
	if (ng && uniform)
		printf(" (jobs %ld, warmup %g s, duration %g s, CPU limit %ld)", g[0].k.jobs,
		       g[0].k.warmup, g[0].k.duration, g[0].k.cpu_limit);
	printf("\n");
	if (maxn > 1)
		printf("Each figure is the median of the runs of its case, with +/- half their\n"
		       "range where that exceeds 2%% of the median.\n");
	printf("\n");
	table_print(&t);
	if (!uniform) {
		printf("\nThe cases were run with different settings:\n");
		for (i = 0; i < ng; i++)
			printf("  %s %s %s: jobs %ld, warmup %g s, duration %g s, CPU limit %ld\n",
			       g[i].k.workload, g[i].k.relay, g[i].k.protocol, g[i].k.jobs,
			       g[i].k.warmup, g[i].k.duration, g[i].k.cpu_limit);
	}
	if (nfoot) {
		printf("\n");
		for (i = 0, nfoot = 0; i < ng; i++) {
			int ok = group_count(&g[i], "ok"), failed = group_count(&g[i], "failed");

			if (!ok || !failed)
				continue;
			printf("[%d] %d of %d runs failed, not counted:\n", ++nfoot, failed, ok + failed);
			json_array_foreach(g[i].recs, k, rec)
				if (is_status(rec, "failed"))
					printf("    run %.0f: %s (run directory %s)\n",
					       ff_json_num(rec, "repeat", 0),
					       ff_json_str(rec, "reason") ? ff_json_str(rec, "reason") : "no reason given",
					       ff_json_str(rec, "run_dir") ? ff_json_str(rec, "run_dir") : "unknown");
		}
	}
	if (e.nrows > 1) {
		printf("\nRelay CPU per unit of work (R1 + R2; lower is better)\n\n");
		table_print(&e);
	}
	print_latency(g, ng);
	table_free(&t);
	table_free(&e);
	groups_free(g, ng);
}

/* ff-bench summarize */

static int
summarize_main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	json_t *records;
	const char *path = "-";
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1)
		switch (c) {
		case 'h':
			ff_usage(summarize_usage, 0);
		default:
			ff_bad_option(summarize_usage, c, argv);
		}
	if (argc - optind > 1)
		ff_usage_error(summarize_usage, "unexpected argument '%s'", argv[optind + 1]);
	if (optind < argc)
		path = argv[optind];
	else if (isatty(0))
		ff_usage_error(summarize_usage, "expected a results file (or one on standard input)");
	records = load_results(path);
	print_env(first_env(records), progs_for(records));
	print_results(records);
	json_decref(records);
	return ff_finish();
}

/*
 * The Mann-Whitney U test (Mann and Whitney, "On a test of whether one of
 * two random variables is stochastically larger than the other", Annals of
 * Mathematical Statistics 18(1), 1947, pp. 50-60), two-sided.
 *
 * U for a sample is the number of pairs in which its value is the larger,
 * ties counting one half; computed from midranks as R1 - n1(n1+1)/2. We
 * report the smaller of the two, U = min(U1, U2), the figure tables of
 * critical values use.
 *
 * - Without ties and with n1 + n2 <= 60, the p-value is exact: under the
 *   null hypothesis each of the C(n1+n2, n1) orderings is equally likely,
 *   and the number with U = u is the coefficient of q^u in the Gaussian
 *   binomial coefficient [n1+n2 choose n1]_q (the partitions of u that fit
 *   in an n1 x n2 box; e.g. Andrews, The Theory of Partitions, 1976,
 *   Theorem 3.1), which is the product of (1 - q^(n2+i)) / (1 - q^i) for
 *   i = 1..n1. p = 2 P(U <= u), at most 1. (C(60, 30) < 2^63.)
 * - Otherwise, the normal approximation with the tie correction of the
 *   variance and a continuity correction of 1/2:
 *     mu = n1 n2 / 2
 *     sigma^2 = n1 n2 / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1)))
 *   where n = n1 + n2 and t runs over the sizes of the groups of tied
 *   values (Lehmann, Nonparametrics: Statistical Methods Based on Ranks,
 *   1975, eq. 1.3.18 ff.; the same as the "asymptotic" method of SciPy's
 *   mannwhitneyu), z = (|U1 - mu| - 1/2) / sigma, p = erfc(z / sqrt 2).
 *
 * The smallest p any outcome can reach is 2 / C(n1+n2, n1): when that
 * exceeds alpha, no difference can ever be significant with so few runs
 * (3 and 3 runs: 0.1), which is what benchstat's "need >= 4 samples to
 * detect a difference at alpha level 0.05" says.
 */
struct utest {
	double u, p;
	int exact;
};

struct obs {
	double v;
	int g;
};

static int
cmp_obs(const void *a, const void *b)
{
	return ff_cmp_double(&((const struct obs *)a)->v, &((const struct obs *)b)->v);
}

static double
exact_p(int m, int n, double u)
{
	int64_t *c = calloc((size_t)m * n + m + 2, sizeof(*c)), total = 0, below = 0;
	int i, k, deg = 0, a;

	if (!c)
		ff_die("out of memory");
	c[0] = 1;
	for (i = 1; i <= m; i++) {
		a = n + i;
		for (k = deg + a; k >= a; k--)
			c[k] -= c[k - a];
		deg += a;
		for (k = i; k <= deg; k++)
			c[k] += c[k - i];
		deg -= i;
	}
	for (k = 0; k <= deg; k++) {
		total += c[k];
		if (k <= u)
			below += c[k];
	}
	free(c);
	return fmin(1.0, 2.0 * (double)below / (double)total);
}

static void
mann_whitney(const double *x, int n1, const double *y, int n2, struct utest *t)
{
	int n = n1 + n2, i, j, k;
	struct obs *o = malloc(n * sizeof(*o));
	double r1 = 0, ties = 0, rank, u1, mu, var, z;

	if (!o)
		ff_die("out of memory");
	for (i = 0; i < n1; i++)
		o[i] = (struct obs){ x[i], 0 };
	for (i = 0; i < n2; i++)
		o[n1 + i] = (struct obs){ y[i], 1 };
	qsort(o, n, sizeof(*o), cmp_obs);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && o[j].v == o[i].v; j++)
			;
		rank = (i + 1 + j) / 2.0;	/* the midrank of positions i+1 .. j */
		for (k = i; k < j; k++)
			if (o[k].g == 0)
				r1 += rank;
		if (j - i > 1)
			ties += (double)(j - i) * (j - i) * (j - i) - (j - i);
	}
	free(o);
	u1 = r1 - n1 * (n1 + 1) / 2.0;
	t->u = fmin(u1, (double)n1 * n2 - u1);
	t->exact = ties == 0 && n <= 60;
	if (t->exact) {
		t->p = exact_p(n1, n2, t->u);
		return;
	}
	mu = n1 * (double)n2 / 2;
	var = n1 * (double)n2 / 12 * ((n + 1) - ties / ((double)n * (n - 1)));
	if (var <= 0) {
		t->p = 1;	/* every value the same */
		return;
	}
	z = (fabs(u1 - mu) - 0.5) / sqrt(var);
	t->p = z <= 0 ? 1 : fmin(1.0, erfc(z / M_SQRT2));
}

/* 2 / C(n1+n2, n1): the smallest two-sided p with these sample sizes. */
static double
min_p(int n1, int n2)
{
	double c = 1;
	int i;

	for (i = 1; i <= n1; i++)
		c = c * (n2 + i) / i;
	return 2 / c;
}

/* The fewest runs per side that can reach alpha. */
static int
need_runs(void)
{
	int k = 1;

	while (min_p(k, k) > ALPHA)
		k++;
	return k;
}

/* ff-bench compare */

struct cmp_row {
	const struct key *k;
	int m;
	struct stats base, new;
	struct utest t;
	double delta_pct;	/* NAN when the base median is 0 */
	int significant, too_few, worse, beyond;
	const char *verdict;
};

static struct {
	const char *format;	/* text, markdown */
	int json, threshold_set;
	double threshold;
} cmpopt = { "text", 0, 0, 0 };

static void
compare_row(const struct group *b, const struct group *n, int m, struct cmp_row *r)
{
	double *x, *y;
	int nx = group_values(b, m, &x), ny = group_values(n, m, &y);

	memset(r, 0, sizeof(*r));
	r->k = &b->k;
	r->m = m;
	mann_whitney(x, nx, y, ny, &r->t);
	stats_of(x, nx, &r->base);
	stats_of(y, ny, &r->new);
	free(x);
	free(y);
	r->delta_pct = r->base.median != 0 ?
		(r->new.median - r->base.median) / fabs(r->base.median) * 100 : NAN;
	r->too_few = min_p(nx, ny) > ALPHA;
	r->significant = !r->too_few && r->t.p < ALPHA;
	r->worse = metrics[m].higher_better ? r->new.median < r->base.median :
		   r->new.median > r->base.median;
	if (!r->significant)
		r->verdict = "~";
	else
		r->verdict = r->worse ? "worse" : "better";
	r->beyond = cmpopt.threshold_set && r->significant && r->worse &&
		    !isnan(r->delta_pct) && fabs(r->delta_pct) > cmpopt.threshold;
}

static int
group_has(const struct group *g, int m)
{
	double v;
	size_t i;
	json_t *rec;

	json_array_foreach(g->recs, i, rec)
		if (is_status(rec, "ok") && rec_value(rec, m, &v))
			return 1;
	return 0;
}

/* Environments: what each side ran on */

static const char *const env_fields[] = { "hostname", "kernel", "cpu_model", "os" };
static const char *const env_field_names[] = { "host", "kernel", "CPU", "OS" };

/* The distinct values of an environment field in a file (joined by " | ", static). */
static const char *
env_values(json_t *records, const char *fld, char *buf, size_t n)
{
	size_t i, len = 0;
	json_t *rec;
	const char *v;

	buf[0] = 0;
	json_array_foreach(records, i, rec) {
		v = ff_json_str(json_object_get(rec, "environment"), fld);
		if (!v)
			continue;
		if (len && strstr(buf, v))
			continue;
		len += snprintf(buf + len, len < n ? n - len : 0, "%s%s", len ? " | " : "", v);
	}
	return buf[0] ? buf : "unknown";
}

/* "3.2.0 (hash 0123...)" for the router a file's runs used. */
static const char *
router_str(json_t *records, char *buf, size_t n)
{
	const json_t *env = NULL, *e;
	size_t i;
	json_t *rec;
	const char *ver, *hash, *proton;

	json_array_foreach(records, i, rec) {
		e = json_object_get(rec, "environment");
		if (!strcmp(ff_json_str(json_object_get(rec, "config"), "relay"), "skrouterd") &&
		    is_status(rec, "ok") && json_is_object(e)) {
			env = e;
			break;
		}
	}
	if (!env)
		env = first_env(records);
	ver = ff_json_str(json_object_get(env, "skrouterd"), "version");
	hash = ff_json_str(env, "skrouterd_hash_fnv1a64");
	proton = ff_json_str(env, "proton_library");
	if (!proton)
		proton = ff_json_str(env, "proton_ldd");
	if (!ff_json_str(json_object_get(env, "skrouterd"), "path"))
		snprintf(buf, n, "skrouterd missing");
	else
		snprintf(buf, n, "skrouterd %s, hash %s, proton %s", ver ? ver : "version unknown",
			 hash ? hash : "unknown", proton ? proton : "unknown");
	return buf;
}

static void
emit_env_json(const char *side, const char *path, json_t *records)
{
	json_t *ev = ff_event("environment");
	char buf[2048];
	size_t i;

	json_object_set_new(ev, "side", json_string(side));
	json_object_set_new(ev, "file", json_string(path));
	json_object_set_new(ev, "skrouterd", json_string(router_str(records, buf, sizeof(buf))));
	for (i = 0; i < FF_ARRAY_SIZE(env_fields); i++)
		json_object_set_new(ev, env_fields[i],
				    json_string(env_values(records, env_fields[i], buf, sizeof(buf))));
	ff_emit(ev);
}

/* Prints the environments; returns how many fields differ. */
static int
compare_env(const char *bpath, json_t *base, const char *npath, json_t *new)
{
	char a[2048], b[2048];
	int i, ndiff = 0, md = !strcmp(cmpopt.format, "markdown");
	json_t *ev;

	if (cmpopt.json) {
		emit_env_json("base", bpath, base);
		emit_env_json("new", npath, new);
	} else if (md) {
		printf("| | base | new |\n| :-- | :-- | :-- |\n");
		printf("| file | `%s` | `%s` |\n", bpath, npath);
		printf("| router | %s | %s |\n", router_str(base, a, sizeof(a)), router_str(new, b, sizeof(b)));
	} else {
		printf("Environment\n");
		printf("  base  %s: %s\n", bpath, router_str(base, a, sizeof(a)));
		printf("  new   %s: %s\n", npath, router_str(new, a, sizeof(a)));
	}
	for (i = 0; i < (int)FF_ARRAY_SIZE(env_fields); i++) {
		env_values(base, env_fields[i], a, sizeof(a));
		env_values(new, env_fields[i], b, sizeof(b));
		if (cmpopt.json) {
			if (!strcmp(a, b))
				continue;
			ev = ff_event("environment_difference");
			json_object_set_new(ev, "field", json_string(env_fields[i]));
			json_object_set_new(ev, "base", json_string(a));
			json_object_set_new(ev, "new", json_string(b));
			ff_emit(ev);
		} else if (md)
			printf("| %s | %s | %s%s |\n", env_field_names[i], a, b,
			       strcmp(a, b) ? " **(differs)**" : "");
		else if (strcmp(a, b))
			printf("  %-6s DIFFERS: base '%s', new '%s'\n", env_field_names[i], a, b);
		else
			printf("  %-6s %s\n", env_field_names[i], a);
		ndiff += strcmp(a, b) != 0 || strstr(a, " | ") || strstr(b, " | ");
	}
	if (ndiff && !cmpopt.json)
		printf(md ? "\n> **Warning:** the runs were made on different machines or systems, so some\n"
			    "> differences may not be the router's.\n" :
		       "  warning: the runs were made on different machines or systems, so some\n"
		       "  differences may not be the router's\n");
	return ndiff;
}

static void
fmt_delta(double d, char *buf, size_t n)
{
	if (isnan(d))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%+.1f%%", d);
}

static void
emit_row_json(const struct cmp_row *r)
{
	json_t *ev = ff_event("comparison");

	json_object_set_new(ev, "workload", json_string(r->k->workload));
	json_object_set_new(ev, "relay", json_string(r->k->relay));
	json_object_set_new(ev, "protocol", json_string(r->k->protocol));
	json_object_set_new(ev, "jobs", json_integer(r->k->jobs));
	json_object_set_new(ev, "cpu_limit", json_integer(r->k->cpu_limit));
	json_object_set_new(ev, "duration_s", json_real(r->k->duration));
	json_object_set_new(ev, "metric", json_string(metrics[r->m].key));
	json_object_set_new(ev, "better", json_string(metrics[r->m].higher_better ? "higher" : "lower"));
	json_object_set_new(ev, "base_median", json_real(r->base.median));
	json_object_set_new(ev, "new_median", json_real(r->new.median));
	json_object_set_new(ev, "base_spread_pct", json_real(r->base.spread_pct));
	json_object_set_new(ev, "new_spread_pct", json_real(r->new.spread_pct));
	json_object_set_new(ev, "delta_pct", isnan(r->delta_pct) ? json_null() : json_real(r->delta_pct));
	json_object_set_new(ev, "u", json_real(r->t.u));
	json_object_set_new(ev, "p", json_real(r->t.p));
	json_object_set_new(ev, "method", json_string(r->t.exact ? "exact" : "normal"));
	json_object_set_new(ev, "n_base", json_integer(r->base.n));
	json_object_set_new(ev, "n_new", json_integer(r->new.n));
	json_object_set_new(ev, "significant", json_boolean(r->significant));
	json_object_set_new(ev, "too_few", json_boolean(r->too_few));
	json_object_set_new(ev, "verdict", json_string(r->verdict));
	json_object_set_new(ev, "regression", json_boolean(r->significant && r->worse));
	json_object_set_new(ev, "beyond_threshold", json_boolean(r->beyond));
	ff_emit(ev);
}

/* One table per metric, as benchstat prints one per unit, with its geomean. */
static void
compare_metric(int m, struct cmp_row *rows, int nrows, int *foot_few)
{
	struct table t = { 7, "lllrrrl", NULL, 0 };
	char base[128], new[128], delta[64], verdict[256];
	double lb = 0, ln = 0;
	int i, ngeo = 0, md = !strcmp(cmpopt.format, "markdown");
	const char *pm = md ? "±" : "+/-";

	trow(&t, 7, "Workload", "Relay", "Protocol", "Base", "New", "Delta", "Verdict");
	for (i = 0; i < nrows; i++) {
		struct cmp_row *r = &rows[i];

		if (cmpopt.json)
			emit_row_json(r);
		fmt_stats(&r->base, m, pm, base, sizeof(base));
		fmt_stats(&r->new, m, pm, new, sizeof(new));
		fmt_delta(r->delta_pct, delta, sizeof(delta));
		snprintf(verdict, sizeof(verdict), "%s%s%s (p=%.3f n=%d+%d)%s",
			 md && r->significant ? "**" : "", r->verdict,
			 md && r->significant ? "**" : "", r->t.p, r->base.n, r->new.n,
			 r->too_few ? (md ? " ¹" : " [1]") : "");
		if (r->too_few)
			*foot_few = 1;
		trow(&t, 7, r->k->workload, r->k->relay, r->k->protocol, base, new, delta, verdict);
		if (r->base.median > 0 && r->new.median > 0) {
			lb += log(r->base.median);
			ln += log(r->new.median);
			ngeo++;
		}
	}
	if (ngeo > 1) {
		lb = exp(lb / ngeo);
		ln = exp(ln / ngeo);
		metrics[m].fmt(lb, base, sizeof(base));
		metrics[m].fmt(ln, new, sizeof(new));
		fmt_delta((ln - lb) / lb * 100, delta, sizeof(delta));
		trow(&t, 7, md ? "*geomean*" : "geomean", "", "", base, new, delta, "");
		if (cmpopt.json) {
			json_t *ev = ff_event("geomean");

			json_object_set_new(ev, "metric", json_string(metrics[m].key));
			json_object_set_new(ev, "cases", json_integer(ngeo));
			json_object_set_new(ev, "base", json_real(lb));
			json_object_set_new(ev, "new", json_real(ln));
			json_object_set_new(ev, "delta_pct", json_real((ln - lb) / lb * 100));
			ff_emit(ev);
		}
	}
	if (!cmpopt.json) {
		if (md) {
			printf("\n#### %s (%s is better)\n\n", metrics[m].title,
			       metrics[m].higher_better ? "higher" : "lower");
			table_print_markdown(&t);
		} else {
			printf("\n%s (%s is better)\n\n", metrics[m].title,
			       metrics[m].higher_better ? "higher" : "lower");
			table_print(&t);
		}
	}
	table_free(&t);
}

static void
print_unmatched(const char *side, const struct group *g, int ng, const struct group *other, int no)
{
	int i, j, md = !strcmp(cmpopt.format, "markdown");
	json_t *ev;

	for (i = 0; i < ng; i++) {
		for (j = 0; j < no && !key_eq(&g[i].k, &other[j].k, 0); j++)
			;
		if (j < no)
			continue;
		if (cmpopt.json) {
			ev = ff_event("unmatched");
			json_object_set_new(ev, "side", json_string(side));
			json_object_set_new(ev, "workload", json_string(g[i].k.workload));
			json_object_set_new(ev, "relay", json_string(g[i].k.relay));
			json_object_set_new(ev, "protocol", json_string(g[i].k.protocol));
			json_object_set_new(ev, "jobs", json_integer(g[i].k.jobs));
			json_object_set_new(ev, "cpu_limit", json_integer(g[i].k.cpu_limit));
			json_object_set_new(ev, "duration_s", json_real(g[i].k.duration));
			ff_emit(ev);
		} else
			printf("%sonly in %s: %s %s %s (jobs %ld, CPU limit %ld, duration %g s)\n",
			       md ? "- " : "  ", side, g[i].k.workload, g[i].k.relay, g[i].k.protocol,
			       g[i].k.jobs, g[i].k.cpu_limit, g[i].k.duration);
	}
}

static int
compare_main(int argc, char *argv[])
{
	enum { OPT_THRESHOLD = 256, OPT_FORMAT, OPT_JSON };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const formats[] = { "text", "markdown", NULL };
	const char *bpath, *npath;
	json_t *base, *new;
	struct group *bg, *ng;
	struct cmp_row *rows;
	int nb, nn, i, j, m, nrows, c, foot_few = 0, beyond = 0, matched = 0, md;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1)
		switch (c) {
		case 'h':
			ff_usage(compare_usage, 0);
		case OPT_THRESHOLD:
			cmpopt.threshold = ff_parse_double(compare_usage, "--threshold", optarg, 0, 1e6);
			cmpopt.threshold_set = 1;
			break;
		case OPT_FORMAT:
			cmpopt.format = formats[ff_parse_name(compare_usage, "format", optarg, formats)];
			break;
		case OPT_JSON:
			cmpopt.json = 1;
			break;
		default:
			ff_bad_option(compare_usage, c, argv);
		}
	if (argc - optind < 2)
		ff_usage_error(compare_usage, "expected two results files, BASE and NEW");
	if (argc - optind > 2)
		ff_usage_error(compare_usage, "unexpected argument '%s'", argv[optind + 2]);
	if (cmpopt.json && strcmp(cmpopt.format, "text"))
		ff_usage_error(compare_usage, "--json and --format %s do not go together", cmpopt.format);
	md = !strcmp(cmpopt.format, "markdown");
	bpath = argv[optind];
	npath = argv[optind + 1];
	base = load_results(bpath);
	new = load_results(npath);
	nb = groups_of(base, 0, &bg);
	nn = groups_of(new, 0, &ng);

	if (cmpopt.json)
		ff_emit_start();
	else if (md)
		printf("### flimflam compare\n\n`%s` (base) against `%s` (new); two-sided Mann-Whitney U test, alpha %g\n\n",
		       bpath, npath, ALPHA);
	else
		printf("Comparing %s (base) with %s (new); two-sided Mann-Whitney U test, alpha %g\n\n",
		       bpath, npath, ALPHA);
	compare_env(bpath, base, npath, new);

	rows = calloc(nb + 1, sizeof(*rows));
	if (!rows)
		ff_die("out of memory");
	for (m = 0; m < M_NCMP; m++) {
		nrows = 0;
		for (i = 0; i < nb; i++) {
			for (j = 0; j < nn && !key_eq(&bg[i].k, &ng[j].k, 0); j++)
				;
			if (j == nn)
				continue;
			if (m == 0)
				matched++;
			if (!group_has(&bg[i], m) || !group_has(&ng[j], m))
				continue;
			compare_row(&bg[i], &ng[j], m, &rows[nrows]);
			if (rows[nrows].beyond)
				ff_warn("regression beyond %g%%: %s %s %s %s %+.1f%% (p=%.3f)",
					cmpopt.threshold, bg[i].k.workload, bg[i].k.relay,
					bg[i].k.protocol, metrics[m].key, rows[nrows].delta_pct,
					rows[nrows].t.p);
			beyond += rows[nrows].beyond;
			nrows++;
		}
		if (nrows)
			compare_metric(m, rows, nrows, &foot_few);
	}
	if (!cmpopt.json && (matched < nb || matched < nn))
		printf("\nCases not in both files:\n%s", md ? "\n" : "");
	print_unmatched("base", bg, nb, ng, nn);
	print_unmatched("new", ng, nn, bg, nb);
	if (!cmpopt.json) {
		int fb = 0, fn = 0;

		for (i = 0; i < nb; i++)
			fb += group_count(&bg[i], "failed");
		for (i = 0; i < nn; i++)
			fn += group_count(&ng[i], "failed");
		if (fb || fn)
			printf("\nFailed runs, not counted: %d in base, %d in new\n", fb, fn);
		if (foot_few)
			printf(md ? "\n¹ need >= %d runs per side to detect a difference at alpha level %g\n" :
			       "\n[1] need >= %d runs per side to detect a difference at alpha level %g\n",
			       need_runs(), ALPHA);
		if (cmpopt.threshold_set)
			printf("\n%s%d significant regression%s beyond the threshold of %g%%%s\n",
			       md ? "**" : "", beyond, beyond == 1 ? "" : "s", cmpopt.threshold,
			       md ? "**" : "");
	}
	free(rows);
	groups_free(bg, nb);
	groups_free(ng, nn);
	json_decref(base);
	json_decref(new);
	if (!matched) {
		if (cmpopt.json)
			ff_emit_end(1);
		ff_finish();
		ff_die("'%s' and '%s' have no case in common", bpath, npath);
	}
	if (cmpopt.json)
		ff_emit_end(beyond ? 1 : 0);
	if (ff_finish())
		return 1;
	if (beyond)
		ff_warn("%d significant regression%s beyond %g%%", beyond, beyond == 1 ? "" : "s",
			cmpopt.threshold);
	return beyond ? 1 : 0;
}

/* ff-bench: running the matrix */

struct bcase {
	const char *workload, *relay, *protocol;
	char skip[256];		/* why it is not run, or "" */
};

/*
 * A case that is not run: unsupported by the matrix (lacks NULL), or by the
 * skrouterd on PATH (lacks says what it lacks: "no HTTP adaptor").
 */
struct notrun {
	const char *workload, *relay, *protocol, *lacks;
};

static struct {
	const char *workloads[8], *relays[8], *protocols[8];
	int nw, nr, np;
	struct ff_run_opts run;
	long repeat;
	const char *output;
} opt = { { NULL }, { NULL }, { NULL }, 0, 0, 0, FF_RUN_OPTS_DEFAULTS, 1, NULL };

static char *flimflam;		/* the dispatcher beside us */
static json_t *records;
static json_t *bench_env;
static int progress_tty;
static double overhead_s = 2.0;	/* start and stop around the window, learnt as we go */
static int overhead_n;

/* A comma list of names: unknown, empty or repeated ones are usage errors. */
static int
parse_list(const char *what, const char *arg, const char *const names[], const char *out[])
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int n = 0, i, j;

	if (!copy)
		ff_die("out of memory");
	if (!*arg || arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
		ff_usage_error(usage, "empty %s name in '%s'", what, arg);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		i = ff_parse_name(usage, what, tok, names);
		for (j = 0; j < n; j++)
			if (out[j] == names[i])
				ff_usage_error(usage, "%s '%s' is given twice", what, tok);
		out[n++] = names[i];
	}
	free(copy);
	return n;
}

static int
all_names(const char *const names[], const char *out[])
{
	int n;

	for (n = 0; names[n]; n++)
		out[n] = names[n];
	return n;
}

static const char *
missing_program(const struct bcase *c)
{
	const char *need[3] = {
		ff_relay_program(c->relay), ff_workload_server_program(c->workload),
		ff_workload_client_program(c->workload)
	};
	char *p;
	int i;

	for (i = 0; i < 3; i++) {
		if (!need[i])
			continue;
		p = ff_which(need[i]);
		if (!p)
			return need[i];
		free(p);
	}
	return NULL;
}

/*
 * What the skrouterd at `path` lacks to carry `protocol`, from its schema
 * (read once per protocol), or NULL: it can, or its schema cannot be read,
 * and the run will say so.
 */
static const char *
router_lacks(const char *path, const char *protocol)
{
	static const char *lacks[8];
	static int known[8];
	char why[512];
	int i = ff_parse_name(usage, "protocol", protocol, ff_protocols);

	if (!known[i] && ff_skrouterd_can(path, protocol, NULL, &lacks[i], why, sizeof(why)) < 0)
		ff_debug("cannot tell whether skrouterd carries %s: %s", protocol, why);
	known[i] = 1;
	return lacks[i];
}

/* "w/r/p, ..." of the not-run cases whose `lacks` is `lacks` (NULL: the matrix's). */
static const char *
notrun_list(const struct notrun *nr, int n, const char *lacks, int *count)
{
	static char buf[2048];
	size_t len = 0;
	int i;

	buf[0] = 0;
	*count = 0;
	for (i = 0; i < n; i++) {
		if (nr[i].lacks != lacks)
			continue;
		++*count;
		if (len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len, "%s%s/%s/%s", len ? ", " : "",
					nr[i].workload, nr[i].relay, nr[i].protocol);
	}
	return buf;
}

/* Why nothing can run: the distinct reasons of the cases, "; "-separated. */
static void
nothing_to_run(const struct bcase *cases, int ncases, const struct notrun *nr, int nnot)
{
	char buf[1024] = "", one[300];
	int i;

	for (i = 0; i < ncases + nnot; i++) {
		if (i < ncases)
			snprintf(one, sizeof(one), "%s", cases[i].skip);
		else if (nr[i - ncases].lacks)
			snprintf(one, sizeof(one), "not supported by this skrouterd (%s)",
				 nr[i - ncases].lacks);
		else
			continue;
		if (!strstr(buf, one) && strlen(buf) + strlen(one) + 3 < sizeof(buf))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 buf[0] ? "; " : "", one);
	}
	ff_die("nothing to run: %s", buf);
}

static void
save_results(void)
{
	size_t i, len = 0, cap = 4096;
	char *text = malloc(cap), *line, *nt;
	json_t *rec;

	if (!text)
		ff_die("out of memory");
	text[0] = 0;
	json_array_foreach(records, i, rec) {
		line = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(10));
		if (!line)
			ff_die("out of memory");
		while (len + strlen(line) + 2 > cap) {
			nt = realloc(text, cap *= 2);
			if (!nt)
				ff_die("out of memory");
			text = nt;
		}
		len += sprintf(text + len, "%s\n", line);
		free(line);
	}
	/* Temp and rename: the file always holds whole lines of whole runs. */
	if (ff_write_file(opt.output, text, 0644) < 0)
		ff_die("the results so far could not be kept");
	free(text);
}

static json_t *
config_json(const struct bcase *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "workload", json_string(c->workload));
	json_object_set_new(o, "relay", json_string(c->relay));
	json_object_set_new(o, "protocol", json_string(c->protocol));
	json_object_set_new(o, "jobs", json_integer(opt.run.jobs));
	json_object_set_new(o, "warmup_s", json_integer(opt.run.warmup));
	json_object_set_new(o, "duration_s", json_integer(opt.run.duration));
	json_object_set_new(o, "cpu_limit", json_integer(opt.run.cpu_limit));
	if (ff_workload_is_rr(c->workload)) {
		json_object_set_new(o, "request_size", json_integer(opt.run.request_size));
		json_object_set_new(o, "response_size", json_integer(opt.run.response_size));
		json_object_set_new(o, "rate_per_s", opt.run.rate ? json_integer(opt.run.rate) : json_null());
	}
	return o;
}

static json_t *
new_record(const struct bcase *c, const char *status, const char *reason,
	   int repeat, const char *time)
{
	json_t *rec = ff_event("case");

	json_object_set_new(rec, "schema", json_integer(FF_SCHEMA));
	json_object_set_new(rec, "tool", json_string("ff-bench"));
	json_object_set_new(rec, "version", json_string(FF_VERSION));
	json_object_set_new(rec, "time", json_string(time));
	json_object_set_new(rec, "status", json_string(status));
	json_object_set_new(rec, "reason", reason ? json_string(reason) : json_null());
	json_object_set_new(rec, "config", config_json(c));
	json_object_set_new(rec, "repeat", json_integer(repeat));
	json_object_set_new(rec, "repeats", json_integer(opt.repeat));
	return rec;
}

/* Progress */

static void
live(const char *fmt, ...)
{
	char line[512];
	struct winsize ws;
	int n, width = 80;
	va_list ap;

	if (!progress_tty)
		return;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		width = ws.ws_col;
	memcpy(line, "\r\033[K", 4);
	va_start(ap, fmt);
	n = vsnprintf(line + 4, sizeof(line) - 4, fmt, ap);
	va_end(ap);
	if (n > width - 1)
		n = width - 1;
	if (n > (int)sizeof(line) - 5)
		n = sizeof(line) - 5;
	if (n < 0)
		n = 0;
	if (write(2, line, 4 + n) < 0) {
		/* nowhere to show it */
	}
}

static void
live_clear(void)
{
	if (progress_tty && write(2, "\r\033[K", 4) < 0) {
		/* nowhere to show it */
	}
}

static const char *
clock_str(double s)
{
	static char buf[32];
	long t = s < 0 ? 0 : (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, sizeof(buf), "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, sizeof(buf), "%ld:%02ld", t / 60, t % 60);
	return buf;
}

static double
run_estimate(void)
{
	return opt.run.warmup + opt.run.duration + overhead_s;
}

/* Why a run failed, from its stderr: the last word of a stage, else of flimflam. */
static char *
reason_from_log(const char *err, char *run_dir, size_t n)
{
	char *text = strdup(err), *line, *save = NULL, *stage = NULL, *top = NULL, *p, *q;

	if (!text)
		ff_die("out of memory");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "ff-", 3) && !strstr(line, "retrying"))
			stage = line;
		else if (!strncmp(line, "flimflam: ", 10)) {
			if ((p = strstr(line, "its files are in '")) && (q = strrchr(p + 18, '\'')) && !run_dir[0])
				snprintf(run_dir, n, "%.*s", (int)(q - (p + 18)), p + 18);
			if (!strstr(line, "the run failed"))
				top = line;
		}
	}
	p = stage ? strdup(stage) : top ? strdup(top) : NULL;
	free(text);
	return p;
}

/* A run's stderr: whole up to 1 MiB, else its first half MiB and its newest. */
#define ERR_MAX (1 << 20)

struct errbuf {
	char *text;
	size_t len, cap;
	int eof;
};

static void
errbuf_read(struct errbuf *e, int fd)
{
	char buf[65536];
	ssize_t r = read(fd, buf, sizeof(buf));
	size_t keep;

	if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
		e->eof = 1;
	if (r <= 0)
		return;
	while (e->len + r + 1 > e->cap && e->cap < ERR_MAX) {
		e->cap = e->cap ? 2 * e->cap : 8192;
		if (!(e->text = realloc(e->text, e->cap)))
			ff_die("out of memory");
	}
	if (e->len + r + 1 > e->cap) {
		keep = e->cap / 2 - r - 1;
		memmove(e->text + e->cap / 2, e->text + e->len - keep, keep);
		e->len = e->cap / 2 + keep;
	}
	memcpy(e->text + e->len, buf, r);
	e->len += r;
	e->text[e->len] = 0;
}

/* The last `lines` lines of s. */
static const char *
tail_lines(const char *s, size_t len, int lines)
{
	const char *p = s + len;

	while (p > s && p[-1] == '\n')
		p--;
	while (p > s && !(p[-1] == '\n' && --lines == 0))
		p--;
	return p;
}

enum phase { STARTING, WARMUP, MEASURING, STOPPING };
static const char *const phase_names[] = { "starting", "warming up", "measuring", "stopping" };

/*
 * One run of a case: `flimflam run --json` as a child, its events read as
 * they come. Returns the record, or NULL when a signal stopped it.
 */
static json_t *
run_case(const struct bcase *c, int repeat, int k, int n)
{
	char jobs[24], warmup[24], duration[24], cpu[24], errpath[64], logpath[PATH_MAX + 32] = "";
	char started[32], run_dir[PATH_MAX] = "", reasonbuf[512], *reason = NULL, caseid[128];
	char *argv[24] = {
		flimflam, "run", "--json", "-w", (char *)c->workload, "-r", (char *)c->relay,
		"-p", (char *)c->protocol, "--jobs", jobs, "--warmup", warmup,
		"--duration", duration, "--cpu-limit", cpu, NULL
	}, rrbuf[3][24];
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	struct ff_child child;
	struct ff_reader rd;
	json_t *result = NULL, *resources = NULL, *topology = NULL, *environment = NULL;
	json_t *errors = json_array(), *ev, *rec;
	enum phase phase = STARTING;
	struct errbuf err = { NULL, 0, 0, 0 };
	double t0, t_phase, now, deadline, elapsed, left, v;
	int fds[2], efds[2], sig = 0, timed_out = 0, ok;

	snprintf(jobs, sizeof(jobs), "%ld", opt.run.jobs);
	snprintf(warmup, sizeof(warmup), "%ld", opt.run.warmup);
	snprintf(duration, sizeof(duration), "%ld", opt.run.duration);
	snprintf(cpu, sizeof(cpu), "%ld", opt.run.cpu_limit);
	if (ff_workload_is_rr(c->workload))
		ff_rr_opts_argv(&opt.run, argv + 17, rrbuf);	/* after --cpu-limit */
	snprintf(caseid, sizeof(caseid), "%s: [%d/%d] %s %s %s", ff_prog(), k, n, c->workload,
		 c->relay, c->protocol);
	if (opt.repeat > 1)
		snprintf(caseid + strlen(caseid), sizeof(caseid) - strlen(caseid),
			 " (run %d of %ld)", repeat, opt.repeat);
	snprintf(started, sizeof(started), "%s", ff_iso_time());
	if (pipe2(fds, O_CLOEXEC) < 0 || pipe2(efds, O_CLOEXEC) < 0)
		ff_die("cannot create a pipe: %s", strerror(errno));
	/*
	 * stdout: the events. stderr: a pipe too, kept in memory and written
	 * into the run's directory at the end. ff_spawn opens `log` in the
	 * child before exec, where /proc/self/fd/N is still our pipe.
	 */
	snprintf(errpath, sizeof(errpath), "/proc/self/fd/%d", efds[1]);
	o.out_fd = fds[1];
	o.log = errpath;
	t0 = t_phase = ff_now();
	if (ff_spawn(&child, "flimflam run", argv, &o) < 0) {
		close(fds[0]);
		close(fds[1]);
		close(efds[0]);
		close(efds[1]);
		rec = new_record(c, "failed", "cannot start flimflam", repeat, started);
		json_object_set_new(rec, "run_dir", json_null());
		json_decref(errors);
		return rec;
	}
	close(fds[1]);
	close(efds[1]);
	rd = (struct ff_reader)FF_READER_INIT(fds[0], "flimflam run");
	/* A run that hangs is stopped: its window plus two minutes is plenty. */
	deadline = t0 + opt.run.warmup + opt.run.duration + 120;
	for (;;) {
		struct pollfd pfd[3] = {
			{ ff_signal_fd(), POLLIN, 0 }, { fds[0], POLLIN, 0 },
			{ err.eof ? -1 : efds[0], POLLIN, 0 }
		};
		ssize_t r;

		poll(pfd, 3, progress_tty ? 250 : 1000);
		if (pfd[2].revents)
			errbuf_read(&err, efds[0]);
		now = ff_now();
		if (ff_signalled() && !sig) {
			/* flimflam stops its pipeline in order and exits 128+n. */
			sig = ff_signalled();
			kill(child.pid, sig);
			deadline = now + 15;
		}
		if (now > deadline) {
			if (sig || timed_out) {
				ff_child_stop(&child, 1);
				break;
			}
			timed_out = 1;
			kill(child.pid, SIGTERM);
			deadline = now + 15;
		}
		if (pfd[1].revents) {
			r = ff_reader_fill(&rd);
			while ((ev = ff_reader_next(&rd))) {
				const char *name = ff_event_name(ev), *s;

				if ((s = ff_json_str(ev, "run_dir")) && !run_dir[0])
					snprintf(run_dir, sizeof(run_dir), "%s", s);
				if (!strcmp(name, "topology")) {
					phase = WARMUP;
					t_phase = now;
					json_decref(topology);
					topology = json_incref(ev);
				} else if (!strcmp(name, "window")) {
					phase = MEASURING;
					t_phase = now;
				} else if (!strcmp(name, "result")) {
					phase = STOPPING;
					json_decref(result);
					result = json_incref(ev);
				} else if (!strcmp(name, "resources")) {
					json_decref(resources);
					resources = json_incref(ev);
				} else if (!strcmp(name, "environment")) {
					json_decref(environment);
					environment = json_incref(ev);
				} else if (!strcmp(name, "error")) {
					snprintf(reasonbuf, sizeof(reasonbuf), "%s: %s",
						 ff_json_str(ev, "program") ? ff_json_str(ev, "program") : "flimflam",
						 ff_json_str(ev, "message") ? ff_json_str(ev, "message") : "error");
					json_array_append_new(errors, json_string(reasonbuf));
				}
				json_decref(ev);
			}
			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
				break;
		}
		left = phase == STARTING ? opt.run.warmup + opt.run.duration :
		       phase == WARMUP ? opt.run.warmup - (now - t_phase) + opt.run.duration :
		       phase == MEASURING ? opt.run.duration - (now - t_phase) : 0;
		if (left < 0)
			left = 0;
		live("%s: %s, %.0f s left; bench ETA %s", caseid,
		     sig ? "stopping" : phase_names[phase], left,
		     clock_str(left + (phase == STOPPING ? 0.5 : overhead_s / 2) +
			       (n - k) * run_estimate()));
	}
	close(fds[0]);
	ff_reader_free(&rd);
	if (!ff_child_wait(&child, 15))
		ff_child_stop(&child, 1);
	elapsed = ff_now() - t0;
	/* The rest of stderr; a straggler holding the pipe gets 2 s. */
	for (now = ff_now(); !err.eof && ff_now() - now < 2;) {
		struct pollfd pfd = { efds[0], POLLIN, 0 };

		if (poll(&pfd, 1, 200) > 0)
			errbuf_read(&err, efds[0]);
	}
	close(efds[0]);
	live_clear();
	if (sig) {
		free(err.text);
		json_decref(result);
		json_decref(resources);
		json_decref(topology);
		json_decref(environment);
		json_decref(errors);
		return NULL;
	}

	ok = !timed_out && WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0 && result;
	if (!ok) {
		char *why = reason_from_log(err.text ? err.text : "", run_dir, sizeof(run_dir));

		if (timed_out)
			snprintf(reasonbuf, sizeof(reasonbuf), "no end after %.0f s; stopped", elapsed);
		else if (json_array_size(errors))
			snprintf(reasonbuf, sizeof(reasonbuf), "%s", json_string_value(json_array_get(errors, 0)));
		else if (why)
			snprintf(reasonbuf, sizeof(reasonbuf), "%s", why);
		else if (WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0)
			snprintf(reasonbuf, sizeof(reasonbuf), "the run gave no result");
		else
			snprintf(reasonbuf, sizeof(reasonbuf), "flimflam run %s", ff_child_how(&child));
		free(why);
		reason = reasonbuf;
	} else {
		overhead_s = (overhead_s * overhead_n + (elapsed - opt.run.warmup - opt.run.duration)) / (overhead_n + 1);
		overhead_n++;
	}
	rec = new_record(c, ok ? "ok" : "failed", reason, repeat, started);
	json_object_set_new(rec, "elapsed_s", json_real(elapsed));
	json_object_set_new(rec, "exit_status", WIFEXITED(child.status) ?
			    json_integer(WEXITSTATUS(child.status)) : json_null());
	json_object_set_new(rec, "run_dir", run_dir[0] ? json_string(run_dir) : json_null());
	if (run_dir[0] && err.len) {
		snprintf(logpath, sizeof(logpath), "%s/flimflam-run.log", run_dir);
		if (access(run_dir, W_OK) < 0 || ff_write_file(logpath, err.text, 0600) < 0)
			logpath[0] = 0;
	}
	json_object_set_new(rec, "log", logpath[0] ? json_string(logpath) : json_null());
	json_object_set_new(rec, "stderr_tail", !ok && err.len ?
			    json_string(tail_lines(err.text, err.len, 20)) : json_null());
	free(err.text);
	if (result)
		json_object_del(result, "event");
	if (resources)
		json_object_del(resources, "event");
	if (topology)
		json_object_del(topology, "event");
	if (environment)
		json_object_del(environment, "event");
	json_object_set_new(rec, "result", result ? result : json_null());
	json_object_set_new(rec, "resources", resources ? resources : json_null());
	json_object_set_new(rec, "topology", topology ? topology : json_null());
	json_object_set_new(rec, "capture", json_null());
	json_object_set_new(rec, "environment", environment ? environment : json_incref(bench_env));
	json_object_set_new(rec, "errors", errors);

	if (ok) {
		char bits[64] = "-", ops[64] = "";

		if (num(result, "bits_per_s", &v))
			fmt_si(v, bits, sizeof(bits));
		if (num(result, "ops_per_s", &v)) {
			snprintf(ops, sizeof(ops), ", ");
			fmt_si(v, ops + 2, sizeof(ops) - 2);
			strcat(ops, " ops/s");
		}
		ff_say("%s: %s bits/s%s (%.1f s)\n", caseid, bits, ops, elapsed);
	} else if (run_dir[0] && !strstr(reason, run_dir))
		ff_say("%s: failed: %s (run directory %s)\n", caseid, reason, run_dir);
	else
		ff_say("%s: failed: %s\n", caseid, reason);
	return rec;
}

static int
bench_main(int argc, char *argv[])
{
	enum { OPT_REPEAT = FF_OPT_OWN, OPT_OUTPUT };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "workloads", required_argument, NULL, 'w' },
		{ "relays", required_argument, NULL, 'r' },
		{ "protocols", required_argument, NULL, 'p' },
		FF_RUN_LONGOPTS,
		{ "repeat", required_argument, NULL, OPT_REPEAT },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ NULL, 0, NULL, 0 }
	};
	struct bcase cases[8 * 8 * 8];
	struct notrun notrun[8 * 8 * 8] = { { NULL, NULL, NULL, NULL } };
	char outbuf[PATH_MAX], dir[PATH_MAX], why[512], *slash, *p, *skrouterd = NULL;
	const char *miss, *lacks, *list;
	int ncases = 0, nnot = 0, nunsup, nlacks = 0, nrun = 0, w, r, pr, c, k = 0, rep, failed = 0,
	    done = 0, ncpus, sig;
	cpu_set_t avail;
	struct stat st;
	json_t *rec;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":hw:r:p:", longopts, NULL)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case 'w':
			opt.nw = parse_list("workload", optarg, ff_workloads, opt.workloads);
			break;
		case 'r':
			opt.nr = parse_list("relay", optarg, ff_relays, opt.relays);
			break;
		case 'p':
			opt.np = parse_list("protocol", optarg, ff_protocols, opt.protocols);
			break;
		case OPT_REPEAT:
			opt.repeat = ff_parse_long(usage, "--repeat", optarg, 1, 10000);
			break;
		case OPT_OUTPUT:
			if (!*optarg)
				ff_usage_error(usage, "--output: expected a file name");
			opt.output = optarg;
			break;
		default:
			if (!ff_take_run_opt(usage, c, optarg, &opt.run))
				ff_bad_option(usage, c, argv);
		}
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (!opt.nw)
		opt.nw = all_names(ff_workloads, opt.workloads);
	if (!opt.nr)
		opt.nr = all_names(ff_relays, opt.relays);
	if (!opt.np)
		opt.np = all_names(ff_protocols, opt.protocols);
	if (ff_rr_opts_set(&opt.run)) {
		for (w = 0; w < opt.nw && !ff_workload_is_rr(opt.workloads[w]); w++)
			;
		if (w == opt.nw)
			ff_usage_error(usage, "--request-size, --response-size and --rate are for workloads builtin-rr and builtin-crr, and none is selected");
	}
	ncpus = ff_cpus_available(&avail);
	if (opt.run.cpu_limit > ncpus)
		ff_usage_error(usage, "--cpu-limit: %ld is more than the %d CPUs this process may use",
			       opt.run.cpu_limit, ncpus);

	for (w = 0; w < opt.nw; w++)
		for (r = 0; r < opt.nr; r++)
			for (pr = 0; pr < opt.np; pr++) {
				struct bcase *bc = &cases[ncases];

				bc->workload = opt.workloads[w];
				bc->relay = opt.relays[r];
				bc->protocol = opt.protocols[pr];
				bc->skip[0] = 0;
				if (!ff_combo_ok(bc->workload, bc->relay, bc->protocol)) {
					notrun[nnot++] = (struct notrun){ bc->workload, bc->relay, bc->protocol, NULL };
					continue;
				}
				if ((miss = missing_program(bc)))
					snprintf(bc->skip, sizeof(bc->skip), "%s not on PATH", miss);
				else if (!strcmp(bc->relay, "skrouterd") &&
					 (skrouterd || (skrouterd = ff_which("skrouterd"))) &&
					 (lacks = router_lacks(skrouterd, bc->protocol))) {
					/* What this router cannot carry is unsupported here, not a failure. */
					notrun[nnot++] = (struct notrun){ bc->workload, bc->relay, bc->protocol, lacks };
					nlacks++;
					continue;
				} else
					nrun++;
				ncases++;
			}
	free(skrouterd);
	list = notrun_list(notrun, nnot, NULL, &nunsup);
	if (!ncases && !nlacks)
		ff_usage_error(usage, "none of these combinations is supported: %s", list);
	if (!nrun)
		nothing_to_run(cases, ncases, notrun, nnot);

	if (!opt.output) {
		time_t t = time(NULL);
		struct tm tm;
		int i;

		localtime_r(&t, &tm);
		strftime(outbuf, sizeof(outbuf), "flimflam-bench-%Y%m%d-%H%M%S", &tm);
		p = outbuf + strlen(outbuf);
		strcpy(p, ".jsonl");
		for (i = 2; stat(outbuf, &st) == 0; i++)
			sprintf(p, "-%d.jsonl", i);
		opt.output = outbuf;
	}
	snprintf(dir, sizeof(dir), "%s", opt.output);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	else
		strcpy(dir, ".");
	/* Tried, not access(2): root passes that even on /proc. */
	if (ff_dir_writable(dir, 1 << 20, why, sizeof(why)) < 0)
		ff_die("cannot keep the results in '%s': %s", opt.output, why);
	if (stat(opt.output, &st) == 0 && S_ISDIR(st.st_mode))
		ff_die("cannot keep the results in '%s': it is a directory", opt.output);

	flimflam = ff_helper_path("flimflam");
	if (!strchr(flimflam, '/')) {
		p = ff_which(flimflam);
		free(flimflam);
		if (!p)
			ff_die("cannot find flimflam beside ff-bench nor on PATH");
		flimflam = p;
	}
	ff_signals_init();
	ff_set_cleanup(ff_children_stop_all);
	progress_tty = isatty(2) && ff_verbosity >= 0;
	records = json_array();
	/*
	 * Every run makes a run directory, and making one prunes the oldest
	 * beyond $FLIMFLAM_KEEP_RUNS: room for this bench's own, so the run
	 * directories its table names are still there at its end.
	 */
	{
		const char *v = getenv("FLIMFLAM_KEEP_RUNS");
		long keep = v && *v ? strtol(v, NULL, 10) : 20;
		char buf[32];

		if (keep > 0) {
			snprintf(buf, sizeof(buf), "%ld", keep + nrun * opt.repeat);
			setenv("FLIMFLAM_KEEP_RUNS", buf, 1);
		}
	}
	bench_env = ff_env_collect();

	/* The environment first, so it is on screen while the bench runs. */
	for (w = 0; w < ncases; w++)
		json_array_append_new(records, new_record(&cases[w], "skipped", NULL, 1, ""));
	print_env(bench_env, progs_for(records));
	fflush(stdout);
	json_array_clear(records);

	for (w = 0; w < ncases; w++) {
		if (!cases[w].skip[0])
			continue;
		rec = new_record(&cases[w], "skipped", cases[w].skip, 1, ff_iso_time());
		json_object_set_new(rec, "environment", json_incref(bench_env));
		json_array_append_new(records, rec);
		ff_say("%s: skipping %s %s %s: %s\n", ff_prog(), cases[w].workload, cases[w].relay,
		       cases[w].protocol, cases[w].skip);
	}
	if (json_array_size(records))
		save_results();
	ff_say("%s: %ld run%s (%d case%s x %ld), about %s; results go to '%s'\n", ff_prog(),
	       nrun * opt.repeat, nrun * opt.repeat == 1 ? "" : "s", nrun, nrun == 1 ? "" : "s",
	       opt.repeat, clock_str(nrun * opt.repeat * run_estimate()), opt.output);

	/* Round-robin: drift on a noisy machine spreads over every case. */
	for (rep = 1; rep <= opt.repeat && !ff_signalled(); rep++)
		for (w = 0; w < ncases && !ff_signalled(); w++) {
			if (cases[w].skip[0])
				continue;
			rec = run_case(&cases[w], rep, ++k, nrun * opt.repeat);
			if (!rec)
				break;
			failed += is_status(rec, "failed");
			done++;
			json_array_append_new(records, rec);
			save_results();
		}

	if (json_array_size(records))
		print_results(records);
	else
		printf("\nBenchmark results\n\nno run finished\n");
	list = notrun_list(notrun, nnot, NULL, &nunsup);
	if (nunsup)
		printf("\nNot run: %d unsupported combination%s%s%s%s\n", nunsup, nunsup == 1 ? "" : "s",
		       ff_verbosity > 0 ? " (" : "", ff_verbosity > 0 ? list : "",
		       ff_verbosity > 0 ? ")" : "");
	/* The router's: bench asks for no encapsulation, so it can only lack the HTTP adaptor. */
	for (w = 0; w < nnot && !notrun[w].lacks; w++)
		;
	if (w < nnot) {
		list = notrun_list(notrun, nnot, notrun[w].lacks, &c);
		printf("%sNot run: %d case%s not supported by this skrouterd (%s): %s\n",
		       nunsup ? "" : "\n", c, c == 1 ? "" : "s", notrun[w].lacks, list);
	}
	if (json_array_size(records))
		printf("\nResults: %s\n", opt.output);
	if ((sig = ff_signalled())) {
		ff_finish();
		ff_children_stop_all();
		ff_warn("stopped by %s after %d of %ld runs; %s", sig == SIGINT ? "SIGINT" :
			sig == SIGHUP ? "SIGHUP" : "SIGTERM", done, nrun * opt.repeat,
			json_array_size(records) ? "the results so far are kept" : "no run finished");
		exit(128 + sig);
	}
	if (failed)
		ff_warn("%d of %ld runs failed", failed, nrun * opt.repeat);
	if (ff_finish())
		return 1;
	return failed ? 1 : 0;
}

/*
 * ff-bench MODE, or flimflam's command: "flimflam bench" (then also
 * "flimflam bench compare") or "flimflam compare" in argv[0].
 */
static int
run_mode(int argc, char *argv[], const char *mode, int (*fn)(int, char *[]))
{
	static char prog[64], self[64];

	if (!strcmp(ff_prog(), "flimflam bench")) {
		snprintf(prog, sizeof(prog), "flimflam bench %s", mode);
		ff_setprog(prog);
	}
	snprintf(self, sizeof(self), "ff-bench %s", mode);
	ff_usage_self(self);
	return fn(argc - 1, argv + 1);
}

int
main(int argc, char *argv[])
{
	ff_setprog(argv[0]);
	ff_usage_self("ff-bench");
	opterr = 0;
	if (argc > 1 && !strcmp(argv[1], "summarize"))
		return run_mode(argc, argv, "summarize", summarize_main);
	if (argc > 1 && !strcmp(argv[1], "compare"))
		return run_mode(argc, argv, "compare", compare_main);
	return bench_main(argc, argv);
}
