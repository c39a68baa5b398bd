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
#include "ff.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <getopt.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-workload serve [-w WORKLOAD] [--cpu-limit N] [--run-dir DIR]\n"
	"       ff-workload drive [-w WORKLOAD] [--jobs N] [--warmup SECONDS]\n"
	"                         [--duration SECONDS] [--cpu-limit N] [--run-dir DIR]\n"
	"                         [--request-size BYTES] [--response-size BYTES] [--rate N]\n"
	"\n"
	"Workloads: builtin (default), iperf3, h2load, h2load-h1, builtin-rr,\n"
	"builtin-crr. The sizes (also for serve) and --rate are builtin-rr's and\n"
	"builtin-crr's.\n"
	"serve starts the workload's server and holds it; drive reads the\n"
	"topology event on stdin and runs the client through the relays.\n";

enum { OPT_RUN_DIR = FF_OPT_OWN };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "workload", required_argument, NULL, 'w' },
	FF_RUN_LONGOPTS,
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ NULL, 0, NULL, 0 }
};

/* The size of the object the HTTP servers serve. */
#define HTTP_OBJECT_BYTES 1024

static struct {
	const char *workload;
	struct ff_run_opts run;
	const char *run_dir;
} opt = { "builtin", FF_RUN_OPTS_DEFAULTS, NULL };

static cpu_set_t workload_cpus;
static int have_workload_cpus;

static void
cleanup(void)
{
	ff_children_stop_all();
}

static void
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

static char *
run_path(const char *name)
{
	return ff_asprintf("%s/%s", ff_rundir(NULL), name);
}

/* serve */

static void
write_docroot(const char *docroot)
{
	char body[HTTP_OBJECT_BYTES + 1], *path;
	int i;

	if (ff_mkdirs(docroot, 0700) < 0)
		ff_die("cannot create '%s': %s", docroot, strerror(errno));
	for (i = 0; i < HTTP_OBJECT_BYTES; i++)
		body[i] = "flimflam\n"[i % 9];
	body[HTTP_OBJECT_BYTES] = 0;
	path = ff_asprintf("%s/flimflam.txt", docroot);
	if (ff_write_file(path, body, 0600) < 0)
		exit(1);
	free(path);
}

/* nginx as the HTTP/1.1 server of h2load-h1: a private prefix and config. */
static void
nginx_server_argv(int port, char **argv, char *storage[4])
{
	char portstr[16], *conf_path, *conf, *tmpl;
	const char *dir = ff_rundir(NULL);

	snprintf(portstr, sizeof(portstr), "%d", port);
	tmpl = ff_datapath("relay-conf/nginx-server.conf");
	if (!tmpl)
		ff_die("cannot find relay-conf/nginx-server.conf");
	{
		char *docroot = run_path("docroot");
		const char *const vars[] = {
			"DIR", dir, "PORT", portstr, "DOCROOT", docroot,
			"USER", ff_user_name(), NULL
		};

		write_docroot(docroot);
		conf = ff_template_fill(tmpl, vars);
		free(docroot);
	}
	if (!conf)
		exit(1);
	conf_path = run_path("server-nginx.conf");
	if (ff_write_file(conf_path, conf, 0600) < 0)
		exit(1);
	free(conf);
	free(tmpl);
	storage[0] = conf_path;
	storage[1] = run_path("server-nginx-error.log");
	argv[0] = "nginx";
	argv[1] = "-p";
	argv[2] = (char *)dir;
	argv[3] = "-c";
	argv[4] = conf_path;
	argv[5] = "-e";
	argv[6] = storage[1];
	argv[7] = NULL;
}

/*
 * builtin-rr and builtin-crr: the sizes (both ends), and the rate (the
 * client's) when `client`; returns how many arguments it appended.
 */
static int
rr_args(char **argv, int client)
{
	static char buf[3][24];
	struct ff_run_opts o = opt.run;

	if (!client)
		o.rate = 0;
	return ff_rr_opts_argv(&o, argv, buf);
}

