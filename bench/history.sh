#!/usr/bin/env bash
# bench/history.sh - how the time of flimflam history's change point
# detection grows with the length of a history.
#
# usage: bench/history.sh [-n MAX] [-k DIR]
#
# For N = 100, 1000, 10000, 100000 (up to -n MAX, default 100000): a history
# of N points around 1 Gbit/s with 2% noise and two steps (-5% at N/3, +5%
# at 2N/3). Times
#  - the detector alone (t/unit/edivisive-test --bench N: E-divisive means,
#    199 permutations per test), wall and CPU seconds;
#  - the whole command on a database of N runs: `ff-history add` of a
#    results file of N records, then `ff-history --metric bits_per_s`
#    (reading the series, detection, the verdict), wall seconds, and how
#    many change points it found (2 expected).
# -k keeps the files in DIR. No target: the figures say what a history of
# a given length costs. Exit status 1 when a command fails.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
max=100000 keep=
while getopts n:k: o; do
	case $o in
	n) max=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) echo "usage: ${0##*/} [-n MAX] [-k DIR]" >&2; exit 2 ;;
	esac
done
unit=$top/t/unit/edivisive-test hist=$top/bin/ff-history
if [ ! -x "$unit" ] || [ ! -x "$hist" ]; then echo "${0##*/}: run make first" >&2; exit 1; fi
[ -n "${EPOCHREALTIME:-}" ] || { echo "${0##*/}: needs bash 5 (\$EPOCHREALTIME)" >&2; exit 1; }
dir=${keep:-$(mktemp -d)}
mkdir -p "$dir"
[ -n "$keep" ] || trap 'rm -rf "$dir"' EXIT

# records N: N case records of ff-bench, one a minute (months of 28 days), with the two steps.
records() {
	awk -v n="$1" 'BEGIN {
		srand(5)
		for (i = 0; i < n; i++) {
			u1 = rand(); u2 = rand(); if (u1 < 1e-12) u1 = 1e-12
			g = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2)
			lvl = i >= int(2 * n / 3) ? 0.95 * 1.05 : i >= int(n / 3) ? 0.95 : 1
			t = i
			printf "{\"event\":\"case\",\"schema\":1,\"tool\":\"ff-bench\",\"version\":\"0.1.0\",\"time\":\"%04d-%02d-%02dT%02d:%02d:00Z\",\"status\":\"ok\",\"config\":{\"workload\":\"builtin\",\"relay\":\"nginx\",\"protocol\":\"tcp\",\"hops\":2,\"jobs\":2,\"warmup_s\":1,\"duration_s\":5,\"cpu_limit\":1},\"repeat\":1,\"run_dir\":\"/runs/%d\",\"result\":{\"bits_per_s\":%.0f},\"environment\":{\"hostname\":\"bench\"}}\n", \
				2000 + int(t / 483840), 1 + int(t / 40320) % 12, 1 + int(t / 1440) % 28, int(t / 60) % 24, t % 60, i, 1e9 * lvl * (1 + 0.02 * g)
		}
	}'
}

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'; }
us() { local t=$EPOCHREALTIME; echo "${t/./}"; }

echo "load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"
printf '%8s  %12s  %12s  %10s  %12s  %8s\n' points "detect wall" "detect CPU" "add" "history" found
st=0
for n in 100 1000 10000 100000; do
	[ "$n" -le "$max" ] || break
	line=$("$unit" --bench "$n") || { echo "edivisive-test --bench $n failed" >&2; st=1; continue; }
	dw=$(sed -n 's/.* in \([0-9.]*\) s (CPU.*/\1/p' <<<"$line")
	dc=$(sed -n 's/.*(CPU \([0-9.]*\) s).*/\1/p' <<<"$line")
	records "$n" >"$dir/r$n.jsonl"
	rm -f "$dir/h$n.db"*
	t0=$(us)
	"$hist" add --db "$dir/h$n.db" "$dir/r$n.jsonl" >/dev/null || { st=1; continue; }
	t1=$(us)
	out=$("$hist" --db "$dir/h$n.db" --metric bits_per_s) || { st=1; continue; }
	t2=$(us)
	printf '%8d  %10s s  %10s s  %8s s  %10s s  %8d\n' "$n" "$dw" "$dc" "$(secs "$t0" "$t1")" \
		"$(secs "$t1" "$t2")" "$(grep -c '^    change at' <<<"$out")"
done
exit $st
