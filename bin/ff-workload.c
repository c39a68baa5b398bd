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
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
	"builtin-crr. The sizes (also for serve) and --rate are builtin-rr's and\n"
	"builtin-crr's.\n"
	"serve starts the workload's server and holds it; drive reads the\n"
	"topology event on stdin and runs the client through the relays, with an\n"
	"interval event for every --interval seconds of the window (default 1).\n"
	"With --cpu-limit, the workload runs on the CPUs the chain's --hops relays\n"
	"(default 2) leave, if any.\n"
	"--listen: the address serve's server listens on (default 127.0.0.1),\n"
	"which the server event names as its host.\n"
	"--version prints the version. --pipeline-stage (flimflam gives it to its\n"
	"stages): a signal stops it without a \"stopped by\" line; flimflam says it.\n";

enum { OPT_RUN_DIR = FF_OPT_OWN, OPT_HOPS, OPT_LISTEN };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	FF_LONGOPT_PIPELINE_STAGE,
	{ "workload", required_argument, NULL, 'w' },
	FF_RUN_LONGOPTS,
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "hops", required_argument, NULL, OPT_HOPS },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ NULL, 0, NULL, 0 }
};

/* The size of the object the HTTP servers serve. */
#define HTTP_OBJECT_BYTES 1024

static struct {
	const char *workload;
	struct ff_run_opts run;
	const char *run_dir;
	long hops;		/* the relays on CPUs of their own before ours */
	const char *listen;	/* serve's server's address */
} opt = { "builtin", FF_RUN_OPTS_DEFAULTS, NULL, 2, "127.0.0.1" };

static const struct ff_workload *wl;	/* opt.workload's row of the matrix */
static cpu_set_t workload_cpus;
static int have_workload_cpus;
static struct ff_stage stage;

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

/*
 * `root` of nginx reads $name as a variable: each '$' of the path becomes
 * ${flimflam_dollar}, which nginx-server.conf defines as '$'.
 */
