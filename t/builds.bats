#!/usr/bin/env bats
# --build LABEL=PATH: bad forms refused before anything starts; two nginx
# builds (copies of the one installed, each in an install prefix of its
# own) benched interleaved, with the seed that replays the order; each
# build's relays in their own environment; the run summary naming the
# relay build; flamegraph of two builds.

bats_require_minimum_version 1.5.0
load helper

setup() {
	two_nginx_builds
}

# refused CMD...: exit 2, one line on stderr naming what is wrong, nothing started.
refused() {
	run -2 --separate-stderr "$@"
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	nothing_started
}

@test "--build: each bad form is one line, exit 2, before anything starts" {
	printf '#!/bin/sh\necho "not a relay"\n' >"$BATS_TEST_TMPDIR/fake"
	chmod +x "$BATS_TEST_TMPDIR/fake"
	touch "$BATS_TEST_TMPDIR/plain"
	for cmd in run bench; do
		refused flimflam "$cmd" -r nginx --build "a=$BATS_TEST_TMPDIR/missing"
		[[ "$stderr" == "flimflam $cmd: --build a: '$BATS_TEST_TMPDIR/missing': No such file or directory" ]] ||
			[[ "$stderr" == "flimflam: --build a: '$BATS_TEST_TMPDIR/missing': No such file or directory" ]]
		refused flimflam "$cmd" -r nginx --build "a=$BATS_TEST_TMPDIR/plain"
		[[ "$stderr" == *"--build a: '$BATS_TEST_TMPDIR/plain' is not an executable file" ]]
		refused flimflam "$cmd" -r nginx --build "a=$BATS_TEST_TMPDIR/fake"
		[[ "$stderr" == *"--build a: '$BATS_TEST_TMPDIR/fake -v' printed 'not a relay', not nginx's version: not a nginx" ]]
		refused flimflam "$cmd" -r nginx --build "a=$BATS_TEST_TMPDIR"
		[[ "$stderr" == *"--build a: '$BATS_TEST_TMPDIR' is a directory without sbin/nginx or bin/nginx" ]]
		refused flimflam "$cmd" -r nginx --build "$A"
		[[ "$stderr" == *"--build '$A': expected LABEL=PATH" ]]
		refused flimflam "$cmd" -r nginx --build "a b=$A"
		[[ "$stderr" == *"--build 'a b=$A': the label must be 1 to 64 of A-Z a-z 0-9 . _ -" ]]
		refused flimflam "$cmd" -r nginx --build "=$A"
		[[ "$stderr" == *"the label must be"* ]]
		refused flimflam "$cmd" -r nginx --build "a="
		[[ "$stderr" == *"--build a: expected LABEL=PATH, and PATH is empty" ]]
		refused flimflam "$cmd" -r none --build "a=$A"
		[[ "$stderr" == *"--build is for a relay that runs a program, and relay 'none' runs none" ]]
		# A relay binary that is not the relay asked for.
		refused flimflam "$cmd" -r nghttpx -w h2load -p http2 --build "a=$A"
		[[ "$stderr" == *"--build a: '$A' is a directory without sbin/nghttpx or bin/nghttpx" ]]
	done
	refused flimflam bench -r nginx --build "a=$A" --build "a=$B"
	[ "$stderr" = "flimflam bench: --build: the label 'a' is given twice: each build needs its own" ]
	refused flimflam bench -r nginx,none --build "a=$A"
	[ "$stderr" = "flimflam bench: --build is a build of the relay under test: name one relay with -r, not several" ]
	refused flimflam bench --build "a=$A"
	[ "$stderr" = "flimflam bench: --build is a build of the relay under test: name it with -r (skrouterd, nghttpx, nginx, haproxy)" ]
	refused flimflam run -r nginx --build "a=$A" --build "b=$B"
	[ "$stderr" = "flimflam: --build is given twice: 'run' runs one build (flamegraph compares two)" ]
	refused flimflam stat -r nginx --build "a=$A" --build "b=$B"
	refused flimflam flamegraph -r nginx --build "a=$A" --build "a=$B"
	[ "$stderr" = "flimflam: --build: the label 'a' is given twice: each build needs its own" ]
	refused flimflam flamegraph -r nginx --build "a=$A" --build "b=$B" --build "c=$B"
	[ "$stderr" = "flimflam: --build is given three times: 'flamegraph' runs two builds at most" ]
	refused ff-topology -r nginx --server-port 1 --build "a=$BATS_TEST_TMPDIR/fake"
}

