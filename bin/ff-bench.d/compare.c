/*
 * ff-bench compare: two results files, case by case and metric by metric,
 * medians, deltas and a Mann-Whitney U test.
 */
#include "ff-bench.h"

#include <math.h>
#include <sys/stat.h>

static const char compare_usage[] =
	"usage: ff-bench compare [-h] [--threshold PCT] [--format text|markdown] [--json]\n"
	"                        BASE NEW\n"
	"\n"
	"Compare two bench results files, case by case\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"  --threshold PCT       Exit 1 when a significant regression exceeds PCT percent\n"
	"  --format FORMAT       text (default) or markdown, to paste into a pull request\n"
	"  --json                JSON lines: start, environment..., comparison...,\n"
	"                        geomean..., end\n"
	"\n"
	"Cases match by workload, relay, protocol, jobs, cpu limit and duration. Each\n"
	"metric gets the median of each side, the change, and a two-sided Mann-Whitney\n"
	"U test: '~' when the change is not significant at alpha 0.05.\n";

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

/* Environments: what each side ran on */

/* The distinct values of an environment field in a file (joined by " | "). */
static const char *
env_values(const struct results *r, int i)
{
	return r->envv[i][0] ? r->envv[i] : "unknown";
}

/* "3.2.0 (hash 0123...)" for the router a file's runs used. */
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

static void
emit_env_json(const char *side, const char *path, const struct results *r)
{
	json_t *ev = ff_event("environment");
	char buf[2048];
	size_t i;

	json_object_set_new(ev, "side", json_string(side));
	json_object_set_new(ev, "file", ff_json_path(path));
	json_object_set_new(ev, "skrouterd", ff_json_text(router_str(r, buf, sizeof(buf))));
	for (i = 0; i < FF_ARRAY_SIZE(env_fields); i++)
		json_object_set_new(ev, env_fields[i],
				    ff_json_text(env_values(r, i)));
	ff_emit(ev);
}

/* Prints the environments; returns how many fields differ. */
static int
compare_env(const char *bpath, const struct results *base, const char *npath,
	    const struct results *new)
{
	char a[2048], b[2048];
	int i, ndiff = 0, md = !strcmp(cmpopt.format, "markdown");
	json_t *ev;

	if (cmpopt.json) {
		emit_env_json("base", bpath, base);
		emit_env_json("new", npath, new);
	} else if (md) {
		printf("| | base | new |\n| :-- | :-- | :-- |\n");
		ff_print("| file | `%s` | `%s` |\n", bpath, npath);
		ff_print("| router | %s | %s |\n", router_str(base, a, sizeof(a)), router_str(new, b, sizeof(b)));
	} else {
		ff_print("Environment\n");
		ff_print("  base  %s: %s\n", bpath, router_str(base, a, sizeof(a)));
		ff_print("  new   %s: %s\n", npath, router_str(new, a, sizeof(a)));
	}
	for (i = 0; i < (int)FF_ARRAY_SIZE(env_fields); i++) {
		snprintf(a, sizeof(a), "%s", env_values(base, i));
		snprintf(b, sizeof(b), "%s", env_values(new, i));
		if (cmpopt.json) {
			if (!strcmp(a, b))
				continue;
			ev = ff_event("environment_difference");
			json_object_set_new(ev, "field", json_string(env_fields[i]));
			json_object_set_new(ev, "base", ff_json_text(a));
			json_object_set_new(ev, "new", ff_json_text(b));
			ff_emit(ev);
		} else if (md)
			ff_print("| %s | %s | %s%s |\n", env_field_names[i], a, b,
			       strcmp(a, b) ? " **(differs)**" : "");
		else if (strcmp(a, b))
			ff_print("  %-6s DIFFERS: base '%s', new '%s'\n", env_field_names[i], a, b);
		else
			ff_print("  %-6s %s\n", env_field_names[i], a);
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
	json_object_set_new(ev, "hops", json_integer(r->k->hops));
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
	char base[128], new[128], delta[64], verdict[256], relay[128];
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
		/* A chain other than the relay's own: "nginx (4 hops)". */
		snprintf(relay, sizeof(relay), "%s%s", r->k->relay, hops_label(r->k->relay, r->k->hops));
		trow(&t, 7, r->k->workload, relay, r->k->protocol, base, new, delta, verdict);
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
			json_object_set_new(ev, "hops", json_integer(g[i].k.hops));
			json_object_set_new(ev, "jobs", json_integer(g[i].k.jobs));
			json_object_set_new(ev, "cpu_limit", json_integer(g[i].k.cpu_limit));
			json_object_set_new(ev, "duration_s", json_real(g[i].k.duration));
			ff_emit(ev);
		} else
			printf("%sonly in %s: %s %s%s %s (jobs %ld, CPU limit %ld, duration %g s)\n",
			       md ? "- " : "  ", side, g[i].k.workload, g[i].k.relay,
			       hops_label(g[i].k.relay, g[i].k.hops), g[i].k.protocol,
			       g[i].k.jobs, g[i].k.cpu_limit, g[i].k.duration);
	}
}

