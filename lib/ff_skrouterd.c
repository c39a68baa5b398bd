/*
 * ff_skrouterd.c - the router: whether flimflam can use it (its --version
 * and --help), the features its installed management schema offers and
 * what it can carry by them, and the Proton library it loads.
 */
#include "ff.h"
#include "ff_int.h"

#include <string.h>

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

int
ff_skrouterd_check(const char *path, struct ff_buf *why)
{
	char *vargv[] = { (char *)path, "--version", NULL };
	char *hargv[] = { (char *)path, "--help", NULL };
	struct ff_probe p[2] = { { .argv = vargv }, { .argv = hargv } };
	const char *env_schema = getenv("FLIMFLAM_SKROUTERD_SCHEMA");
	char *version = NULL, *schema = NULL, *s, *e;
	int r = -1;

	/* With a schema named, the router need not name one. */
	ff_probes_run(p, env_schema && *env_schema ? 1 : 2);
	if (!p[0].out)
		ff_why(why, "cannot run '%s'", path);
	else if (p[0].status != 0)
		ff_why(why, "'%s --version' %s: not a router flimflam can use", path,
		       ff_probe_failure(&p[0]));
	else if (!ff_skrouterd_version_ok(version = ff_first_line(p[0].out))) {
		for (s = version; s && *s; s++)
			if ((unsigned char)*s < ' ' || *s == 0x7f)
				*s = '?';	/* the line is for a terminal */
		ff_why(why, "'%s --version' printed '%.60s%s', not a version: not a router flimflam can use",
		       path, version ? version : "", version && strlen(version) > 60 ? "..." : "");
	} else if (env_schema && *env_schema)
		schema = ff_strdup(env_schema);
	else if (!p[1].out || p[1].status != 0)
		ff_why(why, "'%s --help' %s: its management schema cannot be found", path,
		       p[1].out ? ff_probe_failure(&p[1]) : "cannot run");
	else {
		s = strstr(p[1].out, "--include=PATH (");
		s = s ? s + strlen("--include=PATH (") : NULL;
		e = s ? s + strcspn(s, ")\n") : NULL;
		if (s && *e == ')')
			schema = ff_asprintf("%.*s/skupper_router/management/skrouter.json",
					     (int)(e - s), s);
		else
			ff_why(why, "'%s --help' names no Python directory (-I, --include=PATH): its management schema cannot be found",
			       path);
	}
	if (schema) {
		json_error_t err;
		json_t *root = json_load_file(schema, 0, &err);

		if (json_is_object(json_object_get(root, "entityTypes")))
			r = 0;
		else
			ff_why(why, "cannot read the management schema '%s' of '%s': %s", schema,
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

/* The first of `names` that `type` has in the schema, or NULL. */
static const char *
schema_first(json_t *types, const char *type, const char *const names[])
{
	for (; *names; names++)
		if (schema_attr(types, type, *names, 0))
			return *names;
	return NULL;
}

int
ff_skrouterd_tls(const char *path, struct ff_skr_tls *t, struct ff_buf *why)
{
	/* Newer names first: certDb and keyFile are the older routers' words. */
	static const char *const ca[] = { "caCertFile", "certDb", NULL };
	static const char *const cert[] = { "certFile", NULL };
	static const char *const key[] = { "privateKeyFile", "keyFile", NULL };
	char *schema = ff_skrouterd_schema_path(path);
	json_error_t err;
	json_t *root = schema ? json_load_file(schema, 0, &err) : NULL;
	json_t *types = json_object_get(root, "entityTypes");
	const char *a[3];
	int r = -1;

	memset(t, 0, sizeof(*t));
	if (!json_is_object(types))
		ff_why(why, "cannot read the management schema of '%s'%s%s", path,
		       schema ? ": " : "", schema ? schema : "");
	else if (!(a[0] = schema_first(types, "sslProfile", ca)) ||
		 !(a[1] = schema_first(types, "sslProfile", cert)) ||
		 !(a[2] = schema_first(types, "sslProfile", key)) ||
		 !schema_attr(types, "listener", "sslProfile", 0) ||
		 !schema_attr(types, "connector", "sslProfile", 0) ||
		 !schema_attr(types, "listener", "authenticatePeer", 0) ||
		 !schema_attr(types, "listener", "saslMechanisms", 0))
		ff_why(why, "the router at '%s' has no sslProfile with a CA, a certificate and a key "
		       "for its listeners and connectors in its schema '%s': --tls needs one", path, schema);
	else {
		snprintf(t->ca, sizeof(t->ca), "%s", a[0]);
		snprintf(t->cert, sizeof(t->cert), "%s", a[1]);
		snprintf(t->key, sizeof(t->key), "%s", a[2]);
		t->require_ssl = schema_attr(types, "listener", "requireSsl", 0) != NULL;
		t->verify_hostname = schema_attr(types, "connector", "verifyHostname", 0) != NULL;
		t->connector_sasl = schema_attr(types, "connector", "saslMechanisms", 0) != NULL;
		r = 0;
	}
	json_decref(root);
	free(schema);
	return r;
}

static const char no_http[] = "no HTTP adaptor";

int
ff_skrouterd_can(const char *path, const char *protocol, const char *encapsulation,
		 const char **lacks, struct ff_buf *why)
{
	struct ff_skr_features f;
	char *schema;
	int r;

	*lacks = NULL;
	if (!(ff_protocol_bit(protocol) & FF_HTTP) && !encapsulation)
		return 1;	/* every router has the tcp adaptor */
	schema = ff_skrouterd_schema_path(path);
	if (!schema) {
		ff_why(why, "cannot find the management schema of '%s' (from 'skrouterd --help')", path);
		return -1;
	}
	r = ff_skrouterd_features(schema, &f);
	if (r < 0) {
		ff_why(why, "cannot read the management schema '%s'", schema);
		free(schema);
		return -1;
	}
	free(schema);
	if ((ff_protocol_bit(protocol) & FF_HTTP) && !f.has_http)
		*lacks = no_http;
	else if (encapsulation && !f.tcp_encapsulation)
		*lacks = "no tcp encapsulation setting";
	return *lacks == NULL;
}

int
ff_skrouterd_carries(const char *path, const char *protocol, const char *encapsulation,
		     struct ff_buf *why)
{
	const char *lacks;
	int r;

	r = ff_skrouterd_can(path, protocol, encapsulation, &lacks, why);
	if (r < 0)
		return -1;
	if (!r && lacks == no_http) {
		ff_why(why, "the skrouterd at '%s' has %s (routers from 3.1 on have none): protocol '%s' needs a 2.x or 3.0 router; tcp works",
		       path, lacks, protocol);
		return 0;
	}
	if (!r) {
		ff_why(why, "the skrouterd at '%s' has %s (only 2.5 to 3.0 routers have one)",
		       path, lacks);
		return 0;
	}
	if (encapsulation && ff_protocol_bit(protocol) != FF_TCP) {
		ff_why(why, "encapsulation applies to protocol tcp only");
		return 0;
	}
	return 1;
}
