# Shared by every .bats file: bin/ first on PATH, bats-assert, and helpers.

TOP="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
export PATH="$TOP/bin:$PATH"
export FLIMFLAM_RUNS="$BATS_FILE_TMPDIR/runs"

for lib in /usr/lib/bats /usr/share/bats /usr/local/lib/bats; do
	if [ -d "$lib/bats-support" ]; then
		load "$lib/bats-support/load"
		load "$lib/bats-assert/load"
		break
	fi
done

# skip_unless_program PROG...: skip the test when a program is missing.
skip_unless_program() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null || skip "$p is not on PATH"
	done
}

# nginx_prefix DIR: an install prefix holding a copy of nginx (sbin/) and a
# lib/: a build for --build (t/builds.bats, t/builds-aa.bats).
nginx_prefix() {
	mkdir -p "$1/sbin" "$1/lib"
	cp "$(command -v nginx)" "$1/sbin/nginx"
}

# two_nginx_builds: $A and $B, two such prefixes in the test's directory
# (the setup of t/builds.bats and t/builds-aa.bats); skips without nginx.
two_nginx_builds() {
	skip_unless_program nginx
	A="$BATS_TEST_TMPDIR/a"
	B="$BATS_TEST_TMPDIR/b"
	nginx_prefix "$A"
	nginx_prefix "$B"
}

# golden NAME FILE: compare FILE with t/golden/NAME; FF_UPDATE_GOLDEN=1 rewrites it.
golden() {
	local want="$TOP/t/golden/$1"
	if [ -n "${FF_UPDATE_GOLDEN:-}" ]; then
		cp "$2" "$want"
	fi
	diff -u "$want" "$2"
}

# page_data PAGE: the JSON data a flamegraph page (ff-flame's) embeds.
page_data() {
	sed -n 's/^<script type="application\/json" id="flame-data">\(.*\)<\/script>$/\1/p' "$1"
}

# towers PAGE: each tower of a flamegraph page (its frames at depth 1) and
# its samples, "NAME<TAB>COUNT" a line.
towers() {
	page_data "$1" | jq -r '. as $d | range(0; .nodes | length; 3) |
		select($d.nodes[. + 1] == 1) | "\($d.names[$d.nodes[.]])\t\($d.nodes[. + 2])"'
}

# jsonl_ok FILE: every line is a JSON object whose first key is "event",
# with snake_case keys, and the first event is start.
jsonl_ok() {
	jq -e -s '
		length > 0 and
		(.[0].event == "start") and
		all(.[]; type == "object" and (keys_unsorted[0] == "event") and
		    all(keys[]; test("^[a-z0-9_]+$")))' "$1" >/dev/null
}

# pids_of_run DIR: live processes whose command line mentions the run
# directory DIR or whose working directory is in it (every stage, relay,
# server and client of a run is one or the other). Zombies have neither.
# Two commands for all of /proc, so it is quick: a run may end meanwhile.
# DIR must be an absolute path: an empty one would match every process,
# and `[ -n "$(pids_of_run "$d")" ]` could not fail.
pids_of_run() {
	local d="$1"
	if [[ "$d" != /?* ]]; then
		echo "pids_of_run: '$d' is not an absolute directory" >&2
		return 1
	fi
	d=${d%/}
	{
		# The pattern from a file, so grep's own command line does not match.
		grep -lsFf <(printf '%s\n' "$d") /proc/[0-9]*/cmdline
		find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$d" -o -lname "$d/*" \) -print
	} 2>/dev/null | sed -E 's|^/proc/([0-9]+)/.*|\1|' | sort -un
}

# descendants PID: PID's living descendants, one per line.
descendants() {
	local kids k
	kids=$(cat /proc/"$1"/task/*/children 2>/dev/null)
	for k in $kids; do
		echo "$k"
		descendants "$k"
	done
}

