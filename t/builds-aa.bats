#!/usr/bin/env bats
# The A/A bench of --build: one nginx under two labels, interleaved, must
# come out "no change". t/run runs this file alone, after the others: beside
# another file's runs, whose load comes and goes, one build's runs once met
# more of it than the other's (+85% throughput, q 0.016). The rest of
# --build's tests (t/builds.bats) run beside other files.

bats_require_minimum_version 1.5.0
load helper

setup() {
	two_nginx_builds
}

@test "A/A: one nginx under two labels, interleaved, comes out no change, against the first --build as base" {
	local f="$BATS_TEST_TMPDIR/aa.jsonl"
	# Seed 2 runs b first: the base is still a, the first --build.
	run --separate-stderr flimflam bench -w builtin -r nginx -p tcp --warmup 0 --duration 1 \
		--repeat 5 --build "a=$A" --build "b=$B" --seed 2 --output "$f"
	echo "$output"
	echo "$stderr"
	grep -q '^flimflam bench: \[1/10\] builtin nginx tcp build b' <<<"$stderr"
	# Copies of one binary: said before the runs, where the verdict will be.
	grep -q "^flimflam bench: builds a and b are one binary (sha256 [0-9a-f]\{12\}): their changes can only be noise$" <<<"$stderr"
	jq -e -s 'all(.[]; .build.order == {"a": 0, "b": 1}[.build.label])' "$f"
	# The verdict of b against a: a line per metric, each "no change" or
	# inconclusive (5 runs of 1 s rarely hold an interval within 2%, and a
	# run lost to a busy machine leaves fewer than 5), never better or worse.
	has_line "^Build b against a \\(the base\\)$"
	# One interleaved bench: its runs pair by round ("n=5 pairs", the signed-rank test).
	n=$(grep -cE '^builtin +nginx +tcp +.*(no change|inconclusive \[[0-9]+\]) \(n=[0-9] pairs\)$' <<<"$output")
	[ "$n" -ge 2 ]
	! grep -qE '(better|worse) \(n=' <<<"$output"
	# compare reads the one file by labels and says the same: the gate
	# passes (0) or cannot decide (3), and never fails.
	run --separate-stderr flimflam compare "$f" --base a --new b --threshold 2
	[ "$status" -eq 0 ] || [ "$status" -eq 3 ]
	! grep -qE '(better|worse) \(n=' <<<"$output"
}
