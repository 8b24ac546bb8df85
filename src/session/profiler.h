/* Chrome-trace profiling in ONNX Runtime's event schema (see profiler.c). */
#ifndef CORT_SESSION_PROFILER_H
#define CORT_SESSION_PROFILER_H
#include <stdint.h>
#include "../graph/graph.h"

typedef struct cort_trace cort_trace;
/* Starts a trace now; prefix is copied (NULL or "" = "onnxruntime_profile_"). */
cort_status *cort_trace_create(const char *prefix, int threads, cort_trace **out);
void cort_trace_free(cort_trace *t);
/* Monotonic nanoseconds (the trace's clock). */
int64_t cort_trace_now(void);
/* Wall-clock nanoseconds since the epoch at which the trace started. */
int64_t cort_trace_start_epoch_ns(const cort_trace *t);
/* Records an event of category "Session" (name, times from cort_trace_now). Thread-safe; an event
 * that cannot be stored (out of memory, or the trace already ended) is dropped. */
void cort_trace_session(cort_trace *t, const char *name, int64_t t0, int64_t t1);
/* Records node n's fence_before / kernel_time / fence_after events with its inputs' and outputs'
 * types and shapes. Thread-safe. */
void cort_trace_node(cort_trace *t, const cort_node *n, cort_value *const *in, size_t n_in, cort_value *const *out,
                     size_t n_out, int64_t t0, int64_t t1);
/* Writes the JSON file (once; later calls return the same name) and stops recording. *path is
 * borrowed from the trace. */
cort_status *cort_trace_end(cort_trace *t, const char **path);
#endif
