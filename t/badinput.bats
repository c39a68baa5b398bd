# Bad input across every command: each case is one line `prog: what: why`
# on stderr (before the usage, for usage errors), exit 2 for usage and 1
# for failures, no crash, and nothing started (no run directory made).
bats_require_minimum_version 1.5.0
load helper

# cases FILE: lines "STATUS|COMMAND|FIRST LINE OF STDERR", run in a scratch directory.
cases() {
	local want cmd line n=0
	cd "$BATS_TEST_TMPDIR"
	while IFS='|' read -r want cmd line; do
		[ -n "$want" ] || continue
		eval "run --separate-stderr $cmd"
		[ "$status" -eq "$want" ] || { echo "$cmd: status $status, want $want"; false; }
		[ "${stderr_lines[0]}" = "$line" ] ||
			{ echo "$cmd: got '${stderr_lines[0]}', want '$line'"; false; }
		# Sanitizer reports or crashes would show as more than our line and the usage.
		[[ "$stderr" != *"Sanitizer"* && "$stderr" != *"runtime error"* ]]
		n=$((n + 1))
	done <"$1"
	echo "$n cases"
}

@test "the run options: each bad value is one line and exit 2, and nothing starts" {
	local args
	local relay
	while IFS='|' read -r args want; do
		# -r none, so nothing could start; unless the case is about -r
		relay="-r none"
		[[ "$args" != -r* ]] || relay=
		run -2 --separate-stderr flimflam run $relay $args
		[ "${stderr_lines[0]}" = "flimflam: $want" ] ||
			{ echo "run $args: got '${stderr_lines[0]}', want 'flimflam: $want'"; false; }
		[ -z "$output" ]
	done <<'CASES'
--jobs 0|--jobs: 0 is out of range (1 to 65536)
--jobs -3|--jobs: -3 is out of range (1 to 65536)
--jobs 1.5|--jobs: '1.5' is not a whole number
--jobs many|--jobs: 'many' is not a number
--jobs 1000000|--jobs: 1000000 is out of range (1 to 65536)
--jobs|option '--jobs' needs a value
--warmup -1|--warmup: -1 is out of range (0 to 86400)
--warmup 0.5|--warmup: '0.5' is not a whole number
--duration 0|--duration: 0 is out of range (1 to 86400)
--duration 99999999999|--duration: 99999999999 is out of range (1 to 86400)
--duration 99999999999999999999999|--duration: 99999999999999999999999 is out of range (1 to 86400)
--duration 2s|--duration: '2s' is not a number
--cpu-limit -1|--cpu-limit: -1 is out of range (0 to 1024)
--cpu-limit 100000|--cpu-limit: 100000 is out of range (0 to 1024)
-w nosuch|unknown workload 'nosuch' (expected builtin, iperf3, h2load, h2load-h1, builtin-rr, builtin-crr)
-r nosuch|unknown relay 'nosuch' (expected skrouterd, nghttpx, nginx, haproxy, cmd, none)
-p nosuch|unknown protocol 'nosuch' (expected tcp, http1, http2)
-p http1|workload 'builtin' over relay 'none' with protocol 'http1' is not supported; these work for builtin: builtin/skrouterd/tcp, builtin/nginx/tcp, builtin/haproxy/tcp, builtin/cmd/tcp, builtin/none/tcp
extra|unexpected argument 'extra'
-w builtin-rr --request-size 0|--request-size: 0 is out of range (1 to 16777216)
-w builtin-crr --response-size 99999999|--response-size: 99999999 is out of range (1 to 16777216)
-w builtin-rr --rate 0|--rate: 0 is out of range (1 to 10000000)
-w builtin-rr --rate 1e8|--rate: 1e8 is out of range (1 to 10000000)
--duration 1e9|--duration: 1e9 is out of range (1 to 86400)
--duration 1e999|--duration: 1e999 is out of range (1 to 86400)
--jobs 2.5e0|--jobs: '2.5e0' is not a whole number
--jobs 1e|--jobs: '1e' is not a number
--rate 5|--rate is for workloads h2load, h2load-h1, builtin-rr, builtin-crr, not 'builtin'
-w iperf3 --request-size 100|--request-size and --response-size are for workloads builtin-rr, builtin-crr, not 'iperf3'
-w builtin-crr -p http1|workload 'builtin-crr' over relay 'none' with protocol 'http1' is not supported; these work for builtin-crr: builtin-crr/skrouterd/tcp, builtin-crr/nginx/tcp, builtin-crr/haproxy/tcp, builtin-crr/cmd/tcp, builtin-crr/none/tcp
CASES
	run -2 --separate-stderr flimflam run -r none --duration ""
	[ "${stderr_lines[0]}" = "flimflam: --duration: expected a whole number" ]
	# Nothing was started: no run directory was made.
	[ ! -e "$FLIMFLAM_RUNS" ] || [ -z "$(ls -A "$FLIMFLAM_RUNS")" ]
}

