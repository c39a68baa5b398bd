# Hosts: client, relays and server on separate hosts over ssh
# (--hosts), checked (check --hosts), captured, and a bench over a pool
# (--pool). The hosts are network namespaces with their own sshd
# (t/hosts.bash); flimflam runs in one more, the local host.
bats_require_minimum_version 1.5.0
load helper
load hosts

teardown() {
	hosts_down
}

@test "hosts: namespaces joined by veth pairs, each with its own sshd, and all gone afterwards" {
	hosts_up 2
	# ns0 reaches ns1's sshd on ns1's address, with the test's keys only.
	run in_local ssh -F "$HOSTS_SSH_CONFIG" -o BatchMode=yes ns1 'readlink /proc/self/ns/net'
	assert_success
	[ "$output" = "$(readlink /proc/"${HOST_NS[1]}"/ns/net)" ]
	run in_local ssh -F "$HOSTS_SSH_CONFIG" -o BatchMode=yes ns2 'ip -4 -o addr show dev eth0'
	assert_success
	has_line "inet ${HOST_ADDR[2]}/24"
	# The machine's own network namespace has no route to them.
	! ip -4 -o addr show | grep -q "$HOSTS_NET\." || false
	hosts_clean 5
	# What the checks see: a process and a port left in ns2 fail them.
	nsenter --net=/proc/"${HOST_NS[2]}"/ns/net python3 -c \
		'import socket, time; s = socket.socket(); s.bind(("'"${HOST_ADDR[2]}"'", 4567)); s.listen(); time.sleep(60)' 3>&- &
	left=$!
	for i in $(seq 50); do [ -n "$(ports_bound_in 2)" ] && break; sleep 0.1; done
	[ "$(ports_bound_in 2)" = 4567 ]
	procs_in 2 | grep -qx "$left"
	run hosts_clean 1
	assert_failure
	has_line "ns2: processes $left"
	kill "$left"
	wait "$left" || true
	hosts_clean 5
	ns=("${HOST_NS[@]}" "${HOST_SSHD[@]}" "$HOSTS_SWITCH")
	hosts_down
	all_gone "${ns[@]}"
}

# run_hosts FILE ARGS...: flimflam run --json ARGS on the local host (ns0),
# in the background, events to FILE and stderr to FILE.err; RUN_PID is
# flimflam's (nsenter execs it).
run_hosts() {
	local f="$1"
	shift
	nsenter --net=/proc/"${HOST_NS[0]}"/ns/net flimflam run --json "$@" >"$f" 2>"$f.err" 3>&- &
	RUN_PID=$!
}

# The four roles on four namespaces: the ssh destination is the alias of
# ssh_config, the address the namespace's.
four_hosts() {
	echo "client=ns1/${HOST_ADDR[1]},r1=ns2/${HOST_ADDR[2]},r2=ns3/${HOST_ADDR[3]},server=ns4/${HOST_ADDR[4]}"
}

@test "run --hosts: client, R1, R2 and server on four hosts over nginx; each stage where its role is, nothing left" {
	skip_unless_program nginx
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --warmup 1 --duration 2 --hosts "$(four_hosts)"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 0 ]
	ev="$BATS_TEST_TMPDIR/ev"
	event_ok "$ev" server '.host == $a' --arg a "${HOST_ADDR[4]}"
	event_ok "$ev" topology '.host == $a and ([.relays[].role] == ["r1", "r2"]) and
		.relays[0].address == $a and .relays[1].address == $b and
		.relays[0].target_port == .relays[1].port' --arg a "${HOST_ADDR[2]}" --arg b "${HOST_ADDR[3]}"
	event_ok "$ev" result '.bits_per_s > 0 and .errors == 0'
	hosts_clean 10
}

# wait_measuring FILE: the run's window opened (the whole topology is up).
wait_measuring() {
	wait_for_grep '"event":"window"' "$1" 30
}

# ssh_master DEST: the pid of flimflam's ssh master of DEST.
ssh_master() {
	local p
	for p in $(descendants "$RUN_PID"); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qE "^ssh .*ControlMaster=yes.* $1 $" && { echo "$p"; return 0; }
	done
	return 1
}

@test "run --hosts: Ctrl-C stops the stages on every host; exit 130, nothing left running, no port bound" {
	skip_unless_program nginx
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --warmup 1 --duration 30 --hosts "$(four_hosts)"
	wait_measuring "$BATS_TEST_TMPDIR/ev"
	# Every host has its stage and what it started.
	for i in 1 2 3 4; do [ -n "$(procs_in "$i")" ]; done
	[ -n "$(ports_bound_in 4)" ]
	kill -INT "$RUN_PID"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 130 ]
	grep -q '^flimflam: stopped by SIGINT' "$BATS_TEST_TMPDIR/ev.err"
	hosts_clean 10
}

@test "run --hosts: a killed dispatcher stops the stages on every host; nothing left running, no port bound" {
	skip_unless_program nginx
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --warmup 1 --duration 30 --hosts "$(four_hosts)"
	wait_measuring "$BATS_TEST_TMPDIR/ev"
	kill -KILL "$RUN_PID"
	wait_status "$RUN_PID"
	hosts_clean 10
}

@test "run --hosts: a lost ssh connection (its master killed) fails the run, names the host, and stops every host's stages" {
	skip_unless_program nginx
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --warmup 1 --duration 30 --hosts "$(four_hosts)"
	wait_measuring "$BATS_TEST_TMPDIR/ev"
	m=$(ssh_master ns3)
	kill -KILL "$m"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 1 ]
	grep -q "lost the ssh connection to 'ns3'" "$BATS_TEST_TMPDIR/ev.err"
	hosts_clean 10
}

@test "run --hosts: a lost ssh connection (the remote sshd's session killed) fails the run and stops every host's stages" {
	skip_unless_program nginx
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --warmup 1 --duration 30 --hosts "$(four_hosts)"
	wait_measuring "$BATS_TEST_TMPDIR/ev"
	# The server host's sshd: its listener and every session.
	for p in $(procs_in 4) "${HOST_SSHD[4]}"; do
		[ "$(cat /proc/"$p"/comm 2>/dev/null)" = sshd ] && kill -KILL "$p"
	done
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 1 ]
	hosts_clean 10
}

