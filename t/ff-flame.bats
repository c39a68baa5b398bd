#!/usr/bin/env bats
# ff-flame: folding (perf script text, folded stacks, perf.data), relay
# towers from --meta, differential graphs, the page in headless Chromium,
# and bad input.

bats_require_minimum_version 1.5.0
load helper

FIX="$TOP/t/fixtures/ff-flame"

# chrome ARGS...: headless Chromium with a profile of its own, as root.
chrome() {
	local prof
	prof=$(mktemp -d "$BATS_TEST_TMPDIR/chrome.XXXXXX")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$prof" --virtual-time-budget=3000 \
		--window-size=1400,1000 "$@" 2>"$prof.log"
}

# enc TEXT: TEXT percent-encoded for a location hash.
enc() {
	jq -rn --arg s "$1" '$s | @uri'
}

# dom PAGE HASH OUT: the DOM of PAGE#HASH once its script has run.
dom() {
	chrome --dump-dom "file://$1#$2" >"$3"
}

skip_unless_chromium() {
	command -v chromium >/dev/null || skip "chromium is not installed (make deps)"
}

# An attribute of the first element with this id in a dumped DOM.
attr_of() {
	grep -o "<[a-z]* id=\"$2\"[^>]*>" "$1" | grep -o " $3=\"[^\"]*\"" |
		sed 's/^[^"]*"//; s/"$//'
}

# Labels of drawn frames whose class list has CLASS, one per line.
frames_with_class() {
	grep -o "<div class=\"f[^\"]*\b$2\b[^\"]*\"[^>]*>[^<]*" "$1" | sed 's/.*>//' | sort
}

# share FOLDED REGEX: the share of samples in stacks that have a frame
# matching REGEX (what the page's search reports).
share() {
	awk -v re="$2" '{
		c = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += c
		n = split(s, f, ";")
		for (i = 2; i <= n; i++) if (f[i] ~ re) { m += c; break }
	} END { printf "%.6f\n", t ? m / t : 0 }' "$1"
}

# RECORD_FLOOR: the samples each relay must have in a recording for the
# tests that read it (3989 Hz over a 2 s window: about 2,500 each on a quiet
# machine, 600 at load 18 on two CPUs). A recording of fewer is too thin to
# judge (a side of the differential graph without R1, shares of a few
# stacks); it is the machine, not ff-flame: it is made once more.
RECORD_FLOOR=200

