/*
 * hosts.c - --hosts ROLE=[USER@]HOST[/ADDRESS],...: the run's stages on
 * other hosts over ssh. One ssh master per host, started before the
 * pipeline and stopped after it (or with flimflam: it is our child, with
 * PR_SET_PDEATHSIG); each remote stage is an ssh session through that
 * master, its stdin and stdout the pipeline's pipes, so its events come
 * back as a local stage's do. A remote stage ends when its input closes
 * or its reader goes, as it does locally, and stops what it started.
 */
#include "ff-run.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <time.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pipeline.h>

/* A remote script or command (copying keys, check --hosts): its bound on a busy host. */
#define REMOTE_SECONDS 30

#define MAX_HOSTS 32

/* A session that ended with ssh's 255: how long its master may take to be seen gone. */
#define LOST_WAIT_S 2.0

struct host_role {
	char *role;		/* client, server, r1, r2, ... */
	char *dest;		/* [USER@]HOST as ssh takes it; NULL: local */
	char *address;		/* the data path's address; NULL: 127.0.0.1 */
	int master;		/* index into masters */
	char *private_dir;	/* hosts_send_private's there, removed by hosts_disconnect */
};

struct master {
	char *dest;
	char *path;		/* ControlPath */
	struct ff_child child;
};

static struct host_role roles[MAX_HOSTS];
static int nroles;
static struct master masters[MAX_HOSTS];
static int nmasters;
static char control_dir[PATH_MAX];

int
hosts_any(void)
{
	return nroles > 0;
}

int
hosts_count(void)
{
	return nroles;
}

const char *
hosts_role_at(int i)
{
	return roles[i].role;
}

int
hosts_any_remote(void)
{
	for (int i = 0; i < nroles; i++)
		if (roles[i].dest)
			return 1;
	return 0;
}

static int
role_ok(const char *role, int nrelays)
{
	long n;
	char *end;

	if (!strcmp(role, "client") || !strcmp(role, "server"))
		return 1;
	if (role[0] != 'r' || !role[1] || strspn(role + 1, "0123456789") != strlen(role + 1))
		return 0;
	errno = 0;
	n = strtol(role + 1, &end, 10);
	return !errno && n >= 1 && n <= nrelays;
}

/* HOST's IPv4 address: HOST itself, or what it resolves to (static). */
static const char *
resolve(const char *host)
{
	static char buf[INET_ADDRSTRLEN];
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
	struct in_addr in;

	if (ff_inet_addr(host, &in) == 0)
		return host;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return NULL;
	inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, buf, sizeof(buf));
	freeaddrinfo(res);
	return buf;
}

/*
 * The --hosts list into `roles`; a usage error (in `why`) returns -1.
 * HOST "localhost" is this machine: its role runs here, listening on
 * ADDRESS (for the peers on other hosts).
 */
