/* log.c - the one place that formats human messages on stderr.
 * Errors always print; -q hides warnings and info; -v adds debug lines. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

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

int sb_trace_on(void)
{
	static int on = -1;
	if (on < 0) {
		const char *v = getenv("STITCHBENCH_TRACE");
		on = v && *v && strcmp(v, "0") != 0;
	}
	return on;
}

void sb_trace(const char *fmt, ...)
{
	static double t0 = -1;
	if (!sb_trace_on())
		return;
	if (t0 < 0)
		t0 = proc_now();
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "stitchbench: trace: %8.3f ", proc_now() - t0);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