@test "--build: the reason for a long path is whole, not cut short at a buffer's size" {
	local long="$BATS_TEST_TMPDIR" i
	for i in 1 2 3 4 5 6 7; do
		long="$long/$(printf 'd%.0s' $(seq 200))"
	done
	for cmd in "flimflam run" "flimflam bench" ff-topology; do
		# shellcheck disable=SC2086 # the command and its subcommand
		refused $cmd -r nginx --build "a=$long"
		[[ "$stderr" == *": --build a: '$long': No such file or directory" ]]
	done
}

# order FILE: the runs' "label/repeat" in the order they ran.
order() {
	jq -r -s 'map(select(.status != "skipped")) | sort_by(.time) | .[] | "\(.build.label)/\(.repeat)"' "$1" | tr '\n' ' '
}

@test "bench: two nginx builds interleaved, each row naming its build, the seed kept and replayed" {
	local f1="$BATS_TEST_TMPDIR/r1.jsonl" f2="$BATS_TEST_TMPDIR/r2.jsonl" sha
	C="$BATS_TEST_TMPDIR/c"
	nginx_prefix "$C"
	sha=$(sha256sum "$A/sbin/nginx" | cut -d' ' -f1)
	run --separate-stderr flimflam bench -w builtin -r nginx -p tcp --warmup 0 --duration 1 \
		--repeat 2 --build "a=$A" --build "b=$B/sbin/nginx" --build "c=$C" --seed 7 --output "$f1"
	echo "$stderr"
	[ "$status" -eq 0 ] || jq -e -s 'all(.[]; .status == "ok" or (.reason | test($busy)))' --arg busy "$BUSY_ERE" "$f1"
	grep -q "^flimflam bench: each round in a shuffled order, seed 7 (--seed 7 replays it)$" <<<"$stderr"
	grep -q "^flimflam bench: build a: nginx $A/sbin/nginx, version nginx/[0-9.]*, sha256 ${sha:0:12}$" <<<"$stderr"
	grep -q "^flimflam bench: \[[1-6]/6\] builtin nginx tcp build c (run 2 of 2)" <<<"$stderr"
	# Every row: its build's label, path, version, sha256; the seed.
	jq -e -s --arg a "$A/sbin/nginx" --arg b "$B/sbin/nginx" --arg c "$C/sbin/nginx" --arg sha "$sha" '
		length == 6 and all(.[]; .seed == 7 and .build.relay == "nginx" and .build.sha256 == $sha and
			(.build.version | test("^nginx/[0-9.]+$")) and .build.proton == null and
			.build.path == {"a": $a, "b": $b, "c": $c}[.build.label]) and
		([.[] | .build.label] | sort) == ["a", "a", "b", "b", "c", "c"] and
		([.[] | select(.status == "ok") | .topology.relays[0].path] | unique | length) >= 2' "$f1"
	# Each round runs each build once.
	jq -e -s 'group_by(.repeat) | all(.[]; map(.build.label) | sort == ["a", "b", "c"])' "$f1"
	# Seed 7 shuffles: the order is not the plan's in every round.
	[ "$(order "$f1")" != "a/1 b/1 c/1 a/2 b/2 c/2 " ]
	run --separate-stderr flimflam bench -w builtin -r nginx -p tcp --warmup 0 --duration 1 \
		--repeat 2 --build "a=$A" --build "b=$B/sbin/nginx" --build "c=$C" --seed 7 --output "$f2"
	[ "$(order "$f1")" = "$(order "$f2")" ]
	jq -e -s 'all(.[]; .seed == 7)' "$f2"
}

