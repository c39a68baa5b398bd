#!/bin/sh
# The dependencies between lib/'s files, from their objects (build first):
# one line "a -> b: sym..." for each object lib/a.o that references
# symbols defined in lib/b.o (nm's undefined symbols against its defined
# ones); objects of sources no longer there are left out. t/lib-floors.bats holds the floors to it.
#
# usage: sh mk/lib-deps.sh [TOP]
set -eu
cd "${1:-.}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in lib/*.c; do
	b=$(basename "$c" .c)
	o=lib/$b.o
	[ -f "$o" ] || { echo "lib-deps: $o is not built (make)" >&2; exit 1; }
	nm -g --defined-only "$o" | awk -v f="$b" '$2 ~ /^[TDBRCV]$/ { print $3, f }' >>"$tmp/def"
	nm -u "$o" | awk -v f="$b" '{ print f, $2 }' >>"$tmp/und"
done
awk 'NR == FNR { d[$1] = $2; next } ($2 in d) && d[$2] != $1 { print $1 " -> " d[$2] ": " $2 }' \
	"$tmp/def" "$tmp/und" | sort |
	awk -F': ' '$1 == p { s = s " " $2; next }
		{ if (p != "") print p ": " s; p = $1; s = $2 }
		END { if (p != "") print p ": " s }'
