/*
 * flimflam history report: one self-contained HTML page of the series,
 * built as ff-bench's report is: our template (share/history/history.html)
 * with the report page's style (share/report/report.css), the series as
 * JSON (series_json) and the script that draws them (share/history/
 * history.js) put in.
 */
#include "ff-history.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

static const char report_usage[] =
	"usage: ff-history report [-h] [-o FILE] [--threshold PCT] [--db PATH] [-w WORKLOAD]\n"
	"                         [-r RELAY] [-p PROTOCOL] [--label NAME] [--host NAME]\n"
	"                         [--metric M]\n"
	"\n"
	"Write one self-contained HTML page of the history: a chart per case and metric,\n"
	"its change points marked, the newest point's verdict\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"  -o FILE, --output FILE\n"
	"                        The page (default 'history.html' in the current\n"
	"                        directory; an existing file is replaced; - is standard\n"
	"                        output)\n"
	"  --threshold PCT       The smallest change that counts, in % (default 2)\n"
	"  --db, -w, -r, -p, --label, --host, --metric\n"
	"                        As for ff-history: which series\n";

int
report_main_h(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		FILTER_LONGOPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const files[] = { "share/history/history.html", "share/report/report.css",
					     "share/history/history.js" };
	static const char *const marks[] = { "@REPORT_CSS@", "@HISTORY_DATA@", "@HISTORY_JS@" };
	struct filter f = { 0 };
	struct history h;
	struct ff_buf b = FF_BUF_INIT;
	const char *db_path = NULL, *out = "history.html";
	char *path = NULL;
	double threshold = THRESHOLD;
	json_t *data, *series;
	int c, i;
	sqlite3 *db;

	optind = 1;
	while ((c = ff_getopt(argc, argv, ":hw:r:p:o:", longopts, report_usage)) != -1)
		switch (c) {
		case OPT_THRESHOLD:
			threshold = ff_parse_double(report_usage, "--threshold", optarg, 0, 1000);
			break;
		default:
			if (!ff_page_opt(report_usage, c, optarg, &out))
				filter_opt(c, optarg, &f, &db_path);
		}
	if (optind < argc)
		ff_usage_error(report_usage, "unexpected argument '%s'", argv[optind]);
	ff_page_check(out);
	if (!db_path)
		db_path = path = db_default_path();
	db = db_open(db_path, 0);
	history_load(db, &f, 1, threshold, &h);
	db_close(db);
	series = json_array();
	for (i = 0; i < h.n; i++)
		json_array_append_new(series, series_json(&h.s[i], threshold));
	data = json_pack("{s:o, s:f, s:o}", "db", ff_json_path(db_path), "threshold_pct", threshold,
			 "series", series);
	ff_page_html(&b, files, marks, data);
	json_decref(data);
	history_free(&h);
	if (ff_page_write(out, &b) < 0)
		ff_quit(1);
	if (strcmp(out, "-"))
		ff_page_say(out);
	ff_buf_free(&b);
	free(path);
	return ff_finish();
}
