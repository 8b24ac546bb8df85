/* ConvInteger and QLinearConv (ai.onnx), NC[D]HW.
 * Constant weights (with constant or absent weight zero points) are prepared once at session
 * creation: for grouped/dense convs packed per group as the A operand of the exact int GEMM
 * (kernels/int_gemm.h), Y[g] (Mg x P) = W[g] (Mg x Kg) * im2col(X[g]) (Kg x P), the im2col written
 * straight into the GEMM's packed-B layout with x's zero point already subtracted (a padded tap
 * is 0, as the scalar loop skipping it); for depthwise convs (one input channel per group) as
 * int16 taps for a direct loop over a zero-padded int16 copy of each input plane. QLinearConv
 * requantizes each finished block while it is in cache. Every path is exact int32 arithmetic and
 * the requantization is the scalar path's expression, so all paths agree bit for bit; the scalar
 * loop stays as the reference and serves non-constant weights. */
#include <math.h>
#include <string.h>
#include "conv.h"
#include "../quant/quant.h"
#include "../../kernels/int_gemm.h"
#include "../../kernels/isa_config.h"
#include "../../../../core/alloc.h"
#include "../../../../core/checked.h"

typedef struct qconv_state {
    nn_conv_attrs a;
    /* the constants the packs were made from (runs with other inputs take the scalar path) */
    const cort_value *wsrc;
    /* w_zero_point's values (it is not packed, so a run may see a copy of the constant: compared by value) */
    int       has_wz;
    cort_type wz_type;
    size_t    wz_count;
    uint8_t  *wz_bytes;
    int64_t wdims[NN_MAX_SPATIAL + 2];
    size_t  wrank;
    const nn_igemm_kernel *k;
    int16_t *wpack;   /* GEMM path: group g's packed A at wpack + g * gstride */
    size_t   gstride;
    int16_t *wdw;     /* depthwise path: [M][kernel size] taps, zero point subtracted */
    /* 2-D depthwise whose taps all fit int8 (the ops' dwr16): [M][dkh][dng] dwords of four taps, and per
     * channel the taps' sum (the zero point's share of every output) */
    int32_t *wdw4, *wsum4;
    size_t   dkh, dng;
    /* byte path (a conv byte kernel, int_gemm.h quad 2): group g's int8 weight rows and their row corrections
     * at wq + g * qgstride; qcolsum when some weight zero point (moved to int8) is nonzero, so the
     * activations' column sums enter the correction */
    const nn_igemm_kernel *qk;
    uint8_t *wq;
    size_t   qgstride;
    int      qcolsum;
    /* direct path (the ops' cdirect16, nn_qcdirect_args): 16-row tiles of cd_nq weight quads, quad
     * t = (c / 4 * kh + i) * kw + j holding channels c..c+3 of tap (i, j); group 1, symmetric weights */
    uint8_t *wcd;
    size_t   cd_nq;
    int16_t *wwino;   /* Winograd path: transform xi's packed A (M x C) at wwino + xi * wino_stride, or NULL */
    size_t   wino_stride;
} qconv_state;

static void qconv_free(void *p) {
    qconv_state *s = p;
    if (!s) return;
    cort_free(s->wpack);
    cort_free(s->wdw);
    cort_free(s->wdw4);
    cort_free(s->wsum4);
    cort_free(s->wwino);
    cort_free(s->wq);
    cort_free(s->wcd);
    cort_free(s->wz_bytes);
    cort_free(s);
}

static int qconv_is_depthwise(size_t Cg, size_t group) { return Cg == 1 && group > 1; }

/* ---- Winograd F(2x2, 3x3) for dense 3x3 stride-1 convs, in exact integers ----
 * With G' = 2G (integer), U' = G' g G'^T = 4 U, so 4 Y = A^T [sum_c U'_c (.) V_c] A with V = B^T d B
 * (B, A have entries 0 and +-1): the products are int16 (|U'| <= 9 |g| <= 2295, |V| <= 4 * 255) and
 * every sum is exact modulo 2^32. 4 Y is then exact in int32 when |Y| < 2^29, which
 * 9 * C * 255 * max|g| < 2^29 guarantees for every input (checked at preparation, else no
 * Winograd), and Y = 4 Y / 4 exactly: the same int32 as the direct sum. 16 GEMMs of M x C by
 * C x tiles do the work of 36 multiplies per channel and 2x2 outputs in 16. */
static cort_status *qconv_prepare_wino(qconv_state *s, const cort_value *w, const void *d, int sgn, const int32_t *zp) {
    const size_t M = (size_t)w->shape[0], C = (size_t)w->shape[1];
    const nn_window *win = &s->a.w;
    if (s->a.group != 1 || w->rank != 4 || w->shape[2] != 3 || w->shape[3] != 3 || s->k->nr != 16) return NULL;
    for (int i = 0; i < 2; i++)
        if ((win->has_strides && win->strides[i] != 1) || (win->has_dilations && win->dilations[i] != 1)) return NULL;
    int32_t maxg = 0;
    for (size_t m = 0, i = 0; m < M; m++)   /* per output channel: no division per weight */
        for (size_t e = 0; e < C * 9; e++, i++) {
            const int32_t v = (sgn ? (int32_t)((const int8_t *)d)[i] : (int32_t)((const uint8_t *)d)[i]) - zp[m];
            if (v > maxg) maxg = v;
            if (-v > maxg) maxg = -v;
        }
    if ((double)9 * (double)C * 255.0 * (double)maxg >= 536870912.0) return NULL;
    const size_t per = nn_igemm_a_size(s->k, M, C), kp = nn_igemm_kp(C);
    size_t n;
    if (!per || cort_mul_size_ovf(per, 16 * sizeof(int16_t), &n)) return NULL;
    if (!(s->wwino = cort_calloc(1, n))) return cort_error_oom();
    s->wino_stride = per;
    for (size_t m = 0; m < M; m++)
        for (size_t c = 0; c < C; c++) {
            int32_t g[3][3], t[4][3];
            for (int i = 0; i < 9; i++) {
                const size_t idx = (m * C + c) * 9 + (size_t)i;
                g[i / 3][i % 3] = (sgn ? (int32_t)((const int8_t *)d)[idx] : (int32_t)((const uint8_t *)d)[idx]) - zp[m];
            }
            for (int j = 0; j < 3; j++) {   /* G' g */
                t[0][j] = 2 * g[0][j];
                t[1][j] = g[0][j] + g[1][j] + g[2][j];
                t[2][j] = g[0][j] - g[1][j] + g[2][j];
                t[3][j] = 2 * g[2][j];
            }
            for (int i = 0; i < 4; i++) {   /* (G' g) G'^T */
                const int32_t u[4] = { 2 * t[i][0], t[i][0] + t[i][1] + t[i][2], t[i][0] - t[i][1] + t[i][2], 2 * t[i][2] };
                for (int j = 0; j < 4; j++) s->wwino[(size_t)(4 * i + j) * per + m * kp + c] = (int16_t)u[j];
            }
        }
    return NULL;
}

/* The byte kernel's weights: per group Mg rows (padded to mr with zeros) of kq int8 (uint8 moved down by 128,
 * zero point alike, zeros past K) in its interleaved tiles (int_gemm.h, quad 2; whole rows for an a_rows kernel), then per row its zero point
 * and sum_k (w - zw), wrapping. */
static cort_status *qconv_prepare_quad(qconv_state *s, const nn_igemm_kernel *k, const void *d, int sgn,
                                       const int32_t *zp, size_t group, size_t Mg, size_t Kg) {
    const size_t kq = nn_igemm_kq(Kg), mr = k->mr, rows = (Mg / mr + (Mg % mr != 0)) * mr;
    size_t per, n;
    if (cort_mul_size_ovf(rows, kq + 8, &per) || per > SIZE_MAX - 63) return NULL;
    per = (per + 63) & ~(size_t)63;   /* each group's rows start on a cache line */
    if (cort_mul_size_ovf(per, group, &n)) return NULL;
    if (!(s->wq = cort_calloc(1, n))) return cort_error_oom();
    const int32_t shift = sgn ? 0 : 128;
    for (size_t g = 0; g < group; g++) {
        uint8_t *dst = s->wq + g * per;
        int32_t *rz = (int32_t *)(void *)(dst + rows * kq);
        for (size_t i = 0; i < Mg; i++) {
            const size_t m = g * Mg + i;
            const uint8_t *src = (const uint8_t *)d + m * Kg;
            const int32_t z = zp[m] - shift;
            uint32_t sum = 0;
            for (size_t p = 0; p < Kg; p++) {
                const int32_t v = sgn ? (int32_t)(int8_t)src[p] : (int32_t)src[p] - 128;
                dst[k->a_rows ? i * kq + p : (i / mr) * mr * kq + (p / 4) * 4 * mr + 4 * (i % mr) + p % 4] =
                    (uint8_t)(int8_t)v;
                sum += (uint32_t)v;
            }
            rz[2 * i] = z;
            rz[2 * i + 1] = (int32_t)(sum - (uint32_t)Kg * (uint32_t)z);
            if (z) s->qcolsum = 1;
        }
    }
    s->qk = k;
    s->qgstride = per;
    return NULL;
}

/* The direct path reads all of a conv's weights once per block of 16 positions: above this they no longer
 * stay in L2 between blocks (and such convs' planes are small enough for the packed GEMM's row order). */
#define QCONV_DIRECT_MAX_WBYTES (1u << 20)

/* The direct path's weights (see qconv_state.wcd) for a 2-D group-1 conv with more than one tap whose
 * weights need no column sums, when the ops have cdirect16. */
static cort_status *qconv_prepare_direct(qconv_state *s, const cort_value *w, const void *d, int sgn) {
    if (!nn_qconv_best_ops()->cdirect16 || s->qcolsum || s->a.group != 1 || w->rank != 4 || w->count > QCONV_DIRECT_MAX_WBYTES)
        return NULL;
    const size_t M = (size_t)w->shape[0], C = (size_t)w->shape[1], kh = (size_t)w->shape[2], kw = (size_t)w->shape[3];
    if (kh * kw == 1) return NULL;   /* pointwise convs take the fused packed path */
    const size_t tiles = M / 16 + (M % 16 != 0);
    size_t nq, n;
    if (cort_mul_size_ovf((C + 3) / 4, kh, &nq) || cort_mul_size_ovf(nq, kw, &nq) || cort_mul_size_ovf(nq, 64, &n) ||
        cort_mul_size_ovf(n, tiles, &n) || nq > INT32_MAX / 64)
        return NULL;
    if (!(s->wcd = cort_calloc(1, n))) return cort_error_oom();
    for (size_t m = 0; m < M; m++)
        for (size_t c = 0; c < C; c++)
            for (size_t i = 0; i < kh; i++)
                for (size_t j = 0; j < kw; j++) {
                    const uint8_t b = ((const uint8_t *)d)[((m * C + c) * kh + i) * kw + j];
                    const size_t t = ((c / 4) * kh + i) * kw + j;
                    /* as the byte path's rows: int8 as is, uint8 moved down by 128 (its zero point 128) */
                    s->wcd[((m / 16) * nq + t) * 64 + 4 * (m % 16) + c % 4] = sgn ? b : (uint8_t)(b - 128);
                }
    s->cd_nq = nq;
    return NULL;
}

/* The byte-plane depthwise form (nn_qdwr16_args) of s->wdw, when the ops have dwr16, the conv is 2-D, its
 * kernel fits the form and every tap minus its zero point fits int8 (symmetric int8 weights always do). */
static cort_status *qconv_prepare_dw4(qconv_state *s, const cort_value *w, size_t M) {
    const nn_qconv_ops *ops = nn_qconv_best_ops();
    if (!ops->dwr16 || w->rank != 4) return NULL;
    const size_t kh = (size_t)w->shape[2], kw = (size_t)w->shape[3], ks = kh * kw, ng = (kw + 3) / 4;
    if (kh == 0 || kh > NN_QDWR16_MAX_ROWS || kw == 0 || ng > NN_QDWR16_MAX_GROUPS) return NULL;
    for (size_t i = 0; i < M * ks; i++)
        if (s->wdw[i] < -128 || s->wdw[i] > 127) return NULL;
    if (!(s->wdw4 = cort_calloc(M * kh * ng, sizeof(int32_t))) || !(s->wsum4 = cort_calloc(M, sizeof(int32_t))))
        return cort_error_oom();
    for (size_t m = 0; m < M; m++) {
        int32_t sum = 0;
        for (size_t r = 0; r < kh; r++)
            for (size_t c = 0; c < kw; c++) {
                const int16_t v = s->wdw[m * ks + r * kw + c];
                s->wdw4[(m * kh + r) * ng + c / 4] |= (int32_t)((uint32_t)(uint8_t)(int8_t)v << (8 * (c % 4)));
                sum += v;
            }
        s->wsum4[m] = sum;
    }
    s->dkh = kh;
    s->dng = ng;
    return NULL;
}

