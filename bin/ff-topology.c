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

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static const char usage[] =
	"usage: ff-topology [-r RELAY] [-p PROTOCOL] [--hops N] [--cpu-limit N]\n"
	"                   [--encapsulation legacy|lite] [--server-port PORT]\n"
	"                   [--run-dir DIR] [--config-only] [--build LABEL=PATH]\n"
	"                   [--tls] [--listen ADDRESS]\n"
	"                   [--relay-role ROLE [--target-event server|topology]\n"
	"                    [--tls-certs DIR]]\n"
	"\n"
	"Relays: skrouterd (default), nghttpx, nginx, none.\n"
	"Protocols: tcp (default), http1, http2.\n"
	"--hops N chains N relays, client -> r1 -> ... -> rN -> server (1 to 8;\n"
	"default 2; relay none has no relay, and takes no --hops).\n"
	"Without --server-port, the server's port comes from the `server` event\n"
	"on stdin. --cpu-limit pins each relay to N CPUs of its own (0: no limit).\n"
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
	"--version prints the version. --pipeline-stage (flimflam gives it to its\n"
	"stages): a signal stops it without a \"stopped by\" line; flimflam says it.\n";

enum { OPT_CPU_LIMIT = 256, OPT_SERVER_PORT, OPT_RUN_DIR, OPT_ENCAPSULATION, OPT_CONFIG_ONLY,
       OPT_HOPS, OPT_TLS, OPT_LISTEN, OPT_RELAY_ROLE, OPT_TARGET_EVENT, OPT_TLS_CERTS };

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
	{ "tls", no_argument, NULL, OPT_TLS },
	{ "tls-certs", required_argument, NULL, OPT_TLS_CERTS },
	{ NULL, 0, NULL, 0 }
};

static struct {
	const char *relay, *protocol, *run_dir, *encapsulation, *build;
	long cpu_limit, server_port;
	int config_only, tls;
	long hops;		/* -1: the relay's own (2; none's 0) */
	const char *listen, *relay_role, *target_event;
	const char *tls_certs;	/* --relay-role --tls: the chain's certificates, given */
} opt = { "skrouterd", "tcp", NULL, NULL, NULL, 1, 0, 0, 0, -1, "127.0.0.1", NULL, "server", NULL };

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
	/*
	 * --tls: its own certificate and key and the CA it trusts
	 * (tls_relay), and its links (tls_link): the relay it accepts a TLS
	 * link from, the relay it makes one to; nginx over tcp proves a link
	 * through a probe listener on the first and a proof listener on the
	 * second.
	 */
	char *tls_cert, *tls_key, *tls_ca;
	struct relay *tls_from, *tls_to;
	int probe_port, proof_port;
};

/*
 * A link of the chain, R(i) -> R(i+1): `from` sends the traffic to `port`,
 * where `to` accepts it (its data port; skrouterd: its inter-router
 * listener, on `to`'s listen_host). Each relay's configuration takes its
 * links' parts. With --relay-role, the relay at the other end of a link
 * runs on another host: prev_relay or next_relay stands for it.
 */
struct link {
	struct relay *from, *to;
	int port;
};

static struct relay relays[FF_HOPS_MAX];
static struct link links[FF_HOPS_MAX - 1];
static int nrelays;
/*
 * --relay-role: the relay before ours (its role), and the one after it
 * (--target-event topology: its role, address, and nginx's TLS proof port,
 * from its topology event).
 */
static struct relay prev_relay, next_relay;
static json_t *upstream_relays;	/* --target-event topology: the relays behind ours */
static json_t *upstream_tls_links;	/* and their links' proofs */
static long upstream_server_port;	/* and the server's port they relay to */
static const char *front_host = "127.0.0.1";	/* where the client connects */
static int cpus_shared;
static json_t *tls_links;	/* --tls: each link's proof */
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

/* --tls */

static struct ff_skr_tls skr_tls;	/* skrouterd: its schema's names */

/* The run's certificates, once: a CA, and a certificate and key for each relay. */
static void
tls_certs(const struct relay *rs, int n)
{
	const char *roles[FF_HOPS_MAX];
	char why[1024];
	int i;

	if (opt.tls_certs)
		return;		/* given, made by one CA for the whole chain */
	for (i = 0; i < n && i < (int)FF_ARRAY_SIZE(roles); i++)
		roles[i] = rs[i].role;
	if (ff_tls_certs(ff_rundir(NULL), roles, i, why, sizeof(why)) < 0)
		ff_die("--tls: %s", why);
}

