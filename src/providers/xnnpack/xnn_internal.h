/* XNNPACK execution provider: shared internals.
 *
 * Lifecycle of the packaged XNNPACK (git 2022-02-16): xnn_create_* packs parameters/weights once,
 * xnn_setup_* binds shapes and pointers, xnn_run_operator runs. Setup writes into the operator, so
 * an operator belongs to one run at a time: every node keeps a small pool of operator instances
 * (xnn_ops) — a run takes a free one, or creates one when all are busy, and gives it back.
 *
 * Layout: ONNX tensors are NCHW, XNNPACK's spatial operators are NHWC. The partition hook marks
 * the XNNPACK nodes whose output feeds only XNNPACK nodes that read NHWC (XNN_EMIT_NHWC); those
 * leave it channels-last (cort_value.layout = 1), so transposes happen at partition boundaries
 * only. Every kernel reads the layout of its inputs at run time, so correctness never depends on
 * the plan (docs/xnnpack.md). */
#ifndef CORT_PROVIDERS_XNNPACK_INTERNAL_H
#define CORT_PROVIDERS_XNNPACK_INTERNAL_H
#include <pthread.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <xnnpack.h>
#include <pthreadpool.h>
#include "../../graph/op.h"
#include "../../graph/provider.h"
#include "../../graph/graph.h"

extern const cort_provider_vtable cort_provider_xnnpack;

/* ---- process-wide owner (xnn_init.c) ---- */
typedef struct xnn_owner xnn_owner;
/* Initializes XNNPACK once per process (owner created, published and handed to xnn_initialize inside
 * one cort_once) and returns the owner. The owner lives for the process. */
cort_status *xnn_owner_get(xnn_owner **out);
const char  *xnn_status_str(enum xnn_status s);
/* Counts one NCHW <-> NHWC transpose (cort_xnnpack_test_transpose_count). */
void         xnn_owner_count_transpose(xnn_owner *o);

/* ---- provider instance (one per session) ---- */
typedef struct xnn_instance {
    xnn_owner    *owner;
    int           threads;
    int           nhwc_chains;   /* option nhwc_chains: keep NHWC between XNNPACK nodes (default 1) */
    /* created at the first run that needs it (pthreadpool_create is slow next to a session's
     * creation: sessions whose nodes never reach XNNPACK, or never run, do not pay it); NULL when
     * threads == 1 */
    pthreadpool_t _Atomic tp;
    pthread_mutex_t tp_lock;     /* guards the creation */
    int           tp_failed;
    atomic_flag   tp_busy;       /* one run at a time drives tp; others run single-threaded */
} xnn_instance;

/* pthreadpool serializes its callers, so a run that finds it busy runs its operator on its own
 * thread (NULL pool) instead of waiting: concurrent runs never serialize on it. */
pthreadpool_t xnn_tp_take(xnn_instance *inst);
void          xnn_tp_give(xnn_instance *inst, pthreadpool_t tp);

/* ---- per-node state shared by all XNNPACK kernels (first member of every kernel state) ---- */
typedef struct xnn_base xnn_base;
/* Creates an operator for `key` (e.g. the channel count, which XNNPACK fixes at creation). */
typedef cort_status *(*xnn_create_fn)(const cort_node *node, const xnn_base *state, size_t key, xnn_operator_t *op);

struct xnn_base {
    xnn_instance      *inst;
    const cort_op_def *cpu;           /* the CPU kernel of this node: infer, and run for shapes XNNPACK refuses */
    void              *cpu_state;
    xnn_create_fn      create;
    float              out_min, out_max;   /* output range (a fused Relu/Clip); -inf..+inf otherwise */
    pthread_mutex_t    lock;               /* guards the free operators below */
    xnn_operator_t    *free_ops;
    size_t            *free_keys;
    size_t             n_free, cap_free;
};

/* Fills the common part: instance, CPU fallback state, fused output range. */
cort_status *xnn_base_init(const cort_node *node, xnn_base *b, xnn_create_fn create, int fuses_activation);
void         xnn_base_free(xnn_base *b);
/* op.h hooks shared by every XNNPACK kernel */
cort_status *xnn_infer(cort_infer_ctx *ctx);
void         xnn_free_state(void *state);   /* state starts with xnn_base and was cort_malloc'ed */
/* Runs the node on the CPU kernel (for shapes XNNPACK cannot take): channels-last inputs are handed
 * over as NCHW copies, and output 0 is made channels-last when the node's flag asks for it. */
cort_status *xnn_run_cpu(cort_kernel_ctx *ctx);

/* Takes a free operator created for `key`, creating one if none is free. */
cort_status *xnn_op_take(const cort_node *node, xnn_base *b, size_t key, xnn_operator_t *op);
void         xnn_op_give(xnn_base *b, size_t key, xnn_operator_t op);
/* Puts a freshly created operator into the pool (init creates one to validate parameters early). */
cort_status *xnn_op_prime(const cort_node *node, xnn_base *b, size_t key);

/* A node error for a failed XNNPACK call: names node, op, the call and the xnn status. */
cort_status *xnn_call_error(const cort_node *node, const char *call, enum xnn_status s);

