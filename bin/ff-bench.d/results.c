/*
 * ff-bench's results: the values a record holds, and the runs grouped by
 * case (results files are read in load.c).
 */
#include "ff-bench.h"

#include <math.h>
#include <stdint.h>

int
num(const json_t *obj, const char *key, double *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return 0;
	*out = json_number_value(v);
	return 1;
}

static json_t *
relay_of(const json_t *rec, const char *role)
{
	json_t *relays = json_object_get(json_object_get(rec, "resources"), "relays"), *r;
	size_t i;

	json_array_foreach(relays, i, r)
		if (ff_json_str(r, "role") && !strcmp(ff_json_str(r, "role"), role))
			return r;
	return NULL;
}

/* A figure of the relays summed (R1 + R2 ...); needs every relay's. */
static int
relay_sum(const json_t *rec, const char *key, double *out)
{
	json_t *relays = json_object_get(json_object_get(rec, "resources"), "relays"), *r;
	double sum = 0, v;
	size_t i;

	if (!json_array_size(relays))
		return 0;
	json_array_foreach(relays, i, r) {
		if (!num(r, key, &v))
			return 0;
		sum += v;
	}
	*out = sum;
	return 1;
}

/* R1 + R2 CPU (1.0 = one CPU). */
static int
relay_cpu(const json_t *rec, double *out)
{
	return relay_sum(rec, "cpu_fraction", out);
}

/*
 * The relays' count `key` (ctx_switches, wakeups; syscalls: syscalls_read
 * + syscalls_write) a second over the window (R1 + R2); needs every
 * relay's count (records before ff-capture counted them have none, and
 * wakeups are null where the kernel does not allow them).
 */
static int
relay_rate(const json_t *rec, const char *key, double *out)
{
	json_t *rsc = json_object_get(rec, "resources"), *relays = json_object_get(rsc, "relays"), *r;
	double sum = 0, v, window;
	size_t i;

	if (!json_array_size(relays) || !num(rsc, "window_s", &window) || window <= 0)
		return 0;
	json_array_foreach(relays, i, r) {
		double w;

		if (!strcmp(key, "syscalls")) {
			if (!num(r, "syscalls_read", &v) || !num(r, "syscalls_write", &w))
				return 0;
			v += w;
		} else if (!num(r, key, &v)) {
			return 0;
		}
		sum += v;
	}
	*out = sum / window;
	return 1;
}

/* The relays' count a per-MB or per-1k-ops metric divides. */
static const char *
count_key(int m)
{
	return m == M_CSW_MB || m == M_CSW_KOP ? "ctx_switches" :
	       m == M_WAKE_MB || m == M_WAKE_KOP ? "wakeups" : "syscalls";
}

/*
 * The value of a metric in one record, if it has one. Efficiency is the
 * relays' CPU over the work they carried, both as rates over the window:
 * CPU-seconds per second over GB per second is CPU-seconds per GB.
 */
static int
rec_value(const json_t *rec, int m, double *out)
{
	json_t *res = json_object_get(rec, "result");
	double cpu, v;

	switch (m) {
	case M_BITS:
		return num(res, "bits_per_s", out);
	case M_OPS:
		return num(res, "ops_per_s", out);
	case M_LAT:
		return num(res, "latency_avg_us", out);
	case M_P50:
		return num(res, "latency_p50_us", out);
	case M_P99:
		return num(res, "latency_p99_us", out);
	case M_P999:
		return num(res, "latency_p999_us", out);
	case M_LATMAX:
		return num(res, "latency_max_us", out);
	case M_R1CPU:
		return num(relay_of(rec, "r1"), "cpu_fraction", out);
	case M_R1RSS:
		return num(relay_of(rec, "r1"), "max_rss_bytes", out);
	case M_R2CPU:
		return num(relay_of(rec, "r2"), "cpu_fraction", out);
	case M_R2RSS:
		return num(relay_of(rec, "r2"), "max_rss_bytes", out);
	case M_RELAYCPU:
		return relay_cpu(rec, out);
	case M_RSSEND:
		return relay_sum(rec, "rss_end_bytes", out);
	case M_CPU_GB:
		if (!relay_cpu(rec, &cpu) || !num(res, "bits_per_s", &v) || v <= 0)
			return 0;
		*out = cpu / (v / 8e9);
		return 1;
	case M_CPU_KREQ:
		if (!relay_cpu(rec, &cpu) || !num(res, "ops_per_s", &v) || v <= 0)
			return 0;
		*out = cpu / (v / 1000);
		return 1;
	case M_CSW_MB:
	case M_WAKE_MB:
	case M_SYS_MB:
		if (!relay_rate(rec, count_key(m), &cpu) ||
		    !num(res, "bits_per_s", &v) || v <= 0)
			return 0;
		*out = cpu / (v / 8e6);
		return 1;
	case M_CSW_KOP:
	case M_WAKE_KOP:
	case M_SYS_KOP:
		if (!relay_rate(rec, count_key(m), &cpu) ||
		    !num(res, "ops_per_s", &v) || v <= 0)
			return 0;
		*out = cpu / (v / 1000);
		return 1;
	}
	return 0;
}

