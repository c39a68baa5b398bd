/*
 * run.c - flimflam's pipeline of a run: the four stages started, their
 * events read (the phase on a terminal), their ends worded; and
 * flamegraph's page rendered from the recording.
 */
#include "ff-run.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pipeline.h>

/* A signal stopped the run (or the rendering): say so, exit 128+n. */
noreturn void
stopped_by(int sig, const char *rundir)
{
	ff_warn("stopped by %s; nothing is left running; the run's files are in '%s'",
		ff_sig_name(sig), rundir);
	exit(128 + sig);
}

/* Not on a terminal, a start still going on is said every so many seconds. */
#define START_NOTE_S 5

/* A run's phases as its events come: when it started, warmed up, its window ended; the notes said. */
struct phases {
	double started, warm_end, win_end;
	long said;		/* start notes said (start_note) */
};

static const char *
starting_text(const struct run *run)
{
	return ff_relay_has(run->spec.relay, FF_RELAY_ROUTED) ?
		"starting the routers; R1 listens once it has the route to the last" :
		"starting the server and relays";
}

/*
 * Not on a terminal (a log, a CI job): one line every START_NOTE_S while
 * the chain starts (skrouterd's take seconds a hop), so a slow start is
 * not silence. Returns how long poll may wait before the next (-1: none).
 */
static int
start_note(const struct run *run, struct phases *ph, double now)
{
	long k = (long)((now - ph->started) / START_NOTE_S);

	if (ph->warm_end || run->spec.json || ff_verbosity < 0)
		return -1;
	if (k > ph->said) {
		ph->said = k;
		ff_say("flimflam: %s (%ld s)\n", starting_text(run), k * START_NOTE_S);
	}
	return (int)(((ph->said + 1) * START_NOTE_S - (now - ph->started)) * 1000) + 1;
}

/*
 * On a terminal, the run's phase and the seconds left, once a second:
 * starting (skrouterd: waiting for the route), warming up, measuring.
 * Returns how long poll may wait before the next update (-1: no need).
 */
static int
show_phase(const struct run *run, struct phases *ph)
{
	double now = ff_now(), left, started = ph->started, warm_end = ph->warm_end, win_end = ph->win_end;

	if (!ff_live_on())
		return win_end ? progress_note(run, win_end, now) : start_note(run, ph, now);
	if (!warm_end)
		ff_live("flimflam: %s (%.0f s)", starting_text(run), floor(now - started));
	else if (!win_end)
		ff_live("flimflam: warming up: %.0f s left", ceil(fmax(0, warm_end - now)));
	else if (now < win_end)
		ff_live("flimflam: measuring: %.0f s left%s", ceil(win_end - now), progress_text());
	else
		ff_live("flimflam: measured; collecting the results");
	left = (!warm_end ? now - started : !win_end ? warm_end - now : win_end - now);
	return 1 + (int)(1000 * (left - floor(left)));
}

/* Another run's relays on our CPUs: said at once, and in the summary. */
static void
warn_other_runs(const json_t *topo)
{
	size_t i;
	json_t *o;

	json_array_foreach(json_object_get(topo, "cpus_other_runs"), i, o)
		ff_warn("another flimflam run (ff-topology pid %lld) has its relays on CPU %s too: the two runs disturb each other's figures",
			(long long)json_integer_value(json_object_get(o, "pid")),
			ff_json_str_or(o, "cpus", "?"));
}

/* --listen ADDRESS for a role whose host has an address of its own, into `a`. */
static void
listen_arg(struct ff_argv *a, const char *role)
{
	if (hosts_address(role))
		ff_argv_addl(a, "--listen", hosts_address(role), NULL);
}

/* Relay k's role, r1 ... r8 (a stage keeps it: stages[].role). */
static const char *
relay_role(int k)
{
	static const char *const roles[FF_HOPS_MAX] = { "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8" };

	return roles[k - 1];
}

/* The relay stages' options common to all: relay, protocol, CPUs, build. */
static void
relay_args(const struct run *run, struct ff_argv *a, const char *cpu)
{
	ff_argv_addl(a, "-r", run->spec.relay, "-p", run->spec.protocol, "--cpu-limit", cpu, NULL);
	if (run->spec.run.workers) {
		ff_argv_add(a, "--workers");
		ff_argv_addf(a, "%ld", run->spec.run.workers);
	}
	if (run->spec.nbuild)
		ff_build_argv(a, &run->spec.builds[run->spec.cur]);
	if (run->spec.tls)
		ff_argv_add(a, "--tls");
	if (run->spec.relay_cmd)
		ff_argv_addl(a, "--relay-cmd", run->spec.relay_cmd, NULL);
}

