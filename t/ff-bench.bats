#!/usr/bin/env bats
# ff-bench: the matrix run through flimflam run (table, results file,
# skipped, failed, repeats, signals), summarize, and compare with a
# Mann-Whitney U test checked against independently computed values.

bats_require_minimum_version 1.5.0
load helper

FIX="$TOP/t/fixtures/ff-bench"

# table FILE: the bench table of a bench's or summarize's output (from the
# heading to the blank line after the rows).
table() {
	sed -n '/^Workload /,/^$/{p;/^$/q;}' "$1"
}

# skip_if_busy FILE: skip when the only failed runs in the results FILE
# failed because the machine was too busy (BUSY_ERE). Superseded by
# bench_steady, which runs such a bench once more instead of skipping; kept
# only until the tests still calling it move to bench_steady.
skip_if_busy() {
	jq -e -s 'any(.[]; .status == "failed") and
		all(.[] | select(.status == "failed"); .reason | test($busy))' --arg busy "$BUSY_ERE" \
		"$1" >/dev/null || return 0
	skip "the machine is too busy: $(jq -r -s 'first(.[] | select(.status == "failed")) | .reason' "$1")"
}

# bench_steady FILE CMD...: bats' run --separate-stderr of a bench CMD whose
# results file is FILE, its stderr shown if the test fails. When a run
# failed because the machine was too busy for a workload tool to measure
# the window asked for (ff-workload refuses such a run, the tool's call),
# it says so and runs the bench once more; the caller judges that second
# one as it is, status included.
bench_steady() {
	local f="$1"
	shift
	run --separate-stderr "$@"
	printf '%s\n' "$stderr"
	if jq -e -s 'any(.[]; .status == "failed" and (.reason | test($busy)))' --arg busy "$BUSY_ERE" \
		"$f" >/dev/null 2>&1; then
		echo "# busy machine ($(jq -r -s --arg busy "$BUSY_ERE" 'first(.[] | select(.status == "failed" and (.reason | test($busy)))) | .reason' "$f")): once more" >&3
		rm -f "$f"
		run --separate-stderr "$@"
		printf '%s\n' "$stderr"
	fi
}

teardown() {
	if [ -s "$BATS_TEST_TMPDIR/pid" ]; then
		kill "$(cat "$BATS_TEST_TMPDIR/pid")" 2>/dev/null || true
	fi
}

# Usage

