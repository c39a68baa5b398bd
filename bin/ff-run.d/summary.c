/*
 * summary.c - flimflam's human summaries of a run and of its capture,
 * from the run's events.
 */
#include "ff-run.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

/* "R1", "R2" ... "R8": a relay's role as the summaries print it (static). */
const char *
role_name(const char *role)
{
	static char buf[4][16];
	static int k;
	char *b = buf[k++ % 4];

	if (!role)
		return "?";
	if (role[0] != 'r' || !role[1] || strspn(role + 1, "0123456789") != strlen(role + 1) ||
	    strlen(role) >= sizeof(buf[0]))
		return role;
	snprintf(b, sizeof(buf[0]), "R%s", role + 1);
	return b;
}

/* A rate for the summary, "25.4 Gbit/s"; "-" when the event had none. */
static const char *
human(double v, const char *unit, char *buf, size_t n)
{
	if (v < 0 || isnan(v)) {
		snprintf(buf, n, "-");
		return buf;
	}
	return ff_fmt_prefixed(v, 1000, " ", unit, buf, n);
}

/* The open-loop rate asked (--rate; the result's rate_per_s), and whether it was kept. */
static void
summarize_rate(const json_t *res)
{
	double asked = ff_json_num(res, "rate_per_s", -1), got = ff_json_num(res, "ops_per_s", -1);
	char a[64];

	if (asked > 0)
		ff_print("  Rate asked:  %.0f/s, %s%s\n", asked, got < 0.95 * asked ? "NOT kept: " : "",
			 human(got, "/s achieved", a, sizeof(a)));
}

/* builtin-rr and builtin-crr: transactions, the rate asked, latency percentiles. */
static void
summarize_rr(const json_t *res)
{
	static const char *const prefixes[] = { "latency", "connect_latency" };
	static const char *const cols[] = { "p50", "p90", "p99", "p999", "p9999", "max" };
	static const char *const names[] = { "p50", "p90", "p99", "p99.9", "p99.99", "max" };
	char a[64], key[64];
	size_t i, k;
	double got = ff_json_num(res, "ops_per_s", -1);

	ff_print("  Operations:  %s (%.0f transactions in the window%s)\n", human(got, "op/s", a, sizeof(a)),
		 ff_json_num(res, "transactions", 0),
		 json_object_get(res, "connections") ? ", each on a connection of its own" : "");
	summarize_rate(res);
	for (k = 0; k < FF_ARRAY_SIZE(prefixes); k++) {
		snprintf(key, sizeof(key), "%s_p50_us", prefixes[k]);
		if (!json_is_number(json_object_get(res, key)))
			continue;
		ff_print("  %s", k ? "Connect:     " : "Latency:     ");
		for (i = 0; i < FF_ARRAY_SIZE(cols); i++) {
			double us;

			snprintf(key, sizeof(key), "%s_%s_us", prefixes[k], cols[i]);
			us = ff_json_num(res, key, 0);
			ff_print("%s%s %s", i ? ", " : "", names[i],
				 us < 1000 ? ff_fmt_sig3(us, " us", a, sizeof(a)) :
				 us < 1e6 ? ff_fmt_sig3(us / 1e3, " ms", a, sizeof(a)) :
				 ff_fmt_sig3(us / 1e6, " s", a, sizeof(a)));
		}
		ff_print("\n");
	}
	if (ff_json_str(res, "histogram"))
		ff_print("  Histogram:   %s\n", ff_json_str(res, "histogram"));
}

/* The sparklines' width, in columns: longer series are averaged into it. */
#define SPARK_WIDTH 60

/*
 * One line of the time series: `label`, the sparkline of v[n], and the
 * range it spans ("from 1.2 to 4.5 Gbit/s"), each value shown by `fmt`.
 */