/*
 * --tls with the relays on hosts of their own, one ff-topology each: the
 * run's CA and each relay's key and certificate made here, in RUN/tls (as
 * ff-topology makes a chain's; FLIMFLAM_TLS_CERTS gives a set), and each
 * relay on another host given only its own key and certificate and the
 * CA's certificate, in a private directory there that hosts_disconnect
 * removes. The CA's key stays here. Relay k's directory, on its host,
 * into tls_dirs[k].
 */
static void
tls_for_hosts(const struct run *run, const char *rundir, const char *tls_dirs[])
{
	const char *roles[FF_HOPS_MAX];
	char *tls = ff_asprintf("%s/tls", rundir);
	struct ff_buf why = FF_BUF_INIT;
	int n = (int)run->spec.hops, k;

	for (k = 1; k <= n; k++)
		roles[k - 1] = relay_role(k);
	if (ff_tls_certs(rundir, roles, n, &why) < 0) {
		hosts_disconnect();
		ff_die("--tls: %s", why.s);
	}
	for (k = 1; k <= n; k++) {
		char *files[3], *scratch;

		if (!hosts_dest(relay_role(k))) {
			tls_dirs[k] = tls;
			continue;
		}
		files[0] = ff_asprintf("%s/ca.crt", tls);
		files[1] = ff_asprintf("%s/%s.crt", tls, relay_role(k));
		files[2] = ff_asprintf("%s/%s.key", tls, relay_role(k));
		scratch = ff_asprintf("%s/send-%s.sh", tls, relay_role(k));
		tls_dirs[k] = hosts_send_private(relay_role(k), "tls", (const char *const *)files, 3,
						 scratch, &why);
		for (int i = 0; i < 3; i++)
			free(files[i]);
		free(scratch);
		if (!tls_dirs[k]) {
			hosts_disconnect();
			if (ff_signalled())
				stopped_by(ff_signalled(), rundir);
			ff_die("--tls: %s", why.s);
		}
	}
	ff_buf_free(&why);
}

/*
 * The relays: one ff-topology for the chain R1 ... RN on one host (here,
 * or r1's host), or with --hosts putting them on hosts of their own, one
 * each (--relay-role), RN first, each relaying to the one behind it. Relay
 * none: one, with the client (it only passes the server on).
 */
static void
relay_stages(const struct run *run, pipeline *p, const char *cpu, const char *hops, const char *rundir,
	     const char *const tls_dirs[])
{
	struct ff_argv a = FF_ARGV_INIT;
	int n = (int)run->spec.hops;

	if (!n || hosts_relays_together(n)) {
		relay_args(run, &a, cpu);
		if (n) {
			ff_argv_addl(&a, "--hops", hops, NULL);
			listen_arg(&a, "r1");
		}
		if (!hosts_dest(n ? "r1" : "client"))
			ff_argv_addl(&a, "--run-dir", rundir, NULL);
		pipeline_command(p, stage_argv(n ? "r1" : "client", "ff-topology",
					       "ff-topology", &a));
		return;
	}
	for (int k = n; k >= 1; k--) {
		char label[32];

		relay_args(run, &a, cpu);
		ff_argv_addl(&a, "--relay-role", relay_role(k), "--target-event",
			     k == n ? "server" : "topology", NULL);
		if (run->spec.tls)
			ff_argv_addl(&a, "--tls-certs", tls_dirs[k], NULL);
		listen_arg(&a, relay_role(k));
		if (!hosts_dest(relay_role(k)))
			ff_argv_addl(&a, "--run-dir", rundir, NULL);
		snprintf(label, sizeof(label), "ff-topology (%s)", relay_role(k));
		pipeline_command(p, stage_argv(relay_role(k), label, "ff-topology", &a));
	}
}

/*
 * ff-capture where the relays are: one for the chain on one host, else
 * one on each relay host (RN's first) that captures that host's relays
 * (--roles).
 */