static cort_status *qconv_prepare_weights(const cort_node *node, qconv_state *s, size_t wi, size_t wzi) {
    cort_status *st;
    const cort_value *w = cort_node_const_input_lazy(node, wi);
    const int has_wz = node->n_inputs > wzi && node->in_slot[wzi] >= 0;
    const cort_value *wz = has_wz ? cort_node_const_input_lazy(node, wzi) : NULL;
    if (!w || w->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(w->type) || w->rank < 3 || w->rank > NN_MAX_SPATIAL + 2 ||
        w->count == 0 || (!w->data && !w->lazy_src) || (has_wz && !wz))
        return NULL;   /* the scalar path (and its checks) at run time */
    const size_t M = (size_t)w->shape[0], group = (size_t)s->a.group, Cg = (size_t)w->shape[1];
    if (M == 0 || M % group || Cg == 0) return NULL;
    if (wz && (wz->kind != CORT_VKIND_TENSOR || wz->type != w->type || (wz->count != 1 && wz->count != M)))
        return NULL;
    const size_t Kg = w->count / M, Mg = M / group;
    /* the zero points first: cort_node_const_data's buffer for a lazy constant is reused by the next call */
    int32_t *zp = cort_calloc(M, sizeof *zp);
    if (!zp) return cort_error_oom();
    const void *d;
    if (wz) {
        if ((st = cort_node_const_data(node, wzi, &d))) { cort_free(zp); return st; }
        for (size_t m = 0; m < M; m++)
            zp[m] = wz->type == CORT_TYPE_INT8 ? ((const int8_t *)d)[wz->count == 1 ? 0 : m]
                                               : ((const uint8_t *)d)[wz->count == 1 ? 0 : m];
    }
    if ((st = cort_node_const_data(node, wi, &d))) { cort_free(zp); return st; }
    const int sgn = w->type == CORT_TYPE_INT8;
    if (qconv_is_depthwise(Cg, group)) {
        size_t n;
        if (cort_mul_size_ovf(w->count, sizeof(int16_t), &n) || !(s->wdw = cort_malloc(n))) {
            cort_free(zp);
            return cort_error_oom();
        }
        for (size_t i = 0; i < w->count; i++)
            s->wdw[i] = (int16_t)((sgn ? ((const int8_t *)d)[i] : ((const uint8_t *)d)[i]) - zp[i / Kg]);
        if ((st = qconv_prepare_dw4(s, w, M))) { cort_free(zp); return st; }
    } else {
        /* the byte kernel where the CPU has one: it beat the int16 Winograd path on every 3x3 layer of
         * resnet50 and squeezenet measured (docs/performance.md), so that path is not prepared then */
        const nn_igemm_kernel *qk = nn_igemm_conv_kernel_for(Mg, Kg);
        if (qk && qk->nr == 16 &&
            ((st = qconv_prepare_quad(s, qk, d, sgn, zp, group, Mg, Kg)) || (s->wq && (st = qconv_prepare_direct(s, w, d, sgn))))) {
            cort_free(zp);
            return st;
        }
        if (!s->wq) {
            const nn_igemm_kernel *k = nn_igemm_best_kernel();
            if (k->nr > 256 || 256 % k->nr) { cort_free(zp); return NULL; }   /* im2col chunks hold whole panels */
            const size_t per = nn_igemm_a_size(k, Mg, Kg);
            size_t n;
            if (!per || cort_mul_size_ovf(per, group, &n) || cort_mul_size_ovf(n, sizeof(int16_t), &n) ||
                !(s->wpack = cort_malloc(n))) {
                cort_free(zp);
                return per ? cort_error_oom() : NULL;
            }
            /* zero points as the type of W (pack_a reads them like the data) */
            uint8_t *zp8 = cort_malloc(M);
            if (!zp8) { cort_free(zp); return cort_error_oom(); }
            for (size_t m = 0; m < M; m++) zp8[m] = (uint8_t)zp[m];
            for (size_t g = 0; g < group; g++) {
                nn_i8_operand oa = { (const uint8_t *)d + g * Mg * Kg, sgn, Kg, zp8 + g * Mg, sgn, Mg };
                nn_igemm_pack_a(k, Mg, Kg, &oa, s->wpack + g * per);
            }
            cort_free(zp8);
            s->k = k;
            s->gstride = per;
            if ((st = qconv_prepare_wino(s, w, d, sgn, zp))) { cort_free(zp); return st; }
        }
    }
    if (wz) {
        if (!(s->wz_bytes = cort_malloc(wz->count))) { cort_free(zp); return cort_error_oom(); }
        for (size_t i = 0; i < wz->count; i++) s->wz_bytes[i] = (uint8_t)zp[i];
        s->has_wz = 1;
        s->wz_type = wz->type;
        s->wz_count = wz->count;
    }
    cort_free(zp);
    s->wsrc = w;
    s->wrank = w->rank;
    for (size_t i = 0; i < w->rank; i++) s->wdims[i] = w->shape[i];
    cort_node_const_input_packed(node, wi);
    return NULL;
}

static cort_status *qconv_init(const cort_node *node, void **state, size_t wi, size_t wzi) {
    *state = NULL;
    qconv_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = nn_conv_attrs_parse(node, &s->a);
    if (!st) st = qconv_prepare_weights(node, s, wi, wzi);
    if (st) {
        qconv_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static cort_status *convint_init(const cort_node *node, void **state) { return qconv_init(node, state, 1, 3); }
static cort_status *qlconv_init(const cort_node *node, void **state) { return qconv_init(node, state, 3, 5); }

/* Whether the prepared weights apply to this run's W / w_zero_point and geometry. */
static int qconv_fast_ok(const qconv_state *s, const cort_value *w, const cort_value *wz, const nn_conv_shape *cs) {
    if (!s || !s->wsrc || w != s->wsrc || w->rank != s->wrank || !wz != !s->has_wz) return 0;
    if (wz && (wz->type != s->wz_type || wz->count != s->wz_count || !wz->data || memcmp(wz->data, s->wz_bytes, wz->count)))
        return 0;
    for (size_t i = 0; i < w->rank; i++)
        if (w->shape[i] != s->wdims[i]) return 0;
    for (int i = 0; i < 3; i++)
        if (cs->g.pb[i] < 0 || cs->g.pe[i] < 0) return 0;
    return 1;
}

/* ---- requantization: the scalar path's expression, round half to even, saturating ---- */
typedef struct qconv_rq {
    cort_value *y;        /* uint8/int8 output */
    const float *mult;    /* [M]: x_scale * w_scale[m] / y_scale, in float as the reference computes it */
    const int32_t *bias;  /* [M] or NULL */
    int32_t yzp;
    const nn_qconv_ops *ops;
} qconv_rq;

/* out[q] for q < n of channel m, element offset o of y */
static void qconv_rq_row(const qconv_rq *rq, const int32_t *acc, size_t m, size_t o, size_t n) {
    const float mult = rq->mult[m];
    const int sgn = rq->y->type == CORT_TYPE_INT8;
    /* the vector kernels assume a finite multiplier (a zero y_scale gives inf: the portable loop) */
    const nn_qrq_row_fn f = isfinite(mult) ? rq->ops->rq_row : nn_qrq_row_generic;
    f(acc, n, rq->bias ? rq->bias[m] : 0, mult, rq->yzp, sgn, (uint8_t *)rq->y->data + o);
}

/* acc[q] for q < n of channel m requantized into dst */
static void qconv_rq_to(const qconv_rq *rq, const int32_t *acc, size_t m, size_t n, uint8_t *dst) {
    const float mult = rq->mult[m];
    const nn_qrq_row_fn f = isfinite(mult) ? rq->ops->rq_row : nn_qrq_row_generic;
    f(acc, n, rq->bias ? rq->bias[m] : 0, mult, rq->yzp, rq->y->type == CORT_TYPE_INT8, dst);
}

/* ---- GEMM path: im2col of one (image, group) straight into packed B ---- */
typedef struct qconv_pack_job {
    const nn_conv_shape *cs;
    const void *x;        /* first input plane of the group */
    int sgn;
    int32_t xzp;
    size_t Kg, kp, P, nr;
    int pointwise;        /* 1x1, stride 1, no padding: im2col row p is input plane p */
    nn_qpack2_fn pack2;   /* the per-ISA interleave when nr is 16, else NULL */
    nn_qwiden_fn widen;
    nn_qwiden2_fn widen2;
    nn_qpack2_8_fn pack2_8;   /* pointwise with nr 16: the fused widen + interleave, else NULL */
    int16_t *out;
} qconv_pack_job;

static inline int32_t ldx(const void *x, int sgn, size_t i) {
    return sgn ? (int32_t)((const int8_t *)x)[i] : (int32_t)((const uint8_t *)x)[i];
}

#define QCONV_CHUNK 256   /* columns per fill (a multiple of every kernel's nr) */

/* Values (x - x_zp, or 0 for a padded tap) of im2col row p for columns [c0, c0 + n), zeros past P. */
static inline void qconv_fill_row(const qconv_pack_job *j, size_t p, size_t c0, size_t n, int sgn, int16_t *buf) {
    const nn_geom *g = &j->cs->g;
    size_t k = 0;
    if (j->pointwise && p < j->Kg && c0 < j->P) {
        const size_t lim = j->P - c0 < n ? j->P - c0 : n, xo = p * j->P + c0;
        j->widen((const uint8_t *)j->x + xo, lim, sgn, j->xzp, buf);
        k = lim;
    } else if (p < j->Kg && c0 < j->P) {
        const size_t ks = (size_t)nn_geom_k_size(g), c = p / ks, kk = p % ks;
        const int64_t kd = (int64_t)(kk / (size_t)(g->k[1] * g->k[2])), kh = (int64_t)(kk / (size_t)g->k[2] % (size_t)g->k[1]);
        const int64_t kw = (int64_t)(kk % (size_t)g->k[2]);
        const size_t xo = c * (size_t)nn_geom_in_size(g), lim = j->P - c0 < n ? j->P - c0 : n;
        const int32_t z = j->xzp;
        int64_t ow = (int64_t)(c0 % (size_t)g->out[2]), t = (int64_t)(c0 / (size_t)g->out[2]);
        int64_t oh = t % g->out[1], od = t / g->out[1];
        while (k < lim) {
            const size_t seg = (size_t)(g->out[2] - ow) < lim - k ? (size_t)(g->out[2] - ow) : lim - k;
            const int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0], ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
            if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) {
                memset(buf + k, 0, seg * sizeof *buf);
            } else {
                const size_t rbase = xo + (size_t)((id * g->in[1] + ih) * g->in[2]);
                const int64_t iw0 = ow * g->s[2] - g->pb[2] + kw * g->d[2], sw = g->s[2], in2 = g->in[2];
                int16_t *d = buf + k;
                if (sw == 1 || sw == 2) {   /* the part inside the row by the per-ISA widening, padding zeroed */
                    const int64_t qa64 = iw0 < 0 ? (-iw0 + sw - 1) / sw : 0, qe = (in2 - iw0 + sw - 1) / sw;
                    const size_t qa = (size_t)(qa64 < (int64_t)seg ? qa64 : (int64_t)seg);
                    const size_t qb = qe < (int64_t)qa ? qa : qe < (int64_t)seg ? (size_t)qe : seg;
                    if (qa) memset(d, 0, qa * sizeof *d);
                    if (qb > qa) {   /* then iw0 + qa * sw is the first in-row column */
                        const uint8_t *src = (const uint8_t *)j->x + rbase + (size_t)(iw0 + (int64_t)qa * sw);
                        if (sw == 1) {
                            j->widen(src, qb - qa, sgn, z, d + qa);
                        } else {   /* the odd columns between the taps go to a scratch row */
                            int16_t odd[QCONV_CHUNK];
                            j->widen2(src, 2 * (qb - qa) - 1, sgn, z, d + qa, odd);
                        }
                    }
                    if (qb < seg) memset(d + qb, 0, (seg - qb) * sizeof *d);
                } else {
                    for (size_t q = 0; q < seg; q++) {
                        const int64_t iw = iw0 + (int64_t)q * sw;
                        d[q] = iw >= 0 && iw < in2 ? (int16_t)(ldx(j->x, sgn, rbase + (size_t)iw) - z) : 0;
                    }
                }
            }
            k += seg;
            ow = 0;
            if (++oh == g->out[1]) { oh = 0; od++; }
        }
    }
    if (k < n) memset(buf + k, 0, (n - k) * sizeof *buf);
}


/* Rows 2pp and 2pp+1 of packed B: both filled a chunk at a time, then interleaved into the panels. */
static inline void qconv_pack_pair(const qconv_pack_job *j, size_t pp, int sgn) {
    int16_t ra[QCONV_CHUNK], rb[QCONV_CHUNK];
    const size_t nr = j->nr, nrkp = nr * j->kp, panels = j->P / nr + (j->P % nr != 0), cols = panels * nr;
    for (size_t c0 = 0; c0 < cols; c0 += QCONV_CHUNK) {
        const size_t n = cols - c0 < QCONV_CHUNK ? cols - c0 : QCONV_CHUNK;
        qconv_fill_row(j, 2 * pp, c0, n, sgn, ra);
        qconv_fill_row(j, 2 * pp + 1, c0, n, sgn, rb);
        if (j->pack2) {
            j->pack2(ra, rb, n, j->out + (c0 / nr) * nrkp + pp * 2 * nr, nrkp);
            continue;
        }
        for (size_t q0 = 0; q0 < n; q0 += nr) {
            int16_t *d = j->out + ((c0 + q0) / nr) * nrkp + pp * 2 * nr;
            for (size_t t = 0; t < nr; t++) { d[2 * t] = ra[q0 + t]; d[2 * t + 1] = rb[q0 + t]; }
        }
    }
}

static void qconv_pack_range(void *arg, size_t begin, size_t end) {
    const qconv_pack_job *j = arg;
    if (j->pointwise && j->pack2_8) {   /* rows 2pp, 2pp+1 are input planes: packed in one pass */
        for (size_t pp = begin; pp < end; pp++) {
            const uint8_t *xa = (const uint8_t *)j->x + 2 * pp * j->P;
            j->pack2_8(xa, 2 * pp + 1 < j->Kg ? xa + j->P : NULL, j->P, j->sgn, j->xzp, j->out + pp * 32, 16 * j->kp);
        }
        return;
    }
    for (size_t pp = begin; pp < end; pp++) {
        if (j->sgn) qconv_pack_pair(j, pp, 1);
        else qconv_pack_pair(j, pp, 0);
    }
}

typedef struct qconv_epi {
    const qconv_rq *rq;
    size_t m0, o0, P;
} qconv_epi;

/* Requantizes a finished GEMM tile (rows of channel m0 + i0 + r, columns j0..) straight into y. */
static void qconv_epi_tile(void *arg, const int32_t *tile, size_t ldt, size_t i0, size_t rows, size_t j0, size_t cols) {
    const qconv_epi *e = arg;
    const qconv_rq *rq = e->rq;
    const size_t m = e->m0 + i0;
    rq->ops->rq_tile(tile, ldt, rows, cols, rq->bias ? rq->bias + m : NULL, rq->mult + m, rq->yzp,
                     rq->y->type == CORT_TYPE_INT8, (uint8_t *)rq->y->data + e->o0 + i0 * e->P + j0, e->P);
}

/* The in-register requantization of the byte kernel (nn_igemm_rq) for group rows [m0, m0 + Mg) whose
 * outputs start at o0: NULL (the tile epilogue) without requantization or where a multiplier is not
 * finite (a zero y_scale: the portable expression). */
