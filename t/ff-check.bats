#!/usr/bin/env bats
# ff-check: the environment, requirements with install commands, perf,
# frame pointers; lib/ff_env.c through it and through a small probe.

bats_require_minimum_version 1.5.0
load helper

FIX="$TOP/t/fixtures/ff-check"

# build_fake CFLAGS...: a stand-in skrouterd in $BATS_TEST_TMPDIR/fake/bin
# whose --help points at the 2.7-like schema fixture, linked against an
# empty library named like Proton's in $BATS_TEST_TMPDIR/fake/lib.
# FAKE_SONAME: its Proton's soname (default libqpid-proton-core.so.10, the
# real one's, which a machine with Debian's python3-qpid-proton also has in
# its library path).
build_fake() {
	skip_unless_program gcc
	local f="$BATS_TEST_TMPDIR/fake" so=${FAKE_SONAME:-libqpid-proton-core.so.10}
	mkdir -p "$f/bin" "$f/lib"
	echo 'int flimflam_fake_proton;' >"$f/p.c"
	gcc -shared -fPIC -o "$f/lib/$so" -Wl,-soname,"$so" "$f/p.c"
	gcc "$@" -DPYDIR="\"$FIX/schema-2.7\"" -o "$f/bin/skrouterd" \
		"$FIX/fake-skrouterd.c" -Wl,--no-as-needed "$f/lib/$so"
}

teardown() {
	if [ -s "$BATS_TEST_TMPDIR/pid" ]; then
		kill "$(cat "$BATS_TEST_TMPDIR/pid")" 2>/dev/null || true
	fi
}

# build_proton CFLAGS...: the stand-in's Proton library again, from a
# function of its own, built with CFLAGS.
build_proton() {
	local f="$BATS_TEST_TMPDIR/fake"
	echo 'int flimflam_fake_proton(int x) { return x * 3; }' >"$f/p.c"
	gcc "$@" -shared -fPIC -o "$f/lib/libqpid-proton-core.so.10" \
		-Wl,-soname,libqpid-proton-core.so.10 "$f/p.c"
}

# fake_all: the stand-in router (frame pointers kept) and a stand-in skstat
# on PATH, for a check in which only perf decides; skips unless the rest is
# installed.
fake_all() {
	skip_unless_program h2load nghttpd nghttpx iperf3 nginx perf
	build_fake -g -O2 -fno-omit-frame-pointer
	printf '#!/bin/sh\nexit 0\n' >"$BATS_TEST_TMPDIR/fake/bin/skstat"
	chmod +x "$BATS_TEST_TMPDIR/fake/bin/skstat"
	FAKE_PATH="$BATS_TEST_TMPDIR/fake/bin:$PATH"
}

# build_probe: t/fixtures/ff-check/env-probe.c against lib/libff.a.
build_probe() {
	skip_unless_program gcc pkg-config
	PROBE="$BATS_TEST_TMPDIR/env-probe"
	# FF_TEST_CFLAGS: make check-asan's sanitizer flags, which libff.a was built with.
	gcc -std=c11 ${FF_TEST_CFLAGS:-} -I"$TOP/lib" $(pkg-config --cflags jansson) -o "$PROBE" \
		"$FIX/env-probe.c" "$TOP/lib/libff.a" $(pkg-config --libs jansson libpipeline) -lm
}

@test "ff-check -h prints the usage and exits 0" {
	run -0 --separate-stderr ff-check -h
	[ "${lines[0]}" = "usage: ff-check [-h] [--json]" ]
	[ -z "$stderr" ]
}

@test "ff-check: an unknown option or an argument is a usage error" {
	run -2 --separate-stderr ff-check --bogus
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "ff-check: unknown option '--bogus'" ]
	run -2 --separate-stderr ff-check extra
	[ "${stderr_lines[0]}" = "ff-check: unexpected argument 'extra'" ]
}

