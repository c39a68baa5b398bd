/*
 * Series out of the database: the runs of one case, build label, label and
 * machine, in order of time, and one metric; each with its change points
 * and the newest point's verdict (detect.c). Also what the modes share:
 * the filter options, the direction and the format of a metric, a series
 * as JSON.
 */
#include "ff-history.h"

#include <math.h>
#include <string.h>

int
filter_opt(int c, const char *arg, struct filter *f, const char **db)
{
	switch (c) {
	case 'w': f->workload = arg; return 1;
	case 'r': f->relay = arg; return 1;
	case 'p': f->protocol = arg; return 1;
	case OPT_LABEL: f->label = arg; return 1;
	case OPT_HOST: f->host = arg; return 1;
	case OPT_METRIC:
		f->all_metrics = !strcmp(arg, "all");
		f->metric = f->all_metrics ? NULL : arg;
		return 1;
	case OPT_DB: *db = arg; return 1;
	}
	return 0;
}

static int
ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* Throughput and work done: higher is better; latency, CPU, memory, errors, stalls: lower. */
int
metric_higher_better(const char *name)
{
	static const char *const more[] = { "bytes", "bits", "operations", "transactions",
					    "latency_count", NULL };
	const char *const *p;

	if (ends_with(name, "_per_s"))
		return 1;
	for (p = more; *p; p++)
		if (!strcmp(name, *p))
			return 1;
	return 0;
}

const char *
fmt_metric(const char *metric, double v, char *buf, size_t n)
{
	if (!isfinite(v))
		snprintf(buf, n, "-");
	else if (ends_with(metric, "bits_per_s"))
		ff_fmt_prefixed(v, 1000, " ", "bit/s", buf, n);
	else if (ends_with(metric, "_per_s"))
		ff_fmt_prefixed(v, 1000, " ", "/s", buf, n);
	else if (ends_with(metric, "_us"))
		ff_fmt_sig3(v, " us", buf, n);
	else if (ends_with(metric, "_bytes") || !strcmp(metric, "bytes"))
		ff_fmt_prefixed(v, 1024, " ", "B", buf, n);
	else if (ends_with(metric, "_s"))
		ff_fmt_sig3(v, " s", buf, n);
	else if (fabs(v) >= 1e5)
		ff_fmt_prefixed(v, 1000, " ", "", buf, n);
	else
		ff_fmt_sig3(v, "", buf, n);
	return buf;
}

/* The order of metrics within a case: the headline figures first (shown without --metric). */
static const char *const first[] = {
		"bits_per_s", "ops_per_s", "latency_avg_us", "latency_p50_us", "latency_p99_us",
		"relay_cpu_s_per_gb", "relay_cpu_s_per_1k_requests", "relay_cpu_fraction",
};

static int
metric_rank(const char *m)
{
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(first); i++)
		if (!strcmp(m, first[i]))
			return i;
	return FF_ARRAY_SIZE(first);
}

static int
cmp_series(const void *pa, const void *pb)
{
	const struct series *a = pa, *b = pb;
	int c;

	if ((c = strcmp(a->case_key, b->case_key)) || (c = strcmp(a->build_label, b->build_label)) ||
	    (c = strcmp(a->label, b->label)) || (c = strcmp(a->env_key, b->env_key)))
		return c;
	if ((c = metric_rank(a->metric) - metric_rank(b->metric)))
		return c;
	return strcmp(a->metric, b->metric);
}

static const char select_points[] =
	"SELECT r.case_key, IFNULL(r.build_label, ''), IFNULL(r.label, ''), r.env_key, m.name,"
	" m.value, r.time, r.commit_sha, r.build_sha256, r.proton_version, r.build_version, r.id,"
	" r.workload, r.relay, r.protocol, r.hops, r.jobs, r.cpu_limit, r.duration_s, r.tls,"
	" r.request_size, r.response_size, r.rate_per_s,"
	" r.hostname, r.cpu_model, r.cpus_available, r.kernel"
	" FROM runs r JOIN metrics m ON m.run_id = r.id"
	" WHERE r.status = 'ok' AND (?1 IS NULL OR r.workload = ?1) AND (?2 IS NULL OR r.relay = ?2)"
	" AND (?3 IS NULL OR r.protocol = ?3) AND (?4 IS NULL OR r.label = ?4)"
	" AND (?5 IS NULL OR r.hostname = ?5) AND (?6 IS NULL OR m.name = ?6)"
	" ORDER BY r.case_key, 2, 3, r.env_key, m.name, r.time, r.id";

