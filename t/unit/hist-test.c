/*
 * hist-test - unit tests of lib/ff_hist.c, one case per argument:
 * known, ranks, distribution, merge, bounds, relerr, file DIR. Prints each
 * failed check and exits 1 if any failed. Built and run by t/hist.bats.
 */
#include "ff.h"

#include <math.h>
#include <string.h>

static int failed;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("%s:%d: ", __FILE__, __LINE__); \
		printf(__VA_ARGS__); \
		putchar('\n'); \
		failed = 1; \
	} \
} while (0)

static struct ff_hist *
new_hist(void)
{
	struct ff_hist *h = malloc(sizeof(*h));

	if (!h)
		abort();
	ff_hist_init(h);
	return h;
}

/* Within the histogram's promise: not below, at most 1/128 above. */
static int
close_above(double got, double want)
{
	return got >= want - 1e-9 && got <= want * (1 + 1.0 / FF_HIST_SUB) + 1e-9;
}

/* 1 us .. 10 ms, each whole microsecond once: the ranks are the values. */
static void
known(void)
{
	struct ff_hist *h = new_hist();
	static const double ps[] = { 50, 90, 99, 99.9, 99.99 };
	static const int ranks[] = { 5000, 9000, 9900, 9990, 9999 };
	size_t i;

	for (i = 1; i <= 10000; i++)
		ff_hist_record(h, i * 1000);
	CHECK(h->count == 10000, "count %llu", (unsigned long long)h->count);
	CHECK(ff_hist_percentile(h, 0) == 1000, "min %llu",
	      (unsigned long long)ff_hist_percentile(h, 0));
	CHECK(ff_hist_percentile(h, 100) == 10000000, "max %llu",
	      (unsigned long long)ff_hist_percentile(h, 100));
	for (i = 0; i < FF_ARRAY_SIZE(ps); i++) {
		double want = ranks[i] * 1000.0,
		       got = ff_hist_percentile(h, ps[i]);

		CHECK(close_above(got, want), "p%g: %.0f ns, want %.0f", ps[i], got, want);
	}
	CHECK(fabs(ff_hist_mean_ns(h) - 5000500) < 1, "mean %f", ff_hist_mean_ns(h));
	free(h);
}

/*
 * The rank is ceil(p% of count), exactly: of 2000 values, p99.9 is the
 * 1998th (the third largest), p99.99 the 2000th; 99.9 / 100 * 2000 in
 * doubles is a hair over 1998, which must not make it the 1999th.
 */
static void
ranks(void)
{
	struct ff_hist *h = new_hist();
	int i;

	for (i = 0; i < 1997; i++)
		ff_hist_record(h, 1000);
	ff_hist_record(h, 10000000);
	ff_hist_record(h, 20000000);
	ff_hist_record(h, 30000000);
	CHECK(close_above(ff_hist_percentile(h, 99.9), 10000000), "p99.9 of 2000: %llu, want the third largest",
	      (unsigned long long)ff_hist_percentile(h, 99.9));
	CHECK(close_above(ff_hist_percentile(h, 99.85), 1000), "p99.85 of 2000: %llu, want the 1997th",
	      (unsigned long long)ff_hist_percentile(h, 99.85));
	CHECK(ff_hist_percentile(h, 99.99) == 30000000, "p99.99 of 2000: the largest");
	ff_hist_init(h);
	for (i = 0; i < 1000; i++)
		ff_hist_record(h, i < 990 ? 1000 : 5000000);
	CHECK(close_above(ff_hist_percentile(h, 99), 1000), "p99 of 990 + 10: %llu, want the 990th",
	      (unsigned long long)ff_hist_percentile(h, 99));
	free(h);
}

/*
 * A known distribution: an exponential with a mean of 200 us, a million
 * values placed at its quantiles. Percentile p must be within 1% of
 * -mean * ln(1 - p/100).
 */