@test "bench without --build: rows name the relay on PATH with label null, no seed unless given" {
	local f="$BATS_TEST_TMPDIR/r.jsonl"
	run --separate-stderr flimflam bench -w builtin -r nginx,none -p tcp --warmup 0 --duration 1 --output "$f"
	echo "$stderr"
	! grep -q "shuffled" <<<"$stderr"
	jq -e -s --arg p "$(command -v nginx)" '
		all(.[]; .seed == null) and
		all(.[] | select(.config.relay == "nginx"); .build.label == null and .build.path == $p and
			(.build.sha256 | test("^[0-9a-f]{64}$"))) and
		all(.[] | select(.config.relay == "none"); .build == null)' "$f"
}

# environ PID NAME: the value of NAME in the environment of process PID, or "(unset)".
environ() {
	tr '\0' '\n' <"/proc/$1/environ" | sed -n "s/^$2=//p" | grep . || echo "(unset)"
}

# libz PREFIX: a copy of the libz nginx loads, in PREFIX/lib; echoes its name.
libz() {
	local z
	z=$(ldd "$(command -v nginx)" | awk '$1 ~ /^libz\.so/ { print $3 }')
	[ -n "$z" ] || skip "this nginx does not load libz"
	cp -L "$z" "$1/lib/"
	basename "$z"
}

# maps_has PID FILE: process PID has FILE mapped.
maps_has() {
	grep -qF " $2" "/proc/$1/maps"
}

@test "a build's LD_LIBRARY_PATH is its relays' only: not the caller's, not the server's or the client's" {
	local f="$BATS_TEST_TMPDIR/run.jsonl" p r1 r2 d z
	# nginx rewrites its own environ (its process title): what the relays
	# load from their build's lib/ (a copy of libz) shows their LD_LIBRARY_PATH.
	z=$(libz "$A")
	libz "$B" >/dev/null
	mkdir -p "$BATS_TEST_TMPDIR/caller-lib"
	cp -L "$A/lib/$z" "$BATS_TEST_TMPDIR/caller-lib/"
	LD_LIBRARY_PATH="$BATS_TEST_TMPDIR/caller-lib" start_run "$f" -r nginx --warmup 2 --duration 3 --build "a=$A"
	wait_for_grep '"event":"window"' "$f" 60
	r1=$(jq -r 'select(.event == "topology") | .relays[0].pid' "$f")
	r2=$(jq -r 'select(.event == "topology") | .relays[1].pid' "$f")
	d=$(run_dir_of "$f")
	maps_has "$r1" "$A/lib/$z"
	maps_has "$r2" "$A/lib/$z"
	! maps_has "$r1" "$BATS_TEST_TMPDIR/caller-lib/$z"
	# Everything else of the run (stages, server, client) has the caller's.
	local relays
	relays=" $r1 $r2 $(descendants "$r1" | tr '\n' ' ') $(descendants "$r2" | tr '\n' ' ') "
	for p in $(pids_of_run "$d"); do
		[[ "$relays" == *" $p "* ]] || [ ! -e "/proc/$p" ] || {
			v=$(environ "$p" LD_LIBRARY_PATH 2>/dev/null) || continue
			# A process that ended while it was read (its comm gone) said nothing of its environment.
			[ -n "$(cat "/proc/$p/comm" 2>/dev/null)" ] || continue
			echo "pid $p ($(cat "/proc/$p/comm" 2>/dev/null)): $v"
			[ "$v" = "$BATS_TEST_TMPDIR/caller-lib" ]
		}
	done
	wait_status "$RUN_PID"
	[ "$status" -eq 0 ] || grep -qE -- "$BUSY_ERE" "$f.err"
	jq -e -s --arg a "$A/sbin/nginx" 'map(select(.event == "topology"))[0].build | .label == "a" and .path == $a' "$f"
	# ff-topology alone: its relays have build b's, when the caller has a's.
	local port out="$BATS_TEST_TMPDIR/topo.jsonl"
	port=$(free_port)
	LD_LIBRARY_PATH="$A/lib" ff-topology -r nginx --server-port "$port" --build "b=$B" \
		--run-dir "$BATS_TEST_TMPDIR/topo" >"$out" 3>&- </dev/null &
	local tp=$!
	wait_for_grep '"event":"environment"' "$out" 30
	r1=$(jq -r 'select(.event == "topology") | .relays[0].pid' "$out")
	maps_has "$r1" "$B/lib/$z"
	! maps_has "$r1" "$A/lib/$z"
	[ "$(environ "$tp" LD_LIBRARY_PATH)" = "$A/lib" ]
	kill "$tp"
	wait_exit "$tp" 10
}

