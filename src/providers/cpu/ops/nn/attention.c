/* Attention-23/24: softmax(softcap(scale * Q K^T) + mask) V over (batch, head), with grouped KV
 * heads, KV caches (past_* in, present_* out), causal and padding limits.
 *
 * The fast path never materializes the batch x heads x q x kv score tensor. K of each (batch, KV
 * head) is packed once per run as NR-column panels of K^T and V as NR-column panels, so both
 * products run on the GEMM micro-kernel of the ISA level (the same one MatMul uses). Work is a
 * block of query rows of one (batch, head): its scores go to a per-worker strip, each row gets
 * scale, softcap, mask and softmax in one pass while the strip is in cache, and the strip times
 * packed V lands straight in Y. Key columns a causal or nonpad limit excludes for every row of the
 * block are neither computed nor multiplied. */
#include <math.h>
#include <string.h>
#include "tx_common.h"
#include "../ops_common.h"
#include "../../kernels/gemm.h"
#include "../../kernels/isa_config.h"
#include "../../kernels/attn_ukernels.h"

#define AT_QBLOCK_MAX 48   /* query rows per work item (a multiple of every kernel's MR below 16) */
#define AT_KSLICE 128      /* keys per PV step: a 16-column V panel slice of 8 KB */

typedef struct at_state {
    int64_t q_heads, kv_heads;   /* 0: not given */
    int     causal, mode;        /* mode: qk_matmul_output_mode */
    int     has_scale;
    float   scale, softcap;
} at_state;

static cort_status *at_init(const cort_node *node, void **state) {
    at_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    s->q_heads = cort_attr_int(node, "q_num_heads", 0);
    s->kv_heads = cort_attr_int(node, "kv_num_heads", 0);
    s->causal = cort_attr_int(node, "is_causal", 0) != 0;
    s->mode = (int)cort_attr_int(node, "qk_matmul_output_mode", 0);
    s->has_scale = cort_attr_get(node, "scale") != NULL;
    s->scale = cort_attr_float(node, "scale", 1.0f);
    s->softcap = cort_attr_float(node, "softcap", 0.0f);
    cort_status *st = NULL;
    if (s->q_heads < 0 || s->kv_heads < 0)
        st = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attributes q_num_heads = %lld, kv_num_heads = %lld: "
                             "expected >= 1", (long long)s->q_heads, (long long)s->kv_heads);
    else if (s->mode < 0 || s->mode > 3)
        st = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'qk_matmul_output_mode' = %d, expected 0..3",
                             s->mode);
    else if (!(s->softcap >= 0.0f))
        st = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'softcap' = %g, expected >= 0",
                             (double)s->softcap);
    if (st) { cort_free(s); return st; }
    *state = s;
    return NULL;
}

static void at_free(void *state) { cort_free(state); }

/* The geometry of one call, in the 4-D view [batch, heads, seq, head size]. */
typedef struct at_dims {
    size_t B, Hq, Hkv, Sq, Skv, P, L, D, Dv;   /* L = P + Skv (total kv length) */
    int    rank;                                /* 3 or 4: the layout of Q, K, V and Y */
} at_dims;

static int64_t at_div(int64_t a, int64_t b) { return b > 0 && a >= 0 && a % b == 0 ? a / b : -1; }

/* Shapes of Q/K/V (either all known or dims -1) to the 4-D view; returns 0 when inconsistent. */
static int at_geometry(const at_state *s, int rank, const int64_t *q, const int64_t *k, const int64_t *v,
                       int64_t g[7]) {
    /* g: B, Hq, Hkv, Sq, Skv, D, Dv */
    g[0] = q[0];
    if (rank == 4) {
        g[1] = q[1]; g[2] = k[1]; g[3] = q[2]; g[4] = k[2]; g[5] = q[3]; g[6] = v[3];
        return k[3] == q[3] && v[1] == k[1] && v[2] == k[2] && k[0] == q[0] && v[0] == q[0];
    }
    if (s->q_heads <= 0 || s->kv_heads <= 0) return 0;
    g[1] = s->q_heads; g[2] = s->kv_heads; g[3] = q[1]; g[4] = k[1];
    g[5] = at_div(q[2], s->q_heads);
    g[6] = at_div(v[2], s->kv_heads);
    return g[5] >= 0 && g[6] >= 0 && at_div(k[2], s->kv_heads) == g[5] && v[1] == k[1] && k[0] == q[0] && v[0] == q[0];
}

static cort_status *at_infer(cort_infer_ctx *ctx) {
    const at_state *s = ctx->state;
    const cort_tinfo *q = &ctx->inputs[0];
    cort_type t = q->elem;
    for (size_t i = 0; i < ctx->n_outputs && i < 4; i++) nn_infer_type(ctx, i, t);
    if (ctx->n_inputs < 3) return NULL;
    const cort_tinfo *k = &ctx->inputs[1], *v = &ctx->inputs[2];
    if (!cort_tinfo_shape_known(q) || !cort_tinfo_shape_known(k) || !cort_tinfo_shape_known(v)) return NULL;
    if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4)) return NULL;
    int64_t g[7];
    if (!at_geometry(s, q->rank, q->dims, k->dims, v->dims, g)) return NULL;
    int64_t past = 0;
    const cort_tinfo *pk = nn_infer_has(ctx, 4) ? &ctx->inputs[4] : NULL;
    if (pk) {
        if (pk->rank != 4 || pk->dims[2] < 0) return NULL;
        past = pk->dims[2];
    }
    const int64_t L = cort_dim_add(past, g[4]);   /* absurd dims saturate instead of overflowing */
    if (q->rank == 4) {
        int64_t y[4] = { g[0], g[1], g[3], g[6] };
        cort_tinfo_tensor_shape(&ctx->outputs[0], t, y, 4);
    } else {
        int64_t y[3] = { g[0], g[3], cort_dim_mul(g[1], g[6]) };
        cort_tinfo_tensor_shape(&ctx->outputs[0], t, y, 3);
    }
    int64_t pkd[4] = { g[0], g[2], L, g[5] }, pvd[4] = { g[0], g[2], L, g[6] }, qkd[4] = { g[0], g[1], g[3], L };
    if (ctx->n_outputs > 1) cort_tinfo_tensor_shape(&ctx->outputs[1], t, pkd, 4);
    if (ctx->n_outputs > 2) cort_tinfo_tensor_shape(&ctx->outputs[2], t, pvd, 4);
    if (ctx->n_outputs > 3) cort_tinfo_tensor_shape(&ctx->outputs[3], t, qkd, 4);
    return NULL;
}

