# flimflam - plain GNU make; `make` builds in place, so bin/flimflam runs
# from the checkout.

PREFIX     ?= $(HOME)/.local
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/flimflam
DATADIR    ?= $(PREFIX)/share/flimflam
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/flimflam

CC      ?= cc
CFLAGS  ?= -O2 -g -fno-omit-frame-pointer
PKGS     = libpipeline jansson
override CFLAGS += -std=c11 -Wall -Wextra -Ilib -DFF_PREFIX='"$(PREFIX)"' \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm

LIBSRC   = $(wildcard lib/*.c)
LIBOBJ   = $(LIBSRC:.c=.o)
BUILTIN  = builtin/ff-builtin-client builtin/ff-builtin-server \
	   builtin/ff-builtin-rr-client builtin/ff-builtin-rr-server
# Each program and its objects. flimflam (the dispatcher) and ff-check are
# one file each; ff-run (the engine), ff-bench, ff-capture, ff-flame,
# ff-workload and ff-topology are built from several files each, with a
# private header, in bin/NAME.d/ (ff-topology's relay drivers: relay_NAME.o).
PROGS    = bin/flimflam bin/ff-run bin/ff-bench bin/ff-capture bin/ff-check bin/ff-flame \
	   bin/ff-topology bin/ff-workload bin/ff-history bin/ff-bisect
FF_RUN_OBJ = $(addprefix bin/ff-run.d/,main.o validate.o run.o builds.o summary.o hosts.o hosts_check.o stages.o offcpu.o soak.o)
FF_BENCH_OBJ = $(addprefix bin/ff-bench.d/,main.o bench.o options.o rows.o pool.o output.o run.o results.o load.o table.o compare.o sides.o cmprows.o verdict.o stats.o report.o report_stats.o paired.o auto.o sweep.o capacity.o explain.o explain_stats.o record.o limits.o)
FF_CAPTURE_OBJ = $(addprefix bin/ff-capture.d/,main.o check.o perf.o stat.o skstat.o resources.o machine.o sched.o wakeups.o lock.o)
FF_FLAME_OBJ = $(addprefix bin/ff-flame.d/,main.o input.o fold.o meta.o html.o changes.o)
FF_WORKLOAD_OBJ = $(addprefix bin/ff-workload.d/,main.o serve.o drive.o \
	workload_builtin.o workload_builtin_rr.o workload_iperf3.o workload_h2load.o \
	workload_h2load_h1.o)
FF_TOPOLOGY_OBJ = $(addprefix bin/ff-topology.d/,main.o chain.o conf.o tls.o env.o \
	relay_skrouterd.o relay_nghttpx.o relay_nginx.o relay_haproxy.o \
	relay_cmd.o relay_none.o)
# ff-history reads results files with ff-bench's results.o and takes its medians and shifts from stats.o.
FF_HISTORY_OBJ = $(addprefix bin/ff-history.d/,main.o db.o import.o detect.o series.o export.o report.o)
FF_HISTORY_LINK = $(FF_HISTORY_OBJ) bin/ff-bench.d/results.o bin/ff-bench.d/load.o bin/ff-bench.d/stats.o
# ff-bisect reads its benches' results with results.o and tests their rounds with paired.o.
FF_BISECT_OBJ = $(addprefix bin/ff-bisect.d/,main.o git.o build.o step.o call.o state.o)
FF_BISECT_LINK = $(FF_BISECT_OBJ) bin/ff-bench.d/results.o bin/ff-bench.d/load.o bin/ff-bench.d/stats.o bin/ff-bench.d/paired.o
PROGOBJ  = $(filter-out bin/ff-run.o bin/ff-bench.o bin/ff-capture.o bin/ff-flame.o bin/ff-workload.o bin/ff-history.o bin/ff-bisect.o bin/ff-topology.o,$(PROGS:=.o)) \
	   $(FF_RUN_OBJ) $(FF_BENCH_OBJ) $(FF_CAPTURE_OBJ) $(FF_FLAME_OBJ) $(FF_WORKLOAD_OBJ) $(FF_HISTORY_OBJ) $(FF_BISECT_OBJ) \
	   $(FF_TOPOLOGY_OBJ)
# Unit tests of pure functions, run by t/unit.bats (t/unit/machine by
# t/machine.bats; t/hist.bats builds its own; power-sim, the simulation of
# paired.c, is run by t/power.bats and bench/power.sh); never installed.
UNIT     = t/unit/stats-test t/unit/matrix t/unit/probe t/unit/cputime t/unit/machine t/unit/power-sim t/unit/edivisive-test t/unit/runspec t/unit/explain-test \
	   t/unit/bisect-sim

all: $(PROGS) $(BUILTIN) $(UNIT)

bin/flimflam:    bin/flimflam.o
bin/ff-run:      $(FF_RUN_OBJ)
bin/ff-bench:    $(FF_BENCH_OBJ)
bin/ff-capture:  $(FF_CAPTURE_OBJ)
bin/ff-check:    bin/ff-check.o
bin/ff-flame:    $(FF_FLAME_OBJ)
bin/ff-history:  $(FF_HISTORY_LINK)
bin/ff-history:  LDLIBS += -lsqlite3
bin/ff-bisect:   $(FF_BISECT_LINK)
bin/ff-topology: $(FF_TOPOLOGY_OBJ)
bin/ff-workload: $(FF_WORKLOAD_OBJ)
t/unit/stats-test: t/unit/stats-test.o bin/ff-bench.d/stats.o
t/unit/power-sim: t/unit/power-sim.o bin/ff-bench.d/paired.o bin/ff-bench.d/stats.o
t/unit/explain-test: t/unit/explain-test.o bin/ff-bench.d/explain_stats.o bin/ff-bench.d/stats.o
t/unit/bisect-sim: t/unit/bisect-sim.o bin/ff-bisect.d/call.o bin/ff-bench.d/paired.o bin/ff-bench.d/stats.o
t/unit/matrix:   t/unit/matrix.o
t/unit/probe:    t/unit/probe.o
t/unit/runspec:  t/unit/runspec.o
t/unit/cputime:  t/unit/cputime.o
t/unit/machine:  t/unit/machine.o
t/unit/edivisive-test: t/unit/edivisive-test.o bin/ff-history.d/detect.o bin/ff-bench.d/stats.o

lib/libff.a: $(LIBOBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBOBJ) $(PROGOBJ) $(BUILTIN:=.o) $(UNIT:=.o): lib/ff.h lib/ff_base.h lib/ff_matrix.h lib/ff_runspec.h lib/ff_hist.h
$(FF_BENCH_OBJ) t/unit/stats-test.o t/unit/power-sim.o t/unit/explain-test.o: bin/ff-bench.d/ff-bench.h
bin/ff-bench.d/report.o bin/ff-bench.d/report_stats.o: bin/ff-bench.d/report.h
$(FF_CAPTURE_OBJ): bin/ff-capture.d/ff-capture.h
$(FF_FLAME_OBJ): bin/ff-flame.d/ff-flame.h
$(FF_WORKLOAD_OBJ): bin/ff-workload.d/ff-workload.h
$(FF_TOPOLOGY_OBJ): bin/ff-topology.d/ff-topology.h
$(FF_HISTORY_OBJ) t/unit/edivisive-test.o: bin/ff-history.d/ff-history.h bin/ff-bench.d/ff-bench.h
$(FF_RUN_OBJ): bin/ff-run.d/ff-run.h
$(FF_BISECT_OBJ) t/unit/bisect-sim.o: bin/ff-bisect.d/ff-bisect.h bin/ff-bench.d/ff-bench.h
$(LIBOBJ): lib/ff_int.h

# The prefix the programs look under when not beside their data (FF_PREFIX,
# in lib/ff_file.o): a stamp holding PREFIX, rewritten only when PREFIX
# changes, rebuilds that object, so `make install PREFIX=...` after a plain
# `make` installs programs that know where they are.
lib/prefix.stamp: FORCE
	@if [ "$$(cat $@ 2>/dev/null)" != '$(PREFIX)' ]; then echo '$(PREFIX)' >$@; fi

lib/ff_file.o: lib/prefix.stamp

$(PROGS) $(UNIT): lib/libff.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) lib/libff.a $(LDLIBS)

builtin/ff-builtin-%: builtin/%.o lib/libff.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libff.a $(LDLIBS) -lpthread

# The request/response client's two paths (builtin/rr.h).
builtin/ff-builtin-rr-client: builtin/rr-client.o builtin/rr-many.o lib/libff.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) lib/libff.a $(LDLIBS) -lpthread
builtin/rr-client.o builtin/rr-many.o: builtin/rr.h

# Installs missing system packages (apt-get or dnf); does nothing when all is there.
deps:
	@sh mk/deps.sh

# The suite, after lint: a lint finding counts as one failed test in the
# suite's last line, and the suite runs either way.
check: deps all
	@$(MAKE) --no-print-directory lint; FF_LINT_STATUS=$$? sh t/run

# Static checks, failing on any finding: shellcheck over the shell scripts,
# and every C source compiled with -Wshadow -Werror. The compile is syntax
# only and writes nothing, so it leaves the in-place build alone.
LINT_SH = $(wildcard bench/*.sh doc/*.sh mk/*.sh t/*.bash t/fixtures/*/*.sh) t/run .ci/run
LINT_C  = $(LIBSRC) $(wildcard bin/*.c bin/*.d/*.c builtin/*.c t/unit/*.c)
lint: deps
	@st=0; shellcheck -x $(LINT_SH) || st=1; \
	for f in $(LINT_C); do \
		$(CC) $(CFLAGS) -Wshadow -Werror -fsyntax-only "$$f" || st=1; \
	done; \
	if [ $$st -eq 0 ]; then echo "lint: shellcheck and -Wshadow found nothing"; \
	else echo "lint: see the findings above" >&2; fi; exit $$st

# flimflam's main job on a fresh machine: the relay matrix.
bench: deps all
	bin/flimflam bench

# The suite again, built with AddressSanitizer and UBSan.
ASAN_CFLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
check-asan: deps
	$(MAKE) clean
	$(MAKE) all CFLAGS='$(ASAN_CFLAGS)'
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		FF_TEST_CFLAGS='$(ASAN_CFLAGS)' sh t/run; s=$$?; $(MAKE) clean; $(MAKE) all; exit $$s

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DATADIR)
	install -m 755 $(PROGS) $(DESTDIR)$(BINDIR)
	install -m 755 $(BUILTIN) $(DESTDIR)$(LIBEXECDIR)
	cp -R relay-conf share $(DESTDIR)$(DATADIR)/
	for s in 1 5 7; do \
		install -d $(DESTDIR)$(MANDIR)/man$$s && \
		install -m 644 man/man$$s/*.$$s $(DESTDIR)$(MANDIR)/man$$s || exit 1; \
	done
	install -d $(DESTDIR)$(DOCDIR)
	install -m 644 doc/*.png $(DESTDIR)$(DOCDIR)

# Then the directories install made, those left empty (another program in
# BINDIR keeps it); nothing above PREFIX.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(PROGS)))
	rm -rf $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)
	rm -f $(patsubst man/%,$(DESTDIR)$(MANDIR)/%,$(wildcard man/man[157]/*.[157]))
	@for d in '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(MANDIR)/man1' '$(DESTDIR)$(MANDIR)/man5' \
		'$(DESTDIR)$(MANDIR)/man7' '$(DESTDIR)$(MANDIR)' '$(DESTDIR)$(PREFIX)/libexec' \
		'$(DESTDIR)$(PREFIX)/share/doc' '$(DESTDIR)$(PREFIX)/share' \
		'$(DESTDIR)$(PREFIX)'; do [ ! -d "$$d" ] || rmdir "$$d" 2>/dev/null || true; done

clean:
	rm -f lib/*.o lib/libff.a lib/prefix.stamp bin/*.o bin/*.d/*.o builtin/*.o \
		t/unit/*.o $(PROGS) $(BUILTIN) $(UNIT)

# flimflam's own performance (bench/README.md): every script, even after one
# misses its target; the status says whether any did.
BENCH_SELF = builtin rr turnaround owncpu placement scaling flame summarize afterwindow history
bench-self: all
	@st=0; for s in $(BENCH_SELF); do [ -f bench/$$s.sh ] || continue; \
		echo "== bench/$$s.sh"; bash bench/$$s.sh || st=1; echo; done; exit $$st

.PHONY: all deps lint check check-asan bench bench-self install uninstall clean FORCE
.SECONDARY:
