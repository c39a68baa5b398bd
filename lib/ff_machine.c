/*
 * ff_machine.c - what a window shared the machine with: the CPU time of
 * the processes that are not the run's, against the whole machine's
 * (/proc/stat), the hypervisor's steal, runnable tasks, the load
 * average, the CPU clock.
 */
#include "ff.h"

#include <dirent.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static double
user_hz(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return hz > 0 ? (double)hz : 100;
}

int
ff_cpu_stat_parse(const char *text, struct ff_cpu_stat *s)
{
	unsigned long long v[8] = { 0 };
	const char *line, *p;
	double hz = user_hz();
	int n;

	s->busy_s = s->steal_s = -1;
	s->procs_running = -1;
	s->cpus = 0;
	if (!text)
		return -1;
	for (line = text; *line; line = (p = strchr(line, '\n')) ? p + 1 : line + strlen(line)) {
		long long r;

		if (!strncmp(line, "cpu ", 4)) {
			/* user nice system idle iowait irq softirq steal ... */
			n = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu",
				   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
			/* idle and iowait apart; interrupts and softirqs are work too */
			if (n >= 3)
				s->busy_s = (v[0] + v[1] + v[2] + (n >= 7 ? v[5] + v[6] : 0)) / hz;
			if (n >= 8)
				s->steal_s = v[7] / hz;
		} else if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9') {
			s->cpus++;
		} else if (sscanf(line, "procs_running %lld", &r) == 1 && r >= 0) {
			s->procs_running = r;
		}
	}
	return s->busy_s >= 0 && s->cpus > 0 ? 0 : -1;
}

int
ff_cpu_stat_read(struct ff_cpu_stat *s)
{
	char *text = ff_read_file("/proc/stat", NULL);
	int r = ff_cpu_stat_parse(text, s);

	free(text);
	return r;
}

double
ff_loadavg_parse(const char *text)
{
	double v;

	return text && sscanf(text, "%lf", &v) == 1 && v >= 0 ? v : -1;
}

double
ff_cpuinfo_mhz_parse(const char *text)
{
	const char *p;
	double sum = 0, v;
	int n = 0;

	for (p = text; p && (p = strstr(p, "cpu MHz")); p++) {
		const char *colon = strchr(p, ':'), *nl = strchr(p, '\n');

		if (colon && (!nl || colon < nl) && sscanf(colon + 1, "%lf", &v) == 1 && v > 0) {
			sum += v;
			n++;
		}
	}
	return n ? sum / n : -1;
}

/* The mean of each CPU's cpufreq scaling_cur_freq (kHz), in MHz; -1 if none is readable. */
static double
cpufreq_mhz(void)
{
	const char *dir = "/sys/devices/system/cpu";
	char path[PATH_MAX];
	struct dirent *de;
	double sum = 0;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *text;
		double khz;

		if (strncmp(de->d_name, "cpu", 3) || !de->d_name[3] ||
		    strspn(de->d_name + 3, "0123456789") != strlen(de->d_name + 3))
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpufreq/scaling_cur_freq", dir, de->d_name);
		text = ff_read_file(path, NULL);
		if (text && sscanf(text, "%lf", &khz) == 1 && khz > 0) {
			sum += khz / 1000;
			n++;
		}
		free(text);
	}
	closedir(d);
	return n ? sum / n : -1;
}

double
ff_cpu_mhz(void)
{
	double mhz = cpufreq_mhz();
	char *text;

	if (mhz > 0)
		return mhz;
	text = ff_read_file("/proc/cpuinfo", NULL);
	mhz = ff_cpuinfo_mhz_parse(text);
	free(text);
	return mhz;
}

double
ff_load1(void)
{
	char *text = ff_read_file("/proc/loadavg", NULL);
	double v = ff_loadavg_parse(text);

	free(text);
	return v;
}

/*
 * Of /proc/PID/stat: its CPU ticks (user and system, its reaped
 * children's too), its start time; -1 if gone, or a kernel thread.
 */