/* A relay's own certificate and key, and the CA it trusts: the run's, or --tls-certs's, where they are. */
static void
tls_relay(struct relay *r)
{
	char *crt = ff_asprintf("%s.crt", r->role), *key = ff_asprintf("%s.key", r->role);

	if (opt.tls_certs) {
		r->tls_cert = ff_asprintf("%s/%s", opt.tls_certs, crt);
		r->tls_key = ff_asprintf("%s/%s", opt.tls_certs, key);
		r->tls_ca = ff_asprintf("%s/ca.crt", opt.tls_certs);
	} else {
		r->tls_cert = ff_tls_file(ff_rundir(NULL), crt);
		r->tls_key = ff_tls_file(ff_rundir(NULL), key);
		r->tls_ca = ff_tls_file(ff_rundir(NULL), "ca.crt");
	}
	free(crt);
	free(key);
}

/*
 * The link from relay `from` to the next one, `to`, made TLS: `to` takes
 * it only from a peer whose certificate the run's CA signed, and `from`
 * verifies `to`'s likewise (mutual, as Skupper's links between sites).
 * Called for each link once an attempt's ports are chosen, before the
 * relays are configured: their configure functions read what it sets.
 */
static void
tls_link(struct relay *from, struct relay *to)
{
	from->tls_to = to;
	to->tls_from = from;
	if (!strcmp(opt.relay, "nginx") && !strcmp(opt.protocol, "tcp")) {
		from->probe_port = ff_free_port();
		to->proof_port = ff_free_port();
	}
}

/*
 * nginx's directives for its end of a TLS link, indented (malloc'd): the
 * end that accepts it (`accepting`) or the end that makes it.
 */
static char *
nginx_tls_lines(const struct relay *r, int accepting, const char *in)
{
	struct ff_buf b = FF_BUF_INIT;
	char *cert = ff_nginx_quote(r->tls_cert), *key = ff_nginx_quote(r->tls_key);
	char *ca = ff_nginx_quote(r->tls_ca);

	if (accepting)
		ff_buf_printf(&b, "%sssl_protocols TLSv1.2 TLSv1.3;\n"
			      "%sssl_certificate %s;\n%sssl_certificate_key %s;\n"
			      "%sssl_client_certificate %s;\n%sssl_verify_client on;\n",
			      in, in, cert, in, key, in, ca, in);
	else {
		if (!strcmp(opt.protocol, "tcp"))
			ff_buf_printf(&b, "%sproxy_ssl on;\n", in);
		/* Before 1.23.4, nginx offered no TLSv1.3 upstream unless told. */
		ff_buf_printf(&b, "%sproxy_ssl_protocols TLSv1.2 TLSv1.3;\n", in);
		ff_buf_printf(&b, "%sproxy_ssl_certificate %s;\n%sproxy_ssl_certificate_key %s;\n"
			      "%sproxy_ssl_trusted_certificate %s;\n%sproxy_ssl_verify on;\n"
			      "%sproxy_ssl_name flimflam-%s;\n",
			      in, cert, in, key, in, ca, in, in, r->tls_to->role);
	}
	free(cert);
	free(key);
	free(ca);
	return ff_buf_take(&b);
}

/*
 * nginx: what proves its links, in DIR/tls-proof.conf, and the line that
 * includes it ("" for none; malloc'd). Over tcp, the relay a link leaves
 * has a probe listener that makes the link's TLS connection to a proof
 * listener of the next relay, which answers what it negotiated; over
 * http1, the next relay answers a request of ff-topology's that came
 * through the data listener itself.
 */
static char *
nginx_tls_proof(const struct relay *r)
{
	struct ff_buf b = FF_BUF_INIT;
	char probe[16], proof[16], *lines, *text, *path, *q, *line;

	if (!strcmp(opt.protocol, "tcp")) {
		if (r->tls_to) {
			const char *const vars[] = { "PROBE_PORT", probe, "PROOF_PORT", proof,
						     "PROOF_HOST", r->tls_to->listen_host,
						     "TLS_LINES", lines = nginx_tls_lines(r, 0, "    "), NULL };

			snprintf(probe, sizeof(probe), "%d", r->probe_port);
			snprintf(proof, sizeof(proof), "%d", r->tls_to->proof_port);
			conf_part(&b, "relay-conf/nginx-tls-probe.conf", FF_CONF_NGINX, vars);
			free(lines);
		}
		if (r->tls_from) {
			const char *const vars[] = { "PROOF_PORT", proof, "LISTEN_HOST", r->listen_host,
						     "TLS_LINES", lines = nginx_tls_lines(r, 1, "    "), NULL };

			snprintf(proof, sizeof(proof), "%d", r->proof_port);
			conf_part(&b, "relay-conf/nginx-tls-proof-tcp.conf", FF_CONF_NGINX, vars);
			free(lines);
		}
	} else if (r->tls_from) {
		const char *const vars[] = { "ROLE", r->role, NULL };

		conf_part(&b, "relay-conf/nginx-tls-proof-http1.conf", FF_CONF_NGINX, vars);
	}
	if (!b.len)
		return ff_strdup("");
	path = ff_asprintf("%s/tls-proof.conf", r->dir);
	text = ff_buf_take(&b);
	if (ff_write_file(path, text, 0600) < 0)
		exit(1);
	q = ff_nginx_quote(path);
	line = ff_asprintf("%sinclude %s;\n", strcmp(opt.protocol, "tcp") ? "        " : "    ", q);
	free(q);
	free(path);
	free(text);
	return line;
}