static void
capture_stages(const struct run *run, pipeline *p, const struct cmd *c, const char *rundir)
{
	int n = (int)run->spec.hops, split = n && !hosts_relays_together(n);

	for (int k = split ? n : 1; k >= 1; k--) {
		struct ff_argv a = FF_ARGV_INIT;
		const char *role = relay_role(k);
		char label[64];
		int j;

		/* A host's relays: captured once, by the stage of its last. */
		for (j = n; split && j > k && !hosts_same(relay_role(j), role); j--)
			;
		if (split && j > k)
			continue;
		ff_argv_add(&a, c->mode);
		if (samples(c))
			ff_argv_addl(&a, "--call-graph", run->perf.call_graph, "--freq", freq_arg(run), NULL);
		if (run->spec.nbuild && !strcmp(c->mode, "skstat"))
			ff_build_argv(&a, &run->spec.builds[run->spec.cur]);
		ff_argv_add(&a, "--interval");
		ff_argv_addf(&a, "%.9g", run->spec.run.interval);
		if (split) {
			struct ff_buf roles = FF_BUF_INIT;

			for (j = 1; j <= k; j++)
				if (hosts_same(relay_role(j), role))
					ff_buf_printf(&roles, "%s%s", roles.len ? "," : "", relay_role(j));
			ff_argv_addl(&a, "--roles", roles.s, NULL);
			ff_buf_free(&roles);
		}
		if (!hosts_dest(role))
			ff_argv_addl(&a, "--run-dir", rundir, NULL);
		snprintf(label, sizeof(label), split ? "ff-capture (%s)" : "ff-capture", role);
		pipeline_command(p, stage_argv(role, label, "ff-capture", &a));
	}
}

/* The stages of a run, started: serve | topology | drive | capture. */
static pipeline *
start_pipeline(const struct run *run, const struct cmd *c, const char *rundir)
{
	struct ff_run_opts drive = run->spec.run;
	struct ff_argv args = FF_ARGV_INIT;
	const char *tls_dirs[FF_HOPS_MAX + 1] = { NULL };	/* --tls, relays on hosts of their own */
	char cpu[16], hops[16];
	pipeline *p;

	drive.cpu_limit = ff_relay_find(run->spec.relay)->processes ? run->spec.run.cpu_limit : 0;
	drive.workers = 0;	/* the relays' (relay_args), not the client's */
	snprintf(cpu, sizeof(cpu), "%ld", drive.cpu_limit);
	snprintf(hops, sizeof(hops), "%ld", run->spec.hops);

	hosts_connect(rundir);
	if (run->spec.tls && !hosts_relays_together((int)run->spec.hops))
		tls_for_hosts(run, rundir, tls_dirs);
	p = pipeline_new();
	ff_argv_addl(&args, "serve", "-w", run->spec.workload, "--cpu-limit", cpu, NULL);
	if (run->spec.hops)
		ff_argv_addl(&args, "--hops", hops, NULL);
	if (ff_workload_is_rr(run->spec.workload)) {
		/* The server's framing: the sizes (the rate is the client's). */
		ff_argv_add(&args, "--request-size");
		ff_argv_addf(&args, "%ld", run->spec.run.request_size);
		ff_argv_add(&args, "--response-size");
		ff_argv_addf(&args, "%ld", run->spec.run.response_size);
	}
	listen_arg(&args, "server");
	if (!hosts_dest("server"))
		ff_argv_addl(&args, "--run-dir", rundir, NULL);
	pipeline_command(p, stage_argv("server", "ff-workload serve", "ff-workload", &args));
	relay_stages(run, p, cpu, hops, rundir, tls_dirs);
	ff_argv_addl(&args, "drive", "-w", run->spec.workload, NULL);
	if (run->spec.hops)
		ff_argv_addl(&args, "--hops", hops, NULL);
	ff_argv_run_opts(&args, &drive, 1);
	if (!hosts_dest("client"))
		ff_argv_addl(&args, "--run-dir", rundir, NULL);
	pipeline_command(p, stage_argv("client", "ff-workload drive", "ff-workload", &args));
	capture_stages(run, p, c, rundir);
	pipeline_want_infile(p, "/dev/null");	/* the first stage reads nothing */
	pipeline_want_out(p, -1);
	pipeline_ignore_signals(p, 0);
	stages_start(p, run->spec.json);
	return p;
}

