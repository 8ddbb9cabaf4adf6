/* cli/time_window.h - the values users type to choose a time window and epochs of a profile
 * database: --since/--until (a duration back from now, a date and time, or Unix seconds) and
 * --epoch lists ("3", "2-5", "1,4-6"). */
#ifndef SPENT_CLI_TIME_WINDOW_H
#define SPENT_CLI_TIME_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parse S as a point in time (Unix ns, CLOCK_REALTIME) into *OUT:
 *   "90s", "10m", "2h", "1d", "500ms", "1.5h": that long before NOW_NS;  "now";
 *   "1763900000" or "@1763900000.25": Unix seconds;
 *   "2026-11-23", "2026-11-23 16:05", "2026-11-23T16:05:30", "16:05", "16:05:30": local time
 *   (a time of day alone is today's).
 * 0 or -EINVAL (*WHY: what was wrong, a static string).
 */
int time_point_parse(const char *s, uint64_t now_ns, uint64_t *out, const char **why);

/* A set of epoch numbers: ranges LO-HI, inclusive. */
struct epoch_set {
	struct epoch_range { uint32_t lo, hi; } *r;
	size_t n, cap;
};

/* Parse "N", "N-M" and comma-separated lists of them; 0, -EINVAL, -ENOMEM. */
int epoch_set_parse(const char *s, struct epoch_set *out);
bool epoch_set_has(const struct epoch_set *set, uint32_t epoch);
void epoch_set_release(struct epoch_set *set);

/* "2026-11-23 16:05:30" (local time) into BUF (>= 20 bytes); "-" for 0. */
void time_point_format(uint64_t ns, char *buf, size_t len);

#endif
