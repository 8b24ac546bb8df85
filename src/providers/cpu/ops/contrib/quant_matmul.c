/* Quantized matrix products of com.microsoft, float32 out unless a y_scale is given:
 *   MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?)
 *     Y = (A - a_zp) (B - b_zp) * a_scale * b_scale + bias   (b_scale, b_zp, bias per column or scalar)
 *   DynamicQuantizeMatMul(A, B, b_scale, b_zero_point?, bias?): A float, quantized to uint8 first as
 *     DynamicQuantizeLinear does (range including 0, scale (max - min) / 255, rounded zero point)
 *   QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp?) alpha, transA, transB:
 *     Y = alpha a_scale b_scale ((A - a_zp)' (B - b_zp)' + C), C int32, quantized when y_scale is given
 *   MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?) K, N, bits, block_size: A float (.., K),
 *     B (N, K/block_size, block_size*bits/8) bytes of `bits`-bit weights (low bits first), per block
 *     scales (N * blocks) and zero points (packed like B, or float like scales; 2^(bits-1) without);
 *     g_idx (K) gives each row of K its block instead of k / block_size.
 * MatMulIntegerToFloat, DynamicQuantizeMatMul and QGemm run the exact int GEMM (kernels/int_gemm.h);
 * the scales are applied per column afterwards (the first two in the GEMM's tile epilogue). MatMulNBits with a constant 4-bit B (no g_idx) keeps
 * it 4-bit, packed at creation for the kernels of kernels/q4_gemm.h: a GEMV kernel dequantizing in
 * registers for few rows of A, the SGEMM on panels dequantized per call for more; other bit widths,
 * g_idx and a B given per run are dequantized to float (once at creation when constant). B is 2-D
 * (the form quantizers write); A may have batch dims. */
#include <math.h>
#include <string.h>
#include "contrib.h"
#include "../quant/quant.h"
#include "../../kernels/gemm.h"
#include "../../kernels/int_gemm.h"
#include "../../kernels/q4_gemm.h"
#include "../../kernels/isa_config.h"
#include "../math/matmul.h"
#include "../fused/fused.h"
#include "../../../../core/alloc.h"

/* ---- shared ---- */
static cort_status *per_col(const cort_kernel_ctx *ctx, size_t i, const char *name, size_t N, int is_zp,
                            const cort_value **out) {
    const cort_value *v = nn_opt_input(ctx, i);
    *out = v;
    if (!v) return NULL;
    int ok = v->kind == CORT_VKIND_TENSOR && (v->count == 1 || v->count == N) &&
             (is_zp ? nn_q_is_8bit(v->type) : v->type == CORT_TYPE_FLOAT);
    if (!ok) {
        char buf[160];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is %s%s, expected %s with 1 or "
                               "%zu elements", i, name, cort_type_name(v->type), nn_shape(v, buf, sizeof buf),
                               is_zp ? "int8/uint8" : "float", N);
    }
    return NULL;
}

static cort_status *mm_shapes(cort_kernel_ctx *ctx, const cort_value *a, const cort_value *b, size_t *rows,
                              size_t *K, size_t *N, int64_t *ydims, size_t *yrank) {
    char b1[160], b2[160];
    if (a->kind != CORT_VKIND_TENSOR || a->rank < 1 || b->kind != CORT_VKIND_TENSOR || b->rank != 2 ||
        a->shape[a->rank - 1] != b->shape[0])
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'A' %s and 'B' %s do not multiply (B "
                               "must be 2-D)", nn_shape(a, b1, sizeof b1), nn_shape(b, b2, sizeof b2));
    *K = (size_t)b->shape[0];
    *N = (size_t)b->shape[1];
    *rows = *K ? a->count / *K : 0;
    memcpy(ydims, a->shape, a->rank * sizeof *ydims);
    ydims[a->rank - 1] = (int64_t)*N;
    *yrank = a->rank;
    return NULL;
}

static cort_status *mm_infer(cort_infer_ctx *ctx) {
    nn_infer_type(ctx, 0, CORT_TYPE_FLOAT);
    const cort_tinfo *a = &ctx->inputs[0], *b = &ctx->inputs[1];
    if (a->rank < 1 || b->rank != 2) return NULL;
    int64_t d[CORT_MAX_RANK];
    memcpy(d, a->dims, (size_t)a->rank * sizeof *d);
    d[a->rank - 1] = b->dims[1];
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, a->rank);
    return NULL;
}

