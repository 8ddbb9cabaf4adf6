# mk/trace.mk - the spent Valgrind tool (src/trace/valgrind), linked like Valgrind's own tools
# against Debian's libcoregrind/libvex, and the VALGRIND_LIB directory `spent trace` runs it from:
# $(BUILD)/valgrind/lib holds spent-amd64-linux plus links to every stock Valgrind file.
# The tool is never sanitized (it runs without libc inside Valgrind).

VG_LIBDIR ?= /usr/lib/x86_64-linux-gnu/valgrind
VG_EXECDIR ?= /usr/libexec/valgrind
VG_TOOL_SRCS := $(sort $(wildcard src/trace/valgrind/*.c))
VG_TOOL_DIR := $(BUILD)/valgrind
VG_TOOL := $(VG_TOOL_DIR)/lib/spent-amd64-linux
VG_TOOL_CFLAGS := -std=gnu11 -m64 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow \
	-fno-strict-aliasing -fno-builtin -fno-stack-protector -fno-pie -fno-pic \
	-DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1 \
	-I/usr/include/valgrind -Isrc
VG_TOOL_LDFLAGS := -static -nodefaultlibs -nostartfiles -u _start -Wl,--build-id=none \
	-Wl,-Ttext-segment=0x58000000 -no-pie

all: $(VG_TOOL) $(VG_TOOL_DIR)/lib/.links

$(VG_TOOL): $(VG_TOOL_SRCS) $(wildcard src/trace/valgrind/*.h) src/trace/log_format.h mk/trace.mk
	@mkdir -p $(dir $@)
	gcc $(VG_TOOL_CFLAGS) $(VG_TOOL_LDFLAGS) -o $@ $(VG_TOOL_SRCS) \
		$(VG_LIBDIR)/libcoregrind-amd64-linux.a $(VG_LIBDIR)/libvex-amd64-linux.a \
		$(VG_LIBDIR)/libgcc-sup-amd64-linux.a -lgcc

# links to the stock tools, preloads and suppressions, so cachegrind/lackey/none run from the
# same VALGRIND_LIB (the tests compare against them with an identical client environment)
$(VG_TOOL_DIR)/lib/.links: mk/trace.mk
	@mkdir -p $(dir $@)
	@for f in $(VG_EXECDIR)/*; do n=$$(basename $$f); \
		[ "$$n" = spent-amd64-linux ] || ln -sfn $$f $(dir $@)$$n; done
	@touch $@