int
hosts_parse(const char *spec, int nrelays, int need_address, struct ff_buf *why)
{
	char *copy = strdup(spec), *item, *save = NULL, *eq, *slash, *host;
	const char *addr;
	struct in_addr in;
	int i;

	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		struct host_role *r = &roles[nroles];

		eq = strchr(item, '=');
		if (!eq || eq == item || !eq[1]) {
			ff_why(why, "--hosts: '%s' is not ROLE=[USER@]HOST[/ADDRESS]", item);
			goto bad;
		}
		*eq = 0;
		if (!role_ok(item, nrelays)) {
			char relays[32] = "";

			if (nrelays > 2)
				snprintf(relays, sizeof(relays), "r1 ... r%d, ", nrelays);
			else if (nrelays)
				snprintf(relays, sizeof(relays), "%s", nrelays == 1 ? "r1, " : "r1, r2, ");
			ff_why(why, "--hosts: '%s' is not a role of this run (client, %sserver%s)",
			       item, relays, nrelays ? "" : ": relay none has no relays");
			goto bad;
		}
		for (i = 0; i < nroles; i++)
			if (!strcmp(roles[i].role, item)) {
				ff_why(why, "--hosts: role '%s' is named twice", item);
				goto bad;
			}
		if (nroles == MAX_HOSTS) {
			ff_why(why, "--hosts: more than %d roles", MAX_HOSTS);
			goto bad;
		}
		slash = strchr(eq + 1, '/');
		if (slash)
			*slash++ = 0;
		if (!eq[1] || (slash && !*slash)) {
			ff_why(why, "--hosts: '%s' names no %s", item, !eq[1] ? "host" : "address");
			goto bad;
		}
		host = strrchr(eq + 1, '@') ? strrchr(eq + 1, '@') + 1 : eq + 1;
		/* ssh would take it for an option (-oProxyCommand=...): refused here, not by ssh's usage. */
		if (eq[1] == '-' || *host == '-') {
			ff_why(why, "--hosts: %s's host '%s' starts with '-': not a host name", item,
			       eq[1] == '-' ? eq + 1 : host);
			goto bad;
		}
		if (slash && ff_inet_addr(slash, &in) < 0) {
			ff_why(why, "--hosts: %s's address '%s' is not an IPv4 address", item, slash);
			goto bad;
		}
		addr = slash ? slash : resolve(host);
		if (!addr && need_address) {
			ff_why(why, "--hosts: cannot find %s's address from '%s': give it as %s=%s/ADDRESS",
			       item, host, item, eq + 1);
			goto bad;
		}
		r->role = strdup(item);
		r->dest = strcmp(eq + 1, "localhost") ? strdup(eq + 1) : NULL;
		r->address = addr && strcmp(addr, "127.0.0.1") ? strdup(addr) : NULL;
		r->master = -1;
		nroles++;
	}
	free(copy);
	if (!nroles) {
		ff_why(why, "--hosts: names no role");
		return -1;
	}
	return 0;
bad:
	free(copy);
	return -1;
}

static const struct host_role *
find(const char *role)
{
	int i;

	for (i = 0; i < nroles; i++)
		if (!strcmp(roles[i].role, role))
			return &roles[i];
	return NULL;
}

const char *
hosts_dest(const char *role)
{
	const struct host_role *r = find(role);

	return r ? r->dest : NULL;
}

const char *
hosts_address(const char *role)
{
	const struct host_role *r = find(role);

	return r && r->address ? r->address : NULL;
}

/* Do two roles run on the same host (both here, or the same destination)? */
int
hosts_same(const char *a, const char *b)
{
	const char *x = hosts_dest(a), *y = hosts_dest(b);

	return x == y || (x && y && !strcmp(x, y));
}

/* Do the relays r1 ... rN all run on one host (here, or one other)? */
int
hosts_relays_together(int nrelays)
{
	char role[16];

	for (int k = 2; k <= nrelays; k++) {
		snprintf(role, sizeof(role), "r%d", k);
		if (!hosts_same("r1", role))
			return 0;
	}
	return 1;
}

/* Does any of the relays r1 ... rN run on another host? */
int
hosts_relays_remote(int nrelays)
{
	char role[16];

	for (int k = 1; k <= nrelays; k++) {
		snprintf(role, sizeof(role), "r%d", k);
		if (hosts_dest(role))
			return 1;
	}
	return 0;
}

/* ssh's options common to the master and the sessions, into `a`. */
static void
ssh_common(struct ff_argv *a)
{
	const char *cfg = getenv("FLIMFLAM_SSH_CONFIG");

	ff_argv_add(a, "ssh");
	if (cfg && *cfg)
		ff_argv_addl(a, "-F", cfg, NULL);
	/* No password nor host-key prompt the user has not agreed to. */
	ff_argv_addl(a, "-o", "BatchMode=yes", NULL);
}

/* The session argv of one remote command through its host's master. */
static void
ssh_session(struct ff_argv *a, const struct master *m)
{
	ssh_common(a);
	ff_argv_addl(a, "-o", "ControlMaster=no", NULL);
	ff_argv_addf(a, "-oControlPath=%s", m->path);
	ff_argv_addl(a, "-T", "-e", "none", m->dest, "--", NULL);
}

