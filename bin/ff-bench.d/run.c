/*
 * One run of a bench case: the engine, `ff-run run --json`, as a child, its
 * events read as they come, its progress shown, and its record made. Why a
 * run failed is its first `error` event (each stage that fails says why in
 * one; ff-run words a stage that ended without one), else its exit status.
 */
#include "ff-bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

static double overhead_s = 2.0;	/* start and stop around the window, learnt as we go */
static int overhead_n;

/* Progress */

static void
live(const char *fmt, ...)
{
	char line[512];
	struct winsize ws;
	int n, width = 80;
	va_list ap;

	if (!progress_tty)
		return;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		width = ws.ws_col;
	memcpy(line, "\r\033[K", 4);
	va_start(ap, fmt);
	n = vsnprintf(line + 4, sizeof(line) - 4, fmt, ap);
	va_end(ap);
	if (n > width - 1)
		n = width - 1;
	if (n > (int)sizeof(line) - 5)
		n = sizeof(line) - 5;
	if (n < 0)
		n = 0;
	if (write(2, line, 4 + n) < 0) {
		/* nowhere to show it */
	}
}

static void
live_clear(void)
{
	if (progress_tty && write(2, "\r\033[K", 4) < 0) {
		/* nowhere to show it */
	}
}

const char *
clock_str(double s)
{
	static char buf[32];
	long t = s < 0 ? 0 : (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, sizeof(buf), "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, sizeof(buf), "%ld:%02ld", t / 60, t % 60);
	return buf;
}

/* How many runs of a round run at once: a case's builds with --together, else one. */
int
runs_at_once(void)
{
	return opt.together ? opt.nbuild : 1;
}

/* The bench's time a run takes: its own, or with --together its share of its round's. */
double
run_estimate(void)
{
	return (opt.run.warmup + opt.run.duration + overhead_s) / runs_at_once();
}

/* A run's stderr: whole up to 1 MiB, else its first half MiB and its newest. */
#define ERR_MAX (1 << 20)

struct errbuf {
	char *text;
	size_t len, cap;
	int eof;
};

static void
errbuf_read(struct errbuf *e, int fd)
{
	char buf[65536];
	ssize_t r = read(fd, buf, sizeof(buf));
	size_t keep;

	if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
		e->eof = 1;
	if (r <= 0)
		return;
	while (e->len + r + 1 > e->cap && e->cap < ERR_MAX) {
		e->cap = e->cap ? 2 * e->cap : 8192;
		e->text = ff_realloc(e->text, e->cap);
	}
	if (e->len + r + 1 > e->cap) {
		keep = e->cap / 2 - r - 1;
		memmove(e->text + e->cap / 2, e->text + e->len - keep, keep);
		e->len = e->cap / 2 + keep;
	}
	memcpy(e->text + e->len, buf, r);
	e->len += r;
	e->text[e->len] = 0;
}

/* The last `lines` lines of s. */
static const char *
tail_lines(const char *s, size_t len, int lines)
{
	const char *p = s + len;

	while (p > s && p[-1] == '\n')
		p--;
	while (p > s && !(p[-1] == '\n' && --lines == 0))
		p--;
	return p;
}

enum phase { STARTING, WARMUP, MEASURING, STOPPING };
static const char *const phase_names[] = { "starting", "warming up", "measuring", "stopping" };

/* One run in progress: its child, its pipes, and what its events said. */
struct crun {
	const struct bcase *c;
	char caseid[128], started[32], run_dir[PATH_MAX], reasonbuf[512];
	char scratch[PATH_MAX];	/* bench --record: where it starts (record.c) */
	struct ff_child child;
	struct ff_reader rd;
	int fds[2], efds[2];	/* its events (stdout), its stderr */
	json_t *result, *resources, *topology, *environment, *errors, *capture;
	enum phase phase;
	struct errbuf err;
	double t0, t_phase, deadline, elapsed;
	int sig, timed_out, done;
};

static void
crun_free(struct crun *cr)
{
	free(cr->err.text);
	json_decref(cr->result);
	json_decref(cr->resources);
	json_decref(cr->topology);
	json_decref(cr->environment);
	json_decref(cr->errors);
	json_decref(cr->capture);
	record_discard(cr->scratch);
}

void
case_args(struct ff_argv *a, const struct bcase *c)
{
	struct ff_run_opts run;

	case_run_opts(c, &run);
	ff_argv_addl(a, opt.record ? "record" : "run", "--json", "-w", c->workload, "-r", c->relay,
		     "-p", c->protocol, NULL);
	if (c->hops != ff_relay_hops(c->relay))
		ff_argv_addf(a, "--hops=%ld", c->hops);
	{
		/* The sizes are the request/response workloads', --rate the open-loop ones'. */
		struct ff_run_opts d = FF_RUN_OPTS_DEFAULTS;

		if (!ff_workload_is_rr(c->workload)) {
			run.request_size = d.request_size;
			run.response_size = d.response_size;
		}
		if (!ff_workload_takes_rate(c->workload))
			run.rate = d.rate;
	}
	ff_argv_run_opts(a, &run, 1);
	if (c->build >= 0)
		ff_build_argv(a, &opt.builds[c->build]);
	if (opt.tls)
		ff_argv_add(a, "--tls");
	if (opt.relay_cmd && ff_relay_has(c->relay, FF_RELAY_COMMAND))
		ff_argv_addl(a, "--relay-cmd", opt.relay_cmd, NULL);
}

/*
 * Start `ff-run run --json`: 0, or -1 when it cannot start (its pipes
 * closed).
 */
static int
crun_start(struct crun *cr)
{
	const struct bcase *c = cr->c;
	struct ff_argv argv = FF_ARGV_INIT;
	char errpath[64];
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	int st;

	if (pipe2(cr->fds, O_CLOEXEC) < 0 || pipe2(cr->efds, O_CLOEXEC) < 0)
		ff_die("cannot create a pipe: %s", strerror(errno));
	/*
	 * stdout: the events. stderr: a pipe too, kept in memory and written
	 * into the run's directory at the end. ff_spawn opens `log` in the
	 * child before exec, where /proc/self/fd/N is still our pipe.
	 */
	snprintf(errpath, sizeof(errpath), "/proc/self/fd/%d", cr->efds[1]);
	o.out_fd = cr->fds[1];
	o.log = errpath;
	record_start(cr->scratch, sizeof(cr->scratch));
	o.dir = cr->scratch[0] ? cr->scratch : NULL;
	ff_argv_add(&argv, engine);
	case_args(&argv, c);
	cr->t0 = cr->t_phase = ff_now();
	st = ff_spawn(&cr->child, "ff-run", argv.v, &o);
	ff_argv_free(&argv);
	if (st < 0) {
		close(cr->fds[0]);
		close(cr->fds[1]);
		close(cr->efds[0]);
		close(cr->efds[1]);
		return -1;
	}
	close(cr->fds[1]);
	close(cr->efds[1]);
	cr->rd = (struct ff_reader)FF_READER_INIT(cr->fds[0], "ff-run");
	/* A run that hangs is stopped: its window plus two minutes is plenty. */
	cr->deadline = cr->t0 + opt.run.warmup + opt.run.duration + 120;
	return 0;
}

/* Keep a run event's object, replacing the one before. */
static void
keep_event(json_t **slot, json_t *ev)
{
	json_decref(*slot);
	*slot = json_incref(ev);
}

/* One event of the run: its directory, its phase, what the record keeps. */
static void
crun_event(struct crun *cr, json_t *ev, double now)
{
	const char *name = ff_event_name(ev);

	if (json_is_string(json_object_get(ev, "run_dir")) && !cr->run_dir[0]) {
		char *dir = ff_json_path_value(json_object_get(ev, "run_dir"));

		snprintf(cr->run_dir, sizeof(cr->run_dir), "%s", dir);
		hold_run_dir(dir);	/* while the run holds it too */
		free(dir);
	}
	if (!strcmp(name, "topology")) {
		cr->phase = WARMUP;
		cr->t_phase = now;
		keep_event(&cr->topology, ev);
	} else if (!strcmp(name, "window")) {
		cr->phase = MEASURING;
		cr->t_phase = now;
	} else if (!strcmp(name, "result")) {
		cr->phase = STOPPING;
		keep_event(&cr->result, ev);
	} else if (!strcmp(name, "resources")) {
		keep_event(&cr->resources, ev);
	} else if (!strcmp(name, "environment")) {
		keep_event(&cr->environment, ev);
	} else if (!strcmp(name, "capture")) {
		keep_event(&cr->capture, ev);
	} else if (!strcmp(name, "error")) {
		snprintf(cr->reasonbuf, sizeof(cr->reasonbuf), "%s: %s",
			 ff_json_str_or(ev, "program", "ff-run"), ff_json_str_or(ev, "message", "error"));
		json_array_append_new(cr->errors, ff_json_text(cr->reasonbuf));
	}
}

/*
 * The progress line: the bench's ETA first (a narrow terminal cuts the
 * end), then the run, its phase and the seconds left in that phase.
 */
static void
crun_progress(const struct crun *cr, double now, int k, int n)
{
	double in_phase = cr->phase == WARMUP ? opt.run.warmup - (now - cr->t_phase) :
			  cr->phase == MEASURING ? opt.run.duration - (now - cr->t_phase) : 0;
	double left = cr->phase == STARTING ? opt.run.warmup + opt.run.duration :
		      cr->phase == WARMUP ? in_phase + opt.run.duration : in_phase;
	char phase[64];

	if (in_phase < 0)
		in_phase = 0;
	if (left < 0)
		left = 0;
	if (cr->sig || (cr->phase != WARMUP && cr->phase != MEASURING))
		snprintf(phase, sizeof(phase), "%s", cr->sig ? "stopping" : phase_names[cr->phase]);
	else
		snprintf(phase, sizeof(phase), "%s, %.0f s left", phase_names[cr->phase], in_phase);
	/* caseid begins with our name: it goes first, before the ETA */
	live("%s: ETA %s | %s: %s", ff_prog(), clock_str(left + (cr->phase == STOPPING ? 0.5 :
	     overhead_s / 2) + (n - k) * run_estimate()), cr->caseid + strlen(ff_prog()) + 2, phase);
}

/* Stop a run as for a signal: sig passed on, 15 s to go. */
static void
crun_stop(struct crun *cr, int sig, double now)
{
	if (cr->sig || cr->done)
		return;
	cr->sig = sig;
	kill(cr->child.pid, sig);
	cr->deadline = now + 15;
}

/*
 * Until the events of every run given end (one, or a round's builds at
 * once with --together): their stderr kept, a signal passed on, a run
 * past its deadline stopped, their events taken, the first's progress shown.
 */
static void
crun_watch(struct crun *crs, int ncr, int k, int n)
{
	struct pollfd pfd[2 + 2 * BENCH_BUILDS_MAX];
	struct crun *cr;
	json_t *ev;
	double now;
	int left = 0, i;

	for (i = 0; i < ncr; i++)
		left += !crs[i].done;	/* -1: never started */
	while (left) {
		/* events 0 on stdout: POLLERR when its reader is gone. */
		pfd[0] = (struct pollfd){ ff_signal_fd(), POLLIN, 0 };
		pfd[1] = (struct pollfd){ 1, 0, 0 };
		for (i = 0; i < ncr; i++) {
			pfd[2 + 2 * i] = (struct pollfd){ crs[i].done ? -1 : crs[i].fds[0], POLLIN, 0 };
			pfd[3 + 2 * i] = (struct pollfd){ crs[i].err.eof ? -1 : crs[i].efds[0], POLLIN, 0 };
		}
		poll(pfd, 2 + 2 * ncr, progress_tty ? 250 : 1000);
		/* Taken: a signal's byte left in the pipe would wake every poll at once while the run stops. */
		ff_signal_drain();
		now = ff_now();
		for (i = 0; i < ncr; i++) {
			cr = &crs[i];
			if (pfd[3 + 2 * i].revents)
				errbuf_read(&cr->err, cr->efds[0]);
			if (cr->done)
				continue;
			/* No one reads the table: stop the run as for Ctrl-C, then the bench. */
			if (pfd[1].revents & (POLLERR | POLLHUP)) {
				output_gone = 1;
				crun_stop(cr, SIGTERM, now);
			}
			/* ff-run stops its pipeline in order and exits 128+n. */
			if (ff_signalled())
				crun_stop(cr, ff_signalled(), now);
			if (now > cr->deadline) {
				if (cr->sig || cr->timed_out) {
					ff_child_stop(&cr->child, 1);
					cr->done = 1;
					left--;
					continue;
				}
				cr->timed_out = 1;
				kill(cr->child.pid, SIGTERM);
				cr->deadline = now + 15;
			}
			if (pfd[2 + 2 * i].revents) {
				ssize_t r = ff_reader_fill(&cr->rd);

				while ((ev = ff_reader_next(&cr->rd))) {
					crun_event(cr, ev, now);
					json_decref(ev);
				}
				if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
					cr->done = 1;
					left--;
				}
			}
		}
		crun_progress(&crs[0], now, k, n);
	}
}

