/* MatMul, Gemm, MatMulInteger, QLinearMatMul. Float types run on the packed SGEMM; integer MatMul
 * and Gemm use exact 64-bit accumulation; MatMulInteger and QLinearMatMul the exact int GEMM
 * (kernels/int_gemm.h). */
#include <math.h>
#include <string.h>
#include "matmul.h"
#include "../../kernels/gemm.h"
#include "../../kernels/int_gemm.h"
#include "../quant/quant.h"
#include "../../../../core/alloc.h"
#include "../../../../core/prepacked.h"

static int64_t bdim(const int64_t *dims, int rank, int nb, int i) {   /* batch dim i of nb (right-aligned) */
    int j = i - (nb - rank);
    return j >= 0 ? dims[j] : 1;
}

cort_status *nn_mm_shape_make(const cort_kernel_ctx *ctx, size_t ai, size_t bi, nn_mm_shape *s) {
    const cort_value *a = ctx->inputs[ai], *b = ctx->inputs[bi];
    char sa[160], sb[160];
    if (a->rank < 1 || b->rank < 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs have shapes %s and %s; MatMul needs "
                               "rank >= 1", nn_shape(a, sa, sizeof sa), nn_shape(b, sb, sizeof sb));
    memset(s, 0, sizeof *s);
    int ra = (int)a->rank, rb = (int)b->rank;
    s->M = ra == 1 ? 1 : (size_t)a->shape[ra - 2];
    s->K = (size_t)a->shape[ra - 1];
    size_t kb = rb == 1 ? (size_t)b->shape[0] : (size_t)b->shape[rb - 2];
    s->N = rb == 1 ? 1 : (size_t)b->shape[rb - 1];
    if (kb != s->K)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu has shape %s and input %zu has shape %s: inner dimensions %zu and %zu differ",
                               ai, nn_shape(a, sa, sizeof sa), bi, nn_shape(b, sb, sizeof sb), s->K, kb);
    int na = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    int nb = na > nbb ? na : nbb;
    s->nb = (size_t)nb;
    s->batch = 1;
    for (int i = 0; i < nb; i++) {
        int64_t da = bdim(a->shape, na, nb, i), db = bdim(b->shape, nbb, nb, i);
        if (da != db && da != 1 && db != 1)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %zu has shape %s and input %zu has shape %s: batch dimensions cannot be "
                                   "broadcast", ai, nn_shape(a, sa, sizeof sa), bi, nn_shape(b, sb, sizeof sb));
        s->bdims[i] = da == 1 ? db : da;
        s->batch *= (size_t)s->bdims[i];
    }
    size_t sta = 1, stb = 1;
    for (int i = nb - 1; i >= 0; i--) {
        int64_t da = bdim(a->shape, na, nb, i), db = bdim(b->shape, nbb, nb, i);
        s->astride[i] = da == 1 ? 0 : sta;
        s->bstride[i] = db == 1 ? 0 : stb;
        sta *= (size_t)da;
        stb *= (size_t)db;
    }
    for (int i = 0; i < nb; i++) s->ydims[s->yrank++] = s->bdims[i];
    if (ra > 1) s->ydims[s->yrank++] = (int64_t)s->M;
    if (rb > 1) s->ydims[s->yrank++] = (int64_t)s->N;
    return NULL;
}

void nn_mm_batch(const nn_mm_shape *s, size_t b, size_t *a_mat, size_t *b_mat) {
    size_t am = 0, bm = 0;
    for (size_t i = s->nb; i-- > 0;) {
        size_t d = (size_t)s->bdims[i], idx = b % d;
        b /= d;
        am += idx * s->astride[i];
        bm += idx * s->bstride[i];
    }
    *a_mat = am;
    *b_mat = bm;
}

void nn_mm_infer(cort_infer_ctx *ctx, size_t ai, size_t bi, cort_type t) {
    nn_infer_type(ctx, 0, t);
    if (ctx->n_inputs <= ai || ctx->n_inputs <= bi) return;
    const cort_tinfo *a = &ctx->inputs[ai], *b = &ctx->inputs[bi];
    if (a->rank < 1 || b->rank < 1) return;
    int na = a->rank > 2 ? a->rank - 2 : 0, nbb = b->rank > 2 ? b->rank - 2 : 0, nb = na > nbb ? na : nbb;
    int64_t dims[CORT_MAX_RANK];
    int r = 0;
    for (int i = 0; i < nb; i++) {
        int64_t da = bdim(a->dims, na, nb, i), db = bdim(b->dims, nbb, nb, i);
        dims[r++] = da == 1 ? db : db == 1 ? da : da >= 0 ? da : db;
    }
    if (a->rank > 1) dims[r++] = a->dims[a->rank - 2];
    if (b->rank > 1) dims[r++] = b->dims[b->rank - 1];
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, dims, r);
}

/* ---- constant B packed at creation (MatMul, Gemm) ---- */
typedef struct mm_state {
    nn_gemm_packed bpack;   /* data NULL when B is not a constant float matrix */
    const cort_value *bsrc; /* the constant the pack was made from (it lives as long as the graph) */
    int64_t        bdims[2];
    int            shared;   /* bpack.data belongs to the session's prepacked-weights container */
} mm_state;

