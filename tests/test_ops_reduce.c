/* Optimized vs reference kernels of the 'reduce' family: Reduce* (row / column / generic layouts,
 * float32 fast path vs the generic double path), Softmax / LogSoftmax / Hardmax (contiguous and
 * strided), Resize (separable passes and the nearest gather vs direct N-D evaluation) and Einsum
 * (permute + batched GEMM vs naive loops). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "core/value.h"
#include "providers/cpu/ops/reduce/reduce.h"
#include "providers/cpu/ops/nn/softmax.h"
#include "providers/cpu/ops/image/resize.h"
#include "providers/cpu/ops/math/einsum.h"
#include "providers/cpu/kernels/copy_ukernels.h"
#include "providers/cpu/kernels/isa_config.h"

static uint32_t rng_state = 4242;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}
/* The worst |a - b| / (1 + |b| + max|b|) (tu_close_err with rtol = atol_rel = atol_abs = 1, so
 * `err < t` is CHECK_CLOSE with TU_TOL(t, t, t)): reductions sum in another order than the reference;
 * the floor of 1 is the inputs' magnitude (O(1)), max|b| the outputs'. Equal infinities and NaNs
 * (empty-set means) match. */
static double max_rel_err(const float *a, const float *b, size_t n) {
    return tu_close_err(a, b, n, TU_TOL(1, 1, 1), NULL);
}
static cort_value *rand_tensor(const int64_t *dims, size_t rank) {
    cort_value *v = NULL;
    if (cort_tensor_alloc(CORT_TYPE_FLOAT, dims, rank, &v)) return NULL;
    for (size_t i = 0; i < v->count; i++) ((float *)v->data)[i] = frand() * 2;
    return v;
}

static void test_reduce(cort_pool *pool) {
    static const struct { size_t rank; int64_t dims[5]; uint8_t mask[5]; } cases[] = {
        {2, {64, 768}, {0, 1}},            /* LayerNorm: last axis */
        {3, {4, 33, 17}, {0, 0, 1}},
        {2, {300, 7}, {1, 0}},             /* column */
        {3, {5, 6, 7}, {1, 0, 1}},         /* generic, inner reduced with outer reduced */
        {3, {5, 6, 7}, {0, 1, 0}},         /* middle */
        {4, {2, 3, 4, 5}, {1, 1, 1, 1}},   /* all */
        {4, {2, 1, 4, 1}, {0, 1, 0, 1}},   /* size-1 reduced dims only */
        {3, {3, 0, 4}, {0, 1, 0}},         /* empty set */
        {1, {1000}, {1}},
        {5, {2, 3, 2, 3, 2}, {1, 0, 1, 0, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cort_value *x = rand_tensor(cases[c].dims, cases[c].rank);
        CHECK(x != NULL);
        if (!x) continue;
        int64_t od[5];
        size_t orank = 0;
        for (size_t i = 0; i < cases[c].rank; i++) if (!cases[c].mask[i]) od[orank++] = cases[c].dims[i];
        for (int k = RD_SUM; k <= RD_SUMSQ; k++) {
            if (k == RD_LOGSUM)   /* log of a sum of random signs: make the input positive */
                for (size_t i = 0; i < x->count; i++) ((float *)x->data)[i] = fabsf(((float *)x->data)[i]) + 0.01f;
            if (k == RD_PROD && x->count > 64) continue;   /* products of hundreds of values under/overflow */
            cort_value *a = NULL, *b = NULL;
            CHECK_OK(cort_tensor_alloc(CORT_TYPE_FLOAT, od, orank, &a));
            CHECK_OK(cort_tensor_alloc(CORT_TYPE_FLOAT, od, orank, &b));
            if (!a || !b) { cort_value_release(a); cort_value_release(b); continue; }
            rd_reduce_compute((rd_reduce_kind)k, x, cases[c].mask, a, (c & 1) ? pool : NULL, 1);
            rd_reduce_compute((rd_reduce_kind)k, x, cases[c].mask, b, NULL, 0);
            double err = max_rel_err(a->data, b->data, a->count);
            CHECK_MSG(err < 1e-4, "reduce kind %d case %zu: err %g", k, c, err);
            cort_value_release(a);
            cort_value_release(b);
        }
        cort_value_release(x);
    }
}

static void test_softmax(cort_pool *pool) {
    static const size_t cases[][3] = { {12 * 128, 128, 1}, {3, 5, 7}, {1, 1000, 1}, {4, 1, 9}, {2, 300, 130}, {7, 3, 1} };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c][0] * cases[c][1] * cases[c][2];
        float *x = malloc(n * sizeof *x), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        for (size_t i = 0; i < n; i++) x[i] = frand() * 10;
        for (int k = RD_SOFTMAX; k <= RD_HARDMAX; k++) {
            rd_softmax_f32((rd_softmax_kind)k, x, a, cases[c][0], cases[c][1], cases[c][2], pool, 1);
            rd_softmax_f32((rd_softmax_kind)k, x, b, cases[c][0], cases[c][1], cases[c][2], NULL, 0);
            double err = max_rel_err(a, b, n);
            CHECK_MSG(err < 1e-5, "softmax kind %d case %zu: err %g", k, c, err);
        }
        free(x); free(a); free(b);
    }
}