/* The phases as the events come: the warmup from topology, the window. */
/* Each host's TCP stall counters of the window, added into `first`'s (null stays null). */
static void
add_tcp_stalls(json_t *first, json_t *tcp)
{
	json_t *sum = json_object_get(first, "tcp"), *v;
	const char *k;

	if (!json_is_object(sum) || !json_is_object(tcp)) {
		json_object_set_new(first, "tcp", json_null());
		return;
	}
	json_object_foreach(sum, k, v)
		json_integer_set(v, json_integer_value(v) + json_integer_value(json_object_get(tcp, k)));
}

/* One event of the pipeline: kept, passed on with --json, and its phase noted. */
static void
take_event(const struct run *run, json_t *events, json_t *ev, struct phases *ph, int sig)
{
	if (run->spec.json)
		ff_emit(json_incref(ev));
	/* A stage on another host failed: its line is ours to say (ff_base.h). */
	if (!strcmp(ff_event_name(ev), "error") && json_is_false(json_object_get(ev, "said")))
		fprintf(stderr, "%s: %s\n", ff_json_str_or(ev, "program", "a stage"),
			ff_json_str_or(ev, "message", "failed"));
	if (!strcmp(ff_event_name(ev), "topology")) {
		ph->warm_end = ff_now() + run->spec.run.warmup;
		warn_other_runs(ev);
		if (!run->spec.json && ff_verbosity >= 0 && !sig)
			ff_say("flimflam: relays up; warming up for %ld s, then measuring for %ld s\n",
			       run->spec.run.warmup, run->spec.run.duration);
	}
	if (!strcmp(ff_event_name(ev), "window"))
		ph->win_end = ff_now() + run->spec.run.duration;
	if (!strcmp(ff_event_name(ev), "interval"))
		progress_interval(run, ev);
	/* Relays on hosts of their own: each host's capture measured its own. */
	if (!strcmp(ff_event_name(ev), "resources") && ff_event_find(events, "resources")) {
		json_t *first = ff_event_find(events, "resources");

		json_array_extend(json_object_get(first, "relays"), json_object_get(ev, "relays"));
		add_tcp_stalls(first, json_object_get(ev, "tcp"));
		json_decref(ev);
		return;
	}
	json_array_append_new(events, ev);
}

/*
 * The pipeline's events until it ends, into `events`; a signal is passed
 * to every stage, each stopping what it started, in order, and one that
 * has not within the grace is killed (stages.c). Returns the signal that
 * stopped the run, or 0.
 */
static int
read_pipeline(const struct run *run, pipeline *p, json_t *events)
{
	struct ff_reader out = FF_READER_INIT(fileno(pipeline_get_outfile(p)), "the pipeline");
	struct phases ph = { ff_now(), 0, 0, 0 };
	json_t *ev;
	int sig = 0;

	for (;;) {
		/* events 0 on stdout: POLLERR when its reader is gone. */
		struct pollfd pfd[3] = {
			{ ff_signal_fd(), POLLIN, 0 }, { out.fd, POLLIN, 0 }, { 1, 0, 0 }
		};
		int wait_ms;

		if (!sig && ff_signalled()) {
			sig = ff_signalled();
			stages_stop(sig);
		}
		stages_enforce();
		/* Killed, every stage: what else holds the pipe is not waited for. */
		if (sig && stages_all_ended())
			break;
		wait_ms = sig ? stages_timeout_ms() : show_phase(run, &ph);
		if (poll(pfd, 3, wait_ms) < 0 && errno != EINTR)
			ff_die("poll: %s", strerror(errno));
		/* The signal is taken: the pipe left full would wake every poll at once. */
		ff_signal_drain();
		if ((pfd[2].revents & (POLLERR | POLLHUP)) && !sig)
			ff_quit(128 + SIGPIPE);	/* no one reads us: stop, as for Ctrl-C */
		if (pfd[1].revents) {
			ssize_t r = ff_reader_fill(&out);

			while ((ev = ff_reader_next(&out)))
				take_event(run, events, ev, &ph, sig);
			if (r == 0) {
				stages_close_sessions();
				break;
			}
		}
	}
	ff_live_clear();
	ff_reader_free(&out);
	return sig;
}

/*
 * Recordings made on the relays' hosts, brought back to the current
 * directory: perf.data when the relays share a host, else ROLE.perf.data
 * for each host's (samples per relay kept apart); each capture event then
 * names the local file.
 */
