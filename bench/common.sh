# shellcheck shell=bash
# bench/common.sh - what the scripts of bench/ share; sourced, not run.
# Needs bash 5 ($EPOCHREALTIME), awk, jq.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ff=$top/bin/flimflam
hz=$(getconf CLK_TCK)

[ -x "$ff" ] || { echo "${0##*/}: '$ff' is missing: run make" >&2; exit 1; }
command -v jq >/dev/null || { echo "${0##*/}: jq is not on PATH" >&2; exit 1; }
[ -n "${EPOCHREALTIME:-}" ] || { echo "${0##*/}: needs bash 5 (\$EPOCHREALTIME)" >&2; exit 1; }

# Microseconds since the epoch, as an integer.
now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }

# count N NOUN: "1 CPU", "2 CPUs".
count() { if [ "$1" = 1 ]; then echo "1 $2"; else echo "$1 $2s"; fi; }

# The 1-minute load average and how many CPUs there are: "load 6.8 on 2 CPUs".
load_seen() { echo "load $(cut -d' ' -f1 /proc/loadavg) on $(count "$(nproc)" CPU)"; }

# median: the median of the numbers on stdin ("-" if none).
median() {
	sort -g | awk '{ a[NR] = $1 } END {
		if (!NR) { print "-"; exit }
		print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}

# snapshot ROOT RELAY_PIDS SERVER_PID: one line per process of ROOT's tree,
#   class pid comm ticks ns cpus ppid cticks
# ticks: utime + stime from /proc/PID/stat (all threads; not its children,
# whose CPU is cticks: cutime + cstime, the children it has reaped); ns: the
# sum of the threads' run time from /proc/PID/task/TID/schedstat, exact
# where ticks are 10 ms samples. class: relay (a relay of the topology
# event or its descendant), server (the workload's server, likewise),
# client (any other descendant of an ff-workload: the workload's client),
# tool (everything else: the dispatcher, the ff-* stages, whatever they run).
# cpus: its Cpus_allowed_list; comm with blanks made underscores.
snapshot() {
	awk -v root="$1" -v relays="$2" -v server="$3" '
	BEGIN {
		n = split(relays, r, /[ ,]+/)
		for (i = 1; i <= n; i++) if (r[i] != "") relay[r[i]] = 1
		for (i = 1; i < ARGC; i++) {
			f = ARGV[i]
			if ((getline line < f) <= 0) { close(f); continue }
			close(f)
			if (f ~ /schedstat$/) {
				split(f, p, "/"); split(line, s, " ")
				ns[p[3]] += s[1]
				continue
			}
			rest = line; sub(/.*\) /, "", rest)
			pid = line + 0
			c = substr(line, index(line, "(") + 1)
			c = substr(c, 1, length(c) - length(rest) - 2)
			gsub(/ /, "_", c)
			split(rest, x, " ")
			ppid[pid] = x[2]; comm[pid] = c; ticks[pid] = x[12] + x[13]
			cticks[pid] = x[14] + x[15]
		}
		for (pid in ppid) {
			# the first mark on the way up to ROOT; none: not ours
			cls = ""
			for (q = pid; q in ppid; q = ppid[q]) {
				if (cls == "" && q in relay) cls = "relay"
				else if (cls == "" && q == server) cls = "server"
				else if (cls == "" && q != pid && comm[q] == "ff-workload") cls = "client"
				if (q == root) break
			}
			if (q != root) continue
			cpus = "-"
			f = "/proc/" pid "/status"
			while ((getline line < f) > 0)
				if (line ~ /^Cpus_allowed_list:/) { split(line, cl, /[ \t]+/); cpus = cl[2] }
			close(f)
			printf "%s %d %s %.0f %.0f %s %d %.0f\n", (cls == "" ? "tool" : cls), pid, comm[pid],
				ticks[pid], ns[pid], cpus, ppid[pid], cticks[pid]
		}
		exit
	}' /proc/[0-9]*/stat /proc/[0-9]*/task/[0-9]*/schedstat
}