@test "the run summary names the relay build, with or without --build" {
	local sha
	sha=$(sha256sum "$(command -v nginx)" | cut -d' ' -f1)
	run_steady flimflam run -r nginx --warmup 0 --duration 1
	grep -qx "  Build:       nginx $(command -v nginx), version nginx/[0-9.]*, sha256 ${sha:0:12}" <<<"$output"
	run_steady flimflam run -r nginx --warmup 0 --duration 1 --build "main=$A"
	grep -qx "  Build:       build main: nginx $A/sbin/nginx, version nginx/[0-9.]*, sha256 ${sha:0:12}" <<<"$output"
	run_steady flimflam run -r nginx --warmup 0 --duration 1 --build "main=$A" --json
	jq -e -s --arg p "$A/sbin/nginx" --arg sha "$sha" '
		map(select(.event == "topology"))[0].build == {"label": "main", "relay": "nginx", "path": $p,
			"version": .[0].build.version, "sha256": $sha, "proton": null} or
		(map(select(.event == "topology"))[0].build | .label == "main" and .path == $p and .sha256 == $sha)' <<<"$output"
	run_steady flimflam run -r none --warmup 0 --duration 1 --json
	jq -e -s 'map(select(.event == "topology"))[0].build == null' <<<"$output"
}

@test "flamegraph with two builds: each build's page, the differential one, what grew and shrank" {
	skip_unless_program perf
	ff-capture --check record 2>/dev/null || skip "perf cannot record here: $(ff-capture --check record 2>&1)"
	cd "$BATS_TEST_TMPDIR"
	run_steady flimflam flamegraph -r nginx --warmup 1 --duration 2 --build "a=$A" --build "b=$B"
	[ -s flamegraph-a.html ] && [ -s flamegraph-b.html ] && [ -s flamegraph-a-vs-b.html ]
	[ -s perf-a.data ] && [ -s perf-b.data ] && [ ! -e perf.data ]
	grep -q '"base_source"' flamegraph-a-vs-b.html || grep -q 'perf-a.data' flamegraph-a-vs-b.html
	grep -qx "== Build a ==" <<<"$output"
	grep -qx "== Build b ==" <<<"$output"
	grep -qx "  Build:       build b: nginx $B/sbin/nginx, .*" <<<"$output"
	grep -qx "Differential flamegraph (b against a)" <<<"$output"
	grep -qx "  Self samples whose share grew the most:" <<<"$output"
	grep -qx "  Self samples whose share shrank the most:" <<<"$output"
	# At least one function moved, both ways (the shares of each add up to 100%).
	grep -A1 "grew the most" <<<"$output" | grep -qE '^ +\+[0-9.]+ pt '
	grep -A1 "shrank the most" <<<"$output" | grep -qE '^ +-[0-9.]+ pt '
	grep -qx "Open it in a browser: file://$BATS_TEST_TMPDIR/flamegraph-a-vs-b.html" <<<"$output"
}

