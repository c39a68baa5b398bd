/*
 * ff-workload's driver for workload iperf3: its server's and client's
 * command lines, and its JSON read into samples, intervals and the result.
 */
#include "ff-workload.h"

#include <math.h>
#include <string.h>

/*
 * iperf3 reports at most every 60 s: a longer --interval is made of
 * iperf3_group() of its intervals.
 */
#define IPERF3_MAX_INTERVAL 60
static int
iperf3_group(void)
{
	return (int)ceil(opt.run.interval / IPERF3_MAX_INTERVAL - 1e-9);
}

static double
iperf3_interval(void)
{
	return opt.run.interval / iperf3_group();
}

static void
server_iperf3(int port, struct ff_argv *a)
{
	ff_argv_addl(a, "iperf3", "--server", "--bind", opt.listen, NULL);
	arg_num(a, "--port", port);
}

/* iperf3's client, its JSON written to iperf3-client.json. */
static void
start_iperf3(struct drive *d, int out_fd)
{
	struct ff_argv a = FF_ARGV_INIT;

	(void)out_fd;
	/* --time excludes --omit: the measured period is exactly --duration. */
	d->out_file = run_path("iperf3-client.json");
	ff_argv_addl(&a, "iperf3", "--client", d->host, NULL);
	arg_num(&a, "--port", d->port);
	arg_num(&a, "--parallel", opt.run.jobs);
	arg_num(&a, "--time", opt.run.duration);
	arg_num(&a, "--omit", opt.run.warmup);
	ff_argv_add(&a, "--interval");
	ff_argv_addf(&a, "%.9g", iperf3_interval());
	ff_argv_addl(&a, "--json", "--logfile", d->out_file, NULL);
	spawn_or_die(&d->client, "client", a.v, d->client_log, -1);
	ff_argv_free(&a);
}

/*
 * iperf3's intervals of the window (not --omit's), as it reports them;
 * what it counts is what the sender sent (its total, not the receiver's).
 * Its clock restarts as --omit ends, and the first interval of the window
 * then often carries a start from the old clock ("start" 1.011, "end"
 * 1.002, "seconds" 2.01; or "start" 0.992, "end" 1.003) while its bytes
 * are those of the new clock's first second: every interval is taken as
 * running from the end of the one before (0, the window's start, for the
 * first) to its own end. An interval under a tenth of the one asked is
 * added to the next, the last excepted.
 */
static void
iperf3_intervals(const json_t *doc)
{
	const json_t *ivs = json_object_get(doc, "intervals"), *iv, *s;
	double t = 0, prev = 0, end, bytes = 0;
	int n = 0, group = iperf3_group();
	size_t i, last = json_array_size(ivs) - 1;

	json_array_foreach(ivs, i, iv) {
		s = json_object_get(iv, "sum");
		if (json_is_true(json_object_get(s, "omitted")))
			continue;
		end = ff_json_num(s, "end", 0);
		bytes += ff_json_num(s, "bytes", 0);
		if (i < last && (end - prev < iperf3_interval() / 10 || ++n < group)) {
			prev = end;
			continue;
		}
		emit_interval(t, end - t, (json_int_t)bytes, json_null(), json_null());
		t = prev = end;
		bytes = 0;
		n = 0;
	}
	if (prev > t)	/* the last ones were omitted: what came before them */
		emit_interval(t, prev - t, (json_int_t)bytes, json_null(), json_null());
}

/* iperf3: the receiver's figures from its JSON. */
static int
finish_iperf3(struct drive *d)
{
	json_error_t err;
	json_t *doc = json_load_file(d->out_file, 0, &err), *end, *sum, *intervals, *iv, *ev;
	const char *error;
	double bits_per_s, seconds, bytes;
	size_t i;

	ff_stop_if_signalled();	/* a day's JSON takes a while to load */
	/* Whole, or it was cut short (a full disk): then it holds no figures. */
	if (!doc)
		ff_die_event("iperf3's output '%s' is not whole JSON (line %d: %s; cut short: a full disk?); no figures from it",
			     d->out_file, err.line, err.text);
	error = ff_json_str(doc, "error");
	if (error)
		ff_die_event("iperf3: %s", error);
	intervals = json_object_get(doc, "intervals");
	json_array_foreach(intervals, i, iv) {
		json_t *s = json_object_get(iv, "sum");
		double t;

		if (!(i & 0xfff))
			ff_stop_if_signalled();
		if (json_is_true(json_object_get(s, "omitted")))
			continue;
		ev = ff_event("sample");
		t = ff_json_num(s, "end", 0);	/* iperf3 restarts its clock after --omit */
		json_object_set_new(ev, "elapsed_s", json_real(t));
		json_object_set_new(ev, "bytes", json_integer((json_int_t)ff_json_num(s, "bytes", 0)));
		json_object_set_new(ev, "bits", json_integer((json_int_t)(8 * ff_json_num(s, "bytes", 0))));
		json_object_set_new(ev, "bits_per_s", json_real(ff_json_num(s, "bits_per_second", 0)));
		ff_emit(ev);
	}
	iperf3_intervals(doc);
	end = json_object_get(doc, "end");
	sum = json_object_get(end, "sum_received");
	bits_per_s = ff_json_num(sum, "bits_per_second", -1);
	seconds = ff_json_num(sum, "seconds", -1);
	bytes = ff_json_num(sum, "bytes", -1);
	if (bits_per_s < 0 || seconds <= 0 || bytes < 0) {
		json_decref(doc);
		ff_die_event("iperf3's output '%s' has no end section with the receiver's summary; no figures from it",
			     d->out_file);
	}
	check_window("iperf3", seconds, d->out_file);
	if (bytes == 0) {
		json_decref(doc);
		ff_die_event("iperf3 received nothing in the window");
	}
	moving_check();
	ev = ff_event("result");
	json_object_set_new(ev, "workload", json_string("iperf3"));
	json_object_set_new(ev, "jobs", json_integer(opt.run.jobs));
	json_object_set_new(ev, "duration_s", json_real(seconds));
	json_object_set_new(ev, "bytes", json_integer((json_int_t)bytes));
	json_object_set_new(ev, "bits", json_integer((json_int_t)(8 * bytes)));
	json_object_set_new(ev, "bits_per_s", json_real(bits_per_s));
	json_object_set_new(ev, "operations", json_null());
	json_object_set_new(ev, "ops_per_s", json_null());
	json_object_set_new(ev, "errors", json_integer(0));
	ff_emit(ev);
	json_decref(doc);
	d->have_result = 1;
	return 0;
}

/* iperf3 with --json says why it failed in its JSON's "error". */
static char *
said_iperf3(const struct drive *d)
{
	json_t *doc;
	char *r = NULL;

	if (d->out_file && (doc = json_load_file(d->out_file, 0, NULL))) {
		if (ff_json_str(doc, "error"))
			r = ff_asprintf("iperf3: error - %s", ff_json_str(doc, "error"));
		json_decref(doc);
	}
	return r;
}

const struct workload_driver workload_iperf3 = {
	.name = "iperf3",
	.server_args = server_iperf3,
	.start = start_iperf3,
	.finish = finish_iperf3,
	.said = said_iperf3,
};
