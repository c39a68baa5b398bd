/*
 * One run of a bench case: `flimflam run --json` as a child, its events read
 * as they come, its progress shown, and its record made.
 */
#include "ff-bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

static double overhead_s = 2.0;	/* start and stop around the window, learnt as we go */
static int overhead_n;

static json_t *
config_json(const struct bcase *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "workload", json_string(c->workload));
	json_object_set_new(o, "relay", json_string(c->relay));
	json_object_set_new(o, "protocol", json_string(c->protocol));
	json_object_set_new(o, "jobs", json_integer(opt.run.jobs));
	json_object_set_new(o, "warmup_s", json_integer(opt.run.warmup));
	json_object_set_new(o, "duration_s", json_integer(opt.run.duration));
	json_object_set_new(o, "cpu_limit", json_integer(opt.run.cpu_limit));
	return o;
}

json_t *
new_record(const struct bcase *c, const char *status, const char *reason,
	   int repeat, const char *time)
{
	json_t *rec = ff_event("case");

	json_object_set_new(rec, "schema", json_integer(FF_SCHEMA));
	json_object_set_new(rec, "tool", json_string("ff-bench"));
	json_object_set_new(rec, "version", json_string(FF_VERSION));
	json_object_set_new(rec, "time", json_string(time));
	json_object_set_new(rec, "status", json_string(status));
	json_object_set_new(rec, "reason", ff_json_text(reason));
	json_object_set_new(rec, "config", config_json(c));
	json_object_set_new(rec, "repeat", json_integer(repeat));
	json_object_set_new(rec, "repeats", json_integer(opt.repeat));
	return rec;
}

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

double
run_estimate(void)
{
	return opt.run.warmup + opt.run.duration + overhead_s;
}

/* Why a run failed, from its stderr: the last word of a stage, else of flimflam. */
static char *
reason_from_log(const char *err, char *run_dir, size_t n)
{
	char *text = strdup(err), *line, *save = NULL, *stage = NULL, *top = NULL, *p, *q;

	if (!text)
		ff_die("out of memory");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "ff-", 3) && !strstr(line, "retrying"))
			stage = line;
		else if (!strncmp(line, "flimflam: ", 10)) {
			if ((p = strstr(line, "its files are in '")) && (q = strrchr(p + 18, '\'')) && !run_dir[0])
				snprintf(run_dir, n, "%.*s", (int)(q - (p + 18)), p + 18);
			if (!strstr(line, "the run failed"))
				top = line;
		}
	}
	p = stage ? strdup(stage) : top ? strdup(top) : NULL;
	free(text);
	return p;
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
		if (!(e->text = realloc(e->text, e->cap)))
			ff_die("out of memory");
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

/*
 * One run of a case: `flimflam run --json` as a child, its events read as
 * they come. Returns the record, or NULL when a signal stopped it.
 */
