#!/usr/bin/env bats
# ff-bench compare's verdict (issue 13, "What compare gets wrong today"):
# each of the issue's examples on synthetic results files, with and
# without build labels, and compare within one file of several builds.

bats_require_minimum_version 1.5.0
load helper

# side FILE LABEL WORKLOAD RELAY BITS CPUS: append one ok case record per
# value of the space-separated BITS (bits/s) to FILE, the relays' CPU
# (R1 + R2, half each) from CPUS, one per run; LABEL "-" for no build.
# Every record has its own run directory and time.
side() {
	local f="$1" label="$2" w="$3" r="$4" bits=($5) cpus=($6) i build
	if [ "$label" = - ]; then
		build=null
	else
		build="{\"label\":\"$label\",\"relay\":\"$r\",\"path\":\"/opt/$label/sbin/$r\",\"version\":\"v-$label\",\"sha256\":\"$(printf %s "$label" | sha256sum | cut -c1-64)\",\"proton\":null}"
	fi
	for i in "${!bits[@]}"; do
		SEQ=$((${SEQ:-0} + 1))
		printf '{"event":"case","schema":1,"tool":"ff-bench","version":"0.1.0","time":"2026-01-01T%02d:%02d:%02dZ","status":"ok","reason":null,"config":{"workload":"%s","relay":"%s","protocol":"tcp","jobs":2,"warmup_s":5,"duration_s":5,"cpu_limit":1},"repeat":%d,"run_dir":"/tmp/runs/%s-%d","result":{"bits_per_s":%s,"ops_per_s":null,"latency_avg_us":null},"resources":{"relays":[{"role":"r1","cpu_fraction":%s,"max_rss_bytes":1000},{"role":"r2","cpu_fraction":%s,"max_rss_bytes":1000}]},"environment":{"hostname":"bench","kernel":"6.1.0","cpu_model":"EPYC","os":"Debian 12","cpus_online":8,"cpus_available":8,"iperf3":{"path":"/usr/bin/iperf3","version":"iperf 3.12"}},"build":%s}\n' \
			$((SEQ / 3600)) $((SEQ / 60 % 60)) $((SEQ % 60)) "$w" "$r" $((i + 1)) "$label" "$SEQ" \
			"${bits[$i]}" "$(awk -v c="${cpus[$i]}" 'BEGIN { print c / 2 }')" \
			"$(awk -v c="${cpus[$i]}" 'BEGIN { print c / 2 }')" "$build" >>"$f"
	done
}

# failed FILE LABEL WORKLOAD RELAY N: N failed runs of a case.
failed() {
	local f="$1" label="$2" w="$3" r="$4" n="$5" i build=null
	[ "$label" = - ] || build="{\"label\":\"$label\",\"relay\":\"$r\",\"path\":\"/opt/$label/sbin/$r\",\"version\":\"v\",\"sha256\":\"0\",\"proton\":null}"
	for ((i = 1; i <= n; i++)); do
		SEQ=$((${SEQ:-0} + 1))
		printf '{"event":"case","schema":1,"tool":"ff-bench","version":"0.1.0","time":"2026-01-01T%02d:%02d:%02dZ","status":"failed","reason":"ff-topology: relay r1 (pid 4242) exited with signal 11 (SIGSEGV)","config":{"workload":"%s","relay":"%s","protocol":"tcp","jobs":2,"warmup_s":5,"duration_s":5,"cpu_limit":1},"repeat":%d,"run_dir":"/tmp/runs/f-%d","result":null,"resources":null,"environment":{"hostname":"bench","kernel":"6.1.0","cpu_model":"EPYC","os":"Debian 12","cpus_online":8,"cpus_available":8,"iperf3":{"path":"/usr/bin/iperf3","version":"iperf 3.12"}},"build":%s}\n' \
			$((SEQ / 3600)) $((SEQ / 60 % 60)) $((SEQ % 60)) "$w" "$r" "$i" "$SEQ" "$build" >>"$f"
	done
}

TEN="8e9 8e9 8e9 8e9 8e9 8e9 8e9 8e9 8e9 8e9"
ONES="1 1 1 1 1 1 1 1 1 1"

# Two sides of the same ten runs of builtin over nginx: nothing changed.
steady() {
	side "$1" "$2" builtin nginx "$TEN" "$ONES"
}

@test "compare: the direction comes from the shift, not the medians (the issue's CPU per GB, equal medians)" {
	cd "$BATS_TEST_TMPDIR"
	# Relay CPU per GB: base 1 x7 and 0.5 x3, new 1 x7 and 1.5 x3; lower
	# is better. The medians are equal, the shift is up: not "better".
	side base.jsonl - builtin nginx "$TEN" "1 1 1 1 1 1 1 0.5 0.5 0.5"
	side new.jsonl - builtin nginx "$TEN" "1 1 1 1 1 1 1 1.5 1.5 1.5"
	run -0 --separate-stderr ff-bench compare --json base.jsonl new.jsonl
	jq -e -s '[.[] | select(.event == "comparison" and .metric == "relay_cpu_s_per_gb")][0] |
		.base_median == 1 and .new_median == 1 and .delta_pct == 0 and .change_pct == 50 and
		.ci_low_pct == 0 and .ci_high_pct == 100 and .direction == "worse" and
		.verdict == "inconclusive: neither within nor beyond +-2%" and (.regression | not)' <<<"$output"
	run -0 ff-bench compare base.jsonl new.jsonl
	! has_line ' better \(' || false
	# The interval reaches 0 and +100%: neither a change beyond 2% nor
	# none within it was shown, whatever the medians (the Medians column).
	has_line '^builtin +nginx +tcp +1\.00 \+/-25% +1\.00 \+/-25% +\+0\.0% +\+50\.0% \[\+0\.0, \+100\.0\] +0\.037 +0\.074 +inconclusive \[1\] \(n=10\+10\)$'
	has_line '^  \[1\] inconclusive: neither within nor beyond \+-2%$'
	# Shifted for real (every new run 1.5): worse, whose interval lies beyond 2%.
	side new2.jsonl - builtin nginx "$TEN" "1.5 1.5 1.5 1.5 1.5 1.5 1.5 1.6 1.6 1.6"
	run -0 ff-bench compare base.jsonl new2.jsonl
	has_line '^builtin +nginx +tcp +1\.00 \+/-25% +1\.50 \+/-3\.3% +\+50\.0% +\+60\.0% \[\+50\.0, \+200\.0\] +1\.1e-05 +2\.2e-05 +worse \(n=10\+10\)$'
}

@test "compare: a case whose runs all failed in new is a row, has its counts in --json, and fails --threshold" {
	cd "$BATS_TEST_TMPDIR"
	steady base.jsonl -
	side base.jsonl - iperf3 nginx "$TEN" "$ONES"
	steady new.jsonl -
	failed new.jsonl - iperf3 nginx 10
	run -0 ff-bench compare base.jsonl new.jsonl
	has_line '^Failed cases \(no successful run on a side\)$'
	has_line '^iperf3 +nginx +tcp +10 ok, 0 failed +0 ok, 10 failed +failed in new: ff-topology: relay r1 \(pid 4242\) exited with signal 11 \(SIGSEGV\)$'
	has_line '^Failed runs, not counted: 0 in base, 10 in new$'
	run -1 --separate-stderr ff-bench compare --threshold 5 base.jsonl new.jsonl
	has_line '^The gate at 5%: 1 case failed in new \(exit 1\)$'
	grep -qx 'ff-bench: failed in new: iperf3 nginx tcp (10 of 10 runs failed: ff-topology: relay r1 (pid 4242) exited with signal 11 (SIGSEGV))' <<<"$stderr"
	run -1 --separate-stderr ff-bench compare --json --threshold 5 base.jsonl new.jsonl
	jq -e -s '[.[] | select(.event == "comparison" and .workload == "iperf3")] | length == 1 and
		(.[0] | .metric == null and .verdict == "failed in new" and .n_base == 10 and .n_new == 0 and
		 .failed_base == 0 and .failed_new == 10 and .beyond_threshold)' <<<"$output"
	jq -e -s '[.[] | select(.event == "comparison" and .workload == "builtin")] |
		all(.[]; .failed_base == 0 and .failed_new == 0)' <<<"$output"
	jq -e -s '.[-1].status == 1' <<<"$output"
	# A case that failed in base only is a row too, but the new build did
	# not break it: the gate passes.
	run -0 --separate-stderr ff-bench compare --threshold 5 new.jsonl base.jsonl
	has_line '^iperf3 +nginx +tcp +0 ok, 10 failed +10 ok, 0 failed +failed in base: '
	run -0 --separate-stderr ff-bench compare --json --threshold 5 new.jsonl base.jsonl
	jq -e -s '.[] | select(.event == "comparison" and .workload == "iperf3") |
		.verdict == "failed in base" and (.beyond_threshold | not)' <<<"$output"
}

@test "compare: a file of a newer schema, or another tool's case lines, is refused in one line" {
	cd "$BATS_TEST_TMPDIR"
	steady base.jsonl -
	steady new.jsonl -
	jq -c '.schema = 2' new.jsonl >newer.jsonl
	run -1 --separate-stderr ff-bench compare base.jsonl newer.jsonl
	[ "$stderr" = "ff-bench: newer.jsonl:1: schema 2 is newer than this flimflam's (1): read it with a newer flimflam" ]
	[ -z "$output" ]
	jq -c '.tool = "ff-other"' new.jsonl >other.jsonl
	run -1 --separate-stderr ff-bench compare base.jsonl other.jsonl
	[ "$stderr" = "ff-bench: other.jsonl:1: a case of 'ff-other', not of ff-bench: not a bench result" ]
	jq -c 'del(.tool)' new.jsonl >notool.jsonl
	run -1 --separate-stderr ff-bench summarize notool.jsonl
	[ "$stderr" = "ff-bench: notool.jsonl:1: 'tool' is missing: not a bench result (\"tool\":\"ff-bench\")" ]
	jq -c '.schema = "1"' new.jsonl >strschema.jsonl
	run -1 --separate-stderr ff-bench compare base.jsonl strschema.jsonl
	[ "$stderr" = "ff-bench: strschema.jsonl:1: 'schema' should be a whole number: not a bench result" ]
}

