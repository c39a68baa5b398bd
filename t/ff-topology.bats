# ff-topology: the relay chain, alone and in front of a server; the
# generated skrouterd configurations for both schema variants (golden).
bats_require_minimum_version 1.5.0
load helper

teardown() {
	# The builtin server a test started, if the test failed before it stopped it.
	[ ! -s "$BATS_TEST_TMPDIR/server.pid" ] || kill "$(cat "$BATS_TEST_TMPDIR/server.pid")" 2>/dev/null || true
}

FIX="$TOP/t/fixtures/ff-check"
SCHEMA_27="$FIX/schema-2.7/skupper_router/management/skrouter.json"
SCHEMA_3X="$FIX/schema-3.x/skupper_router/management/skrouter.json"

# A stand-in skrouterd on PATH that is never run (--config-only starts nothing).
fake_router() {
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	# It answers --version as a router does: flimflam refuses one that does not.
	printf '#!/bin/sh\n[ "$1" = --version ] && echo 3.2.0 && exit 0\necho "fake skrouterd: not for running" >&2\nexit 1\n' >"$BATS_TEST_TMPDIR/fake/skrouterd"
	chmod +x "$BATS_TEST_TMPDIR/fake/skrouterd"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH"
}

# configs SCHEMA PROTOCOL [ARGS...]: generate into $BATS_TEST_TMPDIR/d.
configs() {
	local schema="$1" proto="$2"
	shift 2
	rm -rf "$BATS_TEST_TMPDIR/d"
	FLIMFLAM_SKROUTERD_SCHEMA="$schema" run -0 --separate-stderr \
		ff-topology -r skrouterd -p "$proto" --server-port 5555 \
		--run-dir "$BATS_TEST_TMPDIR/d" --config-only "$@"
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" config '.relay == "skrouterd" and (.relays | length) == 2'
}

# Ports are chosen per run: name them, and check they connect the pair.
normalised() {
	sed -E 's/port: [0-9]+/port: PORT/' "$1"
}

check_pair_ports() {
	local d="$BATS_TEST_TMPDIR/d"
	r1_to=$(awk '/^connector/ {c = 1} c && /port:/ {print $2; exit}' "$d/r1/skrouterd.conf")
	r2_ir=$(awk '/^listener/ {l = 1} l && /port:/ {p = $2} l && /role: inter-router/ {print p; exit}' "$d/r2/skrouterd.conf")
	[ -n "$r1_to" ]
	[ "$r1_to" = "$r2_ir" ]
	grep -A4 -E '^(tcp|http)Connector' "$d/r2/skrouterd.conf" | grep -q 'port: 5555'
}

@test "ff-topology: skrouterd tcp config (2.7 schema: router default encapsulation)" {
	fake_router
	configs "$SCHEMA_27" tcp --cpu-limit 1
	check_pair_ports
	normalised "$BATS_TEST_TMPDIR/d/r1/skrouterd.conf" >"$BATS_TEST_TMPDIR/r1"
	normalised "$BATS_TEST_TMPDIR/d/r2/skrouterd.conf" >"$BATS_TEST_TMPDIR/r2"
	golden ff-topology-skrouterd-tcp-r1.conf "$BATS_TEST_TMPDIR/r1"
	golden ff-topology-skrouterd-tcp-r2.conf "$BATS_TEST_TMPDIR/r2"
	! grep -q encapsulation "$BATS_TEST_TMPDIR/r1" || false
}

@test "ff-topology: skrouterd tcp config with --encapsulation lite (2.7 schema)" {
	fake_router
	configs "$SCHEMA_27" tcp --encapsulation lite --cpu-limit 2
	grep -A6 '^tcpListener' "$BATS_TEST_TMPDIR/d/r1/skrouterd.conf" | grep -q '^    encapsulation: lite$'
	grep -A6 '^tcpConnector' "$BATS_TEST_TMPDIR/d/r2/skrouterd.conf" | grep -q '^    encapsulation: lite$'
	grep -q '^    workerThreads: 2$' "$BATS_TEST_TMPDIR/d/r1/skrouterd.conf"
}

@test "ff-topology: skrouterd http1 and http2 configs (2.7 schema)" {
	fake_router
	configs "$SCHEMA_27" http1
	check_pair_ports
	normalised "$BATS_TEST_TMPDIR/d/r1/skrouterd.conf" >"$BATS_TEST_TMPDIR/r1"
	normalised "$BATS_TEST_TMPDIR/d/r2/skrouterd.conf" >"$BATS_TEST_TMPDIR/r2"
	golden ff-topology-skrouterd-http1-r1.conf "$BATS_TEST_TMPDIR/r1"
	golden ff-topology-skrouterd-http1-r2.conf "$BATS_TEST_TMPDIR/r2"
	configs "$SCHEMA_27" http2
	grep -A6 '^httpListener' "$BATS_TEST_TMPDIR/d/r1/skrouterd.conf" | grep -q 'protocolVersion: HTTP2'
	grep -A6 '^httpConnector' "$BATS_TEST_TMPDIR/d/r2/skrouterd.conf" | grep -q 'protocolVersion: HTTP2'
}

