# Every program: -h prints the usage on stdout and exits 0; an unknown
# option is one line on stderr, then the usage synopsis, and exit 2.
bats_require_minimum_version 1.5.0
load helper

programs() {
	local p
	# A program is bin/NAME.c, or bin/NAME.d/ for one of several files.
	for p in "$TOP"/bin/*.c "$TOP"/bin/*.d; do
		p=$(basename "$p"); p=${p%.[cd]}
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
	[[ "${stderr_lines[0]}" == *"these work for iperf3: iperf3/skrouterd/tcp, iperf3/nginx/tcp, iperf3/haproxy/tcp, iperf3/cmd/tcp, iperf3/none/tcp" ]]
	run -2 --separate-stderr flimflam run -w builtin -r nghttpx
	[[ "${stderr_lines[0]}" == "flimflam: workload 'builtin' over relay 'nghttpx' with protocol 'tcp' is not supported"* ]]
	run -2 --separate-stderr flimflam run -w h2load -r nginx -p http2
	[[ "${stderr_lines[0]}" == *"h2load/nghttpx/http2"* ]]
	run -2 --separate-stderr ff-topology -r nginx -p http2
	[ "${stderr_lines[0]}" = "ff-topology: relay 'nginx' does not carry protocol 'http2' (it works with: builtin/nginx/tcp, iperf3/nginx/tcp, h2load/nginx/tcp, h2load-h1/nginx/tcp, h2load-h1/nginx/http1, builtin-rr/nginx/tcp, builtin-crr/nginx/tcp)" ]
}

# Every program and command as the user types it, the name its messages
# begin with, and a valued option with two values: "COMMAND|NAME|OPTION A|B".
every_command() {
	cat <<'LIST'
flimflam|flimflam|
flimflam run|flimflam|-w builtin|iperf3
flimflam record|flimflam|--freq 99|100
flimflam bench|flimflam bench|-r nginx|none
flimflam compare|flimflam compare|--threshold 1|2
flimflam report|flimflam report|-o a|b
flimflam check|flimflam check|
ff-bench|ff-bench|--repeat 1|2
ff-bench summarize|ff-bench|
ff-bench compare|ff-bench|--format text|markdown
ff-bench report|ff-bench|-o a|b
ff-capture|ff-capture|--pid 1|2
ff-check|ff-check|
ff-flame|ff-flame|-o a|b
ff-topology|ff-topology|-p tcp|http1
ff-workload serve|ff-workload|--run-dir a|b
ff-builtin-client|ff-builtin-client|--port 1|2
ff-builtin-server|ff-builtin-server|--port 1|2
ff-builtin-rr-client|ff-builtin-rr-client|--port 1|2
ff-builtin-rr-server|ff-builtin-rr-server|--port 1|2
LIST
}

@test "every program: --version prints its name and the version its start event carries" {
	local ver p
	ver=$(ff-check --json | jq -r 'select(.event == "start") | .version')
	[ -n "$ver" ] && [ "$ver" != null ]
	for p in flimflam ff-bench ff-capture ff-check ff-flame ff-topology ff-workload \
		ff-builtin-client ff-builtin-server ff-builtin-rr-client ff-builtin-rr-server; do
		run -0 --separate-stderr env PATH="$TOP/builtin:$PATH" "$p" --version
		[ "$output" = "$p $ver" ] || { echo "$p --version: $output"; false; }
		[ -z "$stderr" ]
	done
	run -0 flimflam run --version
	[ "$output" = "flimflam $ver" ]
	run -0 flimflam compare --version
	[ "$output" = "flimflam $ver" ]
	run -0 flimflam report --version
	[ "$output" = "flimflam $ver" ]
}

@test "every program: a value on an option that takes none, a bad option with a value, an option given twice: usage errors naming it" {
	local cmd p opt a b
	while IFS='|' read -r cmd p opt b; do
		# one option parser for all: the same words everywhere
		run -2 --separate-stderr env PATH="$TOP/builtin:$PATH" $cmd --help=yes
		[ "${stderr_lines[0]}" = "$p: option '--help' takes no value (given 'yes')" ] ||
			{ echo "$cmd --help=yes: ${stderr_lines[0]}"; false; }
		[[ "$stderr" != *$'\x04'* && "${stderr_lines[1]}" == usage:* ]]
		[ -z "$output" ]
		run -2 --separate-stderr env PATH="$TOP/builtin:$PATH" $cmd --version=1
		[ "${stderr_lines[0]}" = "$p: option '--version' takes no value (given '1')" ]
		run -2 --separate-stderr env PATH="$TOP/builtin:$PATH" $cmd --bogus=1
		[ "${stderr_lines[0]}" = "$p: unknown option '--bogus'" ] ||
			{ echo "$cmd --bogus=1: ${stderr_lines[0]}"; false; }
		[ -n "$opt" ] || continue
		a=${opt#* }
		opt=${opt%% *}
		run -2 --separate-stderr env PATH="$TOP/builtin:$PATH" $cmd $opt "$a" $opt "$b"
		[[ "${stderr_lines[0]}" == "$p: option '"*"' is given twice ('$a', then '$b'): give it once" ]] ||
			{ echo "$cmd $opt $a $opt $b: ${stderr_lines[0]}"; false; }
		[ -z "$output" ]
	done < <(every_command)
	run -2 --separate-stderr flimflam run --json=yes
	[ "${stderr_lines[0]}" = "flimflam: option '--json' takes no value (given 'yes')" ]
	run -2 --separate-stderr ff-flame --folded=1
	[ "${stderr_lines[0]}" = "ff-flame: option '--folded' takes no value (given '1')" ]
	run -2 --separate-stderr flimflam bench -w builtin --workloads iperf3
	[ "${stderr_lines[0]}" = "flimflam bench: option '--workloads' is given twice ('builtin', then 'iperf3'): give it once" ]
	run -2 --separate-stderr flimflam run --c 1
	[ "${stderr_lines[0]}" = "flimflam: option '--c' is ambiguous (it begins more than one option's name)" ]
	run -2 --separate-stderr flimflam run "-$(printf '\004')"
	[ "${stderr_lines[0]}" = "flimflam: unknown option '-\\x04'" ]
	# a flag given twice is no conflict
	run -2 --separate-stderr flimflam run --json --json -r none extra
	[ "${stderr_lines[0]}" = "flimflam: unexpected argument 'extra'" ]
}

@test "flimflam help CMD is CMD's help; help for no such command is the unknown-command error" {
	local c
	for c in run stat record bench compare report check; do
		run -0 --separate-stderr flimflam help $c
		[[ "${lines[0]}" == "usage: flimflam $c "* ]] || { echo "help $c: ${lines[0]}"; false; }
		[ "$output" = "$(flimflam $c -h)" ]
	done
	run -0 flimflam help
	[ "$output" = "$(flimflam -h)" ]
	run -2 --separate-stderr flimflam help foo
	[ "$stderr" = "flimflam: 'foo' is not a flimflam command; see 'flimflam --help'" ]
	run -2 --separate-stderr flimflam help run extra
	[ "${stderr_lines[0]}" = "flimflam: unexpected argument 'extra'; 'help' takes one command" ]
}

@test "every program: -h into a full or closed output is one error line and exit 1" {
	local p n=0
	for p in $(programs) ff-builtin-client ff-builtin-server ff-builtin-rr-client ff-builtin-rr-server; do
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

# usage_lines CMD: the usage lines of `CMD -h` (from "usage:" to the first
# blank line), each trimmed, "usage: " taken off the first.
usage_lines() {
	env PATH="$TOP/builtin:$PATH" $1 -h | awk '/^usage: / { on = 1; sub(/^usage: /, "") } on && /^$/ { exit }
		on { sub(/^ +/, ""); sub(/ +$/, ""); print }'
}

# As git's t0450-txt-doc-vs-help.sh: a page's synopsis is its program's usage.
@test "every man page: its SYNOPSIS is the usage of its command's -h, line for line" {
	local page cmd line n=0 npages=0
	for page in $(cd "$TOP/man" && ls man1/*.1); do
		run -0 man_synopses "$page"
		[ "${#lines[@]}" -ge 1 ] || { echo "$page has no SYNOPSIS"; false; }
		local -A seen=()
		while IFS=$'\t' read -r cmd line; do
			line=$(sed -E 's/^ +//; s/ +$//' <<<"$line")
			usage_lines "$cmd" | grep -qxF -- "$line" ||
				{ echo "$page: '$line' is not a usage line of '$cmd -h'"; false; }
			seen[$cmd]=1
			n=$((n + 1))
		done < <(man_synopses "$page")
		# And the other way: every usage line of -h is in the page.
		for cmd in "${!seen[@]}"; do
			while read -r line; do
				man_synopses "$page" | cut -f2- | sed -E 's/^ +//; s/ +$//' | grep -qxF -- "$line" ||
					{ echo "$page lacks '$cmd -h''s '$line'"; false; }
			done < <(usage_lines "$cmd")
		done
		unset seen
		npages=$((npages + 1))
	done
	[ "$npages" -ge 30 ] && [ "$n" -ge 100 ]
	# Every command of flimflam's -h has its page, and every program of bin/.
	for cmd in $(flimflam -h | awk '/^commands:/ { on = 1; next } on && /^    [a-z]/ { print $1 }'); do
		[ -f "$TOP/man/man1/flimflam-$cmd.1" ] || { echo "no man page for flimflam $cmd"; false; }
	done
	for cmd in "$TOP"/bin/flimflam "$TOP"/bin/ff-*[!.][!od] "$TOP"/builtin/ff-builtin-*; do
		[ -x "$cmd" ] && [ ! -d "$cmd" ] || continue
		[[ "$cmd" != *.* ]] || continue
		[ -f "$TOP/man/man1/${cmd##*/}.1" ] || { echo "no man page for ${cmd##*/}"; false; }
	done
	# check --hosts is flimflam's, yet `check -h` shows it (it once showed only [-h] [--json]).
	run -0 flimflam check -h
	[[ "$output" == *"--hosts"* && "$output" == *"--hops N"* ]]
}

