/* stitchprof_int.h - what the parts of libstitchprof share and do not export: the one error line and
 * whether the activity trace is running. */
#ifndef STITCHPROF_INT_H
#define STITCHPROF_INT_H

#include <cupti.h>

#define SP_HIDDEN __attribute__((visibility("hidden")))

/* Sets the error stitchprof_error() returns; returns -1. */
SP_HIDDEN int sp_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
SP_HIDDEN const char *sp_cupti_msg(CUptiResult r);
/* A trace session (stitchprof_start) is running. */
SP_HIDDEN int sp_tracing(void);

#endif