/* OpenSSL's TLSv1.3 suites, in its default order. */
static const char openssl_tls13[] =
	"TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";

/* nghttpx's settings for its ends of TLS links (malloc'd lines). */
static char *
nghttpx_tls_lines(const struct relay *r)
{
	struct ff_buf b = FF_BUF_INIT;

	/*
	 * The access log of the relay a link comes to holds the proof: what
	 * it negotiated for ff-topology's request, and the subject of the
	 * certificate that verified.
	 */
	/*
	 * nghttpx would prefer TLS_AES_128_GCM_SHA256; nginx and the router
	 * take OpenSSL's order, in which TLS_AES_256_GCM_SHA384 comes first:
	 * that order here too (the side that accepts chooses), so that the
	 * relays compare like for like.
	 */
	if (r->tls_from)
		ff_buf_printf(&b, "tls13-ciphers=%s\nprivate-key-file=%s\ncertificate-file=%s\nverify-client=yes\n"
			      "verify-client-cacert=%s\nno-ocsp=yes\naccesslog-file=%s/access.log\n"
			      "accesslog-format=$path $tls_protocol $tls_cipher $tls_client_subject_name\n",
			      openssl_tls13, r->tls_key, r->tls_cert, r->tls_ca, r->dir);
	if (r->tls_to)
		ff_buf_printf(&b, "client-private-key-file=%s\nclient-cert-file=%s\ncacert=%s\n",
			      r->tls_key, r->tls_cert, r->tls_ca);
	return ff_buf_take(&b);
}

/*
 * skrouterd: the sslProfile (added to `text`; nothing without links), and the lines of the
 * inter-router listener that accepts a link and of the connector that
 * makes one (malloc'd): TLS required, the peer authenticated by its
 * certificate (SASL EXTERNAL), as Skupper's inter-router links are.
 * Proton checks a host name against the certificate's DNS names only, and
 * the routers link by address (127.0.0.1, or across hosts the next one's):
 * the connector verifies the chain, not the name.
 */
static void
skrouterd_tls_profile(const struct relay *r, struct ff_buf *text)
{
	const char *const vars[] = {
		"CA_ATTR", skr_tls.ca, "CA", r->tls_ca, "CERT_ATTR", skr_tls.cert,
		"CERT", r->tls_cert, "KEY_ATTR", skr_tls.key, "KEY", r->tls_key, NULL
	};

	if (r->tls_from || r->tls_to)
		conf_part(text, "relay-conf/skrouterd-tls.conf", FF_CONF_SKROUTERD, vars);
}