static void
distribution(void)
{
	struct ff_hist *h = new_hist();
	static const double ps[] = { 50, 90, 99, 99.9, 99.99 };
	const double mean = 200e3;
	const int n = 1000000;
	json_t *ev = json_object(), *dist;
	size_t i;

	for (i = 0; i < (size_t)n; i++)
		ff_hist_record(h, (uint64_t)llround(-mean * log(1 - (i + 0.5) / n)));
	for (i = 0; i < FF_ARRAY_SIZE(ps); i++) {
		double want = -mean * log(1 - ps[i] / 100), got = ff_hist_percentile(h, ps[i]);

		CHECK(fabs(got - want) <= 0.01 * want, "p%g: %.0f ns, want %.0f", ps[i], got, want);
	}
	ff_hist_summary_json(ev, "latency", h);
	CHECK(ff_json_num(ev, "latency_count", -1) == n, "latency_count");
	CHECK(fabs(ff_json_num(ev, "latency_p999_us", -1) - -mean * log(1e-3) / 1e3) <
	      0.01 * -mean * log(1e-3) / 1e3, "latency_p999_us %f", ff_json_num(ev, "latency_p999_us", -1));
	CHECK(fabs(ff_json_num(ev, "latency_avg_us", -1) - 200) < 2, "latency_avg_us %f",
	      ff_json_num(ev, "latency_avg_us", -1));
	CHECK(ff_json_num(ev, "latency_max_us", -1) == h->max_ns / 1e3, "latency_max_us");
	dist = ff_hist_distribution_json(h);
	CHECK(json_array_size(dist) >= 10, "distribution rows %zu", json_array_size(dist));
	for (i = 1; i < json_array_size(dist); i++)
		CHECK(ff_json_num(json_array_get(dist, i), "us", -1) >=
		      ff_json_num(json_array_get(dist, i - 1), "us", -1) &&
		      ff_json_num(json_array_get(dist, i), "percentile", -1) >
		      ff_json_num(json_array_get(dist, i - 1), "percentile", -1),
		      "distribution row %zu not ascending", i);
	json_decref(dist);
	json_decref(ev);
	free(h);
}

/* Two halves merged are the histogram of the whole. */
static void
merge(void)
{
	struct ff_hist *a = new_hist(), *b = new_hist(), *all = new_hist(), *empty = new_hist();
	uint64_t v = 12345;
	int i;

	for (i = 0; i < 100000; i++) {
		v = v * 6364136223846793005ULL + 1442695040888963407ULL;
		ff_hist_record(i % 2 ? a : b, (v >> 20) % 50000000000ULL);
		ff_hist_record(all, (v >> 20) % 50000000000ULL);
	}
	ff_hist_record(b, 70000000000ULL);	/* beyond */
	ff_hist_record(all, 70000000000ULL);
	ff_hist_merge(a, b);
	ff_hist_merge(a, empty);
	CHECK(!memcmp(a, all, sizeof(*a)), "merged differs from the whole");
	ff_hist_merge(empty, all);
	CHECK(!memcmp(empty, all, sizeof(*a)), "merged into an empty one differs");
	free(a);
	free(b);
	free(all);
	free(empty);
}

/* 1 us, 60 s, and beyond. */
static void
bounds(void)
{
	struct ff_hist *h = new_hist();

	CHECK(ff_hist_percentile(h, 50) == 0 && h->count == 0, "empty");
	ff_hist_record(h, 1000);
	CHECK(ff_hist_percentile(h, 50) == 1000 && ff_hist_percentile(h, 99.99) == 1000,
	      "1 us alone: %llu", (unsigned long long)ff_hist_percentile(h, 50));
	ff_hist_record(h, FF_HIST_MAX_NS);
	CHECK(h->over == 0, "60 s is in range");
	CHECK(ff_hist_percentile(h, 100) == FF_HIST_MAX_NS, "60 s is the max");
	CHECK(close_above(ff_hist_percentile(h, 50), 1000), "p50 of {1 us, 60 s}: %llu",
	      (unsigned long long)ff_hist_percentile(h, 50));
	CHECK(ff_hist_percentile(h, 51) == FF_HIST_MAX_NS, "p51 of {1 us, 60 s}: %llu",
	      (unsigned long long)ff_hist_percentile(h, 51));
	ff_hist_record(h, FF_HIST_MAX_NS + 1);
	ff_hist_record(h, 3600000000000ULL);
	CHECK(h->over == 2 && h->count == 4, "beyond 60 s: over %llu count %llu",
	      (unsigned long long)h->over, (unsigned long long)h->count);
	CHECK(ff_hist_percentile(h, 100) == 3600000000000ULL, "the max beyond is exact");
	CHECK(ff_hist_percentile(h, 99) == 3600000000000ULL, "p99 beyond the range is the max");
	CHECK(close_above(ff_hist_percentile(h, 50), FF_HIST_MAX_NS), "p50: %llu",
	      (unsigned long long)ff_hist_percentile(h, 50));
	ff_hist_record(h, 0);
	CHECK(ff_hist_percentile(h, 0) == 0, "zero is recorded");
	free(h);
}

