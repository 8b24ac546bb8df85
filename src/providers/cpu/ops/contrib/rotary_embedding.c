/* com.microsoft.RotaryEmbedding(input, position_ids, cos_cache, sin_cache) interleaved, num_heads,
 * rotary_embedding_dim, scale: rotary position embedding as ONNX Runtime's CPU provider applies
 * it, float32. input is (B, S, heads * head_size) or (B, heads, S, head_size); position_ids is
 * (B, S), or one value: the position of token 0, the others following. The first
 * rotary_embedding_dim (default: head_size) values of each head rotate in pairs by the angle whose
 * cos / sin are row `position` of the caches (max_position, rotary_dim / 2): pairs (i, i + rot/2),
 * or (2i, 2i + 1) when interleaved; x1' = x1 cos - x2 sin, x2' = x2 cos + x1 sin. The rest of the
 * head is copied. */
#include <string.h>
#include "contrib.h"

static cort_status *rope_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

static cort_status *rope_run(cort_kernel_ctx *ctx) {
    const cort_value *x, *cc, *sc, *pos = nn_opt_input(ctx, 1);
    CORT_TRY(ctb_float_input(ctx, 0, "input", 3, &x));
    CORT_TRY(ctb_float_input(ctx, 2, "cos_cache", 2, &cc));
    CORT_TRY(ctb_float_input(ctx, 3, "sin_cache", 2, &sc));
    char b1[160], b2[160];
    if (x->rank != 3 && x->rank != 4)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' has shape %s, expected rank 3 "
                               "or 4", nn_shape(x, b1, sizeof b1));
    if (cc->rank != 2 || sc->rank != 2 || cc->shape[0] != sc->shape[0] || cc->shape[1] != sc->shape[1])
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'cos_cache' %s and 'sin_cache' %s must "
                               "both be (max_position, rotary_dim / 2)", nn_shape(cc, b1, sizeof b1),
                               nn_shape(sc, b2, sizeof b2));
    const size_t B = (size_t)x->shape[0];
    size_t S, heads, hs;
    const int64_t nh_attr = cort_attr_int(ctx->node, "num_heads", 0);
    const size_t half = (size_t)cc->shape[1], maxpos = (size_t)cc->shape[0];
    int64_t rot = cort_attr_int(ctx->node, "rotary_embedding_dim", 0);
    if (x->rank == 4) {
        heads = (size_t)x->shape[1]; S = (size_t)x->shape[2]; hs = (size_t)x->shape[3];
    } else {
        S = (size_t)x->shape[1];
        const size_t hidden = (size_t)x->shape[2];
        hs = nh_attr > 0 ? hidden / (size_t)nh_attr : 2 * half;
        heads = hs ? hidden / hs : 0;
        if (!hs || heads * hs != hidden)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "hidden size %zu does not split into heads "
                                   "(num_heads %lld)", hidden, (long long)nh_attr);
    }
    if (rot <= 0) rot = (int64_t)hs;
    if ((size_t)rot > hs || (size_t)rot != 2 * half)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "rotary dimension %lld must be at most head size "
                               "%zu and twice the caches' %zu columns", (long long)rot, hs, half);
    if (!pos || pos->kind != CORT_VKIND_TENSOR || (pos->type != CORT_TYPE_INT64 && pos->type != CORT_TYPE_INT32) ||
        (pos->count != 1 && pos->count != B * S))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'position_ids' must be int64 of shape "
                               "(%zu, %zu) or one value", B, S);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    const int inter = cort_attr_int(ctx->node, "interleaved", 0) != 0;
    const float *xp = x->data, *cp = cc->data, *sp = sc->data;
    float *yp = y->data;
    for (size_t b = 0; b < B; b++)
        for (size_t s = 0; s < S; s++) {
            int64_t p = pos->type == CORT_TYPE_INT64 ? ((const int64_t *)pos->data)[pos->count == 1 ? 0 : b * S + s]
                                                     : ((const int32_t *)pos->data)[pos->count == 1 ? 0 : b * S + s];
            if (pos->count == 1) p += (int64_t)s;
            if (p < 0 || (size_t)p >= maxpos)
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "position %lld (batch %zu, token %zu) is "
                                       "outside the caches' %zu rows", (long long)p, b, s, maxpos);
            const float *cr = cp + (size_t)p * half, *sr = sp + (size_t)p * half;
            for (size_t h = 0; h < heads; h++) {
                const size_t off = x->rank == 4 ? ((b * heads + h) * S + s) * hs : (b * S + s) * heads * hs + h * hs;
                const float *in = xp + off;
                float *out = yp + off;
                for (size_t i = 0; i < half; i++) {
                    const size_t i1 = inter ? 2 * i : i, i2 = inter ? 2 * i + 1 : i + half;
                    const float x1 = in[i1], x2 = in[i2];
                    out[i1] = x1 * cr[i] - x2 * sr[i];
                    out[i2] = x2 * cr[i] + x1 * sr[i];
                }
                if ((size_t)rot < hs) memcpy(out + rot, in + rot, (hs - (size_t)rot) * sizeof *out);
            }
        }
    return NULL;
}

const cort_op_def ctb_op_rotary_embedding = { .name = "RotaryEmbedding", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .infer = rope_infer, .run = rope_run };