@test "run --hosts, check --hosts: a host that starts with '-' is refused as a host name, never handed to ssh as an option" {
	cd "$BATS_TEST_TMPDIR"
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	for h in "-oProxyCommand=touch pwned" "root@-oProxyCommand=touch pwned"; do
		run --separate-stderr flimflam run -w builtin -r none --hosts "client=$h/10.77.0.2"
		[ "$status" -eq 2 ]
		[ "${stderr_lines[0]}" = "flimflam: --hosts: client's host '${h#root@}' starts with '-': not a host name" ]
		run --separate-stderr flimflam check --hosts "client=$h"
		[ "$status" -eq 2 ]
		[ "${stderr_lines[0]}" = "flimflam check: --hosts: client's host '${h#root@}' starts with '-': not a host name" ]
	done
	[ ! -e pwned ]
	nothing_started
}

@test "run --hosts, check --hosts, bench --pool: a host ssh cannot reach is named with ssh's own reason, without its \\r" {
	skip_unless_program parallel
	hosts_up 1
	cd "$BATS_TEST_TMPDIR"
	dead=${HOSTS_NET}.99
	run in_local flimflam run -w builtin -r none --hosts "client=$dead" --warmup 0 --duration 1
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "flimflam: cannot reach '$dead' over ssh: ssh: connect to host $dead port 22: "* ]]
	! grep -q -e $'\r' -e 'x0d' <<<"$output" || false
	run in_local flimflam check --hosts "client=$dead"
	echo "$output"
	[ "$status" -eq 1 ]
	has_line "^client on $dead: PROBLEM: cannot run '.*' over ssh \\(exited with status 255\\): ssh: connect to host $dead port 22: [A-Za-z ]+$"
	! grep -q -e $'\r' -e 'x0d' <<<"$output" || false
	# The pool's rows of the dead host say why, not "exited with status 255"
	# (both hosts take a run at once: one goes to the dead one).
	run in_local flimflam bench -w builtin -r none -p tcp --warmup 0 --duration 1 --repeat 2 \
		--pool "ns1,$dead" --output "$BATS_TEST_TMPDIR/res.jsonl"
	echo "$output"
	jq -s -e --arg h "$dead" '[.[] | select(.event == "case" and .host == $h)] | length > 0 and
		all(.status == "failed" and (.reason | startswith("cannot reach \($h) over ssh: ssh: connect to host \($h) port 22: ")) and
		    (.reason | test("\r") | not))' res.jsonl
	hosts_clean 10
}

@test "check --hosts: each host's flimflam version, its role's programs, perf where a relay runs, and its clock" {
	skip_unless_program nginx
	hosts_up 2
	run in_local flimflam check --hosts "client=ns1,r1=ns2/${HOST_ADDR[2]},r2=ns2/${HOST_ADDR[2]}" -r nginx
	echo "$output"
	assert_success
	has_line '^client on ns1: flimflam [0-9.]+$'
	has_line '^r1 on ns2: nginx is /'
	has_line '^r2 on ns2: perf can attach to the relay$'
	has_line '^client on ns1: clock within [0-9.]+ s'
	has_line '^OK$'
	# A chain of three: r3 is a role of it (--hops, as for run).
	run in_local flimflam check --hosts "r3=ns2/${HOST_ADDR[2]}" -r nginx --hops 3
	echo "$output"
	assert_success
	has_line '^r3 on ns2: nginx is /'
	# Another version of flimflam on the hosts is a problem, and says which.
	mkdir -p "$BATS_TEST_TMPDIR/other"
	printf '#!/bin/sh\necho flimflam 0.0.1\n' >"$BATS_TEST_TMPDIR/other/flimflam"
	chmod +x "$BATS_TEST_TMPDIR/other/flimflam"
	FLIMFLAM_REMOTE_DIR="$BATS_TEST_TMPDIR/other" run in_local flimflam check --hosts "client=ns1" -r nginx
	echo "$output"
	[ "$status" -eq 1 ]
	has_line "^client on ns1: PROBLEM: '$BATS_TEST_TMPDIR/other/flimflam' is flimflam 0.0.1, and this one is flimflam [0-9.]+$"
	# A host that cannot be reached: said, exit 1.
	run in_local flimflam check --hosts "client=${HOSTS_NET}.99" -r nginx
	echo "$output"
	[ "$status" -eq 1 ]
	has_line "^client on ${HOSTS_NET}.99: PROBLEM: cannot run"
	# Bad input: one line, exit 2.
	run in_local flimflam check --hosts "bogus=ns1"
	[ "$status" -eq 2 ]
	has_line "^flimflam check: --hosts: 'bogus' is not a role of this run"
	hosts_clean 10
}

@test "stat --hosts: perf stat runs on each relay's host and measures that relay alone" {
	skip_unless_program nginx perf
	hosts_up 4
	nsenter --net=/proc/"${HOST_NS[0]}"/ns/net flimflam stat --json -w builtin -r nginx --warmup 1 --duration 2 \
		--hosts "$(four_hosts)" >"$BATS_TEST_TMPDIR/st" 2>"$BATS_TEST_TMPDIR/st.err" 3>&- || {
		cat "$BATS_TEST_TMPDIR/st.err"
		false
	}
	st="$BATS_TEST_TMPDIR/st"
	# One stat per relay, each from the capture on its own host (--roles).
	[ "$(jq -s '[.[] | select(.event == "stat") | .role] | sort' "$st" | jq -c .)" = '["r1","r2"]' ]
	[ "$(jq -s '[.[] | select(.event == "resources") | .relays[].role] | sort' "$st" | jq -c .)" = '["r1","r2"]' ]
	jq -s -e '[.[] | select(.event == "resources") | .relays[] | .cpu_fraction > 0] | all' "$st"
	hosts_clean 10
}

