/*
 * ff-bench report's parts (report.c: the records and the page;
 * report_stats.c: each series' median and interval, and the changes).
 */
#ifndef REPORT_H
#define REPORT_H

#include "ff-bench.h"

/* A case: a bench case but for its relay (and warmup, as compare matches). */
struct rcase {
	struct key k;		/* relay NULL; the names are ours */
	int order;
};

/* A series of a case: a relay, or a build label; per file when there are several. */
struct rseries {
	int c, file, build;
	char *name;
	int rank;		/* a build's place among bench's --build options (the first is the base) */
};

struct rrun {
	int s, file, group, run;
};

struct page {
	int nfiles, file;
	const char *const *paths;
	char **labels;		/* a label per file */
	struct results *res;	/* per file */
	struct rcase *cases;
	struct rseries *series;
	struct rrun *runs;
	size_t nc, ns, nr, capc, caps, capr;
	json_t *runs_json, *envs;
	char **envtext;		/* each environment, as compact text */
};

/* report_stats.c */

/* Each metric drawn of series s: its n, median, interval and the interval's coverage. */
json_t *series_stats(const struct page *pg, int s);
/* The changes of the page, each with its q and compare's verdict (report_stats.c). */
json_t *page_changes(const struct page *pg);
/* A JSON number, or null for NAN and the infinities. */
json_t *num_or_null(double v);

#endif
