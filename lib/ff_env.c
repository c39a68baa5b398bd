/*
 * ff_env.c - the environment a result was measured in, and what this
 * machine can do: program paths and versions, the distribution, the CPU,
 * the Proton library skrouterd loads, the features its installed schema
 * offers, whether perf can open events, and whether the router was built
 * with frame pointers.
 *
 * Programs are run without a shell through ff_spawn, with their output on
 * a pipe and a deadline. Not through libpipeline: its pipeline_wait reaps
 * with waitpid(-1), which would take the status of a relay that
 * ff-topology holds while it collects the environment.
 */
#include "ff.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN_TIMEOUT_S 5.0
#define RUN_MAX_BYTES (1 << 20)

/* One program run for its output; see probes_run. */
struct probe {
	char *const *argv;
	char *out;		/* stdout and stderr, or NULL: did not start */
	int status;		/* wait status, -1: unknown */
	struct ff_child c;
	int fd;			/* the read end of its pipe, -1 once at EOF */
	size_t len, cap;
};

static int
probe_start(struct probe *p)
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
probe_read(struct probe *p)
{
	ssize_t n;

	if (p->cap - p->len < 1024 && p->cap < RUN_MAX_BYTES + 1)
		p->out = ff_grow(p->out, p->cap + 1, &p->cap, 1, 0);
	n = read(p->fd, p->out + p->len, p->cap - p->len - 1);
	if (n < 0 && errno == EINTR)
		return;
	if (n > 0)
		p->len += n;
	if (n <= 0 || p->len >= RUN_MAX_BYTES || p->cap - p->len <= 1) {
		close(p->fd);
		p->fd = -1;
	}
}

/*
 * Run the programs all at once, each with stdout and stderr into its `out`
 * (at most RUN_MAX_BYTES), all within RUN_TIMEOUT_S; a program still
 * running then is stopped, and its status stays -1. A signal ends the wait
 * (the caller is being stopped).
 */
static void
probes_run(struct probe *p, size_t n)
{
	struct pollfd *pfd = calloc(n + 1, sizeof(*pfd));
	double until = ff_now() + RUN_TIMEOUT_S, left;
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
			ff_debug("'%s' did not finish within %.0f s", p[i].argv[0], RUN_TIMEOUT_S);
			ff_child_stop(&p[i].c, 0.2);
		}
	}
}

char *
ff_env_run(char *const argv[], int *status)
{
	struct probe p = { .argv = argv };

	probes_run(&p, 1);
	if (status)
		*status = p.status;
	return p.out;
}

/* The first non-empty line of `s`, trimmed (malloc'd), or NULL. */
static char *
first_line(const char *s)
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

/* Program name, and the argument that prints its version. */
static const struct prog {
	const char *name, *version_arg;
} progs[] = {
	{ "skrouterd", "--version" },
	{ "h2load", "--version" },
	{ "nghttpd", "--version" },
	{ "nghttpx", "--version" },
	{ "iperf3", "--version" },
	{ "nginx", "-v" },	/* to stderr: "nginx version: nginx/1.22.1" */
	{ "perf", "--version" },
	{ "gcc", "--version" },
};

/* What a version probe printed: its first line, if the program succeeded. */
static char *
version_of(const struct probe *p)
{
	/* A program that fails (a missing library) has no version to show. */
	return p->status == 0 ? first_line(p->out) : NULL;
}

char *
ff_env_version(const char *path, const char *arg)
{
	char *argv[] = { (char *)path, (char *)arg, NULL }, *line;
	struct probe p = { .argv = argv };

	probes_run(&p, 1);
	line = version_of(&p);
	free(p.out);
	return line;
}

/*
 * {"path", "version"} (or null, when not on PATH) of every program in
 * progs, into env under its name; their version probes run at once.
 */