static const nn_igemm_rq *qconv_irq(const qconv_rq *rq, size_t m0, size_t Mg, size_t o0, size_t P, nn_igemm_rq *out) {
    if (!rq) return NULL;
    for (size_t m = 0; m < Mg; m++)
        if (!isfinite(rq->mult[m0 + m])) return NULL;
    *out = (nn_igemm_rq){ rq->bias ? rq->bias + m0 : NULL, rq->mult + m0, rq->yzp, rq->y->type == CORT_TYPE_INT8,
                          (uint8_t *)rq->y->data + o0, P, 0 };
    return out;
}

static size_t grain_for(size_t per_item) { return per_item >= 16384 ? 1 : 16384 / (per_item ? per_item : 1); }

static cort_status *qconv_gemm(cort_kernel_ctx *ctx, const qconv_state *s, const nn_conv_shape *cs, const cort_value *x,
                               int32_t xzp, int32_t *yint, const qconv_rq *rq) {
    const nn_igemm_kernel *k = s->k;
    const size_t Cg = cs->C / cs->group, Mg = cs->M / cs->group, ks = (size_t)nn_geom_k_size(&cs->g);
    const size_t Kg = Cg * ks, P = (size_t)nn_geom_out_size(&cs->g), in_size = (size_t)nn_geom_in_size(&cs->g);
    const size_t nb = nn_igemm_b_size(k, Kg, P);
    if (!nb || nb > SIZE_MAX / sizeof(int16_t))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "conv of %zu x %zu taps over %zu outputs is "
                               "too large", Mg, Kg, P);
    int16_t *bp = cort_kernel_scratch(ctx, nb * sizeof(int16_t));
    if (!bp) return cort_error_oom();
    const nn_geom *gm = &cs->g;
    int pointwise = ks == 1;
    for (int i = 0; i < 3; i++) pointwise = pointwise && gm->s[i] == 1 && gm->pb[i] == 0 && gm->pe[i] == 0;
    const int sgn = x->type == CORT_TYPE_INT8;
    const size_t kp = nn_igemm_kp(Kg);
    for (size_t n = 0; n < cs->N; n++)
        for (size_t g = 0; g < cs->group; g++) {
            qconv_pack_job pj = { cs, (const uint8_t *)x->data + (n * cs->C + g * Cg) * in_size, sgn, xzp, Kg, kp, P,
                                  k->nr, pointwise, k->nr == 16 ? nn_qconv_best_ops()->pack2_16 : NULL,
                                  nn_qconv_best_ops()->widen, nn_qconv_best_ops()->widen2,
                                  k->nr == 16 ? nn_qconv_best_ops()->pack2_8 : NULL, bp };
            cort_parallel_for(ctx->pool, kp / 2, grain_for(2 * P), qconv_pack_range, &pj);
            const size_t m0 = g * Mg, o0 = (n * cs->M + m0) * P;
            if (rq) {
                qconv_epi e = { rq, m0, o0, P };
                nn_igemm_epi(ctx->pool, k, Mg, P, Kg, s->wpack + g * s->gstride, bp, qconv_epi_tile, &e);
            } else {
                nn_igemm(ctx->pool, k, Mg, P, Kg, s->wpack + g * s->gstride, bp, yint + o0, P);
            }
        }
    cort_kernel_scratch_free(ctx, bp);
    return NULL;
}

/* ---- byte path: im2col of one (image, group) straight into the byte kernel's uint8 panels ---- */
typedef struct qconv_qpack_job {
    const nn_conv_shape *cs;
    const uint8_t *x;     /* first input plane of the group */
    uint8_t pad;          /* x_zp's byte: a padded tap, (x - x_zp) = 0 */
    uint8_t flip;         /* 0x80 for int8 x (to uint8), else 0; filling with it gives a packed 0 */
    size_t Kg, kq, P, cols;
    int pointwise;
    nn_qquad4_fn quad4;
    uint8_t *out;
    /* 2-D convs: per input channel, row phase f (padded rows f, f + sh, ...) and tap column kw, a plane of hr
     * rows of the OW bytes that tap column meets along an output row (zero point at padding), so im2col row
     * (c, kh, kw) is one contiguous run of P bytes: plane (c, kh * dh % sh, kw) from row kh * dh / sh */
    uint8_t *xsh;
    size_t nph, kwn, hr, plane;   /* row phases, tap columns, rows per plane, bytes per plane */
    const size_t *rowoff;         /* with xsh: where im2col row p starts in it (qconv_shift_row) */
} qconv_qpack_job;

/* d[0 .. n) = s[0 .. n): the shifted planes copy rows of 7 to 56 bytes, where a memcpy call costs more
 * than the copy; up to 64 bytes two overlapping fixed-size moves do it. */
static inline void qconv_copy_row(uint8_t *d, const uint8_t *s, size_t n) {
    if (n > 32 && n <= 64) {
        uint8_t a[32], b[32];
        memcpy(a, s, 32);
        memcpy(b, s + n - 32, 32);
        memcpy(d, a, 32);
        memcpy(d + n - 32, b, 32);
    } else if (n > 16 && n <= 32) {
        uint8_t a[16], b[16];
        memcpy(a, s, 16);
        memcpy(b, s + n - 16, 16);
        memcpy(d, a, 16);
        memcpy(d + n - 16, b, 16);
    } else if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else {
        memcpy(d, s, n);
    }
}

/* d[q] = s[2 q] for q < n: k, the level's kernel (nn_isa()->copy_stride2_u8, looked up once per call of
 * the caller: rows are 7 to 56 bytes), when it has one. Byte loops cost a load and a store per byte; on
 * little-endian targets four even bytes come out of one 64-bit word by two shift-and-mask steps. Never
 * reads past s[2 (n - 1)]. */
typedef void (*qconv_gather2_fn)(const uint8_t *, uint8_t *, size_t);
static inline void qconv_gather2(qconv_gather2_fn k, uint8_t *d, const uint8_t *s, size_t n) {
    if (k) {
        k(s, d, n);
        return;
    }
    size_t q = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; q + 4 < n; q += 4) {
        uint64_t w;
        memcpy(&w, s + 2 * q, 8);
        w &= 0x00FF00FF00FF00FFull;
        w = (w | w >> 8) & 0x0000FFFF0000FFFFull;
        const uint32_t v = (uint32_t)(w | w >> 16);
        memcpy(d + q, &v, 4);
    }
#endif
    for (; q < n; q++) d[q] = s[2 * q];
}

static void qconv_shift_range(void *arg, size_t begin, size_t end) {
    const qconv_qpack_job *j = arg;
    const nn_geom *g = &j->cs->g;
    const int64_t in1 = g->in[1], in2 = g->in[2], sh = g->s[1], sw = g->s[2], ow_n = g->out[2];
    const size_t in_size = (size_t)nn_geom_in_size(g), OW = (size_t)ow_n;
    const qconv_gather2_fn gather2 = nn_isa()->copy_stride2_u8;
    uint8_t *dst = j->xsh + begin * j->nph * j->kwn * j->plane;
    for (size_t c = begin; c < end; c++)
        for (size_t f = 0; f < j->nph; f++)
            for (size_t kw = 0; kw < j->kwn; kw++) {
                /* output column q reads input column iw0 + q * sw: inside for q in [qa, qb) */
                const int64_t iw0 = (int64_t)kw * g->d[2] - g->pb[2];
                const int64_t qa64 = iw0 < 0 ? (-iw0 + sw - 1) / sw : 0, qe = in2 > iw0 ? (in2 - iw0 + sw - 1) / sw : 0;
                const size_t qa = (size_t)(qa64 < ow_n ? qa64 : ow_n);
                const size_t qb = qe < (int64_t)qa ? qa : qe < ow_n ? (size_t)qe : OW;
                const uint8_t *src0 = j->x + c * in_size + (qb > qa ? (size_t)(iw0 + (int64_t)qa * sw) : 0);
                /* the padding first for the whole plane: one call instead of two per row of 7 to 56 bytes */
                memset(dst, j->pad, j->plane);
                for (size_t r = 0; r < j->hr && qb > qa; r++) {
                    const int64_t ih = (int64_t)(r * (size_t)sh + f) - g->pb[1];
                    if (ih < 0 || ih >= in1) continue;
                    const uint8_t *src = src0 + (size_t)ih * (size_t)in2;
                    uint8_t *d = dst + r * OW + qa;
                    if (sw == 1) qconv_copy_row(d, src, qb - qa);
                    else if (sw == 2) qconv_gather2(gather2, d, src, qb - qa);
                    else for (size_t q = 0; q < qb - qa; q++) d[q] = src[q * (size_t)sw];
                }
                dst += j->plane;
            }
}

/* Where each im2col row p (< Kg) of a 2-D conv starts in the shifted planes: row (c, kh, kw) is plane
 * (c, kh * dh % sh, kw) from row kh * dh / sh. A table per call, so the packing loop divides nothing. */
static void qconv_shift_rows(const qconv_qpack_job *j, size_t Cg, size_t *rowoff) {
    const nn_geom *g = &j->cs->g;
    const size_t kh_n = (size_t)g->k[1], sh = (size_t)g->s[1], per_c = j->nph * j->kwn * j->plane;
    size_t p = 0;
    for (size_t c = 0; c < Cg; c++)
        for (size_t kh = 0; kh < kh_n; kh++) {
            const size_t off = kh * (size_t)g->d[1];
            const size_t base = c * per_c + off % sh * j->kwn * j->plane + off / sh * (size_t)g->out[2];
            for (size_t kw = 0; kw < j->kwn; kw++) rowoff[p++] = base + kw * j->plane;
        }
}

/* Raw bytes of im2col row p for columns [c0, c0 + n): x's, the zero point's at padded taps, flip past P
 * (and for p >= K). */
static void qconv_fill_bytes(const qconv_qpack_job *j, size_t p, size_t c0, size_t n, uint8_t *buf) {
    const nn_geom *g = &j->cs->g;
    size_t k = 0;
    if (p < j->Kg && c0 < j->P && j->pointwise) {
        k = j->P - c0 < n ? j->P - c0 : n;
        memcpy(buf, j->x + p * j->P + c0, k);
    } else if (p < j->Kg && c0 < j->P) {
        const size_t ks = (size_t)nn_geom_k_size(g), c = p / ks, kk = p % ks;
        const int64_t kd = (int64_t)(kk / (size_t)(g->k[1] * g->k[2])), kh = (int64_t)(kk / (size_t)g->k[2] % (size_t)g->k[1]);
        const int64_t kw = (int64_t)(kk % (size_t)g->k[2]);
        const size_t xo = c * (size_t)nn_geom_in_size(g), lim = j->P - c0 < n ? j->P - c0 : n;
        int64_t ow = (int64_t)(c0 % (size_t)g->out[2]), t = (int64_t)(c0 / (size_t)g->out[2]);
        int64_t oh = t % g->out[1], od = t / g->out[1];
        while (k < lim) {
            const size_t seg = (size_t)(g->out[2] - ow) < lim - k ? (size_t)(g->out[2] - ow) : lim - k;
            const int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0], ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
            uint8_t *d = buf + k;
            if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) {
                memset(d, j->pad, seg);
            } else {
                const uint8_t *row = j->x + xo + (size_t)((id * g->in[1] + ih) * g->in[2]);
                const int64_t iw0 = ow * g->s[2] - g->pb[2] + kw * g->d[2], sw = g->s[2], in2 = g->in[2];
                /* columns [qa, qb) fall inside the row */
                const int64_t qa64 = iw0 < 0 ? (-iw0 + sw - 1) / sw : 0, qe = (in2 - iw0 + sw - 1) / sw;
                const size_t qa = (size_t)(qa64 < (int64_t)seg ? qa64 : (int64_t)seg);
                const size_t qb = qe < (int64_t)qa ? qa : qe < (int64_t)seg ? (size_t)qe : seg;
                if (qa) memset(d, j->pad, qa);
                if (qb > qa) {
                    const uint8_t *src = row + (iw0 + (int64_t)qa * sw);
                    if (sw == 1) memcpy(d + qa, src, qb - qa);
                    else for (size_t q = 0; q < qb - qa; q++) d[qa + q] = src[q * (size_t)sw];
                }
                if (qb < seg) memset(d + qb, j->pad, seg - qb);
            }
            k += seg;
            ow = 0;
            if (++oh == g->out[1]) { oh = 0; od++; }
        }
    }
    if (k < n) memset(buf + k, j->flip, n - k);
}

/* k quad qi of columns [c0, c0 + n) (n a multiple of 16, at most QCONV_CHUNK) into their panels. */
static void qconv_qpack_block(const qconv_qpack_job *j, size_t qi, size_t c0, size_t n, uint8_t (*rows)[QCONV_CHUNK + 32]) {
    const uint8_t *r[4];
    for (size_t i = 0; i < 4; i++) {
        const size_t p = 4 * qi + i;
        /* row p's contiguous bytes (pointwise or shifted planes), else NULL */
        const uint8_t *base = p >= j->Kg ? NULL : j->pointwise ? j->x + p * j->P : j->xsh ? j->xsh + j->rowoff[p] : NULL;
        if (base && c0 + n <= j->P) { r[i] = base + c0; continue; }
        if (base) {
            const size_t lim = c0 < j->P ? j->P - c0 : 0;
            if (lim) memcpy(rows[i], base + c0, lim);
            memset(rows[i] + lim, j->flip, n - lim);
        } else {
            qconv_fill_bytes(j, p, c0, n, rows[i]);
        }
        r[i] = rows[i];
    }
    j->quad4(r[0], r[1], r[2], r[3], n, j->flip, j->out + (c0 / 16) * 16 * j->kq + qi * 64, 16 * j->kq);
}

/* k quads [begin, end) of every panel. */
static void qconv_qpack_range(void *arg, size_t begin, size_t end) {
    const qconv_qpack_job *j = arg;
    uint8_t rows[4][QCONV_CHUNK + 32];
    for (size_t qi = begin; qi < end; qi++)
        for (size_t c0 = 0; c0 < j->cols; c0 += QCONV_CHUNK)
            qconv_qpack_block(j, qi, c0, j->cols - c0 < QCONV_CHUNK ? j->cols - c0 : QCONV_CHUNK, rows);
}

