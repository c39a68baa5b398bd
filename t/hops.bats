# --hops N: chains of N relays, client -> r1 -> ... -> rN -> server, over
# the real nginx, nghttpx and (where it is on PATH) skrouterd; each relay a
# role of its own in the events, the summary, stat and the flamegraph; bench
# keys its cases by hops; signals and a relay killed mid-chain leave no
# process and no listening port behind.
bats_require_minimum_version 1.5.0
load helper

FIX="$TOP/t/fixtures/ff-check"
SCHEMA_27="$FIX/schema-2.7/skupper_router/management/skrouter.json"

# listening PORT...: the ports among PORT... some socket listens on (LISTEN
# in /proc/net/tcp, on any address), one a line; nothing when none does.
listening() {
	local p
	for p in "$@"; do
		awk -v p="$(printf '%04X' "$p")" -v d="$p" 'FNR > 1 && $4 == "0A" && substr($2, index($2, ":") + 1) == p { print d; exit }' \
			/proc/net/tcp /proc/net/tcp6 2>/dev/null
	done
}

# chain_ports EVENTS: every port of the run's chain, from its events and
# its relays' configurations: the client's, each relay's own and
# management, each link's (skrouterd's inter-router listeners), the server's.
chain_ports() {
	jq -r 'select(.event == "topology") | .port, .server_port, (.relays[] | .port, .target_port, .management_port) | select(. != null and . > 0)' "$1"
	local d
	d=$(run_dir_of "$1")
	cat "$d"/r?/*.conf 2>/dev/null | sed -nE 's/^ *(port: |listen 127\.0\.0\.1:|frontend=127\.0\.0\.1,)([0-9]+).*/\2/p'
}

# nothing_left_of EVENTS: no process of the run, and none of its ports listening.
nothing_left_of() {
	local d ports
	d=$(run_dir_of "$1")
	[ -z "$(pids_of_run "$d")" ] || { echo "left running: $(pids_of_run "$d")"; false; }
	ports=$(chain_ports "$1" | sort -un)
	[ "$(wc -w <<<"$ports")" -ge 2 ]
	[ -z "$(listening $ports)" ] || { echo "still listening: $(listening $ports)"; false; }
}

# chain_ok EVENTS N RELAY: the topology is a chain of N relays r1..rN, each
# aimed at the next and rN at the server, the client at r1; the window's
# resources name the same roles; the workload moved data.
chain_ok() {
	local f="$1" n="$2" relay="$3"
	event_ok "$f" topology '.hops == $h and .relay == $relay and
		([.relays[].role] == [range(1; $h + 1) | "r\(.)"]) and
		.port == .relays[0].port and .relays[-1].target_port == .server_port and
		([range(0; $h - 1) as $i | .relays[$i].target_port == .relays[$i + 1].port] | all) and
		([.relays[].pid] | unique | length) == $h and all(.relays[]; .program == $relay)' \
		--argjson h "$n" --arg relay "$relay"
	# A relay of a slow 1 s window may have used next to no CPU: more than none, together.
	event_ok "$f" resources '[.relays[].role] == [range(1; $h + 1) | "r\(.)"] and
		all(.relays[]; .cpu_fraction >= 0 and .max_rss_bytes > 0) and ([.relays[].cpu_fraction] | add) > 0' \
		--argjson h "$n"
	event_ok "$f" result '.bits_per_s > 0'
}

# A stand-in skrouterd on PATH that is never run (--config-only starts nothing).
fake_router() {
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\n[ "$1" = --version ] && echo 2.7.6 && exit 0\necho "fake skrouterd: not for running" >&2\nexit 1\n' >"$BATS_TEST_TMPDIR/fake/skrouterd"
	chmod +x "$BATS_TEST_TMPDIR/fake/skrouterd"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH"
}

# block FILE ENTITY: the blocks of that entity in a router configuration, one a line ("port=1 role=x").
block() {
	awk -v e="$2" '$0 == e " {" { b = 1; s = ""; next } b && $0 == "}" { print s; b = 0; next }
		b { gsub(/^ +/, ""); sub(/: /, "="); s = s (s ? " " : "") $0 }' "$1"
}

