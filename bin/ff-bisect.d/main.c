/*
 * ff-bisect - which commit made a relay slower: git bisect between a GOOD
 * and a BAD commit of the user's checkout, each midpoint built with the
 * user's build command (cached by commit) and held against the GOOD and
 * BAD builds in interleaved rounds of ff-bench, rounds added while it is
 * neither clearly like one nor the other; a commit that does not build, or
 * whose relay does not start, is skipped. `flimflam bisect` runs this.
 *
 * Its files: main.c (options, the steps, the end), git.c, build.c, step.c,
 * state.c; ff-bisect.h between them.
 */
#include "ff-bisect.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: flimflam bisect [-h] --good REV --bad REV --build-cmd CMD [-C DIR]\n"
	"                       [-w WORKLOAD] [-r RELAY] [-p PROTOCOL] [--warmup SECONDS]\n"
	"                       [--duration SECONDS] [--jobs JOBS] [--cpu-limit COUNT]\n"
	"                       [--rounds N] [--max-rounds N] [--cache DIR] [--output FILE]\n"
	"                       [--no-flamegraph]\n"
	"       flimflam bisect --resume [-C DIR]\n"
	"\n"
	"Find the commit between GOOD and BAD that changed the relay's CPU cost: git\n"
	"bisect, each midpoint built with CMD and run in interleaved rounds against the\n"
	"GOOD and BAD builds\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"  --good REV, --bad REV The commits before and after the change\n"
	"  --build-cmd CMD       Builds the checked-out commit and installs it into\n"
	"                        {prefix}: split into words without a shell, {prefix}\n"
	"                        replaced in each; $FLIMFLAM_PREFIX holds it too\n"
	"  -C DIR                The checkout (default: the current directory's)\n"
	"  -w WORKLOAD, -r RELAY, -p PROTOCOL\n"
	"                        The case (default builtin, skrouterd, tcp)\n"
	"  --warmup SECONDS, --duration SECONDS, --jobs JOBS, --cpu-limit COUNT\n"
	"                        Each run's, as for bench (default 5, 5, 2, 1)\n"
	"  --rounds N            A step's first rounds, 3 or more (default 8)\n"
	"  --max-rounds N        A step's budget of rounds (default 24)\n"
	"  --cache DIR           Where the builds go (default $XDG_CACHE_HOME/flimflam/bisect,\n"
	"                        else ~/.cache/flimflam/bisect)\n"
	"  --output FILE         The results file (default flimflam-bisect-YYYYmmdd-HHMMSS.jsonl)\n"
	"  --no-flamegraph       No differential flamegraph of the first bad commit\n"
	"  --resume              Go on with the bisect stopped in this checkout\n";

enum {
	OPT_GOOD = FF_OPT_OWN, OPT_BAD, OPT_BUILD_CMD, OPT_WARMUP, OPT_DURATION, OPT_JOBS,
	OPT_CPU_LIMIT, OPT_ROUNDS, OPT_MAX_ROUNDS, OPT_CACHE, OPT_OUTPUT, OPT_NO_FLAME, OPT_RESUME
};

static const char *
metric_name(int m)
{
	return m == M_CPU_GB ? "relay CPU s/GB" : "relay CPU s per 1k requests";
}

/* The commit REV names, in full; a usage error when none. */
static char *
commit_of(const char *repo, const char *what, const char *rev)
{
	char *spec = ff_asprintf("%s^{commit}", rev), *c = git_line(repo, "rev-parse", "--verify", "-q", spec, NULL);

	if (!c || !*c)
		ff_usage_error(usage, "%s: '%s' is not a commit of %s", what, rev, repo);
	free(spec);
	return c;
}

static int
bisecting(const char *repo)
{
	return git(repo, NULL, "bisect", "log", NULL) == 0;
}

static char *
default_output(void)
{
	char name[64];
	time_t t = time(NULL);

	strftime(name, sizeof(name), "flimflam-bisect-%Y%m%d-%H%M%S.jsonl", localtime(&t));
	return ff_strdup(name);
}

/* A new results file, claimed now (an existing one is refused); its absolute name. */
static char *
claim_output(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	char *abs;

	if (fd < 0)
		ff_fail(1, "--output: '%s': %s", path,
			errno == EEXIST ? "exists (bisect does not replace a results file)" : strerror(errno));
	close(fd);
	abs = realpath(path, NULL);
	return abs ? abs : ff_strdup(path);
}

static void
remove_state(const struct state *s)
{
	unlink(s->path);
}

