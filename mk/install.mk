# mk/install.mk - make install / make uninstall, and what is generated for an install: spent.pc,
# the man pages, the systemd unit, the helper directory compiled into spent.
#
#   make install PREFIX=/usr DESTDIR=/tmp/stage    also BINDIR LIBDIR INCLUDEDIR DATADIR MANDIR
#   make uninstall PREFIX=/usr DESTDIR=/tmp/stage  DOCDIR PKGLIBDIR SYSTEMDUNITDIR
#
# The paths that end up inside files (the helper directory compiled into spent, spent.pc, the
# unit's ExecStart) are written to $(BUILD)/install-dirs, rewritten only when they change; what
# uses them depends on it, so `make && make install PREFIX=/usr` installs files that say /usr.
# DESTDIR only stages: it is never written into a file.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/spent
# spent's helpers: the Valgrind tool (valgrind/, a VALGRIND_LIB) and the Shim libraries
PKGLIBDIR ?= $(LIBDIR)/spent
# systemd reads /usr/lib and /usr/local/lib/systemd/system, never a multiarch LIBDIR
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL ?= install

INSTALL_DIRS_STAMP := $(BUILD)/install-dirs
INSTALL_DIRS := PREFIX=$(PREFIX) BINDIR=$(BINDIR) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR) \
	DOCDIR=$(DOCDIR) PKGLIBDIR=$(PKGLIBDIR)
# rewritten while the makefiles are read, not by a rule that always runs: make -n and make -q
# then tell the truth about what the paths make stale
ifeq ($(filter clean,$(MAKECMDGOALS)),)
$(shell mkdir -p $(BUILD) && printf '%s\n' '$(INSTALL_DIRS)' | cmp -s - $(INSTALL_DIRS_STAMP) || \
	printf '%s\n' '$(INSTALL_DIRS)' > $(INSTALL_DIRS_STAMP))
endif

# The helper directory, absolute and relative to BINDIR (a staged or moved tree finds its own).
PKGLIBDIR_FROM_BINDIR = $(shell realpath -s -m --relative-to='$(BINDIR)' '$(PKGLIBDIR)')
$(BUILD)/src/cli/helper_path.o: $(INSTALL_DIRS_STAMP)
$(BUILD)/src/cli/helper_path.o: private ALL_CPPFLAGS += -DSPENT_PKGLIBDIR='"$(PKGLIBDIR)"' \
	-DSPENT_PKGLIBDIR_FROM_BINDIR='"$(PKGLIBDIR_FROM_BINDIR)"'

# ${prefix}-relative where the paths allow it, so pkg-config --define-prefix can move it
pc_rel = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
$(BUILD)/spent.pc: $(INSTALL_DIRS_STAMP) Makefile mk/install.mk
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: spent\nDescription: where is the time spent: counters, profiles, traces\nVersion: %s\nLibs: -L$${libdir} -lspent\nLibs.private: %s\nCflags: -I$${includedir}\n' \
		'$(PREFIX)' '$(call pc_rel,$(LIBDIR))' '$(call pc_rel,$(INCLUDEDIR))' '$(VERSION)' \
		'$(LDLIBS)' > $@.tmp && mv $@.tmp $@

# Man pages: spent.1 and spent-CMD.1 for each command of src/cli/commands.def.
MAN_CMDS := $(shell sed -n 's/^COMMAND_INFO.\([a-z0-9_-]*\),.*/\1/p' src/cli/commands.def)
MAN_PAGES := $(BUILD)/man/spent.1 $(MAN_CMDS:%=$(BUILD)/man/spent-%.1)
$(BUILD)/man/spent.1: $(SPENT) scripts/manpage.sh $(INSTALL_DIRS_STAMP)
	@mkdir -p $(dir $@)
	scripts/manpage.sh $(SPENT) '' '$(DOCDIR)' '$(PKGLIBDIR)' > $@.tmp && mv $@.tmp $@
$(BUILD)/man/spent-%.1: $(SPENT) scripts/manpage.sh $(INSTALL_DIRS_STAMP)
	@mkdir -p $(dir $@)
	scripts/manpage.sh $(SPENT) $* '$(DOCDIR)' '$(PKGLIBDIR)' > $@.tmp && mv $@.tmp $@

SYSTEMD_UNIT := $(BUILD)/spent-daemon.service
$(SYSTEMD_UNIT): contrib/spent-daemon.service.in $(INSTALL_DIRS_STAMP)
	@mkdir -p $(dir $@)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' $< > $@.tmp && mv $@.tmp $@

all: $(MAN_PAGES) $(SYSTEMD_UNIT)

