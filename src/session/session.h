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
    cort_provider providers[CORT_MAX_PROVIDERS];   /* non-CPU providers, in append order */
    size_t n_providers;
    _Atomic uint64_t *profile;     /* 2 per node (ns, count) when profiling, else NULL */
    struct cort_huge_arena *weights;   /* packed weights made at creation; freed after the graph */
};

void cort_run_options_retain_internal(cort_run_options *o);
#endif
