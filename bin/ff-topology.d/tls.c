/*
 * ff-topology --tls: the run's certificates, each relay's, the links made
 * TLS, and each link proved by its relay's driver before any load.
 */
#include "ff-topology.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

json_t *tls_links;	/* --tls: each link's proof */
json_t *upstream_tls_links;	/* --target-event topology: the upstream's links' proofs */

const char openssl_tls13[] =
	"TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";

/* The run's certificates, once: a CA, and a certificate and key for each relay. */
void
tls_certs(const struct relay *rs, int n)
{
	const char *roles[FF_HOPS_MAX];
	struct ff_buf why = FF_BUF_INIT;
	int i;

	if (opt.tls_certs)
		return;		/* given, made by one CA for the whole chain */
	for (i = 0; i < n && i < (int)FF_ARRAY_SIZE(roles); i++)
		roles[i] = rs[i].role;
	if (ff_tls_certs(ff_rundir(NULL), roles, i, &why) < 0)
		ff_die("--tls: %s", why.s);
}

/* A relay's own certificate and key, and the CA it trusts: the run's, or --tls-certs's, where they are. */
void
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
void
tls_link(struct relay *from, struct relay *to)
{
	from->tls_to = to;
	to->tls_from = from;
	if (drv->tls_ports)
		drv->tls_ports(from, to);
}

/* Proving the links: read from the relays what they negotiated */

/*
 * What came back on a connection to host:port after sending `req` (NULL:
 * nothing), up to its end or 10 s (malloc'd; "" for nothing).
 */
char *
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
noreturn void
tls_fail(const struct relay *from, const struct relay *to, const char *what)
{
	char *log = drv->tls_log ? drv->tls_log(from) : ff_strdup(from->child.log);
	char *hint = tls_log_hint(log);

	/* --tls-certs: flimflam's, which removes them from this host afterwards. */
	char *where = opt.tls_certs ? ff_strdup("") :
		ff_asprintf("; the certificates are in '%s/tls'", ff_rundir(NULL));

	ff_die_event("--tls: the link from %s to %s %s%s%s%s", from->role, to->role, what,
		     hint ? "; " : "", hint ? hint : "", where);
}

/* "PROTOCOL CIPHER VERIFY" from the last line of `text`, into the proof. */
int
tls_words(const char *text, struct tls_proof *pr)
{
	const char *last = text, *p;

	for (p = text; *p; p++)
		if (*p == '\n' && p[1])
			last = p + 1;
	pr->proto[0] = pr->cipher[0] = pr->peer[0] = 0;
	return sscanf(last, "%63s %127s %255[^\r\n]", pr->proto, pr->cipher, pr->peer);
}

void
tls_answer(const struct relay *from, const struct relay *to, char *text, const char *verified,
	   struct tls_proof *p)
{
	size_t n = strlen(verified);

	if (tls_words(text, p) < 3)
		tls_fail(from, to, "did not come up (nothing came back through it)");
	free(text);
	if (strncmp(p->peer, verified, n))
		tls_fail(from, to, "came up without a verified peer certificate");
	memmove(p->peer, p->peer + n, strlen(p->peer + n) + 1);
}

char *
tls_proof_request(const struct relay *to)
{
	return ff_asprintf("GET /flimflam-tls-proof/%s HTTP/1.1\r\nHost: flimflam\r\n"
			   "Connection: close\r\n\r\n", to->role);
}

/*
 * Prove the link from `from` to `to` (`entry`: the port the chain's
 * traffic enters at) through the driver: the protocol and cipher as a
 * relay of the link reads them (said_by), and that the peer's certificate
 * verified. A link that did not come up, or came up without TLS, fails
 * the run. Returns the `tls_links` object of the topology event, or NULL
 * when a relay lost a port to another program (its log says so).
 */
static json_t *
tls_prove(struct relay *from, struct relay *to, int entry)
{
	struct tls_proof p = { .said_by = to->role };
	int i;

	if (drv->prove(from, to, entry, &p) < 0)
		return NULL;
	if (!p.proto[0] || !strcmp(p.proto, "-") || !p.cipher[0] || !strcmp(p.cipher, "-"))
		tls_fail(from, to, "came up without TLS (no protocol negotiated)");
	for (i = 0; p.peer[i]; i++)
		if ((unsigned char)p.peer[i] < ' ')
			p.peer[i] = '?';
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:s}", "from", from->role, "to", to->role,
			 "protocol", p.proto, "cipher", p.cipher, "peer_verified", 1,
			 "peer", p.peer, "said_by", p.said_by, "source", p.source);
}

/*
 * --tls, once every relay is up: each link proved, into `tls_links`. 0, or
 * -1 with `*failed` the router that lost its management's port.
 */
int
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

