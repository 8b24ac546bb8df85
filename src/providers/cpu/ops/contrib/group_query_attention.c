/* com.microsoft.GroupQueryAttention(query, key?, value?, past_key?, past_value?, seqlens_k,
 * total_sequence_length, cos_cache?, sin_cache?) num_heads, kv_num_heads, scale, softcap,
 * local_window_size, do_rotary, rotary_interleaved, smooth_softmax: causal decoder attention
 * where groups of num_heads / kv_num_heads query heads share a key/value head, as ONNX Runtime's
 * CPU provider computes it, float32.
 *   query (B, S, heads * h), key / value (B, S, kv_heads * h), or all three packed in query;
 *   seqlens_k[b] + 1 is batch entry b's total length; the first prompt (S equals
 *   total_sequence_length) has no past and may be right-padded (length below S), otherwise the
 *   past is total - S tokens long;
 *   present_key / present_value (B, kv_heads, max(total_sequence_length, past buffer), h) hold the
 *   past tokens, then this step's, zeros after;
 *   with do_rotary Q and K rotate (RotaryEmbedding's pairs) at positions past + s; a first prompt
 *   with position_ids starts at position_ids[b, 0] (decode steps with them are refused);
 *   attention_bias (B or 1, heads or 1, S, >= total) is added to the scores after the softcap;
 *   query s attends to keys 0 .. past + s (only the last local_window_size of them with a window),
 *   scores scale * q.k, softcap * tanh(x / softcap) when softcap > 0, softmax (with an extra zero
 *   logit when smooth_softmax). */
#include <math.h>
#include <string.h>
#include "contrib.h"
#include "../../kernels/gemm.h"

static cort_status *gqa_init(const cort_node *node, void **state) {
    *state = NULL;
    const int64_t n = cort_attr_int(node, "num_heads", 0), kv = cort_attr_int(node, "kv_num_heads", 0);
    if (n < 1 || kv < 1 || n % kv)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attributes num_heads = %lld, kv_num_heads = %lld: "
                               "expected positive, num_heads a multiple of kv_num_heads", (long long)n, (long long)kv);
    for (size_t i = 11; i < node->n_inputs; i++)
        if (node->in_slot[i] >= 0)
            return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "input %zu (head_sink) is not supported", i);
    return NULL;
}

static cort_status *gqa_infer(cort_infer_ctx *ctx) {
    for (size_t i = 0; i < ctx->n_outputs && i < 3; i++) nn_infer_type(ctx, i, CORT_TYPE_FLOAT);
    const cort_tinfo *q = &ctx->inputs[0];
    const int packed = !nn_infer_has(ctx, 1);
    const int64_t n = cort_attr_int(ctx->node, "num_heads", 1), kv = cort_attr_int(ctx->node, "kv_num_heads", 1);
    if (q->rank != 3 || q->dims[2] < 0) return NULL;
    int64_t d[3] = { q->dims[0], q->dims[1], packed ? q->dims[2] / (n + 2 * kv) * n : q->dims[2] };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, 3);
    return NULL;
}

static void rotate(float *x, size_t h, size_t half, const float *c, const float *s, int inter) {
    for (size_t i = 0; i < half; i++) {
        const size_t i1 = inter ? 2 * i : i, i2 = inter ? 2 * i + 1 : i + half;
        const float x1 = x[i1], x2 = x[i2];
        x[i1] = x1 * c[i] - x2 * s[i];
        x[i2] = x2 * c[i] + x1 * s[i];
    }
    (void)h;
}