# wait_for_file FILE SECONDS: wait until FILE exists and is non-empty.
wait_for_file() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_for_grep PATTERN FILE SECONDS
wait_for_grep() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# all_gone PID...: true when none of the pids is alive (zombies count as gone).
all_gone() {
	local p s
	for p in "$@"; do
		s=$(awk '{print $3}' /proc/"$p"/stat 2>/dev/null) || continue
		[ "$s" = Z ] || [ -z "$s" ] || return 1
	done
	return 0
}

# event_ok FILE NAME JQ-EXPR [JQ-ARGS...]: FILE has at least one NAME
# event, and every NAME event satisfies JQ-EXPR (jq -e alone judges only the
# last input). JQ-ARGS (--arg, --argjson) give JQ-EXPR its variables.
event_ok() {
	local f="$1" n="$2" x="$3"
	shift 3
	jq -e -s --arg n "$n" "$@" "[.[] | select(.event == \$n)] | length > 0 and all(.[]; $x)" "$f" >/dev/null ||
		{ echo "event_ok $n: $x: failed on:"; jq -c --arg n "$n" 'select(.event == $n)' "$f"; false; }
}

# has_line ERE: some line of $output matches (assert_output --regexp
# matches the whole output, where ^ and $ are its ends). To assert that no
# line matches, `! has_line ERE || false`: bats ignores a plain `! cmd`
# that is not the last command of a test.
# shellcheck disable=SC2154 # $output is bats', set by run
has_line() {
	grep -Eq -- "$1" <<<"$output" || {
		echo "no line matches '$1' in:" >&2
		echo "$output" >&2
		return 1
	}
}

# BUSY_ERE: how a run refuses a window the machine was too busy to give:
# the workload tool measured a window other than the one asked for, or the
# builtin client got nothing back in it (h2load's form: no request at all,
# none failed, none errored: seen at load 19 in a 1 s window), or nothing
# moved for a second or more of it (TCP's zero-window probes back off 0.2,
# 0.4, 0.8, 1.6 s: a relay starved of CPU for a moment can stop a chain for
# 3 s, a whole short window; README "TCP stalls").
BUSY_ERE='(measured [0-9.]+ s, not the [0-9]+ s asked|nothing came back in the [0-9]+ s window|no request succeeded \(0 total, 0 failed, 0 errored, 0 4xx, 0 5xx\)|stopped moving: nothing moved for [0-9.]+ s)'

# run_steady CMD...: bats' `run --separate-stderr CMD...`, which must exit 0.
# A run whose window the tool refused as not the one asked for (BUSY_ERE) is
# the machine being too busy, not the test's point: it is said on the TAP
# stream and run again, up to three runs in all (a CI machine shares its
# CPUs). The tool's refusal stays the tool's: a third refusal fails the test,
# as does any other failure, at once. STEADY_TRIES says how many runs it took.
# shellcheck disable=SC2154,SC2034 # bats' $stderr, set by run; the tests read STEADY_TRIES
run_steady() {
	STEADY_TRIES=1
	run --separate-stderr "$@"
	while [ "$status" -eq 1 ] && [ "$STEADY_TRIES" -lt 3 ] && grep -qE -- "$BUSY_ERE" <<<"$stderr"; do
		echo "# busy machine ($(grep -m1 -oE -- "[^ ]+ $BUSY_ERE" <<<"$stderr")): once more" >&3
		STEADY_TRIES=$((STEADY_TRIES + 1))
		run --separate-stderr "$@"
	done
	if [ "$status" -ne 0 ]; then
		echo "run_steady: $* exited $status; its stderr:"
		echo "$stderr"
		return 1
	fi
}

# wait_status PID: wait for a background job of this shell; its status in $status.
# shellcheck disable=SC2034 # $status is bats', read by the tests as after run
wait_status() {
	status=0
	wait "$1" || status=$?
}

# A PATH without skrouterd, whatever this machine has.
path_without_skrouterd() {
	local d out=
	IFS=: read -ra dirs <<<"$PATH"
	for d in "${dirs[@]}"; do
		[ -x "$d/skrouterd" ] || out="$out${out:+:}$d"
	done
	echo "$out"
}

