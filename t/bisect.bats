#!/usr/bin/env bats
# flimflam bisect (issue 28): a fixture git repository whose commits build
# an nginx "relay" (a wrapper of the real nginx that preloads
# bench/power-shim.c, adding CPU per byte written), with the cost switched
# on at commit K; bisect must name K, skip a commit that does not build, and
# say when GOOD and BAD do not differ, and end with a differential
# flamegraph. Short windows; the rounds a step is given follow from how much
# the relay's CPU per GB (the steadiest metric) varies here now, measured by
# setup_file, and a test skips, saying so, when its change would need more
# rounds than its time allows.

bats_require_minimum_version 1.5.0
load helper

setup_file() {
	command -v nginx >/dev/null || return 0
	local d="$BATS_FILE_TMPDIR/shim" nginx b
	nginx=$(command -v nginx)
	mkdir -p "$d"
	# The shim, and what one turn of its loop costs here.
	"$TOP/bench/power-shim.sh" "$d" 50000000 >"$d/ns_per_loop"
	# An A/A bench of the base (two prefixes of one nginx), as a step runs:
	# the base's relay CPU per GB here, now, and how much its pairs' log
	# ratios vary (their rms), which sets the rounds a change needs.
	for b in a b; do
		mkdir -p "$d/$b/sbin"
		printf '#!/bin/sh\nexec %s "$@"\n' "$nginx" >"$d/$b/sbin/nginx"
		chmod +x "$d/$b/sbin/nginx"
	done
	(cd "$d" && ff-bench -w builtin -r nginx -p tcp --warmup 0 --duration 1 --build "a=$d/a" --build "b=$d/b" \
		--repeat 8 --output cal.jsonl --force >/dev/null 2>&1) || true
	jq -s '[.[] | select(.event == "case" and .status == "ok") | ([.resources.relays[].cpu_s] | add) /
		(.result.bytes / 1e9)] | sort | .[length / 2 | floor] // 4' "$d/cal.jsonl" >"$d/pergb"
	jq -s '[.[] | select(.event == "case" and .status == "ok")] | group_by(.repeat) | map(select(length == 2) |
		map(([.resources.relays[].cpu_s] | add) / .result.bytes) | (.[0] / .[1] | log) | . * .) |
		if length > 2 then add / length | sqrt else 0.3 end' "$d/cal.jsonl" >"$d/pairsd"
}

# budget PCT CAP: BUDGET=(--rounds N --max-rounds M) for a step to show a change
# of PCT% (as GOOD against BAD and as the midpoint's side) with the pairs'
# rms measured by setup_file: the rounds the confidence sequence needs
# (call.c) with 90% power, at least CAP when fewer; skips, saying why, when
# more than CAP are needed (a machine too loaded for the test's time).
budget() {
	local d="$BATS_FILE_TMPDIR/shim" n
	n=$(awk -v s="$(cat "$d/pairsd")" -v p="$1" 'BEGIN {
		D = log(1 + p / 100); v = s * s + D * D; c = 4 * v
		for (n = 3; n < 1000; n++) {
			S = n * D - 1.3 * s * sqrt(n); V = n * v
			if (S > 0 && S * S / (2 * (V + c)) - 0.5 * log((V + c) / c) >= log(20)) break
		}
		print n }')
	if [ "$n" -gt "$2" ]; then
		skip "relay CPU per GB pairs vary $(awk -v s="$(cat "$d/pairsd")" 'BEGIN { printf "%.0f", s * 100 }')% here now: a $1% change needs about $n rounds a step to be shown, more than this test's $2"
	fi
	BUDGET=(--rounds $(((n * 2 + 2) / 3)) --max-rounds $((n + n / 3 + 1)))
	echo "# a $1% change: pairs vary $(cat "$d/pairsd") (rms of log ratios): ${BUDGET[*]}" >&3
}

