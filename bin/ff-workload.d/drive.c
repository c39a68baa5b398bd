/*
 * ff-workload drive: the stream read up to the topology, the client run
 * through the relays and watched to its deadline, the window opened, the
 * upstream's and the client's events forwarded, a failed client named.
 */
#include "ff-workload.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The upstream's events, forwarded; what drive needs is taken on the way. */
static void
forward_upstream(struct drive *d)
{
	json_t *ev;

	while ((ev = ff_stage_next(&stage))) {
		const char *name = ff_event_name(ev);

		if (!strcmp(name, "environment"))
			d->have_environment = 1;
		if (!strcmp(name, "topology") && !d->topology) {
			d->topology = json_incref(ev);
			d->port = (int)ff_json_num(ev, "port", 0);
			d->host = ff_json_str(ev, "host");
		}
		if (!strcmp(name, "server")) {
			if (!d->path)
				d->path = ff_strdup(ff_json_str(ev, "path"));
			d->server_pid = (pid_t)ff_json_num(ev, "pid", 0);
		}
		ff_emit(ev);
	}
}

/*
 * The tools measure their own windows; one that is not the window asked for
 * (beyond 10% and 50 ms: scheduling on a busy machine) describes something
 * else than the relays' window, so the run fails rather than report it.
 */
void
check_window(const char *tool, double seconds, const char *file)
{
	if (fabs(seconds - opt.run.duration) <= 0.1 * opt.run.duration + 0.05)
		return;
	ff_die_event("%s measured %.3f s, not the %ld s asked; see '%s'", tool, seconds,
		     opt.run.duration, file);
}

/*
 * The window's stillest stretch: consecutive intervals in which nothing
 * moved (no byte, no operation), from `still.from` for `still.len` seconds,
 * the longest in `still.worst_*`.
 */
static struct {
	double from, len, worst_from, worst_len;
} still = { -1, 0, 0, 0 };

/* An interval of the window, as the workload measured it (every workload's). */
static void
moving_track(const json_t *iv)
{
	double t = ff_json_num(iv, "t_s", 0), dt = ff_json_num(iv, "dt_s", 0);

	if (ff_json_num(iv, "bytes", 0) > 0 || ff_json_num(iv, "operations", 0) > 0) {
		still.from = -1;
		return;
	}
	if (still.from < 0)
		still.from = t;
	still.len = t + dt - still.from;
	if (still.len > still.worst_len) {
		still.worst_from = still.from;
		still.worst_len = still.len;
	}
}

/*
 * A window in which the workload stopped moving for a second or more (a
 * relay that hung or lost the connection, a server that stopped answering)
 * measured a stall, not the relays: the run fails, saying when.
 */
void
moving_check(void)
{
	if (still.worst_len >= MOVING_STILL_S - 1e-6)
		ff_die_event("the %s workload stopped moving: nothing moved for %.1f s of the window (from %.1f s to %.1f s); a relay or the server stalled or lost its connections",
			     opt.workload, still.worst_len, still.worst_from,
			     still.worst_from + still.worst_len);
}

static void
forward_client(struct drive *d)
{
	json_t *ev;

	while ((ev = ff_reader_next(&d->client_out))) {
		const char *name = ff_event_name(ev);

		if (!strcmp(name, "window"))
			d->window_sent = 1;
		if (!strcmp(name, "interval"))
			moving_track(ev);
		if (!strcmp(name, "result")) {
			d->have_result = 1;
			check_window("the builtin client", ff_json_num(ev, "duration_s", -1),
				     d->client_log);
			moving_check();
		}
		ff_emit(ev);
	}
}

static void
emit_window(struct drive *d)
{
	json_t *ev = ff_event("window");

	json_object_set_new(ev, "warmup_s", json_integer(opt.run.warmup));
	json_object_set_new(ev, "duration_s", json_integer(opt.run.duration));
	json_object_set_new(ev, "time", json_string(ff_iso_time()));
	ff_emit(ev);
	d->window_sent = 1;
}

/* How long the client may run: its warmup and window, and the margin (ff_load_margin_s). */
static double
client_margin(void)
{
	return ff_load_margin_s(opt.run.warmup, opt.run.duration, opt.run.jobs);
}

static double
client_allowance(void)
{
	return opt.run.warmup + opt.run.duration + client_margin();
}

/* The program the client runs, as users know it. */
static const char *
client_program(void)
{
	return wl->client;
}

/* A client that outlives its allowance hangs: stop it, and fail the run. */
noreturn static void
client_overran(struct drive *d)
{
	ff_child_stop(&d->client, 1.0);
	ff_die_event("%s did not finish within the %.0f s it was given (warmup %ld s + duration %ld s + %.0f s margin) and was stopped; its log: '%s'",
		     client_program(), client_allowance(), opt.run.warmup, opt.run.duration,
		     client_margin(), d->client_log);
}

/*
 * The line in which the tool said why it failed: iperf3's "iperf3: error -
 * ..." or "iperf3: parameter error - ..." (followed by its help text),
 * h2load's "-c, -t: ..." or "no URI ...", skipping their warnings; else
 * what the driver reads in the tool's output (iperf3's JSON "error").
 * Malloc'd, or NULL.
 */
static char *
client_said(const struct drive *d)
{
	size_t len = 0;
	char *text = ff_read_file(d->client_log, &len), *line, *r = NULL;
	struct ff_lines lines;

	ff_lines_init(&lines, text, len);
	while (!r && (line = ff_lines_next(&lines))) {
		if (!strncmp(line, "Usage:", 6))
			break;	/* iperf3's help text: its error came before */
		if (line[strspn(line, " \t")] && !strstr(line, "warning"))
			r = ff_strdup(line);
	}
	free(text);
	if (!r && wdrv->said)
		r = wdrv->said(d);
	return r;
}

