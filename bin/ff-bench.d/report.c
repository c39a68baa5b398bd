/*
 * ff-bench report: one self-contained HTML page of one or more results
 * files. The page is our template in share/report with its CSS, its script
 * and the data (JSON) put in; the script draws the charts as SVG.
 *
 * What the page needs is computed here, with the code bench and compare
 * use: the runs (their figures from results.c, their latency percentiles,
 * intervals and steadiness from the records), the cases and their series
 * (a relay, or a build label); report_stats.c gives each series' median
 * with an interval, and the changes between two files or two builds.
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

static const char report_usage[] =
	"usage: ff-bench report [-h] [-o FILE] FILE...\n"
	"\n"
	"Write one self-contained HTML page of bench results files: every run as a\n"
	"point, the medians with their intervals, latency percentiles, the changes\n"
	"between two files or builds, the intervals of a run, the environment\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"  -o FILE, --output FILE\n"
	"                        The page (default 'report.html' in the current\n"
	"                        directory; an existing file is replaced; - is\n"
	"                        standard output)\n";


/* The same chart: the bench case, whatever the relay, its chain and the build. */
static int
chart_eq(const struct key *a, const struct key *b)
{
	return !strcmp(a->workload, b->workload) && !strcmp(a->protocol, b->protocol) &&
	       a->jobs == b->jobs && a->cpu_limit == b->cpu_limit && a->duration == b->duration &&
	       a->request_size == b->request_size && a->response_size == b->response_size &&
	       a->rate == b->rate && a->workers == b->workers;
}

static int
case_of(struct page *pg, const struct key *k)
{
	size_t i;

	for (i = 0; i < pg->nc; i++)
		if (chart_eq(&pg->cases[i].k, k))
			return i;
	FF_GROW(pg->cases, pg->nc + 1, pg->capc);
	pg->cases[pg->nc].k = *k;
	pg->cases[pg->nc].k.workload = ff_strdup(k->workload);
	pg->cases[pg->nc].k.protocol = ff_strdup(k->protocol);
	pg->cases[pg->nc].k.relay = NULL;
	pg->cases[pg->nc].order = pg->nc;
	return pg->nc++;
}

static int
series_of(struct page *pg, int c, const char *name, int build, int rank)
{
	size_t i;

	for (i = 0; i < pg->ns; i++)
		if (pg->series[i].c == c && pg->series[i].file == pg->file &&
		    pg->series[i].build == build && !strcmp(pg->series[i].name, name))
			return i;
	FF_GROW(pg->series, pg->ns + 1, pg->caps);
	pg->series[pg->ns] = (struct rseries){ c, pg->file, build, ff_strdup(name), rank };
	return pg->ns++;
}

/* The index of an environment among the distinct ones (-1: none). */
static int
env_index(struct page *pg, const json_t *env)
{
	char *text;
	size_t i, n = json_array_size(pg->envs);

	if (!json_is_object(env))
		return -1;
	text = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		ff_die("out of memory");
	for (i = 0; i < n; i++)
		if (!strcmp(pg->envtext[i], text)) {
			free(text);
			return i;
		}
	pg->envtext = ff_realloc(pg->envtext, (n + 1) * sizeof(*pg->envtext));
	pg->envtext[n] = text;
	json_array_append_new(pg->envs, json_deep_copy(env));
	return n;
}

/*
 * A run's latency percentiles, [[percentile, us], ...]: the distribution
 * builtin-rr and builtin-crr keep, else the percentiles the result has
 * (h2load's p50, p90, p99, max). NULL with fewer than two.
 */
static json_t *
latency_curve(const json_t *res)
{
	static const struct { const char *key; double p; } cols[] = {
		{ "latency_p50_us", 50 }, { "latency_p90_us", 90 }, { "latency_p99_us", 99 },
		{ "latency_p999_us", 99.9 }, { "latency_p9999_us", 99.99 },
		{ "latency_max_us", 100 },
	};
	json_t *a = json_array(), *row;
	double p, us;
	size_t i;

	json_array_foreach(json_object_get(res, "latency_distribution"), i, row)
		if (num(row, "percentile", &p) && num(row, "us", &us))
			json_array_append_new(a, json_pack("[f,f]", p, us));
	if (json_array_size(a) < 2) {
		json_array_clear(a);
		for (i = 0; i < FF_ARRAY_SIZE(cols); i++)
			if (num(res, cols[i].key, &us))
				json_array_append_new(a, json_pack("[f,f]", cols[i].p, us));
	}
	if (json_array_size(a) < 2) {
		json_decref(a);
		return json_null();
	}
	return a;
}

