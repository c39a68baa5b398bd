#!/bin/bash
# bench/rr.sh - builtin-rr beside sockperf's TCP ping-pong over loopback,
# with no relay: the same connections (-j), the same request and response
# size (-s; sockperf's messages are 14 bytes at least), the same time (-d),
# taking turns -r times. Is the client the bottleneck?
#
# For each tool, the median over the runs of: transactions a second, the
# median round trip (p50; sockperf with --full-rtt, so both are request to
# response), and the client's own CPU time per transaction (utime + stime
# of the client process over its whole life, over all the transactions it
# made in that life), and the server's the same way (its processes' utime +
# stime just before they are ended): when the CPUs are busy, the two added
# up set the transactions/s. Then the ratios builtin-rr / sockperf.
#
# sockperf: -j pairs of `sockperf server --tcp` and `sockperf ping-pong
# --tcp` (one connection each; a sockperf server answers one TCP client
# only), closed loop (--mps max, its default),
# its own 400 ms warm-up excluded from its figures ("Valid Duration"); its
# transactions/s is the sum over its clients, its p50 their median.
# builtin-rr: ff-builtin-rr-server and ff-builtin-rr-client --jobs J
# --warmup 0 --duration D.
# Exit status 1 when builtin-rr's transactions/s is under 0.9 of
# sockperf's or its p50 over 1.1 of sockperf's.

set -eu
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/rr.sh [-j JOBS] [-s BYTES] [-d DURATION] [-r RUNS]"
jobs=1 size=14 duration=5 runs=3
while getopts ':hj:s:d:r:' opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	s) size=$OPTARG ;;
	d) duration=$OPTARG ;;
	r) runs=$OPTARG ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
whole_numbers "$jobs" "$size" "$duration" "$runs"
if [ "$duration" -lt 2 ] || [ "$jobs" -lt 1 ] || [ "$runs" -lt 1 ] || [ "$size" -lt 14 ]; then
	echo "rr.sh: need -d 2 or more, -s 14 or more (sockperf's least), -j and -r 1 or more" >&2
	exit 2
fi

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
client=$top/builtin/ff-builtin-rr-client
server=$top/builtin/ff-builtin-rr-server
for p in "$client" "$server"; do
	[ -x "$p" ] || { echo "rr.sh: '$p' is missing: run make" >&2; exit 1; }
done
for p in sockperf ss python3; do
	command -v "$p" >/dev/null || { echo "rr.sh: $p is not on PATH (mk/deps.sh installs sockperf)" >&2; exit 1; }
done

scratch

# child_cpu CMD...: run CMD in a shell that then prints the CPU ticks of
# its reaped children (cutime + cstime of its own /proc/PID/stat) on the
# last line of stdout.
child_cpu() {
	sh -c '"$@"; s=$?; cat /proc/$$/stat; exit $s' sh "$@"
}
ticks_of() {	# FILE: the ticks from child_cpu's last line
	tail -n 1 "$1" | awk '{ sub(/.*\) /, ""); print $14 + $15 }'
}
own_ticks() {	# PID...: utime + stime of the running processes, all their threads
	local p
	for p in "$@"; do
		cat "/proc/$p/stat"
	done | awk '{ sub(/.*\) /, ""); t += $12 + $13 } END { print t + 0 }'
}

