#!/bin/bash
# bench/builtin.sh - the builtin workload beside iperf3 over loopback, with
# no relay: same jobs, same warmup and window, taking turns -r times.
#
# For each tool it reports the median of the runs of: the throughput as the
# tool itself reports it; the same throughput measured independently from
# the kernel's per-socket byte counts (ss -ti bytes_received on the
# receiving sockets); and CPU seconds per GB received, for client and
# server (from /proc/PID/stat utime+stime). Then the ratio builtin/iperf3.
# With -o it also builds and measures the original flimflam's builtin
# workload from a checkout of github.com/ssorj/flimflam; that one reports
# no figure of its own, so only the kernel's count is given.
#
# The kernel's count and the CPU time are taken over the middle of the
# window, from half a second after it opens to half a second before it
# closes (timed from the moment the client's connections are up), so that
# start-up and teardown do not count. On a loaded machine a run whose
# client has already gone at the second reading gives no such figures ("-").
# The builtin echoes, so every byte it counts crossed loopback twice;
# iperf3's once. With -l N, N busy loops run beside every run, the way
# other jobs would load the machine: then throughput follows CPU per GB.
# Exit status 1 when builtin/iperf3 (as reported) is under 0.9, or, with
# -o, builtin/original (kernel's count) under 1.5.

set -eu
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/builtin.sh [-j JOBS] [-w WARMUP] [-d DURATION] [-r RUNS]
                          [-b BUILTIN_DIR] [-o FLIMFLAM_CHECKOUT] [-l LOOPS] [-v]"
jobs=2 warmup=2 duration=5 runs=3 original='' verbose='' loops=0
bindir=
while getopts ':hj:w:d:r:b:o:l:v' opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	w) warmup=$OPTARG ;;
	d) duration=$OPTARG ;;
	r) runs=$OPTARG ;;
	b) bindir=$OPTARG ;;
	o) original=$OPTARG ;;
	l) loops=$OPTARG ;;
	v) verbose=1 ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
whole_numbers "$jobs" "$warmup" "$duration" "$runs" "$loops"
if [ "$duration" -lt 2 ] || [ "$jobs" -lt 1 ] || [ "$runs" -lt 1 ]; then
	echo "builtin.sh: need -d 2 or more, -j and -r 1 or more" >&2
	exit 2
fi

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bindir=${bindir:-$top/builtin}
client=$bindir/ff-builtin-client
server=$bindir/ff-builtin-server
for p in "$client" "$server"; do
	[ -x "$p" ] || { echo "builtin.sh: '$p' is missing: run make" >&2; exit 1; }
done
for p in iperf3 jq ss python3; do
	command -v "$p" >/dev/null || { echo "builtin.sh: $p is not on PATH" >&2; exit 1; }
done

scratch

wait_connected() {	# PORT CLIENT_PID: until the client has its jobs connections
	local i
	for ((i = 0; i < 500; i++)); do
		[ "$(ss -tnH state established "( dport = :$1 )" | wc -l)" -ge "$jobs" ] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.01
	done
	echo "builtin.sh: the client did not connect to port $1" >&2
	exit 1
}

cpu_ticks() {	# PID: utime + stime in clock ticks, or nothing if it is gone
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/"$1"/stat 2>/dev/null || true
}

rx_bytes() {	# PORT SIDE: bytes received on the established sockets whose
		# SIDE is the port: dport picks the connecting side's sockets,
		# sport the accepting side's
	ss -tinH state established "( $2 = :$1 )" |
		grep -o 'bytes_received:[0-9]*' | cut -d: -f2 |
		awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# measure NAME RXSIDE SERVER-ARGV... -- CLIENT-ARGV...: one run of one
# tool; the word PORT in the argvs becomes the port. Appends "NAME ss_bps
# client_s_per_gb server_s_per_gb" to $tmp/runs; the tool's own output is
# in $tmp/NAME.client.out.
measure() {
	local name=$1 side=$2 port sargv=() cargv=() a spid cpid
	local c0 s0 r0 t0 c1 s1 r1 t1
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
	wait_connected "$port" "$cpid"
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
	if ! wait "$cpid" && [ "$name" != original ]; then
		echo "builtin.sh: the $name client failed:" >&2
		cat "$tmp/$name.client.err" >&2
		exit 1
	fi
	kill "$spid" 2>/dev/null || true	# iperf3 -s -1 is gone already
	wait "$spid" || true
	pids=("${hogs[@]}")
	awk -v n="$name" -v r0="$r0" -v r1="$r1" -v t0="$t0" -v t1="$t1" \
		-v c0="$c0" -v c1="$c1" -v s0="$s0" -v s1="$s1" \
		-v hz="$(getconf CLK_TCK)" 'BEGIN {
			# a client gone early or a socket closed spoils the run
			gb = (r1 - r0) / 1e9
			ss = gb <= 0 ? "-" : sprintf("%.4g", 8 * (r1 - r0) / (t1 - t0))
			c = (c0 == "" || c1 == "" || gb <= 0) ? "-" : sprintf("%.3f", (c1 - c0) / hz / gb)
			s = (s0 == "" || s1 == "" || gb <= 0) ? "-" : sprintf("%.3f", (s1 - s0) / hz / gb)
			print n, ss, c, s }' >>"$tmp/runs"
}

