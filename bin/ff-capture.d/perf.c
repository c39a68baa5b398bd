/*
 * ff-capture: starting perf at the window's start (its events on through a
 * control fifo), watching it, finishing it; perf.data; the pids.
 */
#include "ff-capture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct ff_child perf;
struct ff_out data_out;
char data[PATH_MAX + 16];
const char *sample_event;
static char perf_log[PATH_MAX + 32];

json_t *
pids_json(const pid_t *pids, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(pids[i]));
	return a;
}

/* "1,2,3" of the pids of every target, or of one (malloc'd). */
static char *
pid_list(const struct target *only)
{
	size_t cap = 16, len = 0;
	char *s = malloc(cap), num[24];
	int i, j;

	s[0] = 0;
	for (i = 0; i < opt.n; i++) {
		if (only && &opt.t[i] != only)
			continue;
		for (j = 0; j < opt.t[i].npids; j++) {
			int k = snprintf(num, sizeof(num), "%s%d", len ? "," : "", (int)opt.t[i].pids[j]);

			if (len + k + 1 > cap) {
				cap = 2 * (len + k + 1);
				s = realloc(s, cap);
				if (!s)
					ff_die("out of memory");
			}
			memcpy(s + len, num, k + 1);
			len += k;
		}
	}
	return s;
}

