/* Execution-provider interface (in the spirit of ggml's backend vtable). A provider is asked, node by
 * node at session creation, whether it takes the node; if it does, its kernel (a cort_op_def) runs
 * the node instead of the CPU provider's. Providers are tried in the order they were appended; the
 * CPU provider takes the rest. Everything here runs at session creation except the kernels' run. */
#ifndef CORT_GRAPH_PROVIDER_H
#define CORT_GRAPH_PROVIDER_H
#include "op.h"

typedef struct cort_provider_vtable {
    const char *name;                          /* "xnnpack" */
    /* Valid option keys, for error messages (NULL-terminated). */
    const char *const *option_keys;
    /* Creates a per-session provider instance. Unknown keys or bad values fail with INVALID_ARGUMENT
     * listing the valid ones. Process-wide initialization (e.g. xnn_initialize) happens here, once. */
    cort_status *(*create)(const char *const *keys, const char *const *values, size_t n, int session_threads,
                           void **instance);
    void (*destroy)(void *instance);
    /* Whether the provider takes `node` (inputs: its statically inferred input types/shapes/constants).
     * When refusing, write a short reason (e.g. "dilations > 1 unsupported"). */
    int (*supports)(void *instance, const cort_node *node, const cort_tinfo *inputs, char *reason, size_t reason_len);
    /* The kernel for a node it supports (init/infer/run as for CPU ops; init sees node->graph). */
    const cort_op_def *(*kernel)(void *instance, const cort_node *node);
    /* Identity of the process-wide allocator the provider allocates from (NULL if none). */
    const void *(*allocator)(void *instance);
    /* Optional: called once per compiled graph after every node has a kernel and fusions ran (before
     * the release schedule), to plan across the provider's nodes, e.g. keep NHWC between consecutive
     * nodes and transpose only at partition boundaries. May set node->provider_flags of its nodes. */
    cort_status *(*partition)(void *instance, struct cort_graph *g);
} cort_provider_vtable;

typedef struct cort_provider {
    const cort_provider_vtable *vt;
    void *instance;
} cort_provider;

/* Providers compiled into this library (NULL-terminated); the CPU provider is implicit. */
extern const cort_provider_vtable *const cort_provider_registry[];
const cort_provider_vtable *cort_provider_find(const char *name);
#endif
