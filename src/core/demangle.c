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
	/* a PLT stub (core/symtable's NAME@plt): the name before the suffix, then the suffix */
	size_t len = strlen(name);
	const char *plt = len > 4 && !strcmp(name + len - 4, "@plt") ? name + len - 4 : NULL;
	char *bare = plt ? strndup(name, (size_t)(plt - name)) : NULL;
	char *d = plt && !bare ? NULL : cplus_demangle(bare ? bare : name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	free(bare);
	if (!d)
		return name;
	snprintf(out, outlen, "%s%s", d, plt ? plt : "");
	free(d);
	return out;
}

/* D (demangled) names WANTED: "f" names "f(int)" and "f() const", not "f2()" nor "f::g()" */
static bool names_function(const char *d, const char *wanted, size_t n)
{
	return !strcmp(d, wanted) || (!strncmp(d, wanted, n) && d[n] == '(');
}

/* D is a function template instance "RET WANTED<...>(...)" or "RET WANTED(...)": WANTED after
 * the return type (a space before the parameter list), then its arguments or parameters */
static bool names_template(const char *d, const char *wanted, size_t n)
{
	const char *params = strchr(d, '(');
	for (const char *p = strstr(d, wanted); p && (!params || p < params); p = strstr(p + 1, wanted))
		if (p > d && p[-1] == ' ' && (p[n] == '<' || p[n] == '('))
			return true;
	return false;
}

enum demangle_match demangle_match_rank(const char *sym, const char *wanted)
{
	if (!strcmp(sym, wanted))
		return DEMANGLE_MATCH_EXACT;
	size_t n = strlen(wanted);
	/* a C clone "f.cold", "f.part.0": the name before the compiler's suffix */
	const char *dot = strchr(sym, '.');
	if (dot && !(sym[0] == '_' && (sym[1] == 'Z' || sym[1] == 'R')) && (size_t)(dot - sym) == n &&
	    !strncmp(sym, wanted, n))
		return DEMANGLE_MATCH_CLONE;
	if (sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return DEMANGLE_NO_MATCH;
	char *d = cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!d)
		return DEMANGLE_NO_MATCH;
	enum demangle_match m = DEMANGLE_NO_MATCH;
	char *clone = strstr(d, " [clone ");
	if (clone && !strstr(wanted, "[clone"))
		*clone = '\0';	/* compared without it, and ranked below the function itself */
	else
		clone = NULL;
	if (names_function(d, wanted, n))
		m = DEMANGLE_MATCH_PARAMS;
	else if (names_template(d, wanted, n))
		m = DEMANGLE_MATCH_TEMPLATE;
	if (m != DEMANGLE_NO_MATCH && clone)
		m = DEMANGLE_MATCH_CLONE;
	free(d);
	return m;
}

bool demangle_matches(const char *sym, const char *wanted)
{
	return demangle_match_rank(sym, wanted) != DEMANGLE_NO_MATCH;
}
