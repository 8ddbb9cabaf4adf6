# mk/citcat.mk - citcat's extra build steps: the tiny static test program (no libc, no PIE) that
# the replay is compared against instruction by instruction under ptrace single-stepping, and
# the libm program whose PLT slots must be bound lazily.
$(BUILD)/progs/citcat_tiny: tests/progs/citcat_tiny.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -static -nostdlib -no-pie -fno-pie -fno-stack-protector \
		-fcf-protection=none -o $@ $<

# libm calls through lazily bound PLT slots (the resolver runs inside the first call of each)
$(BUILD)/progs/citcat_libm: tests/progs/citcat_libm.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -fno-omit-frame-pointer -Iinclude -Wl,-z,lazy -o $@ $< -lm

# The syscall buffer library `citcat record` preloads into the recorded program
# (src/citcat/preload/syscallbuf.c): plain like the programs it runs in, no libc on its hook's
# path, no vector registers (the hook must leave them as a syscall does), no red zone (it calls
# the untraced syscall page). Bound now (-z now): its constructor's calls need no trip through
# ld.so's resolver (fewer instructions to simulate, no xsave of the x87 slots into the stack,
# whose reserved bytes the CPU and the simulator write differently: see scrub_stack).
CITCAT_SB_SO := $(BUILD)/libspent-citcat-syscallbuf.so
all: $(CITCAT_SB_SO)
$(CITCAT_SB_SO): src/citcat/preload/syscallbuf.c src/citcat/syscallbuf_abi.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fPIC -shared $(WARN) -Isrc -D_GNU_SOURCE -mgeneral-regs-only \
		-mno-red-zone -fno-stack-protector -Wl,-z,now -Wl,-soname,libspent-citcat-syscallbuf.so \
		-o $@ $< -ldl

# fills a syscall buffer of its own: static, no libc, so no preload reaches it; it calls the
# untraced page itself (no red zone)
$(BUILD)/progs/citcat_sbuf_raw: tests/progs/citcat_sbuf_raw.c src/citcat/syscallbuf_abi.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -static -nostdlib -no-pie -fno-pie -fno-stack-protector \
		-fcf-protection=none -mno-red-zone -Isrc -o $@ $<
