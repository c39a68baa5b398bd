#!/usr/bin/env bats
# The request/response workloads: ff-builtin-rr-server and
# ff-builtin-rr-client (builtin-rr, and builtin-crr with --crr), run directly.

bats_require_minimum_version 1.5.0
load helper

CLIENT="$TOP/builtin/ff-builtin-rr-client"
SERVER="$TOP/builtin/ff-builtin-rr-server"
PYSERVER="$TOP/t/fixtures/rr/server.py"

setup() { builtin_setup; }
teardown() { end_pids; }

# result_sane FILE: the result adds up with the samples, the histogram and
# its own fields; percentiles in order.
result_sane() {
	jq -e -s '
		(map(select(.event == "result")) | length == 1) and
		(.[-1] as $r | $r.event == "result" and
			$r.transactions == $r.operations and $r.latency_count == $r.transactions and
			$r.transactions > 0 and $r.errors == 0 and
			$r.bytes == $r.transactions * ($r.request_size + $r.response_size) and
			$r.bits == 8 * $r.bytes and
			($r.ops_per_s - $r.transactions / $r.duration_s | fabs) < 1e-6 * $r.ops_per_s and
			$r.latency_p50_us > 0 and $r.latency_p50_us <= $r.latency_p90_us and
			$r.latency_p90_us <= $r.latency_p99_us and $r.latency_p99_us <= $r.latency_p999_us and
			$r.latency_p999_us <= $r.latency_p9999_us and $r.latency_p9999_us <= $r.latency_max_us and
			($r.latency_distribution | length > 10 and .[0].percentile == 0 and
				.[-1].percentile == 100 and .[-1].us == $r.latency_max_us) and
			([.[] | select(.event == "sample") | .operations] | add) == $r.transactions) and
		all(.[]; keys_unsorted[0] == "event")
	' "$1" >/dev/null || { echo "not a sane result:"; cat "$1"; false; }
}

@test "ff-builtin-rr-client and -server -h print their usage" {
	run -0 --separate-stderr "$CLIENT" -h
	[[ "${lines[0]}" = "usage: ff-builtin-rr-client --port PORT [--host ADDRESS] [--crr] [--jobs N]" ]]
	[ -z "$stderr" ]
	run -0 --separate-stderr "$SERVER" --help
	[ "${lines[0]}" = "usage: ff-builtin-rr-server --port PORT [--address ADDRESS]" ]
}

@test "ff-builtin-rr-client and -server: bad options are usage errors" {
	run -2 --separate-stderr "$CLIENT" --jobs 2
	[ "${stderr_lines[0]}" = "ff-builtin-rr-client: missing --port" ]
	[[ "${stderr_lines[1]}" = "usage: ff-builtin-rr-client "* ]]
	run -2 --separate-stderr "$CLIENT" --port 5000 --request-size 0
	[ "${stderr_lines[0]}" = "ff-builtin-rr-client: --request-size: 0 is out of range (1 to 16777216)" ]
	run -2 --separate-stderr "$CLIENT" --port 5000 --response-size 16777217
	[ "${stderr_lines[0]}" = "ff-builtin-rr-client: --response-size: 16777217 is out of range (1 to 16777216)" ]
	run -2 --separate-stderr "$CLIENT" --port 5000 --rate 0
	[ "${stderr_lines[0]}" = "ff-builtin-rr-client: --rate: 0 is out of range (1 to 10000000)" ]
	run -2 --separate-stderr "$CLIENT" --port 5000 --rate 1.5
	[ "${stderr_lines[0]}" = "ff-builtin-rr-client: --rate: '1.5' is not a whole number" ]
	run -2 --separate-stderr "$CLIENT" --port 5000 --timeout x
	[[ "${stderr_lines[0]}" = "ff-builtin-rr-client: --timeout: 'x' is not a number"* ]]
	run -2 --separate-stderr "$CLIENT" --port 5000 --cpu-limit 1
	[ "${stderr_lines[0]}" = "ff-builtin-rr-client: unknown option '--cpu-limit'" ]
	run -2 --separate-stderr "$CLIENT" --port 5000 --histogram-dir /nonexistent/dir
	[[ "${stderr_lines[0]}" = "ff-builtin-rr-client: --histogram-dir: "* ]]
	run -2 --separate-stderr "$SERVER" --port 5000 --response-size -1
	[[ "${stderr_lines[0]}" = "ff-builtin-rr-server: --response-size: -1 is out of range"* ]]
	run -2 --separate-stderr "$SERVER"
	[ "${stderr_lines[0]}" = "ff-builtin-rr-server: missing --port" ]
	run -2 --separate-stderr "$SERVER" --port 5000 --address 10.1.2
	[ "${stderr_lines[0]}" = "ff-builtin-rr-server: --address: '10.1.2' is not an IPv4 address" ]
	run -2 --separate-stderr "$CLIENT" --port 5000 --host example
	[ "${stderr_lines[0]}" = "ff-builtin-rr-client: --host: 'example' is not an IPv4 address" ]
}