/* Each finished int32 tile to float in y: float(acc) * scale[n], then + bias[n], one rounding each as
 * the Cast, Mul and Add nodes the dynamic quantizer writes (passes/fuse_int_matmul.c relies on it). */
typedef struct itf_epi {
    float *y;
    size_t N;
    const float *scale, *bias;
    void (*rows)(const int32_t *x, size_t n, const float *scale, const float *bias, float *y);   /* or NULL */
    int gelu;   /* node->act GELU (passes/fuse_int_matmul.c): applied to each finished row piece */
} itf_epi;
static void itf_tile(void *ctx, const int32_t *tile, size_t ldt, size_t i0, size_t rows, size_t j0, size_t cols) {
    const itf_epi *e = ctx;
    const float *sc = e->scale + j0, *b = e->bias ? e->bias + j0 : NULL;
    for (size_t r = 0; r < rows; r++) {
        float *y = e->y + (i0 + r) * e->N + j0;
        const int32_t *t = tile + r * ldt;
        if (e->rows) {
            e->rows(t, cols, sc, b, y);
        } else if (b) {
            for (size_t c = 0; c < cols; c++) {
                const float v = (float)t[c] * sc[c];
                y[c] = v + b[c];
            }
        } else {
            for (size_t c = 0; c < cols; c++) y[c] = (float)t[c] * sc[c];
        }
        if (e->gelu) fu_gelu_f32(y, y, cols);
    }
}

/* the common tail: A quantized (rows x K), B quantized, scales. The product runs on the exact int
 * GEMM (kernels/int_gemm.h), each tile scaled into y while it is in L1. */
static cort_status *int_to_float(cort_kernel_ctx *ctx, const nn_i8_operand *qa, size_t bi, size_t bzi, const cort_value *b,
                                 const cort_value *bz, const cort_value *bs, float a_scale, const float *bias,
                                 size_t rows, size_t K, size_t N, const int64_t *ydims, size_t yrank) {
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, ydims, yrank, &y));
    if (!y->count) return NULL;
    const int gelu = ctx->node->act == CORT_ACT_GELU;
    if (!K) {
        for (size_t r = 0; r < rows; r++)
            for (size_t n = 0; n < N; n++) ((float *)y->data)[r * N + n] = bias ? bias[n] : 0.0f;
        if (gelu) fu_gelu_f32(y->data, y->data, y->count);
        return NULL;
    }
    const nn_igemm_kernel *k = nn_igemm_best_mm_kernel();
    const int16_t *pre = nn_imm_packed_b(ctx, bi, bzi, &k);
    const size_t na = nn_igemm_a_size(k, rows, K), nb = pre ? 1 : nn_igemm_b_size(k, K, N);
    if (!na || !nb || na > SIZE_MAX / 4 || nb > SIZE_MAX / 4)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "product of [%zu, %zu] x [%zu, %zu] is too large",
                               rows, K, K, N);
    int16_t *ap = cort_kernel_scratch(ctx, na * sizeof(int16_t)), *bp = cort_kernel_scratch(ctx, nb * sizeof(int16_t));
    float *sc = cort_kernel_scratch(ctx, N * sizeof(float));
    if (!ap || !bp || !sc) {
        cort_kernel_scratch_free(ctx, ap);
        cort_kernel_scratch_free(ctx, bp);
        cort_kernel_scratch_free(ctx, sc);
        return cort_error_oom();
    }
    nn_i8_operand ob = { b->data, b->type == CORT_TYPE_INT8, N, bz ? bz->data : NULL, bz && bz->type == CORT_TYPE_INT8,
                         bz ? bz->count : 0 };
    nn_igemm_pack_a(k, rows, K, qa, ap);
    if (!pre) nn_igemm_pack_b(k, K, N, &ob, bp);
    for (size_t n = 0; n < N; n++) sc[n] = a_scale * nn_q_scale(bs, bs->count == 1 ? 0 : n);
    itf_epi e = { y->data, N, sc, bias, nn_isa()->i32_scale, gelu };
    nn_igemm_epi(ctx->pool, k, rows, N, K, ap, pre ? pre : bp, itf_tile, &e);
    cort_kernel_scratch_free(ctx, ap);
    cort_kernel_scratch_free(ctx, bp);
    cort_kernel_scratch_free(ctx, sc);
    return NULL;
}

