#!/bin/bash
# bench/ab-sim.sh - how often compare's verdict is wrong on synthetic tables:
# the false-positive rate over A/A tables (two labels of one distribution)
# and the detection rate of a real shift, at n runs a side. The verdicts are
# those of `ff-bench compare` itself (bench/ab-sim.py writes the files and
# reads its --json). See bench/README.md.
set -euo pipefail

usage="usage: bench/ab-sim.sh [-t TABLES] [-n RUNS] [-c CASES] [-v CV_PCT] [-s SHIFTS_PCT] [-r SEED]"
tables=200 runs=10 cases=13 cv=3 shifts=5,10 seed=1
while getopts t:n:c:v:s:r:h o; do
	case $o in
	t) tables=$OPTARG ;;
	n) runs=$OPTARG ;;
	c) cases=$OPTARG ;;
	v) cv=$OPTARG ;;
	s) shifts=$OPTARG ;;
	r) seed=$OPTARG ;;
	h) echo "$usage"; exit 0 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "ab-sim.sh: unexpected argument '$1'" >&2; echo "$usage" >&2; exit 2; }
for v in "$tables" "$runs" "$cases" "$seed"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "ab-sim.sh: '$v' is not a positive whole number" >&2; exit 2; }
done
[[ "$cv" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "ab-sim.sh: -v: '$cv' is not a number" >&2; exit 2; }
[[ "$shifts" =~ ^[0-9.]+(,[0-9.]+)*$ ]] || { echo "ab-sim.sh: -s: '$shifts' is not a list of numbers" >&2; exit 2; }

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -x "$top/bin/ff-bench" ] || { echo "ab-sim.sh: '$top/bin/ff-bench' is missing: run make" >&2; exit 1; }
command -v python3 >/dev/null || { echo "ab-sim.sh: python3 is not on PATH" >&2; exit 1; }
# A copy of the program measured, so a rebuild meanwhile does not disturb it.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$top/bin/ff-bench" "$tmp/ff-bench"
python3 "$top/bench/ab-sim.py" "$tmp/ff-bench" "$tables" "$runs" "$cases" "$cv" "$seed" "$shifts"
