#!/bin/bash
# bench/tls.sh - what TLS on the link between the relays costs each relay,
# in CPU seconds per GB carried.
#
# For each relay and workload, -n rounds of two `flimflam run --json`,
# taking turns: one plain, one with --tls. Per run and relay (R1, R2): the
# relay's CPU seconds over the window (the `resources` event) divided by
# the GB the workload received in it (the `result` event's bits / 8e9).
# Prints the medians, and TLS over plain, per relay. skrouterd is measured
# when it is on PATH. The README's figure comes from this script.

set -eu
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/tls.sh [-n RUNS] [-r RELAYS] [-w WORKLOAD] [-W WARMUP] [-d DURATION] [-j JOBS]"
runs=3 relays=nginx,nghttpx,skrouterd workload='' warmup=2 duration=5 jobs=2
while getopts ':hn:r:w:W:d:j:' opt; do
	case $opt in
	n) runs=$OPTARG ;;
	r) relays=$OPTARG ;;
	w) workload=$OPTARG ;;
	W) warmup=$OPTARG ;;
	d) duration=$OPTARG ;;
	j) jobs=$OPTARG ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
whole_numbers "$runs" "$warmup" "$duration" "$jobs"

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The workload and protocol a relay carries bytes with: builtin over tcp,
# or h2load-h1 over http1 for nghttpx (it carries no plain TCP).
case_of() {
	if [ -n "$workload" ]; then
		echo "$workload tcp"
	elif [ "$1" = nghttpx ]; then
		echo "h2load-h1 http1"
	else
		echo "builtin tcp"
	fi
}

echo "tls.sh: $runs round(s) of plain and --tls per relay, ${duration} s windows, $(load_seen)"
printf '%-10s %-10s %-4s %12s %12s %8s   %s\n' relay workload role 'plain s/GB' 'tls s/GB' ratio 'TLS negotiated'
IFS=, read -ra rl <<<"$relays"
for relay in "${rl[@]}"; do
	if ! command -v "$relay" >/dev/null; then
		echo "tls.sh: $relay is not on PATH: not measured" >&2
		continue
	fi
	read -r wl proto <<<"$(case_of "$relay")"
	: >"$tmp/$relay"
	for ((i = 1; i <= runs; i++)); do
		for mode in plain tls; do
			args=(run --json -r "$relay" -w "$wl" -p "$proto" --jobs "$jobs" --warmup "$warmup" --duration "$duration")
			[ "$mode" = tls ] && args+=(--tls)
			if ! "$ff" "${args[@]}" >"$tmp/ev" 2>"$tmp/err"; then
				# The stage's own words, else flimflam's.
				echo "tls.sh: $relay $mode run $i failed: $(grep -m1 '^ff-' "$tmp/err" || tail -1 "$tmp/err")" >&2
				continue
			fi
			# mode role cpu_s_per_gb tls-description
			jq -r -s --arg m "$mode" '
				(map(select(.event == "result"))[0].bits / 8e9) as $gb |
				(map(select(.event == "topology"))[0].tls_links // [] |
				 map(.protocol + " " + .cipher) | join(",")) as $t |
				map(select(.event == "resources"))[0].relays[] |
				"\($m) \(.role) \(.cpu_s / $gb) \(if $t == "" then "-" else $t end)"' \
				"$tmp/ev" >>"$tmp/$relay"
		done
	done
	for role in r1 r2; do
		p=$(awk -v r="$role" '$1 == "plain" && $2 == r {print $3}' "$tmp/$relay" | median)
		t=$(awk -v r="$role" '$1 == "tls" && $2 == r {print $3}' "$tmp/$relay" | median)
		neg=$(awk -v r="$role" '$1 == "tls" && $2 == r {$1 = $2 = $3 = ""; print substr($0, 4); exit}' "$tmp/$relay")
		ratio=$(awk -v p="$p" -v t="$t" 'BEGIN { if (p + 0 > 0 && t != "-") printf "%.2f", t / p; else print "-" }')
		printf '%-10s %-10s %-4s %12s %12s %8s   %s\n' "$relay" "$wl" "$role" \
			"$(printf '%.3f' "$p" 2>/dev/null || echo -)" "$(printf '%.3f' "$t" 2>/dev/null || echo -)" \
			"$ratio" "${neg:--}"
	done
done