@test "record --hosts: perf records on each relay's host; r1.perf.data and r2.perf.data come back apart, nothing is left there" {
	skip_unless_program nginx perf
	hosts_up 4
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	nsenter --net=/proc/"${HOST_NS[0]}"/ns/net flimflam record --json -w builtin -r nginx --warmup 1 --duration 2 \
		--hosts "$(four_hosts)" >"$BATS_TEST_TMPDIR/rec" 2>"$BATS_TEST_TMPDIR/rec.err" 3>&- || {
		cat "$BATS_TEST_TMPDIR/rec.err"
		false
	}
	# Each relay's samples in its own file, here; the capture events name them.
	[ -s r1.perf.data ] && [ -s r2.perf.data ] && [ ! -e perf.data ]
	event_ok "$BATS_TEST_TMPDIR/rec" fetched '. as $e | ($e.file | endswith("/cwd/" + $e.role + ".perf.data")) and
		(.host == "ns2" or .host == "ns3") and (.from | startswith($t + "/flimflam-capture-"))' --arg t "$HOSTS_DIR/tmp"
	[ "$(jq -s '[.[] | select(.event == "fetched") | .role] | sort' "$BATS_TEST_TMPDIR/rec" | jq -c .)" = '["r1","r2"]' ]
	# Each holds its relay's nginx, and only that relay's pids.
	for r in r1 r2; do
		pids=$(jq -r --arg r "$r" 'select(.event == "topology") | .relays[] | select(.role == $r) | .pid' "$BATS_TEST_TMPDIR/rec")
		perf report -i "$r.perf.data" --stdio --sort pid 2>/dev/null | grep -q "nginx" 
		! perf report -i "$r.perf.data" --stdio --sort pid 2>/dev/null | grep -E '^ +[0-9.]+%' | grep -v "nginx" | grep -q . || false
		[ -n "$pids" ]
	done
	# The captures' directories on the hosts (their TMPDIR) are gone.
	[ -z "$(ls -A "$HOSTS_DIR/tmp")" ]
	# Once more, for the human summary: each recording with its relay and
	# host, the previous ones kept, and perf report told which file to read.
	run in_local flimflam record -w builtin -r nginx --warmup 1 --duration 2 --hosts "$(four_hosts)"
	echo "$output"
	assert_success
	has_line "^  Data: +$BATS_TEST_TMPDIR/cwd/r1\.perf\.data \(R1 on ns2; perf record: "
	has_line "^  Previous: +$BATS_TEST_TMPDIR/cwd/r1\.perf\.data\.old$"
	has_line "^  Data: +$BATS_TEST_TMPDIR/cwd/r2\.perf\.data \(R2 on ns3; perf record: "
	has_line "^  Previous: +$BATS_TEST_TMPDIR/cwd/r2\.perf\.data\.old$"
	[ "${lines[-1]}" = "Next step: perf report --no-children -i FILE, for each recording above" ]
	[ -s r1.perf.data.old ] && [ -s r2.perf.data.old ]
	hosts_clean 10
}

@test "flamegraph --hosts: R1 and R2 on one host; perf.data and flamegraph.html come back here" {
	skip_unless_program nginx perf
	hosts_up 3
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	run in_local flimflam flamegraph -w builtin -r nginx --warmup 1 --duration 2 \
		--hosts "client=ns1/${HOST_ADDR[1]},r1=ns2/${HOST_ADDR[2]},r2=ns2/${HOST_ADDR[2]},server=ns3/${HOST_ADDR[3]}"
	echo "$output"
	assert_success
	[ -s perf.data ] && [ -s flamegraph.html ]
	has_line "copying r1's recording from ns2"
	grep -q 'nginx' flamegraph.html
	hosts_clean 10
}

# relay_pids FILE ROLE: the pids of the relay ROLE, as its capture event lists them, one a line.
relay_pids() {
	jq -r --arg r "$2" 'select(.event == "capture") | .relays[] | select(.role == $r) | .pids[]' "$1"
}

@test "flamegraph --hosts: R1 and R2 on two hosts over nginx; their recordings and one flamegraph.html come back here, a tower per relay holding its own samples, nothing left there" {
	skip_unless_program nginx perf
	hosts_up 4
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	run in_local flimflam flamegraph -w builtin -r nginx --warmup 1 --duration 2 --hosts "$(four_hosts)"
	echo "$output"
	assert_success
	# Each relay host's recording here, and one page of both.
	[ -s r1.perf.data ] && [ -s r2.perf.data ] && [ -s flamegraph.html ] && [ ! -e perf.data ]
	has_line "copying r1's recording from ns2"
	has_line "copying r2's recording from ns3"
	rundir=$(sed -n 's/^Run directory: //p' <<<"$output")
	ev="$rundir/events.jsonl"
	[ -s "$ev" ]
	# One tower per relay, R1 then R2, labelled with its program (its pid is the tooltip's).
	towers flamegraph.html >towers
	cat towers
	r1=$(jq -r 'select(.event == "topology") | .relays[] | select(.role == "r1") | .pid' "$ev")
	r2=$(jq -r 'select(.event == "topology") | .relays[] | select(.role == "r2") | .pid' "$ev")
	[ -n "$r1" ] && [ -n "$r2" ] && [ "$r1" != "$r2" ]
	[ "$(cut -f1 towers)" = $'R1 nginx\nR2 nginx' ]
	# Each tower holds every sample of its relay's processes (its pids, as
	# the capture on its host listed them) in its own recording, and no other.
	for r in r1 r2; do
		want=$(perf script -i "$r.perf.data" -F pid 2>/dev/null | awk -v p=" $(relay_pids "$ev" "$r" | tr '\n' ' ')" \
			'index(p, " " $1 " ") { n++ } END { print n + 0 }')
		all=$(perf script -i "$r.perf.data" -F pid 2>/dev/null | grep -c .)
		got=$(awk -F'\t' -v t="${r^^} " 'index($1, t) == 1 { print $2 }' towers)
		echo "$r: tower $got, its pids' samples $want of $all"
		[ "$want" -gt 0 ] && [ "$got" -eq "$want" ] && [ "$want" -eq "$all" ]
		[ "$(perf script -i "$r.perf.data" -F comm 2>/dev/null | awk '{ print $1 }' | sort -u)" = nginx ]
	done
	# The summary names both recordings, each with its relay.
	has_line "^  Data: +$BATS_TEST_TMPDIR/cwd/r1\.perf\.data \(R1 on ns2; perf record"
	has_line "^  Data: +$BATS_TEST_TMPDIR/cwd/r2\.perf\.data \(R2 on ns3; perf record"
	has_line "^  Processes: +R1 pid $r1(, [0-9]+)*; R2 pid $r2(, [0-9]+)*$"
	has_line "^  Flamegraph: +$BATS_TEST_TMPDIR/cwd/flamegraph\.html$"
	# Nothing left on the hosts: the captures' directories (their TMPDIR) are gone.
	[ -z "$(ls -A "$HOSTS_DIR/tmp")" ]
	hosts_clean 10
	# Two builds compare one recording each: relays on two hosts are refused before anything starts.
	run in_local flimflam flamegraph -r nginx --build a="$(command -v nginx)" --build b="$(command -v nginx)" --hosts "$(four_hosts)"
	[ "$status" -eq 2 ]
	has_line "^flimflam: --hosts: a differential flamegraph compares one recording of each build"
}