@test "compare: duplicate records (a file concatenated with itself) are counted once, with a warning" {
	cd "$BATS_TEST_TMPDIR"
	side base.jsonl - builtin nginx "$TEN" "1.00 1.01 1.02 1.03 1.04 1.05 1.06 1.07 1.08 1.09"
	side new.jsonl - builtin nginx "$TEN" "1.025 1.035 1.045 1.055 1.065 1.075 1.085 1.095 1.105 1.115"
	run -0 --separate-stderr ff-bench compare --json base.jsonl new.jsonl
	local p
	p=$(jq -s '.[] | select(.event == "comparison" and .metric == "relay_cpu_s_per_gb") | .p' <<<"$output")
	cat base.jsonl base.jsonl >base2.jsonl
	cat new.jsonl new.jsonl >new2.jsonl
	run -0 --separate-stderr ff-bench compare --json base2.jsonl new2.jsonl
	jq -e -s --argjson p "$p" '.[] | select(.event == "comparison" and .metric == "relay_cpu_s_per_gb") |
		.n_base == 10 and .n_new == 10 and .p == $p' <<<"$output"
	[ "${stderr_lines[0]}" = "ff-bench: base2.jsonl: 10 duplicate records (the same case, build, run directory, time and repeat as an earlier line, or the same line when it has neither run directory nor time; the first at line 11, a copy of line 1), counted once" ]
	[ "${stderr_lines[1]}" = "ff-bench: new2.jsonl: 10 duplicate records (the same case, build, run directory, time and repeat as an earlier line, or the same line when it has neither run directory nor time; the first at line 11, a copy of line 1), counted once" ]
	# Two runs alike but for their repeat are two runs.
	run -0 --separate-stderr ff-bench summarize base2.jsonl
	jq -c '.repeat += 100' base.jsonl >>base.jsonl.more
	cat base.jsonl base.jsonl.more >base3.jsonl
	run -0 --separate-stderr ff-bench compare --json base3.jsonl new.jsonl
	[ -z "$stderr" ]
	jq -e -s '.[] | select(.event == "comparison" and .metric == "bits_per_s") | .n_base == 20' <<<"$output"
}

@test "compare: every environment field is compared exactly, programs, CPUs, warmup and duration included, each difference a warning with both values" {
	cd "$BATS_TEST_TMPDIR"
	steady base.jsonl -
	steady new.jsonl -
	# Host vm2 after bench-vm2 is a different host, not a substring match.
	jq -c '.environment.hostname = "bench-vm2"' base.jsonl >a.jsonl
	jq -c '.environment.hostname = "vm2" | .environment.iperf3.version = "iperf 3.16" |
		.environment.cpus_available = 2 | .config.warmup_s = 1' new.jsonl >b.jsonl
	run -0 --separate-stderr ff-bench compare a.jsonl b.jsonl
	has_line "^  hostname +DIFFERS: base 'bench-vm2', new 'vm2'$"
	has_line "^  iperf3\.version +DIFFERS: base 'iperf 3\.12', new 'iperf 3\.16'$"
	has_line "^  cpus_available +DIFFERS: base '8', new '2'$"
	has_line "^  warmup_s +DIFFERS: base '5', new '1'$"
	has_line "^  kernel +6\.1\.0$"
	grep -qx "ff-bench: the environments differ: hostname: base 'bench-vm2', new 'vm2'" <<<"$stderr"
	grep -qx "ff-bench: the environments differ: iperf3.version: base 'iperf 3.12', new 'iperf 3.16'" <<<"$stderr"
	grep -qx "ff-bench: the environments differ: cpus_available: base '8', new '2'" <<<"$stderr"
	grep -qx "ff-bench: the environments differ: warmup_s: base '5', new '1'" <<<"$stderr"
	[ "${#stderr_lines[@]}" -eq 4 ]
	run -0 --separate-stderr ff-bench compare --json a.jsonl b.jsonl
	jq -e -s '[.[] | select(.event == "environment_difference") | .field] ==
		["hostname", "cpus_available", "warmup_s", "iperf3.version"]' <<<"$output"
	# A file whose runs were made on bench-vm2, then vm2 (--append): two
	# hosts, not one that contains the other's name.
	{ cat a.jsonl; jq -c '.environment.hostname = "vm2" | .repeat += 10' a.jsonl; } >mixed.jsonl
	run -0 --separate-stderr ff-bench compare mixed.jsonl a.jsonl
	has_line "^  hostname +DIFFERS: base 'bench-vm2 \\| vm2', new 'bench-vm2'$"
	[ "$stderr" = "ff-bench: the environments differ: hostname: base 'bench-vm2 | vm2', new 'bench-vm2'" ]
	# The same environment: no difference, no warning.
	run -0 --separate-stderr ff-bench compare base.jsonl new.jsonl
	[ -z "$stderr" ]
	! has_line 'DIFFERS|warning' || false
}

@test "compare: many comparisons of identical distributions: Benjamini-Hochberg across the table, and the output says so" {
	cd "$BATS_TEST_TMPDIR"
	local w
	# 7 cases with the same runs on both sides, and one shifted 3.5% whose
	# p alone would pass 0.05 (p = 0.029), its interval beyond 0.5%: over
	# the 16 comparisons of the table, q = 0.46.
	for w in a b c d e f g; do
		side base.jsonl - "case-$w" nginx "$TEN" "1.00 1.01 1.02 1.03 1.04 1.05 1.06 1.07 1.08 1.09"
		side new.jsonl - "case-$w" nginx "$TEN" "1.00 1.01 1.02 1.03 1.04 1.05 1.06 1.07 1.08 1.09"
	done
	side base.jsonl - case-h nginx "$TEN" "1.00 1.01 1.02 1.03 1.04 1.05 1.06 1.07 1.08 1.09"
	side new.jsonl - case-h nginx "$TEN" "1.0375 1.0475 1.0575 1.0675 1.0775 1.0875 1.0975 1.1075 1.1175 1.1275"
	# None is shown to differ, and none is shown to lie within 0.5%: the
	# gate cannot decide (exit 3), rather than pass what it has not shown.
	run -3 --separate-stderr ff-bench compare --json --threshold 0.5 base.jsonl new.jsonl
	jq -e -s '.[] | select(.event == "method") | .comparisons == 16 and .tested == 16 and .adjustment == "Benjamini-Hochberg"' <<<"$output"
	jq -e -s '.[] | select(.event == "comparison" and .workload == "case-h" and .metric == "relay_cpu_s_per_gb") |
		.p < 0.05 and .q > 0.05 and .ci_low_pct > 0.5 and (.significant | not) and
		.verdict == "inconclusive: beyond 0.5%, but not significant over the table (q 0.46)" and .gate == "undecided"' <<<"$output"
	jq -e -s '[.[] | select(.event == "comparison") | .verdict] | length == 16 and all(. != "better" and . != "worse")' <<<"$output"
	jq -e -s '.[-1].status == 3' <<<"$output"
	run -3 ff-bench compare --threshold 0.5 base.jsonl new.jsonl
	has_line '^comparisons with at least 5 runs a side, of the 16 of these tables$'
	has_line 'q: p adjusted for the 16$'
	has_line '^case-h +nginx +tcp +1\.04 \+/-4\.3% +1\.08 \+/-4\.2% +\+3\.6% +\+3\.6% \[\+0\.7, \+6\.6\] +0\.029 +0\.46 +inconclusive \[2\] \(n=10\+10\)$'
	has_line '^  \[2\] inconclusive: beyond 0\.5%, but not significant over the table \(q 0\.46\)$'
	has_line '^The gate at 0\.5%: 8 comparisons undecided \(exit 3\)$'
	! has_line ' (worse|better) \(' || false
}