# The server answers each whole request, however it arrives, and nothing
# before: three requests in one write, then one in two halves.
@test "ff-builtin-rr-server answers every --request-size bytes with --response-size bytes" {
	local port
	port=$(free_port)
	listening "$port" "$SERVER" --port "$port" --request-size 1000 --response-size 70000
	run -0 python3 - "$port" "$TOP/t/fixtures/rr" <<-'EOF'
		import socket, sys
		sys.dont_write_bytecode = True	# nothing written into the checkout
		sys.path.insert(0, sys.argv[2])
		from framing import framing
		s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
		framing(s, 1000, 70000)
		print("ok")
	EOF
	[ "$output" = ok ]
	kill -TERM "$server"
	wait_exit "$server" 5
	[ "$status" -eq 0 ]
	[ ! -s "$BATS_TEST_TMPDIR/server.out" ] && [ ! -s "$BATS_TEST_TMPDIR/server.err" ]
}

@test "ff-builtin-rr-server: long connections are answered the same, with no epoll_wait a request" {
	# After 64 requests a connection moves to a thread of its own (blocking
	# recv and write), one per CPU: on one CPU, three long connections one
	# after the other each take the thread the one before gave back. The
	# answers stay whole and in step across the move, and 3 x 600 requests
	# cost far fewer epoll_waits than requests.
	skip_unless_program strace taskset
	local port traced n
	port=$(free_port)
	listening "$port" taskset -c 0 strace -f -qq -e trace=epoll_wait,epoll_pwait \
		-o "$BATS_TEST_TMPDIR/trace" "$SERVER" --port "$port" --request-size 1000 --response-size 7000
	traced=$(pgrep -P "$server")
	pids+=("$traced")
	run -0 python3 - "$port" "$TOP/t/fixtures/rr" <<-'EOF'
		import socket, sys
		sys.dont_write_bytecode = True	# nothing written into the checkout
		sys.path.insert(0, sys.argv[2])
		from framing import framing, one
		for c in range(3):
		    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
		    for i in range(600):
		        one(s, 1000, 7000)
		    framing(s, 1000, 7000)
		    s.close()
		print("ok")
	EOF
	[ "$output" = ok ]
	kill -TERM "$traced"
	wait_exit "$server" 5
	[ "$status" -eq 0 ]
	# Calls begun (a call resumed after another thread's is one more line).
	# Each connection: 64 or so before it moves, 128 if its thread was not
	# back yet at the 64th; 600 or more each if none moved.
	n=$(grep -c -E 'epoll_p?wait\(' "$BATS_TEST_TMPDIR/trace")
	echo "epoll_waits: $n for 3 x 605 requests"
	[ "$n" -lt 600 ]
}

@test "builtin-rr: window, samples, a result that adds up, the histogram file" {
	local port out="$BATS_TEST_TMPDIR/client.out"
	port=$(free_port)
	listening "$port" "$SERVER" --port "$port" --request-size 100 --response-size 3000
	run -0 --separate-stderr "$CLIENT" --port "$port" --jobs 3 --warmup 1 --duration 2 \
		--request-size 100 --response-size 3000 --histogram-dir "$BATS_TEST_TMPDIR"
	echo "$output" >"$out"
	[ -z "$stderr" ]
	# the intervals (default 1 s) come as the window closes, before the result
	jq -e -s '[.[] | .event] == ["window", "sample", "sample", "interval", "interval", "result"]' "$out"
	jq -e -s 'map(select(.event != "interval")) |
		length == 4 and .[0].event == "window" and .[0].warmup_s == 1 and
		.[0].duration_s == 2 and .[0].monotonic_s > 0 and [.[1:3][] | .event] == ["sample", "sample"] and
		(.[3] | .workload == "builtin-rr" and .jobs == 3 and .duration_s == 2 and
			.request_size == 100 and .response_size == 3000 and .rate_per_s == null and
			(has("connect_latency_p50_us") | not))' "$out"
	result_sane "$out"
	jq -e --slurpfile r "$out" '.format == "flimflam-histogram" and .count == $r[-1].transactions and
		.max_ns / 1000 == $r[-1].latency_max_us' "$BATS_TEST_TMPDIR/latency-hist.json"
	[ "$(jq -r 'select(.event == "result") | .histogram' "$out")" = "$BATS_TEST_TMPDIR/latency-hist.json" ]
	kill -0 "$server"
}

