/*
 * bisect-sim - ff-bisect's calls (bin/ff-bisect.d/call.c, the code itself)
 * on simulated rounds, looked at after every round as a step may:
 *
 * - A/A: GOOD and BAD the same relay. How often gb_shown calls them
 *   different at any look from round 3 to ROUNDS: under 5% (the check).
 *   The same rounds with the Wilcoxon signed-rank test at 5% looked at
 *   after every round from round 6 (what bisect did before): more, the
 *   error that repeated looks add (printed, and checked above 5%).
 * - The midpoint's side, BAD 5% above GOOD: a midpoint that is GOOD (or
 *   BAD) called the other side, shown, at any look: under 5% each.
 * - Power: how many rounds a 5% change takes to be shown, GOOD against
 *   BAD and the midpoint's side (printed, for the test's budget).
 *
 * A round's three runs (GOOD, MID, BAD) share the round's drift (+-30%,
 * cancelled by the pairing), run in a shuffled order with a drift of 3%
 * from one position to the next (so order moves a run, as load does), and
 * each has its own noise: normal, sd SD percent, plus a load episode with
 * probability 0.15 (up to 40% more) and a stall with probability 0.05
 * (90% more: the relay starved in a short window; these are the noise of
 * relay CPU per GB with 1-second windows on a loaded 2-CPU machine).
 *
 *   bisect-sim [-t DRAWS] [-r ROUNDS] [-s SD_PCT] [-x SEED]
 *
 * Prints key=value lines, then "ok: ..." or "not ok: ..." per check and
 * the failures.
 */
#include "../../bin/ff-bisect.d/ff-bisect.h"

#include <math.h>
#include <stdio.h>

static uint64_t seed = 28;
static double sd = 0.05;
static int failures;

static double
unif(void)
{
	return ff_random_unit(&seed);
}

static double
gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

static double
run_noise(void)
{
	double z = sd * gauss(), u = unif();

	if (u < 0.05)
		z += log(1.9);
	else if (u < 0.20)
		z += log(1 + 0.4 * unif());
	return z;
}

/* One round's log values of GOOD, MID and BAD, with MID's and BAD's changes (log ratios). */
static void
round_of(double mid, double bad, double v[3])
{
	int order[3] = { 0, 1, 2 }, i, j, t;
	double drift = 0.3 * (2 * unif() - 1);

	for (i = 2; i > 0; i--) {
		j = (int)(unif() * (i + 1)) % (i + 1);
		t = order[i], order[i] = order[j], order[j] = t;
	}
	for (i = 0; i < 3; i++)
		v[order[i]] = drift + 0.03 * i + run_noise();
	v[1] += mid;
	v[2] += bad;
}

static void
check(int ok, const char *what, double value, double bound)
{
	printf("%s: %s: %.4f (against %.4f)\n", ok ? "ok" : "not ok", what, value, bound);
	failures += !ok;
}

int
main(int argc, char *argv[])
{
	int draws = 1000, rounds = 36, c, k, i, gb_fp = 0, wr_fp = 0, wrong[2] = { 0, 0 };
	long gb_rounds = 0, side_rounds = 0;
	int gb_found = 0, side_found = 0;
	double *d = NULL, *mg = NULL, *mb = NULL, v[3], D = log(1.05);

	while ((c = getopt(argc, argv, "t:r:s:x:")) != -1) {
		if (c == 't')
			draws = atoi(optarg);
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 's')
			sd = atof(optarg) / 100;
		else if (c == 'x')
			seed = strtoull(optarg, NULL, 10);
		else {
			fprintf(stderr, "usage: bisect-sim [-t DRAWS] [-r ROUNDS] [-s SD_PCT] [-x SEED]\n");
			return 2;
		}
	}
	if (draws < 1 || rounds < 6) {
		fprintf(stderr, "bisect-sim: -t is 1 or more, -r 6 or more\n");
		return 2;
	}
	d = malloc(rounds * sizeof(*d));
	mg = malloc(rounds * sizeof(*mg));
	mb = malloc(rounds * sizeof(*mb));
	for (k = 0; k < draws; k++) {
		struct paired p, pg, pb;
		int cs_hit = 0, wr_hit = 0, side, shown, mid_is_bad, found = 0;

		/* A/A: GOOD against BAD, looked at after every round. */
		for (i = 0; i < rounds; i++) {
			round_of(0, 0, v);
			d[i] = v[2] - v[0];
			if (i + 1 >= 3 && !cs_hit)
				cs_hit = gb_shown(d, i + 1, &p);
			if (i + 1 >= 6 && !wr_hit) {
				signed_rank(d, i + 1, ALPHA, &p);
				wr_hit = p.p < ALPHA;
			}
		}
		gb_fp += cs_hit;
		wr_fp += wr_hit;
		/* BAD 5% above GOOD: shown, and how soon. */
		for (i = 0; i < rounds && !found; i++) {
			round_of(0, D, v);
			d[i] = v[2] - v[0];
			if (i + 1 >= 3 && gb_shown(d, i + 1, &p))
				found = 1, gb_found++, gb_rounds += i + 1;
		}
		/* The midpoint, GOOD or BAD by turns: called the other side, shown, at any look? */
		mid_is_bad = k % 2;
		for (i = 0, found = 0; i < rounds && !found; i++) {
			round_of(mid_is_bad ? D : 0, D, v);
			mg[i] = v[1] - v[0];
			mb[i] = v[1] - v[2];
			if (i + 1 < 3)
				continue;
			side = mid_call(mg, mb, i + 1, D, &pg, &pb, &shown);
			if (!shown)
				continue;
			found = 1;
			if (side != (mid_is_bad ? C_BAD : C_GOOD))
				wrong[mid_is_bad]++;
			else
				side_found++, side_rounds += i + 1;
		}
	}
	printf("draws=%d rounds=%d sd_pct=%g\n", draws, rounds, sd * 100);
	printf("aa_conf_seq_fp=%.4f\n", (double)gb_fp / draws);
	printf("aa_signed_rank_every_round_fp=%.4f\n", (double)wr_fp / draws);
	printf("mid_good_called_bad=%.4f mid_bad_called_good=%.4f\n", wrong[0] / (draws / 2.0),
	       wrong[1] / (draws - draws / 2.0));
	printf("change5_gb_shown=%.4f mean_rounds=%.1f\n", (double)gb_found / draws,
	       gb_found ? (double)gb_rounds / gb_found : NAN);
	printf("change5_side_shown=%.4f mean_rounds=%.1f\n", (double)side_found / draws,
	       side_found ? (double)side_rounds / side_found : NAN);
	check((double)gb_fp / draws < ALPHA, "A/A called different, looking after every round (conf_seq)",
	      (double)gb_fp / draws, ALPHA);
	check((double)wr_fp / draws > ALPHA, "the signed-rank test looked at every round errs more than alpha",
	      (double)wr_fp / draws, ALPHA);
	check(wrong[0] / (draws / 2.0) < ALPHA, "a GOOD midpoint shown like BAD", wrong[0] / (draws / 2.0), ALPHA);
	check(wrong[1] / (draws - draws / 2.0) < ALPHA, "a BAD midpoint shown like GOOD",
	      wrong[1] / (draws - draws / 2.0), ALPHA);
	printf("%d failures\n", failures);
	free(d), free(mg), free(mb);
	return failures != 0;
}
