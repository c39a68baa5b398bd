# Output files: written whole or not at all (a temporary name, then
# rename), a device or FIFO written into, a symlink followed, an existing
# results file kept, and a directory that cannot take them is an error
# before any load starts.
bats_require_minimum_version 1.5.0
load helper

setup() {
	# Run directories of each test's own, so nothing_started judges this test.
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
}

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

# in_private_dev SCRIPT: run the bash SCRIPT in a private mount namespace
# whose /dev is a tmpfs of its own holding null, full, zero, urandom and
# the std links (never the machine's /dev). $STACKS is a folded input.
in_private_dev() {
	unshare -m true 2>/dev/null || skip "cannot make a mount namespace here (needs root)"
	STACKS="$TOP/t/fixtures/ff-flame/base.folded" unshare -m bash -c '
		set -e
		mount -t tmpfs tmpfs /dev
		mknod -m 666 /dev/null c 1 3
		mknod -m 666 /dev/full c 1 7
		mknod -m 666 /dev/zero c 1 5
		mknod -m 666 /dev/urandom c 1 9
		ln -s /proc/self/fd /dev/fd
		ln -s /proc/self/fd/0 /dev/stdin
		ln -s /proc/self/fd/1 /dev/stdout
		ln -s /proc/self/fd/2 /dev/stderr
		'"$1"
}

# QUICK: the options of a short bench, two seconds a case (a margin of
# 250 ms for the window on a busy machine) (a bench in which
# nothing runs fails, so the results files here come from real runs).
QUICK="-r none --warmup 0 --duration 2"

# quick_bench ARGS...: ff-bench ARGS; it must succeed, or fail only because
# a run was refused on a busy machine (its record is kept all the same,
# with status failed, and what these tests judge is the file).
quick_bench() {
	run --separate-stderr ff-bench "$@"
	[ "$status" -eq 0 ] || { [ "$status" -eq 1 ] && grep -qE -- "$BUSY_ERE" <<<"$stderr"; } ||
		{ echo "ff-bench $*: status $status: $stderr"; return 1; }
}

@test "files: a device given as an output is written into, never replaced" {
	cd "$BATS_TEST_TMPDIR"	# the script's err file goes here, not in the checkout
	run -0 in_private_dev '
		ff-flame -o /dev/null "$STACKS"; echo "flame null $?"
		st=0; ff-flame -o /dev/full "$STACKS" 2>err || st=$?; echo "flame full $st $(cat err)"
		ff-bench -w builtin '"$QUICK"' --output /dev/null >/dev/null 2>&1; echo "bench null $?"
		st=0; ff-bench -w builtin '"$QUICK"' --output /dev/full >/dev/null 2>err || st=$?
		echo "bench full $st $(grep -c . err) $(tail -n 1 err)"
		echo "flame stdout $(ff-flame -o /dev/stdout "$STACKS" | grep -c "</html>")"
		echo "bench stdout $(ff-bench -w builtin '"$QUICK"' --output /dev/stdout 2>/dev/null | grep -c "\"event\":\"case\"")"
		stat -c "%n %F %t,%T" /dev/null /dev/full
		ls -A /dev | tr "\n" " "; echo
		stat -c "%n %F" /dev/stdout'
	echo "$output"
	[ "${lines[0]}" = "flame null 0" ]
	[ "${lines[1]}" = "flame full 1 ff-flame: cannot write '/dev/full': No space left on device" ]
	[ "${lines[2]}" = "bench null 0" ]
	# The plan, the run, and one line for the error.
	[ "${lines[3]}" = "bench full 1 3 ff-bench: cannot write '/dev/full': No space left on device; the bench stops, and none of its runs went whole into '/dev/full'" ]
	# /dev/stdout, a link to the pipe it is: written into.
	[ "${lines[4]}" = "flame stdout 1" ]
	[ "${lines[5]}" = "bench stdout 1" ]
	[ "${lines[6]}" = "/dev/null character special file 1,3" ]
	[ "${lines[7]}" = "/dev/full character special file 1,7" ]
	# Nothing was made beside them, and the links are still links.
	[ "${lines[8]}" = "fd full null stderr stdin stdout urandom zero " ]
	[ "${lines[9]}" = "/dev/stdout symbolic link" ]
}

