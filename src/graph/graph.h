/* A compiled graph: value slots, nodes in execution order with kernels resolved and state built,
 * statically inferred types/shapes, constants, and a release schedule. Immutable after creation,
 * so any number of runs may execute it concurrently. */
#ifndef CORT_GRAPH_GRAPH_H
#define CORT_GRAPH_GRAPH_H
#include "op.h"
#include "namemap.h"

typedef struct cort_compile_opts {
    const cort_model_ir *model;
    int optimization_level;
    const char **dim_names; const int64_t *dim_values; size_t n_dims;   /* symbolic dims (session options) */
    const struct cort_provider *providers; size_t n_providers;          /* tried in order before the CPU */
    cort_pool *pool;   /* the session's thread pool, for work done once at creation (weight packing); or NULL */
    /* Size policy (cort.h: cort_session_options_set_max_tensor_bytes / _set_fold_budget); 0 = default */
    size_t max_tensor_bytes;
    size_t fold_budget; int fold_budget_set;   /* unset: CORT_DEFAULT_FOLD_BUDGET */
    struct cort_prepacked_weights *prepacked;   /* packed weights shared with other sessions, or NULL */
} cort_compile_opts;

/* Defaults of the size policy. A tensor above max_tensor_bytes is refused (INVALID_MODEL when
 * inference knows its shape at creation, INVALID_ARGUMENT at run time) before anything is
 * allocated: 1 TiB is beyond the memory of any machine this runs on, yet far below the 2^48-byte
 * address space (core/checked.h, CORT_MAX_ADDRESSABLE_BYTES) every allocation is held to anyway.
 * Constant folding may create at most fold_budget bytes of folded values beyond twice the
 * model's own initializer bytes, so a model that folds its weights (a Cast or DequantizeLinear
 * of every initializer) still folds while a tiny model cannot make creation allocate gigabytes. */
#define CORT_DEFAULT_MAX_TENSOR_BYTES ((size_t)1 << 40)
#define CORT_DEFAULT_FOLD_BUDGET ((size_t)16 << 20)
/* The limit in force for a graph compiled with opts (opts may be NULL). */
static inline size_t cort_max_tensor_bytes(const cort_compile_opts *opts) {
    size_t m = opts && opts->max_tensor_bytes ? opts->max_tensor_bytes : CORT_DEFAULT_MAX_TENSOR_BYTES;
    return m < CORT_MAX_ADDRESSABLE_BYTES ? m : CORT_MAX_ADDRESSABLE_BYTES;
}
/* Whether a tensor of elem type t and shape dims[rank] fits max_bytes; *bytes gets its size
 * (SIZE_MAX on overflow). Strings count their pointer array only. */
static inline int cort_tensor_fits(cort_type t, const int64_t *dims, size_t rank, size_t max_bytes, size_t *bytes) {
    int64_t n;
    size_t b;
    if (cort_dims_prod_ovf(dims, rank, &n) || cort_mul_size_ovf((size_t)n, cort_type_size(t) ? cort_type_size(t) : 1, &b)) {
        *bytes = SIZE_MAX;
        return 0;
    }
    *bytes = b;
    return b <= max_bytes;
}

typedef struct cort_graph {
    const cort_graph_ir *ir;
    struct cort_graph *parent;        /* enclosing graph for subgraphs */
    const cort_node *parent_node;     /* node owning this subgraph */
    const cort_compile_opts *opts;
    cort_arena *arena;                /* expanded node IR (functions), names */

    size_t n_slots, cap_slots;
    const char **slot_names;
    cort_tinfo *slot_info;
    cort_value **consts;              /* owned reference per constant slot (initializers, folded) */
    int32_t *last_use;                /* last node index reading the slot; INT32_MAX for graph outputs */
    cort_namemap names;

    size_t n_inputs;  int32_t *input_slots;   const cort_value_info_ir **input_info;   /* non-initializer inputs */
    uint8_t *input_type_only;         /* per input: only its element type is read (CastLike's 'like') */
    size_t n_outputs; int32_t *output_slots;  const cort_value_info_ir **output_info;
    size_t n_outer;   int32_t *outer_slots;   const char **outer_names;   /* subgraph: values from outer scope */
    int32_t *outer_index;             /* into the parent node's implicit inputs */

    size_t n_nodes; cort_node *nodes;  /* execution order */
    uint8_t *skip;                    /* per node: folded into constants, not executed */
    int32_t **release;                /* per node: slots to release after it (-1 terminated) */
    /* While compiling: where cort_node_const_data copies a lazy constant for a kernel to pack from
     * (one buffer reused node after node, freed after the last Conv known to need it, else at the
     * end of compile) */
    void *wscratch; size_t wscratch_bytes;
    size_t wscratch_last;             /* index of that Conv + 1; 0: none */
    /* top-level graph: bytes of the values constant folding created so far, and what it may create
     * (fold budget + twice the model's initializer bytes); subgraphs use their root's */
    size_t fold_used, fold_limit;
} cort_graph;

cort_status *cort_graph_compile(const cort_graph_ir *ir, const cort_compile_opts *opts, cort_graph *parent,
                                const cort_node *parent_node, cort_graph **out);
void cort_graph_free(cort_graph *g);
/* Readers of slot s among the executed nodes (implicit subgraph inputs included); *first: the
 * first reader's index. Whether `name` is one of the graph's outputs. */
size_t cort_graph_consumers(const cort_graph *g, int32_t s, size_t *first);
int cort_graph_is_output(const cort_graph_ir *ir, const char *name);
/* A new constant slot named `name` holding `value` (the graph takes over the reference, also on
 * failure). */
cort_status *cort_graph_const_slot(cort_graph *g, const char *name, cort_value *value, int32_t *out);
/* g->wscratch at least `bytes` big (node_api.c), and freed. */
cort_status *cort_graph_wscratch_reserve(cort_graph *g, size_t bytes);
void cort_graph_wscratch_drop(cort_graph *g);
/* The kernel of (domain, op_type, opset) from the provider that took node n (through its vtable's
 * find, with the session's instance of it), or NULL: what a pass rewriting n into another
 * operator runs it with. */
const cort_op_def *cort_graph_provider_find(const cort_graph *g, const cort_node *n, const char *domain,
                                            const char *op_type, int opset);
/* The level-2 optimizer passes are in src/graph/passes/ (passes.h). */

/* Per-run executor state. */
struct cort_exec {
    const atomic_int *terminate;      /* run options' flag, or NULL */
    cort_pool *pool;
    int depth;                        /* subgraph nesting, to bound recursion */
    struct cort_bufcache *cache;      /* session's recycling cache for outputs and scratch, or NULL */
    _Atomic uint64_t *profile;        /* top-level graph only: 2 counters per node (ns, count), or NULL */
    cort_value **values;              /* the running graph's value slots (set by cort_graph_execute) */
    const struct cort_graph *graph;
    /* largest tensor a kernel may create in this execution; 0 = the session's max_tensor_bytes
     * (constant folding sets what is left of its budget) */
    size_t max_bytes;
    /* top-level graph only: the session's chrome trace (session/profiler.h) when profiling to a
     * file, else NULL */
    struct cort_trace *trace;
};

/* Executes g. inputs: g->n_inputs borrowed values; outer: g->n_outer borrowed values; outputs get new
 * references (g->n_outputs). */
cort_status *cort_graph_execute(cort_exec *ex, const cort_graph *g, cort_value *const *inputs,
                                cort_value *const *outer, cort_value **outputs);
#endif
