/*
 * ff-topology - start a chain of relays, RN first and R1 last, in front of
 * a server.
 *
 * Reads the stream up to the `server` event (or takes --server-port),
 * starts RN aimed at the server, then each relay aimed at the next (N is
 * --hops, 2 by default), waits until R1 listens, emits `topology` and holds
 * the relays until its reader closes the pipe. Alone, `ff-topology -r nginx
 * --server-port 8080` puts a relay chain in front of any server until
 * Ctrl-C.
 *
 * --relay-role ROLE starts one relay only, for relays on hosts of their
 * own (flimflam --hosts): it relays to the host and port of the upstream's
 * `server` event, or of its `topology` event (--target-event topology, the
 * relay after it), listens on --listen, and emits a `topology` that puts
 * itself in front of the upstream's relays.
 */
#include "ff.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
	"usage: ff-topology [-r RELAY] [-p PROTOCOL] [--hops N] [--cpu-limit N]\n"
	"                   [--encapsulation legacy|lite] [--server-port PORT]\n"
	"                   [--run-dir DIR] [--config-only] [--build LABEL=PATH]\n"
	"                   [--listen ADDRESS]\n"
	"                   [--relay-role ROLE [--target-event server|topology]]\n"
	"\n"
	"Relays: skrouterd (default), nghttpx, nginx, none.\n"
	"Protocols: tcp (default), http1, http2.\n"
	"--hops N chains N relays, client -> r1 -> ... -> rN -> server (1 to 8;\n"
	"default 2; relay none has no relay, and takes no --hops).\n"
	"Without --server-port, the server's port comes from the `server` event\n"
	"on stdin. --cpu-limit pins each relay to N CPUs of its own (0: no limit).\n"
	"--encapsulation sets skrouterd's tcp encapsulation (routers 2.5 to 3.0;\n"
	"default: the router's own). --config-only writes the relays' configurations\n"
	"into the run directory, emits `config`, and starts nothing.\n"
	"--build runs the relay from PATH (a binary, or an install prefix whose sbin/\n"
	"or bin/ holds it) in that build's own environment, not the one on PATH.\n"
	"--listen: the address R1 listens on (default 127.0.0.1). --relay-role\n"
	"(r1 ... r8): only that relay (nginx, nghttpx; no --hops), in front of the\n"
	"host and port that the upstream's `server` event names (or its `topology`\n"
	"event, with --target-event topology); its `topology` lists the upstream's\n"
	"relays too.\n"
	"--version prints the version. --pipeline-stage (flimflam gives it to its\n"
	"stages): a signal stops it without a \"stopped by\" line; flimflam says it.\n";

enum { OPT_CPU_LIMIT = 256, OPT_SERVER_PORT, OPT_RUN_DIR, OPT_ENCAPSULATION, OPT_CONFIG_ONLY,
       OPT_HOPS, OPT_LISTEN, OPT_RELAY_ROLE, OPT_TARGET_EVENT };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	FF_LONGOPT_PIPELINE_STAGE,
	{ "relay", required_argument, NULL, 'r' },
	{ "protocol", required_argument, NULL, 'p' },
	{ "cpu-limit", required_argument, NULL, OPT_CPU_LIMIT },
	{ "server-port", required_argument, NULL, OPT_SERVER_PORT },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "encapsulation", required_argument, NULL, OPT_ENCAPSULATION },
	{ "config-only", no_argument, NULL, OPT_CONFIG_ONLY },
	{ "hops", required_argument, NULL, OPT_HOPS },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "relay-role", required_argument, NULL, OPT_RELAY_ROLE },
	{ "target-event", required_argument, NULL, OPT_TARGET_EVENT },
	FF_LONGOPT_BUILD,
	{ NULL, 0, NULL, 0 }
};

static struct {
	const char *relay, *protocol, *run_dir, *encapsulation, *build;
	long cpu_limit, server_port;
	int config_only;
	long hops;		/* -1: the relay's own (2; none's 0) */
	const char *listen, *relay_role, *target_event;
} opt = { "skrouterd", "tcp", NULL, NULL, NULL, 1, 0, 0, -1, "127.0.0.1", NULL, "server" };

static const char *const target_events[] = { "server", "topology", NULL };

static const char *const encapsulations[] = { "legacy", "lite", NULL };

struct link;

