# Faults during a run: a server, relay or client that dies fails the run
# (exit 1), naming what died, with the end of its log; no result is
# printed as if it were good; nothing is left running.
bats_require_minimum_version 1.5.0
load helper

setup() {
	skip_unless_program nginx
}

# kill_in_window WHO RUN-ARGS...: start a run, and once its window is open
# SIGKILL WHO (server, r1, r2 or client); wait for the run. Sets $victim,
# $d (the run directory) and $status, and checks what every fault must
# hold: exit 1, no result, nothing of the run left.
kill_in_window() {
	local who="$1" ev="$BATS_TEST_TMPDIR/ev"
	shift
	start_run "$ev" "$@" --warmup 0 --duration 4
	wait_for_grep '"event":"window"' "$ev" 15
	d=$(run_dir_of "$ev")
	case $who in
	server) victim=$(jq -r 'select(.event == "server") | .pid' "$ev") ;;
	r1) victim=$(jq -r 'select(.event == "topology") | .relays[0].pid' "$ev") ;;
	r2) victim=$(jq -r 'select(.event == "topology") | .relays[1].pid' "$ev") ;;
	client) victim=$(pgrep -f "ff-builtin-client --port $(jq -r 'select(.event == "topology") | .port' "$ev")") ;;
	esac
	[ -n "$victim" ]
	kill -KILL "$victim"
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	! grep -q '"event":"result"' "$ev" || false
	[ -z "$(pids_of_run "$d")" ]
}

@test "faults: R2 killed mid-window fails the run, naming it, with its log" {
	kill_in_window r2 -r nginx
	grep -q "^ff-topology: r2 (nginx) (pid $victim) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err"
	grep -q "flimflam: the run failed; its files are in '$d'" "$BATS_TEST_TMPDIR/ev.err"
	! grep -q '"event":"resources"' "$BATS_TEST_TMPDIR/ev" || false
}

@test "faults: R1 killed mid-window" {
	kill_in_window r1 -r nginx
	grep -q "^ff-topology: r1 (nginx) (pid $victim) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err"
}

@test "faults: the server killed mid-window" {
	kill_in_window server -r none
	# serve, which holds it, says how it died; drive, whose client the
	# reset reaches first, names it too when serve is told last.
	grep -qE "^ff-workload: (server \(pid $victim\) was killed by signal 9|the builtin server \(pid $victim\) died during the run)" \
		"$BATS_TEST_TMPDIR/ev.err" || { cat "$BATS_TEST_TMPDIR/ev.err"; false; }
}

@test "faults: the workload's client killed mid-window" {
	kill_in_window client -r nginx
	grep -q "^ff-workload: client (pid $victim) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err"
	grep -q '"event":"error"' "$BATS_TEST_TMPDIR/ev"
}

@test "faults: iperf3's server killed mid-window" {
	skip_unless_program iperf3
	kill_in_window server -w iperf3 -r nginx
	grep -q "^ff-workload: server (pid $victim) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err" ||
		{ cat "$BATS_TEST_TMPDIR/ev.err"; false; }
}

@test "faults: an h2load run through a relay whose server is gone fails" {
	skip_unless_program h2load
	kill_in_window server -w h2load-h1 -r nginx -p http1
}

# A client that hangs: a stand-in named h2load first on PATH that sleeps
# (it tests flimflam's bound, it measures nothing). The run is stopped at
# warmup + duration + the 10 s margin, says which program and how long it
# had, and leaves nothing behind.
@test "faults: a workload client that hangs is stopped at warmup + duration + margin" {
	skip_unless_program nghttpd
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\nexec sleep 600\n' >"$BATS_TEST_TMPDIR/bin/h2load"
	chmod +x "$BATS_TEST_TMPDIR/bin/h2load"
	local ev="$BATS_TEST_TMPDIR/ev" t0=$SECONDS
	PATH="$BATS_TEST_TMPDIR/bin:$PATH" start_run "$ev" -w h2load -r none --warmup 0 --duration 1
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	# 11 s, plus 5 s for the hanging version probe before a window without warmup.
	[ $((SECONDS - t0)) -lt 40 ]
	d=$(run_dir_of "$ev")
	grep -qx "ff-workload: h2load did not finish within the 11 s it was given (warmup 0 s + duration 1 s + 10 s margin) and was stopped; its log: '$d/client.log'" "$ev.err"
	grep -q '"event":"error".*h2load did not finish within the 11 s' "$ev"
	! grep -q '"event":"result"' "$ev" || false
	# The stand-in ran in the run directory: pids_of_run would name it.
	[ -z "$(pids_of_run "$d")" ]
}