# fixture_repo DIR N K PCT [BROKEN [NORELAY]]: N commits c1..cN; from cK on
# the relay costs PCT% more CPU per GB; cBROKEN (if given) does not build;
# cNORELAY builds a relay that is not nginx.
fixture_repo() {
	local dir=$1 n=$2 k=$3 pct=$4 broken=${5:-0} norelay=${6:-0} d="$BATS_FILE_TMPDIR/shim" loops i
	# builtin's counted bytes are written 4 times by the 2 relays (there and back).
	loops=$(awk -v c="$pct" -v g="$(cat "$d/pergb")" -v l="$(cat "$d/ns_per_loop")" \
		'BEGIN { printf "%.3f", c / 100 * g / 4 * 1024 / l }')
	mkdir -p "$dir"
	git -C "$dir" init -q
	cat >"$dir/build.sh" <<SH
#!/bin/sh
# build.sh PREFIX: install the relay into PREFIX/sbin/nginx
set -e
if [ -e broken ]; then echo "build.sh: this commit does not build" >&2; exit 1; fi
mkdir -p "\$1/sbin"
printf '#!/bin/sh\nFF_SHIM_LOOPS_PER_KB=%s LD_PRELOAD=%s exec %s "\$@"\n' "\$(cat cost)" "$d/power-shim.so" "$(command -v nginx)" >"\$1/sbin/nginx"
chmod +x "\$1/sbin/nginx"
if [ -e norelay ]; then printf '#!/bin/sh\nexit 1\n' >"\$1/sbin/nginx"; fi
SH
	for i in $(seq "$n"); do
		if [ "$i" -ge "$k" ]; then echo "$loops" >"$dir/cost"; else echo 0 >"$dir/cost"; fi
		if [ "$i" = "$broken" ]; then touch "$dir/broken"; else rm -f "$dir/broken"; fi
		if [ "$i" = "$norelay" ]; then touch "$dir/norelay"; else rm -f "$dir/norelay"; fi
		echo "$i" >"$dir/version"
		git -C "$dir" add -A
		git -C "$dir" -c user.name=t -c user.email=t@example.com commit -qm "c$i: change $i"
	done
}

commit_of() {
	git -C "$1" log --format=%H --grep="^c$2:"
}

FAST=(-w builtin -r nginx -p tcp --warmup 0 --duration 1 --no-flamegraph)

