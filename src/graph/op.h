/* The operator (kernel) interface. Every operator implementation is a `cort_op_def`:
 *
 *   infer  — creation time: from input types (and shapes / constant values where known) set the
 *            output types, and the output shapes when they can be known. Must always set the output
 *            element types it can; must not fail because something is unknown.
 *   init   — creation time (optional): parse and validate attributes once into an immutable state
 *            shared by all concurrent runs. Fail here, not at run time, for bad attributes.
 *   run    — run time: read ctx->inputs, produce every output through cort_kernel_output() (or
 *            cort_kernel_set_output()), use ctx->pool for large loops. Must never crash on any input:
 *            return cort_node_error(...) naming the input and the bad value instead.
 *
 * Kernels never keep per-run data in the state (runs are concurrent).
 */
#ifndef CORT_GRAPH_OP_H
#define CORT_GRAPH_OP_H
#include <stddef.h>
#include <stdint.h>
#include "cort.h"
#include "ir.h"
#include "../core/status.h"
#include "../core/value.h"
#include "../core/types.h"
#include "../core/act.h"
#include "../core/checked.h"
#include "../core/alloc.h"
#include "../core/threadpool.h"

typedef struct cort_op_def cort_op_def;
typedef struct cort_exec cort_exec;          /* per-run executor state (opaque to kernels) */
typedef struct cort_subgraph cort_subgraph;  /* a compiled subgraph (If/Loop/Scan bodies) */

/* A node after compilation. Kernels read it; only the graph compiler writes it. */
typedef struct cort_node {
    const cort_node_ir *ir;        /* name, op_type, domain, attributes */
    const char *name;              /* never NULL ("" if unnamed) */
    const char *op_type;
    const char *domain;            /* "" for ai.onnx */
    int         opset;             /* version of this node's domain imported by the model */
    const cort_op_def *op;
    void       *state;             /* from op->init */
    size_t      n_inputs, n_outputs;
    int32_t    *in_slot;           /* value slot per input; -1 = missing optional input */
    int32_t    *out_slot;          /* value slot per output; -1 = output not requested ("") */
    size_t      n_implicit;        /* outer-scope values used by subgraph attributes */
    int32_t    *implicit_slot;
    const char **implicit_names;
    struct cort_graph *graph;      /* owning compiled graph */
    /* The provider that took the node (src/graph/provider.h; its name is what
     * cort_session_node_info reports), NULL for nodes skipped before kernels were chosen. */
    const struct cort_provider_vtable *provider;
    const char *provider_note;     /* why the providers before the default refused it ("xnnpack: ..."), or NULL */
    /* Activation fused into this node's output by the optimizer (level 2; only for ops whose def has
     * CORT_OP_FUSES_ACTIVATION): the kernel applies it in its epilogue. */
    uint32_t    provider_flags;    /* free for the provider that took the node (set by its partition hook) */
    int         act;               /* CORT_ACT_* */
    float       act_alpha, act_beta;  /* Clip: min/max; LeakyRelu: alpha; HardSigmoid: alpha/beta */
    /* A following Add fused into this node (ops with CORT_OP_FUSES_SUM): input index of the addend,
     * appended after the op's own inputs, or 0 when there is none. */
    size_t      sum_input;
    /* In-place Concat (level 2): this node's output 0 is a view at element out_view_offset of the
     * value in slot out_view_slot (the Concat's output), created by the executor on first use; the
     * Concat (concat_inplace) then finds its inputs already in place and copies nothing. */
    int         has_out_view, concat_inplace;
    int32_t     out_view_slot;
    size_t      out_view_offset;
    /* Bit k: input k is a constant this node's kernel packed at init (cort_node_const_input_packed);
     * its runs never read the constant itself. */
    uint32_t    const_packed;
    size_t      index;             /* position in execution order */
} cort_node;

