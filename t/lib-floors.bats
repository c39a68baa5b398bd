#!/usr/bin/env bats
# lib/ in two floors: the base (lib/ff_base.h: errors, memory, numbers,
# getopt, time, files, processes, JSON, ports, CPU sets, output files,
# probes) knows nothing of what is above it (lib/ff.h: the matrix, runs,
# relays, workloads, perf). Held on the objects `make` built, with nm
# (mk/lib-deps.sh): no base object references a symbol an upper one
# defines, and the base's own dependencies have no circle.

bats_require_minimum_version 1.5.0
load helper

# The base floor's files; every other lib/*.c is of the upper floor.
BASE="ff_err ff_mem ff_num ff_getopt ff_time ff_dir ff_file ff_proc ff_procfs ff_json ff_net ff_cpu ff_out ff_probe ff_elf"

is_base() {
	case " $BASE " in *" $1 "*) return 0 ;; esac
	return 1
}

@test "lib floors: each base file includes ff_base.h, never ff.h; headers stay under 800 lines" {
	local b h
	for b in $BASE; do
		[ -f "$TOP/lib/$b.c" ] || fail "lib/$b.c is gone: update BASE here"
		grep -q '^#include "ff_base.h"' "$TOP/lib/$b.c" || fail "lib/$b.c does not include ff_base.h"
		! grep -q '^#include "ff.h"' "$TOP/lib/$b.c" || fail "lib/$b.c, of the base floor, includes ff.h"
	done
	! grep -q '^#include "ff.h"' "$TOP/lib/ff_base.h" "$TOP/lib/ff_int.h" || fail "a base header includes ff.h"
	for h in "$TOP"/lib/*.h; do
		[ "$(wc -l <"$h")" -lt 800 ] || fail "$h has $(wc -l <"$h") lines"
	done
}

@test "lib floors: no base object calls into an upper one, and the base has no circle" {
	run -0 sh "$TOP/mk/lib-deps.sh" "$TOP"
	[ "${#lines[@]}" -gt 20 ] || fail "too few dependencies found: is lib/ built?"
	local deps="$output" line from to up="" pairs=""
	while IFS= read -r line; do
		from=${line%% -> *}
		to=${line#* -> }
		to=${to%%:*}
		is_base "$from" || continue
		if is_base "$to"; then
			pairs="$pairs$to $from"$'\n'
		else
			up="$up$line"$'\n'
		fi
	done <<<"$deps"
	[ -z "$up" ] || fail "base files call the upper floor: $up"
	# tsort fails on a loop (and names it).
	run -0 tsort <<<"$pairs"
	# ff_err.c is the very bottom: it calls no other file of lib/.
	! grep -q '^ff_err -> ' <<<"$deps" || fail "ff_err calls into lib: $(grep '^ff_err -> ' <<<"$deps")"
}