/* B (input 1) with its zero point (input 5, or 3 for DynamicQuantizeMatMul) packed at creation */
static cort_status *mmitf_init(const cort_node *node, void **state) { return nn_imm_init_packed(node, state, 1, 5); }
static cort_status *dqmm_init(const cort_node *node, void **state) { return nn_imm_init_packed(node, state, 1, 3); }

static cort_status *mmitf_run(cort_kernel_ctx *ctx) {
    const cort_value *a = nn_opt_input(ctx, 0), *b = nn_opt_input(ctx, 1), *as = nn_opt_input(ctx, 2);
    if (!a || !b || !as || !nn_q_is_8bit(a->type) || !nn_q_is_8bit(b->type) || as->count != 1 ||
        as->type != CORT_TYPE_FLOAT)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'A', 'B' must be int8/uint8 and "
                               "'a_scale' a float scalar");
    size_t rows, K, N, yrank;
    int64_t yd[CORT_MAX_RANK];
    CORT_TRY(mm_shapes(ctx, a, b, &rows, &K, &N, yd, &yrank));
    const cort_value *bs, *az, *bz;
    const float *bias;
    CORT_TRY(per_col(ctx, 3, "b_scale", N, 0, &bs));
    if (!bs) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 3 'b_scale' is missing");
    CORT_TRY(per_col(ctx, 4, "a_zero_point", 1, 1, &az));
    CORT_TRY(per_col(ctx, 5, "b_zero_point", N, 1, &bz));
    CORT_TRY(ctb_row_param(ctx, 6, "bias", N, &bias));
    nn_i8_operand qa = { a->data, a->type == CORT_TYPE_INT8, K, az ? az->data : NULL, az && az->type == CORT_TYPE_INT8,
                         1 };
    return int_to_float(ctx, &qa, 1, 5, b, bz, bs, *(const float *)as->data, bias, rows, K, N, yd, yrank);
}