# Replies delayed by a known pattern, per connection: four of 2 ms, one of
# 60 ms. The delays are floors (a busy machine only adds): p50 is a fast
# one, p90 and above a slow one.
@test "builtin-rr: percentiles of a server that delays replies by a known pattern" {
	local port out="$BATS_TEST_TMPDIR/client.out"
	port=$(free_port)
	listening "$port" python3 "$PYSERVER" "$port" --delay-ms 2,2,2,2,60
	"$CLIENT" --port "$port" --jobs 2 --warmup 0 --duration 3 >"$out"
	result_sane "$out"
	jq -e '.transactions >= 50 and
		.latency_p50_us >= 2000 and .latency_p50_us < 40000 and
		.latency_p90_us >= 60000 and .latency_p99_us >= 60000 and
		.latency_max_us < 1000000' <(tail -n 1 "$out") ||
		{ tail -n 1 "$out"; false; }
}

# Every reply 1.2 s late, on 2 connections, a window of 3 s after 1 s.
# The server notes when it sent each reply (CLOCK_MONOTONIC, the clock of
# the window event's monotonic_s): the replies sent inside the window must
# be counted, those in the warmup or after must not, whenever their
# requests went (the one requested in the warmup and answered in the window
# counts; the one in flight when the window closes does not, and does not
# hold the client up). A reply sent up to 50 ms before an edge may land on
# either side of it on a busy machine.
@test "builtin-rr: transactions across the window's edges count by when they end" {
	local port out="$BATS_TEST_TMPDIR/client.out" t0 t1
	port=$(free_port)
	listening "$port" python3 "$PYSERVER" "$port" --delay-ms 1200 --counts "$BATS_TEST_TMPDIR/counts"
	t0=$(date +%s.%N)
	"$CLIENT" --port "$port" --jobs 2 --warmup 1 --duration 3 >"$out"
	t1=$(date +%s.%N)
	kill -TERM "$server"
	wait_exit "$server" 5
	result_sane "$out"
	jq -e '.latency_p50_us >= 1200000' <(tail -n 1 "$out")
	run -0 python3 - "$out" "$BATS_TEST_TMPDIR/counts" <<-'EOF'
		import json, sys
		ev = [json.loads(l) for l in open(sys.argv[1])]
		w = ev[0]["monotonic_s"]
		got = ev[-1]["transactions"]
		sent = json.load(open(sys.argv[2]))["replied"]
		must = sum(w <= t < w + 3 - 0.05 for t in sent)
		may = sum(w - 0.05 <= t < w or w + 3 - 0.05 <= t < w + 3 for t in sent)
		print(f"counted {got}; replies sent in the window {must}, near an edge {may}, in all {len(sent)}")
		sys.exit(not (must <= got <= must + may and must >= 4))
	EOF
	echo "$output" >&3
	# Done soon after the window closed at 4 s, not after the next replies
	# (due at 4.8 s): half a second for a busy machine to start and stop it.
	python3 -c 'import sys; sys.exit(float(sys.argv[2]) - float(sys.argv[1]) > 4.5)' "$t0" "$t1"
}

# A run at a rate: latency counts from when each request was due. The
# server stopped for 200 ms in the window holds up every request due then,
# about 400 of 6000: p99, p99.9 and the maximum show the stall (a client
# that timed from sending would see it in one transaction per connection,
# 10, under p99's rank). 10 connections, 5 ms apart on each, so that a busy
# machine keeps up the rest of the time.
@test "builtin-rr --rate: a 200 ms stall of the server shows in p99.9 and max" {
	local port out="$BATS_TEST_TMPDIR/client.out" cpid
	port=$(free_port)
	listening "$port" "$SERVER" --port "$port"
	"$CLIENT" --port "$port" --jobs 10 --warmup 1 --duration 3 --rate 2000 >"$out" &
	cpid=$!
	pids+=("$cpid")
	wait_for_grep '"sample"' "$out" 5
	kill -STOP "$server"
	sleep 0.2
	kill -CONT "$server"
	wait_exit "$cpid" 10
	[ "$status" -eq 0 ]
	result_sane "$out"
	jq -e '.rate_per_s == 2000 and (.ops_per_s - 2000 | fabs) < 100 and
		.latency_max_us >= 150000 and .latency_p99_us >= 100000 and
		.latency_p999_us >= 100000 and .latency_p999_us > 10 * .latency_p50_us' <(tail -n 1 "$out") ||
		{ tail -n 1 "$out"; false; }
}