/* What is statically known about a value during creation-time inference. */
typedef struct cort_tinfo {
    cort_vkind kind;                /* CORT_VKIND_UNKNOWN if not known */
    cort_type  elem;                /* element type (tensor; sequence items; optional contents); UNDEFINED if unknown */
    cort_vkind inner;               /* for optionals: the contents' kind */
    int        rank;                /* -1 if unknown */
    int64_t    dims[CORT_MAX_RANK]; /* -1 for an unknown dimension */
    const cort_value *value;        /* constant contents when known (initializer, Constant, folded), else NULL */
    int        present;             /* 0 for a missing optional input */
} cort_tinfo;

typedef struct cort_infer_ctx {
    const cort_node *node;
    int opset;
    const void *state;              /* from init (init runs before infer) */
    size_t n_inputs;  const cort_tinfo *inputs;
    size_t n_outputs; cort_tinfo *outputs;   /* preset to unknown (kind UNKNOWN, rank -1) */
} cort_infer_ctx;

typedef struct cort_kernel_ctx {
    const cort_node *node;
    const void *state;
    int opset;
    cort_value *const *inputs; size_t n_inputs;   /* NULL entries for missing optional inputs */
    cort_value **outputs;      size_t n_outputs;  /* NULL on entry; filled by the kernel */
    cort_value *const *implicit; size_t n_implicit; /* outer-scope values for subgraphs */
    cort_pool *pool;
    cort_exec *exec;
} cort_kernel_ctx;

/* Applies a fused activation to n floats in place (the reference epilogue). */
void cort_apply_activation(const cort_node *node, float *y, size_t n);

#define CORT_OP_FUSES_ACTIVATION 1u   /* run applies node->act to its output 0 */
#define CORT_OP_FUSES_SILU       2u   /* ... including CORT_ACT_SILU (x * sigmoid(x), from Sigmoid + Mul) */
#define CORT_OP_FUSES_SUM        4u   /* run adds input node->sum_input (same shape as output 0) before node->act */
#define CORT_OP_OUTPUT_VIEW      8u   /* run allocates output 0 once through cort_kernel_output (may get a view) */

/* max_opset of an entry that is the op's newest version: it handles every later opset of its
 * domain until ONNX defines a new version of the op (the highest ai.onnx opset ONNX 1.23 defines). */
#define CORT_OPSET_MAX 28

struct cort_op_def {
    const char *name;
    const char *domain;          /* "" for ai.onnx */
    int   min_opset, max_opset;  /* inclusive range of the domain's opset versions this entry handles */
    uint32_t types;              /* CORT_TBIT mask for the element type of input `type_input` (0 = any) */
    int   type_input;
    cort_status *(*init)(const cort_node *node, void **state);  /* optional */
    void (*free_state)(void *state);                             /* optional */
    cort_status *(*infer)(cort_infer_ctx *ctx);                  /* required */
    cort_status *(*run)(cort_kernel_ctx *ctx);                   /* required */
    unsigned flags;                                              /* CORT_OP_* */
};

/* ---- registry ---- */
/* Finds the implementation of (domain, op_type) for the given opset version; NULL if none. */
const cort_op_def *cort_op_find(const char *domain, const char *op_type, int opset);
/* Whether any version of (domain, op_type) exists (for better error messages). */
int cort_op_known(const char *domain, const char *op_type, int *min_opset, int *max_opset);
/* The whole table (src/providers/cpu/op_table.c), sorted by (domain, name, min_opset): for tests
 * and tools that list what cort implements. */
size_t cort_op_table(const cort_op_def *const **out);