static cort_status *dqmm_run(cort_kernel_ctx *ctx) {
    const cort_value *a, *b = nn_opt_input(ctx, 1);
    CORT_TRY(ctb_float_input(ctx, 0, "A", 1, &a));
    if (!b || !nn_q_is_8bit(b->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'B' must be int8 or uint8");
    size_t rows, K, N, yrank;
    int64_t yd[CORT_MAX_RANK];
    CORT_TRY(mm_shapes(ctx, a, b, &rows, &K, &N, yd, &yrank));
    const cort_value *bs, *bz;
    const float *bias;
    CORT_TRY(per_col(ctx, 2, "b_scale", N, 0, &bs));
    if (!bs) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'b_scale' is missing");
    CORT_TRY(per_col(ctx, 3, "b_zero_point", N, 1, &bz));
    CORT_TRY(ctb_row_param(ctx, 4, "bias", N, &bias));
    /* A to uint8 as DynamicQuantizeLinear: the range always holds 0 */
    const float *ap = a->data;
    float lo = 0.0f, hi = 0.0f;
    for (size_t i = 0; i < a->count; i++) { lo = ap[i] < lo ? ap[i] : lo; hi = ap[i] > hi ? ap[i] : hi; }
    const float scale = (hi - lo) / 255.0f;
    int32_t zp = 0;
    if (scale > 0.0f) {
        float z = nearbyintf(-lo / scale);
        zp = z < 0.0f ? 0 : z > 255.0f ? 255 : (int32_t)z;
    }
    uint8_t *aq = cort_kernel_scratch(ctx, a->count + 1), zp8 = (uint8_t)zp;
    if (!aq) return cort_error_oom();
    for (size_t i = 0; i < a->count; i++) {
        int32_t q = scale > 0.0f ? nn_q_round(ap[i] / scale) + zp : zp;
        aq[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
    }
    nn_i8_operand qa = { aq, 0, K, &zp8, 0, 1 };
    cort_status *st = int_to_float(ctx, &qa, 1, 3, b, bz, bs, scale, bias, rows, K, N, yd, yrank);
    cort_kernel_scratch_free(ctx, aq);
    return st;
}

/* ---- QGemm ---- */
static cort_status *qgemm_infer(cort_infer_ctx *ctx) {
    cort_type t = nn_infer_has(ctx, 7) ? (nn_infer_has(ctx, 8) && ctx->inputs[8].elem ? ctx->inputs[8].elem
                                                                                     : CORT_TYPE_UINT8)
                                       : CORT_TYPE_FLOAT;
    nn_infer_type(ctx, 0, t);
    const cort_tinfo *a = &ctx->inputs[0], *b = &ctx->inputs[3];
    if (a->rank != 2 || b->rank != 2) return NULL;
    const int ta = cort_attr_int(ctx->node, "transA", 0) != 0, tb = cort_attr_int(ctx->node, "transB", 0) != 0;
    int64_t d[2] = { a->dims[ta ? 1 : 0], b->dims[tb ? 0 : 1] };
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, d, 2);
    return NULL;
}

static cort_status *qgemm_run(cort_kernel_ctx *ctx) {
    const cort_value *a = nn_opt_input(ctx, 0), *as = nn_opt_input(ctx, 1), *b = nn_opt_input(ctx, 3);
    char b1[160], b2[160];
    if (!a || !b || !as || !nn_q_is_8bit(a->type) || !nn_q_is_8bit(b->type) || a->rank != 2 || b->rank != 2 ||
        as->count != 1 || as->type != CORT_TYPE_FLOAT)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'A' and 'B' must be 2-D int8/uint8 and "
                               "'a_scale' a float scalar");
    const int ta = cort_attr_int(ctx->node, "transA", 0) != 0, tb = cort_attr_int(ctx->node, "transB", 0) != 0;
    const size_t M = (size_t)a->shape[ta ? 1 : 0], K = (size_t)a->shape[ta ? 0 : 1], N = (size_t)b->shape[tb ? 0 : 1];
    if ((size_t)b->shape[tb ? 1 : 0] != K)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'A' %s and 'B' %s do not multiply "
                               "(transA=%d transB=%d)", nn_shape(a, b1, sizeof b1), nn_shape(b, b2, sizeof b2), ta, tb);
    const cort_value *az, *bs, *bz, *c = nn_opt_input(ctx, 6), *ys = NULL, *yz = NULL;
    CORT_TRY(per_col(ctx, 2, "a_zero_point", 1, 1, &az));
    CORT_TRY(per_col(ctx, 4, "b_scale", N, 0, &bs));
    CORT_TRY(per_col(ctx, 5, "b_zero_point", N, 1, &bz));
    CORT_TRY(per_col(ctx, 7, "y_scale", 1, 0, &ys));
    CORT_TRY(per_col(ctx, 8, "y_zero_point", 1, 1, &yz));
    if (!bs) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 4 'b_scale' is missing");
    int64_t cstr[2] = { 0, 0 };
    if (c) {
        int ok = c->kind == CORT_VKIND_TENSOR && c->type == CORT_TYPE_INT32 && c->rank <= 2;
        int64_t yd2[2] = { (int64_t)M, (int64_t)N };
        for (size_t i = 0; ok && i < c->rank; i++) {
            int64_t d = c->shape[c->rank - 1 - i];
            ok = d == 1 || d == yd2[1 - i];
        }
        if (!ok)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 6 'C' is %s%s, expected int32 "
                                   "broadcasting to (%zu, %zu)", cort_type_name(c->type), nn_shape(c, b1, sizeof b1), M, N);
        cort_broadcast_strides(yd2, 2, c->shape, c->rank, cstr);
    }
    const int64_t yd[2] = { (int64_t)M, (int64_t)N };
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, ys ? (yz ? yz->type : CORT_TYPE_UINT8) : CORT_TYPE_FLOAT, yd, 2, &y));
    if (!y->count) return NULL;
    /* the exact int GEMM (kernels/int_gemm.h); transposed operands are copied upright first */
    int32_t *acc = cort_kernel_scratch(ctx, (M * N + 1) * sizeof(int32_t));
    const nn_igemm_kernel *k = nn_igemm_best_mm_kernel();
    const int16_t *pre = nn_imm_packed_b(ctx, 3, 5, &k);   /* made for this node's transB */
    const size_t na = nn_igemm_a_size(k, M, K), nb = pre ? 1 : nn_igemm_b_size(k, K, N);
    if (!na || !nb || na > SIZE_MAX / 4 || nb > SIZE_MAX / 4) {
        cort_kernel_scratch_free(ctx, acc);
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "product of [%zu, %zu] x [%zu, %zu] is too large",
                               M, K, K, N);
    }
    int16_t *ap = cort_kernel_scratch(ctx, na * sizeof(int16_t)), *bp = cort_kernel_scratch(ctx, nb * sizeof(int16_t));
    uint8_t *at = ta ? cort_kernel_scratch(ctx, M * K + 1) : NULL, *bt = tb && !pre ? cort_kernel_scratch(ctx, K * N + 1) : NULL;
    float *f = cort_kernel_scratch(ctx, (2 * N + 1) * sizeof(float));
    cort_status *st = !acc || !ap || !bp || !f || (ta && !at) || (tb && !pre && !bt) ? cort_error_oom() : NULL;
    if (!st) {
        const uint8_t *ad = a->data, *bd = b->data;
        if (ta)
            for (size_t m = 0; m < M; m++)
                for (size_t q = 0; q < K; q++) at[m * K + q] = ad[q * M + m];
        if (bt)
            for (size_t q = 0; q < K; q++)
                for (size_t n = 0; n < N; n++) bt[q * N + n] = bd[n * K + q];
        nn_i8_operand oa = { ta ? at : ad, a->type == CORT_TYPE_INT8, K, az ? az->data : NULL,
                             az && az->type == CORT_TYPE_INT8, az ? az->count : 0 };
        nn_i8_operand ob = { bt ? bt : bd, b->type == CORT_TYPE_INT8, N, bz ? bz->data : NULL,
                             bz && bz->type == CORT_TYPE_INT8, bz ? bz->count : 0 };
        if (K) {
            nn_igemm_pack_a(k, M, K, &oa, ap);
            if (!pre) nn_igemm_pack_b(k, K, N, &ob, bp);
            nn_igemm(ctx->pool, k, M, N, K, ap, pre ? pre : bp, acc, N);
        } else {
            memset(acc, 0, M * N * sizeof *acc);
        }
        /* the same float expression as before on the (exact) sums; each column's factor
         * alpha * b_scale[n] once, and the rounding without a libm call (nn_q_round_fast: the same
         * value) */
        const float alpha = cort_attr_float(ctx->node, "alpha", 1.0f) * *(const float *)as->data;
        const float ysc = ys ? *(const float *)ys->data : 1.0f;
        const int32_t yzp = yz ? nn_q_load(yz, 0) : 0;
        const int32_t *cd = c ? (const int32_t *)c->data : NULL;
        for (size_t n = 0; n < N; n++) f[n] = alpha * nn_q_scale(bs, bs->count == 1 ? 0 : n);
        /* a row at a time: the float expression in a loop the compiler vectorizes, then the
         * level's QuantizeLinear kernel (the same division and round-half-even); element by
         * element with its type switch, this epilogue was half of a 784 -> 512 QGemm at M = 1 */
        float *row = f + N;
        void (*const q8)(const float *, size_t, float, int32_t, int, void *) =
            ys && (y->type == CORT_TYPE_UINT8 || y->type == CORT_TYPE_INT8) ? nn_isa()->quantize8 : NULL;
        for (size_t m = 0; m < M; m++) {
            const int32_t *am = acc + m * N;
            float *v = ys ? row : (float *)y->data + m * N;
            if (!cd) {
                for (size_t n = 0; n < N; n++) v[n] = (float)am[n] * f[n];
            } else if (cstr[1] == 1) {
                const int32_t *cm = cd + m * cstr[0];
                for (size_t n = 0; n < N; n++) v[n] = ((float)am[n] + (float)cm[n]) * f[n];
            } else {
                const float c0 = (float)cd[m * cstr[0]];
                for (size_t n = 0; n < N; n++) v[n] = ((float)am[n] + c0) * f[n];
            }
            if (!ys) continue;
            if (q8) {
                q8(v, N, ysc, yzp, y->type == CORT_TYPE_INT8, (uint8_t *)y->data + m * N);
                continue;
            }
            for (size_t n = 0; n < N; n++) nn_q_store(y, m * N + n, nn_q_add_sat(nn_q_round_fast(v[n] / ysc), yzp));
        }
    }
    cort_kernel_scratch_free(ctx, f);
    cort_kernel_scratch_free(ctx, acc);
    cort_kernel_scratch_free(ctx, ap);
    cort_kernel_scratch_free(ctx, bp);
    cort_kernel_scratch_free(ctx, at);
    cort_kernel_scratch_free(ctx, bt);
    return st;
}

