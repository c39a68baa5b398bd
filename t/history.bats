#!/usr/bin/env bats
# flimflam history (ff-history): results files into SQLite, series over
# time with their change points, --check, export for Otava, the report.
# Every test keeps its database under its own XDG_STATE_HOME or --db.

bats_require_minimum_version 1.5.0
load helper

setup() {
	export XDG_STATE_HOME="$BATS_TEST_TMPDIR/state"
	DB="$XDG_STATE_HOME/flimflam/history.db"
}

# record I VALUE [HOST] [WORKLOAD]: one ok case record of ff-bench, run I
# (its own run directory and minute), bits_per_s VALUE, on host HOST.
record() {
	local i=$1 v=$2 host=${3:-vm} w=${4:-builtin}
	printf '{"event":"case","schema":1,"tool":"ff-bench","version":"0.1.0","time":"2026-01-%02dT%02d:%02d:00Z","status":"ok","reason":null,"config":{"workload":"%s","relay":"nginx","protocol":"tcp","hops":2,"jobs":2,"warmup_s":1,"duration_s":5,"cpu_limit":1},"repeat":1,"build":{"label":null,"relay":"nginx","path":"/usr/sbin/nginx","version":"nginx/1.22.1","sha256":"ab12","proton":null},"run_dir":"/runs/%s-%d","result":{"workload":"%s","jobs":2,"duration_s":5,"bits_per_s":%s,"ops_per_s":null,"latency_avg_us":%s},"resources":{"relays":[{"role":"r1","cpu_fraction":0.5,"max_rss_bytes":1000000},{"role":"r2","cpu_fraction":0.4,"max_rss_bytes":1000000}]},"environment":{"hostname":"%s","cpu_model":"AMD EPYC","cpus_online":2,"cpus_available":2,"cpu_list":"0-1","kernel":"6.1.0","os":"Debian"}}\n' \
		$((1 + i / 1440)) $((i / 60 % 24)) $((i % 60)) "$w" "$host" "$i" "$w" "$v" "$(awk -v v="$v" 'BEGIN { printf "%.3f", 1e10 / v }')" "$host"
}

# values N SEED STEP_AT STEP_PCT: N values around 1e9 (1% noise), STEP_PCT % from point STEP_AT (1-based).
values() {
	awk -v n="$1" -v seed="$2" -v at="$3" -v pct="$4" 'BEGIN {
		srand(seed)
		for (i = 1; i <= n; i++) {
			u1 = rand(); u2 = rand(); if (u1 < 1e-12) u1 = 1e-12
			g = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2)
			lvl = i >= at ? 1e9 * (1 + pct / 100) : 1e9
			printf "%.0f\n", lvl * (1 + 0.01 * g)
		}
	}'
}

# history_of FILE N SEED STEP_AT STEP_PCT: add N runs, one commit each (c1 .. cN).
history_of() {
	local i=0 v
	while read -r v; do
		i=$((i + 1))
		record "$i" "$v" >"$BATS_TEST_TMPDIR/run-$i.jsonl"
		ff-history add --commit "c$i" "$BATS_TEST_TMPDIR/run-$i.jsonl" >/dev/null || return 1
	done < <(values "$2" "$3" "$4" "$5")
}

runs_in() {
	sqlite3 "${1:-$DB}" 'SELECT count(*) FROM runs'
}