# record_once DIR: flimflam record of R1 and R2 (nginx, under h2load --h1)
# into DIR/perf.data, its events in DIR/events.json; says why not in
# $NGX/fail. A window refused on a busy machine (run_steady's rule) or a
# recording thinner than RECORD_FLOOR is made again, up to three in all.
record_once() {
	local try thin
	for try in 1 2 3; do
		if ! (cd "$1" && flimflam record -r nginx -w h2load-h1 -p http1 --jobs 4 --freq 3989 \
			--warmup 0 --duration 2 --json >"$1/events.json" 2>"$1/record.log"); then
			grep -Eq "$BUSY_ERE" "$1/record.log" && [ "$try" -lt 3 ] && continue
			echo "flimflam record failed: $(tail -n 1 "$1/record.log")" >"$NGX/fail"
			cp "$1/record.log" "$NGX/record.log" 2>/dev/null
			return 1
		fi
		# Each relay's samples, by its own tower.
		thin=$(ff-flame --folded --events "$1/events.json" "$1/perf.data" 2>/dev/null |
			awk -v min="$RECORD_FLOOR" '{ split($0, f, ";"); n[f[1]] += $NF }
				END { s = ""; if (n["R1 nginx"] < min || n["R2 nginx"] < min)
					s = sprintf("R1 %d, R2 %d samples", n["R1 nginx"], n["R2 nginx"]); print s }')
		[ -z "$thin" ] && return 0
		echo "# a thin recording ($thin, fewer than $RECORD_FLOOR): once more" >&3
	done
	echo "flimflam record: three recordings too thin to judge, the last $thin (fewer than $RECORD_FLOOR)" >"$NGX/fail"
	cp "$1/record.log" "$NGX/record.log" 2>/dev/null
	return 1
}

# Records R1 and R2 (nginx, under h2load --h1) with flimflam record into
# $NGX/nginx.data, with a meta that names them (from the run's topology
# and capture events) in $NGX/meta.json; says why not in $NGX/skip when
# this machine cannot, and in $NGX/fail when flimflam could and did not.
record_nginx() {
	for p in perf nginx h2load; do
		command -v "$p" >/dev/null || { echo "$p is not installed" >"$NGX/skip"; return; }
	done
	if ! perf record -q -e cpu-clock -o "$NGX/probe.data" -- true 2>"$NGX/probe.log"; then
		echo "perf cannot record here: $(head -n 1 "$NGX/probe.log")" >"$NGX/skip"
		return
	fi
	record_once "$NGX" || return
	mv "$NGX/perf.data" "$NGX/nginx.data"
	# A second run of the same nginx, for --diff: new processes, new pids.
	mkdir -p "$NGX/again"
	record_once "$NGX/again" || return
	jq -s '(map(select(.event == "topology"))[0].relays) as $t |
		{title: "nginx under h2load", workload: "h2load-h1", relay: "nginx",
		 protocol: "http1",
		 relays: [map(select(.event == "capture"))[0].relays[] | . as $c |
			$c + {program: ($t[] | select(.role == $c.role) | .path)}]}' \
		"$NGX/events.json" >"$NGX/meta.json"
	# A recording of a process that sleeps: no samples.
	sleep 5 &
	perf record -q -e cpu-clock -F 997 -g -p $! -o "$NGX/empty.data" \
		-- sleep 0.3 2>>"$NGX/record.log" || rm -f "$NGX/empty.data"
	kill $! 2>/dev/null || true
	wait $! 2>/dev/null || true
}

setup_file() {
	export NGX="$BATS_FILE_TMPDIR/nginx"
	mkdir -p "$NGX"
	record_nginx
}

need_recording() {
	[ -f "$NGX/skip" ] && skip "no nginx recording: $(cat "$NGX/skip")"
	if [ -f "$NGX/fail" ]; then
		cat "$NGX/fail" "$NGX/record.log"
		return 1
	fi
}

# Folding

@test "ff-flame: folds perf script text: kernel and unknown frames, processes, a deep stack" {
	run -0 --separate-stderr ff-flame --folded "$FIX/script.txt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out"
	golden ff-flame-script.folded "$BATS_TEST_TMPDIR/out"
	[ -z "$stderr" ]
}

@test "ff-flame: --script reads perf script text from standard input" {
	run -0 --separate-stderr ff-flame --folded --script - <"$FIX/script.txt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out"
	golden ff-flame-script.folded "$BATS_TEST_TMPDIR/out"
}

@test "ff-flame: folded stacks read back give the same folded stacks" {
	run -0 ff-flame --folded "$TOP/t/golden/ff-flame-script.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out"
	golden ff-flame-script.folded "$BATS_TEST_TMPDIR/out"
	ff-flame --folded - <"$TOP/t/golden/ff-flame-script.folded" >"$BATS_TEST_TMPDIR/stdin"
	cmp "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/stdin"
}

@test "ff-flame: --meta puts each relay's processes in one tower, by pid" {
	run -0 ff-flame --folded --meta @"$FIX/meta.json" "$FIX/script.txt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out"
	golden ff-flame-meta.folded "$BATS_TEST_TMPDIR/out"
	run -0 ff-flame --folded --meta "$(cat "$FIX/meta.json")" "$FIX/script.txt"
	printf '%s\n' "$output" | cmp - "$BATS_TEST_TMPDIR/out"
}

@test "ff-flame: --meta matches a process by its comm when its pid is not listed" {
	# pid 101 and the thread wrkr_0 of pid 200 (whose main thread is
	# skrouterd) are in no relay's list.
	run -0 ff-flame --folded --meta @"$FIX/meta-by-comm.json" "$FIX/script.txt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out"
	golden ff-flame-meta-by-comm.folded "$BATS_TEST_TMPDIR/out"
}

@test "ff-flame: --events takes the relays and the title from a run's topology and capture events" {
	# The events name the same relays as meta.json: the same towers.
	run -0 ff-flame --folded --events "$FIX/events.jsonl" "$FIX/script.txt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out"
	golden ff-flame-meta.folded "$BATS_TEST_TMPDIR/out"
	ff-flame -o "$BATS_TEST_TMPDIR/p.html" --events "$FIX/events.jsonl" "$FIX/script.txt"
	page_data "$BATS_TEST_TMPDIR/p.html" >"$BATS_TEST_TMPDIR/data"
	run -0 jq -c '.meta | del(.date, .source)' "$BATS_TEST_TMPDIR/data"
	assert_output '{"title":"flimflam: h2load-h1 over mixed (http1)","workload":"h2load-h1","relay":"mixed","protocol":"http1","relays":[{"role":"r1","pid":100,"pids":[100,101],"program":"nginx"},{"role":"r2","pid":200,"pids":null,"program":"skrouterd"}]}'
	# --meta given too: its members win.
	ff-flame -o "$BATS_TEST_TMPDIR/q.html" --events "$FIX/events.jsonl" --meta '{"title":"mine"}' "$FIX/script.txt"
	page_data "$BATS_TEST_TMPDIR/q.html" >"$BATS_TEST_TMPDIR/data"
	run -0 jq -r '.meta.title, .meta.relay, (.names | map(select(startswith("R"))) | join(","))' "$BATS_TEST_TMPDIR/data"
	assert_output $'mine\nmixed\nR1 nginx,R2 skrouterd'
	# The pids are each tower's detail (its tooltip), not its name.
	run -0 jq -r '. as $d | .detail | to_entries[] | "\($d.names[.key | tonumber])|\(.value)"' "$BATS_TEST_TMPDIR/data"
	assert_output - <<-EOF
	R1 nginx|pids 100, 101
	R2 skrouterd|pid 200
	swapper|pid 0
	my app|pid 300
	EOF
}

@test "ff-flame: --events refuses what is not a run's events, in one line, and writes no page" {
	run -1 --separate-stderr ff-flame -o "$BATS_TEST_TMPDIR/p.html" --events "$BATS_TEST_TMPDIR/nope" "$FIX/script.txt"
	[ "$stderr" = "ff-flame: --events: cannot read '$BATS_TEST_TMPDIR/nope': No such file or directory" ]
	run -1 --separate-stderr ff-flame -o "$BATS_TEST_TMPDIR/p.html" --events "$FIX/base.folded" "$FIX/script.txt"
	[ "$stderr" = "ff-flame: $FIX/base.folded:1: not an event (one JSON object a line, as flimflam --json prints them)" ]
	run -1 --separate-stderr timeout 20 ff-flame -o "$BATS_TEST_TMPDIR/p.html" --events /dev/zero "$FIX/script.txt"
	[ "$stderr" = "ff-flame: /dev/zero:1: not an event (one JSON object a line, as flimflam --json prints them)" ]
	grep '"event":"start"' "$FIX/events.jsonl" >"$BATS_TEST_TMPDIR/start.jsonl"
	run -1 --separate-stderr ff-flame -o "$BATS_TEST_TMPDIR/p.html" --events "$BATS_TEST_TMPDIR/start.jsonl" "$FIX/script.txt"
	[ "$stderr" = "ff-flame: --events: '$BATS_TEST_TMPDIR/start.jsonl' has no topology or capture event (the events of a run, as \`flimflam record --json\` prints them)" ]
	[ -z "$output" ]
	[ ! -e "$BATS_TEST_TMPDIR/p.html" ]
	[ -z "$(ls "$BATS_TEST_TMPDIR" | grep 'p.html')" ]
}

# record_dd FILE: perf record of one dd (its own pid) into FILE.
record_dd() {
	perf record -q -e cpu-clock -F 997 -g -o "$1" -- \
		dd if=/dev/zero of=/dev/null bs=64k count=200000 2>"$1.log" || {
		cat "$1.log"
		return 1
	}
}

@test "ff-flame: --parts folds two perf.data files into one page, a tower per relay holding its own file's samples" {
	skip_unless_program perf
	perf record -q -e cpu-clock -o "$BATS_TEST_TMPDIR/probe.data" -- true 2>"$BATS_TEST_TMPDIR/probe.log" ||
		skip "perf cannot record here: $(head -n 1 "$BATS_TEST_TMPDIR/probe.log")"
	cd "$BATS_TEST_TMPDIR"
	# Two relay hosts' recordings, each of one process of the same program.
	record_dd a.data
	record_dd b.data
	pa=$(perf script -i a.data -F pid 2>/dev/null | awk '{ print $1 }' | sort -u)
	pb=$(perf script -i b.data -F pid 2>/dev/null | awk '{ print $1 }' | sort -u)
	na=$(perf script -i a.data -F pid 2>/dev/null | grep -c .)
	nb=$(perf script -i b.data -F pid 2>/dev/null | grep -c .)
	[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] && [ "$pa" != "$pb" ]
	# The events of a run with R1 and R2 on two hosts: one topology, a capture on each host.
	{
		echo '{"event":"topology","relay":"dd","protocol":"tcp","relays":[{"role":"r1","pid":1,"program":"dd"},{"role":"r2","pid":2,"program":"dd"}]}'
		jq -cn --argjson p "$pb" '{event: "capture", tool: "perf record", files: ["b.data"], relays: [{role: "r2", pid: $p, pids: [$p]}]}'
		jq -cn --argjson p "$pa" '{event: "capture", tool: "perf record", files: ["a.data"], relays: [{role: "r1", pid: $p, pids: [$p]}]}'
	} >ev.jsonl
	run -0 --separate-stderr ff-flame -o p.html --events ev.jsonl --parts r1=a.data r2=b.data
	run -0 towers p.html
	assert_output "R1 dd"$'\t'"$na"$'\n'"R2 dd"$'\t'"$nb"
	page_data p.html | jq -e --argjson t $((na + nb)) '.total == $t and .meta.source == "a.data, b.data"'
	# By program name alone: each file's dd is the one relay running dd that the file holds.
	meta='{"relays":[{"role":"r1","program":"dd"},{"role":"r2","program":"dd"}]}'
	run -0 ff-flame -o q.html --meta "$meta" --parts r2=b.data r1=a.data
	run -0 towers q.html
	assert_output "R1 dd"$'\t'"$na"$'\n'"R2 dd"$'\t'"$nb"
	# One file alone: two relays run dd, so its dd is neither's.
	ff-flame -o one.html --meta "$meta" a.data
	run -0 towers one.html
	assert_output "dd"$'\t'"$na"
}

@test "ff-flame: --parts: a pid is each input's own; bad lists are usage errors" {
	cp "$FIX/script.txt" "$BATS_TEST_TMPDIR/h1.txt"
	cp "$FIX/script.txt" "$BATS_TEST_TMPDIR/h2.txt"
	cd "$BATS_TEST_TMPDIR"
	# Two hosts whose relays both have pid 100: each tower has its own host's samples.
	meta='{"relays":[{"role":"r1","pid":100,"program":"nginx"},{"role":"r2","pid":100,"program":"nginx"}]}'
	run -0 ff-flame --folded --meta "$meta" --parts r1=h1.txt r2=h2.txt
	printf '%s\n' "$output" >f
	run -0 sh -c "cut -d';' -f1 f | sort | uniq -c"
	assert_output - <<-EOF
	      2 R1 nginx
	      2 R2 nginx
	      1 my app (h1.txt)
	      1 my app (h2.txt)
	      4 skrouterd (h1.txt)
	      4 skrouterd (h2.txt)
	      1 swapper (h1.txt)
	      1 swapper (h2.txt)
	EOF
	# One part is one input, as without --parts.
	ff-flame --folded --meta @"$FIX/meta.json" --parts "$FIX/script.txt" | golden ff-flame-meta.folded -
	for bad in "--parts" "--parts --diff h1.txt h2.txt" "--diff --parts h1.txt h2.txt" "--parts r3=h1.txt" \
		"--parts r1=h1.txt r1=h2.txt" "--parts - -" "--parts r1="; do
		run -2 --separate-stderr ff-flame --meta "$meta" $bad
		echo "$bad: ${stderr_lines[0]}"
		[[ "${stderr_lines[0]}" =~ ^ff-flame:\ --(parts|diff) ]]
		[[ "${stderr_lines[1]}" == usage:* ]]
	done
	run -2 --separate-stderr ff-flame --meta "$meta" --parts r3=h1.txt
	[ "${stderr_lines[0]}" = "ff-flame: --parts: 'r3' is not a relay of the meta (--meta or --events)" ]
	run -2 --separate-stderr ff-flame --parts r1=h1.txt
	[ "${stderr_lines[0]}" = "ff-flame: --parts: 'r1': ROLES=FILE names relays of --meta or --events, and they name none" ]
	run -2 --separate-stderr ff-flame --meta "$meta" --parts r1=h1.txt r1=h2.txt
	[ "${stderr_lines[0]}" = "ff-flame: --parts: relay 'r1' is in two inputs" ]
	# A name with '=' whose left side is not a list of roles is a file.
	run -1 --separate-stderr ff-flame --parts ./r1=x
	[ "$stderr" = "ff-flame: cannot open './r1=x': No such file or directory" ]
}

@test "ff-flame: the page's data holds each frame's module and kind" {
	ff-flame -o "$BATS_TEST_TMPDIR/p.html" "$FIX/script.txt"
	page_data "$BATS_TEST_TMPDIR/p.html" >"$BATS_TEST_TMPDIR/d.json"
	run -0 jq -r '. as $d | [range(0; .names | length) |
		"\($d.names[.])|\($d.modules[$d.fmod[.]])|\($d.kinds[$d.fkind[.]])"] | .[]' \
		"$BATS_TEST_TMPDIR/d.json"
	assert_line 'ngx_http_handler|/usr/sbin/nginx|exe'
	assert_line 'do_syscall_64_[k]|[kernel.kallsyms]|kernel'
	assert_line 'nf_conntrack_in_[k]|[nf_conntrack]|kernel'
	assert_line 'pn_raw_connection_write_buffers|/usr/lib/x86_64-linux-gnu/libqpid-proton-core.so.10|proton'
	assert_line '__GI___epoll_wait|/usr/lib/x86_64-linux-gnu/libc.so.6|libc'
	assert_line '[libssl.so.3]|/usr/lib/x86_64-linux-gnu/libssl.so.3|lib'
	assert_line '[unknown]|[unknown]|unknown'
	assert_line 'weird:name|/usr/lib/libbar.so (deleted)|lib'
	run -0 jq '[.nodes[range(2; .nodes | length; 3)]] | .[0] == 10' "$BATS_TEST_TMPDIR/d.json"
	[ "$output" = true ]
}

