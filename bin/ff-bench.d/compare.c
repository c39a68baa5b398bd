/*
 * ff-bench compare: two results files, case by case and metric by metric,
 * medians, deltas and a Mann-Whitney U test.
 */
#include "ff-bench.h"

#include <math.h>
#include <sys/stat.h>

static const char compare_usage[] =
	"usage: ff-bench compare [-h] [--threshold PCT] [--format text|markdown] [--json]\n"
	"                        [--base LABEL] [--new LABEL] BASE [NEW]\n"
	"\n"
	"Compare two bench results files, or two builds of one, case by case\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"  --threshold PCT       The change a verdict needs, beyond its whole confidence\n"
	"                        interval (default 2); given, exit 1 for a worse verdict\n"
	"                        or a case that failed in NEW\n"
	"  --base LABEL          The build of BASE to compare (bench --build LABEL=PATH)\n"
	"  --new LABEL           The build of NEW (of BASE without NEW) to compare\n"
	"  --format FORMAT       text (default) or markdown, to paste into a pull request\n"
	"  --json                JSON lines: start, method, environment..., comparison...,\n"
	"                        geomean..., unmatched..., end\n"
	"\n"
	"Cases match by workload, relay, protocol, jobs, cpu limit and duration. Each\n"
	"metric gets the median of each side, the Hodges-Lehmann change with its 95%\n"
	"confidence interval, a two-sided Mann-Whitney U test, and its p adjusted for\n"
	"the table (Benjamini-Hochberg); better or worse when that q < 0.05 and the\n"
	"interval lies beyond the threshold, with at least 5 runs a side.\n";

/* ff-bench compare */

static struct {
	const char *format;	/* text, markdown */
	int json, threshold_set;
	double threshold;
	const char *base_label, *new_label;
} cmpopt = { "text", 0, 0, THRESHOLD, NULL, NULL };

struct cmp_row {
	const struct group *b, *n;
	int m;			/* -1: a case that failed on a side */
	struct stats base, new;
	struct utest t;
	struct shift sh;
	double q;		/* p adjusted for the table; NAN: not tested */
	double delta_pct;	/* of the medians; NAN when the base median is 0 */
	double chg, lo, hi;	/* the shift and its interval, in % of the base median */
	int too_few, significant, failed_b, failed_n;
	const char *verdict, *direction;	/* direction: of the shift, or NULL */
	const char *test;	/* the paired test (paired.c), or NULL: Mann-Whitney */
	int pairs;		/* its pairs */
};

/*
 * The runs of one interleaved bench pair up by round: then the paired test
 * of their log ratios (paired.c) replaces Mann-Whitney's p, change and
 * interval (an interval unbounded on a side is none).
 */
static void
paired_row(const struct group *b, const struct group *n, int m, struct cmp_row *r)
{
	struct paired pc;

	if (!paired_change(b, n, m, ALPHA, &pc))
		return;
	r->test = pc.test;
	r->pairs = pc.n;
	r->t.p = pc.p;
	r->t.exact = pc.exact;
	r->chg = pct_of_log(pc.est);
	r->lo = isinf(pc.lo) || isinf(pc.hi) ? NAN : pct_of_log(pc.lo);
	r->hi = isnan(r->lo) ? NAN : pct_of_log(pc.hi);
	r->too_few = pc.n < MIN_RUNS;
	r->direction = pc.est == 0 || isnan(pc.est) ? NULL :
		       (pc.est > 0) == metrics[m].higher_better ? "better" : "worse";
}

/* The figures of one case and metric, before the table's q. */
static void
compare_row(const struct group *b, const struct group *n, int m, struct cmp_row *r)
{
	double *x, *y, base;
	int nx = group_values(b, m, &x), ny = group_values(n, m, &y);

	memset(r, 0, sizeof(*r));
	r->b = b;
	r->n = n;
	r->m = m;
	r->failed_b = group_count(b, 'f');
	r->failed_n = group_count(n, 'f');
	mann_whitney(x, nx, y, ny, &r->t);
	hodges_lehmann(x, nx, y, ny, ALPHA, &r->sh);
	stats_of(x, nx, &r->base);
	stats_of(y, ny, &r->new);
	free(x);
	free(y);
	base = fabs(r->base.median);
	r->delta_pct = base != 0 ? (r->new.median - r->base.median) / base * 100 : NAN;
	r->chg = base != 0 ? r->sh.est / base * 100 : NAN;
	r->lo = base != 0 ? r->sh.lo / base * 100 : NAN;
	r->hi = base != 0 ? r->sh.hi / base * 100 : NAN;
	r->too_few = nx < MIN_RUNS || ny < MIN_RUNS;
	r->q = NAN;
	/* The direction of the change is the shift's, not the medians'. */
	if (r->sh.est != 0 && !isnan(r->sh.est))
		r->direction = (r->sh.est > 0) == metrics[m].higher_better ? "better" : "worse";
	paired_row(b, n, m, r);
}