/* The 2x repeat kernel of nearest upsampling rows: every length 0..100 (full 32-output blocks and
 * every tail), sources allocated to exactly the floats it may read, a guard after the output. */
static void test_rep2(void) {
#ifdef NN_HAVE_X86_UKERNELS
    if (!nn_isa()->copy_rep2) return;
    for (size_t n = 0; n <= 100; n++) {
        const size_t m = (n + 1) / 2;
        float *src = malloc((m ? m : 1) * sizeof *src), *dst = malloc((n + 1) * sizeof *dst);
        for (size_t i = 0; i < m; i++) src[i] = (float)i + 0.5f;
        for (size_t i = 0; i <= n; i++) dst[i] = -1.0f;
        nn_isa()->copy_rep2(src, dst, n);
        int ok = dst[n] == -1.0f;
        for (size_t i = 0; i < n; i++) ok &= dst[i] == src[i / 2];
        CHECK_MSG(ok, "rep2 length %zu", n);
        free(src); free(dst);
    }
#endif
}

static void test_resize(cort_pool *pool) {
    static const struct { int mode, ctm, aa, excl; int64_t in[4], out[4]; } cases[] = {
        {RS_NEAREST, RS_HALF_PIXEL, 0, 0, {1, 3, 16, 16}, {1, 3, 32, 32}},
        {RS_NEAREST, RS_ASYMMETRIC, 0, 0, {2, 2, 9, 7}, {2, 2, 4, 3}},
        /* integer upsampling: repeated rows are copied, 2x columns doubled */
        {RS_NEAREST, RS_ASYMMETRIC, 0, 0, {1, 2, 5, 7}, {1, 2, 10, 14}},
        {RS_NEAREST, RS_ASYMMETRIC, 0, 0, {2, 3, 4, 5}, {2, 3, 12, 10}},
        {RS_NEAREST, RS_ASYMMETRIC, 0, 0, {1, 1, 3, 33}, {1, 1, 6, 66}},
        {RS_LINEAR, RS_HALF_PIXEL, 0, 0, {1, 3, 16, 16}, {1, 3, 32, 32}},
        {RS_LINEAR, RS_ALIGN_CORNERS, 0, 0, {2, 2, 9, 7}, {2, 2, 5, 11}},
        {RS_LINEAR, RS_HALF_PIXEL, 1, 0, {1, 2, 20, 20}, {1, 2, 7, 9}},
        {RS_CUBIC, RS_PYTORCH_HALF_PIXEL, 0, 1, {1, 1, 8, 8}, {1, 1, 13, 5}},
        {RS_CUBIC, RS_HALF_PIXEL, 1, 0, {1, 1, 16, 12}, {1, 1, 5, 5}},
        {RS_LINEAR, RS_TF_CROP_AND_RESIZE, 0, 0, {1, 1, 10, 10}, {1, 1, 6, 6}},
        {RS_LINEAR, RS_HALF_PIXEL, 0, 0, {3, 4, 5, 6}, {3, 4, 5, 6}},   /* identity on every axis */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rd_resize_params p;
        memset(&p, 0, sizeof p);
        p.mode = cases[c].mode; p.ctm = cases[c].ctm; p.antialias = cases[c].aa; p.exclude_outside = cases[c].excl;
        p.nearest_mode = RS_ROUND_PREFER_FLOOR; p.cubic_a = -0.75; p.extrapolation = 7; p.rank = 4;
        for (int d = 0; d < 4; d++) {
            p.in[d] = cases[c].in[d]; p.out[d] = cases[c].out[d];
            p.scale[d] = (double)p.out[d] / (double)p.in[d];
            p.roi0[d] = d >= 2 ? -0.2 : 0; p.roi1[d] = d >= 2 ? 1.1 : 1;
        }
        size_t ni = 1, no = 1;
        for (int d = 0; d < 4; d++) { ni *= (size_t)p.in[d]; no *= (size_t)p.out[d]; }
        float *x = malloc(ni * sizeof *x), *a = malloc(no * sizeof *a), *b = malloc(no * sizeof *b);
        for (size_t i = 0; i < ni; i++) x[i] = frand() * 5;
        CHECK_OK(rd_resize_f32(&p, x, a, pool, 1));
        CHECK_OK(rd_resize_f32(&p, x, b, NULL, 0));
        double err = max_rel_err(a, b, no);
        CHECK_MSG(err < 1e-5, "resize case %zu: err %g", c, err);
        free(x); free(a); free(b);
    }
}

