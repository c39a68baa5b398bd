/*
 * ff-capture: what the window shared the machine with, the `machine`
 * object of the `resources` event: the CPU time of the whole machine
 * against the run's own processes', steal, runnable tasks, the load
 * average and the CPU clock, read at the window's start, its intervals'
 * ends and its end.
 */
#include "ff-capture.h"

#include <unistd.h>

static struct ff_machine mach;
static pid_t roots[MAX_TARGETS + 2];
static int nroots;

/*
 * The run's processes: the relays measured, this capture (its perf), and,
 * in a stream, everything under the program that started it (flimflam:
 * the pipeline's stages, the relays, the workload's client and server).
 * Alone (--pid), only the processes given and this capture.
 */
static void
run_roots(int alone)
{
	pid_t parent = getppid();
	int i;

	nroots = 0;
	if (!alone && parent > 1)
		roots[nroots++] = parent;
	roots[nroots++] = getpid();
	for (i = 0; i < opt.n; i++)
		roots[nroots++] = opt.t[i].pid;
}

void
machine_begin(int alone)
{
	run_roots(alone);
	ff_machine_begin(&mach, roots, nroots);
}

void
machine_tick(void)
{
	ff_machine_sample(&mach);
}

json_t *
machine_end(void)
{
	ff_machine_end(&mach, roots, nroots);
	return ff_machine_json(&mach);
}