@test "files: a FIFO given as an output is written into, and the reader gets it all" {
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	mkfifo fifo
	timeout 60 cat fifo >page &
	run -0 ff-flame -o fifo "$TOP/t/fixtures/ff-flame/base.folded"
	wait $!
	[ -p fifo ]
	grep -q '</html>' page
	timeout 60 cat fifo >results &
	quick_bench -w builtin $QUICK --repeat 2 --output fifo
	wait $!
	[ -p fifo ]
	jq -e -s --arg busy "$BUSY_ERE" 'length == 2 and all(.[]; .status == "ok" or (.reason | test($busy)))' results
	[ "$(ls -A | sort | tr '\n' ' ')" = "fifo page results " ]
}

@test "files: a symlink given as an output is followed: what it names is written" {
	cd "$BATS_TEST_TMPDIR"
	mkdir pages
	echo "old page" >pages/real.html
	chmod 640 pages/real.html
	ln -s pages/real.html link.html
	ln -s pages/new.html dangling.html
	run -0 ff-flame -o link.html "$TOP/t/fixtures/ff-flame/base.folded"
	run -0 ff-flame -o dangling.html "$TOP/t/fixtures/ff-flame/base.folded"
	[ -L link.html ] && [ -L dangling.html ]
	grep -q '</html>' pages/real.html
	# A replaced file keeps its permissions.
	[ "$(stat -c %a pages/real.html)" = 640 ]
	grep -q '</html>' pages/new.html
	# bench --append through a link adds to what it names.
	quick_bench -w builtin $QUICK --output pages/r.jsonl
	ln -s pages/r.jsonl r.jsonl
	quick_bench -w builtin $QUICK --jobs 3 --repeat 2 --output r.jsonl --append
	[ -L r.jsonl ]
	jq -e -s '[.[].config.jobs] == [2, 3, 3]' pages/r.jsonl
	# The report goes beside the name given: pages/r.html, then r.html beside the link.
	[ "$(ls -A pages | sort | tr '\n' ' ')" = "new.html r.html r.jsonl real.html " ]
	grep -q '</html>' r.html
}

@test "files: a directory given as an output is refused before anything is read or run" {
	cd "$BATS_TEST_TMPDIR"
	mkdir out.html
	# ff-flame says so before reading its input (here, one that does not exist).
	run -1 --separate-stderr ff-flame -o out.html missing.perf.data
	[ "$stderr" = "ff-flame: cannot write 'out.html': it is a directory" ]
	run -1 --separate-stderr ff-bench -w builtin -r none --output out.html
	[ "$stderr" = "ff-bench: cannot write 'out.html': it is a directory" ]
	[ -z "$output" ]
	nothing_started
}

@test "files: ff-flame -o naming its own input is refused; the input stays" {
	cd "$BATS_TEST_TMPDIR"
	cp "$TOP/t/fixtures/ff-flame/base.folded" stacks
	cp stacks before
	ln -s stacks other-name
	run -1 --separate-stderr ff-flame -o stacks stacks
	[ "$stderr" = "ff-flame: cannot write 'stacks': it is the input 'stacks'" ]
	run -1 --separate-stderr ff-flame -o other-name --diff "$TOP/t/fixtures/ff-flame/base.folded" stacks
	[ "$stderr" = "ff-flame: cannot write 'other-name': it is the input 'stacks'" ]
	cmp stacks before
}