/* A relay of the chain, r1 (the client's) to rN (the server's). */
struct relay {
	char role[8];			/* "r1" ... "r8" */
	struct ff_child child;
	const char *listen_host, *target_host;	/* data path addresses */
	int port;			/* where it accepts the workload's traffic (0: over its link only) */
	int target_port;		/* where it sends it (0: over its link only) */
	int mgmt_port;			/* skrouterd */
	struct link *in, *out;		/* from the relay before it, to the one after; NULL at the ends */
	int ready_port;			/* what to wait for */
	cpu_set_t cpus;
	int pinned;
	char *dir, *conf;
};

/*
 * A link of the chain, R(i) -> R(i+1): `from` sends the traffic to `port`,
 * where `to` accepts it (its data port; skrouterd: its inter-router
 * listener). Each relay's configuration takes its links' parts.
 */
struct link {
	struct relay *from, *to;
	int port;
};

static struct relay relays[FF_HOPS_MAX];
static struct link links[FF_HOPS_MAX - 1];
static int nrelays;
static json_t *upstream_relays;	/* --target-event topology: the relays behind ours */
static long upstream_server_port;	/* and the server's port they relay to */
static const char *front_host = "127.0.0.1";	/* where the client connects */
static int cpus_shared;
static json_t *cpus_others;	/* other runs' relays on our CPUs, or NULL */
static char *program_path;
static const struct ff_relay *row;	/* opt.relay's row of the matrix */
static struct ff_build build;		/* the relay's build (label NULL: on PATH) */

/* The threads (workers) each relay runs: one per CPU it has, else its row's. */
static long
workers(void)
{
	return opt.cpu_limit ? opt.cpu_limit : row->threads;
}

static void
cleanup(void)
{
	ff_children_stop_all();
}

/*
 * Other flimflam runs whose relays are pinned to any of `ours`: another
 * ff-topology's children with an affinity narrower than the machine. Each
 * is {"pid": that ff-topology, "cpus": its relays' CPUs}; NULL for none.
 * Runs share nothing else, so this is the one place they would meet
 * without a word: two benches at once disturb each other's figures.
 */
static json_t *
others_on(const cpu_set_t *ours)
{
	json_t *found = NULL;
	cpu_set_t all, theirs, set;
	pid_t kids[64];
	char path[64], comm[32];
	struct dirent *de;
	DIR *proc = opendir("/proc");
	FILE *f;
	int i, n;

	if (!proc)
		return NULL;
	ff_cpus_available(&all);
	while ((de = readdir(proc))) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if (!(f = fopen(path, "r")))
			continue;
		n = fgets(comm, sizeof(comm), f) && !strcmp(comm, "ff-topology\n");
		fclose(f);
		if (!n)
			continue;
		CPU_ZERO(&theirs);
		n = ff_proc_tree(pid, kids, (int)FF_ARRAY_SIZE(kids));
		for (i = 0; i < n; i++)
			if (kids[i] != pid && sched_getaffinity(kids[i], sizeof(set), &set) == 0 &&
			    !CPU_EQUAL(&set, &all))
				CPU_OR(&theirs, &theirs, &set);
		CPU_AND(&set, &theirs, ours);
		if (!CPU_COUNT(&set))
			continue;
		if (!found)
			found = json_array();
		json_array_append_new(found, json_pack("{s:i, s:s}", "pid", (int)pid,
						       "cpus", ff_cpus_str(&theirs)));
	}
	closedir(proc);
	return found;
}

/* A template of relay-conf filled, added to `text`. */
static void
conf_part(struct ff_buf *text, const char *tmpl_name, enum ff_conf_syntax syntax,
	  const char *const vars[])
{
	char *tmpl = ff_datapath(tmpl_name), *part;

	if (!tmpl)
		ff_die("cannot find '%s'", tmpl_name);
	part = ff_template_fill(tmpl, syntax, vars);
	free(tmpl);
	if (!part)
		exit(1);
	ff_buf_addstr(text, part);
	free(part);
}

static void
write_conf(struct relay *r, const char *tmpl_name, enum ff_conf_syntax syntax,
	   const char *const vars[])
{
	struct ff_buf text = FF_BUF_INIT;

	conf_part(&text, tmpl_name, syntax, vars);
	if (ff_write_file(r->conf, text.s, 0600) < 0)
		exit(1);
	ff_buf_free(&text);
}

/*
 * nginx's stream module, for tcp: the load_module line its configuration
 * needs ("" when nginx has it built in), found once.
 */
static const char *
nginx_load_module(void)
{
	static char *line;
	char *module, *q;

	if (line || strcmp(opt.protocol, "tcp"))
		return line ? line : "";
	module = ff_env_nginx_stream_module(program_path);
	if (!module)
		ff_die("nginx's stream module is missing: install libnginx-mod-stream (Debian) or nginx-mod-stream (Fedora)");
	if (strcmp(module, "builtin")) {
		q = ff_nginx_quote(module);
		line = ff_asprintf("load_module %s;", q);
		free(q);
	} else
		line = strdup("");
	free(module);
	return line;
}

