#!/bin/bash
# bench/owncpu.sh - the CPU flimflam itself uses while it measures.
#
# Runs `flimflam run --json` for each workload over each relay, -n rounds
# taking turns, and follows the event stream (common.sh's watch_run): when
# `window` arrives it reads utime + stime (/proc/PID/stat) and the threads'
# run time (/proc/PID/task/TID/schedstat, nanoseconds) of every process of
# the run, and again just before the window closes. "flimflam" is the
# dispatcher and every ff-* stage together, plus anything they run; the
# workload's client and server and the relays are shown apart, since they
# are what is measured, not the tool. Shares are of one CPU over the
# window. Target: flimflam under 1%.
#
# With -o it also runs the original flimflam (Python) from a checkout, and
# reads its Python process and pidstat the same way, timed from its start
# (it emits no events): from 0.5 s after its warmup to 0.3 s before its end.

set -eu
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/owncpu.sh [-n RUNS] [-w WORKLOADS] [-r RELAYS] [-W WARMUP] [-d DURATION]
                          [-o FLIMFLAM_CHECKOUT] [-k DIR]"
runs=3 workloads=builtin,iperf3,h2load,h2load-h1 relays=none,nginx warmup=2 duration=10 original='' keep=''
while getopts ':hn:w:r:W:d:o:k:' opt; do
	case $opt in
	n) runs=$OPTARG ;;
	w) workloads=$OPTARG ;;
	r) relays=$OPTARG ;;
	W) warmup=$OPTARG ;;
	d) duration=$OPTARG ;;
	o) original=$OPTARG ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
whole_numbers "$runs" "$warmup" "$duration"
if [ "$runs" -lt 1 ] || [ "$duration" -lt 2 ]; then
	echo "owncpu.sh: need -n 1 or more and -d 2 or more" >&2
	exit 2
fi

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"

runs_dir

if [ -n "$original" ]; then
	build_original "$original"
	# It expects Fedora: /etc/system-release (its print_environment reads
	# it) and nginx's stream module in /usr/lib64. Where they are not, our
	# launcher answers that read and that check, and its built copies of
	# the nginx relay configurations get this machine's module path.
	module=
	for m in /usr/lib*/nginx/modules/ngx_stream_module.so; do
		[ -e "$m" ] && { module=$m; break; }
	done
	if [ -n "$module" ]; then
		sed -i "s|/usr/lib64/nginx/modules/ngx_stream_module.so|$module|" \
			"$original"/build/flimflam/config/nginx-*.conf
	fi
	cat >"$tmp/original.py" <<-'EOF'
	import os, sys
	sys.path.insert(0, os.path.join(os.environ["FLIMFLAM_HOME"], "python"))
	import flimflam.main as m
	plain_read, plain_exists = m.read, m.exists
	def read(path, *args, **kwargs):
	    if path == "/etc/system-release" and not os.path.exists(path):
	        return "(no /etc/system-release)\n"
	    return plain_read(path, *args, **kwargs)
	def exists(path):
	    if path == "/usr/lib64/nginx/modules/ngx_stream_module.so":
	        return plain_exists(path) or bool(os.environ.get("STREAM_MODULE"))
	    return plain_exists(path)
	m.read, m.exists = read, exists
	from plano import PlanoCommand
	from flimflam import commands
	PlanoCommand(commands, description="the original flimflam").main()
	EOF
fi

# The original, timed from its start: DIR WORKLOAD RELAY. Its Python and
# pidstat are the tool; the rest is classed by program name.
orig_measure() {
	local dir=$1 pid t0 t
	mkdir -p "$dir"
	t0=$(now_us)
	# It pins R2 to CPU 2 (and 6, 10, 14), which a 2-CPU machine lacks.
	STREAM_MODULE=$module FLIMFLAM_HOME=$original/build/flimflam /usr/bin/python3 "$tmp/original.py" run \
		-w "$2" -r "$3" --warmup "$warmup" --duration "$duration" \
		--cpu-limit "$( [ "$(nproc)" -ge 3 ] && echo 1 || echo 0)" >"$dir/out" 2>&1 &
	pid=$!
	reclass() {
		awk '{ c = $3
			if (c ~ /^python/ || c == "pidstat" || c == "taskset") $1 = "tool"
			else if (c == "client" || c == "h2load") $1 = "client"
			else if (c == "server" || c == "nghttpd") $1 = "server"
			else if (c == "skrouterd" || c == "nghttpx") $1 = "relay"
			else if (c == "iperf3" || c == "nginx") {
				a = ""; f = "/proc/" $2 "/cmdline"; RS = "\0"
				while ((getline x < f) > 0) a = a " " x
				close(f); RS = "\n"
				if (c == "iperf3") $1 = a ~ / --server/ ? "server" : "client"
				else $1 = a ~ /http1-server/ ? "server" : "relay"
			}
			print }'
	}
	sleep "$(awk -v w="$warmup" 'BEGIN { print w + 0.7 }')"
	t=$(now_us)
	{ echo "T $(( t - t0 ))"; snapshot "$pid" "" "" | reclass; } >"$dir/cpu.window"
	sleep "$(awk -v d="$duration" 'BEGIN { print d - 0.8 }')"
	t=$(now_us)
	{ echo "T $(( t - t0 ))"; snapshot "$pid" "" "" | reclass; } >"$dir/cpu.end"
	wait "$pid" || echo "owncpu.sh: the original failed ($2 over $3); see $dir/out" >&2
	echo "$(( $(now_us) - t0 )) 0" >"$dir/wall"
}

