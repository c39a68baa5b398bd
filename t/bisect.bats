#!/usr/bin/env bats
# flimflam bisect (issue 28): a fixture git repository whose commits build
# an nginx "relay" (a wrapper of the real nginx that preloads
# bench/power-shim.c, adding CPU per byte written), with the cost switched
# on at commit K; bisect must name K, skip a commit that does not build, and
# say when GOOD and BAD do not differ. Short windows and few rounds: the
# cost is 20% of the relay's CPU per GB, the steadiest metric.

bats_require_minimum_version 1.5.0
load helper

setup_file() {
	command -v nginx >/dev/null || return 0
	local d="$BATS_FILE_TMPDIR/shim" nginx
	nginx=$(command -v nginx)
	mkdir -p "$d"
	# The shim, and what one turn of its loop costs here.
	"$TOP/bench/power-shim.sh" "$d" 50000000 >"$d/ns_per_loop"
	# The base's relay CPU per GB here, now (as bench/power.sh measures it).
	printf '#!/bin/sh\nexec %s "$@"\n' "$nginx" >"$d/nginx-base"
	chmod +x "$d/nginx-base"
	(cd "$d" && ff-bench -w builtin -r nginx -p tcp --warmup 0 --duration 1 --build "base=$d/nginx-base" \
		--repeat 3 --output cal.jsonl --force >/dev/null 2>&1) || true
	jq -s '[.[] | select(.status == "ok") | ([.resources.relays[].cpu_fraction] | add) /
		(.result.bits_per_s / 8e9)] | sort | .[length / 2 | floor] // 4' "$d/cal.jsonl" >"$d/pergb"
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
	# 8 commits: git bisect first tries c4, which does not build.
	fixture_repo "$repo" 8 6 20 4
	k=$(commit_of "$repo" 6)
	state="$repo/.git/flimflam-bisect.json"
	env "$mark" flimflam bisect -C "$repo" --good "$(commit_of "$repo" 1)" --bad "$(commit_of "$repo" 8)" \
		--build-cmd 'sh build.sh {prefix}' --cache "$cache" --output "$out" "${FAST[@]}" --rounds 6 --max-rounds 12 \
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
	# GOOD and BAD are the same relay: at 6 rounds the paired test calls them
	# different when all 6 pairs lean one way, 2 in 64 (its alpha at work, not
	# a bug). Such a try is said and made once more; a tool that always names
	# a commit still fails.
	local try
	for try in 1 2; do
		run --separate-stderr flimflam bisect -C "$repo" --good "$(commit_of "$repo" 1)" --bad "$(commit_of "$repo" 8)" \
			--build-cmd 'sh -c "sh build.sh \"\$FLIMFLAM_PREFIX\""' --cache "$BATS_TEST_TMPDIR/cache" \
			--output "$BATS_TEST_TMPDIR/r$try.jsonl" "${FAST[@]}" --rounds 6 --max-rounds 6
		echo "$output"; echo "$stderr"
		if [ "$try" -eq 1 ] && [ "$status" -eq 0 ] && [[ "$output" == *"First bad commit"* ]]; then
			echo "# A/A: GOOD and BAD called different at 6 rounds (a false positive, 2 in 64): once more" >&3
			git -C "$repo" bisect reset -q
			continue
		fi
		break
	done
	[ "$status" -eq 1 ]
	assert_line --regexp '^GOOD and BAD do not differ: relay CPU s/GB [-+][0-9.]+% .* over [0-9]+ rounds .*no commit is named$'
	refute_output --partial "First bad commit"
	[[ "$stderr" == *"step 1: $(commit_of "$repo" 4 | cut -c1-12) is skipped: ff-bench refused its build"* ]]
	# The bisect is reset: the checkout is back on its branch.
	[ "$(git -C "$repo" symbolic-ref --short HEAD)" = "$branch" ]
	run -1 git -C "$repo" bisect log
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
