/*
 * flimflam history export --format csv: the series of one case on one
 * machine (a "group": one case, build label, label and machine) as the CSV
 * file Apache Otava (formerly Hunter) reads as a test of `type: csv`
 * (docs/CSV.md of apache/otava): a header line, then one line per run in
 * order of time; a time column (`time`, "2026-12-02 00:05:20 +0000", as
 * Otava prints it), attribute columns (commit, label, build_version,
 * build_sha256, proton_version), then one column per metric. Otava reads
 * each metric cell as a float, so a metric that some runs of the group
 * lack is left out (and said). Several groups go to a directory, one file
 * each: Otava analyses a file as one series of runs, and runs of two
 * machines must not be mixed.
 */
#include "ff-history.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static const char export_usage[] =
	"usage: ff-history export [-h] --format csv [--db PATH] [-w WORKLOAD] [-r RELAY]\n"
	"                         [-p PROTOCOL] [--label NAME] [--host NAME] [--metric M]\n"
	"                         [-o FILE|DIR]\n"
	"\n"
	"Write the runs of a case on a machine as CSV for Apache Otava: time, commit and\n"
	"the build, then one column per metric\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"  --format csv          The format (csv, the one there is)\n"
	"  -o FILE|DIR, --output FILE|DIR\n"
	"                        The file (default standard output); a directory for several\n"
	"                        cases or machines, one file each\n"
	"  --db, -w, -r, -p, --label, --host, --metric\n"
	"                        As for ff-history: which series\n";

/* A CSV field: quoted (RFC 4180) when it holds a comma, a quote or a line break. */
static void
csv_field(struct ff_buf *b, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		ff_buf_addstr(b, s);
		return;
	}
	ff_buf_addstr(b, "\"");
	for (; *s; s++)
		ff_buf_add(b, s, 1 + (*s == '"'));
	ff_buf_addstr(b, "\"");
}

/* ISO 8601 UTC ("2026-12-02T00:05:20Z") as Otava prints time ("2026-12-02 00:05:20 +0000"). */
static void
csv_time(struct ff_buf *b, const char *t)
{
	if (t && strlen(t) == 20 && t[10] == 'T' && t[19] == 'Z')
		ff_buf_printf(b, "%.10s %.8s +0000", t, t + 11);
	else
		csv_field(b, t);
}

/* Does series s hold the runs of `full`, in its order? */
static int
aligned(const struct series *s, const struct series *full)
{
	int j;

	if (s->n != full->n)
		return 0;
	for (j = 0; j < s->n; j++)
		if (s->pts[j].run != full->pts[j].run)
			return 0;
	return 1;
}

/* The CSV of group [a, e) of h: the series of every run make the columns. */
static char *
group_csv(const struct history *h, int a, int e)
{
	struct ff_buf b = FF_BUF_INIT;
	const struct series *full = &h->s[a];
	int i, j;

	for (i = a; i < e; i++)
		full = h->s[i].n > full->n ? &h->s[i] : full;
	ff_buf_addstr(&b, "time,commit,label,build_version,build_sha256,proton_version");
	for (i = a; i < e; i++) {
		if (!aligned(&h->s[i], full)) {
			ff_warn("%s on %s: metric %s left out: %d of the %d runs have it", h->s[i].title,
				h->s[i].machine, h->s[i].metric, h->s[i].n, full->n);
			continue;
		}
		ff_buf_addstr(&b, ",");
		csv_field(&b, h->s[i].metric);
	}
	ff_buf_addstr(&b, "\n");
	for (j = 0; j < full->n; j++) {
		const struct point *p = &full->pts[j];

		csv_time(&b, p->time);
		ff_buf_addstr(&b, ",");
		csv_field(&b, p->commit);
		ff_buf_addstr(&b, ",");
		csv_field(&b, *full->label ? full->label : NULL);
		ff_buf_addstr(&b, ",");
		csv_field(&b, p->version);
		ff_buf_addstr(&b, ",");
		csv_field(&b, p->sha256);
		ff_buf_addstr(&b, ",");
		csv_field(&b, p->proton);
		for (i = a; i < e; i++)
			if (aligned(&h->s[i], full))
				ff_buf_printf(&b, ",%.15g", h->s[i].pts[j].v);
		ff_buf_addstr(&b, "\n");
	}
	return ff_buf_take(&b);
}

/* A file name for group k of a directory: its case and host, and its number. */
static char *
group_file(const char *dir, const struct series *s, int k)
{
	struct ff_buf b = FF_BUF_INIT;
	const char *p;

	ff_buf_printf(&b, "%s/%02d-", dir, k);
	for (p = s->case_key; *p && p - s->case_key < 48; p++)
		ff_buf_add(&b, strchr(" =/", *p) ? "-" : p, 1);
	ff_buf_addstr(&b, ".csv");
	return ff_buf_take(&b);
}

static void
write_out(const char *path, const char *text)
{
	if (ff_write_file(path, text, 0644) < 0)
		ff_quit(1);
}

int
export_main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		FILTER_LONGOPTS,
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const formats[] = { "csv", NULL };
	struct filter f = { 0 };
	struct history h;
	struct stat sb;
	const char *db_path = NULL, *out = NULL;
	char *path = NULL, *text, *file;
	int c, i, e, ngroups = 0, format = -1, todir;
	sqlite3 *db;

	optind = 1;
	while ((c = ff_getopt(argc, argv, ":hw:r:p:o:", longopts, export_usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(export_usage, 0);
		case OPT_FORMAT:
			format = ff_parse_name(export_usage, "format", optarg, formats);
			break;
		case 'o':
			if (!*optarg)
				ff_usage_error(export_usage, "-o: expected a file or directory name");
			out = optarg;
			break;
		default:
			filter_opt(c, optarg, &f, &db_path);
		}
	if (optind < argc)
		ff_usage_error(export_usage, "unexpected argument '%s'", argv[optind]);
	if (format < 0)
		ff_usage_error(export_usage, "expected --format csv");
	if (!f.metric)
		f.all_metrics = 1;
	todir = out && stat(out, &sb) == 0 && S_ISDIR(sb.st_mode);
	if (!db_path)
		db_path = path = db_default_path();
	db = db_open(db_path, 0);
	history_load(db, &f, 0, 0, &h);
	db_close(db);
	for (i = 0; i < h.n; i = e, ngroups++)
		for (e = i + 1; e < h.n && same_group(&h.s[i], &h.s[e]); e++)
			;
	if (ngroups > 1 && !todir)
		ff_usage_error(export_usage, "%d cases or machines match: choose one (-w, -r, -p, --label, --host), "
			       "or give -o an existing directory for one file each", ngroups);
	if (!todir && !out)
		ff_check_stdout();
	for (i = 0, ngroups = 0; i < h.n; i = e) {
		for (e = i + 1; e < h.n && same_group(&h.s[i], &h.s[e]); e++)
			;
		text = group_csv(&h, i, e);
		if (todir) {
			file = group_file(out, &h.s[i], ++ngroups);
			write_out(file, text);
			ff_print("%s: %s on %s\n", file, h.s[i].title, h.s[i].machine);
			free(file);
		} else if (out) {
			write_out(out, text);
		} else if (fputs(text, stdout) == EOF) {
			ff_write_failed();
		}
		free(text);
	}
	history_free(&h);
	free(path);
	return ff_finish();
}
