/* com.microsoft.Attention(input, weights, bias?, mask_index?, past?, attention_bias?,
 * past_sequence_length?) num_heads, qkv_hidden_sizes, unidirectional, mask_filter_value, scale:
 * BERT/GPT-2 self-attention as ONNX Runtime's optimizer fuses it, with its CPU provider's
 * semantics, float32.
 *   QKV = input @ weights + bias, split into Q, K, V of num_heads heads each;
 *   K, V = past's keys/values followed by these (present = [K; V], (2, B, heads, T, head_size));
 *   scores = scale * Q K' + mask + attention_bias, softmax over the T keys, output = P V with the
 *   heads side by side (B, S, v_hidden_size).
 * The mask adds 0 where a key is kept and mask_filter_value (-10000) where not, from mask_index as
 * a raw 0/1 mask (B, T) or (B, S, T), (B, 1, M, M) (rows past..past+S-1), key end positions (B),
 * or end then start positions (2B); unidirectional adds mask_filter_value again above the causal
 * diagonal. The projection's weights are packed at creation when constant. */
#include <math.h>
#include <string.h>
#include "contrib.h"
#include "../math/matmul.h"
#include "../nn/softmax.h"
#include "../../kernels/gemm.h"

typedef struct att_dims {
    size_t B, S, Hin, N, qh, vh, h, hv, P, T;
} att_dims;

static cort_status *att_init(const cort_node *node, void **state) {
    int64_t n = cort_attr_int(node, "num_heads", 0);
    if (n < 1)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'num_heads' = %lld, expected >= 1",
                               (long long)n);
    if (cort_attr_int(node, "do_rotary", 0))
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'do_rotary' = 1 is not supported");
    if (cort_attr_int(node, "past_present_share_buffer", 0))
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED,
                               "attribute 'past_present_share_buffer' = 1 is not supported");
    return nn_mm_init_packed_b(node, state, 0);
}

/* q, k, v hidden sizes from qkv_hidden_sizes or weights' columns / 3 */
static int att_sizes(const cort_node *node, int64_t wcols, int64_t *q, int64_t *k, int64_t *v) {
    const int64_t *hs;
    size_t n = cort_attr_ints(node, "qkv_hidden_sizes", &hs);
    if (n == 3) { *q = hs[0]; *k = hs[1]; *v = hs[2]; return *q > 0 && *q == *k && *v > 0 && *q + *k + *v == wcols; }
    if (n != 0 || wcols < 0 || wcols % 3) return 0;
    *q = *k = *v = wcols / 3;
    return 1;
}

static cort_status *att_infer(cort_infer_ctx *ctx) {
    nn_infer_type(ctx, 0, CORT_TYPE_FLOAT);
    if (ctx->n_outputs > 1) nn_infer_type(ctx, 1, CORT_TYPE_FLOAT);
    const cort_tinfo *x = &ctx->inputs[0], *w = &ctx->inputs[1];
    int64_t q, k, v;
    if (x->rank != 3 || w->rank != 2 || !att_sizes(ctx->node, w->dims[1], &q, &k, &v)) return NULL;
    int64_t d[3] = { x->dims[0], x->dims[1], v };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, 3);
    if (ctx->n_outputs > 1 && ctx->inputs[0].dims[1] >= 0) {
        int64_t nh = cort_attr_int(ctx->node, "num_heads", 1), past = 0;
        if (nn_infer_has(ctx, 4)) past = ctx->inputs[4].rank == 5 ? ctx->inputs[4].dims[3] : -1;
        int64_t p[5] = { 2, x->dims[0], nh, past < 0 ? -1 : past + x->dims[1], nh > 0 ? q / nh : -1 };
        cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_FLOAT, p, 5);
    }
    return NULL;
}

static int32_t load_idx(const cort_value *m, size_t i) {
    return m->type == CORT_TYPE_INT64 ? (int32_t)((const int64_t *)m->data)[i] : ((const int32_t *)m->data)[i];
}

/* The additive mask of batch entry b, S x T, into mb (0 kept, mask_filter_value masked). */
static void att_mask(const cort_value *m, const att_dims *d, size_t b, float filter, int causal, float *mb) {
    const size_t S = d->S, T = d->T;
    for (size_t i = 0; i < S * T; i++) mb[i] = 0.0f;
    if (m) {
        if (m->rank == 1 && (size_t)m->shape[0] == d->B) {
            int32_t end = load_idx(m, b);
            for (size_t i = 0; i < S; i++)
                for (size_t j = 0; j < T; j++) if ((int64_t)j >= end) mb[i * T + j] = filter;
        } else if (m->rank == 1) {   /* 2B: exclusive ends, then inclusive starts */
            int32_t end = load_idx(m, b), start = load_idx(m, d->B + b);
            for (size_t i = 0; i < S; i++)
                for (size_t j = 0; j < T; j++)
                    if ((int64_t)j >= end || (int64_t)j < start) mb[i * T + j] = filter;
        } else if (m->rank == 2) {
            for (size_t i = 0; i < S; i++)
                for (size_t j = 0; j < T; j++) mb[i * T + j] = load_idx(m, b * T + j) > 0 ? 0.0f : filter;
        } else if (m->rank == 3) {
            for (size_t i = 0; i < S * T; i++) mb[i] = load_idx(m, b * S * T + i) > 0 ? 0.0f : filter;
        } else {   /* (B, 1, M, M): the rows of this step's queries */
            const size_t M = (size_t)m->shape[3];
            for (size_t i = 0; i < S; i++)
                for (size_t j = 0; j < T; j++)
                    mb[i * T + j] = load_idx(m, (b * M + d->P + i) * M + j) > 0 ? 0.0f : filter;
        }
    }
    if (causal)
        for (size_t i = 0; i < S; i++)
            for (size_t j = d->P + i + 1; j < T; j++) mb[i * T + j] += filter;
}

