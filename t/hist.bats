#!/usr/bin/env bats
# lib/ff_hist.c, the latency histogram: t/unit/hist-test.c against lib/libff.a.

bats_require_minimum_version 1.5.0
load helper

setup_file() {
	[ -f "$TOP/lib/libff.a" ] || return 0
	# FF_TEST_CFLAGS: make check-asan's sanitizer flags, which libff.a was built with.
	gcc -std=c11 -Wall -Wextra -Werror ${FF_TEST_CFLAGS:-} -I"$TOP/lib" $(pkg-config --cflags jansson) \
		-o "$BATS_FILE_TMPDIR/hist-test" "$TOP/t/unit/hist-test.c" "$TOP/lib/libff.a" \
		$(pkg-config --libs jansson libpipeline) -lm
}

setup() {
	HT="$BATS_FILE_TMPDIR/hist-test"
	[ -x "$HT" ] || skip "lib/libff.a is not built (run make)"
}

@test "histogram: whole microseconds 1..10000 give their own ranks, min, max and mean" {
	run -0 "$HT" known
	[ -z "$output" ]
}

@test "histogram: a percentile's rank is exact: p99.9 of 2000 values is the third largest" {
	run -0 "$HT" ranks
	[ -z "$output" ]
}

@test "histogram: percentiles of a known exponential distribution within 1%" {
	run -0 "$HT" distribution
	[ -z "$output" ]
}

@test "histogram: two merged are the histogram of all their values" {
	run -0 "$HT" merge
	[ -z "$output" ]
}

@test "histogram: bounds: 1 us, 60 s, beyond 60 s (counted apart, exact max), zero" {
	run -0 "$HT" bounds
	[ -z "$output" ]
}

@test "histogram: relative error at most 1/128 from 1 us to 60 s" {
	run -0 "$HT" relerr
	[[ "$output" =~ ^worst\ relative\ error\ 0\.[0-9]+%$ ]]
}

@test "histogram: the file reads back the same; damaged ones are refused" {
	run -0 --separate-stderr "$HT" file "$BATS_TEST_TMPDIR"
	[ -z "$output" ]
	jq -e '.format == "flimflam-histogram" and .unit == "ns" and .count == 5000 and .over == 1 and
		.max_ns == 90000000000 and (.buckets | length) > 100 and
		(.distribution[-1] | .percentile == 100 and .us == 90000000)' "$BATS_TEST_TMPDIR/h.json"
}
