# Every program: -h prints the usage on stdout and exits 0; an unknown
# option is one line on stderr, then the usage synopsis, and exit 2.
bats_require_minimum_version 1.5.0
load helper

programs() {
	local p
	for p in "$TOP"/bin/*.c; do
		p=$(basename "$p" .c)
		[ -x "$TOP/bin/$p" ] && echo "$p"
	done
}

@test "every program: -h and --help print the usage on stdout and exit 0" {
	local p n=0
	for p in $(programs); do
		run -0 --separate-stderr "$p" -h
		[[ "$output" == usage:* ]] || { echo "$p -h: $output"; false; }
		[ -z "$stderr" ]
		run -0 --separate-stderr "$p" --help
		[[ "$output" == usage:* ]] || { echo "$p --help: $output"; false; }
		n=$((n + 1))
	done
	[ "$n" -ge 5 ]
}

@test "every program: an unknown option is a usage error naming it" {
	local p i err
	for p in $(programs); do
		run -2 --separate-stderr "$p" --no-such-option
		[ -z "$output" ] || { echo "$p wrote to stdout: $output"; false; }
		[ "${stderr_lines[0]}" = "$p: unknown option '--no-such-option'" ] ||
			{ echo "$p: ${stderr_lines[0]}"; false; }
		[[ "${stderr_lines[1]}" == usage:* ]]
		# Then the synopsis, which -h begins with, and not the rest of -h.
		err=("${stderr_lines[@]}")
		run -0 "$p" --help
		[ $((${#err[@]} - 1)) -lt "${#lines[@]}" ] || { echo "$p: ${#err[@]} ${#lines[@]}"; false; }
		for ((i = 1; i < ${#err[@]}; i++)); do
			[ "${err[i]}" = "${lines[i - 1]}" ] ||
				{ echo "$p: '${err[i]}' is not line $i of its -h"; false; }
		done
	done
}

@test "unsupported combinations are usage errors listing what works" {
	run -2 --separate-stderr flimflam run -w iperf3 -r none -p http1
	[[ "${stderr_lines[0]}" == *"these work for iperf3: iperf3/skrouterd/tcp, iperf3/nginx/tcp, iperf3/none/tcp" ]]
	run -2 --separate-stderr flimflam run -w builtin -r nghttpx
	[[ "${stderr_lines[0]}" == "flimflam: workload 'builtin' over relay 'nghttpx' with protocol 'tcp' is not supported"* ]]
	run -2 --separate-stderr flimflam run -w h2load -r nginx -p http2
	[[ "${stderr_lines[0]}" == *"h2load/nghttpx/http2"* ]]
	run -2 --separate-stderr ff-topology -r nginx -p http2
	[ "${stderr_lines[0]}" = "ff-topology: relay 'nginx' does not carry protocol 'http2' (it works with: builtin/nginx/tcp, iperf3/nginx/tcp, h2load/nginx/tcp, h2load-h1/nginx/tcp, h2load-h1/nginx/http1)" ]
}

@test "every program: -h into a full or closed output is one error line and exit 1" {
	local p n=0
	for p in $(programs) ff-builtin-client ff-builtin-server; do
		[ -x "$TOP/bin/$p" ] || p="$TOP/builtin/$p"
		full_out "$p" -h
		[ "$status" -eq 1 ] || { echo "$p -h >full: status $status"; false; }
		[ "$stderr" = "$(basename "$p"): cannot write to standard output: No space left on device" ] ||
			{ echo "$p -h >full: $stderr"; false; }
		run -1 --separate-stderr sh -c 'exec "$0" -h >&-' "$p"
		[ "$stderr" = "$(basename "$p"): cannot write to standard output: Bad file descriptor" ] ||
			{ echo "$p -h >&-: $stderr"; false; }
		n=$((n + 1))
	done
	full_out flimflam run -h
	[ "$status" -eq 1 ]
	[ "$stderr" = "flimflam: cannot write to standard output: No space left on device" ]
	full_out flimflam bench -h
	[ "$status" -eq 1 ]
	[ "$stderr" = "flimflam bench: cannot write to standard output: No space left on device" ]
	[ "$n" -ge 9 ]
}

@test "every program: a closed stdin, stdout or stderr at start is not taken by its own pipes" {
	# ff-capture used to make its signal pipe fd 0 and wait on it forever.
	run -1 --separate-stderr timeout 10 sh -c 'exec ff-capture <&-'
	[ "$stderr" = "ff-capture: standard input ended with no event: ff-capture reads the event stream of flimflam's programs" ]
	run -1 --separate-stderr timeout 10 sh -c 'exec ff-workload drive <&-'
	[[ "$stderr" == "ff-workload: standard input ended with no event"* ]]
	run -1 --separate-stderr timeout 10 sh -c 'exec ff-topology -r none <&-'
	[[ "$stderr" == "ff-topology: standard input ended with no event"* ]]
	# stdout closed: the first event fails, as a write error.
	run -1 --separate-stderr timeout 10 sh -c 'echo "{\"event\":\"start\"}" | exec ff-capture >&-'
	[ "$stderr" = "ff-capture: cannot write to standard output: Bad file descriptor" ]
	# stderr closed: the messages are lost, not written into the stream.
	run -1 --separate-stderr timeout 10 sh -c 'exec ff-capture 2>&- </dev/null'
	[ "$(jq -r .event <<<"$output" | tr '\n' ' ')" = "start error " ]
}