@test "a workload's own limits (iperf3: 128 streams, 60 s omitted) are usage errors before anything starts" {
	cd "$BATS_TEST_TMPDIR"
	run -2 --separate-stderr flimflam run -w iperf3 -r none --jobs 200
	[ "${stderr_lines[0]}" = "flimflam: --jobs: workload 'iperf3' allows at most 128 (iperf3's limit on --parallel streams), not 200" ]
	run -2 --separate-stderr flimflam run -w iperf3 -r none --warmup 61
	[ "${stderr_lines[0]}" = "flimflam: --warmup: workload 'iperf3' allows at most 60 (iperf3's limit on --omit seconds), not 61" ]
	run -2 --separate-stderr flimflam bench -r none --jobs 129
	[ "${stderr_lines[0]}" = "flimflam bench: --jobs: workload 'iperf3' allows at most 128 (iperf3's limit on --parallel streams), not 129" ]
	run -2 --separate-stderr ff-workload drive -w iperf3 --jobs 129 </dev/null
	[ "${stderr_lines[0]}" = "ff-workload: --jobs: workload 'iperf3' allows at most 128 (iperf3's limit on --parallel streams), not 129" ]
	# A connection per job, one descriptor per job in the client and the server of relay none: the open-files limit.
	run -1 --separate-stderr prlimit --nofile=256:400 flimflam run -r none --jobs 400
	[ "$stderr" = "flimflam: --jobs 400 needs 464 open files per process (1 a job), and this process may open at most 400 (ulimit -Hn): use fewer jobs, or raise the limit" ]
	run -1 --separate-stderr prlimit --nofile=256:400 flimflam bench -r none -w builtin --jobs 400
	[ "$stderr" = "flimflam bench: --jobs 400 needs 464 open files per process (1 a job), and this process may open at most 400 (ulimit -Hn): use fewer jobs, or raise the limit" ]
	[ -z "$(ls "$BATS_TEST_TMPDIR"/*.jsonl 2>/dev/null)" ]
	nothing_started
}

@test "the run options: --cpu-limit beyond this process's CPUs is a usage error" {
	local n
	n=$(nproc)
	run -2 --separate-stderr flimflam run -r nginx --cpu-limit $((n + 1))
	[ "${stderr_lines[0]}" = "flimflam: --cpu-limit: $((n + 1)) is more than the $n CPUs this process may use" ]
}

@test "the run options: --cpu-limit beyond one CPU says 1 CPU, not 1 CPUs, in each program" {
	command -v taskset >/dev/null || skip "taskset is not on PATH"
	run -2 --separate-stderr taskset -c 0 flimflam run -r nginx --cpu-limit 2
	[ "${stderr_lines[0]}" = "flimflam: --cpu-limit: 2 is more than the 1 CPU this process may use" ]
	run -2 --separate-stderr taskset -c 0 ff-topology -r nginx --cpu-limit 2
	[ "${stderr_lines[0]}" = "ff-topology: --cpu-limit: 2 is more than the 1 CPU this process may use" ]
	run -2 --separate-stderr taskset -c 0 flimflam bench -r nginx --cpu-limit 2
	[ "${stderr_lines[0]}" = "flimflam bench: --cpu-limit: 2 is more than the 1 CPU this process may use" ]
}