@test "history: -h, usage errors, and flimflam history is ff-history" {
	run -0 flimflam history -h
	[[ "${lines[0]}" == "usage: flimflam history [-h] [--db PATH]"* ]]
	run -0 flimflam history add -h
	[[ "${lines[0]}" == "usage: flimflam history add [-h] [--commit SHA]"* ]]
	run -2 --separate-stderr flimflam history add
	[ "${stderr_lines[0]}" = "flimflam history add: expected one or more results files" ]
	run -2 --separate-stderr flimflam history add --label 'a b' x.jsonl
	[[ "${stderr_lines[0]}" == "flimflam history add: --label: 'a b' is not a label"* ]]
	run -2 --separate-stderr flimflam history --threshold 5
	[ "${stderr_lines[0]}" = "flimflam history: --threshold goes with --check" ]
	run -2 --separate-stderr flimflam history export
	[ "${stderr_lines[0]}" = "flimflam history export: expected --format csv" ]
	run -2 --separate-stderr flimflam history export --format xml
	[[ "${stderr_lines[0]}" == "flimflam history export: unknown format 'xml'"* ]]
	run -1 --separate-stderr flimflam history
	[ "$stderr" = "flimflam history: $DB: no history there yet (add results with 'flimflam history add FILE')" ]
	[ ! -e "$DB" ]
}

@test "history add: a database is made under XDG_STATE_HOME, versioned, in WAL mode; adding a file twice adds nothing and says so" {
	record 1 1000000000 >"$BATS_TEST_TMPDIR/a.jsonl"
	record 2 1010000000 >>"$BATS_TEST_TMPDIR/a.jsonl"
	run -0 flimflam history add --commit 0123abc "$BATS_TEST_TMPDIR/a.jsonl"
	[ "$output" = "$BATS_TEST_TMPDIR/a.jsonl: 2 runs added" ]
	[ "$(sqlite3 "$DB" 'PRAGMA user_version')" = 1 ]
	[ "$(sqlite3 "$DB" 'PRAGMA journal_mode')" = wal ]
	[ "$(stat -c %a "$XDG_STATE_HOME/flimflam")" = 700 ]
	run -0 flimflam history add --commit other "$BATS_TEST_TMPDIR/a.jsonl"
	[ "$output" = "$BATS_TEST_TMPDIR/a.jsonl: nothing added: its 2 runs are all in the history already" ]
	[ "$(runs_in)" = 2 ]
	# Reopened and appended: one new run of three.
	record 3 990000000 >>"$BATS_TEST_TMPDIR/a.jsonl"
	run -0 flimflam history add "$BATS_TEST_TMPDIR/a.jsonl"
	[ "$output" = "$BATS_TEST_TMPDIR/a.jsonl: 1 run added, 2 in the history already" ]
	[ "$(runs_in)" = 3 ]
	record 3 990000000 >"$BATS_TEST_TMPDIR/one.jsonl"
	run -0 flimflam history add "$BATS_TEST_TMPDIR/one.jsonl"
	[ "$output" = "$BATS_TEST_TMPDIR/one.jsonl: nothing added: its run is in the history already" ]
	# The case, the build, the machine and every metric are kept.
	[ "$(sqlite3 "$DB" "SELECT commit_sha, workload, relay, hops, build_sha256, hostname, cpus_available FROM runs WHERE id = 1")" = "0123abc|builtin|nginx|2|ab12|vm|2" ]
	[ "$(sqlite3 "$DB" "SELECT group_concat(name, ' ') FROM (SELECT name FROM metrics WHERE run_id = 1 ORDER BY name)")" = \
	  "bits_per_s latency_avg_us r1_cpu_fraction r1_max_rss_bytes r2_cpu_fraction r2_max_rss_bytes relay_cpu_fraction relay_cpu_s_per_gb" ]
}

