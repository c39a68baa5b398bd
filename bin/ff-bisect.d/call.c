/*
 * ff-bisect's calls: pure functions of a step's log ratios, so that
 * t/unit/bisect-sim draws rounds through the same code.
 *
 * A step looks after every batch of rounds it adds, as many times as its
 * budget allows, and stops as soon as it is decided. A fixed-rounds test
 * (the Wilcoxon signed-rank at 5%) looked at again and again calls an A/A
 * bisect different more often than 5%, the more the more it looks. Every
 * call here takes ff-bench's confidence sequence instead (paired.c,
 * conf_seq, the one bench --repeat auto decides by): it covers the true
 * change at every round at once with probability 95%, so looking after
 * every round and stopping when decided keeps each call's error under 5%.
 *
 * The midpoint's side, BAD above GOOD (D = log(bad / good) > 0): it is
 * like BAD when log(mid / good) is shown above 0, like GOOD when
 * log(mid / bad) is shown below 0. Either is wrong with probability under
 * 5% whatever the midpoint is, and each log ratio has the noise of two
 * runs (x = log(mid / good) + log(mid / bad), tested against 0, has the
 * same distance D to cover with the noise of six: three times the rounds).
 */
#include "ff-bisect.h"

#include <math.h>

int
gb_shown(const double *d, int n, struct paired *pr)
{
	conf_seq(d, n, ALPHA, pr);
	return pr->lo > 0 || pr->hi < 0;
}

enum call
mid_call(const double *mg, const double *mb, int n, double gb_est, struct paired *pg, struct paired *pb,
	 int *shown)
{
	int up = gb_est > 0, bad, good;

	conf_seq(mg, n, ALPHA, pg);
	conf_seq(mb, n, ALPHA, pb);
	*shown = 0;
	if (isnan(gb_est) || gb_est == 0 || isnan(pg->est) || isnan(pb->est))
		return C_NONE;
	/* Apart from GOOD the way BAD is; apart from BAD the way GOOD is. */
	bad = up ? pg->lo > 0 : pg->hi < 0;
	good = up ? pb->hi < 0 : pb->lo > 0;
	*shown = bad || good;
	if (bad != good)
		return bad ? C_BAD : C_GOOD;
	/* Neither shown, or both (a commit half way): the nearer side. */
	return fabs(pg->est) <= fabs(pb->est) ? C_GOOD : C_BAD;
}
