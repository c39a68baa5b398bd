#!/usr/bin/env bats
# flimflam report: the page of results files, checked in headless Chromium
# (every chart holds the points of its files, read from the DOM by
# t/fixtures/report/check-page.py; the page as laid out at a width, by
# t/fixtures/report/layout-check.js), the page bench writes beside its
# results, and bad input.

bats_require_minimum_version 1.5.0
load helper

FIX="$TOP/t/fixtures"
CHECK="$TOP/t/fixtures/report/check-page.py"

skip_unless_chromium() {
	command -v chromium >/dev/null || skip "chromium is not installed (make deps)"
}

# chrome ARGS...: headless Chromium with a profile and a home of its own.
chrome() {
	local prof
	prof=$(mktemp -d "$BATS_TEST_TMPDIR/chrome.XXXXXX")
	HOME="$prof" XDG_CONFIG_HOME="$prof" XDG_CACHE_HOME="$prof" \
		timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$prof" --virtual-time-budget=3000 \
		--hide-scrollbars "$@" 2>"$prof.log"
}

# dom PAGE HASH OUT: the DOM of PAGE#HASH once its script has run.
dom() {
	chrome --window-size=1200,1000 --dump-dom "file://$1#$2" >"$3"
	grep -q 'data-drawn="yes"' "$3" || { echo "the page's script did not finish drawing $1"; false; }
}

# layout PAGE WIDTH: the page with t/fixtures/report/layout-check.js after its
# script, laid out in a window WIDTH px wide; prints what the check found (JSON).
layout() {
	local lc="$BATS_TEST_TMPDIR/lc-$2.html"
	python3 -c 'import sys; s = open(sys.argv[1]).read(); js = open(sys.argv[2]).read()
open(sys.argv[3], "w").write(s.replace("</body>", "<script>\n" + js + "</script>\n</body>"))' \
		"$1" "$TOP/t/fixtures/report/layout-check.js" "$lc"
	chrome --window-size="$2",1000 --dump-dom "file://$lc" >"$lc.dom"
	sed -n 's|.*<pre id="layout-check">\(.*\)</pre>.*|\1|p' "$lc.dom"
}

# laid_out PAGE WIDTH: no sideways scroll, no text cut, one scale for the changes.
laid_out() {
	layout "$1" "$2" >"$BATS_TEST_TMPDIR/layout.json"
	cat "$BATS_TEST_TMPDIR/layout.json"
	jq -e '.hscroll == null and .clipped == [] and .scale == [] and (.lims | length) <= 1' "$BATS_TEST_TMPDIR/layout.json"
}

# shot PAGE NAME: a screenshot for a reviewer, kept in t/artifacts and named on the TAP stream.
shot() {
	mkdir -p "$TOP/t/artifacts"
	chrome --window-size=1200,2600 --screenshot="$TOP/t/artifacts/$2" "file://$1"
	[ -s "$TOP/t/artifacts/$2" ]
	echo "# screenshot: $TOP/t/artifacts/$2" >&3
}