# start_run FILE ARGS...: flimflam run --json ARGS in the background,
# events to FILE, stderr to FILE.err; sets RUN_PID.
start_run() {
	local f="$1"
	shift
	start_cmd "$f" run "$@"
}

# start_cmd FILE COMMAND ARGS...: flimflam COMMAND --json ARGS, likewise.
start_cmd() {
	local f="$1" c="$2"
	shift 2
	# fd 3 is bats's: a process left holding it would hang the suite
	# instead of failing the test that left it.
	flimflam "$c" --json "$@" >"$f" 2>"$f.err" 3>&- &
	RUN_PID=$!
}

# stage_pid NAME: the pid of a stage of the run RUN_PID ("serve",
# "ff-topology", "drive", "ff-capture").
stage_pid() {
	local p
	for p in $(descendants "$RUN_PID"); do
		if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qE "(^|/)(ff-workload $1|$1) "; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# run_dir_of FILE: the run directory named by the server event in FILE;
# fails when there is none (so `d=$(run_dir_of F)` fails the test).
run_dir_of() {
	local d
	d=$(jq -r 'select(.event == "server") | .run_dir' "$1" | head -n 1)
	if [ -z "$d" ] || [ "$d" = null ]; then
		echo "run_dir_of: no run directory in '$1'" >&2
		return 1
	fi
	echo "$d"
}

# interrupt_run FILE ARGS...: start_run FILE ARGS, and SIGINT once the
# topology is up and the run's processes are there. Fails unless the run
# ended with status 130 and nothing of it is left running; its run
# directory in $d.
interrupt_run() {
	local f="$1"
	shift
	start_run "$f" "$@"
	wait_for_grep '"event":"topology"' "$f" 30
	d=$(run_dir_of "$f")
	[ -n "$(pids_of_run "$d")" ]
	kill -INT "$RUN_PID"
	wait_status "$RUN_PID"
	[ "$status" -eq 130 ] || { echo "interrupt_run: exit $status, not 130" >&2; return 1; }
	[ -z "$(pids_of_run "$d")" ] || { echo "interrupt_run: processes of the run are left" >&2; return 1; }
}

# Without CAP_SYS_RESOURCE (which raises the hard limit on open files),
# when we are root and setpriv is there: a prefix of the command.
unprivileged=()
# shellcheck disable=SC2034 # the tests read it
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	unprivileged=(setpriv --bounding-set=-sys_resource --)
fi

# nothing_started: no run directory was even made.
nothing_started() {
	[ ! -e "$FLIMFLAM_RUNS" ] || [ -z "$(ls -A "$FLIMFLAM_RUNS")" ]
}

# path_without PROG...: a directory of symlinks to every program on PATH
# except PROG...; echoes its name.
path_without() {
	local dir="$BATS_TEST_TMPDIR/path" d p
	mkdir -p "$dir"
	local IFS=:
	for d in $PATH; do
		[ -d "$d" ] && ln -s "$d"/* "$dir"/ 2>/dev/null
	done
	for p in "$@"; do
		rm -f "$dir/$p"
	done
	echo "$dir"
}

# full_out CMD...: run CMD with stdout on a /dev/full of a private mount
# namespace (its own tmpfs; the machine's /dev is not touched). Its
# status in $status, its stderr in $stderr.
full_out() {
	local dir="$BATS_TEST_TMPDIR/fulldev"
	mkdir -p "$dir"
	status=0
	# shellcheck disable=SC2016 # the inner sh expands $0 and $@, not this one
	stderr=$(unshare -m sh -c 'mount -t tmpfs none "$0" && mknod "$0/full" c 1 7 && exec "$@" >"$0/full"' \
		"$dir" "$@" 2>&1 3>&-) || status=$?
}

# free_port: a TCP port on 127.0.0.1 that was free a moment ago.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_exit PID SECONDS: wait up to SECONDS for a background child, then
# for it; its status in $status.
wait_exit() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	status=0
	wait "$1" || status=$?
}

# listening PORT CMD...: CMD in the background, its output in the test's
# server.out and server.err, once something listens on 127.0.0.1:PORT; its
# pid in $server and added to $pids (end_pids ends them). Fails, saying so,
# when CMD exits first or nothing listens within 10 s.
listening() {
	local port="$1" i
	shift
	"$@" >"$BATS_TEST_TMPDIR/server.out" 2>"$BATS_TEST_TMPDIR/server.err" &
	server=$!
	pids+=("$server")
	for ((i = 0; i < 200; i++)); do
		[ -n "$(ss -ltnH "sport = :$port")" ] && return 0
		kill -0 "$server" 2>/dev/null || break
		sleep 0.05
	done
	echo "the server does not listen on port $port" >&2
	return 1
}

# unit_ok NAME CHECKS: t/unit/NAME, which make builds, passes: it exits 0
# saying "0 failures", no check says "not ok", and CHECKS checks ("ok: ")
# ran.
unit_ok() {
	[ -x "$TOP/t/unit/$1" ] || fail "t/unit/$1 is not built (make builds it)"
	run -0 "$TOP/t/unit/$1"
	assert_line "0 failures"
	refute_line --partial "not ok"
	[ "$(grep -c '^ok: ' <<<"$output")" -eq "$2" ]
}

# stop_relay_for SECONDS FILE [AFTER]: once the window of the run whose
# events are in FILE is open and AFTER seconds into it (default 0.5), R1
# and its workers stopped for SECONDS (their pids in $stopped meanwhile).
stop_relay_for() {
	local r1 p
	wait_for_grep '"window"' "$2" 30
	r1=$(jq -r 'select(.event == "topology") | .relays[] | select(.role == "r1") | .pid' "$2")
	[ -n "$r1" ]
	sleep "${3:-0.5}"
	stopped="$r1 $(descendants "$r1")"
	for p in $stopped; do kill -STOP "$p"; done
	sleep "$1"
	for p in $stopped; do kill -CONT "$p"; done
	stopped=
}

# wake_stopped: for teardown: a relay a test left stopped (its pids in
# $stopped) would hang its run's end, so each is woken.
wake_stopped() {
	local p
	for p in ${stopped:-}; do
		kill -CONT "$p" 2>/dev/null || true
	done
}

# builtin_setup: the setup of the tests of a builtin pair, $CLIENT and
# $SERVER (t/builtin.bats, t/builtin-rr.bats): skipped unless both are
# built; $pids for what they start (their teardown: end_pids).
# shellcheck disable=SC2153 # $CLIENT and $SERVER are the test file's
builtin_setup() {
	if [ ! -x "$CLIENT" ] || [ ! -x "$SERVER" ]; then
		skip "the builtin programs are not built (run make)"
	fi
	pids=()
}

# server_killed_midway: $SERVER on a free port, $CLIENT to it (no warmup,
# a 10 s window), and the server killed (SIGKILL) once a sample came. Fails
# unless the client then ends with status 1 and one line on stderr saying
# which connection failed during the window, and gives no result.
# shellcheck disable=SC2154 # $lines and $output are bats' run's
server_killed_midway() {
	local port out="$BATS_TEST_TMPDIR/client.out" err="$BATS_TEST_TMPDIR/client.err"
	port=$(free_port)
	listening "$port" "$SERVER" --port "$port"
	"$CLIENT" --port "$port" --warmup 0 --duration 10 >"$out" 2>"$err" &
	pids+=($!)
	wait_for_grep '"sample"' "$out" 5
	kill -9 "$server"
	wait "$server" 2>/dev/null || true
	wait_exit "${pids[-1]}" 5
	[ "$status" -eq 1 ]
	run -0 cat "$err"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" =~ ^"${CLIENT##*/}":\ connection\ [12]\ to\ 127\.0\.0\.1:$port\ failed\ during\ the\ window:\ .+$ ]]
	if grep -q '"result"' "$out"; then
		echo "server_killed_midway: a result after all" >&2
		return 1
	fi
}