run_sockperf() {	# appends "tps p50_us cpu_us_per_transaction server_cpu_us_per_transaction"
	local port k tps=0 total=0 ticks=0 sticks f p50s=() servers=() clients=()
	# A server per client: one sockperf server does not answer a second
	# TCP client.
	for ((k = 0; k < jobs; k++)); do
		port=$(free_port)
		sockperf server --tcp -i 127.0.0.1 -p "$port" >"$tmp/sp-server-$k.log" 2>&1 &
		servers+=($!)
		pids+=($!)
		wait_listen "$port"
		ports[k]=$port
	done
	for ((k = 0; k < jobs; k++)); do
		child_cpu sockperf ping-pong --tcp -i 127.0.0.1 -p "${ports[k]}" -t "$duration" \
			-m "$size" --full-rtt >"$tmp/sp-$k.out" 2>&1 &
		clients+=($!)
	done
	for k in "${clients[@]}"; do
		wait "$k" || true	# judged by its output below
	done
	for ((k = 0; k < jobs; k++)); do
		f=$tmp/sp-$k.out
		grep -q 'percentile 50.000' "$f" || { echo "rr.sh: sockperf failed:" >&2; cat "$f" >&2; exit 1; }
		tps=$(awk -v t="$tps" '/\[Valid Duration\]/ {
			match($0, /RunTime=[0-9.]+/); r = substr($0, RSTART + 8, RLENGTH - 8)
			match($0, /ReceivedMessages=[0-9]+/); n = substr($0, RSTART + 17, RLENGTH - 17)
			printf "%.1f\n", t + n / r }' "$f")
		total=$(awk -v t="$total" '/\[Total Run\]/ {
			match($0, /ReceivedMessages=[0-9]+/); print t + substr($0, RSTART + 17, RLENGTH - 17) }' "$f")
		p50s+=("$(awk '/percentile 50.000 =/ { print $NF }' "$f")")
		ticks=$((ticks + $(ticks_of "$f")))
	done
	sticks=$(own_ticks "${servers[@]}")
	for k in "${servers[@]}"; do
		kill "$k" 2>/dev/null || true
		wait "$k" 2>/dev/null || true
	done
	pids=()
	echo "$tps $(printf '%s\n' "${p50s[@]}" | median) $(awk -v t="$ticks" -v s="$sticks" -v n="$total" -v hz="$hz" 'BEGIN { printf "%.4f %.4f\n", t / hz / n * 1e6, s / hz / n * 1e6 }')" >>"$tmp/sockperf"
}

run_builtin() {	# appends "tps p50_us cpu_us_per_transaction server_cpu_us_per_transaction"
	local port sticks f=$tmp/rr.out
	port=$(free_port)
	"$server" --port "$port" --request-size "$size" --response-size "$size" &
	pids+=($!)
	wait_listen "$port"
	child_cpu "$client" --port "$port" --jobs "$jobs" --warmup 0 --duration "$duration" \
		--request-size "$size" --response-size "$size" >"$f" ||
		{ echo "rr.sh: ff-builtin-rr-client failed" >&2; exit 1; }
	sticks=$(own_ticks "${pids[-1]}")
	kill "${pids[-1]}" 2>/dev/null || true
	wait "${pids[-1]}" 2>/dev/null || true
	unset 'pids[-1]'
	grep '"result"' "$f" | jq -r --arg t "$(ticks_of "$f")" --arg s "$sticks" --arg hz "$hz" \
		'"\(.ops_per_s) \(.latency_p50_us) \(($t | tonumber) / ($hz | tonumber) / .transactions * 1e6) \(($s | tonumber) / ($hz | tonumber) / .transactions * 1e6)"' >>"$tmp/builtin"
}

echo "builtin-rr against sockperf ping-pong: jobs $jobs, $size-byte requests and responses, $duration s, $runs runs each, taking turns ($(load_seen))"
: >"$tmp/sockperf"
: >"$tmp/builtin"
for ((r = 1; r <= runs; r++)); do
	run_sockperf
	run_builtin
done
col() { awk -v c="$1" '{ print $c }' "$2" | median; }
printf '%-12s %14s %10s %22s %22s\n' tool "transactions/s" "p50 (us)" "client CPU/transaction" "server CPU/transaction"
for t in sockperf builtin; do
	printf '%-12s %14.0f %10.2f %19.3f us %19.3f us\n' "$([ $t = builtin ] && echo builtin-rr || echo sockperf)" \
		"$(col 1 "$tmp/$t")" "$(col 2 "$tmp/$t")" "$(col 3 "$tmp/$t")" "$(col 4 "$tmp/$t")"
done
awk -v a="$(col 1 "$tmp/builtin")" -v b="$(col 1 "$tmp/sockperf")" \
    -v c="$(col 2 "$tmp/builtin")" -v d="$(col 2 "$tmp/sockperf")" \
    -v e="$(col 3 "$tmp/builtin")" -v f="$(col 3 "$tmp/sockperf")" \
    -v g="$(col 4 "$tmp/builtin")" -v h="$(col 4 "$tmp/sockperf")" 'BEGIN {
	printf "ratio builtin-rr/sockperf: transactions/s %.2f x, p50 %.2f x, client CPU per transaction %.2f x, server CPU per transaction %.2f x\n", a / b, c / d, e / f, g / h
	ok = a / b >= 0.9 && c / d <= 1.1
	print ok ? "target met (transactions/s >= 0.9 x, p50 <= 1.1 x)" : "target MISSED (transactions/s >= 0.9 x, p50 <= 1.1 x)"
	exit !ok }'
