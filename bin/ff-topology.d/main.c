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
 * relay after it; a router links to its `link_port`), listens on --listen
 * (past r1, for the link from the relay before it), and emits a `topology`
 * that puts itself in front of the upstream's relays. With --tls, its
 * certificates are --tls-certs's, made by flimflam for the whole chain.
 */
#include "ff-topology.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

const char usage[] =
	"usage: ff-topology [-r RELAY] [-p PROTOCOL] [--hops N] [--cpu-limit N]\n"
	"                   [--workers N]\n"
	"                   [--encapsulation legacy|lite] [--server-port PORT]\n"
	"                   [--run-dir DIR] [--config-only] [--build LABEL=PATH]\n"
	"                   [--tls] [--listen ADDRESS] [--relay-cmd COMMAND]\n"
	"                   [--relay-role ROLE [--target-event server|topology]\n"
	"                    [--tls-certs DIR]]\n"
	"\n"
	"Relays: skrouterd (default), nghttpx, nginx, haproxy, cmd, none.\n"
	"Protocols: tcp (default), http1, http2.\n"
	"--hops N chains N relays, client -> r1 -> ... -> rN -> server (1 to 8;\n"
	"default 2; relay none has no relay, and takes no --hops).\n"
	"Without --server-port, the server's port comes from the `server` event\n"
	"on stdin. --cpu-limit pins each relay to N CPUs of its own (0: no limit).\n"
	"--workers N: each relay's worker threads or processes (skrouterd, nghttpx,\n"
	"nginx, haproxy; default: one per CPU of --cpu-limit, else the relay's own).\n"
	"--encapsulation sets skrouterd's tcp encapsulation (routers 2.5 to 3.0;\n"
	"default: the router's own). --config-only writes the relays' configurations\n"
	"into the run directory, emits `config`, and starts nothing. --tls: each link\n"
	"between relays (r1 to r2, ..., to rN) is mutual TLS, with certificates made\n"
	"for the run (openssl); what each link negotiated is in `topology`.\n"
	"--build runs the relay from PATH (a binary, or an install prefix whose sbin/\n"
	"or bin/ holds it) in that build's own environment, not the one on PATH.\n"
	"--listen: the address R1 listens on (default 127.0.0.1). --relay-role\n"
	"(r1 ... r8): only that relay (no --hops), in front of the host and port\n"
	"that the upstream's `server` event names (or its `topology` event, with\n"
	"--target-event topology: skrouterd links to that router's link_port);\n"
	"past r1, the relay before it links to --listen. Its `topology` lists the\n"
	"upstream's relays too. --tls-certs DIR (with --relay-role and --tls): the\n"
	"relay's ROLE.crt and ROLE.key and the chain's ca.crt, used where they are.\n"
	"--relay-cmd COMMAND (relay cmd): the program each relay runs, as words\n"
	"(quotes group, no shell), with {listen_host}, {listen_port} (or {listen},\n"
	"HOST:PORT) and {upstream_host}, {upstream_port} (or {upstream}) filled in.\n"
	"--version prints the version. --pipeline-stage (flimflam gives it to its\n"
	"stages): a signal stops it without a \"stopped by\" line; flimflam says it.\n";

enum { OPT_CPU_LIMIT = 256, OPT_SERVER_PORT, OPT_RUN_DIR, OPT_ENCAPSULATION, OPT_CONFIG_ONLY,
       OPT_LISTEN, OPT_RELAY_ROLE, OPT_TARGET_EVENT, OPT_TLS_CERTS, OPT_WORKERS };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	FF_LONGOPT_VERSION,
	FF_LONGOPT_PIPELINE_STAGE,
	{ "relay", required_argument, NULL, 'r' },
	{ "protocol", required_argument, NULL, 'p' },
	{ "cpu-limit", required_argument, NULL, OPT_CPU_LIMIT },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "server-port", required_argument, NULL, OPT_SERVER_PORT },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "encapsulation", required_argument, NULL, OPT_ENCAPSULATION },
	{ "config-only", no_argument, NULL, OPT_CONFIG_ONLY },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "relay-role", required_argument, NULL, OPT_RELAY_ROLE },
	{ "target-event", required_argument, NULL, OPT_TARGET_EVENT },
	FF_CHAIN_LONGOPTS,
	{ "tls-certs", required_argument, NULL, OPT_TLS_CERTS },
	{ NULL, 0, NULL, 0 }
};

struct topology_opts opt = {
	.protocol = "tcp", .cpu_limit = 1, .hops = -1, .listen = "127.0.0.1",
	.target_event = "server",
};

static const char *const target_events[] = { "server", "topology", NULL };

static const char *const encapsulations[] = { "legacy", "lite", NULL };

