/*
 * ff_stage.c - what the pipeline stages share: holding their children
 * until the reader is done, and the relay/protocol/workload matrix.
 */
#include "ff.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

int
ff_hold(struct ff_child *const kids[], int n, int watch_stdin)
{
	struct pollfd pfd[70];
	char buf[4096];
	int i, np;

	for (;;) {
		if (ff_signalled())
			return -1;
		np = 0;
		pfd[np++] = (struct pollfd){ ff_signal_fd(), POLLIN, 0 };
		/* events 0: a pipe whose reader closed reports POLLERR. */
		pfd[np++] = (struct pollfd){ 1, 0, 0 };
		pfd[np++] = (struct pollfd){ watch_stdin ? 0 : -1, POLLIN, 0 };
		for (i = 0; i < n && np < (int)FF_ARRAY_SIZE(pfd); i++)
			pfd[np++] = (struct pollfd){ kids[i]->pidfd, POLLIN, 0 };
		if (poll(pfd, np, -1) < 0 && errno != EINTR)
			ff_die("poll: %s", strerror(errno));
		if (ff_signalled())
			return -1;
		if (pfd[1].revents & (POLLERR | POLLHUP))
			return 0;
		for (i = 0; i < n; i++)
			if (pfd[3 + i].revents && ff_child_check(kids[i])) {
				ff_child_report(kids[i]);
				return 1;
			}
		if (pfd[2].revents) {
			ssize_t r = read(0, buf, sizeof(buf));

			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
				return 2;
		}
	}
}

const char *const ff_workloads[] = { "builtin", "iperf3", "h2load", "h2load-h1",
				     "builtin-rr", "builtin-crr", NULL };
const char *const ff_relays[] = { "skrouterd", "nghttpx", "nginx", "none", NULL };
const char *const ff_protocols[] = { "tcp", "http1", "http2", NULL };

/* Which protocols each can use: bit 0 tcp, 1 http1, 2 http2. */
static const int workload_protos[] = { 1, 1, 1 | 4, 1 | 2, 1, 1 };
static const int relay_protos[] = { 1 | 2 | 4, 2 | 4, 1 | 2, 1 | 2 | 4 };

static int
find(const char *const names[], const char *s)
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

int
ff_combo_ok(const char *workload, const char *relay, const char *protocol)
{
	int w = find(ff_workloads, workload), r = find(ff_relays, relay),
	    p = find(ff_protocols, protocol);

	if (w < 0 || r < 0 || p < 0)
		return 0;
	return (workload_protos[w] & relay_protos[r] & (1 << p)) != 0;
}

const char *
ff_combos_for(const char *workload, const char *relay)
{
	static char buf[1024];
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
				if (ff_combo_ok(ff_workloads[w], ff_relays[r], ff_protocols[p]) &&
				    n < sizeof(buf))
					n += snprintf(buf + n, sizeof(buf) - n, "%s%s/%s/%s",
						      n ? ", " : "", ff_workloads[w],
						      ff_relays[r], ff_protocols[p]);
		}
	}
	return buf;
}

const char *
ff_relay_program(const char *relay)
{
	if (!strcmp(relay, "none"))
		return NULL;
	return relay;
}

const char *
ff_workload_server_program(const char *workload)
{
	if (!strcmp(workload, "iperf3"))
		return "iperf3";
	if (!strcmp(workload, "h2load"))
		return "nghttpd";
	if (!strcmp(workload, "h2load-h1"))
		return "nginx";
	return NULL;	/* builtin, builtin-rr, builtin-crr: our own */
}

int
ff_workload_is_rr(const char *workload)
{
	return !strcmp(workload, "builtin-rr") || !strcmp(workload, "builtin-crr");
}

const char *
ff_workload_client_program(const char *workload)
{
	if (!strcmp(workload, "iperf3"))
		return "iperf3";
	if (!strncmp(workload, "h2load", 6))
		return "h2load";
	return NULL;
}

int
ff_cpus_workload(const cpu_set_t *avail, int limit, int nrelays, cpu_set_t *out)
{
	int cpus[CPU_SETSIZE], ncpus = 0, i, used = limit * nrelays;

	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, avail))
			cpus[ncpus++] = i;
	CPU_ZERO(out);
	if (limit <= 0 || used >= ncpus) {
		*out = *avail;
		return 0;
	}
	for (i = used; i < ncpus; i++)
		CPU_SET(cpus[i], out);
	return 1;
}

static const char no_http[] = "no HTTP adaptor";

int
ff_skrouterd_can(const char *path, const char *protocol, const char *encapsulation,
		 const char **lacks, char *why, size_t n)
{
	struct ff_skr_features f;
	char *schema;
	int r;

	*lacks = NULL;
	if (!strcmp(protocol, "tcp") && !encapsulation)
		return 1;	/* every router has the tcp adaptor */
	schema = ff_skrouterd_schema_path(path);
	if (!schema) {
		snprintf(why, n, "cannot find the management schema of '%s' (from 'skrouterd --help')", path);
		return -1;
	}
	r = ff_skrouterd_features(schema, &f);
	if (r < 0) {
		snprintf(why, n, "cannot read the management schema '%s'", schema);
		free(schema);
		return -1;
	}
	free(schema);
	if (strcmp(protocol, "tcp") && !f.has_http)
		*lacks = no_http;
	else if (encapsulation && !f.tcp_encapsulation)
		*lacks = "no tcp encapsulation setting";
	return *lacks == NULL;
}

int
ff_relay_can(const char *relay, const char *path, const char *protocol,
	     const char *encapsulation, char *why, size_t n)
{
	const char *lacks;
	int r;

	if (strcmp(relay, "skrouterd"))
		return 1;
	r = ff_skrouterd_can(path, protocol, encapsulation, &lacks, why, n);
	if (r < 0)
		return -1;
	if (!r && lacks == no_http) {
		snprintf(why, n, "the skrouterd at '%s' has %s (routers from 3.1 on have none): protocol '%s' needs a 2.x or 3.0 router; tcp works",
			 path, lacks, protocol);
		return 0;
	}
	if (!r) {
		snprintf(why, n, "the skrouterd at '%s' has %s (only 2.5 to 3.0 routers have one)",
			 path, lacks);
		return 0;
	}
	if (encapsulation && strcmp(protocol, "tcp")) {
		snprintf(why, n, "encapsulation applies to protocol tcp only");
		return 0;
	}
	return 1;
}
