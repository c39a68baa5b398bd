/*
 * ff_probe.c - programs run for their output: each without a shell through
 * ff_spawn, with stdout and stderr on a pipe, a size limit and a deadline,
 * several at once. Not through libpipeline: its pipeline_wait reaps with
 * waitpid(-1), which would take the status of a relay that ff-topology
 * holds while it collects the environment.
 */
#include "ff_base.h"
#include "ff_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static int
probe_start(struct ff_probe *p)
{
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	int fds[2];

	p->out = NULL;
	p->status = -1;
	p->fd = -1;
	p->len = 0;
	p->cap = 0;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	o.out_fd = fds[1];
	o.in = p->in;
	/*
	 * In the child, after stdout became the pipe, opening /dev/stdout
	 * opens that pipe again: stderr joins it (nginx -v writes there).
	 */
	o.log = "/dev/stdout";
	p->out = ff_grow(NULL, 1, &p->cap, 1, 4096);
	if (ff_spawn(&p->c, "probe", p->argv, &o) < 0) {
		free(p->out);
		p->out = NULL;
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	close(fds[1]);
	p->fd = fds[0];
	return 0;
}

/* Take what the pipe has; at EOF, an error or the size limit, close it. */
static void
probe_read(struct ff_probe *p)
{
	ssize_t n;

	if (p->cap - p->len < 1024 && p->cap < FF_PROBE_MAX_BYTES + 1)
		p->out = ff_grow(p->out, p->cap + 1, &p->cap, 1, 0);
	n = read(p->fd, p->out + p->len, p->cap - p->len - 1);
	if (n < 0 && errno == EINTR)
		return;
	if (n > 0)
		p->len += n;
	/* A full buffer grows at the next read: only the size limit ends it early. */
	if (n <= 0 || p->len >= FF_PROBE_MAX_BYTES) {
		close(p->fd);
		p->fd = -1;
	}
}

static void
probes_run(struct ff_probe *p, size_t n, double seconds)
{
	struct pollfd *pfd = calloc(n + 1, sizeof(*pfd));
	double until = ff_now() + seconds, left;
	size_t i, k, open = 0;

	for (i = 0; i < n; i++)
		if (probe_start(&p[i]) == 0)
			open++;
	while (pfd && open) {
		left = until - ff_now();
		if (left <= 0 || ff_signalled())
			break;
		for (i = k = 0; i < n; i++)
			if (p[i].fd >= 0)
				pfd[k++] = (struct pollfd){ p[i].fd, POLLIN, 0 };
		pfd[k] = (struct pollfd){ ff_signal_fd(), POLLIN, 0 };
		if (poll(pfd, k + 1, (int)(left * 1000) + 1) <= 0)
			continue;
		for (i = k = 0; i < n; i++) {
			if (p[i].fd < 0)
				continue;
			if (pfd[k++].revents) {
				probe_read(&p[i]);
				open -= p[i].fd < 0;
			}
		}
	}
	free(pfd);
	for (i = 0; i < n; i++) {
		if (!p[i].out)
			continue;
		if (p[i].fd >= 0)
			close(p[i].fd);
		p[i].out[p[i].len] = 0;
		left = ff_signalled() ? 0 : until - ff_now();
		if (ff_child_wait(&p[i].c, left > 0 ? left : 0)) {
			p[i].status = p[i].c.status;
		} else {
			ff_debug("'%s' did not finish within %.0f s", p[i].argv[0], seconds);
			ff_child_stop(&p[i].c, 0.2);
		}
	}
}

void
ff_probes_run(struct ff_probe *p, size_t n)
{
	probes_run(p, n, FF_PROBE_TIMEOUT_S);
}

char *
ff_run_from(char *const argv[], const char *in, int *status, double seconds)
{
	struct ff_probe p = { .argv = argv, .in = in };

	probes_run(&p, 1, seconds);
	if (status)
		*status = p.status;
	return p.out;
}

char *
ff_run_within(char *const argv[], int *status, double seconds)
{
	return ff_run_from(argv, NULL, status, seconds);
}

char *
ff_env_run(char *const argv[], int *status)
{
	return ff_run_within(argv, status, FF_PROBE_TIMEOUT_S);
}

char *
ff_first_line(const char *s)
{
	const char *e;

	if (!s)
		return NULL;
	while (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	e = s + strcspn(s, "\r\n");
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return strndup(s, e - s);
}

char *
ff_probe_version(const struct ff_probe *p)
{
	/* A program that fails (a missing library) has no version to show. */
	return p->status == 0 ? ff_first_line(p->out) : NULL;
}

const char *
ff_probe_failure(const struct ff_probe *p)
{
	static char buf[512];
	char *line = ff_first_line(p->out);

	if (p->status == -1)
		snprintf(buf, sizeof(buf), "did not finish within %.0f s", FF_PROBE_TIMEOUT_S);
	else if (WIFSIGNALED(p->status))
		snprintf(buf, sizeof(buf), "was killed by signal %d", WTERMSIG(p->status));
	else
		snprintf(buf, sizeof(buf), "exited with status %d%s%.300s", WEXITSTATUS(p->status),
			 line ? ": " : "", line ? line : "");
	free(line);
	return buf;
}