void nn_mm_free_packed_b(void *state) {
    mm_state *s = state;
    if (!s) return;
    if (!s->shared) nn_gemm_packed_free(&s->bpack);
    cort_free(s);
}

static void mm_pack_free(void *obj) {
    nn_gemm_packed_free(obj);
    cort_free(obj);
}

/* B still in the model file at a misaligned offset (b->ctx: its bytes; b->ld, b->trans as for a
 * plain B): the region is copied row by row through a small aligned buffer into the panel, so
 * packing needs no aligned copy of the whole weight (bert_encoder's peak RSS 347.6 -> 339.8 MB). */
static void pack_b_bytes(const nn_gemm_b *b, size_t k0, size_t kc, size_t j0, size_t ncols, size_t nr, float *dst) {
    const unsigned char *src = b->ctx;
    if (!b->trans) {
        for (size_t p = 0; p < kc; p++, dst += nr) {
            memcpy(dst, src + ((k0 + p) * b->ld + j0) * sizeof(float), ncols * sizeof(float));
            for (size_t j = ncols; j < nr; j++) dst[j] = 0.0f;
        }
        return;
    }
    float row[NN_GEMM_KC];
    for (size_t j = 0; j < nr; j++) {
        if (j < ncols) memcpy(row, src + ((j0 + j) * b->ld + k0) * sizeof(float), kc * sizeof(float));
        for (size_t p = 0; p < kc; p++) dst[p * nr + j] = j < ncols ? row[p] : 0.0f;
    }
}

/* Packs input 1 when it is a constant float matrix; trans: Gemm's transB. */
cort_status *nn_mm_init_packed_b(const cort_node *node, void **state, int trans) {
    mm_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    *state = s;
    /* B may still be in the model file: packed from cort_node_const_data, never copied for good */
    const cort_value *b = cort_node_const_input_lazy(node, 1);
    if (!b || b->kind != CORT_VKIND_TENSOR || b->type != CORT_TYPE_FLOAT || b->rank != 2 || b->count == 0 ||
        (!b->data && !b->lazy_src))
        return NULL;
    const size_t K = (size_t)b->shape[trans ? 1 : 0], N = (size_t)b->shape[trans ? 0 : 1];
    cort_status *st = NULL;
    nn_gemm_b gb = { pack_b_bytes, NULL, trans ? K : N, trans, b->lazy_src };
    const void *bytes = b->lazy_src;
    if (!b->lazy_src) {
        const void *bd;
        st = cort_node_const_data(node, 1, &bd);
        if (st) {
            nn_mm_free_packed_b(s);
            *state = NULL;
            return st;
        }
        gb = nn_gemm_b_matrix(bd, trans ? K : N, trans);
        bytes = bd;
    }
    cort_prepacked_weights *pw = cort_node_prepacked(node);
    cort_prepack_key key;
    const nn_gemm_packed *got = NULL;
    if (pw) {
        /* the layout depends on the bytes, K, N, transB and the micro-kernel of the ISA level */
        const nn_gemm_kernel *k = nn_gemm_best_kernel();
        memset(&key, 0, sizeof key);
        cort_prepack_hash(bytes, b->count * sizeof(float), &key);
        key.kind = CORT_PREPACK_KIND_MATMUL_B;
        key.params[0] = K;
        key.params[1] = N;
        key.params[2] = (uint64_t)trans;
        key.params[3] = (uint64_t)(uintptr_t)k;
        key.params[4] = k ? (uint64_t)k->isa : 0;
        got = cort_prepack_find(pw, &key);
    }
    if (!got) {
        cort_huge_arena *prev = pw ? cort_huge_arena_bind(NULL) : NULL;   /* shared packs outlive the session */
        st = nn_gemm_pack_b_par(cort_node_init_pool(node), NULL, K, N, &gb, &s->bpack);
        if (pw) cort_huge_arena_bind(prev);
        if (st) {
            nn_mm_free_packed_b(s);
            *state = NULL;
            return st;
        }
        nn_gemm_packed *mine = pw ? cort_malloc(sizeof *mine) : NULL;
        if (mine) {   /* else (out of memory for the entry) the session keeps its pack to itself */
            *mine = s->bpack;
            memset(&s->bpack, 0, sizeof s->bpack);
            if (!(got = cort_prepack_insert(pw, &key, mine, mm_pack_free))) {
                nn_mm_free_packed_b(s);
                *state = NULL;
                return cort_error_oom();
            }
        }
    }
    if (got) {
        s->bpack = *got;
        s->shared = 1;
    }
    s->bsrc = b;
    s->bdims[0] = b->shape[0];
    s->bdims[1] = b->shape[1];
    cort_node_const_input_packed(node, 1);   /* runs read the packed copy */
    return NULL;
}

static cort_status *matmul_init(const cort_node *node, void **state) { return nn_mm_init_packed_b(node, state, 0); }
static cort_status *gemm_init(const cort_node *node, void **state) {
    return nn_mm_init_packed_b(node, state, cort_attr_int(node, "transB", 0) != 0);
}