/* The client failed: the tool's own reason, else the end of its log. */
noreturn static void
client_failed(struct drive *d)
{
	char *said = WIFEXITED(d->client.status) ? client_said(d) : NULL;

	/*
	 * A client fails first when its server dies under it (a reset), and
	 * serve, which holds the server, may be the last to be told: the
	 * cause is named here too, as the server is gone (a zombie) by now.
	 */
	if (d->server_pid > 0 && !ff_proc_alive(d->server_pid))
		ff_die_event("the %s server (pid %d) died during the run; then the client %s%s%s",
			     opt.workload, (int)d->server_pid, ff_child_how(&d->client),
			     said ? ": " : "", said ? said : "");

	if (said)
		ff_die_event("the %s client %s: %s", opt.workload, ff_child_how(&d->client), said);
	ff_child_report(&d->client);
	ff_die_event("the %s client %s", opt.workload, ff_child_how(&d->client));
}

/*
 * Until the client is done and its pipe (builtin) empty: the window
 * opened on time for the tools that do not say when, the client stopped
 * at its deadline, the upstream and the client's events forwarded.
 */
static void
watch_client(struct drive *d, int outfd)
{
	struct pollfd pfd[2];

	while (!d->client_done || (outfd >= 0 && !d->client_out.eof)) {
		int timeout = -1;

		pfd[0] = (struct pollfd){ d->client_done ? -1 : d->client.pidfd, POLLIN, 0 };
		pfd[1] = (struct pollfd){ d->client_out.eof ? -1 : outfd, POLLIN, 0 };
		if (outfd < 0 && !d->window_sent) {
			double left = d->window_at - ff_now();

			timeout = left > 0 ? (int)(left * 1000) + 1 : 0;
		}
		if (!d->client_done) {
			double left = d->deadline - ff_now();
			int t = left > 0 ? (int)(left * 1000) + 1 : 0;

			timeout = timeout < 0 || t < timeout ? t : timeout;
		}
		ff_stage_wait(&stage, pfd, 2, timeout);
		if (!d->client_done && ff_now() >= d->deadline) {
			if (!ff_child_check(&d->client))
				client_overran(d);
			d->client_done = 1;
		}
		if (outfd < 0 && !d->window_sent && ff_now() >= d->window_at)
			emit_window(d);
		forward_upstream(d);
		if (pfd[1].revents) {
			ff_reader_fill(&d->client_out);
			forward_client(d);
		}
		if (pfd[0].revents && ff_child_check(&d->client))
			d->client_done = 1;
	}
}

int
drive(void)
{
	static struct drive d;
	int pipefd[2] = { -1, -1 }, r;

	/* Up to the topology: where the client connects. */
	for (;;) {
		forward_upstream(&d);
		if (d.topology)
			break;
		if (stage.ended)
			ff_die_event("the stream ended without a topology event");
		ff_stage_wait(&stage, NULL, 0, -1);
	}
	if (d.port <= 0 || !d.host)
		ff_die_event("the topology event has no host and port");
	d.host = ff_strdup(d.host);
	/*
	 * With no warmup the window opens as the client starts: first the
	 * environment, whose probes (ff-topology's, 30 to 80 ms of CPU) would
	 * otherwise run inside it. With a warmup they are over before it ends.
	 */
	while (opt.run.warmup == 0 && !d.have_environment && !stage.ended) {
		ff_stage_wait(&stage, NULL, 0, -1);
		forward_upstream(&d);
	}

	if (wl->own) {
		if (pipe2(pipefd, O_CLOEXEC) < 0)
			ff_die("cannot create a pipe: %s", strerror(errno));
		d.client_out = (struct ff_reader)FF_READER_INIT(pipefd[0], "the builtin client");
	}
	d.client_log = run_path("client.log");
	d.started = ff_now();
	wdrv->start(&d, pipefd[1]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	d.window_at = d.started + opt.run.warmup;
	d.deadline = d.started + client_allowance();

	watch_client(&d, pipefd[0]);
	if (pipefd[0] >= 0)
		forward_client(&d);
	ff_stop_if_signalled();	/* a stop first: then the client's end is ours */
	if (!WIFEXITED(d.client.status) || WEXITSTATUS(d.client.status) != 0)
		client_failed(&d);
	r = wdrv->finish(&d);
	if (r < 0)
		ff_die_event("the %s client reported no result; see '%s'", opt.workload,
			     d.client_log);

	/* Up to the upstream's end, then ours; then wait for the reader. */
	for (;;) {
		forward_upstream(&d);
		if (stage.ended)
			break;
		ff_stage_wait(&stage, NULL, 0, -1);
	}
	ff_stage_end(&stage, 0);
	return ff_stage_hold(&stage, NULL, 0);
}

/* `name` and the number as its value, two arguments. */
void
arg_num(struct ff_argv *a, const char *name, long v)
{
	ff_argv_add(a, name);
	ff_argv_addf(a, "%ld", v);
}

void
emit_interval(double t, double dt, json_int_t bytes, json_t *operations, json_t *latency)
{
	json_t *ev = ff_event("interval");

	json_object_set_new(ev, "t_s", json_real(ff_usec(t)));
	json_object_set_new(ev, "dt_s", json_real(ff_usec(dt)));
	json_object_set_new(ev, "bytes", json_integer(bytes));
	json_object_set_new(ev, "operations", operations);
	json_object_set_new(ev, "latency_us", latency);
	moving_track(ev);
	ff_emit(ev);
}