# Differential graphs

@test "ff-flame: --changes ranks the functions whose share of the self samples grew and shrank" {
	run -0 --separate-stderr ff-flame --changes --diff "$FIX/base.folded" "$FIX/new.folded"
	jq -e '.event == "changes" and .base_samples == 200 and .new_samples == 400 and .too_few_samples and
		.grew == [{"function": "slow", "base_share": 0.25, "new_share": 0.5, "change_points": 25}] and
		.shrank == [{"function": "idle", "base_share": 0.5, "new_share": 0.25, "change_points": -25}]' <<<"$output"
	run -2 --separate-stderr ff-flame --changes "$FIX/new.folded"
	[[ "$stderr" == "ff-flame: --changes ranks the functions of --diff BASE NEW"* ]]
}

@test "ff-flame: --diff --folded prints base and new counts per stack" {
	run -0 ff-flame --folded --diff "$FIX/base.folded" "$FIX/new.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out"
	golden ff-flame-diff.folded "$BATS_TEST_TMPDIR/out"
}

@test "ff-flame: --diff embeds both counts per frame, sized by new" {
	ff-flame -o "$BATS_TEST_TMPDIR/d.html" --diff "$FIX/base.folded" "$FIX/new.folded"
	page_data "$BATS_TEST_TMPDIR/d.html" >"$BATS_TEST_TMPDIR/d.json"
	run -0 jq -r '. as $d | "total \(.total) base \(.base_total)",
		(range(0; .nodes | length; 3) as $k |
		 "\($d.names[$d.nodes[$k]]) \($d.nodes[$k + 2]) \($d.base[$k / 3])")' \
		"$BATS_TEST_TMPDIR/d.json"
	assert_output - <<-EOF
	total 400 base 200
	all 400 200
	app 400 200
	main 400 200
	compute 200 50
	slow 200 50
	idle 100 100
	parse 100 50
	EOF
}

