/*
 * t/unit/cputime: lib's ff_proc_cpu_s against the kernel's own clock of
 * this process, for t/unit.bats: it burns 4 ms of CPU between two reads
 * of each and prints "lib SECONDS clock SECONDS". Built by `make`, never
 * installed.
 */
#include "ff.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double
clock_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char *argv[])
{
	double l0, c0, l1, c1;
	volatile unsigned long spin = 0;

	(void)argc;
	ff_setprog(argv[0]);
	c0 = clock_cpu();
	l0 = ff_proc_cpu_s(getpid());
	while (clock_cpu() - c0 < 0.004)
		spin++;
	c1 = clock_cpu();
	l1 = ff_proc_cpu_s(getpid());
	if (l0 < 0 || l1 < 0)
		ff_die("cannot read this process's CPU time");
	printf("lib %.6f clock %.6f\n", l1 - l0, c1 - c0);
	return 0;
}