/* A member of `rec` as it is, or null (a new reference either way). */
static json_t *
member(const json_t *rec, const char *key, int (*is)(const json_t *))
{
	json_t *v = json_object_get(rec, key);

	return v && is(v) ? json_incref(v) : json_null();
}

static int
is_object(const json_t *v)
{
	return json_is_object(v);
}

static int
is_array(const json_t *v)
{
	return json_is_array(v);
}

/* Each relay's growth over the window, [{role, rss, fds}] (resources.relays[].growth). */
static json_t *
relays_growth(const json_t *rec)
{
	json_t *a = json_array(), *r, *g;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(rec, "resources"), "relays"), i, r)
		if (json_is_object(g = json_object_get(r, "growth")) && ff_json_str(r, "role"))
			json_array_append_new(a, json_pack("{s:s,s:O,s:O}", "role", ff_json_str(r, "role"),
							   "rss", json_object_get(g, "rss"), "fds", json_object_get(g, "fds")));
	return a;
}

/* record_fn: a case record, into the page's runs. */
static void
take_run(const json_t *rec, const struct results *r, int group, int run, void *arg)
{
	struct page *pg = arg;
	const struct group *g = &r->g[group];
	const struct run *ru = &g->runs[run];
	const json_t *build = json_object_get(rec, "build");
	const char *label = json_is_object(build) ? ff_json_str(build, "label") : NULL;
	json_t *o = json_object(), *v = json_object();
	char *dir = ff_json_path_value(json_object_get(rec, "run_dir"));
	char name[128];
	int c, s, m;

	/*
	 * A series: a build, or a relay (with its chain when not its own:
	 * "nginx (4 hops)"); either with --tls: "nginx tls", "main tls".
	 */
	snprintf(name, sizeof(name), "%s%s%s", label ? label : g->k.relay, g->k.tls ? " tls" : "",
		 label ? "" : hops_label(g->k.relay, g->k.hops));
	c = case_of(pg, &g->k);
	s = series_of(pg, c, name, label != NULL, build_rank(&r->g[group]));

	FF_GROW(pg->runs, pg->nr + 1, pg->capr);
	pg->runs[pg->nr] = (struct rrun){ s, pg->file, group, run };
	json_object_set_new(o, "id", json_integer(pg->nr++));
	json_object_set_new(o, "series", json_integer(s));
	json_object_set_new(o, "status", json_string(status_name(ru->status)));
	json_object_set_new(o, "repeat", json_integer(ru->repeat));
	json_object_set_new(o, "time", ff_json_text(ff_json_str(rec, "time")));
	json_object_set_new(o, "warmup_s", json_real(g->k.warmup));
	json_object_set_new(o, "reason", ff_json_text(ff_json_str(rec, "reason")));
	json_object_set_new(o, "run_dir", ff_json_text(dir));
	free(dir);
	for (m = 0; m < M_N; m++)
		if ((ru->have & (1u << m)) && metric_applies(m, g->k.workload))
			json_object_set_new(v, metrics[m].key, json_real(ru->v[m]));
	json_object_set_new(o, "v", v);
	json_object_set_new(o, "latency", ru->status == 'o' ?
			    latency_curve(json_object_get(rec, "result")) : json_null());
	json_object_set_new(o, "build", member(rec, "build", is_object));
	json_object_set_new(o, "intervals", member(rec, "intervals", is_array));
	json_object_set_new(o, "steadiness", member(rec, "steadiness", is_object));
	json_object_set_new(o, "env", json_integer(env_index(pg, json_object_get(rec, "environment"))));
	json_object_set_new(o, "slo", member(rec, "slo", is_object));
	json_object_set_new(o, "growth", relays_growth(rec));
	json_array_append_new(pg->runs_json, o);
}

/* The page's data */

static int
name_at(const char *const names[], const char *s)
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return i;
}

static const struct page *sort_pg;

