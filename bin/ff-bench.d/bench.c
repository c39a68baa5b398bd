/*
 * ff-bench: the relay matrix planned, run case by case (run.c, or over a
 * pool of hosts: pool.c) with every result kept, and the table printed.
 */
#include "ff-bench.h"

#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

/* ff-bench: running the matrix */

/* Shared with run.c, through ff-bench.h. */
struct bench_opts opt = {
	.repeat = 1,	/* .run, .tls and .relay_cmd: as the run's rows parse them (bench_options) */
};

char *engine;
json_t *bench_env;
int progress_tty;
int output_gone;

static json_t *records;	/* this bench's runs */

static const char *
missing_program(const struct bcase *c)
{
	const char *need[3] = {
		c->build < 0 ? ff_relay_program(c->relay) : NULL, ff_workload_server_program(c->workload),
		ff_workload_client_program(c->workload)
	};
	char *p;
	int i;

	for (i = 0; i < 3; i++) {
		if (!need[i])
			continue;
		p = ff_which(need[i]);
		if (!p)
			return need[i];
		free(p);
	}
	return NULL;
}

/*
 * What the skrouterd at `path` lacks to carry `protocol`, from its schema
 * (read once per protocol), or NULL: it can, or its schema cannot be read,
 * and the run will say so.
 */
static const char *
router_lacks(const char *path, const char *protocol, int build)
{
	static const char *lacks[17][8];
	static int known[17][8];
	struct ff_buf why = FF_BUF_INIT;
	int i = ff_parse_name(bench_usage, "protocol", protocol, ff_protocols);
	void *saved;

	if (!known[build + 1][i]) {
		/* A build's own schema, read in its own environment. */
		saved = build >= 0 ? ff_build_env_enter(&opt.builds[build]) : NULL;
		if (ff_skrouterd_can(path, protocol, NULL, &lacks[build + 1][i], &why) < 0)
			ff_debug("cannot tell whether skrouterd carries %s: %s", protocol, why.s);
		if (saved)
			ff_build_env_leave(&opt.builds[build], saved);
		ff_buf_free(&why);
	}
	known[build + 1][i] = 1;
	return lacks[build + 1][i];
}

/* "w/r/p, ..." of the not-run cases whose `lacks` is `lacks` (NULL: the matrix's). */
static const char *
notrun_list(const struct notrun *nr, int n, const char *lacks, int *count)
{
	static char buf[2048];
	size_t len = 0;
	int i;

	buf[0] = 0;
	*count = 0;
	for (i = 0; i < n; i++) {
		if (nr[i].lacks != lacks)
			continue;
		++*count;
		if (len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len, "%s%s/%s/%s", len ? ", " : "",
					nr[i].workload, nr[i].relay, nr[i].protocol);
	}
	return buf;
}

/* Why nothing can run: the distinct reasons of the cases, "; "-separated. */
static void
nothing_to_run(const struct bcase *cases, int ncases, const struct notrun *nr, int nnot)
{
	char buf[1024] = "", one[400];
	int i;

	for (i = 0; i < ncases + nnot; i++) {
		if (i < ncases)
			snprintf(one, sizeof(one), "%s", cases[i].skip);
		else if (nr[i - ncases].lacks)
			snprintf(one, sizeof(one), "not supported by this skrouterd (%s)",
				 nr[i - ncases].lacks);
		else
			continue;
		if (!strstr(buf, one) && strlen(buf) + strlen(one) + 3 < sizeof(buf))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 buf[0] ? "; " : "", one);
	}
	ff_die("nothing to run: %s", buf);
}

/*
 * Sort the selected workloads x relays x protocols x hops into the plan.
 * Relay none has no chain: one case, with its own 0 hops.
 */
