# ff-capture and the capture commands (stat, record, c2c, mem, skstat,
# flamegraph) end to end through the real perf, nginx and, when it is on
# PATH, skrouterd; plus the checks that stop a capture before anything starts.
bats_require_minimum_version 1.5.0
load helper

setup() {
	# Each test runs in a directory of its own (record writes to the cwd),
	# with run directories of its own.
	cd "$BATS_TEST_TMPDIR" || return 1
	export FLIMFLAM_RUNS="$BATS_TEST_TMPDIR/runs"
}

skip_unless_perf() {
	skip_unless_program perf
	ff-capture --check stat 2>/dev/null || skip "perf cannot attach here: $(ff-capture --check stat 2>&1)"
}

# nothing_left FILE: no process holds the run directory of the events in FILE.
nothing_left() {
	local d
	d=$(run_dir_of "$1")
	[ -z "$(pids_of_run "$d")" ]
}

# ev FILE EVENT: the events of that name, one per line.
ev() {
	jq -c --arg e "$2" 'select(.event == $e)' "$1"
}

# A process that uses some CPU until killed, in the background; sets BUSY.
start_busy() {
	sh -c 'while :; do :; done' &
	BUSY=$!
}

teardown() {
	[ -z "${BUSY:-}" ] || kill "$BUSY" 2>/dev/null || true
}

# --- usage and checks ------------------------------------------------------

@test "capture commands: a bad --call-graph is a usage error, and nothing starts" {
	run -2 --separate-stderr flimflam record -r nginx --call-graph bogus
	[ "${stderr_lines[0]}" = "flimflam: unknown call graph method 'bogus' (expected fp, dwarf, lbr)" ]
	[[ "${stderr_lines[1]}" == "usage: flimflam record "* ]]
	[ -z "$output" ]
	run -2 --separate-stderr flimflam flamegraph -r nginx --call-graph
	[ "${stderr_lines[0]}" = "flimflam: option '--call-graph' needs a value" ]
	run -2 --separate-stderr flimflam mem -r nginx --freq 0
	[ "${stderr_lines[0]}" = "flimflam: --freq: 0 is out of range (1 to 1000000)" ]
	nothing_started
	[ ! -e perf.data ]
}

@test "capture commands: --call-graph and --freq only where perf samples" {
	run -2 --separate-stderr flimflam stat -r nginx --freq 99
	[ "${stderr_lines[0]}" = "flimflam: --freq is for record, c2c, mem and flamegraph, not 'stat'" ]
	run -2 --separate-stderr flimflam run -r nginx --call-graph fp
	[ "${stderr_lines[0]}" = "flimflam: --call-graph is for record, c2c, mem and flamegraph, not 'run'" ]
	run -0 flimflam record --help
	[[ "$output" == *"[--call-graph METHOD] [--freq HZ]"* ]]
	[[ "$output" == *"fp, dwarf or lbr (default 'fp')"* ]]
	[[ "$output" == *"(default 997)"* ]]
	run -0 flimflam stat --help
	[[ "$output" != *"--call-graph"* ]]
}

@test "capture commands: relay none is a usage error for each" {
	local c
	for c in stat skstat record c2c mem flamegraph; do
		run -2 --separate-stderr flimflam "$c" -r none
		[ "${stderr_lines[0]}" = "flimflam: '$c' captures in the relays, and relay 'none' has none" ] ||
			{ echo "$c: ${stderr_lines[0]}"; false; }
	done
	nothing_started
}