static void
spark_line(const char *label, const double *v, size_t n, int utf8,
	   const char *(*fmt)(double, char *, size_t))
{
	char *line = ff_sparkline(v, n, SPARK_WIDTH, utf8), lo[64], hi[64];
	double min = v[0], max = v[0];
	size_t i;

	for (i = 1; i < n; i++) {
		min = fmin(min, v[i]);
		max = fmax(max, v[i]);
	}
	if (min == max)
		ff_print("  %-12s %s  %s\n", label, line, fmt(min, lo, sizeof(lo)));
	else
		ff_print("  %-12s %s  %s to %s\n", label, line, fmt(min, lo, sizeof(lo)),
			 fmt(max, hi, sizeof(hi)));
	free(line);
}

static const char *
fmt_bits(double v, char *buf, size_t n)
{
	return human(v, "bit/s", buf, n);
}

static const char *
fmt_ops(double v, char *buf, size_t n)
{
	return human(v, "op/s", buf, n);
}

static const char *
fmt_cpu(double v, char *buf, size_t n)
{
	snprintf(buf, n, "%.0f%%", 100 * v);
	return buf;
}

static const char *
fmt_rss(double v, char *buf, size_t n)
{
	return ff_fmt_prefixed(v, 1024, " ", "B", buf, n);
}

/*
 * The window as a time series: throughput (operations, where the workload
 * counts them) and each relay's CPU as sparklines, Unicode blocks or, when
 * the locale is not UTF-8, ASCII; then its steadiness, a warning when it
 * was not steady.
 */
static void
summarize_intervals(const struct run *run, const json_t *res)
{
	const json_t *ivs = json_object_get(res, "intervals"), *st = json_object_get(res, "steadiness"),
		     *iv, *r;
	size_t n = json_array_size(ivs), i, k;
	double *v, dt;
	int utf8 = ff_utf8_locale();
	char label[32];

	if (!n)
		return;
	v = ff_realloc(NULL, n * sizeof(*v));
	ff_print("\nIntervals (%zu of %g s)\n", n, run->spec.run.interval);
	json_array_foreach(ivs, i, iv) {
		dt = ff_json_num(iv, "dt_s", 0);
		v[i] = dt > 0 ? 8 * ff_json_num(iv, "bytes", 0) / dt : 0;
	}
	spark_line("Throughput:", v, n, utf8, fmt_bits);
	if (json_is_number(json_object_get(json_array_get(ivs, 0), "operations"))) {
		json_array_foreach(ivs, i, iv) {
			dt = ff_json_num(iv, "dt_s", 0);
			v[i] = dt > 0 ? ff_json_num(iv, "operations", 0) / dt : 0;
		}
		spark_line("Operations:", v, n, utf8, fmt_ops);
	}
	json_array_foreach(json_object_get(json_array_get(ivs, 0), "relays"), k, r) {
		json_array_foreach(ivs, i, iv)
			v[i] = ff_json_num(json_array_get(json_object_get(iv, "relays"), k), "cpu_fraction", 0);
		snprintf(label, sizeof(label), "%s CPU:", role_name(ff_json_str(r, "role")));
		spark_line(label, v, n, utf8, fmt_cpu);
		json_array_foreach(ivs, i, iv)
			v[i] = ff_json_num(json_array_get(json_object_get(iv, "relays"), k), "rss_bytes", 0);
		snprintf(label, sizeof(label), "%s RSS:", role_name(ff_json_str(r, "role")));
		spark_line(label, v, n, utf8, fmt_rss);
	}
	free(v);
	if (json_is_true(json_object_get(st, "steady")))
		ff_print("  Steady:      yes (throughput varied by %.1f%%, %+.1f%% from the first half to the second)\n",
			 ff_json_num(st, "cv_pct", 0), ff_json_num(st, "trend_pct", 0));
	else if (json_is_false(json_object_get(st, "steady")))
		ff_print("  Warning:     the window was not steady: %s; its figures are an average of unlike parts (a longer --warmup, or a quieter machine, may help)\n",
			 ff_json_str_or(st, "reason", "?"));
	else if (ff_json_str(st, "reason"))
		ff_print("  Steady:      not judged: %s\n", ff_json_str(st, "reason"));
}