/* The run's end: its child waited for, the rest of its stderr read. */
static void
crun_end(struct crun *cr)
{
	double now;

	close(cr->fds[0]);
	ff_reader_free(&cr->rd);
	if (!ff_child_wait(&cr->child, 15))
		ff_child_stop(&cr->child, 1);
	cr->elapsed = ff_now() - cr->t0;
	/* The rest of stderr; a straggler holding the pipe gets 2 s. */
	for (now = ff_now(); !cr->err.eof && ff_now() - now < 2;) {
		struct pollfd pfd = { cr->efds[0], POLLIN, 0 };

		if (poll(&pfd, 1, 200) > 0)
			errbuf_read(&cr->err, cr->efds[0]);
	}
	close(cr->efds[0]);
	live_clear();
}

/* Why a run failed, in cr->reasonbuf. */
static char *
crun_reason(struct crun *cr)
{
	const struct ff_child *child = &cr->child;

	if (cr->timed_out)
		snprintf(cr->reasonbuf, sizeof(cr->reasonbuf), "no end after %.0f s; stopped", cr->elapsed);
	else if (json_array_size(cr->errors))
		snprintf(cr->reasonbuf, sizeof(cr->reasonbuf), "%s",
			 json_string_value(json_array_get(cr->errors, 0)));
	else if (WIFEXITED(child->status) && WEXITSTATUS(child->status) == 0)
		snprintf(cr->reasonbuf, sizeof(cr->reasonbuf), "the run gave no result");
	else
		snprintf(cr->reasonbuf, sizeof(cr->reasonbuf), "ff-run %s", ff_child_how(child));
	return cr->reasonbuf;
}