@test "builtin-rr --rate: a rate the server cannot keep says so, achieved against asked" {
	local port out="$BATS_TEST_TMPDIR/client.out"
	port=$(free_port)
	listening "$port" python3 "$PYSERVER" "$port" --delay-ms 20
	run -0 --separate-stderr "$CLIENT" --port "$port" --jobs 1 --warmup 0 --duration 2 --rate 500
	echo "$output" >"$out"
	result_sane "$out"
	jq -e '.rate_per_s == 500 and .ops_per_s < 60 and .latency_max_us > 1000000' <(tail -n 1 "$out") ||
		{ tail -n 1 "$out"; echo "$stderr"; false; }
	[[ "$stderr" =~ ^ff-builtin-rr-client:\ [0-9]+\ transactions/s\ of\ the\ 500\ asked:\ the\ relay\ \(or\ the\ server\)\ did\ not\ keep\ up$ ]]
}

# Each at 2 jobs (a thread each, up to the CPUs) and at 12 (more than the
# most epoll threads, 8: the epoll path on any machine).
@test "builtin-crr: a connection per transaction, connect latency apart" {
	local port out="$BATS_TEST_TMPDIR/client.out" jobs
	for jobs in 2 12; do
		port=$(free_port)
		listening "$port" python3 "$PYSERVER" "$port" --request 10 --response 20 --counts "$BATS_TEST_TMPDIR/counts"
		run -0 --separate-stderr "$CLIENT" --crr --port "$port" --jobs "$jobs" --warmup 0 --duration 2 \
			--request-size 10 --response-size 20 --histogram-dir "$BATS_TEST_TMPDIR"
		echo "$output" >"$out"
		result_sane "$out"
		kill -TERM "$server"
		wait_exit "$server" 5
		jq -e --slurpfile c "$BATS_TEST_TMPDIR/counts" --argjson jobs "$jobs" '
			.workload == "builtin-crr" and .connections == .transactions and
			.jobs == $jobs and .jobs_answered == $jobs and
			.client_threads >= 1 and .client_threads <= ([$jobs, 8] | min) and
			.connect_latency_count == .transactions and
			.connect_latency_p50_us > 0 and .connect_latency_p50_us <= .latency_p50_us and
			.connect_latency_max_us <= .latency_max_us and
			.connect_histogram != null and
			# every transaction on a connection of its own (the one a job had
			# in flight when the window closed has no transaction)
			$c[0].connections - $c[0].transactions >= 0 and
			$c[0].connections - $c[0].transactions <= $jobs and $c[0].transactions >= .transactions' \
			<(tail -n 1 "$out")
		jq -e '.count > 0' "$BATS_TEST_TMPDIR/connect-latency-hist.json"
	done
}

@test "builtin-crr: a reader of the server's /proc/PID/fd during the load does not crash it" {
	# Listing /proc/PID/fd holds each of the server's files for a moment; a
	# connection closed then stayed in its epoll set, and epoll_wait gave
	# back the freed connection: "double free or corruption" in 6 of 8
	# 3-second runs before the server took each one out first.
	local port scanner
	port=$(free_port)
	listening "$port" "$SERVER" --port "$port"
	python3 -c '
import os, sys
d = "/proc/%s/fd" % sys.argv[1]
try:
    while True:
        os.listdir(d)
except OSError:
    pass' "$server" &
	scanner=$!
	pids+=("$scanner")
	run --separate-stderr "$CLIENT" --crr --port "$port" --jobs 20 --warmup 0 --duration 5
	kill -0 "$server" || { cat "$BATS_TEST_TMPDIR/server.err"; fail "the server died under the load"; }
	[ "$status" -eq 0 ] || fail "the client failed: $stderr"
	kill -TERM "$server"
	wait_exit "$server" 5
	[ "$status" -eq 0 ] || fail "the server ended with $status: $(cat "$BATS_TEST_TMPDIR/server.err")"
	[ ! -s "$BATS_TEST_TMPDIR/server.err" ]
}

