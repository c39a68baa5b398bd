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