# still_running MARK: the processes whose environment holds MARK (FF_BISECT_MARK=...).
still_running() {
	local e
	for e in /proc/[0-9]*/environ; do
		{ tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "$1" && echo "${e%/environ}"
	done
	true
}

@test "bisect: names the commit that added 20% relay CPU per GB, skipping one that does not build, in bounded steps; a stop resumes" {
	skip_unless_program nginx
	local repo="$BATS_TEST_TMPDIR/repo" cache="$BATS_TEST_TMPDIR/cache" out="$BATS_TEST_TMPDIR/r.jsonl" k pid i
	local mark="FF_BISECT_MARK=$BATS_TEST_TMPDIR" state
	budget 20 16
	# 8 commits: git bisect first tries c4, which does not build.
	fixture_repo "$repo" 8 6 20 4
	k=$(commit_of "$repo" 6)
	state="$repo/.git/flimflam-bisect.json"
	env "$mark" flimflam bisect -C "$repo" --good "$(commit_of "$repo" 1)" --bad "$(commit_of "$repo" 8)" \
		--build-cmd 'sh build.sh {prefix}' --cache "$cache" --output "$out" "${FAST[@]}" "${BUDGET[@]}" \
		>"$BATS_TEST_TMPDIR/first.out" 2>"$BATS_TEST_TMPDIR/first.err" &
	pid=$!
	# Stopped (Ctrl-C) while a step's bench runs, after the skip.
	for i in $(seq 600); do
		jq -e '.steps | length >= 2 and (.[-1].files | length) >= 1' "$state" >/dev/null 2>&1 && break
		sleep 0.2
	done
	sleep 2
	kill -INT "$pid"
	status=0
	wait "$pid" || status=$?
	cat "$BATS_TEST_TMPDIR/first.err"
	[ "$status" = 130 ]
	grep -q "the checkout is on git bisect's commit" "$BATS_TEST_TMPDIR/first.err"
	# The checkout is on the commit git bisect chose, nothing of the run is left running.
	[ "$(git -C "$repo" rev-parse HEAD)" = "$(jq -r '.steps[-1].commit' "$state")" ]
	[ -z "$(still_running "$mark")" ]
	run -0 --separate-stderr flimflam bisect -C "$repo" --resume
	echo "$output"; echo "$stderr"
	assert_line "First bad commit: $k c6: change 6"
	assert_line --regexp '^Change GOOD -> BAD: relay CPU s/GB \+[0-9.]+% \[\+[0-9.]+, \+[0-9.]+\]'
	assert_line --regexp '^[0-9]+ +[0-9a-f]{12} +skip .*the build command exited with status 1'
	# At most ceil(log2(7)) steps, and one for the skipped commit.
	steps=$(sed -n 's/^Steps: \([0-9]*\) (1 skipped).*/\1/p' <<<"$output")
	[ -n "$steps" ] && [ "$steps" -le 4 ]
	# git's own bisect state: its log holds the skip and names the first bad commit.
	run -0 git -C "$repo" bisect log
	assert_output --partial "git bisect skip $(commit_of "$repo" 4)"
	assert_output --partial "# first bad commit: [$k]"
	# Every row names its commit (its build label), and the builds were cached by commit.
	jq -e -s 'length > 0 and all(.[] | select(.event == null or .event == "run"); .build.label | test("^[0-9a-f]{12}$"))' "$out"
	compgen -G "$cache/*/$k.built" >/dev/null
	compgen -G "$cache/*/$(commit_of "$repo" 4).failed" >/dev/null
	# No commit was built twice, across the stop and the resume.
	cat "$BATS_TEST_TMPDIR/first.err" - <<<"$stderr" | sed -n 's/.*: building \([0-9a-f]*\) into .*/\1/p' >"$BATS_TEST_TMPDIR/built"
	[ -s "$BATS_TEST_TMPDIR/built" ]
	[ -z "$(sort "$BATS_TEST_TMPDIR/built" | uniq -d)" ]
	[ ! -e "$state" ]
}

@test "bisect: a change with no effect ends saying GOOD and BAD do not differ, naming no commit; a relay that does not start is skipped" {
	skip_unless_program nginx
	local repo="$BATS_TEST_TMPDIR/repo" branch
	# c4, git bisect's first try, builds a relay that is not nginx.
	fixture_repo "$repo" 8 6 0 0 4
	branch=$(git -C "$repo" symbolic-ref --short HEAD)
	# GOOD and BAD are the same relay, looked at after 3, 5 and 6 rounds: the
	# confidence sequence calls them different under 5% of the time however
	# often it looks (t/unit/bisect-sim: 0.05% of A/A draws).
	run --separate-stderr flimflam bisect -C "$repo" --good "$(commit_of "$repo" 1)" --bad "$(commit_of "$repo" 8)" \
		--build-cmd 'sh -c "sh build.sh \"\$FLIMFLAM_PREFIX\""' --cache "$BATS_TEST_TMPDIR/cache" \
		--output "$BATS_TEST_TMPDIR/r.jsonl" "${FAST[@]}" --rounds 3 --max-rounds 6
	echo "$output"; echo "$stderr"
	[ "$status" -eq 1 ]
	assert_line --regexp '^GOOD and BAD do not differ: relay CPU s/GB [-+][0-9.]+% .* over [0-9]+ rounds .*no commit is named$'
	refute_output --partial "First bad commit"
	[[ "$stderr" == *"step 1: $(commit_of "$repo" 4 | cut -c1-12) is skipped: ff-bench refused its build"* ]]
	# The bisect is reset: the checkout is back on its branch.
	[ "$(git -C "$repo" symbolic-ref --short HEAD)" = "$branch" ]
	run -1 git -C "$repo" bisect log
}

@test "bisect: names the commit that added 5% relay CPU per GB, in bounded steps" {
	skip_unless_program nginx
	local repo="$BATS_TEST_TMPDIR/repo" k steps
	budget 5 24
	# 5 commits, the cost from c4: 4 candidates, 2 steps (testing each in turn would take 3).
	fixture_repo "$repo" 5 4 5
	k=$(commit_of "$repo" 4)
	run -0 --separate-stderr flimflam bisect -C "$repo" --good "$(commit_of "$repo" 1)" --bad "$(commit_of "$repo" 5)" \
		--build-cmd 'sh build.sh {prefix}' --cache "$BATS_TEST_TMPDIR/cache" --output "$BATS_TEST_TMPDIR/r.jsonl" \
		"${FAST[@]}" "${BUDGET[@]}"
	echo "$output"; echo "$stderr"
	assert_line "First bad commit: $k c4: change 4"
	assert_line --regexp '^Change GOOD -> BAD: relay CPU s/GB \+[0-9.]+% \[\+[0-9.]+, '
	steps=$(sed -n 's/^Steps: \([0-9]*\) (0 skipped).*/\1/p' <<<"$output")
	[ -n "$steps" ] && [ "$steps" -le 2 ]
}

@test "bisect: ends with a differential flamegraph of the first bad commit against its parent, the shim's function grown" {
	skip_unless_program nginx perf
	local repo="$BATS_TEST_TMPDIR/repo" lp lf page
	perf record -q -e cpu-clock -o "$BATS_TEST_TMPDIR/probe.data" -- true 2>"$BATS_TEST_TMPDIR/probe.log" ||
		skip "perf cannot record here: $(head -n 1 "$BATS_TEST_TMPDIR/probe.log")"
	# c1 good, c2 bad (the shim's cost doubles the relay's CPU per GB): git
	# bisect names c2 at once, with no bench; then both are recorded.
	fixture_repo "$repo" 2 2 100
	lp=$(commit_of "$repo" 1 | cut -c1-12) lf=$(commit_of "$repo" 2 | cut -c1-12)
	run -0 --separate-stderr flimflam bisect -C "$repo" --good "$lp" --bad "$lf" --build-cmd 'sh build.sh {prefix}' \
		--cache "$BATS_TEST_TMPDIR/cache" --output "$BATS_TEST_TMPDIR/r.jsonl" -w builtin -r nginx -p tcp \
		--warmup 0 --duration 2
	echo "$output"; echo "$stderr"
	tail -n 20 "$BATS_TEST_TMPDIR/flamegraph-$lp-vs-$lf.log" 2>/dev/null || true
	page="$BATS_TEST_TMPDIR/flamegraph-$lp-vs-$lf.html"
	assert_line "First bad commit: $(commit_of "$repo" 2) c2: change 2"
	assert_line "Differential flamegraph ($lf against its parent $lp): $page"
	[ -s "$page" ]
	grep -qF "Differential flame graph: $lf against $lp" "$page"
	# The shim's loop: its share of the samples grew, from none in the parent.
	page_data "$page" | jq -e '.diff == true' >/dev/null
	page_data "$page" | jq -e '. as $d | [range(0; .nodes | length; 3) |
		select($d.names[$d.nodes[.]] == "power_shim_spin") | {new: $d.nodes[. + 2], base: $d.base[. / 3]}] |
		length > 0 and (map(.new) | add) / $d.total > 0.05 and (map(.base) | add) / $d.base_total < 0.01'
	# flimflam flamegraph's ranking, in its log beside the page, puts it among the grown.
	sed -n '/grew the most/,/shrank the most/p' "$BATS_TEST_TMPDIR/flamegraph-$lp-vs-$lf.log" | grep -q ' power_shim_spin$'
}