@test "hops: bad values, and relay none with --hops, are usage errors before anything starts" {
	local v c
	for v in 0 9 -1 x 2.5 "" 1,2; do
		for c in run stat record skstat flamegraph; do
			run -2 --separate-stderr flimflam "$c" -r nginx --hops "$v"
			[[ "${stderr_lines[0]}" == "flimflam: --hops: "* ]] || { echo "$c --hops '$v': $stderr"; false; }
			[[ "${stderr_lines[1]}" == "usage: flimflam $c "* ]]
		done
		run -2 --separate-stderr ff-topology -r nginx --hops "$v" --server-port 5555
		[[ "${stderr_lines[0]}" == "ff-topology: --hops: "* ]]
		run -2 --separate-stderr ff-workload serve --hops "$v"
		[[ "${stderr_lines[0]}" == "ff-workload: --hops: "* ]]
	done
	for v in 0 9 x "" 1,,2 1,1 ,2; do
		run -2 --separate-stderr flimflam bench -r nginx --hops "$v"
		[[ "${stderr_lines[0]}" == "flimflam bench: --hops: "* ]] || { echo "bench --hops '$v': $stderr"; false; }
	done
	run -2 --separate-stderr flimflam run -r none --hops 2
	[ "${stderr_lines[0]}" = "flimflam: --hops: relay 'none' runs no relay between client and server (its chain has 0 hops); --hops is for skrouterd, nghttpx, nginx, haproxy, cmd" ]
	run -2 --separate-stderr ff-topology -r none --hops 1 --server-port 5555
	[[ "${stderr_lines[0]}" == "ff-topology: --hops: relay 'none' runs no relay"* ]]
	run -2 --separate-stderr flimflam bench -r none --hops 1,2
	[ "${stderr_lines[0]}" = "flimflam bench: --hops is for the relays that run (skrouterd, nghttpx, nginx, haproxy, cmd), and only relay none is selected" ]
	run -2 --separate-stderr flimflam run -r nginx --hops 3 --hops 4
	[[ "${stderr_lines[0]}" == "flimflam: option '--hops' is given twice"* ]]
	nothing_started
}

@test "hops: skrouterd chains of 1 and 4: r1 keeps the listener, rN the connector, each link i -> i+1 its own port" {
	fake_router
	local d="$BATS_TEST_TMPDIR/d" i n
	FLIMFLAM_SKROUTERD_SCHEMA="$SCHEMA_27" run -0 --separate-stderr \
		ff-topology -r skrouterd --hops 1 --server-port 5555 --run-dir "$d" --config-only
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" config '.hops == 1 and [.relays[].role] == ["r1"]'
	# One router with both adaptors, no inter-router link, its management listener.
	[ "$(block "$d/r1/skrouterd.conf" tcpListener | wc -l)" -eq 1 ]
	block "$d/r1/skrouterd.conf" tcpConnector | grep -q 'port=5555 address=flimflam/tcp'
	[ -z "$(block "$d/r1/skrouterd.conf" connector)" ]
	block "$d/r1/skrouterd.conf" listener | grep -q 'role=normal'
	! block "$d/r1/skrouterd.conf" listener | grep -q inter-router || false
	[ ! -e "$d/r2" ]

	rm -rf "$d"
	FLIMFLAM_SKROUTERD_SCHEMA="$SCHEMA_27" run -0 --separate-stderr \
		ff-topology -r skrouterd --hops 4 -p http1 --cpu-limit 2 --server-port 5555 --run-dir "$d" --config-only
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" config '.hops == 4 and [.relays[].role] == ["r1", "r2", "r3", "r4"]'
	for i in 1 2 3 4; do
		n="$d/r$i/skrouterd.conf"
		grep -q "^    id: flimflam-r$i\$" "$n"
		grep -q '^    workerThreads: 2$' "$n"
		block "$n" listener | grep -q 'role=normal'
		# Only r1 takes the client's traffic, only r4 reaches the server.
		[ "$(block "$n" httpListener | wc -l)" -eq "$((i == 1))" ]
		[ "$(block "$n" httpConnector | wc -l)" -eq "$((i == 4))" ]
		# An inter-router listener on each router past r1, a connector on each before r4.
		[ "$(block "$n" listener | grep -c 'role=inter-router')" -eq "$((i > 1))" ]
		[ "$(block "$n" connector | wc -l)" -eq "$((i < 4))" ]
	done
	block "$d/r4/skrouterd.conf" httpConnector | grep -q 'port=5555 .*protocolVersion=HTTP1'
	# Link i -> i+1: r(i)'s connector reaches r(i+1)'s inter-router listener, and the links differ.
	for i in 1 2 3; do
		block "$d/r$i/skrouterd.conf" connector | grep -q "^name=to-r$((i + 1)) "
		[ "$(block "$d/r$i/skrouterd.conf" connector | sed -E 's/.*port=([0-9]+).*/\1/')" = \
			"$(block "$d/r$((i + 1))/skrouterd.conf" listener | grep inter-router | sed -E 's/.*port=([0-9]+).*/\1/')" ]
	done
	[ "$(cat "$d"/r?/skrouterd.conf | sed -nE 's/^    port: ([0-9]+)$/\1/p' | grep -v '^5555$' | sort | uniq -d)" = \
		"$(for i in 1 2 3; do block "$d/r$i/skrouterd.conf" connector | sed -E 's/.*port=([0-9]+).*/\1/'; done | sort)" ]
}