@test "report: two files: every run in its chart, medians and intervals, and compare's changes" {
	skip_unless_chromium
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr flimflam report "$FIX/ff-bench/base.jsonl" "$FIX/ff-bench/new.jsonl" -o two.html
	[ "${lines[0]}" = "Report: two.html" ]
	[ "${lines[1]}" = "Open it in a browser: file://$PWD/two.html" ]
	[ -z "$stderr" ]
	run -0 flimflam compare --json "$FIX/ff-bench/base.jsonl" "$FIX/ff-bench/new.jsonl"
	echo "$output" >compare.jsonl
	dom "$PWD/two.html" "" two.dom
	run -0 python3 "$CHECK" two.dom "$FIX/ff-bench/base.jsonl" "$FIX/ff-bench/new.jsonl" --compare compare.jsonl
	echo "$output"
	[ "${lines[0]}" = "strip charts: 12, holding 311 points of 104 runs" ]
	[ "${lines[2]}" = "change charts: 20 points, each compare's change, interval, p, q and verdict" ]
	[ "${lines[3]}" = "changes on one scale, beside the medians' change: 0 too spread to tell" ]
	[ "${lines[4]}" = "colours: each series of a chart its own; 17 base and new pairs apart (curves in colour and dash)" ]
	# At 800 and 1200 px: no sideways scroll, every verdict and case name whole, one scale.
	laid_out "$PWD/two.html" 800
	jq -e '.points == 40 and .tracks == 20' "$BATS_TEST_TMPDIR/layout.json"
	laid_out "$PWD/two.html" 1200
	# Axes say their units; the failed runs are listed with their reasons.
	grep -q '>Throughput (bit/s)</text>' two.dom
	grep -q '>Relay CPU per GB, R1 + R2 (CPU seconds per 10⁹ bytes)</text>' two.dom
	grep -q '<th>Change of the medians</th><th>Shift \[95% interval\]</th>' two.dom
	grep -q 'id="failures">' two.dom
	shot "$PWD/two.html" report-two-files.png
}

@test "report: builds, latency percentiles, intervals of a chosen run and steadiness (and older rows beside them)" {
	skip_unless_chromium
	cd "$BATS_TEST_TMPDIR"
	run -0 flimflam report "$FIX/report/builds.jsonl" -o builds.html
	dom "$PWD/builds.html" "" b.dom
	run -0 python3 "$CHECK" b.dom "$FIX/report/builds.jsonl"
	echo "$output"
	# builtin-rr's relay CPU per GB is neither charted nor compared: 5 strips, 6 changes.
	[ "${lines[0]}" = "strip charts: 5, holding 40 points of 17 runs" ]
	[ "${lines[1]}" = "latency charts: 10 curves, one per run with percentiles" ]
	[ "${lines[2]}" = "change charts: 6 points, each build against the first, at its Hodges-Lehmann change" ]
	[ "${lines[5]}" = "latency axes: 2 on a log scale, ticks with their units" ]
	[ "${lines[6]}" = "interval charts: 5 (bits_per_s, cpu, latency, ops_per_s, rss) of run 0, 72 points" ]
	! grep -q 'one binary' b.dom
	# The selector: run 1 (build "mine", not steady) by the location hash.
	dom "$PWD/builds.html" "run=1" b1.dom
	run -0 python3 "$CHECK" b1.dom "$FIX/report/builds.jsonl" --run 1
	[ "${lines[6]}" = "interval charts: 5 (bits_per_s, cpu, latency, ops_per_s, rss) of run 1, 72 points" ]
	grep -q 'Not steady: throughput varied 14.5% (coefficient of variation), trend +12.0% from the first half to the second (throughput rose through the window)' b1.dom
	grep -q '<option value="1">builtin-rr tcp, jobs 2, CPU limit 1, 4 s, request 1 B, response 1 B, mine, run 1 (not steady)</option>' b1.dom
	# The builds, the skipped case and the failed run are listed.
	grep -q '<td>3.3.0-mine</td>' b1.dom
	grep -q '<td>ff-topology: the nginx relays did not start</td>' b1.dom
	shot "$PWD/builds.html" report-builds.png
}

