# flimflam - plain GNU make; `make` builds in place, so bin/flimflam runs
# from the checkout.

PREFIX     ?= $(HOME)/.local
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/flimflam
DATADIR    ?= $(PREFIX)/share/flimflam

CC      ?= cc
CFLAGS  ?= -O2 -g -fno-omit-frame-pointer
PKGS     = libpipeline jansson
override CFLAGS += -std=c11 -Wall -Wextra -Ilib -DFF_PREFIX='"$(PREFIX)"' \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm

LIBSRC   = $(wildcard lib/*.c)
LIBOBJ   = $(LIBSRC:.c=.o)
PROGS    = $(patsubst %.c,%,$(wildcard bin/*.c))
BUILTIN  = builtin/ff-builtin-client builtin/ff-builtin-server \
	   builtin/ff-builtin-rr-client builtin/ff-builtin-rr-server

all: $(PROGS) $(BUILTIN)

lib/libff.a: $(LIBOBJ)
	$(AR) rcs $@ $^

$(LIBOBJ) $(PROGS:=.o) $(BUILTIN:=.o): lib/ff.h

bin/%: bin/%.o lib/libff.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libff.a $(LDLIBS)

builtin/ff-builtin-%: builtin/%.o lib/libff.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libff.a $(LDLIBS) -lpthread

# Installs missing system packages (apt-get or dnf); does nothing when all is there.
deps:
	@sh mk/deps.sh

check: deps all
	sh t/run

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

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(PROGS)))
	rm -rf $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DATADIR)

clean:
	rm -f lib/*.o lib/libff.a bin/*.o builtin/*.o $(PROGS) $(BUILTIN)

# flimflam's own performance (bench/README.md): every script, even after one
# misses its target; the status says whether any did.
BENCH_SELF = builtin rr turnaround owncpu placement scaling flame
bench-self: all
	@st=0; for s in $(BENCH_SELF); do [ -f bench/$$s.sh ] || continue; \
		echo "== bench/$$s.sh"; bash bench/$$s.sh || st=1; echo; done; exit $$st

.PHONY: all deps check check-asan bench bench-self install uninstall clean
.SECONDARY:
