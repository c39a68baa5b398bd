/*
 * ff-bench's tables: the metrics' formats, tables as text and markdown, the
 * environment, and the bench table that bench and summarize print.
 */
#include "ff-bench.h"

#include <math.h>
#include <stdarg.h>

/* Values, their formats and their meaning */

/* 16.4G, 2.84K: the original's quantities, SI prefixes. */
void
fmt_si(double v, char *buf, size_t n)
{
	ff_fmt_prefixed(v, 1000, "", "", buf, n);
}

static void
fmt_bytes(double v, char *buf, size_t n)
{
	ff_fmt_prefixed(v, 1024, "", "B", buf, n);
}

static void
fmt_us(double v, char *buf, size_t n)
{
	if (v >= 999500)
		ff_fmt_sig3(v / 1e6, "s", buf, n);
	else if (v >= 999.5)
		ff_fmt_sig3(v / 1000, "ms", buf, n);
	else
		ff_fmt_sig3(v, "us", buf, n);
}

static void
fmt_fraction(double v, char *buf, size_t n)
{
	snprintf(buf, n, "%.1f%%", 100 * v);
}

static void
fmt_plain(double v, char *buf, size_t n)
{
	ff_fmt_sig3(v, "", buf, n);
}

const struct metric metrics[M_N] = {
	{ "bits_per_s", "Bits/s", 1, fmt_si },
	{ "ops_per_s", "Ops/s", 1, fmt_si },
	{ "latency_avg_us", "Average latency", 0, fmt_us },
	{ "latency_p50_us", "Latency p50", 0, fmt_us },
	{ "latency_p99_us", "Latency p99", 0, fmt_us },
	{ "relay_cpu_s_per_gb", "Relay CPU s/GB, R1 + R2", 0, fmt_plain },
	{ "relay_cpu_s_per_1k_requests", "Relay CPU s/1k req, R1 + R2", 0, fmt_plain },
	{ "relay_ctx_switches_per_mb", "Relay context switches/MB, R1 + R2", 0, fmt_plain },
	{ "relay_ctx_switches_per_1k_ops", "Relay context switches/1k ops, R1 + R2", 0, fmt_plain },
	{ "relay_wakeups_per_mb", "Relay wakeups/MB, R1 + R2", 0, fmt_plain },
	{ "relay_wakeups_per_1k_ops", "Relay wakeups/1k ops, R1 + R2", 0, fmt_plain },
	{ "relay_syscalls_per_mb", "Relay read+write syscalls/MB, R1 + R2", 0, fmt_plain },
	{ "relay_syscalls_per_1k_ops", "Relay read+write syscalls/1k ops, R1 + R2", 0, fmt_plain },
	{ "r1_cpu_fraction", "R1 CPU", 0, fmt_fraction },
	{ "r1_max_rss_bytes", "R1 RSS", 0, fmt_bytes },
	{ "r2_cpu_fraction", "R2 CPU", 0, fmt_fraction },
	{ "r2_max_rss_bytes", "R2 RSS", 0, fmt_bytes },
	{ "relay_cpu_fraction", "Relay CPU", 0, fmt_fraction },
	{ "latency_p999_us", "Latency p99.9", 0, fmt_us },
	{ "latency_max_us", "Latency max", 0, fmt_us },
	{ "relay_rss_end_bytes", "Relay RSS at the window's end, all relays", 0, fmt_bytes },
};

/*
 * Does metric m mean something for the workload? Relay CPU (and context
 * switches, wakeups, syscalls) per GB does not
 * for request/response workloads (the matrix's request_response: a few
 * bytes a transaction, the CPU goes to the transactions), whose CPU per
 * 1,000 requests says it.
 */
int
metric_applies(int m, const char *workload)
{
	return (m != M_CPU_GB && m != M_CSW_MB && m != M_WAKE_MB && m != M_SYS_MB) ||
	       !ff_workload_is_rr(workload);
}