@test "compare: p and q are printed with 2 significant digits" {
	cd "$BATS_TEST_TMPDIR"
	side base.jsonl - builtin nginx "$TEN" "1.00 1.01 1.02 1.03 1.04 1.05 1.06 1.07 1.08 1.09"
	side new.jsonl - builtin nginx "$TEN" "1.0425 1.0525 1.0625 1.0725 1.0825 1.0925 1.1025 1.1125 1.1225 1.1325"
	run -0 --separate-stderr ff-bench compare --json base.jsonl new.jsonl
	jq -e -s '.[] | select(.event == "comparison" and .metric == "relay_cpu_s_per_gb") |
		(.p * 1e6 | round) == 6841 and (.q * 1e6 | round) == 13683' <<<"$output"
	run -0 ff-bench compare base.jsonl new.jsonl
	# bits/s the same on both sides: p = 1.0, q = 1.0; CPU per GB: 0.0068 and 0.014.
	has_line '^builtin +nginx +tcp +8\.00G +8\.00G +\+0\.0% +\+0\.0% \[\+0\.0, \+0\.0\] +1\.0 +1\.0 +no change \(n=10\+10\)$'
	has_line '^builtin +nginx +tcp +1\.04 \+/-4\.3% +1\.09 \+/-4\.1% +\+4\.1% +\+4\.1% \[\+1\.2, \+7\.1\] +0\.0068 +0\.014 +inconclusive \[1\] \(n=10\+10\)$'
}

@test "compare: one file holding two builds, --base and --new; labels are part of a case, unknown ones name those there" {
	cd "$BATS_TEST_TMPDIR"
	side two.jsonl main builtin nginx "$TEN" "$ONES"
	side two.jsonl fix builtin nginx "$TEN" "1.5 1.5 1.5 1.5 1.5 1.5 1.5 1.6 1.6 1.6"
	run -0 --separate-stderr ff-bench compare two.jsonl --base main --new fix
	has_line '^Comparing two\.jsonl build main \(base\) with two\.jsonl build fix \(new\)$'
	has_line '^  base  two\.jsonl: build main: nginx v-main, sha256 [0-9a-f]{16}, /opt/main/sbin/nginx$'
	has_line '^builtin +nginx +tcp +1\.00 +1\.50 \+/-3\.3% +\+50\.0% +\+50\.0% \[\+50\.0, \+60\.0\] .* worse \(n=10\+10\)$'
	run -0 --separate-stderr ff-bench compare --json --base fix --new main two.jsonl
	jq -e -s '.[] | select(.event == "comparison" and .metric == "relay_cpu_s_per_gb") |
		.base_build == "fix" and .new_build == "main" and .verdict == "better" and .n_base == 10' <<<"$output"
	run -2 --separate-stderr ff-bench compare two.jsonl --base main --new nope
	[ "${stderr_lines[0]}" = "ff-bench: --new: no build 'nope' in 'two.jsonl' (it holds main, fix)" ]
	run -2 --separate-stderr ff-bench compare two.jsonl --base main
	[ "${stderr_lines[0]}" = "ff-bench: expected two results files, BASE and NEW, or one with --base LABEL and --new LABEL" ]
	run -2 --separate-stderr ff-bench compare two.jsonl --base main --new main
	[ "${stderr_lines[0]}" = "ff-bench: --base and --new are both 'main': compare two builds" ]
	# Two files, each of one build (labels that differ), still compare;
	# a file of several builds needs its side's label.
	side one.jsonl main builtin nginx "$TEN" "$ONES"
	side other.jsonl fix builtin nginx "$TEN" "$ONES"
	run -0 --separate-stderr ff-bench compare one.jsonl other.jsonl
	has_line '^builtin +nginx +tcp +1\.00 +1\.00 +\+0\.0% +\+0\.0% .* no change \(n=10\+10\)$'
	run -2 --separate-stderr ff-bench compare one.jsonl two.jsonl
	[ "${stderr_lines[0]}" = "ff-bench: 'two.jsonl' holds several builds (main, fix): choose one with --new LABEL" ]
	run -0 --separate-stderr ff-bench compare --new fix one.jsonl two.jsonl
	has_line '^Comparing one\.jsonl build main \(base\) with two\.jsonl build fix \(new\)$'
	# Files without builds (before bench --build) compare as before.
	side plain.jsonl - builtin nginx "$TEN" "$ONES"
	run -0 --separate-stderr ff-bench compare plain.jsonl one.jsonl
	has_line '^Comparing plain\.jsonl \(base\) with one\.jsonl build main \(new\)$'
	# A bench without --build names its relay in a build without a label:
	# a case like the runs without any build.
	jq -c '.build.label = null' one.jsonl >nolabel.jsonl
	run -0 --separate-stderr ff-bench compare nolabel.jsonl plain.jsonl
	has_line '^  base  nolabel\.jsonl: nginx v-main, sha256 [0-9a-f]{16}, /opt/main/sbin/nginx$'
	has_line '^builtin +nginx +tcp +1\.00 +1\.00 +\+0\.0% +\+0\.0% .* no change \(n=10\+10\)$'
	run -0 --separate-stderr ff-bench summarize nolabel.jsonl
	! has_line 'Build' || false
}

