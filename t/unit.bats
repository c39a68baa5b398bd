#!/usr/bin/env bats
# Unit tests of pure functions, as C programs `make` builds in t/unit/:
# ff-bench's statistics (t/unit/stats-test.c, against values computed
# independently by t/unit/mw-reference.py and by hand), and the matrix of
# lib/ff_matrix.c held against the tables of man/man7/flimflam-matrix.7 (t/unit/matrix.c), what
# a probe of lib takes of a program's output (t/unit/probe.c), and the CPU
# time lib reads of a process (t/unit/cputime.c), and a run's stage argv
# read back by the rows that wrote it (t/unit/runspec.c), and explain's
# test of per-function costs on synthetic A/A and shifted runs
# (t/unit/explain-test.c), and ff-bisect's calls on A/A rounds looked at
# after every round (t/unit/bisect-sim.c).

bats_require_minimum_version 1.5.0
load helper

@test "ff-bench statistics: Mann-Whitney U, exact and normal p with ties, Hodges-Lehmann intervals, Benjamini-Hochberg, medians and spreads" {
	# Every check ran: 10 tests of 3 values, 5 single values, 5 stats of 3,
	# 4 intervals of 4 values and 1 of 3, 6 critical values, 7 q-values,
	# and the random samples against brute force.
	unit_ok stats-test 84
}

@test "ff-bench statistics: the reference values still come out of the reference script" {
	command -v python3 >/dev/null || skip "python3 is not on PATH"
	run -0 python3 "$TOP/t/unit/mw-reference.py"
	assert_line "inter4 exact (6.0, 0.6857142857142857)"
	assert_line "mid5 exact (10.0, 0.6904761904761905)"
	assert_line "ties4 exact 3 0.2857142857142857"
	assert_line "five exact 0 0.0079365079365079361"
	assert_line "ties4 normal 3 0.17203370892182296"
	assert_line "ties6 normal 3 0.017477872056174029"
	assert_line "big normal 210 0.0001439883723027259"
}

@test "ff-bench statistics: the Hodges-Lehmann and Benjamini-Hochberg reference values come out of their script" {
	command -v python3 >/dev/null || skip "python3 is not on PATH"
	run -0 python3 "$TOP/t/unit/hl-reference.py"
	assert_line "sep5 (5, 3, (2, 8))"
	assert_line "sep3 (3, 0, None)"
	assert_line "issue (0.5, 24, (0, 0.5))"
	assert_line "mixed10 (6.25, 24, (3.5, 9))"
	assert_line "big (10.5, 341, (5.5, 15.5))"
	assert_line "k_exact (4, 4) 1"
	assert_line "k_exact (5, 8) 7"
	assert_line "k_exact (10, 10) 24"
	assert_line "k_normal (31, 31) 341"
	assert_line "bh [0.02, 0.04, 0.04, 0.02] [0.5, 0.03, 0.03]"
}

# man_table PAGE HEADER: the rows of the table of man/PAGE whose header
# (the comment above it) starts with HEADER, one per line: the tag, then
# each cell after it, separated by '|'.
man_table() {
	man_text "$1" | awk -v h="$2" '
		function out() { if (row != "") print row; row = "" }
		index($0, ".\\\" table: " h) == 1 { on = 1; next }
		!on { next }
		/^\.TP/ { out(); tag = 1; next }
		/^\.br/ { next }
		/^\./ { out(); exit }
		tag { row = $0; tag = 0; next }
		{ sub(/^[a-z0-9]+: /, ""); row = row "|" $0 }
		END { out() }'
}

