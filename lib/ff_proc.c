/*
 * ff_proc.c - children in known roles: spawn without a shell, watch with
 * pidfds, stop in reverse order of start; and the signals that end a run.
 */
#include "ff_base.h"
#include "ff_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CHILDREN 64

static struct ff_child *children[MAX_CHILDREN];
static int nchildren;

static int sigpipe_fds[2] = { -1, -1 };
static volatile sig_atomic_t caught;

static void
on_signal(int sig)
{
	int saved = errno;

	if (!caught)
		caught = sig;
	if (sigpipe_fds[1] >= 0 && write(sigpipe_fds[1], "x", 1) < 0) {
		/* the pipe is full: a signal is already pending */
	}
	errno = saved;
}

/*
 * A stage that a signal is stopping fails in what it was doing (a probe
 * cut short, a child gone): that is not news. It stops as signalled, and
 * the dispatcher says why the run ended, once. (ff_die's hook: a signal is
 * caught only once ff_signals_init set it.)
 */
static void
stop_stage_signalled(void)
{
	if (ff_pipeline_stage() && ff_signalled())
		ff_exit_signalled();
}

void
ff_signals_init(void)
{
	struct sigaction sa;

	if (sigpipe_fds[0] < 0 && pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0)
		ff_die("cannot create a pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	ff_set_before_fail(stop_stage_signalled);
}

int
ff_signal_fd(void)
{
	return sigpipe_fds[0];
}

void
ff_signal_drain(void)
{
	char buf[64];

	while (sigpipe_fds[0] >= 0 && read(sigpipe_fds[0], buf, sizeof(buf)) > 0)
		;
}

int
ff_signalled(void)
{
	return caught;
}

void
ff_exit_signalled(void)
{
	int sig = caught ? caught : SIGTERM;

	ff_children_stop_all();
	/* In flimflam's pipelines the dispatcher says it, once. */
	if (!ff_pipeline_stage())
		ff_warn("stopped by %s", ff_sig_name(sig));
	ff_quit(128 + sig);
}

void
ff_stop_if_signalled(void)
{
	if (caught)
		ff_exit_signalled();
}

const char *
ff_sig_name(int sig)
{
	static char buf[48];
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	else
		snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

const char *
ff_status_how(int status)
{
	static char buf[128];
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;

	if (WIFEXITED(status) && (code == 128 + SIGINT || code == 128 + SIGTERM ||
				  code == 128 + SIGHUP || code == 128 + SIGPIPE))
		/* flimflam's programs exit so when a signal stops them */
		snprintf(buf, sizeof(buf), "was stopped by %s", ff_sig_name(code - 128));
	else if (WIFEXITED(status) && (code == 126 || code == 127))
		snprintf(buf, sizeof(buf), "could not run (status %d)", code);
	else if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exited with status %d", code);
	else if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT ||
					 WTERMSIG(status) == SIGTERM ||
					 WTERMSIG(status) == SIGHUP))
		snprintf(buf, sizeof(buf), "was stopped by %s", ff_sig_name(WTERMSIG(status)));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "was killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, sizeof(buf), "ended");
	return buf;
}

int
ff_sleep(double seconds)
{
	double until = ff_now() + seconds, left;
	struct pollfd pfd = { ff_signal_fd(), POLLIN, 0 };

	while ((left = until - ff_now()) > 0) {
		if (caught)
			return -1;
		poll(&pfd, pfd.fd >= 0, (int)(left * 1000) + 1);
	}
	return caught ? -1 : 0;
}