/* A constant B, upright or transposed (PyTorch's Linear exports transB = 1), is packed for the int
 * GEMM at creation. */
static cort_status *qgemm_init(const cort_node *node, void **state) {
    return nn_imm_init_packed_t(node, state, 3, 5, cort_attr_int(node, "transB", 0) != 0);
}

/* ---- MatMulNBits ---- */
typedef struct nbits_state {
    size_t K, N, bits, block;
    float *w;          /* K x N, dequantized at creation when B, scales, zero points, g_idx are constant */
    nn_q4_weights q4;  /* instead of w: a constant 4-bit B without g_idx */
} nbits_state;

static void nbits_free(void *p) {
    nbits_state *s = p;
    if (!s) return;
    cort_free(s->w);
    nn_q4_free(&s->q4);
    cort_free(s);
}

/* Dequantizes B into w (K x N); inputs are checked by the caller. */
static void nbits_dequant(const nbits_state *s, const uint8_t *b, const float *scales, const cort_value *zp,
                          const int32_t *g_idx, float *w) {
    const size_t K = s->K, N = s->N, bits = s->bits, bs = s->block, blocks = (K + bs - 1) / bs;
    const size_t blob = bs * bits / 8, mask = ((size_t)1 << bits) - 1, per_byte = 8 / bits;
    const size_t zp_stride = (blocks * bits + 7) / 8;   /* bytes of packed zero points per column */
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < K; k++) {
            const size_t kb = k / bs, j = k % bs, g = g_idx ? (size_t)g_idx[k] : kb;
            const uint8_t byte = b[(n * blocks + kb) * blob + j / per_byte];
            const int32_t q = (int32_t)((byte >> ((j % per_byte) * bits)) & mask);
            float z = (float)((size_t)1 << (bits - 1)), sc = scales[n * blocks + g];
            if (zp && zp->type == CORT_TYPE_UINT8) {
                const uint8_t zb = ((const uint8_t *)zp->data)[n * zp_stride + g / per_byte];
                z = (float)((zb >> ((g % per_byte) * bits)) & mask);
            } else if (zp) {
                z = ((const float *)zp->data)[n * blocks + g];
            }
            w[k * N + n] = ((float)q - z) * sc;
        }
}

