/* Session internals shared by session create, run and run_async. */
#ifndef CORT_SESSION_SESSION_H
#define CORT_SESSION_SESSION_H
#include <stdatomic.h>
#include "../graph/graph.h"
#include "../graph/provider.h"

#define CORT_MAX_PROVIDERS 8
/* Free output blocks a session keeps for reuse (see core/bufcache.h). */
#define CORT_SESSION_CACHE_BYTES ((size_t)256 << 20)

typedef struct cort_provider_cfg {
    char *name;
    char **keys, **values;
    size_t n;
} cort_provider_cfg;

struct cort_session_options {
    int threads;
    int level;
    cort_provider_cfg providers[CORT_MAX_PROVIDERS];
    size_t n_providers;
    char **dim_names;
    int64_t *dim_values;
    size_t n_dims;
    int profiling;
    size_t max_tensor_bytes;   /* 0 = default (graph.h) */
    size_t fold_budget; int fold_budget_set;
    struct cort_custom_op_set *custom_ops;   /* cort_session_options_add_custom_op; NULL if none */
    cort_pool *shared_pool;   /* cort_session_options_set_thread_pool (one reference), or NULL */
    int no_spin;              /* cort_session_options_set_spinning(o, 0) */
    int profile_file;         /* cort_session_options_set_profile_file */
    char *profile_prefix;
    char **init_names; cort_value **init_values; size_t n_inits;   /* cort_session_options_add_initializer */
    char **ext_names; void **ext_bytes; size_t *ext_lens; size_t n_ext;   /* ..._add_external_data (copies) */
    char *optimized_path;     /* cort_session_options_set_optimized_model_path */
    char *optimized_ext_file; size_t optimized_ext_min;   /* ..._set_optimized_model_external_data */
    struct cort_prepacked_weights *prepacked;   /* ..._set_prepacked_weights (one reference), or NULL */
};

struct cort_run_options {
    atomic_long refs;
    atomic_int terminate;
};

struct cort_session {
    atomic_long refs;
    cort_model_ir *model;
    cort_graph *graph;
    cort_compile_opts copts;
    char **dim_names;
    int64_t *dim_values;
    size_t n_dims;
    cort_pool *pool;
    struct cort_bufcache *cache;   /* recycled output blocks and run scratch */
    int threads;
    const void *cpu_allocator;
    cort_provider providers[CORT_MAX_PROVIDERS + 1];   /* custom ops first (if any), then the appended non-CPU providers */
    size_t n_providers;
    _Atomic uint64_t *profile;     /* 2 per node (ns, count) when profiling, else NULL */
    struct cort_huge_arena *weights;   /* packed weights made at creation; freed after the graph */
    struct cort_prepacked_weights *prepacked;   /* shared packed weights (one reference), or NULL */
    struct cort_trace *trace;      /* chrome-trace profiling (profiler.h), or NULL */
};

void cort_run_options_retain_internal(cort_run_options *o);

/* The public handle of a shared pool: the caller's reference to the pool. */
struct cort_thread_pool {
    cort_pool *pool;
};

/* Everything a run can check about its arguments before executing anything: names known and not
 * repeated, every input given, each input's kind, element type and static dims, and each
 * preallocated output's kind, element type and static dims. fn names the caller in messages. Fills
 * fed[k] (n_inputs entries, zeroed by the caller) and, when out_idx is not NULL, out_idx[i] (the
 * graph output index of output_names[i]). outputs may be NULL. Used by cort_session_run and, before
 * the run is accepted, by cort_session_run_async. */
cort_status *cort_run_check_args(const cort_session *session, const char *fn, const char *const *input_names,
                                 cort_value *const *inputs, size_t input_count, const char *const *output_names,
                                 size_t output_count, cort_value *const *outputs, cort_value **fed, size_t *out_idx);
/* Writes the session's optimized graph as an ONNX model to path (save_model.c). */
cort_status *cort_session_save_optimized(const cort_session *session, const char *path, const char *ext_file,
                                         size_t ext_min);
/* One fed value against graph input idx; one preallocated output against graph output k (run.c). */
cort_status *cort_run_check_input(const cort_graph *g, size_t idx, const cort_value *v);
cort_status *cort_run_check_preallocated(const cort_graph *g, size_t k, const char *fn, const cort_value *dst);
#endif