/* ---- the engine (float) ---- */
typedef struct at_job {
    const at_state *s;
    at_dims d;
    const nn_gemm_kernel *k;
    const float *q, *kx, *vx, *pk, *pv;     /* inputs as float (4-D or 3-D layouts of d.rank) */
    const float *mf;                        /* float mask, or NULL */
    const uint8_t *mb;                      /* bool mask, or NULL */
    int64_t mstr[4];                        /* mask strides over [B, Hq, Sq, *] */
    size_t  mlen;                           /* mask's last dim (<= L; columns past it are masked) */
    const int64_t *nonpad;                  /* per batch valid kv length, or NULL */
    float *y, *qk;                          /* outputs (float), qk may be NULL */
    float *kp, *vp;                         /* packed K^T and V panels per (b, kv head) */
    size_t kp_stride, vp_stride;            /* floats per (b, kv head) */
    size_t lpad;                            /* L rounded up to NR */
    float *strips;                          /* per worker group: score strip, Q block, tile */
    size_t strip_floats;
    size_t qblock, nblocks, ntasks, ngroups;
    float scale;
    int direct;                             /* decode path: a task is a (b, kv head), no packing */
    size_t nsplit;                          /* decode: key ranges per (b, kv head) (1: whole rows) */
    float *part;                            /* nsplit > 1: per task and row: max, sum, Dv partial outputs */
} at_job;

/* Row j of K (or V, hd = D or Dv) of (b, kv head h): the cache first, then the new rows. */
static const float *at_kv_row(const at_job *j, const float *x, const float *past, size_t hd, size_t b, size_t h,
                              size_t r) {
    const at_dims *d = &j->d;
    if (r < d->P) return past + ((b * d->Hkv + h) * d->P + r) * hd;
    r -= d->P;
    if (d->rank == 4) return x + ((b * d->Hkv + h) * d->Skv + r) * hd;
    return x + (b * d->Skv + r) * d->Hkv * hd + h * hd;
}

static void at_pack(void *arg, size_t begin, size_t end) {
    const at_job *j = arg;
    const at_dims *d = &j->d;
    const size_t nr = j->k->nr;
    for (size_t bh = begin; bh < end; bh++) {
        const size_t b = bh / d->Hkv, h = bh % d->Hkv;
        /* K^T: panel jp holds keys [jp*NR, +NR) as [D][NR] */
        float *kp = j->kp + bh * j->kp_stride;
        for (size_t j0 = 0; j0 < d->L; j0 += nr) {
            float *dst = kp + j0 * d->D;
            const size_t nc = d->L - j0 < nr ? d->L - j0 : nr;
            for (size_t c = 0; c < nc; c++) {
                const float *src = at_kv_row(j, j->kx, j->pk, d->D, b, h, j0 + c);
                for (size_t p = 0; p < d->D; p++) dst[p * nr + c] = src[p];
            }
            for (size_t c = nc; c < nr; c++)
                for (size_t p = 0; p < d->D; p++) dst[p * nr + c] = 0.0f;
        }
        /* V: panel jp holds value columns [jp*NR, +NR) as [L][NR] */
        float *vp = j->vp + bh * j->vp_stride;
        for (size_t r = 0; r < d->L; r++) {
            const float *src = at_kv_row(j, j->vx, j->pv, d->Dv, b, h, r);
            for (size_t c0 = 0; c0 < d->Dv; c0 += nr) {
                float *dst = vp + c0 * d->L + r * nr;
                const size_t nc = d->Dv - c0 < nr ? d->Dv - c0 : nr;
                memcpy(dst, src + c0, nc * sizeof(float));
                for (size_t c = nc; c < nr; c++) dst[c] = 0.0f;
            }
        }
    }
}

/* One MR x NR tile through the micro-kernel; kernels without edge support go through tile. */
static void at_tile(const nn_gemm_kernel *k, size_t kc, const float *a, size_t lda, const float *b, float *c,
                    size_t ldc, size_t rows, size_t cols, int acc, float *tile) {
    nn_ukr_args u;
    memset(&u, 0, sizeof u);
    u.kc = kc; u.a = a; u.a_rs = lda; u.a_cs = 1; u.b = b; u.ldb = k->nr; u.accumulate = acc;
    if (k->edge || (rows == k->mr && cols == k->nr)) {
        u.c = c; u.ldc = ldc;
        u.rows = rows == k->mr ? 0 : rows;
        u.cols = cols == k->nr ? 0 : cols;
        k->ukr(&u);
        return;
    }
    u.c = tile; u.ldc = k->nr;
    if (acc)
        for (size_t i = 0; i < rows; i++) memcpy(tile + i * k->nr, c + i * ldc, cols * sizeof(float));
    k->ukr(&u);
    for (size_t i = 0; i < rows; i++) memcpy(c + i * ldc, tile + i * k->nr, cols * sizeof(float));
}

/* Keys row i of (b, .) may see: [0, limit). */
static size_t at_limit(const at_job *j, size_t b, size_t i) {
    const at_dims *d = &j->d;
    int64_t lim = (int64_t)d->L;
    if (j->nonpad && j->nonpad[b] < lim) lim = j->nonpad[b];
    if (j->s->causal) {
        int64_t off = d->P ? (int64_t)d->P : j->nonpad ? j->nonpad[b] - (int64_t)d->Sq : 0;
        int64_t c = (int64_t)i + off + 1;
        if (c < lim) lim = c;
    }
    return lim < 0 ? 0 : (size_t)lim;
}

static float at_exp_shift_sum(const float *x, float *y, size_t n, float m) {
    float (*const f)(const float *, float *, size_t, float) = nn_isa()->exp_shift_sum;
    if (f) return f(x, y, n, m);
    float s = 0.0f;
    for (size_t i = 0; i < n; i++) { y[i] = expf(x[i] - m); s += y[i]; }
    return s;
}

