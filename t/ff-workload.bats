# ff-workload: the servers alone, and drive's honesty about failed clients.
bats_require_minimum_version 1.5.0
load helper

# serve_bg WORKLOAD: `ff-workload serve` with its reader a fifo we hold open;
# sets SERVE_PID, and SERVER_PORT/SERVER_PID once it is up.
serve_bg() {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	ff-workload serve -w "$1" --run-dir "$BATS_TEST_TMPDIR/d" >"$BATS_TEST_TMPDIR/fifo" &
	SERVE_PID=$!
	exec 8<"$BATS_TEST_TMPDIR/fifo"
	read -r start <&8
	read -r server <&8
	read -r end <&8
	echo "$server" >"$BATS_TEST_TMPDIR/server"
	SERVER_PORT=$(jq .port <<<"$server")
	SERVER_PID=$(jq .pid <<<"$server")
	[ "$(jq -r .event <<<"$end")" = end ]
}

# drive_by_hand WORKLOAD PATH: drive against the server, with a hand-made
# stream; the server event names the object h2load asks for.
drive_by_hand() {
	local w="$1" path="$2"
	{
		echo '{"event":"start","schema":1,"tool":"test"}'
		echo "{\"event\":\"server\",\"workload\":\"$w\",\"port\":$SERVER_PORT,\"path\":\"$path\"}"
		echo "{\"event\":\"topology\",\"relay\":\"none\",\"host\":\"127.0.0.1\",\"port\":$SERVER_PORT,\"relays\":[]}"
		echo '{"event":"end"}'
	} | ff-workload drive -w "$w" --warmup 0 --duration 1 --run-dir "$BATS_TEST_TMPDIR/d" | ff-capture
}

stop_serve() {
	exec 8<&-
	wait_status "$SERVE_PID"
}

@test "ff-workload serve: every server listens on 127.0.0.1, held until the reader closes" {
	for w in builtin iperf3 h2load h2load-h1 builtin-rr builtin-crr; do
		case $w in iperf3) skip_unless_program iperf3 ;; h2load) skip_unless_program nghttpd ;; h2load-h1) skip_unless_program nginx ;; esac
		rm -rf "$BATS_TEST_TMPDIR/fifo" "$BATS_TEST_TMPDIR/d"
		serve_bg "$w"
		# The listening socket is on loopback only.
		ss -Hltn "sport = :$SERVER_PORT" | awk '{print $4}' | grep -qx "127.0.0.1:$SERVER_PORT"
		[ "$(ss -Hltn "sport = :$SERVER_PORT" | awk '{print $4}' | grep -vc "^127\.0\.0\.1:")" -eq 0 ]
		stop_serve
		[ "$status" -eq 0 ]
		all_gone "$SERVER_PID"
		[ -z "$(pids_of_run "$BATS_TEST_TMPDIR/d")" ]
	done
}

# The address of --listen, in a network namespace of the test's own (root):
# traffic stays in it.
@test "ff-workload serve --listen: every server listens on that address only, and drive reaches it there" {
	[ "$(id -u)" -eq 0 ] || skip "a network namespace of the test's own needs root"
	unshare -n true 2>/dev/null || skip "cannot make a network namespace here (unshare -n failed)"
	skip_unless_program iperf3 nghttpd nginx h2load
	# shellcheck disable=SC2016 # the inner bash expands them
	run -0 unshare -n bash -c '
		set -e
		ip link set lo up
		ip addr add 10.77.9.1/32 dev lo
		for w in builtin iperf3 h2load h2load-h1 builtin-rr builtin-crr; do
			d="$0/$w"
			mkfifo "$0/fifo-$w"
			ff-workload serve -w "$w" --listen 10.77.9.1 --run-dir "$d" >"$0/fifo-$w" &
			exec 8<"$0/fifo-$w"
			read -r start <&8
			read -r server <&8
			port=$(jq .port <<<"$server")
			echo "$w $(jq -r .host <<<"$server") $(ss -Hltn "sport = :$port" | awk "{print \$4}" | tr "\n" " ")"
			# drive goes to the topology host: the server there.
			{
				echo "{\"event\":\"start\",\"schema\":1,\"tool\":\"test\"}"
				echo "$server"
				echo "{\"event\":\"topology\",\"relay\":\"none\",\"host\":\"10.77.9.1\",\"port\":$port,\"relays\":[]}"
				echo "{\"event\":\"end\"}"
			} | ff-workload drive -w "$w" --warmup 0 --duration 1 --run-dir "$d" 2>"$0/drive-$w.err" |
				ff-capture | jq -r "select(.event == \"result\") | \"\(.workload) result \(.bytes > 0)\"" || true
			sed "s/^/$w: /" "$0/drive-$w.err"
			exec 8<&-
			wait
		done' "$BATS_TEST_TMPDIR"
	echo "$output"
	for w in builtin iperf3 h2load h2load-h1 builtin-rr builtin-crr; do
		# The server event names the address; its only listener is on it.
		has_line "^$w 10\.77\.9\.1 10\.77\.9\.1:[0-9]+ \$"
		# The client reached it and measured: a result, or a window the
		# busy machine stretched (the tool measured it: it was connected).
		has_line "^$w result true\$" || has_line "^$w: ff-workload: .*$BUSY_ERE"
	done
}

