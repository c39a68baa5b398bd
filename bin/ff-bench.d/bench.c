/*
 * ff-bench: the relay matrix planned, run case by case (run.c, or over a
 * pool of hosts: pool.c) with every result kept, and the table printed.
 */
#include "ff-bench.h"

#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-bench [-h] [-w WORKLOADS] [-r RELAYS] [-p PROTOCOLS] [--jobs JOBS]\n"
	"                [--warmup SECONDS] [--duration SECONDS] [--cpu-limit COUNT]\n"
	"                [--hops N[,N...]] [--repeat N] [--output FILE [--force | --append]]\n"
	"                [--request-size BYTES] [--response-size BYTES] [--rate N] [--tls]\n"
	"                [--interval SECONDS] [--build LABEL=PATH ...] [--seed N]\n"
	"                [--pool HOST,HOST,...] [--slo pNN=MS]\n"
	"                [--relay-cmd COMMAND] [--workers N[,N...]] [--record]\n"
	"       ff-bench summarize [FILE]\n"
	"       ff-bench compare [--threshold PCT] [--format text|markdown] [--json]\n"
	"                        BASE NEW | FILE --base LABEL --new LABEL\n"
	"       ff-bench report [-o FILE] FILE...\n"
	"\n"
	"Run each workload on each relay and summarize the results\n"
	"\n"
	"options:\n"
	"  -h, --help            Show this help message and exit\n"
	"  --version             Show the version and exit\n"
	"  -w WORKLOADS, --workloads WORKLOADS\n"
	"                        The selected workloads (comma-separated list) (default\n"
	"                        'builtin,iperf3,h2load,h2load-h1,builtin-rr,builtin-crr')\n"
	"  -r RELAYS, --relays RELAYS\n"
	"                        The selected relays (comma-separated list) (default\n"
	"                        'skrouterd,nghttpx,nginx,haproxy,cmd,none')\n"
	"  -p PROTOCOLS, --protocols PROTOCOLS\n"
	"                        The selected protocols (comma-separated list) (default\n"
	"                        'tcp,http1,http2')\n"
	"  --jobs JOBS           The number of concurrent workload jobs (default 2); a\n"
	"                        list sweeps them, each value a case of its own\n"
	"  --warmup SECONDS      The warmup time in seconds (default 5)\n"
	"  --duration SECONDS    The execution time (excluding warmup) in seconds (default 5)\n"
	"  --cpu-limit COUNT     The max per-process relay CPU usage (0 means no limit)\n"
	"                        (default 1)\n"
	"  --hops N[,N...]       Chains of N relays (1 to 8), each a case of its own\n"
	"                        (default 2); relay none runs once, with no relay\n"
	"  --workers N[,N...]    Each relay's worker threads or processes (1 to 1024),\n"
	"                        as in flimflam run, each a case of its own; relays\n"
	"                        cmd and none run once, with their own\n"
	"  --repeat N            Run every case N times, interleaved (default 1)\n"
	"  --repeat auto[:BUDGET]\n"
	"                        With builds: rounds until each case is decided, for\n"
	"                        BUDGET at most (default 10m)\n"
	"  --output FILE         Keep the results (JSON lines) in FILE (default\n"
	"                        flimflam-bench-YYYYmmdd-HHMMSS.jsonl, in the current\n"
	"                        directory), and their report in FILE without .jsonl,\n"
	"                        with .html; an existing FILE is refused\n"
	"  --force               Replace an existing FILE (and report)\n"
	"  --append              Add the new runs to an existing results FILE\n"
	"  --request-size BYTES, --response-size BYTES, --rate N\n"
	"                        As in flimflam run (the sizes builtin-rr's and\n"
	"                        builtin-crr's, --rate theirs and h2load's too); each\n"
	"                        takes a comma list too, each value a case of its own\n"
	"  --interval SECONDS    Each run's window as a time series, as in flimflam run;\n"
	"                        unsteady runs are marked in the table (default 1)\n"
	"  --tls                 The links between relays use mutual TLS, as in flimflam\n"
	"                        run (part of each case; relay none and --hops 1 are skipped)\n"
	"  --build LABEL=PATH    A build of the relay under test (-r names one relay):\n"
	"                        its binary, or an install prefix whose sbin/ or bin/\n"
	"                        holds it; repeat it for each build. Each round runs\n"
	"                        every case with every build once, in a shuffled order\n"
	"  --seed N              The seed of that shuffle (default: a new one, printed\n"
	"                        and kept in each result); the same N replays the order.\n"
	"                        Without --build, cases are shuffled only with --seed\n"
	"  --record              Each run records the relays with perf, as flimflam\n"
	"                        record does: its perf.data kept in its run directory,\n"
	"                        named by its row's capture (for flimflam explain)\n"
	"  --pool HOST,HOST,...  Spread the cases over these hosts with GNU parallel\n"
	"                        (--sshlogin), one case at a time per host, each a whole\n"
	"                        topology there; without GNU parallel they run here\n"
	"  --relay-cmd COMMAND   Relay cmd's command, as in run (cmd runs only with it)\n"
	"  --slo pNN=MS          builtin-rr, builtin-crr, h2load, h2load-h1: search each\n"
	"                        case's open-loop\n"
	"                        --rate (from --rate, default 1000) for the highest that\n"
	"                        keeps pNN (p50, p90, p99, p999, p9999) at most MS ms,\n"
	"                        with no errors and the rate achieved within 2%\n"
	"\n"
	"Unsupported combinations, and cases the skrouterd on PATH cannot carry (no\n"
	"HTTP adaptor), are not run. A relay or workload whose program is not on\n"
	"PATH is skipped. A failed case is reported and the bench goes on; the exit\n"
	"status is then 1, as it is when no case can run.\n";

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

