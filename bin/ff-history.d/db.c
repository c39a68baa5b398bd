/*
 * The history's SQLite database: where it is, opening it, its schema and
 * migrations.
 *
 * Schema 1 (PRAGMA user_version 1, application_id HISTORY_APP_ID):
 *
 *   runs     one row per run of a results file (a case record of
 *            ff-bench), identified by `identity` (unique): its case, build
 *            label, run directory, start time and repeat, as ff-bench tells
 *            duplicates apart (the record itself when it has no run
 *            directory and no time). The case (case_key and its fields),
 *            the build (build_label, build_path, build_version,
 *            build_sha256, proton_version, proton_path), the machine
 *            (env_key and its fields), --commit and --label, the source
 *            file and line, status, steadiness and the whole record.
 *   metrics  (run_id, name, value): every figure of an ok run.
 *
 * A series is the runs of one case_key, build_label, label and env_key,
 * in order of time, and one metric name.
 *
 * Two writers at once: the database is in WAL mode with a busy timeout, and
 * an add is one BEGIN IMMEDIATE transaction, so the second waits for the
 * first instead of failing, and nothing is lost. A database of a newer
 * schema is refused (a newer flimflam made it); an older one is migrated,
 * in a transaction, to this one.
 */
#include "ff-history.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 30000

static const char schema_v1[] =
	"CREATE TABLE runs (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  identity TEXT NOT NULL UNIQUE,\n"
	"  time TEXT NOT NULL,\n"
	"  added TEXT NOT NULL,\n"
	"  source TEXT NOT NULL,\n"
	"  line INTEGER NOT NULL,\n"
	"  commit_sha TEXT,\n"
	"  label TEXT,\n"
	"  status TEXT NOT NULL,\n"
	"  case_key TEXT NOT NULL,\n"
	"  workload TEXT NOT NULL, relay TEXT NOT NULL, protocol TEXT NOT NULL,\n"
	"  hops INTEGER, jobs INTEGER, cpu_limit INTEGER, warmup_s REAL, duration_s REAL,\n"
	"  request_size INTEGER, response_size INTEGER, rate_per_s INTEGER, tls INTEGER,\n"
	"  build_label TEXT, build_path TEXT, build_version TEXT, build_sha256 TEXT,\n"
	"  proton_version TEXT, proton_path TEXT,\n"
	"  env_key TEXT NOT NULL,\n"
	"  hostname TEXT, cpu_model TEXT, cpus_online INTEGER, cpus_available INTEGER,\n"
	"  cpu_list TEXT, kernel TEXT, os TEXT,\n"
	"  steady INTEGER,\n"
	"  record TEXT NOT NULL\n"
	");\n"
	"CREATE INDEX runs_series ON runs (case_key, env_key, time);\n"
	"CREATE TABLE metrics (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
	"  name TEXT NOT NULL,\n"
	"  value REAL NOT NULL,\n"
	"  PRIMARY KEY (run_id, name)\n"
	") WITHOUT ROWID;\n";

/* Migrations: migrations[v] takes schema v to v + 1 (0: an empty database). */
static const char *const migrations[HISTORY_SCHEMA] = { schema_v1 };

static char *name;

const char *
db_name(void)
{
	return name ? name : "history";
}

char *
db_default_path(void)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (state && state[0] == '/')
		return ff_asprintf("%s/flimflam/history.db", state);
	if (!home || !*home)
		ff_die("cannot tell where the history goes: neither XDG_STATE_HOME nor HOME is set (give --db PATH)");
	return ff_asprintf("%s/.local/state/flimflam/history.db", home);
}

noreturn void
db_die(sqlite3 *db, const char *what)
{
	ff_die("%s: %s: %s", db_name(), what, db ? sqlite3_errmsg(db) : "out of memory");
}

void
db_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		ff_die("%s: %s", db_name(), err ? err : sqlite3_errmsg(db));
}

sqlite3_stmt *
db_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		db_die(db, "cannot read the history");
	return st;
}

static long long
pragma_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = db_prepare(db, sql);
	long long v = 0;
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		db_die(db, "cannot read the history");
	sqlite3_finalize(st);
	return v;
}

/* Check the schema, or make it (in the transaction the caller holds). */
static void
schema(sqlite3 *db)
{
	long long v = pragma_int(db, "PRAGMA user_version"), app = pragma_int(db, "PRAGMA application_id");
	long long tables = pragma_int(db, "SELECT count(*) FROM sqlite_schema");
	char sql[64];

	if (app != HISTORY_APP_ID && (app != 0 || tables != 0))
		ff_die("%s: not a flimflam history (a database of another program)", db_name());
	if (v > HISTORY_SCHEMA)
		ff_die("%s: its schema (version %lld) is newer than this flimflam's (%d): use a newer flimflam",
		       db_name(), v, HISTORY_SCHEMA);
	for (; v < HISTORY_SCHEMA; v++)
		db_exec(db, migrations[v]);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", HISTORY_SCHEMA);
	db_exec(db, sql);
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", HISTORY_APP_ID);
	db_exec(db, sql);
}

sqlite3 *
db_open(const char *path, int create)
{
	sqlite3 *db = NULL;
	struct stat sb;
	char *dir, *slash;
	int rc, waited;

	free(name);
	name = ff_strdup(path);
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		ff_die("%s: not a history (not a regular file)", path);
	if (stat(path, &sb) < 0) {
		if (errno != ENOENT)
			ff_die("cannot open '%s': %s", path, strerror(errno));
		if (!create)
			ff_die("%s: no history there yet (add results with 'flimflam history add FILE')", path);
		dir = ff_strdup(path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			if (ff_mkdirs(dir, 0700) < 0)
				ff_die("cannot make '%s': %s", dir, strerror(errno));
		}
		free(dir);
	}
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), NULL);
	if (rc != SQLITE_OK)
		db_die(db, "cannot open it");
	sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	/*
	 * A file that is not SQLite fails here, on its first read. Another
	 * writer making the file WAL at the same moment gives SQLITE_BUSY
	 * without the busy handler's wait (seen: two adds to a new file at
	 * once): that is waited for here, as long.
	 */
	for (waited = 0; (rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL)) != SQLITE_OK;
	     waited += 50) {
		if ((rc & 0xff) != SQLITE_BUSY || waited >= BUSY_TIMEOUT_MS)
			db_die(db, "cannot open it");
		ff_sleep(0.05);
	}
	db_exec(db, "PRAGMA foreign_keys = ON");
	db_exec(db, "BEGIN IMMEDIATE");
	schema(db);
	db_exec(db, "COMMIT");
	return db;
}

void
db_close(sqlite3 *db)
{
	if (sqlite3_close(db) != SQLITE_OK)
		db_die(db, "cannot close it");
}