/* An event's object as a field of the record (its "event" name left out), or null. */
static json_t *
event_field(json_t *ev)
{
	if (!ev)
		return json_null();
	json_object_del(ev, "event");
	return ev;
}

/* The run's record; its stderr goes into its run directory. Takes cr's objects. */
static json_t *
crun_record(struct crun *cr, int repeat, int ok, const char *reason)
{
	char logpath[PATH_MAX + 32] = "";
	json_t *rec = new_record(cr->c, ok ? "ok" : "failed", reason, repeat, cr->started);

	json_object_set_new(rec, "elapsed_s", json_real(cr->elapsed));
	json_object_set_new(rec, "exit_status", WIFEXITED(cr->child.status) ?
			    json_integer(WEXITSTATUS(cr->child.status)) : json_null());
	json_object_set_new(rec, "run_dir", cr->run_dir[0] ? ff_json_path(cr->run_dir) : json_null());
	if (cr->run_dir[0] && cr->err.len) {
		snprintf(logpath, sizeof(logpath), "%s/flimflam-run.log", cr->run_dir);
		if (access(cr->run_dir, W_OK) < 0 || ff_write_file(logpath, cr->err.text, 0600) < 0)
			logpath[0] = 0;
	}
	json_object_set_new(rec, "log", logpath[0] ? ff_json_path(logpath) : json_null());
	json_object_set_new(rec, "stderr_tail", !ok && cr->err.len ?
			    ff_json_text(tail_lines(cr->err.text, cr->err.len, 20)) : json_null());
	/* The window's time series: the row's own, out of its result. */
	json_object_set(rec, "intervals", json_object_get(cr->result, "intervals") ?
			json_object_get(cr->result, "intervals") : json_null());
	json_object_set(rec, "steadiness", json_object_get(cr->result, "steadiness") ?
			json_object_get(cr->result, "steadiness") : json_null());
	json_object_del(cr->result, "intervals");
	json_object_del(cr->result, "steadiness");
	json_object_set_new(rec, "result", event_field(cr->result));
	json_object_set_new(rec, "resources", event_field(cr->resources));
	/* The build as the run started it: with the Proton library it loaded. */
	if (json_is_object(json_object_get(cr->topology, "build"))) {
		json_t *b = json_deep_copy(json_object_get(cr->topology, "build")),
		       *order = json_object_get(json_object_get(rec, "build"), "order");

		if (order)
			json_object_set(b, "order", order);
		json_object_set_new(rec, "build", b);
	}
	json_object_set_new(rec, "topology", event_field(cr->topology));
	json_object_set_new(rec, "capture", json_null());
	json_object_set_new(rec, "environment", cr->environment ?
			    event_field(cr->environment) : json_incref(bench_env));
	json_object_set_new(rec, "errors", cr->errors);
	cr->result = cr->resources = cr->topology = cr->environment = cr->errors = NULL;
	return rec;
}