static int
start_server(struct ff_child *c, int port, char *log)
{
	char portstr[16], *argv[16], *storage[4] = { 0 }, *docroot = NULL;
	int i = 0;

	snprintf(portstr, sizeof(portstr), "%d", port);
	if (!strcmp(opt.workload, "builtin")) {
		argv[i++] = ff_helper_path("ff-builtin-server");
		argv[i++] = "--port";
		argv[i++] = portstr;
	} else if (ff_workload_is_rr(opt.workload)) {
		argv[i++] = ff_helper_path("ff-builtin-rr-server");
		argv[i++] = "--port";
		argv[i++] = portstr;
		i += rr_args(argv + i, 0);
	} else if (!strcmp(opt.workload, "iperf3")) {
		argv[i++] = "iperf3";
		argv[i++] = "--server";
		argv[i++] = "--bind";
		argv[i++] = "127.0.0.1";
		argv[i++] = "--port";
		argv[i++] = portstr;
	} else if (!strcmp(opt.workload, "h2load")) {
		docroot = run_path("docroot");
		write_docroot(docroot);
		argv[i++] = "nghttpd";
		argv[i++] = "--no-tls";
		argv[i++] = "--address=127.0.0.1";
		argv[i++] = "--htdocs";
		argv[i++] = docroot;
		argv[i++] = portstr;
	} else {
		nginx_server_argv(port, argv, storage);
		i = 7;
	}
	argv[i] = NULL;
	spawn_or_die(c, "server", argv, log, -1);
	free(docroot);
	free(storage[0]);
	free(storage[1]);
	return ff_wait_listen(c, port, 15);
}

static int
serve(void)
{
	static struct ff_child server;
	struct ff_child *kids[1] = { &server };
	char *log = run_path("server.log");
	int port = 0, tries, r;
	json_t *ev;

	for (tries = 0; tries < 5; tries++) {
		port = ff_free_port();
		if (truncate(log, 0) < 0 && errno != ENOENT)
			ff_die("cannot truncate '%s': %s", log, strerror(errno));
		r = start_server(&server, port, log);
		if (r == 0)
			break;
		if (ff_signalled())
			ff_exit_signalled();
		ff_child_stop(&server, 1.0);
		if (r == -1 && !ff_child_lost_port(&server))
			ff_child_report(&server);
		if (r != -1 || !ff_child_lost_port(&server))
			ff_die("the %s server did not start", opt.workload);
		ff_info("port %d was taken; trying another", port);
	}
	if (tries == 5)
		ff_die("the %s server found no free port", opt.workload);

	ev = ff_event("server");
	json_object_set_new(ev, "workload", json_string(opt.workload));
	json_object_set_new(ev, "host", json_string("127.0.0.1"));
	json_object_set_new(ev, "port", json_integer(port));
	json_object_set_new(ev, "pid", json_integer(server.pid));
	json_object_set_new(ev, "run_dir", json_string(ff_rundir(NULL)));
	json_object_set_new(ev, "log", json_string(log));
	json_object_set_new(ev, "cpus", have_workload_cpus ?
			    json_string(ff_cpus_str(&workload_cpus)) : json_null());
	if (strncmp(opt.workload, "h2load", 6) == 0)
		json_object_set_new(ev, "path", json_string("/flimflam.txt"));
	ff_emit(ev);
	ff_emit_end(0);
	free(log);

	r = ff_hold(kids, 1, 0);
	if (r < 0)
		ff_exit_signalled();
	ff_children_stop_all();
	return r == 0 ? 0 : 1;
}

/* drive */

struct drive {
	struct ff_reader up;		/* upstream events on stdin */
	struct ff_reader client_out;	/* the builtin client's events */
	struct ff_child client;
	json_t *topology;
	const char *host, *path;
	int port;
	double started, window_at;
	int window_sent, up_ended, client_done, have_result, have_environment;
	char *out_file;			/* iperf3 JSON / h2load text output */
	char *log_file;			/* h2load per-request log */
	char *client_log;
};

