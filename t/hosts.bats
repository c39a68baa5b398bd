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
	ns=("${HOST_NS[@]}" "${HOST_SSHD[@]}" "$HOSTS_SWITCH")
	hosts_down
	all_gone "${ns[@]}"
}

# run_hosts FILE ARGS...: flimflam run --json ARGS on the local host (ns0),
# in the background, events to FILE and stderr to FILE.err; RUN_PID.
run_hosts() {
	local f="$1"
	shift
	in_local flimflam run --json "$@" >"$f" 2>"$f.err" 3>&- &
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
