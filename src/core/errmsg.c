/* core/errmsg.c - formatting a library handle's failure text (core/errmsg.h). */
#include <stdarg.h>
#include <stdio.h>

#include "core/errmsg.h"

int errmsg_set(char *buf, size_t len, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return err;
}