/*
 * TCP stalled in the window (retransmission timeouts, zero-window probes,
 * memory pressure): the
 * figures hold stalls of 200 ms or more, whoever's connections they hit.
 */
static void
tcp_warning(const json_t *tcp)
{
	double to = ff_json_num(tcp, "timeouts", 0), wp = ff_json_num(tcp, "zero_window_probes", 0),
	       mp = ff_json_num(tcp, "memory_pressures", 0);

	if (to <= 0 && wp <= 0 && mp <= 0)
		return;
	ff_print("  Warning:     TCP stalled in the window: %.0f retransmission timeout%s, %.0f zero-window probe%s, %.0f time%s under memory pressure, on the relays' host (all its connections, not only this run's): the figures hold stalls of 200 ms or more\n",
		 to, to == 1 ? "" : "s", wp, wp == 1 ? "" : "s", mp, mp == 1 ? "" : "s");
}

/* What the window shared the machine with (resources.machine), in a line. */
static void
machine_line(const json_t *rsc)
{
	const json_t *m = json_object_get(rsc, "machine");
	char load[32] = "?", mhz[32] = "";

	if (!json_is_object(m))
		return;
	if (json_is_number(json_object_get(m, "load1")))
		snprintf(load, sizeof(load), "%.2f", ff_json_num(m, "load1", 0));
	if (json_is_number(json_object_get(m, "cpu_mhz")))
		snprintf(mhz, sizeof(mhz), ", %.0f MHz", ff_json_num(m, "cpu_mhz", 0));
	if (json_is_number(json_object_get(m, "other_cpu_fraction")))
		ff_print("  Machine:     other processes used %.1f%% of %.0f CPU%s (%.2f CPU s; this run %.2f), steal %.2f s, load %s%s\n",
			 100 * ff_json_num(m, "other_cpu_fraction", 0), ff_json_num(m, "cpus", 0),
			 ff_json_num(m, "cpus", 0) == 1 ? "" : "s", ff_json_num(m, "other_cpu_s", 0),
			 ff_json_num(m, "run_cpu_s", 0), ff_json_num(m, "steal_s", 0), load, mhz);
	else
		ff_print("  Machine:     other processes' CPU not known (/proc/stat or the run's processes unreadable), load %s%s\n", load, mhz);
}

/* A warning when others took a share of the CPUs that moves the figures. */
static void
machine_warning(const json_t *rsc)
{
	char why[160];

	if (ff_machine_shared(rsc, why, sizeof(why)))
		ff_print("  Warning:     the machine was shared: %s over the window; its figures are not comparable with a quieter run's (compare builds in one interleaved bench: flimflam-measurement(7), \"A shared machine\")\n",
			 why);
}

/* ", X per MB, Y per 1k ops" of n counted over the window (per MB not for request/response). */
static void
per_unit(const struct run *run, double n, double window, double mb_s, double kop_s, int ops)
{
	if (mb_s > 0 && !ff_workload_is_rr(run->spec.workload))
		ff_print(", %.3g per MB", n / window / mb_s);
	if (ops && kop_s > 0)
		ff_print(", %.3g per 1k ops", n / window / kop_s);
}

/*
 * A relay's context switches and wakeups over the window, per MB and per
 * 1,000 operations of the result (rates over the window), and its read
 * and write syscalls; nothing of those ff-capture could not count.
 */