static char *
nginx_script_literal(const char *s)
{
	size_t n = 0;
	const char *p;
	char *out, *q;

	for (p = s; *p; p++)
		n += *p == '$' ? sizeof("${flimflam_dollar}") - 1 : 1;
	q = out = ff_realloc(NULL, n + 1);
	for (p = s; *p; p++)
		q = *p == '$' ? stpcpy(q, "${flimflam_dollar}") : (*q = *p, q + 1);
	*q = 0;
	return out;
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
		char *docroot = run_path("docroot"), *root = nginx_script_literal(docroot);
		const char *const vars[] = {
			"DIR", dir, "LISTEN_HOST", opt.listen, "PORT", portstr, "DOCROOT", root,
			"USER", ff_user_name(), NULL
		};

		write_docroot(docroot);
		conf = ff_template_fill(tmpl, FF_CONF_NGINX, vars);
		free(root);
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

static int
start_server(struct ff_child *c, int port, char *log)
{
	char portstr[16], sizes[2][24], *argv[16], *storage[4] = { 0 }, *docroot = NULL;
	int i = 0;

	snprintf(portstr, sizeof(portstr), "%d", port);
	/* The server program's own command line. */
	if (wl->own) {
		argv[i++] = ff_helper_path(wl->server);
		argv[i++] = "--port";
		argv[i++] = portstr;
		if (strcmp(opt.listen, "127.0.0.1")) {
			argv[i++] = "--address";
			argv[i++] = (char *)opt.listen;
		}
		if (wl->request_response) {
			/* The server's framing: the sizes, the same as the client's. */
			snprintf(sizes[0], sizeof(sizes[0]), "%ld", opt.run.request_size);
			snprintf(sizes[1], sizeof(sizes[1]), "%ld", opt.run.response_size);
			argv[i++] = "--request-size";
			argv[i++] = sizes[0];
			argv[i++] = "--response-size";
			argv[i++] = sizes[1];
		}
	} else if (!strcmp(wl->server, "iperf3")) {
		argv[i++] = "iperf3";
		argv[i++] = "--server";
		argv[i++] = "--bind";
		argv[i++] = (char *)opt.listen;
		argv[i++] = "--port";
		argv[i++] = portstr;
	} else if (!strcmp(wl->server, "nghttpd")) {
		docroot = run_path("docroot");
		write_docroot(docroot);
		argv[i++] = "nghttpd";
		argv[i++] = "--no-tls";
		argv[i++] = "--address";
		argv[i++] = (char *)opt.listen;
		argv[i++] = "--htdocs";
		argv[i++] = docroot;
		argv[i++] = portstr;
	} else if (!strcmp(wl->server, "nginx")) {
		nginx_server_argv(port, argv, storage);
		i = 7;
	} else
		ff_die("workload '%s' has no code in ff-workload to start its server %s",
		       opt.workload, wl->server);
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
	json_object_set_new(ev, "host", json_string(opt.listen));
	json_object_set_new(ev, "port", json_integer(port));
	json_object_set_new(ev, "pid", json_integer(server.pid));
	json_object_set_new(ev, "run_dir", ff_json_path(ff_rundir(NULL)));
	json_object_set_new(ev, "log", ff_json_path(log));
	json_object_set_new(ev, "cpus", have_workload_cpus ?
			    json_string(ff_cpus_str(&workload_cpus)) : json_null());
	if (wl->url_path)
		json_object_set_new(ev, "path", json_string(wl->url_path));
	ff_emit(ev);
	ff_stage_end(&stage, 0);
	free(log);
	return ff_stage_hold(&stage, kids, 1);
}

/* drive */

struct drive {
	struct ff_reader client_out;	/* the builtin client's events */
	struct ff_child client;
	json_t *topology;
	const char *host, *path;
	int port;
	pid_t server_pid;		/* from serve's server event */
	double started, window_at;
	double deadline;		/* when the client has overrun */
	int window_sent, client_done, have_result, have_environment;
	char *out_file;			/* iperf3 JSON / h2load text output */
	char *log_file;			/* h2load per-request log */
	char *client_log;
};

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
static void
check_window(const char *tool, double seconds, const char *file)
{
	if (fabs(seconds - opt.run.duration) <= 0.1 * opt.run.duration + 0.05)
		return;
	ff_die_event("%s measured %.3f s, not the %ld s asked; see '%s'", tool, seconds,
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

/*
 * How long the client may run: its warmup and window, and a margin for a
 * loaded machine (connecting, the tool's own start and report): 20% of
 * that, at least 10 s.
 */
static double
client_margin(void)
{
	double margin = 0.2 * (opt.run.warmup + opt.run.duration);

	return margin > 10 ? margin : 10;
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
 * h2load's "-c, -t: ..." or "no URI ...", skipping their warnings; iperf3
 * with --json says it in its JSON's "error". Malloc'd, or NULL.
 */
static char *
client_said(const struct drive *d)
{
	char *text = ff_read_file(d->client_log, NULL), *line, *next, *r = NULL;
	json_t *doc;

	for (line = text; line && *line && !r; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		if (!strncmp(line, "Usage:", 6))
			break;	/* iperf3's help text: its error came before */
		if (line[strspn(line, " \t")] && !strstr(line, "warning"))
			r = ff_strdup(line);
	}
	free(text);
	if (!r && d->out_file && !strcmp(wl->client, "iperf3") &&
	    (doc = json_load_file(d->out_file, 0, NULL))) {
		if (ff_json_str(doc, "error"))
			r = ff_asprintf("iperf3: error - %s", ff_json_str(doc, "error"));
		json_decref(doc);
	}
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

static int start_client(struct drive *d, int out_fd);
static int finish_iperf3(struct drive *d);
static double iperf3_interval(void);
static int finish_h2load(struct drive *d);

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

static int
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
	if (start_client(&d, pipefd[1]) < 0)
		ff_die("cannot run the %s client", opt.workload);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	d.window_at = d.started + opt.run.warmup;
	d.deadline = d.started + client_allowance();

	watch_client(&d, pipefd[0]);
	if (pipefd[0] >= 0)
		forward_client(&d);
	if (!WIFEXITED(d.client.status) || WEXITSTATUS(d.client.status) != 0)
		client_failed(&d);
	if (wl->own)
		r = d.have_result ? 0 : -1;	/* its result came on the pipe */
	else if (!strcmp(wl->client, "iperf3"))
		r = finish_iperf3(&d);
	else
		r = finish_h2load(&d);
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
static void
arg_num(struct ff_argv *a, const char *name, long v)
{
	ff_argv_add(a, name);
	ff_argv_addf(a, "%ld", v);
}

static int
start_client(struct drive *d, int out_fd)
{
	struct ff_argv a = FF_ARGV_INIT;
	char *helper;
	int fd;

	/* The client program's own command line. */
	if (wl->own) {
		helper = ff_helper_path(wl->client);
		ff_argv_add(&a, helper);
		arg_num(&a, "--port", d->port);
		if (d->host && strcmp(d->host, "127.0.0.1"))
			ff_argv_addl(&a, "--host", d->host, NULL);
		ff_argv_run_opts(&a, &opt.run, 0);
		if (wl->client_option)
			ff_argv_add(&a, wl->client_option);
		if (wl->request_response)
			ff_argv_addl(&a, "--histogram-dir", ff_rundir(NULL), NULL);
		if (ff_pipeline_stage())
			ff_argv_add(&a, "--pipeline-stage");
		spawn_or_die(&d->client, "client", a.v, d->client_log, out_fd);
		ff_argv_free(&a);
		free(helper);
		return 0;
	}
	if (!strcmp(wl->client, "iperf3")) {
		/* --time excludes --omit: the measured period is exactly --duration. */
		d->out_file = run_path("iperf3-client.json");
		ff_argv_addl(&a, "iperf3", "--client", d->host, NULL);
		arg_num(&a, "--port", d->port);
		arg_num(&a, "--parallel", opt.run.jobs);
		arg_num(&a, "--time", opt.run.duration);
		arg_num(&a, "--omit", opt.run.warmup);
		ff_argv_add(&a, "--interval");
		ff_argv_addf(&a, "%.9g", iperf3_interval());
		ff_argv_addl(&a, "--json", "--logfile", d->out_file, NULL);
		spawn_or_die(&d->client, "client", a.v, d->client_log, -1);
		ff_argv_free(&a);
		return 0;
	}
	if (strcmp(wl->client, "h2load"))
		ff_die("workload '%s' has no code in ff-workload to run its client %s",
		       opt.workload, wl->client);
	d->out_file = run_path("h2load.out");
	d->log_file = run_path("h2load-requests.log");
	ff_argv_add(&a, "h2load");
	if (wl->client_option)
		ff_argv_add(&a, wl->client_option);
	arg_num(&a, "--clients", opt.run.jobs);
	arg_num(&a, "--threads", opt.run.jobs);
	arg_num(&a, "--warm-up-time", opt.run.warmup);
	arg_num(&a, "--duration", opt.run.duration);
	ff_argv_addl(&a, "--log-file", d->log_file, NULL);
	ff_argv_addf(&a, "http://%s:%d%s", d->host, d->port, d->path ? d->path : wl->url_path);
	fd = open(d->out_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		ff_die("cannot create '%s': %s", d->out_file, strerror(errno));
	spawn_or_die(&d->client, "client", a.v, d->client_log, fd);
	close(fd);
	ff_argv_free(&a);
	return 0;
}

/*
 * iperf3 reports at most every 60 s: a longer --interval is made of
 * iperf3_group() of its intervals.
 */
#define IPERF3_MAX_INTERVAL 60
static int
iperf3_group(void)
{
	return (int)ceil(opt.run.interval / IPERF3_MAX_INTERVAL - 1e-9);
}

static double
iperf3_interval(void)
{
	return opt.run.interval / iperf3_group();
}

static void
emit_interval(double t, double dt, json_int_t bytes, json_t *operations, json_t *latency)
{
	json_t *ev = ff_event("interval");

	json_object_set_new(ev, "t_s", json_real(ff_usec(t)));
	json_object_set_new(ev, "dt_s", json_real(ff_usec(dt)));
	json_object_set_new(ev, "bytes", json_integer(bytes));
	json_object_set_new(ev, "operations", operations);
	json_object_set_new(ev, "latency_us", latency);
	ff_emit(ev);
}

/*
 * iperf3's intervals of the window (not --omit's), as it reports them: its
 * clock restarts after --omit; what it counts is what the sender sent (its
 * total, not the receiver's). An interval under a tenth of the one asked
 * (a sliver as the omitted period ends) is added to the next.
 */
static void
iperf3_intervals(const json_t *doc)
{
	json_t *iv, *s;
	double t = -1, end = 0, bytes = 0;
	int n = 0, group = iperf3_group();
	size_t i;

	json_array_foreach(json_object_get(doc, "intervals"), i, iv) {
		s = json_object_get(iv, "sum");
		if (json_is_true(json_object_get(s, "omitted")))
			continue;
		if (t < 0)
			t = ff_json_num(s, "start", 0);
		end = ff_json_num(s, "end", 0);
		bytes += ff_json_num(s, "bytes", 0);
		if (end - ff_json_num(s, "start", 0) < iperf3_interval() / 10 && i + 1 < json_array_size(json_object_get(doc, "intervals")))
			continue;
		if (++n < group && i + 1 < json_array_size(json_object_get(doc, "intervals")))
			continue;
		emit_interval(t, end - t, (json_int_t)bytes, json_null(), json_null());
		t = -1;
		bytes = 0;
		n = 0;
	}
	if (t >= 0)
		emit_interval(t, end - t, (json_int_t)bytes, json_null(), json_null());
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

	/* Whole, or it was cut short (a full disk): then it holds no figures. */
	if (!doc)
		ff_die_event("iperf3's output '%s' is not whole JSON (line %d: %s; cut short: a full disk?); no figures from it",
			     d->out_file, err.line, err.text);
	error = ff_json_str(doc, "error");
	if (error)
		ff_die_event("iperf3: %s", error);
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
	iperf3_intervals(doc);
	end = json_object_get(doc, "end");
	sum = json_object_get(end, "sum_received");
	bits_per_s = ff_json_num(sum, "bits_per_second", -1);
	seconds = ff_json_num(sum, "seconds", -1);
	bytes = ff_json_num(sum, "bytes", -1);
	if (bits_per_s < 0 || seconds <= 0 || bytes < 0) {
		json_decref(doc);
		ff_die_event("iperf3's output '%s' has no end section with the receiver's summary; no figures from it",
			     d->out_file);
	}
	check_window("iperf3", seconds, d->out_file);
	if (bytes == 0) {
		json_decref(doc);
		ff_die_event("iperf3 received nothing in the window");
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

/* A successful request of h2load's log: when it started (us), its latency. */
struct req {
	double start, us;
};

static int
cmp_req(const void *a, const void *b)
{
	const struct req *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * h2load's intervals, from its requests: each in the interval of its start
 * (the first started at the window's start; one after its end is in the
 * last), latency percentiles of each, and the window's bytes shared out by
 * requests (h2load does not log them; each response is the same object),
 * so that they add up to its total.
 */
static void
h2load_intervals(struct req *r, size_t n, double seconds, double bytes)
{
	/* The intervals of the window asked; the last one ends where h2load's did. */
	int niv = ff_intervals_count(opt.run.interval, opt.run.duration), k;
	size_t i = 0, j, cum = 0;
	double *lat = ff_realloc(NULL, (n + 1) * sizeof(*lat)), given = 0;

	qsort(r, n, sizeof(*r), cmp_req);
	for (k = 0; k < niv; k++) {
		double t = ff_interval_edge(opt.run.interval, opt.run.duration, k),
		       t1 = k == niv - 1 ? fmax(t, seconds) :
			    ff_interval_edge(opt.run.interval, opt.run.duration, k + 1), share;
		json_t *l = json_null();

		for (j = 0; i < n && (k == niv - 1 || (r[i].start - r[0].start) / 1e6 < t1); i++)
			lat[j++] = r[i].us;
		cum += j;
		share = n ? round(bytes * cum / n) - given : 0;
		given += share;
		if (j) {
			qsort(lat, j, sizeof(*lat), ff_cmp_double);
			l = json_object();
			json_object_set_new(l, "p50", json_real(quantile(lat, j, 0.50)));
			json_object_set_new(l, "p90", json_real(quantile(lat, j, 0.90)));
			json_object_set_new(l, "p99", json_real(quantile(lat, j, 0.99)));
			json_object_set_new(l, "p99.9", json_real(quantile(lat, j, 0.999)));
			json_object_set_new(l, "max", json_real(lat[j - 1]));
		}
		emit_interval(t, t1 - t, (json_int_t)share, json_integer((json_int_t)j), l);
	}
	free(lat);
}

/*
 * The latencies of the successful requests, sorted, from h2load's request
 * log, and their sum; its intervals emitted (`seconds` the window, `bytes`
 * its total). The log holds a line per request of the main duration: whole
 * lines, as many 2xx as h2load counted, or it was cut short.
 */
static double *
h2load_latencies(const struct drive *d, double s2xx, size_t *n, double *sum,
		 double seconds, double bytes)
{
	struct req *reqs = NULL;
	size_t rcap = 0;
	char *logtext, *line, *next;
	double *lat = NULL;
	size_t nlat = 0, cap = 0;
	int bad = 0;

	if (!(logtext = ff_read_file(d->log_file, NULL)))
		ff_die_event("cannot read h2load's request log '%s': %s", d->log_file, strerror(errno));
	for (line = logtext; *line; line = next) {
		double start, status, us;

		next = line + strcspn(line, "\n");
		if (!*next || sscanf(line, "%lf %lf %lf", &start, &status, &us) != 3) {
			bad = 1;
			break;
		}
		*next++ = 0;
		if (status < 200 || status >= 300)
			continue;
		lat = ff_grow(lat, nlat + 1, &cap, sizeof(*lat), 65536);
		reqs = ff_grow(reqs, nlat + 1, &rcap, sizeof(*reqs), 65536);
		reqs[nlat] = (struct req){ start, us };
		lat[nlat++] = us;
		*sum += us;
	}
	free(logtext);
	if (bad || nlat != (size_t)s2xx) {
		free(lat);
		free(reqs);
		ff_die_event("h2load's request log '%s' is incomplete (%zu of the %.0f successful requests h2load counted%s: a full disk?); no latency from it",
			     d->log_file, nlat, s2xx, bad ? ", and a line cut short" : "");
	}
	h2load_intervals(reqs, nlat, seconds, bytes);
	free(reqs);
	qsort(lat, nlat, sizeof(*lat), ff_cmp_double);
	*n = nlat;
	return lat;
}

/*
 * h2load: counts from its summary; latency from the per-request log, whose
 * lines are "start-time-us<TAB>status<TAB>latency-us" for the requests of
 * the main duration.
 */
static int
finish_h2load(struct drive *d)
{
	char *text = ff_read_file(d->out_file, NULL), *p;
	double seconds = -1, rps = -1, total = 0, done = 0, succeeded = 0, failed = 0,
	       errored = 0, timeout = 0, s2xx = 0, s3xx = 0, s4xx = 0, s5xx = 0,
	       bytes = 0, *lat, sum = 0;
	size_t nlat = 0;
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
	/*
	 * Its summary ends with the latency table: every line of it must be
	 * there, or the file was cut short (a full disk) and holds no figures.
	 */
	if (rps < 0 || !(p = strstr(text, "\nrequests: ")) ||
	    sscanf(p, "\nrequests: %lf total, %*f started, %lf done, %lf succeeded, %lf failed, %lf errored, %lf timeout",
		   &total, &done, &succeeded, &failed, &errored, &timeout) != 6 ||
	    !(p = strstr(text, "\nstatus codes: ")) ||
	    sscanf(p, "\nstatus codes: %lf 2xx, %lf 3xx, %lf 4xx, %lf 5xx",
		   &s2xx, &s3xx, &s4xx, &s5xx) != 4 ||
	    !(p = strstr(text, "\ntraffic: ")) || sscanf(p, "\ntraffic: %*s (%lf) total", &bytes) != 1 ||
	    !strstr(text, "\ntime for request: ") || !(p = strstr(text, "\ntime to 1st byte: ")) ||
	    !strchr(p + 1, '\n')) {
		free(text);
		ff_die_event("h2load's output '%s' is incomplete (its summary is cut short: a full disk?); no figures from it",
			     d->out_file);
	}
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
	if (s2xx <= 0)
		ff_die_event("h2load: no request succeeded (%.0f total, %.0f failed, %.0f errored, %.0f 4xx, %.0f 5xx); see '%s'",
			     total, failed, errored, s4xx, s5xx, d->out_file);
	lat = h2load_latencies(d, s2xx, &nlat, &sum, seconds, bytes);

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
		ff_warn("h2load: %.0f of %.0f request%s did not succeed (%.0f failed, %.0f errored, %.0f timeout, %.0f 4xx, %.0f 5xx)",
			total - s2xx, total, total == 1 ? "" : "s", failed, errored, timeout, s4xx, s5xx);
	d->have_result = 1;
	return 0;
}

int
main(int argc, char *argv[])
{
	const char *mode;
	cpu_set_t avail;
	char why[256];
	int c;

	ff_setprog(argv[0]);
	/* First: a SIGTERM while the options are checked is caught, not fatal. */
	ff_signals_init();
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
		case 'w':
			opt.workload = ff_workloads[ff_parse_name(usage, "workload", optarg, ff_workloads)];
			break;
		case OPT_RUN_DIR:
			opt.run_dir = optarg;
			break;
		case OPT_HOPS:
			opt.hops = ff_parse_run_opt(usage, "--hops", optarg);
			break;
		case OPT_LISTEN:
			opt.listen = ff_parse_ipv4(usage, "--listen", optarg);
			break;
		default:
			ff_take_run_opt(usage, c, optarg, &opt.run);
		}
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (ff_rr_opts_set(&opt.run) && !ff_workload_is_rr(opt.workload))
		ff_usage_error(usage, "--request-size, --response-size and --rate are for workloads builtin-rr and builtin-crr, not '%s'",
			       opt.workload);
	if (ff_workload_limits(opt.workload, &opt.run, why, sizeof(why)) < 0)
		ff_usage_error(usage, "%s", why);
	ff_check_interval(usage, opt.run.interval, opt.run.duration);
	wl = ff_workload_find(opt.workload);

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