json_t *
run_case(const struct bcase *c, int repeat, int k, int n)
{
	char jobs[24], warmup[24], duration[24], cpu[24], errpath[64], logpath[PATH_MAX + 32] = "";
	char started[32], run_dir[PATH_MAX] = "", reasonbuf[512], *reason = NULL, caseid[128];
	char *argv[] = {
		flimflam, "run", "--json", "-w", (char *)c->workload, "-r", (char *)c->relay,
		"-p", (char *)c->protocol, "--jobs", jobs, "--warmup", warmup,
		"--duration", duration, "--cpu-limit", cpu, NULL
	};
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	struct ff_child child;
	struct ff_reader rd;
	json_t *result = NULL, *resources = NULL, *topology = NULL, *environment = NULL;
	json_t *errors = json_array(), *ev, *rec;
	enum phase phase = STARTING;
	struct errbuf err = { NULL, 0, 0, 0 };
	double t0, t_phase, now, deadline, elapsed, left, v;
	int fds[2], efds[2], sig = 0, timed_out = 0, ok;

	snprintf(jobs, sizeof(jobs), "%ld", opt.run.jobs);
	snprintf(warmup, sizeof(warmup), "%ld", opt.run.warmup);
	snprintf(duration, sizeof(duration), "%ld", opt.run.duration);
	snprintf(cpu, sizeof(cpu), "%ld", opt.run.cpu_limit);
	snprintf(caseid, sizeof(caseid), "%s: [%d/%d] %s %s %s", ff_prog(), k, n, c->workload,
		 c->relay, c->protocol);
	if (opt.repeat > 1)
		snprintf(caseid + strlen(caseid), sizeof(caseid) - strlen(caseid),
			 " (run %d of %ld)", repeat, opt.repeat);
	snprintf(started, sizeof(started), "%s", ff_iso_time());
	if (pipe2(fds, O_CLOEXEC) < 0 || pipe2(efds, O_CLOEXEC) < 0)
		ff_die("cannot create a pipe: %s", strerror(errno));
	/*
	 * stdout: the events. stderr: a pipe too, kept in memory and written
	 * into the run's directory at the end. ff_spawn opens `log` in the
	 * child before exec, where /proc/self/fd/N is still our pipe.
	 */
	snprintf(errpath, sizeof(errpath), "/proc/self/fd/%d", efds[1]);
	o.out_fd = fds[1];
	o.log = errpath;
	t0 = t_phase = ff_now();
	if (ff_spawn(&child, "flimflam run", argv, &o) < 0) {
		close(fds[0]);
		close(fds[1]);
		close(efds[0]);
		close(efds[1]);
		rec = new_record(c, "failed", "cannot start flimflam", repeat, started);
		json_object_set_new(rec, "run_dir", json_null());
		json_decref(errors);
		return rec;
	}
	close(fds[1]);
	close(efds[1]);
	rd = (struct ff_reader)FF_READER_INIT(fds[0], "flimflam run");
	/* A run that hangs is stopped: its window plus two minutes is plenty. */
	deadline = t0 + opt.run.warmup + opt.run.duration + 120;
	for (;;) {
		struct pollfd pfd[3] = {
			{ ff_signal_fd(), POLLIN, 0 }, { fds[0], POLLIN, 0 },
			{ err.eof ? -1 : efds[0], POLLIN, 0 }
		};
		ssize_t r;

		poll(pfd, 3, progress_tty ? 250 : 1000);
		if (pfd[2].revents)
			errbuf_read(&err, efds[0]);
		now = ff_now();
		if (ff_signalled() && !sig) {
			/* flimflam stops its pipeline in order and exits 128+n. */
			sig = ff_signalled();
			kill(child.pid, sig);
			deadline = now + 15;
		}
		if (now > deadline) {
			if (sig || timed_out) {
				ff_child_stop(&child, 1);
				break;
			}
			timed_out = 1;
			kill(child.pid, SIGTERM);
			deadline = now + 15;
		}
		if (pfd[1].revents) {
			r = ff_reader_fill(&rd);
			while ((ev = ff_reader_next(&rd))) {
				const char *name = ff_event_name(ev);

				if (json_is_string(json_object_get(ev, "run_dir")) && !run_dir[0]) {
					char *dir = ff_json_path_value(json_object_get(ev, "run_dir"));

					snprintf(run_dir, sizeof(run_dir), "%s", dir);
					free(dir);
				}
				if (!strcmp(name, "topology")) {
					phase = WARMUP;
					t_phase = now;
					json_decref(topology);
					topology = json_incref(ev);
				} else if (!strcmp(name, "window")) {
					phase = MEASURING;
					t_phase = now;
				} else if (!strcmp(name, "result")) {
					phase = STOPPING;
					json_decref(result);
					result = json_incref(ev);
				} else if (!strcmp(name, "resources")) {
					json_decref(resources);
					resources = json_incref(ev);
				} else if (!strcmp(name, "environment")) {
					json_decref(environment);
					environment = json_incref(ev);
				} else if (!strcmp(name, "error")) {
					snprintf(reasonbuf, sizeof(reasonbuf), "%s: %s",
						 ff_json_str(ev, "program") ? ff_json_str(ev, "program") : "flimflam",
						 ff_json_str(ev, "message") ? ff_json_str(ev, "message") : "error");
					json_array_append_new(errors, ff_json_text(reasonbuf));
				}
				json_decref(ev);
			}
			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
				break;
		}
		left = phase == STARTING ? opt.run.warmup + opt.run.duration :
		       phase == WARMUP ? opt.run.warmup - (now - t_phase) + opt.run.duration :
		       phase == MEASURING ? opt.run.duration - (now - t_phase) : 0;
		if (left < 0)
			left = 0;
		live("%s: %s, %.0f s left; bench ETA %s", caseid,
		     sig ? "stopping" : phase_names[phase], left,
		     clock_str(left + (phase == STOPPING ? 0.5 : overhead_s / 2) +
			       (n - k) * run_estimate()));
	}
	close(fds[0]);
	ff_reader_free(&rd);
	if (!ff_child_wait(&child, 15))
		ff_child_stop(&child, 1);
	elapsed = ff_now() - t0;
	/* The rest of stderr; a straggler holding the pipe gets 2 s. */
	for (now = ff_now(); !err.eof && ff_now() - now < 2;) {
		struct pollfd pfd = { efds[0], POLLIN, 0 };

		if (poll(&pfd, 1, 200) > 0)
			errbuf_read(&err, efds[0]);
	}
	close(efds[0]);
	live_clear();
	if (sig) {
		free(err.text);
		json_decref(result);
		json_decref(resources);
		json_decref(topology);
		json_decref(environment);
		json_decref(errors);
		return NULL;
	}

	ok = !timed_out && WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0 && result;
	if (!ok) {
		char *why = reason_from_log(err.text ? err.text : "", run_dir, sizeof(run_dir));

		if (timed_out)
			snprintf(reasonbuf, sizeof(reasonbuf), "no end after %.0f s; stopped", elapsed);
		else if (json_array_size(errors))
			snprintf(reasonbuf, sizeof(reasonbuf), "%s", json_string_value(json_array_get(errors, 0)));
		else if (why)
			snprintf(reasonbuf, sizeof(reasonbuf), "%s", why);
		else if (WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0)
			snprintf(reasonbuf, sizeof(reasonbuf), "the run gave no result");
		else
			snprintf(reasonbuf, sizeof(reasonbuf), "flimflam run %s", ff_child_how(&child));
		free(why);
		reason = reasonbuf;
	} else {
		overhead_s = (overhead_s * overhead_n + (elapsed - opt.run.warmup - opt.run.duration)) / (overhead_n + 1);
		overhead_n++;
	}
	rec = new_record(c, ok ? "ok" : "failed", reason, repeat, started);
	json_object_set_new(rec, "elapsed_s", json_real(elapsed));
	json_object_set_new(rec, "exit_status", WIFEXITED(child.status) ?
			    json_integer(WEXITSTATUS(child.status)) : json_null());
	json_object_set_new(rec, "run_dir", run_dir[0] ? ff_json_path(run_dir) : json_null());
	if (run_dir[0] && err.len) {
		snprintf(logpath, sizeof(logpath), "%s/flimflam-run.log", run_dir);
		if (access(run_dir, W_OK) < 0 || ff_write_file(logpath, err.text, 0600) < 0)
			logpath[0] = 0;
	}
	json_object_set_new(rec, "log", logpath[0] ? ff_json_path(logpath) : json_null());
	json_object_set_new(rec, "stderr_tail", !ok && err.len ?
			    ff_json_text(tail_lines(err.text, err.len, 20)) : json_null());
	free(err.text);
	if (result)
		json_object_del(result, "event");
	if (resources)
		json_object_del(resources, "event");
	if (topology)
		json_object_del(topology, "event");
	if (environment)
		json_object_del(environment, "event");
	json_object_set_new(rec, "result", result ? result : json_null());
	json_object_set_new(rec, "resources", resources ? resources : json_null());
	json_object_set_new(rec, "topology", topology ? topology : json_null());
	json_object_set_new(rec, "capture", json_null());
	json_object_set_new(rec, "environment", environment ? environment : json_incref(bench_env));
	json_object_set_new(rec, "errors", errors);

	if (ok) {
		char bits[64] = "-", ops[64] = "";

		if (num(result, "bits_per_s", &v))
			fmt_si(v, bits, sizeof(bits));
		if (num(result, "ops_per_s", &v)) {
			snprintf(ops, sizeof(ops), ", ");
			fmt_si(v, ops + 2, sizeof(ops) - 2);
			strcat(ops, " ops/s");
		}
		ff_say("%s: %s bits/s%s (%.1f s)\n", caseid, bits, ops, elapsed);
	} else if (run_dir[0] && !strstr(reason, run_dir))
		ff_say("%s: failed: %s (run directory %s)\n", caseid, reason, run_dir);
	else
		ff_say("%s: failed: %s\n", caseid, reason);
	return rec;
}
