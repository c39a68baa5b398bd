#!/usr/bin/env bats
# --workers: each relay's worker count, through its driver's own setting
# (skrouterd's router workerThreads, nghttpx's workers, nginx's
# worker_processes, haproxy's nbthread); a sweep dimension of bench.

bats_require_minimum_version 1.5.0

load helper

FIX="$TOP/t/fixtures/ff-check"
SCHEMA_27="$FIX/schema-2.7/skupper_router/management/skrouter.json"

# A stand-in skrouterd on PATH that is never run (--config-only starts nothing).
fake_router() {
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\n[ "$1" = --version ] && echo 3.2.0 && exit 0\necho "fake skrouterd: not for running" >&2\nexit 1\n' >"$BATS_TEST_TMPDIR/fake/skrouterd"
	chmod +x "$BATS_TEST_TMPDIR/fake/skrouterd"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH"
}

# conf RELAY PROTOCOL FILE [ARGS...]: the relays' configurations into $BATS_TEST_TMPDIR/RELAY.
conf() {
	local relay="$1" proto="$2" d="$BATS_TEST_TMPDIR/$1-$2"
	shift 2
	run -0 --separate-stderr ff-topology -r "$relay" -p "$proto" --server-port 5555 \
		--run-dir "$d" --config-only "$@"
}

@test "workers: --workers reaches each relay's own setting, in every relay of the chain" {
	skip_unless_program nginx nghttpx haproxy
	conf nginx tcp --workers 3
	[ "$(grep -c '^worker_processes 3;$' "$BATS_TEST_TMPDIR"/nginx-tcp/r[12]/nginx.conf | paste -sd,)" = \
		"$BATS_TEST_TMPDIR/nginx-tcp/r1/nginx.conf:1,$BATS_TEST_TMPDIR/nginx-tcp/r2/nginx.conf:1" ]
	conf nginx http1 --workers 2 --hops 3
	for r in r1 r2 r3; do grep -qx 'worker_processes 2;' "$BATS_TEST_TMPDIR/nginx-http1/$r/nginx.conf"; done
	conf nghttpx http2 --workers 3
	for r in r1 r2; do grep -qx 'workers=3' "$BATS_TEST_TMPDIR/nghttpx-http2/$r/nghttpx.conf"; done
	conf haproxy tcp --workers 4 --cpu-limit 0
	for r in r1 r2; do grep -qx '    nbthread 4' "$BATS_TEST_TMPDIR/haproxy-tcp/$r/haproxy.conf"; done
	fake_router
	FLIMFLAM_SKROUTERD_SCHEMA="$SCHEMA_27" conf skrouterd tcp --workers 3
	for r in r1 r2; do grep -qx '    workerThreads: 3' "$BATS_TEST_TMPDIR/skrouterd-tcp/$r/skrouterd.conf"; done
	# Without it, today's: one per CPU of --cpu-limit, else the relay's own (skrouterd 4).
	FLIMFLAM_SKROUTERD_SCHEMA="$SCHEMA_27" conf skrouterd http1 --cpu-limit 0
	grep -qx '    workerThreads: 4' "$BATS_TEST_TMPDIR/skrouterd-http1/r1/skrouterd.conf"
	conf nghttpx http1 --cpu-limit 2
	grep -qx 'workers=2' "$BATS_TEST_TMPDIR/nghttpx-http1/r1/nghttpx.conf"
}

@test "workers: bad values, relays that take none and a router whose schema has no workerThreads are usage errors" {
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	mkdir "$BATS_TEST_TMPDIR/d" && cd "$BATS_TEST_TMPDIR/d"
	run -2 --separate-stderr flimflam run -r nginx --workers 0
	[ "${stderr_lines[0]}" = "flimflam: --workers: 0 is out of range (1 to 1024)" ]
	run -2 --separate-stderr flimflam run -r nginx --workers 1025
	[ "${stderr_lines[0]}" = "flimflam: --workers: 1025 is out of range (1 to 1024)" ]
	run -2 --separate-stderr flimflam run -r nginx --workers two
	[ "${stderr_lines[0]}" = "flimflam: --workers: 'two' is not a number" ]
	run -2 --separate-stderr flimflam run -r none --workers 2
	[ "${stderr_lines[0]}" = "flimflam: --workers is for relays skrouterd, nghttpx, nginx, haproxy, not 'none': flimflam does not set its worker count" ]
	run -2 --separate-stderr flimflam stat -r cmd --relay-cmd 'socat TCP-LISTEN:{listen_port} TCP:{upstream}' --workers 2
	[ "${stderr_lines[0]}" = "flimflam: --workers is for relays skrouterd, nghttpx, nginx, haproxy, not 'cmd': flimflam does not set its worker count" ]
	run -2 --separate-stderr ff-topology -r none --workers 2 --server-port 5555
	[ "${stderr_lines[0]}" = "ff-topology: --workers is for relays skrouterd, nghttpx, nginx, haproxy, not 'none': flimflam does not set its worker count" ]
	# bench: each value in range, once; some selected relay takes it.
	run -2 --separate-stderr flimflam bench -w builtin -r nginx --workers 1,,2
	[ "${stderr_lines[0]}" = "flimflam bench: --workers: empty number in '1,,2'" ]
	run -2 --separate-stderr flimflam bench -w builtin -r nginx --workers 2,1,2
	[ "${stderr_lines[0]}" = "flimflam bench: --workers: 2 is given twice" ]
	run -2 --separate-stderr flimflam bench -w builtin -r nginx --workers 1,0
	[ "${stderr_lines[0]}" = "flimflam bench: --workers: 0 is out of range (1 to 1024)" ]
	run -2 --separate-stderr flimflam bench -w builtin -r none --workers 1,2
	[ "${stderr_lines[0]}" = "flimflam bench: --workers is for relays skrouterd, nghttpx, nginx, haproxy, and none of them is selected" ]
	# A router whose own schema has no router workerThreads cannot take it.
	fake_router
	jq 'del(.entityTypes.router.attributes.workerThreads)' "$SCHEMA_27" >"$BATS_TEST_TMPDIR/no-workers.json"
	FLIMFLAM_SKROUTERD_SCHEMA="$BATS_TEST_TMPDIR/no-workers.json" run -2 --separate-stderr \
		ff-topology -r skrouterd --workers 2 --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/e" --config-only
	[ "${stderr_lines[0]}" = "ff-topology: --workers: the skrouterd at '$BATS_TEST_TMPDIR/fake/skrouterd' has no workerThreads in its router schema ($BATS_TEST_TMPDIR/no-workers.json)" ]
	[ ! -e "$BATS_TEST_TMPDIR/e/r1/skrouterd.conf" ]
	nothing_started
	[ -z "$(ls)" ]
}