/* The command line for the remote shell: each argument quoted. */
static char *
shell_quote(char *const argv[])
{
	struct ff_buf b = FF_BUF_INIT;
	int i;

	ff_buf_addstr(&b, "exec");
	for (i = 0; argv[i]; i++) {
		ff_buf_addstr(&b, " ");
		ff_buf_shell_word(&b, argv[i]);
	}
	return ff_buf_take(&b);
}

/*
 * A program's path on a remote host: $FLIMFLAM_REMOTE_DIR/NAME, or the
 * local program's own absolute path (flimflam installed at the same place).
 */
char *
hosts_remote_program(const char *local_path, const char *name)
{
	const char *dir = getenv("FLIMFLAM_REMOTE_DIR");

	if (dir && *dir)
		return ff_asprintf("%s/%s", dir, name);
	return strdup(local_path);
}

/*
 * The stage of `role`: argv (argv[0] the local program's path, `name` its
 * name) here, or through ssh on the role's host.
 */
pipecmd *
hosts_stage(const char *role, const char *name, char *const argv[], int own_dir)
{
	const struct host_role *r = find(role);
	struct ff_argv a = FF_ARGV_INIT, remote = FF_ARGV_INIT;
	pipecmd *cmd;
	char *line, *quoted;
	size_t i;
	int j;

	if (!r || !r->dest) {
		cmd = pipecmd_new(argv[0]);
		for (j = 1; argv[j]; j++)
			pipecmd_arg(cmd, argv[j]);
		return cmd;
	}
	ff_argv_add(&remote, hosts_remote_program(argv[0], name));
	for (j = 1; argv[j]; j++)
		ff_argv_add(&remote, argv[j]);
	quoted = shell_quote(remote.v);
	/* Its failure comes as its `error` event, which we say (ff_base.h): ssh may lose its stderr. */
	line = ff_asprintf("FLIMFLAM_STAGE_ERRORS=events %s", quoted);
	free(quoted);
	if (own_dir) {
		/* A directory of its own there, for what it writes in its current one (perf.data). */
		char *l = ff_asprintf("cd \"$(mktemp -d \"${TMPDIR:-/tmp}/flimflam-capture-XXXXXX\")\" && %s", line);

		free(line);
		line = l;
	}
	ssh_session(&a, &masters[r->master]);
	ff_argv_add(&a, line);
	cmd = pipecmd_new(a.v[0]);
	for (i = 1; i < a.n; i++)
		pipecmd_arg(cmd, a.v[i]);
	free(line);
	ff_argv_free(&a);
	ff_argv_free(&remote);
	return cmd;
}