@test "bad input: capture, topology, workload and capture options" {
	cat >"$BATS_TEST_TMPDIR/cases" <<'CASES'
2|flimflam record -r nginx --call-graph bogus|flimflam: unknown call graph method 'bogus' (expected fp, dwarf, lbr)
2|flimflam record -r nginx --freq 0|flimflam: --freq: 0 is out of range (1 to 1000000)
2|flimflam record -r nginx --freq abc|flimflam: --freq: 'abc' is not a number
2|flimflam stat -r nginx --freq 99|flimflam: --freq is for record, c2c, mem and flamegraph, not 'stat'
2|flimflam run -r nginx --call-graph fp|flimflam: --call-graph is for record, c2c, mem and flamegraph, not 'run'
2|flimflam skstat -r nginx|flimflam: 'skstat' reads the routers' statistics, so it needs relay 'skrouterd', not 'nginx'
2|flimflam record -r none|flimflam: 'record' captures in the relays, and relay 'none' has none
2|flimflam stat -r none -w iperf3|flimflam: 'stat' captures in the relays, and relay 'none' has none
2|ff-topology --server-port 0|ff-topology: --server-port: 0 is out of range (1 to 65535)
2|ff-topology --server-port 70000|ff-topology: --server-port: 70000 is out of range (1 to 65535)
2|ff-topology --server-port x|ff-topology: --server-port: 'x' is not a number
2|ff-topology -r nginx --encapsulation lite|ff-topology: --encapsulation is for relay skrouterd
2|ff-topology --encapsulation bogus|ff-topology: unknown encapsulation 'bogus' (expected legacy, lite)
2|ff-topology -r nginx extra|ff-topology: unexpected argument 'extra'
2|ff-workload serve -w bogus|ff-workload: unknown workload 'bogus' (expected builtin, iperf3, h2load, h2load-h1, builtin-rr, builtin-crr)
2|ff-workload drive --duration 0|ff-workload: --duration: 0 is out of range (1 to 86400)
2|ff-workload drive --jobs 99999|ff-workload: --jobs: 99999 is out of range (1 to 65536)
2|ff-workload drive -w builtin-rr --rate -1|ff-workload: --rate: -1 is out of range (1 to 10000000)
2|ff-workload serve -w h2load --response-size 10|ff-workload: --request-size and --response-size are for workloads builtin-rr, builtin-crr, not 'h2load'
2|ff-workload bogus|ff-workload: unknown mode 'bogus' (expected serve or drive)
2|ff-workload|ff-workload: expected a mode: serve or drive
2|ff-capture bogus|ff-capture: unknown mode 'bogus' (expected none, stat, record, c2c, mem, skstat, offcpu, lock)
2|ff-capture --pid abc --duration 1|ff-capture: --pid: 'abc' is not a number
2|ff-capture --pid 0 --duration 1|ff-capture: --pid: 0 is out of range (1 to 4194304)
2|ff-capture --pid 1|ff-capture: --pid needs --duration
2|ff-capture --pid 1 --duration 1.5|ff-capture: --duration: '1.5' is not a whole number
2|ff-capture --pid '' --duration 1|ff-capture: --pid: expected PID[,PID...], not ''
2|ff-capture --pid , --duration 1|ff-capture: --pid: expected PID[,PID...], not ','
2|ff-check extra|ff-check: unexpected argument 'extra'
2|ff-bench -w builtin,builtin|ff-bench: workload 'builtin' is given twice
2|ff-bench -w nosuch|ff-bench: unknown workload 'nosuch' (expected builtin, iperf3, h2load, h2load-h1, builtin-rr, builtin-crr)
2|ff-bench -r ''|ff-bench: empty relay name in ''
2|ff-bench --repeat 0|ff-bench: --repeat: 0 is out of range (1 to 10000)
2|ff-bench -w builtin,iperf3 --rate 100|ff-bench: --rate is for workloads h2load, h2load-h1, builtin-rr, builtin-crr, and none is selected
2|ff-bench -w builtin,h2load --response-size 100|ff-bench: --request-size and --response-size are for workloads builtin-rr, builtin-crr, and none is selected
2|ff-bench --request-size 0|ff-bench: --request-size: 0 is out of range (1 to 16777216)
2|ff-bench compare a|ff-bench: expected two results files, BASE and NEW, or one with --base LABEL and --new LABEL
2|ff-bench compare --threshold x a b|ff-bench: --threshold: 'x' is not a number
2|ff-bench compare --base '' --new b a|ff-bench: --base: an empty label
CASES
	cases "$BATS_TEST_TMPDIR/cases"
	nothing_started
}

@test "bad input: a stage's stdin that is not an event stream is one error, not one per line" {
	local p
	for p in "ff-capture" "ff-topology -r none" "ff-workload drive"; do
		run -1 --separate-stderr timeout 10 sh -c "seq 48 | exec $p --run-dir '$BATS_TEST_TMPDIR/d'"
		[ "${#stderr_lines[@]}" -eq 1 ] || { echo "$p: $stderr"; false; }
		[ "$stderr" = "${p%% *}: standard input:1: expected an event (a JSON object per line): ${p%% *} reads the event stream of flimflam's programs" ]
		# and an error event for the stream
		[ "$(jq -r 'select(.event == "error") | .program' <<<"$output")" = "${p%% *}" ]
	done
}

