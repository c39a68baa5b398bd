/*
 * ff-bench compare's sides: what each ran on (the environments, the
 * builds), and the doubts that keep a case's runs from being held against
 * each other (the same runs on both sides, two builds under one label,
 * different conditions on the machine).
 */
#include "ff-bench.h"

#include <math.h>
#include <stdarg.h>

/* Environments: what each side ran on */

/* "3.2.0, hash 0123..., proton ..." for the router a side's runs used. */
static const char *
router_str(const struct results *r, char *buf, size_t n)
{
	const json_t *env = r->router_env ? r->router_env : r->env;
	const char *ver, *hash, *proton;

	ver = ff_json_str(json_object_get(env, "skrouterd"), "version");
	hash = ff_json_str(env, "skrouterd_hash_fnv1a64");
	proton = ff_json_str(env, "proton_library");
	if (!proton)
		proton = ff_json_str(env, "proton_ldd");
	if (!ff_json_str(json_object_get(env, "skrouterd"), "path"))
		snprintf(buf, n, "skrouterd missing");
	else
		snprintf(buf, n, "skrouterd %s, hash %s, proton %s", ver ? ver : "version unknown",
			 hash ? hash : "unknown", proton ? proton : "unknown");
	return buf;
}

/* What a side measured: its build (bench --build), or the file's router. */
const char *
side_str(const struct results *r, const char *label, char *buf, size_t n)
{
	const json_t *b = NULL, *pr;
	const char *relay, *ver, *sha, *path;
	int i;

	for (i = 0; i < r->ng && !b; i++)
		if (r->g[i].build && same_label(r->g[i].k.build, label))
			b = r->g[i].build;
	if (!b)
		return router_str(r, buf, n);
	relay = ff_json_str(b, "relay");
	ver = ff_json_str(b, "version");
	sha = ff_json_str(b, "sha256");
	path = ff_json_str(b, "path");
	pr = json_object_get(b, "proton");
	snprintf(buf, n, "%s%s%s%s %s, sha256 %.16s, %s%s%s%s%s", label ? "build " : "",
		 label ? label : "", label ? ": " : "", relay ? relay : "relay", ver ? ver : "version unknown", sha ? sha : "unknown",
		 path ? path : "path unknown", json_is_object(pr) ? ", proton " : "",
		 ff_json_str_or(pr, "version", ""),
		 json_is_object(pr) ? " " : "",
		 ff_json_str_or(pr, "path", ""));
	return buf;
}


static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct values a side has for an environment field, sorted, " | " between. */
static char *
env_values(const struct side *s, const char *name)
{
	const char **v = NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	int i, j, k, nv = 0;

	for (i = 0; i < s->r->ng; i++) {
		const struct group *g = &s->r->g[i];

		if (!same_label(g->k.build, s->label))
			continue;
		for (j = 0; j < g->nenv; j++) {
			if (strcmp(g->env[j].name, name))
				continue;
			for (k = 0; k < nv && strcmp(v[k], g->env[j].value); k++)
				;
			if (k == nv) {
				v = ff_realloc(v, (nv + 1) * sizeof(*v));
				v[nv++] = g->env[j].value;
			}
		}
	}
	if (!nv) {
		free(v);
		return ff_strdup("none");
	}
	qsort(v, nv, sizeof(*v), cmp_str);
	if (!(f = open_memstream(&out, &len)))
		ff_die("out of memory");
	for (i = 0; i < nv; i++)
		fprintf(f, "%s%s", i ? " | " : "", v[i]);
	fclose(f);
	free(v);
	return out;
}

/* The names of the environment fields of both sides, in order of appearance. */
static int
env_names(const struct side *b, const struct side *n, const char ***out)
{
	const struct side *s[2] = { b, n };
	const char **names = NULL;
	int nn = 0, i, j, k, si;

	for (si = 0; si < 2; si++)
		for (i = 0; i < s[si]->r->ng; i++) {
			const struct group *g = &s[si]->r->g[i];

			if (!same_label(g->k.build, s[si]->label))
				continue;
			for (j = 0; j < g->nenv; j++) {
				for (k = 0; k < nn && strcmp(names[k], g->env[j].name); k++)
					;
				if (k == nn) {
					names = ff_realloc(names, (nn + 1) * sizeof(*names));
					names[nn++] = g->env[j].name;
				}
			}
		}
	*out = names;
	return nn;
}

