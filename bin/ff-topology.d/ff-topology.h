/*
 * ff-topology's private header: the run's options, the chain of relays and
 * its links, and the relay drivers (one file each, relay_NAME.c) that the
 * generic parts call: main.c (options, checks, events), chain.c (ports,
 * placement, starting), tls.c (certificates and the links' proofs), env.c
 * (the environment of the relay's build).
 */
#ifndef FF_TOPOLOGY_H
#define FF_TOPOLOGY_H

#include "ff.h"

extern struct topology_opts {
	const char *relay, *protocol, *run_dir, *encapsulation, *build;
	long cpu_limit, server_port;
	long workers;		/* --workers: 0, one per CPU of --cpu-limit, else the row's threads */
	int config_only, tls;
	long hops;		/* -1: the relay's own (2; none's 0) */
	const char *listen, *relay_role, *target_event;
	const char *tls_certs;	/* --relay-role --tls: the chain's certificates, given */
	const char *relay_cmd;	/* --relay-cmd: relay cmd's command line */
} opt;

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
	 * link from, the relay it makes one to; a driver whose tls_ports
	 * sets them proves a link through a probe listener on the first and
	 * a proof listener on the second.
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

/* What a link's proof found: filled by a driver's prove. */
struct tls_proof {
	char proto[64], cipher[128], peer[256];
	const char *said_by;	/* the role of the relay that said it (default: the link's `to`) */
	const char *source;	/* where it read it, for the event */
};

/*
 * A relay's driver: everything ff-topology does differently per relay.
 * Its facts (name, protocols, program, hops, threads, version probe,
 * capabilities) are its row of the matrix (lib/ff_matrix.c); the driver
 * is the code. Only `name`, `configure` and `args` are needed; a NULL
 * hook does the common thing.
 */
struct relay_driver {
	const char *name;
	/*
	 * The setting its configuration or command line takes workers() in
	 * ("router workerThreads"), for `topology`; its row has
	 * FF_RELAY_WORKERS. NULL: flimflam sets no worker count of its.
	 */
	const char *workers_setting;
	/* Before anything starts, once program_path is known: what else it needs (die or usage error). */
	void (*check)(void);
	void (*ports)(struct relay *r);	/* ports beyond the data path */
	void (*link)(struct link *l);	/* NULL: the link is the next relay's data port */
	/* --tls: ports the link from `from` to `to` needs for its proof. */
	void (*tls_ports)(struct relay *from, struct relay *to);
	/* Write r->conf (NULL: none) and set r->ready_port. */
	void (*configure)(struct relay *r);
	/* The command line, program first (program_path, or the driver's own). */
	void (*args)(struct relay *r, struct ff_argv *a);
	/* After r1 starts with --tls, until it listens: stop early on a failed link. */
	void (*tls_wait)(struct relay *r);
	/*
	 * --tls: prove the link from `from` to `to` (`entry`: where the
	 * chain's traffic enters): fill `p`, or tls_fail. 0, or -1 when a
	 * relay lost a port to another program (its log says so).
	 */
	int (*prove)(struct relay *from, struct relay *to, int entry, struct tls_proof *p);
	/* The log where the relay a link leaves says why TLS failed (malloc'd); NULL: its own log. */
	char *(*tls_log)(const struct relay *r);
};

extern const struct relay_driver relay_skrouterd, relay_nghttpx, relay_nginx, relay_haproxy,
	relay_cmd, relay_none;

/* main.c */
extern const char usage[];
extern struct relay relays[FF_HOPS_MAX];
extern struct link links[FF_HOPS_MAX - 1];
extern int nrelays;
extern struct relay prev_relay, next_relay;
extern char *program_path;
extern const struct ff_relay *row;	/* opt.relay's row of the matrix */
extern const struct relay_driver *drv;	/* and its driver */
extern struct ff_build build;		/* the relay's build (label NULL: on PATH) */
long workers(void);
const struct relay_driver *driver_find(const char *name);

/* conf.c: a template of relay-conf filled, added to `text`; or written as r->conf. */
void conf_part(struct ff_buf *text, const char *tmpl_name, enum ff_conf_syntax syntax,
	       const char *const vars[]);
void write_conf(struct relay *r, const char *tmpl_name, enum ff_conf_syntax syntax,
		const char *const vars[]);
/* "%d" of a port, in a buffer of the caller's. */
const char *port_str(char buf[16], int port);

/* chain.c */
extern const char *front_host;
extern int cpus_shared;
extern json_t *cpus_others;
void chain_relays(void);
int start_relays(const char *server_host, int server_port);

/* tls.c */
extern json_t *tls_links;
extern json_t *upstream_tls_links;
void tls_certs(const struct relay *rs, int n);
void tls_relay(struct relay *r);
void tls_link(struct relay *from, struct relay *to);
int tls_prove_links(struct relay **failed);
noreturn void tls_fail(const struct relay *from, const struct relay *to, const char *what);
/* What came back on a connection to host:port after `req` (NULL: nothing), up to 10 s (malloc'd). */
char *probe(const char *host, int port, const char *req);
/* "PROTOCOL CIPHER VERIFY" from the last line of `text`, into the proof; how many words. */
int tls_words(const char *text, struct tls_proof *p);
/*
 * A relay's answer "PROTOCOL CIPHER VERIFIED PEER" (`text`, freed) into
 * the proof: the link failed unless the third word starts the way
 * `verified` says a verified certificate does ("SUCCESS ", "0 "); the
 * peer is what follows it.
 */
void tls_answer(const struct relay *from, const struct relay *to, char *text, const char *verified,
		struct tls_proof *p);
/* The request through the chain that a relay answers with its proof (malloc'd). */
char *tls_proof_request(const struct relay *to);
/* OpenSSL's TLSv1.3 suites, in its default order. */
extern const char openssl_tls13[];

/* env.c */
void env_start(void);
json_t *env_finish(void);
void emit_environment(json_t *env);

#endif