@test "ff-check: OK and exit 0 exactly when every required requirement is met, else every problem" {
	run --separate-stderr ff-check --json
	local status_json=$status
	echo "$output" >"$BATS_TEST_TMPDIR/check.jsonl"
	local missing
	missing=$(jq -r 'select(.event == "requirement" and .ok == false and .required) | .name' \
		"$BATS_TEST_TMPDIR/check.jsonl")
	run --separate-stderr ff-check
	[ "$status" -eq "$status_json" ]
	if [ -z "$missing" ]; then
		[ "$status" -eq 0 ]
		[ "${lines[-1]}" = "OK" ]
	else
		[ "$status" -eq 1 ]
		[ "${lines[-1]}" != "OK" ]
		# The count, and one line per problem in the closing list.
		local n
		n=$(echo "$missing" | wc -l)
		assert_output --partial "$n problem"
		for m in $missing; do
			has_line "^  MISSING +$m "
			sed -n '/problem/,$p' <<<"$output" | grep -q "^  $m "
		done
	fi
}

@test "ff-check names a missing iperf3 and the apt-get command that installs it" {
	local p
	p=$(path_without iperf3)
	[ -z "$(PATH="$p" command -v iperf3)" ]
	PATH="$p" FLIMFLAM_OS_RELEASE="$FIX/os-release-debian" run -1 --separate-stderr ff-check
	has_line "^  MISSING +iperf3 +not on PATH$"
	has_line "^  iperf3 +(sudo )?apt-get install -y iperf3$"
	# What is still there is not reported missing.
	if command -v h2load >/dev/null; then
		has_line "^  ok +h2load "
	fi
}

@test "ff-check: nghttp2 is three packages on Debian, one on Fedora" {
	local p
	p=$(path_without h2load nghttpd nghttpx iperf3)
	PATH="$p" FLIMFLAM_OS_RELEASE="$FIX/os-release-debian" run -1 ff-check
	has_line "^  h2load +(sudo )?apt-get install -y nghttp2-client$"
	has_line "^  nghttpd +(sudo )?apt-get install -y nghttp2-server$"
	has_line "^  nghttpx +(sudo )?apt-get install -y nghttp2-proxy$"
	has_line "all packages at once: (sudo )?apt-get install -y nghttp2-client nghttp2-server nghttp2-proxy iperf3$"
	PATH="$p" FLIMFLAM_OS_RELEASE="$FIX/os-release-fedora" run -1 ff-check
	assert_output --partial "Fedora Linux 40"
	has_line "^  h2load +(sudo )?dnf install -y nghttp2$"
	has_line "^  iperf3 +(sudo )?dnf install -y iperf3$"
	has_line "all packages at once: (sudo )?dnf install -y nghttp2 iperf3$"
}

@test "ff-check --json: start, environment, requirements, end, as valid JSON lines" {
	local p
	p=$(path_without iperf3)
	PATH="$p" FLIMFLAM_OS_RELEASE="$FIX/os-release-debian" run -1 --separate-stderr ff-check --json
	echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	jsonl_ok "$BATS_TEST_TMPDIR/out.jsonl"
	jq -e -s '
		(map(.event) | .[1] == "environment" and .[-1] == "end") and
		([.[] | select(.event == "environment")] | length == 1) and
		(.[-1].status == 1) and
		all(.[] | select(.event == "requirement");
		    (.name | type == "string") and (.ok | type == "boolean") and
		    (.detail | type == "string") and
		    (if .ok then true else (.fix | type == "string") end)) and
		(.[] | select(.event == "requirement" and .name == "iperf3") |
		 .ok == false and (.fix | test("apt-get install -y iperf3$"))) and
		(.[] | select(.event == "environment") |
		 .iperf3 == null and .os == "Debian GNU/Linux 12 (bookworm)" and
		 (.kernel | type == "string") and (.cpus_available >= 1) and
		 (.cpus_online >= .cpus_available) and
		 (.perf_hardware_counters | type == "boolean"))
	' "$BATS_TEST_TMPDIR/out.jsonl"
}

@test "ff-check: perf is probed by opening events, and hardware counters are reported" {
	run --separate-stderr ff-check --json
	echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	jq -e -s '
		[.[] | select(.event == "requirement") | .name] as $n |
		(.[] | select(.event == "environment") | .perf_hardware_counters) as $hw |
		($n | index("perf_events") != null) and ($n | index("perf_hardware") != null) and
		($n | index("perf_memory") != null) and
		([.[] | select(.event == "requirement" and .name == "perf_hardware") | .ok] == [$hw])
	' "$BATS_TEST_TMPDIR/out.jsonl"
	# Without a PMU, say what that costs.
	if jq -e -s 'any(.[]; .event == "environment" and .perf_hardware_counters == false)' \
		"$BATS_TEST_TMPDIR/out.jsonl" >/dev/null; then
		run ff-check
		assert_output --partial "stat reports cycles and instructions as null"
		assert_output --partial "c2c and mem cannot work"
	fi
}