@test "ff-flame: --diff says when either side has too few samples to rank, with both counts" {
	cd "$BATS_TEST_TMPDIR"
	# 200 and 400 samples: too few; ten times as many: enough.
	run -0 --separate-stderr ff-flame -o d.html --diff "$FIX/base.folded" "$FIX/new.folded"
	[ "$stderr" = "ff-flame: too few samples to rank the changes: BASE '$FIX/base.folded' has 200, NEW '$FIX/new.folded' 400 (1000 or more on each side are needed)" ]
	page_data d.html | jq -e '.too_few_samples == true and .min_samples == 1000 and .base_total == 200 and .total == 400'
	awk '{ $NF = 10 * $NF } 1' "$FIX/base.folded" >base10.folded
	awk '{ $NF = 10 * $NF } 1' "$FIX/new.folded" >new10.folded
	run -0 --separate-stderr ff-flame -o e.html --diff base10.folded new10.folded
	[ -z "$stderr" ]
	page_data e.html | jq -e '.too_few_samples == false'
	# One thin side is enough to say so; --folded is for other tools, and says nothing.
	run -0 --separate-stderr ff-flame -o f.html --diff "$FIX/base.folded" new10.folded
	[[ "$stderr" == *"BASE '$FIX/base.folded' has 200, NEW 'new10.folded' 4000 "* ]]
	run -0 --separate-stderr ff-flame --folded --diff "$FIX/base.folded" "$FIX/new.folded"
	[ -z "$stderr" ]
	page_data e.html | jq -e '.too_few_samples == false'
	skip_unless_chromium
	dom "$BATS_TEST_TMPDIR/d.html" "" dom
	grep -q '<p id="thin">Too few samples to rank the changes: the base has 200, the new 400; at least 1,000 on each side are needed' dom
	dom "$BATS_TEST_TMPDIR/e.html" "" dom2
	grep -q '<p id="thin" hidden="">' dom2
}

@test "ff-flame: --diff colours grown frames red and shrunk frames blue (Chromium)" {
	skip_unless_chromium
	ff-flame -o "$BATS_TEST_TMPDIR/d.html" --diff "$FIX/base.folded" "$FIX/new.folded"
	# One load (a Chromium start is seconds on a busy machine): the frames and their
	# colours, and the tooltip of slow, which the page shows beside them.
	dom "$BATS_TEST_TMPDIR/d.html" "tip=slow" "$BATS_TEST_TMPDIR/dom"
	# Shares: compute and slow 25% -> 50%, idle 50% -> 25%, parse 25% -> 25%.
	run -0 frames_with_class "$BATS_TEST_TMPDIR/dom" grew
	assert_output $'compute\nslow'
	run -0 frames_with_class "$BATS_TEST_TMPDIR/dom" shrank
	assert_output idle
	grep -q 'rgb(255,42,42)">slow<' "$BATS_TEST_TMPDIR/dom"
	grep -q 'rgb(42,42,255)">idle<' "$BATS_TEST_TMPDIR/dom"
	grep -q 'rgb(242,242,242)">parse<' "$BATS_TEST_TMPDIR/dom"
	# The tooltip shows both counts and the change.
	tip=$(grep -o '<div id="tip">.*</table></div>' "$BATS_TEST_TMPDIR/dom" | sed 's/<[^>]*>/|/g; s/||*/|/g')
	[[ "$tip" == *"|base|50 (25.00% of base)|new|200 (50.00% of new)|change|+25.00 points of share, +100.0% relative|" ]]
}

# The page

@test "ff-flame: the page is self-contained and a frame name cannot close its script" {
	printf '%s\n' 'evil;</script><script>alert(1)</script> 5' 'evil;<!--x 2' >"$BATS_TEST_TMPDIR/evil.folded"
	run -0 ff-flame -o "$BATS_TEST_TMPDIR/e.html" -t '<b>title</b>' "$BATS_TEST_TMPDIR/evil.folded"
	[ "$(grep -o '</script>' "$BATS_TEST_TMPDIR/e.html" | wc -l)" -eq 2 ]
	! grep -q '<script>alert' "$BATS_TEST_TMPDIR/e.html" || false
	! grep -Eq '(src|href)=|https?://' "$BATS_TEST_TMPDIR/e.html" || false
	page_data "$BATS_TEST_TMPDIR/e.html" | jq -e '.names | index("</script><script>alert(1)</script>")'
	page_data "$BATS_TEST_TMPDIR/e.html" | jq -e '.meta.title == "<b>title</b>"'
}

