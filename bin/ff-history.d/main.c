/*
 * ff-history - a history of bench results in SQLite, and the change points
 * of every series in it, so that a regression is seen the day it lands.
 *
 *   ff-history [filters] [--check]   each series with its change points
 *   ff-history add FILE...           results files into the history
 *   ff-history export --format csv   a series group as CSV for Apache Otava
 *   ff-history report [-o FILE]      one HTML page of the series
 *
 * `flimflam history` runs this.
 *
 * Its files: main.c (the modes, and the series shown), db.c (the database
 * and its schema), import.c (add), detect.c (E-divisive means), series.c
 * (series out of the database), export.c (CSV), report.c (the page);
 * ff-history.h between them.
 */
#include "ff-history.h"

#include <math.h>
#include <string.h>

static const char usage[] =
	"usage: ff-history [-h] [--db PATH] [-w WORKLOAD] [-r RELAY] [-p PROTOCOL]\n"
	"                  [--label NAME] [--host NAME] [--metric M] [--json]\n"
	"                  [--check] [--threshold PCT]\n"
	"       ff-history add [--commit SHA] [--label NAME] [--db PATH] FILE...\n"
	"       ff-history export --format csv [filters] [-o FILE|DIR]\n"
	"       ff-history report [-o FILE] [filters]\n"
	"\n"
	"Show each series of the history (a case on a machine, one metric, over time)\n"
	"with its change points (E-divisive means, permutation test)\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"  --db PATH             The database (default $XDG_STATE_HOME/flimflam/history.db,\n"
	"                        else ~/.local/state/flimflam/history.db)\n"
	"  -w WORKLOAD, -r RELAY, -p PROTOCOL, --label NAME, --host NAME\n"
	"                        Only the series of this workload, relay, protocol, label,\n"
	"                        host name\n"
	"  --metric M            Only metric M (default: the headline metrics, bits_per_s,\n"
	"                        ops_per_s, latency_p50_us, ...; all: every metric)\n"
	"  --json                JSON lines instead of the text: start, a series event\n"
	"                        per series, end\n"
	"  --check               Exit 1 when the newest point of a series is a regression\n"
	"                        against its last stable segment\n"
	"  --threshold PCT       The smallest change that counts, in % (default 2)\n";

static const char *
commit_or_time(const struct point *p, char *buf, size_t n)
{
	if (p->commit)
		snprintf(buf, n, "%.12s", p->commit);
	else
		snprintf(buf, n, "%s", p->time ? p->time : "?");
	return buf;
}

static void
print_cp(const struct series *s, const struct cp *c, double threshold)
{
	char a[64], b[64], va[64], vb[64];
	int sign = step_sign(c->step_pct, s->higher_better, threshold);

	ff_print("    change at point %d, %s..%s (%s): %s -> %s, %+.1f%% [%+.1f%%, %+.1f%%], p %.3f: %s\n",
		 c->at + 1, commit_or_time(&s->pts[c->at - 1], a, sizeof(a)),
		 commit_or_time(&s->pts[c->at], b, sizeof(b)), s->pts[c->at].time,
		 fmt_metric(s->metric, c->before, va, sizeof(va)),
		 fmt_metric(s->metric, c->after, vb, sizeof(vb)), c->step_pct, c->lo_pct, c->hi_pct,
		 c->p, sign > 0 ? "worse" : sign < 0 ? "better" : "within the threshold");
}

static void
print_series(const struct series *s, double threshold, int utf8)
{
	double *v = malloc((s->n + 1) * sizeof(*v));
	char *spark, last[64], med[64];
	int i;

	if (!v)
		ff_die("out of memory");
	for (i = 0; i < s->n; i++)
		v[i] = s->pts[i].v;
	spark = ff_sparkline(v, s->n, 40, utf8);
	ff_print("  %s (%s is better): %d point%s, %s .. %s  %s\n", s->metric,
		 s->higher_better ? "higher" : "lower", s->n, s->n == 1 ? "" : "s", s->pts[0].time,
		 s->pts[s->n - 1].time, spark);
	for (i = 0; i < s->ncp; i++)
		print_cp(s, &s->cps[i], threshold);
	fmt_metric(s->metric, s->pts[s->n - 1].v, last, sizeof(last));
	if (s->nv.v == V_FEW)
		ff_print("    newest %s: too few points for a verdict\n", last);
	else
		ff_print("    newest %s: %+.1f%% from the last stable segment (points %d-%d, median %s): %s\n",
			 last, s->nv.change_pct, s->nv.from + 1, s->nv.to,
			 fmt_metric(s->metric, s->nv.median, med, sizeof(med)), verdict_name(s->nv.v));
	free(spark);
	free(v);
}

int
show_main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		FILTER_LONGOPTS,
		{ "json", no_argument, NULL, OPT_JSON },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ NULL, 0, NULL, 0 }
	};
	struct filter f = { 0 };
	struct history h;
	const char *db_path = NULL;
	char *path = NULL;
	double threshold = THRESHOLD;
	int c, i, json = 0, check = 0, threshold_given = 0, regressions = 0, utf8 = ff_utf8_locale();
	const struct series *prev = NULL;
	sqlite3 *db;

	optind = 1;
	while ((c = ff_getopt(argc, argv, ":hw:r:p:", longopts, usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case OPT_JSON:
			json = 1;
			break;
		case OPT_CHECK:
			check = 1;
			break;
		case OPT_THRESHOLD:
			threshold = ff_parse_double(usage, "--threshold", optarg, 0, 1000);
			threshold_given = 1;
			break;
		default:
			filter_opt(c, optarg, &f, &db_path);
		}
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s' (a mode is add, export or report)", argv[optind]);
	if (threshold_given && !check)
		ff_usage_error(usage, "--threshold goes with --check");
	if (!db_path)
		db_path = path = db_default_path();
	db = db_open(db_path, 0);
	history_load(db, &f, 1, threshold, &h);
	db_close(db);
	if (json)
		ff_emit_start();
	for (i = 0; i < h.n; i++) {
		const struct series *s = &h.s[i];

		regressions += s->nv.v == V_WORSE;
		if (json) {
			json_t *ev = ff_event("series"), *o = series_json(s, threshold);

			json_object_update(ev, o);
			json_decref(o);
			ff_emit(ev);
			continue;
		}
		if (!prev || strcmp(prev->title, s->title) || strcmp(prev->machine, s->machine))
			ff_print("%s%s\n  on %s\n", prev ? "\n" : "", s->title, s->machine);
		print_series(s, threshold, utf8);
		prev = s;
	}
	if (check && regressions) {
		for (i = 0; i < h.n; i++)
			if (h.s[i].nv.v == V_WORSE)
				ff_warn("regression: %s on %s: %s %+.1f%% from its last stable segment",
					h.s[i].title, h.s[i].machine, h.s[i].metric, h.s[i].nv.change_pct);
	}
	if (json)
		ff_emit_end(check && regressions ? 1 : 0);
	history_free(&h);
	free(path);
	if (ff_finish())
		return 1;
	return check && regressions ? 1 : 0;
}

/*
 * ff-history MODE, or flimflam's command: "flimflam history" in argv[0]
 * (then "flimflam history add").
 */
static int
run_mode(int argc, char *argv[], const char *mode, int (*fn)(int, char *[]))
{
	static char prog[64], self[64];

	snprintf(prog, sizeof(prog), "%s %s", ff_prog(), mode);
	ff_setprog(prog);
	snprintf(self, sizeof(self), "ff-history %s", mode);
	ff_usage_self(self);
	return fn(argc - 1, argv + 1);
}

int
main(int argc, char *argv[])
{
	ff_setprog(argv[0]);
	ff_usage_self("ff-history");
	opterr = 0;
	if (argc > 1 && !strcmp(argv[1], "add"))
		return run_mode(argc, argv, "add", add_main);
	if (argc > 1 && !strcmp(argv[1], "export"))
		return run_mode(argc, argv, "export", export_main);
	if (argc > 1 && !strcmp(argv[1], "report"))
		return run_mode(argc, argv, "report", report_main_h);
	return show_main(argc, argv);
}