static void
fetch_recordings(const struct run *run, const struct cmd *c, json_t *events)
{
	int split = !hosts_relays_together((int)run->spec.hops);
	char cwd[PATH_MAX - 64], local[PATH_MAX];
	struct ff_buf why = FF_BUF_INIT;
	json_t *ev;
	size_t i;

	if (!samples(c) || !hosts_relays_remote((int)run->spec.hops))
		return;
	if (!getcwd(cwd, sizeof(cwd)))
		ff_die("cannot find the current directory: %s", strerror(errno));
	json_array_foreach(events, i, ev) {
		const char *role = ff_json_str(json_array_get(json_object_get(ev, "relays"), 0), "role");
		char *remote;

		if (strcmp(ff_event_name(ev), "capture") || !role || !hosts_dest(role))
			continue;
		remote = ff_json_path_value(json_array_get(json_object_get(ev, "files"), 0));
		if (!remote)
			continue;
		snprintf(local, sizeof(local), "%s/%s%sperf.data", cwd, split ? role : "", split ? "." : "");
		if (!run->spec.json)
			ff_say("flimflam: copying %s's recording from %s to %s\n", role, hosts_dest(role), local);
		if (hosts_fetch(role, remote, local, &why) < 0)
			ff_die("%s", why.s);
		/* --json: the stream passed already; a `fetched` event says where it is now. */
		if (run->spec.json) {
			json_t *f = ff_event("fetched");

			json_object_set_new(f, "role", json_string(role));
			json_object_set_new(f, "host", json_string(hosts_dest(role)));
			json_object_set_new(f, "from", ff_json_path(remote));
			json_object_set_new(f, "file", ff_json_path(local));
			ff_emit(f);
		}
		json_object_set_new(ev, "files", json_pack("[o]", ff_json_path(local)));
		json_object_set_new(ev, "host", json_string(hosts_dest(role)));
		free(remote);
	}
	ff_buf_free(&why);
}

json_t *
run_pipeline(const struct run *run, const struct cmd *c, const char *rundir)
{
	pipeline *p = start_pipeline(run, c, rundir);
	json_t *events = json_array();
	int sig = read_pipeline(run, p, events), failed = stages_reap(&sig);

	pipeline_free(p);
	hosts_disconnect();
	if (sig)
		stopped_by(sig, rundir);
	if (failed) {
		ff_warn("the run failed; its files are in '%s'", rundir);
		exit(1);
	}
	fetch_recordings(run, c, events);
	return events;
}

/* The summary */

/*
 * record, c2c, mem, flamegraph: flamegraph.html (and old.flamegraph.html)
 * can be written, before anything starts (ff-capture --check said so of
 * perf.data); then this run holds the lock on the directory that says
 * another record is writing there, for its whole run.
 */
void
outputs_check(struct run *run, const struct cmd *c)
{
	char cwd[PATH_MAX - 32];
	struct ff_buf why = FF_BUF_INIT;

	if (!samples(c))
		return;
	if (!getcwd(cwd, sizeof(cwd)))
		ff_die("cannot find the current directory: %s", strerror(errno));
	snprintf(run->flame_html, sizeof(run->flame_html), "%s/flamegraph.html", cwd);
	if (!strcmp(c->name, "flamegraph") && ff_out_check(&run->flame_out, run->flame_html, 0, "old.*") < 0)
		ff_die("%s", run->flame_out.err);
	if (ff_lock_dir(cwd, "perf.data", &why) < 0)
		ff_die("%s", why.s);
}

/*
 * The run's events into `file`, one a line as --json prints them: ff-flame
 * takes the relays' towers and the page's title from them (--events).
 */
static void
write_events(json_t *events, const char *file)
{
	struct ff_out out;
	json_t *ev;
	char *line;
	size_t i;

	if (ff_out_open(&out, file, 0, NULL, 0644) < 0)
		ff_die("%s", out.err);
	json_array_foreach(events, i, ev) {
		line = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(10));
		if (!line) {
			ff_out_abort(&out);
			ff_die("cannot encode an event: out of memory");
		}
		if (ff_out_write(&out, line, strlen(line)) < 0 || ff_out_write(&out, "\n", 1) < 0) {
			ff_out_abort(&out);
			ff_die("%s", out.err);
		}
		free(line);
	}
	if (ff_out_commit(&out) < 0)
		ff_die("%s", out.err);
}

/*
 * The roles of a capture event's relays, "r1" or "r1,r2" (malloc'd; ""
 * when it names none).
 */
