#!/bin/bash
# bench/placement.sh - where the workload's client and server run, against
# the relays, and what flimflam's output says about it.
#
# Runs `flimflam run -r RELAY -w WORKLOAD` (the human summary, as a user
# sees it) in three placements: --cpu-limit 1 on every CPU this script may
# use; the same under `taskset -c 0` (one CPU: the relays must share); and
# --cpu-limit 0 (no pinning). Half a second into each window it reads
# Cpus_allowed_list (/proc/PID/status, every thread) of every process of
# the run, and tells the roles apart by parent: the children of ff-topology
# are the relays, of `ff-workload serve` the server, of `ff-workload drive`
# the client. Target: the client and server never run on a relay's CPUs
# when there are CPUs to spare; when there are none, the output says that
# the workload shares CPUs with the relays.

set -eu
# shellcheck source=bench/opts.sh
. "$(dirname "$0")/opts.sh"

usage="usage: bench/placement.sh [-r RELAYS] [-w WORKLOAD] [-k DIR]"
relays=nginx workload=builtin keep=
command -v skrouterd >/dev/null && relays=nginx,skrouterd
while getopts ':hr:w:k:' opt; do
	case $opt in
	r) relays=$OPTARG ;;
	w) workload=$OPTARG ;;
	*) other_option "$opt" ;;
	esac
done
no_arguments "${@:OPTIND}"
command -v taskset >/dev/null || { echo "placement.sh: taskset is not on PATH" >&2; exit 1; }

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"

runs_dir
warmup=1 duration=2
avail=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)

# roles ROOT: "role pid program cpus" for the relays, server and client of
# the run under ROOT (cpus: the distinct lists of its threads, joined by +).
roles() {
	snapshot "$1" "" "" | awk '
	{ pid = $2; comm[pid] = $3; ppid[pid] = $7 }
	END {
		for (p in comm) if (comm[p] == "ff-workload") {
			f = "/proc/" p "/cmdline"; RS = "\0"; a = ""
			while ((getline x < f) > 0) a = a " " x
			close(f); RS = "\n"
			mode[p] = a ~ / serve/ ? "server" : "client"
		}
		for (p in comm) {
			role = ""
			for (q = p; (q in ppid) && role == ""; q = ppid[q]) {
				up = ppid[q]
				if (comm[up] == "ff-topology") role = "relay"
				else if (comm[up] == "ff-workload") role = mode[up]
			}
			if (role == "") continue
			cpus = ""
			cmd = "cat /proc/" p "/task/*/status 2>/dev/null"
			while ((cmd | getline line) > 0)
				if (line ~ /^Cpus_allowed_list:/) {
					split(line, c, /[ \t]+/)
					if (index("+" cpus "+", "+" c[2] "+") == 0) cpus = cpus (cpus == "" ? "" : "+") c[2]
				}
			close(cmd)
			print role, p, comm[p], cpus == "" ? "-" : cpus
		}
	}' | sort -k1,1 -k2,2n
}

# overlap: reads "role pid program cpus" lines; prints the CPUs that both
# a relay and the client or server may use ("" if none).
overlap() {
	awk '
	function expand(s, set,   n, part, i, r, k) {
		gsub(/\+/, ",", s)
		n = split(s, part, ",")
		for (i = 1; i <= n; i++) {
			if (split(part[i], r, "-") == 2) { for (k = r[1]; k <= r[2]; k++) set[k] = 1 }
			else if (part[i] != "") set[part[i]] = 1
		}
	}
	$1 == "relay" { expand($4, rel) }
	$1 == "client" || $1 == "server" { expand($4, wl) }
	END { s = ""; for (k in wl) if (k in rel) s = s (s == "" ? "" : ",") k; print s }'
}

# place NAME RELAY PREFIX... -- ARGS...: one run; prints what it found.
place() {
	local name=$1 relay=$2 pre=() pid out=$tmp/$1.$2.out probe=$tmp/$1.$2.roles st=0 both note
	shift 2
	while [ "$1" != -- ]; do pre+=("$1"); shift; done
	shift
	"${pre[@]}" "$ff" run -r "$relay" -w "$workload" --warmup "$warmup" --duration "$duration" "$@" \
		>"$out" 2>&1 &
	pid=$!
	# the probe: half a second into the window (the relays start first; skrouterd takes seconds)
	for ((i = 0; i < 400; i++)); do
		[ -z "$(roles "$pid" | awk '$1 == "client"')" ] || break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	sleep "$warmup.5"
	roles "$pid" >"$probe"
	wait "$pid" || st=$?
	echo
	echo "== $name: $relay, ${pre[*]:+${pre[*]} }flimflam run $* (CPUs this script may use: $avail)"
	if [ "$st" -ne 0 ]; then
		echo "   the run failed (status $st):"
		tail -n 3 "$out" | sed 's/^/   /'
		return
	fi
	awk '{ printf "   %-7s %-8s %-16s CPUs %s\n", $1, $2, $3, $4 }' "$probe"
	grep -E '^  (CPU limit|Note):' "$out" | sed 's/^/   output: /' || echo "   output: (no CPU limit or note line)"
	both=$(overlap <"$probe")
	note=$(grep -E '^  Note:' "$out" | paste -sd' ' || true)
	echo "$name $relay $(awk '$1 == "relay"' "$probe" | wc -l) '${both}' '${note}'" >>"$tmp/verdicts"
}

: >"$tmp/verdicts"
echo "placement: $workload, --warmup $warmup --duration $duration; $(count "$(nproc)" CPU); $(load_seen)"
IFS=, read -r -a rl <<<"$relays"
for r in "${rl[@]}"; do
	place all-cpus "$r" -- --cpu-limit 1
	place one-cpu "$r" taskset -c "${avail%%[-,]*}" -- --cpu-limit 1
	place no-limit "$r" -- --cpu-limit 0
done

# The verdicts.
echo
cpus=$(nproc)
status=0
while read -r name relay _ rest; do	# _: the number of relays
	both=${rest#\'}; both=${both%%\'*}
	note=${rest#*\' \'}; note=${note%\'}
	case $name in
	all-cpus)
		if [ "$cpus" -ge 3 ]; then
			if [ -z "$both" ]; then v="met: the workload runs on none of the relays' CPUs"
			else v="NOT MET: the workload may run on the relays' CPUs $both"; status=1; fi
		else
			case $note in
			*"shares CPUs with the relays"*) v="met: no CPU to spare, and the output says the workload shares CPUs with the relays" ;;
			*) v="NOT MET: no CPU to spare, and the output does not say so"; status=1 ;;
			esac
		fi ;;
	one-cpu)
		case $note in
		*"relays share"*"shares CPUs with the relays"*)
			v="met: one CPU, and the output says that the relays share it, and the workload too" ;;
		*) v="NOT MET: one CPU, and the output does not say that the relays and the workload share it"; status=1 ;;
		esac ;;
	no-limit)
		if [ -z "$note" ]; then v="as expected: nothing pinned, no note"
		else v="unexpected note: $note"; status=1; fi ;;
	esac
	printf '%-9s %-10s %s\n' "$name" "$relay" "$v"
done <"$tmp/verdicts"
[ "$cpus" -ge 3 ] || echo "(with $(count "$cpus" CPU), the case where the workload must keep off the relays' CPUs cannot happen here)"
exit "$status"