static float at_row_max(const float *x, size_t n) {
    float (*const f)(const float *, size_t) = nn_isa()->pool_max;
    if (f) return f(x, n);
    float m = x[0];
    for (size_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

/* Scores of one row (already scaled: Q was) to unnormalized probabilities in place, ncols of them
 * computed; columns >= lim are masked. Returns 1/sum, by which the row's output is scaled after
 * the PV product (Dv multiplies instead of L): 0 for a row with nothing to attend to, whose
 * output is then zeros rather than 0/0. Only the qk output of mode 3 normalizes the row itself. */
static float at_row_part(const at_job *j, float *x, size_t c0, size_t ncols, size_t lim, size_t b, size_t h,
                         size_t i, float *qk, float *mx_out);

static float at_row(const at_job *j, float *x, size_t ncols, size_t lim, size_t b, size_t h, size_t i, float *qk) {
    float mx;
    const float sum = at_row_part(j, x, 0, ncols, lim, b, h, i, qk, &mx);
    return sum > 0.0f ? 1.0f / sum : 0.0f;
}

/* at_row over the key columns [c0, c0 + ncols) of the row (x holds those; lim and the mask are
 * in whole-row columns): leaves exp(x - max) in x and returns their sum, the max in *mx_out
 * (-inf and a zero sum for nothing to attend to). qk only with c0 = 0. */
static float at_row_part(const at_job *j, float *x, size_t c0, size_t ncols, size_t lim, size_t b, size_t h,
                         size_t i, float *qk, float *mx_out) {
    const float cap = j->s->softcap;
    const int mode = j->s->mode;
    if (cap > 0.0f) {
        const float inv = 1.0f / cap;
        for (size_t c = 0; c < ncols; c++) x[c] = cap * tanhf(x[c] * inv);
    }
    if (qk && mode <= 1) memcpy(qk, x, ncols * sizeof(float));
    const size_t mend = lim < j->mlen ? lim : j->mlen;
    /* columns past the mask are masked too */
    const size_t alive = (j->mf || j->mb) ? mend : lim;
    const size_t live = alive <= c0 ? 0 : alive - c0 < ncols ? alive - c0 : ncols;
    if (j->mf) {
        const float *m = j->mf + (int64_t)b * j->mstr[0] + (int64_t)h * j->mstr[1] + (int64_t)i * j->mstr[2];
        nn_attn_best()->add(m + c0, x, live);
    } else if (j->mb) {
        const uint8_t *m = j->mb + (int64_t)b * j->mstr[0] + (int64_t)h * j->mstr[1] + (int64_t)i * j->mstr[2] + c0;
        for (size_t c = 0; c < live; c++) x[c] = m[c] ? x[c] : -INFINITY;
    }
    if (qk && mode == 2) {
        memcpy(qk, x, live * sizeof(float));
        for (size_t c = live; c < ncols; c++) qk[c] = -INFINITY;
    }
    const float mx = live ? at_row_max(x, live) : -INFINITY;
    float sum = 0.0f;
    if (mx == -INFINITY) {
        memset(x, 0, ncols * sizeof(float));
    } else {
        sum = at_exp_shift_sum(x, x, live, mx);
        memset(x + live, 0, (ncols - live) * sizeof(float));
    }
    if (qk && mode == 3) {
        const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
        for (size_t c = 0; c < ncols; c++) qk[c] = x[c] * inv;
    }
    *mx_out = mx;
    return sum;
}

static void at_block(const at_job *j, size_t task, float *strip) {
    const at_dims *d = &j->d;
    const nn_gemm_kernel *k = j->k;
    const size_t mr = k->mr, nr = k->nr;
    const size_t bh = task / j->nblocks, blk = task % j->nblocks;
    const size_t b = bh / d->Hq, h = bh % d->Hq, kvh = h / (d->Hq / d->Hkv);
    const size_t q0 = blk * j->qblock, qb = d->Sq - q0 < j->qblock ? d->Sq - q0 : j->qblock;
    const size_t lds = j->lpad;
    float *S = strip, *qbuf = S + j->qblock * lds, *tile = qbuf + j->qblock * d->D;
    /* the block's query rows, contiguous (3-D inputs interleave heads) */
    for (size_t i = 0; i < qb; i++) {
        const float *src = d->rank == 4 ? j->q + ((b * d->Hq + h) * d->Sq + q0 + i) * d->D
                                        : j->q + (b * d->Sq + q0 + i) * d->Hq * d->D + h * d->D;
        /* the scale goes into Q: D multiplies per row instead of L */
        nn_attn_best()->scale(src, qbuf + i * d->D, d->D, j->scale);
    }
    /* per MR-row group: the key columns any of its rows may see (all of them when the raw scores
     * are an output); the rest are neither computed nor multiplied */
    size_t gcols[AT_QBLOCK_MAX], ncols = 0;
    const size_t ngr = (qb + mr - 1) / mr;
    for (size_t g = 0; g < ngr; g++) {
        size_t m = 0;
        for (size_t i = g * mr; i < qb && i < (g + 1) * mr; i++) {
            size_t l = at_limit(j, b, q0 + i);
            if (l > m) m = l;
        }
        gcols[g] = j->qk ? d->L : m;
        if (gcols[g] > ncols) ncols = gcols[g];
    }
    const float *kp = j->kp + (b * d->Hkv + kvh) * j->kp_stride;
    /* S = Q K^T, a K^T panel at a time so it stays in L1 for every row group */
    for (size_t c0 = 0; c0 < ncols; c0 += nr)
        for (size_t g = 0; g < ngr; g++) {
            if (c0 >= gcols[g]) continue;
            const size_t i0 = g * mr, rows = qb - i0 < mr ? qb - i0 : mr;
            at_tile(k, d->D, qbuf + i0 * d->D, d->D, kp + c0 * d->D, S + i0 * lds + c0, lds, rows,
                    gcols[g] - c0 < nr ? gcols[g] - c0 : nr, 0, tile);
        }
    float inv[AT_QBLOCK_MAX];
    for (size_t i = 0; i < qb; i++) {
        float *qk = j->qk ? j->qk + ((b * d->Hq + h) * d->Sq + q0 + i) * d->L : NULL;
        inv[i] = at_row(j, S + i * lds, gcols[i / mr], at_limit(j, b, q0 + i), b, h, q0 + i, qk);
    }
    /* Y rows = P V, in slices of AT_KSLICE keys so the V panel slice stays in L1 */
    const float *vp = j->vp + (b * d->Hkv + kvh) * j->vp_stride;
    size_t ldy;
    float *y;
    if (d->rank == 4) { ldy = d->Dv; y = j->y + ((b * d->Hq + h) * d->Sq + q0) * d->Dv; }
    else { ldy = d->Hq * d->Dv; y = j->y + (b * d->Sq + q0) * ldy + h * d->Dv; }
    for (size_t g = 0; g < ngr; g++)
        if (!gcols[g])
            for (size_t i = g * mr; i < qb && i < (g + 1) * mr; i++) memset(y + i * ldy, 0, d->Dv * sizeof(float));
    for (size_t k0 = 0; k0 < ncols; k0 += AT_KSLICE)
        for (size_t c0 = 0; c0 < d->Dv; c0 += nr)
            for (size_t g = 0; g < ngr; g++) {
                if (k0 >= gcols[g]) continue;
                const size_t i0 = g * mr, rows = qb - i0 < mr ? qb - i0 : mr;
                const size_t kc = gcols[g] - k0 < AT_KSLICE ? gcols[g] - k0 : AT_KSLICE;
                at_tile(k, kc, S + i0 * lds + k0, lds, vp + c0 * d->L + k0 * nr, y + i0 * ldy + c0, ldy, rows,
                        d->Dv - c0 < nr ? d->Dv - c0 : nr, k0 > 0, tile);
            }
    for (size_t i = 0; i < qb; i++) nn_attn_best()->scale(y + i * ldy, y + i * ldy, d->Dv, inv[i]);
}

/* The decode path: all group * Sq query rows of one (batch, KV head) against K and V read in place,
 * each key and value row once. */
static void at_block_direct(const at_job *j, size_t task, float *strip) {
    const at_dims *d = &j->d;
    const nn_attn_kernels *ak = nn_attn_best();
    const size_t bkv = task / j->nsplit, sp = task % j->nsplit;
    const size_t b = bkv / d->Hkv, kvh = bkv % d->Hkv, group = d->Hq / d->Hkv, R = group * d->Sq;
    const size_t lds = j->lpad;
    float *S = strip, *qbuf = S + R * lds, *ybuf = qbuf + R * d->D;
    for (size_t r = 0; r < R; r++) {
        const size_t h = kvh * group + r / d->Sq, i = r % d->Sq;
        const float *src = d->rank == 4 ? j->q + ((b * d->Hq + h) * d->Sq + i) * d->D
                                        : j->q + (b * d->Sq + i) * d->Hq * d->D + h * d->D;
        ak->scale(src, qbuf + r * d->D, d->D, j->scale);
    }
    size_t ncols = 0;
    for (size_t i = 0; i < d->Sq; i++) {
        size_t l = at_limit(j, b, i);
        if (l > ncols) ncols = l;
    }
    if (j->qk) ncols = d->L;
    /* this task's keys [c0, c1); S row r holds them from column 0 */
    const size_t c0 = sp * ncols / j->nsplit, c1 = (sp + 1) * ncols / j->nsplit, w = c1 - c0;
    for (size_t c = c0; c < c1; c++) {
        const float *kr = at_kv_row(j, j->kx, j->pk, d->D, b, kvh, c);
        for (size_t r0 = 0; r0 < R; r0 += NN_ATTN_MAX_ROWS)
            ak->dots(kr, qbuf + r0 * d->D, d->D, R - r0 < NN_ATTN_MAX_ROWS ? R - r0 : NN_ATTN_MAX_ROWS, d->D,
                     S + r0 * lds + c - c0, lds);
    }
    float inv[2 * NN_ATTN_MAX_ROWS * 64], mx[2 * NN_ATTN_MAX_ROWS * 64];
    for (size_t r = 0; r < R; r++) {
        const size_t h = kvh * group + r / d->Sq, i = r % d->Sq;
        float *qk = j->qk ? j->qk + ((b * d->Hq + h) * d->Sq + i) * d->L : NULL;
        /* a split row keeps its max and sum for the merge; a whole row is normalized below */
        inv[r] = at_row_part(j, S + r * lds, c0, w, at_limit(j, b, i), b, h, i, qk, &mx[r]);
        if (j->nsplit == 1) inv[r] = inv[r] > 0.0f ? 1.0f / inv[r] : 0.0f;
    }
    memset(ybuf, 0, R * d->Dv * sizeof(float));
    for (size_t c = c0; c < c1; c++) {
        const float *vr = at_kv_row(j, j->vx, j->pv, d->Dv, b, kvh, c);
        for (size_t r0 = 0; r0 < R; r0 += NN_ATTN_MAX_ROWS)
            ak->axpys(vr, S + r0 * lds + c - c0, lds, R - r0 < NN_ATTN_MAX_ROWS ? R - r0 : NN_ATTN_MAX_ROWS, d->Dv,
                      ybuf + r0 * d->Dv, d->Dv);
    }
    if (j->nsplit > 1) {
        float *part = j->part + task * R * (d->Dv + 2);
        for (size_t r = 0; r < R; r++) {
            float *pr = part + r * (d->Dv + 2);
            pr[0] = mx[r];
            pr[1] = inv[r];   /* the sum */
            memcpy(pr + 2, ybuf + r * d->Dv, d->Dv * sizeof(float));
        }
        return;
    }
    for (size_t r = 0; r < R; r++) {
        const size_t h = kvh * group + r / d->Sq, i = r % d->Sq;
        float *y = d->rank == 4 ? j->y + ((b * d->Hq + h) * d->Sq + i) * d->Dv
                                : j->y + (b * d->Sq + i) * d->Hq * d->Dv + h * d->Dv;
        ak->scale(ybuf + r * d->Dv, y, d->Dv, inv[r]);
    }
}

/* Split decode: each row's output from its key ranges' partial results, rescaled to the common
 * maximum (sum_s e^(m_s - M) o_s / sum_s e^(m_s - M) l_s). */
static void at_merge(void *arg, size_t begin, size_t end) {
    const at_job *j = arg;
    const at_dims *d = &j->d;
    const size_t group = d->Hq / d->Hkv, R = group * d->Sq, stride = R * (d->Dv + 2);
    for (size_t bkv = begin; bkv < end; bkv++) {
        const size_t b = bkv / d->Hkv, kvh = bkv % d->Hkv;
        const float *part = j->part + bkv * j->nsplit * stride;
        for (size_t r = 0; r < R; r++) {
            const size_t h = kvh * group + r / d->Sq, i = r % d->Sq;
            float *y = d->rank == 4 ? j->y + ((b * d->Hq + h) * d->Sq + i) * d->Dv
                                    : j->y + (b * d->Sq + i) * d->Hq * d->Dv + h * d->Dv;
            float m = -INFINITY;
            for (size_t s = 0; s < j->nsplit; s++) {
                const float ms = part[s * stride + r * (d->Dv + 2)];
                m = ms > m ? ms : m;
            }
            memset(y, 0, d->Dv * sizeof(float));
            if (m == -INFINITY) continue;
            float tot = 0.0f;
            for (size_t s = 0; s < j->nsplit; s++) {
                const float *pr = part + s * stride + r * (d->Dv + 2);
                if (pr[0] == -INFINITY) continue;
                const float e = expf(pr[0] - m);
                tot += e * pr[1];
                for (size_t c = 0; c < d->Dv; c++) y[c] += e * pr[2 + c];
            }
            nn_attn_best()->scale(y, y, d->Dv, 1.0f / tot);
        }
    }
}

static void at_group(void *arg, size_t begin, size_t end) {
    const at_job *j = arg;
    for (size_t g = begin; g < end; g++) {
        float *strip = j->strips + g * j->strip_floats;
        const size_t t0 = g * j->ntasks / j->ngroups, t1 = (g + 1) * j->ntasks / j->ngroups;
        for (size_t t = t0; t < t1; t++) {
            if (j->direct) at_block_direct(j, t, strip);
            else at_block(j, t, strip);
        }
    }
}

/* Runs a filled-in job (inputs, outputs, mask and limits set): plans the blocks, packs K and V
 * into the session's recycled scratch and spreads the work over the pool. */
static cort_status *at_execute(cort_kernel_ctx *ctx, at_job *j) {
    const at_dims *d = &j->d;
    j->k = nn_gemm_best_kernel();
    {
        const size_t mr = j->k->mr, nr = j->k->nr;
        size_t threads = (size_t)cort_pool_threads(ctx->pool);
        j->lpad = (d->L + nr - 1) / nr * nr;
        /* one or two query rows per head: GEMM tiles would be mostly empty and packing K and V
         * would cost as much as reading them, so rows go straight through the decode kernels */
        const size_t group = d->Hq / d->Hkv;
        j->direct = d->Sq <= 2 && group * d->Sq <= 2 * NN_ATTN_MAX_ROWS * 64;
        /* query blocks: large enough to amortize a pass over K and V, small enough that the
         * strip stays in L2, and enough of them to keep every worker busy */
        size_t qblock = AT_QBLOCK_MAX / mr * mr;
        while (qblock > mr && d->B * d->Hq * ((d->Sq + qblock - 1) / qblock) < 2 * threads) qblock -= mr;
        while (qblock > mr && qblock * j->lpad > 64 * 1024) qblock -= mr;
        j->qblock = qblock;
        j->nblocks = (d->Sq + qblock - 1) / qblock;
        /* decode with fewer (batch, KV head) pairs than workers: split the keys too and merge */
        j->nsplit = 1;
        if (j->direct && !j->qk && threads > 1 && d->B * d->Hkv < 2 * threads && d->L >= 512) {
            j->nsplit = (2 * threads + d->B * d->Hkv - 1) / (d->B * d->Hkv);
            if (j->nsplit > d->L / 256) j->nsplit = d->L / 256;
        }
        j->ntasks = j->direct ? d->B * d->Hkv * j->nsplit : d->B * d->Hq * j->nblocks;
        j->ngroups = j->ntasks < 4 * threads ? j->ntasks : 4 * threads;
        j->kp_stride = j->lpad * d->D;
        j->vp_stride = (d->Dv + nr - 1) / nr * nr * d->L;
        j->strip_floats = j->direct ? (group * d->Sq * (j->lpad + d->D + d->Dv) + 15) / 16 * 16
                                  : (qblock * j->lpad + qblock * d->D + NN_MAX_TILE + 15) / 16 * 16;
        size_t nkv = j->direct ? 0 : d->B * d->Hkv, total = 0;
        size_t sg = 0, parts = j->nsplit > 1 ? j->ntasks * group * d->Sq * (d->Dv + 2) : 0;
        int ok = !cort_mul_size_ovf(nkv, j->kp_stride + j->vp_stride, &total) &&
                 !cort_mul_size_ovf(j->ngroups, j->strip_floats, &sg) && !cort_add_size_ovf(total, sg, &total) &&
                 !cort_add_size_ovf(total, parts, &total) && total < SIZE_MAX / sizeof(float) - 16;
        if (!ok) {
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attention of %zu x %zu heads over %zu "
                                   "keys is too large", d->B, d->Hq, d->L);
        }
        if (j->ntasks && d->L && d->Dv) {
            float *scratch = cort_kernel_scratch(ctx, (total + 16) * sizeof(float));
            if (!scratch) return cort_error_oom();
            j->kp = scratch;
            j->vp = j->kp + nkv * j->kp_stride;
            j->strips = j->vp + nkv * j->vp_stride;
            j->part = j->strips + sg;
            memset(j->strips, 0, sg * sizeof(float));   /* rows past a block's end are read as zeros */
            if (nkv) cort_parallel_for(nkv * d->L * (d->D + d->Dv) < 32768 ? NULL : ctx->pool, nkv, 1, at_pack, j);
            cort_parallel_for(ctx->pool, j->ngroups, 1, at_group, j);
            if (j->nsplit > 1) cort_parallel_for(ctx->pool, d->B * d->Hkv, 1, at_merge, j);
            cort_kernel_scratch_free(ctx, scratch);
        } else {
            memset(j->y, 0, d->B * d->Hq * d->Sq * d->Dv * sizeof(float));
            if (j->qk) memset(j->qk, 0, d->B * d->Hq * d->Sq * d->L * sizeof(float));
        }
    }
    return NULL;
}

/* ---- the operator ---- */
static cort_status *at_float_in(cort_kernel_ctx *ctx, size_t i, nn_fbuf *out) {
    const cort_value *v = nn_opt_input(ctx, i);
    out->p = out->owned = NULL;
    return v ? tx_fbuf_in(ctx, v, out) : NULL;
}

static cort_status *at_bad(cort_kernel_ctx *ctx, size_t i, const char *name, const char *want) {
    const cort_value *v = nn_opt_input(ctx, i);
    char buf[160];
    return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s (%s), expected %s", i,
                           name, v ? nn_shape(v, buf, sizeof buf) : "[]", v ? cort_type_name(v->type) : "absent", want);
}

