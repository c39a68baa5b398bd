#!/bin/bash
# bench/together.sh - do a round's builds vary less side by side
# (ff-bench --together) than one after the other, and do they show the
# same change? Two nginx builds as in power.sh ("new" with
# bench/power-shim.c adding -c percent of the base's relay CPU per GB;
# -c 0: one build under two labels), benched both ways in alternating
# blocks of -r rounds (-k blocks of each), builtin through nginx. Prints,
# for each way, the pairs' log ratios of relay CPU per GB (their sd, what a
# paired test must see through), the change with its 95% interval, and
# the seconds a round took. See bench/README.md, "Side by side".
set -euo pipefail

usage="usage: bench/together.sh [-c CHANGE_PCT] [-r ROUNDS] [-k BLOCKS] [-w WARMUP] [-d DURATION] [-o DIR]"
change=5 rounds=20 blocks=3 warmup=0 duration=1 keep=''
while getopts c:r:k:w:d:o:h o; do
	case $o in
	c) change=$OPTARG ;;
	r) rounds=$OPTARG ;;
	k) blocks=$OPTARG ;;
	w) warmup=$OPTARG ;;
	d) duration=$OPTARG ;;
	o) keep=$OPTARG ;;
	h) echo "$usage"; exit 0 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "together.sh: unexpected argument '$1'" >&2; echo "$usage" >&2; exit 2; }
[[ "$change" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "together.sh: -c: '$change' is not a percentage" >&2; exit 2; }
for v in "$rounds" "$blocks"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "together.sh: '$v' is not a positive whole number" >&2; exit 2; }
done

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -x "$top/bin/ff-bench" ] || { echo "together.sh: '$top/bin/ff-bench' is missing: run make" >&2; exit 1; }
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "together.sh: nginx is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${keep:-$tmp}
mkdir -p "$out"

ns_per_loop=$("$top/bench/power-shim.sh" "$tmp")
# shellcheck source=bench/shim-builds.sh
. "$top/bench/shim-builds.sh"
wrapper() { shim_wrapper "$1" "$2" "$tmp/power-shim.so" "$nginx"; }
args=(-w builtin -r nginx -p tcp --warmup "$warmup" --duration "$duration")
wrapper "$tmp/nginx-base" 0
"$top/bin/ff-bench" "${args[@]}" --build "base=$tmp/nginx-base" --repeat 3 \
	--output "$out/calibration.jsonl" --force >/dev/null 2>&1
pergb=$(shim_pergb "$out/calibration.jsonl")
loops=$(shim_loops "$change" "$pergb" "$ns_per_loop")
wrapper "$tmp/nginx-new" "$loops"
echo "together.sh: base relay CPU ${pergb} s/GB; new +${change}% (${loops} turns per KiB written); $blocks blocks of $rounds rounds each way"

rm -f "$out/apart.jsonl" "$out/together.jsonl"
secs_apart=0 secs_together=0
for ((b = 1; b <= blocks; b++)); do
	for way in apart together; do
		side=()
		[ "$way" = apart ] || side=(--together)
		t0=$(date +%s.%N)
		"$top/bin/ff-bench" "${args[@]}" --build "base=$tmp/nginx-base" --build "new=$tmp/nginx-new" \
			"${side[@]}" --repeat "$rounds" --append \
			--output "$out/$way.jsonl" >/dev/null 2>"$out/$way-$b.err" ||
			echo "together.sh: a run of block $b ($way) failed: $out/$way-$b.err" >&2
		t1=$(date +%s.%N)
		if [ "$way" = apart ]; then
			secs_apart=$(awk -v a="$secs_apart" -v x="$t0" -v y="$t1" 'BEGIN { print a + y - x }')
		else
			secs_together=$(awk -v a="$secs_together" -v x="$t0" -v y="$t1" 'BEGIN { print a + y - x }')
		fi
	done
done

# Each file's pairs: the two builds of a round (a block is a bench of its
# own seed; its rounds restart at 1).
for way in apart together; do
	secs=$([ "$way" = apart ] && echo "$secs_apart" || echo "$secs_together")
	shim_pairs "$out/$way.jsonl" | awk -v way="$way" -v secs="$secs" '
		{ x[++n] = $1; s += $1 }
		END {
			if (n < 3) { printf "%-9s too few pairs (%d)\n", way, n; exit }
			m = s / n
			for (i = 1; i <= n; i++) v += (x[i] - m) ^ 2
			sd = sqrt(v / (n - 1)); se = sd / sqrt(n)
			printf "%-9s %d pairs, %.2f s a round: pairs vary %.1f%%; change %+.1f%% [%+.1f, %+.1f]\n", way, n,
				secs / n, 100 * sd, 100 * (exp(m) - 1), 100 * (exp(m - 1.96 * se) - 1), 100 * (exp(m + 1.96 * se) - 1)
		}'
done