@test "summarize: results of two builds show a Build column, then each build against the first, as compare judges them" {
	cd "$BATS_TEST_TMPDIR"
	side two.jsonl main builtin nginx "$TEN" "$ONES"
	side two.jsonl fix builtin nginx "$TEN" "1.5 1.5 1.5 1.5 1.5 1.5 1.5 1.6 1.6 1.6"
	side two.jsonl other builtin nginx "$TEN" "$ONES"
	run -0 --separate-stderr ff-bench summarize two.jsonl
	has_line '^Workload +Relay +Protocol +Build +Bits/s '
	has_line '^builtin +nginx +tcp +main +8\.00G '
	has_line '^builtin +nginx +tcp +fix +8\.00G '
	has_line '^Build fix against main \(the base\)$'
	has_line '^Build other against main \(the base\)$'
	# The same rows as compare's.
	local want
	want=$(ff-bench compare --base main --new fix two.jsonl 2>/dev/null | grep -E '^builtin +nginx +tcp +1\.00 +1\.50 ')
	[ -n "$want" ]
	has_line "^$(sed 's/[][\.*^$+()|]/\\&/g' <<<"$want")$"
	# One build, or none: no comparison.
	side one.jsonl main builtin nginx "$TEN" "$ONES"
	run -0 --separate-stderr ff-bench summarize one.jsonl
	! has_line 'against' || false
	steady plain.jsonl -
	run -0 --separate-stderr ff-bench summarize plain.jsonl
	! has_line 'Build' || false
}

# The gate (issue 25): exit 0 only when every comparison was decided and
# none is worse; 1 for what got worse or went missing; 3 for undecided.

@test "compare --threshold: failures in new beyond base's fail the gate, whatever the successful runs say" {
	cd "$BATS_TEST_TMPDIR"
	steady base.jsonl -
	side new.jsonl - builtin nginx "8e9 8e9 8e9 8e9 8e9" "1 1 1 1 1"
	failed new.jsonl - builtin nginx 5
	run -1 --separate-stderr ff-bench compare --threshold 5 base.jsonl new.jsonl
	has_line '^builtin +nginx +tcp +8\.00G +8\.00G .* more failures in new \(n=10\+5, 5 failed in new\)$'
	! has_line ' no change \(' || false
	has_line '^The gate at 5%: 1 case with more failures in new \(exit 1\)$'
	grep -qx 'ff-bench: more failures in new: builtin nginx tcp (5 of 10 runs failed, 0 of 10 in base: ff-topology: relay r1 (pid 4242) exited with signal 11 (SIGSEGV))' <<<"$stderr"
	run -1 --separate-stderr ff-bench compare --json --threshold 5 base.jsonl new.jsonl
	jq -e -s '[.[] | select(.event == "comparison")] | length == 2 and
		all(.[]; .verdict == "more failures in new" and .gate == "fail" and .beyond_threshold)' <<<"$output"
	# As many failures in new as in base, at the same rate: not a rise.
	failed base.jsonl - builtin nginx 10
	run -0 --separate-stderr ff-bench compare --threshold 5 base.jsonl new.jsonl
	has_line 'no change \(n=10\+5, 10 failed in base, 5 failed in new\)$'
}

@test "compare --threshold: too few runs, 4+4 or one a side (bench --repeat 1), is undecided: exit 3, the reason said once" {
	cd "$BATS_TEST_TMPDIR"
	side base.jsonl - builtin nginx "8e9 8e9 8e9 8e9" "1 1 1 1"
	side base.jsonl - iperf3 nginx "8e9 8e9 8e9 8e9" "1 1 1 1"
	side new.jsonl - builtin nginx "4e9 4e9 4e9 4e9" "1 1 1 1"
	side new.jsonl - iperf3 nginx "4e9 4e9 4e9 4e9" "1 1 1 1"
	run -3 --separate-stderr ff-bench compare --threshold 2 base.jsonl new.jsonl
	has_line '^builtin +nginx +tcp +8\.00G +4\.00G +-50\.0% +-50\.0% .* inconclusive \[1\] \(n=4\+4\)$'
	[ "$(grep -c 'fewer than 5 runs per side' <<<"$output")" -eq 2 ]	# once a table
	has_line '^  \[1\] inconclusive: fewer than 5 runs per side$'
	has_line 'q: none, as none of the 4$'
	! has_line 'adjusted for the 0' || false
	has_line '^The gate at 2%: 4 comparisons undecided \(exit 3\)$'
	[ "${stderr_lines[-1]}" = "ff-bench: the gate at 2%: 4 comparisons undecided (exit 3)" ]
	run -3 --separate-stderr ff-bench compare --json --threshold 2 base.jsonl new.jsonl
	jq -e -s '.[-1].status == 3 and ([.[] | select(.event == "method")][0] | .comparisons == 4 and .tested == 0)' <<<"$output"
	# One run a side, the default bench: undecided, not passed.
	side one-b.jsonl - builtin nginx "8e9" "1"
	side one-n.jsonl - builtin nginx "8e9" "1"
	run -3 --separate-stderr ff-bench compare --threshold 5 one-b.jsonl one-n.jsonl
	# Without --threshold there is no gate: exit 0.
	run -0 --separate-stderr ff-bench compare one-b.jsonl one-n.jsonl
}

