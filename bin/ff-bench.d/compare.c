/*
 * ff-bench compare: two results files, case by case and metric by metric,
 * medians, deltas and a Mann-Whitney U test.
 */
#include "ff-bench.h"

#include <ctype.h>
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
	"  --threshold PCT       The change a verdict needs: its whole confidence interval\n"
	"                        beyond PCT for better or worse, within +-PCT for no\n"
	"                        change (default 2); given, a gate: exit 1 for worse,\n"
	"                        more failures, a case or metric gone from NEW, 3 when\n"
	"                        a comparison is undecided, else 0\n"
	"  --base LABEL          The build of BASE to compare (bench --build LABEL=PATH)\n"
	"  --new LABEL           The build of NEW (of BASE without NEW) to compare\n"
	"  --format FORMAT       text (default) or markdown, to paste into a pull request\n"
	"  --json                JSON lines: start, environment..., doubt..., method,\n"
	"                        comparison..., geomean..., unmatched..., end\n"
	"\n"
	"Cases match by workload, relay, protocol, jobs, cpu limit and duration. Each\n"
	"metric gets the median of each side, the Hodges-Lehmann change of the log\n"
	"values with its 95% confidence interval, a two-sided Mann-Whitney U test, and\n"
	"its p adjusted for the table (Benjamini-Hochberg); better or worse when that\n"
	"q < 0.05 and the interval lies beyond the threshold, no change when within it,\n"
	"with at least 5 runs a side; otherwise inconclusive, and why.\n";

/* ff-bench compare */

struct cmp_opts cmpopt = { "text", 0, 0, THRESHOLD, NULL, NULL };

/* After the tables: failed runs, the gate's count. */
static void
compare_footer(const struct side *bs, const struct side *ns, const struct gate_count *gate, int md)
{
	int fb = 0, fn = 0, i;
	char buf[512];

	for (i = 0; i < bs->r->ng; i++)
		if (same_label(bs->r->g[i].k.build, bs->label))
			fb += group_count(&bs->r->g[i], 'f');
	for (i = 0; i < ns->r->ng; i++)
		if (same_label(ns->r->g[i].k.build, ns->label))
			fn += group_count(&ns->r->g[i], 'f');
	if (fb || fn)
		printf("\nFailed runs, not counted: %d in base, %d in new\n", fb, fn);
	if (cmpopt.threshold_set) {
		gate_str(gate, cmpopt.threshold, buf, sizeof(buf));
		buf[0] = (char)toupper((unsigned char)buf[0]);
		printf("\n%s%s%s\n", md ? "**" : "", buf, md ? "**" : "");
	}
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
	struct side b = { "", "", r, NULL, 0 }, n = { "", "", r, NULL, 0 };
	struct gate_count gate;
	int nl = labels_of(r, &l), i, matched;

	for (i = 1; i < nl; i++) {
		if (!l[0] || !l[i])
			continue;
		b.label = l[0];
		n.label = l[i];
		printf("\nBuild %s against %s (the base)\n", l[i], l[0]);
		same_build(&b, &n, 0);
		memset(&gate, 0, sizeof(gate));
		compare_cases(&b, &n, 0, &matched, &gate);
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
	struct side base = { NULL, NULL, &rb, NULL, 0 }, new = { NULL, NULL, &rn, NULL, 1 };
	struct gate_count gate = { 0 };
	int status, matched = 0, md;
	char buf[512];

	compare_options(argc, argv, &bpath, &npath);
	md = !strcmp(cmpopt.format, "markdown");
	if (npath)
		refuse_one_file(bpath, npath);
	load_results(bpath, 0, &rb);
	if (npath)
		load_results(npath, 0, &rn);
	else {
		new.r = &rb;
		new.own_file = 0;
	}
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
	compare_cases(&base, &new, md, &matched, &gate);
	compare_unmatched(&base, &new, md, matched, &gate);
	if (!cmpopt.json)
		compare_footer(&base, &new, &gate, md);
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
	/* Without --threshold, no gate: 0 whatever the verdicts. */
	status = cmpopt.threshold_set ? gate_exit(&gate) : 0;
	if (cmpopt.json)
		ff_emit_end(status);
	if (ff_finish())
		return 1;
	if (status)
		ff_warn("%s", gate_str(&gate, cmpopt.threshold, buf, sizeof(buf)));
	return status;
}