/* GOOD and BAD shown to differ, or not, after this step's rounds: 1 go on, 0 more rounds, -1 they do not. */
static int
established(struct state *s, const struct step *st)
{
	struct paired gb;

	if (s->established)
		return 1;
	if (gb_change(s, &gb)) {
		s->established = 1;
		ff_say("%s: GOOD -> BAD: %s %+.1f%% [%+.1f, %+.1f] over %d rounds (p %.3g): bisecting\n",
		       ff_prog(), metric_name(metric_of(s->o.workload)), pct_of_log(gb.est),
		       pct_of_log(gb.lo), pct_of_log(gb.hi), gb.n, gb.p);
		state_save(s);
		return 1;
	}
	return st->rounds >= s->o.max_rounds ? -1 : 0;
}

/* The first bad commit's parent against it: flimflam flamegraph of the two builds, beside the results. */
static void
flamegraph(struct state *s, const char *first)
{
	char *parent = git_line(s->repo, "rev-parse", "--verify", "-q", ff_asprintf("%s^", first), NULL);
	char *why, *pp, *pf, *head = git_line(s->repo, "rev-parse", "HEAD", NULL), *dir, *log, *page;
	char *lp, *lf, *ff = ff_helper_path("flimflam"), *outcopy = ff_strdup(s->o.output);
	struct ff_argv a = FF_ARGV_INIT;
	int status;

	if (!parent) {
		ff_print("No differential flamegraph: %.12s has no parent\n", first);
		return;
	}
	want_head = head;
	pp = ensure_build(s, parent, &why);
	pf = ensure_build(s, first, &why);
	checkout(s->repo, head);
	if (!pp || !pf) {
		ff_print("No differential flamegraph: %s\n", why);
		return;
	}
	dir = dirname(outcopy);
	lp = label_of(parent), lf = label_of(first);
	log = ff_asprintf("%s/flamegraph-%s-vs-%s.log", dir, lp, lf);
	page = ff_asprintf("%s/flamegraph-%s-vs-%s.html", dir, lp, lf);
	ff_argv_addl(&a, ff, "flamegraph", "-w", s->o.workload, "-r", s->o.relay, "-p", s->o.protocol, NULL);
	ff_argv_addf(&a, "--warmup=%ld", s->o.warmup);
	ff_argv_addf(&a, "--duration=%ld", s->o.duration);
	ff_argv_addf(&a, "--build=%s=%s", lp, pp);
	ff_argv_addf(&a, "--build=%s=%s", lf, pf);
	ff_say("%s: recording %.12s and its parent for a differential flamegraph (log %s)\n", ff_prog(), first, log);
	status = run_child("flamegraph", a.v, dir, log, NULL);
	stop_if_signalled(s);
	if (status == 0 && access(page, F_OK) == 0)
		ff_print("Differential flamegraph (%.12s against its parent %.12s): %s\n", first, parent, page);
	else
		ff_print("No differential flamegraph: flimflam flamegraph %s (log %s)\n", ff_status_how(status), log);
}

static void
print_steps(const struct state *s)
{
	static const char *const calls[] = { "-", "good", "bad", "skip" };
	char ci[64];
	int i;

	ff_print("\nStep  Commit        Call  Rounds  Mid vs GOOD [anytime 95%%]     p\n");
	for (i = 0; i < s->nsteps; i++) {
		const struct step *st = &s->steps[i];

		if (st->call == C_SKIP) {
			ff_print("%-4d  %.12s  skip  %6d  %s\n", i + 1, st->commit, st->rounds,
				 st->why ? st->why : "");
			continue;
		}
		if (isnan(st->lo))
			snprintf(ci, sizeof(ci), "[no interval]");
		else
			snprintf(ci, sizeof(ci), "[%+.1f, %+.1f]", st->lo, st->hi);
		ff_print("%-4d  %.12s  %-4s  %6d  %+6.1f%% %-16s  %8.3g%s\n", i + 1, st->commit,
			 calls[st->call], st->rounds, st->est, ci, st->p,
			 st->shown ? "" : "  (not shown: the nearer side)");
	}
}

