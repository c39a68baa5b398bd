# Hosts: perf's captures on the relays' hosts (stat, record, flamegraph
# --hosts) and a bench over a pool of hosts (--pool). The hosts are network
# namespaces with their own sshd (t/hosts.bash).
bats_require_minimum_version 1.5.0
load helper
load hosts

teardown() {
	hosts_down
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
		perf report -i "$r.perf.data" --stdio --sort pid >"$BATS_TEST_TMPDIR/$r.report" 2>&1 || true
		grep -q "nginx" "$BATS_TEST_TMPDIR/$r.report" || { echo "$r:"; cat "$BATS_TEST_TMPDIR/$r.report"; false; }
		! grep -E '^ +[0-9.]+%' "$BATS_TEST_TMPDIR/$r.report" | grep -v "nginx" | grep -q . || false
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
