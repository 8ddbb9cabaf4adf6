/* core/demangle.c - display names of mangled symbols through libiberty's cplus_demangle (the
 * demangler binutils and perf use), C++ with parameters and qualifiers so overloads stay
 * apart, Rust legacy names without their hash, Rust v0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "core/demangle.h"

static bool enabled = true;

void demangle_set_enabled(bool on)
{
	enabled = on;
}

bool demangle_enabled(void)
{
	return enabled;
}

const char *demangle_name(const char *name, char *out, size_t outlen)
{
	/* only the Itanium (_Z) and Rust v0 (_R) prefixes are mangled: a C name such as "main"
	 * must not be read as a type encoding */
	if (!enabled || !name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') || !outlen)
		return name;
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!d)
		return name;
	snprintf(out, outlen, "%s", d);
	free(d);
	return out;
}

bool demangle_matches(const char *sym, const char *wanted)
{
	if (!strcmp(sym, wanted))
		return true;
	if (sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return false;
	char *d = cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!d)
		return false;
	size_t n = strlen(wanted);
	/* "f" names "f(int)" and "f() const"; not "f2()" nor "f::g()" */
	bool same = !strcmp(d, wanted) || (!strncmp(d, wanted, n) && d[n] == '(');
	free(d);
	return same;
}
