#!/bin/bash
# bench/afterwindow.sh - how long flimflam itself takes after the window,
# per workload: reading the tool's output (h2load's request log holds a
# line per request, millions in a minute), the intervals, the summary.
#
# `flimflam run -r RELAY -w WORKLOAD --warmup 1 --duration SECONDS --json`
# for each workload: the time from the window's end (the `window` event's
# arrival plus the duration) to flimflam's exit. A run still going CAP
# seconds after its window is ended (SIGTERM, then SIGKILL to what is
# left of it) and shown as ">CAP". Targets: every workload within 5 s at
# 60 s windows (linear reading: h2load's log of a million lines is read in
# well under a second).

set -eu
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/afterwindow.sh [-d SECONDS] [-w WORKLOADS] [-r RELAY] [-c CAP]
                              [-o FLIMFLAM_CHECKOUT] [-k DIR]"
duration=60 workloads=builtin,iperf3,h2load,h2load-h1 relay=none cap=300 checkout='' keep=''
while getopts ':hd:w:r:c:o:k:' opt; do
	case $opt in
	d) duration=$OPTARG ;;
	w) workloads=$OPTARG ;;
	r) relay=$OPTARG ;;
	c) cap=$OPTARG ;;
	o) checkout=$OPTARG ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
for v in "-d:$duration" "-c:$cap"; do
	case ${v#*:} in '' | *[!0-9]* | 0) echo "afterwindow.sh: ${v%%:*}: '${v#*:}' is not a whole number above 0" >&2; exit 2 ;; esac
done

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
if [ -n "$checkout" ]; then
	ff=$checkout/bin/flimflam
	[ -x "$ff" ] || { echo "afterwindow.sh: '$ff' is missing: build that checkout" >&2; exit 1; }
fi

runs_dir

# leftovers: the processes still running from a run ended at its cap (the
# stages of a flimflam that did not end them): each names a run directory
# of ours on its command line.
leftovers() {
	grep -lsF -- "$FLIMFLAM_RUNS/" /proc/[0-9]*/cmdline | sed -E 's|^/proc/([0-9]+)/.*|\1|' |
		grep -vx "$$" || true
}

# one WORKLOAD: prints "AFTER_S STATUS" (AFTER_S ">CAP" when ended at the cap).
one() {
	local w=$1 ev=$tmp/$1.ev pid st=0 win='' now deadline capped='' p
	"$ff" run -r "$relay" -w "$w" --warmup 1 --duration "$duration" --json >"$ev" 2>"$tmp/$w.err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ -z "$win" ] && grep -qs '"event":"window"' "$ev"; then
			win=$(now_us)
			deadline=$(( win + (duration + cap) * 1000000 ))
		fi
		now=$(now_us)
		if [ -n "$win" ] && [ "$now" -ge "$deadline" ]; then
			capped=1
			kill -TERM "$pid" 2>/dev/null || true
			sleep 5
			kill -KILL "$pid" 2>/dev/null || true
			for p in $(leftovers); do kill -KILL "$p" 2>/dev/null || true; done
			break
		fi
		sleep 0.02
	done
	wait "$pid" || st=$?
	now=$(now_us)
	if [ -z "$win" ]; then
		echo "- $st"
	elif [ -n "$capped" ]; then
		echo ">$cap $st"
	else
		awk -v a="$now" -v w="$win" -v d="$duration" -v st="$st" \
			'BEGIN { printf "%.2f %d\n", (a - w) / 1e6 - d, st }'
	fi
}

IFS=, read -r -a wl <<<"$workloads"
echo "afterwindow: $ff run -r $relay --warmup 1 --duration $duration, per workload; $(load_seen) at the start"
printf '%-10s %12s %8s %6s  %s\n' workload "after (s)" status met "why not (the run's last line)"
status=0
for w in "${wl[@]}"; do
	read -r after st < <(one "$w")
	met=yes
	case $after in
	'>'* | -) met=NO ;;
	*) awk -v a="$after" 'BEGIN { exit !(a <= 5) }' || met=NO ;;
	esac
	[ "$st" -eq 0 ] || met=NO
	[ "$met" = yes ] || status=1
	why=
	[ "$st" -eq 0 ] || why=$(tail -n 1 "$tmp/$w.err" | cut -c1-70)
	printf '%-10s %12s %8s %6s  %s\n' "$w" "$after" "$st" "$met" "$why"
done
echo "(after: seconds from the window's end to flimflam's exit; target: at most 5; $(load_seen) at the end)"
exit "$status"
