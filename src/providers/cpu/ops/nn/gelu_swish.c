/* The gated and smooth activations of transformer exports:
 *   Gelu-20    approximate "none": x * Phi(x) (cort's fused erf GELU, ops/fused/gelu.c)
 *              approximate "tanh": x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated as
 *              x * sigmoid(2u) (the same value) so it runs on the level's vector sigmoid
 *   Swish-24   x * sigmoid(alpha x)
 *   SwiGLU-28  a * sigmoid(alpha a) * b
 * Elementwise in chunks that stay in L1, spread over the pool. */
#include <math.h>
#include <string.h>
#include "tx_common.h"

#define GS_CHUNK 1024

enum { GS_GELU_ERF, GS_GELU_TANH, GS_SWISH, GS_SWIGLU };

typedef struct gs_job {
    const float *x, *b;
    float *y;
    float alpha;
    int kind;
} gs_job;

static void gs_range(void *arg, size_t begin, size_t end) {
    const gs_job *j = arg;
    const nn_act sig = { CORT_ACT_SIGMOID, 0.0f, 0.0f };
    float t[GS_CHUNK];
    for (size_t i0 = begin; i0 < end; i0 += GS_CHUNK) {
        const size_t n = end - i0 < GS_CHUNK ? end - i0 : GS_CHUNK;
        const float *x = j->x + i0;
        float *y = j->y + i0;
        if (j->kind == GS_GELU_ERF) { fu_gelu_f32(x, y, n); continue; }
        if (j->kind == GS_GELU_TANH) {
            const float k = 2.0f * 0.7978845608028654f;
            for (size_t i = 0; i < n; i++) t[i] = k * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
        } else {
            const float a = j->alpha;
            for (size_t i = 0; i < n; i++) t[i] = a * x[i];
        }
        nn_act_apply(&sig, t, n);
        if (j->kind == GS_SWIGLU) {
            const float *b = j->b + i0;
            for (size_t i = 0; i < n; i++) y[i] = x[i] * t[i] * b[i];
        } else {
            for (size_t i = 0; i < n; i++) y[i] = x[i] * t[i];
        }
    }
}

static cort_status *gs_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

static cort_status *gs_common(cort_kernel_ctx *ctx, int kind, float alpha) {
    CORT_TRY(nn_check_input(ctx, 0, kind == GS_SWIGLU ? "A" : "X", 0, -1));
    const cort_value *x = ctx->inputs[0], *b = NULL;
    char b0[160], b1[160];
    if (kind == GS_SWIGLU) {
        CORT_TRY(nn_check_input(ctx, 1, "B", 0, -1));
        b = ctx->inputs[1];
        if (b->type != x->type || b->rank != x->rank || memcmp(b->shape, x->shape, x->rank * sizeof(int64_t)))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'B' is %s %s, expected the type "
                                   "and shape of input 0 (%s %s)", cort_type_name(b->type), nn_shape(b, b0, sizeof b0),
                                   cort_type_name(x->type), nn_shape(x, b1, sizeof b1));
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    if (!x->count) return NULL;
    nn_fbuf fx = { 0 }, fb = { 0 }, fy = { 0 };
    cort_status *st = tx_fbuf_in(ctx, x, &fx);
    if (!st && b) st = tx_fbuf_in(ctx, b, &fb);
    if (!st) st = tx_fbuf_out(ctx, y, &fy);
    if (!st) {
        gs_job j = { fx.p, fb.p, fy.p, alpha, kind };
        cort_parallel_for(x->count < 32768 ? NULL : ctx->pool, x->count, 16384, gs_range, &j);
        nn_fbuf_commit(&fy, y);
    }
    tx_fbuf_free(ctx, &fx);
    tx_fbuf_free(ctx, &fb);
    tx_fbuf_free(ctx, &fy);
    return st;
}

static cort_status *gelu_run(cort_kernel_ctx *ctx) {
    const char *ap = cort_attr_str(ctx->node, "approximate", "none");
    if (strcmp(ap, "none") && strcmp(ap, "tanh"))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'approximate' = '%s', expected 'none' "
                               "or 'tanh'", ap);
    return gs_common(ctx, strcmp(ap, "tanh") ? GS_GELU_ERF : GS_GELU_TANH, 0.0f);
}

static cort_status *swish_run(cort_kernel_ctx *ctx) {
    return gs_common(ctx, GS_SWISH, cort_attr_float(ctx->node, "alpha", 1.0f));
}

static cort_status *swiglu_run(cort_kernel_ctx *ctx) {
    return gs_common(ctx, GS_SWIGLU, cort_attr_float(ctx->node, "alpha", 1.0f));
}

const cort_op_def nn_op_gelu = { .name = "Gelu", .domain = "", .min_opset = 20, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .type_input = 0, .infer = gs_infer, .run = gelu_run };
const cort_op_def nn_op_swish = { .name = "Swish", .domain = "", .min_opset = 24, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .type_input = 0, .infer = gs_infer, .run = swish_run };
const cort_op_def nn_op_swiglu = { .name = "SwiGLU", .domain = "", .min_opset = 28, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .type_input = 0, .infer = gs_infer, .run = swiglu_run };
