#!/usr/bin/env bash
# bench/flame.sh - is folding the slow part of a flame graph?
#
# Records a busy relay pair (two nginx, R1 -> R2, loaded by h2load --h1;
# `flimflam record`) for a window of SECONDS, or a CPU-bound loop, then times on that same file:
# `perf script` alone (with the fields ff-flame asks for, and with its
# default fields), ff-flame --folded, ff-flame writing the HTML page, and
# perf's own `perf script report flamegraph` where it exists. Each is run
# once to warm the caches, then RUNS times; the medians and the ratio of
# ff-flame to perf script alone are printed. The target is <= 1.2.
#
# Network traffic stays on 127.0.0.1; everything started here is stopped
# by pid when the script ends.

set -u

usage="usage: bench/flame.sh [-d SECONDS] [-n RUNS] [-w nginx|loop] [-k DIR] [PERF_DATA]
  -d SECONDS  length of the recorded window (default 10)
  -n RUNS     timed runs of each command (default 5)
  -w WORK     what to record: nginx (R1 -> R2 under h2load, default) or loop
  -k DIR      keep the recording and the pages in DIR
  PERF_DATA   time an existing recording instead of making one"

dur=10 runs=5 work=nginx keep=
while getopts hd:n:w:k: opt; do
	case $opt in
	h) echo "$usage"; exit 0 ;;
	d) dur=$OPTARG ;;
	n) runs=$OPTARG ;;
	w) work=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $dur$runs in *[!0-9]*) echo "flame.sh: -d and -n take whole numbers" >&2; exit 2 ;; esac
