/*
 * ff-topology's driver for relay nghttpx: an HTTP reverse proxy over http1
 * and http2 (relay-conf/nghttpx.conf); over --tls, each link proved by the
 * access log of the relay it comes to.
 */
#include "ff-topology.h"

#include <string.h>

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

	port_str(port, r->port);
	port_str(target, r->target_port);
	snprintf(nworkers, sizeof(nworkers), "%ld", workers());
	r->conf = ff_asprintf("%s/nghttpx.conf", r->dir);
	write_conf(r, "relay-conf/nghttpx.conf", FF_CONF_NGHTTPX, vars);
	r->ready_port = r->port;
	free(tls);
}

static void
args_nghttpx(struct relay *r, struct ff_argv *a)
{
	ff_argv_add(a, program_path);
	ff_argv_addf(a, "--conf=%s", r->conf);
}

/*
 * The access log of the relay the link comes to ($tls_protocol,
 * $tls_cipher, $tls_client_subject_name), for the request of ours that
 * came through the link.
 */
static int
prove_nghttpx(struct relay *from, struct relay *to, int entry, struct tls_proof *p)
{
	char *log = ff_asprintf("%s/access.log", to->dir), *line, *want, *text = NULL;
	char *req = tls_proof_request(to);
	double deadline = ff_now() + 5;

	free(probe(opt.listen, entry, req));
	free(req);
	want = ff_asprintf("/flimflam-tls-proof/%s ", to->role);
	p->source = "its access log ($tls_protocol, $tls_cipher, $tls_client_subject_name)";
	/* The relay writes the line as the response leaves it: soon, not at once. */
	for (line = NULL; !line && ff_now() < deadline; ) {
		free(text);
		text = ff_read_file(log, NULL);
		line = text ? strstr(text, want) : NULL;
		if (!line && ff_sleep(0.05) < 0)
			ff_exit_signalled();
	}
	if (!line || tls_words(line + strlen(want), p) < 3)
		tls_fail(from, to, "did not come up (the request through it did not reach the relay after it)");
	free(log);
	free(want);
	free(text);
	if (!strcmp(p->peer, "-"))
		tls_fail(from, to, "came up without a verified peer certificate");
	return 0;
}

static char *
tls_log_nghttpx(const struct relay *r)
{
	return ff_asprintf("%s/error.log", r->dir);
}

const struct relay_driver relay_nghttpx = {
	.name = "nghttpx",
	.workers_setting = "workers",
	.configure = configure_nghttpx,
	.args = args_nghttpx,
	.prove = prove_nghttpx,
	.tls_log = tls_log_nghttpx,
};