/* Cases in the matrix's order, then as they came. */
static int
cmp_case(const void *a, const void *b)
{
	const struct rcase *x = &sort_pg->cases[*(const int *)a], *y = &sort_pg->cases[*(const int *)b];
	int d;

	if ((d = name_at(ff_workloads, x->k.workload) - name_at(ff_workloads, y->k.workload)))
		return d;
	if ((d = name_at(ff_protocols, x->k.protocol) - name_at(ff_protocols, y->k.protocol)))
		return d;
	return x->order - y->order;
}

/*
 * Builds before relays, builds as bench's --build options came, relays in
 * the matrix's order, then by name, then by file: one series of each file
 * side by side (base, new).
 */
static int
cmp_series(const void *a, const void *b)
{
	const struct rseries *x = &sort_pg->series[*(const int *)a], *y = &sort_pg->series[*(const int *)b];
	int d;

	if ((d = y->build - x->build))
		return d;
	if (x->build && (d = x->rank - y->rank))
		return d;
	if (!x->build && (d = name_at(ff_relays, x->name) - name_at(ff_relays, y->name)))
		return d;
	if ((d = strcmp(x->name, y->name)) || (d = x->file - y->file))
		return d;
	return *(const int *)a - *(const int *)b;
}

static json_t *
case_json(const struct rcase *c, int id)
{
	json_t *o = json_object();
	char title[512];
	int n;

	n = snprintf(title, sizeof(title), "%s %s, jobs %ld, CPU limit %ld, %g s", c->k.workload,
		     c->k.protocol, c->k.jobs, c->k.cpu_limit, c->k.duration);
	if (ff_workload_is_rr(c->k.workload) && n > 0 && n < (int)sizeof(title))
		n += snprintf(title + n, sizeof(title) - n, ", request %ld B, response %ld B",
			      c->k.request_size, c->k.response_size);
	if (ff_workload_takes_rate(c->k.workload) && c->k.rate && n > 0 && n < (int)sizeof(title))
		n += snprintf(title + n, sizeof(title) - n, ", rate %ld/s", c->k.rate);
	if (c->k.workers && n > 0 && n < (int)sizeof(title))
		snprintf(title + n, sizeof(title) - n, ", %ld workers", c->k.workers);
	json_object_set_new(o, "id", json_integer(id));
	json_object_set_new(o, "title", json_string(title));
	json_object_set_new(o, "workload", json_string(c->k.workload));
	json_object_set_new(o, "protocol", json_string(c->k.protocol));
	json_object_set_new(o, "jobs", json_integer(c->k.jobs));
	json_object_set_new(o, "cpu_limit", json_integer(c->k.cpu_limit));
	json_object_set_new(o, "duration_s", json_real(c->k.duration));
	if (ff_workload_is_rr(c->k.workload)) {
		json_object_set_new(o, "request_size", json_integer(c->k.request_size));
		json_object_set_new(o, "response_size", json_integer(c->k.response_size));
	}
	if (ff_workload_takes_rate(c->k.workload))
		json_object_set_new(o, "rate_per_s", c->k.rate ? json_integer(c->k.rate) : json_null());
	json_object_set_new(o, "workers", c->k.workers ? json_integer(c->k.workers) : json_null());
	json_object_set_new(o, "series", json_array());
	return o;
}

