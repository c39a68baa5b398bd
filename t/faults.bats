# Faults during a run: a server, relay or client that dies fails the run
# (exit 1), naming what died, with the end of its log; no result is
# printed as if it were good; nothing is left running.
bats_require_minimum_version 1.5.0
load helper

setup() {
	skip_unless_program nginx
}

@test "flimflam run: a relay killed mid-window fails the run, naming it, with its log" {
	start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 0 --duration 4
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	r2=$(jq -r 'select(.event == "topology") | .relays[1].pid' "$BATS_TEST_TMPDIR/ev")
	kill -KILL "$r2"
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	grep -q "^ff-topology: r2 (nginx) (pid $r2) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err"
	grep -q "flimflam: the run failed; its files are in '$d'" "$BATS_TEST_TMPDIR/ev.err"
	! grep -q '"event":"resources"' "$BATS_TEST_TMPDIR/ev" || false
	[ -z "$(pids_of_run "$d")" ]
}

@test "flimflam run: the server killed mid-window fails the run" {
	start_run "$BATS_TEST_TMPDIR/ev" -r none --warmup 0 --duration 4
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	server=$(jq -r 'select(.event == "server") | .pid' "$BATS_TEST_TMPDIR/ev")
	kill -KILL "$server"
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	grep -q "^ff-workload: server (pid $server) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err"
	! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
	[ -z "$(pids_of_run "$d")" ]
}

@test "faults: R1 killed mid-window" {
	start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 0 --duration 4
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	r1=$(jq -r 'select(.event == "topology") | .relays[0].pid' "$BATS_TEST_TMPDIR/ev")
	kill -KILL "$r1"
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	grep -q "^ff-topology: r1 (nginx) (pid $r1) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err"
	! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
	[ -z "$(pids_of_run "$d")" ]
}

@test "faults: the workload's client killed mid-window" {
	start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 0 --duration 4
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	client=$(pgrep -f "ff-builtin-client --port $(jq -r 'select(.event == "topology") | .port' "$BATS_TEST_TMPDIR/ev")")
	kill -KILL "$client"
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	grep -q "^ff-workload: client (pid $client) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err"
	grep -q '"event":"error"' "$BATS_TEST_TMPDIR/ev"
	! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
	[ -z "$(pids_of_run "$d")" ]
}

@test "faults: iperf3's server killed mid-window" {
	skip_unless_program iperf3
	start_run "$BATS_TEST_TMPDIR/ev" -w iperf3 -r nginx --warmup 0 --duration 4
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	server=$(jq -r 'select(.event == "server") | .pid' "$BATS_TEST_TMPDIR/ev")
	kill -KILL "$server"
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	grep -q "^ff-workload: server (pid $server) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err"
	! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
	[ -z "$(pids_of_run "$d")" ]
}

@test "faults: an h2load run through a relay whose server is gone fails" {
	skip_unless_program h2load nghttpd
	start_run "$BATS_TEST_TMPDIR/ev" -w h2load-h1 -r nginx -p http1 --warmup 0 --duration 3
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	server=$(jq -r 'select(.event == "server") | .pid' "$BATS_TEST_TMPDIR/ev")
	kill -KILL "$server"
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
	[ -z "$(pids_of_run "$d")" ]
}
