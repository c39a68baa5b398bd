/*
 * ff-bench explain: which functions changed between two builds, and is it
 * noise. Given the recordings (perf.data of `flimflam record`) of several
 * runs of each build, each function's share of its run's samples (self:
 * the samples whose leaf it is), a function being its symbol and module
 * (never an address, which moves between builds), is compared base
 * against new with the Mann-Whitney test; the functions' p values get
 * Benjamini-Hochberg's q, and the change of the share its Hodges-Lehmann
 * estimate with Moses's 95% interval (stats.c), in percentage points of
 * the samples. Shares dilute: a function that grows shrinks the shares of
 * all others. So a run given as its events (the `--json` output of
 * `flimflam record`, FILE.jsonl: its perf.data and the bytes its workload
 * carried) is measured per MB instead, each function's samples per MB
 * carried, which others' growth leaves alone (per 1,000 operations where
 * a workload counts no bytes). The functions tested are the TOP with the
 * largest median on either side: fewer tests, more power for those that
 * matter. A results file of `bench --build A=... --build B=... --record`
 * gives the runs at once (its rows name their recordings and carry their
 * bytes): the first --build is the base, as in compare.
 *
 * Where to see a function: the differential flamegraph of the median run
 * of each side (ff-flame --diff), written beside the results (or the new
 * build's first recording), and a link to it per function whose hash
 * (#search=^NAME$) has the page highlight that function's frames.
 */
#include "ff-bench.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pipeline.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-bench explain [--json] [--top N] [--alpha Q] [--page FILE]\n"
	"                        --base FILE[,FILE...] --new FILE[,FILE...]\n"
	"       ff-bench explain [--json] [--top N] [--alpha Q] [--page FILE]\n"
	"                        [--base LABEL --new LABEL] RESULTS\n"
	"\n"
	"Which functions' cost changed from the base build's recordings (one per\n"
	"run) to the new build's, beyond noise: Mann-Whitney per function,\n"
	"Benjamini-Hochberg q across them. A FILE is a perf.data (each function's\n"
	"share of the samples), or the events of a run, 'flimflam record --json'\n"
	"saved as FILE.jsonl (its samples per MB carried: shares dilute). RESULTS\n"
	"is a results file of 'bench --build A=PATH --build B=PATH --record': its\n"
	"runs' recordings, per MB carried; the first --build is the base.\n"
	"  --base FILES  the base build's recordings, comma-separated (3 or more)\n"
	"  --new FILES   the new build's recordings, likewise\n"
	"  --base LABEL, --new LABEL\n"
	"                with RESULTS: the builds to hold against each other\n"
	"                (default: the first two --build of the bench)\n"
	"  --page FILE   the differential flamegraph of the median run of each\n"
	"                side, which each function links to (default: beside\n"
	"                RESULTS as NAME.explain.html, else explain.html beside\n"
	"                the new build's first recording)\n"
	"  --top N       test the N functions with the largest share (default 20)\n"
	"  --alpha Q     a function changed when its q is below Q (default 0.05)\n"
	"  --json        JSON lines: one `function` event per function tested\n"
	"  --version     Show the version and exit\n";

enum { OPT_BASE = 256, OPT_NEW, OPT_TOP, OPT_ALPHA, OPT_JSON, OPT_PAGE };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	{ "base", required_argument, NULL, OPT_BASE },
	{ "new", required_argument, NULL, OPT_NEW },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "page", required_argument, NULL, OPT_PAGE },
	{ NULL, 0, NULL, 0 }
};

static struct xfn *fns;
static size_t nfns;

static struct xfn *
fn_of(const char *key)
{
	size_t i;

	for (i = 0; i < nfns; i++)
		if (!strcmp(fns[i].key, key))
			return &fns[i];
	fns = ff_realloc(fns, (nfns + 1) * sizeof(*fns));
	memset(&fns[nfns], 0, sizeof(*fns));
	fns[nfns].key = ff_strdup(key);
	return &fns[nfns++];
}

/*
 * "  ffffffff8201 tcp_sendmsg_locked+0x1a ([kernel.kallsyms])" -> the
 * function and its module's base name: "tcp_sendmsg_locked (kernel)".
 */