@test "history add: bad files are refused by name, in one line, and nothing of any file is added" {
	record 1 1000000000 >"$BATS_TEST_TMPDIR/good.jsonl"
	: >"$BATS_TEST_TMPDIR/empty.jsonl"
	echo 'not json' >"$BATS_TEST_TMPDIR/text.jsonl"
	printf 'ab\0cd\n' >"$BATS_TEST_TMPDIR/binary.jsonl"
	record 2 5 | sed 's/"jobs":2,"warmup_s"/"jobs":"two","warmup_s"/' >"$BATS_TEST_TMPDIR/type.jsonl"
	run -1 --separate-stderr flimflam history add "$BATS_TEST_TMPDIR/good.jsonl" "$BATS_TEST_TMPDIR/empty.jsonl"
	[ "$stderr" = "flimflam history add: $BATS_TEST_TMPDIR/empty.jsonl: the file is empty (expected bench results, one JSON object per line)" ]
	[ "$(runs_in)" = 0 ]
	run -1 --separate-stderr flimflam history add "$BATS_TEST_TMPDIR/text.jsonl"
	[ "$stderr" = "flimflam history add: $BATS_TEST_TMPDIR/text.jsonl:1: not JSON: '[' or '{' expected near 'not'" ]
	run -1 --separate-stderr flimflam history add "$BATS_TEST_TMPDIR/binary.jsonl"
	[ "$stderr" = "flimflam history add: $BATS_TEST_TMPDIR/binary.jsonl:1: binary data (a NUL byte), not a JSON line" ]
	run -1 --separate-stderr flimflam history add "$BATS_TEST_TMPDIR/type.jsonl"
	[ "$stderr" = "flimflam history add: $BATS_TEST_TMPDIR/type.jsonl:1: 'config.jobs' should be a whole number, not a string" ]
	run -1 --separate-stderr flimflam history add "$BATS_TEST_TMPDIR/missing.jsonl"
	[ "$stderr" = "flimflam history add: cannot read '$BATS_TEST_TMPDIR/missing.jsonl': No such file or directory" ]
	[ "$(runs_in)" = 0 ]
	# Not a database, another program's, a newer schema: refused, said why.
	echo 'hello' >"$BATS_TEST_TMPDIR/notdb"
	run -1 --separate-stderr flimflam history --db "$BATS_TEST_TMPDIR/notdb"
	[ "$stderr" = "flimflam history: $BATS_TEST_TMPDIR/notdb: cannot open it: file is not a database" ]
	sqlite3 "$BATS_TEST_TMPDIR/other.db" 'CREATE TABLE t (x)'
	run -1 --separate-stderr flimflam history add --db "$BATS_TEST_TMPDIR/other.db" "$BATS_TEST_TMPDIR/good.jsonl"
	[ "$stderr" = "flimflam history add: $BATS_TEST_TMPDIR/other.db: not a flimflam history (a database of another program)" ]
	sqlite3 "$DB" 'PRAGMA user_version = 2'
	run -1 --separate-stderr flimflam history add "$BATS_TEST_TMPDIR/good.jsonl"
	[ "$stderr" = "flimflam history add: $DB: its schema (version 2) is newer than this flimflam's (1): use a newer flimflam" ]
}

@test "history add: two writers at once lose nothing" {
	local i
	for i in $(seq 1 150); do record "$i" $((1000000000 + i)) host-a; done >"$BATS_TEST_TMPDIR/a.jsonl"
	for i in $(seq 1 150); do record "$i" $((1000000000 + i)) host-b; done >"$BATS_TEST_TMPDIR/b.jsonl"
	flimflam history add --db "$BATS_TEST_TMPDIR/shared.db" "$BATS_TEST_TMPDIR/b.jsonl" >/dev/null &
	local pid=$!
	run -0 flimflam history add --db "$BATS_TEST_TMPDIR/shared.db" "$BATS_TEST_TMPDIR/a.jsonl"
	wait "$pid"
	[ "$(runs_in "$BATS_TEST_TMPDIR/shared.db")" = 300 ]
	# Two machines: two series of 150 points, never one of 300.
	run -0 flimflam history --db "$BATS_TEST_TMPDIR/shared.db" --metric bits_per_s --json
	[ "$(jq -s -r '[.[].event] | join(" ")' <<<"$output")" = "start series series end" ]
	output=$(jq -c 'select(.event == "series")' <<<"$output")
	[ "$(jq -s '[.[] | .points | length] | join(" ")' <<<"$output")" = '"150 150"' ]
	[ "$(jq -s -r '[.[].machine] | join(";")' <<<"$output")" = "host-a (AMD EPYC, 2 CPUs, kernel 6.1.0);host-b (AMD EPYC, 2 CPUs, kernel 6.1.0)" ]
	# Several writers and readers of one database, at once.
	for i in 1 2 3 4; do
		for j in $(seq 1 40); do record "$((i * 100 + j))" 999 "host-$i"; done >"$BATS_TEST_TMPDIR/w$i.jsonl"
		flimflam history add --db "$BATS_TEST_TMPDIR/shared.db" "$BATS_TEST_TMPDIR/w$i.jsonl" >/dev/null &
	done
	flimflam history --db "$BATS_TEST_TMPDIR/shared.db" --metric bits_per_s >/dev/null
	wait
	[ "$(runs_in "$BATS_TEST_TMPDIR/shared.db")" = 460 ]
}