static char *
skrouterd_tls_lines(const struct relay *r, int accepting)
{
	struct ff_buf b = FF_BUF_INIT;

	if (accepting && r->tls_from)
		ff_buf_printf(&b, "    sslProfile: flimflam-link\n%s    authenticatePeer: yes\n"
			      "    saslMechanisms: EXTERNAL\n",
			      skr_tls.require_ssl ? "    requireSsl: yes\n" : "");
	if (!accepting && r->tls_to)
		ff_buf_printf(&b, "    sslProfile: flimflam-link\n%s%s",
			      skr_tls.connector_sasl ? "    saslMechanisms: EXTERNAL\n" : "",
			      skr_tls.verify_hostname ? "    verifyHostname: no\n" : "");
	return b.len ? ff_buf_take(&b) : ff_strdup("");
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
	char *from = r->tls_from ? nginx_tls_lines(r, 1, "        ") : ff_strdup("");
	char *to = r->tls_to ? nginx_tls_lines(r, 0, "        ") : ff_strdup("");
	char *tls = ff_asprintf("%s%s", from, to), *proof = nginx_tls_proof(r);
	const char *const vars[] = {
		"DIR", r->dir, "PORT", port, "TARGET_PORT", target,
		"LISTEN_HOST", r->listen_host, "TARGET_HOST", r->target_host,
		"WORKERS", nworkers, "USER", ff_user_name(),
		"LOAD_MODULE_LINES", nginx_load_module(),
		"LISTEN_SSL", r->tls_from ? "ssl" : "", "SCHEME", r->tls_to ? "https" : "http",
		"TLS_LINES", tls, "TLS_PROOF_LINES", proof, NULL
	};

	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(target, sizeof(target), "%d", r->target_port);
	snprintf(nworkers, sizeof(nworkers), "%ld", workers());
	r->conf = ff_asprintf("%s/nginx.conf", r->dir);
	write_conf(r, !strcmp(opt.protocol, "tcp") ? "relay-conf/nginx-tcp.conf" :
		   "relay-conf/nginx-http1.conf", FF_CONF_NGINX, vars);
	r->ready_port = r->port;
	free(from);
	free(to);
	free(tls);
	free(proof);
}

static void
configure_nghttpx(struct relay *r)
{
	char port[16], target[16], nworkers[16], sni[64];
	char *tls = nghttpx_tls_lines(r);
	const char *const vars[] = {
		"DIR", r->dir, "PORT", port, "TARGET_PORT", target,
		"LISTEN_HOST", r->listen_host, "TARGET_HOST", r->target_host,
		"WORKERS", nworkers,
		"BACKEND_PROTO", !strcmp(opt.protocol, "http2") ? "h2" : "http/1.1",
		"FRONTEND_PARAMS", r->tls_from ? "" : ";no-tls", "BACKEND_PARAMS", sni,
		"TLS_LINES", tls, NULL
	};

	/* The name the next relay's certificate has, sent and verified. */
	snprintf(sni, sizeof(sni), "%s%s", r->tls_to ? ";tls;sni=flimflam-" : "",
		 r->tls_to ? r->tls_to->role : "");

	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(target, sizeof(target), "%d", r->target_port);
	snprintf(nworkers, sizeof(nworkers), "%ld", workers());
	r->conf = ff_asprintf("%s/nghttpx.conf", r->dir);
	write_conf(r, "relay-conf/nghttpx.conf", FF_CONF_NGHTTPX, vars);
	r->ready_port = r->port;
	free(tls);
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
	char *tls_in = skrouterd_tls_lines(r, 1), *tls_out = skrouterd_tls_lines(r, 0);
	/* The listener on this router's address; the connector to the next one's. */
	const char *const link_in[] = {
		"HOST", r->listen_host, "PORT", in_port, "FROM", r->in ? r->in->from->role : "",
		"TLS_LINES", tls_in, NULL
	};
	const char *const link_out[] = {
		"HOST", r->out ? r->out->to->listen_host : "", "PORT", out_port,
		"TO", r->out ? r->out->to->role : "", "TLS_LINES", tls_out, NULL
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
	skrouterd_tls_profile(r, &text);
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
	free(tls_in);
	free(tls_out);
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

noreturn static void tls_fail(const struct relay *from, const struct relay *to, const char *what);

/* Did the router that makes r's link say in its log that the link failed TLS? */
static int
tls_failed_in_log(const struct relay *r)
{
	char *text = ff_read_file(r->child.log, NULL);
	int failed = text && strstr(text, "SSL Failure");

	free(text);
	return failed;
}

/*
 * skrouterd over --tls: r1's listener opens once the route through every
 * link of the chain is up. A link whose certificates do not verify never
 * comes up, and the router that makes it says why in its log ("SSL
 * Failure"): the run stops then, naming that link, not when its 60 s are
 * over.
 */
static void
tls_wait_route(struct relay *r)
{
	double until = ff_now() + row->start_seconds;
	int i;

	while (ff_now() < until && !ff_port_listening(r->ready_port, r->child.pid) &&
	       !ff_child_check(&r->child)) {
		for (i = 0; i < nrelays; i++)
			if (relays[i].tls_to && tls_failed_in_log(&relays[i]))
				tls_fail(&relays[i], relays[i].tls_to, "did not come up");
		if (ff_sleep(0.05) < 0)
			return;
	}
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
	if (opt.tls && !r->in && r->tls_to && !strcmp(opt.relay, "skrouterd"))
		tls_wait_route(r);
	return ff_wait_listen(&r->child, r->ready_port, row->start_seconds);
}

/* Proving the links: read from the relays what they negotiated */

/*
 * What came back on a connection to host:port after sending `req` (NULL:
 * nothing), up to its end or 10 s (malloc'd; "" for nothing).
 */
static char *
probe(const char *host, int port, const char *req)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct ff_buf b = FF_BUF_INIT;
	double deadline = ff_now() + 10;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char buf[4096];
	ssize_t n;

	if (ff_inet_addr(host, &sa.sin_addr) < 0)
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (req && write(fd, req, strlen(req)) != (ssize_t)strlen(req))) {
		if (fd >= 0)
			close(fd);
		return ff_strdup("");
	}
	for (;;) {
		struct pollfd pfd[2] = { { fd, POLLIN, 0 }, { ff_signal_fd(), POLLIN, 0 } };
		double left = deadline - ff_now();

		if (left <= 0 || poll(pfd, 2, (int)(left * 1000) + 1) < 0)
			break;
		if (ff_signalled())
			ff_exit_signalled();
		if (!pfd[0].revents)
			continue;
		if ((n = read(fd, buf, sizeof(buf))) <= 0 || b.len > 65536)
			break;
		ff_buf_add(&b, buf, n);
	}
	close(fd);
	return b.len ? ff_buf_take(&b) : ff_strdup("");
}

