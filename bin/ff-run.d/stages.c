/*
 * stages.c - the stages of a run's pipeline: each named, in a process
 * group of its own and watched by a pidfd; a stop passed on to them, and
 * bounded: a stage that has not ended STAGE_GRACE_S after it was asked to
 * is killed with what it started, and we say so; their ends worded.
 */
#include "ff-run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pipeline.h>

/*
 * How long a stage may take to stop once asked (a signal passed on, or
 * the run's end); then it is killed. Its own children get 1 s each.
 */
#define STAGE_GRACE_S 10

/* Each stage's name and role (whose host it runs on), by its place. */
#define MAX_STAGES (2 + 2 * FF_HOPS_MAX)
static struct {
	char *name;
	const char *role;
	int ended;	/* a remote stage whose session we closed: its reader is gone */
	pid_t pid;
	int pidfd;	/* -1 where the kernel has no pidfd_open */
	int gone;	/* it exited (not yet reaped) */
	int killed;	/* it did not stop in time: we killed it */
} stages[MAX_STAGES];
static int nstages;

static pipeline *running;
static int stages_wait(double until);
static double stop_at;		/* when the stages were asked to stop, or 0 */
static int stop_sig;		/* with which signal */
static int events;		/* --json: the stream takes error events */

static void
post_fork(void)
{
	/*
	 * A group of its own, so that what it leaves in it can be killed
	 * with it; the terminal's Ctrl-C comes to flimflam, which passes it on.
	 */
	setpgid(0, 0);
	/* Nothing outlives flimflam, even when it is SIGKILLed. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
}

/*
 * A stage: the program `name` with the arguments in `a` (which it frees),
 * here or on the host of `role` (hosts.c); named `label` in messages.
 */
pipecmd *
stage_argv(const char *role, const char *label, const char *name, struct ff_argv *a)
{
	char *path = ff_program(name);
	struct ff_argv all = FF_ARGV_INIT;
	pipecmd *cmd;
	size_t i;

	if (!path)
		ff_die("cannot find %s beside flimflam nor on PATH", name);
	if (nstages == MAX_STAGES)
		ff_die("more than %d stages", MAX_STAGES);
	ff_argv_add(&all, path);
	for (i = 0; i < a->n; i++)
		ff_argv_add(&all, a->v[i]);
	/* flimflam says why the run stopped, and made ff-capture's checks itself. */
	ff_argv_add(&all, "--pipeline-stage");
	cmd = hosts_stage(role, name, all.v, !strcmp(name, "ff-capture"));
	stages[nstages].name = hosts_dest(role) ?
		ff_asprintf("%s on %s", label, hosts_dest(role)) : strdup(label);
	stages[nstages].pidfd = -1;
	stages[nstages++].role = role;
	ff_argv_free(&all);
	ff_argv_free(a);
	free(path);
	return cmd;
}

/*
 * A stage's end that it did not say itself (a signal, a lost connection,
 * killed at the grace's end), said on stderr by the caller: with --json,
 * an `error` event naming the stage says it in the stream too, so that
 * whoever reads the stream (ff-bench) knows why without reading stderr.
 */
static void
stage_error(int i, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	json_t *ev;

	if (!events)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev = ff_event("error");
	json_object_set_new(ev, "program", json_string(i < nstages ? stages[i].name : "a stage"));
	json_object_set_new(ev, "message", ff_json_text(msg));
	ff_emit(ev);
}

/* Has stage i exited? Asked without reaping it: pipeline_wait_all does. */
static int
stage_gone(int i)
{
	siginfo_t si;
	int r;

	if (stages[i].gone)
		return 1;
	memset(&si, 0, sizeof(si));
	while ((r = waitid(P_PID, stages[i].pid, &si, WEXITED | WNOHANG | WNOWAIT)) < 0 &&
	       errno == EINTR)
		;
	if (r < 0 || si.si_pid == stages[i].pid)
		stages[i].gone = 1;
	return stages[i].gone;
}

int
stages_all_ended(void)
{
	int i;

	for (i = 0; i < nstages; i++)
		if (!stage_gone(i))
			return 0;
	return 1;
}

/*
 * Stop what remains of the pipeline (the cleanup hook while it runs: our
 * output closed or failed, or we failed), as for Ctrl-C, in bounded time.
 */
static void
stop_pipeline(void)
{
	int i;

	if (!running)
		return;
	stages_stop(SIGTERM);
	stages_wait(stop_at + STAGE_GRACE_S);
	stages_enforce();
	/*
	 * Reaped here, not by pipeline_wait, which would say "Terminated" of
	 * a stage that the SIGTERM reached before its handler was in (it had
	 * started nothing yet): we stopped it, that is not news.
	 */
	for (i = 0; i < pipeline_get_ncommands(running); i++)
		while (waitpid(pipeline_get_pid(running, i), NULL, 0) < 0 && errno == EINTR)
			;
	running = NULL;
	hosts_disconnect();
}

void
stages_start(pipeline *p, int json)
{
	int i;

	events = json;
	pipeline_install_post_fork(post_fork);
	pipeline_start(p);
	running = p;
	for (i = 0; i < nstages && i < pipeline_get_ncommands(p); i++) {
		stages[i].pid = pipeline_get_pid(p, i);
		/* Set in both, so that a signal sent to the group right away reaches it. */
		setpgid(stages[i].pid, stages[i].pid);
		stages[i].pidfd = syscall(SYS_pidfd_open, stages[i].pid, 0);
	}
	ff_set_cleanup(stop_pipeline);
}

/*
 * Every stage still running is sent `sig`; the grace starts with the
 * first stop (a later signal is passed on, and does not extend it).
 */
void
stages_stop(int sig)
{
	int i;

	if (!stop_at)
		stop_at = ff_now();
	if (stop_sig == sig)
		return;
	stop_sig = sig;
	for (i = 0; running && i < nstages; i++)
		if (!stage_gone(i))
			kill(stages[i].pid, sig);
}

int
stages_timeout_ms(void)
{
	double left;

	if (!stop_at)
		return -1;
	left = stop_at + STAGE_GRACE_S - ff_now();
	/* Past it, what was killed is awaited: look again in a while. */
	return left <= 0 ? 100 : (int)(left * 1000) + 1;
}

/*
 * Stage i, its group, and every process it started (each in a group of
 * its own, from ff_spawn): killed, and given a moment to be gone.
 */
static void
kill_stage(int i)
{
	pid_t tree[256];
	int n = ff_proc_tree(stages[i].pid, tree, 256), k, t;

	for (k = 0; k < n; k++) {
		pid_t g = getpgid(tree[k]);

		if (g == tree[k] && g != getpgrp())
			kill(-g, SIGKILL);
		kill(tree[k], SIGKILL);
	}
	kill(-stages[i].pid, SIGKILL);
	stages[i].killed = 1;
	for (t = 0; t < 200; t++) {
		for (k = 0; k < n && !ff_proc_alive(tree[k]); k++)
			;
		if (k == n)
			break;
		poll(NULL, 0, 10);
	}
}

void
stages_enforce(void)
{
	int i;

	if (!stop_at || ff_now() < stop_at + STAGE_GRACE_S)
		return;
	for (i = 0; i < nstages; i++)
		if (!stage_gone(i) && !stages[i].killed) {
			ff_warn("%s did not stop within %d s of %s; killed it and what it started",
				stages[i].name, STAGE_GRACE_S, ff_sig_name(stop_sig));
			stage_error(i, "did not stop within %d s of %s; killed it and what it started",
				    STAGE_GRACE_S, ff_sig_name(stop_sig));
			kill_stage(i);
		}
}

/*
 * Until every stage has exited or `until` passes, watching their pidfds;
 * a signal meanwhile is passed on. 1 when all have exited.
 */
static int
stages_wait(double until)
{
	struct pollfd pfd[MAX_STAGES + 1];
	int i, n, tick;

	while (!stages_all_ended()) {
		double left = until - ff_now();

		if (left <= 0)
			return 0;
		if (ff_signalled() && ff_signalled() != stop_sig) {
			stages_stop(ff_signalled());
			if (until > stop_at + STAGE_GRACE_S)
				until = stop_at + STAGE_GRACE_S;
		}
		n = 0;
		pfd[n++] = (struct pollfd){ ff_signal_fd(), POLLIN, 0 };
		tick = 0;
		for (i = 0; i < nstages; i++) {
			if (stage_gone(i))
				continue;	/* its pidfd would wake us at once, always */
			if (stages[i].pidfd < 0)
				tick = 1;	/* no pidfd: look again in a while */
			else
				pfd[n++] = (struct pollfd){ stages[i].pidfd, POLLIN, 0 };
		}
		poll(pfd, n, tick && left > 0.1 ? 100 : (int)(left * 1000) + 1);
		ff_signal_drain();
	}
	return 1;
}

/*
 * The last stage is done, so each stage's reader goes in turn: locally a
 * stage sees that on its stdout, but a remote stage's reader is its ssh
 * session, which notices no closed pipe while it has nothing to write.
 * Closing the sessions, last first, tells each remote stage; it stops what
 * it holds as it does locally.
 */
void
stages_close_sessions(void)
{
	int i;

	for (i = nstages - 1; i >= 0; i--)
		if (hosts_dest(stages[i].role) && !stage_gone(i) && kill(stages[i].pid, SIGTERM) == 0)
			stages[i].ended = 1;
}

/*
 * After the run's end every stage stops what it holds on its own: one
 * that has not within the grace is asked (SIGTERM), then killed.
 */
static void
stages_end(void)
{
	int i;

	if (!stop_at && !stages_wait(ff_now() + STAGE_GRACE_S) && !stop_at) {
		for (i = 0; i < nstages; i++)
			if (!stage_gone(i))
				ff_warn("%s had not ended %d s after the run's end; stopping it",
					stages[i].name, STAGE_GRACE_S);
		stages_stop(SIGTERM);
	}
	if (stop_at && !stages_wait(stop_at + STAGE_GRACE_S))
		stages_enforce();
}

/*
 * pipeline_wait_all, without its line for a stage that a signal ended
 * ("ff-workload: Killed"): we word the stages' ends ourselves. They have
 * ended (stages_end), so nothing else is said meanwhile.
 */
static void
wait_all_quietly(int **statuses, int *nstatuses)
{
	int saved = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (saved >= 0 && null >= 0)
		dup2(null, 2);
	pipeline_wait_all(running, statuses, nstatuses);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
	if (null >= 0)
		close(null);
}

/*
 * The stages reaped: 1 if any failed (those that did not say why, worded
 * unless a signal stopped the run; *sig gets one that came meanwhile).
 */
int
stages_reap(int *sig)
{
	int *statuses, nstatuses, i, failed = 0;

	stages_end();
	wait_all_quietly(&statuses, &nstatuses);
	running = NULL;
	ff_set_cleanup(NULL);
	if (!*sig && ff_signalled())
		*sig = ff_signalled();
	for (i = 0; i < nstatuses; i++) {
		int st = statuses[i];
		/* A session we closed is not news; one that ended on its own may be the lost connection. */
		const char *lost = i < nstages && st != 0 ?
			hosts_lost(stages[i].role, stages[i].ended ? 0 : st) : NULL;

		if (i < nstages && stages[i].killed) {
			failed = 1;	/* said when it was killed */
			continue;
		}
		/*
		 * A lost connection is said whenever it came: a stage after it
		 * (the client, reset by a relay that went with it) may have
		 * ended the pipeline first, and its session was then closed.
		 */
		if (!*sig && lost) {
			failed = 1;
			ff_warn("%s: lost the ssh connection to '%s'", stages[i].name, lost);
			stage_error(i, "lost the ssh connection to '%s'", lost);
			continue;
		}
		/* A session we closed ends as ssh ends on SIGTERM. */
		if (i < nstages && stages[i].ended &&
		    ((WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) ||
		     (WIFEXITED(st) && WEXITSTATUS(st) == 255)))
			st = 0;
		if (st == 0)
			continue;
		failed = 1;
		/*
		 * A stage that failed said why; one that did not, we word. One
		 * whose reader went away (141) stopped for the stage after it.
		 */
		if (!*sig && (WIFSIGNALED(st) || (WEXITSTATUS(st) >= 126 &&
						      WEXITSTATUS(st) != 128 + SIGPIPE))) {
			ff_warn("%s %s", i < nstages ? stages[i].name : "a stage", ff_status_how(st));
			stage_error(i, "%s", ff_status_how(st));
		}
	}
	free(statuses);
	for (i = 0; i < nstages; i++)
		if (stages[i].pidfd >= 0) {
			close(stages[i].pidfd);
			stages[i].pidfd = -1;
		}
	return failed;
}