static const char *
col(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* A string the series keeps for its points (NULL stays NULL). */
static const char *
keep(struct series *s, const char *str)
{
	if (!str)
		return NULL;
	if (s->nstrs && !strcmp(s->strs[s->nstrs - 1], str))
		return s->strs[s->nstrs - 1];
	FF_GROW(s->strs, (size_t)s->nstrs + 1, s->capstrs);
	s->strs[s->nstrs] = ff_strdup(str);
	return s->strs[s->nstrs++];
}

/* The case and the machine, for people. */
static void
names_of(struct series *s, sqlite3_stmt *st)
{
	struct ff_buf b = FF_BUF_INIT;
	long hops = sqlite3_column_int64(st, 15);
	const char *relay = col(st, 13);

	ff_buf_printf(&b, "%s %s %s", col(st, 12), relay, col(st, 14));
	if (ff_relay_hops(relay))	/* a relay that runs relays (not none) */
		ff_buf_printf(&b, ", %ld hop%s", hops, hops == 1 ? "" : "s");
	ff_buf_printf(&b, ", %lld jobs, cpu limit %lld, %g s", sqlite3_column_int64(st, 16),
		      sqlite3_column_int64(st, 17), sqlite3_column_double(st, 18));
	if (sqlite3_column_int64(st, 20) != 1 || sqlite3_column_int64(st, 21) != 1)
		ff_buf_printf(&b, ", request %lld B, response %lld B", sqlite3_column_int64(st, 20),
			      sqlite3_column_int64(st, 21));
	if (sqlite3_column_int64(st, 22))
		ff_buf_printf(&b, ", rate %lld/s", sqlite3_column_int64(st, 22));
	if (sqlite3_column_int(st, 19))
		ff_buf_addstr(&b, ", TLS");
	if (*s->build_label)
		ff_buf_printf(&b, ", build %s", s->build_label);
	if (*s->label)
		ff_buf_printf(&b, ", label %s", s->label);
	s->title = ff_buf_take(&b);
	ff_buf_printf(&b, "%s (%s, %lld CPUs, kernel %s)", col(st, 23) ? col(st, 23) : "unknown host",
		      col(st, 24) ? col(st, 24) : "unknown CPU", sqlite3_column_int64(st, 25),
		      col(st, 26) ? col(st, 26) : "unknown");
	s->machine = ff_buf_take(&b);
}

static int
same_series(const struct series *s, sqlite3_stmt *st)
{
	return !strcmp(s->case_key, col(st, 0)) && !strcmp(s->build_label, col(st, 1)) &&
	       !strcmp(s->label, col(st, 2)) && !strcmp(s->env_key, col(st, 3)) &&
	       !strcmp(s->metric, col(st, 4));
}

static struct series *
new_series(struct history *h, sqlite3_stmt *st)
{
	struct series *s;

	FF_GROW(h->s, (size_t)h->n + 1, h->cap);
	s = &h->s[h->n++];
	memset(s, 0, sizeof(*s));
	s->case_key = ff_strdup(col(st, 0));
	s->build_label = ff_strdup(col(st, 1));
	s->label = ff_strdup(col(st, 2));
	s->env_key = ff_strdup(col(st, 3));
	s->metric = ff_strdup(col(st, 4));
	s->higher_better = metric_higher_better(s->metric);
	names_of(s, st);
	return s;
}

static void
bind_filter(sqlite3_stmt *st, const struct filter *f)
{
	const char *v[] = { f->workload, f->relay, f->protocol, f->label, f->host, f->metric };
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(v); i++)
		if (v[i])
			sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
}

static void
detect(struct series *s, double threshold)
{
	struct detect_opts o = DETECT_OPTS_INIT;
	double *x = malloc((s->n + 1) * sizeof(*x));
	int i;

	if (!x)
		ff_die("out of memory");
	for (i = 0; i < s->n; i++)
		x[i] = s->pts[i].v;
	s->ncp = edivisive(x, s->n, &o, &s->cps);
	newest_verdict(x, s->n, s->cps, s->ncp, s->higher_better, threshold, &s->nv);
	free(x);
}

int
same_group(const struct series *a, const struct series *b)
{
	return !strcmp(a->case_key, b->case_key) && !strcmp(a->build_label, b->build_label) &&
	       !strcmp(a->label, b->label) && !strcmp(a->env_key, b->env_key);
}

void
history_load(sqlite3 *db, const struct filter *f, int with_detect, double threshold,
	     struct history *h)
{
	sqlite3_stmt *st = db_prepare(db, select_points);
	struct series *s = NULL;
	struct point *p;
	int rc, i;