static void
plan_cases(struct plan *pl)
{
	char *skrouterd = NULL;
	struct ff_buf why = FF_BUF_INIT;
	struct ff_run_opts run;
	const char *miss, *lacks;
	int w, r, pr, h, nh, b, pt, npt = sweep_points();

	for (w = 0; w < opt.nw; w++)
		for (r = 0; r < opt.nr; r++)
			for (pr = 0; pr < opt.np; pr++)
			for (h = 0, nh = opt.nh && ff_relay_hops(opt.relays[r]) ? opt.nh : 1; h < nh; h++)
			for (pt = 0; pt < npt; pt++)
			for (b = opt.nbuild ? 0 : -1; b < opt.nbuild; b++) {
				struct bcase *bc = &pl->cases[pl->ncases];

				if (pl->ncases == (int)FF_ARRAY_SIZE(pl->cases))
					ff_fail(2, "too many cases: at most %zu (workloads x relays x protocols x hops x sweep points x builds)",
						FF_ARRAY_SIZE(pl->cases));
				if (!sweep_point(pt, opt.workloads[w], opt.relays[r], bc))
					continue;

				bc->workload = opt.workloads[w];
				bc->relay = opt.relays[r];
				bc->protocol = opt.protocols[pr];
				bc->hops = opt.nh && ff_relay_hops(bc->relay) ? opt.hops[h] :
					   ff_relay_hops(bc->relay);
				bc->build = b;
				bc->skip[0] = 0;
				case_run_opts(bc, &run);
				if (!ff_carries(bc->workload, bc->relay, bc->protocol, NULL, NULL,
						&why)) {
					if (!h && !pt && b <= 0)	/* once, whatever the hops, points and builds */
						pl->notrun[pl->nnot++] = (struct notrun){ bc->workload, bc->relay, bc->protocol, NULL };
					continue;
				}
				if (opt.tls && bc->hops < 2)
					snprintf(bc->skip, sizeof(bc->skip), "--tls: %s has no links between relays",
						 bc->hops ? "--hops 1" : "relay none");
				else if (opt.tls && !ff_relay_has(bc->relay, FF_RELAY_TLS))
					snprintf(bc->skip, sizeof(bc->skip), "--tls: relay %s cannot prove its links",
						 bc->relay);
				else if ((miss = missing_program(bc)))
					snprintf(bc->skip, sizeof(bc->skip), "%s not on PATH", miss);
				else if (ff_jobs_fit(bc->relay, bc->protocol, bc->hops, &run, &why) < 0)
					/* A limit this point passes (the relay's own): skipped, named. */
					snprintf(bc->skip, sizeof(bc->skip), "%.380s", why.s);
				else if (b >= 0 && ff_relay_find(bc->relay)->can &&
					 (lacks = router_lacks(opt.builds[b].path, bc->protocol, b)))
					/* What one build cannot carry is skipped for it, and the row says why. */
					snprintf(bc->skip, sizeof(bc->skip), "not supported by build %s (%s)",
						 opt.builds[b].label, lacks);
				else if (b < 0 && ff_relay_find(bc->relay)->can &&
					 (skrouterd || (skrouterd = ff_which(ff_relay_program(bc->relay)))) &&
					 (lacks = router_lacks(skrouterd, bc->protocol, -1))) {
					/* What this router cannot carry is unsupported here, not a failure. */
					if (!h && !pt) {
						pl->notrun[pl->nnot++] = (struct notrun){ bc->workload, bc->relay, bc->protocol, lacks };
						pl->nlacks++;
					}
					continue;
				} else
					pl->nrun++;
				pl->ncases++;
			}
	free(skrouterd);
	ff_buf_free(&why);
}

/* The engine, ff-run, beside us, else on PATH. */
static char *
find_engine(void)
{
	char *path = ff_helper_path("ff-run"), *p;

	if (!strchr(path, '/')) {
		p = ff_which(path);
		free(path);
		if (!p)
			ff_die("cannot find ff-run beside ff-bench nor on PATH");
		path = p;
	}
	return path;
}

/* The environment first, so it is on screen while the bench runs. */
static void
show_env(const struct plan *pl)
{
	struct results res;
	int w;

	for (w = 0; w < pl->ncases; w++)
		json_array_append_new(records, new_record(&pl->cases[w], "skipped", NULL, 1, ""));
	results_of(records, 1, &res);
	print_env(bench_env, progs_for(&res));
	results_free(&res);
	if (fflush(stdout) == EOF)
		ff_write_failed();
	json_array_clear(records);
}

/* The skipped cases' records, kept before any run. */
static void
record_skips(const struct plan *pl)
{
	const struct bcase *c;
	json_t *rec;
	int w;

	for (w = 0; w < pl->ncases; w++) {
		c = &pl->cases[w];
		if (!c->skip[0])
			continue;
		rec = new_record(c, "skipped", c->skip, 1, ff_iso_time());
		json_object_set_new(rec, "environment", json_incref(bench_env));
		json_array_append_new(records, rec);
		ff_say("%s: skipping %s %s %s%s: %s\n", ff_prog(), c->workload, c->relay,
		       c->protocol, hops_label(c->relay, c->hops), c->skip);
	}
	if (json_array_size(records))
		output_save(records);
}

/*
 * The order of one round: every case (with every build) once, shuffled
 * (Fisher-Yates) from the seed's sequence when opt.shuffle, else the plan's.
 */
