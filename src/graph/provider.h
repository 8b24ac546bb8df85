/* Execution-provider interface (in the spirit of ggml's backend vtable). A provider is asked, node by
 * node at session creation, whether it takes the node; if it does, its kernel (a cort_op_def) runs
 * the node. Providers are tried in the order they were appended; the default provider (the CPU
 * provider, src/providers/cpu/cpu_provider.c) takes the rest. Everything here runs at session
 * creation except the kernels' run. */
#ifndef CORT_GRAPH_PROVIDER_H
#define CORT_GRAPH_PROVIDER_H
#include "op.h"

/* What the graph compiler and executor may assume about a provider's nodes (cort_provider_vtable.caps). */
#define CORT_PROVIDER_DEFAULT      1u   /* the fallback: takes every node no appended provider took */
#define CORT_PROVIDER_PATTERNS     2u   /* its nodes may be rewritten by the level-2 passes (src/graph/passes/)
                                         * into the fused cort.* operators it finds through `find` */
#define CORT_PROVIDER_OUTPUT_VIEWS 4u   /* its CORT_OP_OUTPUT_VIEW kernels may write output 0 into a view
                                         * of another value planned at creation (in-place Concat) */
#define CORT_PROVIDER_OPAQUE      16u   /* its kernels are user code: never constant-folded (they may count
                                         * calls or have side effects), never fused */
#define CORT_PROVIDER_LAYOUTS      8u   /* its kernels accept inputs in a provider-private layout
                                         * (cort_value.layout, e.g. NHWC chains) */

typedef struct cort_provider_vtable {
    const char *name;                          /* "cpu", "xnnpack": the name options and queries use */
    unsigned caps;                             /* CORT_PROVIDER_* */
    /* Valid option keys, for error messages (NULL-terminated). */
    const char *const *option_keys;
    /* Creates a per-session provider instance. Unknown keys or bad values fail with INVALID_ARGUMENT
     * listing the valid ones. Process-wide initialization (e.g. xnn_initialize) happens here, once.
     * The default provider is never instantiated (its functions get instance NULL). */
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
    /* Optional: the kernel of (domain, op_type) at an opset version by name, NULL if none (the
     * passes' fused operators; whether a model-local function has a built-in implementation). */
    const cort_op_def *(*find)(void *instance, const char *domain, const char *op_type, int opset);
    /* Optional: whether any version of (domain, op_type) exists, and which (for error messages). */
    int (*known)(void *instance, const char *domain, const char *op_type, int *min_opset, int *max_opset);
} cort_provider_vtable;

typedef struct cort_provider {
    const cort_provider_vtable *vt;
    void *instance;
} cort_provider;

/* Providers compiled into this library (NULL-terminated), the default provider first. */
extern const cort_provider_vtable *const cort_provider_registry[];
const cort_provider_vtable *cort_provider_find(const char *name);
/* The provider that takes the nodes no other provider took (the CPU provider). */
const cort_provider_vtable *cort_provider_default(void);
#endif