@test "history: a step of -10% at commit c31 of 60 is found at c30..c31, its size within its interval" {
	history_of x 60 7 31 -10
	run -0 --separate-stderr flimflam history --metric bits_per_s --json
	[ "${#lines[@]}" -eq 3 ]
	output=${lines[1]}
	[ "$(jq -r .event <<<"$output")" = series ]
	[ "$(jq '.change_points | length' <<<"$output")" = 1 ]
	local after lo hi
	after=$(jq -r '.change_points[0].commit_after' <<<"$output")
	[[ "$after" =~ ^c(30|31|32)$ ]] || { echo "found at $after"; false; }
	lo=$(jq '.change_points[0].lo_pct' <<<"$output")
	hi=$(jq '.change_points[0].hi_pct' <<<"$output")
	awk -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo <= -10 && -10 <= hi) }' || { echo "[$lo, $hi]"; false; }
	[ "$(jq -r '.change_points[0].verdict' <<<"$output")" = worse ]
	# Latency went up by as much: worse too, the other way.
	run -0 --separate-stderr flimflam history --metric latency_avg_us --json
	[ "$(jq -r '.change_points[0].verdict' <<<"${lines[1]}")" = worse ]
	[ "$(jq '.change_points[0].step_pct > 0' <<<"${lines[1]}")" = true ]
	# The text names the commits and the step.
	run -0 --separate-stderr flimflam history --metric bits_per_s
	assert_line --regexp '^    change at point (30|31|32), c(29|30|31)\.\.c(30|31|32) \(2026-01-01T00:[0-9:]+Z\): 1\.00 Gbit/s -> 9[0-9.]+ Mbit/s, -[0-9.]+% \[-[0-9.]+%, -[0-9.]+%\], p 0\.00[0-9]: worse$'
}

@test "history --check: the newest point's regression against the last stable segment is exit 1, else 0" {
	local i
	for i in $(seq 1 20); do record "$i" $((1000000000 + (i % 5) * 3000000)); done >"$BATS_TEST_TMPDIR/steady.jsonl"
	flimflam history add --commit base "$BATS_TEST_TMPDIR/steady.jsonl"
	run -0 flimflam history --check
	assert_line --partial "newest 1.0"
	# Throughput 20% down at the newest point: a regression.
	record 21 800000000 >"$BATS_TEST_TMPDIR/new.jsonl"
	flimflam history add --commit bad "$BATS_TEST_TMPDIR/new.jsonl"
	run -1 --separate-stderr flimflam history --check --metric bits_per_s
	assert_line --regexp '^    newest 800 Mbit/s: -20\.[0-9]% from the last stable segment \(points 1-20, median 1\.01 Gbit/s\): regression$'
	[[ "$stderr" =~ ^"flimflam history: regression: builtin nginx tcp, 2 hops, 2 jobs, cpu limit 1, 5 s on vm (AMD EPYC, 2 CPUs, kernel 6.1.0): bits_per_s -20."[0-9]"% from its last stable segment"$ ]]
	# The latency of the same run is up 25%: also worse.
	run -1 --separate-stderr flimflam history --check --metric latency_avg_us
	# A threshold above the change: no regression.
	run -0 flimflam history --check --threshold 30
	# An improvement is no regression.
	record 22 1300000000 >"$BATS_TEST_TMPDIR/up.jsonl"
	flimflam history add "$BATS_TEST_TMPDIR/up.jsonl"
	run -0 flimflam history --check --metric bits_per_s
	assert_line --regexp ': improvement$'
}