/* The prepacked B when it was made from exactly this input, else NULL (pack per run). */
const nn_gemm_packed *nn_mm_packed_b(const cort_kernel_ctx *ctx) {
    const mm_state *s = ctx->state;
    const cort_value *b = ctx->inputs[1];
    if (!s || !s->bpack.data || b != s->bsrc || b->type != CORT_TYPE_FLOAT || b->rank != 2 ||
        b->shape[0] != s->bdims[0] || b->shape[1] != s->bdims[1])
        return NULL;
    return &s->bpack;
}

/* ---- MatMul ---- */
static cort_status *matmul_infer(cort_infer_ctx *ctx) {
    nn_mm_infer(ctx, 0, 1, ctx->inputs[0].elem);
    return NULL;
}

/* Exact integer matmul of one matrix pair (wrapping arithmetic as the int types do). */
static void imatmul(const void *a, size_t aoff, const void *b, size_t boff, void *y, size_t yoff, cort_type t,
                    size_t M, size_t N, size_t K) {
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            uint64_t acc = 0;
            for (size_t k = 0; k < K; k++)
                acc += (uint64_t)cort_load_i64(a, t, aoff + i * K + k) * (uint64_t)cort_load_i64(b, t, boff + k * N + j);
            cort_store_i64(y, t, yoff + i * N + j, (int64_t)acc);
        }
}

static cort_status *matmul_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "A", 1, -1));
    CORT_TRY(nn_check_input(ctx, 1, "B", 1, -1));
    const cort_value *a = ctx->inputs[0], *b = ctx->inputs[1];
    if (a->type != b->type)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'A' and 'B' have types %s and %s",
                               cort_type_name(a->type), cort_type_name(b->type));
    nn_mm_shape s;
    CORT_TRY(nn_mm_shape_make(ctx, 0, 1, &s));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, a->type, s.ydims, s.yrank, &y));
    const size_t M = s.M, N = s.N, K = s.K;
    if (!cort_type_is_float(a->type)) {
        for (size_t bt = 0; bt < s.batch; bt++) {
            size_t am, bm;
            nn_mm_batch(&s, bt, &am, &bm);
            imatmul(a->data, am * M * K, b->data, bm * K * N, y->data, bt * M * N, a->type, M, N, K);
        }
        return NULL;
    }
    nn_fbuf fa = { 0 }, fb = { 0 }, fy = { 0 };
    cort_status *st = nn_fbuf_in(a, &fa);
    if (!st) st = nn_fbuf_in(b, &fb);
    if (!st) st = nn_fbuf_out(y, &fy);
    /* B shared by every batch and A contiguous: one tall gemm */
    int fold = s.batch > 1 && b->rank <= 2;
    for (size_t i = 0; i < s.nb && fold; i++) if (s.astride[i] == 0) fold = 0;
    const nn_act act = nn_act_of(ctx->node);   /* activation fused by the optimizer */
    nn_gemm_opts o = { NULL, nn_mm_packed_b(ctx), NULL, &act, ctx };
    if (!st && fold) {
        nn_gemm_b gb = nn_gemm_b_matrix(fb.p, N, 0);
        st = nn_sgemm_opt(ctx->pool, NULL, s.batch * M, N, K, 1.0f, fa.p, K, 0, &gb, 0.0f, fy.p, N, &o);
    } else {
        for (size_t bt = 0; bt < s.batch && !st; bt++) {
            size_t am, bm;
            nn_mm_batch(&s, bt, &am, &bm);
            nn_gemm_b gb = nn_gemm_b_matrix(fb.p ? fb.p + bm * K * N : NULL, N, 0);   /* NULL: packed, in the file */
            o.bpack = bm == 0 ? nn_mm_packed_b(ctx) : NULL;
            st = nn_sgemm_opt(ctx->pool, NULL, M, N, K, 1.0f, fa.p + am * M * K, K, 0, &gb, 0.0f, fy.p + bt * M * N, N,
                              &o);
        }
    }
    if (!st) nn_fbuf_commit(&fy, y);
    nn_fbuf_free(&fa); nn_fbuf_free(&fb); nn_fbuf_free(&fy);
    return st;
}

/* ---- Gemm ---- */
static cort_status *gemm_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *a = &ctx->inputs[0], *b = &ctx->inputs[1];
    nn_infer_type(ctx, 0, a->elem);
    if (a->rank != 2 || b->rank != 2) return NULL;
    int ta = cort_attr_int(ctx->node, "transA", 0) != 0, tb = cort_attr_int(ctx->node, "transB", 0) != 0;
    int64_t dims[2] = { a->dims[ta ? 1 : 0], b->dims[tb ? 0 : 1] };
    cort_tinfo_tensor_shape(&ctx->outputs[0], a->elem, dims, 2);
    return NULL;
}

