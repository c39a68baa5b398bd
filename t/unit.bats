#!/usr/bin/env bats
# Unit tests of pure functions, as C programs `make` builds in t/unit/:
# ff-bench's statistics (t/unit/stats-test.c, against values computed
# independently by t/unit/mw-reference.py and by hand).

bats_require_minimum_version 1.5.0
load helper

@test "ff-bench statistics: Mann-Whitney U, exact and normal p with ties, medians and spreads" {
	[ -x "$TOP/t/unit/stats-test" ] || fail "t/unit/stats-test is not built (make builds it)"
	run -0 "$TOP/t/unit/stats-test"
	assert_line "0 failures"
	refute_line --partial "not ok"
	# Every check ran: 9 tests of 3 values, 5 single values, 5 stats of 3.
	[ "$(grep -c '^ok: ' <<<"$output")" -eq 47 ]
}

@test "ff-bench statistics: the reference values still come out of the reference script" {
	command -v python3 >/dev/null || skip "python3 is not on PATH"
	run -0 python3 "$TOP/t/unit/mw-reference.py"
	assert_line "inter4 exact (6.0, 0.6857142857142857)"
	assert_line "mid5 exact (10.0, 0.6904761904761905)"
	assert_line "ties4 normal 3 0.17203370892182296"
	assert_line "ties6 normal 3 0.017477872056174029"
	assert_line "big normal 210 0.0001439883723027259"
}