const char *
verdict_of(int m, int too_few, double q, double chg, double lo, double hi, double threshold)
{
	if (too_few)
		return "inconclusive: fewer than 5 runs per side";
	if (isnan(chg))
		return "inconclusive: the base median is 0";
	if (q < ALPHA && !isnan(lo) && (lo > threshold || hi < -threshold))
		return (lo > 0) == metrics[m].higher_better ? "better" : "worse";
	return "no change";
}

/* The verdict, once the table's q are known. */
static void
row_verdict(struct cmp_row *r, double threshold)
{
	if (r->m < 0)
		return;
	r->significant = !r->too_few && r->q < ALPHA;
	r->verdict = verdict_of(r->m, r->too_few, r->q, r->chg, r->lo, r->hi, threshold);
}

/* Environments: what each side ran on */

/* "3.2.0, hash 0123..., proton ..." for the router a side's runs used. */
static const char *
router_str(const struct results *r, char *buf, size_t n)
{
	const json_t *env = r->router_env ? r->router_env : r->env;
	const char *ver, *hash, *proton;

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

/* What a side measured: its build (bench --build), or the file's router. */
static const char *
side_str(const struct results *r, const char *label, char *buf, size_t n)
{
	const json_t *b = NULL, *pr;
	const char *relay, *ver, *sha, *path;
	int i;

	for (i = 0; i < r->ng && !b; i++)
		if (r->g[i].build && same_label(r->g[i].k.build, label))
			b = r->g[i].build;
	if (!b)
		return router_str(r, buf, n);
	relay = ff_json_str(b, "relay");
	ver = ff_json_str(b, "version");
	sha = ff_json_str(b, "sha256");
	path = ff_json_str(b, "path");
	pr = json_object_get(b, "proton");
	snprintf(buf, n, "%s%s%s%s %s, sha256 %.16s, %s%s%s%s%s", label ? "build " : "",
		 label ? label : "", label ? ": " : "", relay ? relay : "relay", ver ? ver : "version unknown", sha ? sha : "unknown",
		 path ? path : "path unknown", json_is_object(pr) ? ", proton " : "",
		 json_is_object(pr) && ff_json_str(pr, "version") ? ff_json_str(pr, "version") : "",
		 json_is_object(pr) ? " " : "",
		 json_is_object(pr) && ff_json_str(pr, "path") ? ff_json_str(pr, "path") : "");
	return buf;
}

/* A side: a file, and the build of it compared. */
struct side {
	const char *path, *name;	/* name: as the output shows it */
	const struct results *r;
	const char *label;
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct values a side has for an environment field, sorted, " | " between. */
static char *
env_values(const struct side *s, const char *name)
{
	const char **v = NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	int i, j, k, nv = 0;

	for (i = 0; i < s->r->ng; i++) {
		const struct group *g = &s->r->g[i];

		if (!same_label(g->k.build, s->label))
			continue;
		for (j = 0; j < g->nenv; j++) {
			if (strcmp(g->env[j].name, name))
				continue;
			for (k = 0; k < nv && strcmp(v[k], g->env[j].value); k++)
				;
			if (k == nv) {
				v = ff_realloc(v, (nv + 1) * sizeof(*v));
				v[nv++] = g->env[j].value;
			}
		}
	}
	if (!nv) {
		free(v);
		return ff_strdup("none");
	}
	qsort(v, nv, sizeof(*v), cmp_str);
	if (!(f = open_memstream(&out, &len)))
		ff_die("out of memory");
	for (i = 0; i < nv; i++)
		fprintf(f, "%s%s", i ? " | " : "", v[i]);
	fclose(f);
	free(v);
	return out;
}

/* The names of the environment fields of both sides, in order of appearance. */
static int
env_names(const struct side *b, const struct side *n, const char ***out)
{
	const struct side *s[2] = { b, n };
	const char **names = NULL;
	int nn = 0, i, j, k, si;

	for (si = 0; si < 2; si++)
		for (i = 0; i < s[si]->r->ng; i++) {
			const struct group *g = &s[si]->r->g[i];

			if (!same_label(g->k.build, s[si]->label))
				continue;
			for (j = 0; j < g->nenv; j++) {
				for (k = 0; k < nn && strcmp(names[k], g->env[j].name); k++)
					;
				if (k == nn) {
					names = ff_realloc(names, (nn + 1) * sizeof(*names));
					names[nn++] = g->env[j].name;
				}
			}
		}
	*out = names;
	return nn;
}

static void
emit_env_json(const char *side, const struct side *s, const char **names, int nn)
{
	json_t *ev = ff_event("environment"), *fields = json_object();
	char buf[2048], *v;
	int i;

	json_object_set_new(ev, "side", json_string(side));
	json_object_set_new(ev, "file", ff_json_path(s->name));
	json_object_set_new(ev, "build", s->label ? json_string(s->label) : json_null());
	json_object_set_new(ev, "skrouterd", ff_json_text(side_str(s->r, s->label, buf, sizeof(buf))));
	for (i = 0; i < nn; i++) {
		v = env_values(s, names[i]);
		json_object_set_new(fields, names[i], ff_json_text(v));
		free(v);
	}
	json_object_set_new(ev, "fields", fields);
	ff_emit(ev);
}

/*
 * Prints the environments, every field of either side, exactly; each
 * difference (or a side with several values) is also a warning naming both
 * values. Returns how many fields differ.
 */
static int
compare_env(const struct side *base, const struct side *new)
{
	char a[2048], b[2048], *va, *vb;
	const char **names;
	int i, nn, ndiff = 0, diff, md = !strcmp(cmpopt.format, "markdown");
	json_t *ev;

	nn = env_names(base, new, &names);
	if (cmpopt.json) {
		emit_env_json("base", base, names, nn);
		emit_env_json("new", new, names, nn);
	} else if (md) {
		printf("| | base | new |\n| :-- | :-- | :-- |\n");
		ff_print("| file | `%s` | `%s` |\n", base->name, new->name);
		ff_print("| router | %s | %s |\n", side_str(base->r, base->label, a, sizeof(a)),
			 side_str(new->r, new->label, b, sizeof(b)));
	} else {
		ff_print("Environment\n");
		ff_print("  base  %s: %s\n", base->name, side_str(base->r, base->label, a, sizeof(a)));
		ff_print("  new   %s: %s\n", new->name, side_str(new->r, new->label, a, sizeof(a)));
	}
	for (i = 0; i < nn; i++) {
		va = env_values(base, names[i]);
		vb = env_values(new, names[i]);
		diff = strcmp(va, vb) != 0 || strstr(va, " | ") || strstr(vb, " | ");
		ndiff += diff;
		if (diff)
			ff_warn("the environments differ: %s: base '%s', new '%s'", names[i], va, vb);
		if (cmpopt.json) {
			if (diff) {
				ev = ff_event("environment_difference");
				json_object_set_new(ev, "field", json_string(names[i]));
				json_object_set_new(ev, "base", ff_json_text(va));
				json_object_set_new(ev, "new", ff_json_text(vb));
				ff_emit(ev);
			}
		} else if (md)
			ff_print("| %s | %s | %s%s |\n", names[i], va, vb, diff ? " **(differs)**" : "");
		else if (diff)
			ff_print("  %-22s DIFFERS: base '%s', new '%s'\n", names[i], va, vb);
		else
			ff_print("  %-22s %s\n", names[i], va);
		free(va);
		free(vb);
	}
	free(names);
	if (ndiff && !cmpopt.json)
		printf(md ? "\n> **Warning:** the two sides ran in different environments, so some\n"
			    "> differences may not be the router's.\n" :
		       "  warning: the two sides ran in different environments, so some\n"
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

/* "-9.3% [-14.1, -4.2]": the shift and its interval, in % of the base median. */
static void
fmt_change(const struct cmp_row *r, char *buf, size_t n)
{
	if (isnan(r->chg))
		snprintf(buf, n, "-");
	else if (isnan(r->lo))
		snprintf(buf, n, "%+.1f%% [no interval]", r->chg);
	else
		snprintf(buf, n, "%+.1f%% [%+.1f, %+.1f]", r->chg, r->lo, r->hi);
}

/* p and q with 2 significant digits: 0.04987 is 0.050, not 0.05 next to "better". */
static void
fmt_p(double p, char *buf, size_t n)
{
	if (isnan(p))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%#.2g", p);
}

static void
key_json(json_t *ev, const struct key *k)
{
	json_object_set_new(ev, "workload", json_string(k->workload));
	json_object_set_new(ev, "relay", json_string(k->relay));
	json_object_set_new(ev, "protocol", json_string(k->protocol));
	json_object_set_new(ev, "hops", json_integer(k->hops));
	json_object_set_new(ev, "tls", json_boolean(k->tls));
	json_object_set_new(ev, "jobs", json_integer(k->jobs));
	json_object_set_new(ev, "cpu_limit", json_integer(k->cpu_limit));
	json_object_set_new(ev, "duration_s", json_real(k->duration));
}

static json_t *
num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static void
emit_row_json(const struct cmp_row *r, const struct side *b, const struct side *n)
{
	json_t *ev = ff_event("comparison");
	int m = r->m;

	key_json(ev, &r->b->k);
	json_object_set_new(ev, "base_build", b->label ? json_string(b->label) : json_null());
	json_object_set_new(ev, "new_build", n->label ? json_string(n->label) : json_null());
	json_object_set_new(ev, "metric", m < 0 ? json_null() : json_string(metrics[m].key));
	json_object_set_new(ev, "better", m < 0 ? json_null() :
			    json_string(metrics[m].higher_better ? "higher" : "lower"));
	json_object_set_new(ev, "n_base", json_integer(m < 0 ? group_count(r->b, 'o') : r->base.n));
	json_object_set_new(ev, "n_new", json_integer(m < 0 ? group_count(r->n, 'o') : r->new.n));
	json_object_set_new(ev, "failed_base", json_integer(r->failed_b));
	json_object_set_new(ev, "failed_new", json_integer(r->failed_n));
	if (m >= 0) {
		json_object_set_new(ev, "base_median", json_real(r->base.median));
		json_object_set_new(ev, "new_median", json_real(r->new.median));
		json_object_set_new(ev, "base_spread_pct", json_real(r->base.spread_pct));
		json_object_set_new(ev, "new_spread_pct", json_real(r->new.spread_pct));
		json_object_set_new(ev, "delta_pct", num_or_null(r->delta_pct));
		json_object_set_new(ev, "shift", num_or_null(r->sh.est));
		json_object_set_new(ev, "change_pct", num_or_null(r->chg));
		json_object_set_new(ev, "ci_low_pct", num_or_null(r->lo));
		json_object_set_new(ev, "ci_high_pct", num_or_null(r->hi));
		json_object_set_new(ev, "ci_method", json_string(r->sh.exact ? "exact" : "normal"));
		json_object_set_new(ev, "u", json_real(r->t.u));
		json_object_set_new(ev, "p", json_real(r->t.p));
		json_object_set_new(ev, "q", num_or_null(r->q));
		json_object_set_new(ev, "method", json_string(r->t.exact ? "exact" : "normal"));
		json_object_set_new(ev, "test", json_string(r->test ? r->test : "Mann-Whitney U"));
		json_object_set_new(ev, "significant", json_boolean(r->significant));
		json_object_set_new(ev, "too_few", json_boolean(r->too_few));
		json_object_set_new(ev, "direction", r->direction ? json_string(r->direction) : json_null());
	}
	json_object_set_new(ev, "threshold_pct", json_real(cmpopt.threshold));
	json_object_set_new(ev, "verdict", json_string(r->verdict));
	json_object_set_new(ev, "regression", json_boolean(!strcmp(r->verdict, "worse")));
	json_object_set_new(ev, "beyond_threshold", json_boolean(cmpopt.threshold_set &&
					(!strcmp(r->verdict, "worse") ||
					 !strcmp(r->verdict, "failed in new"))));
	ff_emit(ev);
}

/* "(n=10+9, 1 failed in new)" */
static void
fmt_n(const struct cmp_row *r, char *buf, size_t n)
{
	int len = r->test ? snprintf(buf, n, "n=%d pairs", r->pairs) :
		  snprintf(buf, n, "n=%d+%d", r->base.n, r->new.n);

	if (r->failed_b && (size_t)len < n)
		len += snprintf(buf + len, n - len, ", %d failed in base", r->failed_b);
	if (r->failed_n && (size_t)len < n)
		snprintf(buf + len, n - len, ", %d failed in new", r->failed_n);
}

/* One table per metric, as benchstat prints one per unit, with its geomean. */
static void
compare_metric(int m, struct cmp_row *rows, int nrows, const struct side *bs,
	       const struct side *ns, int md)
{
	struct table t = { 9, "lllrrrrrl", NULL, 0 };
	char base[128], new[128], change[128], p[32], q[32], verdict[256], nb[96], relay[128];
	double lb = 0, ln = 0;
	int i, ngeo = 0, strong;
	const char *pm = md ? "±" : "+/-";

	trow(&t, 9, "Workload", "Relay", "Protocol", "Base", "New", "Change [95% CI]", "p", "q",
	     "Verdict");
	for (i = 0; i < nrows; i++) {
		struct cmp_row *r = &rows[i];

		if (cmpopt.json)
			emit_row_json(r, bs, ns);
		fmt_stats(&r->base, m, pm, base, sizeof(base));
		fmt_stats(&r->new, m, pm, new, sizeof(new));
		fmt_change(r, change, sizeof(change));
		fmt_p(r->t.p, p, sizeof(p));
		fmt_p(r->q, q, sizeof(q));
		fmt_n(r, nb, sizeof(nb));
		strong = md && (!strcmp(r->verdict, "better") || !strcmp(r->verdict, "worse"));
		snprintf(verdict, sizeof(verdict), "%s%s%s (%s)", strong ? "**" : "", r->verdict,
			 strong ? "**" : "", nb);
		/* --tls, and a chain other than the relay's own: "nginx tls (4 hops)". */
		snprintf(relay, sizeof(relay), "%s%s%s", r->b->k.relay, r->b->k.tls ? " tls" : "",
			 hops_label(r->b->k.relay, r->b->k.hops));
		trow(&t, 9, r->b->k.workload, relay, r->b->k.protocol, base, new, change,
		     p, q, verdict);
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
		fmt_delta((ln - lb) / lb * 100, change, sizeof(change));
		trow(&t, 9, md ? "*geomean*" : "geomean", "", "", base, new, change, "", "", "");
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

/* The reason of the last failed run of a case, or NULL. */
static const char *
last_reason(const struct group *g)
{
	const char *why = NULL;
	int i;

	for (i = 0; i < g->nruns; i++)
		if (g->runs[i].status == 'f')
			why = g->runs[i].reason ? g->runs[i].reason : "no reason given";
	return why;
}

/* The cases with no successful run on a side: rows of their own. */
static void
print_failed_cases(struct cmp_row *rows, int nrows, const struct side *bs, const struct side *ns,
		   int md)
{
	struct table t = { 6, "llllll", NULL, 0 };
	char b[96], n[96], verdict[4096];
	int i;

	trow(&t, 6, "Workload", "Relay", "Protocol", "Base", "New", "Verdict");
	for (i = 0; i < nrows; i++) {
		const struct cmp_row *r = &rows[i];
		const char *why = strstr(r->verdict, " new") ? last_reason(r->n) : last_reason(r->b);

		if (cmpopt.json)
			emit_row_json(r, bs, ns);
		snprintf(b, sizeof(b), "%d ok, %d failed", group_count(r->b, 'o'), r->failed_b);
		snprintf(n, sizeof(n), "%d ok, %d failed", group_count(r->n, 'o'), r->failed_n);
		snprintf(verdict, sizeof(verdict), "%s%s%s%s%s", md ? "**" : "", r->verdict,
			 md ? "**" : "", why ? ": " : "", why ? why : "");
		trow(&t, 6, r->b->k.workload, r->b->k.relay, r->b->k.protocol, b, n, verdict);
	}
	if (!cmpopt.json && t.nrows > 1) {
		printf(md ? "\n#### Failed cases (no successful run on a side)\n\n" :
		       "\nFailed cases (no successful run on a side)\n\n");
		if (md)
			table_print_markdown(&t);
		else
			table_print(&t);
	}
	table_free(&t);
}

static void
print_unmatched(const char *side, const struct side *s, const struct side *o, int md)
{
	const struct group *g = s->r->g;
	int i, j;
	json_t *ev;

	for (i = 0; i < s->r->ng; i++) {
		if (!same_label(g[i].k.build, s->label))
			continue;
		for (j = 0; j < o->r->ng && !(same_label(o->r->g[j].k.build, o->label) &&
					     case_eq(&g[i].k, &o->r->g[j].k)); j++)
			;
		if (j < o->r->ng)
			continue;
		if (cmpopt.json) {
			ev = ff_event("unmatched");
			json_object_set_new(ev, "side", json_string(side));
			key_json(ev, &g[i].k);
			ff_emit(ev);
		} else
			printf("%sonly in %s: %s %s%s%s %s (jobs %ld, CPU limit %ld, duration %g s)\n",
			       md ? "- " : "  ", side, g[i].k.workload, g[i].k.relay, g[i].k.tls ? " tls" : "",
			       hops_label(g[i].k.relay, g[i].k.hops), g[i].k.protocol,
			       g[i].k.jobs, g[i].k.cpu_limit, g[i].k.duration);
	}
}

/*
 * Every metric of the cases both sides have, one table per metric, and
 * the cases that failed on a side; returns how many verdicts are worse.
 * matched: the cases in both; nfailed: those that failed in new, not base.
 */
static int
compare_cases(const struct side *bs, const struct side *ns, int md, int *matched, int *nfailed)
{
	const struct results *base = bs->r, *new = ns->r;
	int i, j, m, nrows = 0, nfail = 0, ntested = 0, worse = 0, first, k;
	struct cmp_row *rows = calloc((size_t)base->ng * M_NCMP + 1, sizeof(*rows));
	struct cmp_row *failed = calloc(base->ng + 1, sizeof(*failed));
	double *p, *q;
	char change[128], pb[32], qb[32];

	if (!rows || !failed)
		ff_die("out of memory");
	*matched = *nfailed = 0;
	/* Every row first: q needs every p of the table. */
	for (i = 0; i < base->ng; i++) {
		const struct group *b = &base->g[i], *n = NULL;

		if (!same_label(b->k.build, bs->label))
			continue;
		for (j = 0; j < new->ng && !n; j++)
			if (same_label(new->g[j].k.build, ns->label) && case_eq(&b->k, &new->g[j].k))
				n = &new->g[j];
		if (!n)
			continue;
		++*matched;
		if (!group_count(b, 'o') || !group_count(n, 'o')) {
			struct cmp_row *r = &failed[nfail++];

			r->b = b;
			r->n = n;
			r->m = -1;
			r->failed_b = group_count(b, 'f');
			r->failed_n = group_count(n, 'f');
			r->verdict = !group_count(n, 'o') ? (group_count(n, 'f') ? "failed in new" :
							     "no run in new") :
				     group_count(b, 'f') ? "failed in base" : "no run in base";
			r->q = NAN;
			*nfailed += !group_count(n, 'o') && group_count(b, 'o');
			continue;
		}
		for (m = 0; m < M_NCMP; m++)
			if (group_has(b, m) && group_has(n, m))
				compare_row(b, n, m, &rows[nrows++]);
	}
	p = calloc(nrows + 1, sizeof(*p));
	q = calloc(nrows + 1, sizeof(*q));
	if (!p || !q)
		ff_die("out of memory");
	for (i = 0; i < nrows; i++)
		if (!rows[i].too_few)
			p[ntested++] = rows[i].t.p;
	bh_adjust(p, ntested, q);
	for (i = 0, k = 0; i < nrows; i++) {
		if (!rows[i].too_few)
			rows[i].q = q[k++];
		row_verdict(&rows[i], cmpopt.threshold);
	}
	free(p);
	free(q);

	if (cmpopt.json) {
		json_t *ev = ff_event("method");

		json_object_set_new(ev, "test", json_string("Mann-Whitney U, two-sided"));
		json_object_set_new(ev, "change", json_string("Hodges-Lehmann shift, % of the base median"));
		json_object_set_new(ev, "confidence", json_real(1 - ALPHA));
		json_object_set_new(ev, "adjustment", json_string("Benjamini-Hochberg"));
		json_object_set_new(ev, "false_discovery_rate", json_real(ALPHA));
		json_object_set_new(ev, "comparisons", json_integer(ntested));
		json_object_set_new(ev, "threshold_pct", json_real(cmpopt.threshold));
		json_object_set_new(ev, "min_runs", json_integer(MIN_RUNS));
		ff_emit(ev);
	} else
		printf("\nChange: the Hodges-Lehmann shift of new against base, in %% of the base median,\n"
		       "with its 95%% confidence interval. p: the two-sided Mann-Whitney U test; q: p\n"
		       "adjusted for the %d comparison%s of this table (Benjamini-Hochberg, false\n"
		       "discovery rate %g). better or worse when q < %g and the whole interval lies\n"
		       "beyond %g%%, with at least %d runs a side; otherwise no change (or inconclusive).\n",
		       ntested, ntested == 1 ? "" : "s", ALPHA, ALPHA, cmpopt.threshold,
		       MIN_RUNS);
	for (i = 0; i < nrows && !rows[i].test; i++)
		;
	if (i < nrows && !cmpopt.json)
		printf("Paired (n=N pairs): the runs of each round of one interleaved bench pair up;\n"
		       "p and the change come from the log ratios new/base of the pairs: %s.\n",
		       strstr(rows[i].test, "sequence") ? "the anytime-\nvalid confidence "
		       "sequence of bench --repeat auto" : "the Wilcoxon\nsigned-rank test, the "
		       "Hodges-Lehmann estimate and Tukey's interval");

	for (m = 0; m < M_NCMP; m++) {
		for (i = 0, first = -1, k = 0; i < nrows; i++)
			if (rows[i].m == m) {
				if (first < 0)
					first = i;
				k++;
			}
		if (k) {
			/* A metric's rows are not adjacent: gather them in case order. */
			struct cmp_row *mr = calloc(k, sizeof(*mr));

			if (!mr)
				ff_die("out of memory");
			for (i = first, j = 0; i < nrows; i++)
				if (rows[i].m == m)
					mr[j++] = rows[i];
			compare_metric(m, mr, k, bs, ns, md);
			free(mr);
		}
	}
	print_failed_cases(failed, nfail, bs, ns, md);
	for (i = 0; i < nrows; i++) {
		if (strcmp(rows[i].verdict, "worse"))
			continue;
		worse++;
		if (!cmpopt.threshold_set)
			continue;
		fmt_change(&rows[i], change, sizeof(change));
		fmt_p(rows[i].t.p, pb, sizeof(pb));
		fmt_p(rows[i].q, qb, sizeof(qb));
		ff_warn("regression beyond %g%%: %s %s %s %s %s (p=%s q=%s)", cmpopt.threshold,
			rows[i].b->k.workload, rows[i].b->k.relay, rows[i].b->k.protocol,
			metrics[rows[i].m].key, change, pb, qb);
	}
	for (i = 0; i < nfail && cmpopt.threshold_set; i++)
		if (!strcmp(failed[i].verdict, "failed in new"))
			ff_warn("failed in new: %s %s %s (%d of %d runs failed: %s)",
				failed[i].b->k.workload, failed[i].b->k.relay, failed[i].b->k.protocol,
				failed[i].failed_n, failed[i].n->nruns, last_reason(failed[i].n));
	free(rows);
	free(failed);
	return worse;
}

/* "2 worse verdicts and 1 case failed in new at the threshold of 5%" */
static const char *
gate_str(int worse, int nfailed, char *buf, size_t n)
{
	snprintf(buf, n, "%d worse verdict%s and %d case%s failed in new at the threshold of %g%%",
		 worse, worse == 1 ? "" : "s", nfailed, nfailed == 1 ? "" : "s", cmpopt.threshold);
	return buf;
}

/* After the tables: failed runs, the threshold's count. */
static void
compare_footer(const struct side *bs, const struct side *ns, int worse, int nfailed, int md)
{
	int fb = 0, fn = 0, i;
	char buf[256];

	for (i = 0; i < bs->r->ng; i++)
		if (same_label(bs->r->g[i].k.build, bs->label))
			fb += group_count(&bs->r->g[i], 'f');
	for (i = 0; i < ns->r->ng; i++)
		if (same_label(ns->r->g[i].k.build, ns->label))
			fn += group_count(&ns->r->g[i], 'f');
	if (fb || fn)
		printf("\nFailed runs, not counted: %d in base, %d in new\n", fb, fn);
	if (cmpopt.threshold_set)
		printf("\n%s%s%s\n", md ? "**" : "", gate_str(worse, nfailed, buf, sizeof(buf)),
		       md ? "**" : "");
}

/* compare's options, into cmpopt; BASE and NEW (NULL: none) into bpath and npath. */
static void
compare_options(int argc, char *argv[], const char **bpath, const char **npath)
{
	enum { OPT_THRESHOLD = 256, OPT_FORMAT, OPT_JSON, OPT_BASE, OPT_NEW };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "new", required_argument, NULL, OPT_NEW },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const formats[] = { "text", "markdown", NULL };
	int c;

	optind = 1;
	while ((c = ff_getopt(argc, argv, ":h", longopts, compare_usage)) != -1)
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
		case OPT_BASE:
		case OPT_NEW:
			if (!*optarg)
				ff_usage_error(compare_usage, "%s: an empty label", c == OPT_BASE ? "--base" : "--new");
			*(c == OPT_BASE ? &cmpopt.base_label : &cmpopt.new_label) = optarg;
			break;
		}
	if (argc - optind < 1 || (argc - optind < 2 && (!cmpopt.base_label || !cmpopt.new_label)))
		ff_usage_error(compare_usage,
			       "expected two results files, BASE and NEW, or one with --base LABEL and --new LABEL");
	if (argc - optind > 2)
		ff_usage_error(compare_usage, "unexpected argument '%s'", argv[optind + 2]);
	if (cmpopt.json && strcmp(cmpopt.format, "text"))
		ff_usage_error(compare_usage, "--json and --format %s do not go together", cmpopt.format);
	*bpath = argv[optind];
	*npath = argc - optind > 1 ? argv[optind + 1] : NULL;
	if (!*npath && !strcmp(cmpopt.base_label, cmpopt.new_label))
		ff_usage_error(compare_usage, "--base and --new are both '%s': compare two builds",
			       cmpopt.base_label);
}

/* BASE and NEW must be two files: not standard input twice, not one file twice. */
static void
refuse_one_file(const char *bpath, const char *npath)
{
	struct stat bst, nst;

	if (!strcmp(bpath, "-") && !strcmp(npath, "-"))
		ff_usage_error(compare_usage, "BASE and NEW are both standard input: compare two files");
	if ((strcmp(bpath, "-") ? stat(bpath, &bst) : fstat(0, &bst)) == 0 &&
	    (strcmp(npath, "-") ? stat(npath, &nst) : fstat(0, &nst)) == 0 &&
	    bst.st_dev == nst.st_dev && bst.st_ino == nst.st_ino)
		ff_usage_error(compare_usage, "'%s' and '%s' are the same file: compare two different ones",
			       strcmp(bpath, "-") ? bpath : "standard input",
			       strcmp(npath, "-") ? npath : "standard input");
}

/*
 * The build labels of results, each once, in the order of bench's --build
 * options (the `order` of their rows' build: the first is the base), or
 * else of first appearance; NULL for runs without one. Returns how many.
 */
int
build_rank(const struct group *g)
{
	json_t *order = json_object_get(g->build, "order");

	/* The --build options first, in their order; then by first appearance. */
	return json_is_integer(order) && json_integer_value(order) >= 0 &&
	       json_integer_value(order) < 1000 ? (int)json_integer_value(order) : 1000 + g->order;
}

static int
labels_of(const struct results *r, const char ***out)
{
	const char **l = NULL;
	int *first = NULL, n = 0, i, j;

	for (i = 0; i < r->ng; i++) {
		for (j = 0; j < n && !same_label(l[j], r->g[i].k.build); j++)
			;
		if (j == n) {
			l = ff_realloc(l, (n + 1) * sizeof(*l));
			first = ff_realloc(first, (n + 1) * sizeof(*first));
			l[n] = r->g[i].k.build;
			first[n++] = build_rank(&r->g[i]);
		} else if (build_rank(&r->g[i]) < first[j])
			first[j] = build_rank(&r->g[i]);
	}
	/* By first appearance, whatever order the groups are in now. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && first[j] < first[j - 1]; j--) {
			const char *t = l[j];
			int f = first[j];

			l[j] = l[j - 1], first[j] = first[j - 1];
			l[j - 1] = t, first[j - 1] = f;
		}
	free(first);
	*out = l;
	return n;
}

/* "main, fix" */
static char *
labels_str(const char **l, int n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	int i;

	if (!f)
		ff_die("out of memory");
	for (i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? ", " : "", l[i] ? l[i] : "(runs without a build)");
	fclose(f);
	return out;
}

/* The build of a side: the one asked for, which must be there, or the file's only one. */
static void
pick_label(struct side *s, const char *want, const char *option)
{
	const char **l;
	char *list;
	int n = labels_of(s->r, &l), i;

	for (i = 0; want && i < n && !same_label(l[i], want); i++)
		;
	if (want && i == n) {
		list = labels_str(l, n);
		ff_usage_error(compare_usage, "%s: no build '%s' in '%s' (it holds %s)", option, want,
			       s->name, list);
	}
	if (!want && n > 1) {
		list = labels_str(l, n);
		ff_usage_error(compare_usage, "'%s' holds several builds (%s): choose one with %s LABEL",
			       s->name, list, option);
	}
	s->label = want ? l[i] : l[0];
	free(l);
}

/*
 * Comparing the builds of a bench: each against the first, as compare does
 * it (text, the default threshold, no gate). Nothing with fewer than two.
 */
void
compare_builds(const struct results *r)
{
	const char **l;
	struct side b = { "", "", r, NULL }, n = { "", "", r, NULL };
	int nl = labels_of(r, &l), i, matched, nfailed;

	for (i = 1; i < nl; i++) {
		if (!l[0] || !l[i])
			continue;
		b.label = l[0];
		n.label = l[i];
		printf("\nBuild %s against %s (the base)\n", l[i], l[0]);
		compare_cases(&b, &n, 0, &matched, &nfailed);
		if (!matched)
			printf("\nno case in common\n");
	}
	free(l);
}

int
compare_main(int argc, char *argv[])
{
	const char *bpath, *npath;
	struct results rb, rn;
	struct side base = { NULL, NULL, &rb, NULL }, new = { NULL, NULL, &rn, NULL };
	int worse, nfailed, gate, matched = 0, md;
	char buf[256];

	compare_options(argc, argv, &bpath, &npath);
	md = !strcmp(cmpopt.format, "markdown");
	if (npath)
		refuse_one_file(bpath, npath);
	load_results(bpath, 0, &rb);
	if (npath)
		load_results(npath, 0, &rn);
	else
		new.r = &rb;
	base.path = bpath;
	new.path = npath ? npath : bpath;
	base.name = strcmp(base.path, "-") ? base.path : "standard input";
	new.name = strcmp(new.path, "-") ? new.path : "standard input";
	pick_label(&base, cmpopt.base_label, "--base");
	pick_label(&new, cmpopt.new_label, "--new");
	/* The cases in bench's order, the matrix's */
	qsort(rb.g, rb.ng, sizeof(*rb.g), cmp_group);
	if (npath)
		qsort(rn.g, rn.ng, sizeof(*rn.g), cmp_group);

	if (cmpopt.json)
		ff_emit_start();
	else if (md)
		ff_print("### flimflam compare\n\n`%s`%s%s (base) against `%s`%s%s (new)\n\n",
			 base.name, base.label ? " build " : "", base.label ? base.label : "",
			 new.name, new.label ? " build " : "", new.label ? new.label : "");
	else
		ff_print("Comparing %s%s%s (base) with %s%s%s (new)\n\n",
			 base.name, base.label ? " build " : "", base.label ? base.label : "",
			 new.name, new.label ? " build " : "", new.label ? new.label : "");
	compare_env(&base, &new);
	worse = compare_cases(&base, &new, md, &matched, &nfailed);
	if (!cmpopt.json && matched) {
		int nb = 0, nn = 0, i;

		for (i = 0; i < base.r->ng; i++)
			nb += same_label(base.r->g[i].k.build, base.label);
		for (i = 0; i < new.r->ng; i++)
			nn += same_label(new.r->g[i].k.build, new.label);
		if (matched < nb || matched < nn)
			printf("\nCases not in both:\n%s", md ? "\n" : "");
	}
	print_unmatched("base", &base, &new, md);
	print_unmatched("new", &new, &base, md);
	if (!cmpopt.json)
		compare_footer(&base, &new, worse, nfailed, md);
	results_free(&rb);
	if (npath)
		results_free(&rn);
	if (!matched) {
		if (cmpopt.json)
			ff_emit_end(1);
		ff_finish();
		if (npath)
			ff_die("'%s' and '%s' have no case in common", bpath, npath);
		ff_die("builds '%s' and '%s' of '%s' have no case in common", cmpopt.base_label,
		       cmpopt.new_label, base.name);
	}
	gate = cmpopt.threshold_set && (worse || nfailed);
	if (cmpopt.json)
		ff_emit_end(gate ? 1 : 0);
	if (ff_finish())
		return 1;
	if (gate)
		ff_warn("%s", gate_str(worse, nfailed, buf, sizeof(buf)));
	return gate ? 1 : 0;
}