/* Per panel: the zero point and, when the weights need them, the column sums of the packed bytes. */
typedef struct qconv_qcz_job { const uint8_t *b; int32_t *cz; size_t kq; int32_t zx; int colsum; } qconv_qcz_job;
static void qconv_qcz_range(void *arg, size_t begin, size_t end) {
    const qconv_qcz_job *j = arg;
    for (size_t jp = begin; jp < end; jp++) {
        int32_t *cz = j->cz + jp * 32;
        uint32_t sum[16] = { 0 };
        if (j->colsum) {
            const uint8_t *b = j->b + jp * 16 * j->kq;
            for (size_t q = 0; q < j->kq / 4; q++, b += 64)
                for (size_t t = 0; t < 16; t++) sum[t] += (uint32_t)b[4 * t] + b[4 * t + 1] + b[4 * t + 2] + b[4 * t + 3];
        }
        for (size_t t = 0; t < 16; t++) {
            cz[t] = j->zx;
            cz[16 + t] = (int32_t)sum[t];
        }
    }
}

/* Column blocks of w columns (a multiple of 16, at most QCONV_CHUNK): every k quad of the block's panels,
 * then their corrections. Split by columns as the panel-major GEMM that follows is, so each thread
 * multiplies mostly panels it packed; split by k quads, every panel held bytes from both cores' caches. */
typedef struct qconv_pc_job { const qconv_qpack_job *pj; const qconv_qcz_job *cj; size_t w; } qconv_pc_job;
static void qconv_qpack_cols_range(void *arg, size_t begin, size_t end) {
    const qconv_pc_job *pc = arg;
    const qconv_qpack_job *j = pc->pj;
    uint8_t rows[4][QCONV_CHUNK + 32];
    for (size_t b = begin; b < end; b++) {
        const size_t c0 = b * pc->w, n = j->cols - c0 < pc->w ? j->cols - c0 : pc->w;
        for (size_t qi = 0; qi < j->kq / 4; qi++) qconv_qpack_block(j, qi, c0, n, rows);
        qconv_qcz_range((void *)(uintptr_t)pc->cj, c0 / 16, (c0 + n) / 16);
    }
}

/* The fused loop: each step packs QCONV_FUSED_PANELS panels (every k quad), their corrections, and runs
 * their tiles at once, so a panel is multiplied from L1/L2 on the thread that packed it; packing all
 * panels first wrote the whole im2col out to L3 and read it back, half of it from the other core's cache. */
#define QCONV_FUSED_PANELS 4
#define QCONV_FUSED_BYTES 16384
typedef struct qconv_fused_job {
    const qconv_qpack_job *pj;
    const qconv_qcz_job *cj;
    const nn_igemm_kernel *k;
    size_t Mg, P, Kg, panels, step;
    const int16_t *ap, *bq;
    int32_t *c;        /* without requantization: the int32 results, row stride P */
    qconv_epi *e;      /* with it */
    const nn_igemm_rq *irq;
} qconv_fused_job;

static void qconv_fused_range(void *arg, size_t begin, size_t end) {
    const qconv_fused_job *f = arg;
    uint8_t rows[4][QCONV_CHUNK + 32];
    for (size_t st = begin; st < end; st++) {
        const size_t jp0 = st * f->step;
        const size_t jp1 = f->panels - jp0 < f->step ? f->panels : jp0 + f->step;
        for (size_t qi = 0; qi < f->pj->kq / 4; qi++) qconv_qpack_block(f->pj, qi, jp0 * 16, (jp1 - jp0) * 16, rows);
        qconv_qcz_range((void *)(uintptr_t)f->cj, jp0, jp1);
        nn_igemm_panels(f->k, f->Mg, f->P, f->Kg, f->ap, f->bq, jp0, jp1, f->c, f->P, f->e ? qconv_epi_tile : NULL,
                        f->e, f->irq);
    }
}

/* irq with each row's zero-point correction (rz * the activations' zero point zx) folded into its bias,
 * written to bf (Mg int32), when no weight zero point is nonzero: the byte kernel then skips two products
 * per row of every tile. Wrapping int32 sums, as the kernel's own correction. */
static const nn_igemm_rq *qconv_fold(const qconv_state *s, size_t g, size_t Mg, size_t kq, int32_t zx, int32_t *bf,
                                     const nn_igemm_rq *r, nn_igemm_rq *irq) {
    if (!r || !bf || s->qcolsum) return r;
    const size_t mr = s->qk->mr, rows = (Mg / mr + (Mg % mr != 0)) * mr;
    const int32_t *rz = (const int32_t *)(const void *)(s->wq + g * s->qgstride + rows * kq);
    for (size_t i = 0; i < Mg; i++)
        bf[i] = (int32_t)((uint32_t)(irq->bias ? irq->bias[i] : 0) - (uint32_t)rz[2 * i + 1] * (uint32_t)zx);
    irq->bias = bf;
    irq->folded = 1;
    return irq;
}

/* ---- direct path (the ops' cdirect16) ---- */
typedef struct qconv_direct_job {
    const qconv_state *s;
    const nn_conv_shape *cs;
    const qconv_rq *rq;
    nn_qcdirect_fn fn;
    const uint8_t *x;       /* image n's first input plane */
    uint8_t *xq;            /* the quad-interleaved copy */
    const uint8_t *fillrow; /* iw bytes of the zero point: the rows of channels past C */
    uint8_t flip, zx;       /* zx: the XORed zero point, padding's byte */
    size_t C, Q, hp, wp;    /* channels, channel quads, padded input dims */
    size_t sd, hq, wq;      /* stride; each of the sd x sd phase planes: hq rows of wq positions (the grid) */
    size_t pplane, plane;   /* bytes per phase plane and per quad (sd * sd phase planes) */
    size_t blocks, tiles, oh, ow, P;
    const int32_t *off;
    const int32_t *bias;    /* [tiles * 16], folded */
    const float *mult;      /* [tiles * 16] */
    uint8_t *y;             /* image n's first output plane */
} qconv_direct_job;

/* Positions [c0, c1) of a phase row: 4 channels' bytes per position, XORed, with pointwise channel rows rr
 * read at column (c * sd + pc - pl); sd 1 straight through quad4, else through a gathered chunk. */
static void qconv_direct_row(const qconv_direct_job *j, const uint8_t *const rr[4], size_t pc, size_t pl, size_t c0,
                             size_t c1, uint8_t *d, nn_qquad4_fn quad4, qconv_gather2_fn gather2) {
    uint8_t tmp[4][256];
    while (c0 < c1) {
        const size_t n = c1 - c0 < 256 ? c1 - c0 : 256, n16 = n & ~(size_t)15;
        const uint8_t *r[4];
        for (size_t b = 0; b < 4; b++) {
            const uint8_t *src = rr[b] + c0 * j->sd + pc - pl;
            if (j->sd == 1) { r[b] = src; continue; }
            if (j->sd == 2) qconv_gather2(gather2, tmp[b], src, n);
            else for (size_t i = 0; i < n; i++) tmp[b][i] = src[i * j->sd];
            r[b] = tmp[b];
        }
        if (n16) quad4(r[0], r[1], r[2], r[3], n16, j->flip, d + 4 * c0, 64);
        for (size_t c = n16; c < n; c++)
            for (size_t b = 0; b < 4; b++) d[4 * (c0 + c) + b] = (uint8_t)(r[b][c] ^ j->flip);
        c0 += n;
    }
}

/* Padded rows [begin, end) of every quad plane (and, with the last row, what no row covers: phase rows
 * past the input and each phase plane's slack). Split by rows, as the previous conv's columns and this
 * conv's blocks are, so each thread copies the rows it wrote and will read; split by channel quads, half
 * the copy crossed between cores twice. Padded row r, column c go to phase plane (r % sd, c % sd) at row
 * r / sd, position c / sd. */
static void qconv_direct_fill(void *arg, size_t begin, size_t end) {
    const qconv_direct_job *j = arg;
    const nn_geom *g = &j->cs->g;
    const size_t ih = (size_t)g->in[1], iw = (size_t)g->in[2], pt = (size_t)g->pb[1], pl = (size_t)g->pb[2];
    const size_t sd = j->sd, wq = j->wq;
    const uint32_t z4 = 0x01010101u * j->zx;
    const nn_qquad4_fn quad4 = nn_qconv_best_ops()->quad4;
    const qconv_gather2_fn gather2 = nn_isa()->copy_stride2_u8;
    for (size_t q = 0; q < j->Q; q++) {
        uint8_t *dst = j->xq + q * j->plane;
        for (size_t row = begin; row < end; row++)
            for (size_t pc = 0; pc < sd; pc++) {
                uint8_t *d = dst + ((row % sd) * sd + pc) * j->pplane + (row / sd) * wq * 4;
                /* this phase's positions c with padded column c * sd + pc inside the input: [lo, hi) */
                const size_t lo = pl > pc ? (pl - pc + sd - 1) / sd : 0, hi = pl + iw > pc ? (pl + iw - pc + sd - 1) / sd : 0;
                if (row < pt || row >= pt + ih || lo >= hi) {
                    for (size_t c = 0; c < wq; c++) memcpy(d + 4 * c, &z4, 4);
                    continue;
                }
                const uint8_t *rr[4];
                for (size_t b = 0; b < 4; b++)
                    rr[b] = 4 * q + b < j->C ? j->x + ((4 * q + b) * ih + row - pt) * iw : j->fillrow;
                for (size_t c = 0; c < lo; c++) memcpy(d + 4 * c, &z4, 4);
                qconv_direct_row(j, rr, pc, pl, lo, hi, d, quad4, gather2);
                for (size_t c = hi; c < wq; c++) memcpy(d + 4 * c, &z4, 4);
            }
        if (end == j->hp)
            for (size_t ph = 0; ph < sd * sd; ph++) {
                const size_t have = j->hp > ph / sd ? (j->hp - ph / sd + sd - 1) / sd : 0;   /* rows of phase row ph / sd */
                uint8_t *d = dst + ph * j->pplane;
                memset(d + have * wq * 4, j->zx, j->pplane - have * wq * 4);
            }
    }
}

/* Items are block-major: a thread's consecutive items share one block of input (in L1) over the tiles. */
static void qconv_direct_range(void *arg, size_t begin, size_t end) {
    const qconv_direct_job *j = arg;
    const int sgn = j->rq->y->type == CORT_TYPE_INT8;
    const size_t M = j->cs->M;
    nn_qcdirect_args a = { j->s->cd_nq, NULL, NULL, j->off, NULL, NULL, j->rq->yzp, sgn, 0, NULL, j->P, 0, { 0 }, { 0 } };
    size_t seg_block = SIZE_MAX;
    for (size_t it = begin; it < end; it++) {
        const size_t b = it / j->tiles, tile = it % j->tiles, p0 = b * 16, m0 = tile * 16;
        if (b != seg_block) {   /* grid position p0 + k is output (p / wq, p % wq) when p % wq < ow: a segment per grid row */
            seg_block = b;
            a.nseg = 0;
            for (size_t k = 0, r = p0 / j->wq, c = p0 % j->wq; k < 16; r++, c = 0) {
                const size_t run = j->wq - c < 16 - k ? j->wq - c : 16 - k;
                if (r < j->oh && c < j->ow) {
                    const size_t nv = j->ow - c < run ? j->ow - c : run;
                    a.delta[a.nseg] = (ptrdiff_t)(r * j->ow + c) - (ptrdiff_t)k;
                    a.mask[a.nseg] = (uint16_t)(((1u << nv) - 1u) << k);
                    a.nseg++;
                }
                k += run;
            }
        }
        if (!a.nseg) continue;
        a.a = j->s->wcd + tile * j->s->cd_nq * 64;
        a.x = j->xq + p0 * 4;
        a.bias = j->bias + m0;
        a.mult = j->mult + m0;
        a.rows = M - m0 < 16 ? M - m0 : 16;
        a.y = j->y + m0 * j->P;
        j->fn(&a);
    }
}

/* 1 if the direct path ran the conv (2-D, equal strides up to 4 (each a phase plane per row and column
 * phase, so the grid stays contiguous), no dilation, requantized output, grid rows wide enough that 16
 * positions meet at most three), else 0. */
