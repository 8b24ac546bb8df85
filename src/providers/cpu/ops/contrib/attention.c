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
#include "../../kernels/int_gemm.h"
#include "../quant/quant.h"

typedef struct att_dims {
    size_t B, S, Hin, N, qh, vh, h, hv, P, T;
} att_dims;

/* The attributes Attention and QAttention share, checked at creation. */
static cort_status *att_check_attrs(const cort_node *node) {
    int64_t n = cort_attr_int(node, "num_heads", 0);
    if (n < 1)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'num_heads' = %lld, expected >= 1",
                               (long long)n);
    if (cort_attr_int(node, "do_rotary", 0))
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'do_rotary' = 1 is not supported");
    if (cort_attr_int(node, "past_present_share_buffer", 0))
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED,
                               "attribute 'past_present_share_buffer' = 1 is not supported");
    return NULL;
}

static cort_status *att_init(const cort_node *node, void **state) {
    *state = NULL;
    CORT_TRY(att_check_attrs(node));
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

/* pi: the input index of past (4 for Attention, 8 for QAttention) */
static cort_status *att_infer_past(cort_infer_ctx *ctx, size_t pi) {
    nn_infer_type(ctx, 0, CORT_TYPE_FLOAT);
    if (ctx->n_outputs > 1) nn_infer_type(ctx, 1, CORT_TYPE_FLOAT);
    const cort_tinfo *x = &ctx->inputs[0], *w = &ctx->inputs[1];
    int64_t q, k, v;
    if (x->rank != 3 || w->rank != 2 || !att_sizes(ctx->node, w->dims[1], &q, &k, &v)) return NULL;
    int64_t d[3] = { x->dims[0], x->dims[1], v };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, 3);
    if (ctx->n_outputs > 1 && ctx->inputs[0].dims[1] >= 0) {
        int64_t nh = cort_attr_int(ctx->node, "num_heads", 1), past = 0;
        if (nn_infer_has(ctx, pi)) past = ctx->inputs[pi].rank == 5 ? ctx->inputs[pi].dims[3] : -1;
        int64_t p[5] = { 2, x->dims[0], nh, past < 0 ? -1 : past + x->dims[1], nh > 0 ? q / nh : -1 };
        cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_FLOAT, p, 5);
    }
    return NULL;
}

static cort_status *att_infer(cort_infer_ctx *ctx) { return att_infer_past(ctx, 4); }

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

static cort_status *check_mask(const cort_kernel_ctx *ctx, size_t input, const cort_value *m, const att_dims *d) {
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
                               "input %zu '%s' is %s%s; expected int32 of shape (B), (2B), (B, T), (B, S, T) or "
                               "(B, 1, M, M) with B=%zu S=%zu T=%zu", input, input == 3 ? "mask_index" : "key_padding_mask",
                               cort_type_name(m->type),
                               nn_shape(m, buf, sizeof buf), d->B, d->S, d->T);
    return NULL;
}

/* Q of head n, batch entry b, token s at base + b * bstride + s * sstride + n * nstride */
typedef struct att_q { const float *base; size_t bstride, sstride, nstride; } att_q;

/* The attention of every head: K, V per head in kbuf / vbuf ([B, heads, T, h]); scores (S x T)
 * and mb (S x T) are scratch; y is (B, S, heads * hv). Mask attributes come from the node. */
static cort_status *att_core(cort_kernel_ctx *ctx, const att_dims *d, const att_q *q, const float *kbuf,
                             const float *vbuf, const cort_value *mask, const cort_value *abias, size_t ab_b,
                             size_t ab_n, float scale, float *scores, float *mb, float *y) {
    const float filter = cort_attr_float(ctx->node, "mask_filter_value", -10000.0f);
    const int causal = cort_attr_int(ctx->node, "unidirectional", 0) != 0;
    const nn_gemm_opts o = { NULL, NULL, NULL, NULL, ctx, NULL, NULL };
    const size_t n_sc = d->S * d->T;
    cort_status *st = NULL;
    for (size_t b = 0; b < d->B && !st; b++) {
        att_mask(mask, d, b, filter, causal, mb);
        for (size_t n = 0; n < d->N && !st; n++) {
            const float *qh = q->base + b * q->bstride + n * q->nstride;
            const float *kh = kbuf + (b * d->N + n) * d->T * d->h, *vh = vbuf + (b * d->N + n) * d->T * d->hv;
            nn_gemm_b kb = nn_gemm_b_matrix(kh, d->h, 1);   /* K' */
            st = nn_sgemm_opt(ctx->pool, NULL, d->S, d->T, d->h, scale, qh, q->sstride, 0, &kb, 0.0f, scores, d->T, &o);
            if (st) break;
            const float *ab = abias ? (const float *)abias->data + b * ab_b + n * ab_n : NULL;
            for (size_t i = 0; i < n_sc; i++) scores[i] += mb[i] + (ab ? ab[i] : 0.0f);
            rd_softmax_f32(RD_SOFTMAX, scores, scores, d->S, d->T, 1, NULL, 1);
            nn_gemm_b vb = nn_gemm_b_matrix(vh, d->hv, 0);
            st = nn_sgemm_opt(ctx->pool, NULL, d->S, d->hv, d->T, 1.0f, scores, d->T, 0, &vb, 0.0f,
                              y + b * d->S * d->vh + n * d->hv, d->vh, &o);
        }
    }
    return st;
}