static cort_status *nbits_check(const cort_node *node, const nbits_state *s, const cort_value *b,
                                const cort_value *scales, const cort_value *zp, const cort_value *g_idx) {
    const size_t blocks = (s->K + s->block - 1) / s->block, blob = s->block * s->bits / 8;
    char buf[160];
    if (!b || b->kind != CORT_VKIND_TENSOR || b->type != CORT_TYPE_UINT8 || b->count != s->N * blocks * blob)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'B' is %s%s, expected uint8 (%zu, %zu, %zu)",
                               b ? cort_type_name(b->type) : "missing", b ? nn_shape(b, buf, sizeof buf) : "", s->N,
                               blocks, blob);
    if (!scales || scales->kind != CORT_VKIND_TENSOR || scales->type != CORT_TYPE_FLOAT ||
        scales->count != s->N * blocks)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'scales' is %s, expected %zu floats",
                               scales ? nn_shape(scales, buf, sizeof buf) : "missing", s->N * blocks);
    if (zp) {
        const size_t packed = s->N * ((blocks * s->bits + 7) / 8);
        int ok = zp->kind == CORT_VKIND_TENSOR && ((zp->type == CORT_TYPE_UINT8 && zp->count == packed) ||
                                                   (zp->type == CORT_TYPE_FLOAT && zp->count == s->N * blocks));
        if (!ok)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 3 'zero_points' is %s%s, expected %zu "
                                   "packed uint8 or %zu floats", cort_type_name(zp->type), nn_shape(zp, buf, sizeof buf),
                                   packed, s->N * blocks);
    }
    if (g_idx) {
        int ok = g_idx->kind == CORT_VKIND_TENSOR && g_idx->type == CORT_TYPE_INT32 && g_idx->count == s->K;
        for (size_t k = 0; ok && k < s->K; k++) {
            int32_t g = ((const int32_t *)g_idx->data)[k];
            ok = g >= 0 && (size_t)g < blocks;
        }
        if (!ok)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 4 'g_idx' must be %zu int32 block indices "
                                   "below %zu", s->K, blocks);
    }
    return NULL;
}

