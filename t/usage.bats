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
	[ "${stderr_lines[0]}" = "ff-topology: relay 'nginx' does not carry protocol 'http2' (it works with: builtin/nginx/tcp, iperf3/nginx/tcp, h2load/nginx/tcp, h2load-h1/nginx/tcp, h2load-h1/nginx/http1, builtin-rr/nginx/tcp, builtin-crr/nginx/tcp)" ]
}