@test "ff-flame: the page renders, searches and zooms in Chromium" {
	skip_unless_chromium
	ff-flame -o "$BATS_TEST_TMPDIR/p.html" --meta @"$FIX/meta.json" "$FIX/script.txt"
	# One load for the search and the tooltip (the page takes both from its hash;
	# a Chromium start is seconds on a busy machine).
	dom "$BATS_TEST_TMPDIR/p.html" "search=$(enc ^ngx_)&tip=$(enc '^ngx_http_handler$')" "$BATS_TEST_TMPDIR/dom"
	grep -q '<h1 id="title">fixture</h1>' "$BATS_TEST_TMPDIR/dom"
	grep -q '<dd>h2load-h1</dd>' "$BATS_TEST_TMPDIR/dom"
	grep -q '>R1 nginx<' "$BATS_TEST_TMPDIR/dom"
	grep -q '>R2 skrouterd<' "$BATS_TEST_TMPDIR/dom"
	# ngx_ frames are in 4 of the 10 samples.
	[ "$(attr_of "$BATS_TEST_TMPDIR/dom" matched data-samples)" = 4 ]
	[ "$(attr_of "$BATS_TEST_TMPDIR/dom" matched data-share)" = 0.4 ]
	run -0 frames_with_class "$BATS_TEST_TMPDIR/dom" match
	assert_output $'ngx_epoll_process_events\nngx_http_handler\nngx_process_events_and_timers'
	# Zoomed into the deep stack, the leaf 203 levels up is drawn; in the same load,
	# a regex that is not one is searched for as a substring (the samples matched
	# are the whole graph's, zoomed or not).
	dom "$BATS_TEST_TMPDIR/p.html" "zoom=$(enc ^recurse)&icicle&search=$(enc "push_back(int")" "$BATS_TEST_TMPDIR/dom3"
	[ "$(attr_of "$BATS_TEST_TMPDIR/dom3" matched data-samples)" = 1 ]
	grep -q '>leaf<' "$BATS_TEST_TMPDIR/dom3"
	grep -q 'style="[^"]*top:3654px[^"]*">leaf<' "$BATS_TEST_TMPDIR/dom3"
	grep -q '<p id="zoomed">Zoomed into recurse' "$BATS_TEST_TMPDIR/dom3"
	# The tooltip (of the first load): function, module, kind, samples, share of all and of parent.
	tip=$(grep -o '<div id="tip">.*</table></div>' "$BATS_TEST_TMPDIR/dom" | sed 's/<[^>]*>/|/g; s/||*/|/g')
	[ "$tip" = "|ngx_http_handler|module|/usr/sbin/nginx|kind|the program's own binary|samples|2 (20.00% of all, 50.00% of parent)|self|0 (0.00% of all)|" ]
}

@test "ff-flame: stacks of no samples are a page that says there were none" {
	printf 'app;main 0\n' >"$BATS_TEST_TMPDIR/zero.folded"
	run -0 --separate-stderr ff-flame -o "$BATS_TEST_TMPDIR/e.html" "$BATS_TEST_TMPDIR/zero.folded"
	[ "$stderr" = "ff-flame: no samples in '$BATS_TEST_TMPDIR/zero.folded'" ]
	page_data "$BATS_TEST_TMPDIR/e.html" | jq -e '.total == 0'
	skip_unless_chromium
	dom "$BATS_TEST_TMPDIR/e.html" "" "$BATS_TEST_TMPDIR/dom"
	grep -q '<p id="empty">There were no samples' "$BATS_TEST_TMPDIR/dom"
}

@test "ff-flame: empty text, JSON lines and text that is no stacks are errors naming the file, and no page" {
	cd "$BATS_TEST_TMPDIR"
	# A bench's results: a JSON line with a number among words looks like a perf script header.
	printf '%s\n' '{"event":"error","program":"ff-workload","message":"h2load: no request succeeded (5667 total, 0 failed)"}' \
		'{"event":"end","status":0}' >results.jsonl
	run -1 --separate-stderr ff-flame -o x.html results.jsonl
	[ "$stderr" = "ff-flame: 'results.jsonl': JSON, not a perf.data file, perf script output or folded stacks" ]
	# The same line, not JSON: a header and no frame is not a sample.
	printf '%s\n' 'h2load: no request succeeded (5667 total, 0 failed)' 'nginx 12 of them' >words.txt
	run -1 --separate-stderr ff-flame -o x.html words.txt
	[ "$stderr" = "ff-flame: 'words.txt': not a perf.data file, perf script output or folded stacks" ]
	run -1 --separate-stderr ff-flame -o x.html --script - <words.txt
	[ "$stderr" = "ff-flame: 'standard input': not a perf.data file, perf script output or folded stacks" ]
	# Empty: nothing to draw, and no recording says so (a perf.data of no samples does: a page).
	for f in /dev/null empty.txt comments.txt; do
		: >empty.txt
		printf '# perf script header\n\n' >comments.txt
		run -1 --separate-stderr ff-flame -o x.html "$f"
		[ "$stderr" = "ff-flame: '$f' is empty: not a perf.data file, perf script output or folded stacks" ]
	done
	run -1 --separate-stderr ff-flame -o x.html - </dev/null
	[ "$stderr" = "ff-flame: 'standard input' is empty: not a perf.data file, perf script output or folded stacks" ]
	run -1 --separate-stderr ff-flame -o x.html --diff /dev/null "$FIX/new.folded"
	[ "$stderr" = "ff-flame: '/dev/null' is empty: not a perf.data file, perf script output or folded stacks" ]
	run -1 --separate-stderr ff-flame --folded results.jsonl
	[ -z "$output" ]
	[ ! -e x.html ]
	[ -z "$(ls | grep x.html)" ]
}

@test "ff-flame: 100,000 distinct stacks: narrow frames are merged, few elements drawn" {
	skip_unless_chromium
	awk 'BEGIN { srand(7); for (i = 0; i < 100000; i++) {
		s = "R" (i % 2 + 1) " relay"
		for (d = 0; d < 5 + i % 20; d++) s = s ";fn_" d "_" int(i / (7 ^ (d % 6 + 1))) % 50
		print s ";leaf_" i, 1 + int(rand() * 100) } }' >"$BATS_TEST_TMPDIR/big.folded"
	ff-flame -o "$BATS_TEST_TMPDIR/big.html" "$BATS_TEST_TMPDIR/big.folded"
	dom "$BATS_TEST_TMPDIR/big.html" "search=leaf_1" "$BATS_TEST_TMPDIR/dom"
	nodes=$(attr_of "$BATS_TEST_TMPDIR/dom" status data-nodes)
	drawn=$(attr_of "$BATS_TEST_TMPDIR/dom" status data-rendered)
	load=$(attr_of "$BATS_TEST_TMPDIR/dom" status data-load-ms)
	echo "nodes $nodes drawn $drawn load_ms $load"
	[ "$nodes" -gt 100000 ]
	[ "$drawn" -gt 50 ]
	[ "$drawn" -lt 5000 ]
	grep -q 'class="f merged"' "$BATS_TEST_TMPDIR/dom"
	# The page's own load time needs steady CPUs: 3 s or more is said and
	# the page loaded once more; a second miss fails. Drawing every node
	# (or anything else slow in the page) misses it every time.
	if ! awk -v l="$load" 'BEGIN { exit !(l < 3000) }'; then
		echo "# busy machine? the page loaded in $load ms: once more" >&3
		dom "$BATS_TEST_TMPDIR/big.html" "search=leaf_1" "$BATS_TEST_TMPDIR/dom"
		load=$(attr_of "$BATS_TEST_TMPDIR/dom" status data-load-ms)
		echo "load_ms $load"
	fi
	awk -v l="$load" 'BEGIN { exit !(l < 3000) }'
	want=$(share "$BATS_TEST_TMPDIR/big.folded" leaf_1)
	got=$(attr_of "$BATS_TEST_TMPDIR/dom" matched data-share)
	awk -v a="$want" -v b="$got" 'BEGIN { exit !(a - b < 1e-6 && b - a < 1e-6) }'
}

# Bad input and usage

@test "ff-flame: a missing file is an error" {
	run -1 --separate-stderr ff-flame "$BATS_TEST_TMPDIR/nope.data"
	[ "$stderr" = "ff-flame: cannot open '$BATS_TEST_TMPDIR/nope.data': No such file or directory" ]
	[ -z "$output" ]
	cd "$BATS_TEST_TMPDIR"
	run -1 --separate-stderr ff-flame
	[ "$stderr" = "ff-flame: cannot open 'perf.data': No such file or directory" ]
}

@test "ff-flame: garbage is not a perf.data: an error, no page" {
	printf 'PERFILE\001\000\377\376garbage\n\000\001' >"$BATS_TEST_TMPDIR/perf.data"
	run -1 --separate-stderr ff-flame -o "$BATS_TEST_TMPDIR/out.html" "$BATS_TEST_TMPDIR/perf.data"
	[ "$stderr" = "ff-flame: '$BATS_TEST_TMPDIR/perf.data': not a perf.data file, perf script output or folded stacks (binary data)" ]
	[ ! -e "$BATS_TEST_TMPDIR/out.html" ]
	printf 'hello world\nthis is text\n' >"$BATS_TEST_TMPDIR/text"
	run -1 --separate-stderr ff-flame "$BATS_TEST_TMPDIR/text"
	[ "$stderr" = "ff-flame: '$BATS_TEST_TMPDIR/text': not a perf.data file, perf script output or folded stacks" ]
}