static int at_out_used(const cort_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_outputs && ctx->node->out_slot[i] >= 0;
}

static cort_status *at_run(cort_kernel_ctx *ctx) {
    const at_state *s = ctx->state;
    for (size_t i = 0; i < 3; i++) {
        static const char *const names[3] = { "Q", "K", "V" };
        const cort_value *v = nn_opt_input(ctx, i);
        if (!v || v->kind != CORT_VKIND_TENSOR || (v->rank != 3 && v->rank != 4) || v->type != ctx->inputs[0]->type ||
            v->rank != ctx->inputs[0]->rank)
            return at_bad(ctx, i, names[i], "a 3-D or 4-D tensor of Q's type and rank");
    }
    const cort_value *q = ctx->inputs[0], *kx = ctx->inputs[1], *vx = ctx->inputs[2];
    const cort_type t = q->type;
    if (!rd_is_f32ish(t) && t != CORT_TYPE_DOUBLE) return at_bad(ctx, 0, "Q", "a float, float16 or bfloat16 tensor");
    int64_t g[7];
    if (!at_geometry(s, (int)q->rank, q->shape, kx->shape, vx->shape, g))
        return q->rank == 3 && (s->q_heads <= 0 || s->kv_heads <= 0)
            ? cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "3-D inputs need attributes q_num_heads and "
                              "kv_num_heads")
            : at_bad(ctx, 1, "K", "batch, sequence and head sizes consistent with Q and V (and the head counts)");
    at_dims d = { (size_t)g[0], (size_t)g[1], (size_t)g[2], (size_t)g[3], (size_t)g[4], 0, 0, (size_t)g[5],
                  (size_t)g[6], (int)q->rank };
    if (!d.Hkv || !d.Hq || d.Hq % d.Hkv)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "%zu query heads are not a multiple of %zu "
                               "key/value heads", d.Hq, d.Hkv);
    const cort_value *pk = nn_opt_input(ctx, 4), *pv = nn_opt_input(ctx, 5);
    if (!pk != !pv) return at_bad(ctx, pk ? 5 : 4, pk ? "past_value" : "past_key", "past_key and past_value together");
    if (pk) {
        if (pk->type != t || pk->rank != 4 || (size_t)pk->shape[0] != d.B || (size_t)pk->shape[1] != d.Hkv ||
            (size_t)pk->shape[3] != d.D)
            return at_bad(ctx, 4, "past_key", "[batch, kv_num_heads, past_len, head_size] of Q's type");
        d.P = (size_t)pk->shape[2];
        if (pv->type != t || pv->rank != 4 || (size_t)pv->shape[0] != d.B || (size_t)pv->shape[1] != d.Hkv ||
            (size_t)pv->shape[2] != d.P || (size_t)pv->shape[3] != d.Dv)
            return at_bad(ctx, 5, "past_value", "[batch, kv_num_heads, past_len, v_head_size] like past_key");
    }
    d.L = d.P + d.Skv;
    /* mask: bool or Q's type, broadcast to [B, Hq, Sq, <= L] */
    const cort_value *mask = nn_opt_input(ctx, 3);
    int64_t mstr[4] = { 0, 0, 0, 0 };
    size_t mlen = d.L;
    if (mask) {
        if ((mask->type != CORT_TYPE_BOOL && mask->type != t) || mask->rank < 1 || mask->rank > 4)
            return at_bad(ctx, 3, "attn_mask", "bool or Q's type, rank 1 to 4");
        const int64_t full[4] = { (int64_t)d.B, (int64_t)d.Hq, (int64_t)d.Sq, mask->shape[mask->rank - 1] };
        for (size_t i = 0; i + 1 < mask->rank; i++) {
            int64_t md = mask->shape[i], want = full[4 - mask->rank + i];
            if (md != 1 && md != want) return at_bad(ctx, 3, "attn_mask", "dims broadcastable to [batch, q_num_heads, "
                                                     "q_seq_len, total_seq_len]");
        }
        if ((size_t)full[3] > d.L) return at_bad(ctx, 3, "attn_mask", "a last dim <= total sequence length");
        cort_broadcast_strides(full, 4, mask->shape, mask->rank, mstr);
        mlen = (size_t)full[3];
    }
    const cort_value *np = nn_opt_input(ctx, 6);
    int64_t *nonpad = NULL;
    if (np && ctx->opset >= 24) {
        if (np->type != CORT_TYPE_INT64 || np->rank != 1 || (size_t)np->shape[0] != d.B)
            return at_bad(ctx, 6, "nonpad_kv_seqlen", "int64 [batch]");
        nonpad = np->data;
        for (size_t b = 0; b < d.B; b++)
            if (nonpad[b] < 0 || (size_t)nonpad[b] > d.L)
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 6 'nonpad_kv_seqlen'[%zu] = %lld "
                                       "is outside [0, %zu]", b, (long long)nonpad[b], d.L);
    }
    /* outputs */
    cort_value *y, *pko = NULL, *pvo = NULL, *qko = NULL;
    if (d.rank == 4) {
        int64_t yd[4] = { (int64_t)d.B, (int64_t)d.Hq, (int64_t)d.Sq, (int64_t)d.Dv };
        CORT_TRY(cort_kernel_output(ctx, 0, t, yd, 4, &y));
    } else {
        int64_t yd[3] = { (int64_t)d.B, (int64_t)d.Sq, (int64_t)(d.Hq * d.Dv) };
        CORT_TRY(cort_kernel_output(ctx, 0, t, yd, 3, &y));
    }
    int64_t pkd[4] = { (int64_t)d.B, (int64_t)d.Hkv, (int64_t)d.L, (int64_t)d.D };
    int64_t pvd[4] = { (int64_t)d.B, (int64_t)d.Hkv, (int64_t)d.L, (int64_t)d.Dv };
    int64_t qkd[4] = { (int64_t)d.B, (int64_t)d.Hq, (int64_t)d.Sq, (int64_t)d.L };
    if (at_out_used(ctx, 1)) CORT_TRY(cort_kernel_output(ctx, 1, t, pkd, 4, &pko));
    if (at_out_used(ctx, 2)) CORT_TRY(cort_kernel_output(ctx, 2, t, pvd, 4, &pvo));
    if (at_out_used(ctx, 3)) CORT_TRY(cort_kernel_output(ctx, 3, t, qkd, 4, &qko));

    at_job j;
    memset(&j, 0, sizeof j);
    j.s = s; j.d = d;
    j.scale = s->has_scale ? s->scale : (float)(1.0 / sqrt((double)(d.D ? d.D : 1)));
    memcpy(j.mstr, mstr, sizeof mstr);
    j.mlen = mlen;
    j.nonpad = nonpad;
    nn_fbuf fq = { 0 }, fk = { 0 }, fv = { 0 }, fpk = { 0 }, fpv = { 0 }, fm = { 0 }, fy = { 0 }, fqk = { 0 };
    cort_status *st = at_float_in(ctx, 0, &fq);
    if (!st) st = at_float_in(ctx, 1, &fk);
    if (!st) st = at_float_in(ctx, 2, &fv);
    if (!st) st = at_float_in(ctx, 4, &fpk);
    if (!st) st = at_float_in(ctx, 5, &fpv);
    if (!st && mask && mask->type != CORT_TYPE_BOOL) st = at_float_in(ctx, 3, &fm);
    if (!st) st = tx_fbuf_out(ctx, y, &fy);
    if (!st && qko) st = tx_fbuf_out(ctx, qko, &fqk);
    if (st) goto done;
    j.q = fq.p; j.kx = fk.p; j.vx = fv.p; j.pk = fpk.p; j.pv = fpv.p;
    j.mf = fm.p;
    j.mb = mask && mask->type == CORT_TYPE_BOOL ? mask->data : NULL;
    j.y = fy.p; j.qk = fqk.p;
    st = at_execute(ctx, &j);
    if (st) goto done;
    /* present caches: past rows then the new ones, in the 4-D layout */
    if (pko || pvo) {
        for (size_t b = 0; b < d.B; b++)
            for (size_t h = 0; h < d.Hkv; h++)
                for (size_t r = 0; r < d.L; r++) {
                    const size_t esz = cort_type_size(t);
                    if (pko) {
                        size_t src_off;
                        const cort_value *src;
                        if (r < d.P) { src = pk; src_off = ((b * d.Hkv + h) * d.P + r) * d.D; }
                        else if (d.rank == 4) { src = kx; src_off = ((b * d.Hkv + h) * d.Skv + r - d.P) * d.D; }
                        else { src = kx; src_off = (b * d.Skv + r - d.P) * d.Hkv * d.D + h * d.D; }
                        memcpy((char *)pko->data + ((b * d.Hkv + h) * d.L + r) * d.D * esz,
                               (const char *)src->data + src_off * esz, d.D * esz);
                    }
                    if (pvo) {
                        size_t src_off;
                        const cort_value *src;
                        if (r < d.P) { src = pv; src_off = ((b * d.Hkv + h) * d.P + r) * d.Dv; }
                        else if (d.rank == 4) { src = vx; src_off = ((b * d.Hkv + h) * d.Skv + r - d.P) * d.Dv; }
                        else { src = vx; src_off = (b * d.Skv + r - d.P) * d.Hkv * d.Dv + h * d.Dv; }
                        memcpy((char *)pvo->data + ((b * d.Hkv + h) * d.L + r) * d.Dv * esz,
                               (const char *)src->data + src_off * esz, d.Dv * esz);
                    }
                }
    }
    nn_fbuf_commit(&fy, y);
    if (qko) nn_fbuf_commit(&fqk, qko);