@test "report: medians beside the shift, too spread to tell; one scale at 800 px; log latency axes; no CPU per GB for request/response" {
	skip_unless_chromium
	cd "$BATS_TEST_TMPDIR"
	# builtin over nginx: the medians rise 1.02G -> 2.95G while the shift is -1.7% (the Hodges-Lehmann shift of the logarithms).
	run -0 flimflam report "$FIX/report/spread-base.jsonl" "$FIX/report/spread-new.jsonl" -o spread.html
	dom "$PWD/spread.html" "run=1" s.dom
	run -0 python3 "$CHECK" s.dom "$FIX/report/spread-base.jsonl" "$FIX/report/spread-new.jsonl" --run 1
	echo "$output"
	[ "${lines[0]}" = "strip charts: 5, holding 50 points of 20 runs" ]
	[ "${lines[2]}" = "change charts: 8 points, each series against the first file's, at its Hodges-Lehmann change" ]
	[ "${lines[3]}" = "changes on one scale, beside the medians' change: 2 too spread to tell" ]
	[ "${lines[4]}" = "colours: each series of a chart its own; 6 base and new pairs apart (curves in colour and dash)" ]
	# The intervals' p50 (84 us) and p99.9 (10 ms) on a log axis.
	[ "${lines[5]}" = "latency axes: 2 on a log scale, ticks with their units" ]
	grep -q '<td class="num" data-median-pct="189.2[0-9]*">+189.2%</td><td class="num">-1.7% \[-69.8%, +195.0%\]</td><td class="verdict" data-shown="too spread to tell">' s.dom
	# No chart, change or figure of CPU per GB for builtin-rr, in the page or bench's table.
	! grep -q 'data-metric="relay_cpu_s_per_gb" data-case="1"' s.dom
	! grep -Eq '"relay_cpu_s_per_gb":[0-9.e+]+[,}][^{]*"latency"' spread.html
	run -0 flimflam bench summarize "$FIX/report/spread-new.jsonl"
	echo "$output"
	grep -Eq '^builtin-rr +skrouterd +tcp +[0-9.]+% .* +- +0\.0[0-9]+ ' <<<"$output"
	grep -Eq '^builtin +nginx +tcp +70\.0% +1\.90 .* +-$' <<<"$output"
	laid_out "$PWD/spread.html" 800
	jq -e '.lims == ["500"] and .points == 16' "$BATS_TEST_TMPDIR/layout.json"
	shot "$PWD/spread.html" report-spread.png
}

@test "report: builds of one binary (one sha256 under two labels) are said above the changes and in the builds" {
	skip_unless_chromium
	cd "$BATS_TEST_TMPDIR"
	jq -c 'if .build then .build.sha256 = ("cd" * 32) else . end' "$FIX/report/builds.jsonl" >same.jsonl
	run -0 flimflam report same.jsonl -o same.html
	dom "$PWD/same.html" "" same.dom
	[ "$(grep -o '<p class="warn same-builds">Builds main and mine are one binary (sha256 cdcdcdcdcdcd…): their changes can only be noise.</p>' same.dom | wc -l)" -eq 2 ]
	grep -q '<div id="change-list"><p class="warn same-builds">' same.dom
}

@test "report: two builds of nginx, real runs: the relays' context switches, wakeups and syscalls per MB are changes drawn beside CPU per GB" {
	skip_unless_chromium
	skip_unless_program nginx
	mkdir "$BATS_TEST_TMPDIR/w" && cd "$BATS_TEST_TMPDIR/w"
	local n
	n=$(command -v nginx || echo /usr/sbin/nginx)
	run --separate-stderr ff-bench -w builtin -r nginx -p tcp --warmup 0 --duration 1 \
		--build "a=$n" --build "b=$n" --repeat 3 --output b.jsonl
	[ "$status" -eq 0 ] || { [ "$status" -eq 1 ] && grep -qE -- "$BUSY_ERE" <<<"$stderr"; } ||
		{ echo "status $status: $stderr"; false; }
	jq -s -e '[.[] | select(.status == "ok")] | length >= 4' b.jsonl >/dev/null ||
		skip "the machine refused too many windows for a comparison"
	dom "$PWD/b.html" "" b.dom
	# Each change the page draws is the one the checker computes from the rows.
	run -0 python3 "$CHECK" b.dom b.jsonl
	echo "$output"
	grep -q 'data-chart="change" data-metric="relay_ctx_switches_per_mb"' b.dom
	grep -q 'data-chart="change" data-metric="relay_syscalls_per_mb"' b.dom
	if jq -s -e '[.[] | select(.status == "ok") | .resources.relays[].wakeups] | all(type == "number")' b.jsonl >/dev/null; then
		grep -q 'data-chart="change" data-metric="relay_wakeups_per_mb"' b.dom
	fi
}