# Only c2c, mem and --call-graph lbr need a PMU: a machine without one
# (most VMs and CI runners) is OK. This machine as it is, and both sides
# through FLIMFLAM_TEST_PERF.
@test "ff-check: without a hardware PMU, OK and exit 0, naming what it would enable" {
	fake_all
	local f="$BATS_TEST_TMPDIR/fake" perf
	local -a with
	for perf in real events,kernel events; do
		# real: the probe opens events on this machine; else FLIMFLAM_TEST_PERF.
		with=(env PATH="$FAKE_PATH" LD_LIBRARY_PATH="$f/lib")
		[ "$perf" = real ] || with+=(FLIMFLAM_TEST_PERF="$perf")
		run --separate-stderr "${with[@]}" ff-check --json
		if [ "$perf" = real ] && ! jq -e -s \
			'any(.[]; .event == "environment" and .perf_hardware_counters == false)' \
			<<<"$output" >/dev/null; then
			continue	# this machine has a PMU
		fi
		echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
		[ "$status" -eq 0 ]
		jq -e -s '
			(.[-1] | .event == "end" and .status == 0) and
			(.[] | select(.event == "environment") | .perf_hardware_counters == false) and
			([.[] | select(.event == "requirement" and .required == false) | .name] ==
			 ["perf_hardware", "perf_memory", "perf_tracepoints", "perf_lock", "perf_lock_bpf", "wakeups"]) and
			all(.[] | select(.event == "requirement");
			    (.required | type == "boolean") and
			    (if .required then .ok and .enables == null
			     elif (.name | test("^perf_(hardware|memory)$")) then
				.ok == false and (.enables | type == "string") and (.fix | type == "string")
			     else (.enables | type == "string") end)) and
			(.[] | select(.event == "requirement" and .name == "perf_hardware") |
			 .enables | test("c2c") and test("mem") and test("--call-graph lbr")) and
			(.[] | select(.event == "requirement" and .name == "perf_memory") |
			 .enables == "c2c and mem")' "$BATS_TEST_TMPDIR/out.jsonl"
		run -0 --separate-stderr "${with[@]}" ff-check
		[ "${lines[-1]}" = "OK" ]
		refute_output --partial "problem"
		has_line "^Optional \(only some commands need these\)$"
		has_line "^  missing +perf_hardware +no hardware counters \(no PMU here\): .*no cycles or instructions per byte"
		has_line "^Not available here \(everything else works without\):$"
		has_line "^  perf_hardware +cycles and instructions \\(and per byte\\) in stat, .*c2c, mem, --call-graph lbr; run on bare metal"
		has_line "^  perf_memory +c2c and mem; "
	done
}

@test "ff-check: with a hardware PMU and load sampling, OK with nothing optional missing" {
	# The tracepoints are the machine's own, through tracefs (t/run mounts it where it is not).
	[ -r /sys/kernel/tracing/events ] || [ -r /sys/kernel/debug/tracing/events ] ||
		skip "tracefs is not mounted here, so the scheduler's tracepoints are missing (t/run mounts it in a mount namespace of its own)"
	fake_all
	local f="$BATS_TEST_TMPDIR/fake"
	FLIMFLAM_TEST_PERF=events,kernel,hardware,memory,bpf PATH="$FAKE_PATH" LD_LIBRARY_PATH="$f/lib" \
		run -0 --separate-stderr ff-check --json
	jq -e -s '(.[-1].status == 0) and
		all(.[] | select(.event == "requirement"); .ok) and
		(.[] | select(.event == "environment") | .perf_hardware_counters == true) and
		([.[] | select(.event == "requirement" and .required == false) | .name] ==
		 ["perf_hardware", "perf_memory", "perf_tracepoints", "perf_lock", "perf_lock_bpf", "wakeups"])' <<<"$output"
	FLIMFLAM_TEST_PERF=events,kernel,hardware,memory,bpf PATH="$FAKE_PATH" LD_LIBRARY_PATH="$f/lib" \
		run -0 --separate-stderr ff-check
	[ "${lines[-1]}" = "OK" ]
	has_line "^  ok +perf_hardware +cycles open"
	refute_output --partial "Not available here"
}