done:
    tx_fbuf_free(ctx, &fq); tx_fbuf_free(ctx, &fk); tx_fbuf_free(ctx, &fv); tx_fbuf_free(ctx, &fpk); tx_fbuf_free(ctx, &fpv);
    tx_fbuf_free(ctx, &fm); tx_fbuf_free(ctx, &fy); tx_fbuf_free(ctx, &fqk);
    return st;
}

#define AT_TYPES (CORT_TBIT(CORT_TYPE_FLOAT) | CORT_TBIT(CORT_TYPE_FLOAT16) | CORT_TBIT(CORT_TYPE_BFLOAT16) | \
                  CORT_TBIT(CORT_TYPE_DOUBLE))

const cort_op_def nn_op_attention = { .name = "Attention", .domain = "", .min_opset = 23,
    .max_opset = CORT_OPSET_MAX, .types = AT_TYPES, .type_input = 0, .init = at_init, .free_state = at_free,
    .infer = at_infer, .run = at_run };

/* ---- ai.onnx.preview FlexAttention-1 ----
 * softmax(score_mod(scale * Q K^T)) -> prob_mod -> times V, rank-4 inputs, query head h reading
 * KV head h / (q_heads / kv_heads). The modifiers are subgraphs over the whole [B, Hq, L, S]
 * tensor, so with one of them the scores are materialized and the subgraphs run between plain
 * loops; without them it is Attention's engine. */