/* The last line of a relay's log that speaks of TLS, for the error (malloc'd, or NULL). */
static char *
tls_log_hint(const char *log)
{
	char *text = ff_read_file(log, NULL), *line, *next, *found = NULL;

	for (line = text; line && *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		if (strstr(line, "SSL") || strstr(line, "certificate") || strstr(line, "TLS") ||
		    strstr(line, "Could not connect"))
			found = line;
	}
	found = found ? ff_strdup(found) : NULL;
	free(text);
	return found;
}

/* The link failed its proof: the run stops here, before any load, with why. */
noreturn static void
tls_fail(const struct relay *from, const struct relay *to, const char *what)
{
	char *log = !strcmp(opt.relay, "skrouterd") ? ff_strdup(from->child.log) :
		    ff_asprintf("%s/error.log", from->dir);
	char *hint = tls_log_hint(log);

	/* --tls-certs: flimflam's, which removes them from this host afterwards. */
	char *where = opt.tls_certs ? ff_strdup("") :
		ff_asprintf("; the certificates are in '%s/tls'", ff_rundir(NULL));

	ff_die_event("--tls: the link from %s to %s %s%s%s%s", from->role, to->role, what,
		     hint ? "; " : "", hint ? hint : "", where);
}

/* "PROTOCOL CIPHER VERIFY" from the last line of `text`, into the proof. */
static int
tls_words(const char *text, char proto[64], char cipher[128], char verify[256])
{
	const char *last = text, *p;

	for (p = text; *p; p++)
		if (*p == '\n' && p[1])
			last = p + 1;
	proto[0] = cipher[0] = verify[0] = 0;
	return sscanf(last, "%63s %127s %255[^\r\n]", proto, cipher, verify);
}

/*
 * Prove the link from `from` to `to` (`entry`: the port the chain's
 * traffic enters at): the protocol and cipher as the relay the link comes
 * to read them (skrouterd with --relay-role: the one it leaves; said_by),
 * and that the peer's certificate verified. A link that did
 * not come up, or came up without TLS, fails the run. Returns the
 * `tls_links` object of the topology event, or NULL when a router lost
 * the port of its management to another program (its log says so).
 */