# lock's BPF path (perf lock contention -b) is optional: check says whether
# this perf has it, and when not, exactly what is missing and what it would give.
@test "ff-check: perf lock contention -b, as this perf's own help says, and through FLIMFLAM_TEST_PERF" {
	skip_unless_program perf
	run --separate-stderr ff-check --json
	req=$(jq -c 'select(.event == "requirement" and .name == "perf_lock_bpf")' <<<"$output")
	jq -e '.required == false and (.enables | test("perf lock contention -b")) and (.enables | test("owner"))' <<<"$req"
	if LC_ALL=C perf lock contention -h 2>&1 | grep -A1 -e '--use-bpf' | grep -q 'not built-in'; then
		jq -e '.ok == false and (.detail | test("no BUILD_BPF_SKEL=1")) and (.fix | test("BUILD_BPF_SKEL=1"))' <<<"$req"
		run --separate-stderr ff-check
		has_line "^  missing +perf_lock_bpf +this perf is built without BPF skeletons: 'perf lock contention -b' says \"not built-in because no BUILD_BPF_SKEL=1\"$"
		has_line "^  perf_lock_bpf +contended locks counted by BPF in the kernel \(perf lock contention -b\).*; a perf built with BUILD_BPF_SKEL=1"
	elif LC_ALL=C perf lock contention -h 2>&1 | grep -q -e '--use-bpf'; then
		jq -e '.ok' <<<"$req"
	else
		jq -e '.ok == false and (.detail | test("has no -b"))' <<<"$req"
	fi
	run --separate-stderr env FLIMFLAM_TEST_PERF=events,kernel,bpf ff-check --json
	jq -se 'map(select(.event == "requirement" and .name == "perf_lock_bpf")) | length == 1 and .[0].ok' <<<"$output"
	run --separate-stderr env FLIMFLAM_TEST_PERF=events,kernel ff-check --json
	jq -se 'map(select(.event == "requirement" and .name == "perf_lock_bpf")) | length == 1 and
		.[0].ok == false and (.[0].detail | test("FLIMFLAM_TEST_PERF"))' <<<"$output"
}

# The relays' wakeups in every run: check names where they come from here, or why there are none.
@test "ff-check: the wakeups requirement says its source, as the runs' resources do" {
	run --separate-stderr ff-check --json
	req=$(jq -c 'select(.event == "requirement" and .name == "wakeups")' <<<"$output")
	jq -e '.required == false and (.enables | test("wakeups per MB")) and
		(if .ok then .detail | test("schedstat|sched:sched_wakeup counted on every CPU") else .fix | test("perf_event_paranoid") end)' <<<"$req"
}

# What run and the other captures need is still a problem: no perf events.
@test "ff-check: perf events that do not open are a problem: exit 1" {
	fake_all
	local f="$BATS_TEST_TMPDIR/fake"
	FLIMFLAM_TEST_PERF= PATH="$FAKE_PATH" LD_LIBRARY_PATH="$f/lib" run -1 --separate-stderr ff-check
	has_line "^  MISSING +perf_events "
	has_line "^1 problem:$"
	has_line "^  perf_events +as root: echo -1 > /proc/sys/kernel/perf_event_paranoid$"
	FLIMFLAM_TEST_PERF= PATH="$FAKE_PATH" LD_LIBRARY_PATH="$f/lib" run -1 --separate-stderr ff-check --json
	jq -e -s '(.[-1].status == 1) and
		([.[] | select(.event == "requirement" and .ok == false and .required) | .name] ==
		 ["perf_events"])' <<<"$output"
}

# schema_features DIR FEATURES: ff-check --json with the schema of
# $FIX/DIR: its environment's skrouterd_features are FEATURES; its events in
# $BATS_TEST_TMPDIR/out.jsonl.
schema_features() {
	FLIMFLAM_SKROUTERD_SCHEMA="$FIX/$1/skupper_router/management/skrouter.json" \
		run --separate-stderr ff-check --json
	echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	run -0 jq -c -s '.[] | select(.event == "environment") | .skrouterd_features' \
		"$BATS_TEST_TMPDIR/out.jsonl"
	assert_output "$2"
}