typedef struct flex_state {
    at_state at;                    /* scale; no mask, causal, softcap or qk output */
    cort_subgraph *score_mod, *prob_mod;
} flex_state;

static void flex_free(void *state) {
    flex_state *s = state;
    if (!s) return;
    cort_subgraph_free(s->score_mod);
    cort_subgraph_free(s->prob_mod);
    cort_free(s);
}

static cort_status *flex_init(const cort_node *node, void **state) {
    flex_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    s->at.has_scale = cort_attr_get(node, "scale") != NULL;
    s->at.scale = cort_attr_float(node, "scale", 1.0f);
    const cort_graph_ir *sm = cort_attr_graph(node, "score_mod"), *pm = cort_attr_graph(node, "prob_mod");
    cort_status *st = NULL;
    if (sm) st = cort_subgraph_compile(node, sm, &s->score_mod);
    if (!st && pm) st = cort_subgraph_compile(node, pm, &s->prob_mod);
    if (!st && ((s->score_mod && (cort_subgraph_input_count(s->score_mod) != 1 ||
                                  cort_subgraph_output_count(s->score_mod) != 1)) ||
                (s->prob_mod && (cort_subgraph_input_count(s->prob_mod) != 1 ||
                                 cort_subgraph_output_count(s->prob_mod) != 1))))
        st = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "score_mod and prob_mod must have one input and one "
                             "output");
    if (st) { flex_free(s); return st; }
    *state = s;
    return NULL;
}