@test "flamegraph --hosts --hops 3: R1 and R2 on one host, R3 on another; two recordings, one page with three towers" {
	skip_unless_program nginx perf
	hosts_up 3
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	run in_local flimflam flamegraph -w builtin -r nginx --hops 3 --warmup 1 --duration 2 \
		--hosts "r1=ns1/${HOST_ADDR[1]},r2=ns1/${HOST_ADDR[1]},r3=ns2/${HOST_ADDR[2]},server=ns3/${HOST_ADDR[3]}"
	echo "$output"
	assert_success
	rundir=$(sed -n 's/^Run directory: //p' <<<"$output")
	ev="$rundir/events.jsonl"
	# ns1's recording (named for its first relay) holds R1 and R2, ns2's R3;
	# the summary says which is which.
	[ "$(jq -c 'select(.event == "capture") | [.relays[].role]' "$ev" | sort)" = $'["r1","r2"]\n["r3"]' ]
	[ -s r1.perf.data ] && [ -s r3.perf.data ] && [ ! -e r2.perf.data ] && [ ! -e perf.data ]
	has_line "^  Data: +$BATS_TEST_TMPDIR/cwd/r1\.perf\.data \(R1, R2 on ns1; perf record"
	has_line "^  Data: +$BATS_TEST_TMPDIR/cwd/r3\.perf\.data \(R3 on ns2; perf record"
	towers flamegraph.html >towers
	cat towers
	run -0 cut -f1 towers
	assert_output $'R1 nginx\nR2 nginx\nR3 nginx'
	awk -F'\t' '$2 > 0 { n++ } END { exit n != 3 }' towers
	hosts_clean 10
}

@test "bench --pool: GNU parallel runs each case as a whole topology on one host of the pool; the rows name their host and environment" {
	skip_unless_program nginx parallel
	hosts_up 2
	cd "$BATS_TEST_TMPDIR"
	run in_local flimflam bench -w builtin -r nginx,none -p tcp --warmup 1 --duration 2 --repeat 2 \
		--pool ns1,ns2 --output "$BATS_TEST_TMPDIR/res.jsonl"
	echo "$output"
	res="$BATS_TEST_TMPDIR/res.jsonl"
	# Four runs, each from one host of the pool, both hosts busy at once.
	# The namespaces share this machine's 2 CPUs (a real pool's hosts do
	# not): a run whose window the client refused as not the one asked is
	# the machine's doing (BUSY_ERE); any other failure fails the test.
	[ "$(jq -s '[.[] | select(.event == "case")] | length' "$res")" -eq 4 ]
	jq -s -e --arg busy "$BUSY_ERE" '[.[] | select(.event == "case")] |
		all(.status == "ok" or (.reason | test($busy)))' "$res"
	[ "$status" -eq 0 ] || grep -qE -- "$BUSY_ERE" <<<"$output"
	jq -s -e '[.[] | select(.event == "case" and .status == "ok")] | length > 0' "$res"
	jq -s -e '[.[] | select(.event == "case")] | all(.host == "ns1" or .host == "ns2")' "$res"
	jq -s -e '[.[] | select(.event == "case") | .host] | unique | length == 2' "$res"
	# Each row's environment is its host's, from its own run.
	jq -s -e '[.[] | select(.event == "case" and .status == "ok")] |
		all(.environment.kernel != null and .result.bits_per_s > 0)' "$res"
	# The table reads it as any results file.
	run in_local flimflam bench summarize "$res"
	assert_success
	# compare flags rows from different hosts of the pool.
	jq -c 'select(.host != "ns2")' "$res" >"$BATS_TEST_TMPDIR/base.jsonl"
	jq -c 'select(.host != "ns1")' "$res" >"$BATS_TEST_TMPDIR/new.jsonl"
	run in_local flimflam compare "$BATS_TEST_TMPDIR/base.jsonl" "$BATS_TEST_TMPDIR/new.jsonl"
	echo "$output"
	has_line "^  pool_host +DIFFERS: base 'ns1', new 'ns2'"
	has_line 'warning: the two sides ran in different environments'
	run in_local flimflam compare "$res" "$BATS_TEST_TMPDIR/new.jsonl"
	has_line "^  pool_host +DIFFERS: base 'ns[12] \| ns[12]', new 'ns2'"
	hosts_clean 10
}

@test "run --hosts: skrouterd's two routers on one host, the client and the server on two others" {
	skip_unless_program skrouterd
	hosts_up 3
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r skrouterd --warmup 1 --duration 2 \
		--hosts "client=ns1/${HOST_ADDR[1]},r1=ns2/${HOST_ADDR[2]},r2=ns2/${HOST_ADDR[2]},server=ns3/${HOST_ADDR[3]}"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 0 ]
	event_ok "$BATS_TEST_TMPDIR/ev" topology '.host == $a and ([.relays[].role] == ["r1", "r2"])' --arg a "${HOST_ADDR[2]}"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0 and .errors == 0'
	hosts_clean 10
}