@test "ff-workload drive: h2load whose every request fails fails the run" {
	skip_unless_program nghttpd h2load
	serve_bg h2load
	run -1 --separate-stderr drive_by_hand h2load /no-such-object
	[[ "$stderr" == *"ff-workload: h2load: no request succeeded ("*"4xx"* ]]
	[[ "$output" != *'"event":"result"'* ]]
	[[ "$output" == *'"event":"error"'* ]]
	stop_serve
}

@test "ff-workload drive: h2load's successful requests, latency percentiles from its log" {
	skip_unless_program nghttpd h2load
	serve_bg h2load
	run_steady drive_by_hand h2load /flimflam.txt
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.operations > 0 and .failed == 0 and
		.latency_p50_us <= .latency_p90_us and .latency_p90_us <= .latency_p99_us and
		.latency_p99_us <= .latency_max_us and (.ops_per_s * .duration_s - .operations | fabs) < 1'
	# The latency count matches the log's 2xx lines, and the operations.
	n=$(awk '$2 >= 200 && $2 < 300' "$BATS_TEST_TMPDIR/d/h2load-requests.log" | wc -l)
	[ "$(jq -s '.[] | select(.event == "result") | .operations' "$BATS_TEST_TMPDIR/ev")" -eq "$n" ]
	stop_serve
}

@test "ff-workload drive: an iperf3 client that cannot connect fails the run" {
	skip_unless_program iperf3
	SERVER_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	run -1 --separate-stderr drive_by_hand iperf3 ""
	[[ "$stderr" == *"ff-workload: iperf3: unable to connect"* || "$stderr" == *"ff-workload: the iperf3 client exited with status 1"* ]]
	[[ "$output" != *'"event":"result"'* ]]
}

@test "ff-workload drive: a client's own error line is the reason, not its help text" {
	skip_unless_program iperf3 h2load
	# A port no tool takes: each says so in its own words.
	SERVER_PORT=70000
	run -1 --separate-stderr drive_by_hand iperf3 ""
	[ "$stderr" = "ff-workload: the iperf3 client exited with status 1: iperf3: parameter error - port number must be between 1 and 65535 inclusive" ]
	[[ "$output" == *'"message":"the iperf3 client exited with status 1: iperf3: parameter error - port number'* ]]
	grep -q '^Usage: iperf3' "$BATS_TEST_TMPDIR/d/client.log"
	rm "$BATS_TEST_TMPDIR/d/client.log"
	run -1 --separate-stderr drive_by_hand h2load /flimflam.txt
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "ff-workload: the h2load client exited with status 1: "* ]]
	[[ "$stderr" == *"$(grep -v warning "$BATS_TEST_TMPDIR/d/client.log" | head -n 1)" ]]
}

# The report: a 31 s h2load run over relay none took 993 s, as each line of
# its request log was handed to sscanf still joined to the rest of the file
# (glibc measures the whole rest each time): quadratic in the log. Read line
# by line, the log of a 10 s window (150,000 to 300,000 lines; 12 s and more
# to read the old way) takes a fraction of a second after h2load is done.
@test "ff-workload drive: h2load's request log of a 10 s window read in linear time" {
	skip_unless_program h2load nghttpd
	local f="$BATS_TEST_TMPDIR/ev" d after
	run_steady flimflam run --json -w h2load -r none --warmup 0 --duration 10
	after=$(date +%s.%N)
	echo "$output" >"$f"
	d=$(run_dir_of "$f")
	event_ok "$f" result '.operations > 0'
	echo "# $(wc -l <"$d/h2load-requests.log") lines, read in $(echo "$after - $(stat -c %.9Y "$d/h2load.out")" | bc) s after h2load's end" >&3
	# h2load.out is written last, as h2load ends; then the log is read.
	[ "$(echo "$after - $(stat -c %.9Y "$d/h2load.out") < 5" | bc)" -eq 1 ]
}

