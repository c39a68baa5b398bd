#!/bin/bash
# bench/wakeups.sh - what counting the relays' wakeups costs (every run's
# resources.relays[].wakeups: sched:sched_wakeup and sched:sched_waking
# counted on every CPU, filtered on the relays' threads; ff-capture's
# wakeups.c).
#
# 1. The kernel's cost per wakeup: two processes hand a byte back and
#    forth over pipes on CPU 0 (each round trip is two wakeups), -p round trips
#    timed, in turns without counters and with the same counters open
#    (perf stat -a of both tracepoints, each with a filter on pid 1, which
#    matches nothing: every wakeup on the machine fires the tracepoint and
#    is filtered, as in a run). -n rounds of each.
# 2. A run: -n rounds of two `flimflam run --json -r RELAY -w builtin`,
#    taking turns: counting (the default) and FLIMFLAM_WAKEUPS=off. Per
#    round, counting over off of the throughput and of the relays' CPU
#    seconds per GB; their medians.
# Ratios near 1 are no cost; the spread of the off runs among themselves
# says what a ratio's noise is on this machine.

set -eu
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/wakeups.sh [-n RUNS] [-r RELAY] [-d DURATION] [-p ROUND_TRIPS]"
runs=5 relay=nginx duration=5 trips=200000
while getopts ':hn:r:d:p:' opt; do
	case $opt in
	n) runs=$OPTARG ;;
	r) relay=$OPTARG ;;
	d) duration=$OPTARG ;;
	p) trips=$OPTARG ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
whole_numbers "$runs" "$duration" "$trips"

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
command -v perf >/dev/null || { echo "${0##*/}: perf is not on PATH" >&2; exit 1; }
command -v cc >/dev/null || { echo "${0##*/}: cc is not on PATH" >&2; exit 1; }

tmp=$(mktemp -d)
perf_pid=
cleanup() {
	[ -z "$perf_pid" ] || kill "$perf_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/pingpong.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
	long n = atol(argv[1]), i;
	int a[2], b[2];
	char c = 0;
	struct timespec t0, t1;
	pid_t p;
	if (pipe(a) < 0 || pipe(b) < 0 || (p = fork()) < 0)
		return 1;
	if (p == 0) {
		for (i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waitpid(p, NULL, 0);
	printf("%.1f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
	return 0;
}
C
cc -O2 -o "$tmp/pingpong" "$tmp/pingpong.c"
# Both ends on one CPU: each hand-off is a wakeup and a switch, not a wait for another CPU.
pingpong() { taskset -c 0 "$tmp/pingpong" "$trips"; }

# counters_on: the wakeup counters open on every CPU until counters_off.
counters_on() {
	# No command: perf counts until SIGINT.
	perf stat -a -x, -o "$tmp/perf.out" -e sched:sched_wakeup --filter 'pid == 1' \
		-e sched:sched_waking --filter 'common_pid == 1' &
	perf_pid=$!
	sleep 1	# perf has opened them
	kill -0 "$perf_pid" 2>/dev/null || { cat "$tmp/perf.out" >&2; echo "${0##*/}: perf stat -a of the tracepoints failed" >&2; exit 1; }
}
counters_off() {
	kill -INT "$perf_pid"
	wait "$perf_pid" || true
	perf_pid=
}

echo "Kernel cost per wakeup: $trips pipe round trips (2 wakeups each), $runs rounds, $(load_seen)"
for ((i = 0; i < runs; i++)); do
	pingpong >>"$tmp/pp.off"
	counters_on
	pingpong >>"$tmp/pp.on"
	counters_off
	paste -d' ' <(tail -1 "$tmp/pp.off") <(tail -1 "$tmp/pp.on") >>"$tmp/pp.pairs"
done
off=$(median <"$tmp/pp.off") on=$(median <"$tmp/pp.on")
ratio=$(awk '{ print $2 / $1 }' "$tmp/pp.pairs" | median)
printf '  round trip, ns: %s without the counters, %s with; with / without %.3f (median of the rounds)\n' \
	"$off" "$on" "$ratio"
awk -v a="$off" -v b="$on" 'BEGIN { printf "  about %.0f ns more per wakeup\n", (b - a) / 2 }'

echo "A run: flimflam run -r $relay -w builtin, ${duration} s windows, $runs rounds, $(load_seen)"
# shellcheck disable=SC2016 # jq's variables
fig='(.[] | select(.event == "resources")) as $r | (.[] | select(.event == "result")) as $x |
	"\($x.bits_per_s) \(([$r.relays[].cpu_s] | add) / ($x.bits_per_s * $r.window_s / 8e9)) \(([$r.relays[].wakeups // 0] | add) / $r.window_s)"'
for ((i = 0; i < runs; i++)); do
	for mode in on off; do
		if [ "$mode" = off ]; then export FLIMFLAM_WAKEUPS=off; else unset FLIMFLAM_WAKEUPS; fi
		"$ff" run --json -r "$relay" -w builtin --warmup 1 --duration "$duration" 2>"$tmp/err" >"$tmp/run.jsonl" ||
			{ cat "$tmp/err" >&2; exit 1; }
		jq -rs "$fig" "$tmp/run.jsonl" >>"$tmp/run.$mode"
	done
	unset FLIMFLAM_WAKEUPS
done
paste -d' ' "$tmp/run.on" "$tmp/run.off" >"$tmp/run.pairs"
printf '  throughput, Gbit/s: %.2f counting, %.2f off; counting / off %.3f\n' \
	"$(cut -d' ' -f1 "$tmp/run.on" | median | awk '{ print $1 / 1e9 }')" \
	"$(cut -d' ' -f1 "$tmp/run.off" | median | awk '{ print $1 / 1e9 }')" \
	"$(awk '{ print $1 / $4 }' "$tmp/run.pairs" | median)"
printf '  relay CPU s/GB: %.3f counting, %.3f off; counting / off %.3f\n' \
	"$(cut -d' ' -f2 "$tmp/run.on" | median)" "$(cut -d' ' -f2 "$tmp/run.off" | median)" \
	"$(awk '{ print $2 / $5 }' "$tmp/run.pairs" | median)"
printf '  the relays were woken %.0f times a second (median of the counting runs)\n' \
	"$(cut -d' ' -f3 "$tmp/run.on" | median)"
awk '{ print $1 }' "$tmp/run.off" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "  off runs among themselves: throughput %.3f from lowest to highest\n", hi / lo }'
