/*
 * ff-capture - measure the relays during the window.
 *
 * Reads the stream, forwarding every event; takes the relays' pids from
 * `topology`, and on `window` measures them for exactly the window's
 * duration: their CPU time and peak memory (every mode), plus what the
 * mode captures. Emits `resources` (and `capture` for the perf modes),
 * then its own `end` after the upstream's. Alone, --pid and --duration
 * measure any processes, starting at once.
 */
#include "ff.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-capture [--pid PID[,PID...]] [--duration SECONDS] [MODE]\n"
	"\n"
	"Modes: none (default): each relay's CPU and peak memory over the window.\n"
	"Reads the event stream on stdin, unless --pid and --duration are given.\n";

enum { OPT_PID = 256, OPT_DURATION, OPT_RUN_DIR };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ NULL, 0, NULL, 0 }
};

static const char *const modes[] = { "none", NULL };

#define MAX_TARGETS 16

struct target {
	char role[16];
	pid_t pid;
	double cpu0;
};

static struct {
	const char *mode, *run_dir;
	long duration;
	struct target t[MAX_TARGETS];
	int n;
} opt = { "none", NULL, 0, { { { 0 }, 0, 0 } }, 0 };

static void
add_target(const char *role, pid_t pid)
{
	if (opt.n == MAX_TARGETS)
		ff_die("too many processes to measure (at most %d)", MAX_TARGETS);
	snprintf(opt.t[opt.n].role, sizeof(opt.t[opt.n].role), "%s", role);
	opt.t[opt.n++].pid = pid;
}

static void
parse_pids(const char *s)
{
	char *copy = strdup(s), *tok, *save;
	char role[16];

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		snprintf(role, sizeof(role), "p%d", opt.n + 1);
		add_target(role, (pid_t)ff_parse_long(usage, "--pid", tok, 1, 1L << 22));
	}
	free(copy);
}

static void
topology(const json_t *ev)
{
	json_t *relays = json_object_get(ev, "relays"), *r;
	size_t i;

	json_array_foreach(relays, i, r)
		add_target(ff_json_str(r, "role") ? ff_json_str(r, "role") : "relay",
			   (pid_t)ff_json_num(r, "pid", 0));
}

static double window_start;

static void
window_begin(void)
{
	int i;

	window_start = ff_now();
	for (i = 0; i < opt.n; i++) {
		opt.t[i].cpu0 = ff_proc_cpu_s(opt.t[i].pid);
		if (opt.t[i].cpu0 < 0)
			ff_die("%s (pid %d) is gone before the window", opt.t[i].role,
			       (int)opt.t[i].pid);
	}
}

static void
window_end(void)
{
	double window = ff_now() - window_start;
	json_t *ev = ff_event("resources"), *arr = json_array();
	int i;

	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];
		double cpu = ff_proc_cpu_s(t->pid);
		long long rss = ff_proc_hwm_bytes(t->pid);
		json_t *o;

		if (cpu < 0 || rss < 0 || !ff_proc_alive(t->pid)) {
			ff_emit_error("%s (pid %d) died during the window", t->role, (int)t->pid);
			ff_die("%s (pid %d) died during the window", t->role, (int)t->pid);
		}
		o = json_object();
		json_object_set_new(o, "role", json_string(t->role));
		json_object_set_new(o, "pid", json_integer(t->pid));
		json_object_set_new(o, "cpu_s", json_real(cpu - t->cpu0));
		json_object_set_new(o, "cpu_fraction", json_real((cpu - t->cpu0) / window));
		json_object_set_new(o, "max_rss_bytes", json_integer(rss));
		json_array_append_new(arr, o);
	}
	json_object_set_new(ev, "window_s", json_real(window));
	json_object_set_new(ev, "relays", arr);
	ff_emit(ev);
}

/* Wait until `until` (monotonic), forwarding upstream events meanwhile. */
static int
run_stream(void)
{
	struct ff_reader up = FF_READER_INIT(0, "standard input");
	struct pollfd pfd[2];
	double deadline = 0;
	int up_ended = 0, measured = 0, in_window = 0;
	json_t *ev;

	for (;;) {
		int timeout = -1;

		while ((ev = ff_reader_next(&up))) {
			const char *name = ff_event_name(ev);

			if (!strcmp(name, "topology"))
				topology(ev);
			if (!strcmp(name, "window") && !in_window && !measured) {
				double d = opt.duration > 0 ? opt.duration :
					   ff_json_num(ev, "duration_s", 0);

				ff_emit(ev);
				window_begin();
				in_window = 1;
				deadline = window_start + d;
				continue;
			}
			if (!strcmp(name, "end")) {
				up_ended = 1;
				json_decref(ev);
				continue;
			}
			ff_emit(ev);
		}
		if (in_window && ff_now() >= deadline) {
			window_end();
			in_window = 0;
			measured = 1;
		}
		if (up_ended && !in_window)
			break;
		if (up.eof) {
			if (in_window)	/* the pipeline failed mid-window and said why */
				exit(1);
			exit(1);
		}
		if (in_window) {
			double left = deadline - ff_now();

			timeout = left > 0 ? (int)(left * 1000) + 1 : 0;
		}
		pfd[0] = (struct pollfd){ ff_signal_fd(), POLLIN, 0 };
		pfd[1] = (struct pollfd){ up_ended ? -1 : 0, POLLIN, 0 };
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR)
			ff_die("poll: %s", strerror(errno));
		if (ff_signalled())
			ff_exit_signalled();
		if (pfd[1].revents && ff_reader_fill(&up) < 0)
			ff_die("cannot read standard input: %s", strerror(errno));
	}
	if (!measured) {
		ff_emit_error("the stream had no window to measure");
		ff_die("the stream had no window to measure");
	}
	ff_emit_end(0);
	ff_reader_free(&up);
	return 0;
}

static int
run_alone(void)
{
	window_begin();
	if (ff_sleep(opt.duration) < 0)
		ff_exit_signalled();
	window_end();
	ff_emit_end(0);
	return 0;
}

int
main(int argc, char *argv[])
{
	int c, alone;

	ff_setprog(argv[0]);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case OPT_PID:
			parse_pids(optarg);
			break;
		case OPT_DURATION:
			opt.duration = ff_parse_long(usage, "--duration", optarg, 1, 86400);
			break;
		case OPT_RUN_DIR:
			opt.run_dir = optarg;
			break;
		default:
			ff_bad_option(usage, c, argv);
		}
	if (optind < argc)
		opt.mode = modes[ff_parse_name(usage, "mode", argv[optind++], modes)];
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	alone = opt.n > 0;
	if (alone && !opt.duration)
		ff_usage_error(usage, "--pid needs --duration");

	ff_signals_init();
	ff_emit_start();
	return alone ? run_alone() : run_stream();
}
