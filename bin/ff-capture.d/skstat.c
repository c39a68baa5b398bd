/*
 * ff-capture skstat: skstat -g and -m of each router at the window's end,
 * and skstat -m once more as the window opens: the memory pools' counts
 * then and at its end, and their deltas over the window.
 */
#include "ff-capture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* skstat */

char *
skstat_program(char *const **env)
{
	static struct ff_build b;
	struct ff_buf why = FF_BUF_INIT;

	*env = NULL;
	if (!opt.build)
		return ff_which("skstat");
	if (!b.path && ff_build_read(opt.build, "skrouterd", &b, &why) < 0)
		ff_fail(2, "%s", why.s);
	if (!b.skstat)
		return NULL;
	*env = b.skstat_env;
	return ff_strdup(b.skstat);
}

/* Run skstat FLAG against a router; its output (and messages) go to `file`. */
static char *
run_skstat(const struct target *t, const char *flag, const char *file)
{
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	char bus[64], *path = skstat_program(&o.env);
	char *argv[] = { path, "-b", bus, (char *)flag, NULL };
	struct ff_child c;
	char *text;

	if (!path)
		ff_die_event("skstat is not %s", opt.build ? "beside the router build (PREFIX/bin)" :
			     "on PATH");
	snprintf(bus, sizeof(bus), "127.0.0.1:%d", t->mgmt_port);
	unlink(file);
	o.log = file;
	if (ff_spawn(&c, "skstat", argv, &o) < 0)
		ff_die_event("cannot start skstat");
	finish_child(&c, 30);
	free(path);
	/* Whole lines of something, or the file was cut short (a full disk). */
	text = ff_read_file(file, NULL);
	if (!text || !text[strspn(text, " \t\n")] || text[strlen(text) - 1] != '\n')
		ff_die_event("skstat %s of %s wrote %s to '%s' (a full disk?); no figures from it",
			     flag, t->role, !text ? "nothing readable" : !*text ? "nothing" :
			     "an incomplete last line", file);
	return text;
}

/*
 * skstat -m of each router as the window opens (window_at), by target,
 * and when each was taken (seconds into the window: skstat is a Python
 * program, a few tenths of a second each). Not before the load: the
 * client starts as the topology is known, and its connections race a
 * snapshot taken then (with --jobs 200 a router's 256 connection objects
 * were already in "before"), so the deltas are the window's: what the
 * steady load grew or shrank.
 */
static char *pools_before[MAX_TARGETS];
static double pools_before_s[MAX_TARGETS];

void
skstat_before(double window_at)
{
	int i;

	for (i = 0; i < opt.n; i++) {
		char *m = ff_asprintf("%s/%s-skstat-m-before.txt", ff_rundir(opt.run_dir), opt.t[i].role);

		free(pools_before[i]);
		pools_before[i] = run_skstat(&opt.t[i], "-m", m);
		pools_before_s[i] = ff_now() - window_at;
		free(m);
	}
}

/* A count as an integer when it is whole (they are), else as a number. */
static json_t *
count_json(double v)
{
	return v == (double)(json_int_t)v ? json_integer((json_int_t)v) : json_real(v);
}

/* "1,024" or "1024" as a number; 0 when it is not one. */
static int
pool_num(const char *tok, double *out)
{
	char buf[64], *end;
	size_t n = 0;

	for (; *tok && n + 1 < sizeof(buf); tok++)
		if (*tok != ',')
			buf[n++] = *tok;
	buf[n] = 0;
	*out = strtod(buf, &end);
	return n && !*end;
}

/*
 * The pools of skstat -m's table, {"TYPE": {"COLUMN": number, ...}, ...}:
 * its heading is the line whose first word is "type"; each row a type name
 * and a value per column (those that are not numbers left out).
 */