@test "matrix table: the workloads and relays are the matrix page's, with its protocols and programs, in the options' order" {
	run -0 "$TOP/t/unit/matrix"
	local table=$output
	run -0 man_table man7/flimflam-matrix.7 'workload |'
	[ "${#lines[@]}" -ge 4 ]
	local want=() w server client protos row
	for row in "${lines[@]}"; do
		IFS='|' read -r w server client protos <<<"$row"
		want+=("$w")
		got=$(awk -v w="$w" '$1 == "workload" && $2 == w' <<<"$table")
		[ -n "$got" ] || { echo "the page's workload $w is not in the table"; return 1; }
		read -r _ _ gprotos gserver gclient <<<"$got"
		[ "$gprotos" = "${protos//, /,}" ] || { echo "$w: table $gprotos, page $protos"; return 1; }
		if [ "$gserver" = own ]; then
			[[ "$server" == "flimflam's own"* && "$client" == "flimflam's own"* ]]
		else
			[[ "$server" == *"$gserver"* ]] || { echo "$w: server $gserver not in '$server'"; return 1; }
			[[ "$client" == *"$gclient"* || "$client" == "the same"* ]] ||
				{ echo "$w: client $gclient not in '$client'"; return 1; }
		fi
	done
	[ "$(awk '$1 == "workload" { print $2 }' <<<"$table" | paste -sd' ')" = "${want[*]}" ]
	run -0 man_table man7/flimflam-matrix.7 'relay | tcp'
	want=()
	for row in "${lines[@]}"; do
		want+=("${row%%|*}")
	done
	# The same relays (the page's table has its own order; the table's is the options').
	[ "$(awk '$1 == "relay" && $3 == "tcp" { print $2 }' <<<"$table" | sort | paste -sd' ')" = \
	  "$(printf '%s\n' "${want[@]}" | sort | paste -sd' ')" ]
	# bench's page names them as its defaults, in the table's order.
	workloads=$(awk '$1 == "workload" { print $2 }' <<<"$table" | paste -sd,)
	relays=$(awk '$1 == "relay" && $3 == "tcp" { print $2 }' <<<"$table" | paste -sd,)
	man_text man1/flimflam-bench.1 | grep -A4 -xF -- '-w, --workloads' | grep -qxF "default: $workloads"
	man_text man1/flimflam-bench.1 | grep -A4 -xF -- '-r, --relays' | grep -qxF "default: $relays"
}