static void
progs_info(json_t *env)
{
	enum { N = FF_ARRAY_SIZE(progs) };
	char *paths[N], *argvs[N][3], *version;
	struct probe p[N];
	size_t i, n = 0, at[N];
	json_t *o;

	for (i = 0; i < N; i++) {
		paths[i] = ff_which(progs[i].name);
		if (!paths[i])
			continue;
		argvs[i][0] = paths[i];
		argvs[i][1] = (char *)progs[i].version_arg;
		argvs[i][2] = NULL;
		at[i] = n;
		p[n++] = (struct probe){ .argv = argvs[i] };
	}
	probes_run(p, n);
	for (i = 0; i < N; i++) {
		if (!paths[i]) {
			json_object_set_new(env, progs[i].name, json_null());
			continue;
		}
		version = version_of(&p[at[i]]);
		o = json_object();
		json_object_set_new(o, "path", ff_json_path(paths[i]));
		json_object_set_new(o, "version", ff_json_text(version));
		json_object_set_new(env, progs[i].name, o);
		free(version);
		free(p[at[i]].out);
		free(paths[i]);
	}
}

/* A value from an os-release file (quotes removed), or NULL. */
static char *
os_release_value(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p, *e;

	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, klen) || p[klen] != '=')
			continue;
		p += klen + 1;
		e = p + strcspn(p, "\n");
		if (e > p && (*p == '"' || *p == '\'') && e[-1] == *p && e - p >= 2) {
			p++;
			e--;
		}
		return strndup(p, e - p);
	}
	return NULL;
}

/*
 * os-release(5): /etc/os-release, else /usr/lib/os-release. The original
 * read /etc/system-release, which Debian does not have, and crashed.
 */
static char *
read_os_release(void)
{
	const char *v = getenv("FLIMFLAM_OS_RELEASE");
	char *text;

	if (v && *v)
		return ff_read_file(v, NULL);
	if ((text = ff_read_file("/etc/os-release", NULL)))
		return text;
	return ff_read_file("/usr/lib/os-release", NULL);
}

static json_t *
json_str_or_null(char *s)
{
	json_t *j = ff_json_text(s);

	free(s);
	return j;
}

static json_t *
json_path_or_null(char *s)
{
	json_t *j = ff_json_path(s);

	free(s);
	return j;
}

/* The "model name" line of /proc/cpuinfo (x86), else "Model" (some Arm). */
static char *
cpu_model(void)
{
	static const char *const keys[] = { "model name", "Model", "cpu model", NULL };
	char *text = ff_read_file("/proc/cpuinfo", NULL), *r = NULL, *p, *e;
	size_t klen;
	int i;

	for (i = 0; text && keys[i] && !r; i++) {
		klen = strlen(keys[i]);
		for (p = text; p && !r; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
			if (strncmp(p, keys[i], klen) || strspn(p + klen, " \t") + klen !=
			    strcspn(p, ":\n") || p[strcspn(p, ":\n")] != ':')
				continue;
			p += strcspn(p, ":") + 1;
			p += strspn(p, " \t");
			e = p + strcspn(p, "\n");
			r = strndup(p, e - p);
		}
	}
	free(text);
	return r;
}

char *
ff_env_fnv1a64(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a 64 offset basis */
	const unsigned char *p, *end;
	struct stat st;
	char *r;
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	if (st.st_size > 0) {
		m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			close(fd);
			return NULL;
		}
		for (p = m, end = p + st.st_size; p < end; p++) {
			h ^= *p;
			h *= 0x100000001b3ULL;	/* FNV 64 prime */
		}
		munmap(m, st.st_size);
	}
	close(fd);
	if (asprintf(&r, "%016llx", (unsigned long long)h) < 0)
		return NULL;
	return r;
}

/*
 * The ngx_stream_module.so nginx would load, "builtin" when nginx was built
 * with --with-stream (not =dynamic), else NULL. `nginx -V` also names the
 * modules path the package chose.
 */
char *
ff_env_nginx_stream_module(const char *nginx)
{
	static const char *const dirs[] = {
		"/usr/lib/nginx/modules", "/usr/lib64/nginx/modules",
		"/usr/share/nginx/modules", NULL
	};
	char *argv[] = { (char *)nginx, "-V", NULL }, *out, *p, *e, path[PATH_MAX];
	int i;

	out = nginx ? ff_env_run(argv, NULL) : NULL;
	if (out && (p = strstr(out, "--modules-path="))) {
		p += strlen("--modules-path=");
		e = p + strcspn(p, " \n");
		snprintf(path, sizeof(path), "%.*s/ngx_stream_module.so", (int)(e - p), p);
		if (access(path, R_OK) == 0) {
			free(out);
			return ff_strdup(path);
		}
	}
	for (i = 0; dirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/ngx_stream_module.so", dirs[i]);
		if (access(path, R_OK) == 0) {
			free(out);
			return ff_strdup(path);
		}
	}
	for (p = out; p && (p = strstr(p, "--with-stream")); p++)
		if (p[strlen("--with-stream")] == ' ' || p[strlen("--with-stream")] == '\n' ||
		    !p[strlen("--with-stream")]) {
			free(out);
			return ff_strdup("builtin");
		}
	free(out);
	return NULL;
}

