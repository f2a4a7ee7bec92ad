/* log.c - the one place that formats human messages on stderr.
 * Errors always print; -q hides warnings and info; -v adds debug lines. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

void sb_log(const struct sb_ctx *ctx, enum log_level lvl, const char *fmt, ...)
{
	static const char *const tag[] = { "error: ", "warning: ", "", "debug: " };
	if (ctx && ctx->quiet && lvl > LOG_ERROR)
		return;
	if (lvl == LOG_DEBUG && !(ctx && ctx->verbose))
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "stitchbench: %s", tag[lvl]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