static json_t *
pools_of(const char *text)
{
	json_t *pools = json_object(), *row;
	char *copy = ff_strdup(text ? text : ""), *line, *save = NULL, *tok, *tsave;
	char *cols[32];
	int ncols = 0, i;
	double v;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *words[32], *type;
		int n = 0;

		for (tok = strtok_r(line, " \t", &tsave); tok && n < 32; tok = strtok_r(NULL, " \t", &tsave))
			words[n++] = tok;
		if (!n || strspn(words[0], "=-") == strlen(words[0]))
			continue;	/* blank, or the rule under the heading */
		if (!ncols) {
			if (!strcasecmp(words[0], "type"))
				for (ncols = 0; ncols < n; ncols++)
					cols[ncols] = words[ncols];
			continue;
		}
		if (n != ncols)
			continue;	/* not a row of the table */
		type = words[0];
		row = json_object();
		for (i = 1; i < n; i++)
			if (pool_num(words[i], &v))
				json_object_set_new(row, cols[i], count_json(v));
		json_object_set_new(pools, type, row);
	}
	free(copy);
	return pools;
}

/*
 * skstat -m lists the pools that took objects from the heap: one missing
 * on a side had none then, so its counts are 0 there, and its delta is the
 * other side's counts. The columns that describe a pool rather than count
 * (an object's size, its batch, a thread's most) have no delta then.
 */
static int
pool_count_col(const char *col)
{
	return strcmp(col, "size") && strcmp(col, "batch") && strcmp(col, "thread-max");
}

/* A pool's row: its counts before and after (null where it had none), and their differences. */
static json_t *
pool_row(const char *type, json_t *before, json_t *after)
{
	json_t *row = json_object(), *d = json_object(), *v, *w;
	const char *col;

	json_object_foreach(after ? after : before, col, v) {
		double a = after ? json_number_value(json_object_get(after, col)) : 0;

		if (before && after && json_is_number(w = json_object_get(before, col)))
			json_object_set_new(d, col, count_json(a - json_number_value(w)));
		else if ((!before || !after) && pool_count_col(col))
			json_object_set_new(d, col, count_json(after ? a : -json_number_value(v)));
	}
	json_object_set_new(row, "type", json_string(type));
	json_object_set(row, "before", before ? before : json_null());
	json_object_set(row, "after", after ? after : json_null());
	json_object_set_new(row, "delta", d);
	return row;
}

/* [{type, before, after, delta}] of the pools of either text (after's order, then before's own). */
static json_t *
pool_deltas(const char *before, const char *after)
{
	json_t *b = pools_of(before), *a = pools_of(after), *out = json_array(), *v;
	const char *type;

	json_object_foreach(a, type, v)
		json_array_append_new(out, pool_row(type, json_object_get(b, type), v));
	json_object_foreach(b, type, v)
		if (!json_object_get(a, type))
			json_array_append_new(out, pool_row(type, v, NULL));
	json_decref(a);
	json_decref(b);
	return out;
}

void
collect_skstat(void)
{
	json_t *files = json_array(), *ev;
	int i;

	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];
		char *g = ff_asprintf("%s/%s-skstat-g.txt", ff_rundir(opt.run_dir), t->role);
		char *m = ff_asprintf("%s/%s-skstat-m.txt", ff_rundir(opt.run_dir), t->role);
		char *gt = run_skstat(t, "-g", g), *mt = run_skstat(t, "-m", m);
		json_t *f = json_array();

		json_array_append_new(f, ff_json_path(g));
		json_array_append_new(f, ff_json_path(m));
		json_array_append_new(files, ff_json_path(g));
		json_array_append_new(files, ff_json_path(m));
		ev = ff_event("skstat");
		json_object_set_new(ev, "role", json_string(t->role));
		json_object_set_new(ev, "pid", json_integer(t->pid));
		json_object_set_new(ev, "management_port", json_integer(t->mgmt_port));
		json_object_set_new(ev, "files", f);
		json_object_set_new(ev, "general", ff_json_text(gt));
		json_object_set_new(ev, "memory", ff_json_text(mt));
		/* The pools as the window opened (skstat_before) and at its end. */
		json_object_set_new(ev, "pools", pools_before[i] ? pool_deltas(pools_before[i], mt) : json_null());
		json_object_set_new(ev, "pools_before_s", pools_before[i] ?
				    json_real(round(pools_before_s[i] * 1000) / 1000) : json_null());
		ff_emit(ev);
		free(g);
		free(m);
		free(gt);
		free(mt);
	}
	ff_emit(capture_event("skstat", files));
}

