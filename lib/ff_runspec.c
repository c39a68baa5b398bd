/*
 * ff_runspec.c - a run, described once: its option rows, and what is made
 * of them (getopt tables, help lines, parsing and ranges, a stage's argv).
 * ff_runcheck.c checks a whole run.
 */
#include "ff.h"

#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

enum kind { LONG, INTERVAL, NAME, STRING, FLAG, BUILD };

/*
 * An option row. In `help`, each "\n" starts a line under the others (the
 * help column), "%D" is the default and "%R" the range ("1 to 8").
 */
struct row {
	const char *name;
	int letter;		/* -w, or 0 */
	const char *arg;	/* NULL: takes no value */
	const char *help;
	enum kind kind;
	size_t off;		/* the field in struct ff_runspec */
	long lo, hi;		/* LONG: the range */
	double def;		/* LONG, INTERVAL: the default */
	const char *def_name;	/* NAME: the default */
	const char *const *names;	/* NAME: the choices, and */
	const char *what;	/* what they are, for messages */
	unsigned mask;		/* FF_RS_*: who takes it */
	int if_set;		/* passed on only when not the default */
	int list;		/* ff-bench (FF_RS_BENCH) takes a comma list, */
	const char *plural;	/* named so when it differs (--workloads) */
	const char *syn_before;	/* in the synopsis, before this row (as it always was) */
};

#define AT(f) offsetof(struct ff_runspec, f)
#define STAGE (FF_RS_RUN | FF_RS_WORKLOAD)
#define CLIENTS (FF_RS_STREAM | FF_RS_RR)
#define SIZES (FF_RS_RUN | FF_RS_WORKLOAD | FF_RS_RR | FF_RS_RR_SERVE | FF_RS_OPTS | FF_RS_BENCH)
#define BENCH FF_RS_BENCH

