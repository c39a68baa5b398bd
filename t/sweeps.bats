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

@test "sweeps: the limits that bind many connections are named before the load" {
	skip_unless_program nginx prlimit
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	mkdir "$BATS_TEST_TMPDIR/d" && cd "$BATS_TEST_TMPDIR/d"
	# Open files: a hard limit smaller than --jobs needs.
	run -1 --separate-stderr prlimit --nofile=256:900 "${unprivileged[@]}" flimflam run -w builtin -r nginx --jobs 1000
	[ "$stderr" = "flimflam: --jobs 1000 needs 2064 open files per process (2 a job), and this process may open at most 900 (ulimit -Hn): use fewer jobs, or raise the limit" ]
	# A bench takes the largest point's (relay none: the client's and the server's one a job).
	run -1 --separate-stderr prlimit --nofile=256:900 "${unprivileged[@]}" flimflam bench -w builtin -r none --jobs 1,1000
	[ "$stderr" = "flimflam bench: --jobs 1000 needs 1064 open files per process (1 a job), and this process may open at most 900 (ulimit -Hn): use fewer jobs, or raise the limit" ]
	nothing_started
	[ -z "$(ls)" ]
	# nginx's own: worker_connections (two a proxied connection), when open files allow.
	(( $(ulimit -Hn) >= 2 * 9000 + 64 )) || skip "ulimit -Hn $(ulimit -Hn) binds before worker_connections"
	run -1 --separate-stderr flimflam run -w builtin -r nginx --jobs 9000
	[ "$stderr" = "flimflam: --jobs 9000 needs 18001 connections of an nginx worker, and its worker_connections is 16384 (relay-conf/nginx-tcp.conf); with --workers 2, nginx's worker processes share the jobs, and they fit" ]
	nothing_started
	# In a bench, that point is skipped and named; the others run.
	run -0 --separate-stderr flimflam bench -w builtin -r nginx --jobs 2,9000 --warmup 0 --duration 1 --output b.jsonl
	run -0 jq -sr 'map("\(.config.jobs) \(.status) \(.reason)") | join(",")' b.jsonl
	[ "$output" = "9000 skipped --jobs 9000 needs 18001 connections of an nginx worker, and its worker_connections is 16384 (relay-conf/nginx-tcp.conf); with --workers 2, nginx's worker processes share the jobs, and they fit,2 ok null" ]
}

# The routers hold the clients' connections (r1) and the server's (r2), one
# descriptor a job each: under this machine's hard limit of 20000 open files,
# 10,000 jobs fit. On 2 CPUs, a router pinned to one (--cpu-limit 1) loses its
# route to r2 while it sets up thousands of streams (r1 stops listening, and
# closes the clients' connections): the routers get both CPUs, and the
# warmup the time to bring every stream up.
@test "sweeps: 10,000 connections through skrouterd run, or fail before the load naming the limit" {
	command -v skrouterd >/dev/null || skip "skrouterd is not installed here (the user's own build, on PATH)"
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr "${unprivileged[@]}" flimflam run -w builtin -r skrouterd --jobs 10000 \
		--cpu-limit 0 --warmup 30 --duration 3 --json
	if (( $(ulimit -Hn) < 10000 + 64 )); then
		[ "$status" = 1 ]
		[ "$stderr" = "flimflam: --jobs 10000 needs 10064 open files per process (1 a job), and this process may open at most $(ulimit -Hn) (ulimit -Hn): use fewer jobs, or raise the limit" ]
		nothing_started
		return
	fi
	[ "$status" = 0 ]
	echo "$output" >ev.jsonl
	event_ok ev.jsonl result '.jobs == 10000 and .bits_per_s > 0 and .errors == 0'
	# Every second of the window moved data, and each router held thousands of connections' worth.
	run -0 jq -sr '[.[] | select(.event == "interval") | .bytes > 0] | all' ev.jsonl
	[ "$output" = true ]
	run -0 jq -r 'select(.event == "resources") | .relays[] | .rss_end_bytes > 100000000' ev.jsonl
	[ "$output" = "$(printf 'true\ntrue')" ]
}

@test "sweeps: each run keeps the relays' RSS at the window's end and its growth; a --jobs sweep gives bytes per connection" {
	skip_unless_program nginx
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr flimflam bench -w builtin-rr -r nginx --jobs 2,400 --warmup 1 --duration 1 --output m.jsonl
	run -0 jq -sr '.[] | .resources.relays[] | select(.rss_growth_bytes == .rss_end_bytes - .rss_start_bytes and .rss_end_bytes > 1000000) | .role' m.jsonl
	[ "$output" = "$(printf 'r1\nr2\nr1\nr2')" ]
	# 400 connections hold more than 2 do, in every relay.
	run -0 jq -s '[.[0].resources.relays, .[1].resources.relays] | transpose | all(.[1].rss_end_bytes > .[0].rss_end_bytes)' m.jsonl
	[ "$output" = true ]
	run -0 flimflam bench summarize m.jsonl
	has_line '^Relay memory per connection'
	has_line '^builtin-rr +nginx +tcp +2 to 400 \(2\) +[0-9.]+KiB$'
	# The slope is what the two points say (KiB, to the table's 3 digits).
	want=$(jq -sr '((.[1].resources.relays | map(.rss_end_bytes) | add) - (.[0].resources.relays | map(.rss_end_bytes) | add)) / 398 / 1024' m.jsonl)
	got=$(sed -n 's/^builtin-rr .* \([0-9.]*\)KiB$/\1/p' <<<"$output")
	awk -v w="$want" -v g="$got" 'BEGIN { exit !(g > 0 && (g - w) ^ 2 < (w / 50) ^ 2) }'
}

