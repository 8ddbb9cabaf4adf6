/* cli/time_window.c - parsing --since/--until points in time and --epoch lists. */
#include "cli/time_window.h"
#include "core/alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/number.h"

#define NS_PER_S 1000000000ull

/* "1.5" seconds (digits, optional fraction) into ns; -EINVAL / -ERANGE. */
static int seconds_ns(const char *s, size_t len, double mult, uint64_t *out)
{
	char buf[64];
	double v;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (strpbrk(buf, "eE") || num_parse_double(buf, &v))
		return -EINVAL;	/* no exponents: "1e3s" is a typo more often than not */
	v *= mult * (double)NS_PER_S;
	if (v >= 1.8e19)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/* A duration with its unit ("90s", "10m", "500ms"): 1 and *NS; 0 when S is not one. */
static int duration_ns(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "ms", 1e-3 }, { "s", 1 }, { "m", 60 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 },
	};
	size_t len = strlen(s), digits = strspn(s, "0123456789.");

	if (digits == 0 || digits == len)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(s + digits, units[i].unit))
			return seconds_ns(s, digits, units[i].mult, ns) == 0 ? 1 : -EINVAL;
	return 0;	/* maybe a date */
}

/* Local date and/or time: 1 and *NS, 0 when S is not one of those forms. */
static int local_time_ns(const char *s, uint64_t now_ns, uint64_t *ns)
{
	static const char *const date_forms[] = {
		"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M",
		"%Y-%m-%d",
	};
	static const char *const time_forms[] = { "%H:%M:%S", "%H:%M" };
	time_t now = (time_t)(now_ns / NS_PER_S);
	struct tm tm;

	for (size_t i = 0; i < ARRAY_SIZE(date_forms); i++) {
		memset(&tm, 0, sizeof(tm));
		const char *end = strptime(s, date_forms[i], &tm);
		if (end && !*end)
			goto found;
	}
	for (size_t i = 0; i < ARRAY_SIZE(time_forms); i++) {
		struct tm today;
		localtime_r(&now, &today);
		memset(&tm, 0, sizeof(tm));
		const char *end = strptime(s, time_forms[i], &tm);
		if (end && !*end) {
			tm.tm_year = today.tm_year;
			tm.tm_mon = today.tm_mon;
			tm.tm_mday = today.tm_mday;
			goto found;
		}
	}
	return 0;
found:
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	if (t == (time_t)-1 || t < 0)
		return -EINVAL;
	*ns = (uint64_t)t * NS_PER_S;
	return 1;
}

int time_point_parse(const char *s, uint64_t now_ns, uint64_t *out, const char **why)
{
	uint64_t ns;
	int r;

	*why = "give a duration back from now (90s, 10m, 2h, 1d), a local date and time "
	       "(2026-11-23 16:05, 16:05) or Unix seconds (1763900000)";
	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "now")) {
		*out = now_ns;
		return 0;
	}
	if ((r = duration_ns(s, &ns)) < 0)
		return -EINVAL;
	if (r) {
		*out = ns < now_ns ? now_ns - ns : 0;
		if (!*out) {
			*why = "the duration reaches back before 1970";
			return -EINVAL;
		}
		return 0;
	}
	if ((r = local_time_ns(s, now_ns, &ns)) < 0)
		return -EINVAL;
	if (r) {
		*out = ns;
		return 0;
	}
	const char *secs = s[0] == '@' ? s + 1 : s;
	if (secs[strspn(secs, "0123456789.")] != '\0' || seconds_ns(secs, strlen(secs), 1, &ns))
		return -EINVAL;
	/* "10" is a duration without its unit far more often than a moment of 1970 */
	if (ns < 1000000000ull * NS_PER_S) {
		*why = "a number alone is Unix seconds (since 1970): give a duration its unit (10s, 10m)";
		return -EINVAL;
	}
	*out = ns;
	return 0;
}

void time_point_format(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / NS_PER_S);
	struct tm tm;

	if (!ns || !localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
}

int epoch_set_parse(const char *s, struct epoch_set *out)
{
	char *dup = strdup(s ? s : ""), *save = NULL, *tok;
	int err = dup ? 0 : -ENOMEM;

	out->r = NULL;
	out->n = out->cap = 0;
	if (!err && !*dup)
		err = -EINVAL;
	for (tok = dup ? strtok_r(dup, ",", &save) : NULL; tok && !err; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;
		if (dash)
			*dash = '\0';
		err = num_parse_range(tok, 0, UINT32_MAX, &lo);
		hi = lo;
		if (!err && dash)
			err = num_parse_range(dash + 1, 0, UINT32_MAX, &hi);
		if (!err && hi < lo)
			err = -EINVAL;
		if (err == -ERANGE)
			err = -EINVAL;	/* "no such epoch number", as for any other typo */
		if (err)
			break;
		if (ALLOC_GROW(out->r, out->n + 1, out->cap)) {
			err = -ENOMEM;
			break;
		}
		out->r[out->n++] = (struct epoch_range){ (uint32_t)lo, (uint32_t)hi };
	}
	/* "1,,2" and a trailing comma are typos, not empty lists */
	if (!err && (strstr(s, ",,") || s[0] == ',' || s[strlen(s) - 1] == ','))
		err = -EINVAL;
	free(dup);
	if (err)
		epoch_set_release(out);
	return err;
}

bool epoch_set_has(const struct epoch_set *set, uint32_t epoch)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->r[i].lo <= epoch && epoch <= set->r[i].hi)
			return true;
	return false;
}

void epoch_set_release(struct epoch_set *set)
{
	free(set->r);
	set->r = NULL;
	set->n = set->cap = 0;
}