static void
switches_line(const struct run *run, const char *role, const json_t *r, const json_t *res, double window)
{
	double n = ff_json_num(r, "ctx_switches", -1), vol = ff_json_num(r, "ctx_switches_voluntary", 0);
	double mb_s = ff_json_num(res, "bits_per_s", 0) / 8e6, kop_s = ff_json_num(res, "ops_per_s", 0) / 1e3;
	double sys = ff_json_num(r, "syscalls_read", -1) + ff_json_num(r, "syscalls_write", -1);
	double woken = ff_json_num(r, "wakeups", -1), made = ff_json_num(r, "wakeups_made", -1);

	if (window <= 0)
		return;
	if (n >= 0) {
		ff_print("  %s switches: %.0f (%.0f%% voluntary)", role, n, n > 0 ? 100 * vol / n : 0);
		per_unit(run, n, window, mb_s, kop_s, 1);
		ff_print("\n");
	}
	if (woken >= 0) {
		ff_print("  %s wakeups:  %.0f (%s)", role, woken, ff_json_str(r, "wakeups_source"));
		per_unit(run, woken, window, mb_s, kop_s, 1);
		if (made >= 0) {
			ff_print("; it woke others %.0f times", made);
			per_unit(run, made, window, mb_s, kop_s, 1);
		}
		ff_print("\n");
	}
	if (sys < 0)
		return;
	ff_print("  %s syscalls: %.0f of the read and write families", role, sys);
	per_unit(run, sys, window, mb_s, kop_s, 0);
	ff_print("\n");
}

/* The links' TLS, each as the relay that proved it says. */
static void
config_tls(const json_t *topo)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(topo, "tls_links"), i, r) {
		const char *from = ff_json_str(r, "from"), *to = ff_json_str(r, "to");
		const char *by = ff_json_str_or(r, "said_by", to);

		/* Said by the relay the link comes to, or (a router on another host) the one it leaves. */
		if (by && from && !strcmp(by, from))
			ff_print("  TLS:         %s, %s (link %s -> %s, as %s says; %s's certificate verified, router %s)\n",
				 ff_json_str(r, "protocol"), ff_json_str(r, "cipher"), role_name(from),
				 role_name(to), role_name(from), role_name(to), ff_json_str(r, "peer"));
		else
			ff_print("  TLS:         %s, %s (link %s -> %s, as %s says; %s's certificate %s verified)\n",
				 ff_json_str(r, "protocol"), ff_json_str(r, "cipher"), role_name(from),
				 role_name(to), role_name(to), role_name(from), ff_json_str(r, "peer"));
	}
}

/* The relays' CPUs: the limit, where each ran, and what they shared. */
static void
config_cpus(const struct run *run, json_t *events, const json_t *topo)
{
	const json_t *r;
	size_t i;

	if (!ff_relay_find(run->spec.relay)->processes)
		return;
	ff_print("  CPU limit:   %ld", run->spec.run.cpu_limit);
	if (run->spec.run.cpu_limit > 0) {
		json_array_foreach(json_object_get(topo, "relays"), i, r)
			ff_print("%s%s on CPU %s", i ? ", " : " (", role_name(ff_json_str(r, "role")),
			       ff_json_str_or(r, "cpus", "any"));
		ff_print(")");
	}
	ff_print("\n");
	json_array_foreach(json_object_get(topo, "cpus_other_runs"), i, r)
		printf("  Note:        another flimflam run (pid %lld) has its relays on CPU %s too: the two runs disturb each other's figures\n",
		       (long long)json_integer_value(json_object_get(r, "pid")),
		       ff_json_str_or(r, "cpus", "?"));
	if (json_is_true(json_object_get(topo, "cpus_shared")))
		ff_print("  Note:        too few CPUs for each relay to have its own (%ld relay%s of %ld CPU%s, %.0f CPU%s here): the relays share CPUs\n",
			 run->spec.hops, run->spec.hops == 1 ? "" : "s",
			 run->spec.run.cpu_limit, run->spec.run.cpu_limit == 1 ? "" : "s",
			 ff_json_num(ff_event_find(events, "environment"), "cpus_available", 0),
			 ff_json_num(ff_event_find(events, "environment"), "cpus_available", 0) == 1 ? "" : "s");
	/* with too few for the relays, none are left for the workload either */
	if (run->spec.run.cpu_limit > 0 && !ff_json_str(ff_event_find(events, "server"), "cpus"))
		ff_print("  Note:        no CPUs are left for the workload: it shares CPUs with the relays\n");
}