static long long
proc_ticks(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	unsigned long long u, s;
	long long cu, cs;
	unsigned flags;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	if (!(p = strrchr(buf, ')')))	/* comm may hold spaces and parentheses */
		return -1;
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %llu %llu %lld %lld %*d %*d %*d %*d %llu",
		   &flags, &u, &s, &cu, &cs, start) != 6 || (flags & 0x00200000))	/* PF_KTHREAD */
		return -1;
	return (long long)(u + s) + (cu > 0 ? cu : 0) + (cs > 0 ? cs : 0);
}

static int
pid_in(pid_t pid, const pid_t *set, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i] == pid)
			return 1;
	return 0;
}

/* The processes of the roots' trees, each once, into run[max]; the count. */
static int
run_pids(const pid_t *roots, int nroots, pid_t *run, int max)
{
	int n = 0, i, j;

	for (i = 0; i < nroots; i++) {
		pid_t tree[256];
		int m;

		if (roots[i] <= 0)
			continue;
		m = ff_proc_tree(roots[i], tree, 256);
		for (j = 0; j < m && n < max; j++)
			if (!pid_in(tree[j], run, n))
				run[n++] = tree[j];
	}
	return n;
}

/*
 * Every process now but the run's and the kernel's, with its ticks, into
 * a new array (*out, NULL if none); the count, or -1 if /proc is unreadable.
 */
static int
others_now(const pid_t *run, int nrun, struct ff_proc_ticks **out)
{
	struct ff_proc_ticks *v = NULL;
	struct dirent *de;
	int n = 0, cap = 0;
	DIR *d = opendir("/proc");

	*out = NULL;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct ff_proc_ticks t;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (pid <= 0 || *end || pid_in((pid_t)pid, run, nrun))
			continue;
		t.pid = (pid_t)pid;
		if ((t.ticks = proc_ticks(t.pid, &t.start)) < 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			v = ff_realloc(v, cap * sizeof(*v));
		}
		v[n++] = t;
	}
	closedir(d);
	*out = v;
	return n;
}

void
ff_machine_begin(struct ff_machine *m, const pid_t *roots, int nroots)
{
	pid_t run[1024];
	int nrun = run_pids(roots, nroots, run, (int)FF_ARRAY_SIZE(run));

	memset(m, 0, sizeof(*m));
	m->load1 = -1;
	m->other_s = -1;
	m->t0 = ff_now();
	ff_cpu_stat_read(&m->s0);
	m->nothers0 = others_now(run, nrun, &m->others0);
	ff_machine_sample(m);
}

void
ff_machine_sample(struct ff_machine *m)
{
	struct ff_cpu_stat s;
	double mhz;

	if (ff_cpu_stat_read(&s) == 0 && s.procs_running >= 0) {
		m->running_sum += s.procs_running;
		m->running_n++;
	}
	if ((mhz = ff_cpu_mhz()) > 0) {
		m->mhz_sum += mhz;
		m->mhz_n++;
	}
}

/*
 * Others' ticks over the window: each one's since the start, or all of
 * them if it started since (a pid not seen then, or seen for another
 * process). The run's processes at either end are not others. One seen
 * at the start and gone at the end was reaped: its whole life is in its
 * parent's reaped children's ticks, counted above, so what it had at the
 * start comes off (a long job of another's ending in the window is not
 * its whole life in the window).
 */
/* One process at two looks: the same pid, started at the same time. */
static int
same_proc(const struct ff_proc_ticks *a, const struct ff_proc_ticks *b)
{
	return a->pid == b->pid && a->start == b->start;
}

static double
others_window_s(const struct ff_machine *m, const pid_t *run, int nrun)
{
	struct ff_proc_ticks *now;
	long long ticks = 0;
	int n = others_now(run, nrun, &now), i, j;

	if (n < 0 || m->nothers0 < 0)
		return -1;
	for (i = 0; i < n; i++) {
		long long t = now[i].ticks;

		for (j = 0; j < m->nothers0; j++)
			if (same_proc(&m->others0[j], &now[i])) {
				t = now[i].ticks > m->others0[j].ticks ? now[i].ticks - m->others0[j].ticks : 0;
				break;
			}
		ticks += t;
	}
	for (j = 0; j < m->nothers0; j++) {
		for (i = 0; i < n; i++)
			if (same_proc(&m->others0[j], &now[i]))
				break;
		if (i == n && !pid_in(m->others0[j].pid, run, nrun))
			ticks -= m->others0[j].ticks;
	}
	free(now);
	return (ticks > 0 ? ticks : 0) / user_hz();
}

