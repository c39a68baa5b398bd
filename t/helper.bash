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
# server and client of a run is one or the other).
pids_of_run() {
	local d="$1" p cwd s
	for p in /proc/[0-9]*; do
		s=$(awk '{print $3}' "$p/stat" 2>/dev/null) || continue
		[ "$s" = Z ] && continue
		cwd=$(readlink "$p/cwd" 2>/dev/null)
		if [ "${cwd#"$d"}" != "$cwd" ] ||
		   tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$d"; then
			echo "${p#/proc/}"
		fi
	done
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