/*
 * The relays' workers (the topology's): how many each runs and by which of
 * its settings; more of them than the CPUs of --cpu-limit is said, not
 * changed (the workers share those CPUs: what a sweep of --workers asks).
 */
static void
config_workers(const struct run *run, const json_t *topo)
{
	long n = (long)ff_json_num(topo, "workers", 0);

	if (n <= 0)
		return;
	ff_print("  Workers:     %ld per relay (%s%s)\n", n, ff_json_str(topo, "workers_setting") ?
		 ff_json_str(topo, "workers_setting") : "?", run->spec.run.workers ? ", --workers" : "");
	if (json_is_true(json_object_get(topo, "workers_over_cpu_limit")))
		ff_print("  Note:        %ld workers per relay on --cpu-limit %ld: they share the relay's CPU%s\n",
			 n, run->spec.run.cpu_limit, run->spec.run.cpu_limit == 1 ? "" : "s");
}

void
summarize(const struct run *run, json_t *events, const char *rundir)
{
	json_t *topo = ff_event_find(events, "topology"), *res = ff_event_find(events, "result"),
	       *rsc = ff_event_find(events, "resources"), *r;
	char a[64];
	size_t i;

	ff_print("Configuration\n");
	ff_print("  Workload:    %s\n", run->spec.workload);
	ff_print("  Relay:       %s\n", run->spec.relay);
	if (json_is_object(json_object_get(topo, "build"))) {
		char line[PATH_MAX * 2 + 256];

		ff_print("  Build:       %s\n", ff_build_line(json_object_get(topo, "build"), line,
							  sizeof(line)));
	}
	ff_print("  Protocol:    %s\n", run->spec.protocol);
	if (run->spec.hops)
		ff_print("  Hops:        %ld (client -> R1%s%s -> server)\n", run->spec.hops,
			 run->spec.hops > 2 ? " -> ... -> " : run->spec.hops == 2 ? " -> " : "",
			 run->spec.hops > 1 ? role_name(ff_json_str(json_array_get(json_object_get(topo, "relays"),
									    run->spec.hops - 1), "role")) : "");
	ff_print("  Jobs:        %ld\n", run->spec.run.jobs);
	ff_print("  Warmup:      %ld s\n", run->spec.run.warmup);
	ff_print("  Duration:    %ld s\n", run->spec.run.duration);
	config_tls(topo);
	if (run->spec.hosts)
		ff_print("  Hosts:       %s (the roles not named ran here)\n", run->spec.hosts);
	config_cpus(run, events, topo);
	config_workers(run, topo);
	ff_print("\nResults\n");
	ff_print("  Throughput:  %s\n", human(ff_json_num(res, "bits_per_s", -1), "bit/s", a, sizeof(a)));
	if (json_is_number(json_object_get(res, "ops_per_s")) && !ff_workload_is_rr(run->spec.workload))
		ff_print("  Operations:  %s\n", human(ff_json_num(res, "ops_per_s", -1), "op/s", a, sizeof(a)));
	if (!ff_workload_is_rr(run->spec.workload))
		summarize_rate(res);
	if (ff_workload_is_rr(run->spec.workload))
		summarize_rr(res);
	else if (json_is_number(json_object_get(res, "latency_avg_us")))
		ff_print("  Latency:     %.3f ms average, %.3f ms p99\n",
		       ff_json_num(res, "latency_avg_us", 0) / 1000,
		       ff_json_num(res, "latency_p99_us", 0) / 1000);
	ff_print("  Window:      %.3f s\n", ff_json_num(res, "duration_s", 0));
	if (ff_json_num(res, "failed", 0) > 0)
		ff_print("  Failed:      %.0f of %.0f request%s\n", ff_json_num(res, "failed", 0),
		       ff_json_num(res, "requests", 0), ff_json_num(res, "requests", 0) == 1 ? "" : "s");
	machine_line(rsc);
	summarize_intervals(run, res);
	tcp_warning(json_object_get(rsc, "tcp"));
	machine_warning(rsc);
	if (json_array_size(json_object_get(rsc, "relays"))) {
		ff_print("\nResources\n");
		json_array_foreach(json_object_get(rsc, "relays"), i, r) {
			const char *role = role_name(ff_json_str(r, "role"));

			ff_print("  %s CPU:      %.1f%%\n", role, 100 * ff_json_num(r, "cpu_fraction", 0));
			ff_print("  %s RSS:      %.1f MiB\n", role,
			       ff_json_num(r, "max_rss_bytes", 0) / 1048576.0);
			switches_line(run, role, r, res, ff_json_num(rsc, "window_s", 0));
			growth_line(role, r);
		}
	}
	ff_print("\nRun directory: %s\n", rundir);
}

