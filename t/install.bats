# make install and uninstall: the installed programs find their data and
# the builtin workload under the prefix, and DESTDIR is honoured.
bats_require_minimum_version 1.5.0
load helper

# A copy of the checkout to build and install from: make with another
# PREFIX rebuilds the programs, and the checkout's own are in use by the
# other test files meanwhile (two at a time). Its built files come along
# with their times, so make only redoes what PREFIX changes.
setup_file() {
	export SRC="$BATS_FILE_TMPDIR/src"
	mkdir -p "$SRC"
	tar -C "$TOP" --exclude=./.git --exclude=./t/artifacts -cf - . | tar -C "$SRC" -xf -
}

@test "install: DESTDIR and PREFIX; the installed flimflam runs; uninstall removes it" {
	skip_unless_program nginx
	local dest="$BATS_TEST_TMPDIR/dest"
	run -0 make -s -C "$SRC" install DESTDIR="$dest" PREFIX=/opt/ff
	for p in flimflam ff-run ff-workload ff-topology ff-capture ff-flame ff-check ff-bench ff-history ff-bisect; do
		[ -x "$dest/opt/ff/bin/$p" ]
	done
	[ -x "$dest/opt/ff/libexec/flimflam/ff-builtin-client" ]
	[ -x "$dest/opt/ff/libexec/flimflam/ff-builtin-server" ]
	[ -f "$dest/opt/ff/share/flimflam/relay-conf/nginx-tcp.conf" ]
	[ -f "$dest/opt/ff/share/flimflam/share/flamegraph/flamegraph.js" ]
	[ -f "$dest/opt/ff/share/flimflam/share/history/history.js" ]
	# Every man page, under PREFIX/share/man.
	local page n=0
	for page in "$SRC"/man/man[157]/*.[157]; do
		cmp "$page" "$dest/opt/ff/share/man/${page#"$SRC/man/"}"
		n=$((n + 1))
	done
	[ "$n" -ge 30 ]
	[ -f "$dest/opt/ff/share/man/man1/flimflam-run.1" ]
	[ -f "$dest/opt/ff/share/man/man5/flimflam-events.5" ]
	[ -f "$dest/opt/ff/share/man/man7/flimflam-matrix.7" ]
	# The worked examples' pictures, where the man pages say they are.
	for page in sweep per-connection capacity soak; do
		cmp "$SRC/doc/$page.png" "$dest/opt/ff/share/doc/flimflam/$page.png"
	done
	if command -v man >/dev/null; then
		MANPATH="$dest/opt/ff/share/man" run -0 man -w flimflam-run
		[ "$output" = "$dest/opt/ff/share/man/man1/flimflam-run.1" ]
	fi
	# Installed, away from the checkout: bin/ is not on PATH here.
	PATH="$dest/opt/ff/bin:/usr/bin:/bin:/usr/sbin:/sbin" run_steady \
		"$dest/opt/ff/bin/flimflam" run --json -r nginx --warmup 0 --duration 1
	echo "$output" >"$BATS_TEST_TMPDIR/ev"
	event_ok "$BATS_TEST_TMPDIR/ev" result '.bits_per_s > 0'
	event_ok "$BATS_TEST_TMPDIR/ev" start '.tool | startswith("ff-")'
	run -0 make -s -C "$SRC" uninstall DESTDIR="$dest" PREFIX=/opt/ff
	[ -z "$(find "$dest" -type f)" ]
}

@test "install: PREFIX after a plain make is the prefix the installed programs look under" {
	skip_unless_program nginx
	local tmp="$BATS_TEST_TMPDIR" dest="$BATS_TEST_TMPDIR/dest" pfx="$BATS_TEST_TMPDIR/pfx"
	# A plain make first, with its default prefix (under this HOME, which has none).
	HOME="$tmp/home" run -0 make -s -C "$SRC"
	HOME="$tmp/home" run -0 make -s -C "$SRC" install DESTDIR="$dest" PREFIX="$pfx"
	# Packaged: the data and helpers land in PREFIX, the programs are run
	# from elsewhere, so only the prefix compiled into them finds the rest.
	mkdir -p "$pfx" "$tmp/elsewhere"
	mv "$dest$pfx/share" "$dest$pfx/libexec" "$pfx/"
	cp "$dest$pfx"/bin/* "$tmp/elsewhere/"
	PATH="$tmp/elsewhere:/usr/bin:/bin:/usr/sbin:/sbin" run_steady \
		"$tmp/elsewhere/flimflam" run --json -r nginx --warmup 0 --duration 1
	echo "$output" >"$tmp/ev"
	event_ok "$tmp/ev" result '.bits_per_s > 0'
}

@test "install: MANDIR puts the man pages elsewhere, and uninstall removes them there" {
	local dest="$BATS_TEST_TMPDIR/dest"
	run -0 make -s -C "$SRC" install DESTDIR="$dest" PREFIX=/opt/ff MANDIR=/opt/man
	[ -f "$dest/opt/man/man1/flimflam.1" ]
	[ -f "$dest/opt/man/man1/ff-topology.1" ]
	[ ! -e "$dest/opt/ff/share/man" ]
	run -0 make -s -C "$SRC" uninstall DESTDIR="$dest" PREFIX=/opt/ff MANDIR=/opt/man
	[ -z "$(find "$dest" -type f)" ]
	[ ! -e "$dest/opt/man/man1" ]
}

@test "uninstall: removes the directories install made when empty, not a BINDIR with other files" {
	local dest="$BATS_TEST_TMPDIR/dest"
	run -0 make -s -C "$SRC" install DESTDIR="$dest" PREFIX=/opt/ff
	run -0 make -s -C "$SRC" uninstall DESTDIR="$dest" PREFIX=/opt/ff
	[ ! -e "$dest/opt/ff" ]
	[ -d "$dest/opt" ]
	# Another program in PREFIX/bin: that directory stays, with it.
	run -0 make -s -C "$SRC" install DESTDIR="$dest" PREFIX=/opt/ff
	echo mine >"$dest/opt/ff/bin/mine"
	run -0 make -s -C "$SRC" uninstall DESTDIR="$dest" PREFIX=/opt/ff
	[ "$(find "$dest/opt/ff" | sort)" = "$dest/opt/ff
$dest/opt/ff/bin
$dest/opt/ff/bin/mine" ]
}