static cort_status *flex_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *q = &ctx->inputs[0];
    nn_infer_type(ctx, 0, q->elem);
    if (ctx->n_inputs < 3) return NULL;
    const cort_tinfo *v = &ctx->inputs[2];
    if (q->rank == 4 && v->rank == 4) {
        int64_t y[4] = { q->dims[0], q->dims[1], q->dims[2], v->dims[3] };
        cort_tinfo_tensor_shape(&ctx->outputs[0], q->elem, y, 4);
    }
    return NULL;
}

/* Runs a one-in, one-out modifier on a float [B, H, L, S] buffer in place (through a tensor of
 * the query's type). */
static cort_status *flex_apply(cort_kernel_ctx *ctx, const cort_subgraph *g, cort_type t, const int64_t *dims,
                               float *buf, size_t n) {
    cort_value *in = NULL, *out = NULL;
    CORT_TRY(cort_kernel_tensor(ctx, t, dims, 4, &in));
    nn_f32_to_type(buf, in->data, t, n);
    cort_status *st = cort_subgraph_run(ctx, g, &in, 1, &out, 1);
    if (!st && (!out || out->kind != CORT_VKIND_TENSOR || out->count != n || !rd_is_f32ish(out->type) ||
                out->type == CORT_TYPE_DOUBLE))
        st = out && out->type == CORT_TYPE_DOUBLE && out->count == n ? NULL
            : cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "a modifier subgraph returned %s with %zu elements, "
                              "expected a float tensor of %zu", out ? cort_type_name(out->type) : "nothing",
                              out ? out->count : 0, n);
    if (!st) nn_type_to_f32(out->data, out->type, buf, n);
    cort_value_release(in);
    cort_value_release(out);
    return st;
}

