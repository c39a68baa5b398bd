/*
 * A bench's rows: each run's record begun (its case's config, its build,
 * the bench's round and seed), before run.c adds what the run said.
 */
#include "ff-bench.h"

static json_t *
config_json(const struct bcase *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "workload", json_string(c->workload));
	json_object_set_new(o, "relay", json_string(c->relay));
	json_object_set_new(o, "protocol", json_string(c->protocol));
	json_object_set_new(o, "hops", json_integer(c->hops));
	json_object_set_new(o, "jobs", json_integer(c->jobs));
	json_object_set_new(o, "warmup_s", json_integer(opt.run.warmup));
	json_object_set_new(o, "duration_s", json_integer(opt.run.duration));
	json_object_set_new(o, "cpu_limit", json_integer(opt.run.cpu_limit));
	json_object_set_new(o, "interval_s", json_real(opt.run.interval));
	json_object_set_new(o, "tls", json_boolean(opt.tls));
	if (ff_workload_is_rr(c->workload)) {
		json_object_set_new(o, "request_size", json_integer(c->request_size));
		json_object_set_new(o, "response_size", json_integer(c->response_size));
	}
	if (ff_workload_takes_rate(c->workload))
		json_object_set_new(o, "rate_per_s", c->rate ? json_integer(c->rate) : json_null());
	/* --workers' point: each relay's worker count; null: the relay's own setting. */
	json_object_set_new(o, "workers", c->workers ? json_integer(c->workers) : json_null());
	return o;
}

/*
 * The case's relay build: the --build's, else the relay's program on PATH
 * (label null); null for relay none. Each made once (a sha256 of the
 * binary); a run's own topology names it again, with the Proton it loaded.
 * A --build's has its `order` among the --build options too.
 */
json_t *
build_of(const struct bcase *c)
{
	static json_t *on_path[8];
	static int known[8];
	struct ff_build b;
	int r;

	if (c->build >= 0) {
		json_t *obj;

		if (!opt.build_json[c->build])
			opt.build_json[c->build] = ff_build_json(&opt.builds[c->build], 0);
		obj = json_deep_copy(opt.build_json[c->build]);
		/* Its place among the --build options: the first is the base. */
		json_object_set_new(obj, "order", json_integer(c->build));
		return obj;
	}
	r = ff_parse_name(NULL, "relay", c->relay, ff_relays);
	if (!known[r] && ff_relay_program(c->relay) && ff_build_of_path(c->relay, &b) == 0) {
		on_path[r] = ff_build_json(&b, 0);
		ff_build_free(&b);
	}
	known[r] = 1;
	return on_path[r] ? json_deep_copy(on_path[r]) : json_null();
}

json_t *
new_record(const struct bcase *c, const char *status, const char *reason,
	   int repeat, const char *time)
{
	json_t *rec = ff_event("case");

	json_object_set_new(rec, "schema", json_integer(FF_SCHEMA));
	json_object_set_new(rec, "tool", json_string("ff-bench"));
	json_object_set_new(rec, "version", json_string(FF_VERSION));
	json_object_set_new(rec, "time", json_string(time));
	json_object_set_new(rec, "status", json_string(status));
	json_object_set_new(rec, "reason", ff_json_text(reason));
	json_object_set_new(rec, "config", config_json(c));
	json_object_set_new(rec, "repeat", json_integer(repeat));
	json_object_set_new(rec, "repeats", auto_on() ? json_null() : json_integer(opt.repeat));
	if (auto_on())
		json_object_set_new(rec, "sequential", json_true());	/* --repeat auto */
	json_object_set_new(rec, "build", build_of(c));
	/* The shuffle's seed: --seed replays the order of the runs. */
	json_object_set_new(rec, "seed", opt.shuffle ? json_integer(opt.seed) : json_null());
	if (opt.together)
		json_object_set_new(rec, "together", json_true());	/* beside the round's other builds */
	return rec;
}
