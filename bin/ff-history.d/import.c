/*
 * flimflam history add: results files into the database. Each file is
 * read by ff-bench's reader (results.c: checked line by line, a bad file
 * is one line naming it and the line, exit 1), and every run it takes goes
 * into one transaction with all the others: a bad file adds nothing, not
 * even the good files before it. A run already in the history (the same
 * identity) is left out and counted.
 */
#include "ff-history.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

static const char add_usage[] =
	"usage: ff-history add [-h] [--commit SHA] [--label NAME] [--db PATH] FILE...\n"
	"\n"
	"Add bench results files (- is standard input) to the history\n"
	"\n"
	"options:\n"
	"  -h, --help     Show this help message and exit\n"
	"  --version      Show the version and exit\n"
	"  --commit SHA   The commit the runs measured (shown in change points and tooltips)\n"
	"  --label NAME   A name for the runs' series (e.g. nightly); series of different\n"
	"                 labels are never mixed\n"
	"  --db PATH      The database (default $XDG_STATE_HOME/flimflam/history.db,\n"
	"                 else ~/.local/state/flimflam/history.db)\n";

/* Config fields of `result` that are not measurements. */
static const char *const not_metrics[] = {
	"jobs", "duration_s", "request_size", "response_size", "rate_per_s", NULL
};

struct adding {
	sqlite3 *db;
	sqlite3_stmt *run, *metric;
	const struct add_opts *o;
	const char *source;
	long added, present;
	const char *now;
};

static sqlite3 *open_db;

static void
rollback(void)
{
	/* Closing a connection in a transaction rolls it back: nothing is added. */
	if (open_db)
		sqlite3_close(open_db);
	open_db = NULL;
}

static void
bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void
put_metric(struct adding *a, long long id, const char *name, double v)
{
	if (!isfinite(v))
		return;
	sqlite3_reset(a->metric);
	sqlite3_bind_int64(a->metric, 1, id);
	sqlite3_bind_text(a->metric, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(a->metric, 3, v);
	if (sqlite3_step(a->metric) != SQLITE_DONE)
		db_die(a->db, "cannot add a run");
}

static int
listed(const char *s, const char *const list[])
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

/*
 * Every figure of an ok run: the numbers of its result (but its settings),
 * each relay's (ROLE_cpu_fraction, ROLE_cpu_s, ROLE_max_rss_bytes), TCP's
 * stall counters (tcp_NAME), and what ff-bench derives: the relays' CPU
 * together, and per GB or per 1,000 requests.
 */
static void
put_metrics(struct adding *a, long long id, const json_t *rec, const struct run *run)
{
	const json_t *res = json_object_get(rec, "result"), *rsc = json_object_get(rec, "resources");
	const char *key, *role;
	json_t *v, *r;
	char name[128];
	size_t i;

	json_object_foreach((json_t *)res, key, v)
		if (json_is_number(v) && !listed(key, not_metrics))
			put_metric(a, id, key, json_number_value(v));
	json_array_foreach(json_object_get(rsc, "relays"), i, r) {
		role = ff_json_str(r, "role");
		if (!role)
			continue;
		json_object_foreach(r, key, v)
			if (json_is_number(v) && strcmp(key, "pid") &&
			    snprintf(name, sizeof(name), "%s_%s", role, key) < (int)sizeof(name))
				put_metric(a, id, name, json_number_value(v));
	}
	json_object_foreach(json_object_get(rsc, "tcp"), key, v)
		if (json_is_number(v) && snprintf(name, sizeof(name), "tcp_%s", key) < (int)sizeof(name))
			put_metric(a, id, name, json_number_value(v));
	if (run->have & 1u << M_RELAYCPU)
		put_metric(a, id, "relay_cpu_fraction", run->v[M_RELAYCPU]);
	/* Per GB means nothing for request/response workloads (bench's table, the report). */
	if ((run->have & 1u << M_CPU_GB) &&
	    !ff_workload_is_rr(ff_json_str(json_object_get(rec, "config"), "workload")))
		put_metric(a, id, "relay_cpu_s_per_gb", run->v[M_CPU_GB]);
	if (run->have & 1u << M_CPU_KREQ)
		put_metric(a, id, "relay_cpu_s_per_1k_requests", run->v[M_CPU_KREQ]);
}

/* The case as one string: what a series is of. */
static char *
case_key(const struct key *k)
{
	return ff_asprintf("%s %s %s hops=%ld jobs=%ld cpu_limit=%ld warmup_s=%g duration_s=%g "
			   "request_size=%ld response_size=%ld rate_per_s=%ld tls=%d",
			   k->workload, k->relay, k->protocol, k->hops, k->jobs, k->cpu_limit,
			   k->warmup, k->duration, k->request_size, k->response_size, k->rate, k->tls);
}

static const char *
env_str(const json_t *env, const char *key, char *buf, size_t n)
{
	const json_t *v = json_object_get(env, key);

	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return NULL;
}

/* The machine: what makes two runs' figures comparable beyond their case. */
static char *
env_key(const json_t *env)
{
	static const char *const keys[] = {
		"hostname", "cpu_model", "cpus_online", "cpus_available", "cpu_list", "kernel", "os"
	};
	struct ff_buf b = FF_BUF_INIT;
	const char *s;
	char num[32];
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(keys); i++) {
		s = env_str(env, keys[i], num, sizeof(num));
		ff_buf_printf(&b, "%s%s", i ? "|" : "", s ? s : "");
	}
	return ff_buf_take(&b);
}