@test "ff-bench: -h prints the usage, with summarize and compare; as flimflam bench, compare and check, their own names" {
	run -0 --separate-stderr ff-bench -h
	[ "${lines[0]}" = "usage: ff-bench [-h] [-w WORKLOADS] [-r RELAYS] [-p PROTOCOLS] [--jobs JOBS]" ]
	has_line '^       ff-bench summarize \[FILE\]$'
	has_line '^       ff-bench compare \[--threshold PCT\]'
	has_line '--repeat N'
	run -0 ff-bench compare -h
	has_line '^usage: ff-bench compare '
	# Through flimflam, the usage and the messages name the command typed,
	# and the synopsis stays aligned under the longer name.
	run -0 flimflam bench -h
	[ "${lines[0]}" = "usage: flimflam bench [-h] [-w WORKLOADS] [-r RELAYS] [-p PROTOCOLS] [--jobs JOBS]" ]
	[ "${lines[1]}" = "                      [--warmup SECONDS] [--duration SECONDS] [--cpu-limit COUNT]" ]
	has_line '^       flimflam bench compare \[--threshold PCT\]'
	run -0 flimflam compare -h
	[ "${lines[0]}" = "usage: flimflam compare [-h] [--threshold PCT] [--format text|markdown] [--json]" ]
	[ "${lines[1]}" = "                        [--base LABEL] [--new LABEL] BASE [NEW]" ]
	run -2 --separate-stderr flimflam compare only-one
	[ "$stderr" = "flimflam compare: expected two results files, BASE and NEW, or one with --base LABEL and --new LABEL
usage: flimflam compare [-h] [--threshold PCT] [--format text|markdown] [--json]
                        [--base LABEL] [--new LABEL] BASE [NEW]" ]
	run -2 --separate-stderr flimflam bench compare only-one
	[ "${stderr_lines[0]}" = "flimflam bench compare: expected two results files, BASE and NEW, or one with --base LABEL and --new LABEL" ]
	[ "${stderr_lines[2]}" = "                              [--base LABEL] [--new LABEL] BASE [NEW]" ]
	run -2 --separate-stderr flimflam bench --repeat 0
	[ "${stderr_lines[0]}" = "flimflam bench: --repeat: 0 is out of range (1 to 10000)" ]
	run -2 --separate-stderr flimflam check --bogus
	[ "$stderr" = "flimflam check: unknown option '--bogus'
usage: flimflam check [-h] [--json]
usage: flimflam check --hosts ROLE=[USER@]HOST[/ADDRESS],... [-w WORKLOAD] [-r RELAY]
                      [--hops N]" ]
}

@test "ff-bench: unknown, repeated and empty names are usage errors" {
	run -2 --separate-stderr ff-bench -w builtin,nope
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "ff-bench: unknown workload 'nope' (expected builtin, iperf3, h2load, h2load-h1, builtin-rr, builtin-crr)" ]
	run -2 --separate-stderr ff-bench -r nginx,none,nginx
	[ "${stderr_lines[0]}" = "ff-bench: relay 'nginx' is given twice" ]
	run -2 --separate-stderr ff-bench -p tcp,
	[ "${stderr_lines[0]}" = "ff-bench: empty protocol name in 'tcp,'" ]
	run -2 --separate-stderr ff-bench -w builtin -p http1,http2
	[ "${stderr_lines[0]}" = "ff-bench: none of these combinations is supported: builtin/skrouterd/http1, builtin/skrouterd/http2, builtin/nghttpx/http1, builtin/nghttpx/http2, builtin/nginx/http1, builtin/nginx/http2, builtin/haproxy/http1, builtin/haproxy/http2, builtin/none/http1, builtin/none/http2" ]
	run -2 --separate-stderr ff-bench --repeat 0
	[ "${stderr_lines[0]}" = "ff-bench: --repeat: 0 is out of range (1 to 10000)" ]
	run -2 --separate-stderr ff-bench --bogus
	[ "${stderr_lines[0]}" = "ff-bench: unknown option '--bogus'" ]
	run -2 --separate-stderr ff-bench extra
	[ "${stderr_lines[0]}" = "ff-bench: unexpected argument 'extra'" ]
	run -2 --separate-stderr ff-bench compare "$FIX/base.jsonl"
	[ "${stderr_lines[0]}" = "ff-bench: expected two results files, BASE and NEW, or one with --base LABEL and --new LABEL" ]
	run -2 --separate-stderr ff-bench compare --format html "$FIX/base.jsonl" "$FIX/new.jsonl"
	[ "${stderr_lines[0]}" = "ff-bench: unknown format 'html' (expected text, markdown)" ]
	run -2 --separate-stderr ff-bench compare --json --format markdown "$FIX/base.jsonl" "$FIX/new.jsonl"
	[ "${stderr_lines[0]}" = "ff-bench: --json and --format markdown do not go together" ]
}

# Bench

@test "ff-bench: none and nginx with builtin and iperf3: the table and the results file" {
	skip_unless_program nginx iperf3
	local f="$BATS_TEST_TMPDIR/r.jsonl"
	bench_steady "$f" ff-bench -w builtin,iperf3 -r none,nginx --warmup 1 --duration 1 --output "$f"
	[ "$status" -eq 0 ]
	echo "$output" >"$BATS_TEST_TMPDIR/out"
	# The environment first, as check prints it.
	[ "${lines[0]}" = "Environment" ]
	has_line "^  kernel     $(uname -r)\$"
	has_line '^  nginx      .*\(/.*/nginx\)$'
	has_line '^Benchmark results \(jobs 2, warmup 1 s, duration 1 s, CPU limit 1\)$'
	# The original's columns, then one row per case in the matrix's order.
	table "$BATS_TEST_TMPDIR/out" >"$BATS_TEST_TMPDIR/table"
	run -0 cat "$BATS_TEST_TMPDIR/table"
	[[ "${lines[0]}" =~ ^Workload\ +Relay\ +Protocol\ +Bits/s\ +Ops/s\ +Lat\ +R1\ CPU\ +R1\ RSS\ +R2\ CPU\ +R2\ RSS$ ]]
	[[ "${lines[1]}" =~ ^-+$ ]]
	[[ "${lines[2]}" =~ ^builtin\ +nginx\ +tcp\ +[0-9.]+[KMG](\ !)?\ +-\ +-\ +[0-9.]+%\ +[0-9.]+MiB\ +[0-9.]+%\ +[0-9.]+MiB$ ]]
	[[ "${lines[3]}" =~ ^builtin\ +none\ +tcp\ +[0-9.]+[KMG](\ !)?(\ +-){6}$ ]]
	[[ "${lines[4]}" =~ ^iperf3\ +nginx\ +tcp\ +[0-9.]+[KMG](\ !)?\ +-\ +-\ +[0-9.]+%\ +[0-9.]+MiB\ +[0-9.]+%\ +[0-9.]+MiB$ ]]
	[[ "${lines[5]}" =~ ^iperf3\ +none\ +tcp\ +[0-9.]+[KMG](\ !)?(\ +-){6}$ ]]
	[ "${#lines[@]}" -eq 6 ]
	# Efficiency: the relays' CPU per GB, for the cases with relays.
	run -0 cat "$BATS_TEST_TMPDIR/out"
	has_line '^Relay CPU per unit of work \(R1 \+ R2; lower is better\)$'
	has_line '^Workload +Relay +Protocol +Relay CPU +CPU s/GB +CPU s/1k req$'
	has_line '^builtin +nginx +tcp +[0-9.]+% +[0-9.]+ +-$'
	has_line '^8 combinations were left out, as they do not apply \(a workload or relay without that protocol\); --verbose lists them$'
	has_line "^Results: $f\$"
	# One progress line per case on a non-terminal.
	[ "$(grep -c '^ff-bench: \[[1-4]/4\] .*bits/s' <<<"$stderr")" -eq 4 ]

	# The results file: one line per run with config, result, resources, environment, time.
	[ "$(wc -l <"$f")" -eq 4 ]
	jq -e -s '
		length == 4 and
		all(.[]; .event == "case" and .status == "ok" and .reason == null and
		    .config.jobs == 2 and .config.warmup_s == 1 and .config.duration_s == 1 and
		    .config.cpu_limit == 1 and .config.protocol == "tcp" and .repeat == 1 and
		    (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")) and
		    .result.bits_per_s > 0 and (.environment.kernel | type) == "string" and
		    (.run_dir | type) == "string" and
		    (.resources.relays | length) == (if .config.relay == "none" then 0 else 2 end)) and
		([.[] | .config.workload + "/" + .config.relay] ==
		 ["builtin/none", "builtin/nginx", "iperf3/none", "iperf3/nginx"])' "$f"
	[ "$(jq -r -s '.[0].environment.kernel' "$f")" = "$(uname -r)" ]
	# The table's figures are the file's, to the 3 digits shown.
	cell=$(awk '$1 == "iperf3" && $2 == "nginx" { print $4 }' "$BATS_TEST_TMPDIR/table")
	bits=$(jq -s '.[] | select(.config.workload == "iperf3" and .config.relay == "nginx") |
		.result.bits_per_s' "$f")
	awk -v cell="$cell" -v bits="$bits" 'BEGIN {
		m = index("KMGT", substr(cell, length(cell)));
		v = (m ? substr(cell, 1, length(cell) - 1) : cell) * 1000 ^ m;
		exit !(v / bits > 0.995 && v / bits < 1.005) }'

	# summarize prints the same table from the file.
	run -0 ff-bench summarize "$f"
	echo "$output" >"$BATS_TEST_TMPDIR/sum"
	table "$BATS_TEST_TMPDIR/sum" | diff -u "$BATS_TEST_TMPDIR/table" -
	run -0 ff-bench summarize <"$f"
	has_line '^builtin +nginx +tcp '
}

@test "ff-bench: a relay missing from PATH is skipped, the bench goes on" {
	skip_unless_program h2load nghttpd
	local p f="$BATS_TEST_TMPDIR/r.jsonl"
	p=$(path_without nghttpx skrouterd)
	PATH="$p" bench_steady "$f" "$TOP/bin/ff-bench" -w h2load -r skrouterd,nghttpx,none -p http2 \
		--warmup 0 --duration 1 --output "$f"
	[ "$status" -eq 0 ]
	has_line '^  skrouterd  missing$'
	has_line '^  nghttpx    missing$'
	has_line '^h2load +skrouterd +http2 +skipped: skrouterd not on PATH$'
	has_line '^h2load +nghttpx +http2 +skipped: nghttpx not on PATH$'
	has_line '^h2load +none +http2 +[0-9.]+[KMG]?( !)? +[0-9.]+[KMG]? +[0-9.]+(us|ms)( +-){4}$'
	grep -qx "ff-bench: skipping h2load nghttpx http2: nghttpx not on PATH" <<<"$stderr"
	grep -q '^ff-bench: \[1/1\] h2load none http2: ' <<<"$stderr"
	jq -e -s '[.[] | [.config.relay, .status, .reason]] ==
		[["skrouterd", "skipped", "skrouterd not on PATH"],
		 ["nghttpx", "skipped", "nghttpx not on PATH"], ["none", "ok", null]]' "$f"
}

@test "ff-bench: skrouterd absent: skipped rows, the bench goes on, the results file's default name" {
	local p
	p=$(path_without skrouterd)
	cd "$BATS_TEST_TMPDIR"
	PATH="$p" run -0 --separate-stderr "$TOP/bin/ff-bench" -w builtin,iperf3 -r skrouterd,none \
		--warmup 0 --duration 2
	printf '%s\n' "$stderr"
	has_line '^builtin +skrouterd +tcp +skipped: skrouterd not on PATH$'
	has_line '^iperf3 +skrouterd +tcp +skipped: skrouterd not on PATH$'
	has_line '^8 combinations were left out, as they do not apply \(a workload or relay without that protocol\); --verbose lists them$'
	has_line '^Results: flimflam-bench-[0-9]{8}-[0-9]{6}\.jsonl$'
	f=$(sed -n 's/^Results: //p' <<<"$output")
	[ -f "$f" ]
	jq -e -s '[.[] | [.config.workload, .config.relay, .status]] ==
		[["builtin", "skrouterd", "skipped"], ["iperf3", "skrouterd", "skipped"],
		 ["builtin", "none", "ok"], ["iperf3", "none", "ok"]]' "$f"
	grep -q "ff-bench: 2 runs (2 cases x 1), about .*; results go to '$f'" <<<"$stderr"
}

# fake_router SCHEMA_DIR: t/fixtures/ff-check/fake-skrouterd.c in
# $BATS_TEST_TMPDIR/router, its --help naming SCHEMA_DIR as its python
# directory. It answers --version and --help only: enough for bench's plan,
# which never starts a router it cannot use.
fake_router() {
	skip_unless_program gcc
	mkdir -p "$BATS_TEST_TMPDIR/router"
	gcc -DPYDIR="\"$1\"" -o "$BATS_TEST_TMPDIR/router/skrouterd" "$TOP/t/fixtures/ff-check/fake-skrouterd.c"
}

@test "ff-bench: what the skrouterd on PATH cannot carry is not run and is no failure" {
	skip_unless_program h2load nghttpd
	fake_router "$TOP/t/fixtures/ff-check/schema-3.x"
	local f="$BATS_TEST_TMPDIR/r.jsonl"
	PATH="$BATS_TEST_TMPDIR/router:$PATH" run --separate-stderr "$TOP/bin/ff-bench" -w h2load \
		-r skrouterd,none -p tcp,http2 --warmup 0 --duration 1 --output "$f"
	printf '%s\n' "$stderr"
	# tcp over skrouterd is planned (and fails: the stand-in is no router);
	# http2 over it is not, and is not counted.
	has_line '^Not run: 1 case not supported by this skrouterd \(no HTTP adaptor\): h2load/skrouterd/http2$'
	grep -q "ff-bench: 3 runs (3 cases x 1)" <<<"$stderr"
	jq -e -s '[.[] | [.config.relay, .config.protocol]] ==
		[["skrouterd", "tcp"], ["none", "tcp"], ["none", "http2"]]' "$f"
	refute_line --regexp '^h2load +skrouterd +http2'
	jq -e -s '.[0].status == "failed"' "$f"
	# Only runs count as failed (the others only if the machine was too busy).
	[ "$status" -eq 1 ]
	grep -qx "ff-bench: $(jq -s 'map(select(.status == "failed")) | length' "$f") of 3 runs failed" <<<"$stderr"
}

@test "ff-bench: a router without the HTTP adaptor, http only: the bench that runs is exit 0" {
	skip_unless_program h2load nghttpd
	fake_router "$TOP/t/fixtures/ff-check/schema-3.x"
	local f="$BATS_TEST_TMPDIR/r.jsonl"
	PATH="$BATS_TEST_TMPDIR/router:$PATH" run --separate-stderr "$TOP/bin/ff-bench" -w h2load \
		-r skrouterd,none -p http2 --warmup 0 --duration 1 --output "$f"
	printf '%s\n' "$stderr"
	skip_if_busy "$f"
	[ "$status" -eq 0 ]
	has_line '^Not run: 1 case not supported by this skrouterd \(no HTTP adaptor\): h2load/skrouterd/http2$'
	has_line '^h2load +none +http2 +[0-9.]+[KMG]? '
	refute_line --regexp '^h2load +skrouterd'
	grep -q "ff-bench: 1 run (1 case x 1)" <<<"$stderr"
	jq -e -s 'length == 1 and .[0].config.relay == "none" and .[0].status == "ok"' "$f"
}

# Nothing runs: one line, exit 1, no results file, nothing started.
@test "ff-bench: nothing to run is a failure that says why, before anything" {
	local p
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	p=$(path_without skrouterd)
	PATH="$p" run -1 --separate-stderr "$TOP/bin/ff-bench" -r skrouterd
	[ -z "$output" ]
	[ "$stderr" = "ff-bench: nothing to run: skrouterd not on PATH" ]
	p=$(path_without skrouterd iperf3)
	PATH="$p" run -1 --separate-stderr "$TOP/bin/ff-bench" -w iperf3 -r skrouterd,none
	[ "$stderr" = "ff-bench: nothing to run: skrouterd not on PATH; iperf3 not on PATH" ]
	fake_router "$TOP/t/fixtures/ff-check/schema-3.x"
	PATH="$BATS_TEST_TMPDIR/router:$PATH" run -1 --separate-stderr "$TOP/bin/ff-bench" \
		-r skrouterd -p http1
	[ -z "$output" ]
	[ "$stderr" = "ff-bench: nothing to run: not supported by this skrouterd (no HTTP adaptor)" ]
	# As flimflam bench, in its name.
	PATH="$BATS_TEST_TMPDIR/router:$PATH" run -1 --separate-stderr flimflam bench \
		-w h2load,h2load-h1 -r skrouterd -p http1,http2
	[ "$stderr" = "flimflam bench: nothing to run: not supported by this skrouterd (no HTTP adaptor)" ]
	# Nothing written.
	[ -z "$(ls -A)" ]
	# A router with the adaptor plans them (and the stand-in, being no
	# router, fails them): not "nothing to run".
	fake_router "$TOP/t/fixtures/ff-check/schema-2.7"
	PATH="$BATS_TEST_TMPDIR/router:$PATH" run -1 --separate-stderr "$TOP/bin/ff-bench" \
		-w h2load-h1 -r skrouterd -p http1 --warmup 0 --duration 1 --output "$BATS_TEST_TMPDIR/r.jsonl"
	grep -q "ff-bench: 1 run (1 case x 1)" <<<"$stderr"
	jq -e -s 'length == 1 and .[0].status == "failed"' "$BATS_TEST_TMPDIR/r.jsonl"
}

@test "ff-bench: a case that fails is reported with its run directory; repeats interleave; exit 1" {
	local fake="$BATS_TEST_TMPDIR/fake" f="$BATS_TEST_TMPDIR/r.jsonl"
	mkdir -p "$fake"
	printf '#!/bin/sh\necho "fake nginx: refusing to start" >&2\nexit 1\n' >"$fake/nginx"
	chmod +x "$fake/nginx"
	# FLIMFLAM_KEEP_RUNS=2: each run prunes the oldest run directories, but
	# not those of the bench's own runs.
	FLIMFLAM_KEEP_RUNS=2 PATH="$fake:$PATH" bench_steady "$f" ff-bench -w builtin -r nginx,none \
		--warmup 0 --duration 1 --repeat 2 --output "$f"
	[ "$status" -eq 1 ]
	# The failure, in the table and on stderr; the other case ran.
	has_line "^builtin +nginx +tcp +failed: ff-topology: the nginx relays did not start; their logs are in '$FLIMFLAM_RUNS/"
	has_line '^builtin +none +tcp +[0-9.]+[KMG]'
	has_line 'the median of the runs of its case'
	grep -q '^ff-bench: \[1/4\] builtin nginx tcp (run 1 of 2): failed: ff-topology: the nginx relays did not start' <<<"$stderr"
	grep -q '^ff-bench: \[2/4\] builtin none tcp (run 1 of 2): [0-9.]*[KMG] bits/s' <<<"$stderr"
	grep -q '^ff-bench: \[4/4\] builtin none tcp (run 2 of 2): ' <<<"$stderr"
	grep -qx 'ff-bench: 2 of 4 runs failed' <<<"$stderr"
	# Round-robin order in the file; the failed runs keep their run directory and log.
	jq -e -s '[.[] | [.config.relay, .repeat, .status]] ==
		[["nginx", 1, "failed"], ["none", 1, "ok"], ["nginx", 2, "failed"], ["none", 2, "ok"]]' "$f"
	dir=$(jq -r -s '.[0].run_dir' "$f")
	grep -q "fake nginx: refusing to start" "$dir"/r2.log
	# flimflam run's stderr: in the run directory, and its end in the record.
	[ "$(jq -r -s '.[0].log' "$f")" = "$dir/flimflam-run.log" ]
	grep -q "the nginx relays did not start" "$dir/flimflam-run.log"
	jq -e -s '.[0].stderr_tail | test("fake nginx: refusing to start")' "$f"
	for dir in $(jq -r '.run_dir' "$f"); do
		[ -d "$dir" ]
	done
}

@test "ff-bench: a stage that dies by a signal, saying nothing: ff-run's error event names it in the record" {
	# A test-only drive that is killed at once: no stage says why, ff-run words it from its status.
	mkdir -p "$BATS_TEST_TMPDIR/kill"
	cat >"$BATS_TEST_TMPDIR/kill/ff-workload" <<-EOF2
		#!/bin/sh
		[ "\$1" = drive ] || exec "$TOP/bin/ff-workload" "\$@"
		kill -KILL \$\$
	EOF2
	chmod +x "$BATS_TEST_TMPDIR/kill/ff-workload"
	local f="$BATS_TEST_TMPDIR/r.jsonl"
	FLIMFLAM_EXEC_PATH="$BATS_TEST_TMPDIR/kill" run -1 --separate-stderr ff-bench -w builtin -r none \
		--warmup 0 --duration 1 --output "$f"
	jq -e -s 'length == 1 and .[0].status == "failed" and (.[0].reason | length > 0) and
		any(.[0].errors[]; . == "ff-workload drive: was killed by signal 9 (Killed)")' "$f"
}

@test "ff-bench: SIGTERM stops the running case, keeps the results so far, exits 143" {
	local f="$BATS_TEST_TMPDIR/r.jsonl" err="$BATS_TEST_TMPDIR/err" i st=0
	ff-bench -w builtin -r none --repeat 2 --warmup 0 --duration 5 --output "$f" \
		>"$BATS_TEST_TMPDIR/out" 2>"$err" &
	echo $! >"$BATS_TEST_TMPDIR/pid"
	wait_for_grep '^ff-bench: \[1/2\] builtin none tcp (run 1 of 2): ' "$err" 60
	# The second run is under way: its stages name its run directory.
	for ((i = 0; i < 100; i++)); do
		[ -n "$(pids_of_run "$FLIMFLAM_RUNS")" ] && break
		sleep 0.1
	done
	[ -n "$(pids_of_run "$FLIMFLAM_RUNS")" ]
	kill -TERM "$(cat "$BATS_TEST_TMPDIR/pid")"
	wait "$(cat "$BATS_TEST_TMPDIR/pid")" || st=$?	# not under run: a subshell cannot wait
	: >"$BATS_TEST_TMPDIR/pid"
	cat "$err"
	[ "$st" -eq 143 ]
	grep -qx 'ff-bench: stopped by SIGTERM after 1 of 2 runs; the results so far are kept' "$err"
	jq -e -s 'length == 1 and .[0].repeat == 1 and .[0].status == "ok"' "$f"
	grep -Eq '^builtin +none +tcp +[0-9.]+[KMG]' "$BATS_TEST_TMPDIR/out"
	# Nothing of the stopped run is left running, and no temp file is left.
	[ -z "$(pids_of_run "$FLIMFLAM_RUNS")" ]
	[ -z "$(ls "$BATS_TEST_TMPDIR" | grep '\.tmp\.')" ]
}

# Summarize and bad input

@test "ff-bench summarize: medians with the spread where it exceeds 2%" {
	run -0 ff-bench summarize "$FIX/base.jsonl"
	# builtin over nginx: median of 10 runs (10.0 + 10.2) / 2, spread (11.0 - 9.2) / 2 / 10.1.
	has_line '^builtin +nginx +tcp +10\.1G \+/-8\.9% +- +- +50\.0% +16\.8MiB +40\.0% +16\.8MiB$'
	# iperf3: a spread of 1.5% is not shown.
	has_line '^iperf3 +nginx +tcp +4\.95G +- +- +90\.0% +16\.8MiB +60\.0% +16\.8MiB$'
	has_line '^h2load +nginx +tcp +22\.9M +2\.87K +348us '
	# Efficiency: (0.3 + 0.2) / (2865 / 1000) CPU-seconds per 1,000 requests.
	has_line '^h2load +nginx +tcp +50\.0% +175 +0\.175$'
	has_line '^  skrouterd  3\.2\.0 \(/opt/router/sbin/skrouterd\)$'
	has_line '^  hash       0123456789abcdef$'
}

@test "ff-bench: bad results files are errors naming the file and line" {
	local d="$BATS_TEST_TMPDIR"
	: >"$d/empty.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/empty.jsonl"
	[ "$stderr" = "ff-bench: $d/empty.jsonl: the file is empty (expected bench results, one JSON object per line)" ]

	head -n 2 "$FIX/base.jsonl" >"$d/cut.jsonl"
	head -n 3 "$FIX/base.jsonl" | tail -n 1 | head -c 300 >>"$d/cut.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/cut.jsonl"
	[[ "$stderr" == "ff-bench: $d/cut.jsonl:3: the last line is cut short ("* ]]

	printf '\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe\n' >"$d/bin.jsonl"
	run -1 --separate-stderr ff-bench compare "$d/bin.jsonl" "$FIX/new.jsonl"
	[ "$stderr" = "ff-bench: $d/bin.jsonl:1: binary data (a NUL byte), not a JSON line" ]

	head -c 4096 /bin/sh >"$d/elf.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/elf.jsonl"
	[[ "$stderr" == "ff-bench: $d/elf.jsonl:1: "* ]]

	echo '{"event":"case","status":"ok"' >"$d/open.jsonl"
	echo '{}' >>"$d/open.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/open.jsonl"
	[[ "$stderr" == "ff-bench: $d/open.jsonl:1: not JSON: "* ]]

	echo '[1, 2]' >"$d/array.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/array.jsonl"
	[ "$stderr" = "ff-bench: $d/array.jsonl:1: expected a JSON object, not an array" ]

	echo '{"config": {}}' >"$d/noevent.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/noevent.jsonl"
	[ "$stderr" = "ff-bench: $d/noevent.jsonl:1: 'event' is missing (a bench result has \"event\":\"case\")" ]

	jq -c 'del(.config.workload)' "$FIX/base.jsonl" | head -n 5 >"$d/missing.jsonl"
	run -1 --separate-stderr ff-bench compare "$FIX/base.jsonl" "$d/missing.jsonl"
	[ "$stderr" = "ff-bench: $d/missing.jsonl:1: 'config.workload' is missing" ]

	{ head -n 3 "$FIX/base.jsonl"; head -n 1 "$FIX/base.jsonl" | jq -c '.config.jobs = "2"'; } >"$d/type.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/type.jsonl"
	[ "$stderr" = "ff-bench: $d/type.jsonl:4: 'config.jobs' should be a whole number, not a string" ]

	head -n 1 "$FIX/base.jsonl" | jq -c '.result.bits_per_s = "fast"' >"$d/type2.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/type2.jsonl"
	[ "$stderr" = "ff-bench: $d/type2.jsonl:1: 'result.bits_per_s' should be a number or null, not a string" ]

	head -n 1 "$FIX/base.jsonl" | jq -c '.resources.relays[1] = 7' >"$d/type3.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/type3.jsonl"
	[ "$stderr" = "ff-bench: $d/type3.jsonl:1: 'resources.relays[1]' should be an object, not a whole number" ]

	echo '{"event":"start","schema":1}' >"$d/stream.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/stream.jsonl"
	[ "$stderr" = "ff-bench: $d/stream.jsonl: no bench results in the file (no line has \"event\":\"case\")" ]

	run -1 --separate-stderr ff-bench summarize "$d/absent.jsonl"
	[ "$stderr" = "ff-bench: cannot read '$d/absent.jsonl': No such file or directory" ]
}

# Compare

@test "ff-bench summarize: binary input is one error, found at once (/dev/zero, a line without end, not UTF-8)" {
	local d="$BATS_TEST_TMPDIR"
	# Under 200 MB of address space: reading /dev/zero whole would fail with
	# "out of memory" instead, after filling it.
	run -1 --separate-stderr bash -c 'ulimit -v 200000; exec timeout 60 ff-bench summarize /dev/zero'
	[ "$stderr" = "ff-bench: /dev/zero:1: binary data (a NUL byte), not a JSON line" ]
	run -1 --separate-stderr bash -c 'ulimit -v 200000; exec timeout 60 ff-bench summarize - </dev/zero'
	[ "$stderr" = "ff-bench: standard input:1: binary data (a NUL byte), not a JSON line" ]
	# A line that never ends is stopped at the cap, not read to its end.
	run -1 --separate-stderr bash -c 'ulimit -v 200000; yes | tr -d "\n" | timeout 60 ff-bench summarize -'
	[ "$stderr" = "ff-bench: standard input:1: a line of more than 1 MiB: not bench results (one JSON object per line)" ]
	{ head -n 2 "$FIX/base.jsonl"; printf '{"event":"case","status":"\xff\xfe"}\n'; } >"$d/latin.jsonl"
	run -1 --separate-stderr ff-bench summarize "$d/latin.jsonl"
	[ "$stderr" = "ff-bench: $d/latin.jsonl:3: binary data (not UTF-8 text), not a JSON line" ]
	run -1 --separate-stderr ff-bench compare "$FIX/base.jsonl" /dev/zero
	[ "$stderr" = "ff-bench: /dev/zero:1: binary data (a NUL byte), not a JSON line" ]
}

@test "ff-bench summarize and compare hold the figures of each run, not the file: 30 MB in 100 MB of address space" {
	local d="$BATS_TEST_TMPDIR"
	# The fixture's rows again and again, with new repeat numbers: 30 MB.
	awk '{ row[NR] = $0 } END { for (p = 0; size < 30000000; p++) for (i = 1; i <= NR; i++) {
		line = row[i]; sub(/"repeat":[0-9]+/, "\"repeat\":" (p * NR + i), line)
		print line; size += length(line) + 1 } }' "$FIX/base.jsonl" >"$d/big.jsonl"
	cp "$d/big.jsonl" "$d/big2.jsonl"
	run -0 --separate-stderr bash -c "ulimit -v 100000; ff-bench summarize '$d/big.jsonl'"
	[[ "$output" == *"builtin     nginx     tcp "* ]]
	run -0 --separate-stderr bash -c "ulimit -v 100000; ff-bench compare --json '$d/big.jsonl' '$d/big2.jsonl'"
	jq -e -s '[.[] | select(.event == "comparison")] | length > 10 and (map(.n_base) | max) > 2000' <<<"$output"
}

