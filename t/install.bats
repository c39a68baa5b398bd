# make install and uninstall: the installed programs find their data and
# the builtin workload under the prefix, and DESTDIR is honoured.
bats_require_minimum_version 1.5.0
load helper

@test "install: DESTDIR and PREFIX; the installed flimflam runs; uninstall removes it" {
	skip_unless_program nginx
	local dest="$BATS_TEST_TMPDIR/dest"
	run -0 make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/opt/ff
	for p in flimflam ff-workload ff-topology ff-capture ff-flame ff-check ff-bench; do
		[ -x "$dest/opt/ff/bin/$p" ]
	done
	[ -x "$dest/opt/ff/libexec/flimflam/ff-builtin-client" ]
	[ -x "$dest/opt/ff/libexec/flimflam/ff-builtin-server" ]
	[ -f "$dest/opt/ff/share/flimflam/relay-conf/nginx-tcp.conf" ]
	[ -f "$dest/opt/ff/share/flimflam/share/flamegraph/flamegraph.js" ]
	# Installed, away from the checkout: bin/ is not on PATH here.
	PATH="$dest/opt/ff/bin:/usr/bin:/bin:/usr/sbin:/sbin" run_steady \
		"$dest/opt/ff/bin/flimflam" run --json -r nginx --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0'
	event_ok "$BATS_TEST_TMPDIR/ev" start '.tool | startswith("ff-")'
	run -0 make -s -C "$TOP" uninstall DESTDIR="$dest" PREFIX=/opt/ff
	[ -z "$(find "$dest" -type f)" ]
}