static cort_status *check_abias(const cort_kernel_ctx *ctx, size_t i, const cort_value *abias, const att_dims *d,
                                size_t *ab_b, size_t *ab_n) {
    *ab_b = *ab_n = 0;
    if (!abias) return NULL;
    char b1[160];
    int ok = abias->kind == CORT_VKIND_TENSOR && abias->type == CORT_TYPE_FLOAT && abias->rank == 4 &&
             (abias->shape[0] == 1 || (size_t)abias->shape[0] == d->B) &&
             (abias->shape[1] == 1 || (size_t)abias->shape[1] == d->N) && (size_t)abias->shape[2] == d->S &&
             (size_t)abias->shape[3] == d->T;
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu 'attention_bias' has shape %s, expected (%zu or 1, %zu or 1, %zu, %zu)", i,
                               nn_shape(abias, b1, sizeof b1), d->B, d->N, d->S, d->T);
    *ab_n = abias->shape[1] == 1 ? 0 : d->S * d->T;
    *ab_b = abias->shape[0] == 1 ? 0 : (size_t)abias->shape[1] * d->S * d->T;
    return NULL;
}

/* The inputs Attention and QAttention differ in: where the optional ones are, and how QKV is made. */
typedef struct att_io {
    size_t bias, mask, past, abias;   /* input indices; abias SIZE_MAX: none */
    /* qkv (rows x W3) = input x weights + bias */
    cort_status *(*project)(cort_kernel_ctx *ctx, const att_dims *d, size_t W3, const float *bias, float *qkv);
} att_io;

static cort_status *att_run_io(cort_kernel_ctx *ctx, const cort_value *x, const cort_value *w, const att_io *io) {
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
    CORT_TRY(ctb_row_param(ctx, io->bias, "bias", W3, &bias));
    const cort_value *mask = nn_opt_input(ctx, io->mask), *past = nn_opt_input(ctx, io->past);
    const cort_value *abias = io->abias == SIZE_MAX ? NULL : nn_opt_input(ctx, io->abias);
    if (past) {
        if (past->kind != CORT_VKIND_TENSOR || past->type != CORT_TYPE_FLOAT || past->rank != 5 || past->shape[0] != 2 ||
            (size_t)past->shape[1] != d.B || (size_t)past->shape[2] != d.N || (size_t)past->shape[4] != d.h ||
            d.h != d.hv)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %zu 'past' has shape %s, expected (2, %zu, %zu, past_length, %zu)", io->past,
                                   nn_shape(past, b1, sizeof b1), d.B, d.N, d.h);
        d.P = (size_t)past->shape[3];
    }
    d.T = d.P + d.S;
    if (mask) CORT_TRY(check_mask(ctx, io->mask, mask, &d));
    size_t ab_b, ab_n;   /* attention_bias strides per batch entry and head (0: broadcast) */
    CORT_TRY(check_abias(ctx, io->abias, abias, &d, &ab_b, &ab_n));
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
    const size_t rows = d.B * d.S, kvk = d.B * d.N * d.T * d.h;
    /* scratch: the projection, K and V per head over all T keys (unless present holds them), one
     * head's scores and one batch entry's mask */
    size_t n_qkv = 0, n_kv = 0, n_sc = 0, bytes = 1;
    int ok = ctb_size_add(&n_qkv, rows, W3, 1, 1) && ctb_size_add(&n_sc, d.S, d.T, 1, 1) &&
             (pres || (ctb_size_add(&n_kv, d.B, d.N, d.T, d.h) && ctb_size_add(&n_kv, d.B, d.N, d.T, d.hv))) &&
             ctb_size_add(&bytes, n_qkv + n_kv, 1, 1, 1) && ctb_size_add(&bytes, n_sc, 2, 1, 1) &&
             !cort_mul_size_ovf(bytes, sizeof(float), &bytes);
    float *qkv = ok ? cort_kernel_scratch(ctx, bytes) : NULL;
    if (!qkv) return cort_error_oom();
    float *kbuf = pres ? pres->data : qkv + n_qkv, *vbuf = kbuf + kvk, *scores = qkv + n_qkv + n_kv,
          *mb = scores + n_sc;
    cort_status *st = io->project(ctx, &d, W3, bias, qkv);
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
    const att_q aq = { qkv, d.S * W3, W3, d.h };
    st = att_core(ctx, &d, &aq, kbuf, vbuf, mask, abias, ab_b, ab_n, scale, scores, mb, y->data);
