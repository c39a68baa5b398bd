/*
 * ff-capture: each relay's CPU time and peak memory over the window (every
 * mode), the `resources` event.
 */
#include "ff-capture.h"

double window_start;

/* The window starts: each relay's CPU time so far. */
void
resources_begin(void)
{
	int i;

	window_start = ff_now();
	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];

		t->cpu0 = ff_proc_cpu_s(t->pid);
		if (t->cpu0 < 0)
			ff_die_event("%s (pid %d) is gone before the window", t->role, (int)t->pid);
	}
}

/* The window ends: the `resources` event. */
void
resources_end(void)
{
	double window = ff_now() - window_start;
	json_t *ev = ff_event("resources"), *arr = json_array();
	int i;

	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];
		double cpu = ff_proc_cpu_s(t->pid);
		long long rss = ff_proc_hwm_bytes(t->pid);
		json_t *o;

		if (cpu < 0 || rss < 0 || !ff_proc_alive(t->pid))
			ff_die_event("%s (pid %d) died during the window", t->role, (int)t->pid);
		o = json_object();
		json_object_set_new(o, "role", json_string(t->role));
		json_object_set_new(o, "pid", json_integer(t->pid));
		json_object_set_new(o, "cpu_s", json_real(cpu - t->cpu0));
		json_object_set_new(o, "cpu_fraction", json_real((cpu - t->cpu0) / window));
		json_object_set_new(o, "max_rss_bytes", json_integer(rss));
		json_array_append_new(arr, o);
	}
	json_object_set_new(ev, "window_s", json_real(window));
	json_object_set_new(ev, "relays", arr);
	ff_emit(ev);
}