static void
leaf_key(const char *line, char *key, size_t n)
{
	const char *p = line + strspn(line, " \t"), *sym, *paren, *mod, *slash;
	size_t len, mlen;

	p += strcspn(p, " ");
	sym = p + strspn(p, " ");
	paren = strrchr(sym, '(');
	len = paren && paren > sym ? (size_t)(paren - sym) : strcspn(sym, "\n");
	while (len && sym[len - 1] == ' ')
		len--;
	mod = paren ? paren + 1 : "?)";
	slash = memchr(mod, '/', strcspn(mod, ")"));
	while (slash) {
		mod = slash + 1;
		slash = memchr(mod, '/', strcspn(mod, ")"));
	}
	mlen = strcspn(mod, ")");
	if (mlen == 17 && !strncmp(mod, "[kernel.kallsyms]", 17))
		snprintf(key, n, "%.*s (kernel)", (int)len, sym);
	else
		snprintf(key, n, "%.*s (%.*s)", (int)len, sym, (int)mlen, mod);
}

/* What a run's samples are divided by: all its samples (1), MB or 1k operations carried (2, 3). */
static int per;

/*
 * A run's events (FILE.jsonl): its perf.data, and *work, the MB (or 1k
 * operations) its workload carried; the recording's path (malloc'd).
 */
static char *
run_events(const char *file, double *work, int *kind)
{
	char *text = ff_read_file(file, NULL), *line, *next, *data = NULL;
	double bytes = -1, ops = -1;

	if (!text)
		ff_die("%s: %s", file, strerror(errno));
	for (line = text; *line; line = next) {
		json_t *ev;
		const char *name;

		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		if (!(ev = json_loads(line, 0, NULL)))
			continue;
		name = ff_event_name(ev);
		if (!strcmp(name, "capture") && !data)
			data = ff_json_path_value(json_array_get(json_object_get(ev, "files"), 0));
		if (!strcmp(name, "result")) {
			bytes = ff_json_num(ev, "bytes", -1);
			ops = ff_json_num(ev, "operations", -1);
		}
		json_decref(ev);
	}
	free(text);
	if (!data)
		ff_die("%s: no capture event naming a perf.data (the --json output of flimflam record?)", file);
	if (bytes <= 0 && ops <= 0)
		ff_die("%s: no result with the bytes or operations its workload carried", file);
	*kind = bytes > 0 ? 2 : 3;
	*work = bytes > 0 ? bytes / 1e6 : ops / 1e3;
	return data;
}

/* A run of a side: its recording, its events (or NULL), what it carried (kind 1: shares). */
struct xrun {
	char *data, *events;
	double work, total;
	int kind;
};
static struct xrun xruns[2][XFN_RUNS];
static int nruns[2];

/* A FILE of --base or --new: a perf.data, or a run's events (.jsonl). */
static void
given_run(const char *given, struct xrun *x)
{
	size_t glen = strlen(given);

	x->kind = 1;
	if (glen > 6 && !strcmp(given + glen - 6, ".jsonl")) {
		x->data = run_events(given, &x->work, &x->kind);
		x->events = ff_strdup(given);
	} else
		x->data = ff_strdup(given);
}

/*
 * Run r of side s (xruns[s][r]): each function's self samples over the
 * run's, from perf script. 0 when perf recorded no sample in the run.
 */
static int
read_run(const char *given, int s, int r)
{
	struct xrun *x = &xruns[s][r];
	const char *file = x->data;
	pipeline *p;
	const char *line;
	char key[1024];
	double total = 0;
	size_t i;
	double *count = NULL;
	size_t ncount = 0;

	if (access(file, R_OK) != 0)
		ff_die("%s: %s", file, strerror(errno));
	p = ff_perf_script("-i", file, "-F", "ip,sym,dso", "--hide-call-graph", (char *)NULL);
	while ((line = pipeline_readline(p))) {
		struct xfn *f;

		if (!line[strspn(line, " \t\n")])
			continue;
		leaf_key(line, key, sizeof(key));
		f = fn_of(key);
		if (ncount < nfns) {
			count = ff_realloc(count, nfns * sizeof(*count));
			memset(count + ncount, 0, (nfns - ncount) * sizeof(*count));
			ncount = nfns;
		}
		count[f - fns]++;
		total++;
	}
	if (pipeline_wait(p) != 0)
		ff_die("perf script cannot read '%s'", file);
	if (total == 0) {
		ff_warn("%s: perf recorded no sample in this run; it is left out", given);
		free(count);
		return 0;
	}
	if (per && per != x->kind)
		ff_usage_error(usage, "'%s' is %s, and an earlier one %s: give every run alike", given,
			       x->kind == 1 ? "a perf.data" : "a run's events", per == 1 ? "a perf.data" : "a run's events");
	per = x->kind;
	for (i = 0; i < ncount; i++)
		fns[i].share[s][r] = count[i] / (x->kind == 1 ? total : x->work);
	x->total = x->kind == 1 ? total : total / x->work;
	free(count);
	return 1;
}

