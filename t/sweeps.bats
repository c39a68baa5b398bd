#!/usr/bin/env bats
# Sweeps (bench --jobs/--request-size/--response-size/--rate lists), the
# limits checked before the load, and the relays' memory per connection.

bats_require_minimum_version 1.5.0

load helper

@test "sweeps: bad lists are usage errors, before anything runs" {
	mkdir "$BATS_TEST_TMPDIR/d" && cd "$BATS_TEST_TMPDIR/d"
	run -2 --separate-stderr flimflam bench -w builtin -r none --jobs 1,,2
	[ "${stderr_lines[0]}" = "flimflam bench: --jobs: empty number in '1,,2'" ]
	run -2 --separate-stderr flimflam bench -w builtin -r none --jobs 0
	[ "${stderr_lines[0]}" = "flimflam bench: --jobs: 0 is out of range (1 to 65536)" ]
	run -2 --separate-stderr flimflam bench -w builtin -r none --jobs 1,x
	[ "${stderr_lines[0]}" = "flimflam bench: --jobs: 'x' is not a number" ]
	run -2 --separate-stderr flimflam bench -w builtin -r none --jobs 4,2,4
	[ "${stderr_lines[0]}" = "flimflam bench: --jobs: 4 is given twice" ]
	run -2 --separate-stderr flimflam bench -w builtin-rr -r none --rate 10,
	[ "${stderr_lines[0]}" = "flimflam bench: --rate: empty number in '10,'" ]
	run -2 --separate-stderr flimflam bench -w builtin-rr -r none --request-size 1,0
	[ "${stderr_lines[0]}" = "flimflam bench: --request-size: 0 is out of range (1 to 16777216)" ]
	# Nothing was written.
	[ -z "$(ls)" ]
}

@test "sweeps: each point is a case of its own, in the results, the table and compare" {
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr flimflam bench -w builtin,builtin-rr -r none --jobs 1,3 \
		--rate 400,800 --warmup 0 --duration 1 --output s.jsonl
	# builtin takes one case per --jobs value; builtin-rr one per jobs x rate.
	run -0 jq -sr 'map("\(.config.workload) \(.config.jobs) \(.config.rate_per_s)") | join(",")' s.jsonl
	[ "$output" = "builtin 1 null,builtin 3 null,builtin-rr 1 400,builtin-rr 1 800,builtin-rr 3 400,builtin-rr 3 800" ]
	run -0 jq -sr 'map(.status) | unique | join(",")' s.jsonl
	[ "$output" = "ok" ]
	run -0 flimflam bench summarize s.jsonl
	has_line '^Benchmark results \(warmup 0 s, duration 1 s, CPU limit 1\)$'
	has_line '^builtin jobs=1 +none +tcp '
	has_line '^builtin jobs=3 +none +tcp '
	has_line '^builtin-rr jobs=3 rate=800 +none +tcp '
	# Achieved rates: the points are what ran.
	run -0 jq -sr '.[] | select(.config.workload == "builtin-rr") | "\(.config.rate_per_s) \(.result.ops_per_s | round)"' s.jsonl
	[ "${lines[0]%% *}" = 400 ] && [ "${lines[1]%% *}" = 800 ]
	# Roughly the asked rate each (a loaded machine may fall short, not exceed).
	(( ${lines[1]#* } > ${lines[0]#* } ))
	# compare keeps the points apart (a copy of the file: no unmatched case).
	cp s.jsonl s2.jsonl
	run --separate-stderr flimflam compare s.jsonl s2.jsonl
	has_line '^builtin jobs=3 +none +tcp '
	refute_line --partial 'only in'
}
