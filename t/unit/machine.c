/*
 * t/unit/machine: lib's readings of the machine from given texts, for
 * t/machine.bats: `machine STAT0 STAT1 OTHER_S WINDOW_S LOADAVG CPUINFO`
 * takes /proc/stat at a window's start and end, /proc/loadavg and
 * /proc/cpuinfo from files ("-": unreadable), the other processes' CPU
 * seconds over the window (-1: unreadable), and prints the `machine` object, then
 * "shared REASON" or "not shared". Built by `make`, never installed.
 */
#include "ff.h"

#include <stdio.h>
#include <string.h>

static char *
text(const char *path)
{
	char *t;

	if (!strcmp(path, "-"))
		return NULL;
	if (!(t = ff_read_file(path, NULL)))
		ff_die("cannot read '%s'", path);
	return t;
}

int
main(int argc, char *argv[])
{
	struct ff_machine m;
	char *t[4], *s, why[160];
	json_t *rsc;
	double mhz;
	int i;

	ff_setprog(argv[0]);
	if (argc != 7) {
		fprintf(stderr, "usage: machine STAT0 STAT1 OTHER_S WINDOW_S LOADAVG CPUINFO\n");
		return 2;
	}
	memset(&m, 0, sizeof(m));
	t[0] = text(argv[1]);
	t[1] = text(argv[2]);
	t[2] = text(argv[5]);
	t[3] = text(argv[6]);
	ff_cpu_stat_parse(t[0], &m.s0);
	ff_cpu_stat_parse(t[1], &m.s1);
	/* runnable tasks: the mean of the two ends' */
	for (i = 0; i < 2; i++)
		if ((i ? m.s1 : m.s0).procs_running >= 0) {
			m.running_sum += (i ? m.s1 : m.s0).procs_running;
			m.running_n++;
		}
	m.other_s = atof(argv[3]);
	m.t1 = atof(argv[4]);
	m.load1 = ff_loadavg_parse(t[2]);
	if ((mhz = ff_cpuinfo_mhz_parse(t[3])) > 0) {
		m.mhz_sum = mhz;
		m.mhz_n = 1;
	}
	rsc = json_pack("{s:f, s:o}", "window_s", m.t1, "machine", ff_machine_json(&m));
	s = json_dumps(json_object_get(rsc, "machine"), JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	printf("%s\n", s);
	if (ff_machine_shared(rsc, why, sizeof(why)))
		printf("shared %s\n", why);
	else
		printf("not shared\n");
	free(s);
	json_decref(rsc);
	for (i = 0; i < 4; i++)
		free(t[i]);
	return 0;
}