@test "hops: nginx chains of 1, 3 and 4 move data, one role a relay, in the events and the summary" {
	skip_unless_program nginx
	local n
	for n in 1 3 4; do
		run_steady flimflam run --json -r nginx --hops "$n" --warmup 1 --duration 1
		echo "$output" >"$BATS_TEST_TMPDIR/ev$n"
		chain_ok "$BATS_TEST_TMPDIR/ev$n" "$n" nginx
		nothing_left_of "$BATS_TEST_TMPDIR/ev$n"
	done
	# The default is today's pair.
	run_steady flimflam run --json -r nginx --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev2"
	chain_ok "$BATS_TEST_TMPDIR/ev2" 2 nginx
	# The summary names the chain and every relay.
	run_steady flimflam run -r nginx --hops 3 --warmup 0 --duration 1
	has_line '^  Hops:        3 \(client -> R1 -> \.\.\. -> R3 -> server\)$'
	has_line '^  R1 CPU: ' && has_line '^  R2 CPU: ' && has_line '^  R3 RSS: '
	! has_line '^  R4 ' || false
}

@test "hops: nghttpx chains of 1 and 3 carry HTTP/1.1 and HTTP/2" {
	skip_unless_program nghttpx h2load nghttpd nginx
	run_steady flimflam run --json -r nghttpx -w h2load -p http2 --hops 3 --warmup 1 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	chain_ok "$BATS_TEST_TMPDIR/ev" 3 nghttpx
	event_ok "$BATS_TEST_TMPDIR/ev" result '.ops_per_s > 0 and .failed == 0'
	nothing_left_of "$BATS_TEST_TMPDIR/ev"
	run_steady flimflam run --json -r nghttpx -w h2load-h1 -p http1 --hops 1 --warmup 1 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	chain_ok "$BATS_TEST_TMPDIR/ev" 1 nghttpx
	event_ok "$BATS_TEST_TMPDIR/ev" result '.ops_per_s > 0 and .failed == 0'
	nothing_left_of "$BATS_TEST_TMPDIR/ev"
}

@test "hops: CPU placement: one relay leaves the workload a CPU; more relays than CPUs share, and the summary says so" {
	skip_unless_program nginx
	local cpus
	# Two CPUs of ours, whatever the machine has.
	cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[:2])))')
	[[ "$cpus" == *,* ]] || skip "needs two CPUs (this process may use $cpus)"
	run_steady taskset -c "$cpus" flimflam run --json -r nginx --hops 1 --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" topology '.cpus_shared == false and .relays[0].cpus == ($c | split(",")[0])' --arg c "$cpus"
	event_ok "$BATS_TEST_TMPDIR/ev" server '.cpus == ($c | split(",")[1])' --arg c "$cpus"
	run_steady taskset -c "$cpus" flimflam run --json -r nginx --hops 3 --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" topology '.cpus_shared == true and .relays[0].cpus == .relays[2].cpus and .relays[0].cpus != .relays[1].cpus'
	run_steady taskset -c "$cpus" flimflam run -r nginx --hops 3 --warmup 0 --duration 1
	has_line '^  Note:        too few CPUs for each relay to have its own \(3 relays of 1 CPU, 2 CPUs here\): the relays share CPUs$'
	has_line '^  CPU limit:   1 \(R1 on CPU [0-9]+, R2 on CPU [0-9]+, R3 on CPU [0-9]+\)$'
}