@test "ff-flame: a bad line among folded stacks is a warning" {
	printf 'a;b 3\nnot a stack\na;c 2\n' >"$BATS_TEST_TMPDIR/f"
	run -0 --separate-stderr ff-flame --folded "$BATS_TEST_TMPDIR/f"
	[ "$output" = $'a;b 3\na;c 2' ]
	[ "$stderr" = "ff-flame: $BATS_TEST_TMPDIR/f:2: not a folded stack, skipped" ]
}

@test "ff-flame: a perf.data that perf cannot read is an error" {
	skip_unless_program perf
	{ printf 'PERFILE2'; head -c 300 /dev/zero | tr '\0' 'x'; } >"$BATS_TEST_TMPDIR/bad.data"
	run -1 --separate-stderr ff-flame -o "$BATS_TEST_TMPDIR/out.html" "$BATS_TEST_TMPDIR/bad.data"
	# One line: ours, with perf's reason in it (perf 6.1: "incompatible
	# file format"), and not perf's own line before it.
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "ff-flame: perf script cannot read '$BATS_TEST_TMPDIR/bad.data': "?* ]]
	[[ "$stderr" != *"rerun with -v"* ]]
	[ -z "$output" ]
	[ ! -e "$BATS_TEST_TMPDIR/out.html" ]
}

@test "ff-flame: usage" {
	run -0 ff-flame -h
	[ "${lines[0]}" = "usage: ff-flame [-o FILE] [-t TITLE] [--folded] [--script] [--meta JSON] [--events FILE]" ]
	run -2 --separate-stderr ff-flame -Q
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "ff-flame: unknown option '-Q'" ]
	run -2 --separate-stderr ff-flame --bogus
	[ "${stderr_lines[0]}" = "ff-flame: unknown option '--bogus'" ]
	run -2 --separate-stderr ff-flame --diff "$FIX/base.folded"
	[ "${stderr_lines[0]}" = "ff-flame: --diff needs two files, BASE and NEW" ]
	run -2 --separate-stderr ff-flame "$FIX/base.folded" "$FIX/new.folded"
	[ "${stderr_lines[0]}" = "ff-flame: one input file at most (or --diff BASE NEW)" ]
	run -2 --separate-stderr ff-flame --folded=1 "$FIX/base.folded"
	[ "${stderr_lines[0]}" = "ff-flame: option '--folded' takes no value (given '1')" ]
	run -2 --separate-stderr ff-flame --bogus=1
	[ "${stderr_lines[0]}" = "ff-flame: unknown option '--bogus'" ]
	run -2 --separate-stderr ff-flame --meta '{"relays":' "$FIX/base.folded"
	[[ "${stderr_lines[0]}" == "ff-flame: --meta: not JSON: "* ]]
	run -2 --separate-stderr ff-flame --meta '[1]' "$FIX/base.folded"
	[ "${stderr_lines[0]}" = "ff-flame: --meta: expected a JSON object" ]
	run -2 --separate-stderr ff-flame -o
	[ "${stderr_lines[0]}" = "ff-flame: option '-o' needs a value" ]
	run -2 --separate-stderr ff-flame --base-events "$FIX/events.jsonl" "$FIX/base.folded"
	[ "${stderr_lines[0]}" = "ff-flame: --base-events is the events of --diff's BASE: give --diff too" ]
}

@test "ff-flame: -o writes the file whole, and nothing on standard output" {
	run -0 ff-flame -o "$BATS_TEST_TMPDIR/p.html" "$FIX/base.folded"
	[ -z "$output" ]
	grep -q '^</html>$' "$BATS_TEST_TMPDIR/p.html"
	[ "$(ls "$BATS_TEST_TMPDIR" | grep -c 'p.html')" -eq 1 ]
}

# Real recordings

@test "ff-flame: a perf.data folds the same as the perf script text it holds" {
	need_recording
	run -0 ff-flame --folded "$NGX/nginx.data"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/a"
	perf script -i "$NGX/nginx.data" -F comm,pid,tid,ip,sym,dso 2>/dev/null >"$BATS_TEST_TMPDIR/script"
	ff-flame --folded --script "$BATS_TEST_TMPDIR/script" >"$BATS_TEST_TMPDIR/b"
	cmp "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
	# Every sample is counted once.
	samples=$(perf script -i "$NGX/nginx.data" -F pid 2>/dev/null | grep -c .)
	[ "$(awk '{ s += $NF } END { print s }' "$BATS_TEST_TMPDIR/a")" -eq "$samples" ]
	# Kernel frames, where perf may record them (root or perf_event_paranoid <= 1).
	if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ]; then
		grep -q '_\[k\]' "$BATS_TEST_TMPDIR/a"
	fi
}

@test "ff-flame: nginx recording: R1 and R2 towers from --meta" {
	need_recording
	run -0 ff-flame --folded --meta @"$NGX/meta.json" "$NGX/nginx.data"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/f"
	run -0 sh -c "cut -d';' -f1 '$BATS_TEST_TMPDIR/f' | sort -u"
	assert_output $'R1 nginx\nR2 nginx'
}

@test "ff-flame: nginx recording: R1 and R2 towers from the run's own events (--events)" {
	need_recording
	local r1 r2
	r1=$(jq -r 'select(.event == "capture") | .relays[] | select(.role == "r1") | .pid' "$NGX/events.json")
	r2=$(jq -r 'select(.event == "capture") | .relays[] | select(.role == "r2") | .pid' "$NGX/events.json")
	[ -n "$r1" ] && [ -n "$r2" ] && [ "$r1" != "$r2" ]
	run -0 ff-flame --folded --events "$NGX/events.json" "$NGX/nginx.data"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/f"
	run -0 sh -c "cut -d';' -f1 '$BATS_TEST_TMPDIR/f' | sort -u"
	assert_output $'R1 nginx\nR2 nginx'
	# The same stacks as the meta built from those events by hand.
	ff-flame --folded --meta @"$NGX/meta.json" "$NGX/nginx.data" | cmp - "$BATS_TEST_TMPDIR/f"
	ff-flame -o "$BATS_TEST_TMPDIR/p.html" --events "$NGX/events.json" "$NGX/nginx.data"
	page_data "$BATS_TEST_TMPDIR/p.html" >"$BATS_TEST_TMPDIR/data"
	jq -e '
		.meta.title == "flimflam: h2load-h1 over nginx (http1)" and
		.meta.workload == "h2load-h1" and .meta.relay == "nginx" and .meta.protocol == "http1" and
		(.names | index("R1 nginx")) and (.names | index("R2 nginx"))' "$BATS_TEST_TMPDIR/data"
	# Each tower's pids (its tooltip) are among its relay's.
	jq -e --slurpfile ev "$NGX/events.json" '. as $d | all(.meta.relays[]; . as $r |
		($d.detail[$d.names | index($r.role | ascii_upcase | . + " nginx") | tostring] |
		 [scan("[0-9]+") | tonumber]) as $seen | ($seen | length) > 0 and ($seen - $r.pids | length) == 0)' \
		"$BATS_TEST_TMPDIR/data"
}

