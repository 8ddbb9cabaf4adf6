/* core/errmsg.h - a library object's "why the last call failed" text: the public handles
 * (spent_record, spent_stat, spent_trace) keep one for their *_error() functions, since the
 * library never prints. */
#ifndef SPENT_CORE_ERRMSG_H
#define SPENT_CORE_ERRMSG_H

#include <stddef.h>

/* Format the message into BUF (LEN bytes) and return ERR, so a failure reads
 * `return errmsg_set(buf, len, -ENOENT, "...", ...);`. */
int errmsg_set(char *buf, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
