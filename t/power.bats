#!/usr/bin/env bats
# Power (issue 25): the runs of one round of an interleaved bench are pairs
# (compare's paired test), bench --repeat auto adds rounds until each case
# is decided, and its confidence sequence keeps the A/A false-positive rate
# under 5% however many rounds it looks at (t/unit/power-sim simulates the
# code of bin/ff-bench.d/paired.c itself).

bats_require_minimum_version 1.5.0
load helper

DRIFT="$TOP/t/fixtures/power/drift.jsonl"

# t/fixtures/power/drift.jsonl: 10 rounds of builds main and fix of one
# bench (seed 4242); each round's throughput drifts by -30% to +30%, the
# same for both builds, and fix is 5% faster (+-0.5%) in every round.
@test "compare: a +5% change under a +-30% drift between rounds is found by the paired test, not by Mann-Whitney" {
	run -0 --separate-stderr ff-bench compare --json "$DRIFT" --base main --new fix
	bits=$(jq -c 'select(.event == "comparison" and .metric == "bits_per_s")' <<<"$output")
	[ "$(jq -r .test <<<"$bits")" = "Wilcoxon signed-rank" ]
	[ "$(jq -r .verdict <<<"$bits")" = better ]
	# 10 pairs all one way: the exact two-sided p is 2 / 2^10.
	[ "$(jq .p <<<"$bits")" = 0.001953125 ]
	jq -e '.change_pct > 4.5 and .change_pct < 5.5 and .ci_low_pct > 4 and .ci_high_pct < 6' <<<"$bits"
	cpu=$(jq -c 'select(.event == "comparison" and .metric == "relay_cpu_s_per_gb")' <<<"$output")
	[ "$(jq -r .verdict <<<"$cpu")" = better ]

	run -0 ff-bench compare "$DRIFT" --base main --new fix
	assert_output --partial "Wilcoxon"
	assert_line --regexp '^builtin +nginx +tcp .* better \(n=10 pairs\)$'

	# The same runs with no bench to tie them (no seed): unpaired, and the drift hides the change.
	jq -c '.seed = null' "$DRIFT" >"$BATS_TEST_TMPDIR/unpaired.jsonl"
	run -0 --separate-stderr ff-bench compare --json "$BATS_TEST_TMPDIR/unpaired.jsonl" --base main --new fix
	bits=$(jq -c 'select(.event == "comparison" and .metric == "bits_per_s")' <<<"$output")
	[ "$(jq -r .test <<<"$bits")" = "Mann-Whitney U" ]
	[[ "$(jq -r .verdict <<<"$bits")" == inconclusive* ]]
	jq -e '.ci_low_pct < -10 and .ci_high_pct > 10' <<<"$bits"
}

@test "compare: the rows of a --repeat auto bench get its confidence sequence, not a fixed-rounds test" {
	# 15 rounds: the 10, then the first 5 again as rounds 11 to 15.
	jq -c '.sequential = true | .repeats = null' "$DRIFT" >"$BATS_TEST_TMPDIR/auto.jsonl"
	jq -c 'select(.repeat <= 5) | .sequential = true | .repeats = null | .repeat += 10 |
		.run_dir += "-again" | .time |= sub("T10"; "T11")' "$DRIFT" >>"$BATS_TEST_TMPDIR/auto.jsonl"
	run -0 --separate-stderr ff-bench compare --json "$BATS_TEST_TMPDIR/auto.jsonl" --base main --new fix
	bits=$(jq -c 'select(.event == "comparison" and .metric == "bits_per_s")' <<<"$output")
	[[ "$(jq -r .test <<<"$bits")" == "confidence sequence"* ]]
	[ "$(jq -r .verdict <<<"$bits")" = better ]
	[ "$(jq .n_base <<<"$bits")" = 15 ]
}