@test "ff-bench compare: the same file twice (by one name or two, or standard input twice) is a usage error" {
	local d="$BATS_TEST_TMPDIR"
	run -2 --separate-stderr ff-bench compare "$FIX/base.jsonl" "$FIX/base.jsonl"
	[ "${stderr_lines[0]}" = "ff-bench: '$FIX/base.jsonl' and '$FIX/base.jsonl' are the same file: compare two different ones" ]
	[[ "${stderr_lines[1]}" == usage:* ]]
	[ -z "$output" ]
	ln -s "$FIX/base.jsonl" "$d/link.jsonl"
	ln "$FIX/base.jsonl" "$d/hard.jsonl" 2>/dev/null || cp "$FIX/base.jsonl" "$d/hard.jsonl"
	run -2 --separate-stderr ff-bench compare "$FIX/base.jsonl" "$d/link.jsonl"
	[ "${stderr_lines[0]}" = "ff-bench: '$FIX/base.jsonl' and '$d/link.jsonl' are the same file: compare two different ones" ]
	run -2 --separate-stderr flimflam compare - "$FIX/new.jsonl" <"$FIX/new.jsonl"
	[ "${stderr_lines[0]}" = "flimflam compare: 'standard input' and '$FIX/new.jsonl' are the same file: compare two different ones" ]
	run -2 --separate-stderr flimflam compare - - <"$FIX/new.jsonl"
	[ "${stderr_lines[0]}" = "flimflam compare: BASE and NEW are both standard input: compare two files" ]
	# Two files with the same content are two files.
	cp "$FIX/new.jsonl" "$d/copy.jsonl"
	run -0 ff-bench compare "$FIX/new.jsonl" "$d/copy.jsonl"
}