@test "hops: stat has a block per relay of a chain of 3, and the flamegraph a tower per relay" {
	skip_unless_program nginx perf
	ff-capture --check stat 2>/dev/null || skip "perf cannot attach here: $(ff-capture --check stat 2>&1)"
	cd "$BATS_TEST_TMPDIR"
	run_steady flimflam stat --json -r nginx --hops 3 --warmup 0 --duration 1
	echo "$output" >ev
	[ "$(jq -r 'select(.event == "stat") | .role' ev | tr '\n' ' ')" = "r1 r2 r3 " ]
	run_steady flimflam stat -r nginx --hops 3 --warmup 0 --duration 1
	has_line '^perf stat: R1$' && has_line '^perf stat: R2$' && has_line '^perf stat: R3$'
	run_steady flimflam flamegraph -r nginx --hops 3 --warmup 0 --duration 2
	sed -n 's/^<script type="application\/json" id="flame-data">\(.*\)<\/script>$/\1/p' flamegraph.html >data
	jq -e '[.meta.relays[].role] == ["r1", "r2", "r3"] and
		(.names | map(select(test("^R[123] nginx$"))) | length) == 3' data
}

@test "hops: SIGINT and SIGTERM to a run over a chain of 4 leave no process and no listening port" {
	skip_unless_program nginx
	local sig want
	for sig in INT TERM; do
		[ "$sig" = INT ] && want=130 || want=143
		start_run "$BATS_TEST_TMPDIR/ev" -r nginx --hops 4 --warmup 0 --duration 30
		wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 20
		d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
		[ "$(jq -s '[.[] | select(.event == "topology") | .relays[]] | length' "$BATS_TEST_TMPDIR/ev")" -eq 4 ]
		# Every relay listens now: the check after the stop can fail.
		[ "$(listening $(jq -r 'select(.event == "topology") | .relays[].port' "$BATS_TEST_TMPDIR/ev") | wc -l)" -eq 4 ]
		kill -"$sig" "$RUN_PID"
		wait_status "$RUN_PID"
		[ "$status" -eq "$want" ]
		grep -q "^flimflam: stopped by SIG$sig; nothing is left running" "$BATS_TEST_TMPDIR/ev.err"
		nothing_left_of "$BATS_TEST_TMPDIR/ev"
	done
}

@test "hops: a relay killed in the middle of a chain of 4 fails the run, naming it; nothing is left" {
	skip_unless_program nginx
	local victim
	start_run "$BATS_TEST_TMPDIR/ev" -r nginx --hops 4 --warmup 0 --duration 5
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 20
	victim=$(jq -r 'select(.event == "topology") | .relays[2].pid' "$BATS_TEST_TMPDIR/ev")
	[ -n "$victim" ] && [ "$victim" != null ]
	kill -KILL "$victim"
	wait_status "$RUN_PID"
	[ "$status" -eq 1 ]
	grep -q "^ff-topology: r3 (nginx) (pid $victim) was killed by signal 9" "$BATS_TEST_TMPDIR/ev.err"
	! grep -q '"event":"result"' "$BATS_TEST_TMPDIR/ev" || false
	nothing_left_of "$BATS_TEST_TMPDIR/ev"
}

