#!/bin/bash
# bench/bisect.sh - how often and how fast flimflam bisect names the commit
# that added a known change of relay CPU per GB. The fixture of
# t/bisect.bats (t/fixtures/bisect/fixture.sh): -m commits, each building a
# wrapper of nginx that preloads bench/power-shim.c, the shim's cost (-c
# percent of the base's relay CPU per GB) switched on at commit -K. First
# the calibration the tests make (an A/A bench of -a rounds: the pairs'
# noise, a run's seconds), then -n tries of `flimflam bisect` of builtin
# through nginx with 1 s windows and the rounds a step needs at that noise
# (or -R), each stopped (Ctrl-C) at -b seconds. See bench/README.md.
set -euo pipefail
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/bisect.sh [-c CHANGE_PCT] [-m COMMITS] [-K K] [-n TRIES] [-b BUDGET_S] [-a CAL_ROUNDS]
                       [-R MAX_ROUNDS] [-k DIR]"
change=20 commits=8 k=6 tries=3 budget=600 cal=8 max='' keep=''
while getopts ':hc:m:K:n:b:a:R:k:' opt; do
	case $opt in
	c) change=$OPTARG ;;
	m) commits=$OPTARG ;;
	K) k=$OPTARG ;;
	n) tries=$OPTARG ;;
	b) budget=$OPTARG ;;
	a) cal=$OPTARG ;;
	R) max=$OPTARG ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
[[ "$change" =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error "-c: '$change' is not a percentage"
whole_numbers "$commits" "$k" "$tries" "$budget" "$cal" ${max:+"$max"}
if [ "$k" -lt 2 ] || [ "$k" -gt "$commits" ]; then usage_error "-K: '$k' is not a commit from 2 to $commits"; fi
if [ "$tries" -lt 1 ] || [ "$cal" -lt 3 ]; then usage_error "-n is at least 1 and -a at least 3"; fi

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -x "$top/bin/ff-bisect" ] || { echo "bisect.sh: '$top/bin/ff-bisect' is missing: run make" >&2; exit 1; }
command -v nginx >/dev/null || { echo "bisect.sh: nginx is not on PATH" >&2; exit 1; }
export PATH="$top/bin:$PATH"
# shellcheck source=t/fixtures/bisect/fixture.sh
. "$top/t/fixtures/bisect/fixture.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${keep:-$tmp}
mkdir -p "$out"
export FLIMFLAM_RUNS=$out/runs

load0=$(cut -d' ' -f1 /proc/loadavg)
t0=$(date +%s)
bisect_calibrate "$out/shim" "$cal"
need=$(bisect_rounds "$out/shim" "$change")
read -r _ rounds _ max0 <<<"$(bisect_budget "${max:-$need}")"
max=${max:-$max0}
sd=$(awk -v s="$(cat "$out/shim/pairsd")" 'BEGIN { printf "%.1f", s * 100 }')
spr=$(cat "$out/shim/secs_per_run")
echo "bisect.sh: calibration $(($(date +%s) - t0)) s ($cal rounds): relay CPU per GB pairs vary ${sd}% (rms of log ratios), $spr s a run, $(cat "$out/shim/pergb") s/GB"
echo "bisect.sh: +${change}% needs about $need rounds a step; given --rounds $rounds --max-rounds $max, ${budget} s a try"

bisect_repo "$out/fixture" "$out/shim" "$commits" "$k" "$change"
want=$(bisect_commit "$out/fixture" "$k")
right=0 secs=()
for i in $(seq "$tries"); do
	repo=$out/try-$i
	rm -rf "$repo" "$out/try-$i.jsonl"
	git clone -q "$out/fixture" "$repo"
	a=$(date +%s) st=0
	timeout -s INT "$budget" flimflam bisect -C "$repo" --good "$(bisect_commit "$repo" 1)" \
		--bad "$(bisect_commit "$repo" "$commits")" --build-cmd 'sh build.sh {prefix}' --cache "$out/cache" \
		--output "$out/try-$i.jsonl" -w builtin -r nginx -p tcp --warmup 0 --duration 1 --no-flamegraph \
		--rounds "$rounds" --max-rounds "$max" >"$out/try-$i.txt" 2>"$out/try-$i.err" || st=$?
	s=$(($(date +%s) - a))
	secs+=("$s")
	named=$(sed -n 's/^First bad commit: \([0-9a-f]*\) .*/\1/p' "$out/try-$i.txt")
	steps=$(sed -n 's/^Steps: \([0-9]*\) .*/\1/p' "$out/try-$i.txt")
	runs=$(sed -n 's/^Steps: .*, \([0-9]*\) runs;.*/\1/p' "$out/try-$i.txt")
	used=$(awk '$1 ~ /^[0-9]+$/ && length($2) == 12 && $2 ~ /^[0-9a-f]+$/ { n += $4 } END { print n + 0 }' "$out/try-$i.txt")
	if [ "$named" = "$want" ]; then
		verdict="c$k (right)"
		right=$((right + 1))
	elif [ -n "$named" ]; then
		verdict="c$(git -C "$repo" log -1 --format=%s "$named" | sed 's/^c\([0-9]*\):.*/\1/') (wrong)"
	elif [ "$st" = 130 ] || [ "$st" = 124 ]; then
		verdict="none (stopped at ${budget} s)"
		steps=$(jq '.steps | length' "$repo/.git/flimflam-bisect.json" 2>/dev/null || echo -)
		runs=$(jq -s '[.[] | select(.event == "case")] | length' "$out/try-$i.jsonl" 2>/dev/null || echo 0)
		used="about $((runs / 3))"
		git -C "$repo" bisect reset -q 2>/dev/null || true
	else
		verdict="none (exit $st: $(grep -m1 -v '^$' "$out/try-$i.txt" "$out/try-$i.err" | head -c 120))"
	fi
	echo "try $i: named ${verdict}; ${steps:--} steps, ${used:--} rounds, ${runs:--} runs, $s s"
done
med=$(printf '%s\n' "${secs[@]}" | sort -n | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
echo "bisect.sh: +${change}%, c$k of $commits: right $right of $tries, median ${med} s a try; pairs vary ${sd}%, $spr s a run; load $load0 at the start, $(cut -d' ' -f1 /proc/loadavg) at the end"