/* What stalled TCP on the relays' host in the window, in words: ", TCP stalled: ...", or "". */
static void
stalls_said(const json_t *tcp, char *buf, size_t n)
{
	static const struct {
		const char *key, *one, *many;
	} what[] = {
		{ "timeouts", "retransmission timeout", "retransmission timeouts" },
		{ "zero_window_probes", "zero-window probe", "zero-window probes" },
		{ "memory_pressures", "time under memory pressure", "times under memory pressure" },
	};
	size_t i, len;
	double v;

	buf[0] = 0;
	for (i = 0; i < FF_ARRAY_SIZE(what); i++) {
		v = ff_json_num(tcp, what[i].key, 0);
		if (v <= 0)
			continue;
		len = strlen(buf);
		snprintf(buf + len, n - len, "%s%.0f %s", len ? ", " : ", TCP stalled: ", v,
			 v == 1 ? what[i].one : what[i].many);
	}
}

/*
 * The run's line: its figures (and whether its window was steady, TCP
 * stalled, the machine was shared), or why it failed.
 */
static void
crun_say(const struct crun *cr, const json_t *result, const json_t *steadiness,
	 const json_t *rsc, int ok, const char *reason)
{
	char bits[64] = "-", ops[64] = "", stalls[160], why[160];
	const json_t *tcp = json_object_get(rsc, "tcp");
	double v;

	if (ok) {
		if (num(result, "bits_per_s", &v))
			fmt_si(v, bits, sizeof(bits));
		if (num(result, "ops_per_s", &v)) {
			snprintf(ops, sizeof(ops), ", ");
			fmt_si(v, ops + 2, sizeof(ops) - 2);
			strcat(ops, " ops/s");
		}
		stalls_said(tcp, stalls, sizeof(stalls));
		ff_say("%s: %s bits/s%s%s%s%s (%.1f s)\n", cr->caseid, bits, ops,
		       json_is_false(json_object_get(steadiness, "steady")) ? ", not steady" : "",
		       stalls, ff_machine_shared(rsc, why, sizeof(why)) ? ", machine shared" : "",
		       cr->elapsed);
	} else if (cr->run_dir[0] && !strstr(reason, cr->run_dir))
		ff_say("%s: failed: %s (run directory %s)\n", cr->caseid, reason, cr->run_dir);
	else
		ff_say("%s: failed: %s\n", cr->caseid, reason);
}