void
fmt_stats(const struct stats *s, int m, const char *pm, char *buf, size_t n)
{
	char v[64];

	if (!s->n) {
		snprintf(buf, n, "-");
		return;
	}
	metrics[m].fmt(s->median, v, sizeof(v));
	if (s->spread_pct > 2)
		snprintf(buf, n, "%s %s%.*f%%", v, pm, s->spread_pct < 9.95 ? 1 : 0, s->spread_pct);
	else
		snprintf(buf, n, "%s", v);
}

/* Tables */

void
trow_v(struct table *t, int n, const char *const cells[])
{
	struct row *r;
	int i;

	t->rows = ff_realloc(t->rows, (t->nrows + 1) * sizeof(*t->rows));
	r = &t->rows[t->nrows++];
	r->n = n;
	for (i = 0; i < n; i++)
		r->c[i] = strdup(cells[i] ? cells[i] : "");
}

void
trow(struct table *t, int n, ...)
{
	const char *cells[MAXCOLS];
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		cells[i] = va_arg(ap, const char *);
	va_end(ap);
	trow_v(t, n, cells);
}

void
table_free(struct table *t)
{
	int i, j;

	for (i = 0; i < t->nrows; i++)
		for (j = 0; j < t->rows[i].n; j++)
			free(t->rows[i].c[j]);
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

/* The original's layout: three spaces between columns, dashes under the heading. */
void
table_print(const struct table *t)
{
	int w[MAXCOLS] = { 0 }, i, j, len, last;
	char *line;
	size_t size;
	FILE *f;

	for (i = 0; i < t->nrows; i++)
		for (j = 0; j < t->rows[i].n; j++)
			if (t->rows[i].n == t->ncols || j < t->rows[i].n - 1) {
				len = strlen(t->rows[i].c[j]);
				w[j] = len > w[j] ? len : w[j];
			}
	for (i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[i];

		f = open_memstream(&line, &size);
		if (!f)
			ff_die("out of memory");
		for (j = 0; j < r->n; j++) {
			last = j == r->n - 1;
			if (last && (r->n < t->ncols || t->align[j] == 'l'))
				fprintf(f, "%s", r->c[j]);
			else if (t->align[j] == 'r')
				fprintf(f, "%*s", w[j], r->c[j]);
			else
				fprintf(f, "%-*s", w[j], r->c[j]);
			if (!last)
				fprintf(f, "   ");
		}
		fclose(f);
		while (size && line[size - 1] == ' ')
			line[--size] = 0;
		printf("%s\n", line);
		free(line);
		if (i == 0) {
			for (j = 0, len = 0; j < t->ncols; j++)
				len += w[j] + (j ? 3 : 0);
			for (j = 0; j < len; j++)
				putchar('-');
			printf("\n");
		}
	}
}

static void
md_cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			putchar('\\');
		putchar(*s);
	}
}

void
table_print_markdown(const struct table *t)
{
	int i, j;

	for (i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[i];

		printf("|");
		for (j = 0; j < t->ncols; j++) {
			printf(" ");
			if (j < r->n)
				md_cell(r->c[j]);
			printf(" |");
		}
		printf("\n");
		if (i == 0) {
			printf("|");
			for (j = 0; j < t->ncols; j++)
				printf(t->align[j] == 'r' ? " --: |" : " :-- |");
			printf("\n");
		}
	}
}

/* The environment, as `flimflam check` prints it, kept short */

static const char *
prog_str(const json_t *env, const char *prog, char *buf, size_t n)
{
	json_t *p = json_object_get(env, prog);
	const char *path = ff_json_str(p, "path"), *ver = ff_json_str(p, "version");

	if (!path)
		snprintf(buf, n, "missing");
	else
		snprintf(buf, n, "%s (%s)", ver ? ver : "version unknown", path);
	return buf;
}