case $work in nginx|loop) ;; *) echo "flame.sh: unknown workload '$work' (expected nginx, loop)" >&2; exit 2 ;; esac
[ $# -le 1 ] || { echo "$usage" >&2; exit 2; }

top=$(cd "$(dirname "$0")/.." && pwd)
flame=$top/bin/ff-flame
[ -x "$flame" ] || { echo "flame.sh: build first: make" >&2; exit 1; }
command -v perf >/dev/null || { echo "flame.sh: perf is not installed" >&2; exit 1; }

dir=$(mktemp -d) || exit 1
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	if [ -n "$keep" ]; then
		mkdir -p "$keep" && cp "$dir"/*.data "$dir"/*.html "$keep"/ 2>/dev/null
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# R1 -> R2 nginx under h2load --h1, recorded the way users record it.
record_nginx() {
	local p
	for p in nginx h2load; do
		command -v $p >/dev/null || { echo "flame.sh: $p is not installed (try -w loop)" >&2; exit 1; }
	done
	(cd "$dir" && "$top/bin/flimflam" record -r nginx -w h2load-h1 -p http1 --jobs 8 \
		--warmup 1 --duration "$dur") >"$dir/record.out" 2>"$dir/record.err" || {
		echo "flame.sh: flimflam record failed:" >&2
		cat "$dir/record.err" >&2
		exit 1
	}
}

record_loop() {
	local loop
	# A shell busy in a loop: shallow stacks, many samples.
	bash -c 'while :; do x=$((x + 1)); done' & loop=$!
	pids+=("$loop")
	perf record -q -e cpu-clock -F 997 -g -p "$loop" -o "$dir/perf.data" \
		-- sleep "$dur" || exit 1
}

if [ $# -eq 1 ]; then
	data=$1
	[ -r "$data" ] || { echo "flame.sh: cannot read '$data'" >&2; exit 1; }
else
	echo "recording $work for ${dur}s ..." >&2
	"record_$work"
	data=$dir/perf.data
fi

# elapsed CMD...: "wall_s cpu_s" of one run (cpu: user + system time of
# the command and its children), output discarded. CPU time does not
# depend on what else the machine runs; wall time does.
elapsed() {
	local TIMEFORMAT='%3R %3U %3S' t real user sys
	t=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
	read -r real user sys <<<"$t"
	awk -v r="$real" -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f %.3f\n", r, u + s }'
}

# perf's own flame graph script, where this perf has it. Its wrapper reads
# ./perf.data whatever -i says, so it runs beside a link to the recording.
perf_flamegraph() {
	(cd "$dir/pf" && perf script report flamegraph -f json -o "$dir/perf.json")
}
mkdir -p "$dir/pf"
ln -s "$(readlink -f "$data")" "$dir/pf/perf.data"

# timed I: the command named names[I].
names=("perf script -F comm,pid,tid,ip,sym,dso" "perf script (default fields)"
	"ff-flame --folded" "ff-flame -o flamegraph.html")
timed() {
	case $1 in
	0) perf script -i "$data" -F comm,pid,tid,ip,sym,dso ;;
	1) perf script -i "$data" ;;
	2) "$flame" --folded "$data" ;;
	3) "$flame" -o "$dir/ff-flame.html" "$data" ;;
	4) perf_flamegraph ;;
	esac
}
if perf_flamegraph >/dev/null 2>&1 && [ -s "$dir/perf.json" ]; then
	names+=("perf script report flamegraph -f json")
else
	pf_note="perf script report flamegraph: not available here"
fi

samples=$(perf script -i "$data" -F pid 2>/dev/null | grep -c .)
size=$(stat -c %s "$data")
echo "recording: $data ($work), $samples sample$([ "$samples" = 1 ] || echo s), $((size / 1024)) KiB, runs: $runs"
echo "machine: $(nproc) CPU$([ "$(nproc)" = 1 ] || echo s), load average $(cut -d' ' -f1-3 /proc/loadavg), perf $(perf version 2>/dev/null | cut -d' ' -f3)"

# Rounds: each command once per round, in turn, so that a change in the
# machine's load falls on all of them alike. One round to warm up first.
times=$dir/times
for ((r = 0; r <= runs; r++)); do
	for i in "${!names[@]}"; do
		t=$(elapsed timed "$i")
		[ "$r" -gt 0 ] && echo "$i $t" >>"$times"
	done
done

# median COLUMN I: the median of column COLUMN of command I's runs; min too.
median() {
	awk -v i="$2" -v c="$1" '$1 == i { print $c }' "$times" | sort -n | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f %.3f\n", m, v[1] }'
}

printf '%-40s %10s %10s %10s\n' command wall_med_s wall_min_s cpu_med_s
for i in "${!names[@]}"; do
	read -r med min < <(median 2 "$i")
	read -r cpu _ < <(median 3 "$i")
	printf '%-40s %10s %10s %10s\n' "${names[$i]}" "$med" "$min" "$cpu"
	wmed[i]=$med wmin[i]=$min cmed[i]=$cpu
done
[ -n "${pf_note:-}" ] && echo "$pf_note"
awk -v hw="${wmed[3]}" -v hm="${wmin[3]}" -v hc="${cmed[3]}" \
    -v sw="${wmed[0]}" -v sm="${wmin[0]}" -v sc="${cmed[0]}" \
    -v dw="${wmed[1]}" -v fw="${wmed[2]}" 'BEGIN {
	printf "ff-flame (HTML) / perf script, same fields: wall median %.3f, wall min %.3f, cpu median %.3f\n", hw / sw, hm / sm, hc / sc
	printf "ff-flame --folded / perf script, same fields: wall median %.3f\n", fw / sw
	printf "ff-flame (HTML) / perf script, default fields: wall median %.3f\n", hw / dw
	# On a machine others load, wall medians move with their load; the
	# fastest run and CPU time show the cost of the work itself.
	if (hw / sw <= 1.2) v = "met (wall medians)"
	else if (hm / sm <= 1.2 && hc / sc <= 1.2) v = "met on the fastest runs and in CPU time (wall medians disturbed by load)"
	else v = "NOT met"
	printf "target ff-flame <= 1.2 x perf script alone: %s\n", v
	exit v ~ /^NOT/ }'