/* In the order of flimflam run -h. */
static const struct row rows[] = {
	{ "workload", 'w', "WORKLOAD", "The selected workload (default '%D')", NAME, AT(workload),
	  .def_name = "builtin", .names = ff_workloads, .what = "workload",
	  .mask = STAGE | FF_RS_PLACE | BENCH, .list = 1, .plural = "workloads" },
	{ "relay", 'r', "RELAY", "The intermediary standing between the workload client and\n"
	  "server (default '%D')", NAME, AT(relay), .def_name = "skrouterd", .names = ff_relays,
	  .what = "relay", .mask = FF_RS_RUN | FF_RS_PLACE | BENCH, .list = 1, .plural = "relays" },
	{ "protocol", 'p', "PROTOCOL", "The selected protocol (default '%D')", NAME, AT(protocol),
	  .def_name = "tcp", .names = ff_protocols, .what = "protocol", .mask = FF_RS_RUN | BENCH,
	  .list = 1, .plural = "protocols" },
	{ "jobs", 0, "JOBS", "The number of concurrent workload jobs (default %D)", LONG, AT(run.jobs),
	  1, 65536, 2, .mask = STAGE | CLIENTS | FF_RS_OPTS | BENCH, .list = 1 },
	{ "warmup", 0, "SECONDS", "The warmup time in seconds (default %D)", LONG, AT(run.warmup),
	  0, 86400, 5, .mask = STAGE | CLIENTS | FF_RS_OPTS | BENCH },
	{ "duration", 0, "SECONDS", "The execution time (excluding warmup) in seconds (default %D)",
	  LONG, AT(run.duration), 1, 86400, 5, .mask = STAGE | CLIENTS | FF_RS_OPTS | BENCH },
	{ "cpu-limit", 0, "COUNT", "The max per-process relay CPU usage (0 means no limit)\n"
	  "(default %D)", LONG, AT(run.cpu_limit), 0, CPU_SETSIZE, 1, .mask = STAGE | FF_RS_OPTS | BENCH },
	{ "workers", 0, "N", "Each relay's worker threads or processes (%R; default:\n"
	  "one per CPU of --cpu-limit, else the relay's own)", LONG, AT(run.workers), 1, 1024, 0,
	  .mask = FF_RS_RUN | FF_RS_OPTS | BENCH, .if_set = 1, .list = 1, .syn_before = "hosts" },
	{ "hops", 0, "N", "The relays in a chain, client -> R1 -> ... -> RN -> server\n"
	  "(%R; default 2; relay none has none)", LONG, AT(hops), 1, FF_HOPS_MAX, -1,
	  .mask = STAGE | FF_RS_PLACE | BENCH, .list = 1 },
	{ "json", 0, NULL, "Print the event stream (JSON lines) instead of the summary", FLAG,
	  AT(json), .mask = FF_RS_RUN, .syn_before = "hops" },
	{ "request-size", 0, "BYTES", "builtin-rr, builtin-crr: the request's size (default %D)",
	  LONG, AT(run.request_size), 1, 16 << 20, 1, .mask = SIZES, .if_set = 1, .list = 1 },
	{ "response-size", 0, "BYTES", "builtin-rr, builtin-crr: the response's size (default %D)",
	  LONG, AT(run.response_size), 1, 16 << 20, 1, .mask = SIZES, .if_set = 1, .list = 1 },
	{ "rate", 0, "N", "builtin-rr, builtin-crr, h2load, h2load-h1: N requests a\n"
	  "second in all, open loop (default: closed loop)", LONG, AT(run.rate), 1, 10000000, 0,
	  .mask = STAGE | FF_RS_RR | FF_RS_OPTS | BENCH, .if_set = 1, .list = 1 },
	{ "interval", 0, "SECONDS", "The window as a time series: figures every SECONDS\n"
	  "(0.1 to the duration; default %D)", INTERVAL, AT(run.interval), .def = 1,
	  .mask = STAGE | CLIENTS | FF_RS_OPTS | BENCH },
	{ "tls", 0, NULL, "The links between relays use mutual TLS, with certificates\n"
	  "made for the run (the client and server stay plain)", FLAG, AT(tls), .mask = FF_RS_RUN | BENCH },
	{ "build", 0, "LABEL=PATH", "Run the relay from PATH (its binary, or an install prefix\n"
	  "whose sbin/ or bin/ holds it) in that build's own\nenvironment", BUILD, AT(build),
	  .mask = FF_RS_RUN | BENCH },
	{ "hosts", 0, "ROLE=[USER@]HOST[/ADDRESS],...", "Run roles (client, r1 ... rN of --hops, server) "
	  "on other\nhosts over ssh; ADDRESS is the host's address for the\nworkload's traffic (default: "
	  "HOST's). Unnamed roles run here", STRING, AT(hosts), .mask = FF_RS_RUN | FF_RS_PLACE },
	{ "relay-cmd", 0, "COMMAND", "Relay cmd: the program each relay runs, as words (no shell),\n"
	  "with {listen_port} and {upstream} (or {listen}, {upstream_port},\n{listen_host}, "
	  "{upstream_host}, {dir}, {role}) filled in", STRING, AT(relay_cmd),
	  .mask = FF_RS_RUN | BENCH },
};

static int
row_val(const struct row *r)
{
	return r->letter ? r->letter : r->kind == BUILD ? FF_OPT_BUILD : FF_RS_VAL + (int)(r - rows);
}

static void *
field(const struct ff_runspec *rs, const struct row *r)
{
	return (char *)rs + r->off;
}

void
ff_runspec_init(struct ff_runspec *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->mode = "none";
	for (size_t i = 0; i < FF_ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];

		if (r->kind == LONG)
			*(long *)field(rs, r) = (long)r->def;
		else if (r->kind == INTERVAL)
			*(double *)field(rs, r) = r->def;
		else if (r->kind == NAME)
			*(const char **)field(rs, r) = r->def_name;
	}
}

const struct option *
ff_runspec_options(const struct option *own, unsigned mask)
{
	static struct option table[64];
	size_t n = 0, i;

	for (; own && own->name && n < FF_ARRAY_SIZE(table) - 1; own++)
		table[n++] = *own;
	for (i = 0; i < FF_ARRAY_SIZE(rows) && n < FF_ARRAY_SIZE(table) - 1; i++)
		if (rows[i].mask & mask)
			table[n++] = (struct option){ (mask & FF_RS_BENCH) && rows[i].plural ? rows[i].plural :
						      rows[i].name, rows[i].arg ? required_argument :
						      no_argument, NULL, row_val(&rows[i]) };
	table[n] = (struct option){ NULL, 0, NULL, 0 };
	return table;
}

static const struct row *
row_of_val(int val)
{
	for (size_t i = 0; i < FF_ARRAY_SIZE(rows); i++)
		if (row_val(&rows[i]) == val)
			return &rows[i];
	return NULL;
}