@test "report: bench writes RESULTS.html beside its results and says where; the page holds its runs" {
	skip_unless_chromium
	mkdir "$BATS_TEST_TMPDIR/w" && cd "$BATS_TEST_TMPDIR/w"
	run --separate-stderr ff-bench -w builtin,builtin-rr -r none --warmup 0 --duration 2 --repeat 2 --output b.jsonl
	[ "$status" -eq 0 ] || { [ "$status" -eq 1 ] && grep -qE -- "$BUSY_ERE" <<<"$stderr"; } ||
		{ echo "status $status: $stderr"; false; }
	[ "${lines[-3]}" = "Results: b.jsonl" ]
	[ "${lines[-2]}" = "Report: b.html" ]
	[ "${lines[-1]}" = "Open it in a browser: file://$PWD/b.html" ]
	[ "$(ls | tr '\n' ' ')" = "b.html b.jsonl " ]
	dom "$PWD/b.html" "" b.dom
	run -0 python3 "$CHECK" b.dom b.jsonl
	echo "$output"
	n=$(jq -s '[.[] | select(.status == "ok")] | length' b.jsonl)
	nrr=$(jq -s '[.[] | select(.status == "ok" and .config.workload == "builtin-rr")] | length' b.jsonl)
	# builtin: bits/s; builtin-rr: bits/s and ops/s (no relays, so no CPU).
	[ "${lines[0]}" = "strip charts: 3, holding $((n + nrr)) points of 4 runs" ]
	[ "${lines[1]}" = "latency charts: $nrr curves, one per run with percentiles" ]
	shot "$PWD/b.html" report-bench.png
	# An existing page is refused as the results file is, before anything runs.
	touch c.html
	run -1 --separate-stderr ff-bench -w builtin -r none --warmup 0 --duration 2 --output c.jsonl
	[ "$stderr" = "ff-bench: cannot write 'c.html': it exists (the report of the results goes there; --force replaces it)" ]
	[ ! -e c.jsonl ] && [ ! -s c.html ]
}

@test "report: the page needs no network, and text from the files cannot break out of its script" {
	cd "$BATS_TEST_TMPDIR"
	jq -c '.reason = "</script><script>document.title=\"owned\"</script><!--" | .status = "failed"' \
		"$FIX/report/builds.jsonl" | head -3 >evil.jsonl
	cat "$FIX/report/builds.jsonl" >>evil.jsonl
	run -0 flimflam report evil.jsonl -o evil.html
	# Nothing is fetched: no src, no link, no url(), no request.
	! grep -Eq '<(link|img|iframe)\b|\bsrc=|url\(|fetch\(|XMLHttpRequest|import\(' evil.html
	# Three: the data's, report.js's and curves.js's; none from the files.
	[ "$(grep -o '</script>' evil.html | wc -l)" -eq 3 ]
	skip_unless_chromium
	dom "$PWD/evil.html" "" evil.dom
	grep -q '<title>flimflam report: evil.jsonl</title>' evil.dom
	grep -q '<td>&lt;/script&gt;&lt;script&gt;document.title="owned"&lt;/script&gt;&lt;!--</td>' evil.dom
}