void
print_env(const json_t *env, const char *const progs[])
{
	const char *s;
	char buf[1024];
	int i;

	ff_print("Environment\n");
	if (!env) {
		ff_print("  unknown (the results hold none)\n");
		return;
	}
	ff_env_print_machine(env);
	ff_print("  %-10s %s\n", "skrouterd", prog_str(env, "skrouterd", buf, sizeof(buf)));
	if (ff_json_str(json_object_get(env, "skrouterd"), "path")) {
		if ((s = ff_json_str(env, "proton_library")))
			ff_print("  %-10s %s (loaded)\n", "proton", s);
		else
			ff_print("  %-10s %s\n", "proton", (s = ff_json_str(env, "proton_ldd")) ? s :
			       "no libqpid-proton in ldd");
		ff_print("  %-10s %s\n", "hash", (s = ff_json_str(env, "skrouterd_hash_fnv1a64")) ? s :
		       "unreadable");
	}
	for (i = 0; progs[i]; i++)
		if (!ff_relay_has(progs[i], FF_RELAY_PROTON))	/* shown above */
			ff_print("  %-10s %s\n", progs[i], prog_str(env, progs[i], buf, sizeof(buf)));
}

/* The programs the cases need, each once, in a NULL-terminated static list. */
const char *const *
progs_for(const struct results *r)
{
	static const char *list[16];
	const char *cand[3];
	int n = 0, i, j, k;

	for (k = 0; k < r->ng; k++) {
		cand[0] = ff_relay_program(r->g[k].k.relay);
		cand[1] = ff_workload_server_program(r->g[k].k.workload);
		cand[2] = ff_workload_client_program(r->g[k].k.workload);
		for (i = 0; i < 3; i++) {
			if (!cand[i])
				continue;
			for (j = 0; j < n && strcmp(list[j], cand[i]); j++)
				;
			if (j == n && n < 15)
				list[n++] = cand[i];
		}
	}
	list[n] = NULL;
	return list;
}

/* The bench table */

/* " (4 hops)" for a chain other than the relay's own (2; none's 0), else "" (static). */
const char *
hops_label(const char *relay, long hops)
{
	static char buf[4][32];
	static int k;
	char *b = buf[k++ % 4];

	if (hops == ff_relay_hops(relay))
		return "";
	snprintf(b, sizeof(buf[0]), " (%ld hop%s)", hops, hops == 1 ? "" : "s");
	return b;
}

static int
name_index(const char *const names[], const char *s)
{
	int i;

	for (i = 0; names[i] && strcmp(names[i], s); i++)
		;
	return i;
}

/* The matrix's order (workload, relay, protocol, hops), whatever order the runs came in. */
int
cmp_group(const void *a, const void *b)
{
	const struct key *x = &((const struct group *)a)->k, *y = &((const struct group *)b)->k;
	int d;

	if ((d = name_index(ff_workloads, x->workload) - name_index(ff_workloads, y->workload)))
		return d;
	if ((d = name_index(ff_relays, x->relay) - name_index(ff_relays, y->relay)))
		return d;
	if ((d = name_index(ff_protocols, x->protocol) - name_index(ff_protocols, y->protocol)))
		return d;
	if ((d = (x->hops > y->hops) - (x->hops < y->hops)))
		return d;
	/* A sweep's points in ascending order. */
	if ((d = (x->jobs > y->jobs) - (x->jobs < y->jobs)) ||
	    (d = (x->request_size > y->request_size) - (x->request_size < y->request_size)) ||
	    (d = (x->response_size > y->response_size) - (x->response_size < y->response_size)) ||
	    (d = (x->rate > y->rate) - (x->rate < y->rate)) ||
	    (d = (x->workers > y->workers) - (x->workers < y->workers)))
		return d;
	if ((d = x->tls - y->tls))
		return d;
	return ((const struct group *)a)->order - ((const struct group *)b)->order;
}

/* A case none of whose runs succeeded: the reason of its last failed or skipped run. */
static void
bad_case_row(struct table *t, const struct group *g, char *cells[], int o)
{
	const struct run *last_bad = NULL;
	char reason[4096];
	const char *dir, *why;
	int k;

	for (k = 0; k < g->nruns; k++)
		if (g->runs[k].status != 'o')
			last_bad = &g->runs[k];
	dir = last_bad->run_dir;
	why = last_bad->reason;
	if (dir && why && strstr(why, dir))
		dir = NULL;	/* the reason names it */

	snprintf(reason, sizeof(reason), "%s: %s%s%s%s", status_name(last_bad->status),
		 why ? why : "no reason given",
		 dir ? " (run directory " : "", dir ? dir : "", dir ? ")" : "");
	cells[o] = reason;
	trow_v(t, o + 1, (const char *const *)cells);
}