	memset(h, 0, sizeof(*h));
	bind_filter(st, f);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!f->metric && !f->all_metrics && metric_rank(col(st, 4)) == FF_ARRAY_SIZE(first))
			continue;
		if (!s || !same_series(s, st))
			s = new_series(h, st);
		FF_GROW(s->pts, (size_t)s->n + 1, s->cap);
		p = &s->pts[s->n++];
		p->v = sqlite3_column_double(st, 5);
		p->time = keep(s, col(st, 6));
		p->commit = keep(s, col(st, 7));
		p->sha256 = keep(s, col(st, 8));
		p->proton = keep(s, col(st, 9));
		p->version = keep(s, col(st, 10));
		p->run = sqlite3_column_int64(st, 11);
	}
	if (rc != SQLITE_DONE)
		db_die(db, "cannot read the history");
	sqlite3_finalize(st);
	if (!h->n)
		ff_die("%s: no series match%s", db_name(),
		       f->workload || f->relay || f->protocol || f->label || f->host || f->metric ?
		       " the filters" : " (no ok runs: add results with 'flimflam history add FILE')");
	qsort(h->s, h->n, sizeof(*h->s), cmp_series);
	for (i = 0; with_detect && i < h->n; i++)
		detect(&h->s[i], threshold);
}

void
history_free(struct history *h)
{
	int i, j;

	for (i = 0; i < h->n; i++) {
		struct series *s = &h->s[i];

		free(s->case_key);
		free(s->build_label);
		free(s->label);
		free(s->env_key);
		free(s->metric);
		free(s->title);
		free(s->machine);
		free(s->pts);
		free(s->cps);
		for (j = 0; j < s->nstrs; j++)
			free(s->strs[j]);
		free(s->strs);
	}
	free(h->s);
	memset(h, 0, sizeof(*h));
}

static json_t *
str_or_null(const char *s)
{
	return s ? ff_json_text(s) : json_null();
}

static json_t *
num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *
cp_json(const struct series *s, const struct cp *c, double threshold)
{
	const struct point *a = &s->pts[c->at - 1], *b = &s->pts[c->at];
	int sign = step_sign(c->step_pct, s->higher_better, threshold);

	return json_pack("{s:i, s:o, s:o, s:o, s:o, s:f, s:f, s:o, s:o, s:o, s:f, s:s}",
			 "at", c->at, "commit_before", str_or_null(a->commit),
			 "commit_after", str_or_null(b->commit), "time_before", str_or_null(a->time),
			 "time_after", str_or_null(b->time), "before", c->before, "after", c->after,
			 "step_pct", num_or_null(c->step_pct), "lo_pct", num_or_null(c->lo_pct),
			 "hi_pct", num_or_null(c->hi_pct), "p", c->p,
			 "verdict", sign > 0 ? "worse" : sign < 0 ? "better" : "within the threshold");
}

json_t *
series_json(const struct series *s, double threshold)
{
	json_t *pts = json_array(), *cps = json_array(), *o;
	int i;

	for (i = 0; i < s->n; i++)
		json_array_append_new(pts, json_pack("{s:f, s:o, s:o, s:o, s:o, s:o, s:I}",
			"value", s->pts[i].v, "time", str_or_null(s->pts[i].time),
			"commit", str_or_null(s->pts[i].commit), "sha256", str_or_null(s->pts[i].sha256),
			"proton", str_or_null(s->pts[i].proton), "version", str_or_null(s->pts[i].version),
			"run", (json_int_t)s->pts[i].run));
	for (i = 0; i < s->ncp; i++)
		json_array_append_new(cps, cp_json(s, &s->cps[i], threshold));
	o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o}",
		      "case", ff_json_text(s->title), "case_key", ff_json_text(s->case_key),
		      "build_label", *s->build_label ? ff_json_text(s->build_label) : json_null(),
		      "label", *s->label ? ff_json_text(s->label) : json_null(),
		      "machine", ff_json_text(s->machine), "metric", ff_json_text(s->metric),
		      "higher_better", s->higher_better, "points", pts, "change_points", cps);
	json_object_set_new(o, "newest", json_pack("{s:s, s:o, s:o, s:o, s:i, s:i}",
		"verdict", verdict_name(s->nv.v), "change_pct", num_or_null(s->nv.change_pct),
		"stable_median", s->nv.v == V_FEW ? json_null() : num_or_null(s->nv.median),
		"noise", s->nv.v == V_FEW ? json_null() : num_or_null(s->nv.noise),
		"stable_from", s->nv.from, "stable_to", s->nv.to));
	return o;
}