@test "report: -o: default report.html, else a new report-2.html; -o FILE replaced whole; - is standard output" {
	mkdir "$BATS_TEST_TMPDIR/w" && cd "$BATS_TEST_TMPDIR/w"	# bats keeps its stderr files in the test's directory
	run -0 flimflam report "$FIX/report/builds.jsonl"
	[ "${lines[0]}" = "Report: report.html" ]
	# Taken: the default is a new name, claimed at once (two reports at once get two pages).
	flimflam report "$FIX/report/builds.jsonl" >out1 3>&- &
	flimflam report "$FIX/report/builds.jsonl" >out2 3>&- &
	wait
	[ "$(head -q -n 1 out1 out2 | sort)" = "$(printf 'Report: report-2.html\nReport: report-3.html')" ]
	grep -q '</html>' report-2.html && grep -q '</html>' report-3.html
	rm out1 out2 report-2.html report-3.html
	echo "an old page" >report.html
	chmod 640 report.html
	run -0 flimflam report -o report.html "$FIX/report/builds.jsonl"
	[ "${lines[0]}" = "Report: report.html" ]
	grep -q '</html>' report.html
	[ "$(stat -c %a report.html)" = 640 ]
	run -0 --separate-stderr flimflam report -o - "$FIX/report/builds.jsonl"
	[ "${lines[0]}" = "<!DOCTYPE html>" ] && [ "${lines[-1]}" = "</html>" ]
	[ -z "$stderr" ]
	[ "$(ls -A)" = "report.html" ]
	# Standard input as a file.
	run -0 flimflam report -o in.html - <"$FIX/report/builds.jsonl"
	grep -q '"label":"standard input"' in.html
}

@test "report: bad input is one line, exit 2 or 1, and no page is written or left half-written" {
	mkdir "$BATS_TEST_TMPDIR/w" && cd "$BATS_TEST_TMPDIR/w"
	echo "the old page" >keep.html
	run -2 --separate-stderr flimflam report
	[ "${stderr_lines[0]}" = "flimflam report: expected one or more results files" ]
	[ "${stderr_lines[1]}" = "usage: flimflam report [-h] [-o FILE] FILE..." ]
	run -2 --separate-stderr flimflam report - - -o keep.html
	[ "${stderr_lines[0]}" = "flimflam report: standard input (-) is given twice" ]
	cp "$FIX/report/builds.jsonl" r.jsonl
	ln r.jsonl hard.jsonl
	run -2 --separate-stderr flimflam report r.jsonl hard.jsonl -o keep.html
	[ "${stderr_lines[0]}" = "flimflam report: 'r.jsonl' and 'hard.jsonl' are the same file: give it once" ]
	run -2 --separate-stderr flimflam report r.jsonl -o hard.jsonl
	[ "${stderr_lines[0]}" = "flimflam report: the page would replace the results file 'r.jsonl': give another -o" ]
	cmp r.jsonl "$FIX/report/builds.jsonl"
	run -2 --separate-stderr flimflam report -o "" r.jsonl
	[ "${stderr_lines[0]}" = "flimflam report: -o: expected a file name" ]
	run -1 --separate-stderr flimflam report missing.jsonl -o keep.html
	[ "$stderr" = "flimflam report: cannot read 'missing.jsonl': No such file or directory" ]
	head -c 300 r.jsonl >cut.jsonl
	run -1 --separate-stderr flimflam report r.jsonl cut.jsonl -o keep.html
	[[ "$stderr" == "flimflam report: cut.jsonl:1: the last line is cut short ("*")" ]]
	printf 'x\0y\n' >bin.jsonl
	run -1 --separate-stderr flimflam report bin.jsonl -o keep.html
	[ "$stderr" = "flimflam report: bin.jsonl:1: binary data (a NUL byte), not a JSON line" ]
	: >empty.jsonl
	run -1 --separate-stderr flimflam report empty.jsonl -o keep.html
	[ "$stderr" = "flimflam report: empty.jsonl: the file is empty (expected bench results, one JSON object per line)" ]
	[ "$(cat keep.html)" = "the old page" ]
	mkdir dir.html
	run -1 --separate-stderr flimflam report r.jsonl -o dir.html
	[ "$stderr" = "flimflam report: cannot write 'dir.html': it is a directory" ]
	run -1 --separate-stderr flimflam report r.jsonl -o /proc/report.html
	[[ "$stderr" == "flimflam report: cannot write '/proc/report.html': "* ]]
	run -1 --separate-stderr flimflam report r.jsonl -o nodir/x.html
	[[ "$stderr" == "flimflam report: cannot write 'nodir/x.html': "* ]]
	# Nothing was written but what was there.
	[ "$(ls -A | sort | tr '\n' ' ')" = "bin.jsonl cut.jsonl dir.html empty.jsonl hard.jsonl keep.html r.jsonl " ]
	[ -z "$(ls -A dir.html)" ]
}

