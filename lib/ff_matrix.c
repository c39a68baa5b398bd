/*
 * flimflam - the matrix of workloads, relays and protocols: one row per
 * workload and per relay, and the one function that says whether a relay
 * carries a workload over a protocol (man/man7/flimflam-matrix.7: "Relays, workloads,
 * protocols"). The names, the options' lists, bench's plan and order, the
 * combinations and their errors all come from these rows.
 *
 * A new workload is a row in workloads[] plus its own code: with own = 1
 * (programs in builtin/, added to BUILTIN in the Makefile) ff-workload
 * starts them as it starts builtin's (--port; --jobs, --warmup, --duration)
 * and takes the client's events, `result` among them, from a pipe. Either
 * way its code is its driver, bin/ff-workload.d/workload_NAME.c (its
 * server's and client's command lines, its output read into the result),
 * listed in ff-workload's drivers[]. A new relay is a row
 * in relays[] (what it carries and can do: caps) plus its driver,
 * bin/ff-topology.d/relay_NAME.c (configuration from relay-conf/, command
 * line, readiness, the proof of its TLS links), listed in ff-topology's
 * drivers[]. Either needs its row in the tables of man/man7/flimflam-matrix.7 (t/unit.bats holds
 * the two together).
 */
#include "ff.h"

#include <stdio.h>
#include <string.h>

/*
 * The workloads' own limits are the tools': iperf3 3.x has MAX_STREAMS
 * 128 for --parallel and 60 s for --omit. h2load has none of its own
 * (--clients and --threads are any count, --threads at most --clients,
 * which flimflam keeps equal, so a thread per client). builtin's,
 * builtin-rr's and builtin-crr's clients, beyond a few jobs a few epoll
 * threads, take the common range (65536).
 */
static const struct ff_workload workloads[] = {
	{ .name = "builtin", .protocols = FF_TCP, .own = 1,
	  .server = "ff-builtin-server", .client = "ff-builtin-client",
	  .measures = FF_BYTES },
	{ .name = "iperf3", .protocols = FF_TCP,
	  .server = "iperf3", .client = "iperf3", .version_arg = "--version",
	  .measures = FF_BYTES,
	  .limits = { { "--jobs", 128, "iperf3's limit on --parallel streams" },
		      { "--warmup", 60, "iperf3's limit on --omit seconds" } } },
	{ .name = "h2load", .protocols = FF_TCP | FF_HTTP2,
	  .server = "nghttpd", .client = "h2load", .url_path = "/flimflam.txt",
	  .version_arg = "--version",
	  .measures = FF_BYTES | FF_OPERATIONS | FF_LATENCY, .open_loop = 1,
	  .limits = { { "--jobs", 4096, "a thread per h2load client" } } },
	{ .name = "h2load-h1", .protocols = FF_TCP | FF_HTTP1,
	  .server = "nginx", .client = "h2load", .client_option = "--h1",
	  .url_path = "/flimflam.txt",
	  .measures = FF_BYTES | FF_OPERATIONS | FF_LATENCY, .open_loop = 1,
	  .limits = { { "--jobs", 4096, "a thread per h2load client" } } },
	{ .name = "builtin-rr", .protocols = FF_TCP, .own = 1,
	  .server = "ff-builtin-rr-server", .client = "ff-builtin-rr-client",
	  .measures = FF_BYTES | FF_OPERATIONS | FF_LATENCY, .request_response = 1,
	  .open_loop = 1 },
	{ .name = "builtin-crr", .protocols = FF_TCP, .own = 1,
	  .server = "ff-builtin-rr-server", .client = "ff-builtin-rr-client",
	  .client_option = "--crr",
	  .measures = FF_BYTES | FF_OPERATIONS | FF_LATENCY, .request_response = 1,
	  .open_loop = 1 },
};

