#!/bin/bash
# doc/pictures.sh [OUTDIR [EXAMPLE...]] - the worked examples of flimflam-bench(1) and
# flimflam-workflow(7), run for real, and a picture of each: flimflam
# report draws its results, headless Chromium lays the page out, doc/crop.js
# keeps the one chart (and its legend), and its PNG goes to OUTDIR (default:
# doc/ of this checkout): sweep.png, per-connection.png, capacity.png,
# soak.png. Each example's output, the lines the man pages quote, is kept
# beside its results under a work directory it names at the end. EXAMPLE:
# sweep, per-connection, capacity or soak (default: all four).
#
# Needs this checkout built (make), nginx, gcc and chromium; about 6
# minutes on a 2-CPU machine. The figures are this machine's, at that
# moment: a rerun draws the same charts, not the same numbers.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
for example in "${@:2}"; do
	case $example in
	sweep | per-connection | capacity | soak) ;;
	*) echo "pictures.sh: $example: not an example (sweep, per-connection, capacity, soak)" >&2; exit 2 ;;
	esac
done
out=$(mkdir -p "${1:-$top/doc}" && cd "${1:-$top/doc}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/flimflam-pictures.XXXXXX")
export PATH="$top/bin:$PATH" FLIMFLAM_RUNS="$work/runs"
cd "$work"

# chrome ARGS...: headless Chromium, its profile and home in the work directory.
chrome() {
	local prof
	prof=$(mktemp -d "$work/chrome.XXXXXX")
	HOME="$prof" XDG_CONFIG_HOME="$prof" XDG_CACHE_HOME="$prof" \
		timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$prof" --virtual-time-budget=3000 --hide-scrollbars "$@" 2>"$prof.log"
}

# picture NAME SELECTOR [HASH]: the report of NAME.jsonl, the chart SELECTOR
# names alone (doc/crop.js), as OUTDIR/NAME.png; HASH the page's location hash.
picture() {
	local page="$work/$1.html" crop="$work/$1.crop.html" size
	flimflam report -o "$page" "$1.jsonl" >/dev/null
	python3 -c 'import sys
page, js, sel, out = sys.argv[1:]
s = open(page).read().replace("<html", "<html data-crop=\"%s\"" % sel.replace("\"", "&quot;"), 1)
open(out, "w").write(s.replace("</body>", "<script>\n" + open(js).read() + "</script>\n</body>"))' \
		"$page" "$top/doc/crop.js" "$2" "$crop"
	# The chart's size first, then a screenshot of a window that size.
	chrome --window-size=1200,1000 --dump-dom "file://$crop#${3:-}" >"$crop.dom"
	size=$(sed -n 's/.*data-crop-size="\([0-9]*,[0-9]*\)".*/\1/p' "$crop.dom")
	[ -n "$size" ] || { echo "pictures.sh: $1: no chart '$2' in the report" >&2; exit 1; }
	chrome --window-size="$size" --screenshot="$out/$1.png" "file://$crop#${3:-}"
	echo "$out/$1.png: $size px, $(wc -c <"$out/$1.png") bytes"
}

# A sweep: builtin-rr's transactions against the connections, with no relay and through nginx.
sweep() {
	flimflam bench -w builtin-rr -r none,nginx --jobs 1,10,100 --warmup 1 --duration 2 \
		--output sweep.jsonl | tee sweep.txt
	picture sweep 'svg[data-chart="sweep"][data-dim="jobs"][data-metric="ops_per_s"]'
}

# Cost per connection: nginx's RSS at the window's end against the connections it holds.
per-connection() {
	flimflam bench -w builtin -r nginx --jobs 10,100,1000 --warmup 1 --duration 2 \
		--output per-connection.jsonl | tee per-connection.txt
	picture per-connection 'svg[data-chart="sweep"][data-dim="jobs"][data-metric="relay_rss_end_bytes"]'
}

# Capacity at a latency target: the highest rate with p99 at most 100 ms, with no relay and through nginx.
capacity() {
	flimflam bench -w builtin-rr -r none,nginx --jobs 4 --rate 2000 --slo p99=100 --warmup 1 --duration 3 \
		--output capacity.jsonl | tee capacity.txt
	picture capacity 'svg[data-chart="sweep"][data-dim="rate_per_s"][data-metric="latency_p99_us"]'
}

# Soak: nginx leaking 200 kB a second on purpose (t/fixtures/leak-shim.c) over a 30 s window.
soak() {
	gcc -O2 -shared -fPIC -o leak-shim.so "$top/t/fixtures/leak-shim.c" -ldl
	printf '#!/bin/sh\nFF_SHIM_LEAK_BYTES_PER_S=200000 LD_PRELOAD=%s exec %s "$@"\n' \
		"$work/leak-shim.so" "$(command -v nginx)" >nginx-leaking
	chmod +x nginx-leaking
	flimflam bench -w builtin -r nginx --build "leaking=$work/nginx-leaking" --warmup 1 --duration 30 \
		--output soak.jsonl | tee soak.txt
	jq -r '.resources.relays[] | .growth.rss as $g | "\(.role) RSS \($g.per_h / 1048576 | round) MiB/h (95%: \($g.low_per_h / 1048576 | round) to \($g.high_per_h / 1048576 | round) MiB/h), \($g.verdict)"' \
		soak.jsonl | tee -a soak.txt
	picture soak 'svg[data-chart="interval"][data-metric="rss"]' 'run=0'
}

[ $# -gt 1 ] || set -- "${1:-}" sweep per-connection capacity soak
for example in "${@:2}"; do
	"$example"
done
echo "pictures.sh: the examples' output and results are in $work"