void
round_order(const struct plan *pl, int *order, uint64_t *state)
{
	int i, j, t;

	for (i = 0; i < pl->ncases; i++)
		order[i] = i;
	for (i = pl->ncases - 1; opt.shuffle && i > 0; i--) {
		j = (int)(ff_random(state) % (uint64_t)(i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

/*
 * The runs of case w of a round, into records: the case alone, or with
 * --together every build of it not yet decided, at once (the plan puts a
 * case's builds side by side: cases w - build .. w - build + nbuild - 1),
 * in the round's order. Returns how many failed, or -1 when stopped.
 */
static int
run_group(const struct plan *pl, const int *order, int at, char *ran, int rep, int *k, int *done)
{
	const struct bcase *cs[BENCH_BUILDS_MAX];
	json_t *recs[BENCH_BUILDS_MAX];
	int i, n = 0, taken = 0, failed = 0, width = runs_at_once();
	int first = order[at] - (width > 1 ? pl->cases[order[at]].build : 0);

	if (ran[order[at]])
		return 0;	/* run already, with a build of it before */
	/* The round's order from case w on: the cases first .. first + width - 1 not yet run. */
	for (i = at; i < pl->ncases && taken < width; i++) {
		const struct bcase *o = &pl->cases[order[i]];

		if (ran[order[i]] || order[i] < first || order[i] >= first + width)
			continue;
		ran[order[i]] = 1;
		taken++;
		if (!o->skip[0] && !auto_decided(o))
			cs[n++] = o;
	}
	if (!n)
		return 0;
	if (run_cases(cs, n, rep, *k + 1, pl->nrun * opt.repeat, recs) < 0)
		return -1;
	*k += n;
	for (i = 0; i < n; i++) {
		failed += is_status(recs[i], "failed");
		++*done;
		json_array_append_new(records, recs[i]);
	}
	output_save(records);
	return failed;
}

/*
 * Round-robin: drift on a noisy machine spreads over every case (and
 * build), in an order shuffled each round with --build or --seed; with
 * --together a case's builds run at once. Each record is kept as soon as
 * its run ends; returns how many failed.
 */
static int
run_all(const struct plan *pl, int *done)
{
	int rep, i, k = 0, failed = 0, f, order[FF_ARRAY_SIZE(pl->cases)];
	char ran[FF_ARRAY_SIZE(pl->cases)];
	uint64_t state = (uint64_t)opt.seed;

	for (rep = 1; rep <= opt.repeat && !ff_signalled() && !output_gone && !output_lost &&
	     auto_more(records, rep - 1, pl->nrun); rep++) {
		round_order(pl, order, &state);
		memset(ran, 0, sizeof(ran));
		for (i = 0; i < pl->ncases && !ff_signalled() && !output_gone && !output_lost; i++) {
			if ((f = run_group(pl, order, i, ran, rep, &k, done)) < 0)
				break;
			failed += f;
		}
	}
	return failed;
}

/* The table, then the cases not run, and where the results and their page are; 0, or -1 when the page could not be written. */
static int
report(const struct plan *pl)
{
	const char *list;
	struct results res;
	int nunsup, w, c;

	if (output_gone)
		ff_quit(128 + SIGPIPE);	/* the results so far are in the file */
	if (json_array_size(records)) {
		results_of(records, 1, &res);
		print_results(&res);
		results_free(&res);
		auto_report(records);
	}
	else
		printf("\nBenchmark results\n\nno run %s\n", output_lost ? "was kept" : "finished");
	list = notrun_list(pl->notrun, pl->nnot, NULL, &nunsup);
	/* Not a failure: the matrix has no such case. */
	if (nunsup)
		printf("\n%d combination%s left out, as %s not apply (a workload or relay without that "
		       "protocol)%s%s\n", nunsup, nunsup == 1 ? " was" : "s were", nunsup == 1 ? "it does" :
		       "they do", ff_verbosity > 0 ? ": " : "; --verbose lists them",
		       ff_verbosity > 0 ? list : "");
	/* The router's: bench asks for no encapsulation, so it can only lack the HTTP adaptor. */
	for (w = 0; w < pl->nnot && !pl->notrun[w].lacks; w++)
		;
	if (w < pl->nnot) {
		list = notrun_list(pl->notrun, pl->nnot, pl->notrun[w].lacks, &c);
		printf("%sNot run: %d case%s not supported by this skrouterd (%s): %s\n",
		       nunsup ? "" : "\n", c, c == 1 ? "" : "s", pl->notrun[w].lacks, list);
	}
	if (output_lost && json_array_size(records))
		printf("\nResults: %s (the runs above; the bench stopped as no more could be kept)\n",
		       opt.output);
	if (output_lost)
		return -1;	/* no room for a page either */
	if (!json_array_size(records))
		return 0;
	printf("\nResults: %s\n", opt.output);
	/* The page of the whole file (--append's earlier runs too), unless stopped. */
	if (!output_page() || ff_signalled())
		return 0;
	if (fflush(stdout) == EOF)
		ff_write_failed();
	if (report_write((const char *const[]){ opt.output }, 1, output_page()) < 0)
		return -1;
	report_say(output_page());
	return 0;
}

/* Each build, in a line; two labels of one binary, warned of. */
static void
say_builds(void)
{
	for (int b = 0; b < opt.nbuild; b++) {
		struct bcase bc = { .relay = opt.relays[0], .build = b };
		json_t *build = build_of(&bc);
		char line[PATH_MAX * 2 + 256];

		ff_say("%s: %s\n", ff_prog(), ff_build_line(build, line, sizeof(line)));
		/* Two labels of one binary: their comparison can only show noise. */
		for (int a = 0; a < b; a++)
			if (ff_json_str(build, "sha256") && ff_json_str(opt.build_json[a], "sha256") &&
			    !strcmp(ff_json_str(build, "sha256"), ff_json_str(opt.build_json[a], "sha256")))
				ff_warn("builds %s and %s are one binary (sha256 %.12s): "
					"their changes can only be noise", opt.builds[a].label,
					opt.builds[b].label, ff_json_str(build, "sha256"));
		json_decref(build);
	}
}

int
bench_main(int argc, char *argv[])
{
	static struct plan plan;
	const char *list;
	int nunsup, failed, done = 0, sig, page_failed;
	char *parallel = NULL;
	long nruns;

	bench_options(argc, argv);
	plan_cases(&plan);
	list = notrun_list(plan.notrun, plan.nnot, NULL, &nunsup);
	if (!plan.ncases && !plan.nlacks)
		ff_usage_error(bench_usage, "none of these combinations is supported: %s", list);
	if (!plan.nrun)
		nothing_to_run(plan.cases, plan.ncases, plan.notrun, plan.nnot);
	output_prepare();

	engine = find_engine();
	ff_check_stdout();	/* not a whole bench for a table that cannot be printed */
	ff_signals_init();
	ff_set_cleanup(ff_children_stop_all);
	progress_tty = isatty(2) && ff_verbosity >= 0;
	/* The pool's hosts have each build, before anything runs. */
	if (opt.pool && (parallel = ff_which("parallel")) && opt.nbuild)
		pool_check_builds(&plan);
	records = json_array();
	keep_runs_room(plan.nrun);
	bench_env = ff_env_collect();
	show_env(&plan);
	record_skips(&plan);
	nruns = plan.nrun * opt.repeat;
	say_builds();
	if (opt.slo_pct)
		ff_say("%s: searching the rate of %d case%s for %s <= %g ms, %d runs each at most; results go to '%s'\n",
		       ff_prog(), plan.nrun, plan.nrun == 1 ? "" : "s", opt.slo_pct, opt.slo_ms, 12, opt.output);
	else if (auto_on())
		ff_say("%s: rounds of %d run%s%s until every case is decided, for %s at most; results go to '%s'\n",
		       ff_prog(), plan.nrun, plan.nrun == 1 ? "" : "s", opt.together ? ", builds side by side" : "",
		       clock_str(auto_budget()), opt.output);
	else
	ff_say("%s: %ld run%s (%d case%s x %ld%s), about %s; results go to '%s'\n", ff_prog(),
	       nruns, nruns == 1 ? "" : "s", plan.nrun, opt.nbuild ? (plan.nrun == 1 ?
	       " with its build" : "s with their builds") : plan.nrun == 1 ? "" : "s",
	       opt.repeat, opt.together ? ", each round's builds side by side" : "",
	       clock_str(nruns * run_estimate()), opt.output);
	if (opt.shuffle)
		ff_say("%s: each round in a shuffled order, seed %ld (--seed %ld replays it)\n",
		       ff_prog(), opt.seed, opt.seed);
	if (opt.slo_pct)
		failed = run_capacity(plan.cases, plan.ncases, records, &done);
	else if (parallel)
		failed = run_pool(&plan, parallel, records, &done);
	else {
		if (opt.pool)
			ff_warn("--pool needs GNU parallel, which is not on PATH: the cases run here, one after another");
		failed = run_all(&plan, &done);
	}
	page_failed = report(&plan) < 0;
	print_capacity();
	if ((sig = ff_signalled())) {
		ff_finish();
		ff_children_stop_all();
		ff_warn("stopped by %s after %d of %ld run%s; %s", ff_sig_name(sig), done, nruns,
			nruns == 1 ? "" : "s",
			json_array_size(records) ? "the results so far are kept" : "no run finished");
		exit(128 + sig);
	}
	if (failed)
		ff_warn("%d of %ld run%s failed", failed, nruns, nruns == 1 ? "" : "s");
	if (ff_finish())
		return 1;
	return failed || page_failed ? 1 : 0;
}
