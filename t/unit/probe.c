/*
 * t/unit/probe: what lib's ff_env_run takes of a program's output, for
 * t/unit.bats: `probe PROGRAM ARGS...` prints the bytes it read and the
 * program's status. Built by `make`, never installed.
 */
#include "ff.h"

#include <stdio.h>
#include <string.h>

int
main(int argc, char *argv[])
{
	char *out;
	int st;

	ff_setprog(argv[0]);
	if (argc < 2) {
		fprintf(stderr, "usage: probe PROGRAM [ARG...]\n");
		return 2;
	}
	out = ff_env_run(argv + 1, &st);
	printf("bytes %zu status %d\n", out ? strlen(out) : (size_t)0, st);
	free(out);
	return 0;
}