@test "ff-topology: a 3.x router (no HTTP adaptor, no encapsulation)" {
	fake_router
	configs "$SCHEMA_3X" tcp
	check_pair_ports
	normalised "$BATS_TEST_TMPDIR/d/r1/skrouterd.conf" >"$BATS_TEST_TMPDIR/r1"
	golden ff-topology-skrouterd-tcp-r1.conf "$BATS_TEST_TMPDIR/r1"
	FLIMFLAM_SKROUTERD_SCHEMA="$SCHEMA_3X" run -2 --separate-stderr \
		ff-topology -r skrouterd -p http1 --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/e" --config-only
	[[ "${stderr_lines[0]}" == "ff-topology: the skrouterd at '$BATS_TEST_TMPDIR/fake/skrouterd' has no HTTP adaptor (routers from 3.1 on have none): protocol 'http1' needs a 2.x or 3.0 router; tcp works" ]]
	FLIMFLAM_SKROUTERD_SCHEMA="$SCHEMA_3X" run -2 --separate-stderr \
		ff-topology -r skrouterd --encapsulation lite --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/e" --config-only
	[[ "${stderr_lines[0]}" == *"has no tcp encapsulation setting (only 2.5 to 3.0 routers have one)" ]]
	# flimflam run says the same before starting anything.
	FLIMFLAM_SKROUTERD_SCHEMA="$SCHEMA_3X" run -2 --separate-stderr flimflam run -w h2load -p http2
	[[ "${stderr_lines[0]}" == "flimflam: the skrouterd at"*"has no HTTP adaptor"* ]]
}

@test "ff-topology: an unreadable schema is a failure, not a guess" {
	fake_router
	FLIMFLAM_SKROUTERD_SCHEMA="$FIX/broken-skrouter.json" run -1 --separate-stderr \
		ff-topology -r skrouterd -p http1 --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/e" --config-only
	[[ "$stderr" == *"ff-topology: cannot read the management schema '$FIX/broken-skrouter.json'"* ]]
}

# A router that hangs, fails or answers garbage to --version or --help is
# refused before anything starts: one line, exit 1, within seconds (the
# probes' 5 s deadline, both at once). The stand-ins are named skrouterd
# and never measure anything; they test flimflam's checks.
@test "skrouterd whose --version or --help hangs, fails or prints garbage: refused before anything starts" {
	local f="$BATS_TEST_TMPDIR/skr" kind t0 want
	mkdir -p "$f"
	cd "$BATS_TEST_TMPDIR"
	while IFS='|' read -r kind want; do
		case $kind in
		hang) printf '#!/bin/bash\nexec -a flimflam-hung-router-'"$$"' sleep 100\n' ;;
		garbage) printf '#!/bin/sh\nprintf "Segmentation fault \\033[31m\\n"\n' ;;
		fail) printf '#!/bin/sh\necho "skrouterd: error while loading shared libraries: libqpid-proton-core.so.10" >&2\nexit 127\n' ;;
		nohelp) printf '#!/bin/sh\n[ "$1" = --version ] && echo 3.2.0 && exit 0\necho "usage: who knows"\n' ;;
		hanghelp) printf '#!/bin/bash\n[ "$1" = --version ] && echo 3.2.0 && exit 0\nexec -a flimflam-hung-router-'"$$"' sleep 100\n' ;;
		esac >"$f/skrouterd"
		chmod +x "$f/skrouterd"
		mkdir -p "$f/skupper_router/management"
		echo '{"entityTypes": ' >"$f/skupper_router/management/skrouter.json"
		for cmd in "flimflam run -r skrouterd" "ff-topology -r skrouterd --server-port 5555 --run-dir $BATS_TEST_TMPDIR/d"; do
			t0=$SECONDS
			PATH="$f:$PATH" run -1 --separate-stderr $cmd
			[ "${#stderr_lines[@]}" -eq 1 ] || { echo "$kind: $cmd: $stderr"; false; }
			[[ "$stderr" == *": '$f/skrouterd $want" ]] || { echo "$kind: $cmd: $stderr"; false; }
			[ $((SECONDS - t0)) -le 8 ]
			[ -z "$output" ] || [[ "$cmd" == ff-topology* && "$output" != *'"event":"topology"'* ]]
			[ ! -e "$BATS_TEST_TMPDIR/d/r1" ] && [ ! -e "$BATS_TEST_TMPDIR/d/r2" ]
		done
	done <<CASES