@test "ff-bench compare: the rows in bench's order (workload, then relay, then protocol, as the matrix)" {
	run -0 ff-bench summarize "$FIX/base.jsonl"
	local want
	want=$(awk '/^----/ { on = 1; next } on && NF == 0 { exit } on { print $1, $2, $3 }' <<<"$output")
	cp "$FIX/base.jsonl" "$BATS_TEST_TMPDIR/copy.jsonl"
	run -0 ff-bench compare "$FIX/base.jsonl" "$BATS_TEST_TMPDIR/copy.jsonl"
	[ "$(awk '/^Bits\/s/ { on = 1; next } on && /^----/ { t = 1; next } t && (NF == 0 || / geomean of /) { exit } t { print $1, $2, $3 }' <<<"$output")" = "$want" ]
}

@test "ff-bench compare: identical samples are not significant" {
	run -0 ff-bench compare "$FIX/base.jsonl" "$FIX/new.jsonl"
	has_line '^iperf3 +nginx +tcp +4\.95G +4\.95G +\+0\.0% +\+0\.0% \[-1\.0, \+1\.0\] +1\.0 +1\.0 +no change \(n=10\+10\)$'
	run -0 --separate-stderr ff-bench compare --json "$FIX/base.jsonl" "$FIX/new.jsonl"
	jq -e -s '[.[] | select(.event == "comparison" and .workload == "iperf3")] |
		length == 2 and all(.[]; .p == 1 and .q == 1 and .significant == false and
		.verdict == "no change" and .delta_pct == 0 and .change_pct == 0 and .u == 50)' <<<"$output"
}

