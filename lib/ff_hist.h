/*
 * flimflam - latency histograms (lib/ff_hist.c), included by ff.h.
 */
#ifndef FF_HIST_H
#define FF_HIST_H

#include <stdint.h>
#include <jansson.h>

/*
 * A latency histogram in nanoseconds, log-linear in the HdrHistogram
 * style: exact below 256 ns, then FF_HIST_SUB buckets per power of two,
 * so a percentile is at most 1/128 (0.8%) above the true value, from
 * 1 us to FF_HIST_MAX_NS. Values beyond are counted in `over` (a
 * percentile among them is the exact maximum). Constant memory (30 KiB),
 * no locks: one per thread, merged at the end.
 */
#define FF_HIST_SUB 128
#define FF_HIST_MAX_NS 60000000000ULL
#define FF_HIST_BUCKETS (29 * FF_HIST_SUB + FF_HIST_SUB)
struct ff_hist {
	uint64_t counts[FF_HIST_BUCKETS];
	uint64_t count, over, min_ns, max_ns, sum_ns;
};
void ff_hist_init(struct ff_hist *h);
void ff_hist_record(struct ff_hist *h, uint64_t ns);
void ff_hist_merge(struct ff_hist *into, const struct ff_hist *from);
/*
 * The value at percentile p (0..100): the top of the bucket holding the
 * ceil(p% of count)-th value, within [min, max]; p 0 is the minimum, 100
 * the maximum; 0 when empty.
 */
uint64_t ff_hist_percentile(const struct ff_hist *h, double p);
double ff_hist_mean_ns(const struct ff_hist *h);
/* [{"percentile":50,"us":12.3}, ...] from the minimum (0) to the maximum (100). */
json_t *ff_hist_distribution_json(const struct ff_hist *h);
/*
 * Into ev: PREFIX_count, PREFIX_avg_us, PREFIX_p50_us, _p90_us, _p99_us,
 * _p999_us (99.9), _p9999_us (99.99) and _max_us (null when empty).
 */
void ff_hist_summary_json(json_t *ev, const char *prefix, const struct ff_hist *h);
/*
 * The histogram file: a JSON object with format "flimflam-histogram",
 * unit "ns", count, over, min_ns, max_ns, sum_ns, buckets (the non-empty
 * ones as [low_ns, high_ns, count]) and distribution. ff_hist_write
 * writes it atomically; ff_hist_read reads it back (-1 with a warning).
 */
json_t *ff_hist_to_json(const struct ff_hist *h);
int ff_hist_from_json(const json_t *o, struct ff_hist *h);
int ff_hist_write(const char *path, const struct ff_hist *h);
int ff_hist_read(const char *path, struct ff_hist *h);

#endif
