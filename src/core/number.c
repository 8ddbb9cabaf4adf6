/* core/number.c - the strict parser of numbers users type (core/number.h): digits and an
 * optional unit suffix, nothing else, overflow detected. */
#include "core/number.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

static int digit_value(char c, unsigned base)
{
	int v = c >= '0' && c <= '9' ? c - '0' :
		c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
	return v < (int)base ? v : -1;
}

int num_parse_u64(const char *s, enum num_suffix suffix, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0, mul = 1;
	const char *p = s;
	int d;

	if (!s)
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (digit_value(*p, base) < 0)
		return -EINVAL;
	for (; (d = digit_value(*p, base)) >= 0; p++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -ERANGE;
		v = v * base + (uint64_t)d;
	}
	if (suffix != NUM_PLAIN && *p) {
		uint64_t unit = suffix == NUM_SI ? 1000 : 1024;
		switch (*p) {
		case 'k': case 'K': mul = unit; break;
		case 'm': case 'M': mul = unit * unit; break;
		case 'g': case 'G': mul = unit * unit * unit; break;
		default: return -EINVAL;
		}
		p++;
		if (suffix == NUM_BINARY && (*p == 'b' || *p == 'B'))
			p++;
	}
	if (*p)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

int num_parse_range(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int err = num_parse_u64(s, NUM_PLAIN, &v);

	if (err)
		return err;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int num_parse_double(const char *s, double *out)
{
	const char *p = s;
	size_t mant = 0;

	if (!s)
		return -EINVAL;
	/* check the grammar first: strtod alone would take blanks, signs, hex, inf and nan */
	while (isdigit((unsigned char)*p))
		p++, mant++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			mant++;
	if (mant == 0)
		return -EINVAL;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p)
		return -EINVAL;
	double v = strtod(s, NULL);
	if (!isfinite(v))
		return -ERANGE;	/* an exponent too large; a too small one rounds to 0 */
	*out = v;
	return 0;
}
