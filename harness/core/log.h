/* log.h - messages for people on stderr: "stitchbench: warning: ...". Verbosity comes from the
 * context; data for programs (tables, JSON) goes to stdout and never through here. */
#ifndef SB_LOG_H
#define SB_LOG_H

#include "context.h"

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

__attribute__((format(printf, 3, 4)))
void sb_log(const struct sb_ctx *ctx, enum log_level lvl, const char *fmt, ...);

#define sb_error(ctx, ...) sb_log(ctx, LOG_ERROR, __VA_ARGS__)
#define sb_warn(ctx, ...) sb_log(ctx, LOG_WARN, __VA_ARGS__)
#define sb_info(ctx, ...) sb_log(ctx, LOG_INFO, __VA_ARGS__)
#define sb_debug(ctx, ...) sb_log(ctx, LOG_DEBUG, __VA_ARGS__)

/* Timestamped lines for finding where time goes ("stitchbench: trace: 12.345 ..."), seconds since
 * the first trace line; on only when STITCHBENCH_TRACE is set and not "0", so they cost nothing in
 * normal runs and need no context (the worker client has none). */
int sb_trace_on(void);
__attribute__((format(printf, 1, 2)))
void sb_trace(const char *fmt, ...);

#endif