static json_t *
tls_prove(struct relay *from, struct relay *to, int entry)
{
	char proto[64], cipher[128], peer[256], *text = NULL, *req = NULL;
	const char *source, *said_by = to->role;
	int i;

	if (!strcmp(opt.relay, "skrouterd")) {
		/*
		 * The router the link comes to says, by its management; with
		 * --relay-role that router is on another host, and the one the
		 * link leaves says, once the link is up (it comes up on its own
		 * time: until then, or until the router's log says it failed).
		 */
		struct relay *at = opt.relay_role ? from : to;
		const char *want = opt.relay_role ? "out" : "in";
		char bus[64], *argv[] = { "skmanage", "-b", bus, "query", "--type", "connection", NULL };
		json_t *list, *c;
		size_t k;
		int st, nlinks = 0;
		void *saved;
		char *own = build.label && build.prefix ? ff_asprintf("%s/bin/skmanage", build.prefix) : NULL;
		double until = ff_now() + row->start_seconds;

		/* A build's router: the skmanage of its prefix, in its environment. */
		if (own && access(own, X_OK) == 0)
			argv[0] = own;

		snprintf(bus, sizeof(bus), "127.0.0.1:%d", at->mgmt_port);
		said_by = at->role;
		proto[0] = cipher[0] = peer[0] = 0;
		for (;;) {
			/* Python and Proton starting on a busy machine: 5 s each, three tries. */
			for (i = 0, list = NULL; i < 3 && !json_is_array(list); i++) {
				free(text);
				json_decref(list);
				saved = ff_build_env_enter(&build);
				text = ff_env_run(argv, &st);
				ff_build_env_leave(&build, saved);
				list = text && st == 0 ? json_loads(text, 0, NULL) : NULL;
				if (ff_signalled())
					ff_exit_signalled();
				if (text && st != -1)
					break;	/* an answer, or a failure that would be the same again */
			}
			if (!json_is_array(list) && ff_child_lost_port(&at->child)) {
				/* Its management listener lost its port: the caller tries others. */
				free(text);
				free(own);
				return NULL;
			}
			if (!json_is_array(list))
				ff_die_event("--tls: cannot read %s's connections through its management ('skmanage -b %s query --type connection' %s): %.200s",
					     at->role, bus, !text ? "cannot run; skmanage is installed beside skrouterd" :
					     st == -1 ? "took more than 5 s, three times" : ff_status_how(st),
					     text ? text : "");
			json_array_foreach(list, k, c) {
				const char *role = ff_json_str(c, "role"), *dir = ff_json_str(c, "dir");
				/* The peer: the certificate's subject (in), or the router it reached (out). */
				const char *who = ff_json_str(c, opt.relay_role ? "container" : "user");

				if (!role || strncmp(role, "inter-router", 12) || !dir || strcmp(dir, want))
					continue;
				nlinks++;
				if (!json_is_true(json_object_get(c, "ssl")))
					tls_fail(from, to, "came up without TLS (the router says ssl false)");
				if (!json_is_true(json_object_get(c, "isAuthenticated")))
					tls_fail(from, to, "came up without authenticating its peer");
				snprintf(proto, sizeof(proto), "%s", ff_json_str(c, "sslProto") ? ff_json_str(c, "sslProto") : "");
				snprintf(cipher, sizeof(cipher), "%s", ff_json_str(c, "sslCipher") ? ff_json_str(c, "sslCipher") : "");
				snprintf(peer, sizeof(peer), "%s", who ? who : "");
				/* Across hosts: the router it reached is the next of the chain. */
				if (opt.relay_role && (strncmp(peer, "flimflam-", 9) || strcmp(peer + 9, to->role)))
					tls_fail(from, to, ff_asprintf("reached router '%s', not flimflam-%s", peer, to->role));
			}
			json_decref(list);
			if (nlinks || !opt.relay_role)
				break;
			if (tls_failed_in_log(from))
				tls_fail(from, to, "did not come up");
			if (ff_now() > until || ff_child_check(&at->child))
				break;
			if (ff_sleep(0.2) < 0)
				ff_exit_signalled();
		}
		free(own);
		source = opt.relay_role ?
			"its management's connection list (ssl, sslProto, sslCipher, isAuthenticated, container)" :
			"its management's connection list (ssl, sslProto, sslCipher, user)";
		if (!nlinks)
			tls_fail(from, to, "has no inter-router connection");
	} else if (!strcmp(opt.relay, "nginx")) {
		if (!strcmp(opt.protocol, "tcp"))
			text = probe("127.0.0.1", from->probe_port, NULL);	/* the template's */
		else {
			req = ff_asprintf("GET /flimflam-tls-proof/%s HTTP/1.1\r\nHost: flimflam\r\n"
					  "Connection: close\r\n\r\n", to->role);
			text = probe(opt.listen, entry, req);
			if (strncmp(text, "HTTP/1.1 200 ", 13))
				tls_fail(from, to, "did not come up (the request through it got no answer from the relay after it)");
		}
		source = "$ssl_protocol, $ssl_cipher, $ssl_client_verify, $ssl_client_s_dn";
		if (tls_words(text, proto, cipher, peer) < 3)
			tls_fail(from, to, "did not come up (nothing came back through it)");
		if (strncmp(peer, "SUCCESS ", 8))
			tls_fail(from, to, "came up without a verified peer certificate");
		memmove(peer, peer + 8, strlen(peer + 8) + 1);
	} else {
		char *log = ff_asprintf("%s/access.log", to->dir), *line, *want;
		double deadline = ff_now() + 5;

		req = ff_asprintf("GET /flimflam-tls-proof/%s HTTP/1.1\r\nHost: flimflam\r\n"
				  "Connection: close\r\n\r\n", to->role);
		free(probe(opt.listen, entry, req));
		want = ff_asprintf("/flimflam-tls-proof/%s ", to->role);
		source = "its access log ($tls_protocol, $tls_cipher, $tls_client_subject_name)";
		/* The relay writes the line as the response leaves it: soon, not at once. */
		for (line = NULL; !line && ff_now() < deadline; ) {
			free(text);
			text = ff_read_file(log, NULL);
			line = text ? strstr(text, want) : NULL;
			if (!line && ff_sleep(0.05) < 0)
				ff_exit_signalled();
		}
		if (!line || tls_words(line + strlen(want), proto, cipher, peer) < 3)
			tls_fail(from, to, "did not come up (the request through it did not reach the relay after it)");
		free(log);
		free(want);
		if (!strcmp(peer, "-"))
			tls_fail(from, to, "came up without a verified peer certificate");
	}
	if (!proto[0] || !strcmp(proto, "-") || !cipher[0] || !strcmp(cipher, "-"))
		tls_fail(from, to, "came up without TLS (no protocol negotiated)");
	for (i = 0; peer[i]; i++)
		if ((unsigned char)peer[i] < ' ')
			peer[i] = '?';
	free(text);
	free(req);
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:s}", "from", from->role, "to", to->role,
			 "protocol", proto, "cipher", cipher, "peer_verified", 1,
			 "peer", peer, "said_by", said_by, "source", source);
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
	/* nginx over tcp with --tls: where the relay before it proves their link. */
	json_object_set_new(o, "tls_proof_port", r->proof_port ? json_integer(r->proof_port) : json_null());
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
	/* --relay-role: the link from the relay before it, to ours; the one after it, where it said. */
	if (opt.relay_role && relays[0].in) {
		relays[0].in->port = relays[0].port;
		if (code->link)
			code->link(relays[0].in);
	}
	if (opt.relay_role && relays[0].out)
		relays[0].out->port = server_port;
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

