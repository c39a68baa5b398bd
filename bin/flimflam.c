/*
 * flimflam - the dispatcher: a table of the documented commands, each
 * with the program it runs and its traits, and an exec of that program.
 *
 * run and the capture commands are ff-run's (the engine: the pipeline,
 * its events and summary); check is ff-check's, but check --hosts is
 * ff-run's (it shares --hosts with the runs); bench, compare, explain and
 * report are ff-bench's, history ff-history's, bisect ff-bisect's.
 * Nothing runs here but the exec.
 */
#include "ff.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

/* A command's traits. */
enum {
	/*
	 * The engine's: run as "flimflam COMMAND ARG...", its messages named
	 * "flimflam: ..." as the dispatcher's own were.
	 */
	ENGINE = 1 << 0,
	/* With --hosts, the engine's check of those hosts (not this machine's). */
	HOSTS_ENGINE = 1 << 1,
};

/*
 * A command: the program it runs, the word that program takes first
 * (NULL: none; the engine takes the command's name), its traits.
 */
struct cmd {
	const char *name, *prog, *mode;
	unsigned traits;
	const char *help;
};

static const struct cmd cmds[] = {
	{ "check", "ff-check", NULL, HOSTS_ENGINE,
	  "Check for required programs and system configuration" },
	{ "run", "ff-run", NULL, ENGINE, "Run a workload without capturing any data" },
	{ "stat", "ff-run", NULL, ENGINE, "Capture 'perf stat' output" },
	{ "skstat", "ff-run", NULL, ENGINE, "Capture 'skstat' output" },
	{ "record", "ff-run", NULL, ENGINE, "Capture perf events using 'perf record'" },
	{ "c2c", "ff-run", NULL, ENGINE, "Capture perf events using 'perf c2c'" },
	{ "mem", "ff-run", NULL, ENGINE, "Capture perf events using 'perf mem'" },
	{ "flamegraph", "ff-run", NULL, ENGINE, "Generate a flamegraph" },
	{ "offcpu", "ff-run", NULL, ENGINE,
	  "Generate a flamegraph of where the relays wait (off-CPU time)" },
	{ "lock", "ff-run", NULL, ENGINE,
	  "Capture the relays' contended kernel locks using 'perf lock'" },
	{ "bench", "ff-bench", NULL, 0,
	  "Run each workload on each relay and summarize the results" },
	{ "compare", "ff-bench", "compare", 0, "Compare two results files from bench" },
	{ "explain", "ff-bench", "explain", 0,
	  "Which functions changed between two builds' recordings, beyond noise" },
	{ "report", "ff-bench", "report", 0, "Write an HTML page of results files from bench" },
	{ "history", "ff-history", NULL, 0,
	  "Keep bench results over time and find their change points" },
	{ "bisect", "ff-bisect", NULL, 0,
	  "Find the commit that changed a relay's cost (git bisect)" },
};

static const char usage[] =
	"usage: flimflam [--verbose] [--quiet] [--debug] [-h] {command} ...\n"
	"\n"
	"A tool for examining Skupper router performance\n"
	"\n"
	"options:\n"
	"  --verbose   Print detailed logging to the console\n"
	"  --quiet     Print no logging to the console\n"
	"  --debug     Print debugging output to the console\n"
	"  -h, --help  Show this help message and exit\n"
	"  --version   Show the version and exit\n"
	"\n"
	"commands:\n"
	"  {command}\n";

noreturn static void
top_usage(int code)
{
	FILE *f = code ? stderr : stdout;
	size_t i;

	fputs(usage, f);
	for (i = 0; i < FF_ARRAY_SIZE(cmds); i++)
		fprintf(f, "    %-10s%s%s\n", cmds[i].name,
			strlen(cmds[i].name) >= 10 ? "\n              " : "", cmds[i].help);
	exit(ff_finish() ? 1 : code);
}

/* Does the command line name --hosts (check's own case)? */
static int
has_hosts(int argc, char *argv[])
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--hosts") || !strncmp(argv[i], "--hosts=", 8))
			return 1;
	return 0;
}

/*
 * Exec the command's program: argv[0] the command's name as the user
 * called it ("flimflam bench"; the engine's "flimflam", its command next),
 * then its mode, then the command's arguments (argv[1] ...).
 */
noreturn static void
exec_cmd(const struct cmd *c, int argc, char *argv[])
{
	int engine = (c->traits & ENGINE) || ((c->traits & HOSTS_ENGINE) && has_hosts(argc, argv));
	const char *prog = engine ? "ff-run" : c->prog;
	char **args = calloc(argc + 3, sizeof(*args)), *path = ff_program(prog);
	int i, n = 0;

	if (!args)
		ff_die("out of memory");
	if (!path) {
		ff_warn("'%s' needs %s, which is not installed beside flimflam nor on PATH",
			c->name, prog);
		exit(127);
	}
	/* Named as the user called it: its messages and usage say so. */
	args[n++] = engine ? "flimflam" : ff_asprintf("flimflam %s", c->name);
	if (engine)
		args[n++] = (char *)c->name;
	else if (c->mode)
		args[n++] = (char *)c->mode;
	for (i = 1; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	execv(path, args);
	ff_warn("cannot run '%s': %s", path, strerror(errno));
	exit(errno == ENOENT ? 127 : 126);
}

/* The global options, up to the command; its index in argv. */
static int
global_options(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "debug", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	opterr = 0;
	while ((ch = ff_getopt(argc, argv, "+:h", longopts, usage)) != -1)
		switch (ch) {
		case 'h':
			top_usage(0);
		case 'v':
			ff_verbosity = ff_verbosity > 1 ? ff_verbosity : 1;
			break;
		case 'q':
			ff_verbosity = -1;
			break;
		case 'd':
			ff_verbosity = 2;
			break;
		}
	if (optind >= argc) {
		ff_warn("expected a command");
		top_usage(2);
	}
	return optind;
}

int
main(int argc, char *argv[])
{
	const struct cmd *c = NULL;
	char level[8];
	size_t i;
	int at;

	ff_setprog(argv[0]);
	at = global_options(argc, argv);
	if (!strcmp(argv[at], "help")) {
		/* help CMD is CMD -h */
		static char h[] = "-h";

		if (at + 1 >= argc)
			top_usage(0);
		if (at + 2 < argc) {
			ff_warn("unexpected argument '%s'; 'help' takes one command", argv[at + 2]);
			exit(2);
		}
		at++;
		argv[at + 1] = h;
		argc = at + 2;
	}
	for (i = 0; i < FF_ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[at], cmds[i].name))
			c = &cmds[i];
	if (!c) {
		ff_warn("'%s' is not a flimflam command; see 'flimflam --help'", argv[at]);
		exit(2);
	}
	snprintf(level, sizeof(level), "%d", ff_verbosity);
	setenv("FLIMFLAM_VERBOSITY", level, 1);
	exec_cmd(c, argc - at, argv + at);
}