@test "files: bench refuses an existing results file unless --force or --append" {
	cd "$BATS_TEST_TMPDIR"
	quick_bench -w builtin $QUICK --repeat 2 --output base.jsonl
	cp base.jsonl before
	local runs
	runs=$(ls -A "$FLIMFLAM_RUNS")
	# Refused, before anything runs; the file is untouched.
	run -1 --separate-stderr ff-bench -w builtin -r none --output base.jsonl
	[ "$stderr" = "ff-bench: cannot write 'base.jsonl': it exists (--force replaces it, --append adds the new runs to it)" ]
	[ -z "$output" ]
	cmp base.jsonl before
	[ "$(ls -A "$FLIMFLAM_RUNS")" = "$runs" ]	# nothing started
	run -2 --separate-stderr ff-bench -w builtin -r none --output base.jsonl --force --append
	[ "${stderr_lines[0]}" = "ff-bench: --force replaces the results file, --append adds to it: give one" ]
	# --append keeps every earlier line; summarize and compare read the whole.
	quick_bench -w builtin $QUICK --jobs 3 --output base.jsonl --append
	[ "$(head -n 2 base.jsonl)" = "$(cat before)" ]
	jq -e -s '[.[].config.jobs] == [2, 2, 3]' base.jsonl
	run -0 ff-bench summarize base.jsonl
	run -0 ff-bench compare base.jsonl before
	# --force replaces it.
	quick_bench -w builtin $QUICK --jobs 1 --output base.jsonl --force
	jq -e -s '[.[].config.jobs] == [1]' base.jsonl
	# An empty file takes --append.
	: >empty.jsonl
	quick_bench -w builtin $QUICK --output empty.jsonl --append
	jq -e -s 'length == 1' empty.jsonl
}

@test "files: bench --append refuses a file that is not bench results, and leaves it" {
	cd "$BATS_TEST_TMPDIR"
	echo "my notes" >notes.txt
	run -1 --separate-stderr ff-bench -w builtin -r none --output notes.txt --append
	[ "$stderr" = "ff-bench: notes.txt:1: not JSON: '[' or '{' expected near 'my'" ]
	[ "$(cat notes.txt)" = "my notes" ]
	echo '{"event":"start"}' >events.jsonl
	run -1 --separate-stderr ff-bench -w builtin -r none --output events.jsonl --append
	[ "$stderr" = 'ff-bench: events.jsonl: no bench results in the file (no line has "event":"case")' ]
	nothing_started
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
	[[ "$stderr" == *"ff-bench: cannot write '/proc/results.jsonl': cannot write in '/proc': No such file or directory"* ]]
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

@test "files: perf.data, flamegraph.html or their old copies' places in the way: refused before anything starts" {
	skip_unless_program perf nginx
	ff-capture --check record 2>/dev/null || skip "perf cannot record here: $(ff-capture --check record 2>&1)"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	mkdir perf.data
	run -1 --separate-stderr flimflam record -r nginx --warmup 0 --duration 1
	[ "${stderr_lines[-1]}" = "flimflam: cannot write '$PWD/perf.data': it is a directory" ]
	rmdir perf.data
	echo "a recording" >perf.data
	mkdir perf.data.old
	for c in record c2c mem flamegraph; do
		run -1 --separate-stderr flimflam "$c" -r nginx --warmup 0 --duration 1
		# c2c and mem stop earlier where memory accesses cannot be sampled.
		if [[ "$c" =~ ^(c2c|mem)$ && "$stderr" == *"samples memory accesses"* ]]; then
			continue
		fi
		[ "${stderr_lines[-1]}" = "flimflam: cannot write '$PWD/perf.data': '$PWD/perf.data.old', where the previous one is kept, is a directory" ]
	done
	rmdir perf.data.old
	echo "a page" >flamegraph.html
	mkdir old.flamegraph.html
	run -1 --separate-stderr flimflam flamegraph -r nginx --warmup 0 --duration 1
	[ "${stderr_lines[-1]}" = "flimflam: cannot write '$PWD/flamegraph.html': '$PWD/old.flamegraph.html', where the previous one is kept, is a directory" ]
	rm flamegraph.html
	mv old.flamegraph.html flamegraph.html
	run -1 --separate-stderr flimflam flamegraph -r nginx --warmup 0 --duration 1
	[ "${stderr_lines[-1]}" = "flimflam: cannot write '$PWD/flamegraph.html': it is a directory" ]
	# Nothing started, nothing was touched.
	nothing_started
	[ "$(cat perf.data)" = "a recording" ]
	[ "$(ls -A | sort | tr '\n' ' ')" = "flamegraph.html perf.data " ]
}

@test "files: a second record in the same directory refuses before it starts anything" {
	skip_unless_program perf nginx
	ff-capture --check record 2>/dev/null || skip "perf cannot record here: $(ff-capture --check record 2>&1)"
	cd "$BATS_TEST_TMPDIR"
	start_cmd "$BATS_TEST_TMPDIR/ev" record -r nginx --warmup 0 --duration 30
	wait_for_grep '"event":"window"' "$BATS_TEST_TMPDIR/ev" 15
	local runs
	runs=$(ls "$FLIMFLAM_RUNS")
	for c in record flamegraph; do
		run -1 --separate-stderr flimflam "$c" -r nginx --warmup 0 --duration 1
		[ "${stderr_lines[-1]}" = "flimflam: another flimflam is writing perf.data in '$PWD' now; wait for it to finish, or work in another directory" ]
	done
	sh -c 'sleep 30' &
	local sleeper=$!
	run -1 --separate-stderr ff-capture --pid "$sleeper" --duration 1 record
	[ "${stderr_lines[-1]}" = "ff-capture: another flimflam is writing perf.data in '$PWD' now; wait for it to finish, or work in another directory" ]
	# Whatever the environment: FLIMFLAM_PIPELINE once skipped the lock unseen.
	FLIMFLAM_PIPELINE=1 run -1 --separate-stderr ff-capture --pid "$sleeper" --duration 1 record
	kill "$sleeper"
	[ "${stderr_lines[-1]}" = "ff-capture: another flimflam is writing perf.data in '$PWD' now; wait for it to finish, or work in another directory" ]
	# No run directory more; the first run goes on and ends as asked.
	[ "$(ls "$FLIMFLAM_RUNS")" = "$runs" ]
	kill -INT "$RUN_PID"
	wait_status "$RUN_PID"
	[ "$status" -eq 130 ]
	# Free again: the lock went with the first run.
	run -0 ff-capture --check record
}

@test "run directories: a live run's directory is never pruned, however many runs start beside it" {
	skip_unless_program nginx
	local f="$BATS_TEST_TMPDIR/long" d i
	export FLIMFLAM_KEEP_RUNS=2
	# Long enough to outlast the short runs on any loaded machine; stopped below.
	start_run "$f" -r nginx --warmup 0 --duration 600
	wait_for_grep '"event":"window"' "$f" 30
	d=$(run_dir_of "$f")
	# Three short runs, each pruning all but the newest: the long run is the oldest.
	for i in 1 2 3; do
		run_steady flimflam run -r none --warmup 0 --duration 1
	done
	kill -0 "$RUN_PID"	# still running: its directory is in use
	[ -f "$d/r1/nginx.conf" ]
	kill -INT "$RUN_PID"
	wait_status "$RUN_PID"
	[ "$status" -eq 130 ]
	[ -d "$d" ]
	# The short ones were pruned as before: the long run's and the newest two stay.
	run -0 ls "$FLIMFLAM_RUNS"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "$(basename "$d")" ]
}

