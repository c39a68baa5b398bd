/*
 * ff-topology's driver for relay nginx: its stream module over tcp, an
 * HTTP/1.1 reverse proxy over http1 (relay-conf/nginx-*.conf); over --tls,
 * each link proved by what nginx itself says it negotiated.
 */
#include "ff-topology.h"

#include <string.h>

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
		/* A socket a worker: the kernel spreads the connections (ff_jobs_per_process). */
		"REUSEPORT", workers() > 1 ? "reuseport" : "",
		"TLS_LINES", tls, "TLS_PROOF_LINES", proof, NULL
	};

	port_str(port, r->port);
	port_str(target, r->target_port);
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
args_nginx(struct relay *r, struct ff_argv *a)
{
	char *log = ff_asprintf("%s/error.log", r->dir);

	ff_argv_addl(a, program_path, "-p", r->dir, "-c", r->conf, "-e", log, NULL);
	free(log);
}

/* Over tcp, a link is proved through a probe listener of its own (nginx_tls_proof). */
static void
tls_ports_nginx(struct relay *from, struct relay *to)
{
	if (!strcmp(opt.protocol, "tcp")) {
		from->probe_port = ff_free_port();
		to->proof_port = ff_free_port();
	}
}

/*
 * What nginx says it negotiated ($ssl_protocol, $ssl_cipher,
 * $ssl_client_verify, $ssl_client_s_dn): over tcp, the probe listener's
 * answer; over http1, the answer of the relay after it to a request
 * through the chain.
 */
static int
prove_nginx(struct relay *from, struct relay *to, int entry, struct tls_proof *p)
{
	char *text, *req;

	if (!strcmp(opt.protocol, "tcp"))
		text = probe("127.0.0.1", from->probe_port, NULL);	/* the template's */
	else {
		req = tls_proof_request(to);
		text = probe(opt.listen, entry, req);
		free(req);
		if (strncmp(text, "HTTP/1.1 200 ", 13))
			tls_fail(from, to, "did not come up (the request through it got no answer from the relay after it)");
	}
	p->source = "$ssl_protocol, $ssl_cipher, $ssl_client_verify, $ssl_client_s_dn";
	tls_answer(from, to, text, "SUCCESS ", p);
	return 0;
}

static char *
tls_log_nginx(const struct relay *r)
{
	return ff_asprintf("%s/error.log", r->dir);
}

const struct relay_driver relay_nginx = {
	.name = "nginx",
	.workers_setting = "worker_processes",
	.tls_ports = tls_ports_nginx,
	.configure = configure_nginx,
	.args = args_nginx,
	.prove = prove_nginx,
	.tls_log = tls_log_nginx,
};

