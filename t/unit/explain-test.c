/*
 * explain-test - ff-bench explain's statistics (bin/ff-bench.d/explain_stats.c,
 * the code itself) on synthetic runs: each of FNS functions has a cost per
 * MB (a Zipf-like spread, as a profile's functions have), and each run
 * draws every function's cost from one log-normal distribution around it
 * (SD_PCT percent per run). An A/A draw gives both sides the same
 * distribution: no function may come out changed, at q < 0.05, in more
 * than 1 of 20 such draws (Benjamini-Hochberg holds the chance of any
 * false finding under no change to alpha); over many draws, that share
 * stays near alpha. A shifted draw gives one function of the tested ones
 * SHIFT_PCT more on the new side: it must be found, and alone.
 * Prints "ok: ..." or "not ok: ..." per check, then the failures.
 */
#include "../../bin/ff-bench.d/ff-bench.h"

#include <math.h>
#include <stdio.h>

#define FNS 40
#define RUNS 8
#define TOP 20
#define SD_PCT 10.0
#define SHIFT_PCT 50.0

static uint64_t state = 0x9e3779b97f4a7c15ULL;
static int failures;

static double
unif(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return ((state >> 11) + 0.5) / 9007199254740992.0;
}

static double
normal(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

static char keys[FNS][32];

/* One draw: FNS functions, RUNS runs a side; function `shifted` (-1: none) costs SHIFT_PCT more on the new side. */
static int
draw(struct xfn *f, int shifted, int *found_alone)
{
	int i, s, r, changed, nruns[2] = { RUNS, RUNS };

	for (i = 0; i < FNS; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].key = keys[i];
		for (s = 0; s < 2; s++)
			for (r = 0; r < RUNS; r++)
				f[i].share[s][r] = 100.0 / (i + 1) * exp(SD_PCT / 100 * normal()) *
						   (s == 1 && i == shifted ? 1 + SHIFT_PCT / 100 : 1);
	}
	explain_test(f, FNS, nruns, TOP, 0.05, &changed);
	*found_alone = 0;
	for (i = 0; i < TOP; i++)
		if (f[i].changed && shifted >= 0 && !strcmp(f[i].key, keys[shifted]))
			*found_alone = changed == 1;
	return changed;
}

static void
check(int ok, const char *what, int got, int of)
{
	printf("%s: %s: %d of %d\n", ok ? "ok" : "not ok", what, got, of);
	failures += !ok;
}

int
main(void)
{
	static struct xfn f[FNS];
	int i, any = 0, found = 0, alone;

	for (i = 0; i < FNS; i++)
		snprintf(keys[i], sizeof(keys[i]), "fn_%02d (synthetic)", i);
	for (i = 0; i < 20; i++)
		any += draw(f, -1, &alone) > 0;
	check(any <= 1, "A/A draws with a changed function (at most 1)", any, 20);
	for (i = 0; i < 20; i++) {
		draw(f, 5, &alone);
		found += alone;
	}
	check(found >= 19, "shifted draws where the shifted function alone changed (19 or more)", found, 20);
	/* Over many draws: the share with any false finding is about alpha, not above. */
	for (any = i = 0; i < 1000; i++)
		any += draw(f, -1, &alone) > 0;
	check(any <= 70, "A/A draws with a changed function (at most 7%)", any, 1000);
	printf("%d failures\n", failures);
	return failures != 0;
}