@test "run --hosts: bad lists are one line and exit 2, before any ssh" {
	for bad in "client" "client=" "=ns1" "r9=ns1" "client=ns1/10.77.0.2,client=ns2/10.77.0.3" "client=ns1/999.1.1.1" "client=ns1/" "server=no-such-host-here"; do
		run flimflam run -r nginx --hosts "$bad"
		echo "$bad: $output"
		[ "$status" -eq 2 ]
		has_line '^flimflam: --hosts: '
	done
	# skrouterd's routers on one host share its address.
	run flimflam run -r skrouterd --hosts "r1=ns1/10.77.0.2,r2=ns1/10.77.0.3"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "flimflam: --hosts: r1 ... r2 name one host for skrouterd, with one address" ]
	# The relays' roles are the chain's: r1 ... rN of --hops (2 by default).
	run flimflam run -r nginx --hosts "r3=ns1/10.77.0.2"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "flimflam: --hosts: 'r3' is not a role of this run (client, r1, r2, server)" ]
	run flimflam run -r nginx --hops 3 --hosts "r4=ns1/10.77.0.2"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "flimflam: --hosts: 'r4' is not a role of this run (client, r1 ... r3, server)" ]
	run flimflam run -r nginx --hops 1 --hosts "r2=ns1/10.77.0.2"
	[ "$status" -eq 2 ]
	has_line "(client, r1, server)"
	run flimflam run -w iperf3 -r none --hosts "r1=ns1/10.77.0.2"
	[ "$status" -eq 2 ]
	has_line "(client, server: relay none has no relays)"
	# check --hosts takes the run's chain: r1 ... rN of --hops, 2 by default, as run does.
	run flimflam check -r nginx --hosts "r3=ns1/10.77.0.2"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "flimflam check: --hosts: 'r3' is not a role of this run (client, r1, r2, server)" ]
	run flimflam check -r nginx --hops 3 --hosts "r4=ns1/10.77.0.2"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "flimflam check: --hosts: 'r4' is not a role of this run (client, r1 ... r3, server)" ]
	run flimflam check -r skrouterd --hops 1 --hosts "r2=ns1/10.77.0.2"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "flimflam check: --hosts: 'r2' is not a role of this run (client, r1, server)" ]
	for bad in 0 9 x; do
		run flimflam check -r nginx --hops "$bad" --hosts "r1=ns1/10.77.0.2"
		[ "$status" -eq 2 ]
		[[ "${lines[0]}" == "flimflam check: --hops: "* ]]
	done
	run flimflam check -w iperf3 -r none --hops 2 --hosts "client=ns1/10.77.0.2"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "flimflam check: --hops: relay 'none' runs no relay"* ]]
	# ff-topology --relay-role --tls takes the chain's certificates, given.
	run ff-topology -r nginx --relay-role r2 --tls --server-port 9
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "ff-topology: --relay-role --tls takes the chain's certificates from --tls-certs DIR (one CA for every relay's)" ]
	run ff-topology -r nginx --tls-certs "$BATS_TEST_TMPDIR" --server-port 9
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "ff-topology: --tls-certs is for --relay-role with --tls" ]
	run ff-topology -r nginx --relay-role r1 --tls --tls-certs "$BATS_TEST_TMPDIR" --server-port 9
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "ff-topology: --tls is for the links between relays, and r1 in front of the server has none" ]
	run ff-topology -r nghttpx -p http2 --relay-role r2 --tls --tls-certs "$BATS_TEST_TMPDIR" --server-port 9
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "ff-topology: --relay-role --tls: relay 'nghttpx' proves a link from the relay it comes to"* ]]
	run ff-topology -r nginx --relay-role r2 --tls --tls-certs "$BATS_TEST_TMPDIR/none" --server-port 9
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "${lines[0]}" = "ff-topology: --tls-certs: cannot read '$BATS_TEST_TMPDIR/none/ca.crt': No such file or directory" ]
	# nghttpx proves a TLS link from the access log of the relay it comes to: one host.
	run flimflam run -w h2load -r nghttpx -p http2 --tls --hosts "r1=ns1/10.77.0.2,r2=ns2/10.77.0.3"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "flimflam: --hosts: --tls over nghttpx proves each link from the relay it comes to, so its relays go on one host (these take --tls across hosts: skrouterd, nginx, haproxy)" ]
}

@test "run --hosts: relay none, the client and the server on two hosts, and the human summary" {
	hosts_up 2
	# iperf3 may refuse a window the busy machine stretched: once more then.
	run_steady in_local flimflam run -w iperf3 -r none --warmup 1 --duration 2 \
		--hosts "client=ns1/${HOST_ADDR[1]},server=ns2/${HOST_ADDR[2]}"
	echo "$output"
	has_line '^Results'
	has_line '^  Throughput: +[0-9.]+ [GM]bit/s'
	has_line "^  Hosts: +client=ns1/${HOST_ADDR[1]},server=ns2/${HOST_ADDR[2]} "
	hosts_clean 10
}

@test "run --hosts --hops 3: a chain of three nginx relays on three hosts, each in front of the next; data moves, nothing left" {
	skip_unless_program nginx
	hosts_up 4
	# Now and then on a busy machine the chain passes nothing in the whole
	# window (TCP's zero-window probes back off to seconds: README "TCP
	# stalls"), and the client fails the run, as it must: once more then.
	for try in 1 2; do
		run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --hops 3 --warmup 1 --duration 2 --interval 1 \
			--hosts "r1=ns1/${HOST_ADDR[1]},r2=ns2/${HOST_ADDR[2]},r3=ns3/${HOST_ADDR[3]},server=ns4/${HOST_ADDR[4]}"
		wait_status "$RUN_PID"
		[ "$try" -eq 1 ] && [ "$status" -eq 1 ] &&
			grep -q 'nothing came back in the 2 s window' "$BATS_TEST_TMPDIR/ev.err" || break
		echo "# the nginx chain passed nothing (see the comment): once more" >&3
		hosts_clean 10
	done
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 0 ]
	ev="$BATS_TEST_TMPDIR/ev"
	# One ff-topology per relay, r3 first: the chain r1 -> r2 -> r3 -> server, each on its host.
	event_ok "$ev" topology '.host == $a1 and .hops == 3 and ([.relays[].role] == ["r1", "r2", "r3"]) and
		([.relays[].address] == [$a1, $a2, $a3]) and
		.relays[0].target_port == .relays[1].port and .relays[1].target_port == .relays[2].port and
		.relays[2].target_port == .server_port' \
		--arg a1 "${HOST_ADDR[1]}" --arg a2 "${HOST_ADDR[2]}" --arg a3 "${HOST_ADDR[3]}"
	# Each relay's topology replaces the one behind it: one comes out.
	[ "$(jq -s '[.[] | select(.event == "topology")] | length' "$ev")" -eq 1 ]
	event_ok "$ev" result '.bits_per_s > 0 and .errors == 0'
	# Each host's capture measured its own relay; the intervals carry all three.
	[ "$(jq -s '[.[] | select(.event == "resources") | .relays[].role] | sort' "$ev" | jq -c .)" = '["r1","r2","r3"]' ]
	jq -s -e '[.[] | select(.event == "interval")] | length >= 2 and
		all(([.relays[].role] | sort) == ["r1", "r2", "r3"])' "$ev"
	hosts_clean 10
}

