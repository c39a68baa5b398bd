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
	# Too slow: what the run said (a stage killed after the grace names itself).
	[ $(((t1 - t0) / 1000000)) -lt 5000 ] || { cat "$BATS_TEST_TMPDIR/ev.err"; false; }
	[ -z "$(pids_of_run "$d")" ]
	grep -c "^flimflam: stopped by SIG$1; nothing is left running" "$BATS_TEST_TMPDIR/ev.err"
	[ "$(grep -c "^flimflam: stopped by" "$BATS_TEST_TMPDIR/ev.err")" -eq 1 ]
	# Nothing else said it: the stages stay quiet in a pipeline. (Another
	# run on this machine's CPUs is named at the start: not about the stop.)
	! grep -v -e "^flimflam: stopped by" -e '^flimflam: relays up' \
		-e '^flimflam: another flimflam run ' "$BATS_TEST_TMPDIR/ev.err" || false
}

# A stand-in that starts, says so in its log, and never listens, first on
# PATH as NAME.
never_listens() {
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\necho started\nexec sleep 60\n' >"$BATS_TEST_TMPDIR/fake/$1"
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
	interrupt_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 30 --duration 5
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
	# The server has started (its log says so) and is not listening: the
	# stage waits for it, up to 15 s. (Waiting for a log the stand-in never
	# wrote took the whole 15 s on a loaded machine, and the run failed
	# before the signal came.)
	wait_for_file "$d/server.log" 10
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

# stops_on_output HOW: a run whose output closes or fails (HOW: head,
# full, closed) stops at once, in order, as Ctrl-C does; nothing is left.
stops_on_output() {
	local ev="$BATS_TEST_TMPDIR/ev" t0 t1 d
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	t0=$(date +%s)
	case $1 in
	head) status=0
	      (s=0; flimflam run --json -r nginx --warmup 20 --duration 5 2>"$ev.err" 3>&- || s=$?; echo $s >"$ev.status") |
		head -n 1 >"$ev"
	      status=$(cat "$ev.status") ;;
	full) full_out flimflam run --json -r nginx --warmup 20 --duration 5 ;;
	closed) run --separate-stderr sh -c 'exec flimflam run --json -r nginx --warmup 20 --duration 5 >&- 3>&-' ;;
	esac
	t1=$(date +%s)
	echo "$1: status $status after $((t1 - t0)) s"
	# Not the 25 s of the run: it stopped.
	[ $((t1 - t0)) -lt 15 ]
	# /dev/full and a closed fd fail even a write of nothing: the run does
	# not start.
	[ "$1" != full ] && [ "$1" != closed ] || { nothing_started; return 0; }
	d=$(ls -d "$FLIMFLAM_RUNS"/*/)
	[ -n "$d" ]
	[ -z "$(pids_of_run "${d%/}")" ]
}

@test "signals: run --json | head -1 stops the run: exit 141, nothing left" {
	stops_on_output head
	[ "$status" -eq 141 ]
	[ "$(jq -r .event "$BATS_TEST_TMPDIR/ev")" = start ]
	# A closed pipe is not an error to report.
	[ ! -s "$BATS_TEST_TMPDIR/ev.err" ]
}

@test "signals: run --json into a full disk or a closed stdout: one line, exit 1, nothing left" {
	stops_on_output full
	[ "$status" -eq 1 ]
	[ "$stderr" = "flimflam: cannot write to standard output: No space left on device" ]
	rm -rf "$FLIMFLAM_RUNS"
	stops_on_output closed
	[ "$status" -eq 1 ]
	[ "$stderr" = "flimflam: cannot write to standard output: Bad file descriptor" ]
	# Without --json the summary comes at the end: no run for one that
	# cannot be printed, and no bench for a table.
	rm -rf "$FLIMFLAM_RUNS"
	run -1 --separate-stderr sh -c 'exec flimflam run -r nginx >&- 3>&-'
	[ "$stderr" = "flimflam: cannot write to standard output: Bad file descriptor" ]
	nothing_started
	run -1 --separate-stderr sh -c 'exec flimflam bench -r none --output "$0/r.json" >&- 3>&-' "$BATS_TEST_TMPDIR"
	[ "${stderr_lines[-1]}" = "flimflam bench: cannot write to standard output: Bad file descriptor" ]
	nothing_started
}

@test "signals: bench | head -1 stops the bench: exit 141, nothing left" {
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	t0=$(date +%s)
	(s=0; flimflam bench -w builtin -r nginx,none --warmup 20 --duration 5 --output "$BATS_TEST_TMPDIR/r.json" \
		2>"$BATS_TEST_TMPDIR/err" 3>&- || s=$?; echo $s >"$BATS_TEST_TMPDIR/status") | head -n 1 >"$BATS_TEST_TMPDIR/out"
	t1=$(date +%s)
	cat "$BATS_TEST_TMPDIR/err"
	[ "$(cat "$BATS_TEST_TMPDIR/status")" -eq 141 ]
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = Environment ]
	# Not the 50 s of two runs.
	[ $((t1 - t0)) -lt 20 ]
	for d in "$FLIMFLAM_RUNS"/*/; do
		[ -z "$(pids_of_run "${d%/}")" ]
	done
	! grep -q "failed" "$BATS_TEST_TMPDIR/err" || false
}

