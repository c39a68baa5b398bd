# Relay cmd: the user's own program as each relay (--relay-cmd), here
# socat, with its listen and upstream addresses filled in; its words are
# run as they are, never by a shell.
bats_require_minimum_version 1.5.0
load helper

SOCAT='socat TCP-LISTEN:{listen_port},bind={listen_host},reuseaddr,fork TCP:{upstream}'

@test "own relay: socat carries each protocol through two relays, and nothing is left running" {
	skip_unless_program socat nghttpd h2load nginx
	for c in builtin:tcp iperf3:tcp h2load-h1:http1 h2load:http2 builtin-rr:tcp; do
		IFS=: read -r wl proto <<<"$c"
		command -v "${wl%%-*}" >/dev/null || [ "${wl%%-*}" = builtin ] || continue
		run_steady flimflam run --json -r cmd --relay-cmd "$SOCAT" -w "$wl" -p "$proto" --warmup 1 --duration 2
		echo "$output" >"$BATS_TEST_TMPDIR/ev"
		event_ok "$BATS_TEST_TMPDIR/ev" topology '.relay == "cmd" and .hops == 2 and
			all(.relays[]; .program == "cmd" and .command == $cmd and .path == $socat and
			    .pid > 0 and .config == null) and .relays[0].target_port == .relays[1].port' \
			--arg cmd "$SOCAT" --arg socat "$(command -v socat)"
		event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0 and (.errors // 0) == 0 and (.failed // 0) == 0'
		d=$(jq -r 'select(.event == "topology") | .run_dir' "$BATS_TEST_TMPDIR/ev")
		[ -z "$(pids_of_run "$d")" ]
	done
}

@test "own relay: --hops 3 chains three, each to the next, the summary and resources name them" {
	skip_unless_program socat
	run_steady flimflam run --json -r cmd --relay-cmd "$SOCAT" --hops 3 --warmup 1 --duration 2
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" topology '.hops == 3 and (.relays | length) == 3 and
		.relays[0].target_port == .relays[1].port and .relays[1].target_port == .relays[2].port and
		.relays[2].target_port == .server_port'
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0'
	# socat forks a child per connection; children reaped in the window keep
	# their CPU the relay's (t/own-relay's bench test read -0.67 before).
	event_ok "$BATS_TEST_TMPDIR/ev" resources '(.relays | length) == 3 and all(.relays[]; .cpu_s > 0)'
	run_steady flimflam run -r cmd --relay-cmd "$SOCAT" --hops 3 --warmup 1 --duration 2
	has_line '^  R3 CPU: '
	has_line '^  Throughput:  [0-9.]+ [KMG]bit/s$'
}

@test "own relay: the command's words are its argv, placeholders filled inside a word, no shell" {
	skip_unless_program socat
	local p="$BATS_TEST_TMPDIR/my proxy"
	# A proxy of one's own: it keeps its arguments, then becomes socat.
	printf '#!/bin/sh\nprintf "%%s\\n" "$@" >args\nexec socat "TCP-LISTEN:$1,bind=127.0.0.1,reuseaddr,fork" "TCP:$2"\n' >"$p"
	chmod +x "$p"
	run_steady flimflam run --json -r cmd --warmup 0 --duration 1 \
		--relay-cmd "'$p' {listen_port} {upstream} 'a b;touch $BATS_TEST_TMPDIR/pwned' \$(id) role={role}"
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	d=$(jq -r 'select(.event == "topology") | .run_dir' "$BATS_TEST_TMPDIR/ev")
	r1=$(jq -r 'select(.event == "topology") | .relays[0] | "\(.port) 127.0.0.1:\(.target_port)"' "$BATS_TEST_TMPDIR/ev")
	[ "$(sed -n '1p' "$d/r1/args") $(sed -n '2p' "$d/r1/args")" = "$r1" ]
	[ "$(sed -n '3p' "$d/r1/args")" = "a b;touch $BATS_TEST_TMPDIR/pwned" ]
	[ "$(sed -n '4p' "$d/r1/args")" = '$(id)' ]
	[ "$(sed -n '5p' "$d/r1/args")" = 'role=r1' ]
	[ "$(wc -l <"$d/r2/args")" -eq 5 ]
	[ ! -e "$BATS_TEST_TMPDIR/pwned" ]
}

@test "own relay: bad commands are one line, exit 2 (usage) or 1 (a missing program), before anything starts" {
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	run -2 --separate-stderr flimflam run -r cmd --relay-cmd 'socat TCP-LISTEN:5555 TCP:{upstream}'
	[[ "${stderr_lines[0]}" == "flimflam: --relay-cmd: 'socat TCP-LISTEN:5555 TCP:{upstream}' has no {listen}: "* ]]
	run -2 --separate-stderr flimflam run -r cmd --relay-cmd 'socat TCP-LISTEN:{listen_port} TCP:127.0.0.1:1'
	[[ "${stderr_lines[0]}" == "flimflam: --relay-cmd: "*" has no {upstream}: "* ]]
	run -2 --separate-stderr flimflam run -r cmd --relay-cmd 'socat {listen} {upstream} {port}'
	[[ "${stderr_lines[0]}" == "flimflam: --relay-cmd: unknown placeholder '{port}' "* ]]
	run -2 --separate-stderr flimflam run -r cmd --relay-cmd "socat {listen} '{upstream}"
	[ "${stderr_lines[0]}" = "flimflam: --relay-cmd: the single quote is not closed" ]
	run -2 --separate-stderr flimflam run -r cmd
	[ "${stderr_lines[0]}" = "flimflam: relay 'cmd' runs the command of --relay-cmd, and none is given" ]
	run -2 --separate-stderr flimflam run -r nginx --relay-cmd "$SOCAT"
	[ "${stderr_lines[0]}" = "flimflam: --relay-cmd is for relay cmd, not 'nginx'" ]
	run -2 --separate-stderr flimflam run -r cmd --relay-cmd "$SOCAT" --tls
	[ "${stderr_lines[0]}" = "flimflam: --tls: relay 'cmd' cannot prove its links (these can: skrouterd, nghttpx, nginx, haproxy)" ]
	run -2 --separate-stderr flimflam run -r cmd --relay-cmd "$SOCAT" --build a=/bin/true
	[ "${stderr_lines[0]}" = "flimflam: --build is for a relay that runs a program, and relay 'cmd' runs none" ]
	run -1 --separate-stderr flimflam run -r cmd --relay-cmd 'no-such-proxy {listen} {upstream}'
	[ "$stderr" = "flimflam: relay 'cmd': --relay-cmd runs 'no-such-proxy', which is not on PATH" ]
	run -2 --separate-stderr ff-topology -r cmd --relay-cmd 'socat {upstream}' --server-port 5555
	[[ "${stderr_lines[0]}" == "ff-topology: --relay-cmd: 'socat {upstream}' has no {listen}: "* ]]
	run -1 --separate-stderr ff-topology -r cmd --relay-cmd 'no-such-proxy {listen} {upstream}' --server-port 5555 \
		--run-dir "$BATS_TEST_TMPDIR/d"
	[ "$stderr" = "ff-topology: relay 'cmd': --relay-cmd runs 'no-such-proxy', which is not on PATH" ]
	run -2 --separate-stderr flimflam bench -r cmd
	[ "${stderr_lines[0]}" = "flimflam bench: relay 'cmd' runs the command of --relay-cmd, and none is given" ]
	run -2 --separate-stderr flimflam bench -r nginx --relay-cmd "$SOCAT"
	[ "${stderr_lines[0]}" = "flimflam bench: --relay-cmd is for relay cmd, and it is not selected" ]
	nothing_started
}

@test "own relay: a program that exits at once fails the run with its log, and nothing is left running" {
	run -1 --separate-stderr flimflam run --json -r cmd --relay-cmd 'sh -c exit\ 3 {listen} {upstream}' \
		--warmup 0 --duration 1
	[[ "$stderr" == *"r2 (cmd)"*"exited with status 3"* ]] || { echo "$stderr"; false; }
	d=$(jq -r 'select(.event == "start") | .run_dir' <<<"$output" | head -1)
	[ -z "$(pids_of_run "$d")" ]
}

@test "own relay: bench runs it with --relay-cmd, beside the others, and the report names it" {
	skip_unless_program socat nginx
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr flimflam bench -w builtin -r cmd,nginx,none -p tcp --hops 2,3 \
		--relay-cmd "$SOCAT" --warmup 1 --duration 1 --output b.jsonl
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	has_line '^builtin +cmd +tcp '
	jq -e -s --arg cmd "$SOCAT" '[.[] | select(.config.relay == "cmd")] | length == 2 and
		all(.[]; .status == "ok" and .topology.relays[0].command == $cmd)' b.jsonl
	run -0 --separate-stderr flimflam report -o page.html b.jsonl
	grep -q '"cmd' page.html
	# --tls: it cannot prove its links, so its cases are skipped, saying so.
	run --separate-stderr flimflam bench -w builtin -p tcp --tls --relay-cmd "$SOCAT" -r cmd,nginx \
		--warmup 1 --duration 1 --output t.jsonl
	jq -e -s '[.[] | select(.config.relay == "cmd")][0] | .status == "skipped" and (.reason | test("--tls"))' t.jsonl
}

@test "own relay: a relay that crashes as it is stopped is said, once each, and the window's figures stand" {
	skip_unless_program socat
	# The shell aborts itself when asked to stop, as a router with a double
	# free on shutdown does (skupper-router main, thousands of connections).
	local cmd="sh -c 'socat TCP-LISTEN:{listen_port},reuseaddr,fork TCP:{upstream} & trap \"kill -ABRT \$\$\" TERM; wait'"
	run_steady flimflam run --json -r cmd --relay-cmd "$cmd" --warmup 0 --duration 1
	event_ok <(echo "$output") result '.bytes > 0'
	[ "$(grep -c 'crashed as it stopped: was killed by signal 6 (Aborted); see /.*/r[12].log$' <<<"$stderr")" -eq 2 ]
	# A relay that stops as asked is not said to crash.
	run_steady flimflam run --json -r cmd --relay-cmd "$SOCAT" --warmup 0 --duration 1
	[[ "$stderr" != *crashed* ]]
}
