/*
 * ff_stage.c - the pipeline stages: their loop over the upstream's
 * events, their start and end events, and holding their children until
 * the reader is done.
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

void
ff_emit_start(void)
{
	json_t *ev = ff_event("start");

	json_object_set_new(ev, "schema", json_integer(FF_SCHEMA));
	json_object_set_new(ev, "tool", json_string(ff_prog()));
	json_object_set_new(ev, "version", json_string(FF_VERSION));
	json_object_set_new(ev, "time", json_string(ff_iso_time()));
	json_object_set_new(ev, "pid", json_integer(getpid()));
	/* Data, not a sentence: where a stage given one keeps the run's files. */
	if (ff_rundir_known())
		json_object_set_new(ev, "run_dir", ff_json_path(ff_rundir_known()));
	ff_emit(ev);
}

void
ff_emit_end(int status)
{
	json_t *ev = ff_event("end");

	json_object_set_new(ev, "program", json_string(ff_prog()));
	json_object_set_new(ev, "status", json_integer(status));
	ff_emit(ev);
}