@test "hops: bench --hops 1,2 keys its rows by hops; relay none runs once; compare matches by hops" {
	skip_unless_program nginx
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr flimflam bench -w builtin -r nginx,none --hops 1,2 --warmup 0 --duration 1 --output b.jsonl
	if [ "$status" -eq 1 ] && grep -qE -- "$BUSY_ERE" b.jsonl; then
		echo "# busy machine: the bench once more" >&3
		run --separate-stderr flimflam bench -w builtin -r nginx,none --hops 1,2 --warmup 0 --duration 1 --output b.jsonl --force
	fi
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.config | "\(.relay) \(.hops)"' b.jsonl | sort | tr '\n' ',')" = "nginx 1,nginx 2,none 0," ]
	jq -e -s 'map(select(.config.relay == "nginx")) | all(.[]; (.topology.relays | length) == .config.hops and
		(.resources.relays | length) == .config.hops)' b.jsonl
	has_line '^Workload +Relay +Protocol +Hops +Bits/s +Ops/s +Lat +R1 CPU +R1 RSS +R2 CPU +R2 RSS$'
	has_line '^builtin +nginx +tcp +1 +[0-9.]+[KMG]? '
	has_line '^builtin +nginx +tcp +2 +[0-9.]+[KMG]? '
	has_line '^builtin +none +tcp +0 +[0-9.]+[KMG]? '
	has_line '^Relay CPU per unit of work \(every relay of the chain, R1 \+ \.\.\. \+ RN; lower is better\)$'
	# summarize reads them back the same; compare matches each chain with its own.
	run -0 flimflam bench summarize b.jsonl
	has_line '^builtin +nginx +tcp +1 '
	cp b.jsonl c.jsonl
	run -0 --separate-stderr flimflam compare --json b.jsonl c.jsonl
	[ "$(jq -r 'select(.event == "comparison" and .metric == "bits_per_s") | "\(.relay) \(.hops)"' <<<"$output" | sort | tr '\n' ',')" = "nginx 1,nginx 2,none 0," ]
	! jq -e 'select(.event == "unmatched")' <<<"$output" || false
	run -0 --separate-stderr flimflam compare b.jsonl c.jsonl
	has_line '^builtin +nginx \(1 hop\) +tcp '
	has_line '^builtin +nginx +tcp '
	# Records from before --hops are today's pair (none: no relay).
	jq -c 'del(.config.hops)' b.jsonl >old.jsonl
	run -0 --separate-stderr flimflam compare --json old.jsonl b.jsonl
	[ "$(jq -r 'select(.event == "unmatched") | "\(.side) \(.relay) \(.hops)"' <<<"$output")" = "new nginx 1" ]
	# Without --hops, the table is the original's.
	run -0 flimflam bench summarize <(jq -c 'select(.config.hops != 1)' b.jsonl)
	has_line '^Workload +Relay +Protocol +Bits/s +Ops/s +Lat +R1 CPU +R1 RSS +R2 CPU +R2 RSS$'
}

@test "hops: skrouterd chains of 1, 3 and 4 carry builtin (where skrouterd is on PATH)" {
	skip_unless_program skrouterd
	local n
	for n in 1 3 4; do
		run_steady flimflam run --json -r skrouterd --hops "$n" --warmup 1 --duration 1
		echo "$output" >"$BATS_TEST_TMPDIR/ev$n"
		chain_ok "$BATS_TEST_TMPDIR/ev$n" "$n" skrouterd
		event_ok "$BATS_TEST_TMPDIR/ev$n" topology 'all(.relays[]; .management_port > 0)'
		nothing_left_of "$BATS_TEST_TMPDIR/ev$n"
	done
}

@test "hops: skstat of a chain of 3 routers: a block per router (where skrouterd and skstat are on PATH)" {
	skip_unless_program skrouterd skstat
	ff-capture --check skstat 2>/dev/null || skip "skstat does not run here: $(ff-capture --check skstat 2>&1)"
	run_steady flimflam skstat --json --hops 3 --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	[ "$(jq -r 'select(.event == "skstat") | .role' "$BATS_TEST_TMPDIR/ev" | tr '\n' ' ')" = "r1 r2 r3 " ]
	# Each block is its own router's.
	jq -s -e 'map(select(.event == "skstat")) | all(.[]; .role as $r | .general | test("Router Id +flimflam-" + $r + "\\b"))' "$BATS_TEST_TMPDIR/ev"
	nothing_left_of "$BATS_TEST_TMPDIR/ev"
	run_steady flimflam skstat --hops 3 --warmup 0 --duration 1
	[[ "$output" == *$'\nRouter 1\n'*$'\nRouter 2\n'*$'\nRouter 3\n'*"Router Statistics"* ]]
}