/*
 * Keep in *best the better of it and `cand` (malloc'd, taken), preferring
 * libqpid-proton-core, the library the router links for AMQP.
 */
static void
proton_keep_better(char **best, char *cand)
{
	if (cand && (!*best || (strstr(cand, "proton-core") && !strstr(*best, "proton-core")))) {
		free(*best);
		*best = cand;
	} else
		free(cand);
}

char *
ff_env_proton_ldd(const char *skrouterd_path)
{
	char *argv[] = { "ldd", (char *)skrouterd_path, NULL }, *out, *line, *p, *e;
	char *best = NULL;

	if (!skrouterd_path || !(out = ff_env_run(argv, NULL)))
		return NULL;
	/* "\tlibqpid-proton-core.so.10 => /opt/proton/lib64/libqpid-proton-core.so.10 (0x...)" */
	for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		e = line + strcspn(line, "\n");
		p = strstr(line, "=> ");
		if (!p || p > e || !memmem(line, p - line, "libqpid-proton", 14))
			continue;
		p += 3;
		if (*p != '/')
			continue;	/* "=> not found" */
		proton_keep_better(&best, strndup(p, strcspn(p, " \n")));
	}
	free(out);
	return best;
}

char *
ff_env_proton_maps(pid_t pid)
{
	char path[64], *text, *line, *p, *e, *best = NULL;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(text = ff_read_file(path, NULL)))
		return NULL;
	for (line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		e = line + strcspn(line, "\n");
		p = memchr(line, '/', e - line);
		if (!p || !memmem(p, e - p, "/libqpid-proton", 15) ||
		    !memmem(p, e - p, ".so", 3))
			continue;
		proton_keep_better(&best, strndup(p, e - p));
	}
	free(text);
	return best;
}

char *
ff_skrouterd_schema_path(const char *skrouterd)
{
	const char *v = getenv("FLIMFLAM_SKROUTERD_SCHEMA");
	char *argv[] = { (char *)skrouterd, "--help", NULL }, *out, *p, *e, *r;

	if (v && *v)
		return ff_strdup(v);
	if (!skrouterd)
		return NULL;
	/*
	 * "  -I, --include=PATH (/usr/lib/skupper-router/python)": the python
	 * directory the router was installed with. (-h wants an argument in
	 * skrouterd's getopt string; --help does not.)
	 */
	out = ff_env_run(argv, NULL);
	if (!out || !(p = strstr(out, "--include=PATH ("))) {
		free(out);
		return NULL;
	}
	p += strlen("--include=PATH (");
	e = p + strcspn(p, ")\n");
	if (*e != ')' || asprintf(&r, "%.*s/skupper_router/management/skrouter.json",
				  (int)(e - p), p) < 0)
		r = NULL;
	free(out);
	return r;
}

int
ff_skrouterd_version_ok(const char *s)
{
	size_t n = s ? strspn(s, "0123456789abcdefghijklmnopqrstuvwxyz"
			       "ABCDEFGHIJKLMNOPQRSTUVWXYZ.+-_~") : 0;

	return n && n < 128 && !s[n] && s[0] >= '0' && s[0] <= '9' && strchr(s, '.');
}

/* "did not finish within 5 s", "exited with status 1: LINE" (static). */
static const char *
probe_failure(const struct probe *p)
{
	static char buf[512];
	char *line = first_line(p->out);

	if (p->status == -1)
		snprintf(buf, sizeof(buf), "did not finish within %.0f s", RUN_TIMEOUT_S);
	else if (WIFSIGNALED(p->status))
		snprintf(buf, sizeof(buf), "was killed by signal %d", WTERMSIG(p->status));
	else
		snprintf(buf, sizeof(buf), "exited with status %d%s%.300s", WEXITSTATUS(p->status),
			 line ? ": " : "", line ? line : "");
	free(line);
	return buf;
}

