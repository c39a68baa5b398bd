/*
 * ff-topology's driver for relay skrouterd: a network of routers, linked
 * router to router, with the tcp or HTTP adaptors at its ends
 * (relay-conf/skrouterd-*.conf); over --tls, each link proved by a
 * router's management.
 */
#include "ff-topology.h"

#include <string.h>
#include <unistd.h>

static struct ff_skr_tls skr_tls;	/* --tls: its schema's names */

/*
 * The sslProfile (added to `text`; nothing without links), and the lines of the
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
	port_str(port, r->port);
	port_str(target, r->target_port);
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

static void
args_skrouterd(struct relay *r, struct ff_argv *a)
{
	ff_argv_addl(a, program_path, "--config", r->conf, NULL);
}

/*
 * --workers: the router's own schema has router's workerThreads (every
 * router so far has; one whose schema cannot be read is left to say so at
 * its start).
 */
static void
check_workers(void)
{
	struct ff_skr_features f;
	void *saved = ff_build_env_enter(&build);
	char *schema = ff_skrouterd_schema_path(program_path);
	int known = schema && access(schema, R_OK) == 0 && ff_skrouterd_features(schema, &f) == 0;

	ff_build_env_leave(&build, saved);
	if (known && !f.worker_threads)
		ff_usage_error(usage, "--workers: the skrouterd at '%s' has no workerThreads in its router schema (%s)",
			       program_path, schema);
	free(schema);
}

/* --tls: the build's own schema names the sslProfile's attributes. */
static void
check_skrouterd(void)
{
	struct ff_buf why = FF_BUF_INIT;
	void *saved;
	int st;

	if (opt.workers && program_path)
		check_workers();
	if (!opt.tls || !program_path)
		return;
	saved = ff_build_env_enter(&build);
	st = ff_skrouterd_tls(program_path, &skr_tls, &why);
	ff_build_env_leave(&build, saved);
	if (st < 0)
		ff_die("%s", why.s);
}

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
 * Over --tls, r1's listener opens once the route through every link of
 * the chain is up. A link whose certificates do not verify never comes
 * up, and the router that makes it says why in its log ("SSL Failure"):
 * the run stops then, naming that link, not when its 60 s are over.
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

/*
 * The connections of the router `at` by its management (skmanage, a
 * build's own from its prefix, in its environment), or NULL when its
 * management listener lost its port to another program.
 */
static json_t *
connections(struct relay *at)
{
	char bus[64], *text = NULL;
	char *argv[] = { "skmanage", "-b", bus, "query", "--type", "connection", NULL };
	char *own = build.label && build.prefix ? ff_asprintf("%s/bin/skmanage", build.prefix) : NULL;
	json_t *list = NULL;
	void *saved;
	int i, st = 0;

	if (own && access(own, X_OK) == 0)
		argv[0] = own;
	snprintf(bus, sizeof(bus), "127.0.0.1:%d", at->mgmt_port);
	/* Python and Proton starting on a busy machine: 5 s each, three tries. */
	for (i = 0; i < 3 && !json_is_array(list); i++) {
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
	free(own);
	if (!json_is_array(list) && ff_child_lost_port(&at->child)) {
		free(text);
		return NULL;
	}
	if (!json_is_array(list))
		ff_die_event("--tls: cannot read %s's connections through its management ('skmanage -b %s query --type connection' %s): %.200s",
			     at->role, bus, !text ? "cannot run; skmanage is installed beside skrouterd" :
			     st == -1 ? "took more than 5 s, three times" : ff_status_how(st),
			     text ? text : "");
	free(text);
	return list;
}

/* The inter-router links of `list` in direction `want`, checked, their last into `p`; how many. */
static int
inter_router(json_t *list, const char *want, struct relay *from, struct relay *to, struct tls_proof *p)
{
	json_t *c;
	size_t k;
	int nlinks = 0;

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
		snprintf(p->proto, sizeof(p->proto), "%s", ff_json_str(c, "sslProto") ? ff_json_str(c, "sslProto") : "");
		snprintf(p->cipher, sizeof(p->cipher), "%s", ff_json_str(c, "sslCipher") ? ff_json_str(c, "sslCipher") : "");
		snprintf(p->peer, sizeof(p->peer), "%s", who ? who : "");
		/* Across hosts: the router it reached is the next of the chain. */
		if (opt.relay_role && (strncmp(p->peer, "flimflam-", 9) || strcmp(p->peer + 9, to->role)))
			tls_fail(from, to, ff_asprintf("reached router '%s', not flimflam-%s", p->peer, to->role));
	}
	return nlinks;
}

/*
 * The router the link comes to says, by its management; with
 * --relay-role that router is on another host, and the one the link
 * leaves says, once the link is up (it comes up on its own time: until
 * then, or until the router's log says it failed).
 */
static int
prove_skrouterd(struct relay *from, struct relay *to, int entry, struct tls_proof *p)
{
	struct relay *at = opt.relay_role ? from : to;
	double until = ff_now() + row->start_seconds;
	json_t *list;
	int nlinks;

	(void)entry;
	p->said_by = at->role;
	for (;;) {
		if (!(list = connections(at)))
			return -1;	/* its management's port lost: the caller tries others */
		nlinks = inter_router(list, opt.relay_role ? "out" : "in", from, to, p);
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
	p->source = opt.relay_role ?
		"its management's connection list (ssl, sslProto, sslCipher, isAuthenticated, container)" :
		"its management's connection list (ssl, sslProto, sslCipher, user)";
	if (!nlinks)
		tls_fail(from, to, "has no inter-router connection");
	return 0;
}

const struct relay_driver relay_skrouterd = {
	.name = "skrouterd",
	.workers_setting = "router workerThreads",
	.check = check_skrouterd,
	.ports = ports_skrouterd,
	.link = link_skrouterd,
	.configure = configure_skrouterd,
	.args = args_skrouterd,
	.tls_wait = tls_wait_route,
	.prove = prove_skrouterd,
};