@test "history: a newest point beyond the threshold but inside the segment's noise is 'within noise', never 'no change'; no CPU per GB for request/response" {
	local i
	# Points swinging +-8% (noise well over the 2% threshold), then one +5%.
	for i in $(seq 1 12); do record "$i" $((1000000000 + (i % 2 ? 80000000 : -80000000))); done >"$BATS_TEST_TMPDIR/wide.jsonl"
	record 13 1050000000 >>"$BATS_TEST_TMPDIR/wide.jsonl"
	flimflam history add --commit c "$BATS_TEST_TMPDIR/wide.jsonl"
	run -0 flimflam history --metric bits_per_s
	assert_line --regexp '^    newest 1\.05 Gbit/s: \+5\.0% from the last stable segment .*: within noise$'
	# Within the threshold it is no change.
	run -0 flimflam history --check --metric bits_per_s --threshold 6
	assert_line --regexp '^    newest 1\.05 Gbit/s: \+5\.0% .*: no change$'
	# Relay CPU per GB is builtin's, not a request/response workload's (as in bench's table and the report).
	run -0 flimflam history --metric all
	assert_line --partial 'relay_cpu_s_per_gb'
	for i in $(seq 1 4); do record "$i" 1000000 vm builtin-rr; done >"$BATS_TEST_TMPDIR/rr.jsonl"
	flimflam history add --db "$BATS_TEST_TMPDIR/rr.db" "$BATS_TEST_TMPDIR/rr.jsonl"
	run -0 flimflam history --db "$BATS_TEST_TMPDIR/rr.db" --metric all
	assert_line --partial 'relay_cpu_fraction'
	refute_line --partial 'relay_cpu_s_per_gb'
}

@test "history export --format csv: what Otava reads, one file per case and machine" {
	history_of x 5 3 0 0
	run -0 --separate-stderr flimflam history export --format csv
	[ "${lines[0]}" = "time,commit,label,build_version,build_sha256,proton_version,bits_per_s,latency_avg_us,relay_cpu_s_per_gb,relay_cpu_fraction,r1_cpu_fraction,r1_max_rss_bytes,r2_cpu_fraction,r2_max_rss_bytes" ]
	[ "${#lines[@]}" -eq 6 ]
	[[ "${lines[1]}" =~ ^2026-01-01\ 00:01:00\ \+0000,c1,,nginx/1\.22\.1,ab12,,[0-9]+,[0-9.]+,[0-9.]+,0\.9,0\.5,1000000,0\.4,1000000$ ]]
	# The same through --metric, and to a file.
	run -0 flimflam history export --format csv --metric bits_per_s -o "$BATS_TEST_TMPDIR/one.csv"
	[ "$(head -1 "$BATS_TEST_TMPDIR/one.csv")" = "time,commit,label,build_version,build_sha256,proton_version,bits_per_s" ]
	# Two machines: a directory, or a usage error.
	record 9 1000000000 other >"$BATS_TEST_TMPDIR/o.jsonl"
	flimflam history add "$BATS_TEST_TMPDIR/o.jsonl"
	run -2 --separate-stderr flimflam history export --format csv
	[[ "${stderr_lines[0]}" == "flimflam history export: 2 cases or machines match: choose one"* ]]
	mkdir "$BATS_TEST_TMPDIR/csv"
	run -0 flimflam history export --format csv -o "$BATS_TEST_TMPDIR/csv"
	[ "$(ls "$BATS_TEST_TMPDIR/csv" | wc -l)" -eq 2 ]
	[ "$(cat "$BATS_TEST_TMPDIR"/csv/*.csv | grep -c '^2026')" -eq 6 ]
	# Otava itself, where it is installed.
	if command -v otava >/dev/null; then
		flimflam history export --format csv --host vm -o "$BATS_TEST_TMPDIR/vm.csv"
		printf 'tests:\n  t:\n    type: csv\n    file: %s\n    time_column: time\n    attributes: [commit]\n    metrics: [bits_per_s]\n' \
			"$BATS_TEST_TMPDIR/vm.csv" >"$BATS_TEST_TMPDIR/otava.yaml"
		OTAVA_CONFIG="$BATS_TEST_TMPDIR/otava.yaml" run -0 otava analyze t
	fi
}

