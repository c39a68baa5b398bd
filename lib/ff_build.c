/*
 * ff_build.c - relay builds: `--build LABEL=PATH` checked and resolved to
 * a binary, the environment its processes run in (derived from the build,
 * never from the caller's), and the `build` object that names it in every
 * summary and result.
 */
#include "ff.h"
#include "ff_int.h"

#include <errno.h>
#include <glob.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
ff_build_free(struct ff_build *b)
{
	free(b->label);
	free(b->path);
	free(b->prefix);
	free(b->version);
	free(b->ld_library_path);
	free(b->pythonpath);
	free(b->skstat);
	free(b->at);
	for (size_t i = 0; i < FF_ARRAY_SIZE(b->env); i++)
		free(b->env[i]);
	for (size_t i = 0; i < FF_ARRAY_SIZE(b->skstat_env); i++)
		free(b->skstat_env[i]);
	memset(b, 0, sizeof(*b));
}

int
ff_build_label_ok(const char *s, size_t len)
{
	return len > 0 && len <= 64 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					      "0123456789._-") >= len;
}

static int
is_exec_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "a:b" with the directories of `pattern`s under prefix that exist, or NULL. */
static void
add_dir(struct ff_buf *b, const char *dir)
{
	if (!is_dir(dir) || (b->s && strstr(b->s, dir)))
		return;
	if (b->len)
		ff_buf_add(b, ":", 1);
	ff_buf_addstr(b, dir);
}

/* Directories matching `pattern` that hold `entry`, added to b. */
static void
add_glob(struct ff_buf *b, const char *pattern, const char *entry)
{
	glob_t g;
	size_t i;

	if (glob(pattern, GLOB_ONLYDIR, NULL, &g) != 0)
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		char *p = ff_asprintf("%s/%s", g.gl_pathv[i], entry);

		if (!access(p, F_OK))
			add_dir(b, g.gl_pathv[i]);
		free(p);
	}
	globfree(&g);
}

/* The text of a NAME=VALUE setting, or NAME alone (putenv then removes it). */
static char *
setting(const char *name, const char *value)
{
	return value ? ff_asprintf("%s=%s", name, value) : ff_strdup(name);
}

/* The settings of the build's processes, and of its skstat's. */
static void
set_env(struct ff_build *b)
{
	b->env[0] = setting("LD_LIBRARY_PATH", b->ld_library_path);
	b->env[1] = setting("PYTHONPATH", b->pythonpath);
	/*
	 * skstat: the build's Proton binding with the build's libraries; a
	 * binding from elsewhere (the distribution's) gets none of them, as
	 * the sonames are the same and the symbols not.
	 */
	b->skstat_env[0] = setting("LD_LIBRARY_PATH", b->binding ? b->ld_library_path : NULL);
	b->skstat_env[1] = setting("PYTHONPATH", b->pythonpath);
}

/*
 * The build's environment: LD_LIBRARY_PATH from its RUNPATH, else its
 * prefix's lib/ and lib64/; for skrouterd its Python directory and the
 * Proton binding under its prefix on PYTHONPATH, and the skstat beside it.
 */