/* Every run read; those without samples left out (3 or more a side must remain). */
static void
read_runs(const char *lb[2])
{
	int s, r, k;

	for (s = 0; s < 2; s++) {
		for (r = k = 0; r < nruns[s]; r++) {
			struct xrun x = xruns[s][r];

			xruns[s][r] = xruns[s][k];
			xruns[s][k] = x;
			k += read_run(x.events ? x.events : x.data, s, k);
		}
		nruns[s] = k;
		if (k < 3)
			ff_die("%s%s: %d run%s with samples; the test needs 3 or more a side",
			       lb[s] ? "build " : s ? "--new" : "--base", lb[s] ? lb[s] : "", k, k == 1 ? "" : "s");
	}
}


/* The JSON objects of a results file, one a line (its unreadable lines left out). */
static json_t *
load_json_lines(const char *path)
{
	size_t len;
	char *text = ff_read_file(path, &len), *line;
	struct ff_lines it;
	json_t *rows = json_array(), *row;

	if (!text)
		ff_die("%s: %s", path, strerror(errno));
	ff_lines_init(&it, text, len);
	while ((line = ff_lines_next(&it)))
		if ((row = json_loads(line, 0, NULL)) && json_is_object(row))
			json_array_append_new(rows, row);
		else
			json_decref(row);
	free(text);
	return rows;
}

/* Are the members of a and b under these keys equal? */
static int
same_case(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "workload", "relay", "protocol", "hops", "jobs" };
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(keys); i++)
		if (!json_equal(json_object_get(a, keys[i]), json_object_get(b, keys[i])) &&
		    (json_object_get(a, keys[i]) || json_object_get(b, keys[i])))
			return 0;
	return 1;
}

/* A row of a results file that is a case's run: its build's label, or NULL. */
static const char *
row_label(const json_t *row)
{
	return json_is_object(json_object_get(row, "config")) ?
	       ff_json_str(json_object_get(row, "build"), "label") : NULL;
}

/*
 * The builds to hold against each other, into lb (given, else the bench's
 * first two --build, by their order), from the rows.
 */
static void
pick_builds(const char *path, json_t *rows, const char *lb[2])
{
	const char *first[2] = { NULL, NULL }, *l;
	json_t *row;
	size_t i;
	int nb = 0, s;

	json_array_foreach(rows, i, row) {
		long o = (long)ff_json_num(json_object_get(row, "build"), "order", -1);

		if (!(l = row_label(row)))
			continue;
		if (o >= 0 && o < 2 && !first[o])
			first[o] = l;
		nb = o + 1 > nb ? (int)o + 1 : nb;
	}
	if (lb[0] || lb[1]) {
		if (!lb[0] || !lb[1])
			ff_usage_error(usage, "with a results file, give both --base LABEL and --new LABEL, or neither");
		return;
	}
	if (nb < 2 || !first[0] || !first[1])
		ff_usage_error(usage, "'%s' holds %s: explain needs a bench of two (--build A=PATH --build B=PATH --record)",
			       path, nb ? "one build" : "no --build");
	if (nb > 2)
		ff_usage_error(usage, "'%s' holds %d builds: pick two with --base LABEL --new LABEL", path, nb);
	/* Copies: the rows, which hold the labels, are freed once read; the labels are said after. */
	for (s = 0; s < 2; s++)
		lb[s] = ff_strdup(first[s]);
}

/*
 * The runs of the results file `path` (a bench with --build ... --record),
 * each side's ok runs with their recordings and the bytes (or operations)
 * they carried. Usage errors: no such builds, no recordings, several cases.
 */