typedef struct flex_job {
    const at_dims *d;
    const float *q, *k, *v;
    float *s, *y;
    float scale;
    int stage;   /* 0: scores, 1: softmax, 2: P V */
} flex_job;

static void flex_rows(void *arg, size_t begin, size_t end) {
    const flex_job *j = arg;
    const at_dims *d = j->d;
    const size_t group = d->Hq / d->Hkv;
    for (size_t r = begin; r < end; r++) {
        const size_t bh = r / d->Sq, b = bh / d->Hq, kvh = (bh % d->Hq) / group;
        float *s = j->s + r * d->L;
        if (j->stage == 0) {
            const float *q = j->q + r * d->D;
            for (size_t c = 0; c < d->L; c++) {
                const float *k = j->k + ((b * d->Hkv + kvh) * d->L + c) * d->D;
                float acc = 0.0f;
                for (size_t e = 0; e < d->D; e++) acc += q[e] * k[e];
                s[c] = acc * j->scale;
            }
        } else if (j->stage == 1) {
            const float mx = d->L ? at_row_max(s, d->L) : -INFINITY;
            if (mx == -INFINITY) { memset(s, 0, d->L * sizeof(float)); continue; }
            const float inv = 1.0f / at_exp_shift_sum(s, s, d->L, mx);
            for (size_t c = 0; c < d->L; c++) s[c] *= inv;
        } else {
            float *y = j->y + r * d->Dv;
            memset(y, 0, d->Dv * sizeof(float));
            for (size_t c = 0; c < d->L; c++) {
                const float *v = j->v + ((b * d->Hkv + kvh) * d->L + c) * d->Dv, p = s[c];
                for (size_t e = 0; e < d->Dv; e++) y[e] += p * v[e];
            }
        }
    }
}

static cort_status *flex_run(cort_kernel_ctx *ctx) {
    const flex_state *s = ctx->state;
    static const char *const names[3] = { "Q", "K", "V" };
    for (size_t i = 0; i < 3; i++) {
        const cort_value *v = nn_opt_input(ctx, i);
        if (!v || v->kind != CORT_VKIND_TENSOR || v->rank != 4 || v->type != ctx->inputs[0]->type)
            return at_bad(ctx, i, names[i], "a 4-D tensor of Q's type");
    }
    const cort_value *q = ctx->inputs[0], *k = ctx->inputs[1], *v = ctx->inputs[2];
    if (!rd_is_f32ish(q->type) && q->type != CORT_TYPE_DOUBLE) return at_bad(ctx, 0, "Q", "a float tensor");
    at_dims d = { (size_t)q->shape[0], (size_t)q->shape[1], (size_t)k->shape[1], (size_t)q->shape[2],
                  (size_t)k->shape[2], 0, (size_t)k->shape[2], (size_t)q->shape[3], (size_t)v->shape[3], 4 };
    if (k->shape[0] != q->shape[0] || v->shape[0] != q->shape[0] || k->shape[3] != q->shape[3] ||
        v->shape[1] != k->shape[1] || v->shape[2] != k->shape[2])
        return at_bad(ctx, 1, "K", "[batch, kv_heads, kv_len, head_size] matching Q and V");
    if (!d.Hkv || d.Hq % d.Hkv)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "%zu query heads are not a multiple of %zu "
                               "key/value heads", d.Hq, d.Hkv);
    int64_t yd[4] = { (int64_t)d.B, (int64_t)d.Hq, (int64_t)d.Sq, (int64_t)d.Dv };
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, q->type, yd, 4, &y));
    nn_fbuf fq = { 0 }, fk = { 0 }, fv = { 0 }, fy = { 0 };
    cort_status *st = tx_fbuf_in(ctx, q, &fq);
    if (!st) st = tx_fbuf_in(ctx, k, &fk);
    if (!st) st = tx_fbuf_in(ctx, v, &fv);
    if (!st) st = tx_fbuf_out(ctx, y, &fy);
    const float scale = s->at.has_scale ? s->at.scale : (float)(1.0 / sqrt((double)(d.D ? d.D : 1)));
    if (!st && !s->score_mod && !s->prob_mod) {
        at_job j;
        memset(&j, 0, sizeof j);
        j.s = &s->at; j.d = d; j.scale = scale; j.mlen = d.L;
        j.q = fq.p; j.kx = fk.p; j.vx = fv.p; j.y = fy.p;
        st = at_execute(ctx, &j);
    } else if (!st) {
        const size_t rows = d.B * d.Hq * d.Sq;
        size_t n = 0;
        float *sb = NULL;
        if (cort_mul_size_ovf(rows, d.L, &n) || n > SIZE_MAX / sizeof(float) - 1 ||
            !(sb = cort_kernel_scratch(ctx, (n + 1) * sizeof(float))))
            st = cort_error_oom();
        const int64_t sd[4] = { (int64_t)d.B, (int64_t)d.Hq, (int64_t)d.Sq, (int64_t)d.L };
        flex_job fj = { &d, fq.p, fk.p, fv.p, sb, fy.p, scale, 0 };
        cort_pool *pool = rows * d.L * (d.D + d.Dv) < 32768 ? NULL : ctx->pool;
        if (!st) cort_parallel_for(pool, rows, 1, flex_rows, &fj);
        if (!st && s->score_mod) st = flex_apply(ctx, s->score_mod, q->type, sd, sb, n);
        fj.stage = 1;
        if (!st) cort_parallel_for(pool, rows, 1, flex_rows, &fj);
        if (!st && s->prob_mod) st = flex_apply(ctx, s->prob_mod, q->type, sd, sb, n);
        fj.stage = 2;
        if (!st) cort_parallel_for(pool, rows, 1, flex_rows, &fj);
        cort_kernel_scratch_free(ctx, sb);
    }
    if (!st) nn_fbuf_commit(&fy, y);
    tx_fbuf_free(ctx, &fq); tx_fbuf_free(ctx, &fk); tx_fbuf_free(ctx, &fv); tx_fbuf_free(ctx, &fy);
    return st;
}

const cort_op_def nn_op_flex_attention = { .name = "FlexAttention", .domain = "ai.onnx.preview", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = AT_TYPES, .type_input = 0, .init = flex_init, .free_state = flex_free,
    .infer = flex_infer, .run = flex_run };
