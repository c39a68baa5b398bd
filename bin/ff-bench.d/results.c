/*
 * ff-bench's results: the values a record holds, the runs grouped by case,
 * and results files read as streams and checked line by line.
 */
#include "ff-bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>

int
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

/* Results records */

int
is_status(const json_t *rec, const char *status)
{
	const char *s = ff_json_str(rec, "status");

	return s && !strcmp(s, status);
}

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
	k->tls = json_is_true(json_object_get(c, "tls"));
}

/* compare's match leaves warmup out, as the issue that asked for it says. */
int
key_eq(const struct key *a, const struct key *b, int with_warmup)
{
	return !strcmp(a->workload, b->workload) && !strcmp(a->relay, b->relay) &&
	       !strcmp(a->protocol, b->protocol) && a->jobs == b->jobs &&
	       a->cpu_limit == b->cpu_limit && a->duration == b->duration &&
	       a->request_size == b->request_size && a->response_size == b->response_size &&
	       a->rate == b->rate && a->tls == b->tls && (!with_warmup || a->warmup == b->warmup);
}

/* The environment fields compare shows, and their names there (ff-bench.h). */
const char *const env_fields[] = { "hostname", "kernel", "cpu_model", "os" };
const char *const env_field_names[] = { "host", "kernel", "CPU", "OS" };
_Static_assert(FF_ARRAY_SIZE(env_fields) == N_ENV_FIELDS, "env_fields");

static size_t
key_hash(const struct key *k, int with_warmup)
{
	uint64_t h = 14695981039346656037ULL;
	const char *s[3] = { k->workload, k->relay, k->protocol };
	double d[8] = { k->jobs, k->cpu_limit, k->duration, with_warmup ? k->warmup : 0,
			k->request_size, k->response_size, k->rate, k->tls };
	const unsigned char *p;
	size_t i, j;

	for (i = 0; i < 3; i++)
		for (p = (const unsigned char *)s[i]; ; p++) {
			h = (h ^ *p) * 1099511628211ULL;
			if (!*p)
				break;
		}
	for (i = 0; i < FF_ARRAY_SIZE(d); i++) {
		if (d[i] == 0)
			d[i] = 0;	/* -0 is 0, as key_eq has it */
		p = (const unsigned char *)&d[i];
		for (j = 0; j < sizeof(d[i]); j++)
			h = (h ^ p[j]) * 1099511628211ULL;
	}
	return (size_t)h;
}

/* The group of a key, made when new. */
static struct group *
results_group(struct results *r, const struct key *k)
{
	size_t i, mask;
	struct group *g;
	int j;

	if ((size_t)(r->ng + 1) * 2 > r->nslot) {
		free(r->slot);
		r->nslot = r->nslot ? r->nslot * 2 : 64;
		r->slot = calloc(r->nslot, sizeof(*r->slot));
		if (!r->slot)
			ff_die("out of memory");
		for (j = 0; j < r->ng; j++) {
			mask = r->nslot - 1;
			for (i = key_hash(&r->g[j].k, r->with_warmup) & mask; r->slot[i]; i = (i + 1) & mask)
				;
			r->slot[i] = j + 1;
		}
	}
	mask = r->nslot - 1;
	for (i = key_hash(k, r->with_warmup) & mask; r->slot[i]; i = (i + 1) & mask)
		if (key_eq(&r->g[r->slot[i] - 1].k, k, r->with_warmup))
			return &r->g[r->slot[i] - 1];
	if (r->ng == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->g = ff_realloc(r->g, r->cap * sizeof(*r->g));
	}
	g = &r->g[r->ng];
	memset(g, 0, sizeof(*g));
	g->k = *k;
	g->k.workload = ff_strdup(k->workload);
	g->k.relay = ff_strdup(k->relay);
	g->k.protocol = ff_strdup(k->protocol);
	g->order = r->ng;
	r->slot[i] = ++r->ng;
	return g;
}

/* Add an environment field's value to the distinct ones. */
static void
env_value_add(char *buf, size_t n, const char *v)
{
	size_t len = strlen(buf);

	if (!v || (len && strstr(buf, v)))
		return;
	snprintf(buf + len, len < n ? n - len : 0, "%s%s", len ? " | " : "", v);
}

