/*
 * ff-capture: each relay's CPU time and peak memory over the window (every
 * mode), the `resources` event; and per interval of the window, each
 * relay's CPU, RSS and open files, added to the workload's `interval`
 * events, and fitted over the window: each relay's growth per hour.
 */
#include "ff-capture.h"

#include <math.h>

double window_start;

/* The relays' figures of each interval measured so far (json arrays). */
static json_t *relay_ivs;
static double tick_at;		/* when the last one ended */
static int ticks, nticks;
static double window_len;
/* When each interval ended, from the window's start (s). */
static double *tick_t;
static size_t tick_cap;
/* The workload's intervals: those waiting for the relays', all seen. */
static json_t *waiting, *seen;
static int measured;
/* This host's TCP stall counters at the window's start; have_tcp0: read. */
static struct ff_tcp_stalls tcp0;
static int have_tcp0;

double
next_tick(void)
{
	return ticks + 1 < nticks ? window_start + ff_interval_edge(opt.interval, window_len, ticks + 1) : 0;
}

/* An interval of the window ended: each relay's CPU over it, its RSS now. */
void
tick(void)
{
	double now = ff_now(), dt = now - tick_at;
	json_t *arr = json_array(), *o;
	int i;

	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];
		double cpu = ff_proc_cpu_s(t->pid);
		long long rss = ff_proc_rss_bytes(t->pid);
		long fds = ff_proc_fds(t->pid);

		o = json_object();
		json_object_set_new(o, "role", json_string(t->role));
		json_object_set_new(o, "cpu_fraction", cpu >= 0 && dt > 0 ?
				    json_real(round((cpu - t->cpu_tick) / dt * 1e4) / 1e4) : json_null());
		json_object_set_new(o, "cpu_s", cpu >= 0 ? json_real(ff_usec(cpu - t->cpu_tick)) : json_null());
		json_object_set_new(o, "rss_bytes", rss >= 0 ? json_integer(rss) : json_null());
		json_object_set_new(o, "fds", fds >= 0 ? json_integer(fds) : json_null());
		json_array_append_new(arr, o);
		if (cpu >= 0)
			t->cpu_tick = cpu;
	}
	json_array_append_new(relay_ivs, arr);
	FF_GROW(tick_t, (size_t)ticks + 1, tick_cap);
	tick_t[ticks] = now - window_start;
	machine_tick();
	tick_at = now;
	ticks++;
	intervals_flush();
}

/*
 * A workload's `interval`: the relays' figures of the same interval (the
 * n-th of each) added, then emitted; kept waiting until they are measured.
 */
void
interval_event(json_t *ev)
{
	if (!waiting)
		waiting = json_array();
	if (!seen)
		seen = json_array();
	json_array_append_new(waiting, ev);
	intervals_flush();
}

void
intervals_flush(void)
{
	json_t *ev, *r;

	while (json_array_size(waiting) &&
	       (measured || json_array_size(seen) < json_array_size(relay_ivs))) {
		ev = json_incref(json_array_get(waiting, 0));
		json_array_remove(waiting, 0);
		r = json_array_get(relay_ivs, json_array_size(seen));
		r = r ? json_copy(r) : json_array();
		/* Relays on hosts of their own (--roles): the upstream capture's go after ours. */
		if (json_is_array(json_object_get(ev, "relays")))
			json_array_extend(r, json_object_get(ev, "relays"));
		json_object_set_new(ev, "relays", r);
		json_array_append(seen, ev);
		ff_emit(ev);
	}
}

/* The window measured: the intervals waiting go now, with what there is. */
void
intervals_done(void)
{
	measured = 1;
	intervals_flush();
}

/* The result, with the window's intervals and their steadiness. */
void
emit_result(json_t *ev)
{
	json_t *ivs = json_array(), *iv, *c;
	size_t i;

	intervals_flush();
	json_array_foreach(seen, i, iv) {
		c = json_deep_copy(iv);
		json_object_del(c, "event");
		json_array_append_new(ivs, c);
	}
	json_object_set_new(ev, "steadiness", ff_steadiness(ivs));
	json_object_set_new(ev, "intervals", ivs);
	ff_emit(ev);
}

/* The window starts: each relay's CPU time so far. */
void
resources_begin(double duration)
{
	int i;

	window_start = ff_now();
	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];

		t->cpu0 = t->cpu_tick = ff_proc_cpu_s(t->pid);
		t->rss0 = ff_proc_rss_bytes(t->pid);
		if (t->cpu0 < 0)
			ff_die_event("%s (pid %d) is gone before the window", t->role, (int)t->pid);
	}
	have_tcp0 = ff_tcp_stalls_read(&tcp0) == 0;
	relay_ivs = json_array();
	tick_at = window_start;
	window_len = duration;
	nticks = ff_intervals_count(opt.interval, window_len);
	machine_begin(opt.alone);
	sched_begin();
}