@test "ff-check: the 2.7-like schema has the HTTP adaptor and encapsulation" {
	schema_features schema-2.7 '{"http":true,"tcp_encapsulation":true,"encapsulation_default":"legacy","worker_threads":true}'
	jq -e -s 'any(.[]; .event == "requirement" and .name == "skrouterd_schema" and .ok)' \
		"$BATS_TEST_TMPDIR/out.jsonl"
}

@test "ff-check: the 3.x-like schema has neither" {
	schema_features schema-3.x '{"http":false,"tcp_encapsulation":false,"encapsulation_default":null,"worker_threads":true}'
	FLIMFLAM_SKROUTERD_SCHEMA="$FIX/schema-3.x/skupper_router/management/skrouter.json" run ff-check
	has_line "^  ok +skrouterd_schema .*: http adaptor no, tcp encapsulation no, workerThreads yes$"
}

@test "ff-check: a file that is not a schema is a problem, not a crash" {
	FLIMFLAM_SKROUTERD_SCHEMA="$FIX/broken-skrouter.json" run -1 --separate-stderr ff-check --json
	[[ "$stderr" == *"broken-skrouter.json: no entityTypes: not a skrouterd schema"* ]]
	echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	jq -e -s 'any(.[]; .event == "environment" and .skrouterd_features == null) and
		  any(.[]; .event == "requirement" and .name == "skrouterd_schema" and .ok == false)' \
		"$BATS_TEST_TMPDIR/out.jsonl"
}

@test "ff-check: no os-release file is no crash: os is null" {
	FLIMFLAM_OS_RELEASE="$BATS_TEST_TMPDIR/no-such-os-release" run --separate-stderr ff-check --json
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	jsonl_ok "$BATS_TEST_TMPDIR/out.jsonl"
	jq -e -s 'any(.[]; .event == "environment" and .os == null and .os_id == null)' \
		"$BATS_TEST_TMPDIR/out.jsonl"
	FLIMFLAM_OS_RELEASE="$BATS_TEST_TMPDIR/no-such-os-release" run ff-check
	has_line "^  os +unknown \(no os-release file\)$"
}

@test "ff-check: a router on PATH: version, schema from --help, Proton from ldd" {
	build_fake -g -O2
	local f="$BATS_TEST_TMPDIR/fake"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check --json
	echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	jq -e -s --arg f "$f" --arg fix "$FIX" '
		.[] | select(.event == "environment") |
		.skrouterd == {"path": ($f + "/bin/skrouterd"), "version": "2.7.6"} and
		.proton_ldd == ($f + "/lib/libqpid-proton-core.so.10") and
		.skrouterd_schema == ($fix + "/schema-2.7/skupper_router/management/skrouter.json") and
		.skrouterd_features.http == true and
		(.skrouterd_hash_fnv1a64 | test("^[0-9a-f]{16}$"))
	' "$BATS_TEST_TMPDIR/out.jsonl"
	jq -e -s 'all(.[] | select(.event == "requirement" and
			      (.name == "skrouterd" or .name == "proton" or .name == "skrouterd_schema")); .ok)' \
		"$BATS_TEST_TMPDIR/out.jsonl"
}

@test "ff-check: a router whose Proton is not on the library path: says LD_LIBRARY_PATH" {
	# A soname no machine has, so that no Proton in the library path (the
	# caller's LD_LIBRARY_PATH, or a distribution's) is taken for the router's.
	FAKE_SONAME=libqpid-proton-core.so.99 build_fake -g -O2
	run -1 --separate-stderr env -u LD_LIBRARY_PATH PATH="$BATS_TEST_TMPDIR/fake/bin:$PATH" ff-check
	has_line "^  MISSING +skrouterd .*does not run: .*libqpid-proton-core.so.99"
	has_line "^  MISSING +proton +ldd finds no libqpid-proton"
	has_line "^  proton +export LD_LIBRARY_PATH="
}

@test "ff-check warns when the router was built without frame pointers" {
	build_fake -g -O2 -fomit-frame-pointer
	local f="$BATS_TEST_TMPDIR/fake"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check
	assert_output --partial "-fno-omit-frame-pointer"
	has_line "^  warning: skrouterd: built without -fno-omit-frame-pointer in 1 of 1 set of compiler flags"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check --json
	echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	jq -e -s 'any(.[]; .event == "environment" and .skrouterd_frame_pointers == false) and
		  any(.[]; .event == "warning" and .name == "frame_pointers")' "$BATS_TEST_TMPDIR/out.jsonl"
}