/* The data: files, metrics, cases (in order) with their series, runs, changes, environments. */
static json_t *
page_data(struct page *pg)
{
	json_t *d = json_object(), *files = json_array(), *ms = json_array(), *cases = json_array(),
		*series = json_array(), *ch, *x;
	int *corder = calloc(pg->nc + 1, sizeof(int)), *sorder = calloc(pg->ns + 1, sizeof(int)),
		*cid = calloc(pg->nc + 1, sizeof(int)), *sid = calloc(pg->ns + 1, sizeof(int));
	size_t i, j;
	int f, k;

	if (!corder || !sorder || !cid || !sid)
		ff_die("out of memory");
	for (i = 0; i < pg->nc; i++)
		corder[i] = i;
	for (i = 0; i < pg->ns; i++)
		sorder[i] = i;
	sort_pg = pg;
	qsort(corder, pg->nc, sizeof(int), cmp_case);
	qsort(sorder, pg->ns, sizeof(int), cmp_series);
	for (i = 0; i < pg->nc; i++) {
		cid[corder[i]] = i;
		json_array_append_new(cases, case_json(&pg->cases[corder[i]], i));
	}
	/* Series ids in the order drawn; the runs and changes name them so. */
	for (i = 0; i < pg->ns; i++)
		sid[sorder[i]] = i;
	for (i = 0; i < pg->ns; i++) {
		const struct rseries *s = &pg->series[sorder[i]];

		x = json_pack("{s:i,s:i,s:i,s:s,s:s,s:b,s:o}", "id", (int)i, "case", cid[s->c],
			      "file", s->file, "name", s->name, "label", s->name, "build", s->build,
			      "stats", series_stats(pg, sorder[i]));
		if (pg->nfiles > 1)
			json_object_set_new(x, "label", json_sprintf("%s: %s", pg->labels[s->file], s->name));
		json_array_append_new(series, x);
		json_array_append_new(json_object_get(json_array_get(cases, cid[s->c]), "series"),
				      json_integer(i));
	}
	json_array_foreach(pg->runs_json, i, x)
		json_object_set_new(x, "series", json_integer(sid[json_integer_value(json_object_get(x, "series"))]));
	ch = page_changes(pg);
	json_array_foreach(ch, i, x) {
		json_object_set_new(x, "case", json_integer(cid[json_integer_value(json_object_get(x, "case"))]));
		json_object_set_new(x, "base", json_integer(sid[json_integer_value(json_object_get(x, "base"))]));
		json_object_set_new(x, "new", json_integer(sid[json_integer_value(json_object_get(x, "new"))]));
	}
	for (f = 0; f < pg->nfiles; f++) {
		int n[3] = { 0, 0, 0 };

		for (i = 0; i < (size_t)pg->res[f].ng; i++)
			for (j = 0; j < (size_t)pg->res[f].g[i].nruns; j++) {
				k = pg->res[f].g[i].runs[j].status;
				n[k == 'o' ? 0 : k == 'f' ? 1 : 2]++;
			}
		json_array_append_new(files, json_pack("{s:s,s:o,s:i,s:i,s:i}", "label", pg->labels[f],
			"path", ff_json_text(strcmp(pg->paths[f], "-") ? pg->paths[f] : "standard input"),
			"ok", n[0], "failed", n[1], "skipped", n[2]));
	}
	for (i = 0; i < M_N; i++)
		json_array_append_new(ms, json_pack("{s:s,s:s,s:b}", "key", metrics[i].key, "title",
						    metrics[i].title, "higher_better", metrics[i].higher_better));
	json_object_set_new(d, "generated", json_string(ff_iso_time()));
	json_object_set_new(d, "threshold_pct", json_real(THRESHOLD));
	json_object_set_new(d, "version", json_string(FF_VERSION));
	json_object_set_new(d, "files", files);
	json_object_set_new(d, "metrics", ms);
	json_object_set_new(d, "cases", cases);
	json_object_set_new(d, "series", series);
	json_object_set_new(d, "runs", json_incref(pg->runs_json));
	json_object_set_new(d, "changes", ch);
	json_object_set_new(d, "environments", json_incref(pg->envs));
	free(corder);
	free(sorder);
	free(cid);
	free(sid);
	return d;
}

/* The page */

/* The template with @REPORT_CSS@, @REPORT_DATA@ and @REPORT_JS@ filled in. */
static void
page_html(struct ff_buf *b, json_t *data)
{
	static const char *const files[] = { "share/report/report.html", "share/report/report.css",
					     "share/report/report.js" };
	static const char *const marks[] = { "@REPORT_CSS@", "@REPORT_DATA@", "@REPORT_JS@" };

	static const char mark[] = "@REPORT_CURVES_JS@";
	char *curves, *at, *tail;

	ff_page_html(b, files, marks, data);
	/* The curves' script (sweeps and soaks), after the page's: it draws with report.js's helpers. */
	at = strstr(b->s, mark);
	if (!at)
		ff_die("share/report/report.html: no %s in the template", mark);
	tail = ff_strdup(at + strlen(mark));
	b->len = at - b->s;
	curves = ff_data_text("share/report/curves.js");
	ff_buf_addstr(b, curves);
	ff_buf_addstr(b, tail);
	free(curves);
	free(tail);
}