/*
 * What this host's TCP went through in the window (all of it, not only the
 * run's connections): timeouts and zero-window probes are each a stall of
 * 200 ms or more; null if the counters cannot be read.
 */
static json_t *
tcp_stalls(void)
{
	struct ff_tcp_stalls t1;

	if (!have_tcp0 || ff_tcp_stalls_read(&t1) < 0)
		return json_null();
	return json_pack("{sI sI sI sI}", "timeouts", (json_int_t)(t1.timeouts - tcp0.timeouts),
			 "zero_window_probes", (json_int_t)(t1.window_probes - tcp0.window_probes),
			 "memory_pressures", (json_int_t)(t1.memory_pressures - tcp0.memory_pressures),
			 "receive_queue_drops", (json_int_t)(t1.rcvq_drops - tcp0.rcvq_drops));
}

/*
 * A relay that lost a process in the window (a worker killed or crashed,
 * which its master may have replaced) measured something else than the
 * relay: the run fails, naming it. Its processes are those of the window's
 * start (t->pids, the relay and its descendants).
 */
static void
relays_lost_check(void)
{
	int i, j;

	for (i = 0; i < opt.n; i++) {
		const struct target *t = &opt.t[i];

		/*
		 * A relay of the topology, which names its program; --pid's
		 * processes are anyone's, and so are those of a relay whose
		 * processes come and go with its connections (the user's own).
		 */
		if (ff_relay_has(t->program, FF_RELAY_FORKS))
			continue;
		for (j = 0; t->program[0] && j < t->npids; j++)
			if (t->pids[j] != t->pid && !ff_proc_alive(t->pids[j]))
				ff_die_event("%s lost a process during the window: pid %d, one of the %d of %s (pid %d) at its start, is gone (killed or crashed); no figures from it",
					     t->role, (int)t->pids[j], t->npids, t->program, (int)t->pid);
	}
}

/*
 * Relay i's growth over the window, fitted to its intervals' RSS and open
 * files: flat within 1 MiB and 1 file an hour.
 */
#define GROWTH_BAND_RSS 1048576.0
#define GROWTH_BAND_FDS 1.0

static json_t *
growth(int i)
{
	static const char *const keys[] = { "rss_bytes", "fds" };
	static const double bands[] = { GROWTH_BAND_RSS, GROWTH_BAND_FDS };
	size_t n = json_array_size(relay_ivs), j, k;
	double *y = ff_realloc(NULL, (n + 1) * sizeof(*y));
	json_t *o = json_object(), *v;

	for (k = 0; k < FF_ARRAY_SIZE(keys); k++) {
		for (j = 0; j < n; j++) {
			v = json_object_get(json_array_get(json_array_get(relay_ivs, j), i), keys[k]);
			y[j] = json_is_number(v) ? json_number_value(v) : NAN;
		}
		json_object_set_new(o, k ? "fds" : "rss", ff_growth(tick_t, y, n, bands[k]));
	}
	free(y);
	return o;
}

/* The window ends: its last interval, the `resources` event. */
void
resources_end(void)
{
	json_t *ev, *arr = json_array();
	double window;
	int i;

	/* The last interval's reads are the window's: they add up. */
	while (ticks < nticks)
		tick();
	relays_lost_check();
	window = tick_at - window_start;
	ev = ff_event("resources");
	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];
		double cpu = t->cpu_tick;
		long long rss = ff_proc_hwm_bytes(t->pid), rss_end = ff_proc_rss_bytes(t->pid);
		json_t *o;

		if (ff_proc_cpu_s(t->pid) < 0 || rss < 0 || !ff_proc_alive(t->pid)) {
			relay_gone(t);
			ff_die_event("%s (pid %d) died during the window", t->role, (int)t->pid);
		}
		o = json_object();
		json_object_set_new(o, "role", json_string(t->role));
		json_object_set_new(o, "pid", json_integer(t->pid));
		json_object_set_new(o, "cpu_s", json_real(cpu - t->cpu0));
		json_object_set_new(o, "cpu_fraction", json_real((cpu - t->cpu0) / window));
		json_object_set_new(o, "max_rss_bytes", json_integer(rss));
		/* What the window's load holds: RSS at its end, and its growth over it. */
		json_object_set_new(o, "rss_start_bytes", t->rss0 >= 0 ? json_integer(t->rss0) : json_null());
		json_object_set_new(o, "rss_end_bytes", rss_end >= 0 ? json_integer(rss_end) : json_null());
		json_object_set_new(o, "rss_growth_bytes", t->rss0 >= 0 && rss_end >= 0 ?
				    json_integer(rss_end - t->rss0) : json_null());
		json_object_set_new(o, "growth", growth(i));
		sched_end(i, o);
		json_array_append_new(arr, o);
	}
	json_object_set_new(ev, "window_s", json_real(window));
	json_object_set_new(ev, "relays", arr);
	json_object_set_new(ev, "tcp", tcp_stalls());
	json_object_set_new(ev, "machine", machine_end());
	ff_emit(ev);
}