@test "ff-check: no warning for a router built with frame pointers" {
	build_fake -g -O2 -fno-omit-frame-pointer
	local f="$BATS_TEST_TMPDIR/fake"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check
	refute_output --partial "warning:"
	assert_output --partial "skrouterd: built with -fno-omit-frame-pointer"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check --json
	echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	jq -e -s 'any(.[]; .event == "environment" and .skrouterd_frame_pointers == true) and
		  all(.[]; .event != "warning")' "$BATS_TEST_TMPDIR/out.jsonl"
}

@test "ff-check: Proton's frame pointers, from its own debug information" {
	build_fake -g -O2 -fno-omit-frame-pointer
	local f="$BATS_TEST_TMPDIR/fake" lib="$BATS_TEST_TMPDIR/fake/lib/libqpid-proton-core.so.10"
	# Proton's RelWithDebInfo: -g -O2, frame pointers omitted.
	build_proton -g -O2 -fomit-frame-pointer
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check
	has_line "^  skrouterd: built with -fno-omit-frame-pointer"
	has_line "^  warning: proton: built without -fno-omit-frame-pointer in 1 of 1 set of compiler flags, e.g. 'GNU C"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check --json
	jq -e -s --arg lib "$lib" '
		(.[] | select(.event == "environment") | .proton_ldd == $lib and
		 .skrouterd_frame_pointers == true and .proton_frame_pointers == false) and
		([.[] | select(.event == "warning") | [.name, .program]] == [["frame_pointers", "proton"]])' <<<"$output"
	# Kept: no warning.
	build_proton -g -O2 -fno-omit-frame-pointer
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check
	has_line "^  proton: built with -fno-omit-frame-pointer \(every compile unit: 1 set of compiler flags\)$"
	refute_output --partial "warning:"
	# Link-time optimisation: one unit (GIMPLE) beside the C one, still read.
	build_proton -g -O2 -flto -fno-omit-frame-pointer
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check
	has_line "^  proton: built with -fno-omit-frame-pointer"
	build_proton -g -O2 -flto -fomit-frame-pointer
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check
	has_line "^  warning: proton: built without -fno-omit-frame-pointer in 1 of 1 set "
	# Three units, two sets of flags: counted as sets, not as units.
	printf 'int pn_a(int x) { return x + 1; }\n' >"$f/a.c"
	printf 'int pn_b(int x) { return x + 2; }\n' >"$f/b.c"
	printf 'int pn_c(int x) { return x + 3; }\n' >"$f/c.c"
	gcc -g -O2 -fno-omit-frame-pointer -fPIC -c -o "$f/a.o" "$f/a.c"
	gcc -g -O2 -fno-omit-frame-pointer -fPIC -c -o "$f/b.o" "$f/b.c"
	gcc -g -O2 -fomit-frame-pointer -fPIC -c -o "$f/c.o" "$f/c.c"
	gcc -shared -o "$lib" -Wl,-soname,libqpid-proton-core.so.10 "$f/a.o" "$f/b.o" "$f/c.o"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check
	has_line "^  warning: proton: built without -fno-omit-frame-pointer in 1 of 2 sets of compiler flags, e.g. 'GNU C.* -fomit-frame-pointer"
	# Stripped (as distributions ship it), or built without -g: it says so, no guess.
	build_proton -g -O2 -fno-omit-frame-pointer
	strip "$lib"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check
	has_line "^  proton: cannot tell \($lib: no debug information: stripped, or built without -g\)$"
	refute_output --partial "warning:"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run --separate-stderr ff-check --json
	jq -e -s '(.[] | select(.event == "environment") | .proton_frame_pointers == null) and
		  all(.[]; .event != "warning")' <<<"$output"
}