/* Each relay's code is its driver, bin/ff-topology.d/relay_NAME.c. */
static const struct ff_relay relays[] = {
	{ .name = "skrouterd", .protocols = FF_TCP | FF_HTTP1 | FF_HTTP2,
	  .program = "skrouterd", .processes = 2, .threads = 4, .start_seconds = 60,
	  .check = ff_skrouterd_check, .can = ff_skrouterd_carries,
	  .caps = FF_RELAY_TLS | FF_RELAY_TLS_REMOTE | FF_RELAY_PROTON | FF_RELAY_ROUTED |
		  FF_RELAY_ONE_ADDRESS | FF_RELAY_STATS | FF_RELAY_ENCAPSULATION | FF_RELAY_WORKERS,
	  .version_arg = "--version" },
	{ .name = "nghttpx", .protocols = FF_HTTP1 | FF_HTTP2,
	  .program = "nghttpx", .processes = 2, .threads = 1, .start_seconds = 15,
	  .caps = FF_RELAY_TLS | FF_RELAY_WORKERS, .version_arg = "--version", .version_line = "nghttpx " },
	{ .name = "nginx", .protocols = FF_TCP | FF_HTTP1,
	  .program = "nginx", .processes = 2, .threads = 1, .start_seconds = 15,
	  .jobs_fit = ff_nginx_jobs_fit,
	  .caps = FF_RELAY_TLS | FF_RELAY_TLS_REMOTE | FF_RELAY_WORKERS | FF_RELAY_WORKER_PROCESSES,
	  /* To stderr: "nginx version: nginx/1.22.1". */
	  .version_arg = "-v", .version_line = "nginx version:", .version_strip = 1 },
	{ .name = "haproxy", .protocols = FF_TCP | FF_HTTP1 | FF_HTTP2,
	  .program = "haproxy", .processes = 2, .threads = 1, .start_seconds = 15,
	  .caps = FF_RELAY_TLS | FF_RELAY_TLS_REMOTE | FF_RELAY_WORKERS,
	  /* "HAProxy version 2.6.12-1+deb12u4 2023/12/16 - https://haproxy.org/" */
	  .version_arg = "-v", .version_line = "HAProxy version ", .version_strip = 1 },
	/* The user's own program, --relay-cmd: it carries what it carries; no TLS proof. */
	{ .name = "cmd", .protocols = FF_TCP | FF_HTTP1 | FF_HTTP2,
	  .processes = 2, .threads = 1, .start_seconds = 15,
	  .caps = FF_RELAY_COMMAND | FF_RELAY_FORKS },
	{ .name = "none", .protocols = FF_TCP | FF_HTTP1 | FF_HTTP2 },
};

/* The names, from the rows, before main (see names_from_rows). */
const char *ff_workloads[FF_ARRAY_SIZE(workloads) + 1];
const char *ff_relays[FF_ARRAY_SIZE(relays) + 1];
const char *const ff_protocols[] = { "tcp", "http1", "http2", NULL };

/* Every program that uses the matrix links this file for the names: fill them then. */
__attribute__((constructor)) static void
names_from_rows(void)
{
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(workloads); i++)
		ff_workloads[i] = workloads[i].name;
	for (i = 0; i < FF_ARRAY_SIZE(relays); i++)
		ff_relays[i] = relays[i].name;
}

const struct ff_workload *
ff_workload_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < FF_ARRAY_SIZE(workloads); i++)
		if (!strcmp(workloads[i].name, name))
			return &workloads[i];
	return NULL;
}

const struct ff_relay *
ff_relay_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < FF_ARRAY_SIZE(relays); i++)
		if (!strcmp(relays[i].name, name))
			return &relays[i];
	return NULL;
}

int
ff_protocol_bit(const char *name)
{
	int i;

	for (i = 0; name && ff_protocols[i]; i++)
		if (!strcmp(ff_protocols[i], name))
			return 1 << i;
	return 0;
}

int
ff_carries(const char *workload, const char *relay, const char *protocol,
	   const char *path, const char *encapsulation, struct ff_buf *why)
{
	const struct ff_relay *r = ff_relay_find(relay);
	int p = ff_protocol_bit(protocol), speaks = 0;
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(workloads); i++)
		if (!workload || !strcmp(workloads[i].name, workload))
			speaks |= workloads[i].protocols;
	if (!r || !(r->protocols & speaks & p)) {
		if (workload)
			ff_why(why, "workload '%s' over relay '%s' with protocol '%s' is not supported",
			       workload, relay, protocol);
		else
			ff_why(why, "relay '%s' does not carry protocol '%s'", relay, protocol);
		return 0;
	}
	if (!path || !r->can)
		return 1;
	return r->can(path, protocol, encapsulation, why);
}

const char *
ff_combos_for(const char *workload, const char *relay)
{
	static char buf[1024];
	struct ff_buf why = FF_BUF_INIT;
	size_t n = 0;
	int w, r, p;

	buf[0] = 0;
	for (w = 0; ff_workloads[w]; w++) {
		if (workload && strcmp(workload, ff_workloads[w]))
			continue;
		for (r = 0; ff_relays[r]; r++) {
			if (relay && strcmp(relay, ff_relays[r]))
				continue;
			for (p = 0; ff_protocols[p]; p++)
				if (ff_carries(ff_workloads[w], ff_relays[r], ff_protocols[p],
					       NULL, NULL, &why) && n < sizeof(buf))
					n += snprintf(buf + n, sizeof(buf) - n, "%s%s/%s/%s",
						      n ? ", " : "", ff_workloads[w],
						      ff_relays[r], ff_protocols[p]);
		}
	}
	ff_buf_free(&why);
	return buf;
}