/* Results records */

int
is_status(const json_t *rec, const char *status)
{
	const char *s = ff_json_str(rec, "status");

	return s && !strcmp(s, status);
}

static void
rec_key(const json_t *rec, struct key *k)
{
	json_t *c = json_object_get(rec, "config");

	k->workload = ff_json_str(c, "workload");
	k->relay = ff_json_str(c, "relay");
	k->protocol = ff_json_str(c, "protocol");
	k->hops = (long)ff_json_num(c, "hops", (double)ff_relay_hops(k->relay));
	k->jobs = (long)ff_json_num(c, "jobs", 0);
	k->cpu_limit = (long)ff_json_num(c, "cpu_limit", 0);
	k->duration = ff_json_num(c, "duration_s", 0);
	k->warmup = ff_json_num(c, "warmup_s", 0);
	k->request_size = (long)ff_json_num(c, "request_size", 1);
	k->response_size = (long)ff_json_num(c, "response_size", 1);
	k->rate = (long)ff_json_num(c, "rate_per_s", 0);
	k->workers = (long)ff_json_num(c, "workers", 0);
	k->tls = json_is_true(json_object_get(c, "tls"));
	k->build = ff_json_str(json_object_get(rec, "build"), "label");
}

/* Two build labels (NULL: none) are the same. */
int
same_label(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* compare's match leaves warmup out, as the issue that asked for it says. */
int
key_eq(const struct key *a, const struct key *b, int with_warmup)
{
	return !strcmp(a->workload, b->workload) && !strcmp(a->relay, b->relay) &&
	       !strcmp(a->protocol, b->protocol) && a->hops == b->hops && a->jobs == b->jobs &&
	       a->cpu_limit == b->cpu_limit && a->duration == b->duration &&
	       a->request_size == b->request_size && a->response_size == b->response_size &&
	       a->rate == b->rate && a->workers == b->workers && a->tls == b->tls && (!with_warmup || a->warmup == b->warmup) &&
	       same_label(a->build, b->build);
}

/* The same case, whatever the builds: what compare matches. */
int
case_eq(const struct key *a, const struct key *b)
{
	struct key t = *a;

	t.build = b->build;
	return key_eq(&t, b, 0);
}

static size_t
key_hash(const struct key *k, int with_warmup)
{
	uint64_t h = 14695981039346656037ULL;
	const char *s[4] = { k->workload, k->relay, k->protocol, k->build ? k->build : "" };
	double d[9] = { k->jobs, k->cpu_limit, k->duration, with_warmup ? k->warmup : 0,
			k->request_size, k->response_size, k->rate, k->tls, k->workers };
	const unsigned char *p;
	size_t i, j;

	for (i = 0; i < 4; i++)
		for (p = (const unsigned char *)s[i]; ; p++) {
			h = (h ^ *p) * 1099511628211ULL;
			if (!*p)
				break;
		}
	for (i = 0; i < FF_ARRAY_SIZE(d); i++) {
		if (d[i] == 0)
			d[i] = 0;	/* -0 is 0, as key_eq has it */
		p = (const unsigned char *)&d[i];
		for (j = 0; j < sizeof(d[i]); j++)
			h = (h ^ p[j]) * 1099511628211ULL;
	}
	return (size_t)h;
}

/* The group of a key, made when new. */
static struct group *
results_group(struct results *r, const struct key *k)
{
	size_t i, mask;
	struct group *g;
	int j;

	if ((size_t)(r->ng + 1) * 2 > r->nslot) {
		free(r->slot);
		r->nslot = r->nslot ? r->nslot * 2 : 64;
		r->slot = calloc(r->nslot, sizeof(*r->slot));
		if (!r->slot)
			ff_die("out of memory");
		for (j = 0; j < r->ng; j++) {
			mask = r->nslot - 1;
			for (i = key_hash(&r->g[j].k, r->with_warmup) & mask; r->slot[i]; i = (i + 1) & mask)
				;
			r->slot[i] = j + 1;
		}
	}
	mask = r->nslot - 1;
	for (i = key_hash(k, r->with_warmup) & mask; r->slot[i]; i = (i + 1) & mask)
		if (key_eq(&r->g[r->slot[i] - 1].k, k, r->with_warmup))
			return &r->g[r->slot[i] - 1];
	if (r->ng == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->g = ff_realloc(r->g, r->cap * sizeof(*r->g));
	}
	g = &r->g[r->ng];
	memset(g, 0, sizeof(*g));
	g->k = *k;
	g->k.workload = ff_strdup(k->workload);
	g->k.relay = ff_strdup(k->relay);
	g->k.protocol = ff_strdup(k->protocol);
	g->k.build = k->build ? ff_strdup(k->build) : NULL;
	g->order = r->ng;
	r->slot[i] = ++r->ng;
	return g;
}

/* Add a value of an environment field to a group's distinct ones. */
static void
env_add(struct group *g, const char *name, const json_t *v)
{
	char num[64], *text;
	int i;

	if (json_is_string(v))
		text = ff_strdup(json_string_value(v));
	else if (json_is_number(v)) {
		snprintf(num, sizeof(num), "%.15g", json_number_value(v));
		text = ff_strdup(num);
	} else if (!v || json_is_null(v))
		text = ff_strdup(ENV_NONE);
	else
		text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	for (i = 0; i < g->nenv; i++)
		if (!strcmp(g->env[i].name, name) && !strcmp(g->env[i].value, text)) {
			free(text);
			return;
		}
	g->env = ff_realloc(g->env, (g->nenv + 1) * sizeof(*g->env));
	g->env[g->nenv].name = ff_strdup(name);
	g->env[g->nenv++].value = text;
}

/*
 * What compare holds the two sides' runs against, exactly: the machine, the
 * case's warmup and window, and the version of every program the
 * environment names (relays, workload tools, perf) but the router, whose
 * version, binary and Proton are what is compared (compare shows them apart).
 */
static void
env_take(struct group *g, const json_t *rec, const json_t *env)
{
	static const char *const machine[] = {
		"hostname", "kernel", "cpu_model", "os", "cpus_online", "cpus_available", "cpu_list"
	};
	const json_t *c = json_object_get(rec, "config"), *v;
	const char *key;
	char name[300];
	size_t i;

	if (json_is_object(env))
		for (i = 0; i < FF_ARRAY_SIZE(machine); i++)
			env_add(g, machine[i], json_object_get(env, machine[i]));
	env_add(g, "warmup_s", json_object_get(c, "warmup_s"));
	env_add(g, "duration_s", json_object_get(c, "duration_s"));
	/* The pool's host the run ran on (bench --pool), whatever its environment says. */
	if (json_object_get(rec, "host"))
		env_add(g, "pool_host", json_object_get(rec, "host"));
	if (!json_is_object(env))
		return;
	/* The Proton relay's (skrouterd's, and its Proton's) are what is compared, shown apart. */
	json_object_foreach((json_t *)env, key, v)
		if (json_is_object(v) && json_object_get(v, "version") &&
		    !ff_relay_has(key, FF_RELAY_PROTON)) {
			snprintf(name, sizeof(name), "%s.version", key);
			env_add(g, name, json_object_get(v, "version"));
		}
}

/*
 * Is this record one already taken (a file concatenated with itself)? Its
 * identity, into *idp: case, build, run directory, time and repeat; a
 * record without a run directory and time is the whole record (its keys
 * in order), so two copies of one are one run.
 */
static int
duplicate(struct results *r, const json_t *rec, const struct key *k, uint64_t *idp)
{
	const char *dir = ff_json_str(rec, "run_dir"), *time = ff_json_str(rec, "time");
	uint64_t h = 14695981039346656037ULL;
	char *id;
	size_t i, mask;
	const unsigned char *p;

	if (!dir && (!time || !*time))
		id = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	else
		id = ff_asprintf("%s|%s|%s|%s|%s|%s|%ld", k->workload, k->relay, k->protocol,
				 k->build ? k->build : "", dir ? dir : "", time ? time : "",
				 (long)ff_json_num(rec, "repeat", 0));
	if (!id)
		ff_die("out of memory");
	for (p = (const unsigned char *)id; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	free(id);
	h |= 1;			/* 0 marks a free slot */
	*idp = h;
	if ((r->nseen + 1) * 2 > r->cap_seen) {
		uint64_t *old = r->seen;
		long *old_line = r->seen_line;
		size_t oldcap = r->cap_seen;

		r->cap_seen = r->cap_seen ? r->cap_seen * 2 : 256;
		r->seen = calloc(r->cap_seen, sizeof(*r->seen));
		r->seen_line = calloc(r->cap_seen, sizeof(*r->seen_line));
		if (!r->seen || !r->seen_line)
			ff_die("out of memory");
		mask = r->cap_seen - 1;
		for (i = 0; i < oldcap; i++)
			if (old[i]) {
				size_t j = old[i] & mask;

				while (r->seen[j])
					j = (j + 1) & mask;
				r->seen[j] = old[i];
				r->seen_line[j] = old_line[i];
			}
		free(old);
		free(old_line);
	}
	mask = r->cap_seen - 1;
	for (i = h & mask; r->seen[i]; i = (i + 1) & mask)
		if (r->seen[i] == h) {
			if (!r->ndup++) {
				r->dup_line = r->line;
				r->dup_of = r->seen_line[i];
			}
			return 1;
		}
	r->seen[i] = h;
	r->seen_line[i] = r->line;
	r->nseen++;
	return 0;
}

/* -1: no such boolean; else 0 or 1. */
static signed char
tri(const json_t *v)
{
	return json_is_boolean(v) ? json_is_true(v) : -1;
}

/*
 * What a run's window shared the machine with, as far as the record says:
 * its steadiness, TCP's stalls (resources.tcp), another run on its CPUs
 * (topology.cpus_other_runs), and resources.machine's load (steal as a
 * share of the window).
 */
static void
run_conditions(struct run *run, const json_t *rec)
{
	const json_t *rsc = json_object_get(rec, "resources"), *tcp = json_object_get(rsc, "tcp"),
		     *topo = json_object_get(rec, "topology"), *mach = json_object_get(rsc, "machine");
	const json_t *others = json_object_get(topo, "cpus_other_runs");
	double window, steal;

	run->steady = tri(json_object_get(json_object_get(rec, "steadiness"), "steady"));
	run->stalled = !json_is_object(tcp) ? -1 : ff_json_num(tcp, "timeouts", 0) > 0 ||
		       ff_json_num(tcp, "zero_window_probes", 0) > 0 ||
		       ff_json_num(tcp, "memory_pressures", 0) > 0;
	run->shared = json_is_array(others) ? json_array_size(others) > 0 :
		      json_is_object(topo) && json_is_null(others) ? 0 : -1;
	run->other_cpu = NAN;
	run->steal = NAN;
	if (!json_is_object(mach))
		return;
	run->other_cpu = ff_machine_others(mach);
	if (run->other_cpu < 0)
		run->other_cpu = NAN;
	window = ff_json_num(rsc, "window_s", ff_json_num(json_object_get(rec, "config"), "duration_s", 0));
	if (window > 0 && num(mach, "steal_s", &steal))
		run->steal = steal / window;
}

/* A record's build under a label the group already has with another sha256. */
static void
build_take(struct group *g, const json_t *rec)
{
	const json_t *b = json_object_get(rec, "build");
	const char *sha = ff_json_str(b, "sha256"), *first;

	if (!json_is_object(b))
		return;
	if (!g->build) {
		g->build = json_incref((json_t *)b);
		return;
	}
	first = ff_json_str(g->build, "sha256");
	if (sha && first && strcmp(sha, first) && !g->other_sha256)
		g->other_sha256 = ff_strdup(sha);
}

/* Take what the statistics need of a (checked) case record; returns its group. */
struct group *
results_add(struct results *r, const json_t *rec)
{
	const json_t *env = json_object_get(rec, "environment");
	const char *st = ff_json_str(rec, "status");
	struct group *g;
	struct run *run;
	struct key k;
	uint64_t id;
	char why[160];
	int m;

	rec_key(rec, &k);
	if (duplicate(r, rec, &k, &id))
		return NULL;	/* counted once */
	g = results_group(r, &k);
	build_take(g, rec);
	env_take(g, rec, env);
	if (g->nruns == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 4;
		g->runs = ff_realloc(g->runs, g->cap * sizeof(*g->runs));
	}
	run = &g->runs[g->nruns++];
	memset(run, 0, sizeof(*run));
	run->status = !strcmp(st, "ok") ? 'o' : !strcmp(st, "failed") ? 'f' : 's';
	run->repeat = (long)ff_json_num(rec, "repeat", 0);
	run->id = id;
	run->seed = json_is_integer(json_object_get(rec, "seed")) ? (long)ff_json_num(rec, "seed", 0) : -1;
	run->sequential = json_is_true(json_object_get(rec, "sequential"));
	if (run->status == 'o') {
		for (m = 0; m < M_N; m++)
			if (rec_value(rec, m, &run->v[m]))
				run->have |= 1u << m;
		run->unsteady = json_is_false(json_object_get(json_object_get(rec, "steadiness"), "steady"));
		run_conditions(run, rec);
		run->mshared = ff_machine_shared(json_object_get(rec, "resources"), why, sizeof(why)) != NULL;
	} else {
		run->reason = ff_strdup(ff_json_str(rec, "reason"));
		run->run_dir = ff_strdup(ff_json_str(rec, "run_dir"));
	}
	if (!json_is_object(env))
		return g;
	if (!r->env)
		r->env = json_incref((json_t *)env);
	if (!r->router_env && run->status == 'o' && ff_relay_has(k.relay, FF_RELAY_ROUTED))
		r->router_env = json_incref((json_t *)env);
	return g;
}

void
results_free(struct results *r)
{
	int i, j;

	for (i = 0; i < r->ng; i++) {
		for (j = 0; j < r->g[i].nruns; j++) {
			free(r->g[i].runs[j].reason);
			free(r->g[i].runs[j].run_dir);
		}
		free(r->g[i].runs);
		free((char *)r->g[i].k.workload);
		free((char *)r->g[i].k.relay);
		free((char *)r->g[i].k.protocol);
		free((char *)r->g[i].k.build);
		json_decref(r->g[i].build);
		free(r->g[i].other_sha256);
		for (j = 0; j < r->g[i].nenv; j++) {
			free(r->g[i].env[j].name);
			free(r->g[i].env[j].value);
		}
		free(r->g[i].env);
	}
	free(r->g);
	free(r->slot);
	free(r->seen);
	free(r->seen_line);
	json_decref(r->env);
	json_decref(r->router_env);
	memset(r, 0, sizeof(*r));
}

/* The results of records in memory (a bench's own). */
void
results_of(json_t *records, int with_warmup, struct results *r)
{
	size_t i;
	json_t *rec;

	memset(r, 0, sizeof(*r));
	r->with_warmup = with_warmup;
	json_array_foreach(records, i, rec) {
		r->line = (long)i + 1;
		results_add(r, rec);
	}
}

const char *
status_name(char status)
{
	return status == 'o' ? "ok" : status == 'f' ? "failed" : "skipped";
}

/* The values of a metric over the successful runs of a case. */
int
group_values(const struct group *g, int m, double **out)
{
	double *v = calloc(g->nruns + 1, sizeof(*v));
	int n = 0, i;

	if (!v)
		ff_die("out of memory");
	for (i = 0; i < g->nruns; i++)
		if (g->runs[i].status == 'o' && (g->runs[i].have & (1u << m)))
			v[n++] = g->runs[i].v[m];
	*out = v;
	return n;
}

/* The statistics of a metric over the successful runs of a case. */
void
group_stats(const struct group *g, int m, struct stats *s)
{
	double *v;
	int n = group_values(g, m, &v);

	stats_of(v, n, s);
	free(v);
}

int
group_count(const struct group *g, char status)
{
	int n = 0, i;

	for (i = 0; i < g->nruns; i++)
		n += g->runs[i].status == status;
	return n;
}

int
group_has(const struct group *g, int m)
{
	int i;

	for (i = 0; i < g->nruns; i++)
		if (g->runs[i].status == 'o' && (g->runs[i].have & (1u << m)))
			return 1;
	return 0;
}