static cort_status *gemm_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "A", 2, 2));
    CORT_TRY(nn_check_input(ctx, 1, "B", 2, 2));
    const cort_value *a = ctx->inputs[0], *b = ctx->inputs[1], *c = nn_opt_input(ctx, 2);
    const int ta = cort_attr_int(ctx->node, "transA", 0) != 0, tb = cort_attr_int(ctx->node, "transB", 0) != 0;
    const float alpha = cort_attr_float(ctx->node, "alpha", 1.0f), beta = cort_attr_float(ctx->node, "beta", 1.0f);
    const size_t M = (size_t)a->shape[ta ? 1 : 0], K = (size_t)a->shape[ta ? 0 : 1];
    const size_t KB = (size_t)b->shape[tb ? 1 : 0], N = (size_t)b->shape[tb ? 0 : 1];
    char sa[160], sb[160];
    if (K != KB || a->type != b->type)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'A' is %s%s (transA=%d) and input 1 'B' is %s%s (transB=%d): inner dimensions "
                               "%zu and %zu", cort_type_name(a->type), nn_shape(a, sa, sizeof sa), ta,
                               cort_type_name(b->type), nn_shape(b, sb, sizeof sb), tb, K, KB);
    int64_t ydims[2] = { (int64_t)M, (int64_t)N }, cstr[2] = { 0, 0 };
    if (c) {
        if (c->kind != CORT_VKIND_TENSOR || c->rank > 2 || c->type != a->type)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'C' is %s%s, expected %s "
                                   "broadcastable to [%zu,%zu]", cort_type_name(c->type), nn_shape(c, sa, sizeof sa),
                                   cort_type_name(a->type), M, N);
        for (size_t i = 0; i < c->rank; i++) {
            int64_t d = c->shape[c->rank - 1 - i], want = ydims[1 - i];
            if (d != 1 && d != want)
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                       "input 2 'C' has shape %s, not broadcastable to [%zu,%zu]",
                                       nn_shape(c, sa, sizeof sa), M, N);
        }
        cort_broadcast_strides(ydims, 2, c->shape, c->rank, cstr);
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, a->type, ydims, 2, &y));
    if (!cort_type_is_float(a->type)) {
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                uint64_t acc = 0;
                for (size_t k = 0; k < K; k++)
                    acc += (uint64_t)cort_load_i64(a->data, a->type, ta ? k * M + i : i * K + k) *
                           (uint64_t)cort_load_i64(b->data, b->type, tb ? j * K + k : k * N + j);
                double r = (double)alpha * (double)(int64_t)acc;
                if (c) r += (double)beta * (double)cort_load_i64(c->data, c->type, (size_t)(i * cstr[0] + j * cstr[1]));
                cort_store_i64(y->data, y->type, i * N + j, (int64_t)r);
            }
        return NULL;
    }
    nn_fbuf fa = { 0 }, fb = { 0 }, fc = { 0 }, fy = { 0 };
    cort_status *st = nn_fbuf_in(a, &fa);
    if (!st) st = nn_fbuf_in(b, &fb);
    if (!st && c) st = nn_fbuf_in(c, &fc);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (!st) {
        float gbeta = 0.0f;
        if (c && beta != 0.0f && M && N) {
            for (size_t i = 0; i < M; i++)
                for (size_t j = 0; j < N; j++) fy.p[i * N + j] = fc.p[i * cstr[0] + j * cstr[1]];
            gbeta = beta;
        }
        nn_gemm_b gb = nn_gemm_b_matrix(fb.p, tb ? K : N, tb);
        const nn_act act = nn_act_of(ctx->node);   /* activation fused by the optimizer */
        nn_gemm_opts o = { NULL, nn_mm_packed_b(ctx), NULL, &act, ctx };
        st = nn_sgemm_opt(ctx->pool, NULL, M, N, K, alpha, fa.p, ta ? M : K, ta, &gb, gbeta, fy.p, N, &o);
        if (!st) nn_fbuf_commit(&fy, y);
    }
    nn_fbuf_free(&fa); nn_fbuf_free(&fb); nn_fbuf_free(&fc); nn_fbuf_free(&fy);
    return st;
}

/* ---- MatMulInteger / QLinearMatMul ---- */
/* Op state: B (input bi) packed for the int GEMM at creation when it and its zero point (input
 * bzi, if any) are constants and B is a matrix; used while a run's inputs are those very values. */
typedef struct imm_state {
    const cort_value *bsrc, *bzsrc;
    const nn_igemm_kernel *k;
    int16_t *bpack;
} imm_state;

void nn_imm_free(void *p) {
    imm_state *s = p;
    if (s) cort_free(s->bpack);
    cort_free(s);
}

cort_status *nn_imm_init_packed(const cort_node *node, void **state, size_t bi, size_t bzi) {
    return nn_imm_init_packed_t(node, state, bi, bzi, 0);
}