@test "matrix table: every workload/relay/protocol combination is the matrix page's, and says why not" {
	run -0 "$TOP/t/unit/matrix"
	local table=$output row w server client protos r cells p yes n=0 ncarried=0
	local -A wprotos carries
	run -0 man_table man7/flimflam-matrix.7 'workload |'
	for row in "${lines[@]}"; do
		IFS='|' read -r w server client protos <<<"$row"
		wprotos[$w]=",${protos//, /,},"
	done
	run -0 man_table man7/flimflam-matrix.7 'relay | tcp'
	for row in "${lines[@]}"; do
		IFS='|' read -r r cells <<<"$row"
		IFS='|' read -r tcp http1 http2 <<<"$cells"
		carries[$r:tcp]=$tcp carries[$r:http1]=$http1 carries[$r:http2]=$http2
	done
	for w in "${!wprotos[@]}"; do
		for key in "${!carries[@]}"; do
			r=${key%%:*} p=${key#*:}
			yes=no
			[[ ${wprotos[$w]} == *",$p,"* && ${carries[$key]} != no ]] && yes=yes
			got=$(awk -v w="$w" -v r="$r" -v p="$p" '$1 == "carries" && $2 == w && $3 == r && $4 == p' <<<"$table")
			if [ $yes = yes ]; then
				[ "$got" = "carries $w $r $p yes " ] || { echo "want yes: $got"; return 1; }
				ncarried=$((ncarried + 1))
			else
				[ "$got" = "carries $w $r $p no workload '$w' over relay '$r' with protocol '$p' is not supported" ] ||
					{ echo "want no: $got"; return 1; }
			fi
			n=$((n + 1))
		done
	done
	[ "$n" -eq "$(grep -c '^carries ' <<<"$table")" ]
	# bench's page: "flimflam bench  # the whole matrix, 19 cases": relay cmd only with --relay-cmd.
	ncmd=$(grep -c '^carries [^ ]* cmd [^ ]* yes' <<<"$table")
	man_text man1/flimflam-bench.1 | grep -qE "^flimflam bench +# the whole matrix, $((ncarried - ncmd)) cases$"
	# Without a workload: does the relay carry the protocol at all.
	for key in "${!carries[@]}"; do
		r=${key%%:*} p=${key#*:}
		got=$(awk -v r="$r" -v p="$p" '$1 == "relay" && $2 == r && $3 == p' <<<"$table")
		if [ "${carries[$key]}" = no ]; then
			[ "$got" = "relay $r $p no relay '$r' does not carry protocol '$p'" ] || { echo "$got"; return 1; }
		else
			[ "$got" = "relay $r $p yes " ] || { echo "$got"; return 1; }
		fi
	done
}

@test "matrix table: the other relays, for a relay missing from PATH, are every other row" {
	run -0 "$TOP/t/unit/matrix"
	local table=$output r all
	all=$(awk '$1 == "relay" && $3 == "tcp" { print $2 }' <<<"$table")
	for r in $all; do
		[ "$(awk -v r="$r" '$1 == "others" && $2 == r { $1 = $2 = ""; sub(/^ +/, ""); print }' <<<"$table")" = \
		  "$(grep -vx "$r" <<<"$all" | paste -sd, | sed 's/,/, /g')" ]
	done
}

@test "probes: a program's whole output is taken, past the first 4 KiB read, up to the 1 MiB limit" {
	[ -x "$TOP/t/unit/probe" ] || fail "t/unit/probe is not built (make builds it)"
	# skmanage's connection list of a router in a chain of 3 is more than 4 KiB.
	for n in 100 4095 4096 4097 5000 70000 1048575; do
		run -0 "$TOP/t/unit/probe" sh -c "head -c $n /dev/zero | tr '\\0' x"
		[ "$output" = "bytes $n status 0" ] || { echo "$n: $output"; false; }
	done
	# Past the limit, it stops at the read that reaches it (not all 2 MB).
	run -0 "$TOP/t/unit/probe" sh -c "head -c 2000000 /dev/zero | tr '\\0' x"
	read -r _ got _ <<<"$output"
	[ "$got" -ge 1048576 ] && [ "$got" -lt 2000000 ] || { echo "$output"; false; }
}

@test "CPU time of a process: to the nanosecond, not in 10 ms ticks (4 ms burnt reads as 4 ms)" {
	[ -x "$TOP/t/unit/cputime" ] || fail "t/unit/cputime is not built (make builds it)"
	run -0 "$TOP/t/unit/cputime"
	echo "$output"
	# The kernel's clock of the process against lib's read of /proc: within
	# 1 ms (ticks would read 0 or 10 ms for the 4 ms burnt).
	awk '$1 == "lib" && $3 == "clock" && $4 >= 0.004 && ($2 - $4 < 0.001 && $4 - $2 < 0.001) { ok = 1 } END { exit !ok }' <<<"$output"
}

@test "a run's options: a stage's argv, read back by the same rows, is the same run; ranges are the rows'; the busiest nginx worker's share of the jobs" {
	unit_ok runspec 16
}

@test "ff-bench explain's statistics: A/A draws of per-run costs find no changed function in 19 of 20 (and about 5% of many); a shifted function is found, alone" {
	[ -x "$TOP/t/unit/explain-test" ] || fail "t/unit/explain-test is not built (make builds it)"
	run -0 "$TOP/t/unit/explain-test"
	assert_line "0 failures"
	refute_line --partial "not ok"
	[ "$(grep -c '^ok: ' <<<"$output")" -eq 3 ]
}

@test "bisect's calls (bin/ff-bisect.d/call.c): looking after every round, A/A draws are called different, and a midpoint shown on the wrong side, under 5%; the signed-rank test looked at as often errs more" {
	unit_ok bisect-sim 4
	echo "$output"
	# 1000 draws of 36 rounds, looked at after each from the 3rd.
	assert_line "draws=1000 rounds=36 sd_pct=5"
	awk -F= '$1 == "aa_conf_seq_fp" && $2 < 0.05 { ok = 1 } END { exit !ok }' <<<"$output"
}
