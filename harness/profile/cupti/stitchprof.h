/* stitchprof.h - the C API of lib/libstitchprof.so, the CUPTI tracer a worker loads (through ctypes)
 * to record every kernel, memcpy, memset and synchronisation of the calls it times (docs/trace.md). */
#ifndef STITCHPROF_H
#define STITCHPROF_H

#include <stdint.h>

/* Every function returns 0 on success and a negative number on failure; stitchprof_error() then
 * says what failed. One session per process: CUPTI's buffer callbacks carry no user pointer. */

/* Opens `path` for writing, writes the header and enables the activity kinds. The CUDA context
 * should already exist (torch initialised the device). */
int stitchprof_start(const char *path);

/* Marks the start of trial `id` (> 0) on the calling thread: every CUDA API call until
 * stitchprof_trial_end() is tagged with it (an external correlation id), so its kernels, copies,
 * events and synchronisations are attributed to the trial wherever and whenever they run.
 * `stream` is the cudaStream_t the caller times on (0 = the legacy default stream). */
int stitchprof_trial_begin(uint64_t id, uintptr_t stream);
int stitchprof_trial_end(void);

/* Makes CUPTI hand over every completed record and writes it out. */
int stitchprof_flush(void);

/* Flushes, disables the activity kinds, writes the footer with the totals and closes the file. */
int stitchprof_stop(void);

/* Totals of the session (also after stop): records written, kernels among them, records CUPTI dropped. */
void stitchprof_counts(uint64_t *records, uint64_t *kernels, uint64_t *dropped);

/* Hardware metrics (metrics.c): between begin and end, with no trace running, every kernel launch is
 * a range of the CUPTI range profiler and is replayed until its counters are read; end writes the
 * metrics file `path` (docs/trace.md). mark(1) and mark(0) bracket a call the worker times, so the
 * file tells its launches from the ones around it (input draws, the cache flush). */
int stitchprof_metrics_begin(const char *path);
void stitchprof_metrics_mark(int in_call);
int stitchprof_metrics_end(void);

/* The last error, one line. */
const char *stitchprof_error(void);

#endif