@test "bisect: bad input is one line and exit 2 (or 1), and starts no bisect" {
	local repo="$BATS_TEST_TMPDIR/repo" good bad
	mkdir -p "$repo"
	git -C "$repo" init -q
	for i in 1 2 3; do
		echo "$i" >"$repo/f"
		git -C "$repo" add f
		git -C "$repo" -c user.name=t -c user.email=t@example.com commit -qm "c$i"
	done
	good=$(git -C "$repo" rev-parse HEAD~2) bad=$(git -C "$repo" rev-parse HEAD)
	run -2 --separate-stderr flimflam bisect -C "$repo" --good "$good" --bad "$bad"
	[ "${stderr_lines[0]}" = "flimflam bisect: --good, --bad and --build-cmd are needed (or --resume)" ]
	run -2 --separate-stderr flimflam bisect -C "$repo" --good nosuch --bad "$bad" --build-cmd true
	[ "${stderr_lines[0]}" = "flimflam bisect: --good: 'nosuch' is not a commit of $repo" ]
	run -2 --separate-stderr flimflam bisect -C "$repo" --good "$good" --bad "$bad" --build-cmd "make 'install"
	[ "${stderr_lines[0]}" = "flimflam bisect: --build-cmd: 'make 'install': a quote is not closed" ]
	run -2 --separate-stderr flimflam bisect -C "$BATS_TEST_TMPDIR" --good "$good" --bad "$bad" --build-cmd true
	[[ "${stderr_lines[0]}" == "flimflam bisect: -C: '$BATS_TEST_TMPDIR' is not in a git checkout" ]]
	run -2 --separate-stderr flimflam bisect -C "$repo" --resume -w iperf3
	run -1 --separate-stderr flimflam bisect -C "$repo" --resume
	[ "$stderr" = "flimflam bisect: --resume: no flimflam bisect is under way in $repo" ]
	run -1 git -C "$repo" bisect log
	# An existing results file is refused before git bisect starts.
	touch "$BATS_TEST_TMPDIR/r.jsonl"
	run -1 --separate-stderr flimflam bisect -C "$repo" --good "$good" --bad "$bad" --build-cmd true \
		--output "$BATS_TEST_TMPDIR/r.jsonl" --cache "$BATS_TEST_TMPDIR/cache"
	[[ "$stderr" == *"exists (bisect does not replace a results file)" ]]
	run -1 git -C "$repo" bisect log
}