static cort_status *check_mask(const cort_kernel_ctx *ctx, const cort_value *m, const att_dims *d) {
    char buf[160];
    int ok = m->kind == CORT_VKIND_TENSOR && (m->type == CORT_TYPE_INT32 || m->type == CORT_TYPE_INT64);
    if (ok) {
        if (m->rank == 1) ok = (size_t)m->shape[0] == d->B || (size_t)m->shape[0] == 2 * d->B;
        else if (m->rank == 2) ok = (size_t)m->shape[0] == d->B && (size_t)m->shape[1] == d->T;
        else if (m->rank == 3) ok = (size_t)m->shape[0] == d->B && (size_t)m->shape[1] == d->S &&
                                    (size_t)m->shape[2] == d->T;
        else if (m->rank == 4) ok = (size_t)m->shape[0] == d->B && m->shape[1] == 1 && m->shape[2] == m->shape[3] &&
                                    (size_t)m->shape[3] >= d->T && (size_t)m->shape[2] >= d->P + d->S;
        else ok = 0;
    }
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 3 'mask_index' is %s%s; expected int32 of shape (B), (2B), (B, T), (B, S, T) or "
                               "(B, 1, M, M) with B=%zu S=%zu T=%zu", cort_type_name(m->type),
                               nn_shape(m, buf, sizeof buf), d->B, d->S, d->T);
    return NULL;
}

