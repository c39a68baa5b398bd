# Output files: written whole or not at all (a temporary name, then
# rename), and a directory that cannot take them is an error before any
# load starts.
bats_require_minimum_version 1.5.0
load helper

# in_small_disk KB CMD...: run CMD in a private mount namespace whose
# current directory is a tmpfs of KB kilobytes.
in_small_disk() {
	local kb="$1"
	shift
	unshare -m true 2>/dev/null || skip "cannot make a mount namespace here (needs root)"
	mkdir -p "$BATS_TEST_TMPDIR/small"
	unshare -m bash -c 'mount -t tmpfs -o size="$1"k tmpfs "$2" && cd "$2" && shift 2 && "$@"' \
		_ "$kb" "$BATS_TEST_TMPDIR/small" "$@"
}

@test "files: ff-flame writes its page whole or not at all" {
	mkdir "$BATS_TEST_TMPDIR/out"
	cd "$BATS_TEST_TMPDIR/out"
	echo "old page" >page.html
	printf '\x89PNG\r\n\x1a\n not stacks' >garbage
	run -1 --separate-stderr ff-flame -o page.html garbage
	[ "$(cat page.html)" = "old page" ]
	run -0 --separate-stderr ff-flame -o page.html "$TOP/t/fixtures/ff-flame/base.folded"
	grep -q '</html>' page.html
	# No temporary file is left beside it.
	[ "$(ls -A | sort | tr '\n' ' ')" = "garbage page.html " ]
}

@test "files: record in a directory that cannot be written fails before anything starts" {
	skip_unless_program perf nginx
	cd /proc
	run -1 --separate-stderr flimflam record -r nginx --warmup 0 --duration 1
	[ "$stderr" = "flimflam: 'record' writes perf.data in the current directory: cannot write in '/proc': No such file or directory" ]
	nothing_started
}

@test "files: record and flamegraph on a full disk fail before anything starts" {
	skip_unless_program perf nginx
	for c in record flamegraph; do
		run -1 --separate-stderr in_small_disk 1024 flimflam "$c" -r nginx --warmup 0 --duration 1
		[[ "$stderr" == "flimflam: '"*"' writes perf.data in the current directory: "*" has 1024 KiB free, less than the 16384 KiB needed" ]]
	done
	nothing_started
}

@test "files: bench checks where its results go before running anything" {
	run -1 --separate-stderr ff-bench -r none -w builtin --output /proc/results.jsonl
	[[ "$stderr" == *"ff-bench: cannot keep the results in '/proc/results.jsonl': cannot write in '/proc': No such file or directory"* ]]
	run -1 --separate-stderr in_small_disk 512 ff-bench -r none -w builtin
	[[ "$stderr" == *"less than the 1024 KiB needed"* ]]
	nothing_started
}

@test "files: perf.data is never half written, even when a run is interrupted" {
	skip_unless_program perf nginx
	cd "$BATS_TEST_TMPDIR"
	echo "an older recording" >perf.data
	start_cmd "$BATS_TEST_TMPDIR/ev" record -r nginx --warmup 0 --duration 30
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	sleep 0.5
	kill -INT "$RUN_PID"
	wait_status "$RUN_PID"
	[ "$status" -eq 130 ]
	# The old recording is untouched, and no temporary file is left.
	[ "$(cat perf.data)" = "an older recording" ]
	[ -z "$(ls perf.data.* 2>/dev/null)" ]
}

# Run directories: where they go, and what is made for them. HOME is a
# temporary directory (or, for the passwd home, a tmpfs over it in a
# private mount namespace): never the real home.

# config_path EVENTS: the first relay configuration of a config event.
config_path() {
	jq -r 'select(.event == "config") | .relays[0].config' <<<"$1"
}

@test "run directories: HOME unset or empty means the passwd home, not /" {
	skip_unless_program nginx
	unshare -m true 2>/dev/null || skip "cannot make a mount namespace here (needs root)"
	local pwhome
	pwhome=$(getent passwd "$(id -u)" | cut -d: -f6)
	[ -d "$pwhome" ] && [ "$pwhome" != / ] || skip "this user's passwd home is '$pwhome'"
	for how in unset empty; do
		# / read-only (were / taken for the home, nothing is made there),
		# and a tmpfs for the passwd home.
		run -0 --separate-stderr unshare -m bash -c '
			mount --rbind / / && mount -o remount,bind,ro / &&
				mount -t tmpfs tmpfs "$1" || exit 99
			if [ "$2" = unset ]; then unset HOME; else HOME=; fi
			unset FLIMFLAM_RUNS XDG_STATE_HOME
			ff-topology -r nginx --server-port 5555 --config-only' _ "$pwhome" "$how"
		[[ "$(config_path "$output")" == "$pwhome/.local/state/flimflam/runs/2"*"/r1/nginx.conf" ]] ||
			{ echo "$how: $output"; false; }
	done
	[ ! -e /.local ]
}

