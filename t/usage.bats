# Every program: -h prints the usage on stdout and exits 0; an unknown
# option is one line on stderr, then the usage, and exit 2.
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
	local p
	for p in $(programs); do
		run -2 --separate-stderr "$p" --no-such-option
		[ -z "$output" ] || { echo "$p wrote to stdout: $output"; false; }
		[ "${stderr_lines[0]}" = "$p: unknown option '--no-such-option'" ] ||
			{ echo "$p: ${stderr_lines[0]}"; false; }
		[[ "${stderr_lines[1]}" == usage:* ]]
	done
}

@test "the run options: each bad value is one line and exit 2, and nothing starts" {
	local args
	while IFS='|' read -r args want; do
		run -2 --separate-stderr flimflam run -r none $args
		[ "${stderr_lines[0]}" = "flimflam: $want" ] ||
			{ echo "run $args: got '${stderr_lines[0]}', want 'flimflam: $want'"; false; }
		[ -z "$output" ]
	done <<'CASES'
--jobs 0|--jobs: 0 is out of range (1 to 4096)
--jobs -3|--jobs: -3 is out of range (1 to 4096)
--jobs 1.5|--jobs: '1.5' is not a whole number
--jobs many|--jobs: 'many' is not a number
--jobs 1000000|--jobs: 1000000 is out of range (1 to 4096)
--jobs|option '--jobs' needs a value
--warmup -1|--warmup: -1 is out of range (0 to 86400)
--warmup 0.5|--warmup: '0.5' is not a whole number
--duration 0|--duration: 0 is out of range (1 to 86400)
--duration 99999999999|--duration: 99999999999 is out of range (1 to 86400)
--duration 99999999999999999999999|--duration: 99999999999999999999999 is out of range (1 to 86400)
--duration 2s|--duration: '2s' is not a number
--cpu-limit -1|--cpu-limit: -1 is out of range (0 to 1024)
--cpu-limit 100000|--cpu-limit: 100000 is out of range (0 to 1024)
-w nosuch|unknown workload 'nosuch' (expected builtin, iperf3, h2load, h2load-h1)
-r nosuch|unknown relay 'nosuch' (expected skrouterd, nghttpx, nginx, none)
-p nosuch|unknown protocol 'nosuch' (expected tcp, http1, http2)
-p http1|workload 'builtin' over relay 'none' with protocol 'http1' is not supported; these work for builtin: builtin/skrouterd/tcp, builtin/nginx/tcp, builtin/none/tcp
extra|unexpected argument 'extra'
CASES
	run -2 --separate-stderr flimflam run -r none --duration ""
	[ "${stderr_lines[0]}" = "flimflam: --duration: expected a whole number" ]
	# Nothing was started: no run directory was made.
	[ ! -e "$FLIMFLAM_RUNS" ] || [ -z "$(ls -A "$FLIMFLAM_RUNS")" ]
}

@test "the run options: --cpu-limit beyond this process's CPUs is a usage error" {
	local n
	n=$(nproc)
	run -2 --separate-stderr flimflam run -r nginx --cpu-limit $((n + 1))
	[ "${stderr_lines[0]}" = "flimflam: --cpu-limit: $((n + 1)) is more than the $n CPUs this process may use" ]
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
