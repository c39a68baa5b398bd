# Ports and directories: a port lost between choice and bind is retried;
# runs at once do not collide; run directories are private, kept few, and
# nothing goes to fixed paths in /tmp.
bats_require_minimum_version 1.5.0
load helper

setup() {
	skip_unless_program nginx
}

@test "ports: a port taken between choice and bind is retried (server and relays)" {
	# The hook takes the first N ports each program hands out, as another
	# program would between our choice and the child's bind.
	FLIMFLAM_TEST_TAKE_PORTS=2 run_steady flimflam --verbose run --json -r nginx --warmup 0 --duration 1
	echo "$stderr"
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0'
	[[ "$stderr" == *"ff-workload: port "*" was taken; trying another"* ]]
	[[ "$stderr" == *"ff-topology: r2 lost its port to another program; trying other ports"* ]]
	# Quiet without --verbose.
	FLIMFLAM_TEST_TAKE_PORTS=1 run_steady flimflam run -r none --warmup 0 --duration 1
	[[ "$stderr" != *"taken"* ]]
}

@test "ports: three runs at once all succeed, each with its own ports and directory" {
	for n in 1 2 3; do
		start_run "$BATS_TEST_TMPDIR/$n" -r nginx --warmup 1 --duration 2
		eval "p$n=$RUN_PID"
	done
	for n in 1 2 3; do
		eval "wait_status \$p$n"
		[ "$status" -eq 0 ]
		event_ok "$BATS_TEST_TMPDIR/$n" result '.bits_per_s > 0'
	done
	[ "$(for n in 1 2 3; do run_dir_of "$BATS_TEST_TMPDIR/$n"; done | sort -u | wc -l)" -eq 3 ]
	[ "$(for n in 1 2 3; do jq -r 'select(.event == "topology") | .port' "$BATS_TEST_TMPDIR/$n"; done | sort -u | wc -l)" -eq 3 ]
}

@test "directories: nothing goes to fixed paths in /tmp; the run directory is private" {
	touch "$BATS_TEST_TMPDIR/marker"
	unset TMPDIR
	run_steady flimflam run --json -r nginx --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	d=$(run_dir_of "$BATS_TEST_TMPDIR/ev")
	[ "$(stat -c %a "$d")" = 700 ]
	[ "$(stat -c %U "$d")" = "$(id -un)" ]
	# Nothing of ours appeared directly in /tmp under a fixed name. A name
	# that ends in mkdtemp's six random characters is no fixed path, and
	# another suite's run (bats --jobs) may make one meanwhile.
	[ -z "$(find /tmp -maxdepth 1 -newer "$BATS_TEST_TMPDIR/marker" \( -name '*flimflam*' -o -name 'ff-*' -o -name 'nginx*' \) 2>/dev/null |
		grep -vE -- '-[A-Za-z0-9]{6}$')" ]
	# Every file the relays and servers were given is in the run directory.
	for f in "$d"/r?/*.conf; do
		! grep -v '^\s*#' "$f" | grep -oE '(^|[ ="])/[^ ;"]+' | sed 's/^[ ="]//' |
			grep -v -e "^$d/" -e '^/usr/lib' || false
	done
}

@test "flimflam run: run directories do not pile up (FLIMFLAM_KEEP_RUNS)" {
	FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	mkdir -p "$FLIMFLAM_RUNS"
	for t in 20200101-000000 20200101-000001 20200101-000002 20200101-000003; do
		mkdir -m 700 "$FLIMFLAM_RUNS/$t-abcdef"
	done
	mkdir "$FLIMFLAM_RUNS/not-a-run"
	FLIMFLAM_KEEP_RUNS=3 run_steady flimflam run -r none --warmup 0 --duration 1
	run -0 ls "$FLIMFLAM_RUNS"
	[ "${#lines[@]}" -eq 4 ]
	# The oldest go first; a busy machine's refused runs came before the last
	# and are among the three kept.
	case "$STEADY_TRIES" in
	1)	[ "${lines[0]}" = 20200101-000002-abcdef ]
		[ "${lines[1]}" = 20200101-000003-abcdef ] ;;
	2)	[ "${lines[0]}" = 20200101-000003-abcdef ]
		[[ "${lines[1]}" == 2???????-??????-?????? ]] ;;
	*)	[[ "${lines[0]}" == 2???????-??????-?????? ]]
		[[ "${lines[1]}" == 2???????-??????-?????? ]] ;;
	esac
	[[ "${lines[2]}" == 2???????-??????-?????? ]]
	[ "${lines[3]}" = not-a-run ]
}
