# Makefile - builds libspent (static + shared), the spent binary, tests, fuzzers and benches.
#
#   make            build into build/
#   make SAN=1      debug + ASan/UBSan build into build-san/
#   make test       install deps, build both, run every test (unit + e2e, plain and sanitized)
#   make demo       install deps, build, show where the bundled demo's time goes (scripts/demo.sh)
#   make fuzz       build the libFuzzer targets (clang) into build-fuzz/
#   make fuzz-run   make seeds from the test programs, run each fuzz target briefly
#                   (FUZZ_SECONDS each, default 20)
#   make install    install into $(DESTDIR)$(PREFIX) (mk/install.mk: BINDIR, LIBDIR, ...)
#   make uninstall  remove what make install put there
#
# CFLAGS, CPPFLAGS and LDFLAGS are the user's (make CFLAGS=-O1): what the build needs whatever
# they say (-fPIC for the shared library, -std, -I, -D, -MMD, the warnings, the sanitizers of
# SAN=1) is in ALL_CFLAGS / ALL_CPPFLAGS.
#
# Sources are discovered: every src/*/*.c goes into libspent except src/cli (the binary),
# *.bpf.c (compiled to BPF skeletons) and directories of code that runs elsewhere
# (src/*/valgrind: a Valgrind tool; src/*/preload: an LD_PRELOAD library). Areas with extra
# build steps put them in mk/AREA.mk, which is included below.

SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build-san
CFLAGS ?= -O1 -g -fno-omit-frame-pointer
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined
SANLDFLAGS = -fsanitize=address,undefined
else
BUILD ?= build
CFLAGS ?= -O2 -g -fno-omit-frame-pointer
SANFLAGS =
SANLDFLAGS =
endif

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
VERSION = 0.1.0

WARN = -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes
ALL_CPPFLAGS = -Iinclude -Isrc -I$(BUILD)/gen -D_GNU_SOURCE -DSPENT_VERSION='"$(VERSION)"' $(CPPFLAGS)
ALL_CFLAGS = -std=gnu11 $(WARN) -fPIC -MMD -MP $(SANFLAGS) $(CFLAGS)
# zlib first: libunicorn exports its own crc32, and the first library named wins at run time
LDLIBS += -lz -lpfm -liberty -ldw -lelf -lbpf -lZydis -lunicorn -lzstd -llz4 -lpng16 -lpthread -lm -ldl

LIB_SRCS := $(shell find src -name '*.c' ! -name '*.bpf.c' ! -path 'src/cli/*' \
              ! -path '*/valgrind/*' ! -path '*/preload/*' | sort)
