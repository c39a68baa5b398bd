# Security: listeners on 127.0.0.1 only, no shell anywhere, configuration
# templates that refuse injected directives, and no root needed but for
# what perf itself asks.
bats_require_minimum_version 1.5.0
load helper

# listeners_of_run EVENTS: "address:port" of every listening socket owned
# by a process of the run (its relays, server, and their children).
listeners_of_run() {
	local d pids p socks
	d=$(run_dir_of "$1")
	pids=$(pids_of_run "$d")
	socks=$(ss -Hltnp 2>/dev/null)
	for p in $pids; do
		grep "pid=$p," <<<"$socks" | awk '{print $4}'
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
		# Seen while warming up: stopped there, not sat through.
		kill -TERM "$RUN_PID"
		wait_status "$RUN_PID"
		[ "$status" -eq 143 ]
	done
}

@test "security: no program runs a shell" {
	# Children are started with execvp or libpipeline's argument vectors.
	! grep -nE '\b(system|popen|execl|pipecmd_new_argstr|pipeline_command_argstr)[[:space:]]*\(|"/bin/sh"|"sh", "-c"' \
		"$TOP"/bin/*.c "$TOP"/bin/*.d/*.c "$TOP"/lib/*.c "$TOP"/builtin/*.c || false
}

@test "security: shell syntax in a value stays a value" {
	skip_unless_program nginx
	local d="$BATS_TEST_TMPDIR/a\$(touch $BATS_TEST_TMPDIR/pwned)b\`touch $BATS_TEST_TMPDIR/pwned2\`"
	# The name holds slashes: its parents are made here (flimflam makes
	# only the last component of a directory it is given).
	mkdir -p "$(dirname "$d")"
	run -0 --separate-stderr ff-topology -r nginx --server-port 5555 --run-dir "$d" --config-only
	[ -s "$d/r1/nginx.conf" ]
	[ ! -e "$BATS_TEST_TMPDIR/pwned" ]
	[ ! -e "$BATS_TEST_TMPDIR/pwned2" ]
}

@test "security: a run directory's name cannot add a directive to a relay's configuration" {
	skip_unless_program nginx
	# A newline cannot be written in a configuration line: refused.
	run -1 --separate-stderr ff-topology -r nginx --server-port 5555 \
		--run-dir "$BATS_TEST_TMPDIR/"$'x\nworker_processes 64' --config-only
	[[ "$stderr" == *"value of DIR cannot be written in the configuration"*"newline"* ]]
	# Anything else stays inside its quoted path: nginx reads the same
	# directives as with a plain name, and the path whole.
	for bad in 'x}' 'x;user root;' 'x{' "x'y" 'x#y' 'x"; user root; "' 'x\"y\' 'a b	c' 'x$y'; do
		local d="$BATS_TEST_TMPDIR/$bad"
		rm -rf "$d"
		run -0 --separate-stderr ff-topology -r nginx -p http1 --server-port 5555 --run-dir "$d" --config-only
		run -0 nginx -T -q -p "$d/r1" -c "$d/r1/nginx.conf" -e "$d/r1/error.log"
		[ "$(grep -c '^user ' <<<"$output")" -eq 1 ] || { echo "$bad: $output"; false; }
		grep -qx "user \"$(id -un)\";" <<<"$output"
		[ "$(grep -c '^pid ' <<<"$output")" -eq 1 ]
		grep -qxF "pid \"$(sed 's/[\\"]/\\&/g' <<<"$d")/r1/nginx.pid\";" <<<"$output" || { echo "$bad: $output"; false; }
	done
}

# One run per relay and server program, in run directories whose names
# have spaces, a tab, quotes, ';', braces, '#' and '$'.
@test "security: every relay and server runs in a run directory with spaces, a tab and quotes" {
	skip_unless_program nginx nghttpx nghttpd h2load iperf3
	local weird="a b	c\"d\\e\$f;g{h}#i'j"
	local home="$BATS_TEST_TMPDIR/x home"
	mkdir -p "$home"
	# builtin server, nginx (tcp); iperf3; nghttpd, nghttpx (http2);
	# nginx as the server and as the http1 relay; nghttpx (http1).
	for c in builtin:nginx:tcp iperf3:none:tcp h2load:nghttpx:http2 h2load-h1:nginx:http1 h2load-h1:nghttpx:http1; do
		IFS=: read -r w r p <<<"$c"
		# A window refused on a busy machine is tried once more (run_steady).
		HOME="$home" FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/$weird" run_steady \
			flimflam run --json -w "$w" -r "$r" -p "$p" --warmup 0 --duration 1 ||
			{ echo "$c: $stderr"; false; }
		echo "$output" >"$BATS_TEST_TMPDIR/ev"
		event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0' || { echo "$c: $stderr"; false; }
		WEIRD="$BATS_TEST_TMPDIR/$weird/" event_ok "$BATS_TEST_TMPDIR/ev" server '.run_dir | startswith($ENV.WEIRD)' ||
			{ echo "$c"; false; }
		# The relays' own files went where their configurations say.
		d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
		[ "$r" = none ] || [ -f "$d/r1/error.log" ] && { [ "$r" = none ] || [ -f "$d/r2/error.log" ]; }
		[ "$w" != h2load-h1 ] || [ "$r" != nginx ] || [ -f "$d/server-nginx-error.log" ]
	done
	# And by way of HOME, XDG_STATE_HOME (the default places).
	HOME="$home" FLIMFLAM_RUNS= XDG_STATE_HOME= run_steady \
		flimflam run --json -r nginx --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" server '.run_dir | startswith($ENV.BATS_TEST_TMPDIR + "/x home/.local/state/flimflam/runs/")'
	mkdir -p "$home/st ate"
	HOME="$home" FLIMFLAM_RUNS= XDG_STATE_HOME="$home/st ate" run_steady \
		flimflam run --json -r nginx -w h2load-h1 -p http1 --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" server '.run_dir | startswith($ENV.BATS_TEST_TMPDIR + "/x home/st ate/flimflam/runs/")'
}

@test "security: skrouterd runs in a run directory with spaces and a tab" {
	skip_unless_program skrouterd
	HOME="$BATS_TEST_TMPDIR" FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/a b	c\"d" run_steady \
		flimflam run --json -r skrouterd --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0'
}

# decode_path VALUE: a path field back to its bytes (a file: URI when the
# path is not UTF-8), as a reader would.
decode_path() {
	python3 -c 'import sys, urllib.parse
v = sys.argv[1]
b = urllib.parse.unquote_to_bytes(v[7:]) if v.startswith("file://") else v.encode()
sys.stdout.buffer.write(b)' "$1"
}

@test "security: paths that are not UTF-8 stay in the events, and can be read back" {
	skip_unless_program nginx
	local runs="$BATS_TEST_TMPDIR/"$'caf\xe9 runs' f v
	FLIMFLAM_RUNS="$runs" run -0 --separate-stderr flimflam run --json -r nginx --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	jsonl_ok "$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" server '(.run_dir | startswith("file:///")) and (.log | startswith("file:///"))'
	event_ok "$BATS_TEST_TMPDIR/ev" topology '(.run_dir | startswith("file:///")) and all(.relays[]; (.config | startswith("file:///")) and (.log | startswith("file:///")))'
	for f in '.run_dir' '.log'; do
		v=$(jq -r "select(.event == \"server\") | $f" "$BATS_TEST_TMPDIR/ev")
		[ -e "$(decode_path "$v")" ]
	done
	v=$(jq -r 'select(.event == "server") | .run_dir' "$BATS_TEST_TMPDIR/ev")
	[[ "$(decode_path "$v")" == "$runs/"* ]]
	for v in $(jq -r 'select(.event == "topology") | .relays[] | .config, .log' "$BATS_TEST_TMPDIR/ev"); do
		[ -f "$(decode_path "$v")" ]
	done
	# The same for --config-only, and a message quoting such a path is there too.
	run -0 --separate-stderr ff-topology -r nginx --server-port 5555 --run-dir "$runs/c" --config-only
	v=$(jq -r 'select(.event == "config") | .relays[0].config' <<<"$output")
	[ -f "$(decode_path "$v")" ]
	run -1 --separate-stderr ff-workload drive --run-dir "$runs/d" </dev/null
	run -1 --separate-stderr ff-topology -r nginx --server-port 5555 --run-dir "$runs/x/y" --config-only
	[[ "$stderr" == *'caf\xe9 runs/x/y'*"parent directory does not exist"* ]]
}

# A tool's bytes that a terminal would act on never reach it raw.
@test "security: escape sequences in a tool's version or log are shown as \\xHH" {
	skip_unless_program nginx
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	# A version probe only: check runs `iperf3 --version`.
	printf '#!/bin/sh\nprintf "iperf 3.99 \\033]0;title\\007\\033[2J\\233x\\n"\n' >"$BATS_TEST_TMPDIR/fake/iperf3"
	chmod +x "$BATS_TEST_TMPDIR/fake/iperf3"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH" run --separate-stderr flimflam check
	# (A byte that is not UTF-8 is U+FFFD already in the environment's JSON.)
	[[ "$output" == *'iperf3     iperf 3.99 \x1b]0;title\x07\x1b[2J'$'\uFFFD''x ('* ]] || { echo "$output"; false; }
	[[ "$output" != *$'\033'* && "$output" != *$'\007'* ]]
	# A relay whose log holds escapes and bytes that are not UTF-8: the
	# tail shown has them as \xHH, the log keeps them.
	rm "$BATS_TEST_TMPDIR/fake/iperf3"
	printf '#!/bin/sh\nprintf "nginx: [emerg] \\033[31mred\\033]0;x\\007 \\377\\n" >&2\nexit 1\n' >"$BATS_TEST_TMPDIR/fake/nginx"
	chmod +x "$BATS_TEST_TMPDIR/fake/nginx"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH" run -1 --separate-stderr \
		ff-topology -r nginx --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/d"
	[[ "$stderr" == *'  nginx: [emerg] \x1b[31mred\x1b]0;x\x07 \xff'* ]] || { echo "$stderr"; false; }
	[[ "$stderr" != *$'\033'* ]]
	grep -q $'\033\\[31mred' "$BATS_TEST_TMPDIR/d/r2.log"
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