/* The record of an ended run, said in its line. */
static json_t *
crun_finish(struct crun *cr, int repeat)
{
	const char *reason = NULL;
	json_t *rec, *capture = NULL;
	int ok;

	ok = !cr->timed_out && WIFEXITED(cr->child.status) && WEXITSTATUS(cr->child.status) == 0 &&
	     cr->result;
	if ((reason = record_finish(cr->scratch, cr->run_dir, cr->capture, ok, &capture)))
		ok = 0;
	else if (!ok)
		reason = crun_reason(cr);
	else {
		overhead_s = (overhead_s * overhead_n + (cr->elapsed - opt.run.warmup - opt.run.duration)) /
			     (overhead_n + 1);
		overhead_n++;
	}
	rec = crun_record(cr, repeat, ok, reason);
	if (capture)
		json_object_set_new(rec, "capture", capture);
	crun_free(cr);
	crun_say(cr, json_object_get(rec, "result"), json_object_get(rec, "steadiness"),
		 json_object_get(rec, "resources"), ok, reason);
	return rec;
}

/* Append to the case's id (what its lines begin with). */
static void __attribute__((format(printf, 2, 3)))
caseid_add(struct crun *cr, const char *fmt, ...)
{
	size_t len = strlen(cr->caseid);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cr->caseid + len, sizeof(cr->caseid) - len, fmt, ap);
	va_end(ap);
}