@test "ff-flame: nginx recording renders in Chromium with nginx frames and the right search share" {
	need_recording
	skip_unless_chromium
	mkdir -p "$TOP/t/artifacts"
	ff-flame --folded --meta @"$NGX/meta.json" "$NGX/nginx.data" >"$BATS_TEST_TMPDIR/f"
	ff-flame -o "$BATS_TEST_TMPDIR/n.html" --meta @"$NGX/meta.json" "$NGX/nginx.data"
	re='^ngx_|^\[nginx\]'
	dom "$BATS_TEST_TMPDIR/n.html" "search=$(enc "$re")" "$BATS_TEST_TMPDIR/dom"
	grep -q '<h1 id="title">nginx under h2load</h1>' "$BATS_TEST_TMPDIR/dom"
	grep -q '>R1 nginx<' "$BATS_TEST_TMPDIR/dom"
	grep -q '>R2 nginx<' "$BATS_TEST_TMPDIR/dom"
	want=$(share "$BATS_TEST_TMPDIR/f" "$re")
	got=$(attr_of "$BATS_TEST_TMPDIR/dom" matched data-share)
	echo "search share: want $want got $got"
	awk -v a="$want" -v b="$got" 'BEGIN { exit !(a > 0 && a - b < 1e-6 && b - a < 1e-6) }'
	# Zoomed into the widest nginx frame, it is drawn with its name.
	dom "$BATS_TEST_TMPDIR/n.html" "zoom=$(enc "$re")" "$BATS_TEST_TMPDIR/dom2"
	grep -Eq '>(ngx_[a-z_0-9]+|\[nginx\])<' "$BATS_TEST_TMPDIR/dom2"
	chrome --screenshot="$TOP/t/artifacts/ff-flame-nginx.png" "file://$BATS_TEST_TMPDIR/n.html"
	[ -s "$TOP/t/artifacts/ff-flame-nginx.png" ]
}

@test "ff-flame: --diff of two real recordings" {
	need_recording
	run -0 ff-flame --folded --diff "$NGX/nginx.data" "$NGX/nginx.data"
	# Against itself, every stack has the same count on both sides.
	printf '%s\n' "$output" | awk '$(NF-1) != $NF { exit 1 }'
	run -0 ff-flame -o "$BATS_TEST_TMPDIR/d.html" --diff "$FIX/script.txt" "$NGX/nginx.data"
	page_data "$BATS_TEST_TMPDIR/d.html" | jq -e '.diff and .total > 0 and .base_total == 10'
}

# matched DIFF_FOLDED DEPTH: the share of NEW's samples (in "stack base new"
# lines) whose first DEPTH frames are a path the base has samples in
# (DEPTH 99: the whole stack).
matched() {
	awk -v D="$2" '{
		n = $NF; b = $(NF - 1); s = $0; sub(/ [0-9]+ [0-9]+$/, "", s)
		k = split(s, f, ";"); key = ""
		for (i = 1; i <= k && i <= D; i++) key = key ";" f[i]
		nn[key] += n; bb[key] += b; t += n
	} END { for (x in nn) if (bb[x] > 0) m += nn[x]; printf "%.3f\n", t ? m / t : 0 }' "$1"
}

# self_changes DIFF_FOLDED: each leaf function's change of its share of
# the self samples from base to new, largest growth first: "CHANGE NAME".
self_changes() {
	awk '{
		n = $NF; b = $(NF - 1); s = $0; sub(/ [0-9]+ [0-9]+$/, "", s)
		k = split(s, f, ";"); sn[f[k]] += n; sb[f[k]] += b; tn += n; tb += b
	} END { for (x in sn) printf "%.4f %s\n", sn[x] / tn - sb[x] / tb, x }' "$1" | sort -k1,1gr
}

@test "ff-flame: --diff of two runs of the same nginx: processes match by relay and program, not pid" {
	need_recording
	local a="$NGX/nginx.data" b="$NGX/again/perf.data" ea="$NGX/events.json" eb="$NGX/again/events.json"
	cd "$BATS_TEST_TMPDIR"
	# Two runs: other processes, other pids.
	pids() { jq -r 'select(.event == "capture") | [.relays[].pids[]] | sort | join(",")' "$1"; }
	[ -n "$(pids "$ea")" ] && [ "$(pids "$ea")" != "$(pids "$eb")" ]
	# Each recording's relays from its own run's events: R1 and R2 on both sides.
	run -0 --separate-stderr ff-flame --folded --events "$eb" --base-events "$ea" --diff "$a" "$b"
	printf '%s\n' "$output" >d.folded
	run -0 sh -c "cut -d';' -f1 d.folded | sort -u"
	assert_output $'R1 nginx\nR2 nginx'
	awk '{ b[$0 ~ /^R1 nginx;/] += $(NF - 1) } END { exit !(b[0] > 0 && b[1] > 0) }' d.folded
	# Every new sample is in a tower the base has, nearly all in frames the
	# base has, and most in whole stacks the base has (a pid in the towers'
	# names made all of them new).
	echo "matched: tower $(matched d.folded 1) depth 3 $(matched d.folded 3) stack $(matched d.folded 99)"
	awk -v m="$(matched d.folded 1)" 'BEGIN { exit !(m >= 0.99) }'
	awk -v m="$(matched d.folded 3)" 'BEGIN { exit !(m >= 0.8) }'
	awk -v m="$(matched d.folded 99)" 'BEGIN { exit !(m >= 0.4) }'
	# Without events, each side's nginx processes are one tower, "nginx".
	run -0 ff-flame --folded --diff "$a" "$b"
	[ "$(printf '%s\n' "$output" | cut -d';' -f1 | sort -u)" = nginx ]
	# Options after the files are options: --folded is no third file.
	ff-flame --diff "$a" "$b" --folded | cmp - <(printf '%s\n' "$output")
	# The page: towers by role and program, no name with a pid (a kernel function may have "pid"
	# in its name: find_get_pid); the pids of each side are the tooltip's.
	ff-flame -o d.html --events "$eb" --base-events "$ea" --diff "$a" "$b"
	page_data d.html >d.json
	r1pids() { jq -c 'select(.event == "capture") | .relays[] | select(.role == "r1") | .pids' "$1"; }
	# Shown when it fails: what the tooltip says, against each run's R1 pids.
	echo "R1's tooltip: $(jq -r '.detail[.names | index("R1 nginx") | tostring]' d.json); r1 pids: base $(r1pids "$ea"), new $(r1pids "$eb")"
	jq -e --argjson a "$(r1pids "$ea")" --argjson b "$(r1pids "$eb")" '
		([.names[] | select(test("pids? [0-9]"))] | length) == 0 and
		(.detail[.names | index("R1 nginx") | tostring] |
		 capture("^base: pids? (?<b>[0-9, ]+); new: pids? (?<n>[0-9, ]+)$") |
		 ([.b | scan("[0-9]+") | tonumber] - $a | length) == 0 and
		 ([.n | scan("[0-9]+") | tonumber] - $b | length) == 0)' d.json
}