@test "ff-bench compare: a 10% drop with 10 runs a side is significant, with the right sign" {
	run -0 ff-bench compare "$FIX/base.jsonl" "$FIX/new.jsonl"
	has_line '^builtin +nginx +tcp +10\.1G \+/-8\.9% +9\.16G \+/-7\.9% +-9\.3% +-9\.6% \[-15\.0, -4\.1\] +0\.0015 +0\.0095 +worse \(n=10\+10, 1 failed in new\)$'
	# The same relay CPU for less work: CPU per GB is worse too.
	has_line '^builtin +nginx +tcp +0\.713 \+/-9\.0% +0\.786 \+/-8\.0% +\+10\.3% +\+10\.6% \[\+4\.3, \+17\.6\] +0\.0015 +0\.0095 +worse \(n=10\+10, 1 failed in new\)$'
	# An improvement of 1.7% is significant, but its interval reaches
	# past the threshold of 2% and within it: inconclusive; with
	# --threshold 1, better.
	has_line '^h2load +nginx +tcp +348us +342us +-1\.7% +-1\.7% \[-2\.6, -1\.2\] +0\.00047 +0\.0089 +inconclusive \[1\] \(n=8\+8\)$'
	run -1 --separate-stderr ff-bench compare --threshold 1 "$FIX/base.jsonl" "$FIX/new.jsonl"
	has_line '^h2load +nginx +tcp +348us +342us +-1\.7% +-1\.7% \[-2\.6, -1\.2\] +0\.00047 +0\.0089 +better \(n=8\+8\)$'
	has_line '^Failed runs, not counted: 0 in base, 1 in new$'
	has_line '^  only in base: iperf3 none tcp \(jobs 2, CPU limit 1, duration 5 s\)$'
	run -0 --separate-stderr ff-bench compare --json "$FIX/base.jsonl" "$FIX/new.jsonl"
	jq -e -s '.[] | select(.event == "comparison" and .workload == "builtin" and .relay == "nginx" and
		.metric == "bits_per_s") | .significant and .verdict == "worse" and .regression and
		.delta_pct < -9 and .delta_pct > -10 and .change_pct < -9 and .ci_high_pct < -2 and
		.method == "exact" and .n_base == 10 and .n_new == 10 and .failed_new == 1' <<<"$output"
}