static void
results_runs(const char *path, const char *lb[2])
{
	json_t *rows = load_json_lines(path), *row, *c0 = NULL;
	size_t i;
	int s, norec = 0;

	pick_builds(path, rows, lb);
	json_array_foreach(rows, i, row) {
		const char *l = row_label(row);
		json_t *res = json_object_get(row, "result"), *c = json_object_get(row, "config");
		struct xrun *x;
		double bytes, ops;

		for (s = 0; s < 2 && !(l && !strcmp(l, lb[s])); s++)
			;
		if (s == 2 || !is_status(row, "ok"))
			continue;
		if (!c0)
			c0 = c;
		else if (!same_case(c0, c))
			ff_usage_error(usage, "'%s' holds several cases (%s %s %s and %s %s %s): explain takes one",
				       path, ff_json_str(c0, "workload"), ff_json_str(c0, "relay"), ff_json_str(c0, "protocol"),
				       ff_json_str(c, "workload"), ff_json_str(c, "relay"), ff_json_str(c, "protocol"));
		if (!json_array_size(json_object_get(json_object_get(row, "capture"), "files"))) {
			norec++;
			continue;
		}
		if (nruns[s] == XFN_RUNS)
			ff_usage_error(usage, "'%s': at most %d runs a build", path, XFN_RUNS);
		x = &xruns[s][nruns[s]++];
		x->data = ff_json_path_value(json_array_get(json_object_get(json_object_get(row, "capture"), "files"), 0));
		bytes = ff_json_num(res, "bytes", -1);
		ops = ff_json_num(res, "operations", -1);
		if (bytes <= 0 && ops <= 0)
			ff_die("%s: a run of build %s carried no bytes nor operations", path, lb[s]);
		x->kind = bytes > 0 ? 2 : 3;
		x->work = bytes > 0 ? bytes / 1e6 : ops / 1e3;
	}
	if (norec)
		ff_usage_error(usage, "'%s': %d run%s of builds %s and %s without a recording: bench them with --record",
			       path, norec, norec == 1 ? "" : "s", lb[0], lb[1]);
	for (s = 0; s < 2; s++)
		if (nruns[s] < 3)
			ff_usage_error(usage, "'%s': build %s has %d ok run%s; the test needs 3 or more a side",
				       path, lb[s], nruns[s], nruns[s] == 1 ? "" : "s");
	json_decref(rows);
}

static int
split_files(char *list, char **out)
{
	char *save, *tok;
	int n = 0;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == XFN_RUNS)
			ff_usage_error(usage, "at most %d recordings a side", XFN_RUNS);
		out[n++] = tok;
	}
	return n;
}