done:
    cort_kernel_scratch_free(ctx, qkv);
    return st;
}

static cort_status *att_project_f32(cort_kernel_ctx *ctx, const att_dims *d, size_t W3, const float *bias,
                                    float *qkv) {
    const nn_gemm_opts po = { NULL, nn_mm_packed_b(ctx), NULL, NULL, ctx, NULL, bias };
    nn_gemm_b wb = nn_gemm_b_matrix(ctx->inputs[1]->data, W3, 0);
    return nn_sgemm_opt(ctx->pool, NULL, d->B * d->S, W3, d->Hin, 1.0f, ctx->inputs[0]->data, d->Hin, 0, &wb, 0.0f, qkv,
                        W3, &po);
}

static cort_status *att_run(cort_kernel_ctx *ctx) {
    const cort_value *x, *w;
    CORT_TRY(ctb_float_input(ctx, 0, "input", 3, &x));
    CORT_TRY(ctb_float_input(ctx, 1, "weights", 2, &w));
    static const att_io io = { 2, 3, 4, 5, att_project_f32 };
    return att_run_io(ctx, x, w, &io);
}

const cort_op_def ctb_op_attention = { .name = "Attention", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = att_init,
    .free_state = nn_mm_free_packed_b, .infer = att_infer, .run = att_run };

/* com.microsoft.QAttention(input, weight, bias, input_scale, weight_scale, mask_index?, input_zero_point?,
 * weight_zero_point?, past?) num_heads, unidirectional, mask_filter_value, scale: Attention whose
 * projection is 8-bit, as ONNX Runtime's quantize_dynamic writes it for a fused Attention. The sums
 * (input - input_zero_point)(weight - weight_zero_point) are exact int32 from the int GEMM (weight
 * packed at creation when constant); QKV = sum * (input_scale * weight_scale[col]) + bias[col], the
 * weight's scale and zero point per tensor or per column; then Attention's softmax part. */
static cort_status *qatt_init(const cort_node *node, void **state) {
    *state = NULL;
    CORT_TRY(att_check_attrs(node));
    return nn_imm_init_packed(node, state, 1, 7);
}

static cort_status *qatt_infer(cort_infer_ctx *ctx) { return att_infer_past(ctx, 8); }

/* A scale or zero point of one element, or (per column) W3 of them when allowed. */
static cort_status *qatt_param(const cort_kernel_ctx *ctx, size_t i, const char *name, cort_type t, size_t W3,
                               const cort_value **out) {
    const cort_value *v = nn_opt_input(ctx, i);
    *out = v;
    if (!v) return NULL;
    if (v->kind != CORT_VKIND_TENSOR || v->type != t || !(v->count == 1 || (W3 && v->count == W3) ) || v->rank > 1) {
        char buf[160];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is %s%s, expected %s with 1%s "
                               "element(s)", i, name, cort_type_name(v->type), nn_shape(v, buf, sizeof buf),
                               cort_type_name(t), W3 ? " or one per weight column" : "");
    }
    return NULL;
}

