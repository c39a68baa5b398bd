#!/usr/bin/env bats
# bench --together (issue 25): each round runs a case's builds at the same
# time, side by side, so that what slows the machine from one second to
# the next slows both alike and their pairs vary less (bench/README.md,
# "Side by side"). Each row's machine says the CPU the other runs took
# (together_cpu_s), which is not counted as other processes'.

bats_require_minimum_version 1.5.0
load helper

@test "bench --together: without two builds, or with --pool, --slo or --record: one line and exit 2" {
	run -2 --separate-stderr ff-bench -w builtin -r nginx --together
	[ "$stderr" = "ff-bench: --together runs a case's builds at once: give two or more --build LABEL=PATH" ]
	run -2 --separate-stderr ff-bench -w builtin -r nginx --build a=/bin/true --together
	[ "$stderr" = "ff-bench: --together runs a case's builds at once: give two or more --build LABEL=PATH" ]
	for extra in "--pool h1,h2" "--slo p99=10" "--record"; do
		# shellcheck disable=SC2086 # the option and its value are two words
		run -2 --separate-stderr ff-bench -w builtin-rr -r nginx --build a=/bin/true --build b=/bin/true \
			--together $extra
		[ "$stderr" = "ff-bench: --together runs a round's builds side by side here, each run the other's only company: not with ${extra%% *}" ]
		[ -z "$output" ]
	done
}

@test "bench --together: each round's two builds run at once, each other's CPU among its others and said as together_cpu_s" {
	two_nginx_builds
	local f="$BATS_TEST_TMPDIR/r.jsonl"
	run -0 --separate-stderr ff-bench -w builtin -r nginx -p tcp --build "a=$A" --build "b=$B" --together \
		--warmup 0 --duration 2 --repeat 3 --output "$f"
	echo "$stderr"
	echo "$output"
	# Each round: both builds, ok, and each row's together_cpu_s is the
	# other's run_cpu_s. Run one after the other, neither would see the
	# other among its others; side by side, much of it is there (the rest
	# is the moments of start and stop outside the other's window: on a
	# loaded machine the second chain's window began late enough that the
	# first saw 57% of its CPU).
	jq -c '{repeat, status, together, label: .build.label, window: .resources.window_s, machine: .resources.machine}' "$f"
	jq -e -s 'length == 6 and all(.[]; .status == "ok" and .together == true) and
		(group_by(.repeat) | length == 3 and all(.[];
			length == 2 and (map(.build.label) | sort) == ["a", "b"] and
			(.[0].resources.machine.together_cpu_s - .[1].resources.machine.run_cpu_s | fabs) < 0.001 and
			(.[1].resources.machine.together_cpu_s - .[0].resources.machine.run_cpu_s | fabs) < 0.001 and
			all(.[]; .resources.machine.together_cpu_s > 0.3 and
				.resources.machine.other_cpu_s >= 0.4 * .resources.machine.together_cpu_s)))' "$f"
	# Their relays' CPUs: the twin is left out of cpus_other_runs, by its
	# ff-topology's pid (a round's second chain finds the first's pinned).
	jq -e -s 'all(.[]; (.topology.pid | type) == "number")' "$f"
	jq -e -s 'group_by(.repeat) | all(.[]; . as $r |
		all((($r[0].topology.cpus_other_runs // []) | map(.pid))[]; . != $r[1].topology.pid) and
		all((($r[1].topology.cpus_other_runs // []) | map(.pid))[]; . != $r[0].topology.pid))' "$f"
	[[ "$output" != *"another run on the relays' CPUs"* ]]
	# A round's runs start within a second of each other.
	jq -e -s 'group_by(.repeat) | all(.[]; (map(.time | fromdate) | max - min) <= 1)' "$f"
	[ "$(grep -cE '^ff-bench: \[[1-6]/6\] builtin nginx tcp build [ab] \(run [1-3] of 3\): ' <<<"$stderr")" = 6 ]
	[[ "$stderr" == *"ff-bench: 6 runs (2 cases with their builds x 3, each round's builds side by side), about 0:"* ]]
	# The twin is not a shared machine: each run's line says "machine
	# shared" by its others less the twin (well clear of the 10% line:
	# the rest, which CI's other lane makes, may fall either side of it).
	local want said n
	want=$(jq -r -s '.[] | .resources as $r | $r.machine |
		((.other_cpu_s - .together_cpu_s) / ($r.window_s * .cpus)) as $o |
		if .steal_s / ($r.window_s * .cpus) > 0.04 then "either"
		elif $o < 0.08 then "quiet" elif $o > 0.12 then "shared" else "either" end' "$f")
	said=$(grep -E '^ff-bench: \[[1-6]/6\]' <<<"$stderr")
	for n in 1 2 3 4 5 6; do
		case $(sed -n "${n}p" <<<"$want") in
		quiet) sed -n "${n}p" <<<"$said" | grep -v 'machine shared' ;;
		shared) sed -n "${n}p" <<<"$said" | grep 'machine shared' ;;
		esac
	done
	[ "$(grep -c quiet <<<"$want")" -ge 1 ] || echo "# every run here had others beside its twin" >&3
	assert_line --regexp '^Relay CPU s/GB, R1 \+ R2'
}

@test "bench --together: Ctrl-C in the window stops both runs: exit 130, nothing of either build left" {
	two_nginx_builds
	cd "$BATS_TEST_TMPDIR"
	ff-bench -w builtin -r nginx -p tcp --build "a=$A" --build "b=$B" --together \
		--warmup 0 --duration 30 --repeat 2 --output r.jsonl >out 2>err &
	local pid=$! n
	# both builds' relays up: their nginx from $A and from $B
	for ((n = 0; n < 200; n++)); do
		pgrep -f "master process $A/sbin/nginx" >/dev/null && pgrep -f "master process $B/sbin/nginx" >/dev/null && break
		sleep 0.05
	done
	pgrep -f "master process $A/sbin/nginx" >/dev/null
	pgrep -f "master process $B/sbin/nginx" >/dev/null
	sleep 1
	kill -INT "$pid"
	wait_status "$pid"
	cat err
	[ "$status" = 130 ]
	! pgrep -f "master process $A/sbin/nginx"
	! pgrep -f "master process $B/sbin/nginx"
	[ -z "$(pids_of_run "$A")$(pids_of_run "$B")" ]
}
