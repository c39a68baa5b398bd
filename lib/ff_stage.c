/*
 * ff_stage.c - what the pipeline stages share: holding their children
 * until the reader is done, and the relay/protocol/workload matrix.
 */
#include "ff.h"
#include "ff_int.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* Upstream events after the upstream's end, while holding: dropped. */
static int
ev_drop(struct ff_stage *s)
{
	json_t *ev = s->up.fd >= 0 ? ff_reader_next(&s->up) : NULL;

	json_decref(ev);
	return ev != NULL;
}

void
ff_stage_begin(struct ff_stage *s, int read_upstream)
{
	memset(s, 0, sizeof(*s));
	s->up = (struct ff_reader)FF_READER_INIT(read_upstream ? 0 : -1, "standard input");
	s->up.strict = 1;
	ff_emit_start();
}

/* A signal: 128+n before our end; after it, the way a holder is ended. */
noreturn static void
stop_signalled(const struct ff_stage *s)
{
	if (s->done)
		ff_quit(0);
	ff_exit_signalled();
}

int
ff_stage_wait(struct ff_stage *s, struct pollfd *extra, int n, int timeout_ms)
{
	struct pollfd pfd[3 + FF_STAGE_MAX_FDS];
	int i, r;

	if (n > FF_STAGE_MAX_FDS)
		ff_die("too many fds to watch (%d)", n);
	if (ff_signalled())
		stop_signalled(s);
	pfd[0] = (struct pollfd){ ff_signal_fd(), POLLIN, 0 };
	/* events 0: a pipe whose reader closed reports POLLERR. */
	pfd[1] = (struct pollfd){ 1, 0, 0 };
	pfd[2] = (struct pollfd){ s->up.fd >= 0 && !s->up.eof ? s->up.fd : -1, POLLIN, 0 };
	for (i = 0; i < n; i++) {
		extra[i].revents = 0;
		pfd[3 + i] = extra[i];
	}
	r = poll(pfd, 3 + n, timeout_ms);
	if (r < 0 && errno != EINTR)
		ff_die("poll: %s", strerror(errno));
	if (ff_signalled())
		stop_signalled(s);
	if (r <= 0)
		return 0;
	for (i = 0; i < n; i++)
		extra[i].revents = pfd[3 + i].revents;
	if (pfd[1].revents & (POLLERR | POLLHUP)) {
		/*
		 * The reader is gone. What else woke us comes first: a child
		 * that died is reported, since the run is failing and it may be
		 * why; the next wait quits.
		 */
		for (i = 0; i < n && !extra[i].revents; i++)
			;
		if (i == n)
			ff_quit(s->done ? 0 : 128 + SIGPIPE);
		return r;
	}
	if (pfd[2].revents && ff_reader_fill(&s->up) < 0 && !ff_signalled())
		ff_die("cannot read standard input: %s", strerror(errno));
	return r;
}

json_t *
ff_stage_next(struct ff_stage *s)
{
	json_t *ev = s->up.fd >= 0 ? ff_reader_next(&s->up) : NULL;
	const char *name;

	if (!ev) {
		if (s->up.eof && !s->ended) {
			if (s->starts)
				ff_quit(1);	/* the stage before us failed and said why */
			ff_die_event("standard input ended %s: %s reads the event stream of "
				     "flimflam's programs", s->events ? "without an end event" :
				     "with no event", ff_prog());
		}
		return NULL;
	}
	s->events++;
	name = ff_event_name(ev);
	if (!strcmp(name, "start")) {
		s->starts++;
		s->depth++;
	} else if (!strcmp(name, "end") && --s->depth <= 0) {
		s->ended = 1;
	}
	return ev;
}

void
ff_stage_end(struct ff_stage *s, int status)
{
	ff_emit_end(status);
	s->done = 1;
}

int
ff_stage_hold(struct ff_stage *s, struct ff_child *const kids[], int n)
{
	struct pollfd pfd[FF_STAGE_MAX_FDS];
	int i;

	if (n > FF_STAGE_MAX_FDS)
		n = FF_STAGE_MAX_FDS;
	for (;;) {
		for (i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ kids[i]->pidfd, POLLIN, 0 };
		ff_stage_wait(s, pfd, n, -1);
		for (i = 0; i < n; i++)
			if (pfd[i].revents && ff_child_check(kids[i])) {
				ff_child_report(kids[i]);
				ff_children_stop_all();
				return 1;
			}
		/* What the upstream says after its end is not ours to forward. */
		while (ev_drop(s))
			;
		if (s->up.eof) {
			/* The upstream is gone while we hold: it failed, and said why. */
			ff_children_stop_all();
			return 1;
		}
	}
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
	if (!(ff_protocol_bit(protocol) & FF_HTTP) && !encapsulation)
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
	if ((ff_protocol_bit(protocol) & FF_HTTP) && !f.has_http)
		*lacks = no_http;
	else if (encapsulation && !f.tcp_encapsulation)
		*lacks = "no tcp encapsulation setting";
	return *lacks == NULL;
}

int
ff_skrouterd_carries(const char *path, const char *protocol, const char *encapsulation,
		     char *why, size_t n)
{
	const char *lacks;
	int r;

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
	if (encapsulation && ff_protocol_bit(protocol) != FF_TCP) {
		snprintf(why, n, "encapsulation applies to protocol tcp only");
		return 0;
	}
	return 1;
}
