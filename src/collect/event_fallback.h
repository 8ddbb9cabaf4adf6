/* collect/event_fallback.h - what an event becomes when this machine or user cannot count it
 * as asked, worded for the user: shared by record and stat (library and CLI), which say it
 * through their own warning channels. */
#ifndef SPENT_COLLECT_EVENT_FALLBACK_H
#define SPENT_COLLECT_EVENT_FALLBACK_H

#include <stdbool.h>
#include <stddef.h>

#include "spent/events.h"

/* When kernel.perf_event_paranoid keeps this user from counting the kernel, make EV count
 * user space only (:u) and return true, with the explanation in MSG (LEN bytes). */
bool event_user_space_fallback(struct spent_event *ev, char *msg, size_t len);

#endif
