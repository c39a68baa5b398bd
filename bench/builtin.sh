#!/bin/bash
# bench/builtin.sh - the builtin workload beside iperf3, over loopback with
# no relay: same jobs, same warmup and window. Prints each tool's
# throughput as it reports it, the same throughput measured independently
# from the kernel's per-socket byte counts (ss -ti bytes_received), the
# ratio builtin/iperf3, and CPU seconds per GB for client and server (from
# /proc/PID/stat utime+stime). With -o it also builds and measures the
# original flimflam's builtin workload (from a checkout of
# github.com/ssorj/flimflam), which reports no figure of its own.
#
# CPU and the ss figure are taken over the middle of the window, from half
# a second after it opens to half a second before it closes, so that
# start-up and teardown do not count.

set -eu

usage="usage: bench/builtin.sh [-j JOBS] [-w WARMUP] [-d DURATION] [-o FLIMFLAM_CHECKOUT]"
jobs=2 warmup=2 duration=5 original=
while getopts ':hj:w:d:o:' opt; do
	case $opt in
	h) echo "$usage"; exit 0 ;;
	j) jobs=$OPTARG ;;
	w) warmup=$OPTARG ;;
	d) duration=$OPTARG ;;
	o) original=$OPTARG ;;
	:) echo "builtin.sh: option '-$OPTARG' needs a value" >&2; echo "$usage" >&2; exit 2 ;;
	*) echo "builtin.sh: unknown option '-$OPTARG'" >&2; echo "$usage" >&2; exit 2 ;;
	esac
done
for v in "$jobs" "$warmup" "$duration"; do
	case $v in
	'' | *[!0-9]*) echo "builtin.sh: '$v' is not a whole number" >&2; exit 2 ;;
	esac
done
if [ "$duration" -lt 2 ] || [ "$jobs" -lt 1 ]; then
	echo "builtin.sh: need -d 2 or more and -j 1 or more" >&2
	exit 2
fi

top=$(cd "$(dirname "$0")/.." && pwd)
client=$top/builtin/ff-builtin-client
server=$top/builtin/ff-builtin-server
for p in "$client" "$server"; do
	[ -x "$p" ] || { echo "builtin.sh: '$p' is missing: run make" >&2; exit 1; }
done
command -v iperf3 >/dev/null || { echo "builtin.sh: iperf3 is not on PATH" >&2; exit 1; }

tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_listen() {	# PORT
	local i
	for ((i = 0; i < 200; i++)); do
		[ -n "$(ss -ltnH "sport = :$1")" ] && return 0
		sleep 0.02
	done
	echo "builtin.sh: nothing listens on port $1" >&2
	exit 1
}

cpu_ticks() {	# PID: utime + stime, in clock ticks
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/"$1"/stat
}

rx_bytes() {	# PORT SIDE: bytes received on established sockets; SIDE is
		# dport (the connecting side) or sport (the accepting side)
	ss -tinH state established "( $2 = :$1 )" |
		grep -o 'bytes_received:[0-9]*' | cut -d: -f2 |
		awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# measure NAME RXSIDE SERVER-ARGV... -- CLIENT-ARGV...: runs one tool; the
# words PORT in the argvs become the port. Sets the globals of the row.
measure() {
	local name=$1 side=$2 port sargv=() cargv=() a spid cpid
	local c0 s0 r0 t0 c1 s1 r1 t1 hz
	shift 2
	port=$(free_port)
	while [ "$1" != -- ]; do sargv+=("${1//PORT/$port}"); shift; done
	shift
	for a in "$@"; do cargv+=("${a//PORT/$port}"); done

	"${sargv[@]}" >"$tmp/$name.server.out" 2>&1 &
	spid=$!
	pids+=("$spid")
	wait_listen "$port"
	"${cargv[@]}" >"$tmp/$name.client.out" 2>"$tmp/$name.client.err" &
	cpid=$!
	pids+=("$cpid")
	sleep "$warmup.5"
	c0=$(cpu_ticks "$cpid") s0=$(cpu_ticks "$spid") r0=$(rx_bytes "$port" "$side")
	t0=$(date +%s.%N)
	sleep "$((duration - 1))"
	c1=$(cpu_ticks "$cpid") s1=$(cpu_ticks "$spid") r1=$(rx_bytes "$port" "$side")
	t1=$(date +%s.%N)
	if [ "$name" = original ]; then
		sleep 0.5	# it would stream on forever
		kill "$cpid"
	fi
	wait "$cpid" || [ "$name" = original ] || {
		echo "builtin.sh: $name client failed:" >&2
		cat "$tmp/$name.client.err" >&2
		exit 1
	}
	kill "$spid" 2>/dev/null || true
	wait "$spid" || true
	pids=()
	hz=$(getconf CLK_TCK)
	read -r ss_bps client_cpu server_cpu < <(awk -v r="$((r1 - r0))" \
		-v t="$t1" -v t0="$t0" -v c="$((c1 - c0))" -v s="$((s1 - s0))" \
		-v hz="$hz" 'BEGIN {
			gb = r / 1e9
			printf "%.4g %.3f %.3f\n", 8 * r / (t - t0),
				c / hz / gb, s / hz / gb }')
}

row() {	# NAME TOOL-BITS/S
	printf '%-10s %14s %14s %16s %16s\n' "$1" "$2" "$ss_bps" "$client_cpu" "$server_cpu"
	eval "bps_$1=\$2 ss_$1=\$ss_bps"
}

echo "over 127.0.0.1: jobs $jobs, warmup $warmup s, window $duration s; $(nproc) CPUs, $(uname -r)"
printf '%-10s %14s %14s %16s %16s\n' workload "bits/s (tool)" "bits/s (ss)" "client CPU s/GB" "server CPU s/GB"

measure iperf3 sport iperf3 -s -1 -p PORT -- \
	iperf3 -c 127.0.0.1 -p PORT -P "$jobs" -t "$duration" -O "$warmup" --json
row iperf3 "$(jq '.end.sum_received.bits_per_second' "$tmp/iperf3.client.out" |
	awk '{ printf "%.4g", $1 }')"

measure builtin dport "$server" --port PORT -- \
	"$client" --port PORT --jobs "$jobs" --warmup "$warmup" --duration "$duration"
row builtin "$(jq -r 'select(.event == "result") | .bits_per_s' "$tmp/builtin.client.out" |
	awk '{ printf "%.4g", $1 }')"

if [ -n "$original" ]; then
	for f in client server; do
		cc -O2 -pthread -w -o "$tmp/$f" "$original/builtin/$f.c" || {
			echo "builtin.sh: cannot build '$original/builtin/$f.c'" >&2
			exit 1
		}
	done
	mkdir "$tmp/transfers"
	measure original dport "$tmp/server" PORT -- "$tmp/client" PORT "$jobs" "$tmp/transfers"
	row original -
fi

awk -v b="$bps_builtin" -v i="$bps_iperf3" -v sb="$ss_builtin" -v si="$ss_iperf3" 'BEGIN {
	printf "builtin/iperf3: %.3f (as reported), %.3f (ss)\n", b / i, sb / si }'
if [ -n "$original" ]; then
	awk -v sb="$ss_builtin" -v so="$ss_original" 'BEGIN {
		printf "builtin/original: %.3f (ss)\n", sb / so }'
fi