cort_status *nn_imm_init_packed_t(const cort_node *node, void **state, size_t bi, size_t bzi, int trans) {
    *state = NULL;
    /* the same lazy lookups as MatMul's pack, so the run's input pointers compare equal */
    const cort_value *b = cort_node_const_input_lazy(node, bi);
    const int has_bz = node->n_inputs > bzi && node->in_slot[bzi] >= 0;
    const cort_value *bz = has_bz ? cort_node_const_input_lazy(node, bzi) : NULL;
    if (!b || b->kind != CORT_VKIND_TENSOR || b->rank != 2 || (!b->data && !b->lazy_src) || !nn_q_is_8bit(b->type) ||
        (has_bz && !bz))
        return NULL;
    const size_t K = (size_t)b->shape[trans ? 1 : 0], N = (size_t)b->shape[trans ? 0 : 1];
    if (bz && (bz->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(bz->type) || (bz->count != 1 && bz->count != N)))
        return NULL;   /* the run reports the bad zero point */
    const nn_igemm_kernel *k = nn_igemm_best_mm_kernel();
    const size_t n = nn_igemm_b_size(k, K, N);
    if (!n || n > SIZE_MAX / sizeof(int16_t)) return NULL;
    /* the zero point first: cort_node_const_data's buffer for a lazy constant is reused by the next call */
    uint8_t zp[1];
    uint8_t *zpv = NULL;
    const void *bd;
    if (bz) {
        CORT_TRY(cort_node_const_data(node, bzi, &bd));
        zpv = bz->count == 1 ? zp : cort_malloc(N);
        if (!zpv) return cort_error_oom();
        memcpy(zpv, bd, bz->count);
    }
    cort_status *st = cort_node_const_data(node, bi, &bd);
    if (st) { if (zpv != zp) cort_free(zpv); return st; }
    imm_state *s = cort_calloc(1, sizeof *s);
    int16_t *bp = cort_malloc(n * sizeof(int16_t));
    if (!s || !bp) { cort_free(s); cort_free(bp); if (zpv != zp) cort_free(zpv); return cort_error_oom(); }
    /* a transposed B ([N, K], Gemm's transB) is packed from an upright copy */
    uint8_t *up = trans ? cort_malloc(K * N + 1) : NULL;
    if (trans && !up) { cort_free(s); cort_free(bp); if (zpv != zp) cort_free(zpv); return cort_error_oom(); }
    for (size_t q = 0; up && q < K; q++)
        for (size_t n = 0; n < N; n++) up[q * N + n] = ((const uint8_t *)bd)[n * K + q];
    nn_i8_operand ob = { up ? up : bd, b->type == CORT_TYPE_INT8, N, zpv, bz && bz->type == CORT_TYPE_INT8,
                         bz ? bz->count : 0 };
    nn_igemm_pack_b(k, K, N, &ob, bp);
    cort_free(up);
    if (zpv != zp) cort_free(zpv);
    s->bsrc = b; s->bzsrc = bz; s->k = k; s->bpack = bp;
    *state = s;
    cort_node_const_input_packed(node, bi);   /* runs read the pack, not B (it may stay in the file) */
    return NULL;
}
static cort_status *mmint_init(const cort_node *node, void **state) { return nn_imm_init_packed(node, state, 1, 3); }
static cort_status *qlmm_init(const cort_node *node, void **state) { return nn_imm_init_packed(node, state, 3, 5); }

const int16_t *nn_imm_packed_b(const cort_kernel_ctx *ctx, size_t bi, size_t bzi, const nn_igemm_kernel **k) {
    const imm_state *s = ctx->state;
    const cort_value *b = ctx->inputs[bi], *bz = ctx->n_inputs > bzi ? ctx->inputs[bzi] : NULL;
    if (!s || s->bsrc != b || s->bzsrc != bz || b->rank != 2) return NULL;
    *k = s->k;
    return s->bpack;
}

/* acc[batch, M, N] = sum_k (a - azp[row]) * (b - bzp[col]) */
/* direct: acc is output 0 itself (int32), created here; else per-run scratch the caller frees. */
/* With epi, each finished tile goes to epi (its ctx's batch index set to the batch in progress) and
 * no int32 product is kept: *out is NULL. */