static cort_status *qatt_project(cort_kernel_ctx *ctx, const att_dims *d, size_t W3, const float *bias, float *qkv) {
    const cort_value *x = ctx->inputs[0], *w = ctx->inputs[1], *is, *ws, *xz, *wz;
    CORT_TRY(qatt_param(ctx, 3, "input_scale", CORT_TYPE_FLOAT, 0, &is));
    CORT_TRY(qatt_param(ctx, 4, "weight_scale", CORT_TYPE_FLOAT, W3, &ws));
    CORT_TRY(qatt_param(ctx, 6, "input_zero_point", x->type, 0, &xz));
    CORT_TRY(qatt_param(ctx, 7, "weight_zero_point", w->type, W3, &wz));
    if (!is || !ws)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %d '%s' is missing", is ? 4 : 3,
                               is ? "weight_scale" : "input_scale");
    const size_t rows = d->B * d->S, K = d->Hin;
    if (K) {
        const nn_igemm_kernel *k = nn_igemm_best_mm_kernel();
        const int16_t *pre = nn_imm_packed_b(ctx, 1, 7, &k);
        const size_t na = nn_igemm_a_size(k, rows, K), nb = pre ? 1 : nn_igemm_b_size(k, K, W3);
        if (!na || !nb || na > SIZE_MAX / 4 || nb > SIZE_MAX / 4)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "projection [%zu, %zu] x [%zu, %zu] is too large", rows, K, K, W3);
        int16_t *ap = cort_kernel_scratch(ctx, na * sizeof(int16_t)), *bp = cort_kernel_scratch(ctx, nb * sizeof(int16_t));
        if (!ap || !bp) {
            cort_kernel_scratch_free(ctx, ap);
            cort_kernel_scratch_free(ctx, bp);
            return cort_error_oom();
        }
        const nn_i8_operand oa = { x->data, x->type == CORT_TYPE_INT8, K, xz ? xz->data : NULL,
                                   xz && xz->type == CORT_TYPE_INT8, xz ? 1 : 0 };
        const nn_i8_operand ob = { w->data, w->type == CORT_TYPE_INT8, W3, wz ? wz->data : NULL,
                                   wz && wz->type == CORT_TYPE_INT8, wz ? wz->count : 0 };
        nn_igemm_pack_a(k, rows, K, &oa, ap);
        if (!pre) nn_igemm_pack_b(k, K, W3, &ob, bp);
        /* int32 and float have one size: the sums land in qkv and are converted in place */
        nn_igemm(ctx->pool, k, rows, W3, K, ap, pre ? pre : bp, (int32_t *)(void *)qkv, W3);
        cort_kernel_scratch_free(ctx, ap);
        cort_kernel_scratch_free(ctx, bp);
    }
    const float xs = ((const float *)is->data)[0];
    const float *wsd = ws->data;
    unsigned char *raw = (unsigned char *)qkv;
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < W3; j++) {
            const size_t i = r * W3 + j;
            int32_t v = 0;
            if (K) memcpy(&v, raw + i * 4, 4);
            const float f = (float)v * (xs * wsd[ws->count == 1 ? 0 : j]) + (bias ? bias[j] : 0.0f);
            memcpy(raw + i * 4, &f, 4);
        }
    return NULL;
}

static cort_status *qatt_run(cort_kernel_ctx *ctx) {
    const cort_value *x = ctx->inputs[0], *w = ctx->inputs[1];
    char b1[160];
    if (!x || x->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(x->type) || x->rank != 3)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' is %s%s, expected uint8 or "
                               "int8 of rank 3", x ? cort_type_name(x->type) : "nothing",
                               x ? nn_shape(x, b1, sizeof b1) : "");
    if (!w || w->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(w->type) || w->rank != 2)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'weight' is %s%s, expected uint8 or "
                               "int8 of rank 2", w ? cort_type_name(w->type) : "nothing",
                               w ? nn_shape(w, b1, sizeof b1) : "");
    static const att_io io = { 2, 5, 8, SIZE_MAX, qatt_project };
    return att_run_io(ctx, x, w, &io);
}

const cort_op_def ctb_op_qattention = { .name = "QAttention", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = 0, .init = qatt_init, .free_state = nn_imm_free, .infer = qatt_infer,
    .run = qatt_run };

/* com.microsoft.MultiHeadAttention(query, key?, value?, bias?, key_padding_mask?, attention_bias?,
 * past_key?, past_value?) num_heads, mask_filter_value, scale, unidirectional: attention of
 * projected Q (B, S, D) over K, V given either projected (B, L, D) / (B, L, Dv), to which bias's
 * slices are added, or already split into heads (B, heads, L, h), used as they are; past_key /
 * past_value (B, heads, P, h) go first; present_key / present_value are the keys and values
 * attended over. The mask, attention_bias and softmax are Attention's. */