@test "history report: one page, a chart per case and metric, change points marked, commits in tooltips" {
	history_of x 40 11 21 -15
	run -0 flimflam history report -o "$BATS_TEST_TMPDIR/h.html"
	[ "${lines[0]}" = "Report: $BATS_TEST_TMPDIR/h.html" ]
	! grep -q 'src="http\|href="http' "$BATS_TEST_TMPDIR/h.html"
	data=$(sed -n 's/^<script type="application\/json" id="history-data">\(.*\)<\/script>$/\1/p' "$BATS_TEST_TMPDIR/h.html")
	[ "$(jq '.series | length' <<<"$data")" -ge 2 ]
	[ "$(jq -r '.series[] | select(.metric == "bits_per_s") | .change_points[0].commit_after' <<<"$data")" = c21 ]
	skip_unless_program chromium
	local prof
	prof=$(mktemp -d "$BATS_TEST_TMPDIR/chrome.XXXXXX")
	HOME="$prof" XDG_CONFIG_HOME="$prof" XDG_CACHE_HOME="$prof" timeout 120 chromium --headless --no-sandbox \
		--disable-gpu --no-first-run --user-data-dir="$prof" --virtual-time-budget=3000 \
		--dump-dom "file://$BATS_TEST_TMPDIR/h.html" >"$BATS_TEST_TMPDIR/dom.html" 2>/dev/null
	grep -q '<svg class="chart"[^>]*data-metric="bits_per_s"' "$BATS_TEST_TMPDIR/dom.html"
	grep -q 'class="cp worse" data-at="20"' "$BATS_TEST_TMPDIR/dom.html"
	grep -q '^commit c21, 2026-01-01T00:21:00Z' "$BATS_TEST_TMPDIR/dom.html"
	grep -q 'class="verdict no-change"' "$BATS_TEST_TMPDIR/dom.html"
}

@test "history: E-divisive unit tests (steps found within one point, sizes in their intervals, A/A false positives at most 5 of 100)" {
	unit_ok edivisive-test 20
}

@test "history: a real bench results file goes in and comes out as series" {
	skip_unless_program nginx
	cd "$BATS_TEST_TMPDIR"
	run -0 flimflam bench -w builtin -r none,nginx --warmup 0 --duration 1 --output real.jsonl
	run -0 flimflam history add --commit real1 --label nightly real.jsonl
	[ "$output" = "real.jsonl: 2 runs added" ]
	run -0 flimflam history --label nightly
	assert_line --regexp '^builtin nginx tcp, 2 hops, 2 jobs, cpu limit 1, 1 s, label nightly$'
	assert_line --regexp '^  bits_per_s \(higher is better\): 1 point, '
	assert_line --regexp '^  relay_cpu_s_per_gb \(lower is better\): 1 point'
	[ "$(sqlite3 "$DB" "SELECT count(DISTINCT build_sha256) FROM runs WHERE relay = 'nginx'")" = 1 ]
}