struct relay relays[FF_HOPS_MAX];
struct link links[FF_HOPS_MAX - 1];
int nrelays;
/*
 * --relay-role: the relay before ours (its role), and the one after it
 * (--target-event topology: its role, address, and nginx's TLS proof port,
 * from its topology event).
 */
struct relay prev_relay, next_relay;
static json_t *upstream_relays;	/* --target-event topology: the relays behind ours */
static long upstream_server_port;	/* and the server's port they relay to */
char *program_path;
const struct ff_relay *row;
const struct relay_driver *drv;
struct ff_build build;

/* The threads (workers) each relay runs: --workers, else one per CPU it has, else its row's. */
long
workers(void)
{
	return ff_relay_workers(row->name, opt.workers, opt.cpu_limit);
}

static void
cleanup(void)
{
	ff_children_stop_all();
}

static json_t *
relay_json(struct relay *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "role", json_string(r->role));
	json_object_set_new(o, "address", json_string(r->listen_host));
	json_object_set_new(o, "program", json_string(opt.relay));
	/* Relay cmd: the command it runs, as given (--relay-cmd). */
	if (opt.relay_cmd)
		json_object_set_new(o, "command", ff_json_text(opt.relay_cmd));
	json_object_set_new(o, "path", ff_json_path(program_path));
	json_object_set_new(o, "pid", json_integer(r->child.pid));
	json_object_set_new(o, "port", json_integer(r->port));
	json_object_set_new(o, "target_port", json_integer(r->target_port));
	json_object_set_new(o, "cpus", r->pinned ? json_string(ff_cpus_str(&r->cpus)) : json_null());
	json_object_set_new(o, "config", ff_json_path(r->conf));
	json_object_set_new(o, "log", ff_json_path(r->child.log));
	json_object_set_new(o, "management_port",
			    r->mgmt_port ? json_integer(r->mgmt_port) : json_null());
	/* --tls, a driver with tls_ports (nginx over tcp): where the relay before it proves their link. */
	json_object_set_new(o, "tls_proof_port", r->proof_port ? json_integer(r->proof_port) : json_null());
	return o;
}

/*
 * Up to the `server` event (or, --target-event topology, the upstream
 * relay's `topology`, which ours replaces): the host and port to relay to.
 */