@test "ff-bench compare: fewer than 5 runs a side are inconclusive, and it says so" {
	run -0 ff-bench compare "$FIX/base.jsonl" "$FIX/new.jsonl"
	has_line '^builtin +none +tcp +15\.0G +18\.0G +\+20\.0% +\+20\.0% \[no interval\] +0\.10 +- +inconclusive \[1\] \(n=3\+3\)$'
	has_line '^  \[1\] inconclusive: fewer than 5 runs per side$'
	run -0 --separate-stderr ff-bench compare --json "$FIX/base.jsonl" "$FIX/new.jsonl"
	jq -e -s '.[] | select(.event == "comparison" and .relay == "none") |
		.too_few and (.significant | not) and .u == 0 and .p == 0.1 and .q == null and
		.ci_low_pct == null and .verdict == "inconclusive: fewer than 5 runs per side"' <<<"$output"
}

@test "ff-bench compare: U and p agree with an independent computation" {
	skip_unless_program python3
	run -0 --separate-stderr ff-bench compare --json "$FIX/base.jsonl" "$FIX/new.jsonl"
	echo "$output" >"$BATS_TEST_TMPDIR/cmp.jsonl"
	# The samples again, straight from the fixtures with jq: one line per
	# side, case and metric.
	for side in base new; do
		jq -r --arg side "$side" 'select(.status == "ok") |
			(.resources.relays | map(.cpu_fraction) | add) as $cpu |
			[$side, .config.workload, .config.relay, .config.protocol,
			 .result.bits_per_s, .result.ops_per_s // "null", .result.latency_avg_us // "null",
			 (if $cpu then $cpu / (.result.bits_per_s / 8e9) else "null" end),
			 (if $cpu and .result.ops_per_s then $cpu / (.result.ops_per_s / 1000) else "null" end)] |
			@tsv' "$FIX/$side.jsonl"
	done >"$BATS_TEST_TMPDIR/samples.tsv"
	# U counted pair by pair (Mann and Whitney 1947: the number of pairs in
	# which one sample's value is the larger, ties one half); the exact p by
	# enumerating every way of splitting the n1 + n2 ranks, the normal one
	# with the tie-corrected variance (Lehmann 1975, as in SciPy's
	# mannwhitneyu with use_continuity=True).
	run -0 python3 - "$BATS_TEST_TMPDIR/samples.tsv" "$BATS_TEST_TMPDIR/cmp.jsonl" <<-'EOF'
	import collections, itertools, json, math, sys
	metrics = ["bits_per_s", "ops_per_s", "latency_avg_us", "relay_cpu_s_per_gb",
	           "relay_cpu_s_per_1k_requests"]
	samples = {}
	for line in open(sys.argv[1]):
	    side, w, r, p, *vals = line.rstrip("\n").split("\t")
	    for m, v in zip(metrics, vals):
	        if v != "null":
	            samples.setdefault((w, r, p, m), {"base": [], "new": []})[side].append(float(v))
	tested = []
	def exact(x, y):
	    # every choice of the base's places among the pooled values: the
	    # sum of its midranks, counted by dynamic programming; two-sided,
	    # the smaller tail doubled
	    pool = sorted(x + y)
	    twice = [pool.index(v) + 1 + len(pool) - pool[::-1].index(v) for v in pool]
	    n1 = len(x)
	    ways = [collections.Counter() for _ in range(n1 + 1)]
	    ways[0][0] = 1
	    for t in twice:
	        for j in range(n1, 0, -1):
	            for s0, c in list(ways[j - 1].items()):
	                ways[j][s0 + t] += c
	    w = sum(twice[pool.index(v)] for v in x)
	    le = sum(c for s0, c in ways[n1].items() if s0 <= w)
	    ge = sum(c for s0, c in ways[n1].items() if s0 >= w)
	    return min(1.0, 2 * min(le, ge) / math.comb(len(pool), n1))
	checked = {"exact": 0, "normal": 0}
	for line in open(sys.argv[2]):
	    ev = json.loads(line)
	    if ev["event"] != "comparison":
	        continue
	    s = samples[ev["workload"], ev["relay"], ev["protocol"], ev["metric"]]
	    x, y = s["base"], s["new"]
	    n1, n2 = len(x), len(y)
	    u1 = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)
	    u = min(u1, n1 * n2 - u1)
	    allv = x + y
	    ties = [allv.count(v) for v in set(allv)]
	    if n1 + n2 <= 60:
	        p, method = exact(x, y), "exact"
	    else:
	        n = n1 + n2
	        sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - sum(t**3 - t for t in ties) / (n * (n - 1))))
	        z = (abs(u1 - n1 * n2 / 2) - 0.5) / sigma if sigma else 0
	        p, method = (1.0 if z <= 0 else min(1.0, math.erfc(z / math.sqrt(2)))), "normal"
	    key = (ev["workload"], ev["relay"], ev["metric"])
	    assert ev["method"] == method, (key, ev["method"], method)
	    assert ev["u"] == u, (key, ev["u"], u)
	    assert abs(ev["p"] - p) <= 1e-9 * max(p, 1e-12), (key, ev["p"], p)
	    checked[method] += 1
	    if n1 >= 5 and n2 >= 5:
	        tested.append((p, ev))
	# Benjamini-Hochberg over the table's tested comparisons, by its
	# step-up rule: q of p(i) is the least p(j) m / j over j >= i.
	ps = sorted(p for p, _ in tested)
	m = len(ps)
	for p, ev in tested:
	    q = min(1.0, min(ps[j] * m / (j + 1) for j in range(m) if ps[j] >= p))
	    assert abs(ev["q"] - q) <= 1e-9, (ev["metric"], ev["q"], q)
	    assert ev["significant"] == (q < 0.05), (ev["metric"], q)
	print(checked["exact"], checked["normal"], m)
	EOF
	read -r nexact nnormal ntested <<<"$output"
	# Every comparison of at most 60 runs is exact, ties or none.
	[ "$nexact" -ge 12 ]
	[ "$nnormal" -eq 0 ]
	[ "$ntested" -eq 19 ]
	jq -e -s '.[] | select(.event == "method") | .comparisons == 20 and .tested == 19 and .adjustment == "Benjamini-Hochberg"' \
		"$BATS_TEST_TMPDIR/cmp.jsonl"
	# The published critical value of U for n1 = n2 = 10 at two-sided alpha
	# 0.05 is 23 (the tables of e.g. Milton, JASA 59, 1964, pp. 925-934, and
	# of most statistics textbooks): U = 23 is significant (p = 0.0433),
	# U = 24 is not (p = 0.0524).
	# Over the 19 comparisons of the table, neither is significant after
	# Benjamini-Hochberg (q = 0.066).
	jq -e -s '[.[] | select(.event == "comparison" and .workload == "h2load-h1" and .metric == "bits_per_s")] |
		(.[1] | .relay == "nginx" and .u == 23 and (.p * 10000 | round) == 433 and (.significant | not)) and
		(.[0] | .relay == "nghttpx" and .u == 24 and (.p * 10000 | round) == 524 and (.significant | not))' \
		"$BATS_TEST_TMPDIR/cmp.jsonl"
}

