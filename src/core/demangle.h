/* core/demangle.h - the one place symbol names are demangled for display (C++ Itanium ABI,
 * Rust legacy and v0), through libiberty's maintained demangler; every view and export shows
 * a name through demangle_name(). `--no-demangle` turns it off process-wide. */
#ifndef SPENT_CORE_DEMANGLE_H
#define SPENT_CORE_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether demangle_name() demangles (default: yes). */
void demangle_set_enabled(bool on);
bool demangle_enabled(void);

/* NAME as it should be shown: demangled into OUT when it is a mangled C++ or Rust name and
 * demangling is on, else NAME itself. Returns OUT or NAME; OUT holds at most OUTLEN - 1 bytes
 * (a longer demangled name is cut). */
const char *demangle_name(const char *name, char *out, size_t outlen);

/* How well symbol SYM answers a user's WANTED, for choosing among the symbols that match
 * (0: it does not). Works with demangling off too: names are typed demangled. */
enum demangle_match {
	DEMANGLE_NO_MATCH,
	/* a compiler's part or copy of the function: "f.cold", "f.constprop.0",
	 * "f(int) [clone .cold]", named as f */
	DEMANGLE_MATCH_CLONE,
	/* a function template named without its return type ("ns::apply" or "ns::apply<int>"
	 * for "double ns::apply<int>(int)") */
	DEMANGLE_MATCH_TEMPLATE,
	/* SYM demangled is WANTED with or without its parameter list ("ns::Box<double>::sum" or
	 * "ns::Box<double>::sum() const") */
	DEMANGLE_MATCH_PARAMS,
	DEMANGLE_MATCH_EXACT,	/* the same string */
};
enum demangle_match demangle_match_rank(const char *sym, const char *wanted);
/* demangle_match_rank(SYM, WANTED) != DEMANGLE_NO_MATCH */
bool demangle_matches(const char *sym, const char *wanted);

#endif