static cort_status *att_run(cort_kernel_ctx *ctx) {
    const cort_value *x, *w;
    CORT_TRY(ctb_float_input(ctx, 0, "input", 3, &x));
    CORT_TRY(ctb_float_input(ctx, 1, "weights", 2, &w));
    char b1[160], b2[160];
    int64_t q, k, v;
    if (x->rank != 3 || w->rank != 2 || w->shape[0] != x->shape[2] || !att_sizes(ctx->node, w->shape[1], &q, &k, &v))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'input' %s and input 1 'weights' %s do not fit (expected (B, S, H) and (H, "
                               "q + k + v hidden sizes))", nn_shape(x, b1, sizeof b1), nn_shape(w, b2, sizeof b2));
    att_dims d = { (size_t)x->shape[0], (size_t)x->shape[1], (size_t)x->shape[2],
                   (size_t)cort_attr_int(ctx->node, "num_heads", 1), (size_t)q, (size_t)v, 0, 0, 0, 0 };
    if (d.qh % d.N || d.vh % d.N)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "hidden sizes %zu / %zu are not divisible by num_heads %zu", d.qh, d.vh, d.N);
    d.h = d.qh / d.N;
    d.hv = d.vh / d.N;
    const size_t W3 = d.qh * 2 + d.vh;
    const float *bias = NULL;
    CORT_TRY(ctb_row_param(ctx, 2, "bias", W3, &bias));
    const cort_value *mask = nn_opt_input(ctx, 3), *past = nn_opt_input(ctx, 4), *abias = nn_opt_input(ctx, 5);
    if (past) {
        if (past->kind != CORT_VKIND_TENSOR || past->type != CORT_TYPE_FLOAT || past->rank != 5 || past->shape[0] != 2 ||
            (size_t)past->shape[1] != d.B || (size_t)past->shape[2] != d.N || (size_t)past->shape[4] != d.h ||
            d.h != d.hv)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 4 'past' has shape %s, expected (2, %zu, %zu, past_length, %zu)",
                                   nn_shape(past, b1, sizeof b1), d.B, d.N, d.h);
        d.P = (size_t)past->shape[3];
    }
    d.T = d.P + d.S;
    if (mask) CORT_TRY(check_mask(ctx, mask, &d));
    size_t ab_b = 0, ab_n = 0;   /* attention_bias strides per batch entry and head (0: broadcast) */
    if (abias) {
        int ok = abias->kind == CORT_VKIND_TENSOR && abias->type == CORT_TYPE_FLOAT && abias->rank == 4 &&
                 (abias->shape[0] == 1 || (size_t)abias->shape[0] == d.B) &&
                 (abias->shape[1] == 1 || (size_t)abias->shape[1] == d.N) && (size_t)abias->shape[2] == d.S &&
                 (size_t)abias->shape[3] == d.T;
        if (!ok)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 5 'attention_bias' has shape %s, expected (%zu or 1, %zu or 1, %zu, %zu)",
                                   nn_shape(abias, b1, sizeof b1), d.B, d.N, d.S, d.T);
        ab_n = abias->shape[1] == 1 ? 0 : d.S * d.T;
        ab_b = abias->shape[0] == 1 ? 0 : (size_t)abias->shape[1] * d.S * d.T;
    }
    int64_t yd[3] = { (int64_t)d.B, (int64_t)d.S, (int64_t)d.vh };
    cort_value *y, *pres = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, yd, 3, &y));
    if (ctx->n_outputs > 1 && ctx->node->out_slot[1] >= 0) {
        int64_t pd[5] = { 2, (int64_t)d.B, (int64_t)d.N, (int64_t)d.T, (int64_t)d.h };
        if (d.h != d.hv)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "output 1 'present' needs equal q/k and v "
                                   "head sizes, got %zu and %zu", d.h, d.hv);
        CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, pd, 5, &pres));
    }
    if (!y->count) return NULL;
    const size_t rows = d.B * d.S, kvk = d.B * d.N * d.T * d.h, kvv = d.B * d.N * d.T * d.hv;
    /* scratch: the projection, K and V per head over all T keys (unless present holds them), one
     * head's scores and one batch entry's mask */
    size_t n_qkv = rows * W3, n_kv = pres ? 0 : kvk + kvv, n_sc = d.S * d.T;
    float *qkv = cort_kernel_scratch(ctx, (n_qkv + n_kv + 2 * n_sc + 1) * sizeof(float));
    if (!qkv) return cort_error_oom();
    float *kbuf = pres ? pres->data : qkv + n_qkv, *vbuf = kbuf + kvk, *scores = qkv + n_qkv + n_kv,
          *mb = scores + n_sc;
    const nn_gemm_opts po = { NULL, nn_mm_packed_b(ctx), NULL, NULL, ctx, NULL, bias };
    nn_gemm_b wb = nn_gemm_b_matrix(w->data, W3, 0);
    cort_status *st = nn_sgemm_opt(ctx->pool, NULL, rows, W3, d.Hin, 1.0f, x->data, d.Hin, 0, &wb, 0.0f, qkv, W3, &po);
    if (st) goto done;
    /* K and V head by head: the past's, then this step's */
    for (size_t b = 0; b < d.B; b++)
        for (size_t n = 0; n < d.N; n++) {
            float *kh = kbuf + (b * d.N + n) * d.T * d.h, *vh = vbuf + (b * d.N + n) * d.T * d.hv;
            if (d.P) {
                const float *pk = (const float *)past->data + (b * d.N + n) * d.P * d.h;
                memcpy(kh, pk, d.P * d.h * sizeof(float));
                memcpy(vh, pk + d.B * d.N * d.P * d.h, d.P * d.h * sizeof(float));
            }
            for (size_t s = 0; s < d.S; s++) {
                const float *r = qkv + (b * d.S + s) * W3;
                memcpy(kh + (d.P + s) * d.h, r + d.qh + n * d.h, d.h * sizeof(float));
                memcpy(vh + (d.P + s) * d.hv, r + 2 * d.qh + n * d.hv, d.hv * sizeof(float));
            }
        }
    const float scale = cort_attr_float(ctx->node, "scale", 1.0f / sqrtf((float)d.h));
    const float filter = cort_attr_float(ctx->node, "mask_filter_value", -10000.0f);
    const int causal = cort_attr_int(ctx->node, "unidirectional", 0) != 0;
    const nn_gemm_opts o = { NULL, NULL, NULL, NULL, ctx, NULL, NULL };
    for (size_t b = 0; b < d.B && !st; b++) {
        att_mask(mask, &d, b, filter, causal, mb);
        for (size_t n = 0; n < d.N && !st; n++) {
            const float *qh = qkv + b * d.S * W3 + n * d.h;
            const float *kh = kbuf + (b * d.N + n) * d.T * d.h, *vh = vbuf + (b * d.N + n) * d.T * d.hv;
            nn_gemm_b kb = nn_gemm_b_matrix(kh, d.h, 1);   /* K' */
            st = nn_sgemm_opt(ctx->pool, NULL, d.S, d.T, d.h, scale, qh, W3, 0, &kb, 0.0f, scores, d.T, &o);
            if (st) break;
            const float *ab = abias ? (const float *)abias->data + b * ab_b + n * ab_n : NULL;
            for (size_t i = 0; i < n_sc; i++) scores[i] += mb[i] + (ab ? ab[i] : 0.0f);
            rd_softmax_f32(RD_SOFTMAX, scores, scores, d.S, d.T, 1, NULL, 1);
            nn_gemm_b vb = nn_gemm_b_matrix(vh, d.hv, 0);
            st = nn_sgemm_opt(ctx->pool, NULL, d.S, d.hv, d.T, 1.0f, scores, d.T, 0, &vb, 0.0f,
                              (float *)y->data + b * d.S * d.vh + n * d.hv, d.vh, &o);
        }
    }
done:
    cort_kernel_scratch_free(ctx, qkv);
    return st;
}

const cort_op_def ctb_op_attention = { .name = "Attention", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = att_init,
    .free_state = nn_mm_free_packed_b, .infer = att_infer, .run = att_run };