static cort_status *gqa_run(cort_kernel_ctx *ctx) {
    const cort_value *q;
    CORT_TRY(ctb_float_input(ctx, 0, "query", 3, &q));
    const size_t N = (size_t)cort_attr_int(ctx->node, "num_heads", 1), KV = (size_t)cort_attr_int(ctx->node, "kv_num_heads", 1);
    const size_t B = (size_t)q->shape[0], S = (size_t)q->shape[1];
    const cort_value *k = nn_opt_input(ctx, 1), *v = nn_opt_input(ctx, 2), *pk = nn_opt_input(ctx, 3),
                     *pv = nn_opt_input(ctx, 4), *sl = nn_opt_input(ctx, 5), *tl = nn_opt_input(ctx, 6);
    char b1[160], b2[160];
    const int packed = !k;
    size_t h;
    if (packed) {
        h = (size_t)q->shape[2] / (N + 2 * KV);
        if (v || h * (N + 2 * KV) != (size_t)q->shape[2])
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "packed query %s does not hold %zu + 2 x %zu "
                                   "heads", nn_shape(q, b1, sizeof b1), N, KV);
    } else {
        CORT_TRY(ctb_float_input(ctx, 1, "key", 3, &k));
        CORT_TRY(ctb_float_input(ctx, 2, "value", 3, &v));
        h = (size_t)q->shape[2] / N;
        if (h * N != (size_t)q->shape[2] || k->rank != 3 || v->rank != 3 || (size_t)k->shape[0] != B ||
            (size_t)k->shape[1] != S || (size_t)k->shape[2] != KV * h || (size_t)v->shape[0] != B ||
            (size_t)v->shape[1] != S || (size_t)v->shape[2] != KV * h)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "key %s / value %s, expected (%zu, %zu, %zu)",
                                   nn_shape(k, b1, sizeof b1), nn_shape(v, b2, sizeof b2), B, S, KV * h);
    }
    if (!sl || sl->kind != CORT_VKIND_TENSOR || sl->type != CORT_TYPE_INT32 || sl->count != B || !tl ||
        tl->kind != CORT_VKIND_TENSOR || tl->type != CORT_TYPE_INT32 || tl->count != 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 5 'seqlens_k' (int32, %zu) and 6 "
                               "'total_sequence_length' (int32 scalar) are required", B);
    size_t P = 0;
    if ((pk != NULL) != (pv != NULL))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "past_key and past_value go together");
    if (pk) {
        int ok = pk->kind == CORT_VKIND_TENSOR && pv->kind == CORT_VKIND_TENSOR && pk->type == CORT_TYPE_FLOAT &&
                 pv->type == CORT_TYPE_FLOAT && pk->rank == 4 && pv->rank == 4 && (size_t)pk->shape[0] == B &&
                 (size_t)pk->shape[1] == KV && (size_t)pk->shape[3] == h;
        for (size_t i = 0; ok && i < 4; i++) ok = pv->shape[i] == pk->shape[i];
        if (!ok)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "past_key %s / past_value %s, expected (%zu, "
                                   "%zu, P, %zu)", nn_shape(pk, b1, sizeof b1), nn_shape(pv, b2, sizeof b2), B, KV, h);
        P = (size_t)pk->shape[2];
    }
    const int32_t total = *(const int32_t *)tl->data;
    if (total < 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "total_sequence_length = %d", (int)total);
    const int first = (size_t)total == S;
    const size_t T = (size_t)total > P ? (size_t)total : P;   /* present buffer length */
    const int32_t *slp = sl->data;
    for (size_t b = 0; b < B; b++) {
        const int64_t len = (int64_t)slp[b] + 1, past = first ? 0 : len - (int64_t)S;
        if (len < 1 || (size_t)len > T || past < 0 || (size_t)past > P || (first && (size_t)len > S))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "seqlens_k[%zu] = %d does not fit sequence "
                                   "length %zu, past %zu, total %d", b, (int)slp[b], S, P, (int)total);
    }
    const int rotary = cort_attr_int(ctx->node, "do_rotary", 0) != 0;
    const cort_value *cc = nn_opt_input(ctx, 7), *sc = nn_opt_input(ctx, 8);
    size_t half = 0;
    if (rotary) {
        if (!cc || !sc || cc->type != CORT_TYPE_FLOAT || sc->type != CORT_TYPE_FLOAT || cc->rank != 2 || sc->rank != 2 ||
            cc->shape[1] != sc->shape[1] || cc->shape[0] != sc->shape[0] || (size_t)cc->shape[1] * 2 > h ||
            (size_t)cc->shape[0] < T)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "do_rotary needs float cos_cache / sin_cache "
                                   "of shape (>= %zu, <= %zu)", T, h / 2);
        half = (size_t)cc->shape[1];
    }
    const cort_value *pos = nn_opt_input(ctx, 9), *ab = nn_opt_input(ctx, 10);
    if (pos && (pos->kind != CORT_VKIND_TENSOR || pos->type != CORT_TYPE_INT64 || pos->count != B * S))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 9 'position_ids' must be int64 (%zu, %zu)",
                               B, S);
    if (pos && rotary && !first)   /* ONNX Runtime's result there matched no reading of the spec tried */
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "input 9 'position_ids' with do_rotary is "
                               "supported on a first prompt only");
    for (size_t i = 0; pos && rotary && i < B * S; i++) {
        const int64_t p = ((const int64_t *)pos->data)[i - i % S] + (int64_t)(i % S);
        if (p < 0 || p >= cc->shape[0])
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "position_ids[%zu] = %lld is outside the "
                                   "caches' %lld rows", i, (long long)p, (long long)cc->shape[0]);
    }
    size_t ab_b = 0, ab_n = 0, ab_t = 0;
    if (ab) {
        int ok = ab->kind == CORT_VKIND_TENSOR && ab->type == CORT_TYPE_FLOAT && ab->rank == 4 &&
                 (ab->shape[0] == 1 || (size_t)ab->shape[0] == B) && (ab->shape[1] == 1 || (size_t)ab->shape[1] == N) &&
                 (size_t)ab->shape[2] == S && (size_t)ab->shape[3] >= (size_t)total;
        if (!ok)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 10 'attention_bias' has shape %s, "
                                   "expected (%zu or 1, %zu or 1, %zu, >= %d)", nn_shape(ab, b1, sizeof b1), B, N, S,
                                   (int)total);
        ab_t = (size_t)ab->shape[3];
        ab_n = ab->shape[1] == 1 ? 0 : S * ab_t;
        ab_b = ab->shape[0] == 1 ? 0 : (size_t)ab->shape[1] * S * ab_t;
    }
    int64_t yd[3] = { (int64_t)B, (int64_t)S, (int64_t)(N * h) }, pd[4] = { (int64_t)B, (int64_t)KV, (int64_t)T, (int64_t)h };
    cort_value *y, *prk = NULL, *prv = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, yd, 3, &y));
    if (ctx->n_outputs > 1 && ctx->node->out_slot[1] >= 0) CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, pd, 4, &prk));
    if (ctx->n_outputs > 2 && ctx->node->out_slot[2] >= 0) CORT_TRY(cort_kernel_output(ctx, 2, CORT_TYPE_FLOAT, pd, 4, &prv));
    size_t nkv = 0, nq = 0, bytes = 1;
    int ok = ctb_size_add(&nkv, B, KV, T, h) && ctb_size_add(&nq, B, N, S, h) &&
             ctb_size_add(&bytes, (prk ? 0 : 1) + (prv ? 0 : 1), nkv, 1, 1) && ctb_size_add(&bytes, nq, 1, 1, 1) &&
             ctb_size_add(&bytes, S, T, 1, 1) && !cort_mul_size_ovf(bytes, sizeof(float), &bytes);
    float *buf = ok ? cort_kernel_scratch(ctx, bytes) : NULL;
    if (!buf) return cort_error_oom();
    float *kb = prk ? prk->data : buf, *vb = prv ? prv->data : buf + (prk ? 0 : nkv);
    float *qb = buf + (prk ? 0 : nkv) + (prv ? 0 : nkv), *scores = qb + nq;
    memset(kb, 0, nkv * sizeof(float));
    memset(vb, 0, nkv * sizeof(float));
    const size_t qrow = packed ? (N + 2 * KV) * h : N * h, kvrow = packed ? qrow : KV * h;
    const float *qp = q->data, *kp = packed ? qp + N * h : k->data, *vp = packed ? qp + (N + KV) * h : v->data;
    const int inter = cort_attr_int(ctx->node, "rotary_interleaved", 0) != 0;
    const int64_t *pos_ids = pos ? pos->data : NULL;
    for (size_t b = 0; b < B; b++) {
        const size_t len = (size_t)slp[b] + 1, past = first ? 0 : len - S;
        for (size_t s = 0; s < S; s++) {
            /* buffer position, rotary position; a first prompt takes only its first position id */
            const size_t pos = past + s;
            const size_t rpos = pos_ids ? (size_t)pos_ids[b * S] + s : pos;
            const float *cr = rotary ? (const float *)cc->data + rpos * half : NULL;
            const float *sr = rotary ? (const float *)sc->data + rpos * half : NULL;
            for (size_t n = 0; n < N; n++) {   /* Q to (B, heads, S, h), rotated */
                float *dst = qb + ((b * N + n) * S + s) * h;
                memcpy(dst, qp + (b * S + s) * qrow + n * h, h * sizeof(float));
                if (rotary) rotate(dst, h, half, cr, sr, inter);
            }
            for (size_t n = 0; n < KV; n++) {   /* this step's K (rotated) and V after the past */
                float *kd = kb + ((b * KV + n) * T + pos) * h, *vd = vb + ((b * KV + n) * T + pos) * h;
                memcpy(kd, kp + (b * S + s) * kvrow + n * h, h * sizeof(float));
                memcpy(vd, vp + (b * S + s) * kvrow + n * h, h * sizeof(float));
                if (rotary) rotate(kd, h, half, cr, sr, inter);
            }
        }
        for (size_t n = 0; n < KV && past; n++) {
            memcpy(kb + (b * KV + n) * T * h, (const float *)pk->data + (b * KV + n) * P * h, past * h * sizeof(float));
            memcpy(vb + (b * KV + n) * T * h, (const float *)pv->data + (b * KV + n) * P * h, past * h * sizeof(float));
        }
    }
    float scale = cort_attr_float(ctx->node, "scale", 0.0f);
    if (scale == 0.0f) scale = 1.0f / sqrtf((float)h);
    const float softcap = cort_attr_float(ctx->node, "softcap", 0.0f);
    const int64_t window = cort_attr_int(ctx->node, "local_window_size", -1);
    const int smooth = cort_attr_int(ctx->node, "smooth_softmax", 0) != 0;
    const nn_gemm_opts o = { NULL, NULL, NULL, NULL, ctx, NULL, NULL };
    cort_status *st = NULL;
    for (size_t b = 0; b < B && !st; b++) {
        const size_t len = (size_t)slp[b] + 1, past = first ? 0 : len - S;
        for (size_t n = 0; n < N && !st; n++) {
            const size_t g = n / (N / KV);
            const float *kh = kb + (b * KV + g) * T * h, *vh = vb + (b * KV + g) * T * h;
            nn_gemm_b kt = nn_gemm_b_matrix(kh, h, 1);
            st = nn_sgemm_opt(ctx->pool, NULL, S, len, h, scale, qb + (b * N + n) * S * h, h, 0, &kt, 0.0f, scores, T, &o);
            if (st) break;
            for (size_t s = 0; s < S; s++) {
                float *r = scores + s * T;
                /* a right-padded prompt's padding rows see the whole valid prompt (ONNX Runtime leaves
                 * them unspecified) */
                const size_t causal = past + s + 1 < len ? past + s + 1 : len;
                const size_t lo = window > 0 && causal > (size_t)window ? causal - (size_t)window : 0;
                float m = smooth ? 0.0f : -INFINITY;
                const float *abr = ab ? (const float *)ab->data + b * ab_b + n * ab_n + s * ab_t : NULL;
                for (size_t j = lo; j < causal; j++) {
                    if (softcap > 0.0f) r[j] = softcap * tanhf(r[j] / softcap);
                    if (abr) r[j] += abr[j];
                    m = r[j] > m ? r[j] : m;
                }
                double sum = smooth ? exp(-(double)m) : 0.0;
                for (size_t j = lo; j < causal; j++) { r[j] = expf(r[j] - m); sum += r[j]; }
                for (size_t j = 0; j < len; j++) r[j] = j >= lo && j < causal ? (float)(r[j] / sum) : 0.0f;
            }
            nn_gemm_b vt = nn_gemm_b_matrix(vh, h, 0);
            st = nn_sgemm_opt(ctx->pool, NULL, S, h, len, 1.0f, scores, T, 0, &vt, 0.0f,
                              (float *)y->data + b * S * N * h + n * h, N * h, &o);
        }
    }
    cort_kernel_scratch_free(ctx, buf);
    return st;
}

const cort_op_def ctb_op_group_query_attention = { .name = "GroupQueryAttention", .domain = "com.microsoft",
    .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = gqa_init,
    .infer = gqa_infer, .run = gqa_run };