# docs/examples/ (the library's example programs) goes to DOCDIR/examples
DOC_FILES := $(sort $(filter-out docs/examples,$(wildcard docs/*))) README.md LICENSE
DOC_EXAMPLES := $(sort $(wildcard docs/examples/*))
D := $(DESTDIR)

# what it installs, not `all`: the unit tests and test programs (and cmocka) are not needed.
# Expanded a second time: the shim's and the tool's names are set by makefiles read after this.
.SECONDEXPANSION:
install: $$(SPENT) $$(LIBA) $$(LIBSO) $$(BUILD)/spent.pc $$(SHIM_SO) $$(SHIM_A) $$(SHIM_HOOKS_A) \
		$$(CITCAT_SB_SO) $$(VG_TOOL) $$(MAN_PAGES) $$(SYSTEMD_UNIT)
	$(INSTALL) -d $(D)$(BINDIR) $(D)$(LIBDIR)/pkgconfig $(D)$(INCLUDEDIR)/spent \
		$(D)$(PKGLIBDIR)/valgrind $(D)$(MANDIR)/man1 $(D)$(DOCDIR)/examples $(D)$(SYSTEMDUNITDIR)
	$(INSTALL) -m 755 $(SPENT) $(D)$(BINDIR)/spent
	$(INSTALL) -m 644 $(LIBA) $(D)$(LIBDIR)/libspent.a
	$(INSTALL) -m 644 $(LIBSO) $(D)$(LIBDIR)/libspent.so.$(VERSION)
	ln -sfn libspent.so.$(VERSION) $(D)$(LIBDIR)/libspent.so.0
	ln -sfn libspent.so.0 $(D)$(LIBDIR)/libspent.so
	$(INSTALL) -m 644 include/spent/*.h $(D)$(INCLUDEDIR)/spent/
	$(INSTALL) -m 644 $(BUILD)/spent.pc $(D)$(LIBDIR)/pkgconfig/spent.pc
	$(INSTALL) -m 644 $(SHIM_SO) $(SHIM_A) $(SHIM_HOOKS_A) $(CITCAT_SB_SO) $(D)$(PKGLIBDIR)/
	$(INSTALL) -m 755 $(VG_TOOL) $(D)$(PKGLIBDIR)/valgrind/
	@# the stock Valgrind files the tool runs with, linked as in the build tree (mk/trace.mk)
	@for f in $(VG_EXECDIR)/*; do n=$${f##*/}; [ "$$n" = spent-amd64-linux ] || \
		ln -sfn "$$f" "$(D)$(PKGLIBDIR)/valgrind/$$n" || exit 1; done
	$(INSTALL) -m 644 $(MAN_PAGES) $(D)$(MANDIR)/man1/
	$(INSTALL) -m 644 $(DOC_FILES) $(D)$(DOCDIR)/
	$(INSTALL) -m 644 $(DOC_EXAMPLES) $(D)$(DOCDIR)/examples/
	$(INSTALL) -m 644 $(SYSTEMD_UNIT) $(D)$(SYSTEMDUNITDIR)/

# Removes exactly what install wrote, and the directories that are spent's own.
uninstall:
	rm -f $(D)$(BINDIR)/spent $(D)$(LIBDIR)/libspent.a $(D)$(LIBDIR)/libspent.so.$(VERSION) \
		$(D)$(LIBDIR)/libspent.so.0 $(D)$(LIBDIR)/libspent.so $(D)$(LIBDIR)/pkgconfig/spent.pc \
		$(addprefix $(D)$(INCLUDEDIR)/spent/,$(notdir $(wildcard include/spent/*.h))) \
		$(addprefix $(D)$(PKGLIBDIR)/,$(notdir $(SHIM_SO) $(SHIM_A) $(SHIM_HOOKS_A) $(CITCAT_SB_SO))) \
		$(D)$(PKGLIBDIR)/valgrind/$(notdir $(VG_TOOL)) \
		$(addprefix $(D)$(MANDIR)/man1/,$(notdir $(MAN_PAGES))) \
		$(addprefix $(D)$(DOCDIR)/,$(notdir $(DOC_FILES))) \
		$(addprefix $(D)$(DOCDIR)/examples/,$(notdir $(DOC_EXAMPLES))) \
		$(D)$(SYSTEMDUNITDIR)/$(notdir $(SYSTEMD_UNIT))
	@# the links to stock Valgrind files, whichever Valgrind version made them
	@[ ! -d $(D)$(PKGLIBDIR)/valgrind ] || \
		find $(D)$(PKGLIBDIR)/valgrind -maxdepth 1 -type l -lname '$(VG_EXECDIR)/*' -delete
	@for d in $(D)$(INCLUDEDIR)/spent $(D)$(PKGLIBDIR)/valgrind $(D)$(PKGLIBDIR) $(D)$(DOCDIR)/examples $(D)$(DOCDIR); do \
		[ ! -d "$$d" ] || rmdir "$$d" || exit 1; done
