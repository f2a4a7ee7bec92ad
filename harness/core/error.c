/* error.c - filling and decorating struct sb_error.
 * Kept tiny on purpose: every module reports through it, so it must never fail itself. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sb_error_set(struct sb_error *err, int code, const char *fmt, ...)
{
	if (!err)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = code;
	return code;
}

void sb_error_prefix(struct sb_error *err, const char *fmt, ...)
{
	char head[SB_ERR_MAX], old[SB_ERR_MAX];
	va_list ap;
	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", head, old);
}

int sb_exit_code_for(int code)
{
	switch (code) {
	case SB_OK:
		return SB_EXIT_OK;
	case SB_EINPUT:
	case SB_EEXIST:
		return SB_EXIT_USAGE;
	default:
		return SB_EXIT_ENV;
	}
}