const char *
ff_other_relays(const char *relay)
{
	static char buf[256];
	size_t n = 0, i;

	buf[0] = 0;
	for (i = 0; i < FF_ARRAY_SIZE(relays); i++)
		if (strcmp(relays[i].name, relay) && n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "",
				      relays[i].name);
	return buf;
}

int
ff_workload_limits(const char *workload, const struct ff_run_opts *o, struct ff_buf *why)
{
	const struct ff_workload *w = ff_workload_find(workload);
	size_t i;

	for (i = 0; w && i < FF_ARRAY_SIZE(w->limits) && w->limits[i].option; i++) {
		const struct ff_limit *l = &w->limits[i];
		long v = !strcmp(l->option, "--jobs") ? o->jobs : o->warmup;

		if (v <= l->max)
			continue;
		ff_why(why, "%s: workload '%s' allows at most %ld (%s), not %ld",
		       l->option, workload, l->max, l->what, v);
		return -1;
	}
	return 0;
}

int
ff_relay_has(const char *relay, int caps)
{
	const struct ff_relay *r = ff_relay_find(relay);

	return r && (r->caps & caps) == caps;
}

const char *
ff_relays_with(int caps)
{
	static char buf[256];
	size_t n = 0, i;

	buf[0] = 0;
	for (i = 0; i < FF_ARRAY_SIZE(relays); i++)
		if ((relays[i].caps & caps) == caps && n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "", relays[i].name);
	return buf;
}

const char *
ff_relay_program(const char *relay)
{
	const struct ff_relay *r = ff_relay_find(relay);

	return r ? r->program : NULL;
}

long
ff_relay_hops(const char *relay)
{
	const struct ff_relay *r = ff_relay_find(relay);

	return r ? r->processes : 2;
}

/* The relays with processes (built: with a program of their own), "a, b" (static). */
static const char *
relays_that(int built)
{
	static char buf[256];
	size_t i, k = 0;

	buf[0] = 0;
	for (i = 0; i < FF_ARRAY_SIZE(relays); i++)
		if (relays[i].processes && (!built || relays[i].program) && k < sizeof(buf))
			k += snprintf(buf + k, sizeof(buf) - k, "%s%s", k ? ", " : "", relays[i].name);
	return buf;
}

const char *
ff_relays_running(void)
{
	return relays_that(0);
}

const char *
ff_relays_built(void)
{
	return relays_that(1);
}

int
ff_hops_fit(const char *relay, long hops, struct ff_buf *why)
{
	if (hops == ff_relay_hops(relay))
		return 1;
	if (!ff_relay_hops(relay))
		ff_why(why, "--hops: relay '%s' runs no relay between client and server (its chain has 0 hops); --hops is for %s",
		       relay, ff_relays_running());
	else if (hops < 1 || hops > FF_HOPS_MAX)
		ff_why(why, "--hops: %ld is not from 1 to %d", hops, FF_HOPS_MAX);
	else
		return 1;
	return 0;
}

const char *
ff_workload_server_program(const char *workload)
{
	const struct ff_workload *w = ff_workload_find(workload);

	return w && !w->own ? w->server : NULL;
}

const char *
ff_workload_client_program(const char *workload)
{
	const struct ff_workload *w = ff_workload_find(workload);

	return w && !w->own ? w->client : NULL;
}

int
ff_workload_is_rr(const char *workload)
{
	const struct ff_workload *w = ff_workload_find(workload);

	return w && w->request_response;
}

int
ff_workload_takes_rate(const char *workload)
{
	const struct ff_workload *w = ff_workload_find(workload);

	return w && w->open_loop;
}

const char *
ff_workloads_taking(int rate)
{
	static char buf[256];
	size_t i, k = 0;

	buf[0] = 0;
	for (i = 0; i < FF_ARRAY_SIZE(workloads); i++)
		if ((rate ? workloads[i].open_loop : workloads[i].request_response) && k < sizeof(buf))
			k += snprintf(buf + k, sizeof(buf) - k, "%s%s", k ? ", " : "", workloads[i].name);
	return buf;
}