int
ff_runspec_take(struct ff_runspec *rs, const char *usage, int val, const char *arg)
{
	const struct row *r = row_of_val(val);
	char opt[32];

	if (!r)
		return 0;
	snprintf(opt, sizeof(opt), "--%s", r->name);
	switch (r->kind) {
	case LONG:
		*(long *)field(rs, r) = ff_parse_long(usage, opt, arg, r->lo, r->hi);
		break;
	case INTERVAL:
		*(double *)field(rs, r) = ff_parse_interval(usage, arg);
		break;
	case NAME:
		*(const char **)field(rs, r) = r->names[ff_parse_name(usage, r->what, arg, r->names)];
		break;
	case STRING:
		*(const char **)field(rs, r) = arg;
		break;
	case FLAG:
		*(int *)field(rs, r) = 1;
		break;
	case BUILD:
		if (rs->nbuild >= (int)FF_ARRAY_SIZE(rs->build))
			ff_usage_error(usage, "--build is given more than twice");
		rs->build[rs->nbuild++] = arg;
		break;
	}
	return 1;
}

const char *
ff_runspec_list(int val)
{
	static char opt[32];
	const struct row *r = row_of_val(val);

	if (!r || !r->list || r->kind != LONG)
		return NULL;
	snprintf(opt, sizeof(opt), "--%s", r->name);
	return opt;
}

int
ff_runspec_range(const char *opt, long *min, long *max)
{
	for (size_t i = 0; i < FF_ARRAY_SIZE(rows); i++)
		if (rows[i].kind == LONG && !strncmp(opt, "--", 2) && !strcmp(opt + 2, rows[i].name)) {
			*min = rows[i].lo;
			*max = rows[i].hi;
			return 1;
		}
	return 0;
}

/* The row's help, its "%D" and "%R" filled in, each line after the first in the help column. */
static void
help_text(struct ff_buf *b, const struct row *r, const char *tail)
{
	const char *s;

	for (int part = 0; part < 2; part++)
		for (s = part ? tail : r->help; s && *s; s++)
			if (*s == '\n')
				ff_buf_printf(b, "\n%24s", "");
			else if (s[0] == '%' && s[1] == 'D' && r->kind == NAME)
				ff_buf_addstr(b, r->def_name), s++;
			else if (s[0] == '%' && s[1] == 'D')
				ff_buf_printf(b, "%g", r->def), s++;
			else if (s[0] == '%' && s[1] == 'R')
				ff_buf_printf(b, "%ld to %ld", r->lo, r->hi), s++;
			else
				ff_buf_add(b, s, 1);
}

void
ff_runspec_help(struct ff_buf *b, unsigned mask, const char *name, const char *tail)
{
	for (size_t i = 0; i < FF_ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];
		struct ff_buf spec = FF_BUF_INIT;

		if (!(r->mask & mask) || !r->help)
			continue;
		if (r->letter)
			ff_buf_printf(&spec, "-%c %s, ", r->letter, r->arg);
		ff_buf_printf(&spec, "--%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
		if (spec.len <= 21)
			ff_buf_printf(b, "  %-21s ", spec.s);
		else
			ff_buf_printf(b, "  %s\n%24s", spec.s, "");
		help_text(b, r, name && !strcmp(name, r->name) ? tail : NULL);
		ff_buf_addstr(b, "\n");
		ff_buf_free(&spec);
	}
}

/* " [ITEM]" at the end of b, or on a line of its own under "usage: " when the line would pass 80. */
static void
synopsis_item(struct ff_buf *b, size_t *col, const char *item)
{
	if (*col + 1 + strlen(item) > 80) {
		ff_buf_printf(b, "\n%7s%s", "", item);
		*col = 7 + strlen(item);
	} else {
		ff_buf_printf(b, " %s", item);
		*col += 1 + strlen(item);
	}
}

