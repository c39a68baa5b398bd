/*
 * ff_hist.c - latency histograms, log-linear: exact below 256 ns, then
 * FF_HIST_SUB buckets per power of two, so a bucket is never wider than
 * 1/128 of the values in it (0.8%). Up to FF_HIST_MAX_NS (60 s); beyond
 * that, values are counted apart (`over`), and the exact maximum is kept.
 * Constant memory (FF_HIST_BUCKETS counters), no locks: one per thread,
 * merged when the threads are done.
 */
#include "ff.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* log2 of the sub-buckets: 7 gives 128 per power of two. */
#define SUB_BITS 7

static int
bucket_of(uint64_t v)
{
	int e;

	if (v < 2 * FF_HIST_SUB)
		return (int)v;
	e = 63 - __builtin_clzll(v) - SUB_BITS;	/* >= 1 */
	return e * FF_HIST_SUB + (int)(v >> e);
}

/* The lowest value of bucket i; its width is ff_hist_low(i + 1) - low. */
static uint64_t
low_of(int i)
{
	int e;

	if (i < 2 * FF_HIST_SUB)
		return (uint64_t)i;
	e = i / FF_HIST_SUB - 1;
	return (uint64_t)(i - e * FF_HIST_SUB) << e;
}

/* The highest value of bucket i. */
static uint64_t
high_of(int i)
{
	return low_of(i + 1) - 1;
}

void
ff_hist_init(struct ff_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void
ff_hist_record(struct ff_hist *h, uint64_t ns)
{
	if (ns > FF_HIST_MAX_NS)
		h->over++;
	else
		h->counts[bucket_of(ns)]++;
	if (!h->count || ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->count++;
	h->sum_ns += ns;
}

void
ff_hist_merge(struct ff_hist *into, const struct ff_hist *from)
{
	int i;

	if (!from->count)
		return;
	for (i = 0; i < FF_HIST_BUCKETS; i++)
		into->counts[i] += from->counts[i];
	if (!into->count || from->min_ns < into->min_ns)
		into->min_ns = from->min_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
	into->count += from->count;
	into->over += from->over;
	into->sum_ns += from->sum_ns;
}

uint64_t
ff_hist_percentile(const struct ff_hist *h, double p)
{
	uint64_t rank, seen = 0, v;
	int i;

	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min_ns;
	if (p >= 100)
		return h->max_ns;
	/*
	 * ceil(p% of count), without the rounding of p / 100 pushing a whole
	 * rank up: 99.9 / 100 * 2000 is 1998.0000000000002 in doubles, and
	 * the 1999th of 2000 is the maximum's neighbour, not p99.9.
	 */
	rank = (uint64_t)ceil(p / 100 * (double)h->count * (1 - 1e-12));
	if (rank < 1)
		rank = 1;
	for (i = 0; i < FF_HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= rank) {
			v = high_of(i);
			/* The bucket's top, but never beyond what was seen. */
			if (v > h->max_ns)
				v = h->max_ns;
			if (v < h->min_ns)
				v = h->min_ns;
			return v;
		}
	}
	return h->max_ns;	/* in the values beyond the range */
}

double
ff_hist_mean_ns(const struct ff_hist *h)
{
	return h->count ? (double)h->sum_ns / h->count : 0;
}

/* The percentiles of a distribution, as its percentile:value_us pairs. */
static const double ladder[] = {
	0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100
};

json_t *
ff_hist_distribution_json(const struct ff_hist *h)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(ladder); i++) {
		json_t *row = json_object();

		json_object_set_new(row, "percentile", json_real(ladder[i]));
		json_object_set_new(row, "us", json_real(ff_hist_percentile(h, ladder[i]) / 1e3));
		json_array_append_new(a, row);
	}
	return a;
}

/*
 * Into `ev`: PREFIX_p50_us ... PREFIX_max_us, PREFIX_avg_us and
 * PREFIX_count; null values when the histogram is empty.
 */