static void test_einsum(cort_pool *pool) {
    static const struct { const char *eq; size_t n; size_t rank[2]; int64_t dims[2][4]; } cases[] = {
        {"bij,bjk->bik", 2, {3, 3}, {{5, 7, 9}, {5, 9, 4}}},
        {"ij,kj->ik", 2, {2, 2}, {{33, 17}, {21, 17}}},          /* transB */
        {"ji,jk->ik", 2, {2, 2}, {{17, 33}, {17, 21}}},          /* transA */
        {"bhqd,bhkd->bhqk", 2, {4, 4}, {{1, 3, 16, 8}, {1, 3, 12, 8}}},
        {"abc,cd->dba", 2, {3, 2}, {{4, 5, 6}, {6, 3}}},         /* output permute */
        {"i,i", 2, {1, 1}, {{10}, {10}}},
        {"i,j->ij", 2, {1, 1}, {{4}, {6}}},                      /* outer product, K = 1 */
        {"ij,jk", 2, {2, 2}, {{3, 4}, {4, 5}}},                  /* implicit output */
        {"...ij,...jk->...ik", 2, {3, 2}, {{2, 3, 4}, {4, 5}}},  /* broadcast: naive */
        {"ii->i", 1, {2, 0}, {{6, 6}, {0}}},
        {"ij->", 1, {2, 0}, {{6, 7}, {0}}},
        {"ij,jk,kl->il", 0, {0, 0}, {{0}, {0}}},                 /* three operands, below */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].n;
        const int64_t *dims[3];
        size_t ranks[3];
        int64_t three[3][2] = {{3, 4}, {4, 5}, {5, 2}};
        if (n == 0) { n = 3; for (int k = 0; k < 3; k++) { dims[k] = three[k]; ranks[k] = 2; } }
        else for (size_t k = 0; k < n; k++) { dims[k] = cases[c].dims[k]; ranks[k] = cases[c].rank[k]; }
        rd_einsum_plan *p = malloc(sizeof *p);
        char err[256];
        int ok = rd_einsum_parse(cases[c].eq, n, dims, ranks, p, err, sizeof err);
        CHECK_MSG(ok, "einsum '%s': %s", cases[c].eq, err);
        if (!ok) { free(p); continue; }
        float *x[3] = {0};
        for (size_t k = 0; k < n; k++) {
            size_t cnt = 1;
            for (size_t a = 0; a < ranks[k]; a++) cnt *= (size_t)dims[k][a];
            x[k] = malloc(cnt * sizeof(float));
            for (size_t i = 0; i < cnt; i++) x[k][i] = frand();
        }
        size_t no = 1;
        for (size_t a = 0; a < p->out_rank; a++) no *= (size_t)p->out_dims[a];
        float *a = malloc((no ? no : 1) * sizeof *a), *b = malloc((no ? no : 1) * sizeof *b);
        CHECK_OK(rd_einsum_f32(p, (const float *const *)x, a, pool, 1, NULL));
        CHECK_OK(rd_einsum_f32(p, (const float *const *)x, b, NULL, 0, NULL));
        double e = max_rel_err(a, b, no);
        CHECK_MSG(e < 1e-4, "einsum '%s': err %g", cases[c].eq, e);
        for (size_t k = 0; k < n; k++) free(x[k]);
        free(a); free(b); free(p);
    }
    /* malformed equations are rejected with a message */
    static const char *bad[] = { "ij,jk->ik,", "i.j->ij", "ij->k", "ij->ii", "ijk->i" };
    int64_t d2[2] = {2, 3};
    const int64_t *dims[1] = { d2 };
    size_t ranks[1] = { 2 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rd_einsum_plan *p = malloc(sizeof *p);
        char err[256] = "";
        CHECK_MSG(!rd_einsum_parse(bad[i], 1, dims, ranks, p, err, sizeof err) && err[0], "'%s' accepted", bad[i]);
        free(p);
    }
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(4, &pool));
    test_reduce(pool);
    test_softmax(pool);
    test_rep2();
    test_resize(pool);
    test_einsum(pool);
    cort_pool_free(pool);
    return tu_finish();
}