@test "run directories: only the last component of a directory the user names is made" {
	skip_unless_program nginx
	local t="$BATS_TEST_TMPDIR"
	# A home that does not exist is not made.
	HOME="$t/nonexistent/x" FLIMFLAM_RUNS= XDG_STATE_HOME= run -1 --separate-stderr \
		flimflam run -r none --warmup 0 --duration 1
	[ "$stderr" = "flimflam: cannot keep run directories under '$t/nonexistent/x': it is not a directory (No such file or directory); set FLIMFLAM_RUNS" ]
	[ ! -e "$t/nonexistent" ]
	# Nor the parents of --run-dir or FLIMFLAM_RUNS.
	run -1 --separate-stderr ff-topology -r nginx --server-port 5555 --config-only --run-dir "$t/a/b/c"
	[ "$stderr" = "ff-topology: run directory '$t/a/b/c': its parent directory does not exist (flimflam makes only the last component)" ]
	[ ! -e "$t/a" ]
	FLIMFLAM_RUNS="$t/q/r" run -1 --separate-stderr flimflam run -r none --warmup 0 --duration 1
	[ "$stderr" = "flimflam: FLIMFLAM_RUNS '$t/q/r': its parent directory does not exist (flimflam makes only the last component)" ]
	[ ! -e "$t/q" ]
	FLIMFLAM_RUNS="$t/q/r" run -1 --separate-stderr flimflam run -w h2load -r none -p tcp --warmup 0 --duration 1
	[ ! -e "$t/q" ]
	# Their last component is made; under an existing home, ours is made.
	run -0 --separate-stderr ff-topology -r nginx --server-port 5555 --config-only --run-dir "$t/last"
	[ -f "$t/last/r1/nginx.conf" ]
	mkdir "$t/home"
	HOME="$t/home" FLIMFLAM_RUNS= XDG_STATE_HOME= run -0 --separate-stderr \
		ff-topology -r nginx --server-port 5555 --config-only
	[[ "$(config_path "$output")" == "$t/home/.local/state/flimflam/runs/2"* ]]
	# An XDG_STATE_HOME that does not exist is not made.
	HOME="$t/home" FLIMFLAM_RUNS= XDG_STATE_HOME="$t/nostate" run -1 --separate-stderr \
		ff-topology -r nginx --server-port 5555 --config-only
	[ ! -e "$t/nostate" ]
}

@test "run directories: a relative XDG_STATE_HOME is ignored; a relative --run-dir and PATH entry work" {
	skip_unless_program nginx
	local t="$BATS_TEST_TMPDIR"
	mkdir "$t/home" "$t/cwd"
	cd "$t/cwd"
	HOME="$t/home" FLIMFLAM_RUNS= XDG_STATE_HOME=state run -0 --separate-stderr \
		ff-topology -r nginx --server-port 5555 --config-only
	[[ "$(config_path "$output")" == "$t/home/.local/state/flimflam/runs/2"* ]]
	[ ! -e "$t/cwd/state" ]
	# The relays run in their own directories: every path they get is
	# absolute, the run directory's and the program's (a relative PATH entry).
	mkdir "$t/cwd/bin"
	ln -s "$(command -v nginx)" "$t/cwd/bin/nginx"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$TOP/builtin/ff-builtin-server" --port "$port" 3>&- &
	server=$!
	PATH="bin:$PATH" ff-topology -r nginx --server-port "$port" --run-dir rel >"$t/ev" 2>"$t/err" 3>&- &
	topo=$!
	wait_for_grep '"event":"end"' "$t/ev" 15 || { cat "$t/err"; kill "$server"; false; }
	event_ok "$t/ev" topology '.run_dir == $ENV.PWD + "/rel" and .relays[0].path == $ENV.PWD + "/bin/nginx"'
	kill -TERM "$topo"
	wait "$topo" || true
	kill "$server"
	wait "$server" || true
}

@test "run directories: FLIMFLAM_KEEP_RUNS and the other numbers in the environment refuse what is not one" {
	FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	for v in abc -1 1x 2.5 99999999999999999999; do
		FLIMFLAM_KEEP_RUNS="$v" run -2 --separate-stderr flimflam run -r none --warmup 0 --duration 1
		[ "$stderr" = "flimflam: FLIMFLAM_KEEP_RUNS: '$v' is not a whole number from 0 to 100000000" ]
	done
	nothing_started
	FLIMFLAM_KEEP_RUNS=abc run -2 --separate-stderr flimflam bench -w builtin -r none --warmup 0 --duration 1 --output "$BATS_TEST_TMPDIR/b.json"
	[[ "$stderr" == *"FLIMFLAM_KEEP_RUNS: 'abc' is not a whole number"* ]]
	FLIMFLAM_VERBOSITY=loud run -2 --separate-stderr flimflam run -r none
	[ "$stderr" = "flimflam: FLIMFLAM_VERBOSITY: 'loud' is not a whole number from -1 to 2" ]
	FLIMFLAM_TEST_TAKE_PORTS=x run -2 --separate-stderr ff-workload serve --run-dir "$BATS_TEST_TMPDIR/w"
	[[ "$stderr" == *"FLIMFLAM_TEST_TAKE_PORTS: 'x' is not a whole number from 0 to 1000" ]]
}
