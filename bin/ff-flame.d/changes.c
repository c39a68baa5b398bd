/*
 * changes.c - --changes with --diff: which functions' share of the samples
 * changed the most between BASE and NEW, as one JSON object (a `changes`
 * event): each leaf function's self samples summed over its stacks (by
 * name, as the folded stacks name it), as a share of each side's samples,
 * the five that grew the most and the five that shrank the most.
 */
#include "ff-flame.h"

#include <string.h>

#define CHANGES_SHOWN 5

/* A function's share of the samples in each side (self samples). */
struct fshare {
	const char *name;
	double base, new;
};

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct fshare *)a)->name, ((const struct fshare *)b)->name);
}

/* Largest growth first; equal changes by name. */
static int
cmp_change(const void *a, const void *b)
{
	const struct fshare *x = a, *y = b;
	double dx = x->new - x->base, dy = y->new - y->base;

	return dx < dy ? 1 : dx > dy ? -1 : strcmp(x->name, y->name);
}

/*
 * The stacks' self samples summed by leaf function, into shares of each
 * side's samples, sorted by the change. Returns how many; each side's
 * samples in total[] (BASE, NEW).
 */
static size_t
shares(struct fshare **out, double total[2])
{
	struct fshare *f = ff_realloc(NULL, (nstacks ? nstacks : 1) * sizeof(*f));
	size_t n = 0, m = 0, i;

	total[0] = total[1] = 0;
	for (i = 0; i < nstacks; i++) {
		const struct stack *s = &stacks[i];

		if (!s->len)
			continue;
		/* count[1] is BASE's, count[0] NEW's. */
		f[n++] = (struct fshare){ frames[stack_ids[s->off + s->len - 1]].name,
					  (double)s->count[1], (double)s->count[0] };
		total[0] += s->count[1];
		total[1] += s->count[0];
	}
	qsort(f, n, sizeof(*f), cmp_name);
	for (i = 0; i < n; i++) {
		if (m && !strcmp(f[m - 1].name, f[i].name)) {
			f[m - 1].base += f[i].base;
			f[m - 1].new += f[i].new;
		} else {
			f[m++] = f[i];
		}
	}
	for (i = 0; i < m; i++) {
		f[i].base = total[0] > 0 ? f[i].base / total[0] : 0;
		f[i].new = total[1] > 0 ? f[i].new / total[1] : 0;
	}
	qsort(f, m, sizeof(*f), cmp_change);
	*out = f;
	return m;
}

/* Up to CHANGES_SHOWN functions that grew (dir 1) or shrank (-1) the most. */
static json_t *
top_changes(const struct fshare *f, size_t n, int dir)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n && i < CHANGES_SHOWN; i++) {
		const struct fshare *x = dir > 0 ? &f[i] : &f[n - 1 - i];
		double d = x->new - x->base;

		if ((dir > 0 && d <= 0) || (dir < 0 && d >= 0))
			break;
		json_array_append_new(a, json_pack("{s:o, s:f, s:f, s:f}", "function",
						   ff_json_text(x->name), "base_share", x->base,
						   "new_share", x->new, "change_points", 100 * d));
	}
	return a;
}

char *
changes_json(void)
{
	struct fshare *f;
	double total[2];
	size_t n = shares(&f, total);
	json_t *ev = ff_event("changes");
	char *s;

	json_object_set_new(ev, "base_samples", json_integer((json_int_t)total[0]));
	json_object_set_new(ev, "new_samples", json_integer((json_int_t)total[1]));
	json_object_set_new(ev, "too_few_samples", json_boolean(
		total[0] < RANK_MIN_SAMPLES || total[1] < RANK_MIN_SAMPLES));
	json_object_set_new(ev, "grew", top_changes(f, n, 1));
	json_object_set_new(ev, "shrank", top_changes(f, n, -1));
	/* Shares to the last digit: what reads them prints them as they are. */
	s = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(17));
	if (!s)
		ff_die("cannot encode the changes: out of memory");
	json_decref(ev);
	free(f);
	return s;
}
