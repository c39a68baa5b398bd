#!/bin/bash
# bench/turnaround.sh - how long flimflam takes beyond the time it was asked
# to measure.
#
# 1. `flimflam run -r none -w WORKLOAD --warmup 1 --duration 1` for each
#    workload, -n rounds taking turns (and the original flimflam's `run`
#    beside it with -o): the wall time, minus the 2 s asked. Targets: builtin
#    within 0.15 s, iperf3, h2load and h2load-h1 within 0.3 s (median).
# 2. One `--json` run of each, timed event by event: where the rest goes
#    (start to server, to topology, topology to window minus the warmup, the
#    window's end to exit).
# 3. `flimflam bench` of the packaged matrix (every supported case over the
#    relays a distribution packages: nghttpx, nginx, none; -s adds skrouterd
#    when it is on PATH) against the sum of its cases' warmups and windows.
#    Target: at most 5% more.

set -eu
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/turnaround.sh [-n RUNS] [-w WORKLOADS] [-m WARMUP:DURATION] [-M] [-s]
                             [-o FLIMFLAM_CHECKOUT] [-k DIR]"
runs=5 workloads=builtin,iperf3,h2load,h2load-h1 matrix=5:5 no_matrix='' with_skr='' original='' keep=''
while getopts ':hn:w:m:Mso:k:' opt; do
	case $opt in
	n) runs=$OPTARG ;;
	w) workloads=$OPTARG ;;
	m) matrix=$OPTARG ;;
	M) no_matrix=1 ;;
	s) with_skr=1 ;;
	o) original=$OPTARG ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
case $runs in '' | *[!0-9]* | 0) echo "turnaround.sh: -n: '$runs' is not a whole number above 0" >&2; exit 2 ;; esac
case $matrix in
[0-9]*:[1-9]*) mw=${matrix%%:*} md=${matrix#*:} ;;
*) echo "turnaround.sh: -m: '$matrix' is not WARMUP:DURATION" >&2; exit 2 ;;
esac
case $mw$md in *[!0-9]*) echo "turnaround.sh: -m: '$matrix' is not WARMUP:DURATION" >&2; exit 2 ;; esac

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"

runs_dir
export FLIMFLAM_KEEP_RUNS=${FLIMFLAM_KEEP_RUNS:-20}

# The original flimflam, run from its checkout: built with its own `plano
# build`; its print_environment reads /etc/system-release, which Debian
# lacks, so a launcher of ours answers that one read.
orig=()
if [ -n "$original" ]; then
	build_original "$original"
	cat >"$tmp/original.py" <<-'EOF'
	import os, sys
	sys.path.insert(0, os.path.join(os.environ["FLIMFLAM_HOME"], "python"))
	import flimflam.main as m
	plain_read = m.read
	def read(path, *args, **kwargs):
	    if path == "/etc/system-release" and not os.path.exists(path):
	        return "(no /etc/system-release)\n"
	    return plain_read(path, *args, **kwargs)
	m.read = read
	from plano import PlanoCommand
	from flimflam import commands
	PlanoCommand(commands, description="the original flimflam").main()
	EOF
	orig=(env FLIMFLAM_HOME="$original/build/flimflam" /usr/bin/python3 "$tmp/original.py")
fi

# timed OUT CMD...: runs CMD, appends "WALL_SECONDS STATUS LOAD" to OUT.
timed() {
	local out=$1 t0 t1 st=0
	shift
	t0=$(now_us)
	"$@" >"$tmp/last.out" 2>&1 || st=$?
	t1=$(now_us)
	echo "$(( t1 - t0 )) $st $(cut -d' ' -f1 /proc/loadavg)" | awk '{ printf "%.4f %d %s\n", $1 / 1e6, $2, $3 }' >>"$out"
	[ "$st" -eq 0 ] || { echo "turnaround.sh: '$*' failed (status $st):" >&2; tail -n 5 "$tmp/last.out" >&2; }
}

IFS=, read -r -a wl <<<"$workloads"
echo "turnaround: flimflam run -r none --warmup 1 --duration 1 (2 s asked), $runs rounds, taking turns; $(load_seen) at the start"
for ((run = 1; run <= runs; run++)); do
	for w in "${wl[@]}"; do
		timed "$tmp/wall.$w" "$ff" run -r none -w "$w" --warmup 1 --duration 1
		[ -z "$original" ] || timed "$tmp/orig.$w" "${orig[@]}" run -r none -w "$w" --warmup 1 --duration 1
	done
done