/* compare's options, into cmpopt; BASE and NEW into bpath and npath. */
static void
compare_options(int argc, char *argv[], const char **bpath, const char **npath)
{
	enum { OPT_THRESHOLD = 256, OPT_FORMAT, OPT_JSON };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "json", no_argument, NULL, OPT_JSON },
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
		}
	if (argc - optind < 2)
		ff_usage_error(compare_usage, "expected two results files, BASE and NEW");
	if (argc - optind > 2)
		ff_usage_error(compare_usage, "unexpected argument '%s'", argv[optind + 2]);
	if (cmpopt.json && strcmp(cmpopt.format, "text"))
		ff_usage_error(compare_usage, "--json and --format %s do not go together", cmpopt.format);
	*bpath = argv[optind];
	*npath = argv[optind + 1];
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
 * Every metric of the cases in both files, one table per metric; returns
 * how many significant regressions exceed the threshold. matched: the
 * cases in both; foot_few: some had too few runs.
 */
static int
compare_cases(const struct results *base, const struct results *new, int *matched, int *foot_few)
{
	const struct group *bg = base->g, *ng = new->g;
	int nb = base->ng, nn = new->ng, i, j, m, nrows, beyond = 0;
	struct cmp_row *rows = calloc(nb + 1, sizeof(*rows));

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
				++*matched;
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
			compare_metric(m, rows, nrows, foot_few);
	}
	free(rows);
	return beyond;
}

/* After the tables: failed runs, the too-few footnote, the threshold's count. */
static void
compare_footer(const struct results *base, const struct results *new, int foot_few,
	       int beyond, int md)
{
	int fb = 0, fn = 0, i;

	for (i = 0; i < base->ng; i++)
		fb += group_count(&base->g[i], 'f');
	for (i = 0; i < new->ng; i++)
		fn += group_count(&new->g[i], 'f');
	if (fb || fn)
		printf("\nFailed runs, not counted: %d in base, %d in new\n", fb, fn);
	if (foot_few)
		printf(md ? "\n¹ need >= %d runs per side to detect a difference at alpha level %g\n" :
		       "\n[1] need >= %d runs per side to detect a difference at alpha level %g\n",
		       need_runs(ALPHA), ALPHA);
	if (cmpopt.threshold_set)
		printf("\n%s%d significant regression%s beyond the threshold of %g%%%s\n",
		       md ? "**" : "", beyond, beyond == 1 ? "" : "s", cmpopt.threshold,
		       md ? "**" : "");
}

int
compare_main(int argc, char *argv[])
{
	const char *bpath, *npath;
	struct results base, new;
	int foot_few = 0, beyond, matched = 0, md;

	compare_options(argc, argv, &bpath, &npath);
	md = !strcmp(cmpopt.format, "markdown");
	refuse_one_file(bpath, npath);
	load_results(bpath, 0, &base);
	load_results(npath, 0, &new);
	/* The cases in bench's order, the matrix's */
	qsort(base.g, base.ng, sizeof(*base.g), cmp_group);
	qsort(new.g, new.ng, sizeof(*new.g), cmp_group);

	if (cmpopt.json)
		ff_emit_start();
	else if (md)
		printf("### flimflam compare\n\n`%s` (base) against `%s` (new); two-sided Mann-Whitney U test, alpha %g\n\n",
		       bpath, npath, ALPHA);
	else
		printf("Comparing %s (base) with %s (new); two-sided Mann-Whitney U test, alpha %g\n\n",
		       bpath, npath, ALPHA);
	compare_env(bpath, &base, npath, &new);
	beyond = compare_cases(&base, &new, &matched, &foot_few);
	if (!cmpopt.json && (matched < base.ng || matched < new.ng))
		printf("\nCases not in both files:\n%s", md ? "\n" : "");
	print_unmatched("base", base.g, base.ng, new.g, new.ng);
	print_unmatched("new", new.g, new.ng, base.g, base.ng);
	if (!cmpopt.json)
		compare_footer(&base, &new, foot_few, beyond, md);
	results_free(&base);
	results_free(&new);
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