static void
configure_nginx(struct relay *r)
{
	char port[16], target[16], nworkers[16];
	const char *const vars[] = {
		"DIR", r->dir, "PORT", port, "TARGET_PORT", target,
		"LISTEN_HOST", r->listen_host, "TARGET_HOST", r->target_host,
		"WORKERS", nworkers, "USER", ff_user_name(),
		"LOAD_MODULE_LINES", nginx_load_module(), NULL
	};

	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(target, sizeof(target), "%d", r->target_port);
	snprintf(nworkers, sizeof(nworkers), "%ld", workers());
	r->conf = ff_asprintf("%s/nginx.conf", r->dir);
	write_conf(r, !strcmp(opt.protocol, "tcp") ? "relay-conf/nginx-tcp.conf" :
		   "relay-conf/nginx-http1.conf", FF_CONF_NGINX, vars);
	r->ready_port = r->port;
}

static void
configure_nghttpx(struct relay *r)
{
	char port[16], target[16], nworkers[16];
	const char *const vars[] = {
		"DIR", r->dir, "PORT", port, "TARGET_PORT", target,
		"LISTEN_HOST", r->listen_host, "TARGET_HOST", r->target_host,
		"WORKERS", nworkers,
		"BACKEND_PROTO", !strcmp(opt.protocol, "http2") ? "h2" : "http/1.1",
		NULL
	};

	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(target, sizeof(target), "%d", r->target_port);
	snprintf(nworkers, sizeof(nworkers), "%ld", workers());
	r->conf = ff_asprintf("%s/nghttpx.conf", r->dir);
	write_conf(r, "relay-conf/nghttpx.conf", FF_CONF_NGHTTPX, vars);
	r->ready_port = r->port;
}

/* Router r's configuration, from its parts (relay-conf/skrouterd-*.conf). */
static void
configure_skrouterd(struct relay *r)
{
	char port[16], target[16], nworkers[16], mgmt[16], in_port[16], out_port[16];
	int http = strcmp(opt.protocol, "tcp") != 0;
	char encap[64] = "";
	const char *adaptor = !http ? encap :
		!strcmp(opt.protocol, "http1") ? "    protocolVersion: HTTP1\n" :
		"    protocolVersion: HTTP2\n";
	const char *const vars[] = {
		"ROLE", r->role, "WORKERS", nworkers, "MANAGEMENT_PORT", mgmt, NULL
	};
	const char *const link_in[] = {
		"PORT", in_port, "FROM", r->in ? r->in->from->role : "", NULL
	};
	const char *const link_out[] = {
		"PORT", out_port, "TO", r->out ? r->out->to->role : "", NULL
	};
	const char *const adaptors[] = {
		"PORT", port, "TARGET_PORT", target, "PROTOCOL", opt.protocol,
		"LISTEN_HOST", r->listen_host, "TARGET_HOST", r->target_host,
		"LISTENER", http ? "httpListener" : "tcpListener",
		"CONNECTOR", http ? "httpConnector" : "tcpConnector",
		"ADAPTOR_LINES", adaptor, NULL
	};
	struct ff_buf text = FF_BUF_INIT;

	if (opt.encapsulation)
		snprintf(encap, sizeof(encap), "    encapsulation: %s\n", opt.encapsulation);
	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(target, sizeof(target), "%d", r->target_port);
	snprintf(nworkers, sizeof(nworkers), "%ld", workers());
	snprintf(mgmt, sizeof(mgmt), "%d", r->mgmt_port);
	snprintf(in_port, sizeof(in_port), "%d", r->in ? r->in->port : 0);
	snprintf(out_port, sizeof(out_port), "%d", r->out ? r->out->port : 0);
	r->conf = ff_asprintf("%s/skrouterd.conf", r->dir);
	conf_part(&text, "relay-conf/skrouterd-router.conf", FF_CONF_SKROUTERD, vars);
	if (r->in)
		conf_part(&text, "relay-conf/skrouterd-link-listener.conf", FF_CONF_SKROUTERD, link_in);
	if (r->out)
		conf_part(&text, "relay-conf/skrouterd-link-connector.conf", FF_CONF_SKROUTERD, link_out);
	if (!r->in)
		conf_part(&text, "relay-conf/skrouterd-in.conf", FF_CONF_SKROUTERD, adaptors);
	if (!r->out)
		conf_part(&text, "relay-conf/skrouterd-out.conf", FF_CONF_SKROUTERD, adaptors);
	if (ff_write_file(r->conf, text.s, 0600) < 0)
		exit(1);
	ff_buf_free(&text);
	/*
	 * A router past r1 is ready when the one before it can reach it; r1
	 * when its adaptor listens, which it does once the route through the
	 * whole chain to the last router's connector exists.
	 */
	r->ready_port = r->in ? r->in->port : r->port;
}