static json_t *
relays_json(void)
{
	json_t *a = json_array(), *o;
	int i;

	for (i = 0; i < opt.n; i++) {
		o = json_object();
		json_object_set_new(o, "role", json_string(opt.t[i].role));
		json_object_set_new(o, "pid", json_integer(opt.t[i].pid));
		json_object_set_new(o, "pids", pids_json(opt.t[i].pids, opt.t[i].npids));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
all_pids_json(void)
{
	json_t *a = json_array();
	int i, j;

	for (i = 0; i < opt.n; i++)
		for (j = 0; j < opt.t[i].npids; j++)
			json_array_append_new(a, json_integer(opt.t[i].pids[j]));
	return a;
}

/* Starting perf at the window's start */

/*
 * Each perf starts with its events off (-D -1) and a control fifo: we turn
 * them on and wait for its ack, so the window is timed from when perf
 * counts, not from when it was started (on a loaded machine perf takes a
 * second or more to attach, and a short window then had no samples).
 */
#define MAX_PERFS (MAX_TARGETS + 1)
static struct perf_ctl {
	struct ff_child *c;
	int ctl, ack;
	char *ctl_path, *ack_path;
	char arg[2 * PATH_MAX + 16];	/* fifo:CTL,ACK */
} perf_ctls[MAX_PERFS];
static int nperf_ctls;

static struct perf_ctl *
perf_ctl_new(struct ff_child *c, const char *role_file)
{
	struct perf_ctl *pc = &perf_ctls[nperf_ctls++];
	char *ctl = ff_asprintf("%s/%s.ctl", ff_rundir(opt.run_dir), role_file);
	char *ack = ff_asprintf("%s/%s.ack", ff_rundir(opt.run_dir), role_file);

	unlink(ctl);
	unlink(ack);
	/* O_RDWR: a fifo so opened never blocks, whether or not perf has it open. */
	if (mkfifo(ctl, 0600) < 0 || mkfifo(ack, 0600) < 0 ||
	    (pc->ctl = open(ctl, O_RDWR | O_CLOEXEC)) < 0 ||
	    (pc->ack = open(ack, O_RDWR | O_CLOEXEC | O_NONBLOCK)) < 0)
		ff_die_event("cannot make perf's control fifos in '%s': %s", ff_rundir(opt.run_dir),
			     strerror(errno));
	snprintf(pc->arg, sizeof(pc->arg), "fifo:%s,%s", ctl, ack);
	pc->c = c;
	pc->ctl_path = ctl;
	pc->ack_path = ack;
	return pc;
}

/* Turn every perf's events on; return once each has said so. */
void
perfs_enable(void)
{
	double until = ff_now() + 60;
	char buf[64];
	int i, left = nperf_ctls;

	for (i = 0; i < nperf_ctls; i++)
		if (write(perf_ctls[i].ctl, "enable\n", 7) != 7)
			ff_die_event("cannot write to perf's control fifo: %s", strerror(errno));
	while (left > 0) {
		struct pollfd pfd[1 + 2 * MAX_PERFS];
		int n = 0;

		pfd[n++] = (struct pollfd){ ff_signal_fd(), POLLIN, 0 };
		for (i = 0; i < nperf_ctls; i++) {
			pfd[n++] = (struct pollfd){ perf_ctls[i].ack, POLLIN, 0 };
			pfd[n++] = (struct pollfd){ perf_ctls[i].c->pidfd, POLLIN, 0 };
		}
		poll(pfd, n, 200);
		if (ff_signalled())
			ff_exit_signalled();
		for (i = 0; i < nperf_ctls; i++) {
			struct perf_ctl *pc = &perf_ctls[i];

			if (pc->ack >= 0 && read(pc->ack, buf, sizeof(buf)) > 0) {
				close(pc->ack);
				close(pc->ctl);
				pc->ack = pc->ctl = -1;
				/* Opened by perf already: the names are no longer needed. */
				unlink(pc->ctl_path);
				unlink(pc->ack_path);
				free(pc->ctl_path);
				free(pc->ack_path);
				left--;
			} else if (pc->ack >= 0 && ff_child_check(pc->c)) {
				ff_child_report(pc->c);
				ff_die_event("%s ended before it attached (%s)", pc->c->role,
					     ff_child_how(pc->c));
			}
		}
		if (left > 0 && ff_now() > until)
			ff_die_event("perf did not attach to the relays within 60 s");
	}
	nperf_ctls = 0;
}

static void
spawn_perf(struct ff_child *c, const char *role, char **argv, const char *log)
{
	/* perf's numbers without thousands separators, whatever the user's locale. */
	static char lc_all[] = "LC_ALL=C";
	char *env[] = { lc_all, NULL };
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;

	o.log = log;
	o.env = env;
	unlink(log);
	if (ff_spawn(c, role, argv, &o) < 0)
		ff_die_event("cannot start %s", role);
}

static const char stat_events[] =
	"task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,"
	"branches,branch-misses,cache-references,cache-misses";

void
start_stat(struct target *t)
{
	char *pids = pid_list(t), *log = ff_asprintf("%s/%s-perf-stat.log", ff_rundir(opt.run_dir), t->role);
	char *ctl_name = ff_asprintf("%s-perf-stat", t->role);
	struct perf_ctl *pc = perf_ctl_new(&t->perf, ctl_name);
	char *argv[] = { "perf", "stat", "--no-big-num", "-e", (char *)stat_events,
			 "-D", "-1", "--control", pc->arg, "-p", pids, "-o", NULL, NULL };

	free(ctl_name);
	t->stat_file = ff_asprintf("%s/%s-perf-stat.txt", ff_rundir(opt.run_dir), t->role);
	argv[12] = t->stat_file;
	unlink(t->stat_file);
	spawn_perf(&t->perf, "perf stat", argv, log);
	free(pids);
	free(log);
}

void
start_sampling(void)
{
	char *pids = pid_list(NULL), freq[24];
	char *argv[24];
	int n = 0;

	/* perf writes the temporary file; a perf.data device gets a copy. */
	if (ff_out_open(&data_out, data, FF_OUT_DEFER, "*.old", 0600) < 0)
		ff_die_event("%s", data_out.err);
	snprintf(perf_log, sizeof(perf_log), "%s/perf-%s.log", ff_rundir(opt.run_dir), modes[opt.mode]);
	snprintf(freq, sizeof(freq), "%ld", opt.freq);
	argv[n++] = "perf";
	if (opt.mode == OFFCPU) {
		/*
		 * Every switch of the relays' threads (-c 1, not a rate), its
		 * stack where they leave the CPU; the switch records say when
		 * they come back; the wakeups they make (of each other) name
		 * the waker.
		 */
		argv[n++] = "record";
		argv[n++] = "-e";
		argv[n++] = "sched:sched_switch";
		argv[n++] = "-e";
		argv[n++] = "sched:sched_wakeup";
		argv[n++] = "--switch-events";
		argv[n++] = "-c";
		argv[n++] = "1";
	} else if (opt.mode == LOCK) {
		/* perf lock's own events (-c 1) and call chains; the rest as record's. */
		argv[n++] = "lock";
		argv[n++] = "record";
	} else if (opt.mode == RECORD) {
		argv[n++] = "record";
		if (sample_event) {
			argv[n++] = "-e";
			argv[n++] = (char *)sample_event;
		}
	} else {
		/* perf c2c/mem record [their options] -- [perf record's options] */
		argv[n++] = opt.mode == C2C ? "c2c" : "mem";
		argv[n++] = "record";
		argv[n++] = "--";
	}
	argv[n++] = "-D";
	argv[n++] = "-1";
	argv[n++] = "--control";
	argv[n++] = perf_ctl_new(&perf, modes[opt.mode])->arg;
	if (opt.mode != OFFCPU && opt.mode != LOCK) {
		argv[n++] = "-F";
		argv[n++] = freq;
	}
	if (opt.mode != LOCK) {
		argv[n++] = "--call-graph";
		argv[n++] = (char *)opt.call_graph;
	}
	argv[n++] = "-p";
	argv[n++] = pids;
	/* Always a file: perf record writes to stdout when that is a pipe. */
	argv[n++] = "-o";
	argv[n++] = data_out.tmp;
	argv[n] = NULL;
	spawn_perf(&perf, opt.mode == LOCK ? "perf lock" : opt.mode == RECORD || opt.mode == OFFCPU ? "perf record" :
		   opt.mode == C2C ? "perf c2c" : "perf mem",
		   argv, perf_log);
	free(pids);
}

/* A perf that ended before we stopped it failed: say why, with its log. */
static void
check_early_exit(struct ff_child *c)
{
	if (c->pid && !c->live && c->exited) {
		ff_child_report(c);
		ff_die_event("%s ended before the window did (%s)", c->role, ff_child_how(c));
	}
}

void
watch_perfs(void)
{
	int i;

	for (i = 0; i < opt.n; i++)
		if (opt.t[i].perf.pid && ff_child_check(&opt.t[i].perf))
			check_early_exit(&opt.t[i].perf);
	if (perf.pid && ff_child_check(&perf))
		check_early_exit(&perf);
}

void
interrupt(struct ff_child *c)
{
	if (c->pid && !c->exited)
		kill(c->pid, SIGINT);
}

/*
 * Wait for a perf we interrupted to write its data (or for skstat). Up to
 * `timeout` seconds (perf record reads its data back for build ids); a
 * signal stops everything.
 */
void
finish_child(struct ff_child *c, double timeout)
{
	double until = ff_now() + timeout;
	int st;

	while (!ff_child_wait(c, 0.2)) {
		if (ff_signalled())
			ff_exit_signalled();
		if (ff_now() > until) {
			ff_child_stop(c, 1.0);
			ff_die_event("%s did not finish writing within %.0f s; its log: %s", c->role,
			     timeout, c->log);
		}
	}
	st = c->status;
	/* perf ends with 130 (128 + SIGINT) when interrupted, or 0. */
	if ((WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 128 + SIGINT)) ||
	    (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT))
		return;
	ff_child_report(c);
	ff_die_event("%s %s", c->role, ff_child_how(c));
}

/* perf record, c2c, mem: keep the data as perf would */

/* perf's own CPU time at the window's start and end; -1: unread. */
static double perf_cpu[2] = { -1, -1 };

void
perf_cpu_note(int end)
{
	if (perf.pid && perf.live)
		perf_cpu[end] = ff_proc_cpu_s(perf.pid);
}


/* The `capture` event every mode emits: the tool, its files (stolen), the pids. */
json_t *
capture_event(const char *tool, json_t *files)
{
	json_t *ev = ff_event("capture");

	json_object_set_new(ev, "tool", json_string(tool));
	json_object_set_new(ev, "mode", json_string(modes[opt.mode]));
	json_object_set_new(ev, "files", files);
	json_object_set_new(ev, "pids", all_pids_json());
	json_object_set_new(ev, "relays", relays_json());
	return ev;
}

void
collect_sampling(void)
{
	struct stat st;
	json_t *ev, *files;

	finish_child(&perf, 300);
	if (stat(data_out.tmp, &st) < 0 || st.st_size == 0) {
		ff_child_report(&perf);
		ff_die_event("%s wrote no data", perf.role);
	}
	/* As perf does: the previous perf.data becomes perf.data.old. */
	if (ff_out_commit(&data_out) < 0)
		ff_die_event("%s", data_out.err);
	files = json_array();
	json_array_append_new(files, ff_json_path(data));
	ev = capture_event(perf.role, files);
	if (opt.mode == LOCK) {
		json_object_set_new(ev, "perf_event", json_string("lock:contention_begin,lock:contention_end"));
		json_object_set_new(ev, "freq", json_null());
	} else if (opt.mode == OFFCPU) {
		json_object_set_new(ev, "perf_event", json_string("sched:sched_switch,sched:sched_wakeup"));
		json_object_set_new(ev, "freq", json_null());
		json_object_set_new(ev, "perf_cpu_s", perf_cpu[1] >= perf_cpu[0] && perf_cpu[0] >= 0 ?
				    json_real(ff_usec(perf_cpu[1] - perf_cpu[0])) : json_null());
	} else {
		json_object_set_new(ev, "perf_event", sample_event ? json_string(sample_event) : json_null());
		json_object_set_new(ev, "freq", json_integer(opt.freq));
	}
	json_object_set_new(ev, "call_graph", json_string(opt.call_graph));
	json_object_set_new(ev, "log", ff_json_path(perf_log));
	ff_emit(ev);
}

