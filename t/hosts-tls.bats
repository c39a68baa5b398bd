# Hosts: --tls between relays on separate hosts, each link proved, and no
# key left there. The hosts are network namespaces with their own sshd
# (t/hosts.bash).
bats_require_minimum_version 1.5.0
load helper
load hosts

teardown() {
	hosts_down
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

# A stage on another host writes its failure as an `error` event only, and
# flimflam says it: what the stage writes on stderr as it exits may not
# come through ssh (its session closed as the run ends). Here nothing comes
# through: each remote program runs with its stderr thrown away.
@test "run --hosts: a stage on another host that fails is said in one line by flimflam, even when its stderr is lost" {
	skip_unless_program nginx openssl
	hosts_up 4
	local dir="$BATS_TEST_TMPDIR/mute" p
	mkdir "$dir"
	for p in ff-topology ff-workload ff-capture; do
		printf '#!/bin/sh\nexec %s "$@" 2>/dev/null\n' "$(dirname "$(command -v flimflam)")/$p" >"$dir/$p"
		chmod +x "$dir/$p"
	done
	FLIMFLAM_REMOTE_DIR="$dir" FLIMFLAM_TLS_CERTS=$(bad_certs) run_hosts "$BATS_TEST_TMPDIR/ev" \
		-w builtin -r nginx --tls --warmup 1 --duration 2 --hosts "$(four_hosts)"
	wait_status "$RUN_PID"
	cat "$BATS_TEST_TMPDIR/ev.err"
	[ "$status" -eq 1 ]
	err_why_one_line "$BATS_TEST_TMPDIR/ev.err"
	grep -q "^ff-topology: --tls: the link from r1 to r2 did not come up.*certificate verify" "$BATS_TEST_TMPDIR/ev.err"
	# The event says that its stage wrote no line of its own; flimflam's own failures carry no such mark.
	event_ok "$BATS_TEST_TMPDIR/ev" error '.program == "ff-topology" and .said == false'
	[ "$(jq -s '[.[] | select(.event == "error" and .said == false)] | length' "$BATS_TEST_TMPDIR/ev")" -eq 1 ]
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