/* A label per file: its name, or its path when two names are the same. */
static void
file_labels(struct page *pg, const char *const paths[])
{
	const char *base;
	int i, j, same;

	pg->labels = calloc(pg->nfiles, sizeof(*pg->labels));
	if (!pg->labels)
		ff_die("out of memory");
	for (i = 0; i < pg->nfiles; i++) {
		base = strcmp(paths[i], "-") ? strrchr(paths[i], '/') : NULL;
		base = !strcmp(paths[i], "-") ? "standard input" : base ? base + 1 : paths[i];
		for (same = 0, j = 0; j < pg->nfiles; j++) {
			const char *o = strrchr(paths[j], '/');

			same += j != i && !strcmp(o ? o + 1 : paths[j], base);
		}
		pg->labels[i] = ff_strdup(same ? paths[i] : base);
	}
}

static void
page_free(struct page *pg)
{
	size_t i;

	for (i = 0; i < (size_t)pg->nfiles; i++) {
		results_free(&pg->res[i]);
		free(pg->labels[i]);
	}
	for (i = 0; i < pg->nc; i++) {
		free((char *)pg->cases[i].k.workload);
		free((char *)pg->cases[i].k.protocol);
	}
	for (i = 0; i < pg->ns; i++)
		free(pg->series[i].name);
	for (i = 0; i < json_array_size(pg->envs); i++)
		free(pg->envtext[i]);
	free(pg->envtext);
	free(pg->res);
	free(pg->labels);
	free(pg->cases);
	free(pg->series);
	free(pg->runs);
	json_decref(pg->runs_json);
	json_decref(pg->envs);
}

int
report_write(const char *const paths[], int n, const char *out)
{
	struct page pg;
	struct ff_buf b = FF_BUF_INIT;
	json_t *data;
	int f, rc = 0;

	memset(&pg, 0, sizeof(pg));
	pg.nfiles = n;
	pg.paths = paths;
	pg.res = calloc(n, sizeof(*pg.res));
	if (!pg.res)
		ff_die("out of memory");
	pg.runs_json = json_array();
	pg.envs = json_array();
	file_labels(&pg, paths);
	for (f = 0; f < n; f++) {
		pg.file = f;
		load_results_each(paths[f], 1, &pg.res[f], take_run, &pg);
	}
	data = page_data(&pg);
	page_html(&b, data);
	json_decref(data);
	page_free(&pg);
	if (ff_page_write(out, &b) < 0)
		rc = -1;
	ff_buf_free(&b);
	return rc;
}

void
report_say(const char *path)
{
	ff_page_say(path);
}

char *
report_path_for(const char *results)
{
	size_t n = strlen(results);

	if (n > 6 && !strcmp(results + n - 6, ".jsonl"))
		return ff_asprintf("%.*s.html", (int)(n - 6), results);
	return ff_asprintf("%s.html", results);
}

/* ff-bench report */

/* Two names of one file? */
static int
same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int
report_main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const html[] = { ".html" };
	static char name[PATH_MAX];
	const char *out = NULL;
	int c, i, j, nstdin = 0;

	optind = 1;
	while ((c = ff_getopt(argc, argv, ":ho:", longopts, report_usage)) != -1)
		ff_page_opt(report_usage, c, optarg, &out);
	if (optind >= argc)
		ff_usage_error(report_usage, "expected one or more results files");
	for (i = optind; i < argc; i++) {
		nstdin += !strcmp(argv[i], "-");
		if (nstdin > 1)
			ff_usage_error(report_usage, "standard input (-) is given twice");
		for (j = optind; j < i; j++)
			if (strcmp(argv[i], "-") && strcmp(argv[j], "-") && same_file(argv[i], argv[j]))
				ff_usage_error(report_usage, "'%s' and '%s' are the same file: give it once",
					       argv[j], argv[i]);
		if (out && strcmp(out, "-") && strcmp(argv[i], "-") && same_file(out, argv[i]))
			ff_usage_error(report_usage, "the page would replace the results file '%s': "
				       "give another -o", argv[i]);
	}
	/* report.html, report-2.html... claimed: two reports at once never share it. */
	if (!out) {
		if (ff_out_claim_new("report", html, 1, name, sizeof(name) - 8) < 0)
			ff_die("cannot write 'report.html': %s", strerror(errno));
		out = strcat(name, ".html");
	}
	/* Before reading anything: a page that cannot be written is said first. */
	ff_page_check(out);
	if (report_write((const char *const *)argv + optind, argc - optind, out) < 0)
		return 1;
	if (strcmp(out, "-"))
		report_say(out);
	return ff_finish();
}