static cort_status *int_matmul(cort_kernel_ctx *ctx, size_t ai, size_t azi, size_t bi, size_t bzi, nn_mm_shape *s,
                               int direct, int32_t **out, nn_igemm_epi_fn epi, void *epi_ctx, size_t *epi_batch) {
    CORT_TRY(nn_check_input(ctx, ai, "A", 1, -1));
    CORT_TRY(nn_check_input(ctx, bi, "B", 1, -1));
    const cort_value *a = ctx->inputs[ai], *b = ctx->inputs[bi];
    const cort_value *az = nn_opt_input(ctx, azi), *bz = nn_opt_input(ctx, bzi);
    if (!nn_q_is_8bit(a->type) || !nn_q_is_8bit(b->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'A'/'B' have types %s/%s, expected int8 "
                               "or uint8", cort_type_name(a->type), cort_type_name(b->type));
    CORT_TRY(nn_mm_shape_make(ctx, ai, bi, s));
    char buf[160];
    if (az && az->count != 1 && az->count != s->M)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu 'a_zero_point' has shape %s, expected a scalar or [%zu]", azi,
                               nn_shape(az, buf, sizeof buf), s->M);
    if (bz && bz->count != 1 && bz->count != s->N)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu 'b_zero_point' has shape %s, expected a scalar or [%zu]", bzi,
                               nn_shape(bz, buf, sizeof buf), s->N);
    const size_t M = s->M, N = s->N, K = s->K;
    int32_t *acc = NULL, *own = NULL;
    if (epi) {
    } else if (direct) {
        cort_value *y;
        CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_INT32, s->ydims, s->yrank, &y));
        acc = y->data;
    } else {
        acc = own = cort_kernel_scratch(ctx, (s->batch * M * N + 1) * sizeof(int32_t));
        if (!acc) return cort_error_oom();
    }
    const nn_igemm_kernel *kk = nn_igemm_best_mm_kernel();
    const int16_t *pre = nn_imm_packed_b(ctx, bi, bzi, &kk);
    const size_t na = nn_igemm_a_size(kk, M, K), nbp = pre ? 1 : nn_igemm_b_size(kk, K, N);
    if (!na || !nbp || na > SIZE_MAX / 4 || nbp > SIZE_MAX / 4) {
        cort_kernel_scratch_free(ctx, own);
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "MatMul of [%zu, %zu] x [%zu, %zu] is too large",
                               M, K, K, N);
    }
    int16_t *ap = cort_kernel_scratch(ctx, na * sizeof(int16_t)), *bp = cort_kernel_scratch(ctx, nbp * sizeof(int16_t));
    const int16_t *bmat = pre ? pre : bp;
    if (!ap || !bp) {
        cort_kernel_scratch_free(ctx, own); cort_kernel_scratch_free(ctx, ap); cort_kernel_scratch_free(ctx, bp);
        return cort_error_oom();
    }
    nn_i8_operand oa = { a->data, a->type == CORT_TYPE_INT8, K, az ? az->data : NULL, az && az->type == CORT_TYPE_INT8,
                         az ? az->count : 0 };
    nn_i8_operand ob = { b->data, b->type == CORT_TYPE_INT8, N, bz ? bz->data : NULL, bz && bz->type == CORT_TYPE_INT8,
                         bz ? bz->count : 0 };
    size_t packed_bm = SIZE_MAX, packed_am = SIZE_MAX;
    for (size_t bt = 0; bt < s->batch; bt++) {
        size_t am, bm;
        nn_mm_batch(s, bt, &am, &bm);
        if (!pre && bm != packed_bm) {
            ob.data = (const uint8_t *)b->data + bm * K * N;
            nn_igemm_pack_b(kk, K, N, &ob, bp);
            packed_bm = bm;
        }
        if (am != packed_am) {
            oa.data = (const uint8_t *)a->data + am * M * K;
            nn_igemm_pack_a(kk, M, K, &oa, ap);
            packed_am = am;
        }
        if (epi) {
            *epi_batch = bt;
            nn_igemm_epi(ctx->pool, kk, M, N, K, ap, bmat, epi, epi_ctx);
        } else {
            nn_igemm(ctx->pool, kk, M, N, K, ap, bmat, acc + bt * M * N, N);
        }
    }
    cort_kernel_scratch_free(ctx, ap);
    cort_kernel_scratch_free(ctx, bp);
    *out = acc;
    return NULL;
}

static cort_status *mmint_infer(cort_infer_ctx *ctx) {
    nn_mm_infer(ctx, 0, 1, CORT_TYPE_INT32);
    return NULL;
}

static cort_status *mmint_run(cort_kernel_ctx *ctx) {
    nn_mm_shape s;
    int32_t *acc;
    return int_matmul(ctx, 0, 2, 1, 3, &s, 1, &acc, NULL, NULL, NULL);
}

/* inputs: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp */
static cort_status *qlmm_infer(cort_infer_ctx *ctx) {
    cort_type t = ctx->n_inputs > 7 && ctx->inputs[7].elem ? ctx->inputs[7].elem : ctx->inputs[0].elem;
    nn_mm_infer(ctx, 0, 3, t);
    return NULL;
}

/* QLinearMatMul-21 with float8 operands or output: a reference loop over decoded values (no integer
 * kernel applies); zero points are float8 values of the operand's type, the output saturates. */
