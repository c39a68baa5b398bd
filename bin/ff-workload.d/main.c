/*
 * ff-workload - start a workload's server, or drive its client.
 *
 * `serve` starts the server on a free port, waits until it listens, emits
 * `server` and holds it until its reader closes the pipe. `drive` reads the
 * stream up to `topology`, runs the client against the relay chain's entry,
 * emits `window` when the warmup ends, `sample`s and `result`, forwards
 * everything else, and waits for its reader before it exits, so the relays
 * stay up for whatever captures after the window.
 */
#include "ff-workload.h"

#include <getopt.h>
#include <limits.h>
#include <string.h>

static const char usage[] =
	"usage: ff-workload serve [-w WORKLOAD] [--cpu-limit N] [--hops N] [--run-dir DIR]\n"
	"                         [--listen ADDRESS]\n"
	"       ff-workload drive [-w WORKLOAD] [--jobs N] [--warmup SECONDS]\n"
	"                         [--duration SECONDS] [--cpu-limit N] [--hops N]\n"
	"                         [--run-dir DIR]\n"
	"                         [--request-size BYTES] [--response-size BYTES] [--rate N]\n"
	"                         [--interval SECONDS]\n"
	"\n"
	"Workloads: builtin (default), iperf3, h2load, h2load-h1, builtin-rr,\n"
	"builtin-crr. The sizes (also for serve) are builtin-rr's and\n"
	"builtin-crr's; --rate theirs and h2load's and h2load-h1's.\n"
	"serve starts the workload's server and holds it; drive reads the\n"
	"topology event on stdin and runs the client through the relays, with an\n"
	"interval event for every --interval seconds of the window (default 1).\n"
	"With --cpu-limit, the workload runs on the CPUs the chain's --hops relays\n"
	"(default 2) leave, if any.\n"
	"--listen: the address serve's server listens on (default 127.0.0.1),\n"
	"which the server event names as its host.\n"
	"--version prints the version. --pipeline-stage (flimflam gives it to its\n"
	"stages): a signal stops it without a \"stopped by\" line; flimflam says it.\n";

enum { OPT_RUN_DIR = FF_OPT_OWN, OPT_LISTEN };

/* Its own; the run's are the rows of FF_RS_WORKLOAD (lib/ff_runspec.c). */
static const struct option own_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	FF_LONGOPT_PIPELINE_STAGE,
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ NULL, 0, NULL, 0 }
};

struct workload_opt opt = { "builtin", FF_RUN_OPTS_DEFAULTS, NULL, 2, "127.0.0.1" };

const struct ff_workload *wl;
const struct workload_driver *wdrv;
cpu_set_t workload_cpus;
int have_workload_cpus;
struct ff_stage stage;

/* The workloads' drivers, one file each (workload_NAME.c). */
static const struct workload_driver *const drivers[] = {
	&workload_builtin, &workload_iperf3, &workload_h2load, &workload_h2load_h1,
	&workload_builtin_rr, &workload_builtin_crr,
};

static const struct workload_driver *
driver_find(const char *name)
{
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(drivers); i++)
		if (!strcmp(drivers[i]->name, name))
			return drivers[i];
	ff_die("workload '%s' has no driver in ff-workload", name);
}

static void
cleanup(void)
{
	ff_children_stop_all();
}

void
spawn_or_die(struct ff_child *c, const char *role, char *const argv[],
	     const char *log, int out_fd)
{
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;

	o.log = log;
	o.out_fd = out_fd;
	o.cpus = have_workload_cpus ? &workload_cpus : NULL;
	o.dir = ff_rundir(NULL);
	if (ff_spawn(c, role, argv, &o) < 0)
		ff_die("cannot run the %s workload", opt.workload);
}

char *
run_path(const char *name)
{
	return ff_asprintf("%s/%s", ff_rundir(NULL), name);
}

/*
 * The options: the run's by their rows, checked together when run by hand;
 * a stage of flimflam's (--pipeline-stage) has its argv checked already.
 */
static const char *
parse(int argc, char *argv[])
{
	const struct option *longopts = ff_runspec_options(own_longopts, FF_RS_WORKLOAD);
	struct ff_runspec rs;
	const char *mode;
	int c;

	ff_runspec_init(&rs);
	opterr = 0;
	if (argc < 2)
		ff_usage_error(usage, "expected a mode: serve or drive");
	mode = argv[1];
	if (mode[0] == '-') {
		/* -h, --version and a bad option say so; any other option is early */
		c = ff_getopt(argc, argv, ":hw:", longopts, usage);
		if (c == 'h')
			ff_usage(usage, 0);
		ff_usage_error(usage, "expected a mode, serve or drive, before the options");
	}
	if (strcmp(mode, "serve") && strcmp(mode, "drive"))
		ff_usage_error(usage, "unknown mode '%s' (expected serve or drive)", mode);
	optind = 2;
	while ((c = ff_getopt(argc, argv, ":hw:", longopts, usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case OPT_RUN_DIR:
			opt.run_dir = optarg;
			break;
		case OPT_LISTEN:
			opt.listen = ff_parse_ipv4(usage, "--listen", optarg);
			break;
		default:
			ff_runspec_take(&rs, usage, c, optarg);
		}
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (!ff_pipeline_stage())
		ff_runspec_check_opts(&rs, usage);
	opt.workload = rs.workload;
	opt.run = rs.run;
	if (rs.hops >= 0)
		opt.hops = rs.hops;
	return mode;
}

int
main(int argc, char *argv[])
{
	const char *mode;
	cpu_set_t avail;

	ff_setprog(argv[0]);
	/* First: a SIGTERM while the options are checked is caught, not fatal. */
	ff_signals_init();
	mode = parse(argc, argv);
	wl = ff_workload_find(opt.workload);
	wdrv = driver_find(opt.workload);

	/* A connection per job: what we start inherits the limit, raised. */
	ff_raise_nofile(LONG_MAX);
	ff_set_cleanup(cleanup);
	ff_rundir(opt.run_dir);
	ff_cpus_available(&avail);
	have_workload_cpus = ff_cpus_workload(&avail, opt.run.cpu_limit, (int)opt.hops, &workload_cpus);
	/* serve reads nothing: its stdin is not a stream. */
	ff_stage_begin(&stage, !strcmp(mode, "drive"));
	return !strcmp(mode, "serve") ? serve() : drive();
}
