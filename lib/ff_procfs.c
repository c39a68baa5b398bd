/*
 * ff_procfs.c - what /proc says of a process and those it started: its
 * tree, CPU time (to the nanosecond where schedstat has it, with the
 * children it reaped), memory, open files, whether it lives, its parent;
 * and the open-files limit raised for what we start.
 */
#include "ff_base.h"
#include "ff_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int
ff_proc_tree(pid_t pid, pid_t *out, int max)
{
	char path[384], buf[4096], *p, *end;
	int n = 0, i;
	DIR *d;
	struct dirent *de;

	if (max < 1)
		return 0;
	out[n++] = pid;
	for (i = 0; i < n && n < max; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task", (int)out[i]);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d)) && n < max) {
			FILE *f;
			size_t len;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/children",
				 (int)out[i], de->d_name);
			f = fopen(path, "re");
			if (!f)
				continue;
			len = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[len] = 0;
			for (p = buf; n < max; p = end) {
				long c = strtol(p, &end, 10);

				if (end == p)
					break;
				out[n++] = c;
			}
		}
		closedir(d);
	}
	return n;
}

static int
stat_fields(pid_t pid, unsigned long long *utime, unsigned long long *stime,
	    char *state, int *ppid)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	p = strrchr(buf, ')');	/* comm may hold spaces and parentheses */
	if (!p)
		return -1;
	if (sscanf(p + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   state, ppid, utime, stime) != 4)
		return -1;
	return 0;
}

/*
 * The CPU seconds of a process's children that ended and were reaped
 * (cutime + cstime of /proc/PID/stat, in ticks): a relay that forks a
 * process per connection (socat) keeps its ended children's work there;
 * 0 if unreadable.
 */
static double
reaped_children_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	long long cu, cs;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %lld %lld", &cu, &cs) != 2)
		return 0;
	return (double)(cu + cs) / sysconf(_SC_CLK_TCK);
}

/*
 * A process's time on a CPU in nanoseconds: the sum over its threads of
 * the first field of /proc/PID/task/TID/schedstat (the scheduler's own
 * count, to the nanosecond), or -1 where that cannot be read. The ticks
 * of /proc/PID/stat are 10 ms: a relay that used 15 ms of a 1 s window
 * read as 10 or 20, or as nothing at all.
 */
static long long
schedstat_ns(pid_t pid)
{
	char path[64];
	struct dirent *de;
	long long total = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d))) {
		unsigned long long ns;
		FILE *f;
		int ok;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", (int)pid, de->d_name);
		if (!(f = fopen(path, "re"))) {
			if (errno == ENOENT)
				continue;	/* the thread ended meanwhile */
			total = -1;
			break;
		}
		ok = fscanf(f, "%llu", &ns) == 1;
		fclose(f);
		if (!ok) {
			total = -1;
			break;
		}
		total += (long long)ns;
	}
	closedir(d);
	return total;
}

double
ff_proc_cpu_s(pid_t pid)
{
	pid_t tree[256];
	int n = ff_proc_tree(pid, tree, 256), i, ppid;
	unsigned long long u, s;
	double total = 0;
	long long ns;
	char st;
	long hz = sysconf(_SC_CLK_TCK);

	if (stat_fields(pid, &u, &s, &st, &ppid) < 0)
		return -1;
	/*
	 * Each process by its threads' nanoseconds, or by its ticks where the
	 * kernel keeps no schedstat (CONFIG_SCHED_INFO off). The threads that
	 * ended are not counted by the first: relays keep theirs. Children
	 * that ended and were reaped count through their parent's cutime and
	 * cstime, or a relay forking per connection would seem to lose CPU.
	 */
	for (i = 0; i < n; i++) {
		if ((ns = schedstat_ns(tree[i])) >= 0)
			total += ns / 1e9;
		else if (stat_fields(tree[i], &u, &s, &st, &ppid) == 0)
			total += (double)(u + s) / hz;
		total += reaped_children_s(tree[i]);
	}
	/* On a grid of microseconds: differences of two reads then add up exactly. */
	return round(total * 1e6) / 1e6;
}

/* A "NAME: N kB" line of /proc/PID/status, in bytes; -1 if gone. */
static long long
status_kb(pid_t pid, const char *fmt)
{
	char path[64], line[256];
	long long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/*
 * One reading of each process of pid's tree (one(PID, arg)), summed; -1
 * when pid's own cannot be read (it is gone). A descendant gone meanwhile
 * counts nothing.
 */
static long long
tree_sum(pid_t pid, long long (*one)(pid_t, const char *), const char *arg)
{
	pid_t tree[256];
	int n = ff_proc_tree(pid, tree, 256), i;
	long long total = 0, v;

	if (one(pid, arg) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if ((v = one(tree[i], arg)) > 0)
			total += v;
	return total;
}

long long
ff_proc_hwm_bytes(pid_t pid)
{
	return tree_sum(pid, status_kb, "VmHWM: %lld kB");
}

long long
ff_proc_rss_bytes(pid_t pid)
{
	return tree_sum(pid, status_kb, "VmRSS: %lld kB");
}

/* Entries of /proc/PID/fd, or -1 if it cannot be read (for tree_sum: no argument). */
static long long
fd_count(pid_t pid, const char *unused __attribute__((unused)))
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

long
ff_proc_fds(pid_t pid)
{
	return tree_sum(pid, fd_count, NULL);
}

int
ff_proc_alive(pid_t pid)
{
	unsigned long long u, s;
	int ppid;
	char st;

	if (stat_fields(pid, &u, &s, &st, &ppid) < 0)
		return 0;
	return st != 'Z' && st != 'X';
}

pid_t
ff_proc_parent(pid_t pid)
{
	unsigned long long u, s;
	int ppid;
	char st;

	return stat_fields(pid, &u, &s, &st, &ppid) < 0 ? 0 : ppid;
}

void
ff_raise_nofile(long need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max ||
	    (need != LONG_MAX && rl.rlim_cur >= (rlim_t)need))
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}