@test "compare --threshold: a case only in base, or a metric that went null in new, fails the gate and stays in the table" {
	cd "$BATS_TEST_TMPDIR"
	steady base.jsonl -
	side base.jsonl - iperf3 nginx "$TEN" "$ONES"
	steady new.jsonl -
	run -1 --separate-stderr ff-bench compare --threshold 5 base.jsonl new.jsonl
	has_line '^  only in base: iperf3 nginx tcp '
	grep -qx 'ff-bench: only in base: iperf3 nginx tcp (new has no run of it)' <<<"$stderr"
	has_line '^The gate at 5%: 1 case only in base \(exit 1\)$'
	# New's relay CPU is null in every run: its rows stay, counted.
	jq -c '.resources.relays[].cpu_fraction = null' new.jsonl >nocpu.jsonl
	steady base2.jsonl -
	run -1 --separate-stderr ff-bench compare --threshold 5 base2.jsonl nocpu.jsonl
	has_line '^builtin +nginx +tcp +1\.00 +- +- +- +- +- +missing in new \(n=10\+0\)$'
	has_line 'q: p adjusted for the 1$'
	has_line ' of the 2 of these tables$'
	grep -qx 'ff-bench: missing in new: builtin nginx tcp relay_cpu_s_per_gb (null or absent in every successful run of new, 10 in base)' <<<"$stderr"
	run -1 --separate-stderr ff-bench compare --json --threshold 5 base2.jsonl nocpu.jsonl
	jq -e -s '(.[] | select(.event == "method") | .comparisons == 2) and
		(.[] | select(.event == "comparison" and .metric == "relay_cpu_s_per_gb") |
		 .verdict == "missing in new" and .new_median == null and .gate == "fail")' <<<"$output"
	# A case only skipped in new is named in the failure.
	steady sk.jsonl -
	jq -c '.status = "skipped" | .reason = "nginx is not installed" | .result = null' sk.jsonl >skipped.jsonl
	run -1 --separate-stderr ff-bench compare --threshold 5 base2.jsonl skipped.jsonl
	grep -qx 'ff-bench: no run in new: builtin nginx tcp (10 skipped: nginx is not installed)' <<<"$stderr"
}

