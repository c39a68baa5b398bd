#!/usr/bin/env bash
# bench/summarize.sh - peak memory and time of `ff-bench summarize` and
# `ff-bench compare` on a large results file.
#
# usage: bench/summarize.sh [-m MB] [-k DIR] [FF_BENCH...]
#
# Writes two results files of about MB megabytes each (default 200), BASE and
# NEW, by repeating the rows of t/fixtures/ff-bench/{base,new}.jsonl with
# varied figures and repeat numbers, then runs each FF_BENCH (default
# bin/ff-bench; give an older build too to compare) on them under
# /usr/bin/time -v: summarize BASE, and compare BASE NEW. Prints one line
# per program and command: peak RSS (MiB) and elapsed seconds. -k keeps the
# files in DIR. The target, for this checkout's bin/ff-bench: a peak RSS of
# at most 64 MiB, whatever the file's size (the runs' figures, not the
# file, are kept). Exit status 1 when a command fails or misses it.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mb=200 keep=
while getopts m:k: o; do
	case $o in
	m) mb=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) echo "usage: ${0##*/} [-m MB] [-k DIR] [FF_BENCH...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- "$top/bin/ff-bench"
[ -x /usr/bin/time ] || { echo "${0##*/}: needs /usr/bin/time (GNU time)" >&2; exit 1; }

dir=${keep:-$(mktemp -d)}
mkdir -p "$dir"
[ -n "$keep" ] || trap 'rm -rf "$dir"' EXIT

# grow SIDE: rows of the fixture, again and again, each figure scaled by a
# varying factor (64 variants of each row, made once) and each repeat number
# new, until MB megabytes.
grow() {
	awk -v limit=$((mb * 1000000)) '
	{ row[NR] = $0 }
	END {
		srand(7)
		for (i = 1; i <= NR; i++)
			for (v = 0; v < 64; v++) {
				line = row[i]
				f = 0.9 + 0.2 * rand()
				out = ""
				while (match(line, /"(bits_per_s|ops_per_s|cpu_fraction)":[0-9.e+]+/)) {
					key = substr(line, RSTART, RLENGTH)
					split(key, kv, ":")
					out = out substr(line, 1, RSTART - 1) kv[1] ":" sprintf("%.6g", kv[2] * f)
					line = substr(line, RSTART + RLENGTH)
				}
				out = out line
				match(out, /"repeat":[0-9]+/)
				pre[i, v] = substr(out, 1, RSTART + 8)
				post[i, v] = substr(out, RSTART + RLENGTH)
			}
		for (pass = 0; size < limit; pass++)
			for (i = 1; i <= NR && size < limit; i++) {
				v = (pass * 7 + i) % 64
				out = pre[i, v] (pass * NR + i) post[i, v]
				print out
				size += length(out) + 1
			}
	}' "$top/t/fixtures/ff-bench/$1.jsonl" >"$dir/$1.jsonl"
}
grow base
grow new
echo "files: $(du -m "$dir/base.jsonl" | cut -f1) MB and $(du -m "$dir/new.jsonl" | cut -f1) MB, $(wc -l <"$dir/base.jsonl") and $(wc -l <"$dir/new.jsonl") rows; $(cut -d' ' -f1 /proc/loadavg) load on $(nproc) CPU$([ "$(nproc)" = 1 ] || echo s)"

st=0
measure() {
	local what=$1 out
	shift
	out=$(/usr/bin/time -v "$@" 2>&1 >/dev/null) || { echo "$what failed:"; echo "$out" | head -5; st=1; return; }
	awk -v what="$what" -v judge="$judge" '
		/Maximum resident set size/ { rss = $NF }
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
		END {
			missed = judge && rss > 64 * 1024
			printf("%-50s peak RSS %7.1f MiB   elapsed %6.2f s%s\n", what, rss / 1024, s,
			       missed ? "   MISSED: over 64 MiB" : "")
			exit missed
		}' <<<"$out" || st=1
}
for fb in "$@"; do
	judge=0
	[ "$(realpath "$fb")" != "$(realpath "$top/bin/ff-bench")" ] || judge=1
	measure "$fb summarize" "$fb" summarize "$dir/base.jsonl"
	measure "$fb compare" "$fb" compare "$dir/base.jsonl" "$dir/new.jsonl"
done
exit $st
