/*
 * ff-bisect's state: the options, the steps and their benches' files, in
 * the checkout's git directory (flimflam-bisect.json, the files under
 * flimflam-bisect/), written whole and renamed into place after every
 * change, so an interrupted bisect resumes where it stopped. git's own
 * bisect state stays git's.
 */
#include "ff-bisect.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

static const char *const call_names[] = { "none", "good", "bad", "skip" };

struct step *
step_new(struct state *s, const char *commit)
{
	struct step *st;

	if (s->nsteps == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->steps = ff_realloc(s->steps, s->cap * sizeof(*s->steps));
	}
	st = &s->steps[s->nsteps++];
	memset(st, 0, sizeof(*st));
	st->commit = ff_strdup(commit);
	st->files = json_array();
	return st;
}

void
state_save(const struct state *s)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s, s:b, s:b}",
			      "good", s->o.good, "bad", s->o.bad, "build_cmd", s->o.build_cmd,
			      "workload", s->o.workload, "relay", s->o.relay, "protocol", s->o.protocol,
			      "warmup", (json_int_t)s->o.warmup, "duration", (json_int_t)s->o.duration,
			      "jobs", (json_int_t)s->o.jobs, "cpu_limit", (json_int_t)s->o.cpu_limit,
			      "rounds", (json_int_t)s->o.rounds, "max_rounds", (json_int_t)s->o.max_rounds,
			      "cache", s->o.cache, "output", s->o.output, "flamegraph", s->o.flamegraph,
			      "established", s->established);
	json_t *steps = json_array();
	char *tmp = ff_asprintf("%s.tmp", s->path);
	int i;

	if (!o)
		ff_die("cannot make the state");
	for (i = 0; i < s->nsteps; i++) {
		json_t *st = json_pack("{s:s, s:s, s:O}", "commit", s->steps[i].commit,
				       "call", call_names[s->steps[i].call], "files", s->steps[i].files);

		if (s->steps[i].why)
			json_object_set_new(st, "why", json_string(s->steps[i].why));
		json_array_append_new(steps, st);
	}
	json_object_set_new(o, "steps", steps);
	if (json_dump_file(o, tmp, JSON_INDENT(1)) < 0 || rename(tmp, s->path) < 0)
		ff_die("cannot write the state '%s': %s", s->path, strerror(errno));
	json_decref(o);
	free(tmp);
}

static char *
str_of(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? ff_strdup(v) : NULL;
}

static long
int_of(json_t *o, const char *key)
{
	return (long)json_integer_value(json_object_get(o, key));
}

static const char *
name_in(const char *v, const char *const *names)
{
	for (; v && *names; names++)
		if (!strcmp(v, *names))
			return *names;
	return NULL;
}

/* 1: loaded; 0: none; dies on a state it cannot read. */
int
state_load(struct state *s)
{
	json_error_t err;
	json_t *o, *steps, *v;
	size_t i;
	int c;

	if (access(s->path, F_OK) < 0)
		return 0;
	o = json_load_file(s->path, 0, &err);
	if (!o)
		ff_fail(1, "the state '%s': %s (line %d)", s->path, err.text, err.line);
	s->o.good = str_of(o, "good");
	s->o.bad = str_of(o, "bad");
	s->o.build_cmd = str_of(o, "build_cmd");
	s->o.workload = name_in(json_string_value(json_object_get(o, "workload")), (const char *const *)ff_workloads);
	s->o.relay = name_in(json_string_value(json_object_get(o, "relay")), (const char *const *)ff_relays);
	s->o.protocol = name_in(json_string_value(json_object_get(o, "protocol")), ff_protocols);
	s->o.warmup = int_of(o, "warmup");
	s->o.duration = int_of(o, "duration");
	s->o.jobs = int_of(o, "jobs");
	s->o.cpu_limit = int_of(o, "cpu_limit");
	s->o.rounds = int_of(o, "rounds");
	s->o.max_rounds = int_of(o, "max_rounds");
	s->o.cache = str_of(o, "cache");
	s->o.output = str_of(o, "output");
	s->o.flamegraph = json_is_true(json_object_get(o, "flamegraph"));
	s->established = json_is_true(json_object_get(o, "established"));
	if (!s->o.good || !s->o.bad || !s->o.build_cmd || !s->o.workload || !s->o.relay ||
	    !s->o.protocol || !s->o.cache || !s->o.output || s->o.rounds < 1 || s->o.duration < 1)
		ff_fail(1, "the state '%s' is not a flimflam bisect's", s->path);
	steps = json_object_get(o, "steps");
	json_array_foreach(steps, i, v) {
		struct step *st = step_new(s, json_string_value(json_object_get(v, "commit")));
		const char *call = json_string_value(json_object_get(v, "call"));

		for (c = 0; c < (int)FF_ARRAY_SIZE(call_names); c++)
			if (call && !strcmp(call, call_names[c]))
				st->call = c;
		st->why = str_of(v, "why");
		json_decref(st->files);
		st->files = json_incref(json_object_get(v, "files"));
		if (!json_is_array(st->files))
			st->files = json_array();
	}
	json_decref(o);
	return 1;
}