/* The end: what was found, the steps, the runs. Returns the exit status. */
static int
finish(struct state *s, const char *first, const char *bisect_out)
{
	struct paired gb;
	int i, runs = 0, skips = 0;
	char *subject;

	gb_change(s, &gb);
	for (i = 0; i < s->nsteps; i++) {
		/* Every step's figures from its files (a resumed bisect's earlier steps too); git's call stands. */
		enum call call = s->steps[i].call;

		step_figures(s, &s->steps[i], s->o.good, s->o.bad);
		s->steps[i].call = call;
		runs += s->steps[i].runs;
		skips += s->steps[i].call == C_SKIP;
	}
	if (!first) {
		ff_print("No first bad commit: only skipped commits are left between GOOD and BAD\n%s", bisect_out);
	} else {
		subject = git_line(s->repo, "log", "-1", "--format=%s", first, NULL);
		ff_print("First bad commit: %s %s\n", first, subject ? subject : "");
	}
	if (!s->established)
		ff_print("Change GOOD -> BAD: not shown: no step measured GOOD and BAD apart (%d rounds); "
			 "git bisect named the commit without a bench\n", gb.n);
	else
		ff_print("Change GOOD -> BAD: %s %+.1f%% [%+.1f, %+.1f] (anytime 95%%, paired over %d rounds, p %.3g)\n",
			 metric_name(metric_of(s->o.workload)), pct_of_log(gb.est), pct_of_log(gb.lo),
			 pct_of_log(gb.hi), gb.n, gb.p);
	ff_print("Steps: %d (%d skipped), %d runs; results: %s\n", s->nsteps, skips, runs, s->o.output);
	print_steps(s);
	ff_print("\n");
	if (first && s->o.flamegraph)
		flamegraph(s, first);
	ff_print("git bisect log shows the steps; git bisect reset ends the bisect\n");
	remove_state(s);
	return first ? 0 : 1;
}

/* Does the log of bench FILE name the build of commit (--build LABEL: ...)? */
static int
log_names_build(const char *file, const char *commit)
{
	char *path = ff_asprintf("%s.log", file), *label = label_of(commit), line[4096];
	char *want = ff_asprintf("--build %s:", label);
	FILE *f = fopen(path, "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, want) != NULL;
	if (f)
		fclose(f);
	free(path), free(label), free(want);
	return found;
}

/* One step's rounds, until the midpoint is called, skipped, or GOOD and BAD do not differ (-1). */
static int
run_step(struct state *s, struct step *st)
{
	const char *commits[3] = { s->o.good, st->commit, s->o.bad };
	int status, e;
	long n;

	for (;;) {
		step_figures(s, st, s->o.good, s->o.bad);
		if (st->call == C_SKIP)
			break;
		e = 0;
		if (st->rounds > 0) {
			if ((e = established(s, st)) < 0)
				return -1;
			if (e > 0 && (st->shown || st->rounds >= s->o.max_rounds))
				break;
		}
		n = st->rounds ? s->o.rounds / 2 : s->o.rounds;
		n = n < 2 ? 2 : n;
		if (st->rounds && st->rounds + n > s->o.max_rounds)
			n = s->o.max_rounds - st->rounds;
		if (st->rounds && !e)
			ff_say("%s: step %d: GOOD and BAD are not yet shown to differ after %d rounds: %ld more "
			       "rounds (budget %ld)\n", ff_prog(), (int)(st - s->steps) + 1, st->rounds, n,
			       s->o.max_rounds);
		else if (st->rounds)
			ff_say("%s: step %d: %.12s is neither clearly like GOOD nor like BAD after %d rounds "
			       "(p %.3g): %ld more rounds (budget %ld)\n", ff_prog(), (int)(st - s->steps) + 1,
			       st->commit, st->rounds, st->p, n, s->o.max_rounds);
		else
			ff_say("%s: step %d: %.12s against GOOD and BAD, %ld rounds\n", ff_prog(),
			       (int)(st - s->steps) + 1, st->commit, n);
		status = bench_batch(s, st, commits, n);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
			/* A build refused before anything ran: the midpoint's is a skip, GOOD's or BAD's the end. */
			const char *f = json_string_value(json_array_get(st->files, json_array_size(st->files) - 1));

			if (!log_names_build(f, st->commit))
				ff_fail(1, "ff-bench refused the GOOD or BAD build (see %s.log)", f);
			st->call = C_SKIP;
			st->why = ff_asprintf("ff-bench refused its build (see %s.log)", f);
			break;
		}
		step_figures(s, st, s->o.good, s->o.bad);
		if (st->call != C_SKIP && st->rounds == 0)
			ff_fail(1, "step %d: no round ran all three builds (see %s.log)", (int)(st - s->steps) + 1,
				json_string_value(json_array_get(st->files, json_array_size(st->files) - 1)));
	}
	return 0;
}

static const char *
mark(const struct step *st)
{
	return st->call == C_GOOD ? "good" : st->call == C_BAD ? "bad" : "skip";
}