@test "bad input: files that are missing, empty, truncated, garbage or the wrong JSON" {
	cd "$BATS_TEST_TMPDIR"
	: >empty
	printf '\x89PNG\r\n\x1a\n\xb7\xfe\x01\x02 not text' >garbage
	printf '{"event":"case","config":{"workload":"builtin"' >trunc.jsonl
	echo '{"event":"case","config":"x"}' >wrongtype.jsonl
	echo '[1,2]' >notobj.jsonl
	cat >"$BATS_TEST_TMPDIR/cases" <<'CASES'
1|ff-flame /nonexistent|ff-flame: cannot open '/nonexistent': No such file or directory
1|ff-flame -o page.html garbage|ff-flame: 'garbage': not a perf.data file, perf script output or folded stacks
1|ff-flame -o page.html trunc.jsonl|ff-flame: 'trunc.jsonl': not a perf.data file, perf script output or folded stacks
1|ff-bench summarize /nonexistent|ff-bench: cannot read '/nonexistent': No such file or directory
1|ff-bench summarize empty|ff-bench: empty: the file is empty (expected bench results, one JSON object per line)
1|ff-bench summarize garbage|ff-bench: garbage:1: binary data (not UTF-8 text), not a JSON line
1|ff-bench summarize trunc.jsonl|ff-bench: trunc.jsonl:1: the last line is cut short ('}' expected near end of file)
1|ff-bench summarize wrongtype.jsonl|ff-bench: wrongtype.jsonl:1: 'status' is missing
1|ff-bench summarize notobj.jsonl|ff-bench: notobj.jsonl:1: expected a JSON object, not an array
1|ff-bench compare empty trunc.jsonl|ff-bench: empty: the file is empty (expected bench results, one JSON object per line)
2|ff-bench compare empty empty|ff-bench: 'empty' and 'empty' are the same file: compare two different ones
1|ff-bench compare trunc.jsonl notobj.jsonl|ff-bench: trunc.jsonl:1: the last line is cut short
CASES
	while IFS='|' read -r want cmd line; do
		eval "run --separate-stderr $cmd"
		[ "$status" -eq "$want" ] || { echo "$cmd: status $status, want $want"; false; }
		[[ "${stderr_lines[0]}" == "$line"* ]] || { echo "$cmd: got '${stderr_lines[0]}'"; false; }
	done <"$BATS_TEST_TMPDIR/cases"
	# No page was written for input that was not one.
	[ ! -e page.html ]
	# Empty text is no recording: an error naming the file, and no page (a
	# perf.data of no samples is a page that says so: t/ff-flame.bats).
	run -1 --separate-stderr ff-flame -o page.html empty
	[ "$stderr" = "ff-flame: 'empty' is empty: not a perf.data file, perf script output or folded stacks" ]
	[ ! -e page.html ]
}

@test "the stages: /dev/zero on stdin (a line without end) is one error at the line cap, not memory exhausted" {
	local cmd limit="ulimit -v 300000"
	# AddressSanitizer (make check-asan) reserves terabytes of address space
	# for its shadow memory, which ulimit -v forbids (it aborts at start):
	# there its own limit on resident memory bounds the program instead.
	if grep -qa __asan_init "$TOP/bin/ff-topology"; then
		limit="export ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}hard_rss_limit_mb=300"
	fi
	for cmd in "ff-topology -r none" "ff-capture" "ff-workload drive -w builtin"; do
		run -1 --separate-stderr bash -c "$limit; exec timeout 60 $cmd </dev/zero"
		[ "$stderr" = "${cmd%% *}: standard input:1: a line of more than 1 MiB: not an event stream (one JSON object per line)" ] ||
			{ echo "$cmd: $stderr"; false; }
	done
}

@test "bad input: a results file's figures out of any run's range are refused, naming the field and the range" {
	local base="$TOP/t/fixtures/ff-bench/base.jsonl" d="$BATS_TEST_TMPDIR" set want
	while IFS='|' read -r set want; do
		head -n 1 "$base" | jq -c "$set" >"$d/r.jsonl"
		run -1 --separate-stderr ff-bench summarize "$d/r.jsonl"
		[ "$stderr" = "ff-bench: $d/r.jsonl:1: $want" ] || { echo "$set: got '$stderr'"; false; }
		[ -z "$output" ]
	done <<'CASES'
.result.bits_per_s = -5|'result.bits_per_s' is -5: out of range (0 to 1e+15)
.result.bits_per_s = 1e300|'result.bits_per_s' is 1e+300: out of range (0 to 1e+15)
.result.ops_per_s = -1|'result.ops_per_s' is -1: out of range (0 to 1e+12)
.result.latency_avg_us = -0.5|'result.latency_avg_us' is -0.5: out of range (0 to 8.64e+10)
.config.jobs = 0|'config.jobs' is 0: out of range (1 to 65536)
.config.duration_s = 1e9|'config.duration_s' is 1e+09: out of range (0 to 86400)
.config.hops = 99|'config.hops' is 99: out of range (0 to 8)
.repeat = -2|'repeat' is -2: out of range (1 to 1e+09)
.resources.relays[0].cpu_fraction = -1|'resources.relays[0].cpu_fraction' is -1: out of range (0 to 1024)
.resources.relays[0].max_rss_bytes = -1|'resources.relays[0].max_rss_bytes' is -1: out of range (0 to 1e+18)
CASES
	# In range, summarize takes it.
	head -n 1 "$base" | jq -c '.result.bits_per_s = 0' >"$d/r.jsonl"
	run -0 ff-bench summarize "$d/r.jsonl"
}
