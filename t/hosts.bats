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
	# A flamegraph is one recording: relays on two hosts are refused before anything starts.
	run in_local flimflam flamegraph -r nginx --hosts "$(four_hosts)"
	[ "$status" -eq 2 ]
	has_line "^flimflam: --hosts: a flamegraph renders one recording"
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
	run flimflam run -r skrouterd --hosts "r1=ns1/10.77.0.2,r2=ns2/10.77.0.3"
	[ "$status" -eq 2 ]
	has_line "skrouterd's routers link over 127.0.0.1"
	run flimflam run -r skrouterd --hops 3 --hosts "r1=ns1/10.77.0.2,r2=ns1/10.77.0.2,r3=ns2/10.77.0.3"
	[ "$status" -eq 2 ]
	has_line "skrouterd's routers link over 127\.0\.0\.1, so they go on one host \(r1 \.\.\. r3 name different ones\)"
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
	# --tls links the relays within one ff-topology: relays on hosts of their own cannot have it.
	run flimflam run -r nginx --tls --hosts "r1=ns1/10.77.0.2,r2=ns2/10.77.0.3"
	[ "$status" -eq 2 ]
	has_line "^flimflam: --hosts: --tls secures the links of a chain on one host"
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
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --hops 3 --warmup 1 --duration 2 --interval 1 \
		--hosts "r1=ns1/${HOST_ADDR[1]},r2=ns2/${HOST_ADDR[2]},r3=ns3/${HOST_ADDR[3]},server=ns4/${HOST_ADDR[4]}"
	wait_status "$RUN_PID"
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
