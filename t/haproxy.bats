# Relay haproxy: Debian's HAProxy as the relays, tcp mode over tcp, http
# mode over http1 and http2; its TLS links proved as nginx's over tcp are.
bats_require_minimum_version 1.5.0
load helper

# The link proofs of a chain of N relays in the topology event.
chain_links_ok() {
	event_ok "$1" topology "$2"' as $n | .relay == "haproxy" and .tls == true and .hops == $n and
		(.tls_links | length) == $n - 1 and
		all(.tls_links | to_entries[]; .key as $i | .value |
		    .from == "r\($i + 1)" and .to == "r\($i + 2)" and (.protocol | test("^TLSv1\\.[23]$"))
		    and (.cipher | length) > 4 and .peer_verified == true
		    and .peer == "CN=flimflam-r\($i + 1)" and (.source | test("ssl_fc_protocol")))'
}

@test "haproxy: each protocol it carries runs through two relays with plausible figures, and nothing is left running" {
	skip_unless_program haproxy nghttpd h2load nginx
	for c in builtin:tcp:tcp h2load-h1:http1:http h2load:http2:http; do
		IFS=: read -r wl proto mode <<<"$c"
		run_steady flimflam run --json -r haproxy -w "$wl" -p "$proto" --warmup 1 --duration 2
		echo "$output" >"$BATS_TEST_TMPDIR/ev"
		event_ok "$BATS_TEST_TMPDIR/ev" topology '.relay == "haproxy" and .hops == 2 and .tls == false and
			all(.relays[]; .program == "haproxy" and (.path | test("haproxy$")) and .pid > 0) and
			(.build.version | test("^[0-9]+\\.[0-9]+"))'
		event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0 and (.errors // 0) == 0 and (.failed // 0) == 0'
		event_ok "$BATS_TEST_TMPDIR/ev" environment '.haproxy.version | test("HAProxy")'
		d=$(jq -r 'select(.event == "topology") | .run_dir' "$BATS_TEST_TMPDIR/ev")
		grep -qx "    mode $mode" "$d/r1/haproxy.conf"
		grep -qE "^    bind 127\.0\.0\.1:[0-9]+$([ "$proto" = http2 ] && echo ' proto h2')\$" "$d/r1/haproxy.conf"
		! grep -q ' ssl ' "$d/r1/haproxy.conf" || false
		[ -z "$(pids_of_run "$d")" ]
	done
}

@test "haproxy: --hops 3 with --tls over tcp, http1 and http2: every link TLS, each proved by the relay it comes to" {
	skip_unless_program haproxy nghttpd h2load nginx openssl
	for c in builtin:tcp h2load-h1:http1 h2load:http2; do
		IFS=: read -r wl proto <<<"$c"
		run_steady flimflam run --json -r haproxy -w "$wl" -p "$proto" --hops 3 --tls --warmup 1 --duration 2
		echo "$output" >"$BATS_TEST_TMPDIR/ev"
		chain_links_ok "$BATS_TEST_TMPDIR/ev" 3
		event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0 and (.errors // 0) == 0 and (.failed // 0) == 0'
		d=$(jq -r 'select(.event == "topology") | .run_dir' "$BATS_TEST_TMPDIR/ev")
		# The middle relay is both ends: a TLS listener from a verified peer and a verifying TLS server.
		grep -qE '^    bind 127\.0\.0\.1:[0-9]+( proto h2)? ssl crt .* verify required' "$d/r2/haproxy.conf"
		grep -qE '^    server next 127\.0\.0\.1:[0-9]+( proto h2)? ssl .* verify required .*sni str\(flimflam-r3\) verifyhost flimflam-r3$' "$d/r2/haproxy.conf"
		! grep -qE '^    bind 127\.0\.0\.1:[0-9]+.* ssl ' <(sed -n '/^frontend flimflam$/,/^$/p' "$d/r1/haproxy.conf") || false
		# Each relay's certificate and key in one file for HAProxy's crt, private.
		for f in r1 r2 r3; do
			[ "$(stat -c %a "$d/$f/tls.pem")" = 600 ]
		done
		[ -z "$(pids_of_run "$d")" ]
	done
	run_steady flimflam run -r haproxy --tls --warmup 1 --duration 2
	has_line '^  TLS:         TLSv1\.3, TLS_AES_256_GCM_SHA384 \(link R1 -> R2, as R2 says; R1.s certificate CN=flimflam-r1 verified\)$'
}

@test "haproxy: a certificate that does not verify stops the run before its window, and leaves nothing running" {
	skip_unless_program haproxy openssl
	FLIMFLAM_TLS_CERTS=$(bad_certs) run -1 --separate-stderr flimflam run --json -r haproxy --tls \
		--warmup 1 --duration 2
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	[[ "$stderr" == *"ff-topology: --tls: the link from r1 to r2 did not come up"* ]] || { echo "$stderr"; false; }
	! jq -e 'select(.event == "window" or .event == "topology")' "$BATS_TEST_TMPDIR/ev" || false
	d=$(jq -r 'select(.event == "start") | .run_dir' "$BATS_TEST_TMPDIR/ev" | head -1)
	[ -z "$(pids_of_run "$d")" ]
}

@test "haproxy: bench runs it beside nginx, and the report and compare name it" {
	skip_unless_program haproxy nginx
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr flimflam bench -w builtin -r nginx,haproxy -p tcp --hops 2,3 --warmup 1 \
		--duration 1 --output b.jsonl
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	has_line '^builtin +haproxy +tcp '
	jq -e -s '[.[] | select(.config.relay == "haproxy")] | length == 2 and
		all(.[]; .status == "ok" and .topology.relay == "haproxy")' b.jsonl
	run -0 --separate-stderr flimflam report -o page.html b.jsonl
	grep -q '"haproxy' page.html
	cp b.jsonl again.jsonl
	run -0 --separate-stderr flimflam compare b.jsonl again.jsonl
	has_line '^builtin +haproxy '
}

@test "haproxy: --build runs a build of it and names its version; a program that is not haproxy is refused" {
	skip_unless_program haproxy
	local hp
	hp=$(command -v haproxy)
	run_steady flimflam run -r haproxy --warmup 0 --duration 1 --build "main=$hp"
	has_line "^  Build:       build main: haproxy $hp, version [0-9]+\.[0-9]+[^ ]*, sha256 [0-9a-f]{12}$"
	printf '#!/bin/sh\necho not a relay\n' >"$BATS_TEST_TMPDIR/fake"
	chmod +x "$BATS_TEST_TMPDIR/fake"
	run -2 --separate-stderr flimflam run -r haproxy --build "a=$BATS_TEST_TMPDIR/fake"
	[ "$stderr" = "flimflam: --build a: '$BATS_TEST_TMPDIR/fake -v' printed 'not a relay', not haproxy's version: not a haproxy" ]
}

@test "haproxy: not on PATH is one line and exit 1, before anything starts" {
	local p
	p=$(path_without haproxy)
	PATH="$p" run -1 --separate-stderr flimflam run -r haproxy --warmup 0 --duration 1
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "flimflam: relay 'haproxy' needs haproxy, which is not on PATH"* ]]
	PATH="$p" run -1 --separate-stderr ff-topology -r haproxy --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/d"
	[ "$stderr" = "ff-topology: relay 'haproxy' needs haproxy, which is not on PATH" ]
	[ -z "$(pids_of_run "$BATS_TEST_TMPDIR/d")" ]
}