/* Take what the statistics need of a (checked) case record. */
static void
results_add(struct results *r, const json_t *rec)
{
	const json_t *env = json_object_get(rec, "environment");
	const char *st = ff_json_str(rec, "status");
	struct group *g;
	struct run *run;
	struct key k;
	int m, i;

	rec_key(rec, &k);
	g = results_group(r, &k);
	if (g->nruns == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 4;
		g->runs = ff_realloc(g->runs, g->cap * sizeof(*g->runs));
	}
	run = &g->runs[g->nruns++];
	memset(run, 0, sizeof(*run));
	run->status = !strcmp(st, "ok") ? 'o' : !strcmp(st, "failed") ? 'f' : 's';
	run->repeat = (long)ff_json_num(rec, "repeat", 0);
	if (run->status == 'o') {
		for (m = 0; m < M_N; m++)
			if (rec_value(rec, m, &run->v[m]))
				run->have |= 1u << m;
	} else {
		run->reason = ff_strdup(ff_json_str(rec, "reason"));
		run->run_dir = ff_strdup(ff_json_str(rec, "run_dir"));
	}
	if (!json_is_object(env))
		return;
	if (!r->env)
		r->env = json_incref((json_t *)env);
	if (!r->router_env && run->status == 'o' && !strcmp(k.relay, "skrouterd"))
		r->router_env = json_incref((json_t *)env);
	for (i = 0; i < N_ENV_FIELDS; i++)
		env_value_add(r->envv[i], sizeof(r->envv[i]), ff_json_str(env, env_fields[i]));
}

void
results_free(struct results *r)
{
	int i, j;

	for (i = 0; i < r->ng; i++) {
		for (j = 0; j < r->g[i].nruns; j++) {
			free(r->g[i].runs[j].reason);
			free(r->g[i].runs[j].run_dir);
		}
		free(r->g[i].runs);
		free((char *)r->g[i].k.workload);
		free((char *)r->g[i].k.relay);
		free((char *)r->g[i].k.protocol);
	}
	free(r->g);
	free(r->slot);
	json_decref(r->env);
	json_decref(r->router_env);
	memset(r, 0, sizeof(*r));
}

/* The results of records in memory (a bench's own). */
void
results_of(json_t *records, int with_warmup, struct results *r)
{
	size_t i;
	json_t *rec;

	memset(r, 0, sizeof(*r));
	r->with_warmup = with_warmup;
	json_array_foreach(records, i, rec)
		results_add(r, rec);
}

const char *
status_name(char status)
{
	return status == 'o' ? "ok" : status == 'f' ? "failed" : "skipped";
}

/* The values of a metric over the successful runs of a case. */
int
group_values(const struct group *g, int m, double **out)
{
	double *v = calloc(g->nruns + 1, sizeof(*v));
	int n = 0, i;

	if (!v)
		ff_die("out of memory");
	for (i = 0; i < g->nruns; i++)
		if (g->runs[i].status == 'o' && (g->runs[i].have & (1u << m)))
			v[n++] = g->runs[i].v[m];
	*out = v;
	return n;
}

/* The statistics of a metric over the successful runs of a case. */
void
group_stats(const struct group *g, int m, struct stats *s)
{
	double *v;
	int n = group_values(g, m, &v);

	stats_of(v, n, s);
	free(v);
}

int
group_count(const struct group *g, char status)
{
	int n = 0, i;

	for (i = 0; i < g->nruns; i++)
		n += g->runs[i].status == status;
	return n;
}

int
group_has(const struct group *g, int m)
{
	int i;

	for (i = 0; i < g->nruns; i++)
		if (g->runs[i].status == 'o' && (g->runs[i].have & (1u << m)))
			return 1;
	return 0;
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
	  struct results *r)
{
	json_error_t jerr;
	json_t *rec;
	char err[512];

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
		if (record_check(rec, err, sizeof(err)) < 0)
			ff_die("%s:%ld: %s", name, line, err);
		results_add(r, rec);
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
				take_line(name, ++lineno, line, len, 1, r);
				len = 0;
				p++;
			}
		}
	}
	if (len)
		take_line(name, ++lineno, line, len, 0, r);
	if (fd != 0)
		close(fd);
	free(line);
	free(chunk);
	if (total == 0)
		ff_die("%s: the file is empty (expected bench results, one JSON object per line)", name);
	if (!r->ng)
		ff_die("%s: no bench results in the file (no line has \"event\":\"case\")", name);
}