int
ff_skrouterd_check(const char *path, char *why, size_t n)
{
	char *vargv[] = { (char *)path, "--version", NULL };
	char *hargv[] = { (char *)path, "--help", NULL };
	struct probe p[2] = { { .argv = vargv }, { .argv = hargv } };
	const char *env_schema = getenv("FLIMFLAM_SKROUTERD_SCHEMA");
	char *version = NULL, *schema = NULL, *s, *e;
	int r = -1;

	/* With a schema named, the router need not name one. */
	probes_run(p, env_schema && *env_schema ? 1 : 2);
	if (!p[0].out)
		snprintf(why, n, "cannot run '%s'", path);
	else if (p[0].status != 0)
		snprintf(why, n, "'%s --version' %s: not a router flimflam can use", path,
			 probe_failure(&p[0]));
	else if (!ff_skrouterd_version_ok(version = first_line(p[0].out))) {
		for (s = version; s && *s; s++)
			if ((unsigned char)*s < ' ' || *s == 0x7f)
				*s = '?';	/* the line is for a terminal */
		snprintf(why, n, "'%s --version' printed '%.60s%s', not a version: not a router flimflam can use",
			 path, version ? version : "", version && strlen(version) > 60 ? "..." : "");
	} else if (env_schema && *env_schema)
		schema = ff_strdup(env_schema);
	else if (!p[1].out || p[1].status != 0)
		snprintf(why, n, "'%s --help' %s: its management schema cannot be found", path,
			 p[1].out ? probe_failure(&p[1]) : "cannot run");
	else {
		s = strstr(p[1].out, "--include=PATH (");
		s = s ? s + strlen("--include=PATH (") : NULL;
		e = s ? s + strcspn(s, ")\n") : NULL;
		if (s && *e == ')')
			schema = ff_asprintf("%.*s/skupper_router/management/skrouter.json",
					     (int)(e - s), s);
		else
			snprintf(why, n, "'%s --help' names no Python directory (-I, --include=PATH): its management schema cannot be found",
				 path);
	}
	if (schema) {
		json_error_t err;
		json_t *root = json_load_file(schema, 0, &err);

		if (json_is_object(json_object_get(root, "entityTypes")))
			r = 0;
		else
			snprintf(why, n, "cannot read the management schema '%s' of '%s': %s", schema,
				 path, root ? "no entityTypes" : err.text);
		json_decref(root);
	}
	free(version);
	free(schema);
	free(p[0].out);
	free(p[1].out);
	return r;
}

/* The attribute `attr` of entity type `type`, following "extends". */
static json_t *
schema_attr(json_t *types, const char *type, const char *attr, int depth)
{
	json_t *t = json_object_get(types, type), *a;
	const char *ext;

	if (!json_is_object(t) || depth > 8)
		return NULL;
	a = json_object_get(json_object_get(t, "attributes"), attr);
	if (a)
		return a;
	ext = json_string_value(json_object_get(t, "extends"));
	return ext ? schema_attr(types, ext, attr, depth + 1) : NULL;
}

int
ff_skrouterd_features(const char *schema_json_path, struct ff_skr_features *out)
{
	json_error_t err;
	json_t *root, *types, *enc, *dflt;

	memset(out, 0, sizeof(*out));
	root = json_load_file(schema_json_path, 0, &err);
	if (!root) {
		if (err.line > 0)
			ff_warn("%s:%d: %s", schema_json_path, err.line, err.text);
		else
			ff_warn("cannot read '%s': %s", schema_json_path, err.text);
		return -1;
	}
	types = json_object_get(root, "entityTypes");
	if (!json_is_object(types)) {
		ff_warn("%s: no entityTypes: not a skrouterd schema", schema_json_path);
		json_decref(root);
		return -1;
	}
	out->has_http = json_object_get(types, "httpListener") != NULL;
	enc = schema_attr(types, "tcpListener", "encapsulation", 0);
	out->tcp_encapsulation = enc != NULL;
	dflt = json_object_get(enc, "default");
	if (json_is_string(dflt))
		snprintf(out->encapsulation_default, sizeof(out->encapsulation_default),
			 "%s", json_string_value(dflt));
	out->worker_threads = schema_attr(types, "router", "workerThreads", 0) != NULL;
	json_decref(root);
	return 0;
}

