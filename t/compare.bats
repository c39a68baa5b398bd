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