@test "ff-bench compare: --threshold exits 1 for a worse verdict, whose interval lies beyond it" {
	run -1 --separate-stderr ff-bench compare --threshold 3 "$FIX/base.jsonl" "$FIX/new.jsonl"
	grep -qx 'ff-bench: regression beyond 3%: builtin nginx tcp bits_per_s -9.6% \[-15.0, -4.1\] (p=0.0015 q=0.0095)' <<<"$stderr"
	grep -qx 'ff-bench: regression beyond 3%: builtin nginx tcp relay_cpu_s_per_gb +10.6% \[+4.3, +17.6\] (p=0.0015 q=0.0095)' <<<"$stderr"
	grep -qx 'ff-bench: the gate at 3%: 2 worse verdicts, 1 case with more failures in new, 1 case only in base, 5 comparisons undecided (exit 1)' <<<"$stderr"
	has_line '^The gate at 3%: 2 worse verdicts, 1 case with more failures in new, 1 case only in base, 5 comparisons undecided \(exit 1\)$'
	# -9.6% is beyond 5%, but its interval reaches -4.1%: not worse at 5%;
	# yet new failed once where base never did, and iperf3 none is only
	# in base: the gate fails all the same.
	run -1 --separate-stderr ff-bench compare --threshold 5 "$FIX/base.jsonl" "$FIX/new.jsonl"
	has_line '^The gate at 5%: 1 case with more failures in new, 1 case only in base, 5 comparisons undecided \(exit 1\)$'
	has_line '^builtin +nginx +tcp .* more failures in new \(n=10\+10, 1 failed in new\)$'
	run -1 --separate-stderr ff-bench compare --json --threshold 4.2 "$FIX/base.jsonl" "$FIX/new.jsonl"
	jq -e -s '([.[] | select(.beyond_threshold)] | length == 2) and .[-1] == {"event":"end","program":"ff-bench","status":1}' <<<"$output"
	# Comparing a file with a copy of itself: nothing significant, whatever
	# the threshold, and nothing decided either: the same runs on both sides.
	cp "$FIX/new.jsonl" "$BATS_TEST_TMPDIR/copy.jsonl"
	run -3 ff-bench compare --threshold 0 "$FIX/new.jsonl" "$BATS_TEST_TMPDIR/copy.jsonl"
	has_line 'inconclusive: 10 runs of new are in base too'
	! has_line ' (worse|better) \(' || false
}

@test "ff-bench compare: markdown to paste into a pull request" {
	run -0 ff-bench compare --format markdown "$FIX/base.jsonl" "$FIX/new.jsonl"
	[ "${lines[0]}" = "### flimflam compare" ]
	has_line '^#### Bits/s \(higher is better\)$'
	has_line '^\| Workload \| Relay \| Protocol \| Base \| New \| Medians \| Change \[95% CI\] \| p \| q \| Verdict \|$'
	has_line '^\| :-- \| :-- \| :-- \| --: \| --: \| --: \| --: \| --: \| --: \| :-- \|$'
	has_line '^\| builtin \| nginx \| tcp \| 10\.1G ±8\.9% \| 9\.16G ±7\.9% \| -9\.3% \| -9\.6% \[-15\.0, -4\.1\] \| 0\.0015 \| 0\.0095 \| \*\*worse\*\* \(n=10\+10, 1 failed in new\) \|$'
	has_line '^\| builtin \| none \| tcp \| 15\.0G \| 18\.0G \| \+20\.0% \| \+20\.0% \[no interval\] \| 0\.10 \| - \| inconclusive \[1\] \(n=3\+3\) \|$'
	has_line '^- \[1\] inconclusive: fewer than 5 runs per side$'
	has_line '^\| builtin \| \*geomean\* of 2 \|  \| [0-9.]+G \| [0-9.]+G \| [-+][0-9.]+% \| [-+][0-9.]+% \|  \|  \| geometric means, not a verdict \|$'
	has_line '^\| router \| skrouterd 3\.2\.0, hash 0123456789abcdef, .* \| skrouterd 3\.3\.0-dev, hash fedcba9876543210, .* \|$'
	# Every row of the comparison tables has the heading's ten cells.
	cells=$(grep -E '^\| (Workload|:-- \| :-- \| :-- \| --:|builtin|iperf3|h2load|h2load-h1|\*geomean\*) \|' <<<"$output" |
		awk -F' [|]' '{ print NF - 1 }' | sort -u)
	[ "$cells" = 10 ]
}