static int qconv_direct(cort_kernel_ctx *ctx, const qconv_state *s, const nn_conv_shape *cs, const cort_value *x,
                        int32_t xzp, const qconv_rq *rq, cort_status **st) {
    const nn_geom *g = &cs->g;
    const nn_qcdirect_fn fn = nn_qconv_best_ops()->cdirect16;
    if (!fn || !s->wcd || !rq || cs->group != 1 || g->in[0] != 1 || g->k[0] != 1 || g->pb[0] || g->pe[0] ||
        g->s[1] != g->s[2] || g->s[1] < 1 || g->s[1] > 4 || g->d[1] != 1 || g->d[2] != 1)
        return 0;
    const size_t C = cs->C, M = cs->M, ih = (size_t)g->in[1], iw = (size_t)g->in[2], sd = (size_t)g->s[1];
    const size_t hp = ih + (size_t)g->pb[1] + (size_t)g->pe[1], wp = iw + (size_t)g->pb[2] + (size_t)g->pe[2];
    const size_t hq = (hp + sd - 1) / sd, wq = (wp + sd - 1) / sd;
    const size_t oh = (size_t)g->out[1], ow = (size_t)g->out[2], P = oh * ow;
    const size_t kh = (size_t)g->k[1], kw = (size_t)g->k[2], Q = (C + 3) / 4, tiles = M / 16 + (M % 16 != 0);
    /* late convs whose weights outweigh their input (the GEMM's row-major order) stay packed */
    /* (and convs of few channels, a 3-channel stem's above all: their quads carry a third of padding, and
     * the packed K runs over taps and channels together) */
    if (wq < 16 / (NN_QCDIRECT_MAX_SEG - 1) || kh * kw == 1 || nn_igemm_rows_major(s->qk, M, P) || Q * kh * kw != s->cd_nq ||
        4 * Q * 4 > 5 * C)
        return 0;
    for (size_t m = 0; m < M; m++)
        if (!isfinite(rq->mult[m])) return 0;
    /* positions per phase plane: its grid plus the reach of the last block's discarded positions */
    size_t grid, pplane, plane, xb;
    if (cort_mul_size_ovf(hq, wq, &grid) || grid > SIZE_MAX / 64 - 64 ||
        cort_mul_size_ovf((grid + 32 + kw) * 4, sd * sd, &plane) || cort_mul_size_ovf(plane, Q, &xb) || xb > INT32_MAX)
        return 0;
    pplane = (grid + 32 + kw) * 4;
    const size_t blocks = (oh * wq + 15) / 16;
    /* On one thread the packed path costs only its im2col copy, so the direct one must not compute much
     * more: the grid's extra columns and the rounding to 16 within 4 % of the outputs and a K long enough
     * (576) that a tile's epilogue and the copy are small. On more threads the packed path's phases move
     * the im2col between cores, and the direct one won on every layer measured (docs/performance.md). */
    if (cort_pool_threads(ctx->pool) <= 1 && (C * kh * kw < 512 || blocks * 16 * 25 > P * 26)) return 0;
    uint8_t *xq = cort_kernel_scratch(ctx, xb + 64);
    int32_t *off = cort_kernel_scratch(ctx, s->cd_nq * sizeof(int32_t) + tiles * 16 * (sizeof(int32_t) + sizeof(float)));
    uint8_t *fillrow = cort_kernel_scratch(ctx, iw + 16);
    if (!xq || !off || !fillrow) {
        cort_kernel_scratch_free(ctx, xq); cort_kernel_scratch_free(ctx, off); cort_kernel_scratch_free(ctx, fillrow);
        *st = cort_error_oom();
        return 1;
    }
    for (size_t q = 0, t = 0; q < Q; q++)
        for (size_t i = 0; i < kh; i++)
            for (size_t jj = 0; jj < kw; jj++)
                off[t++] = (int32_t)(q * plane + ((i % sd) * sd + jj % sd) * pplane + ((i / sd) * wq + jj / sd) * 4);
    int32_t *bias = off + s->cd_nq;
    float *mult = (float *)(void *)(bias + tiles * 16);
    const int sgn = x->type == CORT_TYPE_INT8;
    const uint8_t flip = sgn ? 0x80 : 0, zx = (uint8_t)((uint8_t)xzp ^ flip);
    /* each row's zero-point share folded into its bias: zx times the row's weight sum (byte path's rz) */
    const size_t kq = nn_igemm_kq(C * kh * kw), rows = (M / s->qk->mr + (M % s->qk->mr != 0)) * s->qk->mr;
    const int32_t *rz = (const int32_t *)(const void *)(s->wq + rows * kq);
    for (size_t m = 0; m < tiles * 16; m++) {
        bias[m] = m < M ? (int32_t)((uint32_t)(rq->bias ? rq->bias[m] : 0) - (uint32_t)rz[2 * m + 1] * (uint32_t)zx) : 0;
        mult[m] = m < M ? rq->mult[m] : 0.0f;
    }
    memset(fillrow, (uint8_t)xzp, iw + 16);
    for (size_t n = 0; n < cs->N; n++) {
        qconv_direct_job j = { s, cs, rq, fn, (const uint8_t *)x->data + n * C * ih * iw, xq, fillrow, flip, zx, C, Q,
                               hp, wp, sd, hq, wq, pplane, plane, blocks, tiles, oh, ow, P, off, bias, mult,
                               (uint8_t *)rq->y->data + n * M * P };
        cort_parallel_for(ctx->pool, hp, grain_for(wp * 4 * Q), qconv_direct_fill, &j);
        const size_t per = 16 * 16 * 4 * s->cd_nq;
        cort_parallel_for(ctx->pool, blocks * tiles, per >= 65536 ? 1 : 65536 / per, qconv_direct_range, &j);
    }
    cort_kernel_scratch_free(ctx, fillrow);
    cort_kernel_scratch_free(ctx, off);
    cort_kernel_scratch_free(ctx, xq);
    *st = NULL;
    return 1;
}

static cort_status *qconv_gemm_quad(cort_kernel_ctx *ctx, const qconv_state *s, const nn_conv_shape *cs,
                                    const cort_value *x, int32_t xzp, int32_t *yint, const qconv_rq *rq) {
    cort_status *dst;
    if (qconv_direct(ctx, s, cs, x, xzp, rq, &dst)) return dst;
    const nn_igemm_kernel *k = s->qk;
    const size_t Cg = cs->C / cs->group, Mg = cs->M / cs->group, ks = (size_t)nn_geom_k_size(&cs->g);
    const size_t Kg = Cg * ks, P = (size_t)nn_geom_out_size(&cs->g), in_size = (size_t)nn_geom_in_size(&cs->g);
    const size_t kq = nn_igemm_kq(Kg), panels = P / 16 + (P % 16 != 0);
    size_t nb, czb;
    if (cort_mul_size_ovf(panels, 16 * kq, &nb) || cort_mul_size_ovf(panels, 32 * sizeof(int32_t), &czb) ||
        nb > SIZE_MAX - czb)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "conv of %zu x %zu taps over %zu outputs is "
                               "too large", Mg, Kg, P);
    uint8_t *bp = cort_kernel_scratch(ctx, nb + czb);
    if (!bp) return cort_error_oom();
    const nn_geom *gm = &cs->g;
    int pointwise = ks == 1;
    for (int i = 0; i < 3; i++) pointwise = pointwise && gm->s[i] == 1 && gm->pb[i] == 0 && gm->pe[i] == 0;
    const int sgn = x->type == CORT_TYPE_INT8;
    const uint8_t flip = sgn ? 0x80 : 0;
    const int flat = gm->in[0] == 1 && gm->k[0] == 1 && gm->pb[0] == 0 && gm->pe[0] == 0;
    size_t nph = 0, kwn = 0, hr = 0, plane = 0, shb = 0;
    uint8_t *xsh = NULL;
    /* every 2-D conv but a pointwise one (a strided 1x1's one plane per channel is its im2col, gathered once) */
    if (flat && !pointwise) {
        const size_t sh = (size_t)gm->s[1], span = (size_t)((gm->k[1] - 1) * gm->d[1]);
        nph = span + 1 < sh ? span + 1 : sh;
        kwn = (size_t)gm->k[2];
        hr = (size_t)gm->out[1] + span / sh;
        size_t per_c;
        if (cort_mul_size_ovf(hr, (size_t)gm->out[2], &plane) || cort_mul_size_ovf(nph, kwn, &per_c) ||
            cort_mul_size_ovf(plane, per_c, &shb) || cort_mul_size_ovf(shb, Cg, &shb) ||
            (shb = (shb + 7) & ~(size_t)7) > SIZE_MAX - Kg * sizeof(size_t)) {
            cort_kernel_scratch_free(ctx, bp);
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "conv input of %zu channels is too large", Cg);
        }
        /* the row table (qconv_shift_rows) after the planes */
        if (!(xsh = cort_kernel_scratch(ctx, shb + Kg * sizeof(size_t)))) {
            cort_kernel_scratch_free(ctx, bp);
            return cort_error_oom();
        }
    }
    /* the folded biases (qconv_fold); without them the kernel corrects every row itself */
    int32_t *bf = rq && !s->qcolsum ? cort_kernel_scratch(ctx, (Mg ? Mg : 1) * sizeof(int32_t)) : NULL;
    const int32_t zx = (int32_t)((uint8_t)xzp ^ flip);
    for (size_t n = 0; n < cs->N; n++)
        for (size_t g = 0; g < cs->group; g++) {
            qconv_qpack_job pj = { cs, (const uint8_t *)x->data + (n * cs->C + g * Cg) * in_size, (uint8_t)xzp, flip,
                                   Kg, kq, P, panels * 16, pointwise, nn_qconv_best_ops()->quad4, bp,
                                   xsh, nph, kwn, hr, plane, xsh ? (const size_t *)(void *)(xsh + shb) : NULL };
            if (xsh && n == 0 && g == 0) qconv_shift_rows(&pj, Cg, (size_t *)(void *)(xsh + shb));
            if (xsh) cort_parallel_for(ctx->pool, Cg, grain_for(nph * kwn * plane), qconv_shift_range, &pj);
            qconv_qcz_job cj = { bp, (int32_t *)(void *)(bp + nb), kq, (int32_t)((uint8_t)xzp ^ flip), s->qcolsum };
            const size_t m0 = g * Mg, o0 = (n * cs->M + m0) * P;
            const int16_t *ap = (const int16_t *)(const void *)(s->wq + g * s->qgstride);
            const int16_t *bq = (const int16_t *)(const void *)bp;
            /* pointwise convs only: there the packing reads whole input planes; a 3x3 conv's shifted planes
             * read in 64-column steps cost more than the round trip they save (56x56x64: 0.39 -> 0.43 ms) */
            if (pointwise && !nn_igemm_rows_major(k, Mg, P)) {
                qconv_epi e = { rq, m0, o0, P };
                /* panels per step: about QCONV_FUSED_BYTES of packed bytes, at least 4 */
                size_t step = QCONV_FUSED_BYTES / (16 * kq);
                step = step < QCONV_FUSED_PANELS ? QCONV_FUSED_PANELS : step > QCONV_CHUNK / 16 ? QCONV_CHUNK / 16 : step;
                nn_igemm_rq irq;
                qconv_fused_job fj = { &pj, &cj, k, Mg, P, Kg, panels, step, ap, bq, rq ? NULL : yint + o0,
                                       rq ? &e : NULL, qconv_fold(s, g, Mg, kq, zx, bf, qconv_irq(rq, m0, Mg, o0, P, &irq), &irq) };
                const size_t steps = panels / step + (panels % step != 0);
                size_t per = step * 16 * kq * (Mg ? Mg : 1);
                cort_parallel_for(ctx->pool, steps, per >= 65536 ? 1 : 65536 / per, qconv_fused_range, &fj);
                continue;
            }
            /* column blocks where there are enough of them for every thread (4 panels at least, whole reads
             * of the shifted rows below that cost more than the match gains); else split by k quads */
            const size_t threads = (size_t)cort_pool_threads(ctx->pool);
            size_t w = QCONV_CHUNK;
            while (w > 64 && panels * 16 < 4 * threads * w) w /= 2;
            if (threads > 1 && panels * 16 >= 2 * threads * w && !nn_igemm_rows_major(k, Mg, P)) {
                qconv_pc_job pc = { &pj, &cj, w };
                cort_parallel_for(ctx->pool, (panels * 16 + w - 1) / w, grain_for(w * kq), qconv_qpack_cols_range, &pc);
            } else {
                cort_parallel_for(ctx->pool, kq / 4, grain_for(4 * P), qconv_qpack_range, &pj);
                if (s->qcolsum) cort_parallel_for(ctx->pool, panels, grain_for(16 * kq), qconv_qcz_range, &cj);
                else qconv_qcz_range(&cj, 0, panels);
            }
            if (rq) {
                qconv_epi e = { rq, m0, o0, P };
                nn_igemm_rq irq;
                nn_igemm_epi_rq(ctx->pool, k, Mg, P, Kg, ap, bq, qconv_epi_tile, &e,
                                qconv_fold(s, g, Mg, kq, zx, bf, qconv_irq(rq, m0, Mg, o0, P, &irq), &irq));
            } else {
                nn_igemm(ctx->pool, k, Mg, P, Kg, ap, bq, yint + o0, P);
            }
        }
    cort_kernel_scratch_free(ctx, bf);
    cort_kernel_scratch_free(ctx, xsh);
    cort_kernel_scratch_free(ctx, bp);
    return NULL;
}

/* ---- Winograd path (see qconv_prepare_wino) ---- */
#define QW_CHUNK 256   /* tiles per input-transform chunk (a multiple of 16) */
#define QW_MAXW 1024   /* tiles per tile row the row buffers hold */
#define QW_SLACK 16    /* a segment's transform rounded up to 16 tiles: zeroed row and transform slack */

typedef struct qconv_wino_job {
    const nn_conv_shape *cs;
    const nn_igemm_kernel *k;
    const nn_qconv_ops *ops;
    const void *x;        /* image n's first plane */
    int sgn;
    int32_t xzp;
    size_t C, M, T, tw, kp, nb, mtiles, P;
    int16_t *bw;          /* 16 packed B operands, xi's at bw + xi * nb */
    const int16_t *aw;
    size_t astride;
    int32_t *acc;         /* image n's M x P int32 results */
} qconv_wino_job;

/* Even/odd columns of padded input row r (x - x_zp, 0 outside), columns 0 .. 2 tw + 1 of the tile row. */
static void qw_row(const qconv_wino_job *j, size_t c, int64_t r, int16_t *e, int16_t *o) {
    const nn_geom *g = &j->cs->g;
    const size_t tw = j->tw, nc = 2 * tw + 2;
    memset(e, 0, (tw + 1 + QW_SLACK) * sizeof *e);
    memset(o, 0, (tw + 1 + QW_SLACK) * sizeof *o);
    if (r < 0 || r >= g->in[1]) return;
    const size_t pw = (size_t)g->pb[2], iw = (size_t)g->in[2];
    if (pw >= nc) return;
    const size_t jb = pw + iw < nc ? pw + iw : nc;
    const uint8_t *src = (const uint8_t *)j->x + c * (size_t)nn_geom_in_size(g) + (size_t)r * iw;
    if (pw % 2 == 0) j->ops->widen2(src, jb - pw, j->sgn, j->xzp, e + pw / 2, o + pw / 2);
    else j->ops->widen2(src, jb - pw, j->sgn, j->xzp, o + pw / 2, e + pw / 2 + 1);
}