@test "sweeps: skrouterd's memory pools from skstat -m as the window opens and at its end, as deltas" {
	command -v skrouterd >/dev/null && command -v skstat >/dev/null ||
		skip "skrouterd and skstat are not installed here (the user's own build, on PATH)"
	cd "$BATS_TEST_TMPDIR"
	flimflam skstat -w builtin --jobs 200 --warmup 1 --duration 3 --json >events.jsonl
	# Each router: its pools then and at the end, each delta after - before (a pool not listed
	# had taken nothing: 0, as the management queries' own pools before the first), taken inside
	# the window.
	run -0 jq -r 'select(.event == "skstat") | .pools | length > 0 and
		all(.delta.total == (.after.total // 0) - (.before.total // 0))' events.jsonl
	[ "$output" = "$(printf 'true\ntrue')" ]
	run -0 jq -r 'select(.event == "skstat") | .pools_before_s > 0 and .pools_before_s < 3' events.jsonl
	[ "$output" = "$(printf 'true\ntrue')" ]
	# The figures are the router's: each holds the 200 tcp connections of the load (R1 the
	# client's, R2 the server's), and a pool's total, taken from the heap, never falls.
	run -0 jq -sr '[.[] | select(.event == "skstat") | .pools[] | select(.type == "qd_tcp_connection_t") | .after.total] |
		length == 2 and all(. >= 200)' events.jsonl
	[ "$output" = true ]
	run -0 jq -sr '[.[] | select(.event == "skstat") | .pools[] | .delta.total // 0] | all(. >= 0)' events.jsonl
	[ "$output" = true ]
}

@test "sweeps: bench --slo: its bad uses are usage errors" {
	mkdir "$BATS_TEST_TMPDIR/d" && cd "$BATS_TEST_TMPDIR/d"
	run -2 --separate-stderr flimflam bench -w builtin-rr -r none --slo p98=5
	[ "${stderr_lines[0]}" = "flimflam bench: --slo: expected pNN=MS (p50, p90, p99, p999 or p9999), not 'p98=5'" ]
	run -2 --separate-stderr flimflam bench -w builtin-rr -r none --slo p99=x
	[ "${stderr_lines[0]}" = "flimflam bench: --slo: 'x' is not a number" ]
	run -2 --separate-stderr flimflam bench -w builtin,builtin-rr -r none --slo p99=5
	[ "${stderr_lines[0]}" = "flimflam bench: --slo searches the open-loop --rate of h2load, h2load-h1, builtin-rr, builtin-crr, not of 'builtin'" ]
	run -2 --separate-stderr flimflam bench -w builtin-rr -r none --slo p99=5 --rate 10,20
	[ "${stderr_lines[0]}" = "flimflam bench: --slo searches the rate: give --rate one start value, not a list" ]
	[ -z "$(ls)" ]
}

@test "sweeps: bench --slo: a target nothing meets halves the rate down to 1/s and says so" {
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr flimflam bench -w builtin-rr -r none --jobs 2 --rate 8 --slo p99=0.001 \
		--warmup 0 --duration 1 --output s.jsonl
	table=$output
	run -0 jq -sr 'map(.config.rate_per_s) | join(",")' s.jsonl
	[ "$output" = "8,4,2,1" ]
	output=$table
	has_line '^Capacity at p99 <= 0.001 ms, no errors, the achieved rate within 2% of the asked$'
	has_line '^builtin-rr jobs=2 +none +tcp +- +4: nothing meets it: 1/s does not \('
}

@test "sweeps: bench --slo: a loose target doubles the rate, then bisects to a knee or the budget" {
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr flimflam bench -w builtin-rr -r none --jobs 4 --rate 500 --slo p99=2000 \
		--warmup 0 --duration 1 --output s.jsonl
	has_line '^builtin-rr jobs=4 +none +tcp +[0-9]+/s +[0-9]+: (knee found: [0-9]+/s meets it, [0-9]+/s does not|budget spent \(12 runs\))'
	# Its first runs double the rate; it never runs more than 12.
	run -0 jq -sr 'map(.config.rate_per_s) | .[0:2] | join(",")' s.jsonl
	[ "$output" = "500,1000" ]
	(( $(wc -l <s.jsonl) <= 12 ))
}
