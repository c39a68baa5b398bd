# Shared by every .bats file: bin/ first on PATH, bats-assert, and helpers.

TOP="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
export PATH="$TOP/bin:$PATH"
export FLIMFLAM_RUNS="$BATS_FILE_TMPDIR/runs"

for lib in /usr/lib/bats /usr/share/bats /usr/local/lib/bats; do
	if [ -d "$lib/bats-support" ]; then
		load "$lib/bats-support/load"
		load "$lib/bats-assert/load"
		break
	fi
done

# skip_unless_program PROG...: skip the test when a program is missing.
skip_unless_program() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null || skip "$p is not on PATH"
	done
}

# golden NAME FILE: compare FILE with t/golden/NAME; FF_UPDATE_GOLDEN=1 rewrites it.
golden() {
	local want="$TOP/t/golden/$1"
	if [ -n "${FF_UPDATE_GOLDEN:-}" ]; then
		cp "$2" "$want"
	fi
	diff -u "$want" "$2"
}

# jsonl_ok FILE: every line is a JSON object whose first key is "event",
# with snake_case keys, and the first event is start.
jsonl_ok() {
	jq -e -s '
		length > 0 and
		(.[0].event == "start") and
		all(.[]; type == "object" and (keys_unsorted[0] == "event") and
		    all(keys[]; test("^[a-z0-9_]+$")))' "$1" >/dev/null
}

# pids_of_run DIR: live processes whose command line mentions the run
# directory DIR or whose working directory is in it (every stage, relay,
# server and client of a run is one or the other). Zombies have neither.
# Two commands for all of /proc, so it is quick: a run may end meanwhile.
pids_of_run() {
	local d="$1"
	{
		# The pattern from a file, so grep's own command line does not match.
		grep -lsFf <(printf '%s\n' "$d") /proc/[0-9]*/cmdline
		find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$d" -o -lname "$d/*" \) -print
	} 2>/dev/null | sed -E 's|^/proc/([0-9]+)/.*|\1|' | sort -un
}

# descendants PID: PID's living descendants, one per line.
descendants() {
	local kids k
	kids=$(cat /proc/"$1"/task/*/children 2>/dev/null)
	for k in $kids; do
		echo "$k"
		descendants "$k"
	done
}

# wait_for_file FILE SECONDS: wait until FILE exists and is non-empty.
wait_for_file() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_for_grep PATTERN FILE SECONDS
wait_for_grep() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# all_gone PID...: true when none of the pids is alive (zombies count as gone).
all_gone() {
	local p s
	for p in "$@"; do
		s=$(awk '{print $3}' /proc/"$p"/stat 2>/dev/null) || continue
		[ "$s" = Z ] || [ -z "$s" ] || return 1
	done
	return 0
}

# event_ok FILE NAME JQ-EXPR: FILE has at least one NAME event, and every
# NAME event satisfies JQ-EXPR. (jq -e alone judges only the last input.)
event_ok() {
	jq -e -s --arg n "$2" "[.[] | select(.event == \$n)] | length > 0 and all(.[]; $3)" "$1" >/dev/null ||
		{ echo "event_ok $2: $3: failed on:"; jq -c --arg n "$2" 'select(.event == $n)' "$1"; false; }
}

# wait_status PID: wait for a background job of this shell; its status in $status.
wait_status() {
	status=0
	wait "$1" || status=$?
}

# A PATH without skrouterd, whatever this machine has.
path_without_skrouterd() {
	local d out=
	IFS=: read -ra dirs <<<"$PATH"
	for d in "${dirs[@]}"; do
		[ -x "$d/skrouterd" ] || out="$out${out:+:}$d"
	done
	echo "$out"
}

# start_run FILE ARGS...: flimflam run --json ARGS in the background,
# events to FILE, stderr to FILE.err; sets RUN_PID.
start_run() {
	local f="$1"
	shift
	start_cmd "$f" run "$@"
}

# start_cmd FILE COMMAND ARGS...: flimflam COMMAND --json ARGS, likewise.
start_cmd() {
	local f="$1" c="$2"
	shift 2
	# fd 3 is bats's: a process left holding it would hang the suite
	# instead of failing the test that left it.
	flimflam "$c" --json "$@" >"$f" 2>"$f.err" 3>&- &
	RUN_PID=$!
}

# stage_pid NAME: the pid of a stage of the run RUN_PID ("serve",
# "ff-topology", "drive", "ff-capture").
stage_pid() {
	local p
	for p in $(descendants "$RUN_PID"); do
		if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qE "(^|/)(ff-workload $1|$1) "; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

run_dir_of() {
	jq -r 'select(.event == "server") | .run_dir' "$1" | head -n 1
}

# nothing_started: no run directory was even made.
nothing_started() {
	[ ! -e "$FLIMFLAM_RUNS" ] || [ -z "$(ls -A "$FLIMFLAM_RUNS")" ]
}

# path_without PROG...: a directory of symlinks to every program on PATH
# except PROG...; echoes its name.
path_without() {
	local dir="$BATS_TEST_TMPDIR/path" d p
	mkdir -p "$dir"
	local IFS=:
	for d in $PATH; do
		[ -d "$d" ] && ln -s "$d"/* "$dir"/ 2>/dev/null
	done
	for p in "$@"; do
		rm -f "$dir/$p"
	done
	echo "$dir"
}

# free_port: a TCP port on 127.0.0.1 that was free a moment ago.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_exit PID SECONDS: wait up to SECONDS for a background child, then
# for it; its status in $status.
wait_exit() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	status=0
	wait "$1" || status=$?
}
