# Security: listeners on 127.0.0.1 only, no shell anywhere, configuration
# templates that refuse injected directives, and no root needed but for
# what perf itself asks.
bats_require_minimum_version 1.5.0
load helper

# listeners_of_run EVENTS: "address:port" of every listening socket owned
# by a process of the run (its relays, server, and their children).
listeners_of_run() {
	local d pids p
	d=$(run_dir_of "$1")
	pids=$(pids_of_run "$d")
	for p in $pids; do
		ss -Hltnp 2>/dev/null | grep "pid=$p," | awk '{print $4}'
	done | sort -u
}

@test "security: every listener of every relay and server binds 127.0.0.1 only" {
	skip_unless_program nginx nghttpx nghttpd h2load iperf3
	local cases="builtin:nginx:tcp iperf3:none:tcp h2load:nghttpx:http2 h2load-h1:nghttpx:http1 h2load-h1:nginx:http1"
	command -v skrouterd >/dev/null && cases="$cases builtin:skrouterd:tcp"
	for c in $cases; do
		IFS=: read -r w r p <<<"$c"
		rm -f "$BATS_TEST_TMPDIR/ev"
		start_run "$BATS_TEST_TMPDIR/ev" -w "$w" -r "$r" -p "$p" --warmup 3 --duration 1
		wait_for_grep '"event":"topology"' "$BATS_TEST_TMPDIR/ev" 30
		sleep 0.2
		listeners_of_run "$BATS_TEST_TMPDIR/ev" >"$BATS_TEST_TMPDIR/l"
		echo "$c:"; cat "$BATS_TEST_TMPDIR/l"
		# The server, and each relay's listener(s).
		[ "$(wc -l <"$BATS_TEST_TMPDIR/l")" -ge 1 ]
		! grep -v '^127\.0\.0\.1:[0-9]*$' "$BATS_TEST_TMPDIR/l" || false
		wait_status "$RUN_PID"
	done
}

@test "security: no program runs a shell" {
	# Children are started with execvp or libpipeline's argument vectors.
	! grep -nE '\b(system|popen|execl|pipecmd_new_argstr|pipeline_command_argstr)[[:space:]]*\(|"/bin/sh"|"sh", "-c"' \
		"$TOP"/bin/*.c "$TOP"/lib/*.c "$TOP"/builtin/*.c || false
}

@test "security: shell syntax in a value stays a value" {
	skip_unless_program nginx
	local d="$BATS_TEST_TMPDIR/a\$(touch $BATS_TEST_TMPDIR/pwned)b\`touch $BATS_TEST_TMPDIR/pwned2\`"
	run -0 --separate-stderr ff-topology -r nginx --server-port 5555 --run-dir "$d" --config-only
	[ -s "$d/r1/nginx.conf" ]
	[ ! -e "$BATS_TEST_TMPDIR/pwned" ]
	[ ! -e "$BATS_TEST_TMPDIR/pwned2" ]
}

@test "security: a newline, brace or semicolon cannot add a directive to a relay's configuration" {
	skip_unless_program nginx
	for bad in $'x\nworker_processes 64' 'x}' 'x;user root' 'x{' "x'y" 'x#y'; do
		run -1 --separate-stderr ff-topology -r nginx --server-port 5555 \
			--run-dir "$BATS_TEST_TMPDIR/$bad" --config-only
		[[ "$stderr" == *"value of DIR would change the configuration"* ]] || { echo "$bad: $stderr"; false; }
	done
}

@test "security: a run needs no root (as nobody); check says what perf needs" {
	skip_unless_program nginx setpriv
	[ "$(id -u)" -eq 0 ] || skip "needs root to become nobody"
	local home
	home=$(mktemp -d)
	chmod 777 "$home"
	if ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$TOP/bin/flimflam"; then
		rm -rf "$home"
		skip "nobody cannot reach this checkout ($TOP)"
	fi
	run_steady setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env HOME="$home" FLIMFLAM_RUNS="$home/runs" PATH="$PATH" \
		flimflam run --json -r nginx --warmup 0 --duration 1
	rm -rf "$home"
	[ "$status" -eq 0 ]
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0'
	event_ok "$BATS_TEST_TMPDIR/ev" resources 'all(.relays[]; .cpu_fraction > 0)'
	run --separate-stderr ff-check
	[[ "$output" == *"perf_event_paranoid"* ]]
}