@test "every man page: groff reads it without a warning, and man -l shows it" {
	command -v groff >/dev/null || skip "groff is not installed"
	local page n=0
	cd "$TOP/man"
	for page in man[157]/*.[157]; do
		run -0 --separate-stderr groff -man -Tutf8 -ww -z "$page"
		[ -z "$stderr" ] || { echo "$page: $stderr"; false; }
		n=$((n + 1))
	done
	[ "$n" -ge 30 ]
	command -v man >/dev/null || return 0
	run -0 --separate-stderr env MANWIDTH=80 man -l "$TOP/man/man1/flimflam-run.1"
	[[ "$output" == *"flimflam run [-h] [-w WORKLOAD]"* ]]
}

# The commands whose -h shows a source file's getopt tables, "|" between them.
# A file with tables that is not listed here fails the test below.
declare -gA TABLE_OF=(
	[bin/ff-bench.d/options.c]="flimflam bench" [bin/ff-bench.d/compare.c]="flimflam compare"
	[bin/ff-bench.d/report.c]="flimflam report" [bin/ff-bench.d/main.c]="ff-bench"
	[bin/ff-bench.d/explain.c]="flimflam explain"
	[bin/ff-capture.d/main.c]="ff-capture" [bin/ff-check.c]="flimflam check"
	[bin/ff-flame.d/main.c]="ff-flame" [bin/ff-topology.d/main.c]="ff-topology"
	[bin/ff-history.d/main.c]="flimflam history" [bin/ff-history.d/import.c]="flimflam history add"
	[bin/ff-history.d/export.c]="flimflam history export" [bin/ff-history.d/report.c]="flimflam history report"
	[bin/ff-bisect.d/main.c]="flimflam bisect"
	[bin/ff-workload.d/main.c]="ff-workload serve|ff-workload drive"
	[bin/flimflam.c]="flimflam"
	[bin/ff-run.d/main.c]="flimflam run|flimflam record|flimflam flamegraph|flimflam check --hosts x"
	[builtin/client.c]="ff-builtin-client" [builtin/rr-client.c]="ff-builtin-rr-client"
	[builtin/rr-server.c]="ff-builtin-rr-server" [builtin/server.c]="ff-builtin-server"
)

# long_options FILE: "NAME SHORT" for each entry of FILE's getopt tables
# (SHORT the option's letter, or -), the shared macros' entries included.
long_options() {
	local f="$1" m
	grep -oE "\{ *\"[a-z0-9-]+\", *(no|required|optional)_argument, *NULL, *[^ }]+" "$TOP/$f" |
		sed -E "s/\{ *\"([^\"]+)\".*NULL, *'(.)'.*/\1 \2/; t; s/\{ *\"([^\"]+)\".*/\1 -/"
	for m in $(grep -oE 'FF_(RUN_LONGOPTS|LONGOPT_[A-Z_]+)' "$TOP/$f" | sort -u); do
		awk -v m="$m" '$0 ~ "#define " m "( |$)" { on = 1 } on { print } on && !/\\$/ { on = 0 }' "$TOP/lib/ff.h" |
			grep -oE '\{ *"[a-z0-9-]+"' | grep -oE '[a-z0-9-]+' | sed 's/$/ -/'
	done
}

@test "every command: each option of the getopt tables is in the -h of a command it serves" {
	local f cmd name short help n=0
	# Not the user's: flimflam gives it to its stages (README "ff-workload").
	local -A internal=([pipeline-stage]=1)
	for f in $(cd "$TOP" && grep -lE '_argument, *NULL' bin/*.c bin/*.d/*.c builtin/*.c); do
		[ -n "${TABLE_OF[$f]:-}" ] || { echo "$f has getopt tables: add its commands to TABLE_OF"; false; }
		help=
		IFS='|' read -ra cmds <<<"${TABLE_OF[$f]}"
		for cmd in "${cmds[@]}"; do
			help+=$(env PATH="$TOP/builtin:$PATH" $cmd -h)$'\n'
		done
		while read -r name short; do
			[ "$name" = help ] || [ -n "${internal[$name]:-}" ] && continue
			grep -qE -- "--$name([^a-z0-9-]|\$)" <<<"$help" ||
				{ [ "$short" != - ] && grep -qE -- "(^|[^a-z0-9-])-$short([^a-z0-9-]|\$)" <<<"$help"; } ||
				{ echo "$f: --$name is in no -h of: ${TABLE_OF[$f]}"; false; }
			n=$((n + 1))
		done < <(long_options "$f")
	done
	[ "$n" -ge 80 ]
}

# man_page_of CMD: the man pages (under man/) that document CMD.
man_page_of() {
	local w
	read -ra w <<<"$1"
	case "${w[0]}" in
	flimflam) [ "${#w[@]}" -gt 1 ] && echo "man1/flimflam-${w[1]}.1" || echo man1/flimflam.1 ;;
	*) echo "man1/${w[0]}.1" ;;
	esac
	case "$1" in
	"flimflam stat" | "flimflam record" | "flimflam c2c" | "flimflam mem" | "flimflam flamegraph" | "flimflam skstat")
		echo man1/flimflam-capture.1 ;;
	ff-builtin-*) echo man1/ff-builtin.1 ;;
	esac
}

@test "every command: each option of the getopt tables is in the man page of a command it serves" {
	local f cmd page name short text n=0
	local -A internal=([pipeline-stage]=1)
	for f in $(cd "$TOP" && grep -lE '_argument, *NULL' bin/*.c bin/*.d/*.c builtin/*.c); do
		[ -n "${TABLE_OF[$f]:-}" ] || { echo "$f has getopt tables: add its commands to TABLE_OF"; false; }
		text=
		IFS='|' read -ra cmds <<<"${TABLE_OF[$f]}"
		for cmd in "${cmds[@]}"; do
			for page in $(man_page_of "$cmd"); do
				[ -f "$TOP/man/$page" ] || { echo "$cmd: no man page $page"; false; }
				text+=$(man_text "$page")$'\n'
			done
		done
		while read -r name short; do
			[ "$name" = help ] || [ -n "${internal[$name]:-}" ] && continue
			grep -qE -- "--$name([^a-z0-9-]|\$)" <<<"$text" ||
				{ [ "$short" != - ] && grep -qE -- "(^|[^a-z0-9-])-$short([^a-z0-9-]|\$)" <<<"$text"; } ||
				{ echo "$f: --$name is in no man page of: ${TABLE_OF[$f]}"; false; }
			n=$((n + 1))
		done < <(long_options "$f")
	done
	[ "$n" -ge 80 ]
}