/* B's rows of packed columns leave memory while the rest is packed (file-mapped models), so B is
 * never resident whole next to its pack */
typedef struct nbits_pack_ctx { const cort_node *node; size_t row; } nbits_pack_ctx;
static void nbits_packed_cols(void *ctx, size_t n0, size_t n1) {
    const nbits_pack_ctx *c = ctx;
    cort_node_const_input_drop(c->node, 1, n0 * c->row, (n1 - n0) * c->row);
}

static cort_status *nbits_init(const cort_node *node, void **state) {
    nbits_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    int64_t K = cort_attr_int(node, "K", 0), N = cort_attr_int(node, "N", 0), bits = cort_attr_int(node, "bits", 4),
            bs = cort_attr_int(node, "block_size", 0);
    if (K < 1 || N < 1 || (bits != 2 && bits != 4 && bits != 8) || bs < 16 || (bs & (bs - 1))) {
        cort_free(s);
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attributes K=%lld N=%lld bits=%lld block_size=%lld: "
                               "expected K, N >= 1, bits 2, 4 or 8, block_size a power of 2 >= 16", (long long)K,
                               (long long)N, (long long)bits, (long long)bs);
    }
    s->K = (size_t)K; s->N = (size_t)N; s->bits = (size_t)bits; s->block = (size_t)bs;
    *state = s;
    const cort_value *b = cort_node_const_input(node, 1), *sc = cort_node_const_input(node, 2);
    const int has_zp = node->n_inputs > 3 && node->in_slot[3] >= 0, has_g = node->n_inputs > 4 && node->in_slot[4] >= 0;
    const cort_value *zp = has_zp ? cort_node_const_input(node, 3) : NULL;
    const cort_value *g = has_g ? cort_node_const_input(node, 4) : NULL;
    if (!b || !sc || (has_zp && !zp) || (has_g && !g)) return NULL;   /* dequantized per run */
    cort_status *st = nbits_check(node, s, b, sc, zp, g);
    if (!st && s->bits == 4 && !g) {
        const int zu8 = zp && zp->type == CORT_TYPE_UINT8;
        nbits_pack_ctx pc = { node, (s->K + s->block - 1) / s->block * s->block / 2 };
        st = nn_q4_pack_ex(s->K, s->N, s->block, b->data, sc->data, zu8 ? zp->data : NULL, zp && !zu8 ? zp->data : NULL,
                           nbits_packed_cols, &pc, &s->q4);
        if (st) { nbits_free(s); *state = NULL; return st; }
        /* runs read the pack only: B, the scales and zero points may leave memory (file pages) */
        cort_node_const_input_packed(node, 1);
        cort_node_const_input_packed(node, 2);
        if (zp) cort_node_const_input_packed(node, 3);
        return NULL;
    }
    size_t bytes;
    if (!st && (cort_mul_size_ovf(s->K, s->N, &bytes) || cort_mul_size_ovf(bytes, sizeof(float), &bytes)))
        st = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "K x N = %zu x %zu floats overflow", s->K, s->N);
    if (!st && !(s->w = cort_malloc(bytes))) st = cort_error_oom();
    if (st) { nbits_free(s); *state = NULL; return st; }
    nbits_dequant(s, b->data, sc->data, zp, g ? g->data : NULL, s->w);
    return NULL;
}

static cort_status *nbits_infer(cort_infer_ctx *ctx) {
    nn_infer_type(ctx, 0, CORT_TYPE_FLOAT);
    const cort_tinfo *a = &ctx->inputs[0];
    if (a->rank < 1) return NULL;
    int64_t d[CORT_MAX_RANK];
    memcpy(d, a->dims, (size_t)a->rank * sizeof *d);
    d[a->rank - 1] = cort_attr_int(ctx->node, "N", -1);
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, a->rank);
    return NULL;
}