/* The chain: each relay's role, and its links to the ones beside it. */
static void
chain_relays(void)
{
	int i;

	for (i = 0; i < nrelays; i++) {
		snprintf(relays[i].role, sizeof(relays[i].role), "r%d", i + 1);
		if (opt.relay_role)
			snprintf(relays[i].role, sizeof(relays[i].role), "%s", opt.relay_role);
		relays[i].in = i ? &links[i - 1] : NULL;
		relays[i].out = i + 1 < nrelays ? &links[i] : NULL;
		if (i + 1 < nrelays)
			links[i] = (struct link){ &relays[i], &relays[i + 1], 0 };
	}
	if (!opt.relay_role)
		return;
	/* One relay: linked from the one before it (past r1), to the one after it (--target-event topology). */
	i = (unsigned char)atoi(opt.relay_role + 1);	/* r1 ... r8: parse_args */
	if (i > 1) {
		snprintf(prev_relay.role, sizeof(prev_relay.role), "r%d", i - 1);
		links[0] = (struct link){ &prev_relay, &relays[0], 0 };
		relays[0].in = &links[0];
	}
	if (!strcmp(opt.target_event, "topology")) {
		snprintf(next_relay.role, sizeof(next_relay.role), "r%d", i + 1);
		links[1] = (struct link){ &relays[0], &next_relay, 0 };
		relays[0].out = &links[1];
	}
}

/*
 * --tls, once every relay is up: each link proved, into `tls_links`. 0, or
 * -1 with `*failed` the router that lost its management's port.
 */
