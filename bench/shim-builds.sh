# shellcheck shell=bash
# bench/shim-builds.sh - two nginx "builds" that differ by a known CPU cost
# per byte written (bench/power-shim.c preloaded), and the figures made of
# their benches; sourced by bench/power.sh, bench/together.sh and
# t/fixtures/bisect/fixture.sh, not run.

# shim_wrapper FILE LOOPS SO NGINX: FILE, an executable that runs NGINX
# with the shim SO preloaded, LOOPS turns of its loop per KiB written.
shim_wrapper() {
	printf '#!/bin/sh\nFF_SHIM_LOOPS_PER_KB=%s LD_PRELOAD=%s exec %s "$@"\n' "$2" "$3" "$4" >"$1"
	chmod +x "$1"
}

# shim_loops PCT PERGB NS_PER_LOOP: the turns per KiB written that add PCT%
# to a relay CPU per GB of PERGB. builtin's counted byte crosses each of the
# two relays twice (its echo too): 4 bytes written per byte counted.
shim_loops() {
	awk -v c="$1" -v g="$2" -v l="$3" 'BEGIN { printf "%.3f", c / 100 * g / 4 * 1024 / l }'
}

# shim_pergb RESULTS: the median relay CPU per GB (R1 + R2) of a bench's ok runs.
shim_pergb() {
	jq -s '[.[] | select(.status == "ok") | ([.resources.relays[].cpu_fraction] | add) /
		(.result.bits_per_s / 8e9)] | sort | .[length / 2 | floor]' "$1"
}

# shim_pairs RESULTS: the log ratio of relay CPU per GB of each round's two
# builds (the second label's over the first's), a line each; a round is its
# bench's (the seed) and its number, so appended benches pair apart.
shim_pairs() {
	jq -rs '[.[] | select(.status == "ok") | {r: [.seed, .repeat], b: .build.label,
		v: (([.resources.relays[].cpu_fraction] | add) / (.result.bits_per_s / 8e9))}] |
		group_by(.r) | map(select(length == 2) | sort_by(.b)) | .[] | (.[1].v / .[0].v | log)' "$1"
}