void
ff_machine_end(struct ff_machine *m, const pid_t *roots, int nroots)
{
	pid_t run[1024];
	int nrun = run_pids(roots, nroots, run, (int)FF_ARRAY_SIZE(run));

	m->other_s = others_window_s(m, run, nrun);
	free(m->others0);
	m->others0 = NULL;
	ff_cpu_stat_read(&m->s1);
	m->t1 = ff_now();
	m->load1 = ff_load1();
	ff_machine_sample(m);
}

static json_t *
num_or_null(double v, int ok)
{
	return ok && isfinite(v) ? json_real(round(v * 1e4) / 1e4) : json_null();
}

json_t *
ff_machine_json(const struct ff_machine *m)
{
	double window = m->t1 - m->t0;
	int stat = m->s0.cpus > 0 && m->s1.cpus > 0 && m->s1.busy_s >= m->s0.busy_s;
	int steal = stat && m->s0.steal_s >= 0 && m->s1.steal_s >= m->s0.steal_s;
	double busy = stat ? m->s1.busy_s - m->s0.busy_s : -1;
	double other = m->other_s;
	/* The two counts are read moments apart, in ticks: never below none. */
	double run_s = stat && other >= 0 ? fmax(0, busy - other) : -1;
	int run = run_s >= 0;
	int cpus = m->s1.cpus;
	json_t *o = json_object();

	json_object_set_new(o, "load1", num_or_null(m->load1, m->load1 >= 0));
	json_object_set_new(o, "procs_running", num_or_null(m->running_sum / (m->running_n ? m->running_n : 1),
							     m->running_n > 0));
	json_object_set_new(o, "steal_s", num_or_null(m->s1.steal_s - m->s0.steal_s, steal));
	json_object_set_new(o, "other_cpu_s", num_or_null(other, other >= 0));
	json_object_set_new(o, "other_cpu_fraction", num_or_null(other / (window * cpus),
								  other >= 0 && window > 0 && cpus > 0));
	json_object_set_new(o, "run_cpu_s", num_or_null(run_s, run));
	json_object_set_new(o, "cpus", cpus > 0 ? json_integer(cpus) : json_null());
	json_object_set_new(o, "cpu_mhz", num_or_null(m->mhz_sum / (m->mhz_n ? m->mhz_n : 1), m->mhz_n > 0));
	return o;
}

double
ff_machine_others(const json_t *m)
{
	double frac = ff_json_num(m, "other_cpu_fraction", -1), s = ff_json_num(m, "other_cpu_s", -1),
	       together = ff_json_num(m, "together_cpu_s", 0);

	if (frac < 0 || together <= 0)
		return frac;
	return s > 0 ? frac * fmax(0, s - together) / s : frac;
}

const char *
ff_machine_shared(const json_t *resources, char *buf, size_t n)
{
	const json_t *m = json_object_get(resources, "machine");
	double other = ff_machine_others(m), steal = ff_json_num(m, "steal_s", -1),
	       window = ff_json_num(resources, "window_s", -1), cpus = ff_json_num(m, "cpus", -1);
	double stolen = steal >= 0 && window > 0 && cpus > 0 ? steal / (window * cpus) : -1;
	int busy = other > FF_SHARED_OTHER_PCT / 100.0, robbed = stolen > FF_SHARED_STEAL_PCT / 100.0;

	if (busy && robbed)
		snprintf(buf, n, "other processes used %.0f%% of the CPUs, and the hypervisor took %.0f%% (steal)",
			 100 * other, 100 * stolen);
	else if (busy)
		snprintf(buf, n, "other processes used %.0f%% of the CPUs", 100 * other);
	else if (robbed)
		snprintf(buf, n, "the hypervisor took %.0f%% of the CPUs (steal)", 100 * stolen);
	else
		return NULL;
	return buf;
}