static void
forward_upstream(struct drive *d)
{
	json_t *ev;

	while ((ev = ff_reader_next(&d->up))) {
		const char *name = ff_event_name(ev);

		if (!strcmp(name, "end")) {
			d->up_ended = 1;
			json_decref(ev);
			continue;
		}
		if (!strcmp(name, "environment"))
			d->have_environment = 1;
		if (!strcmp(name, "topology") && !d->topology) {
			d->topology = json_incref(ev);
			d->port = (int)ff_json_num(ev, "port", 0);
			d->host = ff_json_str(ev, "host");
		}
		if (!strcmp(name, "server") && !d->path)
			d->path = ff_json_str(ev, "path") ?
				strdup(ff_json_str(ev, "path")) : NULL;
		ff_emit(ev);
	}
}

/*
 * The tools measure their own windows; one that is not the window asked for
 * (beyond 10% and 50 ms: scheduling on a busy machine) describes something
 * else than the relays' window, so the run fails rather than report it.
 */
static void
check_window(const char *tool, double seconds, const char *file)
{
	if (fabs(seconds - opt.run.duration) <= 0.1 * opt.run.duration + 0.05)
		return;
	ff_emit_error("%s measured %.3f s, not the %ld s asked", tool, seconds, opt.run.duration);
	ff_fail(1, "%s measured %.3f s, not the %ld s asked; see '%s'", tool, seconds,
		opt.run.duration, file);
}