# all_connected SERVER CLIENT JOBS OUT: SERVER listening on a free port,
# then CLIENT --jobs JOBS to it, no warmup and a 2 s window, its events in
# OUT. Fails unless all JOBS connections were established as the window
# opened and the client ended with status 0.
all_connected() {
	local serve=$1 drive=$2 jobs=$3 out=$4 port n
	port=$(free_port)
	listening "$port" "$serve" --port "$port"
	"$drive" --port "$port" --jobs "$jobs" --warmup 0 --duration 2 >"$out" &
	pids+=($!)
	wait_for_grep '"window"' "$out" 10
	n=$(ss -tnH state established "( dport = :$port )" | wc -l)
	wait_exit "${pids[-1]}" 15
	[ "$status" -eq 0 ] || { echo "all_connected: the client exited $status" >&2; return 1; }
	[ "$n" -eq "$jobs" ] || { echo "all_connected: $n of $jobs connections established" >&2; return 1; }
}

# end_pids: end every process in $pids (a stopped one is woken first) and
# wait for it; for teardown.
end_pids() {
	local p
	for p in "${pids[@]}"; do
		kill -CONT "$p" 2>/dev/null || true
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}

# A set of certificates that does not verify: ca.crt is one CA, the relays'
# certificates are signed by another (FLIMFLAM_TLS_CERTS takes it).
bad_certs() {
	local d="$BATS_TEST_TMPDIR/bad" ca r
	mkdir -p "$d"
	for ca in a b; do
		openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc \
			-keyout "$d/$ca.key" -out "$d/$ca.crt" -days 2 -subj "/CN=other-$ca" \
			-config /dev/null -addext basicConstraints=critical,CA:TRUE \
			-addext keyUsage=critical,keyCertSign 2>/dev/null
	done
	cp "$d/a.crt" "$d/ca.crt"
	for r in r1 r2; do
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc \
			-keyout "$d/$r.key" -out "$d/$r.csr" -subj "/CN=flimflam-$r" -config /dev/null \
			-addext "subjectAltName=DNS:flimflam-$r,IP:127.0.0.1" \
			-addext extendedKeyUsage=serverAuth,clientAuth 2>/dev/null
		openssl x509 -req -in "$d/$r.csr" -CA "$d/b.crt" -CAkey "$d/b.key" -set_serial 7 \
			-days 2 -copy_extensions copyall -out "$d/$r.crt" 2>/dev/null
	done
	echo "$d"
}

# man_text PAGE: the man page man/PAGE (man1/flimflam-run.1) as plain text
# lines of its source: font and break escapes dropped, \- and \e as - and
# \, so that a test can grep what the page says.
man_text() {
	sed -E 's/\\f[BIRP]//g; s/\\&//g; s/\\://g; s/\\\(lq|\\\(rq/"/g; s/\\-/-/g; s/\\e/\\/g' "$TOP/man/$1"
}

# man_synopses PAGE: each line of the SYNOPSIS of man/PAGE as
# "COMMAND<tab>LINE": COMMAND is the words before the first option of the
# first line of its block (.nf to .fi), which every line of the block takes.
man_synopses() {
	man_text "$1" | awk '
		/^\.SH / { on = ($0 == ".SH SYNOPSIS"); next }
		!on { next }
		/^\.nf/ { first = 1; next }
		/^\.fi/ { cmd = ""; next }
		/^\./ { next }
		first {
			n = split($0, w, " "); cmd = ""
			for (i = 1; i <= n && w[i] ~ /^[a-z][a-z0-9-]*$/; i++) cmd = cmd (cmd ? " " : "") w[i]
			first = 0
		}
		cmd != "" { print cmd "\t" $0 }'
}
