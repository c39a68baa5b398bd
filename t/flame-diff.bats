#!/usr/bin/env bats
# flimflam flamegraph --build A --build B: the differential page of two
# real recordings of one nginx (two copies, each in a prefix of its own)
# matches their relays by role and program, not by pid, and says when
# either side has too few samples to rank what grew and shrank.

bats_require_minimum_version 1.5.0
load helper

setup() {
	skip_unless_program nginx perf h2load
	ff-capture --check record 2>/dev/null || skip "perf cannot record here: $(ff-capture --check record 2>&1)"
	A="$BATS_TEST_TMPDIR/a"
	B="$BATS_TEST_TMPDIR/b"
	mkdir -p "$A/sbin" "$A/lib" "$B/sbin" "$B/lib"
	cp "$(command -v nginx)" "$A/sbin/nginx"
	cp "$(command -v nginx)" "$B/sbin/nginx"
	cd "$BATS_TEST_TMPDIR"
}

@test "flamegraph --build a --build b: one tower per relay on both sides; the event counts each side's samples" {
	local try
	# A loaded machine can leave a relay unsampled in 2 s (a thin side, said
	# as such); the matching is judged on recordings thick enough to rank.
	for try in 1 2 3; do
		rm -f perf-a.data perf-b.data
		run_steady flimflam flamegraph -r nginx -w h2load-h1 -p http1 --warmup 0 --duration 3 --freq 3989 \
			--build "a=$A" --build "b=$B" --json
		printf '%s\n' "$output" >ev.jsonl
		jq -e 'select(.event == "flamegraph_diff") | .too_few_samples == false' ev.jsonl >/dev/null && break
		echo "# try $try: a side had fewer than 1000 samples, once more" >&3
	done
	jq -e -s 'map(select(.event == "flamegraph_diff")) | length == 1' ev.jsonl
	diff=$(jq -c 'select(.event == "flamegraph_diff")' ev.jsonl)
	echo "$diff"
	# The counts are the recordings' own.
	na=$(perf script -i perf-a.data -F pid 2>/dev/null | grep -c .)
	nb=$(perf script -i perf-b.data -F pid 2>/dev/null | grep -c .)
	jq -e --argjson na "$na" --argjson nb "$nb" '
		.base_samples == $na and .new_samples == $nb and $na > 0 and $nb > 0 and
		.too_few_samples == ($na < 1000 or $nb < 1000)' <<<"$diff"
	towers flamegraph-a-vs-b.html
	# The differential page: R1 and R2, each with samples on both sides (a
	# pid in the towers' names gave every tower of b no base at all).
	page_data flamegraph-a-vs-b.html >d.json
	jq -e '. as $d | [range(0; .nodes | length; 3) | select($d.nodes[. + 1] == 1) |
		{name: $d.names[$d.nodes[.]], new: $d.nodes[. + 2], base: $d.base[. / 3]}] as $t |
		($t | map(.name)) == ["R1 nginx", "R2 nginx"] and all($t[]; .new > 0 and .base > 0) and
		.too_few_samples == ($d.base_total < 1000 or $d.total < 1000) and .min_samples == 1000' d.json
	# The ranking is ff-flame's (--changes, kept in the run's directory), relayed as it said it.
	rundir=$(jq -r 'select(.event == "start") | .run_dir // empty' ev.jsonl | head -n 1)
	changes=$(ls "$rundir/changes.json" "$(dirname "$rundir")/changes.json" 2>/dev/null | head -n 1)
	jq -e --argjson d "$diff" '.event == "changes" and .base_samples == $d.base_samples and
		.new_samples == $d.new_samples and ([.grew[].function] == [$d.grew[].function]) and
		([.shrank[].function] == [$d.shrank[].function])' "$changes"
	# So are the folded stacks it ranks (ff-flame --folded of the same): stacks of both.
	folded="$BATS_TEST_TMPDIR/diff.folded"
	ff-flame --folded -o "$folded" --events "$(dirname "$changes")/b/events.jsonl" \
		--base-events "$(dirname "$changes")/a/events.jsonl" --diff perf-a.data perf-b.data
	[ -s "$folded" ]
	[ "$(cut -d';' -f1 "$folded" | sort -u)" = $'R1 nginx\nR2 nginx' ]
	awk '{ t += $NF; if ($(NF - 1) > 0) m += $NF } END { print m / t; exit !(m / t >= 0.3) }' "$folded"
}

@test "flamegraph --build a --build b: the summary prints both counts and the caution, and the page a banner" {
	# --freq 49 over 2 s: a few dozen samples a side, too few to rank.
	run_steady flimflam flamegraph -r nginx -w h2load-h1 -p http1 --warmup 0 --duration 2 --freq 49 \
		--build "a=$A" --build "b=$B"
	grep -qE '^  Samples: +[0-9]+ in a, [0-9]+ in b$' <<<"$output"
	grep -qx '  Too few samples to rank: fewer than 1000 in .*; the changes below are' <<<"$output"
	# The caution comes before the lists it is about.
	[ "$(grep -n 'Too few samples' <<<"$output" | cut -d: -f1)" -lt "$(grep -n 'grew the most' <<<"$output" | cut -d: -f1)" ]
	command -v chromium >/dev/null || skip "chromium is not installed (make deps)"
	prof=$(mktemp -d "$BATS_TEST_TMPDIR/chrome.XXXXXX")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$prof" --virtual-time-budget=3000 \
		--dump-dom "file://$BATS_TEST_TMPDIR/flamegraph-a-vs-b.html" >dom 2>/dev/null
	grep -qE '<p id="thin">Too few samples to rank the changes: the base has [0-9,]+, the new [0-9,]+; at least 1,000 on each side' dom
}
