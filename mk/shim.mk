# mk/shim.mk - Shim's extra build steps: the preloaded observer library libspent-shim.so, the
# static-link alternative libspent-shim.a, the -finstrument-functions hooks archive, and test
# programs that need special flags (instrumented, static). Always plain: no sanitizers, -O2.

SHIM_CFLAGS := -std=gnu11 -O2 -g -fPIC -fno-omit-frame-pointer $(WARN) -Iinclude -Isrc -D_GNU_SOURCE -MMD -MP
SHIM_PRELOAD_DIR := $(BUILD)/shim-preload
SHIM_SO := $(BUILD)/libspent-shim.so
SHIM_A := $(BUILD)/libspent-shim.a
SHIM_HOOKS_A := $(BUILD)/libspent-shim-hooks.a
SHIM_PROGS := $(BUILD)/progs/shim_funcs-instr $(BUILD)/progs/shim_phases-static \
	$(BUILD)/progs/shim_demo-static

all: $(SHIM_SO) $(SHIM_A) $(SHIM_HOOKS_A) $(SHIM_PROGS)

$(SHIM_PRELOAD_DIR)/%.o: src/shim/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_CFLAGS) -c -o $@ $<

$(SHIM_SO): $(SHIM_PRELOAD_DIR)/observer.o
	$(CC) -shared -Wl,-soname,libspent-shim.so -o $@ $^ -lpthread

$(SHIM_A): $(SHIM_PRELOAD_DIR)/observer.o $(SHIM_PRELOAD_DIR)/hooks.o
	@rm -f $@
	ar rcs $@ $^

$(SHIM_HOOKS_A): $(SHIM_PRELOAD_DIR)/hooks.o
	@rm -f $@
	ar rcs $@ $^

SHIM_PROG_CFLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer -fno-inline -Iinclude
$(BUILD)/progs/shim_funcs-instr: tests/progs/shim_funcs.c $(SHIM_HOOKS_A)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_PROG_CFLAGS) -finstrument-functions -o $@ $< $(SHIM_HOOKS_A) -lpthread -lm

$(BUILD)/progs/shim_phases-static: tests/progs/shim_phases.c $(SHIM_A)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_PROG_CFLAGS) -static -o $@ $< -Wl,-u,spent_shim_start $(SHIM_A) -lpthread -lm

$(BUILD)/progs/shim_demo-static: tests/progs/demo.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_PROG_CFLAGS) -static -o $@ $< -lpthread -lm