@test "workers: a run says its workers, and more than --cpu-limit's CPUs in a note and in topology" {
	skip_unless_program nginx
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr flimflam run -w builtin -r nginx --workers 2 --cpu-limit 1 --warmup 0 --duration 1
	has_line '^  Workers: +2 per relay \(worker_processes, --workers\)$'
	has_line '^  Note: +2 workers per relay on --cpu-limit 1: they share the relay.s CPU$'
	run -0 --separate-stderr flimflam run -w builtin -r nginx --workers 2 --cpu-limit 1 --warmup 0 --duration 1 --json
	echo "$output" >ev.jsonl
	event_ok ev.jsonl topology '.workers == 2 and .workers_setting == "worker_processes" and .workers_over_cpu_limit == true'
	# The configuration each relay ran with, and its master's workers.
	run -0 jq -r 'select(.event == "topology") | .relays[].config' ev.jsonl
	for c in "${lines[@]}"; do grep -qx 'worker_processes 2;' "$c"; done
	# Today's without it: one per CPU of --cpu-limit, nothing said.
	run -0 --separate-stderr flimflam run -w builtin -r nginx --cpu-limit 1 --warmup 0 --duration 1
	has_line '^  Workers: +1 per relay \(worker_processes\)$'
	refute_line --partial 'workers per relay on'
	# Relay none has none to say.
	run -0 --separate-stderr flimflam run -w builtin -r none --warmup 0 --duration 1
	refute_line --partial 'Workers:'
}

@test "workers: each --workers point is a case of its own, in the results, the table and compare" {
	skip_unless_program nginx
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr flimflam bench -w builtin -r nginx,none --workers 1,2 --cpu-limit 0 \
		--warmup 0 --duration 1 --output w.jsonl
	# nginx once per value, none once with its own.
	run -0 jq -sr 'map("\(.config.relay) \(.config.workers) \(.status)") | join(",")' w.jsonl
	[ "$output" = "nginx 1 ok,nginx 2 ok,none null ok" ]
	# Each ran with its point's workers.
	run -0 jq -sr '.[] | select(.config.relay == "nginx") | "\(.config.workers) \(.topology.workers) \(.run_dir)"' w.jsonl
	[ "${lines[0]%% /*}" = "1 1" ] && [ "${lines[1]%% /*}" = "2 2" ]
	grep -qx 'worker_processes 1;' "${lines[0]#* * }/r1/nginx.conf"
	grep -qx 'worker_processes 2;' "${lines[1]#* * }/r1/nginx.conf"
	run -0 flimflam bench summarize w.jsonl
	has_line '^builtin workers=1 +nginx +tcp '
	has_line '^builtin workers=2 +nginx +tcp '
	has_line '^builtin workers=own +none +tcp '
	cp w.jsonl w2.jsonl
	run --separate-stderr flimflam compare w.jsonl w2.jsonl
	has_line '^builtin workers=2 +nginx +tcp '
	refute_line --partial 'only in'
	run --separate-stderr flimflam compare --json w.jsonl w2.jsonl
	run -0 jq -sr '[.[] | select(.workers != null) | .workers] | unique | join(",")' <<<"$output"
	[ "$output" = "1,2" ]
}

@test "workers: the real router runs with --workers' workerThreads" {
	command -v skrouterd >/dev/null && command -v skstat >/dev/null ||
		skip "skrouterd and skstat are not installed here (the user's own build, on PATH)"
	cd "$BATS_TEST_TMPDIR"
	flimflam skstat -w builtin --workers 3 --cpu-limit 1 --warmup 0 --duration 1 --json >ev.jsonl
	event_ok ev.jsonl topology '.workers == 3 and .workers_setting == "router workerThreads" and .workers_over_cpu_limit == true'
	run -0 jq -r 'select(.event == "topology") | .relays[].config' ev.jsonl
	[ "${#lines[@]}" = 2 ]
	for c in "${lines[@]}"; do grep -qx '    workerThreads: 3' "$c"; done
	# What each router itself says (skstat -g).
	run -0 jq -r 'select(.event == "skstat") | .general' ev.jsonl
	[ "$(grep -cE '^ *Worker Threads +3$' <<<"$output")" = 2 ]
}