# link_hosts_ok EVENTS N: the chain of N routers, each on its own host:
# each router's inter-router listener on its host's address, and the
# connector of the one before it aimed there (their configurations).
link_hosts_ok() {
	local ev="$1" n="$2" k a conf prev
	for ((k = 1; k <= n; k++)); do
		a=$(jq -r --arg r "r$k" 'select(.event == "topology") | .relays[] | select(.role == $r) | .address' "$ev")
		conf=$(jq -r --arg r "r$k" 'select(.event == "topology") | .relays[] | select(.role == $r) | .config' "$ev")
		[ "$a" = "${HOST_ADDR[$k]}" ]
		if ((k > 1)); then
			# Its listener for the link, on its address; the previous router's connector to it.
			grep -A2 '^listener {' "$conf" | grep -qx "    host: $a"
			grep -A3 '^connector {' "$prev" | grep -qx "    host: $a"
		fi
		prev=$conf
	done
}

@test "run --hosts: skrouterd's routers on hosts of their own: client, R1, R2 and server on four hosts; the routers link across hosts" {
	skip_unless_program skrouterd
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r skrouterd --warmup 1 --duration 2 \
		--hosts "client=ns1/${HOST_ADDR[1]},r1=ns2/${HOST_ADDR[2]},r2=ns3/${HOST_ADDR[3]},server=ns4/${HOST_ADDR[4]}"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 0 ]
	ev="$BATS_TEST_TMPDIR/ev"
	event_ok "$ev" topology '.host == $a and ([.relays[].role] == ["r1", "r2"]) and
		.relays[0].address == $a and .relays[1].address == $b and .hops == 2 and
		.relays[1].target_port == .server_port and (.relays | all(.management_port > 0))' \
		--arg a "${HOST_ADDR[2]}" --arg b "${HOST_ADDR[3]}"
	# The workload's traffic went client -> R1 (ns2) -> R2 (ns3) -> server (ns4).
	event_ok "$ev" result '.bits_per_s > 0 and .errors == 0'
	# The routers' configurations: R2 listens for the link on ns3's address, R1 connects there.
	r1=$(jq -r 'select(.event == "topology") | .relays[0].config' "$ev")
	r2=$(jq -r 'select(.event == "topology") | .relays[1].config' "$ev")
	grep -A2 '^listener {' "$r2" | grep -qx "    host: ${HOST_ADDR[3]}"
	grep -A3 '^connector {' "$r1" | grep -qx "    host: ${HOST_ADDR[3]}"
	# Its management stays on 127.0.0.1 of its host: skstat and skmanage run there.
	grep -B2 'role: normal' "$r2" | grep -qx '    host: 127.0.0.1'
	hosts_clean 10
}

@test "run --hosts --hops 3 --tls: three routers on three hosts, each linked to the next over TLS across hosts; skstat reads each on its own host" {
	skip_unless_program skrouterd skstat skmanage openssl
	hosts_up 4
	nsenter --net=/proc/"${HOST_NS[0]}"/ns/net flimflam skstat --json -w builtin -r skrouterd --hops 3 \
		--tls --warmup 1 --duration 2 \
		--hosts "r1=ns1/${HOST_ADDR[1]},r2=ns2/${HOST_ADDR[2]},r3=ns3/${HOST_ADDR[3]},server=ns4/${HOST_ADDR[4]}" \
		>"$BATS_TEST_TMPDIR/ev" 2>"$BATS_TEST_TMPDIR/ev.err" 3>&- || {
		cat "$BATS_TEST_TMPDIR/ev.err"
		false
	}
	ev="$BATS_TEST_TMPDIR/ev"
	event_ok "$ev" topology '.hops == 3 and ([.relays[].role] == ["r1", "r2", "r3"]) and
		([.relays[].address] == [$a1, $a2, $a3])' \
		--arg a1 "${HOST_ADDR[1]}" --arg a2 "${HOST_ADDR[2]}" --arg a3 "${HOST_ADDR[3]}"
	link_hosts_ok "$ev" 3
	# Each link proved by the router it leaves, on its host: r1's to r2, r2's to r3.
	event_ok "$ev" topology '[.tls_links[] | [.from, .to, .said_by, .peer, .peer_verified]] ==
		[["r1", "r2", "r1", "flimflam-r2", true], ["r2", "r3", "r2", "flimflam-r3", true]]'
	event_ok "$ev" result '.bits_per_s > 0 and .errors == 0'
	no_keys_left "$ev"
	# Each router's statistics, read by the capture on its host.
	[ "$(jq -s '[.[] | select(.event == "skstat") | .role] | unique' "$ev" | jq -c .)" = '["r1","r2","r3"]' ]
	hosts_clean 10
}

# err_why_one_line FILE: a failed run's stderr: why (one line), then where its files are.
err_why_one_line() {
	[ "$(wc -l <"$1")" -eq 2 ] && sed -n 2p "$1" | grep -q "^flimflam: the run failed; its files are in '"
}

# no_keys_left EVENTS: no relay's key is left on the relays' hosts: their
# private directories (TMPDIR there) are gone, and no run directory of a
# remote stage holds a key; here, the run's own directory keeps them.
no_keys_left() {
	local ev="$1" d
	[ -z "$(find "$HOSTS_DIR/tmp" -name 'flimflam-tls-*' 2>/dev/null)" ] ||
		{ find "$HOSTS_DIR/tmp"; false; }
	for d in $(jq -r 'select(.event == "start" and .tool == "ff-topology") | .run_dir' "$ev"); do
		[ -z "$(find "$d" -name '*.key')" ] || { find "$d" -name '*.key'; false; }
	done
}

@test "run --hosts --tls: nginx's relays on two hosts link over mutual TLS, each given only its own key, none left there" {
	skip_unless_program nginx openssl
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --tls --warmup 1 --duration 2 --hosts "$(four_hosts)"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 0 ]
	ev="$BATS_TEST_TMPDIR/ev"
	# The link R1 (ns2) -> R2 (ns3), proved by R2's proof listener on ns3's address.
	event_ok "$ev" topology '.tls == true and (.tls_links | length) == 1 and
		(.tls_links[0] | .from == "r1" and .to == "r2" and .said_by == "r2" and
		 (.protocol | test("^TLSv1\\.[23]$")) and .peer_verified == true and (.peer | test("CN=flimflam-r1")))'
	event_ok "$ev" result '.bits_per_s > 0 and .errors == 0'
	# Each relay read its key from a private directory on its host, with only its own files.
	for r in r1 r2; do
		conf=$(jq -r --arg r "$r" 'select(.event == "topology") | .relays[] | select(.role == $r) | .config' "$ev")
		key=$(sed -n 's/^ *\(proxy_\)\{0,1\}ssl_certificate_key "\(.*\)";/\2/p' "$conf" | sort -u)
		echo "$r: $key"
		[ "$(echo "$key" | wc -l)" -eq 1 ]
		[[ "$key" == "$HOSTS_DIR/tmp/flimflam-tls-"*"/$r.key" ]]
		[ ! -e "$key" ] && [ ! -e "$(dirname "$key")" ]
		! grep -q 'ca\.key' "$conf" || false
	done
	no_keys_left "$ev"
	# Here, the run's directory holds the CA: its key never went to a host.
	d=$(find "$FLIMFLAM_RUNS" -path '*/tls/ca.key' -newer "$HOSTS_DIR/id")
	[ "$(echo "$d" | wc -l)" -eq 1 ]
	[ "$(stat -c %a "$d")" = 600 ]
	[ -z "$(find "$(dirname "$d")" -name 'send-*')" ]
	hosts_clean 10
}

