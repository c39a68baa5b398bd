/*
 * ff-bench - run the relay matrix, keep every result, and tell noise from
 * effect when two sets of results are compared.
 *
 *   ff-bench [options]          runs `ff-run run --json` for each supported
 *                               workload x relay x protocol (x repeat), keeps
 *                               each run as a JSON line, prints the table
 *   ff-bench summarize [FILE]   prints the table again from a results file
 *   ff-bench compare BASE NEW   medians, deltas and a Mann-Whitney U test per
 *                               case and metric
 *   ff-bench report FILE...     one HTML page of results files, with charts
 *
 * `flimflam bench`, `flimflam compare` and `flimflam report` run this.
 *
 * Its files: main.c (the modes, and summarize), bench.c and run.c (the
 * bench), results.c (results files), table.c (the tables), compare.c
 * (compare), stats.c (the statistics), report.c (report); ff-bench.h between
 * them.
 */
#include "ff-bench.h"

#include <unistd.h>

static const char summarize_usage[] =
	"usage: ff-bench summarize [-h] [FILE]\n"
	"\n"
	"Print the table of a bench results file (standard input without FILE or with -)\n"
	"\n"
	"  --version  Show the version and exit\n";

/* ff-bench summarize */

static int
summarize_main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ NULL, 0, NULL, 0 }
	};
	struct results res;
	const char *path = "-";
	int c;

	optind = 1;
	while ((c = ff_getopt(argc, argv, ":h", longopts, summarize_usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(summarize_usage, 0);
		}
	if (argc - optind > 1)
		ff_usage_error(summarize_usage, "unexpected argument '%s'", argv[optind + 1]);
	if (optind < argc)
		path = argv[optind];
	else if (isatty(0))
		ff_usage_error(summarize_usage, "expected a results file (or one on standard input)");
	load_results(path, 1, &res);
	print_env(res.env, progs_for(&res));
	print_results(&res);
	print_steadiness(&res);
	results_free(&res);
	return ff_finish();
}

/*
 * ff-bench MODE, or flimflam's command: "flimflam bench" (then also
 * "flimflam bench compare") or "flimflam compare" in argv[0].
 */
static int
run_mode(int argc, char *argv[], const char *mode, int (*fn)(int, char *[]))
{
	static char prog[64], self[64];

	if (!strcmp(ff_prog(), "flimflam bench")) {
		snprintf(prog, sizeof(prog), "flimflam bench %s", mode);
		ff_setprog(prog);
	}
	snprintf(self, sizeof(self), "ff-bench %s", mode);
	ff_usage_self(self);
	return fn(argc - 1, argv + 1);
}

int
main(int argc, char *argv[])
{
	ff_setprog(argv[0]);
	ff_usage_self("ff-bench");
	opterr = 0;
	if (argc > 1 && !strcmp(argv[1], "summarize"))
		return run_mode(argc, argv, "summarize", summarize_main);
	if (argc > 1 && !strcmp(argv[1], "compare"))
		return run_mode(argc, argv, "compare", compare_main);
	if (argc > 1 && !strcmp(argv[1], "report"))
		return run_mode(argc, argv, "report", report_main);
	if (argc > 1 && !strcmp(argv[1], "explain"))
		return run_mode(argc, argv, "explain", explain_main);
	return bench_main(argc, argv);
}