static void
emit_env_json(const char *side, const struct side *s, const char **names, int nn)
{
	json_t *ev = ff_event("environment"), *fields = json_object();
	char buf[2048], *v;
	int i;

	json_object_set_new(ev, "side", json_string(side));
	json_object_set_new(ev, "file", ff_json_path(s->name));
	json_object_set_new(ev, "build", s->label ? json_string(s->label) : json_null());
	json_object_set_new(ev, "skrouterd", ff_json_text(side_str(s->r, s->label, buf, sizeof(buf))));
	for (i = 0; i < nn; i++) {
		v = env_values(s, names[i]);
		json_object_set_new(fields, names[i], ff_json_text(v));
		free(v);
	}
	json_object_set_new(ev, "fields", fields);
	ff_emit(ev);
}

/* The build object of a side's runs (bench --build, or the relay a bench measured), or NULL. */
static const json_t *
side_build(const struct side *s)
{
	int i;

	for (i = 0; i < s->r->ng; i++)
		if (s->r->g[i].build && same_label(s->r->g[i].k.build, s->label))
			return s->r->g[i].build;
	return NULL;
}

/*
 * Two sides of one binary (the same sha256): what they compare is the
 * machine, not a change. Said on stderr, in the output, and as an event.
 */
void
same_build(const struct side *base, const struct side *new, int md)
{
	const char *a = ff_json_str(side_build(base), "sha256"), *b = ff_json_str(side_build(new), "sha256");
	json_t *ev;

	if (!a || !b || strcmp(a, b) || !strcmp(a, "unknown"))
		return;
	ff_warn("base and new are the same build (sha256 %.16s): any change is the machine's, not the build's", a);
	if (cmpopt.json) {
		ev = ff_event("same_build");
		json_object_set_new(ev, "sha256", json_string(a));
		ff_emit(ev);
	} else
		printf(md ? "\n> **Warning:** base and new are the same build (sha256 %.16s).\n\n" :
		       "  warning: base and new are the same build (sha256 %.16s)\n", a);
}

/*
 * Prints the environments, every field of either side, exactly; each
 * difference (or a side with several values) is also a warning naming both
 * values. Returns how many fields differ.
 */
int
compare_env(const struct side *base, const struct side *new)
{
	char a[2048], b[2048], *va, *vb;
	const char **names;
	int i, nn, ndiff = 0, diff, md = !strcmp(cmpopt.format, "markdown");
	json_t *ev;

	nn = env_names(base, new, &names);
	if (cmpopt.json) {
		emit_env_json("base", base, names, nn);
		emit_env_json("new", new, names, nn);
	} else if (md) {
		printf("| | base | new |\n| :-- | :-- | :-- |\n");
		ff_print("| file | `%s` | `%s` |\n", base->name, new->name);
		ff_print("| router | %s | %s |\n", side_str(base->r, base->label, a, sizeof(a)),
			 side_str(new->r, new->label, b, sizeof(b)));
	} else {
		ff_print("Environment\n");
		ff_print("  base  %s: %s\n", base->name, side_str(base->r, base->label, a, sizeof(a)));
		ff_print("  new   %s: %s\n", new->name, side_str(new->r, new->label, a, sizeof(a)));
	}
	for (i = 0; i < nn; i++) {
		va = env_values(base, names[i]);
		vb = env_values(new, names[i]);
		diff = strcmp(va, vb) != 0 || strstr(va, " | ") || strstr(vb, " | ");
		ndiff += diff;
		if (diff)
			ff_warn("the environments differ: %s: base '%s', new '%s'", names[i], va, vb);
		if (cmpopt.json) {
			if (diff) {
				ev = ff_event("environment_difference");
				json_object_set_new(ev, "field", json_string(names[i]));
				json_object_set_new(ev, "base", ff_json_text(va));
				json_object_set_new(ev, "new", ff_json_text(vb));
				ff_emit(ev);
			}
		} else if (md)
			ff_print("| %s | %s | %s%s |\n", names[i], va, vb, diff ? " **(differs)**" : "");
		else if (diff)
			ff_print("  %-22s DIFFERS: base '%s', new '%s'\n", names[i], va, vb);
		else
			ff_print("  %-22s %s\n", names[i], va);
		free(va);
		free(vb);
	}
	free(names);
	same_build(base, new, md);
	if (ndiff && !cmpopt.json)
		printf(md ? "\n> **Warning:** the two sides ran in different environments, so some\n"
			    "> differences may not be the router's.\n" :
		       "  warning: the two sides ran in different environments, so some\n"
		       "  differences may not be the router's\n");
	return ndiff;
}