static cort_status *mha_infer(cort_infer_ctx *ctx) {
    for (size_t i = 0; i < ctx->n_outputs && i < 3; i++) nn_infer_type(ctx, i, CORT_TYPE_FLOAT);
    const cort_tinfo *q = &ctx->inputs[0], *v = ctx->n_inputs > 2 ? &ctx->inputs[2] : NULL;
    if (q->rank != 3 || !v || !v->present || (v->rank != 3 && v->rank != 4)) return NULL;
    const int64_t nh = cort_attr_int(ctx->node, "num_heads", 1);
    int64_t dv = v->rank == 3 ? v->dims[2] : (v->dims[3] < 0 ? -1 : v->dims[3] * nh);
    int64_t d[3] = { q->dims[0], q->dims[1], dv };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, 3);
    return NULL;
}

static cort_status *mha_init(const cort_node *node, void **state) {
    *state = NULL;
    int64_t n = cort_attr_int(node, "num_heads", 0);
    if (n < 1)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'num_heads' = %lld, expected >= 1",
                               (long long)n);
    return NULL;
}

/* K or V of one batch entry and head into dst (rows of h): from (B, L, D) with bias, or (B, heads, L, h) */
static void kv_rows(const cort_value *src, const float *bias, size_t b, size_t n, size_t N, size_t L, size_t h,
                    float *dst) {
    const float *p = src->data;
    for (size_t l = 0; l < L; l++) {
        const float *r = src->rank == 4 ? p + ((b * N + n) * L + l) * h : p + (b * L + l) * N * h + n * h;
        for (size_t i = 0; i < h; i++) dst[l * h + i] = r[i] + (bias && src->rank == 3 ? bias[n * h + i] : 0.0f);
    }
}

