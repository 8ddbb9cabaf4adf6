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
