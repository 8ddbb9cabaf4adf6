# mk/html.mk - the HTML report's page parts (src/plot/html/: template, CSS, JavaScript) become
# string constants in a generated header, $(BUILD)/gen/html_assets.h, which html_report.c
# includes. The parts stay real source files; the header is never committed. A part holding
# "</script" or "</style" would end its element early in the page, so the build refuses it.
HTML_PARTS := src/plot/html/report.html src/plot/html/report.css src/plot/html/report.js

%/gen/html_assets.h: $(HTML_PARTS) scripts/embed-text.sh
	@mkdir -p $(dir $@)
	@if grep -il -e '</script' -e '</style' src/plot/html/report.css src/plot/html/report.js; then \
		echo "mk/html.mk: a page part above closes its element early" >&2; exit 1; fi
	scripts/embed-text.sh html $(HTML_PARTS) > $@.tmp && mv $@.tmp $@

$(BUILD)/src/plot/html_report.o: $(BUILD)/gen/html_assets.h
# the fuzz build's directory (FUZZ_BUILD, set later in the Makefile) compiles it too
build-fuzz/obj/src/plot/html_report.o: build-fuzz/gen/html_assets.h