/* A router's own ports: its management; only r1 takes the client's traffic, only rN sends it on. */
static void
ports_skrouterd(struct relay *r)
{
	r->mgmt_port = ff_free_port();
	if (r->in)
		r->port = 0;
	if (r->out)
		r->target_port = 0;
}

/* The link R(i) -> R(i+1): an inter-router connection to a listener of its own. */
static void
link_skrouterd(struct link *l)
{
	l->port = ff_free_port();
}

static int
args_nginx(struct relay *r, char *argv[])
{
	argv[0] = "-p";
	argv[1] = r->dir;
	argv[2] = "-c";
	argv[3] = r->conf;
	argv[4] = "-e";
	argv[5] = ff_asprintf("%s/error.log", r->dir);
	return 6;
}

static int
args_nghttpx(struct relay *r, char *argv[])
{
	argv[0] = ff_asprintf("--conf=%s", r->conf);
	return 1;
}

static int
args_skrouterd(struct relay *r, char *argv[])
{
	argv[0] = "--config";
	argv[1] = r->conf;
	return 2;
}

/*
 * Each relay's own code, beside its row of the matrix (ff_matrix.c): its
 * ports beyond the data path, per relay and per link, its configuration,
 * its command line after the program, and whether the Proton library it
 * loaded belongs in the environment. A relay with processes has an entry
 * here.
 */
static const struct relay_code {
	const char *relay;
	void (*ports)(struct relay *r);	/* NULL: the data ports only */
	void (*link)(struct link *l);	/* NULL: the link is the next relay's data port */
	void (*configure)(struct relay *r);
	int (*args)(struct relay *r, char *argv[]);
	int proton;
} relay_codes[] = {
	{ "skrouterd", ports_skrouterd, link_skrouterd, configure_skrouterd, args_skrouterd, 1 },
	{ "nghttpx", NULL, NULL, configure_nghttpx, args_nghttpx, 0 },
	{ "nginx", NULL, NULL, configure_nginx, args_nginx, 0 },
};

static const struct relay_code *
relay_code(void)
{
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(relay_codes); i++)
		if (!strcmp(relay_codes[i].relay, opt.relay))
			return &relay_codes[i];
	ff_die("relay '%s' has no code in ff-topology to configure and start it", opt.relay);
}

static int
start_relay(struct relay *r)
{
	char *log = ff_asprintf("%s/%s.log", ff_rundir(NULL), r->role), *argv[8];

	/* Each attempt's log alone: it tells a lost port from a failure. */
	if (truncate(log, 0) < 0 && errno != ENOENT)
		ff_die("cannot truncate '%s': %s", log, strerror(errno));
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	char role[32];
	int i = 0;

	argv[i++] = program_path;
	i += relay_code()->args(r, argv + i);
	argv[i] = NULL;
	o.log = log;
	o.cpus = r->pinned ? &r->cpus : NULL;
	o.dir = r->dir;
	o.env = build.label ? build.env : NULL;	/* the build's own, never ours */
	snprintf(role, sizeof(role), "%s (%s)", r->role, opt.relay);
	if (ff_spawn(&r->child, role, argv, &o) < 0)
		ff_die("cannot start %s", r->role);
	free(log);
	return ff_wait_listen(&r->child, r->ready_port, row->start_seconds);
}

static json_t *
relay_json(struct relay *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "role", json_string(r->role));
	json_object_set_new(o, "address", json_string(r->listen_host));
	json_object_set_new(o, "program", json_string(opt.relay));
	json_object_set_new(o, "path", ff_json_path(program_path));
	json_object_set_new(o, "pid", json_integer(r->child.pid));
	json_object_set_new(o, "port", json_integer(r->port));
	json_object_set_new(o, "target_port", json_integer(r->target_port));
	json_object_set_new(o, "cpus", r->pinned ? json_string(ff_cpus_str(&r->cpus)) : json_null());
	json_object_set_new(o, "config", ff_json_path(r->conf));
	json_object_set_new(o, "log", ff_json_path(r->child.log));
	json_object_set_new(o, "management_port",
			    r->mgmt_port ? json_integer(r->mgmt_port) : json_null());
	return o;
}