static cort_status *nbits_run_q4(cort_kernel_ctx *ctx, const nbits_state *s, const cort_value *a, const float *bias) {
    int64_t yd[CORT_MAX_RANK];
    memcpy(yd, a->shape, a->rank * sizeof *yd);
    yd[a->rank - 1] = (int64_t)s->N;
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, yd, a->rank, &y));
    const size_t M = a->count / s->K;
    if (!y->count) return NULL;
    const nn_q4_kernel *k = nn_q4_best_kernel();
    if (M < k->gemv_below) {
        nn_q4_gemv(ctx->pool, k, &s->q4, M, a->data, s->K, bias, y->data, s->N);
        return NULL;
    }
    const nn_q4_gemm_ctx qc = { k, &s->q4 };
    const nn_gemm_b gb = nn_q4_gemm_b(&qc);
    nn_gemm_opts o = { NULL, NULL, NULL, NULL, ctx, NULL, bias };
    return nn_sgemm_opt(ctx->pool, NULL, M, s->N, s->K, 1.0f, a->data, s->K, 0, &gb, 0.0f, y->data, s->N, &o);
}

static cort_status *nbits_run(cort_kernel_ctx *ctx) {
    const nbits_state *s = ctx->state;
    const cort_value *a;
    CORT_TRY(ctb_float_input(ctx, 0, "A", 1, &a));
    char buf[160];
    if ((size_t)a->shape[a->rank - 1] != s->K)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'A' has shape %s, expected last "
                               "dimension K = %zu", nn_shape(a, buf, sizeof buf), s->K);
    const float *bias;
    CORT_TRY(ctb_row_param(ctx, 5, "bias", s->N, &bias));
    if (s->q4.data) return nbits_run_q4(ctx, s, a, bias);
    float *w = s->w;
    if (!w) {
        const cort_value *b = nn_opt_input(ctx, 1), *sc = nn_opt_input(ctx, 2), *zp = nn_opt_input(ctx, 3),
                         *g = nn_opt_input(ctx, 4);
        CORT_TRY(nbits_check(ctx->node, s, b, sc, zp, g));
        size_t bytes;
        if (cort_mul_size_ovf(s->K, s->N, &bytes) || cort_mul_size_ovf(bytes, sizeof(float), &bytes) ||
            !(w = cort_kernel_scratch(ctx, bytes)))
            return cort_error_oom();
        nbits_dequant(s, b->data, sc->data, zp, g ? g->data : NULL, w);
    }
    int64_t yd[CORT_MAX_RANK];
    memcpy(yd, a->shape, a->rank * sizeof *yd);
    yd[a->rank - 1] = (int64_t)s->N;
    cort_value *y;
    cort_status *st = cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, yd, a->rank, &y);
    if (!st && y->count) {
        nn_gemm_b gb = nn_gemm_b_matrix(w, s->N, 0);
        nn_gemm_opts o = { NULL, NULL, NULL, NULL, ctx, NULL, bias };
        st = nn_sgemm_opt(ctx->pool, NULL, a->count / s->K, s->N, s->K, 1.0f, a->data, s->K, 0, &gb, 0.0f, y->data,
                          s->N, &o);
    }
    if (w != s->w) cort_kernel_scratch_free(ctx, w);
    return st;
}

const cort_op_def ctb_op_matmul_integer_to_float = { .name = "MatMulIntegerToFloat", .domain = "com.microsoft",
    .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = 0, .init = mmitf_init, .free_state = nn_imm_free, .infer = mm_infer, .run = mmitf_run };
const cort_op_def ctb_op_dynamic_quantize_matmul = { .name = "DynamicQuantizeMatMul", .domain = "com.microsoft",
    .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = 0, .init = dqmm_init, .free_state = nn_imm_free, .infer = mm_infer, .run = dqmm_run };
const cort_op_def ctb_op_qgemm = { .name = "QGemm", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = 0, .init = qgemm_init, .free_state = nn_imm_free, .infer = qgemm_infer,
    .run = qgemm_run };
const cort_op_def ctb_op_matmul_nbits = { .name = "MatMulNBits", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = 0, .init = nbits_init, .free_state = nbits_free, .infer = nbits_infer,
    .run = nbits_run };