@test "run --hosts --tls: a certificate that does not verify across hosts is one line, exit 1, before the window; no key left" {
	skip_unless_program nginx openssl
	hosts_up 4
	FLIMFLAM_TLS_CERTS=$(bad_certs) run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --tls --warmup 1 --duration 2 \
		--hosts "$(four_hosts)"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 1 ]
	# Why, in one line (then where the run's files are, as for any failed run).
	err_why_one_line "$BATS_TEST_TMPDIR/ev.err"
	grep -q "^ff-topology: --tls: the link from r1 to r2 did not come up.*certificate verify" "$BATS_TEST_TMPDIR/ev.err"
	! jq -e 'select(.event == "window" or .event == "topology")' "$BATS_TEST_TMPDIR/ev" || false
	no_keys_left "$BATS_TEST_TMPDIR/ev"
	hosts_clean 10
}

@test "run --hosts --tls: skrouterd's routers on two hosts over a mutual TLS inter-router link, proved by the router it leaves" {
	skip_unless_program skrouterd skmanage openssl
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r skrouterd --tls --warmup 1 --duration 2 --hosts "$(four_hosts)"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 0 ]
	ev="$BATS_TEST_TMPDIR/ev"
	event_ok "$ev" topology '.tls == true and (.tls_links | length) == 1 and
		(.tls_links[0] | .from == "r1" and .to == "r2" and .said_by == "r1" and .peer == "flimflam-r2" and
		 (.protocol | test("^TLSv1\\.[23]$")) and .peer_verified == true and (.source | test("management")))'
	event_ok "$ev" result '.bits_per_s > 0 and .errors == 0'
	no_keys_left "$ev"
	# A set that does not verify: the router's words, one line, exit 1.
	FLIMFLAM_TLS_CERTS=$(bad_certs) run_hosts "$BATS_TEST_TMPDIR/badrun" -w builtin -r skrouterd --tls --warmup 1 \
		--duration 2 --hosts "$(four_hosts)"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/badrun.err"
	[ "$status" -eq 1 ]
	err_why_one_line "$BATS_TEST_TMPDIR/badrun.err"
	grep -q "^ff-topology: --tls: the link from r1 to r2 did not come up; .*SSL Failure" "$BATS_TEST_TMPDIR/badrun.err"
	no_keys_left "$BATS_TEST_TMPDIR/badrun"
	hosts_clean 10
}

@test "run --hosts --tls: Ctrl-C while the TLS link carries the load stops every host's stages, and no key is left there" {
	skip_unless_program nginx openssl
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --tls --warmup 1 --duration 30 --hosts "$(four_hosts)"
	wait_measuring "$BATS_TEST_TMPDIR/ev"
	# Meanwhile each relay host has its key, in its private directory.
	[ "$(find "$HOSTS_DIR/tmp" -path '*/flimflam-tls-*' -name 'r*.key' | wc -l)" -eq 2 ]
	kill -INT "$RUN_PID"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 130 ]
	no_keys_left "$BATS_TEST_TMPDIR/ev"
	hosts_clean 10
}

@test "run --hosts --tls: nginx's two relays on one other host over tcp: the chain's own certificates there, its links proved" {
	skip_unless_program nginx openssl
	hosts_up 3
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --tls --warmup 1 --duration 2 \
		--hosts "client=ns1/${HOST_ADDR[1]},r1=ns2/${HOST_ADDR[2]},r2=ns2/${HOST_ADDR[2]},server=ns3/${HOST_ADDR[3]}"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 0 ]
	event_ok "$BATS_TEST_TMPDIR/ev" topology '.host == $a and .tls == true and (.tls_links | length) == 1 and
		.tls_links[0].peer_verified == true' --arg a "${HOST_ADDR[2]}"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0 and .errors == 0'
	hosts_clean 10
}

# run_hosts_window FILE I ARGS...: run_hosts FILE ARGS, and once its window
# opens, nsI's listening sockets ("address:port", one a line) into
# FILE.listen; then its status. A window the busy machine stretched
# (BUSY_ERE: the namespaces share this machine's 2 CPUs) is run once more.
run_hosts_window() {
	local f="$1" i="$2" try
	shift 2
	for try in 1 2; do
		rm -f "$f" "$f.err" "$f.listen"
		run_hosts "$f" "$@"
		if wait_measuring "$f"; then
			in_host "$i" ss -Hltn | awk '{print $4}' >"$f.listen"
		fi
		wait_status "$RUN_PID"
		cat "$f.err"
		[ "$status" -eq 1 ] && grep -qE -- "$BUSY_ERE" "$f.err" && [ "$try" -eq 1 ] && continue
		return 0
	done
}

# The client, the relays (together) and the server on three hosts.
three_hosts() {
	echo "client=ns1/${HOST_ADDR[1]},r1=ns2/${HOST_ADDR[2]},r2=ns2/${HOST_ADDR[2]},server=ns3/${HOST_ADDR[3]}"
}

# server_listens_on FILE ADDRESS: the run's server (its server event's
# port) listened on ADDRESS only, in FILE.listen.
server_listens_on() {
	local port
	port=$(jq -r 'select(.event == "server") | .port' "$1")
	[ -n "$port" ]
	cat "$1.listen"
	grep -qx "$2:$port" "$1.listen"
	! grep -v "^$2:" "$1.listen" | grep -q ":$port\$" || false
}