@test "run directories: every directory a bench's results name is there at its end, whatever other runs prune" {
	local f="$BATS_TEST_TMPDIR/r.jsonl" err="$BATS_TEST_TMPDIR/err" dir
	ff-bench -w builtin -r none --repeat 3 --warmup 0 --duration 2 --output "$f" \
		>"$BATS_TEST_TMPDIR/out" 2>"$err" 3>&- &
	local bench=$!
	wait_for_grep '^ff-bench: \[1/3\] ' "$err" 60
	# Another flimflam, keeping only its own: the bench's first run is over, its second live.
	FLIMFLAM_KEEP_RUNS=1 run_steady flimflam run -r none --warmup 0 --duration 1
	wait_status "$bench"
	[ "$status" -eq 0 ]
	[ "$(jq -s length "$f")" -eq 3 ]
	for dir in $(jq -r '.run_dir' "$f"); do
		[ -d "$dir" ]
	done
}

# two_benches ARGS...: two ff-bench ARGS started at once (early in a second,
# so that a name made of the time is the same for both); both waited for.
two_benches() {
	local a b n
	n=$(date +%N)
	while [ "${n#0}" -gt 300000000 ]; do
		sleep 0.05
		n=$(date +%N)
	done
	ff-bench "$@" >out1 2>err1 3>&- &
	a=$!
	ff-bench "$@" >out2 2>err2 3>&- &
	b=$!
	wait "$a" || true
	wait "$b" || true
}