/* A comma list of names: unknown, empty or repeated ones are usage errors. */
static int
parse_list(const char *what, const char *arg, const char *const names[], const char *out[])
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int n = 0, i, j;

	if (!copy)
		ff_die("out of memory");
	if (!*arg || arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
		ff_usage_error(usage, "empty %s name in '%s'", what, arg);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		i = ff_parse_name(usage, what, tok, names);
		for (j = 0; j < n; j++)
			if (out[j] == names[i])
				ff_usage_error(usage, "%s '%s' is given twice", what, tok);
		out[n++] = names[i];
	}
	free(copy);
	return n;
}

static int
all_names(const char *const names[], const char *out[])
{
	int n;

	for (n = 0; names[n]; n++)
		out[n] = names[n];
	return n;
}

/*
 * Relay cmd runs --relay-cmd: named without it, a usage error; left out
 * of the default relays without it; here only (not over --pool).
 */
static void
relay_cmd_check(int by_default)
{
	struct ff_argv words = FF_ARGV_INIT;
	struct ff_buf why = FF_BUF_INIT;
	int i, k, cmd = 0;

	for (i = k = 0; i < opt.nr; i++) {
		if (!ff_relay_has(opt.relays[i], FF_RELAY_COMMAND))
			opt.relays[k++] = opt.relays[i];
		else if (opt.relay_cmd || !by_default) {
			opt.relays[k++] = opt.relays[i];
			cmd = 1;
		}
	}
	opt.nr = k;
	if (opt.relay_cmd && !cmd)
		ff_usage_error(usage, "--relay-cmd is for relay %s, and it is not selected",
			       ff_relays_with(FF_RELAY_COMMAND));
	if (cmd && !opt.relay_cmd)
		ff_usage_error(usage, "relay 'cmd' runs the command of --relay-cmd, and none is given");
	if (cmd && opt.pool)
		ff_usage_error(usage, "--pool: relay 'cmd' runs its command on this host");
	if (cmd && ff_relay_cmd_split(opt.relay_cmd, &words, &why) < 0)
		ff_usage_error(usage, "%s", why.s);
	ff_argv_free(&words);
}

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
	int i = ff_parse_name(usage, "protocol", protocol, ff_protocols);
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
 * The builds: one relay under test, which runs a program; each build
 * resolves to it (one line, exit 2, when not); labels differ. With builds
 * (or --seed) each round is shuffled; the seed is new unless given.
 */
