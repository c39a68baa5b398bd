# The whole matrix of packaged relays (none, nginx, nghttpx) with every
# workload and protocol, through the real programs: each supported
# combination gives plausible, non-zero figures; each other one is a usage
# error.
bats_require_minimum_version 1.5.0
load helper

setup_file() {
	for p in nginx nghttpx nghttpd h2load iperf3; do
		command -v "$p" >/dev/null || return 0
	done
}

run_case() {
	local w="$1" r="$2" p="$3"
	run_steady flimflam run --json -w "$w" -r "$r" -p "$p" --warmup 1 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	jsonl_ok "$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0 and .bits_per_s < 1e12 and (.duration_s - 1 | fabs) <= 0.15'
	case $w in
	builtin-rr | builtin-crr) event_ok "$BATS_TEST_TMPDIR/ev" result '.workload == "'"$w"'" and
		.ops_per_s > 100 and .transactions == .operations and .errors == 0 and
		.latency_p50_us > 0 and .latency_p50_us <= .latency_p99_us and .latency_max_us < 1e7 and
		.bits_per_s == 8 * 2 * .ops_per_s' ;;
	builtin | iperf3) event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 1e5' ;;&
	# Requests judged by their count over the window, not by a rate floor
	# (a busy machine gave 69/s against 100 asked): a rate not worked out
	# from the count, or in other units, still fails, as does no request.
	h2load*) event_ok "$BATS_TEST_TMPDIR/ev" result '.operations > 0 and (.ops_per_s * .duration_s - .operations | fabs) < 1 and
		.failed == 0 and .latency_avg_us > 0 and .latency_avg_us < 1e6' ;;
	*) event_ok "$BATS_TEST_TMPDIR/ev" result '.operations == null' ;;
	esac
	if [ "$r" = none ]; then
		event_ok "$BATS_TEST_TMPDIR/ev" resources '(.relays | length) == 0'
	else
		event_ok "$BATS_TEST_TMPDIR/ev" resources '(.relays | length) == 2 and all(.relays[]; .cpu_fraction > 0.005)'
	fi
}

@test "matrix: every supported packaged combination runs with plausible figures" {
	skip_unless_program nginx nghttpx nghttpd h2load iperf3
	n=0
	# DESIGN.md's matrix, for the relays a distribution packages.
	for c in builtin:none:tcp builtin:nginx:tcp \
		 iperf3:none:tcp iperf3:nginx:tcp \
		 h2load:none:tcp h2load:none:http2 h2load:nginx:tcp h2load:nghttpx:http2 \
		 h2load-h1:none:tcp h2load-h1:none:http1 h2load-h1:nginx:tcp h2load-h1:nginx:http1 \
		 h2load-h1:nghttpx:http1 \
		 builtin-rr:none:tcp builtin-rr:nginx:tcp builtin-crr:none:tcp builtin-crr:nginx:tcp; do
		IFS=: read -r w r p <<<"$c"
		echo "# $w $r $p" >&3
		run_case "$w" "$r" "$p"
		n=$((n + 1))
	done
	# DESIGN.md's matrix has 13 packaged combinations, and the
	# request/response workloads 4 more (tcp over none and nginx).
	[ "$n" -eq 17 ]
}

@test "matrix: each unsupported combination is a usage error" {
	for c in builtin:nghttpx:tcp builtin:none:http1 iperf3:nginx:http2 iperf3:none:http1 \
		 h2load:nginx:http2 h2load:nginx:http1 h2load-h1:nghttpx:tcp h2load-h1:none:http2 \
		 builtin-rr:nghttpx:tcp builtin-crr:nghttpx:http2 builtin-rr:none:http1 builtin-crr:nginx:http1; do
		IFS=: read -r w r p <<<"$c"
		run -2 --separate-stderr flimflam run -w "$w" -r "$r" -p "$p"
		[[ "${stderr_lines[0]}" == "flimflam: workload '$w' over relay '$r' with protocol '$p' is not supported; these work for $w: "* ]]
	done
}

# The names of the matrix (its rows' names and programs, the protocols):
# code outside lib/ff_matrix.c and the drivers (ff-topology's relay_*.c,
# ff-workload's workload_*.c) asks the matrix (ff_relay_has, the rows'
# facts) or the driver, and compares none of them.
@test "matrix: no strcmp names a relay, workload or protocol outside the matrix and the drivers" {
	cd "$BATS_TEST_DIRNAME/.."
	names=$( { grep -oE '\.(name|program|server|client) = "[^"]+"' lib/ff_matrix.c | cut -d'"' -f2
		   sed -nE 's/.*ff_protocols\[\] = \{(.*)\};/\1/p' lib/ff_matrix.c | grep -oE '"[^"]+"' | tr -d '"'
		 } | grep -v '^ff-' | sort -u | paste -sd'|')
	[[ "$names" == *skrouterd* && "$names" == *iperf3* && "$names" == *none* && "$names" == *http2* ]]
	run grep -nE "str(n|case|ncase)?cmp\\((\\([^()]*\\)|[^()])*\"($names)\"" \
		--include='*.c' --include='*.h' -r lib bin builtin
	hits=$(grep -vE '^(lib/ff_matrix\.c|bin/ff-topology\.d/relay_[a-z0-9_]+\.c|bin/ff-workload\.d/workload_[a-z0-9_]+\.c):' <<<"$output" || true)
	echo "$hits"
	[ -z "$hits" ]
}
