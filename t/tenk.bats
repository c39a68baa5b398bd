#!/usr/bin/env bats
# Ten thousand connections through nginx: the open files they need, per
# worker process, checked before the load; --workers to spread them; and a
# run that holds them all, each carrying data. The run takes some 20 s on a
# loaded 2-CPU machine (10 s of it connecting and the first bytes).

bats_require_minimum_version 1.5.0

load helper

# run_nofile LIMIT CMD...: CMD with open files limited to LIMIT (soft and
# hard, lowered in a subshell) and no CAP_SYS_RESOURCE to raise them again.
run_nofile() {
	local limit="$1"
	shift
	run --separate-stderr bash -c 'ulimit -n "$1" || exit 99; shift; exec "$@"' _ "$limit" "${unprivileged[@]}" "$@"
	[ "$status" != 99 ] || skip "the open files cannot be lowered to $limit here"
}

@test "tenk: 10,000 connections through one nginx worker are refused before the load, naming the limit and --workers" {
	skip_unless_program nginx haproxy
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	mkdir "$BATS_TEST_TMPDIR/d" && cd "$BATS_TEST_TMPDIR/d"
	# One worker holds 2 a job; two share them, at most 5250 each (5000 and 5 standard deviations).
	run_nofile 15000 flimflam run -w builtin -r nginx --jobs 10000
	[ "$status" = 1 ]
	[ "$stderr" = "flimflam: --jobs 10000 needs 20064 open files per process (2 a job), and this process may open at most 15000 (ulimit -Hn): use fewer jobs, or raise the limit; with --workers 2, nginx's worker processes share the jobs, and they fit" ]
	# Two are not enough under a lower limit: the busiest's share is named, and three would do.
	run_nofile 10200 flimflam run -w builtin -r nginx --jobs 10000 --workers 2
	[ "$status" = 1 ]
	[ "$stderr" = "flimflam: --jobs 10000 needs 10564 open files per process (2 a job, and the busiest of 2 nginx worker processes may hold 5250 jobs: its even share and 5 standard deviations of the kernel's split), and this process may open at most 10200 (ulimit -Hn): use fewer jobs, or raise the limit; with --workers 3, nginx's worker processes share the jobs, and they fit" ]
	# Where no worker count helps (the client holds one a job), none is named.
	run_nofile 9000 flimflam run -w builtin -r nginx --jobs 10000
	[ "$status" = 1 ]
	[ "$stderr" = "flimflam: --jobs 10000 needs 20064 open files per process (2 a job), and this process may open at most 9000 (ulimit -Hn): use fewer jobs, or raise the limit" ]
	# Relays whose workers are threads of one process are not told to add workers.
	run_nofile 15000 flimflam run -w builtin -r haproxy --jobs 10000
	[ "$stderr" = "flimflam: --jobs 10000 needs 20064 open files per process (2 a job), and this process may open at most 15000 (ulimit -Hn): use fewer jobs, or raise the limit" ]
	nothing_started
	[ -z "$(ls)" ]
}

@test "tenk: 10,000 connections through nginx with --workers 2, under open files one worker could not hold" {
	skip_unless_program nginx
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	cd "$BATS_TEST_TMPDIR"
	# 15000 open files: one process holding all 20,000 proxied sockets would fail.
	run_nofile 15000 flimflam run -w builtin -r nginx --jobs 10000 --workers 2 \
		--warmup 2 --duration 3 --json
	echo "$stderr"
	[ "$status" = 0 ]
	echo "$output" >ev.jsonl
	event_ok ev.jsonl topology '.workers == 2'
	# Each nginx listened on a socket a worker, which is how the kernel spread them.
	[ "$(cat runs/*/r1/nginx.conf | grep -c 'listen .* reuseport;')" = 1 ]
	[ "$(cat runs/*/r2/nginx.conf | grep -c 'listen .* reuseport;')" = 1 ]
	# Every connection carried its first bytes back before the warmup began.
	event_ok ev.jsonl window '.ready_s > 0 and .warmup_s == 2'
	event_ok ev.jsonl result '.jobs == 10000 and .bytes > 0 and .bits_per_s > 0 and .errors == 0'
	# Every second moved data, and each relay held two sockets a job throughout (the last
	# interval's open files are read at the window's end, as the client closes its
	# connections: not that one).
	run -0 jq -sr '[.[] | select(.event == "result") | .intervals | (map(.bytes > 0) | all), (.[0:-1][] | all(.relays[]; .fds >= 20000))] | length == 3 and all' ev.jsonl
	[ "$output" = true ] || { jq -c 'select(.event == "result") | .intervals[] | [.bytes, [.relays[].fds]]' ev.jsonl; false; }
}

# builtin-rr's client holds thousands of connections on a few epoll threads
# (one thread per job only up to the CPUs, at most 8): 5,000 through nginx,
# whose two workers share them, each connection closed loop. The run takes
# some 15 s on a loaded 2-CPU machine.
@test "tenk: builtin-rr, 5,000 connections through nginx with --workers 2, every one answered, on a few client threads" {
	skip_unless_program nginx
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	cd "$BATS_TEST_TMPDIR"
	# Under 10,000 open files: the client's 5,000 fit, and one nginx worker could not hold the 10,000 proxied sockets.
	run_nofile 9000 flimflam run -w builtin-rr -r nginx --jobs 5000 --workers 2 \
		--warmup 2 --duration 3 --json
	echo "$stderr"
	[ "$status" = 0 ]
	echo "$output" >ev.jsonl
	event_ok ev.jsonl topology '.workers == 2'
	# Every connection completed transactions in the window, on at most a thread per CPU (at most 8).
	event_ok ev.jsonl result ".jobs == 5000 and .jobs_answered == 5000 and .transactions >= 5000 and .errors == 0 and .client_threads <= $(nproc) and .client_threads <= 8"
	# The connections carried a first transaction each before the warmup began.
	event_ok ev.jsonl window '.ready_s > 0 and .warmup_s == 2'
	# Every second had transactions, and each relay held two sockets a job (the last
	# interval's are counted as the client closes them: not that one).
	run -0 jq -sr '[.[] | select(.event == "result") | .intervals | (map(.operations > 0) | all), (.[0:-1][] | all(.relays[]; .fds >= 10000))] | length == 3 and all' ev.jsonl
	[ "$output" = true ]
}