/*
 * A case's first cells: workload, relay, protocol, then its hops and its
 * build when the tables show them (`hops`, `lab`); returns the next cell's
 * index.
 */
static int
case_cells(char cells[][128], const struct group *g, int hops, int lab, unsigned pts)
{
	int o = 3;

	/* A sweep's point (bench --jobs 1,10,...): "builtin jobs=10". */
	snprintf(cells[0], 128, "%s%s", g->k.workload, point_label(&g->k, pts));
	/* --tls is part of the case: "nginx tls" beside a plain "nginx". */
	snprintf(cells[1], 128, "%s%s", g->k.relay, g->k.tls ? " tls" : "");
	snprintf(cells[2], 128, "%s", g->k.protocol);
	if (hops)
		snprintf(cells[o++], 128, "%ld", g->k.hops);
	if (lab)
		snprintf(cells[o++], 128, "%s", g->k.build ? g->k.build : "-");
	return o;
}

/*
 * A table's heading: head[] names every column, Hops (index 3) and Build
 * (4) among them, and those two are there only when asked (hops, lab).
 * The case's columns are left-aligned, the figures right-aligned; the
 * alignment goes in align, which must outlive the table.
 */
static void
heading(struct table *t, const char *const head[], int n, int hops, int lab, char align[])
{
	const char *hp[MAXCOLS];
	int i, j;

	for (i = j = 0; i < n; i++)
		if ((i != 3 || hops) && (i != 4 || lab)) {
			align[j] = i < 5 ? 'l' : 'r';
			hp[j++] = head[i];
		}
	align[j] = 0;
	t->ncols = j;
	t->align = align;
	trow_v(t, j, hp);
}

/*
 * A case's rows: its figures in t, its relay CPU per unit of work in e
 * (`hops`, `lab`: with a Hops and a Build column). *nfoot counts the cases
 * with failed runs, footnoted; *nunsteady those with a run whose window
 * was not steady, marked "~" after their Bits/s; *nshared those with a run
 * whose window shared the machine, marked "!".
 */
static void
case_rows(struct table *t, struct table *e, const struct group *g, int hops, int lab, unsigned pts,
	  int *nfoot, int *nunsteady, int *nshared)
{
	static const int cols[] = { M_BITS, M_OPS, M_LAT, M_R1CPU, M_R1RSS, M_R2CPU, M_R2RSS };
	char cells[MAXCOLS][128], *cp[MAXCOLS];
	struct stats s;
	int j, o;

	for (j = 0; j < MAXCOLS; j++)
		cp[j] = cells[j];
	o = case_cells(cells, g, hops, lab, pts);
	if (!group_count(g, 'o') && g->nruns) {
		bad_case_row(t, g, cp, o);
		return;
	}
	for (j = 0; j < 7; j++) {
		group_stats(g, cols[j], &s);
		fmt_stats(&s, cols[j], "+/-", cells[o + j], 128);
	}
	for (j = 0; j < g->nruns; j++)
		if (g->runs[j].status == 'o' && g->runs[j].unsteady) {
			snprintf(cells[o] + strlen(cells[o]), 128 - strlen(cells[o]), " ~");
			(*nunsteady)++;
			break;
		}
	for (j = 0; j < g->nruns; j++)
		if (g->runs[j].status == 'o' && g->runs[j].mshared) {
			snprintf(cells[o] + strlen(cells[o]), 128 - strlen(cells[o]), " !");
			(*nshared)++;
			break;
		}
	if (group_count(g, 'f'))
		snprintf(cells[2] + strlen(cells[2]), 128 - strlen(cells[2]), " [%d]", ++*nfoot);
	trow_v(t, o + 7, (const char *const *)cp);
	group_stats(g, M_RELAYCPU, &s);
	if (!s.n)
		return;
	snprintf(cells[2], 128, "%s", g->k.protocol);
	fmt_stats(&s, M_RELAYCPU, "+/-", cells[o], 128);
	group_stats(g, M_CPU_GB, &s);
	if (!metric_applies(M_CPU_GB, g->k.workload))
		s.n = 0;	/* "-" */
	fmt_stats(&s, M_CPU_GB, "+/-", cells[o + 1], 128);
	group_stats(g, M_CPU_KREQ, &s);
	fmt_stats(&s, M_CPU_KREQ, "+/-", cells[o + 2], 128);
	trow_v(e, o + 3, (const char *const *)cp);
}

