/* Float views for the transformer operators (attention.c, rms_norm.c, rotary_embedding.c,
 * gelu_swish.c, linear_attention.c): as nn_fbuf_in/out, but a converted copy (float16, bfloat16,
 * double inputs) lives in the session's recycled scratch, so steady-state runs of those types do
 * not call the allocator either. */
#ifndef CORT_CPU_NN_TX_COMMON_H
#define CORT_CPU_NN_TX_COMMON_H
#include "nn_common.h"

static inline cort_status *tx_fbuf_in(cort_kernel_ctx *ctx, const cort_value *v, nn_fbuf *out) {
    out->owned = NULL;
    if (v->type == CORT_TYPE_FLOAT) { out->p = v->data; return NULL; }
    float *p = cort_kernel_scratch(ctx, (v->count ? v->count : 1) * sizeof(float));
    if (!p) return cort_error_oom();
    nn_type_to_f32(v->data, v->type, p, v->count);
    out->p = out->owned = p;
    return NULL;
}

static inline cort_status *tx_fbuf_out(cort_kernel_ctx *ctx, cort_value *v, nn_fbuf *out) {
    out->owned = NULL;
    if (v->type == CORT_TYPE_FLOAT) { out->p = v->data; return NULL; }
    float *p = cort_kernel_scratch(ctx, (v->count ? v->count : 1) * sizeof(float));
    if (!p) return cort_error_oom();
    out->p = out->owned = p;
    return NULL;
}

static inline void tx_fbuf_free(cort_kernel_ctx *ctx, nn_fbuf *b) {
    if (b->owned) cort_kernel_scratch_free(ctx, b->owned);
    b->owned = b->p = NULL;
}
#endif