@test "compare: no change only when the whole interval lies within the threshold; the interval is a ratio's (log values); ties get the exact p" {
	skip_unless_program python3
	cd "$BATS_TEST_TMPDIR"
	# New doubles every run: the change is +100% exactly, its interval the
	# Hodges-Lehmann interval of the log ratios, exponentiated.
	side base.jsonl - builtin nginx "1e9 2e9 3e9 4e9 5e9 6e9 7e9 8e9 9e9 10e9" "$ONES"
	side new.jsonl - builtin nginx "2e9 4e9 6e9 8e9 10e9 12e9 14e9 16e9 18e9 20e9" "$ONES"
	run -0 --separate-stderr ff-bench compare --json base.jsonl new.jsonl
	local want
	want=$(python3 -c '
import math
x = [i * 1e9 for i in range(1, 11)]; y = [2 * v for v in x]
d = sorted(math.log(b) - math.log(a) for a in x for b in y)
print("%.6f %.6f" % (math.expm1(d[23]) * 100, math.expm1(d[100 - 24]) * 100))')
	jq -e -s --arg want "$want" '.[] | select(.event == "comparison" and .metric == "bits_per_s") |
		(.change_pct | . * 1e6 | round) == 100000000 and
		("\(.ci_low_pct * 1e6 | round / 1e6) \(.ci_high_pct * 1e6 | round / 1e6)" as $got |
		 ($want | split(" ") | map(tonumber)) as $w |
		 ((.ci_low_pct - $w[0]) | fabs) < 1e-4 and ((.ci_high_pct - $w[1]) | fabs) < 1e-4)' <<<"$output"
	# 5 x 1.00G against 5 x 0.97G: the exact p of 5 + 5 runs can be no less than 2/252.
	side b5.jsonl - builtin nginx "1e9 1e9 1e9 1e9 1e9" "1 1 1 1 1"
	side n5.jsonl - builtin nginx "0.97e9 0.97e9 0.97e9 0.97e9 0.97e9" "1 1 1 1 1"
	run -0 --separate-stderr ff-bench compare --json b5.jsonl n5.jsonl
	jq -e -s '.[] | select(.event == "comparison" and .metric == "bits_per_s") |
		.p >= 0.0079 and (.p * 252 | round) == 2 and .method == "exact" and .change_pct < -2.9 and .change_pct > -3.1' <<<"$output"
	# An interval that reaches past the threshold on one side only: inconclusive, not no change.
	side b6.jsonl - builtin nginx "1.00e9 1.01e9 1.02e9 1.03e9 1.04e9 1.05e9 1.06e9 1.07e9 1.08e9 1.09e9" "$ONES"
	side n6.jsonl - builtin nginx "1.01e9 1.02e9 1.03e9 1.04e9 1.05e9 1.06e9 1.07e9 1.08e9 1.09e9 1.10e9" "$ONES"
	run -3 --separate-stderr ff-bench compare --threshold 2 b6.jsonl n6.jsonl
	has_line '^builtin +nginx +tcp .* \+1\.0% \[-[0-9.]+, \+[3-9]\.[0-9]\] .* inconclusive \[1\] \(n=10\+10\)$'
	has_line '^  \[1\] inconclusive: neither within nor beyond \+-2%$'
	run -0 --separate-stderr ff-bench compare --threshold 5 b6.jsonl n6.jsonl
	has_line '^builtin +nginx +tcp .* no change \(n=10\+10\)$'
	has_line '^The gate at 5%: every comparison decided, none worse \(exit 0\)$'
}

@test "compare: values <= 0 get no verdict, +-1.5e308 has a median, and medians and shift that disagree in sign are too spread to tell" {
	cd "$BATS_TEST_TMPDIR"
	side base.jsonl - builtin nginx "$TEN" "$ONES"
	# A negative throughput is refused by name (a results file's range), never judged.
	side neg.jsonl - builtin nginx "-8e9 -8e9 -8e9 -8e9 -8e9 -8e9 -8e9 -8e9 -8e9 -8e9" "$ONES"
	run -1 --separate-stderr ff-bench compare --threshold 2 base.jsonl neg.jsonl
	[ "$stderr" = "ff-bench: neg.jsonl:1: 'result.bits_per_s' is -8e+09: out of range (0 to 1e+15)" ]
	# A throughput of 0: no ratio, no verdict.
	side new.jsonl - builtin nginx "0 0 0 0 0 0 0 0 0 0" "$ONES"
	run -1 --separate-stderr ff-bench compare --threshold 2 base.jsonl new.jsonl
	has_line '^  \[1\] inconclusive: a value <= 0, no ratio to judge$'
	! has_line ' worse \(|-100' || false
	run -1 --separate-stderr ff-bench compare --json --threshold 2 base.jsonl new.jsonl
	jq -e -s '.[] | select(.event == "comparison" and .metric == "bits_per_s") |
		.verdict == "inconclusive: a value <= 0, no ratio to judge" and .change_pct == null and .gate == "undecided"' <<<"$output"
	# (The even-count median of +-1.5e308 is t/unit/stats-test's: such values are out of a file's range.)
	# Base: half at 1, half at 5 (median 3); new: 6 at 1.2, 4 at 6 (median
	# 1.2): the medians fall 60%, the shift of the log ratios is +20%.
	side sb.jsonl - builtin nginx "1e9 1e9 1e9 1e9 1e9 5e9 5e9 5e9 5e9 5e9" "$ONES"
	side sn.jsonl - builtin nginx "1.2e9 1.2e9 1.2e9 1.2e9 1.2e9 1.2e9 6e9 6e9 6e9 6e9" "$ONES"
	run -3 --separate-stderr ff-bench compare --threshold 2 sb.jsonl sn.jsonl
	has_line '^builtin +nginx +tcp +3\.00G .* +-60\.0% +\+20\.0% .* inconclusive \[1\] \(n=10\+10\)$'
	has_line '^  \[1\] inconclusive: too spread to tell \(the medians moved -60\.0%, the shift \+20\.0%\)$'
}

# conditions FILE JQ: every record of FILE changed by the jq filter JQ, in place.
conditions() {
	jq -c "$2" "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}

@test "compare: sides under different conditions are inconclusive with a word and a doubt event; absent fields are unknown, not a doubt" {
	cd "$BATS_TEST_TMPDIR"
	local slow="4.5e9 4.6e9 4.4e9 4.5e9 4.6e9 4.4e9 4.5e9 4.6e9 4.4e9 4.5e9"
	steady base.jsonl -
	side new.jsonl - builtin nginx "$slow" "$ONES"
	# The issue's: every new run unsteady, TCP timeouts, another run on its CPUs.
	conditions base.jsonl '.steadiness = {"steady": true} | .resources.tcp = {"timeouts": 0, "zero_window_probes": 0, "memory_pressures": 0} | .topology = {"cpus_other_runs": null}'
	cp new.jsonl plain-new.jsonl
	conditions new.jsonl '.steadiness = {"steady": false} | .resources.tcp = {"timeouts": 3, "zero_window_probes": 0, "memory_pressures": 0} | .topology = {"cpus_other_runs": [{"pid": 99, "cpus": "0"}]}'
	run -3 --separate-stderr ff-bench compare --threshold 2 base.jsonl new.jsonl
	! has_line ' worse \(' || false
	has_line '^  \[1\] inconclusive: different conditions: windows not steady in 0 of 10 runs in base, 10 of 10 in new; different conditions: TCP stalled \(timeouts, zero-window probes\) in 0 of 10 runs in base, 10 of 10 in new; different conditions: another run on the relays. CPUs in 0 of 10 runs in base, 10 of 10 in new$'
	run -3 --separate-stderr ff-bench compare --json --threshold 2 base.jsonl new.jsonl
	jq -e -s '[.[] | select(.event == "doubt")] | length == 1 and (.[0].doubt | test("windows not steady"))' <<<"$output"
	# Without those fields in new, they are unknown: the verdict stands.
	run -1 --separate-stderr ff-bench compare --threshold 2 base.jsonl plain-new.jsonl
	has_line ' worse \(n=10\+10\)$'
	# resources.machine: other processes' CPU, and steal.
	cp base.jsonl mb.jsonl
	cp plain-new.jsonl mn.jsonl
	conditions mb.jsonl '.resources.machine = {"load1": 0.2, "procs_running": 1, "steal_s": 0, "other_cpu_s": 0.4, "other_cpu_fraction": 0.02, "run_cpu_s": 9, "cpus": 2, "cpu_mhz": 2400}'
	conditions mn.jsonl '.resources.machine = {"load1": 3.1, "procs_running": 4, "steal_s": 0, "other_cpu_s": 7, "other_cpu_fraction": 0.35, "run_cpu_s": 9, "cpus": 2, "cpu_mhz": 2400}'
	run -3 --separate-stderr ff-bench compare --threshold 2 mb.jsonl mn.jsonl
	has_line '^  \[1\] inconclusive: different conditions: other processes took 2% of the CPUs in base, 35% in new \(medians\)$'
	conditions mn.jsonl '.resources.machine.other_cpu_fraction = 0.05 | .resources.machine.steal_s = 0.5'
	run -3 --separate-stderr ff-bench compare --threshold 2 mb.jsonl mn.jsonl
	has_line '^  \[1\] inconclusive: different conditions: steal took 0% of the window in base, 10% in new \(medians\)$'
	# The CPU lists: in the environment, and a doubt.
	conditions mn.jsonl '.resources.machine.steal_s = 0 | .environment.cpu_list = "0-1"'
	conditions mb.jsonl '.environment.cpu_list = "0-7"'
	run -3 --separate-stderr ff-bench compare --threshold 2 mb.jsonl mn.jsonl
	has_line "^  cpu_list +DIFFERS: base '0-7', new '0-1'$"
	has_line '^  \[1\] inconclusive: different conditions: CPUs 0-7 in base, 0-1 in new$'
}

@test "compare: runs in both files are not pooled, one label of two builds is said, rows without run_dir and time are counted once" {
	cd "$BATS_TEST_TMPDIR"
	side base.jsonl - builtin nginx "$TEN" "1.00 1.01 1.02 1.03 1.04 1.05 1.06 1.07 1.08 1.09"
	cp base.jsonl new.jsonl
	side new.jsonl - builtin nginx "7.2e9 7.2e9 7.2e9 7.2e9 7.2e9 7.2e9 7.2e9 7.2e9 7.2e9 7.2e9" "$ONES"
	run -3 --separate-stderr ff-bench compare --threshold 2 base.jsonl new.jsonl
	has_line '^  \[1\] inconclusive: 10 runs of new are in base too \(the same run directory and time\)$'
	! has_line ' no change \(' || false
	# An append after a rebuild: one label, two sha256s.
	side two.jsonl main builtin nginx "$TEN" "$ONES"
	jq -c '.build.sha256 = "ffff" + .build.sha256[4:] | .repeat += 10' two.jsonl >more.jsonl
	cat more.jsonl >>two.jsonl
	side other.jsonl fix builtin nginx "$TEN" "$ONES"
	run -3 --separate-stderr ff-bench compare --threshold 2 two.jsonl other.jsonl
	has_line "^  \\[1\\] inconclusive: base's label holds two builds \\(sha256 [0-9a-f]{12} and ffff[0-9a-f]{8}\\)$"
	# 3 + 3 rows without run_dir or time, each file doubled: still 3 + 3.
	side b3.jsonl - builtin nginx "8e9 8.1e9 8.2e9" "1 1 1"
	side n3.jsonl - builtin nginx "7e9 7.1e9 7.2e9" "1 1 1"
	for f in b3 n3; do
		jq -c 'del(.run_dir) | del(.time)' $f.jsonl >$f.x
		cat $f.x $f.x >$f-2.jsonl
	done
	run -3 --separate-stderr ff-bench compare --json --threshold 2 b3-2.jsonl n3-2.jsonl
	jq -e -s '.[] | select(.event == "comparison" and .metric == "bits_per_s") | .n_base == 3 and .n_new == 3 and .too_few' <<<"$output"
	grep -q 'b3-2.jsonl: 3 duplicate records' <<<"$stderr"
}

@test "compare: the geomean is per workload, of medians and of changes, and says it is not a verdict; two sides of one sha256 are warned" {
	cd "$BATS_TEST_TMPDIR"
	side base.jsonl - builtin nginx "$TEN" "$ONES"
	side base.jsonl - builtin skrouterd "$TEN" "$ONES"
	side base.jsonl - builtin-rr nginx "$TEN" "$ONES"
	side base.jsonl - builtin-rr skrouterd "$TEN" "$ONES"
	side new.jsonl - builtin nginx "$TEN" "$ONES"
	side new.jsonl - builtin skrouterd "$TEN" "$ONES"
	side new.jsonl - builtin-rr nginx "$TEN" "$ONES"
	side new.jsonl - builtin-rr skrouterd "$TEN" "$ONES"
	run -0 --separate-stderr ff-bench compare base.jsonl new.jsonl
	has_line '^builtin +geomean of 2 +8\.00G +8\.00G +\+0\.0% +\+0\.0% +geometric means, not a verdict$'
	has_line '^builtin-rr +geomean of 2 +8\.00G +8\.00G +\+0\.0% +\+0\.0% +geometric means, not a verdict$'
	run -0 --separate-stderr ff-bench compare --json base.jsonl new.jsonl
	jq -e -s '[.[] | select(.event == "geomean" and .metric == "bits_per_s") | .workload] == ["builtin", "builtin-rr"]' <<<"$output"
	# The same binary on both sides.
	side a.jsonl main builtin nginx "$TEN" "$ONES"
	jq -c '.build.label = "fix"' a.jsonl >b.jsonl
	run -0 --separate-stderr ff-bench compare a.jsonl b.jsonl
	grep -q '^ff-bench: base and new are the same build (sha256 [0-9a-f]\{16\})' <<<"$stderr"
	has_line '^  warning: base and new are the same build \(sha256 [0-9a-f]{16}\)$'
}