/* The failed runs of the cases that also have successful ones, by footnote. */
static void
print_failed_runs(const struct group *g, int ng)
{
	const struct run *run;
	int i, k, ok, failed, nfoot = 0;

	printf("\n");
	for (i = 0; i < ng; i++) {
		ok = group_count(&g[i], 'o');
		failed = group_count(&g[i], 'f');
		if (!ok || !failed)
			continue;
		printf("[%d] %d of %d run%s failed, not counted:\n", ++nfoot, failed, ok + failed,
		       ok + failed == 1 ? "" : "s");
		for (k = 0; k < g[i].nruns; k++) {
			run = &g[i].runs[k];
			if (run->status == 'f')
				ff_print("    run %ld: %s (run directory %s)\n", run->repeat,
				       run->reason ? run->reason : "no reason given",
				       run->run_dir ? run->run_dir : "unknown");
		}
	}
}

/*
 * The latency percentiles of the cases that have them (builtin-rr,
 * builtin-crr, h2load): transactions/s, p50, p99, and for those with a
 * histogram p99.9 and the maximum.
 */
static void
print_latency(const struct group *g, int ng, int hops, int lab, unsigned pts)
{
	static const int cols[] = { M_OPS, M_P50, M_P99, M_P999, M_LATMAX };
	static const char *const head[] = {
		"Workload", "Relay", "Protocol", "Hops", "Build", "Ops/s", "p50", "p99", "p99.9", "Max"
	};
	struct table t = { 0, NULL, NULL, 0 };
	char cells[MAXCOLS][128], *cp[MAXCOLS], align[MAXCOLS + 1];
	struct stats s;
	int i, j, o;

	heading(&t, head, FF_ARRAY_SIZE(head), hops, lab, align);
	for (j = 0; j < MAXCOLS; j++)
		cp[j] = cells[j];
	for (i = 0; i < ng; i++) {
		group_stats(&g[i], M_P50, &s);
		if (!s.n)
			continue;
		o = case_cells(cells, &g[i], hops, lab, pts);
		for (j = 0; j < 5; j++) {
			group_stats(&g[i], cols[j], &s);
			fmt_stats(&s, cols[j], "+/-", cells[o + j], 128);
		}
		trow_v(&t, t.ncols, (const char *const *)cp);
	}
	if (t.nrows > 1) {
		printf("\nLatency (lower is better; Ops/s: transactions, connections for builtin-crr)\n\n");
		table_print(&t);
	}
	table_free(&t);
}

/* Each case's settings, when they differ (pts: the sweep's dimensions). */
static void
print_settings(const struct group *g, int ng, unsigned pts)
{
	int i;

	printf("\nThe cases were run with different settings:\n");
	for (i = 0; i < ng; i++)
		printf("  %s%s %s %s%s%s%s: jobs %ld, warmup %g s, duration %g s, CPU limit %ld\n",
		       g[i].k.workload, point_label(&g[i].k, pts), g[i].k.relay, g[i].k.protocol,
		       hops_label(g[i].k.relay, g[i].k.hops), g[i].k.build ? " " : "",
		       g[i].k.build ? g[i].k.build : "", g[i].k.jobs,
		       g[i].k.warmup, g[i].k.duration, g[i].k.cpu_limit);
}

/*
 * The bench table: its figures, the relay CPU per unit of work, the
 * latency; then the verdict of builds. Without chains other than the
 * relays' own and without builds, the original's table.
 */