static void
bench_builds(void)
{
	struct ff_buf why = FF_BUF_INIT;
	int i, j;

	if (opt.nbuild) {
		if (opt.nr != 1)
			ff_fail(2, "--build is a build of the relay under test: name one relay with -r, not several");
		if (!ff_relay_program(opt.relays[0]))
			ff_fail(2, "--build is for a relay that runs a program, and relay '%s' runs none",
				opt.relays[0]);
		opt.shuffle = opt.shuffle ? opt.shuffle : 1;
	}
	for (i = 0; i < opt.nbuild; i++) {
		if (ff_build_parse(opt.build_args[i], opt.relays[0], &opt.builds[i], &why) < 0)
			ff_fail(2, "%s", why.s);
		for (j = 0; j < i; j++)
			if (!strcmp(opt.builds[j].label, opt.builds[i].label))
				ff_fail(2, "--build: the label '%s' is given twice: each build needs its own",
					opt.builds[i].label);
	}
	if (opt.shuffle == 1) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		opt.seed = ((long)ts.tv_nsec ^ ((long)getpid() << 12) ^ (long)ts.tv_sec) & 0x7fffffffL;
		opt.seed = opt.seed ? opt.seed : 1;
	}
}

enum { OPT_REPEAT = FF_OPT_OWN, OPT_OUTPUT, OPT_FORCE, OPT_APPEND, OPT_SEED, OPT_POOL,
       OPT_SLO, OPT_RECORD };
/* The bench's own; the run's (-w, -r, -p as lists, --jobs, ..., --workers) are their rows'. */
static const struct option own_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "append", no_argument, NULL, OPT_APPEND },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "pool", required_argument, NULL, OPT_POOL },
	{ "slo", required_argument, NULL, OPT_SLO },
	{ "record", no_argument, NULL, OPT_RECORD },
	{ NULL, 0, NULL, 0 }
};

/*
 * Option c of a bench (getopt's), with its argument, into opt; the run's
 * one-value options by their rows into rs (--warmup, --tls, ...), and the
 * sweeps' largest values.
 */
static void
take_option(struct ff_runspec *rs, int c, char *arg)
{
	const char *list = ff_runspec_list(c);

	switch (c) {
	case 'h':
		ff_usage(usage, 0);
	case 'w':
		opt.nw = parse_list("workload", arg, ff_workloads, opt.workloads);
		break;
	case 'r':
		opt.nr = parse_list("relay", arg, ff_relays, opt.relays);
		break;
	case 'p':
		opt.np = parse_list("protocol", arg, ff_protocols, opt.protocols);
		break;
	case OPT_REPEAT:
		opt.repeat = repeat_auto(arg) ? 10000 : ff_parse_long(usage, "--repeat", arg, 1, 10000);
		break;
	case OPT_OUTPUT:
		if (!*arg)
			ff_usage_error(usage, "--output: expected a file name");
		opt.output = arg;
		break;
	case OPT_FORCE:
		opt.force = 1;
		break;
	case OPT_APPEND:
		opt.append = 1;
		break;
	case FF_OPT_BUILD:
		if (opt.nbuild == (int)FF_ARRAY_SIZE(opt.build_args))
			ff_fail(2, "--build: %d builds at most", opt.nbuild);
		opt.build_args[opt.nbuild++] = arg;
		break;
	case OPT_SEED:
		opt.seed = ff_parse_long(usage, "--seed", arg, 0, 2147483647L);
		opt.shuffle = 2;	/* given */
		break;
	case OPT_POOL:
		if (!arg[strspn(arg, ", ")] || strpbrk(arg, " \t\n'\"\\"))
			ff_usage_error(usage, "--pool: expected HOST,HOST,..., not '%s'", arg);
		opt.pool = arg;
		break;
	case OPT_SLO:
		slo_parse(usage, arg);
		break;
	case OPT_RECORD:
		opt.record = 1;
		break;
	default:
		if (list && !strcmp(list, "--hops"))
			opt.nh = parse_num_list(usage, list, arg, opt.hops, FF_HOPS_MAX);
		else if (!list || !sweep_take_opt(usage, list, arg, &rs->run))
			ff_runspec_take(rs, usage, c, arg);
	}
}

/* What an option needs of the selected workloads or relays, for one of them at least. */
enum need { NEED_RR, NEED_RATE, NEED_HOPS, NEED_WORKERS };

