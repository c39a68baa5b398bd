/*
 * ff_net.c - free ports, and readiness observed in the kernel's socket
 * table (sock_diag; /proc/net/tcp{,6} where that cannot be used).
 *
 * A listener is ready when a socket bound to its port is in LISTEN state
 * (st 0A) and one of the expected process tree's fds is that socket's
 * inode. Nothing connects to it: skrouterd logs a connection that sends
 * no AMQP header, and a probe through a relay would disturb the workload.
 */
#include "ff_base.h"
#include "ff_int.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

/*
 * FLIMFLAM_TEST_TAKE_PORTS=N: the first N ports this process hands out are
 * taken before its child can bind them, to exercise the retry on a lost
 * race, which is otherwise rare and timing-dependent.
 */
static int
steal_port(void)
{
	static int left = -1;

	if (left < 0)
		left = ff_env_long("FLIMFLAM_TEST_TAKE_PORTS", 0, 0, 1000);
	return left > 0 ? left-- : 0;
}

int
ff_free_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd, port;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		ff_die("cannot create a socket: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		ff_die("cannot find a free port: %s", strerror(errno));
	port = ntohs(sa.sin_port);
	if (steal_port()) {
		/*
		 * The test hook: keep it bound and listening, as another program
		 * that took the port between our choice and the child's bind would.
		 */
		listen(fd, 1);
		return port;
	}
	close(fd);
	return port;
}

/* Inodes of LISTEN sockets on `port`, from one /proc/net file. */
static int
listen_inodes(const char *file, int port, unsigned long *inodes, int max)
{
	char line[512];
	unsigned int lport, state;
	unsigned long inode;
	int n = 0;
	FILE *f = fopen(file, "re");

	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f)) {	/* header */
		fclose(f);
		return 0;
	}
	while (n < max && fgets(line, sizeof(line), f)) {
		/* sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x %*x %*d %*d %lu",
			   &lport, &state, &inode) != 3)
			continue;
		if ((int)lport == port && state == 0x0A)
			inodes[n++] = inode;
	}
	fclose(f);
	return n;
}

static int
owns_inode(pid_t pid, const unsigned long *inodes, int n)
{
	char path[64], target[64], want[64];
	DIR *d;
	struct dirent *de;
	ssize_t len;
	int i, found = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		char fdpath[384];

		if (de->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		len = readlink(fdpath, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		for (i = 0; i < n && !found; i++) {
			snprintf(want, sizeof(want), "socket:[%lu]", inodes[i]);
			found = !strcmp(target, want);
		}
	}
	closedir(d);
	return found;
}

/*
 * The same from the kernel's sock_diag (what ss uses): a dump of the
 * listening sockets only. Reading /proc/net/tcp walks every bucket of the
 * established-connection hash, however few sockets there are: about 5 ms
 * of system time per read with 262,144 buckets (a 2-CPU VM with a few GB),
 * 9 ms per probe with tcp6, while this takes about 40 us. -1 if sock_diag
 * cannot be used (no netlink, or no tcp_diag).
 */
static int
diag_listen_inodes(int family, int port, unsigned long *inodes, int max)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req;
	char buf[32768];	/* the kernel's largest dump message */
	int fd, n = 0, done = 0;

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = 1 << 10;	/* TCP_LISTEN */
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -1;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		close(fd);
		return -1;
	}
	while (!done) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0) {
			close(fd);
			return -1;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				close(fd);
				return -1;
			}
			if (ntohs(m->id.idiag_sport) == port && m->idiag_state == 10 && n < max)
				inodes[n++] = m->idiag_inode;
		}
	}
	close(fd);
	return n;
}

static int
port_inodes(int port, unsigned long *inodes, int max)
{
	int n = diag_listen_inodes(AF_INET, port, inodes, max), n6;

	if (n >= 0 && (n6 = diag_listen_inodes(AF_INET6, port, inodes + n, max - n)) >= 0)
		return n + n6;
	n = listen_inodes("/proc/net/tcp", port, inodes, max);
	return n + listen_inodes("/proc/net/tcp6", port, inodes + n, max - n);
}

/*
 * 1 if a socket bound to `port` on loopback or any address is in LISTEN
 * state and belongs to `pid` or one of its descendants; 0 if not.
 */
int
ff_port_listening(int port, pid_t pid)
{
	unsigned long inodes[16];
	pid_t tree[256];
	int n, t, i;

	n = port_inodes(port, inodes, 16);
	if (!n)
		return 0;
	t = ff_proc_tree(pid, tree, 256);
	for (i = 0; i < t; i++)
		if (owns_inode(tree[i], inodes, n))
			return 1;
	return 0;
}

int
ff_wait_listen(struct ff_child *c, int port, double timeout)
{
	double until = ff_now() + timeout, step = 0.002;

	for (;;) {
		if (ff_child_check(c))
			return -1;	/* the caller tells a lost port from a failure */
		if (ff_port_listening(port, c->pid))
			return 0;
		if (ff_now() > until) {
			ff_warn("%s (pid %d) did not listen on port %d within %g s%s%s",
				c->role, (int)c->pid, port, timeout,
				c->log[0] ? "; the end of its log " : "", c->log);
			if (c->log[0])
				ff_log_tail(c->log, 10);
			return -2;
		}
		if (ff_sleep(step) < 0)
			return -2;
		if (step < 0.02)
			step *= 1.5;
	}
}

int
ff_child_lost_port(const struct ff_child *c)
{
	char *text = c->log[0] ? ff_read_file(c->log, NULL) : NULL;
	int lost = text && (strstr(text, "in use") || strstr(text, "EADDRINUSE"));

	free(text);
	return lost;
}

/* The workload servers' side: a listener on loopback and its accept loop. */

int
ff_inet_addr(const char *addr, struct in_addr *out)
{
	return inet_pton(AF_INET, addr, out) == 1 ? 0 : -1;
}

const char *
ff_parse_ipv4(const char *usage, const char *opt, const char *s)
{
	struct in_addr in;

	if (ff_inet_addr(s, &in) < 0)
		ff_usage_error(usage, "%s: '%s' is not an IPv4 address", opt, s);
	return s;
}

int
ff_listen_on(const char *addr, int port)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	if (!addr)
		addr = "127.0.0.1";
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	if (ff_inet_addr(addr, &sa.sin_addr) < 0)
		ff_die("cannot listen on '%s': not an IPv4 address", addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, SOMAXCONN) < 0)
		ff_die("cannot listen on %s:%d: %s", addr, port, strerror(errno));
	return fd;
}

void
ff_accept_loop(int lfd, void (*adopt)(int fd))
{
	struct pollfd pfd[2] = {
		{ lfd, POLLIN, 0 },
		{ ff_signal_fd(), POLLIN, 0 },
	};
	int fd;

	while (!ff_signalled()) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			ff_die("poll: %s", strerror(errno));
		while (!ff_signalled()) {
			fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd >= 0) {
				adopt(fd);
				continue;
			}
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				ff_warn("cannot accept a connection: %s", strerror(errno));
				ff_sleep(0.1);
			} else if (errno != EAGAIN && errno != EINTR &&
				   errno != ECONNABORTED) {
				ff_die("cannot accept a connection: %s", strerror(errno));
			}
			break;
		}
	}
}
