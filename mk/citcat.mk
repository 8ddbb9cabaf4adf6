# mk/citcat.mk - citcat's extra build steps: the tiny static test program (no libc, no PIE) that
# the replay is compared against instruction by instruction under ptrace single-stepping.
$(BUILD)/progs/citcat_tiny: tests/progs/citcat_tiny.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -static -nostdlib -no-pie -fno-pie -fno-stack-protector \
		-fcf-protection=none -o $@ $<