@test "builtin-crr: refused connections are counted and fail the run, no result" {
	local port jobs
	for jobs in 2 12; do
		port=$(free_port)
		run -1 --separate-stderr "$CLIENT" --crr --port "$port" --jobs "$jobs" --warmup 0 --duration 1
		[[ "$output" != *'"result"'* ]]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" =~ ^ff-builtin-rr-client:\ [0-9]+\ of\ [0-9]+\ connections\ failed\ \(0\ timed\ out\)\;\ the\ first:\ cannot\ connect\ to\ 127\.0\.0\.1:$port:\ Connection\ refused$ ]]
	done
}

@test "builtin-crr: a server that never answers is counted as timeouts and fails the run" {
	local port jobs
	for jobs in 2 12; do
		port=$(free_port)
		listening "$port" python3 "$PYSERVER" "$port" --silent
		run -1 --separate-stderr "$CLIENT" --crr --port "$port" --jobs "$jobs" --warmup 0 --duration 3 --timeout 1
		[[ "$output" != *'"result"'* ]]
		[[ "$stderr" =~ ^ff-builtin-rr-client:\ ([0-9]+)\ of\ [0-9]+\ connections\ failed\ \(([0-9]+)\ timed\ out\)\;\ the\ first:\ no\ response\ in\ 1\ s$ ]]
		[ "${BASH_REMATCH[1]}" -ge 2 ] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
		kill -TERM "$server"
		wait_exit "$server" 5
	done
}

@test "builtin-rr: the server killed in the window is an error, no result" {
	server_killed_midway
}

@test "builtin-rr: a closed port is one clean error; SIGTERM stops it with 143, no result" {
	local port out="$BATS_TEST_TMPDIR/client.out" err="$BATS_TEST_TMPDIR/client.err"
	port=$(free_port)
	run -1 --separate-stderr "$CLIENT" --port "$port" --warmup 0 --duration 1
	[ "$stderr" = "ff-builtin-rr-client: cannot connect to 127.0.0.1:$port: Connection refused" ]
	listening "$port" "$SERVER" --port "$port"
	"$CLIENT" --crr --port "$port" --warmup 0 --duration 10 --rate 100 >"$out" 2>"$err" &
	pids+=($!)
	wait_for_grep '"window"' "$out" 5
	kill -TERM "${pids[-1]}"
	wait_exit "${pids[-1]}" 5
	[ "$status" -eq 143 ]
	[ "$(cat "$err")" = "ff-builtin-rr-client: stopped by SIGTERM" ]
	! grep -q '"result"' "$out"
}

# The epoll path (12 jobs: more than its most threads, 8) carries a first
# transaction on each connection before the warmup; one that gets no
# response in --timeout ends the run then, with no window.
@test "builtin-rr: 12 jobs with a server that never answers fail at the first transaction, no window" {
	local port
	port=$(free_port)
	listening "$port" python3 "$PYSERVER" "$port" --silent
	run -1 --separate-stderr "$CLIENT" --port "$port" --jobs 12 --warmup 0 --duration 2 --timeout 1
	[ -z "$output" ]
	[[ "$stderr" =~ ^ff-builtin-rr-client:\ connection\ ([0-9]+)\ to\ 127\.0\.0\.1:$port\ failed\ during\ the\ first\ transaction:\ no\ response\ in\ 1\ s$ ]]
	[ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[1]}" -le 12 ]
}

@test "builtin-rr: 300 jobs, every connection up and answered" {
	local out="$BATS_TEST_TMPDIR/client.out"
	all_connected "$SERVER" "$CLIENT" 300 "$out"
	result_sane "$out"
	# Closed loop on every connection: at least as many transactions as connections.
	jq -e '.jobs == 300 and .transactions >= 300 and .jobs_answered == 300' <(tail -n 1 "$out")
}

# A listener that never accepts: its queue fills and further connects hang
# (their SYNs dropped). When the window closes, the connects in progress
# are cut short with the transactions: the client ends at once, not after
# its 10 s timeout, and says that nothing completed.
@test "builtin-crr: connects hanging when the window closes do not hold the client up" {
	local port t0 t1
	port=$(free_port)
	listening "$port" python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(0); time.sleep(60)' "$port"
	t0=$(date +%s.%N)
	run -1 --separate-stderr "$CLIENT" --crr --port "$port" --jobs 4 --warmup 0 --duration 1
	t1=$(date +%s.%N)
	[ "$stderr" = "ff-builtin-rr-client: no transaction completed in the window" ]
	python3 -c 'import sys; sys.exit(float(sys.argv[2]) - float(sys.argv[1]) > 3)' "$t0" "$t1"
}
