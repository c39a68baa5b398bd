/*
 * ff-bisect's children: git, run to completion with its output kept, and
 * the long ones (the build command, ff-bench, flimflam flamegraph), each in
 * a process group of its own that a stop reaches; after a stop the
 * checkout is put back on git bisect's commit and the state saved.
 */
#include "ff-bisect.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

char *want_head;

/* git -C repo ARGS (a NULL-terminated list): its exit status (-1: could not run); stdout and stderr into out. */
static int
gitv(const char *repo, struct ff_buf *out, va_list ap)
{
	struct ff_argv a = FF_ARGV_INIT;
	int fd[2], status;
	const char *arg;
	char buf[4096];
	ssize_t n;
	pid_t pid;

	ff_argv_addl(&a, "git", "-C", repo, NULL);
	while ((arg = va_arg(ap, const char *)))
		ff_argv_add(&a, arg);
	if (pipe(fd) < 0)
		ff_die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		ff_die("fork: %s", strerror(errno));
	if (!pid) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execvp("git", a.v);
		_exit(127);
	}
	close(fd[1]);
	while ((n = read(fd[0], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (out)
			ff_buf_add(out, buf, n);
	}
	close(fd[0]);
	ff_argv_free(&a);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int
git(const char *repo, struct ff_buf *out, ...)
{
	va_list ap;
	int rc;

	va_start(ap, out);
	rc = gitv(repo, out, ap);
	va_end(ap);
	return rc;
}

/* The first line git prints, or NULL when it fails. */
char *
git_line(const char *repo, ...)
{
	struct ff_buf out = FF_BUF_INIT;
	char *s, *nl;
	va_list ap;
	int rc;

	va_start(ap, repo);
	rc = gitv(repo, &out, ap);
	va_end(ap);
	s = ff_buf_take(&out);
	if (rc != 0 || !s) {
		free(s);
		return NULL;
	}
	if ((nl = strchr(s, '\n')))
		*nl = 0;
	return s;
}

void
checkout(const char *repo, const char *commit)
{
	struct ff_buf out = FF_BUF_INIT;

	if (git(repo, &out, "checkout", "-q", commit, NULL) != 0) {
		char *s = ff_buf_take(&out);

		ff_die("git checkout %.12s: %s", commit, s ? s : "failed");
	}
	ff_buf_free(&out);
}

int
run_child(const char *role, char *const argv[], const char *dir, const char *log, char *const env[])
{
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	struct ff_child c;

	o.log = log;
	o.dir = dir;
	o.env = env;
	if (ff_spawn(&c, role, argv, &o) < 0)
		return 127 << 8;
	while (!ff_child_wait(&c, 0.25))
		if (ff_signalled()) {
			/* ff-bench and flimflam end their own children on SIGTERM. */
			ff_child_stop(&c, 60);
			break;
		}
	return c.status;
}

void
stop_if_signalled(struct state *s)
{
	if (!ff_signalled())
		return;
	if (want_head) {
		struct ff_buf out = FF_BUF_INIT;

		git(s->repo, &out, "checkout", "-q", want_head, NULL);
		ff_buf_free(&out);
	}
	state_save(s);
	ff_warn("stopped: the checkout is on git bisect's commit %.12s; 'flimflam bisect --resume' goes on",
		want_head ? want_head : "(none yet)");
	ff_exit_signalled();
}