static int
tls_prove_links(struct relay **failed)
{
	json_t *proof;
	int i;

	json_decref(tls_links);
	tls_links = json_array();
	for (i = 0; i + 1 < nrelays; i++) {
		if (!(proof = tls_prove(&relays[i], &relays[i + 1], relays[0].port))) {
			*failed = &relays[i + 1];
			return -1;
		}
		json_array_append_new(tls_links, proof);
	}
	/* --relay-role: our link to the relay after ours, then the links behind it (their topology's). */
	if (opt.relay_role && relays[0].out) {
		if (!(proof = tls_prove(&relays[0], &next_relay, relays[0].port))) {
			*failed = &relays[0];
			return -1;
		}
		json_array_append_new(tls_links, proof);
	}
	if (upstream_tls_links)
		json_array_extend(tls_links, upstream_tls_links);
	return 0;
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
	place_relays();
	for (int attempt = 0;; attempt++) {
		struct relay *r, *failed = NULL;
		int lost;

		chain_ports(code, server_host, server_port);
		for (i = 0; opt.tls && i + 1 < nrelays; i++)
			tls_link(&relays[i], &relays[i + 1]);
		if (opt.tls && opt.relay_role && relays[0].in)
			tls_link(&prev_relay, &relays[0]);
		if (opt.tls && opt.relay_role && relays[0].out) {
			int proof = next_relay.proof_port;	/* its own, from its topology */

			tls_link(&relays[0], &next_relay);
			next_relay.proof_port = proof;
		}
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
		if (!failed && (!opt.tls || tls_prove_links(&failed) == 0))
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
				json_t *next = json_array_get(json_object_get(ev, "relays"), 0);

				/* A router links to the next one's inter-router listener, not to its data port. */
				port = (int)ff_json_num(ev, relay_code()->link ? "link_port" : "port", 0);
				if (port <= 0)
					ff_die_event("the upstream's topology event has no %s",
						     relay_code()->link ? "link_port (a router's inter-router listener, past r1)" : "port");
				if (strcmp(ff_json_str(ev, "relay") ? ff_json_str(ev, "relay") : "", opt.relay))
					ff_die_event("the upstream's topology event is relay '%s's, and this one is '%s'",
						     ff_json_str(ev, "relay") ? ff_json_str(ev, "relay") : "?", opt.relay);
				*host = ff_strdup(ff_json_str(ev, "host") ? ff_json_str(ev, "host") : "127.0.0.1");
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
		case OPT_TLS:
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
		}
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
	char why[512], tls_why[512];

	row = ff_relay_find(opt.relay);
	if (!ff_carries(NULL, opt.relay, opt.protocol, NULL, NULL, why, sizeof(why)))
		ff_usage_error(usage, "%s (it works with: %s)", why, ff_combos_for(NULL, opt.relay));
	if (opt.relay_role && !row->processes)
		ff_usage_error(usage, "--relay-role starts one relay, and relay '%s' has none", opt.relay);
	if (opt.relay_role && opt.tls && !strcmp(opt.relay, "nghttpx"))
		ff_usage_error(usage, "--relay-role --tls: nghttpx's link is proved by the access log of the relay it comes to, which runs elsewhere (nginx and skrouterd prove theirs from the relay it leaves)");
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
	if (opt.tls && nrelays < 2 && !opt.relay_role)
		ff_usage_error(usage, "--tls is for the links between relays, and %s",
			       nrelays ? "--hops 1 has one relay and no link" :
			       "relay 'none' has none");
	if (opt.tls && opt.relay_role && !strcmp(opt.relay_role, "r1") && !strcmp(opt.target_event, "server"))
		ff_usage_error(usage, "--tls is for the links between relays, and r1 in front of the server has none");
	if (opt.tls && !opt.tls_certs) {
		char *p = ff_which("openssl");

		if (!p)
			ff_die("--tls makes the run's certificates with openssl, which is not on PATH");
		free(p);
	}
	/* --tls-certs: the relay's files, each there to read. */
	for (int i = 0; opt.tls_certs && i < 3; i++) {
		char *f = ff_asprintf(i ? "%s/%s.%s" : "%s/ca.crt", opt.tls_certs, opt.relay_role,
				      i == 1 ? "crt" : "key");

		if (access(f, R_OK) < 0)
			ff_die("--tls-certs: cannot read '%s': %s", f, strerror(errno));
		free(f);
	}
	if (program_path && !opt.config_only && row->check && !opt.build &&
	    row->check(program_path, why, sizeof(why)) < 0)
		ff_die("%s", why);	/* a build's was checked with it */
	if (program_path && !opt.build && !opt.config_only)
		ff_build_at(NULL, program_path, opt.relay, &build, why, sizeof(why));
	if (program_path) {
		void *saved = ff_build_env_enter(&build);
		int can = ff_carries(NULL, opt.relay, opt.protocol, program_path,
				     opt.encapsulation, why, sizeof(why));
		/* The build's own schema names the sslProfile's attributes. */
		int tls = opt.tls && can > 0 && !strcmp(opt.relay, "skrouterd") ?
			ff_skrouterd_tls(program_path, &skr_tls, tls_why, sizeof(tls_why)) : 0;

		ff_build_env_leave(&build, saved);

		if (can < 0)
			ff_die("%s", why);
		if (!can)
			ff_usage_error(usage, "%s", why);
		if (tls < 0)
			ff_die("%s", tls_why);
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
	check_relay();

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
