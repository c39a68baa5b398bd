/*
 * ff-bisect's steps: interleaved rounds of GOOD, the midpoint and BAD (one
 * ff-bench of the three builds, each run labelled by its commit), and the
 * log ratios of their runs round by round: the runs of one round are
 * measured under the same machine, so log ratios within a round leave out
 * what moved it between rounds.
 *
 * The midpoint against both: log(mid / good) and log(mid / bad) in each
 * round, and call.c's confidence sequences of them say which side it is on.
 */
#include "ff-bisect.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

int
metric_of(const char *workload)
{
	return ff_workload_is_rr(workload) ? M_CPU_KREQ : M_CPU_GB;
}

/* A commit's build label: its first 12 digits (every row names its commit). */
char *
label_of(const char *commit)
{
	return ff_asprintf("%.12s", commit);
}

/* Add the lines of a bench's results file to the user's. */
static void
append_results(const char *from, const char *to)
{
	FILE *in = fopen(from, "r"), *out;
	char buf[65536];
	size_t n;

	if (!in)
		return;
	out = fopen(to, "a");
	if (!out)
		ff_die("cannot write '%s': %s", to, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	fclose(in);
	if (fclose(out) != 0)
		ff_die("cannot write '%s': %s", to, strerror(errno));
}

int
bench_batch(struct state *s, struct step *st, const char *const commits[3], long rounds)
{
	struct ff_argv a = FF_ARGV_INIT;
	char *file = ff_asprintf("%s/step-%d-%zu.jsonl", s->dir, (int)(st - s->steps) + 1,
				 json_array_size(st->files));
	char *log = ff_asprintf("%s.log", file), *bench = ff_helper_path("ff-bench");
	int i, status;

	ff_argv_addl(&a, bench, "-w", s->o.workload, "-r", s->o.relay, "-p", s->o.protocol, NULL);
	ff_argv_addf(&a, "--warmup=%ld", s->o.warmup);
	ff_argv_addf(&a, "--duration=%ld", s->o.duration);
	ff_argv_addf(&a, "--jobs=%ld", s->o.jobs);
	ff_argv_addf(&a, "--cpu-limit=%ld", s->o.cpu_limit);
	for (i = 0; i < 3; i++) {
		char *l = label_of(commits[i]), *p = prefix_of(s, commits[i]);

		ff_argv_add(&a, "--build");
		ff_argv_addf(&a, "%s=%s", l, p);
		free(l), free(p);
	}
	ff_argv_addf(&a, "--repeat=%ld", rounds);
	ff_argv_addl(&a, "--output", file, "--force", NULL);
	json_array_append_new(st->files, json_string(file));
	state_save(s);
	status = run_child("bench", a.v, NULL, log, NULL);
	if (access(file, F_OK) == 0)
		append_results(file, s->o.output);
	stop_if_signalled(s);
	ff_argv_free(&a);
	free(bench), free(file), free(log);
	return status;
}

/* The values of the metric in each round of one results file, for each of the labels. */
struct rounds {
	int n;			/* rounds (the largest repeat) */
	double *v[3];		/* v[label][round - 1], NAN where none */
	int ok[3], failed[3];
};

static void
rounds_of(const char *path, char *const labels[3], int m, struct rounds *out)
{
	struct results r = { 0 };
	struct stat sb;
	int gi, ri, li;

	memset(out, 0, sizeof(*out));
	if (stat(path, &sb) < 0 || sb.st_size == 0)
		return;
	load_results(path, 0, &r);
	for (gi = 0; gi < r.ng; gi++)
		for (ri = 0; ri < r.g[gi].nruns; ri++)
			if (r.g[gi].runs[ri].repeat > out->n)
				out->n = r.g[gi].runs[ri].repeat;
	for (li = 0; li < 3; li++) {
		out->v[li] = malloc((out->n + 1) * sizeof(double));
		for (ri = 0; ri < out->n; ri++)
			out->v[li][ri] = NAN;
	}
	for (gi = 0; gi < r.ng; gi++)
		for (li = 0; li < 3; li++) {
			const struct group *g = &r.g[gi];

			if (!g->k.build || strcmp(g->k.build, labels[li]))
				continue;
			for (ri = 0; ri < g->nruns; ri++) {
				const struct run *u = &g->runs[ri];

				if (u->status == 'f')
					out->failed[li]++;
				if (u->status != 'o' || !(u->have & (1u << m)) || u->v[m] <= 0 || u->repeat < 1)
					continue;
				out->ok[li]++;
				out->v[li][u->repeat - 1] = u->v[m];
			}
		}
	results_free(&r);
}

static void
rounds_free(struct rounds *r)
{
	for (int i = 0; i < 3; i++)
		free(r->v[i]);
}

/* Log ratios of every round of every file of the step where the builds all ran. */
struct logs {
	double *mg, *mb;	/* log(mid/good), log(mid/bad) */
	int n, ok[3], failed[3];
};

static void
step_logs(const struct state *s, const struct step *st, const char *good, const char *bad,
	  struct logs *L)
{
	char *labels[3] = { label_of(good), label_of(st->commit), label_of(bad) };
	int m = metric_of(s->o.workload);
	size_t fi;
	int i;

	memset(L, 0, sizeof(*L));
	for (fi = 0; fi < json_array_size(st->files); fi++) {
		struct rounds r;

		rounds_of(json_string_value(json_array_get(st->files, fi)), labels, m, &r);
		L->mg = ff_realloc(L->mg, (L->n + r.n + 1) * sizeof(double));
		L->mb = ff_realloc(L->mb, (L->n + r.n + 1) * sizeof(double));
		for (i = 0; i < r.n; i++) {
			double g = r.v[0][i], md = r.v[1][i], b = r.v[2][i];

			if (isnan(g) || isnan(md) || isnan(b))
				continue;
			L->mg[L->n] = log(md / g);
			L->mb[L->n++] = log(md / b);
		}
		for (i = 0; i < 3; i++)
			L->ok[i] += r.ok[i], L->failed[i] += r.failed[i];
		rounds_free(&r);
	}
	for (i = 0; i < 3; i++)
		free(labels[i]);
}

/*
 * The step's figures from its files: rounds, runs, the test of x, the
 * side; C_SKIP when the midpoint's relay never ran while GOOD's did.
 */
void
step_figures(struct state *s, struct step *st, const char *good, const char *bad)
{
	struct paired mg, mb, gb;
	struct logs L;

	step_logs(s, st, good, bad, &L);
	st->rounds = L.n;
	st->runs = L.ok[0] + L.ok[1] + L.ok[2] + L.failed[0] + L.failed[1] + L.failed[2];
	st->call = C_NONE;
	st->shown = 0;
	st->est = st->lo = st->hi = st->p = NAN;
	if (!L.ok[1] && L.failed[1] && L.ok[0]) {
		st->call = C_SKIP;
		free(st->why);
		st->why = ff_strdup("its relay did not start (every run of it failed)");
		goto out;
	}
	if (L.n < 1)
		goto out;
	gb_change(s, &gb);
	st->call = mid_call(L.mg, L.mb, L.n, gb.n ? gb.est : NAN, &mg, &mb, &st->shown);
	st->p = st->call == C_GOOD ? mb.p : mg.p;
	st->est = pct_of_log(mg.est);
	st->lo = pct_of_log(mg.lo);
	st->hi = pct_of_log(mg.hi);
out:
	free(L.mg);
	free(L.mb);
}

/* GOOD against BAD over every round of every step, in order: log(bad / good); 1 when shown to differ. */
int
gb_change(struct state *s, struct paired *pr)
{
	char *labels[3] = { label_of(s->o.good), NULL, label_of(s->o.bad) };
	int m = metric_of(s->o.workload), k, i, n = 0, shown;
	double *d = NULL;
	size_t fi;

	for (k = 0; k < s->nsteps; k++) {
		labels[1] = label_of(s->steps[k].commit);
		for (fi = 0; fi < json_array_size(s->steps[k].files); fi++) {
			struct rounds r;

			rounds_of(json_string_value(json_array_get(s->steps[k].files, fi)), labels, m, &r);
			d = ff_realloc(d, (n + r.n + 1) * sizeof(double));
			for (i = 0; i < r.n; i++)
				if (!isnan(r.v[0][i]) && !isnan(r.v[2][i]))
					d[n++] = log(r.v[2][i] / r.v[0][i]);
			rounds_free(&r);
		}
		free(labels[1]);
	}
	memset(pr, 0, sizeof(*pr));
	shown = gb_shown(d, n, pr);
	free(d);
	free(labels[0]);
	free(labels[2]);
	return shown;
}