/*
 * The chain's ports and links for one attempt: each relay's data port, RN
 * aimed at the server and each other relay at the next over their link;
 * then the relay's own (code->ports, code->link).
 */
static void
chain_ports(const struct relay_code *code, const char *server_host, int server_port)
{
	int i;

	for (i = nrelays - 1; i >= 0; i--) {
		relays[i].port = ff_free_port();
		relays[i].target_port = i == nrelays - 1 ? server_port : relays[i + 1].port;
		relays[i].listen_host = i ? "127.0.0.1" : opt.listen;
		relays[i].target_host = i == nrelays - 1 ? server_host : "127.0.0.1";
	}
	for (i = 0; i + 1 < nrelays; i++) {
		links[i].port = relays[i + 1].port;
		if (code->link)
			code->link(&links[i]);
	}
	for (i = 0; i < nrelays; i++)
		if (code->ports)
			code->ports(&relays[i]);
}

/*
 * Each relay's CPUs: slot i of --cpu-limit CPUs for r(i+1); with more
 * relays than there are CPUs for, the slots wrap and share (cpus_shared).
 * A relay alone (--relay-role) takes slot 0 of its host's.
 */
static void
place_relays(void)
{
	cpu_set_t avail, ours;
	int i;

	if (opt.cpu_limit <= 0)
		return;
	ff_cpus_available(&avail);
	CPU_ZERO(&ours);
	for (i = 0; i < nrelays; i++) {
		if (!ff_cpus_slot(&avail, (int)opt.cpu_limit, i, &relays[i].cpus))
			cpus_shared = 1;
		relays[i].pinned = 1;
		CPU_OR(&ours, &ours, &relays[i].cpus);
	}
	/* The topology event says so; flimflam's summary words it. */
	cpus_others = opt.config_only ? NULL : others_on(&ours);
}

/*
 * Start RN, then each relay before it down to R1 (or the one relay of
 * --relay-role); return R1's port (the client's target).
 */
static int
start_relays(const char *server_host, int server_port)
{
	const struct relay_code *code;
	int i;

	if (!nrelays) {
		front_host = server_host;	/* relay none: the client goes to the server */
		return server_port;
	}
	front_host = opt.listen;
	code = relay_code();
	for (i = 0; i < nrelays; i++) {
		snprintf(relays[i].role, sizeof(relays[i].role), "r%d", i + 1);
		if (opt.relay_role)
			snprintf(relays[i].role, sizeof(relays[i].role), "%s", opt.relay_role);
		relays[i].in = i ? &links[i - 1] : NULL;
		relays[i].out = i + 1 < nrelays ? &links[i] : NULL;
		if (i + 1 < nrelays)
			links[i] = (struct link){ &relays[i], &relays[i + 1], 0 };
	}
	place_relays();
	for (int attempt = 0;; attempt++) {
		struct relay *r, *failed = NULL;
		int lost;

		chain_ports(code, server_host, server_port);
		for (i = nrelays - 1; i >= 0; i--) {
			r = &relays[i];
			free(r->dir);
			free(r->conf);
			r->dir = ff_asprintf("%s/%s", ff_rundir(NULL), r->role);
			if (ff_mkdirs(r->dir, 0700) < 0)
				ff_die("cannot create '%s': %s", r->dir, strerror(errno));
			code->configure(r);
		}
		if (opt.config_only)
			break;
		/* From the server back: each relay's next one is up when it starts. */
		for (i = nrelays - 1; i >= 0 && !failed; i--)
			if (start_relay(&relays[i]) != 0)
				failed = &relays[i];
		if (!failed)
			break;
		if (ff_signalled())
			ff_exit_signalled();
		ff_children_stop_all();
		lost = !failed->child.pid || ff_child_lost_port(&failed->child);
		if (failed->child.exited && !(lost && attempt < 4))
			ff_child_report(&failed->child);
		if (!lost || attempt == 4)
			ff_die("the %s relays did not start; their logs are in '%s'",
			       opt.relay, ff_rundir(NULL));
		ff_info("%s lost its port to another program; trying other ports", failed->role);
	}
	return relays[0].port;
}

/*
 * The environment travels with every result, with the Proton library the
 * running router actually loaded. A child collects it from the stage's
 * start, while the server and the relays start, and `environment` follows
 * `topology`: its probes (programs run for their versions, 30 to 80 ms of
 * CPU) are then over before a warmup of a second ends. With no warmup at
 * all, `ff-workload drive` waits for `environment` before it starts the
 * client: the probes ran inside such windows (--warmup 0: 1% of one CPU
 * over a 2 s window, bench/owncpu.sh). Waiting here instead cost every run
 * over relay none 20 to 70 ms of turnaround.
 */
