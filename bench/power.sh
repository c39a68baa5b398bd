#!/bin/bash
# bench/power.sh - how soon bench --repeat auto finds a known change in
# relay CPU per GB, and how often it calls an A/A bench better or worse.
# Two nginx builds, each a wrapper of /usr/sbin/nginx: "base" as it is,
# "new" with bench/power-shim.c preloaded, adding a known CPU cost per
# byte written (-c percent of the base's relay CPU per GB; 0: A/A). Each
# try is one `ff-bench --build base=... --build new=... --repeat
# auto:BUDGET` of builtin through nginx. Then the simulation of the same
# sequence (t/unit/power-sim) on the log ratios these tries measured. See
# bench/README.md.
set -euo pipefail

usage="usage: bench/power.sh [-c CHANGE_PCT] [-b BUDGET] [-n TRIES] [-w WARMUP] [-d DURATION] [-g S_PER_GB] [-t] [-k DIR]"
change=5 budget=5m tries=1 warmup=1 duration=3 pergb='' keep='' together=''
while getopts c:b:n:w:d:g:k:th o; do
	case $o in
	c) change=$OPTARG ;;
	b) budget=$OPTARG ;;
	n) tries=$OPTARG ;;
	w) warmup=$OPTARG ;;
	d) duration=$OPTARG ;;
	g) pergb=$OPTARG ;;
	k) keep=$OPTARG ;;
	t) together=--together ;;
	h) echo "$usage"; exit 0 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "power.sh: unexpected argument '$1'" >&2; echo "$usage" >&2; exit 2; }
[[ "$change" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "power.sh: -c: '$change' is not a percentage" >&2; exit 2; }
[[ "$tries" =~ ^[1-9][0-9]*$ ]] || { echo "power.sh: -n: '$tries' is not a positive whole number" >&2; exit 2; }
[ -z "$pergb" ] || [[ "$pergb" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "power.sh: -g: '$pergb' is not a number" >&2; exit 2; }

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for p in bin/ff-bench t/unit/power-sim; do
	[ -x "$top/$p" ] || { echo "power.sh: '$top/$p' is missing: run make" >&2; exit 1; }
done
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "power.sh: nginx is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${keep:-$tmp}
mkdir -p "$out"

# The shim, and what one turn of its loop costs in CPU time here.
ns_per_loop=$("$top/bench/power-shim.sh" "$tmp")

# The two builds: wrappers alike but for the cost.
# shellcheck source=bench/shim-builds.sh
. "$top/bench/shim-builds.sh"
wrapper() { shim_wrapper "$1" "$2" "$tmp/power-shim.so" "$nginx"; }
bench_args=(-w builtin -r nginx -p tcp --warmup "$warmup" --duration "$duration")
start=$(date +%s)

# The base's relay CPU per GB, unless given: a short bench of it.
if [ -z "$pergb" ]; then
	wrapper "$tmp/nginx-base" 0
	"$top/bin/ff-bench" "${bench_args[@]}" --build "base=$tmp/nginx-base" --repeat 3 \
		--output "$out/calibration.jsonl" --force >/dev/null 2>&1
	pergb=$(shim_pergb "$out/calibration.jsonl")
fi
loops=$(shim_loops "$change" "$pergb" "$ns_per_loop")
wrapper "$tmp/nginx-base" 0
wrapper "$tmp/nginx-new" "$loops"
echo "power.sh: base relay CPU ${pergb} s/GB; +${change}% is ${loops} turns (${ns_per_loop} ns each) per KiB written; budget ${budget} a try"

found=0 wrong=0 equiv=0 undecided=0
: >"$out/pairs.txt"
for i in $(seq "$tries"); do
	t0=$(date +%s)
	"$top/bin/ff-bench" "${bench_args[@]}" --build "base=$tmp/nginx-base" --build "new=$tmp/nginx-new" \
		${together:+"$together"} --repeat "auto:$budget" --output "$out/try-$i.jsonl" --force >"$out/try-$i.txt" 2>"$out/try-$i.err" || true
	t1=$(date +%s)
	line=$(grep ' relay_cpu_s_per_gb ' "$out/try-$i.txt" | tail -1)
	decision=$(awk '{ print $NF }' <<<"$line")
	rounds=$(awk '{ print $(NF - 1) }' <<<"$line")
	chg=$(grep -o '[-+][0-9.]*% \[[^]]*\]' <<<"$line" || true)
	case $decision in
	worse) if [ "$change" != 0 ]; then found=$((found + 1)); else wrong=$((wrong + 1)); fi ;;
	better) wrong=$((wrong + 1)) ;;
	equivalent) equiv=$((equiv + 1)) ;;
	*) undecided=$((undecided + 1)) ;;
	esac
	echo "try $i: ${decision:-no decision} after $rounds rounds, $((t1 - t0)) s: relay CPU/GB $chg"
	# The pairs' log ratios of relay CPU per GB, for the simulation.
	shim_pairs "$out/try-$i.jsonl" >>"$out/pairs.txt"
done
n=$(wc -l <"$out/pairs.txt")
echo "power.sh: $tries tr$([ "$tries" = 1 ] && echo y || echo ies) of +${change}%: found $found, wrong $wrong, equivalent $equiv, undecided $undecided; $(( $(date +%s) - start )) s in all"
if [ "$n" -ge 2 ]; then
	# Rounds a budget holds: this bench's own pace.
	secs=$(jq -s '[.[] | .elapsed_s // empty] | add / length' "$out"/try-*.jsonl)
	echo "power.sh: $n pairs measured, $(awk -v s="$secs" 'BEGIN { printf "%.1f", s }') s a run; the simulation draws their log ratios (centred, random signs):"
	awk '{ s += $1; n++; v[n] = $1 } END { for (i = 1; i <= n; i++) print v[i] - s / n }' "$out/pairs.txt" >"$tmp/centred.txt"
	for r in 600 300; do
		# A round is two runs, one after the other, or (-t) side by side.
		rounds=$(awk -v s="$secs" -v r="$r" -v k="$([ -n "$together" ] && echo 1 || echo 2)" 'BEGIN { printf "%d", r / (k * (s + 0.2)) }')
		for c in 0 2 5; do
			echo "  ${r} s (${rounds} rounds), +${c}%: $("$top/t/unit/power-sim" -t 2000 -r "$rounds" -d "$tmp/centred.txt" -e "$c" cs)"
		done
	done
fi