static void
forward_client(struct drive *d)
{
	json_t *ev;

	while ((ev = ff_reader_next(&d->client_out))) {
		const char *name = ff_event_name(ev);

		if (!strcmp(name, "window"))
			d->window_sent = 1;
		if (!strcmp(name, "result")) {
			d->have_result = 1;
			check_window("the builtin client", ff_json_num(ev, "duration_s", -1),
				     d->client_log);
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

static int start_client(struct drive *d, int out_fd);
static int finish_iperf3(struct drive *d);
static int finish_h2load(struct drive *d);

static void
upstream_failed(void)
{
	/* The stage that failed has said why. */
	ff_children_stop_all();
	exit(1);
}

static int
drive(void)
{
	static struct drive d;
	struct pollfd pfd[4];
	int pipefd[2] = { -1, -1 }, r;

	d.up = (struct ff_reader)FF_READER_INIT(0, "standard input");
	/* Up to the topology: where the client connects. */
	while (!d.topology) {
		if (ff_reader_fill(&d.up) <= 0) {
			if (ff_signalled())
				ff_exit_signalled();
			forward_upstream(&d);
			if (!d.topology)
				upstream_failed();
		}
		forward_upstream(&d);
	}
	if (d.port <= 0 || !d.host)
		ff_die("the topology event has no host and port");
	d.host = strdup(d.host);
	/*
	 * With no warmup the window opens as the client starts: first the
	 * environment, whose probes (ff-topology's, 30 to 80 ms of CPU) would
	 * otherwise run inside it. With a warmup they are over before it ends.
	 */
	while (opt.run.warmup == 0 && !d.have_environment && !d.up_ended) {
		if (ff_reader_fill(&d.up) <= 0) {
			if (ff_signalled())
				ff_exit_signalled();
			forward_upstream(&d);
			if (!d.up_ended)
				upstream_failed();
		}
		forward_upstream(&d);
	}

	if (!strcmp(opt.workload, "builtin") || ff_workload_is_rr(opt.workload)) {
		if (pipe2(pipefd, O_CLOEXEC) < 0)
			ff_die("cannot create a pipe: %s", strerror(errno));
		d.client_out = (struct ff_reader)FF_READER_INIT(pipefd[0], "the builtin client");
	}
	d.client_log = run_path("client.log");
	d.started = ff_now();
	if (start_client(&d, pipefd[1]) < 0)
		ff_die("cannot run the %s client", opt.workload);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	d.window_at = d.started + opt.run.warmup;

	while (!d.client_done || (pipefd[0] >= 0 && !d.client_out.eof)) {
		int n = 0, timeout = -1;

		pfd[n++] = (struct pollfd){ ff_signal_fd(), POLLIN, 0 };
		pfd[n++] = (struct pollfd){ d.up.eof ? -1 : 0, POLLIN, 0 };
		pfd[n++] = (struct pollfd){ d.client_done ? -1 : d.client.pidfd, POLLIN, 0 };
		pfd[n++] = (struct pollfd){ d.client_out.eof ? -1 : pipefd[0], POLLIN, 0 };
		if (pipefd[0] < 0 && !d.window_sent) {
			double left = d.window_at - ff_now();

			timeout = left > 0 ? (int)(left * 1000) + 1 : 0;
		}
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
			ff_die("poll: %s", strerror(errno));
		if (ff_signalled())
			ff_exit_signalled();
		if (pipefd[0] < 0 && !d.window_sent && ff_now() >= d.window_at)
			emit_window(&d);
		if (pfd[1].revents) {
			if (ff_reader_fill(&d.up) == 0 && !d.up_ended) {
				forward_upstream(&d);
				if (!d.up_ended)
					upstream_failed();
			}
			forward_upstream(&d);
		}
		if (pfd[3].revents) {
			ff_reader_fill(&d.client_out);
			forward_client(&d);
		}
		if (pfd[2].revents && ff_child_check(&d.client))
			d.client_done = 1;
	}
	if (pipefd[0] >= 0)
		forward_client(&d);
	if (!WIFEXITED(d.client.status) || WEXITSTATUS(d.client.status) != 0) {
		ff_child_report(&d.client);
		ff_emit_error("the %s client %s", opt.workload, ff_child_how(&d.client));
		ff_fail(1, "the %s client failed", opt.workload);
	}
	if (!strcmp(opt.workload, "iperf3"))
		r = finish_iperf3(&d);
	else if (!strncmp(opt.workload, "h2load", 6))
		r = finish_h2load(&d);
	else
		r = d.have_result ? 0 : -1;
	if (r < 0) {
		ff_emit_error("the %s client reported no result", opt.workload);
		ff_fail(1, "the %s client reported no result; see '%s'",
			opt.workload, d.client_log);
	}

	/* Up to the upstream's end, then ours; then wait for the reader. */
	while (!d.up_ended) {
		if (ff_reader_fill(&d.up) <= 0 && !d.up_ended) {
			forward_upstream(&d);
			if (!d.up_ended) {
				if (ff_signalled())
					ff_exit_signalled();
				upstream_failed();
			}
		}
		forward_upstream(&d);
	}
	ff_emit_end(0);
	r = ff_hold(NULL, 0, 1);
	if (r < 0)
		ff_exit_signalled();
	return r == 0 ? 0 : 1;
}

static int
start_client(struct drive *d, int out_fd)
{
	char jobs[16], warmup[16], duration[16], port[16], url[512], *argv[24];
	int i = 0;

	snprintf(jobs, sizeof(jobs), "%ld", opt.run.jobs);
	snprintf(warmup, sizeof(warmup), "%ld", opt.run.warmup);
	snprintf(duration, sizeof(duration), "%ld", opt.run.duration);
	snprintf(port, sizeof(port), "%d", d->port);
	if (!strcmp(opt.workload, "builtin")) {
		argv[i++] = ff_helper_path("ff-builtin-client");
		argv[i++] = "--port";
		argv[i++] = port;
		argv[i++] = "--jobs";
		argv[i++] = jobs;
		argv[i++] = "--warmup";
		argv[i++] = warmup;
		argv[i++] = "--duration";
		argv[i++] = duration;
		argv[i] = NULL;
		spawn_or_die(&d->client, "client", argv, d->client_log, out_fd);
		return 0;
	}
	if (ff_workload_is_rr(opt.workload)) {
		argv[i++] = ff_helper_path("ff-builtin-rr-client");
		if (!strcmp(opt.workload, "builtin-crr"))
			argv[i++] = "--crr";
		argv[i++] = "--port";
		argv[i++] = port;
		argv[i++] = "--jobs";
		argv[i++] = jobs;
		argv[i++] = "--warmup";
		argv[i++] = warmup;
		argv[i++] = "--duration";
		argv[i++] = duration;
		argv[i++] = "--histogram-dir";
		argv[i++] = (char *)ff_rundir(NULL);
		i += rr_args(argv + i, 1);
		argv[i] = NULL;
		spawn_or_die(&d->client, "client", argv, d->client_log, out_fd);
		return 0;
	}
	if (!strcmp(opt.workload, "iperf3")) {
		/* --time excludes --omit: the measured period is exactly --duration. */
		d->out_file = run_path("iperf3-client.json");
		argv[i++] = "iperf3";
		argv[i++] = "--client";
		argv[i++] = (char *)d->host;
		argv[i++] = "--port";
		argv[i++] = port;
		argv[i++] = "--parallel";
		argv[i++] = jobs;
		argv[i++] = "--time";
		argv[i++] = duration;
		argv[i++] = "--omit";
		argv[i++] = warmup;
		argv[i++] = "--json";
		argv[i++] = "--logfile";
		argv[i++] = d->out_file;
		argv[i] = NULL;
		spawn_or_die(&d->client, "client", argv, d->client_log, -1);
		return 0;
	}
	/* h2load and h2load-h1 */
	d->out_file = run_path("h2load.out");
	d->log_file = run_path("h2load-requests.log");
	snprintf(url, sizeof(url), "http://%s:%s%s", d->host, port,
		 d->path ? d->path : "/flimflam.txt");
	if (!strcmp(opt.workload, "h2load-h1"))
		argv[i++] = "--h1";
	{
		char *args[24];
		int j = 0, k;

		args[j++] = "h2load";
		for (k = 0; k < i; k++)
			args[j++] = argv[k];
		args[j++] = "--clients";
		args[j++] = jobs;
		args[j++] = "--threads";
		args[j++] = jobs;
		args[j++] = "--warm-up-time";
		args[j++] = warmup;
		args[j++] = "--duration";
		args[j++] = duration;
		args[j++] = "--log-file";
		args[j++] = d->log_file;
		args[j++] = url;
		args[j] = NULL;
		{
			int fd = open(d->out_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

			if (fd < 0)
				ff_die("cannot create '%s': %s", d->out_file, strerror(errno));
			spawn_or_die(&d->client, "client", args, d->client_log, fd);
			close(fd);
		}
	}
	return 0;
}

/* iperf3: the receiver's figures from its JSON. */
static int
finish_iperf3(struct drive *d)
{
	json_error_t err;
	json_t *doc = json_load_file(d->out_file, 0, &err), *end, *sum, *intervals, *iv, *ev;
	const char *error;
	double bits_per_s, seconds, bytes;
	size_t i;

	if (!doc) {
		ff_warn("cannot read iperf3's output '%s': %s", d->out_file, err.text);
		return -1;
	}
	error = ff_json_str(doc, "error");
	if (error) {
		ff_emit_error("iperf3: %s", error);
		ff_fail(1, "iperf3: %s", error);
	}
	intervals = json_object_get(doc, "intervals");
	json_array_foreach(intervals, i, iv) {
		json_t *s = json_object_get(iv, "sum");
		double t;

		if (json_is_true(json_object_get(s, "omitted")))
			continue;
		ev = ff_event("sample");
		t = ff_json_num(s, "end", 0);	/* iperf3 restarts its clock after --omit */
		json_object_set_new(ev, "elapsed_s", json_real(t));
		json_object_set_new(ev, "bytes", json_integer((json_int_t)ff_json_num(s, "bytes", 0)));
		json_object_set_new(ev, "bits", json_integer((json_int_t)(8 * ff_json_num(s, "bytes", 0))));
		json_object_set_new(ev, "bits_per_s", json_real(ff_json_num(s, "bits_per_second", 0)));
		ff_emit(ev);
	}
	end = json_object_get(doc, "end");
	sum = json_object_get(end, "sum_received");
	bits_per_s = ff_json_num(sum, "bits_per_second", -1);
	seconds = ff_json_num(sum, "seconds", -1);
	bytes = ff_json_num(sum, "bytes", -1);
	if (bits_per_s < 0 || seconds <= 0 || bytes < 0) {
		json_decref(doc);
		ff_warn("iperf3's output '%s' has no receiver summary", d->out_file);
		return -1;
	}
	check_window("iperf3", seconds, d->out_file);
	if (bytes == 0) {
		json_decref(doc);
		ff_emit_error("iperf3 received nothing in the window");
		ff_fail(1, "iperf3 received nothing in the window");
	}
	ev = ff_event("result");
	json_object_set_new(ev, "workload", json_string("iperf3"));
	json_object_set_new(ev, "jobs", json_integer(opt.run.jobs));
	json_object_set_new(ev, "duration_s", json_real(seconds));
	json_object_set_new(ev, "bytes", json_integer((json_int_t)bytes));
	json_object_set_new(ev, "bits", json_integer((json_int_t)(8 * bytes)));
	json_object_set_new(ev, "bits_per_s", json_real(bits_per_s));
	json_object_set_new(ev, "operations", json_null());
	json_object_set_new(ev, "ops_per_s", json_null());
	json_object_set_new(ev, "errors", json_integer(0));
	ff_emit(ev);
	json_decref(doc);
	d->have_result = 1;
	return 0;
}

/* The value at quantile q of sorted v[n] (nearest rank). */
static double
quantile(const double *v, size_t n, double q)
{
	size_t k = (size_t)(q * n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/*
 * h2load: counts from its summary; latency from the per-request log, whose
 * lines are "start-time-us<TAB>status<TAB>latency-us" for the requests of
 * the main duration.
 */
static int
finish_h2load(struct drive *d)
{
	char *text = ff_read_file(d->out_file, NULL), *p, *logtext, *line, *save;
	double seconds = -1, rps = -1, total = 0, done = 0, succeeded = 0, failed = 0,
	       errored = 0, timeout = 0, s2xx = 0, s3xx = 0, s4xx = 0, s5xx = 0,
	       bytes = 0, *lat = NULL, sum = 0;
	size_t nlat = 0, cap = 0;
	json_t *ev;

	if (!text) {
		ff_warn("cannot read h2load's output '%s': %s", d->out_file, strerror(errno));
		return -1;
	}
	/*
	 * "finished in" counts the warm-up too; the req/s beside it is the main
	 * duration's, so total / (req/s) is the window h2load measured.
	 */
	if ((p = strstr(text, "finished in ")) && (p = strstr(p, "s, ")))
		rps = strtod(p + 3, NULL);
	if ((p = strstr(text, "\nrequests: ")))
		sscanf(p, "\nrequests: %lf total, %*f started, %lf done, %lf succeeded, %lf failed, %lf errored, %lf timeout",
		       &total, &done, &succeeded, &failed, &errored, &timeout);
	if ((p = strstr(text, "\nstatus codes: ")))
		sscanf(p, "\nstatus codes: %lf 2xx, %lf 3xx, %lf 4xx, %lf 5xx",
		       &s2xx, &s3xx, &s4xx, &s5xx);
	if ((p = strstr(text, "\ntraffic: ")))
		sscanf(p, "\ntraffic: %*s (%lf) total", &bytes);
	free(text);
	if (rps > 0 && total > 0)
		seconds = total / rps;
	else if (rps == 0)
		seconds = opt.run.duration;	/* nothing completed: judged below */
	if (seconds <= 0) {
		ff_warn("h2load's output '%s' has no summary", d->out_file);
		return -1;
	}
	if (s2xx > 0)
		check_window("h2load", seconds, d->out_file);
	if (s2xx <= 0) {
		ff_emit_error("h2load: no request succeeded (%.0f total, %.0f failed, %.0f errored, %.0f 4xx, %.0f 5xx)",
			      total, failed, errored, s4xx, s5xx);
		ff_fail(1, "h2load: no request succeeded (%.0f total, %.0f failed, %.0f errored, %.0f 4xx, %.0f 5xx); see '%s'",
			total, failed, errored, s4xx, s5xx, d->out_file);
	}
	logtext = ff_read_file(d->log_file, NULL);
	for (line = logtext ? strtok_r(logtext, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		double start, status, us;

		if (sscanf(line, "%lf %lf %lf", &start, &status, &us) != 3)
			continue;
		if (status < 200 || status >= 300)
			continue;
		if (nlat == cap) {
			cap = cap ? cap * 2 : 65536;
			lat = realloc(lat, cap * sizeof(*lat));
			if (!lat)
				ff_die("out of memory");
		}
		lat[nlat++] = us;
		sum += us;
	}
	free(logtext);
	if (nlat)
		qsort(lat, nlat, sizeof(*lat), ff_cmp_double);

	ev = ff_event("result");
	json_object_set_new(ev, "workload", json_string(opt.workload));
	json_object_set_new(ev, "jobs", json_integer(opt.run.jobs));
	json_object_set_new(ev, "duration_s", json_real(seconds));
	json_object_set_new(ev, "bytes", json_integer((json_int_t)bytes));
	json_object_set_new(ev, "bits", json_integer((json_int_t)(8 * bytes)));
	json_object_set_new(ev, "bits_per_s", json_real(8 * bytes / seconds));
	json_object_set_new(ev, "operations", json_integer((json_int_t)s2xx));
	json_object_set_new(ev, "ops_per_s", json_real(s2xx / seconds));
	json_object_set_new(ev, "requests", json_integer((json_int_t)total));
	json_object_set_new(ev, "failed", json_integer((json_int_t)(total - s2xx)));
	json_object_set_new(ev, "errors", json_integer((json_int_t)(errored + timeout)));
	json_object_set_new(ev, "status_4xx", json_integer((json_int_t)s4xx));
	json_object_set_new(ev, "status_5xx", json_integer((json_int_t)s5xx));
	if (nlat) {
		json_object_set_new(ev, "latency_avg_us", json_real(sum / nlat));
		json_object_set_new(ev, "latency_p50_us", json_real(quantile(lat, nlat, 0.50)));
		json_object_set_new(ev, "latency_p90_us", json_real(quantile(lat, nlat, 0.90)));
		json_object_set_new(ev, "latency_p99_us", json_real(quantile(lat, nlat, 0.99)));
		json_object_set_new(ev, "latency_max_us", json_real(lat[nlat - 1]));
	} else {
		json_object_set_new(ev, "latency_avg_us", json_null());
		json_object_set_new(ev, "latency_p50_us", json_null());
		json_object_set_new(ev, "latency_p90_us", json_null());
		json_object_set_new(ev, "latency_p99_us", json_null());
		json_object_set_new(ev, "latency_max_us", json_null());
	}
	ff_emit(ev);
	free(lat);
	if (total > s2xx)
		ff_warn("h2load: %.0f of %.0f requests did not succeed (%.0f failed, %.0f errored, %.0f timeout, %.0f 4xx, %.0f 5xx)",
			total - s2xx, total, failed, errored, timeout, s4xx, s5xx);
	d->have_result = 1;
	return 0;
}

int
main(int argc, char *argv[])
{
	const char *mode;
	cpu_set_t avail;
	int c;

	ff_setprog(argv[0]);
	opterr = 0;
	if (argc < 2)
		ff_usage_error(usage, "expected a mode: serve or drive");
	mode = argv[1];
	if (!strcmp(mode, "-h") || !strcmp(mode, "--help"))
		ff_usage(usage, 0);
	if (mode[0] == '-')
		ff_usage_error(usage, "unknown option '%s'", mode);
	if (strcmp(mode, "serve") && strcmp(mode, "drive"))
		ff_usage_error(usage, "unknown mode '%s' (expected serve or drive)", mode);
	optind = 2;
	while ((c = getopt_long(argc, argv, ":hw:", longopts, NULL)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case 'w':
			opt.workload = ff_workloads[ff_parse_name(usage, "workload", optarg, ff_workloads)];
			break;
		case OPT_RUN_DIR:
			opt.run_dir = optarg;
			break;
		default:
			if (!ff_take_run_opt(usage, c, optarg, &opt.run))
				ff_bad_option(usage, c, argv);
		}
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (ff_rr_opts_set(&opt.run) && !ff_workload_is_rr(opt.workload))
		ff_usage_error(usage, "--request-size, --response-size and --rate are for workloads builtin-rr and builtin-crr, not '%s'",
			       opt.workload);

	ff_signals_init();
	ff_set_cleanup(cleanup);
	ff_rundir(opt.run_dir);
	ff_cpus_available(&avail);
	have_workload_cpus = ff_cpus_workload(&avail, opt.run.cpu_limit, 2, &workload_cpus);
	ff_emit_start();
	return !strcmp(mode, "serve") ? serve() : drive();
}
