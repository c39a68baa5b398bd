/*
 * ff-capture stat: perf stat's output parsed, and its figures per byte and
 * operation once the workload's result is known.
 */
#include "ff-capture.h"

#include <stdio.h>
#include <string.h>

static json_t *stats;			/* stat events to emit at the end */

/* perf stat's table */

struct counter {
	const char *perf, *key;
	int is_ms;
};

static const struct counter counters[] = {
	{ "task-clock", "task_clock_ms", 1 },
	{ "context-switches", "context_switches", 0 },
	{ "cpu-migrations", "cpu_migrations", 0 },
	{ "page-faults", "page_faults", 0 },
	{ "cycles", "cycles", 0 },
	{ "instructions", "instructions", 0 },
	{ "branches", "branches", 0 },
	{ "branch-misses", "branch_misses", 0 },
	{ "cache-references", "cache_references", 0 },
	{ "cache-misses", "cache_misses", 0 },
};

/*
 * "cycles:u" -> "cycles"; "cpu_core/cycles/" (hybrid CPUs, one line per
 * PMU, summed) -> "cycles".
 */
static void
base_event_name(const char *word, char *out, size_t n)
{
	const char *slash = strchr(word, '/'), *end;
	size_t len;

	if (slash && (end = strchr(slash + 1, '/'))) {
		word = slash + 1;
		len = end - word;
	} else {
		len = strcspn(word, ":");
	}
	if (len >= n)
		len = n - 1;
	memcpy(out, word, len);
	out[len] = 0;
}

/*
 * perf stat's human output, as written with -o under LC_ALL=C and
 * --no-big-num: "   1234.56 msec task-clock   # ...", "  <not supported>
 * cycles", "   2.001 seconds time elapsed". Returns an object with every
 * counter's key (null when not counted or not supported) and elapsed_s,
 * and *table the text from "Performance counter stats" on.
 */
json_t *
parse_stat(const char *text, char **table, const char **missing)
{
	json_t *o = json_object();
	const char *line, *next, *start = strstr(text, "Performance counter stats");
	int seen[FF_ARRAY_SIZE(counters)] = { 0 }, elapsed = 0;
	size_t i, len;

	for (i = 0; i < FF_ARRAY_SIZE(counters); i++)
		json_object_set_new(o, counters[i].key, json_null());
	json_object_set_new(o, "elapsed_s", json_null());
	for (line = text; *line; line = next) {
		char buf[512], word[128], name[128], *p, *end;
		double v;
		int counted = 1;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		len = next - line < (long)sizeof(buf) ? (size_t)(next - line) : sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = 0;
		p = buf + strspn(buf, " \t");
		if (*p == '<') {
			counted = 0;
			p = strchr(p, '>');
			if (!p)
				continue;
			p++;
			v = 0;
		} else {
			v = strtod(p, &end);
			if (end == p)
				continue;
			p = end;
		}
		if (sscanf(p, " %127s", word) != 1)
			continue;
		if (!strcmp(word, "msec") && sscanf(p, " msec %127s", word) != 1)
			continue;
		if (!strcmp(word, "seconds") && strstr(p, "time elapsed")) {
			json_object_set_new(o, "elapsed_s", json_real(v));
			elapsed = 1;
			continue;
		}
		base_event_name(word, name, sizeof(name));
		for (i = 0; i < FF_ARRAY_SIZE(counters); i++) {
			const json_t *old;

			if (strcmp(name, counters[i].perf))
				continue;
			seen[i] = 1;
			if (!counted)
				break;
			old = json_object_get(o, counters[i].key);
			if (counters[i].is_ms)
				json_object_set_new(o, counters[i].key,
						    json_real(v + (json_is_number(old) ? json_number_value(old) : 0)));
			else
				json_object_set_new(o, counters[i].key,
						    json_integer((json_int_t)(v + (json_is_number(old) ?
							json_number_value(old) : 0) + 0.5)));
			break;
		}
	}
	/* A line for every event asked, and the last line: else it was cut short. */
	*missing = elapsed ? NULL : "seconds time elapsed";
	for (i = 0; i < FF_ARRAY_SIZE(counters) && !*missing; i++)
		if (!seen[i])
			*missing = counters[i].perf;
	if (table) {
		/* From the start of perf's line, its indentation kept. */
		start = start ? start : text;
		while (start > text && start[-1] != '\n')
			start--;
		len = strlen(start);
		while (len && (start[len - 1] == '\n' || start[len - 1] == ' '))
			len--;
		*table = strndup(start, len);
	}
	return o;
}

static void
collect_stat(struct target *t)
{
	char *text, *table = NULL;
	const char *missing;
	json_t *ev;

	finish_child(&t->perf, 60);
	text = ff_read_file(t->stat_file, NULL);
	if (!text || !strstr(text, "Performance counter stats")) {
		ff_child_report(&t->perf);
		ff_die_event("perf stat of %s wrote no counters to '%s'", t->role, t->stat_file);
	}
	ev = ff_event("stat");
	json_object_set_new(ev, "role", json_string(t->role));
	json_object_set_new(ev, "pid", json_integer(t->pid));
	json_object_set_new(ev, "pids", pids_json(t->pids, t->npids));
	t->stat = parse_stat(text, &table, &missing);
	if (missing)
		ff_die_event("perf stat's table for %s in '%s' is incomplete (no '%s' line: cut short, a full disk?); no figures from it",
			     t->role, t->stat_file, missing);
	json_object_update(ev, t->stat);
	json_object_set_new(ev, "file", ff_json_path(t->stat_file));
	json_object_set_new(ev, "table", ff_json_text(table));
	if (!stats)
		stats = json_array();
	json_array_append_new(stats, ev);
	free(table);
	free(text);
}

static double
num_or(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : -1;
}

static json_t *
ratio(double a, double b, double scale)
{
	return a >= 0 && b > 0 ? json_real(a / b * scale) : json_null();
}

/* The figures per byte and operation, now that the result is known. */
void
emit_stats(void)
{
	double bytes = result ? num_or(result, "bytes") : -1;
	double ops = result ? num_or(result, "operations") : -1;
	size_t i;
	json_t *ev;

	json_array_foreach(stats, i, ev) {
		double ms = num_or(ev, "task_clock_ms");

		json_object_set_new(ev, "bytes", bytes >= 0 ? json_integer((json_int_t)bytes) : json_null());
		json_object_set_new(ev, "operations", ops >= 0 ? json_integer((json_int_t)ops) : json_null());
		json_object_set_new(ev, "cpu_ms_per_gb", ratio(ms, bytes, 1e9));
		json_object_set_new(ev, "cpu_ms_per_kop", ratio(ms, ops, 1e3));
		json_object_set_new(ev, "instructions_per_byte", ratio(num_or(ev, "instructions"), bytes, 1));
		json_object_set_new(ev, "cycles_per_byte", ratio(num_or(ev, "cycles"), bytes, 1));
		ff_emit(json_incref(ev));
	}
}

void
collect_stats(void)
{
	json_t *files = json_array();
	int i;

	for (i = 0; i < opt.n; i++) {
		collect_stat(&opt.t[i]);
		json_array_append_new(files, ff_json_path(opt.t[i].stat_file));
	}
	ff_emit(capture_event("perf stat", files));
}

