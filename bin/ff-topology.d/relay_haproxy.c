/*
 * ff-topology's driver for relay haproxy: HAProxy in tcp mode over tcp, in
 * http mode over http1 and http2 (relay-conf/haproxy*.conf). Over --tls,
 * each link is proved as nginx's over tcp are: a probe listener of the
 * relay the link leaves makes the link's TLS connection to a proof
 * listener of the next relay, which answers what it negotiated
 * (ssl_fc_protocol, ssl_fc_cipher, ssl_c_verify, ssl_c_s_dn).
 */
#include "ff-topology.h"

#include <errno.h>
#include <string.h>

/*
 * The relay's certificate and key as one file, which HAProxy's crt
 * takes, in its directory (malloc'd path).
 */
static char *
tls_pem(const struct relay *r)
{
	char *path = ff_asprintf("%s/tls.pem", r->dir);
	char *crt = ff_read_file(r->tls_cert, NULL), *key = ff_read_file(r->tls_key, NULL);
	char *both;

	if (!crt || !key)
		ff_die("--tls: cannot read '%s': %s", !crt ? r->tls_cert : r->tls_key, strerror(errno));
	both = ff_asprintf("%s%s", crt, key);
	if (ff_write_file(path, both, 0600) < 0)
		exit(1);
	free(crt);
	free(key);
	free(both);
	return path;
}

/*
 * The words of a TLS link's end (malloc'd, each after a space): the end
 * that accepts it (`accepting`: a bind), or the end that makes it (a
 * server, which sends and verifies the next relay's name).
 */
static char *
tls_words_of(const struct relay *r, int accepting, const char *pem)
{
	char *crt = ff_nginx_quote(pem), *ca = ff_nginx_quote(r->tls_ca), *w;

	if (accepting)
		w = ff_asprintf(" ssl crt %s ca-file %s verify required ssl-min-ver TLSv1.2", crt, ca);
	else
		w = ff_asprintf(" ssl crt %s ca-file %s verify required ssl-min-ver TLSv1.2"
				" sni str(flimflam-%s) verifyhost flimflam-%s",
				crt, ca, r->tls_to->role, r->tls_to->role);
	free(crt);
	free(ca);
	return w;
}

/* --tls: the probe (the link it leaves) and proof (the link it comes to) listeners. */
static char *
tls_proof_lines(const struct relay *r, const char *pem)
{
	struct ff_buf b = FF_BUF_INIT;
	char probe_port[16], proof_port[16], *w;

	if (r->tls_to) {
		const char *const vars[] = { "PROBE_PORT", port_str(probe_port, r->probe_port),
					     "PROOF_HOST", r->tls_to->listen_host,
					     "PROOF_PORT", port_str(proof_port, r->tls_to->proof_port),
					     "TLS_LINES", w = tls_words_of(r, 0, pem), NULL };

		ff_buf_addstr(&b, "\n");
		conf_part(&b, "relay-conf/haproxy-tls-probe.conf", FF_CONF_NGINX, vars);
		free(w);
	}
	if (r->tls_from) {
		const char *const vars[] = { "LISTEN_HOST", r->listen_host,
					     "PROOF_PORT", port_str(proof_port, r->proof_port),
					     "TLS_LINES", w = tls_words_of(r, 1, pem), NULL };

		ff_buf_addstr(&b, "\n");
		conf_part(&b, "relay-conf/haproxy-tls-proof.conf", FF_CONF_NGINX, vars);
		free(w);
	}
	return b.len ? ff_buf_take(&b) : ff_strdup("");
}

static void
configure_haproxy(struct relay *r)
{
	char port[16], target[16], nworkers[16];
	const char *h2 = !strcmp(opt.protocol, "http2") ? " proto h2" : "";
	char *pem = r->tls_from || r->tls_to ? tls_pem(r) : NULL;
	char *in = r->tls_from ? tls_words_of(r, 1, pem) : ff_strdup("");
	char *out = r->tls_to ? tls_words_of(r, 0, pem) : ff_strdup("");
	char *bind = ff_asprintf("%s%s", h2, in), *server = ff_asprintf("%s%s", h2, out);
	char *proof = pem ? tls_proof_lines(r, pem) : ff_strdup("");
	const char *const vars[] = {
		"DIR", r->dir, "PORT", port_str(port, r->port),
		"TARGET_PORT", port_str(target, r->target_port),
		"LISTEN_HOST", r->listen_host, "TARGET_HOST", r->target_host,
		"WORKERS", nworkers, "MODE", strcmp(opt.protocol, "tcp") ? "http" : "tcp",
		"BIND_LINES", bind, "SERVER_LINES", server, "TLS_PROOF_LINES", proof, NULL
	};

	snprintf(nworkers, sizeof(nworkers), "%ld", workers());
	r->conf = ff_asprintf("%s/haproxy.conf", r->dir);
	write_conf(r, "relay-conf/haproxy.conf", FF_CONF_NGINX, vars);
	r->ready_port = r->port;
	free(pem);
	free(in);
	free(out);
	free(bind);
	free(server);
	free(proof);
}

/* In the foreground (-db), its configuration file only. */
static void
args_haproxy(struct relay *r, struct ff_argv *a)
{
	ff_argv_addl(a, program_path, "-db", "-f", r->conf, NULL);
}

static void
tls_ports_haproxy(struct relay *from, struct relay *to)
{
	from->probe_port = ff_free_port();
	to->proof_port = ff_free_port();
}

/* The proof listener's answer, through the probe listener: "PROTOCOL CIPHER 0 SUBJECT". */
static int
prove_haproxy(struct relay *from, struct relay *to, int entry, struct tls_proof *p)
{
	char *req = tls_proof_request(to), *text;

	(void)entry;
	text = probe("127.0.0.1", from->probe_port, req);
	free(req);
	if (strncmp(text, "HTTP/1.1 200 ", 13))
		tls_fail(from, to, "did not come up (the probe through it got no answer from the relay after it)");
	p->source = "its proof listener (ssl_fc_protocol, ssl_fc_cipher, ssl_c_verify, ssl_c_s_dn)";
	tls_answer(from, to, text, "0 ", p);
	return 0;
}

const struct relay_driver relay_haproxy = {
	.name = "haproxy",
	.workers_setting = "nbthread",
	.tls_ports = tls_ports_haproxy,
	.configure = configure_haproxy,
	.args = args_haproxy,
	.prove = prove_haproxy,
};