@test "signals: Ctrl-C while flamegraph renders: stopped by SIGINT, exit 130, nothing left" {
	skip_unless_program perf
	cd "$BATS_TEST_TMPDIR"
	# perf script, slowed: the rendering is still going when the signal comes.
	mkdir -p slow
	printf '#!/bin/sh\n[ "$1" = script ] && sleep 30\nexec %s "$@"\n' "$(command -v perf)" >slow/perf
	chmod +x slow/perf
	PATH="$BATS_TEST_TMPDIR/slow:$PATH" flimflam flamegraph -r nginx --warmup 0 --duration 1 \
		>out 2>"$BATS_TEST_TMPDIR/ev.err" 3>&- &
	RUN_PID=$!
	wait_for_grep "rendering" "$BATS_TEST_TMPDIR/ev.err" 30
	for i in $(seq 100); do pgrep -f "^sleep 30$" -P "$(descendants "$RUN_PID" | paste -sd,)" >/dev/null && break; sleep 0.05; done
	kids=$(descendants "$RUN_PID")
	[ -n "$kids" ]
	kill -INT "$RUN_PID"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 130 ]
	grep -q "^flimflam: stopped by SIGINT; nothing is left running" "$BATS_TEST_TMPDIR/ev.err"
	! grep -q "could not render\|status 130" "$BATS_TEST_TMPDIR/ev.err" || false
	for i in $(seq 40); do all_gone $kids && break; sleep 0.05; done
	all_gone $kids
	[ -e perf.data ]	# the recording is kept
	[ ! -e flamegraph.html ]
}

@test "signals: a stage that ignores SIGTERM is killed with what it started after the grace, and says so; nothing left, ports free" {
	# A test-only ff-workload whose drive ignores the stop, as one busy
	# computing did: the real drive, then it holds on (FLIMFLAM_EXEC_PATH
	# puts it first; the other stages are the real ones).
	mkdir -p "$BATS_TEST_TMPDIR/deaf"
	cat >"$BATS_TEST_TMPDIR/deaf/ff-workload" <<-EOF2
		#!/bin/sh
		[ "\$1" = drive ] || exec "$BATS_TEST_DIRNAME/../bin/ff-workload" "\$@"
		trap '' TERM INT HUP
		echo \$\$ >>"$BATS_TEST_TMPDIR/deaf.pids"
		"$BATS_TEST_DIRNAME/../bin/ff-workload" "\$@"
		sleep 120 &
		echo \$! >>"$BATS_TEST_TMPDIR/deaf.pids"
		wait
	EOF2
	chmod +x "$BATS_TEST_TMPDIR/deaf/ff-workload"
	FLIMFLAM_EXEC_PATH="$BATS_TEST_TMPDIR/deaf" start_run "$BATS_TEST_TMPDIR/ev" -r nginx --warmup 0 --duration 60
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	ports=$(jq -r 'select(.event == "server" or .event == "topology") | .port, (.relays[]?.port)' "$BATS_TEST_TMPDIR/ev")
	[ -n "$ports" ]
	t0=$(date +%s)
	kill -TERM "$RUN_PID"
	# A second signal during the grace does not undo it.
	sleep 1
	kill -INT "$RUN_PID"
	wait_status "$RUN_PID"
	t1=$(date +%s)
	cat "$BATS_TEST_TMPDIR/ev.err"
	echo "status $status after $((t1 - t0)) s"
	[ "$status" -eq 143 ]
	# The grace (10 s), not the window (60 s) nor the stand-in's 120 s.
	[ $((t1 - t0)) -ge 9 ]
	[ $((t1 - t0)) -lt 40 ]
	grep -qx "flimflam: ff-workload drive did not stop within 10 s of SIGTERM; killed it and what it started" \
		"$BATS_TEST_TMPDIR/ev.err"
	[ "$(tail -n 1 "$BATS_TEST_TMPDIR/ev.err")" = "flimflam: stopped by SIGTERM; nothing is left running; the run's files are in '$d'" ]
	# libpipeline's own "Killed" line is not said: the line above says it.
	! grep -q "Killed" "$BATS_TEST_TMPDIR/ev.err" || false
	[ "$(wc -l <"$BATS_TEST_TMPDIR/deaf.pids")" -eq 2 ]
	all_gone $(cat "$BATS_TEST_TMPDIR/deaf.pids")
	[ -z "$(pids_of_run "$d")" ]
	for p in $ports; do
		[ -z "$(ss -ltnH "sport = :$p")" ]
	done
}