/* Input transform of channel pairs [begin, end) into the packed B operands. */
static void qw_in_range(void *arg, size_t begin, size_t end) {
    const qconv_wino_job *j = arg;
    const nn_geom *g = &j->cs->g;
    int16_t v[2][16 * (QW_CHUNK + QW_SLACK)], rows[8][QW_MAXW + 1 + QW_SLACK];
    const int16_t *e[4] = { rows[0], rows[1], rows[2], rows[3] }, *o[4] = { rows[4], rows[5], rows[6], rows[7] };
    const size_t nrkp = 16 * j->kp, panels = j->T / 16 + (j->T % 16 != 0);
    for (size_t pp = begin; pp < end; pp++)
        for (size_t t0 = 0; t0 < panels * 16; t0 += QW_CHUNK) {
            const size_t tn = panels * 16 - t0 < QW_CHUNK ? panels * 16 - t0 : QW_CHUNK;
            for (size_t h = 0; h < 2; h++) {
                const size_t c = 2 * pp + h;
                memset(v[h], 0, sizeof v[h]);
                if (c >= j->C) continue;
                size_t t = t0;
                while (t < t0 + tn && t < j->T) {   /* one tile row's segment at a time */
                    const size_t ty = t / j->tw, tx = t % j->tw;
                    const size_t cnt = j->tw - tx < t0 + tn - t ? j->tw - tx : t0 + tn - t;
                    for (int i = 0; i < 4; i++)
                        qw_row(j, c, (int64_t)(2 * ty) - g->pb[1] + i, rows[i], rows[4 + i]);
                    const int16_t *es[4] = { e[0] + tx, e[1] + tx, e[2] + tx, e[3] + tx };
                    const int16_t *os[4] = { o[0] + tx, o[1] + tx, o[2] + tx, o[3] + tx };
                    /* whole vectors: the extra tiles land where the next segment (or nothing) goes */
                    j->ops->wino_in(es, os, (cnt + 15) & ~(size_t)15, v[h] + (t - t0), QW_CHUNK + QW_SLACK);
                    t += cnt;
                }
            }
            for (size_t xi = 0; xi < 16; xi++)
                j->ops->pack2_16(v[0] + xi * (QW_CHUNK + QW_SLACK), v[1] + xi * (QW_CHUNK + QW_SLACK), tn, j->bw + xi * j->nb + (t0 / 16) * nrkp + pp * 32,
                                 nrkp);
        }
}

/* 16 tile GEMMs for one (panel, row tile), then the output transform into acc. */
static void qw_gemm_range(void *arg, size_t begin, size_t end) {
    const qconv_wino_job *j = arg;
    const nn_geom *g = &j->cs->g;
    const size_t mr = j->k->mr, OH = (size_t)g->out[1], OW = (size_t)g->out[2];
    int32_t tl[16][16 * 16];
    for (size_t it = begin; it < end; it++) {
        const size_t jp = it / j->mtiles, i0 = it % j->mtiles * mr;
        const size_t rows = j->M - i0 < mr ? j->M - i0 : mr;
        const nn_igemm_ukr_fn ukr = j->T - jp * 16 <= 8 && j->k->ukr_half ? j->k->ukr_half : j->k->ukr;
        for (size_t xi = 0; xi < 16; xi++)
            ukr(j->kp / 2, j->aw + xi * j->astride + i0 * j->kp, j->kp, j->bw + xi * j->nb + jp * 16 * j->kp, tl[xi], 16);
        for (size_t r = 0; r < rows; r++) {
            /* A^T M A over the 16 tiles at once (fixed-count loops the compiler vectorizes), wrapping like
             * the GEMM's lanes */
            uint32_t sr[2][4][16], y[4][16];
            for (int b = 0; b < 4; b++) {
                const int32_t *m0 = tl[b] + r * 16, *m1 = tl[4 + b] + r * 16, *m2 = tl[8 + b] + r * 16, *m3 = tl[12 + b] + r * 16;
                for (size_t q = 0; q < 16; q++) {
                    sr[0][b][q] = (uint32_t)m0[q] + (uint32_t)m1[q] + (uint32_t)m2[q];
                    sr[1][b][q] = (uint32_t)m1[q] - (uint32_t)m2[q] - (uint32_t)m3[q];
                }
            }
            for (int a = 0; a < 2; a++)
                for (size_t q = 0; q < 16; q++) {
                    y[2 * a][q] = sr[a][0][q] + sr[a][1][q] + sr[a][2][q];
                    y[2 * a + 1][q] = sr[a][1][q] - sr[a][2][q] - sr[a][3][q];
                }
            int32_t *dst = j->acc + (i0 + r) * j->P;
            size_t ty = jp * 16 / j->tw, tx = jp * 16 % j->tw;
            for (size_t q = 0; q < 16 && jp * 16 + q < j->T; q++) {
                const size_t oh = 2 * ty, ow = 2 * tx;
                for (size_t a = 0; a < 2 && oh + a < OH; a++)
                    for (size_t b = 0; b < 2 && ow + b < OW; b++)
                        dst[(oh + a) * OW + ow + b] = (int32_t)y[2 * a + b][q] / 4;   /* exact: a multiple of 4 */
                if (++tx == j->tw) { tx = 0; ty++; }
            }
        }
    }
}

typedef struct qconv_rqp_job { const qconv_rq *rq; const int32_t *acc; size_t m0, o0, P; } qconv_rqp_job;
static void qconv_rqp_range(void *arg, size_t begin, size_t end) {
    const qconv_rqp_job *j = arg;
    for (size_t r = begin; r < end; r++) qconv_rq_row(j->rq, j->acc + r * j->P, j->m0 + r, j->o0 + r * j->P, j->P);
}

static int qconv_wino_ok(const qconv_state *s, const nn_conv_shape *cs) {
    const nn_geom *g = &cs->g;
    return s->wwino && cs->group == 1 && g->in[0] == 1 && g->k[0] == 1 && g->pb[0] == 0 && g->pe[0] == 0 &&
           g->k[1] == 3 && g->k[2] == 3 && g->s[1] == 1 && g->s[2] == 1 && g->d[1] == 1 && g->d[2] == 1 &&
           (size_t)(g->out[2] + 1) / 2 <= QW_MAXW && g->out[1] > 0 && g->out[2] > 0;
}