static char *
capture_roles(const json_t *cap)
{
	struct ff_buf roles = FF_BUF_INIT;
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(cap, "relays"), i, r)
		if (ff_json_str(r, "role"))
			ff_buf_printf(&roles, "%s%s", roles.len ? "," : "", ff_json_str(r, "role"));
	return ff_buf_take(&roles);
}

/*
 * flamegraph: ff-flame renders the recording as flamegraph.html in the
 * current directory, one tower per relay (roles, pids and program from the
 * capture and topology events, which it reads from the run's events.jsonl);
 * an existing one becomes old.flamegraph.html. Relays on hosts of their
 * own (--hosts) made one recording each: ff-flame folds them into one page
 * (--parts ROLES=FILE), each file's processes in its own relays' towers.
 */
void
render_flamegraph(struct run *run, json_t *events, const char *rundir)
{
	struct ff_argv argv = FF_ARGV_INIT;
	struct ff_buf names = FF_BUF_INIT;
	char evfile[PATH_MAX + 32], *path = ff_program("ff-flame"), *data, *roles;
	static struct ff_child flame;
	size_t i, ndata = 0;
	json_t *ev;

	json_array_foreach(events, i, ev)
		if (!strcmp(ff_event_name(ev), "capture") &&
		    json_array_size(json_object_get(ev, "files")))
			ndata++;
	if (!ndata)
		ff_die("the recording named no perf.data; the run's files are in '%s'", rundir);
	if (!path)
		ff_die("cannot find ff-flame beside flimflam nor on PATH");
	snprintf(evfile, sizeof(evfile), "%s/events.jsonl", rundir);
	write_events(events, evfile);
	/* ff-flame writes the temporary file; the old page stays until it is done. */
	if (ff_out_open(&run->flame_out, run->flame_html, FF_OUT_DEFER, "old.*", 0644) < 0)
		ff_die("%s", run->flame_out.err);
	if (!run->spec.json)
		ff_say("flimflam: rendering %s\n", run->flame_html);
	/*
	 * Its own process group, as every child: Ctrl-C comes to us, and we
	 * stop it; its end is then ours to word, not a failure of its own.
	 */
	ff_argv_addl(&argv, path, "-o", run->flame_out.tmp, "--events", evfile, NULL);
	if (ndata > 1)
		ff_argv_add(&argv, "--parts");
	json_array_foreach(events, i, ev) {
		if (strcmp(ff_event_name(ev), "capture") ||
		    !(data = ff_json_path_value(json_array_get(json_object_get(ev, "files"), 0))))
			continue;
		roles = capture_roles(ev);
		if (ndata > 1 && *roles)
			ff_argv_addf(&argv, "%s=%s", roles, data);
		else
			ff_argv_add(&argv, data);
		ff_buf_printf(&names, "%s'%s'", names.len ? ", " : "", data);
		free(roles);
		free(data);
	}
	if (ff_spawn(&flame, "ff-flame", argv.v, NULL) < 0) {
		ff_out_abort(&run->flame_out);
		ff_die("cannot render %s; the recording%s kept", names.s, ndata > 1 ? "s are" : " is");
	}
	ff_set_cleanup(ff_children_stop_all);
	while (!ff_child_check(&flame)) {
		struct pollfd pfd[2] = { { ff_signal_fd(), POLLIN, 0 }, { flame.pidfd, POLLIN, 0 } };

		if (ff_signalled()) {
			ff_child_stop(&flame, 1.0);
			ff_out_abort(&run->flame_out);
			stopped_by(ff_signalled(), rundir);
		}
		poll(pfd, 2, -1);
	}
	ff_set_cleanup(NULL);
	if (flame.status != 0) {
		ff_out_abort(&run->flame_out);
		ff_die("ff-flame %s rendering %s; the recording%s kept", ff_child_how(&flame), names.s,
		       ndata > 1 ? "s are" : " is");
	}
	if (ff_out_commit(&run->flame_out) < 0)
		ff_die("%s; the recording%s kept", run->flame_out.err, ndata > 1 ? "s are" : " is");
	ff_argv_free(&argv);
	ff_buf_free(&names);
	free(path);
	if (run->spec.json) {
		char *url = ff_file_url(run->flame_html);

		ff_say("flimflam: open %s in a browser\n", url);
		free(url);
	}
}