static cort_status *qlmm_float8(cort_kernel_ctx *ctx) {
    const cort_value *a = ctx->inputs[0], *b = ctx->inputs[3], *yz = nn_opt_input(ctx, 7);
    const cort_value *az = nn_opt_input(ctx, 2), *bz = nn_opt_input(ctx, 5);
    for (size_t i = 0; i < 8; i += 3) {
        const cort_value *v = i == 0 ? a : i == 3 ? b : yz;
        if (v && !nn_q_is_8bit(v->type) && !cort_type_is_float8(v->type))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu has type %s, expected int8, uint8 "
                                   "or a float8 type", i, cort_type_name(v->type));
    }
    nn_mm_shape s;
    CORT_TRY(nn_mm_shape_make(ctx, 0, 3, &s));
    cort_type yt = yz ? yz->type : a->type;
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yt, s.ydims, s.yrank, &y));
    double mult = (double)nn_q_scale(ctx->inputs[1], 0) * nn_q_scale(ctx->inputs[4], 0) / nn_q_scale(ctx->inputs[6], 0);
    double za = az ? cort_load_f64(az->data, az->type, 0) : 0, zb = bz ? cort_load_f64(bz->data, bz->type, 0) : 0;
    double zy = yz ? cort_load_f64(yz->data, yz->type, 0) : 0;
    const size_t M = s.M, N = s.N, K = s.K;
    for (size_t bt = 0; bt < s.batch; bt++) {
        size_t am, bm;
        nn_mm_batch(&s, bt, &am, &bm);
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                double sum = 0;
                for (size_t k = 0; k < K; k++)
                    sum += (cort_load_f64(a->data, a->type, am * M * K + i * K + k) - za) *
                           (cort_load_f64(b->data, b->type, bm * K * N + k * N + j) - zb);
                size_t o = bt * M * N + i * N + j;
                double v = sum * mult;
                if (cort_type_is_float8(yt)) ((uint8_t *)y->data)[o] = cort_f64_to_small(v + zy, yt, 1, CORT_ROUND_UP);
                else nn_q_store(y, o, nn_q_add_sat(nn_q_round((float)v), (int32_t)zy));
            }
    }
    return NULL;
}

/* QLinearMatMul's requantization as an int GEMM epilogue: y = sat8(round(acc * m) + zp) with m one
 * multiplier for all (rq_tile, the conv's) or one per column (rq_tile_cols). */
typedef struct qlmm_epi {
    uint8_t *y;
    size_t N, MN;
    const float *m;
    int per_col;
    int32_t zp;
    int is_signed;
    const nn_qconv_ops *rq;
    size_t bt;         /* batch in progress */
    float mrep[64];    /* m[0] once per tile row (rq_tile takes a multiplier per row) */
} qlmm_epi;

static void qlmm_epi_tile(void *p, const int32_t *t, size_t ldt, size_t i0, size_t rows, size_t j0, size_t cols) {
    const qlmm_epi *e = p;
    uint8_t *y = e->y + e->bt * e->MN + i0 * e->N + j0;
    for (size_t c = 0; c < cols; c += 16) {   /* the requantizers take 16 columns at most; a tile may be wider */
        const size_t n = cols - c < 16 ? cols - c : 16;
        if (!e->per_col) e->rq->rq_tile(t + c, ldt, rows, n, NULL, e->mrep, e->zp, e->is_signed, y + c, e->N);
        else e->rq->rq_tile_cols(t + c, ldt, rows, n, e->m + j0 + c, e->zp, e->is_signed, y + c, e->N);
    }
}