static cort_status *qconv_wino(cort_kernel_ctx *ctx, const qconv_state *s, const nn_conv_shape *cs, const cort_value *x,
                               int32_t xzp, int32_t *yint, const qconv_rq *rq) {
    const nn_geom *g = &cs->g;
    const nn_igemm_kernel *k = s->k;
    qconv_wino_job j = { cs, k, nn_qconv_best_ops(), NULL, x->type == CORT_TYPE_INT8, xzp, cs->C, cs->M, 0,
                         (size_t)(g->out[2] + 1) / 2, nn_igemm_kp(cs->C), 0, cs->M / k->mr + (cs->M % k->mr != 0),
                         (size_t)nn_geom_out_size(g), NULL, s->wwino, s->wino_stride, NULL };
    j.T = (size_t)(g->out[1] + 1) / 2 * j.tw;
    j.nb = nn_igemm_b_size(k, cs->C, j.T);
    size_t nbw, accn = 1;
    if (!j.nb || cort_mul_size_ovf(j.nb, 16 * sizeof(int16_t), &nbw) ||
        (rq && (cort_mul_size_ovf(cs->M, j.P, &accn) || accn > SIZE_MAX / 4)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "conv of %zu channels over %zu outputs is too large",
                               cs->C, j.P);
    j.bw = cort_kernel_scratch(ctx, nbw);
    int32_t *acc = rq ? cort_kernel_scratch(ctx, accn * sizeof(int32_t)) : NULL;
    if (!j.bw || (rq && !acc)) {
        cort_kernel_scratch_free(ctx, j.bw);
        cort_kernel_scratch_free(ctx, acc);
        return cort_error_oom();
    }
    const size_t in_size = (size_t)nn_geom_in_size(g), panels = j.T / 16 + (j.T % 16 != 0);
    for (size_t n = 0; n < cs->N; n++) {
        j.x = (const uint8_t *)x->data + n * cs->C * in_size;
        j.acc = rq ? acc : yint + n * cs->M * j.P;
        cort_parallel_for(ctx->pool, j.kp / 2, 1, qw_in_range, &j);
        cort_parallel_for(ctx->pool, panels * j.mtiles, 1, qw_gemm_range, &j);
        if (rq) {
            qconv_rqp_job rj = { rq, acc, 0, n * cs->M * j.P, j.P };
            cort_parallel_for(ctx->pool, cs->M, grain_for(j.P), qconv_rqp_range, &rj);
        }
    }
    cort_kernel_scratch_free(ctx, j.bw);
    cort_kernel_scratch_free(ctx, acc);
    return NULL;
}

/* ---- depthwise path: zero-padded int16 planes ----
 * 1-D/2-D: each padded plane is stored split into sh x sw phase sub-planes (hq x wq each: padded
 * row r, column c at phase (r % sh, c % sw), index (r / sh, c / sw)). Output (oh, ow)'s tap (i, j)
 * then reads sub-plane element (oh + i*dh / sh, ow + j*dw / sw) of one phase, so with f = oh * wq + ow
 * every tap is x[off[t] + f]: the whole plane is one stride-1 run of the per-ISA tap kernel (the
 * wq - ow columns between rows computed and dropped), for strided convs too. 3-D: one plain padded
 * plane per input channel and a direct loop. */
typedef struct qconv_dw_job {
    const nn_conv_shape *cs;
    const void *x;
    int sgn;
    int32_t xzp;
    int64_t dp, hp, wp;   /* padded plane dims */
    size_t sh, sw;        /* phases (the strides in 1-D/2-D, 1 in 3-D) */
    size_t hq, wq;        /* dims of one phase sub-plane */
    size_t psize;         /* int16 per padded plane */
    int16_t *xpad;
    const int16_t *w;
    const size_t *off;    /* 1-D/2-D: per tap, into the plane */
    int32_t *yint;        /* ConvInteger: y; 3-D QLinearConv: per-plane accumulators, plane t at t * P */
    const qconv_rq *rq;
    const nn_qconv_ops *ops;
    size_t chunks;        /* > 0: planes padded one at a time into chunk-private buffers (see qconv_dw) */
} qconv_dw_job;

/* Input plane t (of N * C) into d, zero-padded and split into phases. */
static void qconv_dw_pad_plane(const qconv_dw_job *j, size_t t, int16_t *d) {
    const nn_geom *g = &j->cs->g;
    const size_t in_size = (size_t)nn_geom_in_size(g), sub = j->hq * j->wq, sh = j->sh, sw = j->sw;
    const size_t pw = (size_t)g->pb[2], iw_n = (size_t)g->in[2];
    const int32_t z = j->xzp;
    {
        memset(d, 0, j->psize * sizeof *d);
        const size_t xo = t * in_size;
        for (int64_t id = 0; id < g->in[0]; id++)
            for (int64_t ih = 0; ih < g->in[1]; ih++) {
                const size_t r = (size_t)(ih + g->pb[1]);
                int16_t *row = d + (size_t)(id + g->pb[0]) * sh * sw * sub + (r % sh) * sw * sub + (r / sh) * j->wq;
                const size_t so = xo + (size_t)((id * g->in[1] + ih) * g->in[2]);
                const int8_t *s8 = (const int8_t *)j->x + so;
                const uint8_t *u8 = (const uint8_t *)j->x + so;
                if (sw == 1) {
                    j->ops->widen(u8, iw_n, j->sgn, j->xzp, row + pw);
                } else if (sw == 2) {   /* deinterleave: even padded columns to phase 0, odd to phase 1 */
                    j->ops->widen2(u8, iw_n, j->sgn, j->xzp, row + (pw & 1) * sub + pw / 2,
                                   row + ((pw + 1) & 1) * sub + (pw + 1) / 2);
                } else {
                    for (size_t iw = 0; iw < iw_n; iw++) {
                        const size_t c = pw + iw;
                        row[(c % sw) * sub + c / sw] = (int16_t)((j->sgn ? (int32_t)s8[iw] : (int32_t)u8[iw]) - z);
                    }
                }
            }
    }
}

static void qconv_dw_pad_range(void *arg, size_t begin, size_t end) {
    const qconv_dw_job *j = arg;
    for (size_t t = begin; t < end; t++) qconv_dw_pad_plane(j, t, j->xpad + t * j->psize);
}

#define QDW_BUF 2048   /* int32 outputs per tap-kernel call (on the stack, in L1) */
#define QDW_SLACK 16   /* int16 after the last padded plane: a run rounded up to 16 outputs reads at most 15 more */
#define QDW_FUSE_MAX 65536   /* int16 of one padded plane (128 KB) up to which planes are padded per thread */

/* Finished outputs [ow0, ow0 + n) of row oh of plane t: requantized, or stored as int32. */
static void qconv_dw_emit(const qconv_dw_job *j, const int32_t *buf, size_t t, size_t m, size_t oh, size_t ow0,
                          size_t n, size_t P, size_t ow_n) {
    const size_t o = t * P + oh * ow_n + ow0;
    if (j->rq) qconv_rq_row(j->rq, buf, m, o, n);
    else memcpy(j->yint + o, buf, n * sizeof *buf);
}

static void qconv_dw_planes(const qconv_dw_job *j, size_t begin, size_t end, int16_t *own_pad) {
    const nn_conv_shape *cs = j->cs;
    const nn_geom *g = &cs->g;
    const size_t Mg = cs->M / cs->group, P = (size_t)nn_geom_out_size(g), ks = (size_t)nn_geom_k_size(g);
    const int64_t ow_n = g->out[2], sw = g->s[2];
    int32_t buf[QDW_BUF + 16];
    uint8_t qbuf[QDW_BUF + 16];
    size_t padded = SIZE_MAX;   /* the input plane own_pad holds */
    for (size_t t = begin; t < end; t++) {
        const size_t n = t / cs->M, m = t % cs->M, c = m / Mg, xi = n * cs->C + c;
        const int16_t *xp = j->xpad + xi * j->psize, *w = j->w + m * ks;
        if (own_pad) {
            if (padded != xi) qconv_dw_pad_plane(j, xi, own_pad);
            padded = xi;
            xp = own_pad;
        }
        if (j->off) {
            const size_t wq = j->wq, own = (size_t)ow_n, ohn = (size_t)g->out[1];
            if (wq <= QDW_BUF) {
                const size_t R = QDW_BUF / wq;
                for (size_t oh0 = 0; oh0 < ohn; oh0 += R) {
                    const size_t rows = ohn - oh0 < R ? ohn - oh0 : R;
                    /* rounded up to whole vectors: the extra outputs read the next plane or the zeroed slack */
                    const size_t nf = ((rows - 1) * wq + own + 15) & ~(size_t)15;
                    j->ops->dw_taps(buf, nf, xp + oh0 * wq, j->off, ks, w);
                    if (j->rq) {   /* requantized in one run, the columns between rows included, then compacted */
                        qconv_rq_to(j->rq, buf, m, nf, qbuf);
                        uint8_t *yd = (uint8_t *)j->rq->y->data + t * P + oh0 * own;
                        for (size_t r = 0; r < rows; r++) qconv_copy_row(yd + r * own, qbuf + r * wq, own);
                    } else {
                        for (size_t r = 0; r < rows; r++) qconv_dw_emit(j, buf + r * wq, t, m, oh0 + r, 0, own, P, own);
                    }
                }
            } else {
                for (size_t oh = 0; oh < ohn; oh++)
                    for (size_t ow0 = 0; ow0 < own; ow0 += QDW_BUF) {
                        const size_t cnt = own - ow0 < QDW_BUF ? own - ow0 : QDW_BUF;
                        j->ops->dw_taps(buf, cnt, xp + oh * wq + ow0, j->off, ks, w);
                        qconv_dw_emit(j, buf, t, m, oh, ow0, cnt, P, own);
                    }
            }
            continue;
        }
        int32_t *y = j->yint + t * P;
        for (int64_t od = 0; od < g->out[0]; od++)
            for (int64_t oh = 0; oh < g->out[1]; oh++) {
                int32_t *yr = y + (od * g->out[1] + oh) * ow_n;
                for (int64_t ow = 0; ow < ow_n; ow++) yr[ow] = 0;
                for (int64_t kd = 0; kd < g->k[0]; kd++)
                    for (int64_t kh = 0; kh < g->k[1]; kh++) {
                        const int16_t *xr = xp + ((od * g->s[0] + kd * g->d[0]) * j->hp + oh * g->s[1] + kh * g->d[1]) * j->wp;
                        const int16_t *wr = w + (kd * g->k[1] + kh) * g->k[2];
                        for (int64_t kw = 0; kw < g->k[2]; kw++) {
                            const int32_t wv = wr[kw];
                            const int16_t *xs = xr + kw * g->d[2];
                            for (int64_t ow = 0; ow < ow_n; ow++) yr[ow] += xs[ow * sw] * wv;
                        }
                    }
            }
        if (j->rq) qconv_rq_row(j->rq, y, m, t * P, P);
    }
}

static void qconv_dw_range(void *arg, size_t begin, size_t end) { qconv_dw_planes(arg, begin, end, NULL); }

/* Chunk i of j->chunks: its share of the output planes, each input plane padded into chunk i's
 * buffer just before its taps read it, while it is in L1/L2. */
static void qconv_dw_chunk_range(void *arg, size_t begin, size_t end) {
    const qconv_dw_job *j = arg;
    const size_t total = j->cs->N * j->cs->M;
    for (size_t i = begin; i < end; i++)
        qconv_dw_planes(j, total * i / j->chunks, total * (i + 1) / j->chunks,
                        j->xpad + i * (j->psize + QDW_SLACK));
}

/* ---- depthwise path for small planes: 16 channels per kernel call, in the vector lanes ----
 * Output planes of at most QDWC_MAX_OUT pixels (input planes of at most QDWC_MAX_PADDED padded
 * ones): there the per-plane path's setup (padding, tap pairing, requantization calls) is paid on a
 * few dozen outputs per channel. From 14x14 outputs up the two paths measured alike, at 28x28 the
 * per-plane path was faster (docs/performance.md). */
#define QDWC_MAX_OUT 144
#define QDWC_MAX_PADDED 1024

typedef struct qconv_dwc_job {
    const nn_conv_shape *cs;
    const uint8_t *x;
    int sgn;
    int32_t xzp;
    const int16_t *w;     /* [M][ks] taps, zero point subtracted */
    size_t groups, P, ks, hp, wp;
    size_t xb_n, tmp_n;   /* floats / int32 per chunk of scratch */
    float *scratch;       /* per chunk: xb, tmp, out (QLinearConv), w */
    size_t chunk_n, chunks;
    int32_t *yint;
    const qconv_rq *rq;
    nn_qdwc16_fn fn;
} qconv_dwc_job;

static void qconv_dwc_range(void *arg, size_t begin, size_t end) {
    const qconv_dwc_job *j = arg;
    const nn_conv_shape *cs = j->cs;
    const nn_geom *g = &cs->g;
    const size_t units = cs->N * j->groups, in_size = (size_t)nn_geom_in_size(g), P = j->P, ks = j->ks;
    for (size_t i = begin; i < end; i++) {
        float *xb = j->scratch + i * j->chunk_n, *wv = xb + j->xb_n + 2 * j->tmp_n;
        int32_t *tmp = (int32_t *)(void *)(xb + j->xb_n), *outb = tmp + j->tmp_n;
        for (size_t u = units * i / j->chunks; u < units * (i + 1) / j->chunks; u++) {
            const size_t n = u / j->groups, c0 = (u % j->groups) * 16, nch = cs->C - c0 < 16 ? cs->C - c0 : 16;
            for (size_t t = 0; t < ks; t++)
                for (size_t c = 0; c < 16; c++) wv[t * 16 + c] = c < nch ? (float)j->w[(c0 + c) * ks + t] : 0.0f;
            /* requantized in the kernel unless a multiplier is not finite (rq_row's portable case) */
            int in_kernel = j->rq != NULL;
            for (size_t c = 0; in_kernel && c < nch; c++) in_kernel = isfinite(j->rq->mult[c0 + c]);
            static const int32_t no_bias[16];
            int32_t *out = j->rq ? outb : j->yint + (n * cs->M + c0) * P;
            const nn_qdwc16_args a = { j->x + (n * cs->C + c0) * in_size, in_size, nch, (size_t)g->in[1],
                                       (size_t)g->in[2], j->sgn, j->xzp, (size_t)g->pb[1], (size_t)g->pb[2], j->hp,
                                       j->wp, (size_t)g->k[1], (size_t)g->k[2], (size_t)g->s[1], (size_t)g->s[2],
                                       (size_t)g->d[1], (size_t)g->d[2], (size_t)g->out[1], (size_t)g->out[2], wv,
                                       xb, tmp, out,
                                       in_kernel ? (uint8_t *)j->rq->y->data + (n * cs->M + c0) * P : NULL,
                                       in_kernel && j->rq->bias ? j->rq->bias + c0 : no_bias,
                                       in_kernel ? j->rq->mult + c0 : NULL, j->rq ? j->rq->yzp : 0,
                                       j->rq && j->rq->y->type == CORT_TYPE_INT8 };
            j->fn(&a);
            if (j->rq && !in_kernel)
                for (size_t c = 0; c < nch; c++) qconv_rq_row(j->rq, out + c * P, c0 + c, (n * cs->M + c0 + c) * P, P);
        }
    }
}

/* 1 if the channel-lane kernel ran the conv (*st set), 0 if it does not apply. */
static int qconv_dwc(cort_kernel_ctx *ctx, const qconv_state *s, const nn_conv_shape *cs, const cort_value *x,
                     int32_t xzp, int32_t *yint, const qconv_rq *rq, cort_status **st) {
    const nn_geom *g = &cs->g;
    const nn_qconv_ops *ops = nn_qconv_best_ops();
    const size_t ks = (size_t)nn_geom_k_size(g), P = (size_t)nn_geom_out_size(g);
    if (!ops->dwc16 || cs->M != cs->C || g->in[0] != 1 || g->k[0] != 1 || g->pb[0] || g->pe[0] || ks == 0 ||
        ks > NN_QDWC16_MAX_TAPS || P == 0)
        return 0;
    const size_t hp = (size_t)(g->in[1] + g->pb[1] + g->pe[1]), wp = (size_t)(g->in[2] + g->pb[2] + g->pe[2]);
    if (hp > QDWC_MAX_PADDED || wp > QDWC_MAX_PADDED || hp * wp > QDWC_MAX_PADDED || P > QDWC_MAX_OUT) return 0;
    qconv_dwc_job j = { cs, x->data, x->type == CORT_TYPE_INT8, xzp, s->wdw, (cs->C + 15) / 16, P, ks, hp, wp,
                        hp * wp * 16, P * 16, NULL, 0, 0, yint, rq, ops->dwc16 };
    j.chunk_n = j.xb_n + 2 * j.tmp_n + ks * 16;
    const size_t units = cs->N * j.groups, threads = (size_t)cort_pool_threads(ctx->pool);
    j.chunks = units < threads ? units : threads;
    size_t nbytes;
    if (cort_mul_size_ovf(j.chunk_n, j.chunks, &nbytes) || cort_mul_size_ovf(nbytes, sizeof(float), &nbytes)) return 0;
    if (!(j.scratch = cort_kernel_scratch(ctx, nbytes))) {
        *st = cort_error_oom();
        return 1;
    }
    cort_parallel_for(ctx->pool, j.chunks, 1, qconv_dwc_range, &j);
    cort_kernel_scratch_free(ctx, j.scratch);
    *st = NULL;
    return 1;
}

/* ---- depthwise path straight from the bytes (the ops' dwr16), one output plane per item ---- */
typedef struct qconv_dwr_job {
    const nn_conv_shape *cs;
    const qconv_state *s;
    const uint8_t *x;
    int sgn;
    int32_t xzp;
    int32_t *yint;
    const qconv_rq *rq;
    nn_qdwr16_fn fn;
} qconv_dwr_job;

static void qconv_dwr_range(void *arg, size_t begin, size_t end) {
    const qconv_dwr_job *j = arg;
    const nn_conv_shape *cs = j->cs;
    const nn_geom *g = &cs->g;
    const qconv_state *s = j->s;
    const size_t Mg = cs->M / cs->group, P = (size_t)nn_geom_out_size(g), in_size = (size_t)nn_geom_in_size(g);
    /* the zero point as the kernel reads it (int8 moved up by 128): its share of every sum is zp_u * sum(w) */
    const uint32_t zp_u = (uint32_t)(j->sgn ? j->xzp + 128 : j->xzp);
    for (size_t t = begin; t < end; t++) {
        const size_t n = t / cs->M, m = t % cs->M, c = m / Mg;
        const uint32_t b = (uint32_t)(j->rq && j->rq->bias ? j->rq->bias[m] : 0) - zp_u * (uint32_t)s->wsum4[m];
        const nn_qdwr16_args a = { j->x + (n * cs->C + c) * in_size, (size_t)g->in[1], (size_t)g->in[2],
                                   (size_t)g->out[1], (size_t)g->out[2], s->dkh, s->dng, (size_t)g->s[1],
                                   (size_t)g->s[2], (size_t)g->d[1], (size_t)g->pb[1], (size_t)g->pb[2],
                                   (uint8_t)j->xzp, j->sgn ? 0x80 : 0, s->wdw4 + m * s->dkh * s->dng, (int32_t)b,
                                   j->rq ? j->rq->mult[m] : 0.0f, j->rq ? j->rq->yzp : 0,
                                   j->rq && j->rq->y->type == CORT_TYPE_INT8,
                                   j->rq ? (uint8_t *)j->rq->y->data + t * P : NULL, j->rq ? NULL : j->yint + t * P };
        j->fn(&a);
    }
}

/* 1 if the byte-plane kernel ran the conv, 0 if it does not apply. */
static int qconv_dwr(cort_kernel_ctx *ctx, const qconv_state *s, const nn_conv_shape *cs, const cort_value *x,
                     int32_t xzp, int32_t *yint, const qconv_rq *rq) {
    const nn_geom *g = &cs->g;
    const nn_qconv_ops *ops = nn_qconv_best_ops();
    if (!ops->dwr16 || !s->wdw4 || g->in[0] != 1 || g->k[0] != 1 || g->pb[0] || g->pe[0] || g->d[2] != 1 ||
        g->s[2] > NN_QDWR16_MAX_SW || (size_t)g->k[1] != s->dkh || (size_t)g->k[2] > 4 * s->dng)
        return 0;
    for (size_t m = 0; rq && m < cs->M; m++)
        if (!isfinite(rq->mult[m])) return 0;   /* a zero y_scale: the portable requantization */
    const size_t P = (size_t)nn_geom_out_size(g), outs = cs->N * cs->M;
    qconv_dwr_job j = { cs, s, x->data, x->type == CORT_TYPE_INT8, xzp, yint, rq, ops->dwr16 };
    cort_parallel_for(ctx->pool, outs, grain_for(P * s->dkh * s->dng * 4), qconv_dwr_range, &j);
    return 1;
}

static cort_status *qconv_dw(cort_kernel_ctx *ctx, const qconv_state *s, const nn_conv_shape *cs, const cort_value *x,
                             int32_t xzp, int32_t *yint, const qconv_rq *rq) {
    const nn_geom *g = &cs->g;
    /* rows narrower than 12 leave most of the byte-plane kernel's 16 lanes idle: there the channel-lane
     * kernel, where it applies, measured faster (docs/performance.md) */
    const int narrow = g->out[2] < 12;
    if (!narrow && qconv_dwr(ctx, s, cs, x, xzp, yint, rq)) return NULL;
    {
        cort_status *st = NULL;
        if (qconv_dwc(ctx, s, cs, x, xzp, yint, rq, &st)) return st;
    }
    if (narrow && qconv_dwr(ctx, s, cs, x, xzp, yint, rq)) return NULL;
    qconv_dw_job j = { cs, x->data, x->type == CORT_TYPE_INT8, xzp, g->in[0] + g->pb[0] + g->pe[0],
                       g->in[1] + g->pb[1] + g->pe[1], g->in[2] + g->pb[2] + g->pe[2], 1, 1, 0, 0, 0, NULL, s->wdw,
                       NULL, yint, rq, nn_qconv_best_ops() };
    const int flat = g->in[0] == 1 && g->k[0] == 1 && g->pb[0] == 0 && g->pe[0] == 0;
    if (flat) { j.sh = (size_t)g->s[1]; j.sw = (size_t)g->s[2]; }
    j.hq = ((size_t)j.hp + j.sh - 1) / j.sh;
    j.wq = ((size_t)j.wp + j.sw - 1) / j.sw;
    const size_t planes = cs->N * cs->C, P = (size_t)nn_geom_out_size(g), ks = (size_t)nn_geom_k_size(g);
    size_t nbytes, accn = 1;
    if (cort_mul_size_ovf(j.hq, j.wq, &j.psize) || cort_mul_size_ovf(j.psize, j.sh * j.sw, &j.psize) ||
        cort_mul_size_ovf(j.psize, (size_t)j.dp, &j.psize) ||
        (!flat && rq && (cort_mul_size_ovf(cs->N * cs->M, P, &accn) || accn > SIZE_MAX / 4)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "depthwise conv input of %zu planes is too large",
                               planes);
    /* Planes that fit in L2 are padded by the thread that reads them, one chunk of output planes per
     * thread, right before their taps: padding all planes first sent every padded plane (twice the
     * input's bytes) out to memory and back. Bigger planes keep the two passes. */
    const size_t outs = cs->N * cs->M, threads = (size_t)cort_pool_threads(ctx->pool);
    size_t work = 0;
    if (j.psize <= QDW_FUSE_MAX && !cort_mul_size_ovf(outs, P, &work) && !cort_mul_size_ovf(work, ks, &work))
        j.chunks = work < 32768 || outs < 2 ? 1 : 4 * threads < outs ? 4 * threads : outs;
    if (cort_add_size_ovf(j.psize, QDW_SLACK, &nbytes) || cort_mul_size_ovf(nbytes, j.chunks ? j.chunks : planes, &nbytes) ||
        cort_mul_size_ovf(nbytes, sizeof(int16_t), &nbytes))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "depthwise conv input of %zu planes is too large",
                               planes);
    j.xpad = cort_kernel_scratch(ctx, nbytes ? nbytes : 1);
    int32_t *acc = !flat && rq ? cort_kernel_scratch(ctx, accn * sizeof(int32_t)) : NULL;
    size_t *off = flat ? cort_kernel_scratch(ctx, ks * sizeof(size_t)) : NULL;
    if (!j.xpad || (!flat && rq && !acc) || (flat && !off)) {
        cort_kernel_scratch_free(ctx, j.xpad);
        cort_kernel_scratch_free(ctx, acc);
        cort_kernel_scratch_free(ctx, off);
        return cort_error_oom();
    }
    if (acc) j.yint = acc;
    if (j.chunks)
        for (size_t i = 0; i < j.chunks; i++) memset(j.xpad + i * (j.psize + QDW_SLACK) + j.psize, 0, QDW_SLACK * sizeof(int16_t));
    else
        memset(j.xpad + planes * j.psize, 0, QDW_SLACK * sizeof(int16_t));
    if (flat) {
        const size_t sub = j.hq * j.wq;
        for (size_t i = 0; i < (size_t)g->k[1]; i++)
            for (size_t jj = 0; jj < (size_t)g->k[2]; jj++) {
                const size_t r = i * (size_t)g->d[1], c = jj * (size_t)g->d[2];
                off[i * (size_t)g->k[2] + jj] = ((r % j.sh) * j.sw + c % j.sw) * sub + (r / j.sh) * j.wq + c / j.sw;
            }
        j.off = off;
    }
    if (j.chunks) {
        cort_parallel_for(ctx->pool, j.chunks, 1, qconv_dw_chunk_range, &j);
    } else {
        cort_parallel_for(ctx->pool, planes, grain_for(j.psize), qconv_dw_pad_range, &j);
        cort_parallel_for(ctx->pool, outs, grain_for(P * ks), qconv_dw_range, &j);
    }
    cort_kernel_scratch_free(ctx, j.xpad);
    cort_kernel_scratch_free(ctx, acc);
    cort_kernel_scratch_free(ctx, off);
    return NULL;
}

/* ---- the scalar reference: int32 accumulation of (x - x_zp) * (w - w_zp[m]) ---- */
typedef struct iconv_job {
    const nn_conv_shape *s;
    const int32_t *x, *w;   /* zero points already subtracted */
    int32_t *y;
} iconv_job;

static void iconv_run(void *arg, size_t begin, size_t end) {
    const iconv_job *j = arg;
    const nn_conv_shape *s = j->s;
    const nn_geom *g = &s->g;
    const size_t Cg = s->C / s->group, Mg = s->M / s->group;
    const int64_t in_size = nn_geom_in_size(g), ks = nn_geom_k_size(g), out_size = nn_geom_out_size(g);
    for (size_t t = begin; t < end; t++) {
        size_t n = t / s->M, m = t % s->M, gi = m / Mg;
        int32_t *y = j->y + (int64_t)t * out_size;
        for (int64_t od = 0; od < g->out[0]; od++)
            for (int64_t oh = 0; oh < g->out[1]; oh++)
                for (int64_t ow = 0; ow < g->out[2]; ow++) {
                    uint32_t acc = 0;   /* wraps on overflow like the GEMM's int32 lanes */
                    for (size_t c = 0; c < Cg; c++) {
                        const int32_t *xc = j->x + (int64_t)(n * s->C + gi * Cg + c) * in_size;
                        const int32_t *wc = j->w + (int64_t)(m * Cg + c) * ks;
                        for (int64_t kd = 0; kd < g->k[0]; kd++) {
                            int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                            if (id < 0 || id >= g->in[0]) continue;
                            for (int64_t kh = 0; kh < g->k[1]; kh++) {
                                int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                                if (ih < 0 || ih >= g->in[1]) continue;
                                for (int64_t kw = 0; kw < g->k[2]; kw++) {
                                    int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                                    if (iw < 0 || iw >= g->in[2]) continue;
                                    acc += (uint32_t)(xc[(id * g->in[1] + ih) * g->in[2] + iw] *
                                                      wc[(kd * g->k[1] + kh) * g->k[2] + kw]);
                                }
                            }
                        }
                    }
                    *y++ = (int32_t)acc;
                }
    }
}

/* Checks the inputs of an integer conv (x at xi, w at wi, zero points at xzi / wzi, may be absent). */
static cort_status *iconv_check(cort_kernel_ctx *ctx, size_t xi, size_t xzi, size_t wi, size_t wzi, nn_conv_shape *cs,
                                int64_t *ydims) {
    const qconv_state *s = ctx->state;
    CORT_TRY(nn_conv_prepare(ctx, &s->a, xi, wi, cs, ydims));
    const cort_value *x = ctx->inputs[xi], *w = ctx->inputs[wi];
    const cort_value *xz = nn_opt_input(ctx, xzi), *wz = nn_opt_input(ctx, wzi);
    if (!nn_q_is_8bit(x->type) || !nn_q_is_8bit(w->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'x'/'w' have types %s/%s, expected "
                               "int8 or uint8", cort_type_name(x->type), cort_type_name(w->type));
    char buf[160];
    if (xz && xz->count != 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu 'x_zero_point' has shape %s, expected a scalar", xzi,
                               nn_shape(xz, buf, sizeof buf));
    if (wz && wz->count != 1 && wz->count != cs->M)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu 'w_zero_point' has shape %s, expected a scalar or [%zu]", wzi,
                               nn_shape(wz, buf, sizeof buf), cs->M);
    return NULL;
}

/* The scalar int32 conv into acc (N*M*P, the caller's). */
static cort_status *iconv_scalar(cort_kernel_ctx *ctx, size_t xi, size_t xzi, size_t wi, size_t wzi,
                                 const nn_conv_shape *cs, int32_t *acc) {
    const cort_value *x = ctx->inputs[xi], *w = ctx->inputs[wi];
    const cort_value *xz = nn_opt_input(ctx, xzi), *wz = nn_opt_input(ctx, wzi);
    int32_t *xb = cort_kernel_scratch(ctx, (x->count ? x->count : 1) * sizeof(int32_t));
    int32_t *wb = cort_kernel_scratch(ctx, (w->count ? w->count : 1) * sizeof(int32_t));
    if (!xb || !wb) {
        cort_kernel_scratch_free(ctx, xb); cort_kernel_scratch_free(ctx, wb);
        return cort_error_oom();
    }
    int32_t xzp = xz ? nn_q_load(xz, 0) : 0;
    for (size_t i = 0; i < x->count; i++) xb[i] = nn_q_load(x, i) - xzp;
    size_t per_m = cs->M ? w->count / cs->M : 0;
    for (size_t i = 0; i < w->count; i++) {
        int32_t zp = !wz ? 0 : wz->count == 1 ? nn_q_load(wz, 0) : nn_q_load(wz, i / per_m);
        wb[i] = nn_q_load(w, i) - zp;
    }
    iconv_job j = { cs, xb, wb, acc };
    cort_parallel_for(ctx->pool, cs->N * cs->M, 1, iconv_run, &j);
    cort_kernel_scratch_free(ctx, xb);
    cort_kernel_scratch_free(ctx, wb);
    return NULL;
}

/* The fast conv when the prepared weights apply (1), else 0 (nothing done). */
static int qconv_fast(cort_kernel_ctx *ctx, size_t xzi, size_t wi, size_t wzi, const nn_conv_shape *cs,
                      int32_t *yint, const qconv_rq *rq, cort_status **st) {
    const qconv_state *s = ctx->state;
    if (!qconv_fast_ok(s, ctx->inputs[wi], nn_opt_input(ctx, wzi), cs)) return 0;
    const cort_value *x = ctx->inputs[0], *xz = nn_opt_input(ctx, xzi);
    const int32_t xzp = xz ? nn_q_load(xz, 0) : 0;
    if (s->wdw) *st = qconv_dw(ctx, s, cs, x, xzp, yint, rq);
    else if (s->wq) *st = qconv_gemm_quad(ctx, s, cs, x, xzp, yint, rq);
    else if (qconv_wino_ok(s, cs)) *st = qconv_wino(ctx, s, cs, x, xzp, yint, rq);
    else *st = qconv_gemm(ctx, s, cs, x, xzp, yint, rq);
    return 1;
}

static cort_status *convint_infer(cort_infer_ctx *ctx) {
    return nn_conv_infer(ctx, &((const qconv_state *)ctx->state)->a, 1, CORT_TYPE_INT32);
}

static cort_status *convint_run(cort_kernel_ctx *ctx) {
    nn_conv_shape cs;
    int64_t ydims[NN_MAX_SPATIAL + 2];
    CORT_TRY(iconv_check(ctx, 0, 2, 1, 3, &cs, ydims));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_INT32, ydims, ctx->inputs[0]->rank, &y));
    if (y->count == 0) return NULL;
    cort_status *st = NULL;
    if (!qconv_fast(ctx, 2, 1, 3, &cs, y->data, NULL, &st)) st = iconv_scalar(ctx, 0, 2, 1, 3, &cs, y->data);
    return st;
}