@test "c2c and mem without memory events: fail before anything starts, saying why" {
	skip_unless_program perf nginx
	if ff-capture --check c2c 2>/dev/null; then
		skip "this machine samples memory events (c2c would run)"
	fi
	local c t0
	for c in c2c mem; do
		t0=$SECONDS
		run -1 --separate-stderr flimflam "$c" -r nginx --warmup 1 --duration 2
		[ $((SECONDS - t0)) -le 5 ]
		[[ "$stderr" == "flimflam: '$c' samples memory accesses, which needs a hardware PMU with load sampling"* ]] ||
			{ echo "$c: $stderr"; false; }
		[[ "$stderr" == *"it works on bare metal or in a VM with PMU passthrough; here, 'record' and 'stat' work" ]]
		[ -z "$output" ]
	done
	# No run directory, so no relay, server or perf was started.
	nothing_started
	[ -z "$(ls perf.data* 2>/dev/null)" ]
	# ff-capture alone says the same before it reads anything.
	run -1 --separate-stderr ff-capture mem </dev/null
	[[ "$stderr" == "ff-capture: 'mem' samples memory accesses"* ]]
	[ -z "$output" ]
}

@test "record --call-graph lbr without last branch records: fails before anything starts" {
	skip_unless_program perf nginx
	[ ! -e /sys/bus/event_source/devices/cpu/caps/branches ] ||
		skip "this CPU has last branch records"
	run -1 --separate-stderr flimflam record -r nginx --call-graph lbr
	[[ "$stderr" == "flimflam: --call-graph lbr needs the CPU's last branch records"*"use fp (the default, with a router built with frame pointers) or dwarf" ]]
	nothing_started
}

@test "skstat without skrouterd: a clear error, nothing starts" {
	PATH=$(path_without_skrouterd) run -1 --separate-stderr flimflam skstat
	[ "$stderr" = "flimflam: 'skstat' reads the statistics of two skrouterd routers, and skrouterd is not on PATH: put the router under test on PATH (skstat beside it, Proton's Python binding on PYTHONPATH)" ]
	run -2 --separate-stderr flimflam skstat -r nginx
	[ "${stderr_lines[0]}" = "flimflam: 'skstat' reads the routers' statistics, so it needs relay 'skrouterd', not 'nginx'" ]
	nothing_started
}

@test "ff-capture --check skstat: missing skstat, and a skstat that cannot import proton, name PYTHONPATH" {
	local fake="$BATS_TEST_TMPDIR/fake"
	mkdir -p "$fake"
	PATH="$fake:$(path_without_skrouterd)"
	hash -r
	if ! command -v skstat >/dev/null; then
		run -1 --separate-stderr ff-capture --check skstat
		[[ "$stderr" == "ff-capture: skstat is not on PATH"*"PYTHONPATH" ]]
	fi
	cat >"$fake/skstat" <<-'EOF'
	#!/bin/sh
	echo 'Traceback (most recent call last):' >&2
	echo '  File "skstat", line 51, in <module>' >&2
	echo "ModuleNotFoundError: No module named 'proton'" >&2
	exit 1
	EOF
	chmod +x "$fake/skstat"
	PYTHONPATH=/nowhere run -1 --separate-stderr ff-capture --check skstat
	[ "$stderr" = "ff-capture: '$fake/skstat' cannot import the Python module 'proton' (ModuleNotFoundError: No module named 'proton'); set PYTHONPATH to the directory holding Proton's Python binding (PYTHONPATH is '/nowhere')" ]
	printf '#!/bin/sh\necho "usage: skstat [-h]"\n' >"$fake/skstat"
	run -0 --separate-stderr ff-capture --check skstat
	[ -z "$stderr" ]
}