void
print_results(struct results *res)
{
	static const char *const head[] = {
		"Workload", "Relay", "Protocol", "Hops", "Build", "Bits/s", "Ops/s", "Lat",
		"R1 CPU", "R1 RSS", "R2 CPU", "R2 RSS"
	};
	static const char *const ehead[] = {
		"Workload", "Relay", "Protocol", "Hops", "Build", "Relay CPU", "CPU s/GB", "CPU s/1k req"
	};
	struct table t = { 0, NULL, NULL, 0 }, e = { 0, NULL, NULL, 0 };
	struct group *g = res->g;
	int ng = res->ng, i, ok, maxn = 0, uniform = 1, nfoot = 0, nunsteady = 0, hops = 0, lab = 0;
	int nshared = 0;
	char talign[MAXCOLS + 1], ealign[MAXCOLS + 1];
	unsigned pts = sweep_dims(g, ng);

	qsort(g, ng, sizeof(*g), cmp_group);
	/*
	 * Chains other than the relays' own (--hops) add a Hops column, and
	 * builds (bench --build) a Build column: their rows are cases of
	 * their own.
	 */
	for (i = 0; i < ng; i++) {
		hops |= g[i].k.hops != ff_relay_hops(g[i].k.relay);
		lab |= g[i].k.build != NULL;
	}
	heading(&t, head, FF_ARRAY_SIZE(head), hops, lab, talign);
	heading(&e, ehead, FF_ARRAY_SIZE(ehead), hops, lab, ealign);
	for (i = 0; i < ng; i++) {
		ok = group_count(&g[i], 'o');
		/* A sweep of jobs is in the rows' labels. */
		uniform &= (g[i].k.jobs == g[0].k.jobs || pts & 1u << SW_JOBS) && g[i].k.warmup == g[0].k.warmup &&
			   g[i].k.duration == g[0].k.duration && g[i].k.cpu_limit == g[0].k.cpu_limit;
		maxn = ok > maxn ? ok : maxn;
		case_rows(&t, &e, &g[i], hops, lab, pts, &nfoot, &nunsteady, &nshared);
	}

	printf("\nBenchmark results");
	if (ng && uniform && pts & 1u << SW_JOBS)
		printf(" (warmup %g s, duration %g s, CPU limit %ld)", g[0].k.warmup, g[0].k.duration,
		       g[0].k.cpu_limit);
	else if (ng && uniform)
		printf(" (jobs %ld, warmup %g s, duration %g s, CPU limit %ld)", g[0].k.jobs,
		       g[0].k.warmup, g[0].k.duration, g[0].k.cpu_limit);
	printf("\n");
	if (maxn > 1)
		printf("Each figure is the median of the runs of its case, with +/- half their\n"
		       "range where that exceeds 2%% of the median.\n");
	printf("\n");
	table_print(&t);
	if (nunsteady)
		printf("\n~ not steady: in a run of the case, throughput varied by more than %d%% over\n"
		       "  the window (coefficient of variation of its intervals), or moved more than\n"
		       "  %d%% from its first half to its second; each run's steadiness says why.\n",
		       FF_STEADY_CV_PCT, FF_STEADY_TREND_PCT);
	if (nshared)
		printf("\n! machine shared: in a run of the case, other processes used more than %d%% of\n"
		       "  the CPUs, or steal took more than %d%% (each run's resources.machine says\n"
		       "  how much); flimflam-measurement(7), \"A shared machine\", says what to do.\n",
		       FF_SHARED_OTHER_PCT, FF_SHARED_STEAL_PCT);
	if (!uniform)
		print_settings(g, ng, pts);
	if (nfoot)
		print_failed_runs(g, ng);
	if (e.nrows > 1) {
		printf("\nRelay CPU per unit of work (%s; lower is better)\n\n",
		       hops ? "every relay of the chain, R1 + ... + RN" : "R1 + R2");
		table_print(&e);
	}
	print_latency(g, ng, hops, lab, pts);
	print_per_conn(g, ng);
	table_free(&t);
	table_free(&e);
	/* Two builds or more: each against the first, as compare judges them. */
	compare_builds(res);
}