/* The case's id past its workload, relay and protocol: the jobs, workers and rate swept, its build. */
static void
caseid_case(struct crun *cr, const struct bcase *c)
{
	if (opt.nsweep[SW_JOBS] > 1)
		caseid_add(cr, " jobs=%ld", c->jobs);
	if (c->workers && opt.nsweep[SW_WORKERS] > 1)
		caseid_add(cr, " workers=%ld", c->workers);
	if (ff_workload_takes_rate(c->workload) && c->rate && (opt.slo_pct || opt.nsweep[SW_RATE] > 1))
		caseid_add(cr, " rate=%ld", c->rate);
	if (c->build >= 0)
		caseid_add(cr, " build %s", opt.builds[c->build].label);
}

/* A run's line starts with its case's id: [k/n], the case, its build and round. */
static void
crun_init(struct crun *cr, const struct bcase *c, int repeat, int k, int n)
{
	memset(cr, 0, sizeof(*cr));
	cr->c = c;
	cr->phase = STARTING;
	cr->errors = json_array();
	snprintf(cr->caseid, sizeof(cr->caseid), "%s: [%d/%d] %s %s %s%s%s", ff_prog(), k, n,
		 c->workload, c->relay, c->protocol, hops_label(c->relay, c->hops),
		 opt.tls ? " tls" : "");
	caseid_case(cr, c);
	if (auto_on())
		caseid_add(cr, " (round %d)", repeat);
	else if (opt.repeat > 1)
		caseid_add(cr, " (run %d of %ld)", repeat, opt.repeat);
	snprintf(cr->started, sizeof(cr->started), "%s", ff_iso_time());
}

/* Leave the other runs of the round out of a run's topology.cpus_other_runs (null when none is left). */
static void
together_pins(struct crun *crs, int ncr, int i)
{
	json_t *list = json_object_get(crs[i].topology, "cpus_other_runs"), *keep, *o;
	size_t k;
	int j, twin;

	if (!json_is_array(list))
		return;
	keep = json_array();
	json_array_foreach(list, k, o) {
		for (j = 0, twin = 0; j < ncr && !twin; j++)
			twin = j != i && json_is_integer(json_object_get(crs[j].topology, "pid")) &&
			       json_integer_value(json_object_get(o, "pid")) ==
			       json_integer_value(json_object_get(crs[j].topology, "pid"));
		if (!twin)
			json_array_append(keep, o);
	}
	json_object_set_new(crs[i].topology, "cpus_other_runs", json_array_size(keep) ? keep : json_null());
	if (!json_array_size(keep))
		json_decref(keep);
}

/*
 * --together: the other runs of a run's round ran beside it by design.
 * Its machine gets the CPU they took (their run_cpu_s), together_cpu_s,
 * which the table and compare leave out of its other processes; their
 * relays' CPUs are left out of its topology's cpus_other_runs.
 */
static void
together_rows(struct crun *crs, int ncr)
{
	int i, j;

	if (ncr < 2)
		return;
	for (i = 0; i < ncr; i++) {
		json_t *m = json_object_get(crs[i].resources, "machine");
		double sum = 0;
		int known = json_is_object(m);

		together_pins(crs, ncr, i);
		for (j = 0; j < ncr && known; j++) {
			json_t *v = json_object_get(json_object_get(crs[j].resources, "machine"), "run_cpu_s");

			if (j != i)
				known = json_is_number(v), sum += json_number_value(v);
		}
		if (known)
			json_object_set_new(m, "together_cpu_s", json_real(round(sum * 1e4) / 1e4));
	}
}

/*
 * Runs of cases, `ff-run run --json` each as a child, their events read
 * as they come: one, or with --together a round's builds of one case, all
 * started at once, each the other's only company. Their records into
 * recs[]; returns how many, or -1 when a signal stopped them.
 */
