# leifs: a FUSE filesystem whose directories are saved public-inbox searches.
# Plain non-recursive make: each module's Makefile.local appends to SRCS.
# Local overrides go in config.mk (not tracked), e.g. CFLAGS += -O0.

PKGS      = fuse3 gmime-3.0 libcurl openssl lmdb zlib
CC       ?= cc
CXX      ?= c++
OPT      ?= -O2 -g
WARN      = -Wall -Wextra -Werror
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(PKGS))
XAPIAN_CXXFLAGS := $(shell xapian-config --cxxflags 2>/dev/null)
XAPIAN_LIBS     := $(shell xapian-config --libs 2>/dev/null)

ALL_CFLAGS   = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -I. $(PKG_CFLAGS) $(CFLAGS)
ALL_CXXFLAGS = -std=c++17 -D_GNU_SOURCE $(OPT) $(WARN) -I. $(PKG_CFLAGS) $(XAPIAN_CXXFLAGS) $(CXXFLAGS)
ALL_LDFLAGS  = $(LDFLAGS)
LIBS         = $(PKG_LIBS) $(XAPIAN_LIBS) -lpthread

-include config.mk

ifeq ($(SANITIZE),1)
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ALL_CFLAGS   += $(SAN)
ALL_CXXFLAGS += $(SAN)
ALL_LDFLAGS  += $(SAN)
endif

SRCS :=
TEST_PROGS :=
include query/Makefile.local
include net/Makefile.local
include cache/Makefile.local
include fs/Makefile.local
include tests/Makefile.local

LIB_OBJS = $(patsubst %.cc,%.o,$(patsubst %.c,%.o,$(LIB_SRCS)))
FS_OBJS  = $(patsubst %.c,%.o,$(FS_SRCS))
OBJS = $(LIB_OBJS) $(FS_OBJS) $(TEST_PROGS:=.o)

all: leifs $(TEST_PROGS)

# rebuild everything when the flags change (e.g. SANITIZE=1), as git does
BUILD-FLAGS: FORCE
	@echo '$(ALL_CFLAGS) $(ALL_CXXFLAGS) $(ALL_LDFLAGS)' >$@.new; \
	if cmp -s $@ $@.new; then rm $@.new; else mv $@.new $@; fi

leifs: $(FS_OBJS) libleifs.a
	$(CXX) $(ALL_LDFLAGS) -o $@ $(FS_OBJS) libleifs.a $(LIBS)

libleifs.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(TEST_PROGS): %: %.o libleifs.a
	$(CXX) $(ALL_LDFLAGS) -o $@ $< libleifs.a $(LIBS)

$(OBJS): BUILD-FLAGS

%.o: %.c
	$(CC) $(ALL_CFLAGS) -MD -MP -c -o $@ $<

%.o: %.cc
	$(CXX) $(ALL_CXXFLAGS) -MD -MP -c -o $@ $<

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
DOCDIR  ?= $(PREFIX)/share/doc/leifs

install: leifs
	install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(MANDIR)/man1' '$(DESTDIR)$(DOCDIR)/examples'
	install -m 755 leifs '$(DESTDIR)$(BINDIR)/leifs'
	install -m 644 fs/leifs.1 '$(DESTDIR)$(MANDIR)/man1/leifs.1'
	install -m 644 README '$(DESTDIR)$(DOCDIR)/README'
	install -m 644 examples/config examples/leifs.service examples/mbsyncrc examples/imap-view.config '$(DESTDIR)$(DOCDIR)/examples/'

uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/leifs' '$(DESTDIR)$(MANDIR)/man1/leifs.1'
	rm -rf '$(DESTDIR)$(DOCDIR)'

# libFuzzer targets (clang), built apart in fuzz-build/ with ASan+UBSan;
# `make fuzz FUZZ_TIME=600` runs each for that many seconds over a seed
# corpus from the test generator, then leaves any crash in fuzz-build/.
FUZZ_CC   ?= clang
FUZZ_CXX  ?= clang++
FUZZ_TIME ?= 60
FUZZ_NAMES = mboxrd gunzip mail query config terms
FUZZ_SAN   = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_OBJS = $(patsubst %.c,fuzz-build/%.o,$(filter %.c,$(LIB_SRCS))) \
		$(patsubst %.cc,fuzz-build/%.o,$(filter %.cc,$(LIB_SRCS)))
FUZZ_BINS = $(FUZZ_NAMES:%=fuzz-build/fuzz-%)

fuzz-build/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 $(WARN) -I. $(PKG_CFLAGS) \
		-fsanitize=fuzzer-no-link $(FUZZ_SAN) -MD -MP -c -o $@ $<

fuzz-build/%.o: %.cc
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) -std=c++17 -D_GNU_SOURCE -g -O1 $(WARN) -I. $(PKG_CFLAGS) $(XAPIAN_CXXFLAGS) \
		-fsanitize=fuzzer-no-link $(FUZZ_SAN) -MD -MP -c -o $@ $<

fuzz-build/fuzz-%: fuzz-build/tests/fuzz/fuzz-%.o $(FUZZ_LIB_OBJS)
	$(FUZZ_CXX) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LIBS)

fuzz-bins: $(FUZZ_BINS)

# the objects are not intermediate files: keep them, or every fuzz-bins
# rebuilds the whole library with clang
.SECONDARY: $(FUZZ_LIB_OBJS) $(FUZZ_NAMES:%=fuzz-build/tests/fuzz/fuzz-%.o)

fuzz: $(FUZZ_BINS)
	tests/fuzz/run.sh $(FUZZ_TIME) $(FUZZ_NAMES)

# J test files run at a time, each in its own trash directory
J ?= 2
check: all
	J='$(J)' tests/run-tests.sh

bench: all
	tests/bench/run.sh

clean:
	rm -f leifs libleifs.a $(TEST_PROGS) $(OBJS) $(OBJS:.o=.d) BUILD-FLAGS
	rm -rf fuzz-build

.PHONY: all check bench clean install uninstall fuzz fuzz-bins FORCE
-include $(OBJS:.o=.d)
# the fuzz objects follow their headers too (a struct that grew once made a
# stale harness overflow it)
-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_NAMES:%=fuzz-build/tests/fuzz/fuzz-%.d)
