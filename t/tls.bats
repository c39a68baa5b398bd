# --tls: the links between relays are mutual TLS, with certificates made
# per run; the run proves it from the relays, and a link that does not
# verify stops the run before its window.
bats_require_minimum_version 1.5.0
load helper

FIX="$TOP/t/fixtures/tls"

# tls_files_ok RUNDIR: the certificates are there with private modes, and
# the CA's key is nowhere else: no relay's configuration names it, and no
# other file of the run holds it.
tls_files_ok() {
	local d="$1" f key
	[ "$(stat -c %a "$d/tls")" = 700 ]
	for f in ca.key r1.key r2.key; do
		[ "$(stat -c %a "$d/tls/$f")" = 600 ] || { echo "$f: mode $(stat -c %a "$d/tls/$f")"; false; }
	done
	for f in ca.crt r1.crt r2.crt; do
		openssl verify -CAfile "$d/tls/ca.crt" "$d/tls/$f"
	done
	! grep -rl 'ca\.key' "$d/r1" "$d/r2" || false
	key=$(sed -n '2p' "$d/tls/ca.key")
	[ -n "$key" ]
	[ "$(grep -rlF -- "$key" "$d" | grep -v '/tls/ca\.key$' | wc -l)" -eq 0 ]
	grep -qF "$d/tls/r1.key" "$d"/r1/*.conf
	grep -qF "$d/tls/r2.key" "$d"/r2/*.conf
}

# The link's proof in the topology event: TLS, a cipher, R1's certificate verified.
LINK_OK='.tls == true and (.tls_links | length) == 1 and
	(.tls_links[0] | .from == "r1" and .to == "r2" and (.protocol | test("^TLSv1\\.[23]$"))
	 and (.cipher | length) > 4 and .peer_verified == true and (.peer | test("flimflam-r1")))'

@test "tls: nginx over tcp: data flows through a TLS link, the summary names its version and cipher" {
	skip_unless_program nginx openssl
	run_steady flimflam run -r nginx --tls --warmup 1 --duration 2
	has_line '^  TLS:         TLSv1\.3, TLS_AES_256_GCM_SHA384 \(link R1 -> R2, as R2 says; R1.s certificate CN=flimflam-r1 verified\)$'
	has_line '^  Throughput:  [0-9.]+ [KMG]bit/s$'
	d=$(sed -n 's/^Run directory: //p' <<<"$output")
	tls_files_ok "$d"
	# The data listener of R2 takes TLS only, from a verified peer.
	grep -qE 'listen 127\.0\.0\.1:[0-9]+ ssl( reuseport)? ?;' "$d/r2/nginx.conf"
	grep -q 'ssl_verify_client on;' "$d/r2/nginx.conf"
	grep -q 'proxy_ssl on;' "$d/r1/nginx.conf"
	grep -q 'proxy_ssl_verify on;' "$d/r1/nginx.conf"
}

@test "tls: nginx over http1 and nghttpx over http1 and http2: the events and results name the link's TLS" {
	skip_unless_program nginx nghttpx nghttpd h2load openssl
	for c in nginx:h2load-h1:http1 nghttpx:h2load-h1:http1 nghttpx:h2load:http2; do
		IFS=: read -r relay wl proto <<<"$c"
		run_steady flimflam run --json -r "$relay" -w "$wl" -p "$proto" --tls --warmup 1 --duration 2
		echo "$output" >"$BATS_TEST_TMPDIR/ev"
		event_ok "$BATS_TEST_TMPDIR/ev" topology "$LINK_OK"
		event_ok "$BATS_TEST_TMPDIR/ev" result '.ops_per_s > 0 and (.failed // 0) == 0'
		d=$(jq -r 'select(.event == "topology") | .run_dir' "$BATS_TEST_TMPDIR/ev")
		tls_files_ok "$d"
	done
	# The like-for-like suite: nghttpx takes OpenSSL's order, as nginx and the router.
	event_ok "$BATS_TEST_TMPDIR/ev" topology '.tls_links[0].cipher == "TLS_AES_256_GCM_SHA384"'
	grep -q '^frontend=127.0.0.1,[0-9]*;no-tls$' "$d/r1/nghttpx.conf"
	grep -q '^frontend=127.0.0.1,[0-9]*$' "$d/r2/nghttpx.conf"
	grep -q '^backend=.*;tls;sni=flimflam-r2$' "$d/r1/nghttpx.conf"
	grep -q '^verify-client=yes$' "$d/r2/nghttpx.conf"
}

@test "tls: bench --tls keeps tls in each case and the link's proof in each record; relay none is skipped" {
	skip_unless_program nginx openssl
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr flimflam bench -w builtin -r nginx,none -p tcp --tls --warmup 1 \
		--duration 2 --output b.jsonl
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	has_line '^builtin +nginx tls +tcp +[0-9.]+[KMG] '
	jq -e -s 'length == 2 and all(.[]; .config.tls == true)' b.jsonl
	jq -e -s --argjson x 1 '[.[] | select(.config.relay == "nginx")][0] |
		.status == "ok" and (.topology.tls_links[0].protocol | test("^TLS"))' b.jsonl
	jq -e -s '[.[] | select(.config.relay == "none")][0] |
		.status == "skipped" and (.reason | test("--tls"))' b.jsonl
	# compare keys cases by tls: a plain record of the same case does not match.
	jq -c '.config.tls = false' b.jsonl >plain.jsonl
	cp b.jsonl same.jsonl
	run --separate-stderr flimflam compare --json b.jsonl same.jsonl
	echo "$output" | jq -e -s '[.[] | select(.event == "comparison")] | length > 0 and
		all(.[] | select(.event == "comparison"); .tls == true)'
	run -0 --separate-stderr flimflam compare b.jsonl same.jsonl
	has_line '^builtin +nginx tls +tcp '
	# The report names the series so: "nginx tls" beside the plain "nginx".
	run -0 --separate-stderr flimflam report -o page.html plain.jsonl b.jsonl
	grep -q '"name":"nginx tls"' page.html
	grep -q '"name":"nginx"' page.html
	run --separate-stderr flimflam compare --json b.jsonl plain.jsonl
	echo "$output" | jq -e -s '[.[] | select(.event == "comparison")] | length == 0'
}

@test "tls: a certificate that does not verify stops the run before its window, with why, and leaves nothing running" {
	skip_unless_program nginx nghttpx nghttpd h2load openssl
	FLIMFLAM_TLS_CERTS=$(bad_certs)
	export FLIMFLAM_TLS_CERTS
	for c in nginx:builtin:tcp nginx:h2load-h1:http1 nghttpx:h2load:http2; do
		IFS=: read -r relay wl proto <<<"$c"
		run -1 --separate-stderr flimflam run --json -r "$relay" -w "$wl" -p "$proto" --tls \
			--warmup 1 --duration 2
		echo "$output" >"$BATS_TEST_TMPDIR/ev"
		[[ "$stderr" == *"ff-topology: --tls: the link from r1 to r2 did not come up"* ]] ||
			{ echo "$stderr"; false; }
		[ "$relay" = nghttpx ] || [[ "$stderr" == *"certificate verify"* ]]
		# Before the window: no client started, no window, no topology.
		! jq -e 'select(.event == "window" or .event == "topology")' "$BATS_TEST_TMPDIR/ev" || false
		event_ok "$BATS_TEST_TMPDIR/ev" error '.program == "ff-topology" and (.message | test("--tls"))'
		d=$(jq -r 'select(.event == "start") | .run_dir' "$BATS_TEST_TMPDIR/ev" | head -1)
		[ -z "$(pids_of_run "$d")" ]
	done
}

# chain_links_ok EVENTS N: a chain of N relays, each of its N-1 links proved
# by the relay it comes to: TLS, a cipher, the certificate of the relay it
# leaves verified.
chain_links_ok() {
	event_ok "$1" topology "$2"' as $n | .tls == true and .hops == $n and
		(.tls_links | length) == $n - 1 and
		all(.tls_links | to_entries[]; .key as $i | .value |
		    .from == "r\($i + 1)" and .to == "r\($i + 2)" and (.protocol | test("^TLSv1\\.[23]$"))
		    and (.cipher | length) > 4 and .peer_verified == true
		    and (.peer | test("flimflam-r\($i + 1)$")))'
}

@test "tls: a chain of 3 over nginx (tcp, http1): every link is TLS, each proved by the relay it comes to" {
	skip_unless_program nginx h2load openssl
	for c in builtin:tcp h2load-h1:http1; do
		IFS=: read -r wl proto <<<"$c"
		run_steady flimflam run --json -r nginx -w "$wl" -p "$proto" --tls --hops 3 \
			--warmup 1 --duration 2
		echo "$output" >"$BATS_TEST_TMPDIR/ev"
		chain_links_ok "$BATS_TEST_TMPDIR/ev" 3
		event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0 and (.errors // 0) == 0'
		d=$(jq -r 'select(.event == "topology") | .run_dir' "$BATS_TEST_TMPDIR/ev")
		# The middle relay is both ends: a TLS listener and a TLS upstream.
		grep -qE 'listen 127\.0\.0\.1:[0-9]+ ssl( reuseport)? ?;' "$d/r2/nginx.conf"
		grep -qE 'listen 127\.0\.0\.1:[0-9]+ ssl( reuseport)? ?;' "$d/r3/nginx.conf"
		! grep -qE 'listen 127\.0\.0\.1:[0-9]+ ssl( reuseport)? ?;' "$d/r1/nginx.conf" || false
		grep -q 'proxy_ssl_name flimflam-r2;' "$d/r1/nginx.conf"
		grep -q 'proxy_ssl_name flimflam-r3;' "$d/r2/nginx.conf"
		! grep -q 'proxy_ssl' "$d/r3/nginx.conf" || false
		for f in r1.key r2.key r3.key; do
			[ "$(stat -c %a "$d/tls/$f")" = 600 ]
		done
		[ -z "$(pids_of_run "$d")" ]
	done
	# The summary: a line per link.
	run_steady flimflam run -r nginx --tls --hops 3 --warmup 1 --duration 2
	has_line '^  TLS:         TLSv1\.3, TLS_AES_256_GCM_SHA384 \(link R1 -> R2, as R2 says; R1.s certificate CN=flimflam-r1 verified\)$'
	has_line '^  TLS:         TLSv1\.3, TLS_AES_256_GCM_SHA384 \(link R2 -> R3, as R3 says; R2.s certificate CN=flimflam-r2 verified\)$'
}

@test "tls: a chain of 3 whose last link does not verify stops the run, naming that link" {
	skip_unless_program nginx openssl
	local d="$BATS_TEST_TMPDIR/mixed" good
	good=$(bad_certs)
	mkdir -p "$d"
	# r1, r2 and the CA of a set of their own; r3 signed by another CA.
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc \
		-keyout "$d/ca.key" -out "$d/ca.crt" -days 2 -subj "/CN=mixed" -config /dev/null \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
	for r in r1 r2 r3; do
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc \
			-keyout "$d/$r.key" -out "$d/$r.csr" -subj "/CN=flimflam-$r" -config /dev/null \
			-addext "subjectAltName=DNS:flimflam-$r,IP:127.0.0.1" \
			-addext extendedKeyUsage=serverAuth,clientAuth 2>/dev/null
		if [ "$r" = r3 ]; then ca="$good/b"; else ca="$d/ca"; fi
		openssl x509 -req -in "$d/$r.csr" -CA "$ca.crt" -CAkey "$ca.key" -set_serial 9 \
			-days 2 -copy_extensions copyall -out "$d/$r.crt" 2>/dev/null
	done
	FLIMFLAM_TLS_CERTS="$d" run -1 --separate-stderr flimflam run --json -r nginx --tls --hops 3 \
		--warmup 1 --duration 2
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	[[ "$stderr" == *"ff-topology: --tls: the link from r2 to r3 did not come up"* ]] ||
		{ echo "$stderr"; false; }
	[[ "$stderr" != *"from r1 to r2"* ]]
	! jq -e 'select(.event == "window" or .event == "topology")' "$BATS_TEST_TMPDIR/ev" || false
	run_dir=$(jq -r 'select(.event == "start") | .run_dir' "$BATS_TEST_TMPDIR/ev" | head -1)
	[ -z "$(pids_of_run "$run_dir")" ]
}

@test "tls: FLIMFLAM_TLS_CERTS without a relay's key is a clear error before anything starts" {
	skip_unless_program nginx openssl
	mkdir -p "$BATS_TEST_TMPDIR/half"
	cp "$(bad_certs)"/{ca.crt,r1.crt,r1.key} "$BATS_TEST_TMPDIR/half/"
	FLIMFLAM_TLS_CERTS="$BATS_TEST_TMPDIR/half" run -1 --separate-stderr \
		ff-topology -r nginx --tls --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/d"
	[ "$stderr" = "ff-topology: --tls: FLIMFLAM_TLS_CERTS: cannot read '$BATS_TEST_TMPDIR/half/r2.crt': No such file or directory" ]
	[ -z "$(pids_of_run "$BATS_TEST_TMPDIR/d")" ]
}

@test "tls: --tls with relay none or --hops 1 is a usage error" {
	run -2 --separate-stderr flimflam run -r none --tls
	[ "${stderr_lines[0]}" = "flimflam: --tls is for the links between relays, and relay 'none' has none" ]
	run -2 --separate-stderr ff-topology -r none --tls --server-port 5555
	[ "${stderr_lines[0]}" = "ff-topology: --tls is for the links between relays, and relay 'none' has none" ]
	# One relay has no link to make TLS.
	run -2 --separate-stderr flimflam run -r nginx --hops 1 --tls
	[ "${stderr_lines[0]}" = "flimflam: --tls is for the links between relays, and --hops 1 has one relay and no link" ]
	run -2 --separate-stderr ff-topology -r nginx --hops 1 --tls --server-port 5555
	[ "${stderr_lines[0]}" = "ff-topology: --tls is for the links between relays, and --hops 1 has one relay and no link" ]
}

# skrouterd: the sslProfile's attribute names come from the router's schema.

fake_router() {
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\n[ "$1" = --version ] && echo 3.2.0 && exit 0\necho "fake skrouterd: not for running" >&2\nexit 1\n' >"$BATS_TEST_TMPDIR/fake/skrouterd"
	chmod +x "$BATS_TEST_TMPDIR/fake/skrouterd"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH"
}

# inter_router_block CONF listener|connector: that entity of CONF whose role is inter-router.
inter_router_block() {
	awk -v t="$2" '$0 == t " {" {b = ""; l = 1} l {b = b $0 "\n"} l && /^}/ {l = 0; if (b ~ /role: inter-router\n/) printf "%s", b}' "$1"
}

# link_listener_ok CONF: its inter-router listener takes TLS only, from a verified peer.
link_listener_ok() {
	inter_router_block "$1" listener >"$BATS_TEST_TMPDIR/l"
	[ "$(grep -c '^listener {' "$BATS_TEST_TMPDIR/l")" -eq 1 ]
	grep -qx '    sslProfile: flimflam-link' "$BATS_TEST_TMPDIR/l"
	grep -qx '    requireSsl: yes' "$BATS_TEST_TMPDIR/l"
	grep -qx '    authenticatePeer: yes' "$BATS_TEST_TMPDIR/l"
	grep -qx '    saslMechanisms: EXTERNAL' "$BATS_TEST_TMPDIR/l"
}

# link_connector_ok CONF: its inter-router connector makes a TLS link with its certificate.
link_connector_ok() {
	inter_router_block "$1" connector >"$BATS_TEST_TMPDIR/c"
	[ "$(grep -c '^connector {' "$BATS_TEST_TMPDIR/c")" -eq 1 ]
	grep -qx '    sslProfile: flimflam-link' "$BATS_TEST_TMPDIR/c"
	grep -qx '    saslMechanisms: EXTERNAL' "$BATS_TEST_TMPDIR/c"
}

@test "tls: skrouterd configs take the sslProfile names of the router's schema, new and old" {
	skip_unless_program openssl
	fake_router
	FLIMFLAM_SKROUTERD_SCHEMA="$FIX/schema-new.json" run -0 --separate-stderr \
		ff-topology -r skrouterd --tls --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/n" --config-only
	d="$BATS_TEST_TMPDIR/n"
	for r in r1 r2; do
		grep -qx "    caCertFile: $d/tls/ca.crt" "$d/$r/skrouterd.conf"
		grep -qx "    certFile: $d/tls/$r.crt" "$d/$r/skrouterd.conf"
		grep -qx "    privateKeyFile: $d/tls/$r.key" "$d/$r/skrouterd.conf"
	done
	# R2's inter-router listener: TLS required, the peer authenticated by its certificate.
	link_listener_ok "$d/r2/skrouterd.conf"
	link_connector_ok "$d/r1/skrouterd.conf"
	tls_files_ok "$d"
	# A chain of 3: the middle router is both ends, each of its links TLS.
	FLIMFLAM_SKROUTERD_SCHEMA="$FIX/schema-new.json" run -0 --separate-stderr \
		ff-topology -r skrouterd --tls --hops 3 --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/3" \
		--config-only
	d="$BATS_TEST_TMPDIR/3"
	link_connector_ok "$d/r1/skrouterd.conf"
	link_listener_ok "$d/r2/skrouterd.conf"
	link_connector_ok "$d/r2/skrouterd.conf"
	link_listener_ok "$d/r3/skrouterd.conf"
	[ "$(grep -c '^sslProfile {' "$d/r2/skrouterd.conf")" -eq 1 ]
	grep -qx "    certFile: $d/tls/r3.crt" "$d/r3/skrouterd.conf"

	FLIMFLAM_SKROUTERD_SCHEMA="$FIX/schema-old.json" run -0 --separate-stderr \
		ff-topology -r skrouterd --tls --server-port 5555 --run-dir "$BATS_TEST_TMPDIR/o" --config-only
	d="$BATS_TEST_TMPDIR/o"
	grep -qx "    certDb: $d/tls/ca.crt" "$d/r1/skrouterd.conf"
	grep -qx "    keyFile: $d/tls/r1.key" "$d/r1/skrouterd.conf"
	! grep -qE 'caCertFile|privateKeyFile|requireSsl|verifyHostname' "$d"/r*/skrouterd.conf || false

	# A router without sslProfile: refused, saying so.
	FLIMFLAM_SKROUTERD_SCHEMA="$TOP/t/fixtures/ff-check/schema-3.x/skupper_router/management/skrouter.json" \
		run -1 --separate-stderr ff-topology -r skrouterd --tls --server-port 5555 \
		--run-dir "$BATS_TEST_TMPDIR/x" --config-only
	[[ "$stderr" == *"has no sslProfile"*"--tls needs one" ]]
}