# The report: after an nginx worker of a relay was killed mid-window, h2load
# and h2load-h1 printed a result and exited 0 (the intervals went to zero
# for half the window). A relay that lost a process fails the run, naming
# the relay and the process (ff-capture, which watches the relays).
@test "flimflam run: an nginx worker killed mid-window fails h2load and h2load-h1, naming the relay and the worker" {
	skip_unless_program nginx h2load nghttpd
	local w f r1 worker
	for w in h2load h2load-h1; do
		f="$BATS_TEST_TMPDIR/$w.ev"
		start_run "$f" -w "$w" -r nginx --warmup 0 --duration 5
		wait_for_grep '"event":"window"' "$f" 30
		r1=$(jq -r 'select(.event == "topology") | .relays[] | select(.role == "r1") | .pid' "$f")
		worker=$(descendants "$r1" | head -n 1)
		[ -n "$worker" ]
		sleep 1
		kill -KILL "$worker"
		wait_status "$RUN_PID"
		[ "$status" -eq 1 ] || { echo "$w: status $status"; cat "$f.err"; false; }
		grep -q "^ff-capture: r1 lost a process during the window: pid $worker, one of the [0-9]* of nginx (pid $r1) at its start, is gone" "$f.err" ||
			{ echo "$w:"; cat "$f.err"; false; }
		! grep -q '"event":"result"' "$f" || false
	done
}

# The report: SIGTERM and SIGINT changed nothing for minutes while drive
# read h2load's log (94% CPU). A stage honours a stop also while it
# computes: here drive is stopped in the middle of reading a log of
# 4,000,000 requests (an h2load that writes it, and a summary agreeing
# with it, so the reading is all that is left), within a second.
@test "ff-workload drive: SIGTERM while it reads h2load's log stops it at once" {
	local d="$BATS_TEST_TMPDIR" n=4000000 dp i
	mkdir -p "$d/bin"
	awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "%d\t200\t%d\n", 1796168742669126 + i * 15, 50 + i % 97 }' >"$d/big.log"
	{
		echo "finished in 60.00s, $((n / 60)).00 req/s, 32.74MB/s"
		echo "requests: $n total, $n started, $n done, $n succeeded, 0 failed, 0 errored, 0 timeout"
		echo "status codes: $n 2xx, 0 3xx, 0 4xx, 0 5xx"
		echo "traffic: 65.48MB (68661024) total, 763.64KB (781970) headers (space savings 93.26%), 63.62MB (66706432) data"
		echo "time for request:       21us      4.46ms        55us        58us    96.70%"
		echo "time to 1st byte:      215us       506us       361us       205us   100.00%"
	} >"$d/out.txt"
	printf '%s\n' '#!/bin/sh' \
		'while [ $# -gt 0 ]; do [ "$1" != --log-file ] || cp "$BIG" "$2"; shift; done' 'cat "$OUT"' >"$d/bin/h2load"
	chmod +x "$d/bin/h2load"
	{
		echo '{"event":"start","schema":1,"tool":"test"}'
		echo '{"event":"topology","relay":"none","host":"127.0.0.1","port":9,"relays":[]}'
		sleep 60 &
		echo $! >"$d/sleep.pid"
		wait
	} 3>&- | BIG="$d/big.log" OUT="$d/out.txt" PATH="$d/bin:$PATH" \
		ff-workload drive -w h2load --warmup 1 --duration 60 --run-dir "$d/r" >"$d/ev" 2>"$d/err" 3>&- &
	for ((i = 0; i < 300; i++)); do
		dp=$(pgrep -f "ff-workload drive -w h2load --warmup 1 --duration 60 --run-dir $d/r") && break
		sleep 0.05
	done
	[ -n "$dp" ]
	# Reading: 10 ticks of CPU (the log is a second's work or more).
	for ((i = 0; i < 600; i++)); do
		[ "$(awk '{ print $14 + $15 }' "/proc/$dp/stat")" -lt 10 ] || break
		sleep 0.05
	done
	kill -TERM "$dp"
	for ((i = 0; i < 20; i++)); do
		kill -0 "$dp" 2>/dev/null || break
		sleep 0.05
	done
	kill "$(cat "$d/sleep.pid")"
	kill -0 "$dp" 2>/dev/null && { kill -KILL "$dp"; echo "drive still ran 1 s after SIGTERM"; false; }
	grep -qx 'ff-workload: stopped by SIGTERM' "$d/err"
	! grep -q '"event":"result"' "$d/ev" || false
}

# h2load does not raise its open-files limit: with a soft limit under its
# --clients it aborted. The stages raise theirs to the hard limit, and what
# they start inherits it.
@test "flimflam run: h2load with more clients than the soft open-files limit" {
	skip_unless_program h2load nghttpd
	run_steady prlimit --nofile=256:20000 flimflam run --json -w h2load -r none --jobs 400 --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.operations > 0 and .errors == 0'
}

@test "ff-workload drive: an upstream that ends without end fails quietly" {
	run -1 --separate-stderr ff-workload drive --run-dir "$BATS_TEST_TMPDIR/d" < <(echo '{"event":"start","schema":1}')
	[ -z "$stderr" ]
}