/* ---- errors ---- */
/* A status whose message starts with "node 'NAME' (OP_TYPE): ". */
cort_status *cort_node_error(const cort_node *node, cort_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- attributes (creation or run time; return defaults when absent) ---- */
const cort_attr_ir *cort_attr_get(const cort_node *node, const char *name);
int64_t      cort_attr_int(const cort_node *node, const char *name, int64_t dflt);
float        cort_attr_float(const cort_node *node, const char *name, float dflt);
const char  *cort_attr_str(const cort_node *node, const char *name, const char *dflt);
size_t       cort_attr_ints(const cort_node *node, const char *name, const int64_t **out);   /* 0, *out=NULL if absent */
size_t       cort_attr_floats(const cort_node *node, const char *name, const float **out);
size_t       cort_attr_strings(const cort_node *node, const char *name, const char *const **out);
const cort_value *cort_attr_tensor(const cort_node *node, const char *name);
const cort_graph_ir *cort_attr_graph(const cort_node *node, const char *name);

/* Constant value of input i when it is known at session creation (an initializer or a folded
 * constant), else NULL. Valid in init/infer and for the session's life: kernels may prepack it. */
const cort_value *cort_node_const_input(const cort_node *node, size_t i);
/* The same constant without copying it out of the model file when it is still there (a lazy value:
 * data NULL, see value.h): for kernels that only read its shape, or pack it through
 * cort_node_const_data. */
const cort_value *cort_node_const_input_lazy(const cort_node *node, size_t i);
/* Constant input i's contents, aligned for its type, in *out for a kernel to pack from during init:
 * its data, or for a lazy constant a copy in a buffer of the graph's that is reused by the next
 * call (so a weight only packed is never copied for good). Fails on out-of-memory. */
cort_status *cort_node_const_data(const cort_node *node, size_t i, const void **out);
/* A kernel that packed constant input i into its own layout at init calls this: its runs never
 * read the constant (a lazy one then stays in the file), and if the constant lies in place in a
 * file-mapped model its pages leave the resident set (read back from the file should anything
 * touch them again), so the weights are not held twice. */
void cort_node_const_input_packed(const cort_node *node, size_t i);
/* While packing: bytes [off, off + n) of constant input i were read and will not be again, so
 * their file pages (whole pages inside the range, of a constant in place in a file-mapped model)
 * may leave the resident set now; a big weight then never is resident whole next to its pack. */
void cort_node_const_input_drop(const cort_node *node, size_t i, size_t off, size_t n);
/* The session's thread pool while the graph is being compiled (init may spread one-time work such
 * as weight packing over it), or NULL. Not for use at run time (use ctx->pool). */
cort_pool *cort_node_init_pool(const cort_node *node);
/* The session's prepacked-weights container (core/prepacked.h) for weights packed at creation, or NULL. */
struct cort_prepacked_weights *cort_node_prepacked(const cort_node *node);

/* ---- kernel helpers ---- */
/* Allocates output i as a tensor (uninitialized data; strings ""), stores it in ctx->outputs[i] and
 * returns it (borrowed) in *out. */
cort_status *cort_kernel_output(cort_kernel_ctx *ctx, size_t i, cort_type type, const int64_t *dims, size_t rank,
                                cort_value **out);
/* A tensor view of `data` (inside `base`, which is retained) as a new value, its header recycled
 * through the session's cache (no allocation in steady state). Not stored as an output: pass it to
 * cort_kernel_set_output. */
/* A new tensor that is not one of the node's outputs (loop iteration values, stacked scan
 * outputs), its contents uninitialized (zero-filled, and "" for strings, when it cannot come from
 * the cache): from the session's recycling cache, so steady-state runs do not call the allocator;
 * a plain allocation when ctx has no cache. The caller owns the reference. */
cort_status *cort_kernel_tensor(cort_kernel_ctx *ctx, cort_type type, const int64_t *dims, size_t rank, cort_value **out);
cort_status *cort_kernel_view(cort_kernel_ctx *ctx, cort_type type, const int64_t *dims, size_t rank, void *data,
                              cort_value *base, cort_value **out);
/* Input k's value if output 0 may take it over and be computed in place: a tensor of this type
 * and shape that owns its data (no view, no mapped file), is referenced only by this run's value
 * table and whose last reader is this node. Else NULL. The caller retains it and stores it with
 * cort_kernel_set_output; only kernels whose every output element depends on the same-index
 * element of that input alone (and reads it before writing) may use it. */
cort_value *cort_kernel_reusable_input(cort_kernel_ctx *ctx, size_t k, cort_type type, const int64_t *dims,
                                       size_t rank);
/* Stores a value as output i, taking over one reference (e.g. a retained input for Identity). */
/* The value the executor already holds in this node's output slot 0 (an in-place Concat's buffer,
 * written by its producers), or NULL. Borrowed. */
cort_value *cort_kernel_planned_output(cort_kernel_ctx *ctx);
void cort_kernel_set_output(cort_kernel_ctx *ctx, size_t i, cort_value *value);
/* Whether the run was asked to stop; long kernels check this at chunk boundaries and return
 * cort_kernel_cancelled_status(ctx). */
int          cort_kernel_cancelled(const cort_kernel_ctx *ctx);
cort_status *cort_kernel_cancelled_status(const cort_kernel_ctx *ctx);
/* Per-run scratch memory (64-byte aligned, uninitialized) recycled through the session's cache, so a
 * steady-state run does not call the allocator. Return it with cort_kernel_scratch_free. NULL on OOM. */
void *cort_kernel_scratch(cort_kernel_ctx *ctx, size_t bytes);
void  cort_kernel_scratch_free(cort_kernel_ctx *ctx, void *p);
/* Whether output i is consumed (graph output or used by a later node). */
int cort_node_output_used(const cort_node *node, size_t i);

/* ---- inference helpers ---- */
void cort_tinfo_unknown(cort_tinfo *t);                         /* kind UNKNOWN, rank -1 */
void cort_tinfo_tensor(cort_tinfo *t, cort_type elem);          /* tensor of elem, unknown shape */
/* Known shape; a negative entry (a bad constant value included) is stored as -1, unknown. */
void cort_tinfo_tensor_shape(cort_tinfo *t, cort_type elem, const int64_t *dims, int rank);
int  cort_tinfo_shape_known(const cort_tinfo *t);               /* rank >= 0 and every dim >= 0 */
/* out0 = in0 (type and shape). */
cort_status *cort_infer_same(cort_infer_ctx *ctx);
/* every output = in0 (type and shape). */
cort_status *cort_infer_same_all(cort_infer_ctx *ctx);
/* out0 type = in0 type, shape = numpy broadcast of all present inputs (unknown dims propagate). */
cort_status *cort_infer_broadcast(cort_infer_ctx *ctx);
/* as above with out0 type bool. */
cort_status *cort_infer_broadcast_bool(cort_infer_ctx *ctx);
/* Numpy broadcast of two static shapes; -1 dims allowed (propagate as unknown). Fails with
 * INVALID_ARGUMENT on incompatible known dims. */
cort_status *cort_broadcast_shapes(const int64_t *a, int ra, const int64_t *b, int rb, int64_t *out, int *rout);
/* Element strides of an input of shape in_dims[in_rank] broadcast to out_dims[out_rank]
 * (0 for broadcast dimensions); strides has out_rank entries. */
void cort_broadcast_strides(const int64_t *out_dims, size_t out_rank, const int64_t *in_dims, size_t in_rank,
                            int64_t *strides);

/* ---- subgraphs (If/Loop/Scan) ---- */
/* Compiles a graph attribute of `node` (outer-scope names resolved against the node's implicit inputs). */
cort_status *cort_subgraph_compile(const cort_node *node, const cort_graph_ir *g, cort_subgraph **out);
void         cort_subgraph_free(cort_subgraph *sg);
size_t       cort_subgraph_input_count(const cort_subgraph *sg);
size_t       cort_subgraph_output_count(const cort_subgraph *sg);
/* Output type info of the subgraph (from its declared outputs / inference). */
const cort_tinfo *cort_subgraph_output_info(const cort_subgraph *sg, size_t i);
/* Runs the subgraph: inputs are borrowed; outputs[i] receive new references. */
cort_status *cort_subgraph_run(cort_kernel_ctx *ctx, const cort_subgraph *sg, cort_value *const *inputs, size_t n_inputs,
                               cort_value **outputs, size_t n_outputs);
#endif
