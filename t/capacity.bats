#!/usr/bin/env bats
# Capacity at a latency target (bench --slo, issue 27 item 3): the search
# finds a knee put there on purpose. The relay is nginx with
# t/fixtures/capacity/pace-shim.c preloaded: each process writes at most
# FF_SHIM_WRITES_PER_S times a second, whatever else loads the machine, so
# one nginx (--hops 1, one worker) that writes twice a transaction (the
# request on, the response back) keeps 200 transactions a second at most:
# a known capacity. Each search test takes about 40 s here (5 to 7 runs of
# 1 + 3 s, a relay started for each), twice that when a loaded machine asks
# for a second search; the last test, h2load's --rate, about 20 s.

bats_require_minimum_version 1.5.0
load helper

setup_file() {
	command -v nginx >/dev/null && command -v gcc >/dev/null || return 0
	gcc -O2 -g -Wall -shared -fPIC -o "$BATS_FILE_TMPDIR/pace-shim.so" \
		"$TOP/t/fixtures/capacity/pace-shim.c" -ldl
	printf '#!/bin/sh\nFF_SHIM_WRITES_PER_S=400 LD_PRELOAD=%s exec %s "$@"\n' \
		"$BATS_FILE_TMPDIR/pace-shim.so" "$(command -v nginx)" >"$BATS_FILE_TMPDIR/nginx-paced"
	chmod +x "$BATS_FILE_TMPDIR/nginx-paced"
}

# The target is loose (p99 at most 1 s): what fails above the capacity is
# the queue the relay cannot drain, its achieved rate short of the asked
# (by more than 2%) and its latency growing with it.
PACED=(-r nginx --hops 1 --workers 1 --warmup 1 --duration 3 --jobs 4)

# search WORKLOAD START: bench --slo p99=1000 from START; CAP the capacity
# found, HOW how the search ended, both from the summary's table. A run the
# machine stalls (a busy machine, run_steady) runs the search again,
# replacing its file.
search() {
	run_steady flimflam bench -w "$1" "${PACED[@]}" --rate "$2" --slo p99=1000 \
		--build "paced=$BATS_FILE_TMPDIR/nginx-paced" --output "$BATS_TEST_TMPDIR/$1.jsonl" --force
	echo "$output" >"$BATS_TEST_TMPDIR/$1.out"
	local row
	row=$(grep -E "^$1 jobs=4 +nginx \(1 hop\) paced +tcp " <<<"$output")
	CAP=$(sed -E 's/.* ([0-9]+)\/s +[0-9]+: .*/\1/' <<<"$row")
	HOW=$(sed -E 's/.* [0-9]+\/s +[0-9]+: //' <<<"$row")
	echo "# $1 from $2/s: $CAP/s ($HOW)" >&3
}

# within CAP KNEE: CAP within 10% of KNEE.
within() {
	awk -v c="$1" -v k="$2" 'BEGIN { exit !(c >= 0.9 * k && c <= 1.1 * k) }'
}

# found_near WORKLOAD START KNEE: the search finds KNEE within 10%, and
# says it found a knee. A loaded machine may stall a run below the knee
# (its rate then short of the asked): a search that misses is said, and
# run again, three times in all. Three misses on a machine whose load is
# over twice its CPUs (a fresh-clone run beside other work: load 15 to 20
# on two) say so and skip: what the machine did, not what the search did.
found_near() {
	local try
	for try in 1 2 3; do
		search "$1" "$2"
		within "$CAP" "$3" && [[ "$HOW" == "knee found: "* ]] && break
		echo "# $1: $CAP/s is not within 10% of $3/s (the machine: $(cut -d' ' -f1-3 /proc/loadavg))" >&3
	done
	if ! within "$CAP" "$3" || [[ "$HOW" != "knee found: "* ]]; then
		awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v n="$(nproc)" 'BEGIN { exit !(l > 2 * n) }' &&
			skip "three searches missed on a machine at load $(cut -d' ' -f1 /proc/loadavg) with $(nproc) CPUs: the last found $CAP/s ($HOW)"
	fi
	[[ "$HOW" == "knee found: "* ]]
	within "$CAP" "$3"
	# Every run is a record with its verdict; the rate the search names met it.
	jq -se --argjson c "$CAP" 'all(.slo.percentile == "p99" and .slo.ms == 1000) and
		any(.config.rate_per_s == $c and .slo.met) and
		all(if .config.rate_per_s > $c then .slo.met | not else true end)' "$BATS_TEST_TMPDIR/$1.jsonl"
}

@test "capacity: bench --slo finds builtin-rr's knee at a relay held to 200 transactions a second, within 10%" {
	skip_unless_program nginx gcc
	found_near builtin-rr 120 200
}

# h2load's requests over the same relay: how many writes a request takes
# is nginx's business (HTTP/2 frames over its TCP proxy, fewer and fuller
# the busier it is), so its capacity is not known by construction: the
# paced relay's closed-loop rate, measured first, bounds it (a client
# keeps one request in flight either way).
@test "capacity: bench --slo searches h2load's request rate too, and finds a knee no higher than the paced relay's closed-loop rate" {
	skip_unless_program nginx gcc nghttpd h2load
	run_steady flimflam run --json -w h2load "${PACED[@]}" --build "paced=$BATS_FILE_TMPDIR/nginx-paced"
	knee=$(jq -sr '.[] | select(.event == "result") | .ops_per_s | round' <<<"$output")
	echo "# h2load's closed-loop rate through the paced relay: $knee/s" >&3
	(( knee > 20 ))
	search h2load $((knee / 2))
	[[ "$HOW" == "knee found: "* ]]
	awk -v c="$CAP" -v k="$knee" 'BEGIN { exit !(c >= 0.25 * k && c <= 1.1 * k) }'
	jq -se --argjson c "$CAP" 'any(.config.rate_per_s == $c and .slo.met)' "$BATS_TEST_TMPDIR/h2load.jsonl"
	# The rate asked is h2load's requests a second over all its clients.
	jq -se 'all(.config.workload == "h2load" and (.result.rate_per_s == .config.rate_per_s))' \
		"$BATS_TEST_TMPDIR/h2load.jsonl"
}

@test "capacity: h2load takes --rate, requests a second over all its clients: a sweep's points, the result and the summary say it" {
	skip_unless_program nghttpd h2load
	cd "$BATS_TEST_TMPDIR"
	run_steady flimflam bench -w builtin,h2load -r none -p tcp --jobs 2 --rate 200,400 --warmup 1 --duration 2 --output r.jsonl
	# builtin takes no rate: one case; h2load one per rate.
	run -0 jq -sr 'map("\(.config.workload) \(.config.rate_per_s)") | join(",")' r.jsonl
	[ "$output" = "builtin null,h2load 200,h2load 400" ]
	# Achieved about as asked (h2load --rps 100 and 200 a client), p99.9 beside p99.
	jq -se '[.[] | select(.config.workload == "h2load") | .result |
		.rate_per_s > 0 and (.ops_per_s / .rate_per_s) > 0.8 and (.ops_per_s / .rate_per_s) < 1.2 and
		(.latency_p999_us | type) == "number"] | length == 2 and all' r.jsonl
	run_steady flimflam run -w h2load -r none -p tcp --jobs 2 --rate 300 --warmup 1 --duration 2
	assert_output --regexp $'\n  Rate asked:  300/s, (NOT kept: )?[0-9.]+ /s achieved\n'
}