static pid_t env_pid = -1;
static int env_fd = -1;

/*
 * In the collecting child: the build is the relay the environment names,
 * its directory (or a link to it, by the program's name, in the run
 * directory) first on PATH, with the build's own libraries.
 */
static void
env_of_build(void)
{
	const char *base = strrchr(build.path, '/') + 1, *path = getenv("PATH");
	char *dir, *link;

	if (!strcmp(base, row->program)) {
		dir = ff_strdup(build.path);
		*strrchr(dir, '/') = 0;
	} else {
		dir = ff_asprintf("%s/build-bin", ff_rundir(NULL));
		link = ff_asprintf("%s/%s", dir, row->program);
		if (ff_mkdirs(dir, 0700) < 0 || (symlink(build.path, link) < 0 && errno != EEXIST))
			ff_debug("cannot link '%s' as '%s': %s", build.path, link, strerror(errno));
		free(link);
	}
	setenv("PATH", path ? ff_asprintf("%s:%s", dir, path) : dir, 1);
	ff_build_env_enter(&build);
}

static void
env_start(void)
{
	int fds[2], null;
	json_t *env;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return;		/* then collected in line */
	env_pid = fork();
	if (env_pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (env_pid > 0) {
		close(fds[1]);
		env_fd = fds[0];
		return;
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(null, 1);	/* not the stream */
	if (build.label)
		env_of_build();
	env = ff_env_collect();
	_exit(json_dumpfd(env, fds[1], JSON_COMPACT) == 0 ? 0 : 1);
}

static json_t *
env_finish(void)
{
	json_t *env = NULL;
	json_error_t err;

	if (env_fd >= 0) {
		env = json_loadfd(env_fd, 0, &err);
		close(env_fd);
		env_fd = -1;
		waitpid(env_pid, NULL, 0);
	}
	if (ff_signalled())
		ff_exit_signalled();
	return json_is_object(env) ? env : ff_env_collect();
}

static void
emit_environment(json_t *env)
{
	json_t *ev = ff_event("environment");
	char *proton = NULL;

	if (nrelays && relay_code()->proton)
		proton = ff_env_proton_maps(relays[0].child.pid);
	json_object_update(ev, env);
	json_decref(env);
	json_object_set_new(ev, "proton_library", ff_json_path(proton));
	free(proton);
	ff_emit(ev);
}

/*
 * Up to the `server` event (or, --target-event topology, the upstream
 * relay's `topology`, which ours replaces): the host and port to relay to.
 */
static int
take_server(struct ff_stage *s, char **host)
{
	const char *workload;
	char why[512];
	int port = 0;
	json_t *ev;

	while (!port) {
		while (!port && (ev = ff_stage_next(s))) {
			if (!strcmp(ff_event_name(ev), "topology") && !strcmp(opt.target_event, "topology")) {
				port = (int)ff_json_num(ev, "port", 0);
				if (port <= 0)
					ff_die_event("the upstream's topology event has no port");
				*host = ff_strdup(ff_json_str(ev, "host") ? ff_json_str(ev, "host") : "127.0.0.1");
				upstream_relays = json_incref(json_object_get(ev, "relays"));
				upstream_server_port = (long)ff_json_num(ev, "server_port", 0);
				json_decref(ev);
				break;
			}
			if (!strcmp(ff_event_name(ev), "server") && strcmp(opt.target_event, "server")) {
				ff_emit(ev);
				continue;
			}
			if (!strcmp(ff_event_name(ev), "server")) {
				port = (int)ff_json_num(ev, "port", 0);
				*host = ff_strdup(ff_json_str(ev, "host") ? ff_json_str(ev, "host") : "127.0.0.1");
				workload = ff_json_str(ev, "workload");
				if (workload && !ff_carries(workload, opt.relay, opt.protocol,
							    NULL, NULL, why, sizeof(why)))
					ff_die_event("%s (these work: %s)", why,
						     ff_combos_for(workload, NULL));
				if (port <= 0)
					ff_die_event("the server event has no port");
			}
			ff_emit(ev);
		}
		if (!port && s->ended)
			ff_die_event("the stream ended without a %s event", opt.target_event);
		if (!port)
			ff_stage_wait(s, NULL, 0, -1);
	}
	return port;
}

/* The options into `opt`; a usage error for what cannot be. */
static void
parse_args(int argc, char *argv[])
{
	int c;

	opterr = 0;
	while ((c = ff_getopt(argc, argv, ":hr:p:", longopts, usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(usage, 0);
		case 'r':
			opt.relay = ff_relays[ff_parse_name(usage, "relay", optarg, ff_relays)];
			break;
		case 'p':
			opt.protocol = ff_protocols[ff_parse_name(usage, "protocol", optarg, ff_protocols)];
			break;
		case OPT_CPU_LIMIT:
			opt.cpu_limit = ff_parse_run_opt(usage, "--cpu-limit", optarg);
			break;
		case OPT_SERVER_PORT:
			opt.server_port = ff_parse_long(usage, "--server-port", optarg, 1, 65535);
			break;
		case OPT_RUN_DIR:
			opt.run_dir = optarg;
			break;
		case OPT_CONFIG_ONLY:
			opt.config_only = 1;
			break;
		case OPT_HOPS:
			opt.hops = ff_parse_run_opt(usage, "--hops", optarg);
			break;
		case FF_OPT_BUILD:
			if (opt.build)
				ff_usage_error(usage, "--build is given twice: the relays run one build");
			opt.build = optarg;
			break;
		case OPT_ENCAPSULATION:
			opt.encapsulation = encapsulations[ff_parse_name(usage, "encapsulation", optarg, encapsulations)];
			break;
		case OPT_LISTEN: {
			struct in_addr in;

			if (ff_inet_addr(optarg, &in) < 0)
				ff_usage_error(usage, "--listen: '%s' is not an IPv4 address", optarg);
			opt.listen = optarg;
			break;
		}
		case OPT_RELAY_ROLE: {
			char *end;
			long k = optarg[0] == 'r' && optarg[1] >= '1' && optarg[1] <= '9' ?
				strtol(optarg + 1, &end, 10) : 0;

			if (!k || *end || k > FF_HOPS_MAX)
				ff_usage_error(usage, "--relay-role: '%s' is not a relay's role (r1 ... r%d)",
					       optarg, FF_HOPS_MAX);
			opt.relay_role = optarg;
			break;
		}
		case OPT_TARGET_EVENT:
			opt.target_event = target_events[ff_parse_name(usage, "target event", optarg, target_events)];
			break;
		}
	if (!opt.relay_role && strcmp(opt.target_event, "server"))
		ff_usage_error(usage, "--target-event is for --relay-role");
	if (opt.relay_role && opt.server_port && strcmp(opt.target_event, "server"))
		ff_usage_error(usage, "--server-port names the server: it goes with --target-event server");
	if (opt.relay_role && opt.hops >= 0)
		ff_usage_error(usage, "--relay-role starts one relay: --hops is for a chain");
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
}

/*
 * Before anything starts: the relay carries the protocol, the CPUs are
 * there, the relay's program is on PATH (program_path), usable, and its
 * build can take what was asked.
 */
static void
check_relay(void)
{
	char why[512];

	row = ff_relay_find(opt.relay);
	if (!ff_carries(NULL, opt.relay, opt.protocol, NULL, NULL, why, sizeof(why)))
		ff_usage_error(usage, "%s (it works with: %s)", why, ff_combos_for(NULL, opt.relay));
	/* A relay with ports of its own beyond the data path (skrouterd's links) is a chain's. */
	if (opt.relay_role && (!row->processes || relay_code()->ports || relay_code()->link))
		ff_usage_error(usage, "--relay-role starts one relay alone, and relay '%s' cannot be (these can: nginx, nghttpx)",
			       opt.relay);
	if (opt.relay_role)
		opt.hops = 1;
	if (opt.hops < 0)
		opt.hops = ff_relay_hops(opt.relay);
	if (!ff_hops_fit(opt.relay, opt.hops, why, sizeof(why)))
		ff_usage_error(usage, "%s", why);
	nrelays = (int)opt.hops;
	if (opt.cpu_limit > 0) {
		cpu_set_t avail;
		int n = ff_cpus_available(&avail);

		if (opt.cpu_limit > n)
			ff_usage_error(usage, "--cpu-limit: %ld is more than the %d CPU%s this process may use",
				       opt.cpu_limit, n, n == 1 ? "" : "s");
	}
	if (opt.build) {
		if (ff_build_parse(opt.build, opt.relay, &build, why, sizeof(why)) < 0)
			ff_fail(2, "%s", why);
		program_path = ff_strdup(build.path);
	} else if (row->program) {
		program_path = ff_which(row->program);
		if (!program_path)
			ff_die("relay '%s' needs %s, which is not on PATH", opt.relay, row->program);
	}
	if (opt.encapsulation && !row->encapsulation)
		ff_usage_error(usage, "--encapsulation is for relay skrouterd");
	if (program_path && !opt.config_only && row->check && !opt.build &&
	    row->check(program_path, why, sizeof(why)) < 0)
		ff_die("%s", why);	/* a build's was checked with it */
	if (program_path && !opt.build && !opt.config_only)
		ff_build_at(NULL, program_path, opt.relay, &build, why, sizeof(why));
	if (program_path) {
		void *saved = ff_build_env_enter(&build);
		int can = ff_carries(NULL, opt.relay, opt.protocol, program_path,
				     opt.encapsulation, why, sizeof(why));

		ff_build_env_leave(&build, saved);

		if (can < 0)
			ff_die("%s", why);
		if (!can)
			ff_usage_error(usage, "%s", why);
	}
}

/* --config-only: the `config` event naming each relay's configuration. */
static void
emit_config(void)
{
	json_t *ev = ff_event("config"), *list = json_array();

	json_object_set_new(ev, "relay", json_string(opt.relay));
	json_object_set_new(ev, "protocol", json_string(opt.protocol));
	json_object_set_new(ev, "hops", json_integer(nrelays));
	for (int i = 0; i < nrelays; i++)
		json_array_append_new(list, json_pack("{s:s,s:o}", "role", relays[i].role,
						      "config", ff_json_path(relays[i].conf)));
	json_object_set_new(ev, "relays", list);
	ff_emit(ev);
}

/* The `topology` event: where the workload connects, and the relays. */
static void
emit_topology(int port, int server_port)
{
	json_t *ev = ff_event("topology"), *list = json_array();

	json_object_set_new(ev, "relay", json_string(opt.relay));
	json_object_set_new(ev, "protocol", json_string(opt.protocol));
	json_object_set_new(ev, "cpu_limit", json_integer(opt.cpu_limit));
	json_object_set_new(ev, "host", json_string(front_host));
	json_object_set_new(ev, "port", json_integer(port));
	/* The chain's server: behind the upstream's relays, when ours is in front of them. */
	json_object_set_new(ev, "server_port", json_integer(upstream_relays ? upstream_server_port : server_port));
	for (int i = 0; i < nrelays; i++)
		json_array_append_new(list, relay_json(&relays[i]));
	if (upstream_relays)
		json_array_extend(list, upstream_relays);
	/* The whole chain's: the upstream's relays with ours (--relay-role). */
	json_object_set_new(ev, "hops", json_integer((json_int_t)json_array_size(list)));
	json_object_set_new(ev, "relays", list);
	/* The relay build measured, with or without --build. */
	json_object_set_new(ev, "build", nrelays && build.path ?
			    ff_build_json(&build, relays[0].child.pid) : json_null());
	json_object_set_new(ev, "cpus_shared", json_boolean(cpus_shared));
	json_object_set_new(ev, "cpus_other_runs", cpus_others ? json_incref(cpus_others) : json_null());
	json_object_set_new(ev, "run_dir", ff_json_path(ff_rundir(NULL)));
	ff_emit(ev);
}

/* The rest of the upstream, if there is one, up to its end; then ours. */
static void
forward_upstream(struct ff_stage *s)
{
	json_t *ev;

	for (;;) {
		while ((ev = ff_stage_next(s)))
			ff_emit(ev);
		if (opt.server_port || s->ended)
			break;
		ff_stage_wait(s, NULL, 0, -1);
	}
	ff_stage_end(s, 0);
}

int
main(int argc, char *argv[])
{
	static struct ff_stage stage;
	struct ff_child *kids[FF_HOPS_MAX];
	char *server_host = NULL;
	int server_port, port, i;

	ff_setprog(argv[0]);
	parse_args(argc, argv);
	check_relay();

	/* A connection per job: what we start inherits the limit, raised. */
	ff_raise_nofile(LONG_MAX);
	ff_signals_init();
	ff_set_cleanup(cleanup);
	ff_rundir(opt.run_dir);
	/* With --server-port, stdin is not a stream (a terminal, say). */
	ff_stage_begin(&stage, !opt.server_port);
	if (!opt.config_only)
		env_start();

	server_port = opt.server_port ? opt.server_port : take_server(&stage, &server_host);
	port = start_relays(server_host ? server_host : "127.0.0.1", server_port);
	if (opt.config_only) {
		emit_config();
		forward_upstream(&stage);
		return ff_finish();
	}
	emit_topology(port, server_port);
	emit_environment(env_finish());
	/* Hold the relays until the reader is done. */
	forward_upstream(&stage);
	for (i = 0; i < nrelays; i++)
		kids[i] = &relays[i].child;
	return ff_stage_hold(&stage, kids, nrelays);
}