# deaf_capture: a test-only ff-capture in $BATS_TEST_TMPDIR/deaf (for
# FLIMFLAM_EXEC_PATH) whose pipeline stage ignores the stop: it passes its
# input on, then holds its output open.
# ticks_after_stop: SIGTERM to RUN_PID; $ticks is the CPU (in clock ticks)
# it uses in the 4 s after the first second; then waited for ($status).
ticks_after_stop() {
	local t0 t1
	kill -TERM "$RUN_PID"
	sleep 1
	t0=$(awk '{print $14 + $15}' /proc/"$RUN_PID"/stat)
	sleep 4
	t1=$(awk '{print $14 + $15}' /proc/"$RUN_PID"/stat)
	ticks=$((t1 - t0))
	wait_status "$RUN_PID"
}

deaf_capture() {
	mkdir -p "$BATS_TEST_TMPDIR/deaf"
	cat >"$BATS_TEST_TMPDIR/deaf/ff-capture" <<-EOF2
		#!/bin/sh
		case " \$* " in *" --pipeline-stage "*) ;; *) exec "$BATS_TEST_DIRNAME/../bin/ff-capture" "\$@" ;; esac
		trap '' TERM INT HUP
		cat
		exec sleep 120
	EOF2
	chmod +x "$BATS_TEST_TMPDIR/deaf/ff-capture"
}

@test "signals: the dispatcher does not spin while its stages stop" {
	# The signal's wakeup is taken once: flimflam sleeps while the last
	# stage, which ignores the stop, takes its grace (a test-only
	# ff-capture that passes its input on, then holds its output open).
	deaf_capture
	FLIMFLAM_EXEC_PATH="$BATS_TEST_TMPDIR/deaf" start_run "$BATS_TEST_TMPDIR/ev" -r none --warmup 0 --duration 60
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	ticks_after_stop
	cat "$BATS_TEST_TMPDIR/ev.err"
	echo "flimflam used $ticks ticks of CPU in 4 s"
	[ "$status" -eq 143 ]
	grep -qx "flimflam: ff-capture did not stop within 10 s of SIGTERM; killed it and what it started" \
		"$BATS_TEST_TMPDIR/ev.err"
	# A spin takes most of a CPU: 400 ticks (at 100 Hz). Asleep, about 0.
	[ "$ticks" -lt 20 ]
}

@test "signals: a slow start is said every 5 s when stderr is not a terminal, and a signal still stops it" {
	# (skrouterd's chains take seconds a hop; its own wording names the
	# route. A stand-in relay that never listens keeps the start going.)
	never_listens nginx
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	flimflam run -r nginx --warmup 0 --duration 5 >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	RUN_PID=$!
	wait_for_grep "(5 s)" "$BATS_TEST_TMPDIR/err" 12
	kill -TERM "$RUN_PID"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/err"
	[ "$status" -eq 143 ]
	[ "$(head -n 1 "$BATS_TEST_TMPDIR/err")" = "flimflam: starting the server and relays (5 s)" ]
	grep -q "^flimflam: stopped by SIGTERM; nothing is left running" "$BATS_TEST_TMPDIR/err"
	# No control characters of a terminal's live line.
	! grep -q $'\033\\|\r' "$BATS_TEST_TMPDIR/err" || false
	wait_run_dir
	[ -z "$(pids_of_run "$d")" ]
}

@test "signals: bench does not spin while its run stops" {
	# As above, for ff-bench watching its run: the run's last stage
	# ignores the stop, and the bench waits for it asleep.
	deaf_capture
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	FLIMFLAM_EXEC_PATH="$BATS_TEST_TMPDIR/deaf" flimflam bench -w builtin -r none --warmup 0 --duration 60 \
		--output "$BATS_TEST_TMPDIR/r.jsonl" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	RUN_PID=$!
	for i in $(seq 150); do
		[ -n "$(ls "$FLIMFLAM_RUNS"/*/r1 "$FLIMFLAM_RUNS"/*/server.log 2>/dev/null)" ] && break
		sleep 0.1
	done
	sleep 1
	ticks_after_stop
	cat "$BATS_TEST_TMPDIR/err"
	echo "the bench used $ticks ticks of CPU in 4 s"
	[ "$status" -eq 143 ]
	[ "$ticks" -lt 20 ]
}