int
run_cases(const struct bcase *const *cs, int ncs, int repeat, int k, int n, json_t **recs)
{
	struct crun crs[BENCH_BUILDS_MAX];
	int i;

	for (i = 0; i < ncs; i++)
		crun_init(&crs[i], cs[i], repeat, k + i, n);
	for (i = 0; i < ncs; i++)
		if (crun_start(&crs[i]) < 0) {
			recs[i] = new_record(cs[i], "failed", "cannot start ff-run", repeat, crs[i].started);
			json_object_set_new(recs[i], "run_dir", json_null());
			crs[i].done = -1;
		}
	crun_watch(crs, ncs, k, n);	/* the ones that started */
	for (i = 0; i < ncs; i++)
		if (crs[i].done > 0)
			crun_end(&crs[i]);
	for (i = 0; i < ncs && !crs[i].sig; i++)
		;
	if (i < ncs) {
		for (i = 0; i < ncs; i++) {
			crun_free(&crs[i]);
			if (crs[i].done < 0)
				json_decref(recs[i]);
		}
		return -1;
	}
	together_rows(crs, ncs);
	for (i = 0; i < ncs; i++)
		if (crs[i].done > 0)
			recs[i] = crun_finish(&crs[i], repeat);
		else
			crun_free(&crs[i]);
	return ncs;
}

/* One run of a case: its record, or NULL when a signal stopped it. */
json_t *
run_case(const struct bcase *c, int repeat, int k, int n)
{
	json_t *rec;

	return run_cases(&c, 1, repeat, k, n, &rec) < 0 ? NULL : rec;
}

/*
 * A run that GNU parallel ran on `host` (bench --pool): its events in
 * `out`, its stderr in `err`, its exit status and how long it took, made
 * into a record as a run here is, with the host it ran on.
 */
json_t *
replay_case(const struct bcase *c, int repeat, const char *host, const char *out,
	    const char *err, int exit_status, double elapsed)
{
	struct crun cr = { .c = c, .phase = STARTING };
	size_t len = 0;
	json_t *ev, *rec;
	ssize_t r;

	cr.errors = json_array();
	snprintf(cr.caseid, sizeof(cr.caseid), "%s: %s %s %s%s", ff_prog(),
		 c->workload, c->relay, c->protocol, hops_label(c->relay, c->hops));
	caseid_case(&cr, c);
	caseid_add(&cr, " on %s", host);
	if (opt.repeat > 1)
		caseid_add(&cr, " (run %d of %ld)", repeat, opt.repeat);
	snprintf(cr.started, sizeof(cr.started), "%s", ff_iso_time());
	cr.fds[0] = open(out, O_RDONLY | O_CLOEXEC);
	if (cr.fds[0] >= 0) {
		cr.rd = (struct ff_reader)FF_READER_INIT(cr.fds[0], "ff-run");
		do {
			r = ff_reader_fill(&cr.rd);
			while ((ev = ff_reader_next(&cr.rd))) {
				crun_event(&cr, ev, ff_now());
				if (!strcmp(ff_event_name(ev), "start") && ff_json_str(ev, "time") &&
				    !strcmp(ff_json_str(ev, "tool"), "ff-workload"))
					snprintf(cr.started, sizeof(cr.started), "%s", ff_json_str(ev, "time"));
				json_decref(ev);
			}
		} while (r > 0);
		ff_reader_free(&cr.rd);
		close(cr.fds[0]);
	}
	cr.err.text = ff_read_file(err, &len);
	cr.err.len = cr.err.text ? len : 0;
	/* 255 is ssh's (ff-run has no such status): where no error event said why, ssh's last line does. */
	if (exit_status == 255 && !json_array_size(cr.errors) && cr.err.text && last_line(cr.err.text))
		json_array_append_new(cr.errors, json_sprintf("cannot reach %s over ssh: %s", host,
							      last_line(cr.err.text)));
	cr.child.status = exit_status >= 0 ? (exit_status & 0xff) << 8 : 1 << 8;
	cr.child.exited = 1;
	cr.elapsed = elapsed;
	/* Its run directory is on that host: the record names it, nothing is written there. */
	rec = crun_finish(&cr, repeat);
	json_object_set_new(rec, "host", json_string(host));
	return rec;
}