@test "tls: skrouterd: builtin through a real router pair over a TLS inter-router link" {
	skip_unless_program skrouterd skmanage openssl
	run_steady flimflam run --json -r skrouterd --tls --warmup 1 --duration 2
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" topology "$LINK_OK"
	event_ok "$BATS_TEST_TMPDIR/ev" topology '.tls_links[0].source | test("management")'
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 1e6'
	tls_files_ok "$(jq -r 'select(.event == "topology") | .run_dir' "$BATS_TEST_TMPDIR/ev")"
}

@test "tls: skrouterd: a chain of 3 routers, every inter-router link TLS, each proved by its router" {
	skip_unless_program skrouterd skmanage openssl
	run_steady flimflam run --json -r skrouterd --tls --hops 3 --warmup 1 --duration 2
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	chain_links_ok "$BATS_TEST_TMPDIR/ev" 3
	event_ok "$BATS_TEST_TMPDIR/ev" topology 'all(.tls_links[]; .source | test("management"))'
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 1e6'
}

@test "tls: skrouterd: a certificate that does not verify stops the run before its window, with the router's words" {
	skip_unless_program skrouterd openssl
	FLIMFLAM_TLS_CERTS=$(bad_certs) run -1 --separate-stderr \
		flimflam run --json -r skrouterd --tls --warmup 1 --duration 2
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	[[ "$stderr" == *"ff-topology: --tls: the link from r1 to r2 did not come up; "*"SSL Failure"* ]] ||
		{ echo "$stderr"; false; }
	! jq -e 'select(.event == "window" or .event == "topology")' "$BATS_TEST_TMPDIR/ev" || false
	d=$(jq -r 'select(.event == "start") | .run_dir' "$BATS_TEST_TMPDIR/ev" | head -1)
	[ -z "$(pids_of_run "$d")" ]
}

@test "tls: SIGINT while a TLS link carries the load stops everything, exit 130, the certificates kept" {
	skip_unless_program nginx openssl
	interrupt_run "$BATS_TEST_TMPDIR/ev" -r nginx --tls --warmup 30 --duration 5
	tls_files_ok "$d"
}
