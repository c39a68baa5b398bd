# Hosts: client, relays and server on separate hosts over ssh
# (--hosts), and checked (check --hosts). The hosts are network namespaces
# with their own sshd (t/hosts.bash); flimflam runs in one more, the local
# host. Captures and pools: t/hosts-capture.bats; TLS: t/hosts-tls.bats.
bats_require_minimum_version 1.5.0
load helper
load hosts

teardown() {
	[ -z "${HOLD_PID:-}" ] || kill "$HOLD_PID" 2>/dev/null || true
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
	skip_unless_program nginx python3
	hosts_up 4
	run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --warmup 1 --duration 30 --hosts "$(four_hosts)"
	wait_measuring "$BATS_TEST_TMPDIR/ev"
	m=$(ssh_master ns3)
	# The ordering that made it "ff-capture (r2) on ns3 exited with status 255" once
	# in a while, every time: the master's sessions see its socket close and end,
	# and flimflam reaps them, before the master is seen gone (its exit held from
	# flimflam until then, and 0.5 s more; flimflam gives it 2 s).
	hold_exit "$m" 0.5
	kill -KILL "$m"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	wait_hold
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
	# window, or before it (TCP's zero-window probes back off to seconds:
	# README "TCP stalls"), and the client fails the run, as it must: once
	# more then.
	for try in 1 2; do
		run_hosts "$BATS_TEST_TMPDIR/ev" -w builtin -r nginx --hops 3 --warmup 1 --duration 2 --interval 1 \
			--hosts "r1=ns1/${HOST_ADDR[1]},r2=ns2/${HOST_ADDR[2]},r3=ns3/${HOST_ADDR[3]},server=ns4/${HOST_ADDR[4]}"
		wait_status "$RUN_PID"
		[ "$try" -eq 1 ] && [ "$status" -eq 1 ] &&
			grep -qE 'nothing came back (in the 2 s window|on [0-9]+ of)' "$BATS_TEST_TMPDIR/ev.err" "$BATS_TEST_TMPDIR/ev" ||
			break
		echo "# the nginx chain passed nothing (see the comment): once more" >&3
		hosts_clean 10
	done
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 0 ] || { jq -c 'select(.event == "error")' "$BATS_TEST_TMPDIR/ev"; false; }
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