/* The capture commands: stat, skstat, record, c2c, mem, flamegraph */

/*
 * A figure of a stat event, if it has one; fmt NULL: a figure in
 * milliseconds, shown in seconds to three significant digits as bench does.
 */
static void
print_figure(const json_t *ev, const char *key, const char *label, const char *fmt)
{
	const json_t *v = json_object_get(ev, key);
	char buf[64];

	if (!json_is_number(v))
		return;
	printf("  %-26s", label);
	if (fmt)
		printf(fmt, json_number_value(v));
	else
		printf("%s", ff_fmt_sig3(json_number_value(v) / 1000, "", buf, sizeof(buf)));
	printf("\n");
}

/*
 * A recording's line: its file, where it was made when on another host
 * (its relays and the host: one recording per relay host with --hosts),
 * and how; its previous copy, when kept.
 */
static void
print_recording(const struct run *run, const json_t *cap, const char *data)
{
	const char *host = ff_json_str(cap, "host");
	char old[PATH_MAX + 8];
	const json_t *r;
	size_t i;

	ff_print("  Data:        %s (", data);
	json_array_foreach(host ? json_object_get(cap, "relays") : NULL, i, r)
		ff_print("%s%s", i ? ", " : "", role_name(ff_json_str(r, "role")));
	if (host)
		ff_print(" on %s; ", host);
	ff_print("%s: %s %s%s, call graph %s)\n", ff_json_str(cap, "tool"),
		 ff_json_str_or(cap, "perf_event", "cycles"),
		 json_is_null(json_object_get(cap, "freq")) ? "every one" : "at ",
		 json_is_null(json_object_get(cap, "freq")) ? "" : ff_asprintf("%s Hz", freq_arg(run)),
		 run->perf.call_graph);
	snprintf(old, sizeof(old), "%s.old", data);
	if (access(old, F_OK) == 0)
		ff_print("  Previous:    %s\n", old);
}

/* The chain position of a capture event's first relay: 1 for r1; 0 for none. */
static long
capture_position(const json_t *cap)
{
	const char *role = ff_json_str(json_array_get(json_object_get(cap, "relays"), 0), "role");

	return role && role[0] == 'r' ? strtol(role + 1, NULL, 10) : 0;
}

/* The capture events (one per relay host with --hosts), r1's first. */
static json_t *
captures_in_order(json_t *events)
{
	json_t *caps = json_array(), *ev;
	size_t i, j;

	json_array_foreach(events, i, ev) {
		if (strcmp(ff_event_name(ev), "capture"))
			continue;
		for (j = json_array_size(caps); j > 0 &&
		     capture_position(json_array_get(caps, j - 1)) > capture_position(ev); j--)
			;
		json_array_insert(caps, j, ev);
	}
	return caps;
}