/* The run's identity, as ff-bench tells duplicates apart; else the record itself. */
static char *
identity(const json_t *rec, const char *ckey, const char *build_label)
{
	const char *dir = ff_json_str(rec, "run_dir"), *time = ff_json_str(rec, "time");
	char *text, *id;

	if (dir || (time && *time))
		return ff_asprintf("%s|%s|%s|%s|%ld", ckey, build_label ? build_label : "",
				   dir ? dir : "", time ? time : "", (long)ff_json_num(rec, "repeat", 0));
	text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		ff_die("out of memory");
	id = ff_asprintf("record %s", text);
	free(text);
	return id;
}

static void
bind_env(sqlite3_stmt *st, int i, const json_t *env)
{
	bind_text(st, i, ff_json_str(env, "hostname"));
	bind_text(st, i + 1, ff_json_str(env, "cpu_model"));
	if (json_is_integer(json_object_get(env, "cpus_online")))
		sqlite3_bind_int64(st, i + 2, json_integer_value(json_object_get(env, "cpus_online")));
	if (json_is_integer(json_object_get(env, "cpus_available")))
		sqlite3_bind_int64(st, i + 3, json_integer_value(json_object_get(env, "cpus_available")));
	bind_text(st, i + 4, ff_json_str(env, "cpu_list"));
	bind_text(st, i + 5, ff_json_str(env, "kernel"));
	bind_text(st, i + 6, ff_json_str(env, "os"));
}

static void
bind_case(sqlite3_stmt *st, int i, const struct key *k)
{
	sqlite3_bind_text(st, i, k->workload, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i + 1, k->relay, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i + 2, k->protocol, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, i + 3, k->hops);
	sqlite3_bind_int64(st, i + 4, k->jobs);
	sqlite3_bind_int64(st, i + 5, k->cpu_limit);
	sqlite3_bind_double(st, i + 6, k->warmup);
	sqlite3_bind_double(st, i + 7, k->duration);
	sqlite3_bind_int64(st, i + 8, k->request_size);
	sqlite3_bind_int64(st, i + 9, k->response_size);
	sqlite3_bind_int64(st, i + 10, k->rate);
	sqlite3_bind_int(st, i + 11, k->tls);
}

static void
bind_build(sqlite3_stmt *st, int i, const json_t *build)
{
	const json_t *proton = json_object_get(build, "proton");

	bind_text(st, i, ff_json_str(build, "label"));
	bind_text(st, i + 1, ff_json_str(build, "path"));
	bind_text(st, i + 2, ff_json_str(build, "version"));
	bind_text(st, i + 3, ff_json_str(build, "sha256"));
	bind_text(st, i + 4, ff_json_str(proton, "version"));
	bind_text(st, i + 5, ff_json_str(proton, "path"));
}

/* load_results_each's callback: one run into the database. */
static void
take(const json_t *rec, const struct results *r, int group, int nrun, void *arg)
{
	struct adding *a = arg;
	const struct group *g = &r->g[group];
	const json_t *env = json_object_get(rec, "environment"), *st;
	const char *time = ff_json_str(rec, "time");
	char *ckey = case_key(&g->k), *ekey = env_key(env), *id = identity(rec, ckey, g->k.build), *text;
	sqlite3_stmt *s = a->run;

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, time && *time ? time : a->now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, a->now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 4, a->source, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 5, r->line);
	bind_text(s, 6, a->o->commit);
	bind_text(s, 7, a->o->label);
	bind_text(s, 8, ff_json_str(rec, "status"));
	sqlite3_bind_text(s, 9, ckey, -1, SQLITE_TRANSIENT);
	bind_case(s, 10, &g->k);
	bind_build(s, 22, json_object_get(rec, "build"));
	sqlite3_bind_text(s, 28, ekey, -1, SQLITE_TRANSIENT);
	bind_env(s, 29, env);
	st = json_object_get(json_object_get(rec, "steadiness"), "steady");
	if (json_is_boolean(st))
		sqlite3_bind_int(s, 36, json_is_true(st));
	text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text)
		ff_die("out of memory");
	sqlite3_bind_text(s, 37, text, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(s) != SQLITE_DONE)
		db_die(a->db, "cannot add a run");
	if (sqlite3_changes(a->db) == 0) {
		a->present++;
	} else {
		a->added++;
		if (g->runs[nrun].status == 'o')
			put_metrics(a, sqlite3_last_insert_rowid(a->db), rec, &g->runs[nrun]);
	}
	free(text);
	free(ckey);
	free(ekey);
	free(id);
}