@test "signed-rank: p, Hodges-Lehmann and Tukey's interval against values computed by hand" {
	sim="$TOP/t/unit/power-sim"
	[ -x "$sim" ] || fail "t/unit/power-sim is not built (make builds it)"
	# 1..10: every sign positive, p = 2 / 2^10; the median of the 55 Walsh averages
	# is 5.5; k = 9 (P(T <= 8) = 0.0244 <= 0.025 < P(T <= 9)): the 9th smallest
	# Walsh average is 3 (1, 1.5, 2, 2, 2.5, 2.5, 3, 3, 3), the 9th largest 8.
	run -0 "$sim" signed < <(seq 10)
	[ "$output" = "n=10 p=0.001953125 est=5.5 lo=3 hi=8" ]
	# Ties: |d| midranks 1.5 1.5 3.5 3.5 5.5 5.5, T+ = 19.5 of 21; doubled, the
	# subsets of {3,3,7,7,11,11} summing to 39 or more are 3 of 64: p = 6/64.
	# Six pairs: k = 1 (1/64 <= 0.025 < 2/64), the interval is the whole range.
	run -0 "$sim" signed < <(printf '%s\n' 1 -1 2 2 3 3)
	[ "$output" = "n=6 p=0.09375 est=2 lo=-1 hi=3" ]
}

@test "power-sim: the confidence sequence's A/A false-positive rate stays under 5%, looked at after every round" {
	sim="$TOP/t/unit/power-sim"
	[ -x "$sim" ] || fail "t/unit/power-sim is not built (make builds it)"
	# One case, 60 rounds, each noise (heavy tails, load episodes) and a fixed seed.
	for d in normal t3 episodes; do
		run -0 "$sim" -t 300 -r 60 -s 3 -d "$d" -x 7 cs
		fp=$(sed -n 's/.* changed=\([0-9.]*\) .*/\1/p' <<<"$output")
		awk -v f="$fp" 'BEGIN { exit !(f <= 0.05) }' || fail "$d: A/A changed in $fp of the tries"
	done
	# A table: 4 cases x 7 metrics, stopped when each case's first metric is decided,
	# then compare's anytime p and Benjamini-Hochberg over the table.
	run -0 "$sim" -t 150 -r 40 -c 4 -m 7 -s 3 -d episodes -x 11 table
	any=$(sed -n 's/.* aa_any_auto=\([0-9.]*\) .*/\1/p' <<<"$output")
	awk -v f="$any" 'BEGIN { exit !(f <= 0.05) }' || fail "A/A tables with any better or worse: $any"
	# And it finds a change: 5% at a run-to-run sd of 1% within 40 rounds.
	run -0 "$sim" -t 100 -r 40 -s 1 -e 5 -x 3 cs
	found=$(sed -n 's/.* changed=\([0-9.]*\) .*/\1/p' <<<"$output")
	awk -v f="$found" 'BEGIN { exit !(f >= 0.9) }' || fail "a 5% change found in only $found"
}

@test "bench --repeat auto: bad budgets, and no builds, are one line and exit 2" {
	for arg in auto:0 auto:x auto: auto:-5 auto:10q auto:1e99; do
		run -2 --separate-stderr ff-bench -w builtin -r nginx --build a=/bin/true --build b=/bin/true \
			--repeat "$arg"
		[ "${#stderr_lines[@]}" = 1 ]
		[[ "$stderr" == "ff-bench: --repeat $arg: expected auto or auto:BUDGET"* ]]
		[ -z "$output" ]
	done
	run -2 --separate-stderr ff-bench -w builtin -r nginx --repeat auto:1m
	[ "$stderr" = "ff-bench: --repeat auto compares builds: give two or more --build LABEL=PATH" ]
}

@test "bench --repeat auto on the builtin workload: a tiny budget ends, names the undecided case and marks its rows" {
	skip_unless_program nginx
	nginx=$(command -v nginx)
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr ff-bench -w builtin -r nginx -p tcp --build "a=$nginx" --build "b=$nginx" \
		--warmup 1 --duration 1 --repeat auto:5s --output auto.jsonl
	assert_line --partial "Adaptive rounds (--repeat auto, budget 0:05)"
	assert_line --regexp '^builtin +nginx +tcp +b +relay_cpu_s_per_gb .* undecided$'
	assert_line "Undecided when the budget ended (1 of 1): builtin nginx tcp build b"
	[[ "$stderr" == *"rounds of 2 runs until every case is decided, for 0:05 at most"* ]]
	# One round: a round that would end past the budget does not start.
	[ "$(jq -s 'map(select(.status == "ok")) | length' auto.jsonl)" = 2 ]
	jq -e -s 'all(.[]; .sequential == true and .repeats == null and .repeat == 1)' auto.jsonl
}
