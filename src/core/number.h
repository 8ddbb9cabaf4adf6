/* core/number.h - the one strict number parser for numbers users type (command-line options,
 * EV:PERIOD specs, ranges). strtoul & co. skip leading blanks, accept a sign (so " -1" becomes
 * 2^64-1), read "010" as octal and stop quietly at garbage; these functions accept exactly
 * the number and nothing else. */
#ifndef SPENT_CORE_NUMBER_H
#define SPENT_CORE_NUMBER_H

#include <stdint.h>

enum num_suffix {
	NUM_PLAIN = 0,		/* digits only */
	NUM_SI,			/* optional K, M, G: x1000, x1000^2, x1000^3 */
	NUM_BINARY,		/* optional K, M, G (then an optional B): x1024, x1024^2, x1024^3 */
};

/*
 * Parse S as an unsigned integer: decimal digits, or 0x/0X and hex digits, then the suffix
 * SUFFIX allows. No blanks, no sign, nothing after. 0; -EINVAL for anything else (empty,
 * blanks, a sign, garbage); -ERANGE when the value does not fit in 64 bits.
 */
int num_parse_u64(const char *s, enum num_suffix suffix, uint64_t *out);

/* num_parse_u64 (NUM_PLAIN) and MIN <= value <= MAX, else -ERANGE. */
int num_parse_range(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Parse S as a finite non-negative decimal number: digits with an optional fraction and an
 * optional exponent ("2.5", "1e3", ".5"). No blanks, sign, hex, inf or nan. 0 or -EINVAL;
 * -ERANGE when it overflows a double.
 */
int num_parse_double(const char *s, double *out);

#endif