static int
selected(enum need need)
{
	int i, n = need == NEED_RR || need == NEED_RATE ? opt.nw : opt.nr;

	for (i = 0; i < n; i++)
		if ((need == NEED_RR && ff_workload_is_rr(opt.workloads[i])) ||
		    (need == NEED_RATE && ff_workload_takes_rate(opt.workloads[i])) ||
		    (need == NEED_HOPS && ff_relay_hops(opt.relays[i])) ||
		    (need == NEED_WORKERS && ff_relay_has(opt.relays[i], FF_RELAY_WORKERS)))
			return 1;
	return 0;
}

/* The options of a bench, into opt. */
static void
bench_options(int argc, char *argv[])
{
	const struct option *longopts = ff_runspec_options(own_longopts, FF_RS_BENCH);
	struct ff_runspec rs;
	int c, w;

	ff_runspec_init(&rs);
	optind = 1;
	while ((c = ff_getopt(argc, argv, ":hw:r:p:", longopts, usage)) != -1)
		take_option(&rs, c, optarg);
	opt.run = rs.run;
	opt.tls = rs.tls;
	opt.relay_cmd = rs.relay_cmd;
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	record_opts_check(usage);
	if (opt.force && opt.append)
		ff_usage_error(usage, "--force replaces the results file, --append adds to it: "
			       "give one");
	if (!opt.nw)
		opt.nw = all_names(ff_workloads, opt.workloads);
	if (!opt.nr && opt.nbuild)
		ff_fail(2, "--build is a build of the relay under test: name it with -r (%s)", ff_relays_built());
	w = !opt.nr;
	if (!opt.nr)
		opt.nr = all_names(ff_relays, opt.relays);
	relay_cmd_check(w);
	if (!opt.np)
		opt.np = all_names(ff_protocols, opt.protocols);
	if ((opt.run.request_size > 1 || opt.run.response_size > 1) && !selected(NEED_RR))
		ff_usage_error(usage, "--request-size and --response-size are for workloads %s, and none is selected",
			       ff_workloads_taking(0));
	if (opt.run.rate > 0 && !selected(NEED_RATE))
		ff_usage_error(usage, "--rate is for workloads %s, and none is selected", ff_workloads_taking(1));
	if (opt.nh && !selected(NEED_HOPS))
		ff_usage_error(usage, "--hops is for the relays that run (%s), and only relay none is selected",
			       ff_relays_running());
	if (opt.run.workers && !selected(NEED_WORKERS))
		ff_usage_error(usage, "--workers is for relays %s, and none of them is selected",
			       ff_relays_with(FF_RELAY_WORKERS));
	bench_builds();
	bench_limits(usage);
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
 * Round-robin: drift on a noisy machine spreads over every case (and
 * build), in an order shuffled each round with --build or --seed. Each
 * record is kept as soon as its run ends; returns how many failed.
 */
static int
run_all(const struct plan *pl, int *done)
{
	int rep, i, w, k = 0, failed = 0, order[FF_ARRAY_SIZE(pl->cases)];
	uint64_t state = (uint64_t)opt.seed;
	json_t *rec;

	for (rep = 1; rep <= opt.repeat && !ff_signalled() && !output_gone && !output_lost &&
	     auto_more(records, rep - 1, pl->nrun); rep++) {
		round_order(pl, order, &state);
		for (i = 0; i < pl->ncases && !ff_signalled() && !output_gone && !output_lost; i++) {
			w = order[i];
			if (pl->cases[w].skip[0] || auto_decided(&pl->cases[w]))
				continue;
			rec = run_case(&pl->cases[w], rep, ++k, pl->nrun * opt.repeat);
			if (!rec)
				break;
			failed += is_status(rec, "failed");
			++*done;
			json_array_append_new(records, rec);
			output_save(records);
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
		ff_usage_error(usage, "none of these combinations is supported: %s", list);
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
		ff_say("%s: rounds of %d run%s until every case is decided, for %s at most; results go to '%s'\n",
		       ff_prog(), plan.nrun, plan.nrun == 1 ? "" : "s", clock_str(auto_budget()), opt.output);
	else
	ff_say("%s: %ld run%s (%d case%s x %ld), about %s; results go to '%s'\n", ff_prog(),
	       nruns, nruns == 1 ? "" : "s", plan.nrun, opt.nbuild ? (plan.nrun == 1 ?
	       " with its build" : "s with their builds") : plan.nrun == 1 ? "" : "s",
	       opt.repeat, clock_str(nruns * run_estimate()), opt.output);
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
