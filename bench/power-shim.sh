#!/bin/sh
# bench/power-shim.sh DIR [TURNS] - build bench/power-shim.c into
# DIR/power-shim.so and print what one turn of its loop costs here, in
# nanoseconds of CPU time, timed over TURNS turns (default 200000000).
# For bench/power.sh and t/bisect.bats, which preload the shim with
# FF_SHIM_LOOPS_PER_KB turns per KiB written.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: bench/power-shim.sh DIR [TURNS]" >&2
	exit 2
fi
dir=$1 turns=${2:-200000000}
case $turns in
'' | *[!0-9]*) echo "power-shim.sh: TURNS: '$turns' is not a whole number" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"
cc -O2 -shared -fPIC -o "$dir/power-shim.so" "$top/bench/power-shim.c" -ldl
cat >"$dir/cal.c" <<C
#include <stdio.h>
#include <time.h>
unsigned long power_shim_spin(unsigned long n);
int main(void) {
	struct timespec a, b;
	unsigned long n = ${turns}UL;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	power_shim_spin(n);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("%.6f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
C
cc -O2 -o "$dir/cal" "$dir/cal.c" "$dir/power-shim.so" -Wl,-rpath,"$dir"
"$dir/cal"
