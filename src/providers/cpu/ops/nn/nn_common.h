/* Shared helpers of the 'nn' family: float views of tensors of any numeric type, sliding-window
 * attributes (kernel_shape/strides/dilations/pads/auto_pad/ceil_mode) and their shape formulas. */
#ifndef CORT_CPU_NN_COMMON_H
#define CORT_CPU_NN_COMMON_H
#include <math.h>
#include <stdint.h>
#include "../../../../graph/op.h"
#include "../../kernels/act_ukernels.h"
#include "../../kernels/isa_config.h"
#include "../fused/fused.h"   /* fu_gelu_f32: CORT_ACT_GELU */

/* Spatial ranks handled by Conv/Pool kernels: 1-D and 2-D are run as 3-D with leading unit dims. */
#define NN_MAX_SPATIAL 3

/* ---- float views ----
 * Kernels compute in float; float16/bfloat16/double/int tensors are converted on the way in/out.
 * (double therefore runs at float precision.) */
typedef struct nn_fbuf {
    float *p;        /* the float data */
    float *owned;    /* non-NULL when p is a converted copy to free with nn_fbuf_free */
} nn_fbuf;
/* A float view of tensor v (no copy when v is float). */
cort_status *nn_fbuf_in(const cort_value *v, nn_fbuf *out);
/* A float buffer for writing tensor v (v->data when v is float, else scratch). */
cort_status *nn_fbuf_out(cort_value *v, nn_fbuf *out);
/* Converts the scratch of an output buffer into v (no-op for float). */
void nn_fbuf_commit(const nn_fbuf *b, cort_value *v);
void nn_fbuf_free(nn_fbuf *b);
void nn_f32_to_type(const float *src, void *dst, cort_type t, size_t n);
void nn_type_to_f32(const void *src, cort_type t, float *dst, size_t n);

/* ---- sliding windows ---- */
typedef enum nn_auto_pad { NN_PAD_NOTSET = 0, NN_PAD_SAME_UPPER, NN_PAD_SAME_LOWER, NN_PAD_VALID } nn_auto_pad;

typedef struct nn_window {
    int         nd;                 /* spatial rank known from attributes (0: from input/weights) */
    int         has_kernel, has_strides, has_dilations, has_pads;
    int64_t     kernel[NN_MAX_SPATIAL], strides[NN_MAX_SPATIAL], dilations[NN_MAX_SPATIAL];
    int64_t     pads[2 * NN_MAX_SPATIAL];  /* begins then ends */
    nn_auto_pad auto_pad;
    int         ceil_mode;
} nn_window;

/* Parses the window attributes (validating sizes and values). kernel_required: pools. */
cort_status *nn_window_parse(const cort_node *node, int kernel_required, nn_window *w);

/* Resolved geometry normalized to 3 spatial dims (index 3-nd.. hold the real ones). */
typedef struct nn_geom {
    int     nd;
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} nn_geom;

/* Computes pads and output dims for spatial input dims in[nd] and kernel k[nd] (k NULL: from w).
 * is_pool enables ceil_mode. Unknown input dims (-1) give -1 outputs (inference). */
cort_status *nn_window_geom(const cort_node *node, const nn_window *w, int nd, const int64_t *in, const int64_t *k,
                            int is_pool, nn_geom *g);
/* The real output dims of g (nd of them) into out. */
void nn_geom_out_dims(const nn_geom *g, int64_t *out);
static inline int64_t nn_geom_in_size(const nn_geom *g) { return g->in[0] * g->in[1] * g->in[2]; }
static inline int64_t nn_geom_out_size(const nn_geom *g) { return g->out[0] * g->out[1] * g->out[2]; }
static inline int64_t nn_geom_k_size(const nn_geom *g) { return g->k[0] * g->k[1] * g->k[2]; }

/* ---- fused activation epilogue (node->act set by the optimizer) ---- */
typedef struct nn_act { int kind; float alpha, beta; } nn_act;   /* kind: CORT_ACT_* */

static inline nn_act nn_act_of(const cort_node *node) {
    nn_act a = { node->act, node->act_alpha, node->act_beta };
    return a;
}
/* Applies the activation to n floats in place. Parameters are copied to locals so the loops
 * vectorize (y cannot alias them). */
static inline void nn_act_apply(const nn_act *act, float *y, size_t n) {
    if (!act || act->kind == CORT_ACT_NONE) return;
    const float lo = act->alpha, hi = act->beta;
    const nn_isa_config *isa = nn_isa();
    if (act->kind <= CORT_ACT_HARD_SWISH && isa->act_all) {
        isa->act_all(act->kind, lo, hi, y, n);
        return;
    }
    if ((act->kind == CORT_ACT_SIGMOID || act->kind == CORT_ACT_SILU) && isa->act_sigmoid_silu) {
        isa->act_sigmoid_silu(act->kind, y, n);
        return;
    }
    switch (act->kind) {
    case CORT_ACT_RELU: for (size_t i = 0; i < n; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f; break;
    case CORT_ACT_CLIP:
        for (size_t i = 0; i < n; i++) { float v = y[i] < lo ? lo : y[i]; y[i] = v > hi ? hi : v; }
        break;
    case CORT_ACT_LEAKY_RELU: for (size_t i = 0; i < n; i++) y[i] = y[i] >= 0.0f ? y[i] : y[i] * lo; break;
    case CORT_ACT_SIGMOID: for (size_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-y[i])); break;
    case CORT_ACT_HARD_SIGMOID:
        for (size_t i = 0; i < n; i++) {
            float v = lo * y[i] + hi;
            y[i] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
        break;
    case CORT_ACT_SILU:
        /* below -87.3, 1 + exp(-x) overflows in float: x * exp(x) in double keeps the tiny result
         * exact, and -inf gives the limit -0 (as the vector kernels do) */
        for (size_t i = 0; i < n; i++) {
            const float v = y[i];
            y[i] = v >= -87.0f || v != v ? v / (1.0f + expf(-v)) : v == -INFINITY ? -0.0f : (float)((double)v * exp((double)v));
        }
        break;
    case CORT_ACT_GELU: fu_gelu_f32(y, y, n); break;   /* dispatches to AVX-512 itself */
    case CORT_ACT_HARD_SWISH:
        for (size_t i = 0; i < n; i++) {
            float v = y[i] * (1.0f / 6.0f) + 0.5f;
            y[i] *= v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
        break;
    default: break;
    }
}

/* ---- misc ---- */
/* "[1,3,224,224]"-style shape text for messages (static per call site buffer supplied by caller). */
const char *nn_shape(const cort_value *v, char *buf, size_t len);
/* Checks that input i is present and a tensor of rank >= min_rank (rank == exact_rank when >= 0). */
cort_status *nn_check_input(const cort_kernel_ctx *ctx, size_t i, const char *name, int min_rank, int exact_rank);
static inline const cort_value *nn_opt_input(const cort_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}
static inline int nn_infer_has(const cort_infer_ctx *ctx, size_t i) {
    return i < ctx->n_inputs && ctx->inputs[i].present;
}
/* Sets output i of an inference to a tensor of elem with unknown shape when i exists. */
void nn_infer_type(cort_infer_ctx *ctx, size_t i, cort_type elem);
#endif
