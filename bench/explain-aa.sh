#!/usr/bin/env bash
# bench/explain-aa.sh [-n TRIES] [-r RUNS] [-d SECONDS] [-t TOP] [-k DIR]
#
# The A/A test of flimflam explain (issue 30): TRIES times (default 20), a
# bench of two builds that are the same nginx under two labels, a and b
# (`flimflam bench -r nginx -w h2load-h1 -p http1 --build a=NGINX
# --build b=NGINX --record --repeat RUNS --warmup 0 --duration SECONDS`,
# default 6 runs of 1 s a build), then `flimflam explain --top TOP` of its
# results (default 10: with 6 runs a side the smallest q is then 0.022, so
# a change can be found). Prints each try's changed functions and then how
# many of the tries found any at q < 0.05; the target is at most 1 of 20.
# Exit status 0 when it is met. -k DIR keeps each try's results and pages.
set -euo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"

tries=20 runs=6 secs=1 top=10 keep=
while getopts n:r:d:t:k: o; do
	case $o in
	n) tries=$OPTARG ;;
	r) runs=$OPTARG ;;
	d) secs=$OPTARG ;;
	t) top=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) echo "usage: bench/explain-aa.sh [-n TRIES] [-r RUNS] [-d SECONDS] [-t TOP] [-k DIR]" >&2; exit 2 ;;
	esac
done
nginx=$(command -v nginx) || { echo "explain-aa.sh: nginx is not on PATH" >&2; exit 1; }
work=${keep:-$(mktemp -d)}
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
export FLIMFLAM_RUNS="$work/runs"

echo "A/A: $tries tries of $runs runs of ${secs} s a build (the same nginx as a and b), explain --top $top; $(load_seen)"
found=0
for i in $(seq 1 "$tries"); do
	res="$work/try-$i.jsonl"
	"$ff" bench -r nginx -w h2load-h1 -p http1 --warmup 0 --duration "$secs" --repeat "$runs" \
		--record --build "a=$nginx" --build "b=$nginx" --output "$res" >"$work/try-$i.out" 2>&1 ||
		[ -s "$res" ] || { echo "try $i: the bench failed:"; tail -5 "$work/try-$i.out"; exit 1; }
	# A failed run is left out by explain (which needs 3 ok runs a build): say why it failed.
	jq -r 'select(.status != "ok") | "try '"$i"': a run of build \(.build.label) failed: \(.reason)"' "$res"
	"$ff" explain --json --top "$top" "$res" >"$work/try-$i.explain.jsonl" 2>"$work/try-$i.explain.err" ||
		{ echo "try $i: explain failed:"; cat "$work/try-$i.explain.err"; exit 1; }
	changed=$(jq -r 'select(.event == "function" and .changed) | "\(.function) q \(.q)"' "$work/try-$i.explain.jsonl")
	minq=$(jq -s 'map(select(.event == "function") | .q) | min' "$work/try-$i.explain.jsonl")
	if [ -n "$changed" ]; then
		found=$((found + 1))
		echo "try $i: changed: $(paste -sd';' <<<"$changed")"
	else
		echo "try $i: no changed function (smallest q $minq)"
	fi
	# The runs' recordings take room: each try's go once explained (-k keeps them).
	[ -n "$keep" ] || rm -rf "$FLIMFLAM_RUNS"
done
echo "A/A: $found of $tries tries found a changed function at q < 0.05 (target: at most 1 of 20); $(load_seen)"
[ "$found" -le $(((tries + 19) / 20)) ]
