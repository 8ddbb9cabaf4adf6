#!/bin/bash
# tests/e2e/abi.sh - libspent.so's ABI is its public API: the dynamic symbols it defines are
# exactly the functions declared SPENT_API in include/spent/*.h (less spent_shim_start, which
# libspent-shim.so provides), every function declared there is marked SPENT_API, and a program
# linked against the shared library can call the API. Every public name (function, struct and
# enum tag, macro, enumerator) carries the spent_ / SPENT_ prefix.
source "$(dirname "$0")/lib.sh"

SO=$SPENT_BUILD/libspent.so
SHIM_SO=$SPENT_BUILD/libspent-shim.so
hdrs=$(ls "$SPENT_TOP"/include/spent/*.h)

# every top-level prototype of the public headers (a line starting with a type and a name
# followed by '('), with or without SPENT_API
grep -hE '^(SPENT_API )?[A-Za-z_][A-Za-z0-9_ *]*\(' $hdrs | grep -vE '^(typedef|#|extern|static)' \
	> "$TMP/protos"
unmarked=$(grep -v '^SPENT_API ' "$TMP/protos" | sed 's/(.*//')
check "every function of include/spent/*.h is SPENT_API${unmarked:+: not:$unmarked}" test -z "$unmarked"
sed -E 's/\(.*//; s/.*[ *]([A-Za-z_][A-Za-z0-9_]*)$/\1/' "$TMP/protos" | sort -u > "$TMP/api"
grep -vx spent_shim_start "$TMP/api" > "$TMP/api.lib"
check "the public headers declare functions ($(wc -l < "$TMP/api.lib"))" test -s "$TMP/api.lib"

nm -D --defined-only "$SO" | awk '$2 ~ /^[TtWiDdBbRrVv]$/ { print $3 }' | sed 's/@.*//' | sort -u > "$TMP/exported"
extra=$(comm -13 "$TMP/api.lib" "$TMP/exported" | head -20 | tr '\n' ' ')
missing=$(comm -23 "$TMP/api.lib" "$TMP/exported" | tr '\n' ' ')
check "libspent.so exports no internal symbol ($(wc -l < "$TMP/exported") exported${extra:+; extra: $extra})" \
	test -z "$extra"
check "libspent.so exports every public function${missing:+ (missing: $missing)}" test -z "$missing"
nm -D --defined-only "$SHIM_SO" | awk '{ print $3 }' | grep -qx spent_shim_start
check "libspent-shim.so exports spent_shim_start" test $? -eq 0

# the API through the shared library, as a user program links it
cat > "$TMP/use.c" <<'EOF'
#include <stdio.h>
#include <spent/events.h>
#include <spent/profile.h>
int main(void)
{
	struct spent_event ev;
	char err[256];
	struct spent_profile *p = spent_profile_new();
	if (!p || spent_event_parse("task-clock", &ev, err, sizeof(err)))
		return 1;
	spent_profile_free(p);
	printf("%s\n", ev.name);
	return 0;
}
EOF
if cc_libspent "$TMP/use" "$TMP/use.c" &&
	LD_LIBRARY_PATH=$TMP/lib "$TMP/use" > "$TMP/use.out" 2>&1 &&
	[ "$(cat "$TMP/use.out")" = task-clock ]; then
	pass "a program links libspent.so and calls the API"
else
	fail "a program links libspent.so and calls the API: $(head -3 "$TMP/use.err" "$TMP/use.out")"
fi
# an internal function is not reachable through the shared library
cat > "$TMP/internal.c" <<'EOF'
int json_init(void *w, void *f);
int main(void) { return json_init(0, 0); }
EOF
! cc_libspent "$TMP/internal" "$TMP/internal.c"
check "an internal function (json_init) does not link against libspent.so" test $? -eq 0

unprefixed=$(grep -v '^spent_' "$TMP/api" | tr '\n' ' ')
check "every public function is spent_-prefixed${unprefixed:+ (not: $unprefixed)}" test -z "$unprefixed"
tags=$(grep -ohE '^\s*(struct|enum) [A-Za-z_][A-Za-z0-9_]*\s*[{;]' $hdrs | awk '{ print $2 }' |
	grep -v '^spent_' | sort -u | tr '\n' ' ')
check "every public struct and enum is spent_-prefixed${tags:+ (not: $tags)}" test -z "$tags"
consts=$( (grep -ohE '^#define [A-Za-z_][A-Za-z0-9_]*' $hdrs | awk '{ print $2 }'
	sed -n '/^enum [a-z_]* {/,/^};/p' $hdrs | grep -oE '^\s+[A-Z][A-Z0-9_]*' | tr -d ' \t') |
	grep -v '^SPENT_' | sort -u | tr '\n' ' ')
check "every public macro and enumerator is SPENT_-prefixed${consts:+ (not: $consts)}" test -z "$consts"