json_t *
ff_skr_features_json(const struct ff_skr_features *f)
{
	json_t *o = json_object();

	json_object_set_new(o, "http", json_boolean(f->has_http));
	json_object_set_new(o, "tcp_encapsulation", json_boolean(f->tcp_encapsulation));
	json_object_set_new(o, "encapsulation_default", f->encapsulation_default[0] ?
			    json_string(f->encapsulation_default) : json_null());
	json_object_set_new(o, "worker_threads", json_boolean(f->worker_threads));
	return o;
}

/* Frame pointers ---------------------------------------------------------- */

/*
 * Does this GCC producer string ("GNU C17 12.2.0 -mtune=generic -O2 -g
 * -fno-omit-frame-pointer") mean the unit keeps frame pointers? The last of
 * -fomit/-fno-omit wins; without either, GCC omits them from -O1 up.
 */
static int
producer_keeps_fp(const char *s)
{
	const char *p, *no = NULL, *yes = NULL, *opt = NULL;

	for (p = s; (p = strstr(p, "-fno-omit-frame-pointer")); p++)
		no = p;
	for (p = s; (p = strstr(p, "-fomit-frame-pointer")); p++)
		yes = p;
	if (no || yes)
		return no > yes;
	for (p = s; (p = strstr(p, " -O")); p++)
		opt = p + 3;
	return !opt || *opt == '0';
}

static void
scan_producers(const char *data, size_t len, struct ff_fp_info *fp)
{
	const char *p = data, *end = data + len, *nul;

	while (p < end && (p = memmem(p, end - p, "GNU C", 5))) {
		nul = memchr(p, 0, end - p);
		if (!nul)
			break;
		/* "GNU C17 ...", "GNU C++17 ...", "GNU C11 ..." but not "GNU CC" */
		if (p[5] == '+' || (p[5] >= '0' && p[5] <= '9') || p[5] == ' ') {
			if (producer_keeps_fp(p))
				fp->units_with++;
			else {
				if (!fp->units_without)
					snprintf(fp->example, sizeof(fp->example), "%s", p);
				fp->units_without++;
			}
		}
		p = nul + 1;
	}
}

int
ff_env_frame_pointers(const char *path, struct ff_fp_info *fp)
{
	const unsigned char *m;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh, *strtab;
	struct stat st;
	size_t size;
	int fd, i, compressed = 0, debug_info = 0;

	memset(fp, 0, sizeof(*fp));
	snprintf(fp->example, sizeof(fp->example), "not a readable 64-bit ELF file");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	size = st.st_size;
	m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	eh = (const Elf64_Ehdr *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    eh->e_shstrndx >= eh->e_shnum) {
		munmap((void *)m, size);
		return -1;
	}
	fp->example[0] = 0;
	sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	strtab = &sh[eh->e_shstrndx];
	for (i = 0; i < eh->e_shnum; i++) {
		const char *name;

		if (strtab->sh_offset + sh[i].sh_name >= size ||
		    sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
		    sh[i].sh_type == SHT_NOBITS)
			continue;
		name = (const char *)m + strtab->sh_offset + sh[i].sh_name;
		if (strcmp(name, ".debug_str") && strcmp(name, ".debug_info"))
			continue;
		debug_info |= !strcmp(name, ".debug_info");
		if (sh[i].sh_flags & SHF_COMPRESSED) {
			compressed = 1;
			continue;
		}
		scan_producers((const char *)m + sh[i].sh_offset, sh[i].sh_size, fp);
	}
	munmap((void *)m, size);
	if (!fp->units_with && !fp->units_without) {
		snprintf(fp->example, sizeof(fp->example), "%s", compressed ? "compressed debug info" :
			 !debug_info ? "no debug information: stripped, or built without -g" :
			 "no GCC producer strings in its debug information");
		return -1;
	}
	return fp->units_without ? 0 : 1;
}

/* perf --------------------------------------------------------------------- */

int
ff_perf_paranoid(void)
{
	char *s = ff_read_file("/proc/sys/kernel/perf_event_paranoid", NULL);
	int v = INT_MIN;

	if (s)
		v = atoi(s);
	free(s);
	return v;
}