@test "ff-bench compare: a geometric mean per metric and workload, of the medians and of the changes" {
	run -0 --separate-stderr ff-bench compare --json "$FIX/base.jsonl" "$FIX/new.jsonl"
	echo "$output" >"$BATS_TEST_TMPDIR/cmp.jsonl"
	# The geomean of the medians of each side, over the cases of the
	# workload with the metric; and of the changes, as ratios.
	jq -e -s '
		([.[] | select(.event == "comparison" and .metric == "bits_per_s" and .workload == "builtin")]) as $rows |
		(.[] | select(.event == "geomean" and .metric == "bits_per_s" and .workload == "builtin")) as $g |
		($rows | map(.base_median | log) | add / length | exp) as $b |
		($rows | map(.new_median | log) | add / length | exp) as $n |
		($rows | map(.change_pct / 100 + 1 | log) | add / length | exp - 1) as $c |
		$g.cases == 2 and (($g.base - $b) / $b | fabs) < 1e-9 and (($g.new - $n) / $n | fabs) < 1e-9 and
		(($g.delta_pct - ($n - $b) / $b * 100) | fabs) < 1e-6 and (($g.change_pct - $c * 100) | fabs) < 1e-6' \
		"$BATS_TEST_TMPDIR/cmp.jsonl"
	# One per workload: builtin's never mixed with another's.
	jq -e -s '[.[] | select(.event == "geomean" and .metric == "bits_per_s") | .workload] == ["builtin", "h2load-h1"]' \
		"$BATS_TEST_TMPDIR/cmp.jsonl"
	run -0 ff-bench compare "$FIX/base.jsonl" "$FIX/new.jsonl"
	has_line '^builtin +geomean of 2 +12\.3G +12\.8G +\+4\.3% +\+4\.2% +geometric means, not a verdict$'
}

@test "ff-bench compare: different environments are flagged" {
	run -0 ff-bench compare "$FIX/base.jsonl" "$FIX/new.jsonl"
	! has_line 'DIFFERS|warning' || false
	jq -c '.environment.kernel = "6.5.0-1-amd64" | .environment.hostname = "laptop"' "$FIX/new.jsonl" \
		>"$BATS_TEST_TMPDIR/other.jsonl"
	run -0 --separate-stderr ff-bench compare "$FIX/base.jsonl" "$BATS_TEST_TMPDIR/other.jsonl"
	has_line "^  kernel +DIFFERS: base '6\.1\.0-18-amd64', new '6\.5\.0-1-amd64'$"
	has_line "^  hostname +DIFFERS: base 'bench1', new 'laptop'$"
	has_line '^  warning: the two sides ran in different environments'
	# Each difference is also a warning on stderr, naming both values.
	[ "$stderr" = "ff-bench: the environments differ: hostname: base 'bench1', new 'laptop'
ff-bench: the environments differ: kernel: base '6.1.0-18-amd64', new '6.5.0-1-amd64'" ]
	run -0 --separate-stderr ff-bench compare --json "$FIX/base.jsonl" "$BATS_TEST_TMPDIR/other.jsonl"
	jq -e -s '[.[] | select(.event == "environment_difference") | .field] == ["hostname", "kernel"]' <<<"$output"
	run -0 ff-bench compare --format markdown "$FIX/base.jsonl" "$BATS_TEST_TMPDIR/other.jsonl"
	has_line '^\| kernel \| 6\.1\.0-18-amd64 \| 6\.5\.0-1-amd64 \*\*\(differs\)\*\* \|$'
	has_line '^> \*\*Warning:\*\*'
}

@test "ff-bench compare: no case in common is an error" {
	jq -c 'select(.config.relay == "none")' "$FIX/base.jsonl" >"$BATS_TEST_TMPDIR/a.jsonl"
	jq -c 'select(.config.relay == "nginx")' "$FIX/new.jsonl" >"$BATS_TEST_TMPDIR/b.jsonl"
	run -1 --separate-stderr ff-bench compare "$BATS_TEST_TMPDIR/a.jsonl" "$BATS_TEST_TMPDIR/b.jsonl"
	[ "${stderr_lines[-1]}" = "ff-bench: '$BATS_TEST_TMPDIR/a.jsonl' and '$BATS_TEST_TMPDIR/b.jsonl' have no case in common" ]
}

@test "flimflam compare runs ff-bench compare" {
	run -0 flimflam compare "$FIX/base.jsonl" "$FIX/new.jsonl"
	has_line '^Comparing .*/base\.jsonl \(base\) with .*/new\.jsonl \(new\)'
}

@test "ff-bench: a run that fails before its server is up still has its run directory (from the start events)" {
	local fake="$BATS_TEST_TMPDIR/fake" f="$BATS_TEST_TMPDIR/r.jsonl"
	mkdir -p "$fake"
	printf '#!/bin/sh\ncase "$*" in *--version*) echo "iperf 3.12";; *) echo "fake iperf3: cannot serve" >&2; exit 1;; esac\n' >"$fake/iperf3"
	chmod +x "$fake/iperf3"
	PATH="$fake:$PATH" run -1 --separate-stderr ff-bench -w iperf3 -r none --warmup 0 --duration 1 --output "$f"
	jq -e -s 'length == 1 and .[0].status == "failed"' "$f"
	dir=$(jq -r -s '.[0].run_dir' "$f")
	[[ "$dir" == "$FLIMFLAM_RUNS/"* ]]
	[ -d "$dir" ]
	grep -q "fake iperf3: cannot serve" "$dir/server.log"
	# The first stage's start event names it, before anything can fail.
	run -0 --separate-stderr bash -c 'ff-workload serve -w builtin --run-dir "$1" </dev/null | head -n 1' _ "$BATS_TEST_TMPDIR/d"
	jq -e --arg d "$BATS_TEST_TMPDIR/d" '.event == "start" and .run_dir == $d' <<<"$output"
}

@test "ff-bench: on a terminal, the live line shows the bench's ETA first, then the seconds left in the phase" {
	command -v script >/dev/null || skip "no script(1) to give the bench a terminal"
	cd "$BATS_TEST_TMPDIR"
	script -qec "stty cols 80; ff-bench -w builtin -r none --warmup 3 --duration 4 --output r.jsonl" \
		/dev/null >tty.out 3>&-
	# The live lines, each drawn after \r and erase-line.
	tr '\r' '\n' <tty.out | sed 's/^\x1b\[K//' | grep '^ff-bench: ETA ' >live || { cat -v tty.out; false; }
	grep -qE '^ff-bench: ETA [0-9]+:[0-9]{2} \| \[1/1\] builtin none tcp: warming up, [0-3] s left$' live
	grep -qE '^ff-bench: ETA [0-9]+:[0-9]{2} \| \[1/1\] builtin none tcp: measuring, [0-4] s left$' live
	# The phase's seconds, not the run's (warmup and window: 7).
	! grep -qE 'warming up, ([4-9]|[0-9]{2,}) s left' live
	# At 80 columns nothing is cut: the line fits.
	awk 'length > 79 { bad = 1 } END { exit bad }' live
}