@test "skrouterd: two builds of the router on PATH (its prefix, and the binary) name the Proton each loaded" {
	skip_unless_program skrouterd
	local r p f="$BATS_TEST_TMPDIR/r.jsonl"
	r=$(command -v skrouterd)
	p=$(dirname "$(dirname "$r")")
	[ -d "$p/lib" ] || skip "skrouterd on PATH is not in an install prefix ($r)"
	# The caller's library and Python paths are not the builds'.
	LD_LIBRARY_PATH=/nonexistent PYTHONPATH=/nonexistent run --separate-stderr flimflam bench -w builtin -r skrouterd -p tcp \
		--warmup 0 --duration 1 --build "prefix=$p" --build "binary=$r" --output "$f"
	echo "$stderr"
	[ "$status" -eq 0 ] || jq -e -s 'all(.[]; .status == "ok" or (.reason | test($busy)))' --arg busy "$BUSY_ERE" "$f"
	jq -e -s --arg r "$r" '
		length == 2 and all(.[]; .build.path == $r and (.build.proton.path | test("libqpid-proton")) and
			(.build.sha256 | test("^[0-9a-f]{64}$"))) and
		([.[] | .build.label] | sort) == ["binary", "prefix"]' "$f"
	grep -q "^flimflam bench: build prefix: skrouterd $r, version .*; Proton /.*libqpid-proton" <<<"$stderr"
}

@test "skrouterd: skstat of a build not on PATH, with no PYTHONPATH: the build's skstat and Proton binding" {
	skip_unless_program skrouterd skstat
	local r p
	r=$(command -v skrouterd)
	p=$(dirname "$(dirname "$r")")
	[ -x "$p/bin/skstat" ] || skip "no skstat in the prefix of $r"
	# The build's Proton binding where flimflam looks for it (lib/ff_build.c).
	compgen -G "$p/lib*/python3*/[sd]i[st]*-packages/proton" >/dev/null ||
		skip "no Proton Python binding in the prefix of $r (PREFIX/lib*/python3*/site-packages/proton)"
	PATH=$(path_without skrouterd skstat) run_steady env -u PYTHONPATH -u LD_LIBRARY_PATH \
		flimflam skstat -r skrouterd --warmup 0 --duration 1 --build "main=$p"
	grep -qx "  Build:       build main: skrouterd $r, .*; Proton /.*" <<<"$output"
	grep -qx "Router 1" <<<"$output"
	grep -qx "Router 2" <<<"$output"
}

@test "a build is checked once, where it is given: its stages (and bench's runs) take it as checked, not asking it again" {
	local log="$BATS_TEST_TMPDIR/probes" f="$BATS_TEST_TMPDIR/res.jsonl"
	# The build's nginx: the one installed, noting each version probe (-v).
	mkdir -p "$BATS_TEST_TMPDIR/w/sbin"
	printf '#!/bin/sh\n[ "$1" = -v ] && echo probe >>"%s"\nexec "%s" "$@"\n' "$log" "$(command -v nginx)" \
		>"$BATS_TEST_TMPDIR/w/sbin/nginx"
	chmod +x "$BATS_TEST_TMPDIR/w/sbin/nginx"
	run_steady flimflam run -r nginx --warmup 0 --duration 1 --build "w=$BATS_TEST_TMPDIR/w" --json
	jq -e -s --arg p "$BATS_TEST_TMPDIR/w/sbin/nginx" \
		'map(select(.event == "topology"))[0].build | .label == "w" and .path == $p and (.version | test("^nginx/"))' <<<"$output"
	# flimflam run's check asked it, and ff-topology's environment event (the
	# versions of the programs on PATH, the build's first); its --build did not.
	[ "$(wc -l <"$log")" -eq 2 ]
	rm "$log"
	run --separate-stderr flimflam bench -w builtin -r nginx -p tcp --warmup 0 --duration 1 \
		--build "w=$BATS_TEST_TMPDIR/w" --output "$f"
	echo "$stderr"
	[ "$status" -eq 0 ] || jq -e -s 'all(.[]; .status == "ok" or (.reason | test($busy)))' --arg busy "$BUSY_ERE" "$f"
	jq -e -s 'length == 1 and .[0].build.label == "w" and (.[0].build.version | test("^nginx/"))' "$f"
	# The bench asked it, and the environment event; its run (ff-run) and the
	# run's ff-topology took it as checked.
	[ "$(wc -l <"$log")" -eq 2 ]
}
