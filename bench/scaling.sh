#!/bin/bash
# bench/scaling.sh - builtin over nginx as --jobs grows: does the relays'
# CPU and the throughput grow, and does flimflam's own CPU stay flat?
#
# For each --jobs (default 1, 2, 4, 8, 16, 64, 256), -n rounds taking
# turns, one `flimflam run --json` followed by common.sh's watch_run:
# throughput (the result event), the relays' CPU (the resources event,
# R1 + R2, each 1.0 = one CPU), the client's and server's CPU, and
# flimflam's own (the dispatcher and every ff-* stage, from schedstat over
# the window). Target: flimflam's own CPU flat as jobs grow (no
# per-connection work in the tool): under 1% of one CPU at every level, and
# at the most jobs within 0.1 percentage point of the fewest.

set -eu
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/scaling.sh [-j JOBS,...] [-r RELAY] [-w WORKLOAD] [-W WARMUP] [-d DURATION]
                          [-n RUNS] [-k DIR]"
joblist=1,2,4,8,16,64,256 relay=nginx workload=builtin warmup=2 duration=5 runs=2 keep=
while getopts ':hj:r:w:W:d:n:k:' opt; do
	case $opt in
	j) joblist=$OPTARG ;;
	r) relay=$OPTARG ;;
	w) workload=$OPTARG ;;
	W) warmup=$OPTARG ;;
	d) duration=$OPTARG ;;
	n) runs=$OPTARG ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
# shellcheck disable=SC2086 # the list's numbers, a word each
whole_numbers "$warmup" "$duration" "$runs" ${joblist//,/ }
if [ "$runs" -lt 1 ] || [ "$duration" -lt 2 ]; then
	echo "scaling.sh: need -n 1 or more and -d 2 or more" >&2
	exit 2
fi

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"

runs_dir

IFS=, read -r -a jl <<<"$joblist"
echo "scaling: $workload over $relay, --warmup $warmup --duration $duration, jobs ${joblist//,/ }; $runs rounds taking turns; $(load_seen) at the start"
: >"$tmp/results"
for ((run = 1; run <= runs; run++)); do
	for j in "${jl[@]}"; do
		d=$tmp/$j.$run
		watch_run "$d" -r "$relay" -w "$workload" --jobs "$j" --warmup "$warmup" --duration "$duration"
		read -r _ st <"$d/wall"	# wall time: not this script's measure
		if [ "$st" -ne 0 ] || [ ! -s "$d/cpu.end" ]; then
			echo "scaling.sh: --jobs $j failed (status $st): $(tail -n 1 "$d/stderr")" >&2
			continue
		fi
		read -r _ tn g1 <<<"$(cpu_share "$d" tool)"
		read -r ct _ g2 <<<"$(cpu_share "$d" client)"
		read -r sv _ g3 <<<"$(cpu_share "$d" server)"
		if [ "$g1$g2$g3" != 000 ]; then
			echo "scaling.sh: --jobs $j, round $run: the window had closed before the second reading (a loaded machine); not counted" >&2
			continue
		fi
		bps=$(awk '{ sub(/^[0-9]+ /, "") } /^\{"event":"result"/' "$d/events" | jq '.bits_per_s')
		rel=$(awk '{ sub(/^[0-9]+ /, "") } /^\{"event":"resources"/' "$d/events" |
			jq '[.relays[].cpu_fraction] | add // 0')
		echo "$j $run $bps $rel $ct $sv $tn $(cut -d' ' -f1 /proc/loadavg)" >>"$tmp/results"
	done
done

echo
printf '%6s %12s %10s %10s %10s %12s  %s\n' jobs "Gbit/s" "relays %" "client %" "server %" "flimflam %" load
for j in "${jl[@]}"; do
	line=$j
	for col in 3 4 5 6 7; do
		line="$line $(awk -v j="$j" -v c="$col" '$1 == j { print $c }' "$tmp/results" | median)"
	done
	loads=$(awk -v j="$j" '$1 == j { print $8 }' "$tmp/results" | sort -g | sed -n '1p;$p' | paste -sd-)
	read -r _ bps rel ct sv tn <<<"$line"
	[ "$bps" != - ] || { printf '%6s %12s\n' "$j" "(no run counted)"; continue; }
	awk -v j="$j" -v b="$bps" -v r="$rel" -v c="$ct" -v s="$sv" -v t="$tn" -v l="$loads" 'BEGIN {
		printf "%6d %12.3f %10.1f %10.1f %10.1f %12.4f  %s\n", j, b / 1e9, 100 * r, 100 * c,
			100 * s, 100 * t, l }'
	echo "$j $tn" >>"$tmp/own"
done
echo "(medians of the rounds; CPU as % of one CPU over the window; relays: R1 + R2)"
[ -s "$tmp/own" ] || exit 1
awk '
	NR == 1 { first = $2; fj = $1 }
	{ last = $2; lj = $1; if ($2 > max) max = $2 }
	END {
		flat = (last - first) * 100 <= 0.1
		printf "flimflam own CPU: %.4f%% at %d jobs, %.4f%% at %d jobs, at most %.4f%%: %s\n",
			100 * first, fj, 100 * last, lj, 100 * max,
			(max * 100 < 1 && flat) ? "flat and under 1% (target met)" : "NOT flat or not under 1%"
		exit !(max * 100 < 1 && flat)
	}' "$tmp/own"