/* ---- buffers and layout (xnn_layout.c) ---- */
/* count floats plus XNN_EXTRA_BYTES of slack (XNNPACK may read past the end of its inputs). */
float *xnn_buf(size_t count);
/* The data of input tensor v if reading XNN_EXTRA_BYTES past its end is safe, else a padded copy in *tmp. */
cort_status *xnn_input(const cort_value *v, const float **data, float **tmp);
/* [N][C][S] <-> [N][S][C]; counted (cort_xnnpack_test_transpose_count) when data moves. */
void xnn_nchw_to_nhwc(xnn_instance *inst, cort_pool *pool, const float *src, float *dst, size_t n, size_t c, size_t s);
void xnn_nhwc_to_nchw(xnn_instance *inst, cort_pool *pool, const float *src, float *dst, size_t n, size_t c, size_t s);

/* node->provider_flags: output 0 may stay channels-last (every consumer is an XNNPACK node reading
 * NHWC at that input; set by the partition hook only) */
#define XNN_EMIT_NHWC 1u
/* product of dims 2.. (1 for rank < 3) */
size_t xnn_spatial(const int64_t *shape, size_t rank);
/* Whether v is a float tensor whose memory is channels-last AND differs from NCHW (layout 1,
 * rank >= 3, C > 1, spatial > 1). Where the layouts coincide the tag does not matter. */
int xnn_is_nhwc(const cort_value *v);
/* Whether the node leaves an output of this shape channels-last (flag set, rank >= 3, the layouts differ). */
int xnn_want_nhwc(const cort_node *node, const int64_t *shape, size_t rank);
/* NHWC data of float tensor X (rank >= 3): X's memory when it is channels-last already or the layouts
 * coincide, else a transposed copy in *tmp (free with cort_free). */
cort_status *xnn_input_nhwc(xnn_instance *inst, cort_pool *pool, const cort_value *X, const float **data, float **tmp);
/* Where an NHWC operator writes its output Y: Y's memory when Y stays channels-last (then
 * Y->layout = 1) or the layouts coincide, else a scratch buffer in *tmp that xnn_output_done
 * transposes into Y (NCHW) and frees. */
cort_status *xnn_output_begin(const cort_node *node, cort_value *Y, float **data, float **tmp);
void         xnn_output_done(xnn_instance *inst, cort_pool *pool, cort_value *Y, float *tmp);
/* A new float tensor with X's shape and data in the other layout (to_nhwc: layout 1). */
cort_status *xnn_relayout(xnn_instance *inst, cort_pool *pool, const cort_value *X, int to_nhwc, cort_value **out);
/* Whether any input of the kernel is channels-last (kernels that only read NCHW then take xnn_run_cpu). */
int xnn_any_nhwc_input(const cort_kernel_ctx *ctx);

/* ---- graph queries (xnn_provider.c) ---- */
/* The constant value of input i (initializer or folded), or NULL. */
const cort_value *xnn_const_input(const cort_node *node, size_t i);
/* Whether input i is a float tensor (or absent when optional). */
int xnn_float_input(const cort_tinfo *in, size_t n_inputs, size_t i);
/* If the node's only output feeds exactly one Relu/Clip with constant bounds and nothing else, the
 * range to fuse and that activation node. */
int xnn_fusion_target(const cort_node *node, float *lo, float *hi, const cort_node **act);
/* Whether node (Relu/Clip) is already applied by its XNNPACK producer (it then passes its input on). */
int xnn_activation_fused(const cort_node *node);
/* Constant bounds of a Relu/Clip node. */
int xnn_activation_range(const cort_node *node, float *lo, float *hi);

/* ---- op families ---- */
typedef struct xnn_kind {
    const char *op_type;
    int min_opset;
    /* 1 if XNNPACK can take the node; else 0 with a reason */
    int (*supports)(const cort_node *node, const cort_tinfo *in, char *reason, size_t len);
    const cort_op_def *def;
    int fuses_activation;                    /* output range can absorb a following Relu/Clip */
} xnn_kind;

extern const xnn_kind xnn_conv_kinds[], xnn_pool_kinds[], xnn_gemm_kinds[], xnn_elementwise_kinds[],
    xnn_shape_kinds[];
const xnn_kind *xnn_kind_find(const char *op_type);
const xnn_kind *xnn_kind_of_def(const cort_op_def *def);

/* spatial attribute helper shared by Conv/ConvTranspose/pools: 1-D ops map to H = 1 */
typedef struct xnn_window {
    int      nd;                  /* spatial dims: 1 or 2 */
    uint32_t k[2], s[2], d[2];     /* [h, w] */
    uint32_t pad[4];              /* top, left, bottom, right */
    int      same_upper, same_lower;
} xnn_window;
/* Parses kernel_shape (or kshape when given), strides, dilations, pads, auto_pad for nd spatial dims. */
int xnn_window_parse(const cort_node *node, int nd, const int64_t *kshape, xnn_window *w, char *reason, size_t len);
/* SAME_* padding for input spatial size (h, w). */
void xnn_window_same_pads(const xnn_window *w, const int64_t *in_hw, uint32_t *pad);

#define XNN_REFUSE(...) do { snprintf(reason, len, __VA_ARGS__); return 0; } while (0)
#endif
