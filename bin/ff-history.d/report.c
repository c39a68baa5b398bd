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

/* JSON in a <script> element: no "<" in it, so nothing in it can end the element. */
static void
add_script_json(struct ff_buf *b, const char *json)
{
	const char *lt;

	while ((lt = strchr(json, '<'))) {
		ff_buf_add(b, json, lt - json);
		ff_buf_addstr(b, "\\u003c");
		json = lt + 1;
	}
	ff_buf_addstr(b, json);
}

static void
page_html(struct ff_buf *b, json_t *data)
{
	static const char *const marks[] = { "@REPORT_CSS@", "@HISTORY_DATA@", "@HISTORY_JS@" };
	char *html = ff_data_text("share/history/history.html"), *css = ff_data_text("share/report/report.css"),
		*js = ff_data_text("share/history/history.js"), *text, *p = html, *q;
	size_t i;

	text = json_dumps(data, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text)
		ff_die("out of memory");
	for (i = 0; i < FF_ARRAY_SIZE(marks); i++) {
		q = strstr(p, marks[i]);
		if (!q)
			ff_die("share/history/history.html: no %s in the template", marks[i]);
		ff_buf_add(b, p, q - p);
		if (i == 0)
			ff_buf_addstr(b, css);
		else if (i == 1)
			add_script_json(b, text);
		else
			ff_buf_addstr(b, js);
		p = q + strlen(marks[i]);
	}
	ff_buf_addstr(b, p);
	free(text);
	free(html);
	free(css);
	free(js);
}

static void
say_page(const char *path)
{
	char full[PATH_MAX], *url;

	if (path[0] == '/' || !getcwd(full, sizeof(full)) || strlen(full) + strlen(path) + 2 > sizeof(full))
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full + strlen(full), sizeof(full) - strlen(full), "/%s", path);
	url = ff_file_url(full);
	ff_print("Report: %s\n\nOpen it in a browser: %s\n", path, url);
	free(url);
}

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
	struct filter f = { 0 };
	struct history h;
	struct ff_buf b = FF_BUF_INIT;
	struct ff_out o;
	const char *db_path = NULL, *out = "history.html";
	char *path = NULL;
	double threshold = THRESHOLD;
	json_t *data, *series;
	int c, i;
	sqlite3 *db;

	optind = 1;
	while ((c = ff_getopt(argc, argv, ":hw:r:p:o:", longopts, report_usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(report_usage, 0);
		case 'o':
			if (!*optarg)
				ff_usage_error(report_usage, "-o: expected a file name");
			out = optarg;
			break;
		case OPT_THRESHOLD:
			threshold = ff_parse_double(report_usage, "--threshold", optarg, 0, 1000);
			break;
		default:
			filter_opt(c, optarg, &f, &db_path);
		}
	if (optind < argc)
		ff_usage_error(report_usage, "unexpected argument '%s'", argv[optind]);
	if (strcmp(out, "-") && ff_out_check(&o, out, 0, NULL) < 0)
		ff_die("%s", o.err);
	if (!strcmp(out, "-"))
		ff_check_stdout();
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
	page_html(&b, data);
	json_decref(data);
	history_free(&h);
	if (!strcmp(out, "-")) {
		if (fwrite(b.s, 1, b.len, stdout) != b.len || fflush(stdout) == EOF)
			ff_write_failed();
	} else if (ff_out_open(&o, out, 0, NULL, 0644) < 0 || ff_out_write(&o, b.s, b.len) < 0 ||
		   ff_out_commit(&o) < 0) {
		ff_out_abort(&o);
		ff_die("%s", o.err);
	} else {
		say_page(out);
	}
	ff_buf_free(&b);
	free(path);
	return ff_finish();
}