void
summarize_capture(const struct run *run, const struct cmd *c, json_t *events)
{
	json_t *cap = ff_event_find(events, "capture"), *caps, *ev, *r, *pid;
	char *data = ff_json_path_value(json_array_get(json_object_get(cap, "files"), 0));
	size_t i, j, k, n = 0, nrec = 0;

	json_array_foreach(events, i, ev) {
		const char *name = ff_event_name(ev), *role = ff_json_str(ev, "role");

		role = role ? role : "?";
		if (!strcmp(name, "stat")) {
			ff_print("\nperf stat: %s\n\n", role_name(role));
			ff_print("%s\n\n", ff_json_str_or(ev, "table", ""));
			/* in bench's unit and words: CPU-seconds per GB, per 1,000 requests */
			print_figure(ev, "cpu_ms_per_gb", "CPU s/GB:", NULL);
			print_figure(ev, "cpu_ms_per_kop", "CPU s/1k req:", NULL);
			print_figure(ev, "instructions_per_byte", "Instructions per byte:", "%.2f");
			print_figure(ev, "cycles_per_byte", "Cycles per byte:", "%.2f");
		} else if (!strcmp(name, "lock")) {
			const json_t *t;
			size_t k2;

			ff_print("\nContended kernel locks (perf lock contention of %s)\n\n",
				 ff_json_str_or(ev, "file", "perf.data"));
			ff_print("%s\n", ff_json_str_or(ev, "callers", ""));
			json_array_foreach(json_object_get(ev, "threads"), k2, t)
				if (ff_json_str(t, "role"))
					ff_print("  %s thread %.0f (%s): %.0f waits, %.3f ms in all\n",
						 role_name(ff_json_str(t, "role")), ff_json_num(t, "tid", 0),
						 ff_json_str(t, "comm"), ff_json_num(t, "contended", 0),
						 ff_json_num(t, "wait_total_us", 0) / 1000);
		} else if (!strcmp(name, "skstat")) {
			/* "Router 1" for r1: role_name names a relay of the chain anew. */
			if (role_name(role) != role)
				ff_print("\nRouter %s\n\n", role + 1);
			else
				ff_print("\n%s\n\n", role);
			ff_print("%s\n", ff_json_str_or(ev, "general", ""));
			ff_print("%s", ff_json_str_or(ev, "memory", ""));
		}
	}
	if (!samples(c) || !data)
		return;
	free(data);
	/* Every recording: one, or one per relay host (--hosts), in the relays' order. */
	caps = captures_in_order(events);
	ff_print("\nCaptured\n");
	json_array_foreach(caps, i, ev)
		if ((data = ff_json_path_value(json_array_get(json_object_get(ev, "files"), 0)))) {
			print_recording(run, ev, data);
			free(data);
			nrec++;
		}
	ff_print("  Processes:  ");
	json_array_foreach(caps, i, ev)
		json_array_foreach(json_object_get(ev, "relays"), j, r) {
			ff_print("%s %s", n++ ? ";" : "", role_name(ff_json_str(r, "role")));
			json_array_foreach(json_object_get(r, "pids"), k, pid)
				ff_print("%s%lld", k ? ", " : " pid ", (long long)json_integer_value(pid));
		}
	ff_print("\n");
	json_decref(caps);
	if (!strcmp(c->name, "flamegraph")) {
		ff_print("  Flamegraph:  %s\n", run->flame_html);
		if (run->flame_out.old[0])
			ff_print("  Previous:    %s\n", run->flame_out.old);
		char *url = ff_file_url(run->flame_html);

		ff_print("\nOpen it in a browser: %s\n", url);
		free(url);
	} else {
		/* Recordings of relays on hosts of their own: one each, named. */
		ff_print("\nNext step: %s%s\n", !strcmp(c->mode, "c2c") ? "perf c2c report" :
		       !strcmp(c->mode, "mem") ? "perf mem report" : "perf report --no-children",
		       nrec > 1 ? " -i FILE, for each recording above" : "");
	}
}