void
ff_hist_summary_json(json_t *ev, const char *prefix, const struct ff_hist *h)
{
	static const struct { const char *name; double p; } cols[] = {
		{ "p50", 50 }, { "p90", 90 }, { "p99", 99 }, { "p999", 99.9 },
		{ "p9999", 99.99 }, { "max", 100 },
	};
	char key[64];
	size_t i;

	snprintf(key, sizeof(key), "%s_count", prefix);
	json_object_set_new(ev, key, json_integer((json_int_t)h->count));
	snprintf(key, sizeof(key), "%s_avg_us", prefix);
	json_object_set_new(ev, key, h->count ? json_real(ff_hist_mean_ns(h) / 1e3) : json_null());
	for (i = 0; i < FF_ARRAY_SIZE(cols); i++) {
		snprintf(key, sizeof(key), "%s_%s_us", prefix, cols[i].name);
		json_object_set_new(ev, key, h->count ?
				    json_real(ff_hist_percentile(h, cols[i].p) / 1e3) : json_null());
	}
}

json_t *
ff_hist_to_json(const struct ff_hist *h)
{
	json_t *o = json_object(), *b = json_array();
	int i;

	json_object_set_new(o, "format", json_string("flimflam-histogram"));
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "unit", json_string("ns"));
	json_object_set_new(o, "sub_buckets", json_integer(FF_HIST_SUB));
	json_object_set_new(o, "max_trackable_ns", json_integer(FF_HIST_MAX_NS));
	json_object_set_new(o, "count", json_integer((json_int_t)h->count));
	json_object_set_new(o, "over", json_integer((json_int_t)h->over));
	json_object_set_new(o, "min_ns", json_integer((json_int_t)h->min_ns));
	json_object_set_new(o, "max_ns", json_integer((json_int_t)h->max_ns));
	json_object_set_new(o, "sum_ns", json_real((double)h->sum_ns));
	for (i = 0; i < FF_HIST_BUCKETS; i++)
		if (h->counts[i])
			json_array_append_new(b, json_pack("[IIi]", (json_int_t)low_of(i),
							   (json_int_t)high_of(i),
							   (json_int_t)h->counts[i]));
	json_object_set_new(o, "buckets", b);
	json_object_set_new(o, "distribution", ff_hist_distribution_json(h));
	return o;
}

int
ff_hist_from_json(const json_t *o, struct ff_hist *h)
{
	const char *fmt = ff_json_str(o, "format");
	json_t *b = json_object_get(o, "buckets"), *row;
	uint64_t total = 0;
	size_t k;

	ff_hist_init(h);
	if (!fmt || strcmp(fmt, "flimflam-histogram") ||
	    ff_json_num(o, "sub_buckets", 0) != FF_HIST_SUB || !json_is_array(b))
		return -1;
	json_array_foreach(b, k, row) {
		json_int_t low = json_integer_value(json_array_get(row, 0)),
			   n = json_integer_value(json_array_get(row, 2));
		int i;

		if (low < 0 || (uint64_t)low > FF_HIST_MAX_NS || n <= 0)
			return -1;
		i = bucket_of((uint64_t)low);
		if (low_of(i) != (uint64_t)low)
			return -1;
		h->counts[i] += (uint64_t)n;
		total += (uint64_t)n;
	}
	h->over = (uint64_t)ff_json_num(o, "over", 0);
	h->count = (uint64_t)ff_json_num(o, "count", 0);
	h->min_ns = (uint64_t)ff_json_num(o, "min_ns", 0);
	h->max_ns = (uint64_t)ff_json_num(o, "max_ns", 0);
	h->sum_ns = (uint64_t)ff_json_num(o, "sum_ns", 0);
	return total + h->over == h->count ? 0 : -1;
}

int
ff_hist_write(const char *path, const struct ff_hist *h)
{
	json_t *o = ff_hist_to_json(h);
	char *text = json_dumps(o, JSON_COMPACT);
	int r;

	json_decref(o);
	if (!text) {
		ff_warn("out of memory");
		return -1;
	}
	r = ff_write_file(path, text, 0644);
	free(text);
	return r;
}

int
ff_hist_read(const char *path, struct ff_hist *h)
{
	json_error_t err;
	json_t *o = json_load_file(path, 0, &err);
	int r;

	if (!o) {
		ff_warn("cannot read the histogram '%s': %s", path, err.text);
		return -1;
	}
	r = ff_hist_from_json(o, h);
	json_decref(o);
	if (r < 0)
		ff_warn("'%s' is not a flimflam histogram", path);
	return r;
}