static int
perf_open(struct perf_event_attr *a, pid_t pid)
{
	return syscall(SYS_perf_event_open, a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int
sysfs_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void
append(char *why, size_t n, const char *fmt, ...)
{
	size_t len = strlen(why);
	va_list ap;

	if (len && len + 2 < n) {
		strcpy(why + len, "; ");
		len += 2;
	}
	va_start(ap, fmt);
	if (len < n)
		vsnprintf(why + len, n - len, fmt, ap);
	va_end(ap);
}

/*
 * FLIMFLAM_TEST_PERF=events,kernel,hardware,memory (any of them, or none):
 * what the probe reports instead of opening events, so that the suite sees
 * both sides of a PMU on a machine that has only one. -1 when unset.
 */
static int
perf_test_bits(char *why, size_t n)
{
	static const struct { const char *name; int bit; } names[] = {
		{ "events", FF_PERF_EVENTS }, { "kernel", FF_PERF_KERNEL },
		{ "hardware", FF_PERF_HARDWARE }, { "memory", FF_PERF_MEMORY },
	};
	const char *v = getenv("FLIMFLAM_TEST_PERF"), *p;
	int bits = 0;
	size_t i;

	if (!v)
		return -1;
	for (p = v; *p; p += strcspn(p, ","), p += *p == ',')
		for (i = 0; i < FF_ARRAY_SIZE(names); i++)
			if (strcspn(p, ",") == strlen(names[i].name) &&
			    !strncmp(p, names[i].name, strlen(names[i].name)))
				bits |= names[i].bit;
	append(why, n, "FLIMFLAM_TEST_PERF='%s'", v);
	return bits;
}

int
ff_perf_probe(char *why, size_t n)
{
	struct perf_event_attr a;
	int pipefd[2], fd, bits = 0, err, paranoid = ff_perf_paranoid();
	pid_t child;
	char c;

	if (n)
		why[0] = 0;
	if ((bits = perf_test_bits(why, n)) >= 0)
		return bits;
	bits = 0;
	/* A child that waits for the pipe to close, as a relay would run. */
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		append(why, n, "cannot create a pipe: %s", strerror(errno));
		return 0;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		append(why, n, "cannot fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return 0;
	}
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pipefd[1]);
		while (read(pipefd[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(pipefd[0]);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.disabled = 1;
	a.exclude_hv = 1;
	if ((fd = perf_open(&a, child)) >= 0) {
		bits |= FF_PERF_EVENTS | FF_PERF_KERNEL;
		close(fd);
	} else {
		a.exclude_kernel = 1;
		if ((fd = perf_open(&a, child)) >= 0) {
			bits |= FF_PERF_EVENTS;
			close(fd);
		} else {
			err = errno;
			append(why, n, "task-clock on a child process: %s (perf_event_paranoid=%d)",
			       strerror(err), paranoid);
		}
	}

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_hv = 1;
	a.exclude_kernel = 1;
	if ((fd = perf_open(&a, child)) >= 0) {
		bits |= FF_PERF_HARDWARE;
		close(fd);
	} else {
		err = errno;
		append(why, n, "cycles: %s%s", strerror(err),
		       err == ENOENT || err == EOPNOTSUPP || err == ENODEV ?
		       " (no hardware PMU: a virtual machine without PMU passthrough?)" : "");
	}
	close(pipefd[1]);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;

	/*
	 * perf mem and perf c2c sample loads and stores: Intel's mem-loads
	 * event (cpu_core on hybrid parts), AMD's IBS, Arm's SPE.
	 */
	if ((bits & FF_PERF_HARDWARE) &&
	    (sysfs_exists("/sys/bus/event_source/devices/cpu/events/mem-loads") ||
	     sysfs_exists("/sys/bus/event_source/devices/cpu_core/events/mem-loads") ||
	     sysfs_exists("/sys/bus/event_source/devices/ibs_op") ||
	     sysfs_exists("/sys/bus/event_source/devices/arm_spe_0")))
		bits |= FF_PERF_MEMORY;
	else
		append(why, n, "memory sampling: %s", bits & FF_PERF_HARDWARE ?
		       "no mem-loads event, IBS or SPE in /sys/bus/event_source/devices" :
		       "needs hardware counters");
	return bits;
}

/* The whole environment ----------------------------------------------------- */

json_t *
ff_env_collect(void)
{
	json_t *env = json_object();
	struct utsname u;
	cpu_set_t set;
	char host[256], *osr, *skr, *path;
	const char *proton;
	struct ff_skr_features f;
	struct ff_fp_info fp;
	char why[512];
	int paranoid, fps;

	json_object_set_new(env, "kernel", uname(&u) == 0 ? json_string(u.release) : json_null());
	osr = read_os_release();
	json_object_set_new(env, "os", json_str_or_null(osr ? os_release_value(osr, "PRETTY_NAME") : NULL));
	json_object_set_new(env, "os_id", json_str_or_null(osr ? os_release_value(osr, "ID") : NULL));
	json_object_set_new(env, "os_id_like", json_str_or_null(osr ? os_release_value(osr, "ID_LIKE") : NULL));
	free(osr);
	json_object_set_new(env, "cpu_model", json_str_or_null(cpu_model()));
	json_object_set_new(env, "cpus_online", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		json_object_set_new(env, "cpus_available", json_integer(CPU_COUNT(&set)));
		json_object_set_new(env, "cpu_list", json_string(ff_cpus_str(&set)));
	} else {
		json_object_set_new(env, "cpus_available", json_null());
		json_object_set_new(env, "cpu_list", json_null());
	}
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = 0;
		json_object_set_new(env, "hostname", ff_json_text(host));
	} else
		json_object_set_new(env, "hostname", json_null());

	progs_info(env);

	skr = ff_which("skrouterd");
	json_object_set_new(env, "skrouterd_hash_fnv1a64",
			    json_str_or_null(skr ? ff_env_fnv1a64(skr) : NULL));
	json_object_set_new(env, "proton_ldd", json_path_or_null(ff_env_proton_ldd(skr)));
	path = ff_skrouterd_schema_path(skr);
	json_object_set_new(env, "skrouterd_schema", ff_json_path(path));
	json_object_set_new(env, "skrouterd_features",
			    path && ff_skrouterd_features(path, &f) == 0 ?
			    ff_skr_features_json(&f) : json_null());
	free(path);
	fps = skr ? ff_env_frame_pointers(skr, &fp) : -1;
	json_object_set_new(env, "skrouterd_frame_pointers",
			    fps < 0 ? json_null() : json_boolean(fps));
	proton = ff_json_str(env, "proton_ldd");
	fps = proton ? ff_env_frame_pointers(proton, &fp) : -1;
	json_object_set_new(env, "proton_frame_pointers",
			    fps < 0 ? json_null() : json_boolean(fps));
	free(skr);

	path = ff_which("nginx");
	json_object_set_new(env, "nginx_stream_module", json_path_or_null(ff_env_nginx_stream_module(path)));
	free(path);

	paranoid = ff_perf_paranoid();
	json_object_set_new(env, "perf_event_paranoid",
			    paranoid == INT_MIN ? json_null() : json_integer(paranoid));
	json_object_set_new(env, "perf_hardware_counters",
			    json_boolean(ff_perf_probe(why, sizeof(why)) & FF_PERF_HARDWARE));
	return env;
}

void
ff_env_print_machine(const json_t *env)
{
	const char *s;

	ff_print("  %-10s %s\n", "os", (s = ff_json_str(env, "os")) ? s :
	       "unknown (no os-release file)");
	ff_print("  %-10s %s\n", "kernel", (s = ff_json_str(env, "kernel")) ? s : "unknown");
	s = ff_json_str(env, "cpu_model");
	ff_print("  %-10s %s, %.0f online, %.0f available (%s)\n", "cpu",
	       s ? s : "unknown model", ff_json_num(env, "cpus_online", 0),
	       ff_json_num(env, "cpus_available", 0),
	       ff_json_str(env, "cpu_list") ? ff_json_str(env, "cpu_list") : "?");
	ff_print("  %-10s %s\n", "host", (s = ff_json_str(env, "hostname")) ? s : "unknown");
}

long
ff_env_long(const char *name, long dflt, long min, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || end == v || n < min || n > max || (min >= 0 && *v == '-'))
		ff_fail(2, "%s: '%s' is not a whole number from %ld to %ld", name, v, min, max);
	return n;
}