static cort_status *mha_run(cort_kernel_ctx *ctx) {
    const cort_value *q, *k, *v;
    CORT_TRY(ctb_float_input(ctx, 0, "query", 3, &q));
    k = nn_opt_input(ctx, 1);
    v = nn_opt_input(ctx, 2);
    char b1[160], b2[160], b3[160];
    const size_t N = (size_t)cort_attr_int(ctx->node, "num_heads", 1);
    if (q->rank != 3 || !k || !v)
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "query %s needs key and value inputs (packed "
                               "QKV / KV forms are not supported)", nn_shape(q, b1, sizeof b1));
    CORT_TRY(ctb_float_input(ctx, 1, "key", 3, &k));
    CORT_TRY(ctb_float_input(ctx, 2, "value", 3, &v));
    att_dims d = { (size_t)q->shape[0], (size_t)q->shape[1], 0, N, (size_t)q->shape[2], 0, 0, 0, 0, 0 };
    size_t L;
    int ok = k->rank == v->rank && (k->rank == 3 || k->rank == 4) && (size_t)k->shape[0] == d.B &&
             (size_t)v->shape[0] == d.B && d.qh % N == 0;
    if (ok && k->rank == 3) {
        L = (size_t)k->shape[1];
        d.vh = (size_t)v->shape[2];
        ok = (size_t)k->shape[2] == d.qh && (size_t)v->shape[1] == L && d.vh % N == 0;
    } else if (ok) {
        L = (size_t)k->shape[2];
        d.vh = (size_t)v->shape[3] * N;
        ok = (size_t)k->shape[1] == N && (size_t)v->shape[1] == N && (size_t)k->shape[3] * N == d.qh &&
             (size_t)v->shape[2] == L;
    } else {
        L = 0;
    }
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "query %s, key %s and value %s do not fit "
                               "(expected (B, S, D), then (B, L, D) and (B, L, Dv), or (B, %zu, L, head_size))",
                               nn_shape(q, b1, sizeof b1), nn_shape(k, b2, sizeof b2), nn_shape(v, b3, sizeof b3), N);
    d.h = d.qh / N;
    d.hv = d.vh / N;
    const float *bias;
    CORT_TRY(ctb_row_param(ctx, 3, "bias", 2 * d.qh + d.vh, &bias));
    const cort_value *mask = nn_opt_input(ctx, 4), *abias = nn_opt_input(ctx, 5);
    const cort_value *pk = nn_opt_input(ctx, 6), *pv = nn_opt_input(ctx, 7);
    if ((pk != NULL) != (pv != NULL))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "past_key and past_value go together");
    if (pk) {
        ok = pk->kind == CORT_VKIND_TENSOR && pv->kind == CORT_VKIND_TENSOR && pk->type == CORT_TYPE_FLOAT &&
             pv->type == CORT_TYPE_FLOAT && pk->rank == 4 && pv->rank == 4 && (size_t)pk->shape[0] == d.B &&
             (size_t)pk->shape[1] == N && (size_t)pk->shape[3] == d.h && (size_t)pv->shape[0] == d.B &&
             (size_t)pv->shape[1] == N && pv->shape[2] == pk->shape[2] && (size_t)pv->shape[3] == d.hv;
        if (!ok)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "past_key %s / past_value %s, expected "
                                   "(%zu, %zu, P, %zu) and (%zu, %zu, P, %zu)", nn_shape(pk, b1, sizeof b1),
                                   nn_shape(pv, b2, sizeof b2), d.B, N, d.h, d.B, N, d.hv);
        d.P = (size_t)pk->shape[2];
    }
    d.T = d.P + L;
    if (mask) CORT_TRY(check_mask(ctx, 4, mask, &d));
    size_t ab_b, ab_n;
    CORT_TRY(check_abias(ctx, 5, abias, &d, &ab_b, &ab_n));
    int64_t yd[3] = { (int64_t)d.B, (int64_t)d.S, (int64_t)d.vh };
    cort_value *y, *prk = NULL, *prv = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, yd, 3, &y));
    int64_t kd[4] = { (int64_t)d.B, (int64_t)N, (int64_t)d.T, (int64_t)d.h }, vd[4] = { kd[0], kd[1], kd[2], (int64_t)d.hv };
    if (ctx->n_outputs > 1 && ctx->node->out_slot[1] >= 0) CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, kd, 4, &prk));
    if (ctx->n_outputs > 2 && ctx->node->out_slot[2] >= 0) CORT_TRY(cort_kernel_output(ctx, 2, CORT_TYPE_FLOAT, vd, 4, &prv));
    if (!y->count) return NULL;
    size_t nk = 0, nv = 0, nq = 0, n_sc = 0, bytes = 1;
    ok = ctb_size_add(&nk, d.B, N, d.T, d.h) && ctb_size_add(&nv, d.B, N, d.T, d.hv) &&
             (!bias || ctb_size_add(&nq, d.B, d.S, d.qh, 1)) && ctb_size_add(&n_sc, d.S, d.T, 1, 1) &&
             ctb_size_add(&bytes, prk ? 0 : nk, 1, 1, 1) && ctb_size_add(&bytes, prv ? 0 : nv, 1, 1, 1) &&
             ctb_size_add(&bytes, nq, 1, 1, 1) && ctb_size_add(&bytes, n_sc, 2, 1, 1) &&
             !cort_mul_size_ovf(bytes, sizeof(float), &bytes);
    float *buf = ok ? cort_kernel_scratch(ctx, bytes) : NULL;
    if (!buf) return cort_error_oom();
    float *kbuf = prk ? prk->data : buf, *vbuf = prv ? prv->data : buf + (prk ? 0 : nk);
    float *qb = buf + (prk ? 0 : nk) + (prv ? 0 : nv), *scores = qb + nq, *mb = scores + n_sc;
    for (size_t b = 0; b < d.B; b++)
        for (size_t n = 0; n < N; n++) {
            float *kh = kbuf + (b * N + n) * d.T * d.h, *vh = vbuf + (b * N + n) * d.T * d.hv;
            if (d.P) {
                memcpy(kh, (const float *)pk->data + (b * N + n) * d.P * d.h, d.P * d.h * sizeof(float));
                memcpy(vh, (const float *)pv->data + (b * N + n) * d.P * d.hv, d.P * d.hv * sizeof(float));
            }
            kv_rows(k, bias ? bias + d.qh : NULL, b, n, N, L, d.h, kh + d.P * d.h);
            kv_rows(v, bias ? bias + 2 * d.qh : NULL, b, n, N, L, d.hv, vh + d.P * d.hv);
        }
    const float *qp = q->data;
    if (bias) {   /* Q + its bias once, not per head */
        for (size_t r = 0; r < d.B * d.S; r++)
            for (size_t i = 0; i < d.qh; i++) qb[r * d.qh + i] = qp[r * d.qh + i] + bias[i];
        qp = qb;
    }
    const float scale = cort_attr_float(ctx->node, "scale", 1.0f / sqrtf((float)d.h));
    const att_q aq = { qp, d.S * d.qh, d.qh, d.h };
    cort_status *st = att_core(ctx, &d, &aq, kbuf, vbuf, mask, abias, ab_b, ab_n, scale, scores, mb, y->data);
    cort_kernel_scratch_free(ctx, buf);
    return st;
}

const cort_op_def ctb_op_multi_head_attention = { .name = "MultiHeadAttention", .domain = "com.microsoft",
    .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = mha_init,
    .infer = mha_infer, .run = mha_run };
