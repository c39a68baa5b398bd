# Signals: SIGINT, SIGTERM and SIGHUP at each phase stop everything and
# exit 128+n within 2 s with one line; SIGKILL of the dispatcher or of any
# stage leaves nothing behind.
bats_require_minimum_version 1.5.0
load helper

setup() {
	skip_unless_program nginx
}

# interrupt SIG WANT: signal RUN_PID, expect status WANT within 5 s, one
# line about it on stderr, and nothing of the run left. Needs $d. A quiet
# machine stops in 0.1 s, a busy one's perf took 2.8 s to end a record;
# 5 s still catches a stop that waits out the window or warmup (30 s here)
# or a server's or relay's start (15 s before it is given up).
interrupt() {
	local t0 t1
	t0=$(date +%s%N)
	kill -"$1" "$RUN_PID"
	wait_status "$RUN_PID"
	t1=$(date +%s%N)
	echo "status $status after $(((t1 - t0) / 1000000)) ms"
	[ "$status" -eq "$2" ]
	[ $(((t1 - t0) / 1000000)) -lt 5000 ]
	[ -z "$(pids_of_run "$d")" ]
	grep -c "^flimflam: stopped by SIG$1; nothing is left running" "$BATS_TEST_TMPDIR/ev.err"
	[ "$(grep -c "^flimflam: stopped by" "$BATS_TEST_TMPDIR/ev.err")" -eq 1 ]
	# Nothing else said it: the stages stay quiet in a pipeline.
	! grep -v -e "^flimflam: stopped by" -e '^flimflam: relays up' "$BATS_TEST_TMPDIR/ev.err" || false
}

# A stand-in that starts and never listens, first on PATH as NAME.
never_listens() {
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\nexec sleep 60\n' >"$BATS_TEST_TMPDIR/fake/$1"
	chmod +x "$BATS_TEST_TMPDIR/fake/$1"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH"
}

# wait_run_dir: the run's directory, once the dispatcher made it.
wait_run_dir() {
	for i in $(seq 100); do
		d=$(ls -d "$FLIMFLAM_RUNS"/*/ 2>/dev/null | tail -n 1)
		[ -n "$d" ] && { d=${d%/}; return 0; }
		sleep 0.05
	done
	return 1
}
@test "flimflam run: SIGINT during the warmup stops everything, exit 130" {
	start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 30 --duration 5
	wait_for_grep '"event":"topology"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	[ -n "$(pids_of_run "$d")" ]
	kill -INT "$RUN_PID"
	wait_status "$RUN_PID"
	[ "$status" -eq 130 ]
	[ -z "$(pids_of_run "$d")" ]
	[ "$(tail -n 1 "$BATS_TEST_TMPDIR/ev.err")" = "flimflam: stopped by SIGINT; nothing is left running; the run's files are in '$d'" ]
}

@test "flimflam run: SIGTERM during the window stops everything, exit 143, within 2 s" {
	start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 0 --duration 30
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	t0=$(date +%s%N)
	kill -TERM "$RUN_PID"
	wait_status "$RUN_PID"
	t1=$(date +%s%N)
	[ "$status" -eq 143 ]
	[ $(((t1 - t0) / 1000000)) -lt 2000 ]
	[ -z "$(pids_of_run "$d")" ]
	# No result was printed for the interrupted run.
	! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
}

@test "flimflam run: SIGKILL of the dispatcher leaves no process behind" {
	start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 30 --duration 5
	wait_for_grep '"event":"topology"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	pids=$(pids_of_run "$d")
	[ -n "$pids" ]
	kill -KILL "$RUN_PID"
	wait "$RUN_PID" || true
	for i in $(seq 40); do
		all_gone $pids && break
		sleep 0.1
	done
	all_gone $pids
	[ -z "$(pids_of_run "$d")" ]
}

@test "signals: SIGINT while the server starts" {
	skip_unless_program iperf3
	never_listens iperf3
	FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs" start_run "$BATS_TEST_TMPDIR/ev" -w iperf3 -r none
	FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs" wait_run_dir
	wait_for_file "$d/server.log" 5 || sleep 0.3
	interrupt INT 130
}

@test "signals: SIGTERM while the relays start" {
	never_listens nginx
	FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs" start_run "$BATS_TEST_TMPDIR/ev" -r nginx
	wait_for_grep '"event":"server"' "$BATS_TEST_TMPDIR/ev" 10
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	sleep 0.3
	[ -n "$(pids_of_run "$d")" ]
	interrupt TERM 143
}

@test "signals: SIGHUP during the window" {
	start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 0 --duration 30
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	interrupt HUP 129
}

@test "signals: a second Ctrl-C leaves nothing behind either" {
	start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 0 --duration 30
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	kill -INT "$RUN_PID"
	sleep 0.05
	kill -INT "$RUN_PID" 2>/dev/null || true
	wait_status "$RUN_PID"
	[ "$status" -eq 130 ]
	[ -z "$(pids_of_run "$d")" ]
}

@test "signals: SIGINT during stat's and record's window, and during flamegraph's" {
	skip_unless_program perf
	cd "$BATS_TEST_TMPDIR"
	for c in stat record flamegraph; do
		rm -f ev ev.err
		start_cmd "$BATS_TEST_TMPDIR/ev" "$c" -r nginx --warmup 0 --duration 30
		wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
		d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
		sleep 0.5	# perf is attached
		interrupt INT 130
		[ -z "$(ls perf.data* flamegraph.html 2>/dev/null)" ]
	done
}

@test "signals: SIGKILL of any stage fails the run and leaves nothing behind" {
	for s in serve ff-topology drive ff-capture; do
		rm -f "$BATS_TEST_TMPDIR/ev" "$BATS_TEST_TMPDIR/ev.err"
		start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 0 --duration 30
		wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
		d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
		p=$(stage_pid "$s")
		[ -n "$p" ]
		kill -KILL "$p"
		wait_status "$RUN_PID"
		echo "$s: status $status"
		[ "$status" -eq 1 ]
		grep -q "^flimflam: .* was killed by signal 9\|^flimflam: the run failed" "$BATS_TEST_TMPDIR/ev.err"
		for i in $(seq 40); do
			[ -z "$(pids_of_run "$d")" ] && break
			sleep 0.05
		done
		[ -z "$(pids_of_run "$d")" ]
		! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
	done
}