@test "ff_env: FNV-1a 64 matches the published test vectors and the router's hash" {
	build_probe
	printf '' >"$BATS_TEST_TMPDIR/empty"
	printf 'a' >"$BATS_TEST_TMPDIR/a"
	printf 'foobar' >"$BATS_TEST_TMPDIR/foobar"
	run -0 "$PROBE" hash "$BATS_TEST_TMPDIR/empty"
	assert_output cbf29ce484222325
	run -0 "$PROBE" hash "$BATS_TEST_TMPDIR/a"
	assert_output af63dc4c8601ec8c
	run -0 "$PROBE" hash "$BATS_TEST_TMPDIR/foobar"
	assert_output 85944171f73967e8
	build_fake -g -O2
	local f="$BATS_TEST_TMPDIR/fake" want
	want=$("$PROBE" hash "$f/bin/skrouterd")
	PATH="$f/bin:$PATH" run --separate-stderr ff-check --json
	echo "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	jq -e -s --arg h "$want" 'any(.[]; .event == "environment" and .skrouterd_hash_fnv1a64 == $h)' \
		"$BATS_TEST_TMPDIR/out.jsonl"
}

@test "ff_env: the Proton library a running router mapped, from /proc/PID/maps" {
	build_probe
	build_fake -g -O2
	local f="$BATS_TEST_TMPDIR/fake" pid
	# teardown kills it by the pid it prints.
	LD_LIBRARY_PATH="$f/lib" "$f/bin/skrouterd" --wait >"$BATS_TEST_TMPDIR/pid" 3>&- &
	wait_for_file "$BATS_TEST_TMPDIR/pid" 5
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	run -0 "$PROBE" maps "$pid"
	assert_output "$f/lib/libqpid-proton-core.so.10"
	# A process without Proton has none.
	run -1 "$PROBE" maps $$
}

@test "ff_env: schema features straight from the fixtures" {
	build_probe
	run -0 "$PROBE" features "$FIX/schema-2.7/skupper_router/management/skrouter.json"
	assert_output '{"http":true,"tcp_encapsulation":true,"encapsulation_default":"legacy","worker_threads":true}'
	run -0 "$PROBE" features "$FIX/schema-3.x/skupper_router/management/skrouter.json"
	assert_output '{"http":false,"tcp_encapsulation":false,"encapsulation_default":null,"worker_threads":true}'
	run -1 --separate-stderr "$PROBE" features "$BATS_TEST_TMPDIR/none.json"
	[[ "$stderr" == *"cannot read"* ]]
}

# Version probes run at once, each within the same 5 s deadline: two that
# hang (one after its version line, one before any) cost 5 s, not 10; a
# probe stopped at the deadline has no version, one that answered keeps
# its; nothing of theirs is left running.
@test "ff-check: version probes that hang are stopped at the deadline, together" {
	local f="$BATS_TEST_TMPDIR/hang" t0 t
	mkdir -p "$f"
	printf '#!/bin/bash\necho "h2load nghttp2/9.9.9"\nexec -a flimflam-hung-probe-'"$$"' sleep 100\n' >"$f/h2load"
	printf '#!/bin/bash\nexec -a flimflam-hung-probe-'"$$"' sleep 100\n' >"$f/iperf3"
	chmod +x "$f/h2load" "$f/iperf3"
	t0=$EPOCHREALTIME
	PATH="$f:$PATH" run --separate-stderr ff-check --json
	t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
	echo "ff-check took $t s" >&3
	jq -e -s --arg f "$f" '.[] | select(.event == "environment") |
		.h2load == {"path": ($f + "/h2load"), "version": null} and
		.iperf3 == {"path": ($f + "/iperf3"), "version": null} and
		(.nginx.version | startswith("nginx version"))' <<<"$output"
	awk -v t="$t" 'BEGIN { exit !(t >= 4.5 && t < 9) }'
	[ -z "$(pgrep -f "flimflam-hung-probe-$$")" ]
}

# flimflam run refuses a router whose --version is not a version; check
# says so too, instead of OK.
@test "ff-check: a skrouterd whose --version prints no version is a problem" {
	build_fake -g -O2
	local f="$BATS_TEST_TMPDIR/fake"
	mv "$f/bin/skrouterd" "$f/bin/real-skrouterd"
	printf '#!/bin/sh\n[ "$1" = --version ] && echo "Segmentation fault" && exit 0\nexec "%s" "$@"\n' \
		"$f/bin/real-skrouterd" >"$f/bin/skrouterd"
	chmod +x "$f/bin/skrouterd"
	PATH="$f/bin:$PATH" LD_LIBRARY_PATH="$f/lib" run -1 --separate-stderr ff-check
	has_line "^  MISSING +skrouterd +'$f/bin/skrouterd --version' printed 'Segmentation fault', not a version$"
	has_line "^  ok +skrouterd_schema "
}