hang|--version' did not finish within 5 s: not a router flimflam can use
garbage|--version' printed 'Segmentation fault ?[31m', not a version: not a router flimflam can use
fail|--version' exited with status 127: skrouterd: error while loading shared libraries: libqpid-proton-core.so.10: not a router flimflam can use
nohelp|--help' names no Python directory (-I, --include=PATH): its management schema cannot be found
hanghelp|--help' did not finish within 5 s: its management schema cannot be found
CASES
	nothing_started
	[ -z "$(pgrep -f "flimflam-hung-router-$$")" ]
	# A schema that does not read is the same.
	printf '#!/bin/sh\n[ "$1" = --version ] && echo 3.2.0 && exit 0\necho "  -I, --include=PATH (%s)"\n' "$f" >"$f/skrouterd"
	PATH="$f:$PATH" run -1 --separate-stderr flimflam run -r skrouterd
	[[ "$stderr" == "flimflam: cannot read the management schema '$f/skupper_router/management/skrouter.json' of '$f/skrouterd': "* ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
	nothing_started
}

@test "ff-topology: nginx and nghttpx configs listen on 127.0.0.1 only and keep every path in the run directory" {
	skip_unless_program nginx nghttpx
	for rp in nginx:tcp nginx:http1 nghttpx:http1 nghttpx:http2; do
		rm -rf "$BATS_TEST_TMPDIR/d"
		run -0 --separate-stderr ff-topology -r "${rp%:*}" -p "${rp#*:}" --server-port 5555 \
			--run-dir "$BATS_TEST_TMPDIR/d" --config-only
		for f in "$BATS_TEST_TMPDIR"/d/r?/*.conf; do
			# Every listen/frontend address is loopback.
			! grep -E '^\s*(listen |frontend=)' "$f" | grep -v '127\.0\.0\.1' || false
			# Every absolute path is inside the run directory.
			! grep -v '^\s*#' "$f" | grep -oE '(^|[ ="])/[^ ;"]+' | sed 's/^[ ="]//' |
				grep -v -e "^$BATS_TEST_TMPDIR/d/" -e '^/usr/lib' -e '^/usr/share/nginx/modules' || false
		done
	done
	grep -q 'backend=127.0.0.1,5555;;proto=h2' "$BATS_TEST_TMPDIR/d/r2/nghttpx.conf"
}

@test "ff-topology: alone, a relay chain in front of any server until a signal" {
	skip_unless_program nginx
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# fd 3 closed: a process left by a failing test must not hang the suite.
	"$TOP/builtin/ff-builtin-server" --port "$port" 3>&- &
	server=$!
	echo "$server" >"$BATS_TEST_TMPDIR/server.pid"
	ff-topology -r nginx --server-port "$port" --run-dir "$BATS_TEST_TMPDIR/d" >"$BATS_TEST_TMPDIR/ev" 3>&- &
	topo=$!
	wait_for_grep '"event":"end"' "$BATS_TEST_TMPDIR/ev" 15
	entry=$(jq -r 'select(.event == "topology") | .port' "$BATS_TEST_TMPDIR/ev")
	run -0 --separate-stderr "$TOP/builtin/ff-builtin-client" --port "$entry" --jobs 1 --warmup 0 --duration 1
	echo "$output" | grep '"event":"result"' | jq -e '.bits > 0'
	relays=$(jq -r 'select(.event == "topology") | .relays[].pid' "$BATS_TEST_TMPDIR/ev")
	kill -INT "$topo"
	wait_status "$topo"
	# Its end said 0, and a signal is how a holder alone is ended: exit 0.
	[ "$(jq -s '[.[] | select(.event == "end")] | length' "$BATS_TEST_TMPDIR/ev")" -eq 1 ]
	[ "$status" -eq "$(jq 'select(.event == "end") | .status' "$BATS_TEST_TMPDIR/ev")" ]
	[ "$status" -eq 0 ]
	all_gone $relays
	kill "$server"
	wait "$server" || true
}

@test "ff-topology: SIGINT while the relays start is 130, and no end" {
	skip_unless_program nginx
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	# It says so in its log, and never listens: R2 is starting.
	printf '#!/bin/sh\necho started\nexec sleep 60\n' >"$BATS_TEST_TMPDIR/fake/nginx"
	chmod +x "$BATS_TEST_TMPDIR/fake/nginx"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH" ff-topology -r nginx --server-port 5555 \
		--run-dir "$BATS_TEST_TMPDIR/d" >"$BATS_TEST_TMPDIR/ev" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	topo=$!
	wait_for_file "$BATS_TEST_TMPDIR/d/r2.log" 10
	kids=$(descendants "$topo")
	[ -n "$kids" ]
	kill -INT "$topo"
	wait_status "$topo"
	[ "$status" -eq 130 ]
	grep -qx "ff-topology: stopped by SIGINT" "$BATS_TEST_TMPDIR/err"
	! grep -q '"event":"end"' "$BATS_TEST_TMPDIR/ev" || false
	all_gone $kids
}

@test "ff-topology: a run directory's name stays one value in every relay's configuration" {
	skip_unless_program nginx nghttpx
	local d="$BATS_TEST_TMPDIR/bad;dir} a	b\"c"
	# nginx: "..." strings, which nginx reads back as the same path.
	run -0 --separate-stderr ff-topology -r nginx --server-port 5555 --run-dir "$d" --config-only
	run -0 nginx -t -q -p "$d/r1" -c "$d/r1/nginx.conf" -e "$d/r1/error.log"
	# nghttpx: key=value lines, the value as it is.
	rm -rf "$d"
	run -0 --separate-stderr ff-topology -r nghttpx -p http1 --server-port 5555 --run-dir "$d" --config-only
	grep -qxF "errorlog-file=$d/r1/error.log" "$d/r1/nghttpx.conf"
	grep -qxF "pid-file=$d/r1/nghttpx.pid" "$d/r1/nghttpx.conf"
	# skrouterd: its configurations hold no path; they are the same.
	fake_router
	rm -rf "$d"
	FLIMFLAM_SKROUTERD_SCHEMA="$SCHEMA_27" run -0 --separate-stderr \
		ff-topology -r skrouterd --server-port 5555 --run-dir "$d" --config-only --cpu-limit 1
	[ "$(jq -r 'select(.event == "config") | .relays[1].config' <<<"$output")" = "$d/r2/skrouterd.conf" ]
	normalised "$d/r1/skrouterd.conf" >"$BATS_TEST_TMPDIR/r1"
	golden ff-topology-skrouterd-tcp-r1.conf "$BATS_TEST_TMPDIR/r1"
	# A newline is refused: no configuration line can hold one.
	run -1 --separate-stderr ff-topology -r nghttpx -p http1 --server-port 5555 \
		--run-dir "$BATS_TEST_TMPDIR/"$'x\ny' --config-only
	[[ "$stderr" == *"value of DIR cannot be written in the configuration"*"newline"* ]]
}

@test "ff-topology: a relay that cannot start fails with the tail of its log" {
	skip_unless_program nginx
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\necho "nginx: [emerg] pretend failure" >&2\nexit 1\n' >"$BATS_TEST_TMPDIR/fake/nginx"
	chmod +x "$BATS_TEST_TMPDIR/fake/nginx"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH" run -1 --separate-stderr \
		ff-topology -r nginx --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/d"
	[[ "$stderr" == *"r2 (nginx) (pid "*") exited with status 1"* ]]
	[[ "$stderr" == *"  nginx: [emerg] pretend failure"* ]]
	# A tool that prints its help after its error: the error is shown, not the help.
	{
		printf '#!/bin/sh\necho "nginx: invalid option: pretend" >&2\necho >&2\necho "Usage: nginx [-?hvVtTq]" >&2\n'
		for i in $(seq 30); do printf 'echo "  -x%d : help line %d" >&2\n' "$i" "$i"; done
		printf 'exit 1\n'
	} >"$BATS_TEST_TMPDIR/fake/nginx"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH" run -1 --separate-stderr \
		ff-topology -r nginx --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/d2"
	[[ "$stderr" == *"  nginx: invalid option: pretend"* ]]
	[[ "$stderr" != *"help line"* ]]
}

# Real routers, when one is on PATH.

@test "skrouterd: builtin over tcp through a real router pair" {
	skip_unless_program skrouterd
	run_steady flimflam run --json -r skrouterd --warmup 1 --duration 2
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 1e6'
	event_ok "$BATS_TEST_TMPDIR/ev" resources 'all(.relays[]; .cpu_fraction > 0)'
	event_ok "$BATS_TEST_TMPDIR/ev" environment '.proton_library != null and (.proton_library | test("libqpid-proton"))'
	event_ok "$BATS_TEST_TMPDIR/ev" topology 'all(.relays[]; .management_port > 0)'
}

@test "skrouterd: http1 and http2, where the router has the HTTP adaptor" {
	skip_unless_program skrouterd
	run --separate-stderr ff-check --json
	echo "$output" | jq -e -s 'any(.[]; .event == "environment" and .skrouterd_features.http)' >/dev/null ||
		skip "this skrouterd has no HTTP adaptor"
	for wp in h2load-h1:http1 h2load:http2; do
		run_steady flimflam run --json -r skrouterd -w "${wp%:*}" -p "${wp#*:}" --warmup 1 --duration 2
		echo "$output" >"$BATS_TEST_TMPDIR/ev"
		event_ok "$BATS_TEST_TMPDIR/ev" result '.ops_per_s > 0 and .latency_p99_us > 0'
	done
}