printf '\n%-10s %-10s %9s %9s %9s %7s %6s  %s\n' workload tool "median s" "fastest" "slowest" target met "load (min-max)"
summary() {	# FILE WORKLOAD TOOL TARGET
	local f=$1 med
	[ -s "$f" ] || return 0
	med=$(awk '$2 == 0 { print $1 - 2 }' "$f" | median)
	awk -v w="$2" -v tool="$3" -v med="$med" -v target="$4" '
		$2 == 0 { o = $1 - 2; if (n++ == 0 || o < lo) lo = o; if (n == 1 || o > hi) hi = o }
		{ l = $3; if (NR == 1 || l < lmin) lmin = l; if (NR == 1 || l > lmax) lmax = l; if ($2) failed++ }
		END {
			met = target == "-" ? "-" : (med != "-" && med <= target ? "yes" : "NO")
			printf "%-10s %-10s %+9.3f %+9.3f %+9.3f %7s %6s  %s-%s%s\n", w, tool, med, lo, hi,
				target == "-" ? "-" : "+" target, met, lmin, lmax, failed ? "  (" failed " failed)" : ""
		}' "$f"
}
for w in "${wl[@]}"; do
	target=0.3
	[ "$w" != builtin ] || target=0.15
	summary "$tmp/wall.$w" "$w" flimflam "$target" | tee -a "$tmp/verdicts"
	summary "$tmp/orig.$w" "$w" original -
done
status=0
! grep -q ' NO ' "$tmp/verdicts" || status=1
echo "(seconds beyond the 2 s asked: the wall time of the whole command, minus 2)"

# 2. Where the time goes, from one --json run of each.
echo
echo "where it goes (one --json run each; seconds since the command started):"
printf '%-10s %8s %9s %10s %14s %14s %7s\n' workload server topology "window-1" "window end" "exit-end" "wall"
for w in "${wl[@]}"; do
	d=$tmp/events.$w
	watch_run "$d" -r none -w "$w" --warmup 1 --duration 1
	read -r wall st <"$d/wall"
	awk -v w="$w" -v wall="$wall" -v st="$st" '
		{ n = $2; sub(/.*"event":"/, "", n); sub(/".*/, "", n); t = $1 / 1e6 }
		n == "server" && !s { s = t }
		n == "topology" && !tp { tp = t }
		n == "window" && !wi { wi = t }
		(n == "resources" || n == "result") && !e { e = t }
		END {
			printf "%-10s %8.3f %9.3f %10.3f %14.3f %14.3f %7.3f%s\n", w, s, tp, wi - 1, e,
				wall / 1e6 - e, wall / 1e6, st ? "  (failed: status " st ")" : ""
		}' "$d/events"
done
echo "(window-1: when the window opened, less the warmup: the start-up; window end: the first"
echo " of result and resources; exit-end: from then until flimflam exited)"

# 3. The matrix.
[ -z "$no_matrix" ] || exit "$status"
relays=nghttpx,nginx,none
[ -z "$with_skr" ] || ! command -v skrouterd >/dev/null || relays=skrouterd,$relays
echo
echo "matrix: flimflam bench -r $relays --warmup $mw --duration $md; $(load_seen) at the start"
t0=$(now_us)
st=0
(cd "$tmp" && "$ff" bench -r "$relays" --warmup "$mw" --duration "$md" --output "$tmp/matrix.jsonl" \
	>"$tmp/matrix.out" 2>"$tmp/matrix.err") || st=$?
t1=$(now_us)
jq -rs --argjson wall "$(( t1 - t0 ))" --arg st "$st" --arg load "$(cut -d' ' -f1 /proc/loadavg)" '
	[.[] | select(.event == "case" and .status != "skipped" and .status != "unsupported")] as $c
	| ($c | map(.config.warmup_s + .config.duration_s) | add // 0) as $asked
	| ($c | map(.elapsed_s) | add // 0) as $cases
	| ($wall / 1e6) as $w
	| "cases run: \($c | length) (\($c | map(select(.status != "ok")) | length) not ok); asked: \($asked) s of warmups and windows",
	  "wall: \($w * 1000 | round / 1000) s, \(($w / $asked - 1) * 1000 | round / 10)% more than asked (target: at most 5%)\(if $w / $asked - 1 <= 0.05 then "" else "  NOT MET" end)",
	  "the cases themselves: \($cases * 1000 | round / 1000) s (\(($cases / $asked - 1) * 1000 | round / 10)% more); outside the cases: \(($w - $cases) * 1000 | round / 1000) s",
	  "slowest per case beyond its warmup and window:",
	  ($c | map({k: "\(.config.workload)/\(.config.relay)/\(.config.protocol)", o: (.elapsed_s - .config.warmup_s - .config.duration_s)})
	      | sort_by(-.o) | .[:5][] | "  \(.k): +\(.o * 1000 | round / 1000) s"),
	  "exit status \($st), load \($load) at the end"' "$tmp/matrix.jsonl" | tee "$tmp/matrix.summary"
! grep -q 'NOT MET' "$tmp/matrix.summary" && [ "$st" -eq 0 ] || status=1
exit "$status"