# pids_of EVENT-LINE: every "pid" member's value, comma-separated.
pids_of() {
	local rest=$1 out=
	while [[ $rest =~ \"pid\":([0-9]+)(.*) ]]; do
		out=$out${out:+,}${BASH_REMATCH[1]}
		rest=${BASH_REMATCH[2]}
	done
	echo "$out"
}

# watch_run DIR ARGS...: runs `flimflam run ARGS --json` and follows its
# events: a snapshot of every process of the run when `window` arrives, and
# another MARGIN_US (default 250000) microseconds before the window closes, timed
# from that arrival. Not at `result` or `resources`: by the time they
# arrive, builtin's client has exited and the stages are exiting, and a
# zombie has no schedstat (a race seen in practice); the window arrives a
# few ms late, so the second snapshot stays inside it. Leaves in DIR:
#   events        "MICROSECONDS EVENT-JSON" per line, since the start
#   cpu.window    the first snapshot, "T MICROSECONDS" first
#   cpu.end       the second
#   wall          "WALL_MICROSECONDS EXIT_STATUS"
#   stderr        flimflam's
watch_run() {
	local dir=$1 t0 t line name relays='' server='' root st end_at=0 left r fd
	shift
	mkdir -p "$dir"
	rm -f "$dir/cpu.window" "$dir/cpu.end"
	: >"$dir/events"
	t0=$(now_us)
	coproc FFRUN { exec "$ff" run "$@" --json 2>"$dir/stderr"; }
	root=$FFRUN_PID
	exec {fd}<&"${FFRUN[0]}"	# bash drops FFRUN once the coprocess ends
	while :; do
		if [ "$end_at" -gt 0 ]; then
			t=$EPOCHREALTIME
			left=$(( end_at - (${t/./} - t0) ))
			if [ "$left" -le 0 ]; then
				{ echo "T $(( end_at - left ))"; snapshot "$root" "$relays" "$server"; } >"$dir/cpu.end"
				end_at=0
				continue
			fi
			r=0
			IFS= read -r -t "$(printf '%d.%06d' $((left / 1000000)) $((left % 1000000)))" \
				line <&"$fd" || r=$?
			[ "$r" -le 128 ] || continue	# the timeout
			[ "$r" -eq 0 ] || break
		else
			IFS= read -r line <&"$fd" || break
		fi
		t=$EPOCHREALTIME
		t=$(( ${t/./} - t0 ))
		name=${line#\{\"event\":\"}
		name=${name%%\"*}
		case $name in
		# no jq here: a process per event would delay the next one
		server) [[ $line =~ \"pid\":([0-9]+) ]] && server=${BASH_REMATCH[1]} ;;
		topology) relays=$(pids_of "$line") ;;
		window)
			{ echo "T $t"; snapshot "$root" "$relays" "$server"; } >"$dir/cpu.window"
			[[ $line =~ \"duration_s\":([0-9]+) ]]
			end_at=$(( t + BASH_REMATCH[1] * 1000000 - ${MARGIN_US:-250000} ))
			;;
		esac
		echo "$t $line" >>"$dir/events"
	done
	exec {fd}<&-
	st=0
	wait "$root" || st=$?
	echo "$(( $(now_us) - t0 )) $st" >"$dir/wall"
}

# cpu_share DIR CLASS: CPU of the processes of CLASS over the window (from
# the two snapshots of watch_run) as a fraction of one CPU, "TICKS_SHARE
# NS_SHARE GONE", GONE counting the processes that had exited by the second
# snapshot, other than the tool's helpers (the run is then spoiled: the
# snapshot came too late); processes that
# started inside the window count from zero, and so do the children the
# processes reaped inside it (cutime + cstime, in ticks).
cpu_share() {
	awk -v cls="$2" -v hz="$hz" '
	FNR == 1 { file++ }
	$1 == "T" { t[file] = $2; next }
	$1 != cls { next }
	file == 1 { t0[$2] = $4; n0[$2] = $5; c0[$2] = $8; comm0[$2] = $3; next }
	$6 == "-" { next }	# exited, a zombie: no schedstat
	{
		# children reaped inside the window count too (ticks only)
		seen[$2] = 1; c = $8 - c0[$2]
		dt += $4 - t0[$2] + c; dn += $5 - n0[$2] + c * 1e9 / hz
	}
	END {
		# a helper of the tool may end inside the window (its parent
		# reaps it: cticks); a stage or any process of the workload may not
		for (p in t0) if (!(p in seen) && (cls != "tool" || comm0[p] ~ /^(flimflam|ff-)/)) gone++
		w = (t[2] - t[1]) / 1e6
		if (w <= 0) { print "- - -"; exit }
		printf "%.5f %.5f %d\n", dt / hz / w, dn / 1e9 / w, gone
	}' "$1/cpu.window" "$1/cpu.end"
}

# event_time DIR NAME: seconds since the start at which the first NAME event
# arrived ("-" if none).
event_time() {
	awk -v n="\"event\":\"$2\"" 'index($0, n) { printf "%.3f\n", $1 / 1e6; found = 1; exit }
		END { if (!found) print "-" }' "$1/events"
}

# scratch: a scratch directory in $tmp and a list of started processes in
# pids (add to it: pids+=($!)); on exit, Ctrl-C or SIGTERM the processes
# are ended and waited for, and the directory is removed.
scratch() {
	tmp=$(mktemp -d)
	pids=()
	trap end_scratch EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
end_scratch() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}

# runs_dir: $tmp, the directory of -k ($keep) or else a new one removed on
# exit, and flimflam's run directories in it (FLIMFLAM_RUNS).
runs_dir() {
	tmp=${keep:-$(mktemp -d)}
	mkdir -p "$tmp"
	[ -n "${keep:-}" ] || trap 'rm -rf "$tmp"' EXIT
	export FLIMFLAM_RUNS=$tmp/runs
}

# build_original DIR: the original flimflam (Python) built in its checkout
# DIR by its own `plano build`, logged to $tmp/original-build.log; the
# script fails when DIR is no such checkout or the build fails.
build_original() {
	[ -d "$1/builtin" ] || { echo "${0##*/}: '$1' is not a flimflam checkout" >&2; exit 1; }
	(cd "$1" && ./plano build >"$tmp/original-build.log" 2>&1) || {
		echo "${0##*/}: cannot build the original in '$1'; see $tmp/original-build.log" >&2
		exit 1
	}
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on just now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_listen PORT: until something listens on 127.0.0.1:PORT (4 s at most,
# then the script fails).
wait_listen() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -n "$(ss -ltnH "sport = :$1")" ] && return 0
		sleep 0.02
	done
	echo "${0##*/}: nothing listens on port $1" >&2
	exit 1
}