# curves_dom FILE: the report of FILE, its DOM once drawn, in FILE.dom.
curves_dom() {
	flimflam report -o "$1.html" "$1" >/dev/null
	dom "$BATS_TEST_TMPDIR/$1.html" "" "$1.dom"
}

@test "report: a --jobs sweep is drawn as curves, one line per relay, the medians of the runs, log axes where they span decades" {
	skip_unless_chromium
	skip_unless_program nginx
	cd "$BATS_TEST_TMPDIR"
	run_steady flimflam bench -w builtin-rr -r none,nginx --jobs 1,10,100 --warmup 0 --duration 1 --output s.jsonl
	curves_dom s.jsonl
	run -0 python3 "$TOP/t/fixtures/report/check-curves.py" s.jsonl.dom s.jsonl jobs
	echo "$output"
	# Throughput, operations, p50, p99, relay CPU and relay RSS: six curves; jobs 1 to 100 is a log axis.
	[ "$(grep -c 'against jobs: ' <<<"$output")" -eq 6 ]
	assert_line --regexp '^ops_per_s against jobs: 6 points, x log'
	assert_line --regexp '^relay_cpu_fraction against jobs: 3 points, x log'
	assert_line --regexp '^relay_rss_end_bytes against jobs: 3 points, x log'
}

@test "report: a --slo search is a rate curve with the knee marked where the highest rate met the target" {
	skip_unless_chromium
	cd "$BATS_TEST_TMPDIR"
	run_steady flimflam bench -w builtin-rr -r none --jobs 2 --slo p99=20 --rate 2000 --warmup 0 --duration 1 --output k.jsonl
	# Every run says the target and whether it met it.
	run -0 jq -s 'length >= 2 and all(.slo.percentile == "p99" and .slo.ms == 20 and (.slo.met | type) == "boolean")' k.jsonl
	assert_output true
	curves_dom k.jsonl
	run -0 python3 "$TOP/t/fixtures/report/check-curves.py" k.jsonl.dom k.jsonl rate_per_s
	echo "$output"
	if jq -se 'any(.slo.met)' k.jsonl >/dev/null; then
		assert_line --regexp '^latency_p99_us against rate_per_s: [0-9]+ points, x (log|linear), y (log|linear), 1 knees$'
	fi
}

@test "report: a run's intervals draw each relay's RSS and open files with the fitted growth, as the results say" {
	skip_unless_chromium
	skip_unless_program nginx
	cd "$BATS_TEST_TMPDIR"
	run_steady flimflam bench -w builtin -r nginx --warmup 0 --duration 4 --output g.jsonl
	curves_dom g.jsonl
	# A fit line per relay in the RSS and the open-files charts, with the slope, interval and verdict of the file.
	for metric in rss fds; do
		sed -n "s|.*\(<svg[^>]*data-metric=\"$metric\".*\)|\1|p" g.jsonl.dom | sed 's|</svg>.*||' >"$metric.svg"
		grep -q 'data-chart="interval"' "$metric.svg"
		grep -o '<line[^>]*class="fit"[^>]*>' "$metric.svg" | sed -n 's/.*data-line="\([^"]*\)".*data-per-h="\([^"]*\)".*data-verdict="\([^"]*\)".*/\1 \2 \3/p' | sort >"$metric.got"
		jq -r --arg m "$metric" '.resources.relays[] | "\(.role) \(.growth[$m].per_h) \(.growth[$m].verdict)"' g.jsonl | sort >"$metric.want"
		cat "$metric.got"
		diff "$metric.want" "$metric.got"
		[ "$(wc -l <"$metric.got")" -eq 2 ]
	done
}