void
key_json(json_t *ev, const struct key *k)
{
	json_object_set_new(ev, "workload", json_string(k->workload));
	json_object_set_new(ev, "relay", json_string(k->relay));
	json_object_set_new(ev, "protocol", json_string(k->protocol));
	json_object_set_new(ev, "hops", json_integer(k->hops));
	json_object_set_new(ev, "tls", json_boolean(k->tls));
	json_object_set_new(ev, "jobs", json_integer(k->jobs));
	json_object_set_new(ev, "cpu_limit", json_integer(k->cpu_limit));
	json_object_set_new(ev, "duration_s", json_real(k->duration));
	if (ff_workload_is_rr(k->workload)) {
		json_object_set_new(ev, "request_size", json_integer(k->request_size));
		json_object_set_new(ev, "response_size", json_integer(k->response_size));
	}
	if (ff_workload_takes_rate(k->workload))
		json_object_set_new(ev, "rate_per_s", k->rate ? json_integer(k->rate) : json_null());
	json_object_set_new(ev, "workers", k->workers ? json_integer(k->workers) : json_null());
}


/* Doubts: why two sides' runs of a case may not compare */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* How many runs of n are also runs of b (the same run directory and time, or the same record). */
static int
shared_runs(const struct group *b, const struct group *n)
{
	uint64_t *x = ff_realloc(NULL, (b->nruns + 1) * sizeof(*x)), *y = ff_realloc(NULL, (n->nruns + 1) * sizeof(*y));
	int i, j, k = 0;

	for (i = 0; i < b->nruns; i++)
		x[i] = b->runs[i].id;
	for (i = 0; i < n->nruns; i++)
		y[i] = n->runs[i].id;
	qsort(x, b->nruns, sizeof(*x), cmp_u64);
	qsort(y, n->nruns, sizeof(*y), cmp_u64);
	for (i = 0, j = 0; i < b->nruns && j < n->nruns; )
		if (x[i] < y[j])
			i++;
		else if (x[i] > y[j])
			j++;
		else
			k++, j++;
	free(x);
	free(y);
	return k;
}

/* The share of a side's ok runs with a flag set; -1 when no run says. */
#define FLAG_STEADY 0
#define FLAG_STALLED 1
#define FLAG_SHARED 2
static double
flag_share(const struct group *g, int flag, int *with, int *known)
{
	int i;
	signed char v;

	*with = *known = 0;
	for (i = 0; i < g->nruns; i++) {
		if (g->runs[i].status != 'o')
			continue;
		v = flag == FLAG_STEADY ? g->runs[i].steady : flag == FLAG_STALLED ? g->runs[i].stalled :
		    g->runs[i].shared;
		if (v < 0)
			continue;
		++*known;
		*with += flag == FLAG_STEADY ? !v : v;
	}
	return *known ? (double)*with / *known : -1;
}