/* Where the masters' sockets go: the run directory, or a private one if that is too long. */
static void
control_dir_make(const char *rundir)
{
	const char *tmp = getenv("TMPDIR");

	if (strlen(rundir) + 16 < sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(control_dir, sizeof(control_dir), "%s", rundir);
		return;
	}
	snprintf(control_dir, sizeof(control_dir), "%s/flimflam-ssh-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(control_dir))
		ff_die("cannot create a directory for ssh's sockets: %s", strerror(errno));
}

/* The master of `dest` answers ssh -O check: 1; it exited: 0. */
static int
master_ready(struct master *m)
{
	struct ff_argv a = FF_ARGV_INIT;
	char *out;
	int status = -1;

	for (;;) {
		if (ff_child_check(&m->child))
			return 0;
		ssh_common(&a);
		ff_argv_addf(&a, "-oControlPath=%s", m->path);
		ff_argv_addl(&a, "-O", "check", m->dest, NULL);
		out = ff_env_run(a.v, &status);
		free(out);
		ff_argv_free(&a);
		if (status == 0)
			return 1;
		if (ff_signalled())
			return 0;
		poll(NULL, 0, 50);
	}
}

/* A line of the master's log that says why it failed (static). */
static const char *
master_why(struct master *m)
{
	static char line[512];
	char *text = ff_read_file(m->child.log, NULL), *p, *last = NULL;

	snprintf(line, sizeof(line), "ssh %s", ff_child_how(&m->child));
	if (!text)
		return line;
	for (p = strtok(text, "\r\n"); p; p = strtok(NULL, "\r\n"))
		last = p;
	if (last)
		snprintf(line, sizeof(line), "%s", last);
	free(text);
	return line;
}

/* One ssh master per host of --hosts, each ready. */
void
hosts_connect(const char *rundir)
{
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	struct ff_argv a = FF_ARGV_INIT;
	int i, j;

	if (!nroles)
		return;
	control_dir_make(rundir);
	for (i = 0; i < nroles; i++) {
		if (!roles[i].dest)
			continue;
		for (j = 0; j < nmasters; j++)
			if (!strcmp(masters[j].dest, roles[i].dest))
				break;
		roles[i].master = j;
		if (j < nmasters)
			continue;
		masters[j].dest = roles[i].dest;
		masters[j].path = ff_asprintf("%s/ssh%d", control_dir, j);
		nmasters++;
	}
	for (j = 0; j < nmasters; j++) {
		struct master *m = &masters[j];
		char *log = ff_asprintf("%s/ssh%d.log", rundir, j);

		ssh_common(&a);
		ff_argv_addl(&a, "-o", "ControlMaster=yes", "-o", "ControlPersist=no", NULL);
		ff_argv_addf(&a, "-oControlPath=%s", m->path);
		ff_argv_addl(&a, "-N", "-T", m->dest, NULL);
		o.log = log;
		if (ff_spawn(&m->child, "ssh", a.v, &o) < 0)
			ff_die("cannot run ssh");
		ff_argv_free(&a);
		free(log);
	}
	for (j = 0; j < nmasters; j++)
		if (!master_ready(&masters[j])) {
			if (ff_signalled()) {
				hosts_disconnect();
				stopped_by(ff_signalled(), rundir);
			}
			ff_warn("cannot reach '%s' over ssh: %s", masters[j].dest, master_why(&masters[j]));
			hosts_disconnect();
			exit(1);
		}
}

/* The first line of `s`, trimmed in place (ssh ends its messages in "\r\n"). */
char *
hosts_first_line(char *s)
{
	size_t n = strcspn(s, "\n");

	while (n && s[n - 1] == '\r')
		n--;
	s[n] = 0;
	return s;
}

#define END_OF_FILE "FLIMFLAM_END_OF_FILE"


/*
 * The files `paths` (n of them) copied into a directory of their own on
 * `role`'s host (TMPDIR there, flimflam-LABEL-XXXXXX), private (0700, the
 * files 0600), through its master; returns its path there, removed by
 * hosts_disconnect. The files travel on ssh's input, never on a command
 * line: the script that writes them is `scratch` here (written 0600, then
 * removed). NULL, with why, when they cannot be.
 */
const char *
hosts_send_private(const char *role, const char *label, const char *const paths[], int n,
		   const char *scratch, struct ff_buf *why)
{
	struct host_role *r = NULL;
	struct ff_buf b = FF_BUF_INIT;
	struct ff_argv a = FF_ARGV_INIT;
	char *text, *out, *dir;
	int i, st;

	for (i = 0; i < nroles; i++)
		if (!strcmp(roles[i].role, role))
			r = &roles[i];
	if (!r || !r->dest) {
		ff_why(why, "%s runs here", role);
		return NULL;
	}
	ff_buf_printf(&b, "set -e\numask 077\nd=$(mktemp -d \"${TMPDIR:-/tmp}/flimflam-%s-XXXXXX\")\n"
		      "trap 'rm -rf -- \"$d\"' EXIT\n", label);
	for (i = 0; i < n; i++) {
		const char *base = strrchr(paths[i], '/') ? strrchr(paths[i], '/') + 1 : paths[i];

		if (!(text = ff_read_file(paths[i], NULL))) {
			ff_why(why, "cannot read '%s': %s", paths[i], strerror(errno));
			ff_buf_free(&b);
			return NULL;
		}
		if (strstr(text, END_OF_FILE) || strchr(base, '\'')) {
			ff_why(why, "cannot send '%s' (its name or text)", paths[i]);
			free(text);
			ff_buf_free(&b);
			return NULL;
		}
		ff_buf_printf(&b, "cat >\"$d/%s\" <<'" END_OF_FILE "'\n%s%s" END_OF_FILE "\n", base, text,
			      *text && text[strlen(text) - 1] != '\n' ? "\n" : "");
		free(text);
	}
	ff_buf_addstr(&b, "trap - EXIT\necho \"flimflam-dir $d\"\n");
	if (ff_write_file(scratch, b.s, 0600) < 0) {
		ff_why(why, "cannot write '%s'", scratch);
		ff_buf_free(&b);
		return NULL;
	}
	ff_buf_free(&b);
	/* ssh's input is the script (no shell here to redirect it); its argument names nothing secret. */
	ssh_session(&a, &masters[r->master]);
	ff_argv_add(&a, "sh");
	out = ff_run_from(a.v, scratch, &st, REMOTE_SECONDS);
	unlink(scratch);
	ff_argv_free(&a);
	dir = out ? strstr(out, "flimflam-dir /") : NULL;
	if (!out || st != 0 || !dir) {
		ff_why(why, "cannot copy %s's files to %s (ssh %s): %.200s", role, r->dest,
		       !out ? "did not start" : st == -1 ? "took more than " FF_STR(REMOTE_SECONDS) " s" : ff_status_how(st),
		       out && *out ? hosts_first_line(out) : "it said nothing");
		free(out);
		return NULL;
	}
	dir += strlen("flimflam-dir ");
	r->private_dir = ff_strdup(hosts_first_line(dir));
	free(out);
	return r->private_dir;
}

/*
 * The roles' private directories removed from their hosts: through the
 * master, or when its connection is lost, a connection of their own. A
 * signal that is stopping the run does not stop this (ssh has 5 s).
 */
static void
remove_private_dirs(void)
{
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	struct ff_argv a = FF_ARGV_INIT;
	struct ff_child rm;
	char *line, *quoted, *q[2] = { NULL, NULL };
	int i, st;

	o.log = "/dev/null";
	for (i = 0; i < nroles; i++) {
		struct master *m = &masters[roles[i].master];

		if (!roles[i].private_dir)
			continue;
		q[0] = roles[i].private_dir;
		quoted = shell_quote(q);
		line = ff_asprintf("rm -rf --%s", quoted + 4);	/* "exec 'DIR'" -> "rm -rf -- 'DIR'" */
		free(quoted);
		if (!ff_child_check(&m->child)) {
			ssh_session(&a, m);
			ff_argv_add(&a, line);
		} else {
			ssh_common(&a);
			ff_argv_addl(&a, "-T", roles[i].dest, "--", line, NULL);
		}
		memset(&rm, 0, sizeof(rm));
		st = -1;
		if (ff_spawn(&rm, "ssh", a.v, &o) == 0) {
			if (ff_child_wait(&rm, 5.0))
				st = rm.status;
			else
				ff_child_stop(&rm, 0.5);
		}
		if (st != 0)
			ff_warn("cannot remove '%s' from %s (ssh %s): remove it there", roles[i].private_dir,
				roles[i].dest, st == -1 ? "took more than 5 s" : ff_status_how(st));
		ff_argv_free(&a);
		free(line);
		free(roles[i].private_dir);
		roles[i].private_dir = NULL;
	}
}

/* Every master stopped; the sessions through them end with them. */
void
hosts_disconnect(void)
{
	int j;

	remove_private_dirs();
	for (j = nmasters - 1; j >= 0; j--)
		if (masters[j].child.pid && !masters[j].child.exited)
			ff_child_stop(&masters[j].child, 2.0);
	for (j = 0; j < nmasters; j++)
		if (strcmp(control_dir, ff_rundir_known() ? ff_rundir_known() : ""))
			unlink(masters[j].path);
	if (control_dir[0] && strcmp(control_dir, ff_rundir_known() ? ff_rundir_known() : ""))
		rmdir(control_dir);
}

/*
 * Did the master of `role`'s host end (the connection lost)? Its host, or
 * NULL. `status` is the stage's: when ssh's 255 says its session ended on
 * its own, the master that went with it may not be seen gone yet (its
 * sessions see its socket close before it is a zombie): it gets
 * LOST_WAIT_S to be.
 */
const char *
hosts_lost(const char *role, int status)
{
	const struct host_role *r = find(role);
	struct master *m;

	if (!r || !r->dest)
		return NULL;
	m = &masters[r->master];
	if (WIFEXITED(status) && WEXITSTATUS(status) == 255)
		ff_child_wait(&m->child, LOST_WAIT_S);
	return ff_child_check(&m->child) && !m->child.stopped ? m->dest : NULL;
}

/* `line` run by the shell of `dest` (plain ssh, BatchMode); its output, or NULL. */
char *
hosts_remote_run(const char *dest, const char *line, int *status)
{
	struct ff_argv a = FF_ARGV_INIT;
	char *out;

	ssh_common(&a);
	ff_argv_addl(&a, "-T", dest, "--", line, NULL);
	out = ff_run_within(a.v, status, REMOTE_SECONDS);
	ff_argv_free(&a);
	return out;
}

/*
 * The file `remote` on `role`'s host into `local` here (written whole:
 * a temporary file renamed, an existing one kept as *.old), then the
 * remote file's directory removed (a capture's own, from hosts_stage).
 * 0, or -1 with why.
 */
int
hosts_fetch(const char *role, const char *remote, const char *local, struct ff_buf *why)
{
	const struct host_role *r = find(role);
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	struct ff_argv a = FF_ARGV_INIT;
	struct ff_child cat = { 0 };
	struct ff_out out;
	char *line, *q[2] = { (char *)remote, NULL }, *dir, *slash;
	int fd, st;

	if (!r || !r->dest) {
		ff_why(why, "%s runs here", role);
		return -1;
	}
	if (ff_out_open(&out, local, FF_OUT_DEFER, "*.old", 0644) < 0) {
		ff_why(why, "%s", out.err);
		return -1;
	}
	fd = open(out.tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	line = shell_quote(q);
	memcpy(line, "cat ", 4);	/* "exec" -> "cat " */
	ssh_common(&a);
	ff_argv_addl(&a, "-T", r->dest, "--", line, NULL);
	o.out_fd = fd;
	st = fd >= 0 ? ff_spawn(&cat, "ssh", a.v, &o) : -1;
	if (fd >= 0)
		close(fd);
	if (st == 0)
		ff_child_wait(&cat, -1);
	ff_argv_free(&a);
	free(line);
	if (st < 0 || cat.status != 0) {
		ff_out_abort(&out);
		ff_why(why, "cannot copy '%s' from %s (ssh %s)", remote, r->dest,
		       st < 0 ? "did not start" : ff_status_how(cat.status));
		return -1;
	}
	if (ff_out_commit(&out) < 0) {
		ff_why(why, "%s", out.err);
		return -1;
	}
	/* The capture's own directory there: its files, then it. */
	dir = strdup(remote);
	slash = strrchr(dir, '/');
	if (slash && strstr(dir, "/flimflam-capture-") && !strchr(dir, '\'')) {
		char *l;

		*slash = 0;
		l = ff_asprintf("rm -rf -- '%s'", dir);
		free(hosts_remote_run(r->dest, l, &st));
		free(l);
	}
	free(dir);
	return 0;
}