static cort_status *qlmm_run(cort_kernel_ctx *ctx) {
    for (size_t i = 0; i < 8; i++)
        if (!nn_opt_input(ctx, i) && i != 2 && i != 5 && i != 7)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu is missing", i);
    const cort_value *as = ctx->inputs[1], *bs = ctx->inputs[4], *ys = ctx->inputs[6], *yz = nn_opt_input(ctx, 7);
    if (ctx->opset >= 21 && (cort_type_is_float8(ctx->inputs[0]->type) || cort_type_is_float8(ctx->inputs[3]->type) ||
                             (yz && cort_type_is_float8(yz->type)))) {
        const cort_value *az = nn_opt_input(ctx, 2), *bz = nn_opt_input(ctx, 5);
        if (as->count != 1 || bs->count != 1 || ys->count != 1 || (yz && yz->count != 1) || (az && az->count != 1) ||
            (bz && bz->count != 1))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "float8 QLinearMatMul needs scalar scales "
                                   "and zero points");
        return qlmm_float8(ctx);
    }
    nn_mm_shape s;
    CORT_TRY(nn_check_input(ctx, 0, "A", 1, -1));
    CORT_TRY(nn_check_input(ctx, 3, "B", 1, -1));
    CORT_TRY(nn_mm_shape_make(ctx, 0, 3, &s));
    /* scales and y's zero point: per tensor, or per row of A and Y / per column of B (as the spec
     * allows; quantizers write one weight scale per output column) */
    char buf[160];
    static const char *const pname[] = { "a_scale", "b_scale", "y_scale", "y_zero_point" };
    const cort_value *pv[4] = { as, bs, ys, yz };
    for (size_t q = 0; q < 4; q++) {
        const size_t want = q == 1 ? s.N : s.M;
        if (pv[q] && ((pv[q]->count != 1 && pv[q]->count != want) || pv[q]->rank > 1))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %d '%s' has shape %s, expected a scalar or [%zu] (one per %s)",
                                   q == 3 ? 7 : (int)q * 3 + 1, pname[q], nn_shape(pv[q], buf, sizeof buf), want,
                                   q == 1 ? "column of B" : "row of A");
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yz ? yz->type : ctx->inputs[0]->type, s.ydims, s.yrank, &y));
    float *mrow = cort_kernel_scratch(ctx, (s.N ? s.N : 1) * sizeof(float));
    if (!mrow) return cort_error_oom();
    const int row_varies = as->count > 1 || ys->count > 1 || (yz && yz->count > 1);
    if (!row_varies && nn_q_is_8bit(y->type)) {
        const float sa = nn_q_scale(as, 0), sy = nn_q_scale(ys, 0);
        for (size_t j = 0; j < (bs->count > 1 ? s.N : 1); j++) mrow[j] = sa * nn_q_scale(bs, j) / sy;
    }
    if (!row_varies && nn_q_is_8bit(y->type)) {
        /* one multiplier per column, or one in all: requantized tile by
         * tile as the GEMM finishes them, on the GEMM's threads, with no M x N int32 product in
         * memory */
        qlmm_epi e = { y->data, s.N, s.M * s.N, mrow, bs->count > 1, yz ? nn_q_load(yz, 0) : 0,
                       y->type == CORT_TYPE_INT8, nn_qconv_best_ops(), 0, { 0 } };
        for (size_t r = 0; r < sizeof e.mrep / sizeof e.mrep[0]; r++) e.mrep[r] = mrow[0];
        int32_t *none = NULL;
        cort_status *st = int_matmul(ctx, 0, 2, 3, 5, &s, 0, &none, qlmm_epi_tile, &e, &e.bt);
        cort_kernel_scratch_free(ctx, mrow);
        return st;
    }
    int32_t *acc = NULL;
    cort_status *st = int_matmul(ctx, 0, 2, 3, 5, &s, 0, &acc, NULL, NULL, NULL);
    if (!st) {
        const nn_qconv_ops *rq = bs->count == 1 && nn_q_is_8bit(y->type) ? nn_qconv_best_ops() : NULL;
        const size_t M = s.M, N = s.N;
        size_t o = 0;
        for (size_t bt = 0; bt < s.batch; bt++)
            for (size_t i = 0; i < M; i++) {
                if (row_varies || (bt == 0 && i == 0)) {
                    /* the per-tensor expression, element by element: (a_scale * b_scale) / y_scale */
                    const float sa = nn_q_scale(as, as->count > 1 ? i : 0), sy = nn_q_scale(ys, ys->count > 1 ? i : 0);
                    for (size_t j = 0; j < N; j++) mrow[j] = sa * nn_q_scale(bs, bs->count > 1 ? j : 0) / sy;
                }
                const int32_t zp = yz ? nn_q_load(yz, yz->count > 1 ? i : 0) : 0;
                if (rq && isfinite(mrow[0])) {   /* one multiplier per row: the conv's vector requantization */
                    rq->rq_row(acc + o, N, 0, mrow[0], zp, y->type == CORT_TYPE_INT8, (uint8_t *)y->data + o);
                    o += N;
                    continue;
                }
                if (y->type == CORT_TYPE_UINT8 || y->type == CORT_TYPE_INT8) {   /* per-column scales: no type switch per element */
                    const int32_t lo = y->type == CORT_TYPE_INT8 ? -128 : 0, hi = lo + 255;
                    uint8_t *yd = (uint8_t *)y->data + o;
                    for (size_t j = 0; j < N; j++) {
                        const int32_t v = nn_q_add_sat(nn_q_round_fast((float)acc[o + j] * mrow[j]), zp);
                        yd[j] = (uint8_t)(v < lo ? lo : v > hi ? hi : v);
                    }
                    o += N;
                    continue;
                }
                for (size_t j = 0; j < N; j++, o++)
                    nn_q_store(y, o, nn_q_add_sat(nn_q_round_fast((float)acc[o] * mrow[j]), zp));
            }
    }
    cort_kernel_scratch_free(ctx, mrow);
    cort_kernel_scratch_free(ctx, acc);
    return st;
}

#define NN_MM_TYPES (CORT_TMASK_FLOATS | CORT_TBIT(CORT_TYPE_INT32) | CORT_TBIT(CORT_TYPE_INT64) | \
                     CORT_TBIT(CORT_TYPE_UINT32) | CORT_TBIT(CORT_TYPE_UINT64))
const cort_op_def nn_op_matmul = {
    .name = "MatMul", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = NN_MM_TYPES, .type_input = 0,
    .init = matmul_init, .free_state = nn_mm_free_packed_b, .infer = matmul_infer, .run = matmul_run,
    .flags = CORT_OP_FUSES_ACTIVATION | CORT_OP_FUSES_SILU };
const cort_op_def nn_op_gemm = {
    .name = "Gemm", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = NN_MM_TYPES, .type_input = 0,
    .init = gemm_init, .free_state = nn_mm_free_packed_b, .infer = gemm_infer, .run = gemm_run,
    .flags = CORT_OP_FUSES_ACTIVATION | CORT_OP_FUSES_SILU };
const cort_op_def nn_op_matmul_integer = {
    .name = "MatMulInteger", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX, .types = 0, .type_input = 0,
    .init = mmint_init, .free_state = nn_imm_free, .infer = mmint_infer, .run = mmint_run };
const cort_op_def nn_op_qlinear_matmul = {
    .name = "QLinearMatMul", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX, .types = 0, .type_input = 0,
    .init = qlmm_init, .free_state = nn_imm_free, .infer = qlmm_infer, .run = qlmm_run };