/* Row `r`'s item ("[-w WORKLOAD]", "[--json]") after those placed before it. */
static void
synopsis_row(struct ff_buf *b, size_t *col, const struct row *r, unsigned mask)
{
	char item[96];

	for (size_t i = 0; i < FF_ARRAY_SIZE(rows); i++)
		if ((rows[i].mask & mask) && rows[i].syn_before && !strcmp(rows[i].syn_before, r->name))
			synopsis_row(b, col, &rows[i], mask);
	if (r->letter)
		snprintf(item, sizeof(item), "[-%c %s]", r->letter, r->arg);
	else
		snprintf(item, sizeof(item), "[--%s%s%s]", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
	synopsis_item(b, col, item);
}

void
ff_runspec_synopsis(struct ff_buf *b, unsigned mask, const char *const more[])
{
	size_t col = 7 + strlen("[-h]");	/* the first line, whatever the name, as the others */

	for (size_t i = 0; i < FF_ARRAY_SIZE(rows); i++)
		if ((rows[i].mask & mask) && !rows[i].syn_before)
			synopsis_row(b, &col, &rows[i], mask);
	for (; more && *more; more++)
		synopsis_item(b, &col, *more);
}

/* Row `r` of `rs` as "--name" VALUE, unless it has no value to give. */
static void
argv_row(struct ff_argv *a, const struct ff_runspec *rs, const struct row *r)
{
	const char *s;
	long v;

	switch (r->kind) {
	case LONG:
		v = *(long *)field(rs, r);
		if (v < r->lo || (r->if_set && v == (long)r->def))
			return;	/* the relays of relay none; a default left */
		ff_argv_addf(a, "--%s", r->name);
		ff_argv_addf(a, "%ld", v);
		break;
	case INTERVAL:
		ff_argv_addf(a, "--%s", r->name);
		ff_argv_addf(a, "%.9g", *(double *)field(rs, r));
		break;
	case NAME:
		if (!(s = *(const char **)field(rs, r)))
			return;
		ff_argv_addf(a, "-%c", r->letter);	/* as "drive -w WORKLOAD" */
		ff_argv_add(a, s);
		break;
	case FLAG:
		if (*(int *)field(rs, r))
			ff_argv_addf(a, "--%s", r->name);
		break;
	default:
		break;	/* --build, --hosts, --relay-cmd: the caller's */
	}
}

void
ff_runspec_argv(struct ff_argv *a, const struct ff_runspec *rs, unsigned mask)
{
	for (size_t i = 0; i < FF_ARRAY_SIZE(rows); i++)
		if (rows[i].mask & mask)
			argv_row(a, rs, &rows[i]);
}

void
ff_argv_run_opts(struct ff_argv *a, const struct ff_run_opts *o, int with_cpu_limit)
{
	struct ff_runspec rs;

	ff_runspec_init(&rs);
	rs.run = *o;
	for (size_t i = 0; i < FF_ARRAY_SIZE(rows); i++)
		if ((rows[i].mask & FF_RS_OPTS) && (with_cpu_limit || strcmp(rows[i].name, "cpu-limit")))
			argv_row(a, &rs, &rows[i]);
}

/* The run options every program shares, one at a time: their parsing, the window's intervals. */

long
ff_parse_run_opt(const char *usage, const char *opt, const char *s)
{
	long min, max;

	/* The run's options have their ranges in their rows (ff_runspec.c); perf's is here. */
	if (!strcmp(opt, "--freq"))
		return ff_parse_long(usage, opt, s, 1, 1000000);
	if (!ff_runspec_range(opt, &min, &max))
		ff_die("no range known for option '%s'", opt);
	return ff_parse_long(usage, opt, s, min, max);
}

double
ff_parse_interval(const char *usage, const char *s)
{
	double v = ff_parse_double(usage, "--interval", s, -HUGE_VAL, HUGE_VAL);

	/* its upper bound is the duration, checked once every option is known */
	if (v < FF_INTERVAL_MIN || v > 86400)
		ff_usage_error(usage, "--interval: %s is out of range (%g s to the duration)",
			       s, FF_INTERVAL_MIN);
	return v;
}

void
ff_check_interval(const char *usage, double interval, long duration)
{
	if (interval > duration)
		ff_usage_error(usage, "--interval: %g s is longer than the window (--duration %ld s): give %g to %ld",
			       interval, duration, FF_INTERVAL_MIN, duration);
}

int
ff_intervals_count(double interval, double duration)
{
	/* 1e-9: 5 / 0.1 is 50.000000000000007 in binary */
	int n = (int)ceil(duration / interval - 1e-9);

	return n < 1 ? 1 : n;
}

double
ff_interval_edge(double interval, double duration, int k)
{
	double t = k * interval;

	return k >= ff_intervals_count(interval, duration) || t > duration ? duration : t;
}

int
ff_rr_opts_set(const struct ff_run_opts *o)
{
	return o->request_size > 1 || o->response_size > 1 || o->rate > 0;
}