# The tool's processes by name over the window: "NAME NS_SHARE" lines; the
# two ff-workload stages told apart by whether the server is their child.
tool_breakdown() {
	awk '
	FNR == 1 { file++ }
	$1 == "T" { t[file] = $2; next }
	$1 == "server" { serve[$7] = 1 }
	$1 != "tool" { next }
	file == 1 { n0[$2] = $5; next }
	{ n[$2] = $5 - n0[$2]; comm[$2] = $3 }
	END {
		w = (t[2] - t[1]) / 1e6
		for (p in n) {
			c = comm[p]
			if (c == "ff-workload") c = (p in serve) ? "ff-workload_serve" : "ff-workload_drive"
			s[c] += n[p] / 1e9 / w
		}
		for (c in s) printf "%s %.6f\n", c, s[c]
	}' "$1/cpu.window" "$1/cpu.end"
}

IFS=, read -r -a wl <<<"$workloads"
IFS=, read -r -a rl <<<"$relays"
echo "own CPU: flimflam run --warmup $warmup --duration $duration, $runs rounds taking turns; $(load_seen) at the start"
: >"$tmp/results"
for ((run = 1; run <= runs; run++)); do
	for r in "${rl[@]}"; do
		for w in "${wl[@]}"; do
			d=$tmp/$w.$r.$run
			watch_run "$d" -r "$r" -w "$w" --warmup "$warmup" --duration "$duration"
			read -r _ st <"$d/wall"	# wall time: not this script's measure
			if [ "$st" -ne 0 ] || [ ! -s "$d/cpu.end" ]; then
				echo "owncpu.sh: $w over $r failed (status $st): $(tail -n 1 "$d/stderr")" >&2
				continue
			fi
			read -r tt tn g1 <<<"$(cpu_share "$d" tool)"
			read -r ct _ g2 <<<"$(cpu_share "$d" client)"
			read -r sv _ g3 <<<"$(cpu_share "$d" server)"
			read -r rt _ g4 <<<"$(cpu_share "$d" relay)"
			if [ "$g1$g2$g3$g4" != 0000 ]; then
				echo "owncpu.sh: $w over $r, round $run: the window had closed before the second reading (a loaded machine); not counted" >&2
				continue
			fi
			echo "flimflam $w $r $run $tn $tt $ct $sv $rt $(cut -d' ' -f1 /proc/loadavg)" >>"$tmp/results"
			tool_breakdown "$d" | sed "s/^/part $w $r $run /" >>"$tmp/results"
			if [ -n "$original" ]; then
				o=$tmp/orig.$w.$r.$run
				orig_measure "$o" "$w" "$r"
				read -r tt tn _ <<<"$(cpu_share "$o" tool)"
				read -r ct _ <<<"$(cpu_share "$o" client)"
				read -r sv _ <<<"$(cpu_share "$o" server)"
				read -r rt _ <<<"$(cpu_share "$o" relay)"
				echo "original $w $r $run $tn $tt $ct $sv $rt $(cut -d' ' -f1 /proc/loadavg)" >>"$tmp/results"
				tool_breakdown "$o" | sed "s/^/opart $w $r $run /" >>"$tmp/results"
			fi
		done
	done
done

# Medians over the rounds, as % of one CPU.
status=0
echo
printf '%-9s %-10s %-6s %12s %12s %9s %9s %9s %6s %s\n' tool workload relay "own (ns) %" "own (tick) %" "client %" "server %" "relays %" met "load"
for r in "${rl[@]}"; do
	for w in "${wl[@]}"; do
		for who in flimflam original; do
			grep -q "^$who $w $r " "$tmp/results" || continue
			line=$who
			for col in 5 6 7 8 9; do
				line="$line $(awk -v w="$w" -v r="$r" -v who="$who" -v c="$col" \
					'$1 == who && $2 == w && $3 == r && $c != "-" { print 100 * $c }' "$tmp/results" | median)"
			done
			loads=$(awk -v w="$w" -v r="$r" -v who="$who" '$1 == who && $2 == w && $3 == r { print $10 }' \
				"$tmp/results" | sort -g | sed -n '1p;$p' | paste -sd-)
			read -r _ a b c d e <<<"$line"
			met=-
			[ "$who" != flimflam ] || met=$(awk -v a="$a" 'BEGIN { print a < 1 ? "yes" : "NO" }')
			printf '%-9s %-10s %-6s %12.3f %12.2f %9.1f %9.1f %9.1f %6s %s\n' "$who" "$w" "$r" "$a" "$b" "$c" "$d" "$e" "$met" "$loads"
			[ "$met" != NO ] || status=1
		done
	done
done
echo "(own: the dispatcher and every ff-* stage together, from schedstat (ns) and from"
echo " utime+stime (10 ms ticks); % of one CPU over the window, median of the rounds)"
echo
echo "own CPU by process, % of one CPU, median over every case and round:"
awk '$1 == "part" || $1 == "opart" { print ($1 == "part" ? "flimflam" : "original"), $5, 100 * $6 }' "$tmp/results" |
	sort -k1,1 -k2,2 | awk '
	function flush() { if (k != "") { m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		printf "  %-9s %-20s %8.4f%%  (max %.4f%%)\n", kt, kp, m, a[n] } }
	{ key = $1 " " $2; if (key != k) { flush(); k = key; kt = $1; kp = $2; n = 0 }
	  v = $3; for (i = ++n; i > 1 && a[i - 1] > v; i--) a[i] = a[i - 1]; a[i] = v }
	END { flush() }'
exit "$status"