# record NAME TOOL_BPS: completes the last line of $tmp/runs with what the
# tool reported, and shows the run with -v.
record() {
	sed -i '$ s/$/ '"$2"'/' "$tmp/runs"
	[ -z "$verbose" ] || tail -n 1 "$tmp/runs" >&2
}

echo "over 127.0.0.1: jobs $jobs, warmup $warmup s, window $duration s, median of $runs runs;" \
	"$(nproc) CPU$([ "$(nproc)" = 1 ] || echo s), $(uname -r), $(iperf3 --version | head -n 1 | cut -d' ' -f1-2)$(
	[ "$loops" -eq 0 ] || echo "; $loops busy loops beside")"

for ((i = 0; i < loops; i++)); do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
hogs=("${pids[@]}")

if [ -n "$original" ]; then
	for f in client server; do
		cc -O2 -pthread -w -o "$tmp/original-$f" "$original/builtin/$f.c" || {
			echo "builtin.sh: cannot build '$original/builtin/$f.c'" >&2
			exit 1
		}
	done
	mkdir "$tmp/transfers"
fi

for ((run = 1; run <= runs; run++)); do
	measure iperf3 sport iperf3 -s -1 -p PORT -- \
		iperf3 -c 127.0.0.1 -p PORT -P "$jobs" -t "$duration" -O "$warmup" --json
	record iperf3 "$(jq '.end.sum_received.bits_per_second' "$tmp/iperf3.client.out")"

	measure builtin dport "$server" --port PORT -- \
		"$client" --port PORT --jobs "$jobs" --warmup "$warmup" --duration "$duration"
	record builtin "$(jq -r 'select(.event == "result") | .bits_per_s' "$tmp/builtin.client.out")"

	if [ -n "$original" ]; then
		measure original dport "$tmp/original-server" PORT -- \
			"$tmp/original-client" PORT "$jobs" "$tmp/transfers"
		record original -
		rm -f "$tmp/transfers"/*
	fi
done

# Medians per tool, column by column ("-" sorts first and counts as missing).
awk '
	function median(list,   n, a, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function add(k, v) { if (v != "-") col[k] = col[k] " " v }
	{
		if (!($1 in seen)) { order[++n] = $1; seen[$1] = 1 }
		add($1 SUBSEP "ss", $2); add($1 SUBSEP "c", $3)
		add($1 SUBSEP "s", $4); add($1 SUBSEP "tool", $5)
	}
	function show(k) { return k in col ? sprintf("%.4g", median(col[k])) : "-" }
	END {
		printf "%-10s %14s %14s %16s %16s\n", "workload", "bits/s (tool)",
			"bits/s (ss)", "client CPU s/GB", "server CPU s/GB"
		for (i = 1; i <= n; i++) {
			w = order[i]
			printf "%-10s %14s %14s %16s %16s\n", w, show(w SUBSEP "tool"),
				show(w SUBSEP "ss"), show(w SUBSEP "c"), show(w SUBSEP "s")
		}
		b = median(col["builtin" SUBSEP "tool"]); i = median(col["iperf3" SUBSEP "tool"])
		printf "builtin/iperf3: %.3f (as reported), %.3f (ss)\n", b / i,
			median(col["builtin" SUBSEP "ss"]) / median(col["iperf3" SUBSEP "ss"])
		missed = !(b / i >= 0.9)
		if (("original" SUBSEP "ss") in col) {
			o = median(col["builtin" SUBSEP "ss"]) / median(col["original" SUBSEP "ss"])
			printf "builtin/original: %.3f (ss)\n", o
			missed = missed || !(o >= 1.5)
		}
		print missed ? "target missed: builtin >= 0.9 x iperf3 (as reported)" \
			(("original" SUBSEP "ss") in col ? " and >= 1.5 x the original" : "") \
			: "target met"
		exit missed
	}' "$tmp/runs"
