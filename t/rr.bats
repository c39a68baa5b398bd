#!/usr/bin/env bats
# builtin-rr and builtin-crr through flimflam: run (summary, events, the
# histogram in the run directory), a relay stopped for 200 ms under --rate,
# bench and compare.

bats_require_minimum_version 1.5.0
load helper

setup() {
	skip_unless_program nginx
}

teardown() { wake_stopped; }

@test "run -w builtin-rr: the summary's transactions and percentiles, the histogram kept" {
	run -0 --separate-stderr flimflam run -w builtin-rr -r none --warmup 0 --duration 1 \
		--request-size 64 --response-size 1024
	[[ "$output" == *"  Workload:    builtin-rr"* ]]
	[[ "$output" =~ Operations:\ \ [0-9.]+\ [KM]?op/s\ \(([0-9]+)\ transactions\ in\ the\ window\) ]]
	[ "${BASH_REMATCH[1]}" -gt 100 ]
	[[ "$output" =~ Latency:\ \ \ \ \ p50\ [0-9.]+\ (us|ms),\ p90\ [0-9.]+\ (us|ms),\ p99\ [0-9.]+\ (us|ms),\ p99\.9\ [0-9.]+\ (us|ms|s),\ p99\.99\ [0-9.]+\ (us|ms|s),\ max\ [0-9.]+\ (us|ms|s) ]]
	[[ "$output" =~ Histogram:\ \ \ ([^[:space:]]+) ]]
	jq -e '.format == "flimflam-histogram" and .count > 100' "${BASH_REMATCH[1]}"
	[[ "$output" != *"Rate asked"* ]]
}

@test "run -w builtin-crr over nginx: connections, connect latency, the result's fields" {
	run -0 --separate-stderr flimflam run --json -w builtin-crr -r nginx --warmup 1 --duration 2 --jobs 3
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	jsonl_ok "$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.workload == "builtin-crr" and .jobs == 3 and
		.connections == .transactions and .transactions > 50 and .errors == 0 and
		.request_size == 1 and .response_size == 1 and .rate_per_s == null and
		.connect_latency_count == .transactions and
		.connect_latency_p50_us <= .latency_p50_us and
		(.connect_latency_distribution | length > 10) and
		(.histogram | test("/latency-hist.json$")) and
		(.connect_histogram | test("/connect-latency-hist.json$"))'
	dir=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	[ -s "$dir/latency-hist.json" ] && [ -s "$dir/connect-latency-hist.json" ]
	# samples and the result agree
	jq -e -s '([.[] | select(.event == "sample") | .operations] | add) ==
		(.[] | select(.event == "result") | .transactions)' "$BATS_TEST_TMPDIR/ev"
}

# nginx R1 (master and worker) stopped for 200 ms a second into the window,
# under --rate: every request due meanwhile waits, and the latency, counted
# from when each was due, shows it: about 100 of the window's 2000 requests
# fall in the stall, so p99 and p99.9 are among them (a client timing from
# the send would see one per connection, 10, under p99's rank), and the
# maximum is the stall. The rate is spread over 10 connections, 20 ms apart
# on each, so that relays pinned to CPUs that other work shares keep up the
# rest of the time: 2 connections at 500/s fell behind by seconds there.
@test "run -w builtin-rr --rate: nginx stopped for 200 ms in the window shows in p99.9 and max" {
	local f="$BATS_TEST_TMPDIR/ev"
	start_run "$f" -w builtin-rr -r nginx --warmup 1 --duration 4 --rate 500 --jobs 10
	stop_relay_for 0.2 "$f" 1
	wait_status "$RUN_PID"
	[ "$status" -eq 0 ] || { cat "$f.err"; false; }
	event_ok "$f" result '.rate_per_s == 500 and .latency_max_us >= 150000 and
		.latency_p99_us >= 100000 and .latency_p999_us >= 100000 and
		.latency_p999_us > 10 * .latency_p50_us'
}

@test "run --rate the relays cannot keep: the summary says so" {
	# Responses of 16 MiB on one job: a few hundred a second at most; 5000 asked.
	run -0 --separate-stderr flimflam run -w builtin-rr -r none --warmup 0 --duration 1 --jobs 1 \
		--rate 5000 --response-size 16777216
	[[ "$output" =~ Rate\ asked:\ \ 5000/s,\ NOT\ kept:\ [0-9.]+\ [K]?/s\ achieved ]] || { echo "$output"; false; }
}

@test "bench and compare: the request/response cases, latency p50 and p99 lower-better" {
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr flimflam bench -w builtin-rr,builtin-crr -r none --warmup 0 --duration 1 \
		--request-size 10 --output base.jsonl
	[[ "$output" == *"Latency (lower is better"* ]]
	[[ "$output" =~ builtin-rr\ +none\ +tcp\ +[0-9.]+[KM]?\ +[0-9.]+(us|ms)\ +[0-9.]+(us|ms)\ +[0-9.]+(us|ms) ]]
	jq -e -s 'length == 2 and all(.[]; .status == "ok" and .config.request_size == 10 and
		.config.response_size == 1 and .config.rate_per_s == null and
		.result.latency_p50_us > 0)' base.jsonl
	cp base.jsonl new.jsonl
	run -0 --separate-stderr flimflam compare --json base.jsonl new.jsonl
	echo "$output" | jq -e -s '
		[.[] | select(.event == "comparison" and .workload == "builtin-rr")] as $c |
		($c | map(.metric) | index("latency_p50_us") != null and index("latency_p99_us") != null and
			index("ops_per_s") != null) and
		all($c[] | select(.metric | startswith("latency_")); .better == "lower")'
	# Cases of other sizes are other cases: nothing in common.
	run -0 --separate-stderr flimflam bench -w builtin-rr -r none --warmup 0 --duration 1 \
		--request-size 20 --output other.jsonl
	run --separate-stderr flimflam compare --json base.jsonl other.jsonl
	echo "$output" | jq -e -s '[.[] | select(.event == "comparison")] | length == 0'
}

# The server killed a second into the window: the failed connections fail
# the run, no result, one line that says how many, and nothing is left.
@test "run -w builtin-crr: connections failing in the window fail the run" {
	local f="$BATS_TEST_TMPDIR/ev" spid dir
	start_run "$f" -w builtin-crr -r none --warmup 0 --duration 3
	wait_for_grep '"window"' "$f" 30
	spid=$(jq -r 'select(.event == "server") | .pid' "$f")
	dir=$(run_dir_of "$f")
	sleep 1
	kill -9 "$spid"
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	! grep -q '"result"' "$f"
	grep -q 'ff-workload: the builtin-crr client failed\|server.*was killed' "$f.err" || { cat "$f.err"; false; }
	[ -z "$(pids_of_run "$dir")" ]
}

# bench passes the request/response options to those cases only: flimflam
# run refuses them for any other workload, so a builtin case given them
# would fail.
@test "bench -w builtin,builtin-rr --rate: the rate goes to builtin-rr's case only" {
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr flimflam bench -w builtin,builtin-rr -r none --warmup 0 --duration 1 \
		--rate 200 --output mixed.jsonl
	jq -e -s 'length == 2 and all(.[]; .status == "ok") and
		(.[] | select(.config.workload == "builtin") | .config | has("rate_per_s") | not) and
		(.[] | select(.config.workload == "builtin-rr") | .config.rate_per_s == 200 and
			.result.rate_per_s == 200)' mixed.jsonl || { cat mixed.jsonl; false; }
}