static int
bisect_loop(struct state *s)
{
	for (;;) {
		struct ff_buf out = FF_BUF_INIT;
		char *text, *hit, *why, *mid;
		struct step *st;

		if (git(s->repo, &out, "bisect", "next", NULL) < 0)
			ff_die("git bisect next: cannot run git");
		text = ff_buf_take(&out);
		if ((hit = strstr(text, " is the first bad commit"))) {
			char *start = hit;

			while (start > text && start[-1] != '\n')
				start--;
			*hit = 0;
			return finish(s, start, NULL);
		}
		if (strstr(text, "only 'skip'ped commits left"))
			return finish(s, NULL, text);
		mid = git_line(s->repo, "rev-parse", "HEAD", NULL);
		want_head = mid;
		st = s->nsteps && !strcmp(s->steps[s->nsteps - 1].commit, mid) &&
		     s->steps[s->nsteps - 1].call == C_NONE ? &s->steps[s->nsteps - 1] : step_new(s, mid);
		state_save(s);
		if (!ensure_build(s, s->o.good, &why))
			ff_fail(1, "GOOD %.12s: %s", s->o.good, why);
		if (!ensure_build(s, s->o.bad, &why))
			ff_fail(1, "BAD %.12s: %s", s->o.bad, why);
		checkout(s->repo, mid);
		if (!ensure_build(s, mid, &why)) {
			st->call = C_SKIP;
			st->why = why;
		} else if (run_step(s, st) < 0) {
			struct paired gb;

			gb_change(s, &gb);
			ff_print("GOOD and BAD do not differ: %s %+.1f%% [%+.1f, %+.1f] over %d rounds (p %.3g, "
				 "not below %.2g); no commit is named\n", metric_name(metric_of(s->o.workload)),
				 pct_of_log(gb.est), pct_of_log(gb.lo), pct_of_log(gb.hi), gb.n, gb.p, ALPHA);
			ff_print("Results: %s\n", s->o.output);
			git(s->repo, NULL, "bisect", "reset", NULL);
			remove_state(s);
			return 1;
		}
		ff_say("%s: step %d: %.12s is %s%s\n", ff_prog(), s->nsteps, mid,
		       st->call == C_GOOD ? "like GOOD" : st->call == C_BAD ? "like BAD" : "skipped: ",
		       st->call == C_SKIP ? st->why : !st->shown ? " (not shown within the budget: the nearer side)" : "");
		if (git(s->repo, NULL, "bisect", mark(st), mid, NULL) != 0)
			ff_die("git bisect %s %.12s failed", mark(st), mid);
		state_save(s);
		free(text);
	}
}

/* The checkout's top and git directory; the state's paths. */
static void
find_repo(struct state *s, const char *dir)
{
	char *gitdir;

	s->repo = git_line(dir, "rev-parse", "--show-toplevel", NULL);
	gitdir = git_line(dir, "rev-parse", "--absolute-git-dir", NULL);
	if (!s->repo || !gitdir)
		ff_usage_error(usage, "-C: '%s' is not in a git checkout", dir);
	s->path = ff_asprintf("%s/flimflam-bisect.json", gitdir);
	s->dir = ff_asprintf("%s/flimflam-bisect", gitdir);
}

static void
start(struct state *s, const char *good, const char *bad, const char *cache, const char *output)
{
	struct ff_buf out = FF_BUF_INIT;
	struct ff_buf why = FF_BUF_INIT;
	struct ff_argv w = FF_ARGV_INIT;

	if (!good || !bad || !s->o.build_cmd)
		ff_usage_error(usage, "--good, --bad and --build-cmd are needed (or --resume)");
	if (split_words(s->o.build_cmd, &w, &why) < 0)
		ff_usage_error(usage, "--build-cmd: '%s': %s", s->o.build_cmd, why.s);
	ff_argv_free(&w);
	if (!ff_relay_hops(s->o.relay))
		ff_usage_error(usage, "-r %s: there is no relay to build", s->o.relay);
	s->o.good = commit_of(s->repo, "--good", good);
	s->o.bad = commit_of(s->repo, "--bad", bad);
	if (!strcmp(s->o.good, s->o.bad))
		ff_usage_error(usage, "--good and --bad name the same commit");
	if (bisecting(s->repo))
		ff_fail(1, "git bisect is already under way in %s: 'flimflam bisect --resume', or 'git bisect reset'",
			s->repo);
	s->o.cache = cache_root(cache, s->o.build_cmd);
	s->o.output = claim_output(output ? output : default_output());
	unlink(s->path);
	if (ff_mkdirs(s->dir, 0755) < 0)
		ff_die("cannot make '%s': %s", s->dir, strerror(errno));
	if (git(s->repo, &out, "bisect", "start", s->o.bad, s->o.good, NULL) != 0) {
		unlink(s->o.output);
		ff_fail(1, "git bisect start: %s", ff_buf_take(&out));
	}
	ff_buf_free(&out);
	state_save(s);
}

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	{ "good", required_argument, NULL, OPT_GOOD },
	{ "bad", required_argument, NULL, OPT_BAD },
	{ "build-cmd", required_argument, NULL, OPT_BUILD_CMD },
	{ "workload", required_argument, NULL, 'w' },
	{ "relay", required_argument, NULL, 'r' },
	{ "protocol", required_argument, NULL, 'p' },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "cpu-limit", required_argument, NULL, OPT_CPU_LIMIT },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "max-rounds", required_argument, NULL, OPT_MAX_ROUNDS },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "no-flamegraph", no_argument, NULL, OPT_NO_FLAME },
	{ "resume", no_argument, NULL, OPT_RESUME },
	{ NULL, 0, NULL, 0 }
};