/*
 * Relative error from 1 us to 60 s: a value between a smaller and a larger
 * one (so the minimum and maximum do not clamp it) comes back as its
 * bucket's top, at most 1/128 above it. Every power of two and its
 * neighbours, and values spread evenly on a log scale.
 */
static void
relerr(void)
{
	struct ff_hist *h = new_hist();
	double worst = 0;
	int k, j;

	for (k = 0; k < 20000; k++) {
		uint64_t v;

		if (k < 3 * 36) {
			v = (1ULL << (k / 3 + 10)) + (k % 3) - 1;
			if (v > FF_HIST_MAX_NS)
				continue;
		} else {
			v = (uint64_t)(1000 * pow(60e9 / 1000, (k - 108) / (20000.0 - 109)));
		}
		ff_hist_init(h);
		ff_hist_record(h, 0);
		ff_hist_record(h, v);
		ff_hist_record(h, FF_HIST_MAX_NS + 1);
		for (j = 0; j < 1; j++) {
			double got = ff_hist_percentile(h, 50), e = (got - v) / v;

			CHECK(got >= v && e <= 1.0 / FF_HIST_SUB, "value %llu came back %.0f",
			      (unsigned long long)v, got);
			if (e > worst)
				worst = e;
		}
	}
	printf("worst relative error %.4f%%\n", 100 * worst);
	CHECK(worst > 0.005, "the error is suspiciously small: %f", worst);
	free(h);
}

/* Written and read back: the same histogram; damaged files are refused. */
static void
file(const char *dir)
{
	struct ff_hist *h = new_hist(), *back = new_hist();
	char *path = ff_asprintf("%s/h.json", dir), *bad = ff_asprintf("%s/bad.json", dir);
	FILE *f;
	int i;

	for (i = 1; i < 5000; i++)
		ff_hist_record(h, (uint64_t)i * i * 37);
	ff_hist_record(h, 90000000000ULL);
	CHECK(ff_hist_write(path, h) == 0, "write");
	CHECK(ff_hist_read(path, back) == 0, "read");
	CHECK(!memcmp(h, back, sizeof(*h)), "read back differs");
	f = fopen(bad, "w");
	fputs("{\"format\":\"flimflam-histogram\",\"sub_buckets\":128,\"count\":5,"
	      "\"buckets\":[[1000,1000,4]]}", f);
	fclose(f);
	CHECK(ff_hist_read(bad, back) == -1, "a count that does not add up is refused");
	f = fopen(bad, "w");
	fputs("{\"format\":\"flimflam-histogram\",\"sub_buckets\":128,\"count\":1,"
	      "\"buckets\":[[1000,1003,1]]}", f);
	fclose(f);
	CHECK(ff_hist_read(bad, back) == 0 && back->counts[0] == 0 &&
	      ff_hist_percentile(back, 50) == 0, "a bucket's start is taken (min/max absent: 0)");
	f = fopen(bad, "w");
	fputs("{\"format\":\"flimflam-histogram\",\"sub_buckets\":128,\"count\":1,"
	      "\"buckets\":[[1001,1001,1]]}", f);
	fclose(f);
	CHECK(ff_hist_read(bad, back) == -1, "a bucket that does not start a bucket is refused");
	free(path);
	free(bad);
	free(h);
	free(back);
}

int
main(int argc, char *argv[])
{
	int i;

	ff_setprog(argv[0]);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "known"))
			known();
		else if (!strcmp(argv[i], "ranks"))
			ranks();
		else if (!strcmp(argv[i], "distribution"))
			distribution();
		else if (!strcmp(argv[i], "merge"))
			merge();
		else if (!strcmp(argv[i], "bounds"))
			bounds();
		else if (!strcmp(argv[i], "relerr"))
			relerr();
		else if (!strcmp(argv[i], "file") && i + 1 < argc)
			file(argv[++i]);
		else {
			fprintf(stderr, "hist-test: unknown case '%s'\n", argv[i]);
			return 2;
		}
	}
	return failed;
}