static int
take_server(struct ff_stage *s, char **host)
{
	const char *workload;
	struct ff_buf why = FF_BUF_INIT;
	int port = 0;
	json_t *ev;

	while (!port) {
		while (!port && (ev = ff_stage_next(s))) {
			if (!strcmp(ff_event_name(ev), "topology") && !strcmp(opt.target_event, "topology")) {
				json_t *next = json_array_get(json_object_get(ev, "relays"), 0);

				/* A router links to the next one's inter-router listener, not to its data port. */
				port = (int)ff_json_num(ev, drv->link ? "link_port" : "port", 0);
				if (port <= 0)
					ff_die_event("the upstream's topology event has no %s",
						     drv->link ? "link_port (a router's inter-router listener, past r1)" : "port");
				if (strcmp(ff_json_str_or(ev, "relay", ""), opt.relay))
					ff_die_event("the upstream's topology event is relay '%s's, and this one is '%s'",
						     ff_json_str_or(ev, "relay", "?"), opt.relay);
				*host = ff_strdup(ff_json_str_or(ev, "host", "127.0.0.1"));
				next_relay.listen_host = *host;
				next_relay.proof_port = (int)ff_json_num(next, "tls_proof_port", 0);
				upstream_relays = json_incref(json_object_get(ev, "relays"));
				upstream_server_port = (long)ff_json_num(ev, "server_port", 0);
				if (json_is_array(json_object_get(ev, "tls_links")))
					upstream_tls_links = json_incref(json_object_get(ev, "tls_links"));
				if (opt.tls && !json_is_true(json_object_get(ev, "tls")))
					ff_die_event("--tls: the upstream's relays have plain links (its topology says tls false)");
				json_decref(ev);
				break;
			}
			if (!strcmp(ff_event_name(ev), "server") && strcmp(opt.target_event, "server")) {
				ff_emit(ev);
				continue;
			}
			if (!strcmp(ff_event_name(ev), "server")) {
				port = (int)ff_json_num(ev, "port", 0);
				*host = ff_strdup(ff_json_str_or(ev, "host", "127.0.0.1"));
				workload = ff_json_str(ev, "workload");
				if (workload && !ff_carries(workload, opt.relay, opt.protocol,
							    NULL, NULL, &why))
					ff_die_event("%s (these work: %s)", why.s,
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

static void args_fit(void);

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
		case OPT_WORKERS:
			opt.workers = ff_parse_run_opt(usage, "--workers", optarg);
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
		case FF_OPT_HOPS:
			opt.hops = ff_parse_run_opt(usage, "--hops", optarg);
			break;
		case FF_OPT_TLS:
			opt.tls = 1;
			break;
		case FF_OPT_BUILD:
			if (opt.build)
				ff_usage_error(usage, "--build is given twice: the relays run one build");
			opt.build = optarg;
			break;
		case OPT_ENCAPSULATION:
			opt.encapsulation = encapsulations[ff_parse_name(usage, "encapsulation", optarg, encapsulations)];
			break;
		case OPT_LISTEN:
			opt.listen = ff_parse_ipv4(usage, "--listen", optarg);
			break;
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
		case OPT_TLS_CERTS:
			if (!*optarg)
				ff_usage_error(usage, "--tls-certs: expected a directory, not ''");
			opt.tls_certs = optarg;
			break;
		case FF_OPT_RELAY_CMD:
			opt.relay_cmd = optarg;
			break;
		}
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (!opt.relay)
		opt.relay = ff_relays[0];	/* the matrix's first */
	args_fit();
}

/* The options that go together, or not. */
static void
args_fit(void)
{
	if (!opt.relay_role && strcmp(opt.target_event, "server"))
		ff_usage_error(usage, "--target-event is for --relay-role");
	if (opt.relay_role && opt.server_port && strcmp(opt.target_event, "server"))
		ff_usage_error(usage, "--server-port names the server: it goes with --target-event server");
	if (opt.relay_role && opt.hops >= 0)
		ff_usage_error(usage, "--relay-role starts one relay: --hops is for a chain");
	if (opt.relay_role && opt.tls && !opt.tls_certs)
		ff_usage_error(usage, "--relay-role --tls takes the chain's certificates from --tls-certs DIR (one CA for every relay's)");
	if (opt.tls_certs && !(opt.relay_role && opt.tls))
		ff_usage_error(usage, "--tls-certs is for --relay-role with --tls");
}

/* Before anything starts: the chain's shape (hops, CPUs, what --tls can be). */
static void
check_chain(void)
{
	struct ff_buf why = FF_BUF_INIT;

	if (!ff_carries(NULL, opt.relay, opt.protocol, NULL, NULL, &why))
		ff_usage_error(usage, "%s (it works with: %s)", why.s, ff_combos_for(NULL, opt.relay));
	if (opt.relay_role && !row->processes)
		ff_usage_error(usage, "--relay-role starts one relay, and relay '%s' has none", opt.relay);
	if (opt.relay_role && opt.tls && ff_relay_has(opt.relay, FF_RELAY_TLS) &&
	    !ff_relay_has(opt.relay, FF_RELAY_TLS_REMOTE))
		ff_usage_error(usage, "--relay-role --tls: relay '%s' proves a link from the relay it comes to, which runs elsewhere (these prove theirs from the relay it leaves: %s)",
			       opt.relay, ff_relays_with(FF_RELAY_TLS_REMOTE));
	if (opt.relay_role)
		opt.hops = 1;
	if (opt.hops < 0)
		opt.hops = ff_relay_hops(opt.relay);
	if (!ff_hops_fit(opt.relay, opt.hops, &why))
		ff_usage_error(usage, "%s", why.s);
	nrelays = (int)opt.hops;
	if (opt.cpu_limit > 0) {
		cpu_set_t avail;
		int n = ff_cpus_available(&avail);

		if (opt.cpu_limit > n)
			ff_usage_error(usage, "--cpu-limit: %ld is more than the %d CPU%s this process may use",
				       opt.cpu_limit, n, n == 1 ? "" : "s");
	}
	if (opt.encapsulation && !ff_relay_has(opt.relay, FF_RELAY_ENCAPSULATION))
		ff_usage_error(usage, "--encapsulation is for relay %s", ff_relays_with(FF_RELAY_ENCAPSULATION));
	if (opt.relay_cmd && !ff_relay_has(opt.relay, FF_RELAY_COMMAND))
		ff_usage_error(usage, "--relay-cmd is for relay %s, not '%s'", ff_relays_with(FF_RELAY_COMMAND),
			       opt.relay);
	if (opt.workers && !ff_relay_has(opt.relay, FF_RELAY_WORKERS))
		ff_usage_error(usage, "--workers is for relays %s, not '%s': flimflam does not set its worker count",
			       ff_relays_with(FF_RELAY_WORKERS), opt.relay);
	if (opt.tls && nrelays < 2 && !opt.relay_role)
		ff_usage_error(usage, "--tls is for the links between relays, and %s",
			       nrelays ? "--hops 1 has one relay and no link" :
			       "relay 'none' has none");
	if (opt.tls && !ff_relay_has(opt.relay, FF_RELAY_TLS))
		ff_usage_error(usage, "--tls: relay '%s' cannot prove its links (these can: %s)", opt.relay,
			       ff_relays_with(FF_RELAY_TLS));
	if (opt.tls && opt.relay_role && !strcmp(opt.relay_role, "r1") && !strcmp(opt.target_event, "server"))
		ff_usage_error(usage, "--tls is for the links between relays, and r1 in front of the server has none");
}

/* --tls: openssl to make the certificates, or --tls-certs's files, each there to read. */
static void
check_tls(void)
{
	if (opt.tls && !opt.tls_certs) {
		char *p = ff_which("openssl");

		if (!p)
			ff_die("--tls makes the run's certificates with openssl, which is not on PATH");
		free(p);
	}
	for (int i = 0; opt.tls_certs && i < 3; i++) {
		char *f = ff_asprintf(i ? "%s/%s.%s" : "%s/ca.crt", opt.tls_certs, opt.relay_role,
				      i == 1 ? "crt" : "key");

		if (access(f, R_OK) < 0)
			ff_die("--tls-certs: cannot read '%s': %s", f, strerror(errno));
		free(f);
	}
}

/*
 * The relay's program is on PATH (program_path), or its build's, usable,
 * and it can take what was asked; then its driver's own checks.
 */
static void
check_program(void)
{
	struct ff_buf why = FF_BUF_INIT;

	if (opt.build) {
		if (ff_build_read(opt.build, opt.relay, &build, &why) < 0)
			ff_fail(2, "%s", why.s);
		program_path = ff_strdup(build.path);
	} else if (row->program) {
		program_path = ff_which(row->program);
		if (!program_path)
			ff_die("relay '%s' needs %s, which is not on PATH", opt.relay, row->program);
	}
	if (program_path && !opt.config_only && row->check && !opt.build &&
	    row->check(program_path, &why) < 0)
		ff_die("%s", why.s);	/* a build's was checked with it */
	if (program_path && !opt.build && !opt.config_only)
		ff_build_at(NULL, program_path, opt.relay, &build, &why);
	if (program_path) {
		void *saved = ff_build_env_enter(&build);
		int can = ff_carries(NULL, opt.relay, opt.protocol, program_path,
				     opt.encapsulation, &why);

		ff_build_env_leave(&build, saved);
		if (can < 0)
			ff_die("%s", why.s);
		if (!can)
			ff_usage_error(usage, "%s", why.s);
	}
	ff_buf_free(&why);
	if (drv->check)
		drv->check();
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
	/*
	 * Each relay's workers, by the driver's setting (null: a relay whose
	 * count flimflam does not set); more than --cpu-limit's CPUs is said.
	 */
	json_object_set_new(ev, "workers", nrelays && drv->workers_setting ?
			    json_integer(workers()) : json_null());
	json_object_set_new(ev, "workers_setting", nrelays && drv->workers_setting ?
			    json_string(drv->workers_setting) : json_null());
	json_object_set_new(ev, "workers_over_cpu_limit", json_boolean(nrelays && drv->workers_setting &&
								       opt.cpu_limit > 0 && workers() > opt.cpu_limit));
	json_object_set_new(ev, "host", json_string(front_host));
	json_object_set_new(ev, "port", json_integer(port));
	/* --relay-role: where the relay before this one links to (a router's inter-router listener). */
	json_object_set_new(ev, "link_port", opt.relay_role && nrelays && relays[0].in ?
			    json_integer(relays[0].in->port) : json_null());
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
	json_object_set_new(ev, "tls", json_boolean(opt.tls));
	json_object_set_new(ev, "tls_links", tls_links ? json_incref(tls_links) : json_null());
	json_object_set_new(ev, "cpus_shared", json_boolean(cpus_shared));
	json_object_set_new(ev, "cpus_other_runs", cpus_others ? json_incref(cpus_others) : json_null());
	/* Ours, as another run's cpus_other_runs would name us (bench --together leaves its twins out). */
	json_object_set_new(ev, "pid", json_integer(getpid()));
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
	/* First: a SIGTERM while the relay is checked (probes, a hash) is caught, not fatal. */
	ff_signals_init();
	parse_args(argc, argv);
	row = ff_relay_find(opt.relay);
	drv = driver_find(opt.relay);
	check_chain();
	check_tls();
	check_program();

	/* A connection per job: what we start inherits the limit, raised. */
	ff_raise_nofile(LONG_MAX);
	ff_set_cleanup(cleanup);
	ff_rundir(opt.run_dir);
	/* With --server-port, stdin is not a stream (a terminal, say). */
	ff_stage_begin(&stage, !opt.server_port);
	chain_relays();
	if (opt.tls) {
		/* Before anything else starts: a set that cannot be made stops the run here. */
		tls_certs(relays, nrelays);
		for (i = 0; i < nrelays; i++)
			tls_relay(&relays[i]);
	}
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