/* The options of the command line as given (main's), before they are checked. */
struct args {
	const char *good, *bad, *cache, *output, *dir;
	int resume;
};

/* Option c (getopt's), with its argument, into the bisect's options or a. */
static void
take_option(struct state *s, struct args *a, int c, char *arg, char *argv[])
{
	switch (c) {
	case 'h':
		ff_usage(usage, 0);
	case 'C':
		a->dir = arg;
		break;
	case OPT_GOOD:
		a->good = arg;
		break;
	case OPT_BAD:
		a->bad = arg;
		break;
	case OPT_BUILD_CMD:
		s->o.build_cmd = arg;
		break;
	case 'w':
		s->o.workload = ff_workloads[ff_parse_name(usage, "workload", arg,
							  (const char *const *)ff_workloads)];
		break;
	case 'r':
		s->o.relay = ff_relays[ff_parse_name(usage, "relay", arg, (const char *const *)ff_relays)];
		break;
	case 'p':
		s->o.protocol = ff_protocols[ff_parse_name(usage, "protocol", arg, ff_protocols)];
		break;
	case OPT_WARMUP:
		s->o.warmup = ff_parse_run_opt(usage, "--warmup", arg);
		break;
	case OPT_DURATION:
		s->o.duration = ff_parse_run_opt(usage, "--duration", arg);
		break;
	case OPT_JOBS:
		s->o.jobs = ff_parse_run_opt(usage, "--jobs", arg);
		break;
	case OPT_CPU_LIMIT:
		s->o.cpu_limit = ff_parse_run_opt(usage, "--cpu-limit", arg);
		break;
	case OPT_ROUNDS:
		s->o.rounds = ff_parse_long(usage, "--rounds", arg, 3, 1000);
		break;
	case OPT_MAX_ROUNDS:
		s->o.max_rounds = ff_parse_long(usage, "--max-rounds", arg, 1, 1000);
		break;
	case OPT_CACHE:
		a->cache = arg;
		break;
	case OPT_OUTPUT:
		a->output = arg;
		break;
	case OPT_NO_FLAME:
		s->o.flamegraph = 0;
		break;
	case OPT_RESUME:
		a->resume = 1;
		break;
	default:
		ff_bad_option(usage, longopts, c, argv);
	}
}

int
main(int argc, char *argv[])
{
	struct state s = { .o = { .workload = "builtin", .relay = "skrouterd", .protocol = "tcp", .warmup = 5,
				  .duration = 5, .jobs = 2, .cpu_limit = 1, .rounds = 8, .max_rounds = 24,
				  .flamegraph = 1 } };
	struct args a = { .dir = "." };
	int c, others = 0;

	ff_setprog(argv[0]);
	ff_usage_self("ff-bisect");
	while ((c = ff_getopt(argc, argv, ":hC:w:r:p:", longopts, usage)) != -1) {
		others += c != 'C' && c != OPT_RESUME;
		take_option(&s, &a, c, optarg, argv);
	}
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (a.resume && others)
		ff_usage_error(usage, "--resume takes the bisect's own options: only -C goes with it");
	if (s.o.max_rounds < s.o.rounds)
		ff_usage_error(usage, "--max-rounds %ld is below --rounds %ld", s.o.max_rounds, s.o.rounds);
	find_repo(&s, a.dir);
	if (a.resume) {
		if (!state_load(&s) || !bisecting(s.repo))
			ff_fail(1, "--resume: no flimflam bisect is under way in %s", s.repo);
	} else {
		start(&s, a.good, a.bad, a.cache, a.output);
	}
	ff_signals_init();
	c = bisect_loop(&s);
	return ff_finish() ? 1 : c;
}