/* The median over a side's ok runs of their other_cpu (which 0) or steal (1); NAN: unknown. */
static double
machine_median(const struct group *g, int which)
{
	double *v = ff_realloc(NULL, (g->nruns + 1) * sizeof(*v)), x;
	struct stats s;
	int i, n = 0;

	for (i = 0; i < g->nruns; i++) {
		x = which ? g->runs[i].steal : g->runs[i].other_cpu;
		if (g->runs[i].status == 'o' && !isnan(x))
			v[n++] = x;
	}
	stats_of(v, n, &s);
	free(v);
	return n ? s.median : NAN;
}

/* A group's value of an environment field, if it has exactly one. */
static const char *
env_one(const struct group *g, const char *name)
{
	const char *v = NULL;
	int i;

	for (i = 0; i < g->nenv; i++)
		if (!strcmp(g->env[i].name, name)) {
			if (v)
				return NULL;
			v = g->env[i].value;
		}
	return v;
}

static void
doubt_add(FILE *f, int *any, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void
doubt_add(FILE *f, int *any, const char *fmt, ...)
{
	va_list ap;

	fputs(*any ? "; " : "", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	*any = 1;
}

char *
case_doubts(const struct group *b, const struct group *n, int two_files)
{
	static const char *const flag_what[] = {
		"windows not steady", "TCP stalled (timeouts, zero-window probes)",
		"another run on the relays' CPUs"
	};
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	const char *cb, *cn;
	double sb, sn, mb, mn;
	int any = 0, k, wb, kb, wn, kn, flag;

	if (!f)
		ff_die("out of memory");
	if (two_files && (k = shared_runs(b, n)))
		doubt_add(f, &any, "%d run%s of new %s in base too (the same run directory and time)", k,
			  k == 1 ? "" : "s", k == 1 ? "is" : "are");
	if (b->other_sha256)
		doubt_add(f, &any, "base's label holds two builds (sha256 %.12s and %.12s)",
			  ff_json_str(b->build, "sha256"), b->other_sha256);
	if (n->other_sha256)
		doubt_add(f, &any, "new's label holds two builds (sha256 %.12s and %.12s)",
			  ff_json_str(n->build, "sha256"), n->other_sha256);
	/* Conditions: a share of runs under it that differs by more than DOUBT_SHARE. */
	for (flag = 0; flag < 3; flag++) {
		sb = flag_share(b, flag, &wb, &kb);
		sn = flag_share(n, flag, &wn, &kn);
		if (sb >= 0 && sn >= 0 && fabs(sb - sn) > DOUBT_SHARE)
			doubt_add(f, &any, "different conditions: %s in %d of %d runs in base, %d of %d in new",
				  flag_what[flag], wb, kb, wn, kn);
	}
	cb = env_one(b, "cpu_list");
	cn = env_one(n, "cpu_list");
	if (cb && cn && strcmp(cb, ENV_NONE) && strcmp(cn, ENV_NONE) && strcmp(cb, cn))
		doubt_add(f, &any, "different conditions: CPUs %s in base, %s in new", cb, cn);
	mb = machine_median(b, 0);
	mn = machine_median(n, 0);
	if (!isnan(mb) && !isnan(mn) && fabs(mb - mn) > DOUBT_OTHER_CPU)
		doubt_add(f, &any, "different conditions: other processes took %.0f%% of the CPUs in base, %.0f%% in new (medians)",
			  mb * 100, mn * 100);
	mb = machine_median(b, 1);
	mn = machine_median(n, 1);
	if ((!isnan(mb) && mb > DOUBT_STEAL) || (!isnan(mn) && mn > DOUBT_STEAL)) {
		char pb[32] = "unknown", pn[32] = "unknown";

		if (!isnan(mb))
			snprintf(pb, sizeof(pb), "%.0f%%", mb * 100);
		if (!isnan(mn))
			snprintf(pn, sizeof(pn), "%.0f%%", mn * 100);
		doubt_add(f, &any, "different conditions: steal took %s of the window in base, %s in new (medians)",
			  pb, pn);
	}
	fclose(f);
	if (!any) {
		free(out);
		return NULL;
	}
	return out;
}
