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
 * matter.
 */
#include "ff-bench.h"

#include <errno.h>
#include <math.h>
#include <pipeline.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-bench explain [--json] [--top N] [--alpha Q] --base FILE[,FILE...]\n"
	"                        --new FILE[,FILE...]\n"
	"\n"
	"Which functions' cost changed from the base build's recordings (one per\n"
	"run) to the new build's, beyond noise: Mann-Whitney per function,\n"
	"Benjamini-Hochberg q across them. A FILE is a perf.data (each function's\n"
	"share of the samples), or the events of a run, 'flimflam record --json'\n"
	"saved as FILE.jsonl (its samples per MB carried: shares dilute).\n"
	"  --base FILES  the base build's recordings, comma-separated (3 or more)\n"
	"  --new FILES   the new build's recordings, likewise\n"
	"  --top N       test the N functions with the largest share (default 20)\n"
	"  --alpha Q     a function changed when its q is below Q (default 0.05)\n"
	"  --json        JSON lines: one `function` event per function tested\n"
	"  --version     Show the version and exit\n";

enum { OPT_BASE = 256, OPT_NEW, OPT_TOP, OPT_ALPHA, OPT_JSON };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	{ "base", required_argument, NULL, OPT_BASE },
	{ "new", required_argument, NULL, OPT_NEW },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 }
};

#define MAX_RUNS 64

/* A function: "sym (module)", and its samples in each run of each side. */
struct fn {
	char *key;
	double share[2][MAX_RUNS];
	double med[2];
	struct utest t;
	struct shift sh;
	double q;
};

static struct fn *fns;
static size_t nfns;

static struct fn *
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

/* Run r of side s: each function's self samples over the run's, from perf script. */
static void
read_run(const char *given, int s, int r)
{
	size_t glen = strlen(given);
	int kind = 1;
	double work = 0;
	char *file = glen > 6 && !strcmp(given + glen - 6, ".jsonl") ?
		     run_events(given, &work, &kind) : ff_strdup(given);
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
		struct fn *f;

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
	if (pipeline_wait(p) != 0 || total == 0)
		ff_die("perf script read no samples from '%s'", file);
	if (per && per != kind)
		ff_usage_error(usage, "'%s' is %s, and an earlier one %s: give every run alike", given,
			       kind == 1 ? "a perf.data" : "a run's events", per == 1 ? "a perf.data" : "a run's events");
	per = kind;
	for (i = 0; i < ncount; i++)
		fns[i].share[s][r] = count[i] / (kind == 1 ? total : work);
	free(count);
	free(file);
}

static int nruns[2];

static int
cmp_med(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	double mx = fmax(x->med[0], x->med[1]), my = fmax(y->med[0], y->med[1]);

	return mx < my ? 1 : mx > my ? -1 : strcmp(x->key, y->key);
}

static double
median_of(const double *v, int n)
{
	double *c = ff_realloc(NULL, n * sizeof(*c)), m;

	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), ff_cmp_double);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

static int
split_files(char *list, char **out)
{
	char *save, *tok;
	int n = 0;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_RUNS)
			ff_usage_error(usage, "at most %d recordings a side", MAX_RUNS);
		out[n++] = tok;
	}
	return n;
}

/* A function tested, as a `function` event (ch: changed beyond noise). */
static void
emit_fn(const struct fn *f, int ch)
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
print_fn(const struct fn *f, int ch)
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

int
explain_main(int argc, char *argv[])
{
	char *files[2][MAX_RUNS], *lists[2] = { NULL, NULL };
	int c, s, r, json = 0, tested, changed = 0;
	long top = 20;
	double alpha = 0.05, *p, *q;
	size_t i;

	while ((c = ff_getopt(argc, argv, ":h", longopts, usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case OPT_BASE:
		case OPT_NEW:
			lists[c == OPT_NEW] = optarg;
			break;
		case OPT_TOP:
			top = ff_parse_long(usage, "--top", optarg, 1, 10000);
			break;
		case OPT_ALPHA:
			alpha = strtod(optarg, NULL);
			if (!(alpha > 0 && alpha < 1))
				ff_usage_error(usage, "--alpha: expected a number between 0 and 1, not '%s'", optarg);
			break;
		case OPT_JSON:
			json = 1;
			break;
		}
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (!lists[0] || !lists[1])
		ff_usage_error(usage, "give both --base and --new");
	for (s = 0; s < 2; s++) {
		nruns[s] = split_files(lists[s], files[s]);
		if (nruns[s] < 3)
			ff_usage_error(usage, "--%s: %d recording%s; the test needs 3 or more a side",
				       s ? "new" : "base", nruns[s], nruns[s] == 1 ? "" : "s");
	}
	for (s = 0; s < 2; s++)
		for (r = 0; r < nruns[s]; r++)
			read_run(files[s][r], s, r);
	for (i = 0; i < nfns; i++)
		for (s = 0; s < 2; s++)
			fns[i].med[s] = median_of(fns[i].share[s], nruns[s]);
	qsort(fns, nfns, sizeof(*fns), cmp_med);
	tested = nfns < (size_t)top ? (int)nfns : (int)top;
	p = ff_realloc(NULL, (tested + 1) * sizeof(*p));
	q = ff_realloc(NULL, (tested + 1) * sizeof(*q));
	for (r = 0; r < tested; r++) {
		mann_whitney(fns[r].share[0], nruns[0], fns[r].share[1], nruns[1], &fns[r].t);
		hodges_lehmann(fns[r].share[0], nruns[0], fns[r].share[1], nruns[1], 0.05, &fns[r].sh);
		p[r] = fns[r].t.p;
	}
	bh_adjust(p, tested, q);
	if (!json)
		print_head(tested);
	for (r = 0; r < tested; r++) {
		struct fn *f = &fns[r];
		int ch = q[r] < alpha;

		changed += ch;
		f->q = q[r];
		if (json)
			emit_fn(f, ch);
		else
			print_fn(f, ch);
	}
	if (!json)
		printf("\n%d function%s changed beyond noise (q < %g).\n", changed, changed == 1 ? "" : "s", alpha);
	/* The smallest q these runs can give (the smallest p, alone, times the tests): too few runs? */
	if (min_p(nruns[0], nruns[1]) * tested >= alpha)
		ff_warn("with %d and %d runs the smallest p is %.2g, so across %d functions no q can be below %g: add runs, or test fewer (--top)",
			nruns[0], nruns[1], min_p(nruns[0], nruns[1]), tested, alpha);
	free(p);
	free(q);
	return ff_finish();
}
