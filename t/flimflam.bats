# flimflam, the dispatcher, and `flimflam run` end to end through the real
# programs (the builtin workload, nginx), with its failure cases.
bats_require_minimum_version 1.5.0
load helper

setup() {
	skip_unless_program nginx
}

@test "flimflam: help lists every command of the original" {
	run -0 --separate-stderr flimflam --help
	[[ "${lines[0]}" == "usage: flimflam [--verbose] [--quiet] [--debug] [-h] {command} ..." ]]
	for c in check run stat skstat record c2c mem flamegraph bench; do
		[[ "$output" =~ $'\n'"    $c"[[:space:]] ]] || { echo "missing $c"; false; }
	done
}

@test "flimflam: an unknown command, and no command" {
	run -2 --separate-stderr flimflam frobnicate
	[ "$stderr" = "flimflam: 'frobnicate' is not a flimflam command; see 'flimflam --help'" ]
	run -2 --separate-stderr flimflam
	[ "${stderr_lines[0]}" = "flimflam: expected a command" ]
}

@test "flimflam run: the seed's help text, with its defaults" {
	run -0 flimflam run --help
	[[ "$output" == *"The selected workload (default 'builtin')"* ]]
	[[ "$output" == *"server (default 'skrouterd')"* ]]
	[[ "$output" == *"The number of concurrent workload jobs (default 2)"* ]]
	[[ "$output" == *"The warmup time in seconds (default 5)"* ]]
	[[ "$output" == *"(excluding warmup) in seconds (default 5)"* ]]
	[[ "$output" == *"(default 1)"* ]]
}

@test "flimflam run: the default relay without skrouterd on PATH names the others" {
	PATH=$(path_without_skrouterd) run -1 --separate-stderr flimflam run
	[ "$stderr" = "flimflam: relay 'skrouterd' needs skrouterd, which is not on PATH (the other relays: nghttpx, nginx, none)" ]
	[ ! -e "$FLIMFLAM_RUNS" ] || [ -z "$(ls -A "$FLIMFLAM_RUNS")" ]
}

@test "flimflam run -r none: builtin, the window asked for, samples, a sane stream" {
	run -0 --separate-stderr flimflam run --json -r none --warmup 1 --duration 2
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	jsonl_ok "$BATS_TEST_TMPDIR/ev"
	# One start per stage, then the story of the run, ending with end.
	[ "$(jq -s '[.[] | select(.event == "start")] | length' "$BATS_TEST_TMPDIR/ev")" -eq 4 ]
	jq -e -s '.[-1].event == "end"' "$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" window '.warmup_s == 1 and .duration_s == 2'
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 1e8 and (.duration_s - 2 | fabs) <= 0.25'
	[ "$(jq -s '[.[] | select(.event == "sample")] | length' "$BATS_TEST_TMPDIR/ev")" -eq 2 ]
	event_ok "$BATS_TEST_TMPDIR/ev" topology '.relay == "none" and (.relays | length) == 0'
	# The run directory is private.
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	[ "$(stat -c %a "$d")" = 700 ]
	[ "$(stat -c %u "$d")" = "$(id -u)" ]
}

@test "flimflam run -r nginx: throughput, both relays' CPU and memory, pinned apart" {
	run -0 --separate-stderr flimflam run --json -r nginx --warmup 1 --duration 2
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	jsonl_ok "$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 1e7 and (.duration_s - 2 | fabs) <= 0.25'
	event_ok "$BATS_TEST_TMPDIR/ev" resources '(.relays | length) == 2 and
		all(.relays[]; .cpu_fraction > 0.01 and .cpu_fraction <= 1.05 and .max_rss_bytes > 1000000) and
		((.window_s - 2) | fabs) < 0.05'
	event_ok "$BATS_TEST_TMPDIR/ev" topology '[.relays[].role] == ["r1", "r2"]'
	if [ "$(nproc)" -ge 2 ]; then
		event_ok "$BATS_TEST_TMPDIR/ev" topology '.relays[0].cpus != .relays[1].cpus and .cpus_shared == false'
	fi
	# The environment travels with the result.
	event_ok "$BATS_TEST_TMPDIR/ev" environment '.kernel != null and .nginx.path != null'
}

@test "flimflam run -r nginx: the human summary" {
	run -0 --separate-stderr flimflam run -r nginx --warmup 0 --duration 1
	[[ "$output" == Configuration* ]]
	[[ "$output" == *"  Relay:       nginx"* ]]
	[[ "$output" == *"Results"*"  Throughput:  "*"bit/s"* ]]
	[[ "$output" == *"Resources"*"  R1 CPU:"*"  R2 RSS:"* ]]
	[[ "$output" == *"Run directory: $FLIMFLAM_RUNS/"* ]]
	if [ "$(nproc)" -le 2 ]; then
		[[ "$output" == *"it shares CPUs with the relays"* ]]
	fi
}

# The independent count: in a network namespace of the test's own, the
# loopback device's byte counter sees every byte on every hop. The builtin
# echoes, so each byte the client counts crossed loopback once each way per
# hop: 2 hops x 2 directions through no relay... generally 2 * (relays + 1).
# Sampled the moment the window and the result events arrive.
independent_count() {
	local relay="$1" hops="$2"
	unshare --net true 2>/dev/null || skip "cannot make a network namespace here (needs root)"
	unshare --net bash -c '
		ip link set lo up
		lo() { awk -F"[: ]+" "/^ *lo:/ {print \$3}" /proc/net/dev; }
		flimflam run --json -r "$1" --warmup 1 --duration 2 | while IFS= read -r line; do
			case $line in
			*"\"event\":\"window\""*) echo "lo_start $(lo)" ;;
			*"\"event\":\"result\""*) echo "lo_end $(lo)"; echo "$line" ;;
			esac
		done' _ "$relay" >"$BATS_TEST_TMPDIR/count"
	cat "$BATS_TEST_TMPDIR/count"
	start=$(awk '/^lo_start/ {print $2}' "$BATS_TEST_TMPDIR/count")
	end=$(awk '/^lo_end/ {print $2}' "$BATS_TEST_TMPDIR/count")
	bytes=$(grep '"event":"result"' "$BATS_TEST_TMPDIR/count" | jq .bytes)
	echo "loopback: $((end - start)) bytes; client: $bytes bytes x $hops"
	[ "$bytes" -gt 0 ]
	# Within 10%, both ways.
	awk -v lo=$((end - start)) -v b="$bytes" -v h="$hops" \
		'BEGIN { r = lo / (b * h); print "ratio", r; exit !(r > 0.9 && r < 1.1) }'
}

@test "flimflam run: builtin's count agrees with loopback's byte counter (none)" {
	independent_count none 2
}

@test "flimflam run: builtin's count agrees with loopback's byte counter (nginx)" {
	independent_count nginx 6
}

@test "flimflam run: nothing is left running after a normal run" {
	run -0 --separate-stderr flimflam run --json -r nginx --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	[ -z "$(pids_of_run "$d")" ]
	for p in $(jq -r '.pid? // empty, (.relays[]?.pid)' "$BATS_TEST_TMPDIR/ev"); do
		all_gone "$p"
	done
}