@test "run --hosts: h2load (nghttpd) with the client, R1+R2 (nginx) and the server on three hosts; requests succeed, nothing left" {
	skip_unless_program nginx nghttpd h2load
	hosts_up 3
	ev="$BATS_TEST_TMPDIR/ev"
	run_hosts_window "$ev" 3 -w h2load -r nginx -p tcp --warmup 1 --duration 2 --hosts "$(three_hosts)"
	[ "$status" -eq 0 ]
	# nghttpd listened on the server host's address, and the relays relayed to it.
	event_ok "$ev" server '.host == $a and .workload == "h2load"' --arg a "${HOST_ADDR[3]}"
	server_listens_on "$ev" "${HOST_ADDR[3]}"
	event_ok "$ev" topology '.host == $a and ([.relays[].role] == ["r1", "r2"])' --arg a "${HOST_ADDR[2]}"
	# Every request succeeded, through the chain.
	event_ok "$ev" result '.operations > 0 and .failed == 0 and .errors == 0 and .bits_per_s > 0 and
		.latency_p50_us > 0'
	hosts_clean 10
}

@test "run --hosts: h2load-h1 (the nginx server) with relay none, the client and the server on two hosts" {
	skip_unless_program nginx h2load
	hosts_up 2
	ev="$BATS_TEST_TMPDIR/ev"
	run_hosts_window "$ev" 2 -w h2load-h1 -r none -p http1 --warmup 1 --duration 2 \
		--hosts "client=ns1/${HOST_ADDR[1]},server=ns2/${HOST_ADDR[2]}"
	[ "$status" -eq 0 ]
	event_ok "$ev" server '.host == $a' --arg a "${HOST_ADDR[2]}"
	server_listens_on "$ev" "${HOST_ADDR[2]}"
	# Relay none: the client goes to the server's address.
	event_ok "$ev" topology '.host == $a and .hops == 0' --arg a "${HOST_ADDR[2]}"
	event_ok "$ev" result '.operations > 0 and .failed == 0 and .errors == 0'
	hosts_clean 10
}

@test "run --hosts: builtin-rr with the client, R1+R2 (nginx) and the server on three hosts, and with relay none on two" {
	skip_unless_program nginx
	hosts_up 3
	ev="$BATS_TEST_TMPDIR/ev"
	run_hosts_window "$ev" 3 -w builtin-rr -r nginx --warmup 1 --duration 2 --hosts "$(three_hosts)"
	[ "$status" -eq 0 ]
	event_ok "$ev" server '.host == $a and .workload == "builtin-rr"' --arg a "${HOST_ADDR[3]}"
	server_listens_on "$ev" "${HOST_ADDR[3]}"
	event_ok "$ev" topology '.host == $a' --arg a "${HOST_ADDR[2]}"
	event_ok "$ev" result '.operations > 0 and .errors == 0 and .bytes > 0 and .latency_p50_us > 0'
	hosts_clean 10
	run_hosts_window "$ev" 2 -w builtin-rr -r none --warmup 1 --duration 2 \
		--hosts "client=ns1/${HOST_ADDR[1]},server=ns2/${HOST_ADDR[2]}"
	[ "$status" -eq 0 ]
	server_listens_on "$ev" "${HOST_ADDR[2]}"
	event_ok "$ev" topology '.host == $a and .hops == 0' --arg a "${HOST_ADDR[2]}"
	event_ok "$ev" result '.operations > 0 and .errors == 0'
	hosts_clean 10
}

# in_local_private DIR CMD...: CMD on the local host in a mount namespace
# of its own, with a tmpfs over DIR that only it sees.
in_local_private() {
	local dir="$1"
	shift
	# shellcheck disable=SC2016 # the inner sh expands $1 and $@
	in_local unshare -m sh -c 'mount -t tmpfs tmpfs "$1" && shift && exec "$@"' sh "$dir" "$@"
}

@test "bench --pool --build: a build missing on a pool host is one line naming the host and the path, exit 2, before any run" {
	skip_unless_program nginx parallel
	# The runs' directories of this test only (the hosts' sshd pass it on).
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
	hosts_up 2
	cd "$BATS_TEST_TMPDIR"
	# The namespace hosts share this file system, so a path that exists
	# here and not on the hosts is one under a private mount: a tmpfs over
	# priv/ in a mount namespace of the local flimflam's own, which the
	# hosts' sshd (each in a mount namespace made before it) never see.
	# The build there is a prefix whose sbin/nginx is the nginx on PATH.
	mkdir priv
	run in_local_private "$BATS_TEST_TMPDIR/priv" sh -c \
		'mkdir -p priv/build/sbin && ln -s "$(command -v nginx)" priv/build/sbin/nginx && exec "$@"' sh \
		flimflam bench -w builtin -r nginx -p tcp --warmup 1 --duration 1 \
		--build new=priv/build --pool ns1,ns2 --output "$BATS_TEST_TMPDIR/res.jsonl"
	echo "$output"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "${lines[0]}" = "flimflam bench: --pool: on ns1, --build new: '$BATS_TEST_TMPDIR/priv/build': No such file or directory" ]
	# Nothing ran: no results, no run directory here or there, nothing left.
	[ ! -e res.jsonl ]
	nothing_started
	hosts_clean 10
	# A host that cannot be asked: one line, exit 1, nothing started.
	mkdir -p "shared build/sbin"
	ln -s "$(command -v nginx)" "shared build/sbin/nginx"
	run in_local flimflam bench -w builtin -r nginx -p tcp --warmup 1 --duration 1 \
		--build "new=shared build" --pool ns1,no-such-host-here --output "$BATS_TEST_TMPDIR/res.jsonl"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "flimflam bench: --pool: cannot check the builds on no-such-host-here: ssh exited with status 255: "*"no-such-host-here"* ]]
	[ ! -e res.jsonl ]
	nothing_started
	# A build every host has, given relative to here: each host's run takes
	# it at its absolute path (a run there resolves a relative one in its
	# own directory), a space and all, and runs it.
	run in_local flimflam bench -w builtin -r nginx -p tcp --warmup 1 --duration 2 \
		--build "new=shared build" --pool ns1,ns2 --output "$BATS_TEST_TMPDIR/res.jsonl"
	echo "$output"
	[ "$status" -eq 0 ] || grep -qE -- "$BUSY_ERE" <<<"$output"
	jq -s -e --arg busy "$BUSY_ERE" '[.[] | select(.event == "case")] | length == 1 and
		all(.status == "ok" or (.reason | test($busy)))' res.jsonl
	jq -s -e --arg p "$BATS_TEST_TMPDIR/shared build/sbin/nginx" '[.[] | select(.event == "case")] |
		all(.build.label == "new" and .build.path == $p)' res.jsonl
	hosts_clean 10
}