static void
derive_env(struct ff_build *b, int skrouterd)
{
	struct ff_buf ld = FF_BUF_INIT, py = FF_BUF_INIT;
	char *runpath = ff_elf_runpath(b->path), *p, *tok, *save = NULL;
	int binding = 0;

	if (runpath) {
		for (tok = strtok_r(runpath, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
			add_dir(&ld, tok);
	} else if (b->prefix) {
		p = ff_asprintf("%s/lib", b->prefix);
		add_dir(&ld, p);
		free(p);
		p = ff_asprintf("%s/lib64", b->prefix);
		add_dir(&ld, p);
		free(p);
	}
	free(runpath);
	b->ld_library_path = ld.len ? ff_buf_take(&ld) : NULL;
	if (skrouterd) {
		void *saved = ff_build_env_enter(b);
		char *schema = ff_skrouterd_schema_path(b->path), *cut;

		ff_build_env_leave(b, saved);

		/* PYDIR/skupper_router/management/skrouter.json: PYDIR. */
		if (schema && (cut = strstr(schema, "/skupper_router/management/"))) {
			*cut = 0;
			add_dir(&py, schema);
		}
		free(schema);
		if (b->prefix) {
			size_t before = py.len;

			p = ff_asprintf("%s/lib*/python3*/site-packages", b->prefix);
			add_glob(&py, p, "proton");
			free(p);
			p = ff_asprintf("%s/lib*/python3*/dist-packages", b->prefix);
			add_glob(&py, p, "proton");
			free(p);
			binding = py.len > before;
			p = ff_asprintf("%s/bin/skstat", b->prefix);
			if (is_exec_file(p))
				b->skstat = p;
			else
				free(p);
		}
		b->pythonpath = py.len ? ff_buf_take(&py) : NULL;
	}
	ff_buf_free(&ld);
	ff_buf_free(&py);
	b->binding = binding;
	set_env(b);
}

/* Settings kept while the build's own run: the caller's, put back by env_restore. */
struct saved_env {
	char *ld, *py;
};

static char *
dup_env(const char *name)
{
	const char *v = getenv(name);

	return v ? ff_strdup(v) : NULL;
}

static void
env_put(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

void *
ff_build_env_enter(const struct ff_build *b)
{
	struct saved_env *s = calloc(1, sizeof(*s));

	if (!s)
		ff_die("out of memory");
	if (!b->label)
		return s;	/* no build given: the caller's environment */
	s->ld = dup_env("LD_LIBRARY_PATH");
	s->py = dup_env("PYTHONPATH");
	env_put("LD_LIBRARY_PATH", b->ld_library_path);
	env_put("PYTHONPATH", b->pythonpath);
	return s;
}

void
ff_build_env_leave(const struct ff_build *b, void *saved)
{
	struct saved_env *s = saved;

	if (b->label) {
		env_put("LD_LIBRARY_PATH", s->ld);
		env_put("PYTHONPATH", s->py);
	}
	free(s->ld);
	free(s->py);
	free(s);
}

/* Does the program answer as `relay` (its row's version probe)? Its version into b->version. */
static int
answers_as(struct ff_build *b, const char *relay, struct ff_buf *why)
{
	const struct ff_relay *row = ff_relay_find(relay);
	const char *varg = row && row->version_arg ? row->version_arg : "--version";
	char *argv[] = { b->path, (char *)varg, NULL }, *out, *line;
	const char *expect = row ? row->version_line : NULL;
	void *saved;
	int st, r = -1;

	saved = ff_build_env_enter(b);
	/* The program on PATH (no label) had this check from its own caller. */
	if (b->label && row && row->check && row->check(b->path, why) < 0) {
		ff_build_env_leave(b, saved);
		return -1;
	}
	out = ff_env_run(argv, &st);
	ff_build_env_leave(b, saved);
	line = ff_first_line(out);
	if (!out)
		ff_why(why, "cannot run '%s'", b->path);
	else if (st != 0)
		ff_why(why, "'%s %s' failed (%s): not a %s", b->path, varg,
		       ff_status_how(st), relay);
	else if (expect && (!line || strncmp(line, expect, strlen(expect))))
		ff_why(why, "'%s %s' printed '%.60s', not %s's version: not a %s", b->path, varg,
		       line ? line : "", relay, relay);
	else {
		/* "nginx version: nginx/1.22.1": the version is the rest. */
		const char *v = expect && row->version_strip ?
			line + strlen(expect) + strspn(line + strlen(expect), " ") : line;

		b->version = ff_strdup(v);
		if (expect && row->version_strip)
			b->version[strcspn(b->version, " ")] = 0;
		r = 0;
	}
	free(line);
	free(out);
	return r;
}

int
ff_build_at(const char *label, const char *path, const char *relay, struct ff_build *b,
	    struct ff_buf *why)
{
	const char *prog = ff_relay_program(relay);
	char abs[PATH_MAX], real[PATH_MAX], *bin = NULL, *slash;
	struct stat st;

	memset(b, 0, sizeof(*b));
	b->relay = relay;
	b->label = label ? ff_strdup(label) : NULL;
	if (!prog) {
		ff_why(why, "relay '%s' runs no program, so it has no build", relay);
		return -1;
	}
	if (!*path) {
		ff_why(why, "expected LABEL=PATH, and PATH is empty");
		return -1;
	}
	if (stat(path, &st) < 0) {
		ff_why(why, "'%s': %s", path, strerror(errno));
		return -1;
	}
	ff_absolute(path, abs, sizeof(abs));
	b->at = ff_strdup(abs);
	if (S_ISDIR(st.st_mode)) {
		/* An install prefix: sbin/ or bin/ holds the relay. */
		char *s = ff_asprintf("%s/sbin/%s", abs, prog), *p = ff_asprintf("%s/bin/%s", abs, prog);

		bin = is_exec_file(s) ? ff_strdup(s) : is_exec_file(p) ? ff_strdup(p) : NULL;
		free(s);
		free(p);
		if (!bin) {
			ff_why(why, "'%s' is a directory without sbin/%s or bin/%s", path, prog, prog);
			return -1;
		}
		b->prefix = ff_strdup(abs);
	} else if (!is_exec_file(abs)) {
		ff_why(why, "'%s' is not an executable file", path);
		return -1;
	} else {
		bin = ff_strdup(abs);
		/* PREFIX/bin/PROG or PREFIX/sbin/PROG: PREFIX. */
		snprintf(real, sizeof(real), "%s", abs);
		if ((slash = strrchr(real, '/')) && slash > real) {
			*slash = 0;
			slash = strrchr(real, '/');
			if (slash && (!strcmp(slash, "/bin") || !strcmp(slash, "/sbin"))) {
				*slash = 0;
				b->prefix = ff_strdup(*real ? real : "/");
			}
		}
	}
	b->path = bin;
	if (label)	/* without one, its processes inherit the caller's environment */
		derive_env(b, ff_relay_has(relay, FF_RELAY_PROTON));
	if (answers_as(b, relay, why) < 0) {
		if (label)
			return -1;
		/* The program on PATH as today: its own checks speak for it. */
		ff_debug("%s", why->s);
	}
	return 0;
}

int
ff_build_parse(const char *arg, const char *relay, struct ff_build *b, struct ff_buf *why)
{
	const char *eq = strchr(arg, '=');
	char label[80];

	memset(b, 0, sizeof(*b));
	if (!eq) {
		ff_why(why, "--build '%s': expected LABEL=PATH", arg);
		return -1;
	}
	if (!ff_build_label_ok(arg, eq - arg)) {
		ff_why(why, "--build '%s': the label must be 1 to 64 of A-Z a-z 0-9 . _ -", arg);
		return -1;
	}
	snprintf(label, sizeof(label), "%.*s", (int)(eq - arg), arg);
	if (ff_build_at(label, eq + 1, relay, b, why) < 0) {
		char *inner = ff_buf_take(why);

		ff_why(why, "--build %s: %s", label, inner);
		free(inner);
		ff_build_free(b);
		return -1;
	}
	return 0;
}

void
ff_build_argv(struct ff_argv *a, const struct ff_build *b)
{
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "label", json_string(b->label));
	json_object_set_new(o, "at", ff_json_path(b->at));
	json_object_set_new(o, "path", ff_json_path(b->path));
	json_object_set_new(o, "prefix", b->prefix ? ff_json_path(b->prefix) : json_null());
	json_object_set_new(o, "version", ff_json_text(b->version));
	json_object_set_new(o, "ld_library_path", b->ld_library_path ? ff_json_path(b->ld_library_path) :
			    json_null());
	json_object_set_new(o, "pythonpath", b->pythonpath ? ff_json_path(b->pythonpath) : json_null());
	json_object_set_new(o, "skstat", b->skstat ? ff_json_path(b->skstat) : json_null());
	json_object_set_new(o, "binding", json_boolean(b->binding));
	s = json_dumps(o, JSON_COMPACT);
	if (!s)
		ff_die("out of memory");
	ff_argv_addl(a, "--build", s, NULL);
	free(s);
	json_decref(o);
}

/* A path of the build's object, or NULL. */
static char *
path_of(const json_t *o, const char *key)
{
	return json_is_null(json_object_get(o, key)) ? NULL : ff_json_path_value(json_object_get(o, key));
}

int
ff_build_read(const char *arg, const char *relay, struct ff_build *b, struct ff_buf *why)
{
	json_t *o = arg[0] == '{' ? json_loads(arg, 0, NULL) : NULL;
	const char *label = ff_json_str(o, "label"), *prog = ff_relay_program(relay);
	struct stat st;
	int r = -1;

	if (!o || !label)
		return ff_build_parse(arg, relay, b, why);
	memset(b, 0, sizeof(*b));
	b->relay = relay;
	b->label = ff_strdup(label);
	b->at = path_of(o, "at");
	b->path = path_of(o, "path");
	b->prefix = path_of(o, "prefix");
	b->version = ff_json_str(o, "version") ? ff_strdup(ff_json_str(o, "version")) : NULL;
	b->ld_library_path = path_of(o, "ld_library_path");
	b->pythonpath = path_of(o, "pythonpath");
	b->skstat = path_of(o, "skstat");
	b->binding = json_is_true(json_object_get(o, "binding"));
	json_decref(o);
	/* Checked where it was given; here (another host, maybe) only that it is there. */
	if (!b->at || !b->path || !prog || !ff_build_label_ok(b->label, strlen(b->label)))
		ff_why(why, "--build %s: not a build as flimflam passes it", b->label);
	else if (stat(b->at, &st) < 0)
		ff_why(why, "--build %s: '%s': %s", b->label, b->at, strerror(errno));
	else if (!is_exec_file(b->path) && S_ISDIR(st.st_mode))
		ff_why(why, "--build %s: '%s' is a directory without sbin/%s or bin/%s", b->label,
		       b->at, prog, prog);
	else if (!is_exec_file(b->path))
		ff_why(why, "--build %s: '%s' is not an executable file", b->label, b->at);
	else
		r = 0;
	if (r < 0) {
		ff_build_free(b);
		return -1;
	}
	set_env(b);
	return 0;
}

int
ff_build_of_path(const char *relay, struct ff_build *b)
{
	const char *prog = ff_relay_program(relay);
	char *path = prog ? ff_which(prog) : NULL;
	struct ff_buf why = FF_BUF_INIT;
	int r;

	memset(b, 0, sizeof(*b));
	if (!path)
		return -1;
	r = ff_build_at(NULL, path, relay, b, &why);
	free(path);
	if (r < 0)
		ff_debug("%s", why.s);
	ff_buf_free(&why);
	return r;
}

/* sha256sum's 64 hex digits, or NULL. */
static char *
sha256_of(const char *path)
{
	char *argv[] = { "sha256sum", "-b", (char *)path, NULL }, *out;
	int st;
	size_t len;

	out = ff_env_run(argv, &st);
	if (!out || st != 0 || (len = strspn(out, "0123456789abcdef")) != 64) {
		free(out);
		return NULL;
	}
	out[64] = 0;
	return out;
}

/* Version: of the .pc file pkg-config has for Proton beside the library, or NULL. */
static char *
proton_version(const char *lib)
{
	char *dir = ff_strdup(lib), *slash = strrchr(dir, '/'), *pc, *text, *v, *r = NULL;

	if (slash)
		*slash = 0;
	pc = ff_asprintf("%s/pkgconfig/libqpid-proton-core.pc", dir);
	text = ff_read_file(pc, NULL);
	if (text && (v = strstr(text, "\nVersion:"))) {
		v += strlen("\nVersion:");
		v += strspn(v, " \t");
		r = strndup(v, strcspn(v, " \t\r\n"));
	}
	free(text);
	free(pc);
	free(dir);
	return r;
}

json_t *
ff_build_json(const struct ff_build *b, pid_t pid)
{
	json_t *o = json_object(), *proton = json_null();
	char *sha = sha256_of(b->path);

	json_object_set_new(o, "label", b->label ? json_string(b->label) : json_null());
	json_object_set_new(o, "relay", json_string(b->relay));
	json_object_set_new(o, "path", ff_json_path(b->path));
	json_object_set_new(o, "version", ff_json_text(b->version));
	json_object_set_new(o, "sha256", sha ? json_string(sha) : json_null());
	if (ff_relay_has(b->relay, FF_RELAY_PROTON)) {
		char *lib = pid > 0 ? ff_env_proton_maps(pid) : NULL, *v = NULL;

		if (!lib) {
			void *saved = ff_build_env_enter(b);

			lib = ff_env_proton_ldd(b->path);
			ff_build_env_leave(b, saved);
		}
		if (lib) {
			v = proton_version(lib);
			proton = json_object();
			json_object_set_new(proton, "path", ff_json_path(lib));
			json_object_set_new(proton, "version", ff_json_text(v));
		}
		free(lib);
		free(v);
	}
	json_object_set_new(o, "proton", proton);
	free(sha);
	return o;
}

const char *
ff_build_line(const json_t *b, char *buf, size_t n)
{
	const json_t *pr = json_object_get(b, "proton");
	const char *sha = ff_json_str(b, "sha256"), *label = ff_json_str(b, "label");
	char *path = ff_json_path_value(json_object_get(b, "path"));
	char *ppath = ff_json_path_value(json_object_get(pr, "path"));
	size_t len;

	len = snprintf(buf, n, "%s%s%s%s %s, version %s, sha256 %.12s", label ? "build " : "",
		       label ? label : "", label ? ": " : "", ff_json_str(b, "relay") ?
		       ff_json_str(b, "relay") : "relay", path ? path : "?",
		       ff_json_str_or(b, "version", "unknown"),
		       sha ? sha : "unknown");
	if (json_is_object(pr) && len < n)
		snprintf(buf + len, n - len, "; Proton %s%s%s", ppath ? ppath : "?",
			 ff_json_str(pr, "version") ? " " : "",
			 ff_json_str_or(pr, "version", ""));
	else if (ff_relay_has(ff_json_str(b, "relay"), FF_RELAY_PROTON) && len < n)
		snprintf(buf + len, n - len, "; Proton unknown");
	free(path);
	free(ppath);
	return buf;
}