CLI_SRCS := $(sort $(wildcard src/cli/*.c))
BPF_SRCS := $(shell find src -name '*.bpf.c' | sort)
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
PROG_SRCS := $(sort $(wildcard tests/progs/*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
SKELS := $(patsubst %.bpf.c,$(BUILD)/gen/%.skel.h,$(notdir $(BPF_SRCS)))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
PROG_CXX_SRCS := $(sort $(wildcard tests/progs/*.cc))
PROG_BINS := $(PROG_SRCS:tests/progs/%.c=$(BUILD)/progs/%) \
	     $(PROG_CXX_SRCS:tests/progs/%.cc=$(BUILD)/progs/%)

LIBA := $(BUILD)/libspent.a
LIBSO := $(BUILD)/libspent.so
SPENT := $(BUILD)/spent

.PHONY: all lib progs deps test demo fuzz fuzz-seeds fuzz-run clean bench check-layers
all: $(SPENT) $(LIBSO) $(BUILD)/spent.pc $(UNIT_BINS) progs
lib: $(LIBA) $(LIBSO)
progs: $(PROG_BINS)

$(BUILD)/%.o: %.c | $(SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(LIBA): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The library exports its public API only (include/spent/*.h, marked SPENT_API): everything
# else is hidden, so libspent.so's ABI is those functions; the static library, spent and the
# unit tests still link every internal function (hidden symbols link within one executable).
# --exclude-libs: nothing of a static library linked in (e.g. libiberty's demangler) is exported.
$(LIB_OBJS): ALL_CFLAGS += -fvisibility=hidden
# objects built before (or with other flags) are rebuilt: a stale object would export everything
LIB_FLAGS_STAMP := $(BUILD)/.lib-flags
$(LIB_FLAGS_STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo '-fvisibility=hidden $(CPPFLAGS) $(CFLAGS)' | cmp -s - $@ || \
		echo '-fvisibility=hidden $(CPPFLAGS) $(CFLAGS)' > $@
$(LIB_OBJS): $(LIB_FLAGS_STAMP)
.PHONY: FORCE

# the soname beside it, so a program linked against the build tree runs with
# LD_LIBRARY_PATH=build (only make install made that name before)
$(LIBSO): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libspent.so.0 -Wl,--exclude-libs,ALL $(SANLDFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
	ln -sfn libspent.so $(BUILD)/libspent.so.0

# The spent binary links Unicorn statically when the static library is there: resolving the
# shared libunicorn's ~20,000 symbol relocations took 3 ms of every command's start-up, half
# of what `spent citcat record -- /bin/true` cost (16 ms, 7.5 ms static). Its symbols stay
# out of spent's dynamic symbol table (its crc32 is not zlib's), and binio calls crc32_z.
UNICORN_A ?= $(wildcard /usr/lib/$(shell $(CC) -print-multiarch)/libunicorn.a)
SPENT_LDLIBS = $(if $(UNICORN_A),$(subst -lunicorn,-Wl$(comma)--exclude-libs$(comma)libunicorn.a \
	-Wl$(comma)-Bstatic -lunicorn -Wl$(comma)-Bdynamic,$(LDLIBS)),$(LDLIBS))
comma := ,
$(SPENT): $(CLI_OBJS) $(LIBA)
	$(CC) $(SANLDFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBA) $(SPENT_LDLIBS)

# Unit tests link the static library so they test exactly what ships; the command-line
# helpers (option parser, output helpers) come from the CLI objects, less main().
CLI_LIB := $(BUILD)/libspent-cli.a
$(CLI_LIB): $(filter-out $(BUILD)/src/cli/spent.o,$(CLI_OBJS))
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/%: tests/unit/%.c $(LIBA) $(CLI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(SANLDFLAGS) $(LDFLAGS) -o $@ $< $(CLI_LIB) $(LIBA) -lcmocka $(LDLIBS)

# Test and demo programs: plain builds (never sanitized) so they behave like user programs.
$(BUILD)/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -fno-omit-frame-pointer -fno-inline -Iinclude -o $@ $< -lpthread -lm
# C++ ones: mangled names for the demangling checks
$(BUILD)/progs/%: tests/progs/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 -O1 -g -fno-omit-frame-pointer -fno-inline -o $@ $<

# BPF: vmlinux.h from the running kernel's BTF, then .bpf.c -> .bpf.o -> .skel.h.
$(BUILD)/gen/vmlinux.h:
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

vpath %.bpf.c $(sort $(dir $(BPF_SRCS)))
$(BUILD)/gen/%.bpf.o: %.bpf.c $(BUILD)/gen/vmlinux.h
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -Iinclude -Isrc -I$(BUILD)/gen -MMD -MP -c $< -o $@

$(BUILD)/gen/%.skel.h: $(BUILD)/gen/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# keep the BPF objects and skeletons: make would delete them as intermediates of the chain
.SECONDARY: $(SKELS) $(SKELS:.skel.h=.bpf.o)

-include mk/*.mk

deps:
	@scripts/deps.sh

# includes must point down the layer stack (docs/design.md); also run by the test suite
check-layers:
	@scripts/check-layers.sh

test: deps
	$(MAKE) all
	$(MAKE) SAN=1 all
	@tests/run.sh

demo: deps
	$(MAKE) all
	@scripts/demo.sh $(abspath $(SPENT)) $(abspath $(BUILD)/progs/demo) $(BUILD)/demo

# libFuzzer targets: the library is compiled once with fuzzer instrumentation and ASan/UBSan
# (build-fuzz/libspent-fuzz.a); each tests/fuzz/fuzz_*.c links against it.
FUZZ_BUILD := build-fuzz
FUZZ_FLAGS := -std=gnu11 -Werror=implicit-function-declaration -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -Iinclude -Isrc \
	-I$(FUZZ_BUILD)/gen -D_GNU_SOURCE -DSPENT_VERSION='"$(VERSION)"'
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_SKELS := $(patsubst %.bpf.c,$(FUZZ_BUILD)/gen/%.skel.h,$(notdir $(BPF_SRCS)))
fuzz: $(FUZZ_BINS)
$(FUZZ_SKELS): $(FUZZ_BUILD)/gen/%.skel.h: $(BUILD)/gen/%.skel.h
	@mkdir -p $(dir $@)
	cp $< $@
$(FUZZ_BUILD)/obj/%.o: %.c | $(FUZZ_SKELS)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
$(FUZZ_BUILD)/libspent-fuzz.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^
# with the CLI's LeakSanitizer suppressions: Unicorn's own leak (a replayed guest writing its
# code) stopped fuzz_citcat_replay, and nothing of spent's was in it
$(FUZZ_BUILD)/%: tests/fuzz/%.c $(FUZZ_BUILD)/libspent-fuzz.a $(FUZZ_BUILD)/obj/src/cli/lsan_suppressions.o
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/obj/src/cli/lsan_suppressions.o \
		$(FUZZ_BUILD)/libspent-fuzz.a $(LDLIBS)
$(FUZZ_BINS): tests/fuzz/fuzz_util.h $(FUZZ_BUILD)/obj/src/cli/lsan_suppressions.o
# seedtool turns real outputs into the targets' input forms; plain build, it is not fuzzed
$(FUZZ_BUILD)/seedtool: tests/fuzz/seedtool.c tests/fuzz/fuzz_util.h $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(SANLDFLAGS) -o $@ $< $(LIBA) $(LDLIBS)
# seeds from the test programs' real outputs, remade each run (they name this build's files)
fuzz-seeds: all $(FUZZ_BUILD)/seedtool
	@tests/fuzz/seeds.sh $(BUILD) $(FUZZ_BUILD)
fuzz-run: fuzz fuzz-seeds
	@tests/fuzz/run.sh $(FUZZ_BUILD) $${FUZZ_SECONDS:-20}

bench: all
	@for b in bench/*.sh; do echo "== $$b"; $$b || true; done

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD) $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)