@test "files: two benches at once never share a results file: a default name is claimed, or the other gets -2" {
	cd "$BATS_TEST_TMPDIR"
	two_benches -w builtin $QUICK
	run -0 ls flimflam-bench-*
	[ "${#lines[@]}" -eq 4 ]	# two results files, two pages
	for f in flimflam-bench-*.jsonl; do
		jq -e -s 'length == 1' "$f"
		[ -s "${f%.jsonl}.html" ]
	done
	grep -q "^Results: $(ls flimflam-bench-*.jsonl | head -n 1)\$" out1 out2
	grep -q "^Results: $(ls flimflam-bench-*.jsonl | tail -n 1)\$" out1 out2
	# A name given, new: one bench takes it, the other is refused before it runs.
	two_benches -w builtin $QUICK --output same.jsonl
	cat err1 err2
	[ "$(cat err1 err2 | grep -c "^ff-bench: cannot write 'same.jsonl': it exists")" -eq 1 ]
	jq -e -s 'length == 1' same.jsonl
}

@test "files: of two benches given one new name, the one that loses is told that name, even when the other's page came first" {
	skip_unless_program strace
	cd "$BATS_TEST_TMPDIR"
	# The first bench is held for 3 s at its first look at same.html, after
	# its look at same.jsonl; the second starts meanwhile. One runs, and
	# the other is refused for the name it was given (the first once was
	# refused for the page the second had claimed).
	strace -f -qq -o /dev/null -P same.html -e inject=all:delay_enter=3000000:when=1 \
		ff-bench -w builtin $QUICK --output same.jsonl >out1 2>err1 3>&- &
	local a=$! sa=0 sb=0
	sleep 0.5
	ff-bench -w builtin $QUICK --output same.jsonl >out2 2>err2 3>&- || sb=$?
	wait "$a" || sa=$?
	cat err1 err2
	[ $((sa + sb)) -eq 1 ]
	[ "$(cat err1 err2 | grep -c "^ff-bench: cannot write 'same.jsonl': it exists")" -eq 1 ]
	run ! grep -q 'same.html' err1 err2
	jq -e -s 'length == 1' same.jsonl
}

@test "files: two benches appending to one file at once both keep every run" {
	cd "$BATS_TEST_TMPDIR"
	quick_bench -w builtin $QUICK --output both.jsonl
	two_benches -w builtin $QUICK --repeat 2 --append --output both.jsonl
	grep -q '^Results: both.jsonl$' out1
	grep -q '^Results: both.jsonl$' out2
	jq -e -s 'length == 5 and all(.[]; .event == "case")' both.jsonl
	run -0 ff-bench summarize both.jsonl
}

@test "files: a disk that fills mid-bench: the bench says what its file keeps, prints their table, exits 1" {
	unshare -m true 2>/dev/null || skip "cannot make a mount namespace here (needs root)"
	mkdir -p "$BATS_TEST_TMPDIR/small"
	# The results on a small tmpfs of their own, filled once the first run is in the file.
	run --separate-stderr unshare -m bash -c '
		mount -t tmpfs -o size=2m tmpfs "$1" && cd "$1" || exit 99
		ff-bench -w builtin -r none --warmup 0 --duration 1 --repeat 3 --output r.jsonl 3>&- &
		bench=$!
		for ((i = 0; i < 600; i++)); do
			[ "$(wc -l <r.jsonl)" = 1 ] && break
			sleep 0.1
		done
		cat /dev/zero >fill 2>/dev/null
		wait $bench
		st=$?
		cp r.jsonl "$2/kept.jsonl"
		ls -A >"$2/ls"
		exit $st' _ "$BATS_TEST_TMPDIR/small" "$BATS_TEST_TMPDIR"
	echo "$stderr"
	[ "$status" -eq 1 ]
	grep -qx "ff-bench: cannot write 'r.jsonl': No space left on device; the bench stops: 'r.jsonl' keeps this bench's first run whole, of 2 finished" <<<"$stderr"
	jq -e -s 'length == 1 and .[0].repeat == 1' "$BATS_TEST_TMPDIR/kept.jsonl"
	# The table of what was kept, and where; no page (no room for it), no temporary file left.
	has_line '^builtin +none +tcp +[0-9.]+[KMG]'
	has_line "^Results: r.jsonl \(the runs above; the bench stopped as no more could be kept\)$"
	[ "$(cat "$BATS_TEST_TMPDIR/ls")" = "$(printf 'fill\nr.jsonl')" ]
}