@test "ff-capture --check --json: one check event, its message the line --check alone prints" {
	local fake="$BATS_TEST_TMPDIR/fake" m
	mkdir -p "$fake"
	PATH="$fake:$(path_without_skrouterd)"
	hash -r
	# A failing check: skstat that cannot import proton (on every machine).
	printf '#!/bin/sh\necho "ModuleNotFoundError: No module named '"'proton'"'" >&2\nexit 1\n' >"$fake/skstat"
	chmod +x "$fake/skstat"
	PYTHONPATH=/nowhere run -1 --separate-stderr ff-capture --check skstat
	m=${stderr#ff-capture: }
	PYTHONPATH=/nowhere run -1 --separate-stderr ff-capture --check --json skstat
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	jq -e --arg m "$m" --arg s "$fake/skstat" '.event == "check" and .mode == "skstat" and .ok == false and
		.reason == "'"'"'\($s)'"'"' cannot import the Python module '"'"'proton'"'"' (ModuleNotFoundError: No module named '"'"'proton'"'"')" and
		.fix == "set PYTHONPATH to the directory holding Proton'"'"'s Python binding (PYTHONPATH is '"'"'/nowhere'"'"')" and
		.message == $m and .message == "\(.reason); \(.fix)" and .notes == []' <<<"$output"
	# A passing one.
	printf '#!/bin/sh\necho "usage: skstat [-h]"\n' >"$fake/skstat"
	run -0 --separate-stderr ff-capture --check --json skstat
	[ -z "$stderr" ]
	jq -e '.event == "check" and .ok == true and .reason == null and .fix == null and
		.message == null and .notes == []' <<<"$output"
	# --json answers --check only.
	run -2 --separate-stderr ff-capture --json stat
	[ "${stderr_lines[0]}" = "ff-capture: --json is the answer of --check: give it with --check" ]
	[ -z "$output" ]
}

@test "ff-capture --check --json: a check with no fix, and a perf check, likewise" {
	skip_unless_perf
	local m max
	# --freq above the kernel's limit: a reason and a fix.
	max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	[ "$max" -lt 1000000 ] || skip "perf_event_max_sample_rate ($max) is above what --freq takes"
	run -1 --separate-stderr ff-capture --check --freq $((max + 1)) record
	m=${stderr#ff-capture: }
	run -1 --separate-stderr ff-capture --check --json --freq $((max + 1)) record
	[ -z "$stderr" ]
	jq -e --arg m "$m" '.ok == false and .mode == "record" and .message == $m and
		(.reason | startswith("--freq ")) and (.fix | startswith("use a lower rate"))' <<<"$output"
	# A perf.data that is a directory: a reason, no fix.
	mkdir perf.data
	run -1 --separate-stderr ff-capture --check record
	m=${stderr#ff-capture: }
	run -1 --separate-stderr ff-capture --check --json record
	[ -z "$stderr" ]
	jq -e --arg m "$m" '.ok == false and .message == $m and .reason == $m and .fix == null' <<<"$output"
	rmdir perf.data
	run -0 --separate-stderr ff-capture --check --json stat
	[ -z "$stderr" ]
	jq -e '.ok == true and .mode == "stat" and (.notes | type) == "array"' <<<"$output"
}

@test "ff-capture: skstat alone (--pid) is a usage error; --pid needs --duration" {
	run -2 --separate-stderr ff-capture --pid 1 --duration 1 skstat
	[ "${stderr_lines[0]}" = "ff-capture: skstat takes the routers' management ports from the stream, not --pid" ]
	run -2 --separate-stderr ff-capture --pid 1 stat
	[ "${stderr_lines[0]}" = "ff-capture: --pid needs --duration" ]
	run -2 --separate-stderr ff-capture --call-graph xyz record
	[ "${stderr_lines[0]}" = "ff-capture: unknown call graph method 'xyz' (expected fp, dwarf, lbr)" ]
}

# --- ff-capture alone --------------------------------------------------------

@test "ff-capture: stopped by a signal it says so, whatever the environment; --pipeline-stage leaves it to flimflam" {
	local cap
	start_busy
	# FLIMFLAM_PIPELINE once silenced it, unseen; it means nothing now.
	FLIMFLAM_PIPELINE=1 ff-capture --pid "$BUSY" --duration 60 none >ev 2>err &
	cap=$!
	wait_for_grep '"event":"start"' ev 10
	kill -INT "$cap"
	wait_status "$cap"
	[ "$status" -eq 130 ]
	[ "$(cat err)" = "ff-capture: stopped by SIGINT" ]
	# Files of its own: the first run's would show its start at once.
	ff-capture --pipeline-stage --pid "$BUSY" --duration 60 none >ev2 2>err2 &
	cap=$!
	wait_for_grep '"event":"start"' ev2 10
	kill -TERM "$cap"
	wait_status "$cap"
	[ "$status" -eq 143 ]
	[ -e err2 ] && [ ! -s err2 ]
}

@test "ff-capture stat --pid: counters of a busy process, table kept" {
	skip_unless_perf
	start_busy
	run -0 --separate-stderr ff-capture --pid "$BUSY" --duration 1 stat
	echo "$output" >ev
	jsonl_ok ev
	ev ev stat >stat
	[ "$(wc -l <stat)" = 1 ]
	# It spun for the whole window, less what others on this machine took
	# from it: as much CPU as the resources event saw it use in the same
	# window (a fixed floor failed on a loaded machine), and no more than
	# the window.
	jq -e -s --slurpfile ev ev '.[0] as $s | ($ev | map(select(.event == "resources"))[0].relays[0].cpu_s) as $cpu |
		$s.task_clock_ms > 0 and $s.task_clock_ms < 1100 and
		(($s.task_clock_ms / 1000) - $cpu | fabs) <= 0.2 * $cpu + 0.02' stat
	jq -e '.context_switches >= 0 and (.cycles == null or .cycles > 0)' stat
	jq -e '.bytes == null and .cpu_ms_per_gb == null' stat
	jq -e '.table | test("Performance counter stats for process id")' stat
	[ -s "$(jq -r .file stat)" ]
	[ "$(ev ev capture | jq -r '.tool')" = "perf stat" ]
	[ "$(ev ev capture | jq -c '.pids')" = "[$BUSY]" ]
}

@test "ff-capture record --pid: perf.data in the cwd, never on stdout; the old one kept" {
	skip_unless_perf
	start_busy
	echo "an old recording" >perf.data
	ff-capture --pid "$BUSY" --duration 1 record | cat >ev
	jsonl_ok ev
	run ! grep -q PERFILE ev
	[ "$(cat perf.data.old)" = "an old recording" ]
	[ -s perf.data ]
	[ "$(ev ev capture | jq -r '.files[0]')" = "$PWD/perf.data" ]
	perf report -i perf.data --stdio --sort pid -q 2>/dev/null | grep -q ":$BUSY:\|$BUSY:sh"
	# No temporary file is left behind.
	[ -z "$(ls perf.data.tmp.* 2>/dev/null)" ]
}

@test "ff-capture record --pid: a perf.data symlink is followed, a perf.data FIFO gets the recording" {
	skip_unless_perf
	start_busy
	mkdir keep
	echo "an old recording" >keep/rec.data
	chmod 640 keep/rec.data
	ln -s keep/rec.data perf.data
	ff-capture --pid "$BUSY" --duration 1 record >ev
	# The link stays; what it names is the new recording, the old one beside it.
	[ -L perf.data ]
	[ "$(head -c 8 keep/rec.data)" = PERFILE2 ]
	[ "$(cat keep/rec.data.old)" = "an old recording" ]
	[ "$(stat -c %a keep/rec.data)" = 640 ]
	[ "$(ls -A keep | tr '\n' ' ')" = "rec.data rec.data.old " ]
	# A FIFO: its reader gets the whole recording; the FIFO stays a FIFO.
	rm perf.data
	mkfifo perf.data
	timeout 120 cat perf.data >got &
	ff-capture --pid "$BUSY" --duration 1 record >ev
	wait $!
	[ -p perf.data ]
	[ "$(head -c 8 got)" = PERFILE2 ]
	perf report -i got --stdio -q >/dev/null 2>&1
	[ -z "$(ls perf.data.tmp.* 2>/dev/null)" ]
}

# --- the pipeline over nginx -------------------------------------------------

@test "flimflam stat over nginx: counters per relay, task-clock agrees with the relay CPU" {
	skip_unless_program nginx
	skip_unless_perf
	run_steady flimflam stat --json -r nginx --warmup 1 --duration 2
	echo "$output" >ev
	jsonl_ok ev
	[ "$(ev ev stat | jq -r .role | sort | tr '\n' ' ')" = "r1 r2 " ]
	event_ok ev stat 'has("task_clock_ms") and has("context_switches") and has("cpu_migrations")
		and has("page_faults") and has("cycles") and has("instructions") and has("branches")
		and has("branch_misses") and has("cache_references") and has("cache_misses")'
	event_ok ev stat '.task_clock_ms > 0 and .context_switches > 0'
	# Per GB relayed, from the result's bytes; no operations in builtin.
	local bytes
	bytes=$(ev ev result | jq .bytes)
	event_ok ev stat '.bytes == $b and
		(.cpu_ms_per_gb - .task_clock_ms / ($b / 1e9) | fabs) < 1e-6 and
		.cpu_ms_per_kop == null and
		((.cycles == null) == (.cycles_per_byte == null))' --argjson b "$bytes"
	# Within 20% of the CPU time the resources measurement saw, per relay.
	jq -s -e '
		(map(select(.event == "resources"))[0].relays | map({(.role): .cpu_s}) | add) as $cpu |
		map(select(.event == "stat")) | length == 2 and
		all(.[]; ((.task_clock_ms / 1000) - $cpu[.role] | fabs) <= 0.2 * $cpu[.role])' ev
	# The relays' pids: each stat covers its relay's whole process tree.
	event_ok ev stat '.pids | length >= 2'
	[ "$(ev ev capture | jq -r '.tool, (.files | length)' | tr '\n' ' ')" = "perf stat 2 " ]
	[ "$(ev ev end | tail -n 1 | jq -r .program)" = ff-capture ]
	# stat comes once the result is known, before the end.
	jq -s -e '(map(.event) | index("result")) < (map(.event) | index("stat"))' ev
	nothing_left ev
}

@test "flimflam stat over nginx: the summary prints perf's own tables" {
	skip_unless_program nginx
	skip_unless_perf
	run_steady flimflam stat -r nginx --warmup 1 --duration 2
	[[ "$output" == *$'perf stat: R1\n\n Performance counter stats for process id \''* ]]
	[[ "$output" == *$'perf stat: R2\n\n Performance counter stats for process id \''* ]]
	[[ "$output" == *" msec task-clock "* ]]
	[[ "$output" == *"seconds time elapsed"* ]]
	# bench's unit and words: CPU-seconds per GB
	[ "$(grep -cE '^  CPU s/GB: +[0-9.]+$' <<<"$output")" = 2 ]
}

@test "flimflam record over nginx, stdout a pipe: perf.data here, samples from both relays" {
	skip_unless_program nginx
	skip_unless_perf
	flimflam record --json -r nginx --warmup 1 --duration 2 2>err | cat >ev
	# shown when it fails: the run's own word on why
	cat err
	jq -c 'select(.event == "error" or .event == "end")' ev || true
	jsonl_ok ev
	run ! grep -q PERFILE ev
	[ -s perf.data ]
	[ ! -e perf.data.old ]
	local cap r pids
	cap=$(ev ev capture)
	[ "$(jq -r .tool <<<"$cap")" = "perf record" ]
	[ "$(jq -r '.files[0]' <<<"$cap")" = "$PWD/perf.data" ]
	[ "$(jq -r .call_graph <<<"$cap")" = fp ]
	[ "$(jq -r .freq <<<"$cap")" = 997 ]
	perf report -i perf.data --stdio --no-children --sort pid -q 2>/dev/null >report
	for r in r1 r2; do
		pids=$(jq -r --arg r "$r" '.relays[] | select(.role == $r) | .pids[]' <<<"$cap")
		[ -n "$pids" ]
		# At least one of the relay's processes has samples.
		printf '%s\n' $pids | sed 's/.*/ &:nginx/' | grep -F -f - report ||
			{ echo "no samples from $r ($pids)"; cat report; false; }
	done
	# The topology's relays are the ones recorded.
	[ "$(ev ev topology | jq -c '[.relays[].pid]')" = "$(jq -c '[.relays[].pid]' <<<"$cap")" ]
	nothing_left ev
	[ -z "$(ls perf.data.tmp.* 2>/dev/null)" ]
	# Again, without --json: the summary names the next step, and the old
	# recording is kept as perf does.
	cp perf.data first
	run_steady flimflam record -r nginx --warmup 1 --duration 2
	[ "${lines[-1]}" = "Next step: perf report --no-children" ]
	[[ "$output" == *"Data:        $PWD/perf.data (perf record: "* ]]
	cmp first perf.data.old
	run ! cmp -s first perf.data
}

# sampled_over_nginx COMMAND [OPTION...] -- REPORT...: COMMAND (record, c2c
# or mem) over nginx leaves a perf.data here that REPORT (perf's own report
# for it, given -i perf.data) reads, with samples from R1's and R2's pids;
# the capture event names the tool and the options; nothing is left.
sampled_over_nginx() {
	local cmd=$1 opts=() cap
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	flimflam "$cmd" --json -r nginx --warmup 1 --duration 2 "${opts[@]}" >ev 2>err ||
		{ cat err; false; }
	jsonl_ok ev
	[ -s perf.data ]
	cap=$(ev ev capture)
	[ "$(jq -r .mode <<<"$cap")" = "$cmd" ]
	[ "$(jq -r '.files[0]' <<<"$cap")" = "$PWD/perf.data" ]
	"$@" -i perf.data >report 2>report.err || { cat report.err; false; }
	[ -s report ]
	# Samples of the relays' pids, and of no other.
	perf script -i perf.data -F pid 2>/dev/null | sort -u | tr -d ' ' >sampled
	[ -s sampled ]
	jq -r '.pids[]' <<<"$cap" | sort -u >attached
	[ -z "$(comm -23 sampled attached)" ] || { echo "pids not of the relays: $(comm -23 sampled attached)"; false; }
	nothing_left ev
	[ -z "$(ls perf.data.tmp.* 2>/dev/null)" ]
}

# The same checks on a mode every machine can run, so that they are known
# to hold where the tests below skip.
@test "sampled_over_nginx holds for record (what the c2c, mem and lbr tests check)" {
	skip_unless_program nginx
	skip_unless_perf
	sampled_over_nginx record -- perf report --stdio --no-children --sort pid
	[ "$(ev ev capture | jq -r .tool)" = "perf record" ]
}

@test "flimflam c2c and mem over nginx, where memory accesses can be sampled" {
	skip_unless_program nginx
	skip_unless_perf
	ff-capture --check c2c 2>/dev/null ||
		skip "this machine cannot sample memory accesses (no PMU with load sampling): \"c2c and mem without memory events\" checks that they refuse to start"
	sampled_over_nginx c2c -- perf c2c report --stdio
	[ "$(ev ev capture | jq -r .tool)" = "perf c2c" ]
	rm -f perf.data perf.data.old
	sampled_over_nginx mem -- perf mem report --stdio
	[ "$(ev ev capture | jq -r .tool)" = "perf mem" ]
}

@test "flimflam record --call-graph lbr over nginx, where the CPU has last branch records" {
	skip_unless_program nginx
	skip_unless_perf
	ff-capture --check --call-graph lbr record 2>/dev/null ||
		skip "this CPU has no last branch records: \"record --call-graph lbr without last branch records\" checks that it refuses to start"
	sampled_over_nginx record --call-graph lbr -- perf report --stdio --no-children
	[ "$(ev ev capture | jq -r .call_graph)" = lbr ]
}

@test "flimflam record: Ctrl-C mid-window stops everything, leaves no partial data" {
	skip_unless_program nginx
	skip_unless_perf
	flimflam record --json -r nginx --warmup 1 --duration 30 >ev 2>err &
	local pid=$! i
	for ((i = 0; i < 200; i++)); do
		grep -q '"event":"window"' ev 2>/dev/null && break
		sleep 0.05
	done
	grep -q '"event":"window"' ev
	sleep 0.5
	kill -INT "$pid"
	local st=0
	wait "$pid" || st=$?
	[ "$st" = 130 ]
	[ ! -e perf.data ]
	[ -z "$(ls perf.data.tmp.* 2>/dev/null)" ]
	nothing_left ev
}

@test "flimflam flamegraph over nginx: flamegraph.html here, both relays, the old one kept" {
	skip_unless_program nginx
	skip_unless_perf
	echo "<html>old</html>" >flamegraph.html
	run_steady flimflam flamegraph -r nginx --warmup 1 --duration 2
	[ "${lines[-1]}" = "Open it in a browser: file://$PWD/flamegraph.html" ]
	[ "$(cat old.flamegraph.html)" = "<html>old</html>" ]
	[ -s flamegraph.html ]
	[ -s perf.data ]
	# The page's data names both relays, their program and workload.
	sed -n 's/^<script type="application\/json" id="flame-data">\(.*\)<\/script>$/\1/p' flamegraph.html >data
	jq -e '.meta.relay == "nginx" and .meta.workload == "builtin" and
		([.meta.relays[].role] == ["r1", "r2"]) and
		all(.meta.relays[]; .program == "nginx" and (.pids | length) >= 2)' data
	grep -q nginx flamegraph.html
	# ff-flame read them from the run's events, which the run directory keeps.
	jq -e '.meta.title == "flimflam: builtin over nginx (tcp)" and
		(.names | map(select(test("^R[12] nginx$"))) | length) == 2' data
	rundir=$(printf '%s\n' "${lines[@]}" | sed -n 's/^Run directory: //p')
	[ -n "$rundir" ]
	jq -se '(map(.event) | index("topology") and index("capture")) and
		(map(select(.event == "capture"))[0].relays | map(.role)) == ["r1", "r2"]' "$rundir/events.jsonl"
	[ ! -e "$rundir/flamegraph-meta.json" ]
}

# --- skstat over skrouterd ---------------------------------------------------

@test "flimflam skstat: both routers' general and memory statistics" {
	skip_unless_program skrouterd skstat
	ff-capture --check skstat 2>/dev/null || skip "skstat does not run here: $(ff-capture --check skstat 2>&1)"
	run_steady flimflam skstat --json --warmup 1 --duration 2
	echo "$output" >ev
	jsonl_ok ev
	[ "$(ev ev skstat | jq -r .role | tr '\n' ' ')" = "r1 r2 " ]
	event_ok ev skstat '(.general | test("Router Statistics")) and (.memory | test("Memory Pools"))
		and .management_port > 0 and (.files | length) == 2'
	local f
	for f in $(ev ev skstat | jq -r '.files[]'); do
		[ -s "$f" ]
	done
	ev ev skstat | jq -s -e 'map(select(.role == "r1"))[0].general | test("flimflam-r1")'
	ev ev skstat | jq -s -e 'map(select(.role == "r2"))[0].general | test("flimflam-r2")'
	nothing_left ev
	run_steady flimflam skstat --warmup 1 --duration 2
	[[ "$output" == *$'\nRouter 1\n'*"Router Statistics"*"Memory Pools"*$'\nRouter 2\n'*"Router Statistics"*"Memory Pools"* ]]
}

@test "flimflam skstat: skstat that cannot import proton is an error before the run" {
	skip_unless_program skrouterd skstat
	PYTHONPATH= run -1 --separate-stderr env -u PYTHONPATH flimflam skstat --warmup 1 --duration 2
	[[ "$stderr" == "flimflam: '"*"skstat' cannot import the Python module 'proton' ("*"); set PYTHONPATH to the directory holding Proton's Python binding (PYTHONPATH is unset)" ]]
	nothing_started
}