# full_disk ARGS...: `flimflam run --json ARGS` with its run directories on
# a 4 MiB tmpfs mounted in a private mount namespace (the machine's mounts
# are untouched), which a file fills once the window opens; events to
# $BATS_TEST_TMPDIR/ev, stderr to ev.err, the status in $status.
full_disk() {
	local dir="$BATS_TEST_TMPDIR/full" ev="$BATS_TEST_TMPDIR/ev"
	unshare -m true 2>/dev/null || skip "no private mount namespace here (unshare -m)"
	mkdir -p "$dir"
	status=0
	unshare -m bash -c 'mount -t tmpfs -o size=4m tmpfs "$1" || exit 99
		dir=$1 ev=$2; shift 2
		FLIMFLAM_RUNS="$dir" flimflam run --json "$@" >"$ev" 2>"$ev.err" &
		pid=$!
		for ((i = 0; i < 300; i++)); do
			grep -q "\"event\":\"window\"" "$ev" && break
			sleep 0.05
		done
		dd if=/dev/zero of="$dir/fill" bs=4k 2>/dev/null
		wait $pid' - "$dir" "$ev" "$@" 3>&- || status=$?
	[ "$status" -ne 99 ]
}

# The report: on a full disk h2load's request log was cut short, and the
# latency came from 43,321 of 72,461 requests with exit 0. Every file read
# back for a figure is checked against the tool's own counts.
@test "faults: a full disk cuts h2load's request log short: the run fails, no latency from part of it" {
	skip_unless_program h2load nghttpd
	full_disk -w h2load -r none --warmup 0 --duration 2
	[ "$status" -eq 1 ]
	grep -Eq "^ff-workload: h2load's (request log '.*/h2load-requests.log'|output '.*/h2load.out') is incomplete \(" "$BATS_TEST_TMPDIR/ev.err"
	[ "$(grep -c '^ff-workload' "$BATS_TEST_TMPDIR/ev.err")" -eq 1 ]
	grep -q '"event":"error".*is incomplete' "$BATS_TEST_TMPDIR/ev"
	! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
}

@test "faults: iperf3's JSON on a full disk is not whole: the run fails in one line" {
	skip_unless_program iperf3
	full_disk -w iperf3 -r none --warmup 0 --duration 2
	[ "$status" -eq 1 ]
	grep -q "^ff-workload: iperf3's output '.*/iperf3-client.json' is not whole JSON (" "$BATS_TEST_TMPDIR/ev.err"
	[ "$(grep -c '^ff-workload' "$BATS_TEST_TMPDIR/ev.err")" -eq 1 ]
	! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
}

@test "faults: relays that the teardown stopped after the server died are not said to have died during the window" {
	# A test-only drive that, once the real one has ended, holds its
	# output a while: the capture's window closes after the teardown
	# stopped the relays and before the stream's end reaches it.
	mkdir -p "$BATS_TEST_TMPDIR/slow"
	cat >"$BATS_TEST_TMPDIR/slow/ff-workload" <<-EOF2
		#!/bin/sh
		[ "\$1" = drive ] || exec "$BATS_TEST_DIRNAME/../bin/ff-workload" "\$@"
		"$BATS_TEST_DIRNAME/../bin/ff-workload" "\$@"
		st=\$?
		sleep 5
		exit \$st
	EOF2
	chmod +x "$BATS_TEST_TMPDIR/slow/ff-workload"
	ev="$BATS_TEST_TMPDIR/ev"
	FLIMFLAM_EXEC_PATH="$BATS_TEST_TMPDIR/slow" start_run "$ev" -r nginx --warmup 0 --duration 2
	wait_for_grep '"event":"window"' "$ev" 15
	d=$(run_dir_of "$ev")
	victim=$(jq -r 'select(.event == "server") | .pid' "$ev")
	kill -KILL "$victim"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 1 ]
	grep -qE "^ff-workload: (server \(pid $victim\) was killed by signal 9|the builtin server \(pid $victim\) died during the run)" \
		"$BATS_TEST_TMPDIR/ev.err"
	! grep -q "died during the window" "$BATS_TEST_TMPDIR/ev.err" || false
	! grep -q '"event":"result"' "$ev" || false
	[ -z "$(pids_of_run "$d")" ]
}