@test "ff-flame: --diff of two real recordings: the frames that differ most are the one whose share changed" {
	need_recording
	local a="$NGX/nginx.data" b="$NGX/again/perf.data" ea="$NGX/events.json" eb="$NGX/again/events.json"
	cd "$BATS_TEST_TMPDIR"
	# The second run's stacks, with a function of about 5% of its self
	# samples made ten times as frequent: its share grows by 0.1 to 0.3.
	ff-flame --folded --events "$eb" "$b" >b.folded
	x=$(awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";"); self[f[k]] += n; t += n }
		END { for (x in self) { d = self[x] / t - 0.05; if (d < 0) d = -d
			if (self[x] / t >= 0.01 && self[x] / t <= 0.12) print d "\t" x } }' b.folded |
		sort -g | head -n 1 | cut -f2)
	[ -n "$x" ]
	echo "changed: $x"
	awk -v x="$x" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		print s, (f[k] == x ? 10 * n : n) }' b.folded >b10.folded
	ff-flame --folded --events "$eb" --base-events "$ea" --diff "$a" b10.folded >d.folded
	self_changes d.folded >changes
	head -n 3 changes
	[ "$(head -n 1 changes | cut -d' ' -f2-)" = "$x" ]
	# ... by far: twice the next one's growth.
	awk 'NR == 1 { top = $1 } NR == 2 { exit !(top >= 2 * $1) }' changes
	# The page's tree says the same: its nodes' own samples (a node's
	# count less its children's), summed by name, on each side, grow the
	# most for x. (Not the node whose share grew the most: a function
	# called from many places, such as do_syscall_64, is spread over many
	# nodes, each growing a little, and where its share of every tower
	# grows alike, no ancestor's share moves; a node elsewhere can move
	# more by the two runs' own noise.)
	ff-flame -o d.html --events "$eb" --base-events "$ea" --diff "$a" b10.folded
	page_data d.html | jq -r '. as $d | range(0; .nodes | length; 3) |
		"\($d.nodes[. + 1])\t\($d.nodes[. + 2])\t\($d.base[. / 3])\t\($d.names[$d.nodes[.]])"' |
		awk -F'\t' '{ dep = $1; n[NR] = $2; b[NR] = $3; nm[NR] = $4; at[dep] = NR
			if (dep > 0) { cn[at[dep - 1]] += $2; cb[at[dep - 1]] += $3 } }
		END { for (i = 2; i <= NR; i++) { sn[nm[i]] += (n[i] - cn[i]) / n[1]; sb[nm[i]] += (b[i] - cb[i]) / b[1] }
			for (k in sn) printf "%.4f %s\n", sn[k] - sb[k], k }' | sort -k1,1gr >page-changes
	head -n 3 page-changes
	[ "$(head -n 1 page-changes | cut -d' ' -f2-)" = "$x" ]
}

@test "ff-flame: --diff of a real recording against its own folded stacks: every stack in both, with the same count" {
	need_recording
	local b="$NGX/again/perf.data" eb="$NGX/again/events.json"
	cd "$BATS_TEST_TMPDIR"
	ff-flame --folded --events "$eb" "$b" >b.folded
	# Folded text holds names alone; the recording names modules too. A
	# frame is its name, so the two meet frame for frame.
	ff-flame --folded --events "$eb" --base-events "$eb" --diff "$b" b.folded >d.folded
	[ -s d.folded ]
	awk '$(NF - 1) != $NF { print "differs: " $0; bad = 1 } END { exit bad }' d.folded
	[ "$(wc -l <d.folded)" -eq "$(wc -l <b.folded)" ]
}

@test "ff-flame: an empty recording is a page that says there were no samples" {
	need_recording
	[ -f "$NGX/empty.data" ] || skip "no empty recording"
	run -0 --separate-stderr ff-flame -o "$BATS_TEST_TMPDIR/e.html" "$NGX/empty.data"
	[[ "$stderr" == *"no samples in"* ]]
	# The page's data is that of stacks of no samples, whose page Chromium renders
	# saying so (the test "stacks of no samples are a page that says there were none").
	page_data "$BATS_TEST_TMPDIR/e.html" | jq -e '.total == 0 and (.nodes | length) == 3'
}

@test "ff-flame: /dev/zero and a line that never ends are one error each, at once, not memory exhausted" {
	run -1 --separate-stderr bash -c 'ulimit -v 300000; exec timeout 60 ff-flame --folded /dev/zero'
	[ "$stderr" = "ff-flame: '/dev/zero': not a perf.data file, perf script output or folded stacks (binary data)" ]
	run -1 --separate-stderr bash -c 'ulimit -v 300000; yes a | tr -d "\n" | timeout 60 ff-flame --folded -'
	[ "$stderr" = "ff-flame: standard input:1: a line of more than 16 MiB: not perf script output or folded stacks" ]
}

# A perf script that hangs (a stand-in named perf first on PATH, which
# sleeps: it tests ff-flame's bound, it reads nothing) is stopped after
# the base a small perf.data is given (30 s; 3 s here, the tests' knob, so
# that the suite does not sit through 30), in one line, and nothing is left.
@test "ff-flame: a perf script that hangs is stopped at its allowance" {
	local f="$BATS_TEST_TMPDIR/hang" t0=$SECONDS
	mkdir -p "$f"
	# A name of this test's own: another suite on the machine may run it too.
	printf '#!/bin/bash\nexec -a flimflam-hung-perf-%s sleep 300\n' "$$" >"$f/perf"
	chmod +x "$f/perf"
	{ printf 'PERFILE2'; head -c 1000 /dev/zero; } >"$BATS_TEST_TMPDIR/perf.data"
	FLIMFLAM_TEST_SCRIPT_BASE=3 PATH="$f:$PATH" run -1 --separate-stderr ff-flame -o "$BATS_TEST_TMPDIR/out.html" "$BATS_TEST_TMPDIR/perf.data"
	[ "$stderr" = "ff-flame: perf script did not finish reading '$BATS_TEST_TMPDIR/perf.data' within the 3 s it was given (3 s + 5 s per MiB) and was stopped" ]
	[ $((SECONDS - t0)) -ge 3 ] && [ $((SECONDS - t0)) -lt 30 ]
	[ ! -e "$BATS_TEST_TMPDIR/out.html" ]
	[ -z "$(pgrep -f "flimflam-hung-perf-$$")" ]
}