/* The run of side s the page shows: the median by its samples (per MB, or all). */
static int
median_run(int s)
{
	int idx[XFN_RUNS], i, j, t;

	for (i = 0; i < nruns[s]; i++)
		idx[i] = i;
	for (i = 1; i < nruns[s]; i++)
		for (j = i; j > 0 && xruns[s][idx[j - 1]].total > xruns[s][idx[j]].total; j--) {
			t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	return idx[(nruns[s] - 1) / 2];
}

/*
 * The differential flamegraph of the median run of each side, written to
 * `page` by ff-flame; its file:// URL (malloc'd). Dies when it cannot.
 */
static char *
write_page(const char *page, const char *lb[2])
{
	const struct xrun *b = &xruns[0][median_run(0)], *n = &xruns[1][median_run(1)];
	char *flame = ff_helper_path("ff-flame"), title[256];
	pipecmd *cmd;
	int st;

	snprintf(title, sizeof(title), "Differential flame graph: %s against %s (the median run of each)",
		 lb[1] ? lb[1] : "new", lb[0] ? lb[0] : "base");
	cmd = pipecmd_new_args(flame, "-o", page, "-t", title, (void *)0);
	if (b->events && n->events)
		pipecmd_args(cmd, "--events", n->events, "--base-events", b->events, (void *)0);
	pipecmd_args(cmd, "--diff", b->data, n->data, (void *)0);
	st = pipeline_run(pipeline_new_commands(cmd, (void *)0));
	if (st != 0)
		ff_die("cannot write the differential flamegraph '%s' (ff-flame %s %s)", page,
		       st < 0 ? "did not start:" : "exited with status", st < 0 ? strerror(errno) : "");
	free(flame);
	return ff_file_url(page);
}

/*
 * A function's link: the page's URL and a hash that has it search for
 * the function's frames, named as ff-flame names them ("sym", "sym_[k]"
 * in the kernel, "[module]" for a module's unknown symbols), exactly.
 */
static char *
fn_link(const char *url, const char *key)
{
	const char *paren = strrchr(key, '(');
	size_t slen = paren && paren > key ? (size_t)(paren - key - 1) : strlen(key);
	size_t mlen = paren ? strcspn(paren + 1, ")") : 0;
	struct ff_buf name = FF_BUF_INIT, re = FF_BUF_INIT, link = FF_BUF_INIT;
	int kernel = mlen == 6 && !strncmp(paren + 1, "kernel", 6);
	const unsigned char *c;
	char *out;

	if (slen == 9 && !strncmp(key, "[unknown]", 9) && !kernel && mlen && paren[1] != '?')
		ff_buf_printf(&name, "[%.*s]", (int)mlen, paren + 1);
	else
		ff_buf_printf(&name, "%.*s%s", (int)slen, key, kernel ? "_[k]" : "");
	ff_buf_printf(&re, "^");
	for (c = (const unsigned char *)name.s; *c; c++)
		ff_buf_printf(&re, "%s%c", strchr("\\^$.|?*+()[]{}", *c) ? "\\" : "", *c);
	ff_buf_printf(&re, "$");
	ff_buf_printf(&link, "%s#search=", url);
	for (c = (const unsigned char *)re.s; *c; c++)
		if (isalnum(*c) || strchr("-._~", *c))
			ff_buf_printf(&link, "%c", *c);
		else
			ff_buf_printf(&link, "%%%02X", *c);
	out = ff_buf_take(&link);
	ff_buf_free(&name);
	ff_buf_free(&re);
	return out;
}

/* A function tested, as a `function` event (ch: changed beyond noise). */
static void
emit_fn(const struct xfn *f, int ch, const char *link)
{
	json_t *ev = ff_event("function");

	json_object_set_new(ev, "function", json_string(f->key));
	json_object_set_new(ev, "unit", json_string(per == 1 ? "share" : per == 2 ?
						    "samples_per_mb" : "samples_per_1k_ops"));
	json_object_set_new(ev, "base", json_real(f->med[0]));
	json_object_set_new(ev, "new", json_real(f->med[1]));
	json_object_set_new(ev, "change", json_real(f->sh.est));
	json_object_set_new(ev, "ci_low", isnan(f->sh.lo) ? json_null() : json_real(f->sh.lo));
	json_object_set_new(ev, "ci_high", isnan(f->sh.hi) ? json_null() : json_real(f->sh.hi));
	json_object_set_new(ev, "p", json_real(f->t.p));
	json_object_set_new(ev, "q", json_real(f->q));
	json_object_set_new(ev, "changed", json_boolean(ch));
	json_object_set_new(ev, "flamegraph", json_string(link));
	ff_emit(ev);
}

/* The table's head: what was tested, and how. */
static void
print_head(int tested)
{
	printf("%d and %d recordings; the %d functions of the largest %s tested (of %zu):\n"
	       "%s, median of the runs; change%s, Hodges-Lehmann,\n"
	       "95%% interval; Mann-Whitney p; Benjamini-Hochberg q across the %d.\n\n"
	       "%-48s %8s %8s %22s %7s %7s\n", nruns[0], nruns[1], tested,
	       per == 1 ? "share" : "cost", nfns,
	       per == 1 ? "share of the samples (self)" : per == 2 ? "self samples per MB carried" :
	       "self samples per 1,000 operations", per == 1 ? " in points" : "",
	       tested, "Function (module)", "Base", "New", "Change [95% interval]", "p", "q");
}

/* A function tested, as a line of the table. */
static void
print_fn(const struct xfn *f, int ch)
{
	double k = per == 1 ? 100 : 1;
	char chg[64];

	if (isnan(f->sh.lo))
		snprintf(chg, sizeof(chg), "%+.3g [no interval]", k * f->sh.est);
	else
		snprintf(chg, sizeof(chg), "%+.3g [%+.3g, %+.3g]", k * f->sh.est,
			 k * f->sh.lo, k * f->sh.hi);
	printf("%-48.48s %7.3g%s %7.3g%s %22s %7.2g %7.2g%s\n", f->key, k * f->med[0],
	       per == 1 ? "%" : " ", k * f->med[1], per == 1 ? "%" : " ", chg, f->t.p, f->q,
	       ch ? "  changed" : "");
}

/* The page's default name: RESULTS.explain.html (.jsonl left out), else explain.html beside `beside`. */
static char *
default_page(const char *results, const char *beside)
{
	size_t n;
	const char *slash;

	if (results) {
		n = strlen(results);
		if (n > 6 && !strcmp(results + n - 6, ".jsonl"))
			n -= 6;
		return ff_asprintf("%.*s.explain.html", (int)n, results);
	}
	slash = strrchr(beside, '/');
	return slash ? ff_asprintf("%.*s/explain.html", (int)(slash - beside), beside) :
	       ff_strdup("explain.html");
}

/* The options, and the runs they name (files, or a results file's), read. */
static void
explain_args(int argc, char *argv[], int *json, long *top, double *alpha, const char **page,
	     const char *lb[2], const char **results)
{
	char *files[XFN_RUNS], *lists[2] = { NULL, NULL };
	int c, s, r;

	while ((c = ff_getopt(argc, argv, ":h", longopts, usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case OPT_BASE:
		case OPT_NEW:
			lists[c == OPT_NEW] = optarg;
			break;
		case OPT_TOP:
			*top = ff_parse_long(usage, "--top", optarg, 1, 10000);
			break;
		case OPT_ALPHA:
			*alpha = strtod(optarg, NULL);
			if (!(*alpha > 0 && *alpha < 1))
				ff_usage_error(usage, "--alpha: expected a number between 0 and 1, not '%s'", optarg);
			break;
		case OPT_JSON:
			*json = 1;
			break;
		case OPT_PAGE:
			if (!*optarg)
				ff_usage_error(usage, "--page: expected a file name");
			*page = optarg;
			break;
		}
	if (optind + 1 < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind + 1]);
	if (optind < argc) {
		/* A results file: --base and --new name its builds. */
		*results = argv[optind];
		lb[0] = lists[0];
		lb[1] = lists[1];
		results_runs(*results, lb);
		return;
	}
	if (!lists[0] || !lists[1])
		ff_usage_error(usage, "give both --base and --new, or a results file");
	for (s = 0; s < 2; s++) {
		nruns[s] = split_files(lists[s], files);
		if (nruns[s] < 3)
			ff_usage_error(usage, "--%s: %d recording%s; the test needs 3 or more a side",
				       s ? "new" : "base", nruns[s], nruns[s] == 1 ? "" : "s");
		for (r = 0; r < nruns[s]; r++)
			given_run(files[r], &xruns[s][r]);
	}
}

int
explain_main(int argc, char *argv[])
{
	const char *lb[2] = { NULL, NULL }, *results = NULL, *page = NULL;
	int r, json = 0, tested, changed = 0;
	long top = 20;
	double alpha = 0.05;
	char *pagefile, *url, **links;

	explain_args(argc, argv, &json, &top, &alpha, &page, lb, &results);
	read_runs(lb);
	tested = explain_test(fns, nfns, nruns, top, alpha, &changed);
	pagefile = page ? ff_strdup(page) : default_page(results, xruns[1][0].events ?
							 xruns[1][0].events : xruns[1][0].data);
	url = write_page(pagefile, lb);
	links = ff_realloc(NULL, (tested + 1) * sizeof(*links));
	if (!json)
		print_head(tested);
	for (r = 0; r < tested; r++) {
		links[r] = fn_link(url, fns[r].key);
		if (json)
			emit_fn(&fns[r], fns[r].changed, links[r]);
		else
			print_fn(&fns[r], fns[r].changed);
	}
	if (!json) {
		printf("\n%d function%s changed beyond noise (q < %g).\n", changed, changed == 1 ? "" : "s", alpha);
		printf("\nDifferential flamegraph (the median run of each side): %s\n", pagefile);
		for (r = 0; r < tested; r++)
			if (fns[r].changed)
				printf("  %s: %s\n", fns[r].key, links[r]);
	}
	/* The smallest q these runs can give (the smallest p, alone, times the tests): too few runs? */
	if (min_p(nruns[0], nruns[1]) * tested >= alpha)
		ff_warn("with %d and %d runs the smallest p is %.2g, so across %d functions no q can be below %g: add runs, or test fewer (--top)",
			nruns[0], nruns[1], min_p(nruns[0], nruns[1]), tested, alpha);
	for (r = 0; r < tested; r++)
		free(links[r]);
	free(links);
	free(url);
	free(pagefile);
	return ff_finish();
}