static const char insert_run[] =
	"INSERT OR IGNORE INTO runs (identity, time, added, source, line, commit_sha, label, status,"
	" case_key, workload, relay, protocol, hops, jobs, cpu_limit, warmup_s, duration_s,"
	" request_size, response_size, rate_per_s, tls,"
	" build_label, build_path, build_version, build_sha256, proton_version, proton_path,"
	" env_key, hostname, cpu_model, cpus_online, cpus_available, cpu_list, kernel, os,"
	" steady, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
	" ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33,"
	" ?34, ?35, ?36, ?37)";

/* A --commit: a word of printable characters, as a SHA, a tag or a describe is. */
static int
commit_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

static void
say_added(const char *name, const struct adding *a)
{
	if (!a->added && a->present == 1)
		ff_print("%s: nothing added: its run is in the history already\n", name);
	else if (!a->added)
		ff_print("%s: nothing added: its %ld runs are all in the history already\n", name, a->present);
	else if (a->present)
		ff_print("%s: %ld run%s added, %ld in the history already\n", name, a->added,
			 a->added == 1 ? "" : "s", a->present);
	else
		ff_print("%s: %ld run%s added\n", name, a->added, a->added == 1 ? "" : "s");
}

int
add_main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ "commit", required_argument, NULL, OPT_COMMIT },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "db", required_argument, NULL, OPT_DB },
		{ NULL, 0, NULL, 0 }
	};
	struct add_opts o = { NULL, NULL };
	struct adding *a;
	struct results res;
	char *path = NULL;
	const char *db_path = NULL;
	int c, i, j, nfiles, nstdin = 0;

	optind = 1;
	while ((c = ff_getopt(argc, argv, ":h", longopts, add_usage)) != -1)
		switch (c) {
		case 'h':
			ff_usage(add_usage, 0);
		case OPT_COMMIT:
			if (!commit_ok(optarg))
				ff_usage_error(add_usage, "--commit: '%s' is not a commit (1 to 128 printable characters, no spaces)", optarg);
			o.commit = optarg;
			break;
		case OPT_LABEL:
			if (!ff_build_label_ok(optarg, strlen(optarg)))
				ff_usage_error(add_usage, "--label: '%s' is not a label (1 to 64 of A-Z a-z 0-9 . _ -)", optarg);
			o.label = optarg;
			break;
		case OPT_DB:
			if (!*optarg)
				ff_usage_error(add_usage, "--db: expected a path");
			db_path = optarg;
			break;
		}
	nfiles = argc - optind;
	if (nfiles < 1)
		ff_usage_error(add_usage, "expected one or more results files");
	for (i = optind; i < argc; i++) {
		nstdin += !strcmp(argv[i], "-");
		if (nstdin > 1)
			ff_usage_error(add_usage, "standard input (-) is given twice");
		for (j = optind; j < i; j++)
			if (!strcmp(argv[i], argv[j]))
				ff_usage_error(add_usage, "'%s' is given twice: give it once", argv[i]);
	}
	if (!db_path)
		db_path = path = db_default_path();
	open_db = db_open(db_path, 1);
	ff_set_cleanup(rollback);
	a = calloc(nfiles, sizeof(*a));
	if (!a)
		ff_die("out of memory");
	db_exec(open_db, "BEGIN IMMEDIATE");
	for (i = 0; i < nfiles; i++) {
		a[i] = (struct adding){ open_db, db_prepare(open_db, insert_run),
			db_prepare(open_db, "INSERT OR REPLACE INTO metrics (run_id, name, value) VALUES (?1, ?2, ?3)"),
			&o, argv[optind + i], 0, 0, ff_iso_time() };
		a[i].source = strcmp(argv[optind + i], "-") ? argv[optind + i] : "standard input";
		load_results_each(argv[optind + i], 1, &res, take, &a[i]);
		results_free(&res);
		sqlite3_finalize(a[i].run);
		sqlite3_finalize(a[i].metric);
	}
	db_exec(open_db, "COMMIT");
	ff_set_cleanup(NULL);
	db_close(open_db);
	open_db = NULL;
	for (i = 0; i < nfiles; i++)
		say_added(a[i].source, &a[i]);
	free(a);
	free(path);
	return ff_finish();
}
