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