static int
pidfd_open_(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

noreturn static void
child_exec(char *const argv[], const struct ff_spawn_opts *o, int errfd,
	   pid_t parent)
{
	int fd, i;

	/* Our own group: the terminal's Ctrl-C goes to flimflam, which stops us. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);	/* the parent died before the prctl */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	fd = open(o->in ? o->in : "/dev/null", O_RDONLY);
	if (fd < 0 && o->in)
		goto fail;
	if (fd >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	if (o->out_fd >= 0) {
		dup2(o->out_fd, 1);
		if (o->log && (fd = open(o->log, O_WRONLY | O_CREAT | O_APPEND, 0600)) >= 0) {
			dup2(fd, 2);
			close(fd);
		}
	} else if (o->log) {
		fd = open(o->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd < 0)
			goto fail;
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	} else {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
	}
	if (o->cpus && sched_setaffinity(0, sizeof(*o->cpus), o->cpus) < 0)
		goto fail;
	if (o->dir && chdir(o->dir) < 0)
		goto fail;
	for (i = 0; o->env && o->env[i]; i++)
		putenv(o->env[i]);
	execvp(argv[0], argv);
fail:
	i = errno;
	if (write(errfd, &i, sizeof(i)) < 0) {
		/* the parent reports a bare failure */
	}
	_exit(127);
}

/* A child about to start in `role`: cleared and named; -1 with a warning when there are too many. */
static int
child_init(struct ff_child *c, const char *role)
{
	memset(c, 0, sizeof(*c));
	c->pidfd = -1;
	snprintf(c->role, sizeof(c->role), "%s", role);
	if (nchildren == MAX_CHILDREN) {
		ff_warn("cannot start %s: too many children", role);
		return -1;
	}
	return 0;
}

/* A child started: watched by its pidfd, and among those to stop. */
static void
child_register(struct ff_child *c)
{
	c->pidfd = pidfd_open_(c->pid);
	c->live = 1;
	children[nchildren++] = c;
}

int
ff_spawn(struct ff_child *c, const char *role, char *const argv[],
	 const struct ff_spawn_opts *o)
{
	static const struct ff_spawn_opts dflt = FF_SPAWN_OPTS_INIT;
	pid_t parent = getpid();
	int errpipe[2], err = 0;
	ssize_t n;

	if (!o)
		o = &dflt;
	if (child_init(c, role) < 0)
		return -1;
	if (o->log)
		snprintf(c->log, sizeof(c->log), "%s", o->log);
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		ff_warn("cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		ff_warn("cannot start %s '%s': %s", role, argv[0], strerror(errno));
		close(errpipe[0]);
		close(errpipe[1]);
		return -1;
	}
	if (c->pid == 0) {
		close(errpipe[0]);
		child_exec(argv, o, errpipe[1], parent);
	}
	close(errpipe[1]);
	/* The group is set in both, so a signal sent to it right away works. */
	setpgid(c->pid, c->pid);
	n = read(errpipe[0], &err, sizeof(err));
	close(errpipe[0]);
	if (n == sizeof(err)) {
		waitpid(c->pid, NULL, 0);
		errno = err;
		ff_warn("cannot start %s '%s': %s", role, argv[0], strerror(err));
		errno = err;
		return -1;
	}
	child_register(c);
	ff_debug("started %s pid %d: %s", role, (int)c->pid, argv[0]);
	return 0;
}

/*
 * A fork of ourselves that does one job (collecting the environment while
 * the relays start): registered as a child, so that a stop or a failure
 * stops it and waits for it as it does for what ff_spawn started. 0 in the
 * child, which starts with no children and the default signals; the pid in
 * the parent; -1 with a warning when fork fails.
 */
pid_t
ff_fork(struct ff_child *c, const char *role)
{
	pid_t parent = getpid();

	if (child_init(c, role) < 0)
		return -1;
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		ff_warn("cannot start %s: %s", role, strerror(errno));
		return -1;
	}
	if (c->pid == 0) {
		nchildren = 0;
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		return 0;
	}
	setpgid(c->pid, c->pid);
	child_register(c);
	return c->pid;
}

static void
unregister(struct ff_child *c)
{
	int i;

	c->live = 0;
	for (i = 0; i < nchildren; i++)
		if (children[i] == c) {
			memmove(children + i, children + i + 1,
				(nchildren - i - 1) * sizeof(*children));
			nchildren--;
			break;
		}
}

static void
reaped(struct ff_child *c, int status)
{
	c->status = status;
	c->exited = 1;
	/* Workers the child left in its group go with it. */
	kill(-c->pid, SIGKILL);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
	unregister(c);
}

int
ff_child_check(struct ff_child *c)
{
	int status;
	pid_t r;

	if (c->exited)
		return 1;
	if (!c->pid)
		return 1;
	do
		r = waitpid(c->pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == c->pid || (r < 0 && errno == ECHILD)) {
		reaped(c, r == c->pid ? status : 0);
		return 1;
	}
	return 0;
}

int
ff_child_wait(struct ff_child *c, double timeout)
{
	double until = ff_now() + timeout, left;
	struct pollfd pfd;

	while (!ff_child_check(c)) {
		left = timeout < 0 ? 1.0 : until - ff_now();
		if (left <= 0)
			return 0;
		pfd.fd = c->pidfd;
		pfd.events = POLLIN;
		if (pfd.fd < 0) {
			usleep(10000);
			continue;
		}
		poll(&pfd, 1, (int)(left * 1000) + 1);
	}
	return 1;
}

/* Did a signal of its own fault end it (not ours: SIGTERM, SIGKILL)? */
static int
crashed(int status)
{
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;

	return sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
	       sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS;
}

void
ff_child_stop(struct ff_child *c, double grace)
{
	if (!c->pid || c->exited)
		return;
	if (!ff_child_check(c)) {
		c->stopped = 1;
		kill(c->pid, SIGTERM);
		if (!ff_child_wait(c, grace)) {
			kill(-c->pid, SIGKILL);
			kill(c->pid, SIGKILL);
			ff_child_wait(c, -1);
		}
		/*
		 * Asked to stop, it crashed doing so (a router's double free as
		 * it let go of its connections): not the figures' concern, which
		 * were taken before, but a bug of its own to say, once.
		 */
		if (crashed(c->status))
			ff_warn("%s (pid %d) crashed as it stopped: %s%s%s", c->role, (int)c->pid,
				ff_status_how(c->status), c->log[0] ? "; see " : "", c->log);
	}
	ff_debug("stopped %s pid %d: %s", c->role, (int)c->pid, ff_child_how(c));
}

void
ff_children_stop_all(void)
{
	while (nchildren > 0)
		ff_child_stop(children[nchildren - 1], 1.0);
}

const char *
ff_child_how(const struct ff_child *c)
{
	if (!c->exited)
		return "is running";
	static char buf[96];

	if (c->stopped && !crashed(c->status)) {
		/* We stopped it: not a failure of its own. */
		snprintf(buf, sizeof(buf), "was stopped by %s", ff_prog());
		return buf;
	}
	return ff_status_how(c->status);
}

void
ff_child_report(const struct ff_child *c)
{
	ff_warn("%s (pid %d) %s%s%s", c->role, (int)c->pid, ff_child_how(c),
		c->log[0] ? "; the end of its log " : "", c->log[0] ? c->log : "");
	if (c->log[0])
		ff_log_tail(c->log, 10);
}

void
ff_log_tail(const char *path, int lines)
{
	size_t len, start, k, w;
	char *text = ff_read_file(path, &len), *out, *u;
	int n = 0;

	if (!text)
		return;
	/*
	 * A tool that prints its help after its error (iperf3): the help is
	 * not the reason, the lines before it are.
	 */
	for (u = text; (u = strstr(u, "sage: ")); u++)
		if (u > text + 1 && (u[-1] == 'U' || u[-1] == 'u') && u[-2] == '\n' &&
		    u - 1 > text + strspn(text, " \t\n")) {
			len = u - 1 - text;
			text[len] = 0;
			break;
		}
	/* ssh ends its lines in "\r\n": the \r is not shown as \x0d. */
	for (k = 0, w = 0; k < len; k++)
		if (text[k] != '\r' || (k + 1 < len && text[k + 1] != '\n'))
			text[w++] = text[k];
	text[len = w] = 0;
	while (len && text[len - 1] == '\n')
		text[--len] = 0;
	start = len;
	while (start > 0) {
		if (text[start - 1] == '\n' && ++n == lines)
			break;
		start--;
	}
	if (len > start) {
		/*
		 * Indent each line; one write so lines stay together. A tool's
		 * bytes that a terminal would act on are shown as \xHH.
		 */
		size_t i, o = 0;
		char *shown = malloc(4 * (len - start) + 1);

		out = shown ? malloc(2 * 4 * (len - start) + 8) : NULL;
		if (out) {
			size_t slen = ff_printable_n(shown, text + start, len - start);

			out[o++] = ' ';
			out[o++] = ' ';
			for (i = 0; i < slen; i++) {
				out[o++] = shown[i];
				if (shown[i] == '\n') {
					out[o++] = ' ';
					out[o++] = ' ';
				}
			}
			out[o++] = '\n';
			if (write(2, out, o) < 0) {
				/* nowhere to report it */
			}
			free(out);
		}
		free(shown);
	}
	free(text);
}