static cort_status *qlconv_infer(cort_infer_ctx *ctx) {
    cort_type t = ctx->n_inputs > 7 ? ctx->inputs[7].elem : CORT_TYPE_UNDEFINED;
    if (t == CORT_TYPE_UNDEFINED) t = ctx->inputs[0].elem;
    return nn_conv_infer(ctx, &((const qconv_state *)ctx->state)->a, 3, t);
}

/* QLinearConv inputs: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B */
static cort_status *qlconv_run(cort_kernel_ctx *ctx) {
    nn_conv_shape cs;
    int64_t ydims[NN_MAX_SPATIAL + 2];
    for (size_t i = 0; i < 8; i++)
        if (i != 2 && i != 5 && i != 7 && !nn_opt_input(ctx, i))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu is missing", i);
    const cort_value *xs = ctx->inputs[1], *ws = ctx->inputs[4], *ys = ctx->inputs[6];
    const cort_value *yz = nn_opt_input(ctx, 7), *b = nn_opt_input(ctx, 8);
    char buf[160];
    if (xs->count != 1 || ys->count != 1 || (yz && yz->count != 1))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "x_scale, y_scale and y_zero_point must be scalars (x_scale has shape %s)",
                               nn_shape(xs, buf, sizeof buf));
    CORT_TRY(iconv_check(ctx, 0, 2, 3, 5, &cs, ydims));
    if (ws->count != 1 && ws->count != cs.M)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 4 'w_scale' has shape %s, expected a scalar or [%zu]", nn_shape(ws, buf, sizeof buf),
                               cs.M);
    if (b && (b->count != cs.M || b->type != CORT_TYPE_INT32))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 8 'B' is %s%s, expected int32[%zu]",
                               cort_type_name(b->type), nn_shape(b, buf, sizeof buf), cs.M);
    const cort_type yt = yz ? yz->type : ctx->inputs[0]->type;
    if (!nn_q_is_8bit(yt))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 7 'y_zero_point' has type %s, expected "
                               "int8 or uint8", cort_type_name(yt));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yt, ydims, ctx->inputs[0]->rank, &y));
    if (y->count == 0) return NULL;
    float *mult = cort_kernel_scratch(ctx, cs.M * sizeof(float));
    if (!mult) return cort_error_oom();
    const float xsc = nn_q_scale(xs, 0), ysc = nn_q_scale(ys, 0);
    for (size_t m = 0; m < cs.M; m++) mult[m] = xsc * nn_q_scale(ws, ws->count == 1 ? 0 : m) / ysc;
    const qconv_rq rq = { y, mult, b ? (const int32_t *)b->data : NULL, yz ? nn_q_load(yz, 0) : 0, nn_qconv_best_ops() };
    cort_status *st = NULL;
    if (!qconv_fast(ctx, 2, 3, 5, &cs, NULL, &rq, &st)) {
        const size_t P = (size_t)nn_geom_out_size(&cs.g);
        int32_t *acc = cort_kernel_scratch(ctx, y->count * sizeof(int32_t));
        if (!acc) st = cort_error_oom();
        if (!st) st = iconv_scalar(ctx, 0, 2, 3, 5, &cs, acc);
        if (!st)   /* the reference requantization, element by element */
            for (size_t t = 0; t < cs.N * cs.M; t++) {
                const size_t m = t % cs.M;
                const int32_t bias = rq.bias ? rq.bias[m] : 0;
                for (size_t q = 0; q < P; q++)
                    nn_q_store(y, t * P + q,
                               nn_q_add_sat(nn_q_round((float)(int32_t)((uint32_t)acc[t * P + q] + (uint32_t)bias) *
                                                       mult[m]), rq.yzp));
            }
        cort_kernel_scratch_free(ctx, acc);
    }
    cort_kernel_scratch_free(ctx, mult);
    return st;
}

const cort_op_def nn_op_conv_integer = {
    .name = "ConvInteger", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX, .types = 0, .type_input = 0,
    .init = convint_init, .free_state = qconv_free, .infer = convint_infer, .run = convint_run };
const cort_op_def nn_op_qlinear_conv = {
    .name = "QLinearConv", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX, .types = 0, .type_input = 0,
    .init = qlconv_init, .free_state = qconv_free, .infer = qlconv_infer, .run = qlconv_run };
