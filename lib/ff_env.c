/*
 * ff_env.c - the environment a result was measured in: program paths and
 * versions, the distribution, the CPU, the host, the nginx stream module,
 * with the router's facts (ff_skrouterd.c), its frame pointers (ff_elf.c)
 * and what perf can open (ff_perf.c).
 */
#include "ff.h"
#include "ff_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/*
 * Program name, and the argument that prints its version: the relays'
 * and the workloads' programs from their rows of the matrix (version_arg),
 * then these.
 */
struct prog {
	const char *name, *version_arg;
};
static const struct prog others[] = {
	{ "perf", "--version" },
	{ "gcc", "--version" },
};

/* A workload's client and server programs, into progs[*np] unless there already. */
static void
workload_progs(const struct ff_workload *w, struct prog *progs, size_t *np)
{
	const char *names[2] = { w->client, w->server };
	size_t i, j;

	for (i = 0; w->version_arg && i < 2; i++) {
		for (j = 0; j < *np && strcmp(progs[j].name, names[i]); j++)
			;
		if (j == *np)
			progs[(*np)++] = (struct prog){ names[i], w->version_arg };
	}
}

/*
 * {"path", "version"} (or null, when not on PATH) of every program in
 * progs, into env under its name; their version probes run at once.
 */
static void
progs_info(json_t *env)
{
	enum { N = FF_ARRAY_SIZE(others) + 16 };
	struct prog progs[N];
	char *paths[N], *argvs[N][3], *version;
	struct ff_probe p[N];
	size_t i, n = 0, at[N], np = 0;
	json_t *o;

	for (i = 0; ff_relays[i] && np < 16; i++) {
		const struct ff_relay *r = ff_relay_find(ff_relays[i]);

		if (r->program && r->version_arg)
			progs[np++] = (struct prog){ r->program, r->version_arg };
	}
	for (i = 0; ff_workloads[i] && np < 16; i++)
		workload_progs(ff_workload_find(ff_workloads[i]), progs, &np);
	for (i = 0; i < FF_ARRAY_SIZE(others); i++)
		progs[np++] = others[i];
	for (i = 0; i < np; i++) {
		paths[i] = ff_which(progs[i].name);
		if (!paths[i])
			continue;
		argvs[i][0] = paths[i];
		argvs[i][1] = (char *)progs[i].version_arg;
		argvs[i][2] = NULL;
		at[i] = n;
		p[n++] = (struct ff_probe){ .argv = argvs[i] };
	}
	ff_probes_run(p, n);
	for (i = 0; i < np; i++) {
		if (!paths[i]) {
			json_object_set_new(env, progs[i].name, json_null());
			continue;
		}
		version = ff_probe_version(&p[at[i]]);
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
	struct ff_buf why = FF_BUF_INIT;
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
			    json_boolean(ff_perf_probe(&why) & FF_PERF_HARDWARE));
	ff_buf_free(&why);
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
	       ff_json_str_or(env, "cpu_list", "?"));
	ff_print("  %-10s %s\n", "host", (s = ff_json_str(env, "hostname")) ? s : "unknown");
}
