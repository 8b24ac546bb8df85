/* Optimized vs reference kernels of the 'nn' family: SGEMM (every micro-kernel this CPU runs, all
 * transpose/alpha/beta combinations, tails), Conv (groups, depthwise, strides, pads, dilations,
 * 1/2/3-D), ConvTranspose, and pooling. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "providers/cpu/kernels/gemm.h"
#include "providers/cpu/ops/nn/conv.h"
#include "providers/cpu/kernels/winograd.h"
#include "providers/cpu/ops/nn/pool.h"
#include "graph/op.h"
#include "core/types.h"

static uint32_t rng_state = 12345;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static float *rand_buf(size_t n) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = frand();
    return p;
}
/* The worst |a - b| / (|b| + max|b|): the error relative to the element and to the output's
 * magnitude (tu_close_err with rtol = atol_rel = 1), so `err < t` is CHECK_CLOSE with TU_TOL(t, t, 0):
 * kernels and the reference sum in different orders, and a near-zero sum of large terms carries the
 * terms' rounding error. A NaN or infinity mismatch is INFINITY. */
static double max_rel_err(const float *a, const float *b, size_t n) {
    return tu_close_err(a, b, n, TU_TOL(1, 1, 0), NULL);
}

static void test_gemm(cort_pool *pool) {
    const nn_gemm_kernel *const *kernels;
    size_t nk = nn_gemm_kernels(&kernels);
    CHECK(nk >= 1);
    static const size_t sizes[][3] = {
        {1, 1, 1}, {1, 7, 3}, {5, 1, 9}, {3, 5, 7}, {12, 32, 16}, {13, 33, 17}, {6, 16, 1}, {7, 17, 255},
        {24, 64, 256}, {25, 65, 257}, {100, 3, 40}, {3, 100, 600}, {64, 64, 64}, {97, 131, 300}, {1, 1000, 512},
        {200, 49, 512}, {31, 200, 8}, {1, 300, 70}, {1, 513, 1}, {1, 1, 300},
        /* edge tiles: 1-11 remaining rows, 1-31 remaining columns, several K slices */
        {16, 49, 300}, {40, 196, 64}, {4, 20, 33}, {8, 48, 10}, {9, 17, 5}, {2, 15, 600}, {64, 33, 27}, {80, 31, 3},
        /* small K, many columns: the rows-outer order */
        {40, 1100, 20}, {30, 1030, 64},
        /* (odd entries run on the pool) many row or column panels: blocks balanced over the threads */
        {7, 9, 11}, {1000, 196, 40}, {9, 7, 5}, {20, 2500, 50},
    };
    for (size_t ki = 0; ki <= nk; ki++)   /* ki == nk: NULL = automatic choice (incl. the M == 1 path) */
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int tr = 0; tr < 4; tr++) {
                size_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
                int ta = tr & 1, tb = tr >> 1;
                float alpha = (si % 3 == 0) ? 1.0f : 0.75f, beta = (float[]){0.0f, 1.0f, -0.5f}[(si + tr) % 3];
                size_t lda = (ta ? M : K) + (si & 1), ldb = (tb ? K : N) + (si % 3 == 1), ldc = N + (si & 2);
                float *A = rand_buf((ta ? K : M) * lda), *B = rand_buf((tb ? N : K) * ldb);
                float *C = rand_buf(M * ldc), *R = malloc(M * ldc * sizeof(float));
                memcpy(R, C, M * ldc * sizeof(float));
                float *C0 = malloc(M * ldc * sizeof(float));
                memcpy(C0, C, M * ldc * sizeof(float));
                nn_gemm_b b = nn_gemm_b_matrix(B, ldb, tb);
                const nn_gemm_kernel *kern = ki < nk ? kernels[ki] : NULL;
                float *bias = (si + tr) % 4 == 3 ? rand_buf(M) : NULL;
                /* fused activations: none, relu, clip, leaky relu, sigmoid, silu, hardswish, gelu (on the
                 * registers of kernels with gelu_regs, else a pass over each tile) */
                nn_act act = { (int)((si + ki + tr) % 8), -0.25f, 0.5f };
                if (act.kind == 7) act.kind = CORT_ACT_GELU;
                if (act.kind == 6) act.kind = CORT_ACT_HARD_SWISH;
                if (act.kind == 3) act.alpha = 0.1f;
                if (act.kind == 4) act.kind = CORT_ACT_SIGMOID;
                if (act.kind == 5) act.kind = CORT_ACT_SILU;
                CHECK_OK(nn_sgemm_ex((si & 1) ? pool : NULL, kern, M, N, K, alpha, A, lda, ta, &b, beta, bias, &act, C,
                                     ldc));
                nn_sgemm_ref(M, N, K, alpha, A, lda, ta, &b, beta, R, ldc);
                for (size_t i = 0; i < M; i++) {
                    for (size_t q = 0; q < N && bias; q++) R[i * ldc + q] += bias[i];
                    for (size_t q = 0; q < N; q++) {
                        float v = R[i * ldc + q];
                        if (act.kind == CORT_ACT_RELU) v = v > 0 ? v : 0;
                        else if (act.kind == CORT_ACT_CLIP) v = v < act.alpha ? act.alpha : v > act.beta ? act.beta : v;
                        else if (act.kind == CORT_ACT_LEAKY_RELU) v = v >= 0 ? v : v * act.alpha;
                        else if (act.kind == CORT_ACT_SIGMOID) v = 1.0f / (1.0f + expf(-v));
                        else if (act.kind == CORT_ACT_SILU) v = v / (1.0f + expf(-v));
                        else if (act.kind == CORT_ACT_HARD_SWISH) v = v * fmaxf(0.0f, fminf(1.0f, v / 6.0f + 0.5f));
                        else if (act.kind == CORT_ACT_GELU) v = (float)(v * 0.5 * erfc(-v / sqrt(2.0)));
                        R[i * ldc + q] = v;
                    }
                }
                double err = max_rel_err(C, R, M * ldc);
                CHECK_MSG(err < 1e-4, "gemm %s M=%zu N=%zu K=%zu ta=%d tb=%d: err %g", kern ? kern->name : "auto", M, N, K, ta,
                          tb, err);
                /* prepacked A, B or both (as constant weights are packed at session creation) */
                nn_gemm_packed pa, pb;
                CHECK_OK(nn_gemm_pack_a(kern, M, K, alpha, A, lda, ta, &pa));
                CHECK_OK(nn_gemm_pack_b(kern, K, N, &b, &pb));
                nn_gemm_opts o = { (tr & 1) || si % 2 ? &pa : NULL, (tr & 2) || si % 3 ? &pb : NULL, bias, &act, NULL };
                memcpy(C, C0, M * ldc * sizeof(float));
                CHECK_OK(nn_sgemm_opt((si & 1) ? NULL : pool, kern, M, N, K, alpha, A, lda, ta, &b, beta, C, ldc, &o));
                err = max_rel_err(C, R, M * ldc);
                CHECK_MSG(err < 1e-4, "prepacked gemm %s M=%zu N=%zu K=%zu ta=%d tb=%d: err %g",
                          kern ? kern->name : "auto", M, N, K, ta, tb, err);
                nn_gemm_packed_free(&pa);
                nn_gemm_packed_free(&pb);
                free(bias);
                free(A); free(B); free(C); free(R); free(C0);
            }
}

/* nn_gemm_opts.sum (a fused residual): C = act(A*B + bias + S) on every kernel, edge tiles, several
 * K slices, the M == 1 paths and beta = 1. */
/* Fused epilogues: row bias, column bias (variants 1, 2: the AVX-512 kernel's accumulator start,
 * a prefill elsewhere), residual and activation, B plain or prepacked (M = 1: the gemv paths). */
static void test_gemm_sum(cort_pool *pool) {
    const nn_gemm_kernel *const *kernels;
    size_t nk = nn_gemm_kernels(&kernels);
    static const size_t sizes[][3] = { {1, 40, 30}, {13, 33, 17}, {40, 1100, 20}, {25, 65, 600}, {12, 32, 16}, {5, 3, 1},
                                       {40, 6625, 120}, {1, 70, 300} };
    for (size_t ki = 0; ki <= nk; ki++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int variant = 0; variant < 6; variant++) {
                const size_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2], ldc = N + 3;
                const float beta = variant % 3 == 2 ? 1.0f : 0.0f;
                const int packed = variant >= 3;
                float *A = rand_buf(M * K), *B = rand_buf(K * N), *S = rand_buf(M * ldc), *C = rand_buf(M * ldc);
                float *R = malloc(M * ldc * sizeof(float)), *bias = rand_buf(M), *cb = rand_buf(N);
                memcpy(R, C, M * ldc * sizeof(float));
                nn_gemm_b b = nn_gemm_b_matrix(B, N, 0);
                nn_act act = { variant % 3 == 0 ? CORT_ACT_RELU : variant % 3 == 1 ? CORT_ACT_SILU : CORT_ACT_NONE, 0, 0 };
                const int with_cb = variant % 3 != 0;
                nn_gemm_opts o = { NULL, NULL, bias, &act, NULL, S, with_cb ? cb : NULL };
                const nn_gemm_kernel *kern = ki < nk ? kernels[ki] : NULL;
                nn_gemm_packed bp = { 0 };
                if (packed) { CHECK_OK(nn_gemm_pack_b(kern, K, N, &b, &bp)); o.bpack = &bp; }
                CHECK_OK(nn_sgemm_opt((si & 1) ? pool : NULL, kern, M, N, K, 1.0f, A, K, 0, &b, beta, C, ldc, &o));
                nn_sgemm_ref(M, N, K, 1.0f, A, K, 0, &b, beta, R, ldc);
                for (size_t i = 0; i < M; i++)
                    for (size_t q = 0; q < N; q++) {
                        float v = R[i * ldc + q] + bias[i] + S[i * ldc + q] + (with_cb ? cb[q] : 0.0f);
                        if (act.kind == CORT_ACT_RELU) v = v > 0 ? v : 0;
                        if (act.kind == CORT_ACT_SILU) v = v / (1.0f + expf(-v));
                        R[i * ldc + q] = v;
                    }
                double err = max_rel_err(C, R, M * ldc);
                CHECK_MSG(err < 1e-4, "gemm+sum %s M=%zu N=%zu K=%zu variant %d: err %g", kern ? kern->name : "auto", M, N,
                          K, variant, err);
                nn_gemm_packed_free(&bp);
                free(A); free(B); free(S); free(C); free(R); free(bias); free(cb);
            }
}

typedef struct conv_case {
    int nd;
    size_t N, C, M, group;
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
} conv_case;

static int make_geom(const conv_case *c, int transpose, nn_conv_shape *s) {
    memset(s, 0, sizeof *s);
    s->N = c->N; s->C = c->C; s->M = c->M; s->group = c->group;
    nn_geom *g = &s->g;
    g->nd = c->nd;
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1; g->pb[i] = g->pe[i] = 0;
    }
    for (int i = 0; i < c->nd; i++) {
        int j = 3 - c->nd + i;
        g->in[j] = c->in[i]; g->k[j] = c->k[i]; g->s[j] = c->s[i]; g->d[j] = c->d[i];
        g->pb[j] = c->pb[i]; g->pe[j] = c->pe[i];
        int64_t ext = c->d[i] * (c->k[i] - 1) + 1;
        if (!transpose) {
            int64_t span = c->in[i] + c->pb[i] + c->pe[i] - ext;
            if (span < 0) return 0;
            g->out[j] = span / c->s[i] + 1;
        } else {
            g->out[j] = c->s[i] * (c->in[i] - 1) + ext - c->pb[i] - c->pe[i];
            if (g->out[j] <= 0) return 0;
        }
    }
    return 1;
}

static void test_conv(cort_pool *pool) {
    static const conv_case cases[] = {
        {2, 1, 3, 8, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 2, 4, 6, 2, {9, 8}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {2, 1}},
        {2, 1, 16, 16, 16, {10, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},   /* depthwise */
        {2, 2, 8, 16, 8, {9, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}},       /* depthwise x2 */
        {2, 1, 8, 8, 8, {12, 12}, {5, 5}, {2, 3}, {2, 1}, {2, 4}, {3, 1}},      /* depthwise odd */
        {2, 1, 4, 4, 4, {5, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},       /* depthwise, wide rows */
        {2, 1, 4, 8, 4, {6, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},       /* depthwise stride 2 */
        {2, 1, 3, 3, 3, {6, 77}, {3, 5}, {1, 3}, {1, 2}, {2, 3}, {0, 5}},       /* depthwise stride 3 */
        {1, 2, 5, 5, 5, {100}, {7}, {2}, {1}, {3}, {3}},                        /* depthwise 1-D */
        {2, 1, 6, 6, 6, {19, 37}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}},      /* depthwise 5x5 plane kernel */
        {2, 1, 4, 4, 4, {20, 71}, {5, 5}, {2, 2}, {1, 1}, {2, 1}, {1, 2}},      /* depthwise 5x5 stride 2 */
        {2, 1, 4, 8, 4, {17, 66}, {3, 3}, {2, 2}, {1, 1}, {0, 1}, {1, 0}},      /* depthwise 3x3 s2 odd pads */
        {2, 1, 3, 3, 3, {3, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},        /* depthwise tiny plane */
        {2, 1, 2, 2, 2, {9, 90}, {5, 5}, {1, 1}, {1, 1}, {0, 4}, {0, 0}},       /* depthwise 5x5 big left pad */
        {2, 1, 32, 24, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},      /* pointwise */
        {2, 3, 13, 29, 1, {5, 6}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},      /* strided 1x1 */
        {1, 2, 5, 7, 1, {20}, {4}, {3}, {2}, {3}, {1}},
        {1, 1, 6, 6, 3, {15}, {3}, {1}, {1}, {1}, {1}},
        {3, 1, 4, 5, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {1, 1, 0}},
        {3, 2, 6, 6, 6, {4, 5, 6}, {2, 3, 3}, {2, 1, 1}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}},
        {2, 1, 64, 70, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 3, 17, 1, {33, 31}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
        {2, 2, 12, 18, 3, {8, 8}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}},
        /* 2x2 stride 2 (ConvTranspose: an upsampling, one tap per output; rows of 21 and 40) */
        {2, 1, 6, 5, 1, {5, 21}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},
        {2, 2, 8, 6, 2, {3, 40}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},
        {2, 1, 4, 3, 1, {4, 9}, {3, 2}, {3, 2}, {1, 1}, {0, 0}, {0, 0}},
        {2, 1, 4, 3, 1, {4, 9}, {2, 2}, {2, 2}, {1, 1}, {0, 1}, {1, 0}},   /* padded: the general path */
    };
    const nn_gemm_kernel *const *kernels;
    size_t nk = nn_gemm_kernels(&kernels);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int transpose = 0; transpose < 2; transpose++)
            for (size_t ki = 0; ki < nk; ki++)
                for (int with_bias = 0; with_bias < 2; with_bias++) {
                    const conv_case *c = &cases[ci];
                    nn_conv_shape s;
                    if (!make_geom(c, transpose, &s)) continue;
                    size_t in = (size_t)nn_geom_in_size(&s.g), out = (size_t)nn_geom_out_size(&s.g);
                    size_t ks = (size_t)nn_geom_k_size(&s.g);
                    size_t xn = s.N * s.C * in, yn = s.N * s.M * out;
                    size_t wn = transpose ? s.C * (s.M / s.group) * ks : s.M * (s.C / s.group) * ks;
                    float *x = rand_buf(xn), *w = rand_buf(wn), *b = with_bias ? rand_buf(s.M) : NULL;
                    float *y = malloc(yn * sizeof(float)), *r = malloc(yn * sizeof(float));
                    for (size_t i = 0; i < yn; i++) y[i] = NAN;
                    if (!transpose) {
                        CHECK_OK(nn_conv_f32(ki ? NULL : pool, kernels[ki], &s, x, w, b, NULL, y));
                        nn_conv_f32_ref(&s, x, w, b, r);
                    } else {
                        CHECK_OK(nn_convtranspose_f32(ki ? NULL : pool, kernels[ki], &s, x, w, b, NULL, y, NULL));
                        nn_convtranspose_f32_ref(&s, x, w, b, r);
                    }
                    double err = max_rel_err(y, r, yn);
                    CHECK_MSG(err < 1e-4, "%s case %zu kernel %s bias %d: err %g", transpose ? "convT" : "conv", ci,
                              kernels[ki]->name, with_bias, err);
                    if (!transpose && ki == 0 && nn_conv_uses_gemm(s.C, s.group)) {
                        /* weights prepacked once, as Conv does for constant W */
                        nn_gemm_packed *wp = calloc(s.group, sizeof *wp);
                        CHECK_OK(nn_conv_pack_weights(w, s.M, (s.C / s.group) * ks, s.group, wp));
                        for (size_t i = 0; i < yn; i++) y[i] = NAN;
                        CHECK_OK(nn_conv_f32_opt(with_bias ? pool : NULL, NULL, &s, x, w, b, NULL, y, wp, NULL));
                        err = max_rel_err(y, r, yn);
                        CHECK_MSG(err < 1e-4, "prepacked conv case %zu bias %d: err %g", ci, with_bias, err);
                        for (size_t g = 0; g < s.group; g++) nn_gemm_packed_free(&wp[g]);
                        free(wp);
                    }
                    free(x); free(w); free(b); free(y); free(r);
                }
}

/* Which convs take the transposed small-plane path with the AVX-512 kernel (the decision only; the
 * path itself is checked in test_conv_indirect on every shape): 1x1 convs at 14x14 that reduce or
 * keep whole 32-channel panels (or a last one of 16), and ResNet's stride-2 downsamples with K >= M / 2. */
static void test_small_plane_picks(void) {
    const nn_gemm_kernel *const *kernels;
    const size_t nk = nn_gemm_kernels(&kernels);
    const nn_gemm_kernel *k512 = NULL;
#ifdef NN_HAVE_X86_UKERNELS
    for (size_t i = 0; i < nk; i++)
        if (kernels[i]->ukr == nn_ukr_avx512_12x32) k512 = kernels[i];
#else
    (void)nk;
#endif
    if (!k512) return;   /* no AVX-512 here: the rule is never consulted */
    static const struct { size_t c, m, hw, s, k; int want; } picks[] = {
        {1024, 256, 14, 1, 1, 1}, {576, 96, 14, 1, 1, 1}, {256, 1024, 14, 1, 1, 0},   /* K < M at stride 1 */
        {512, 1024, 28, 2, 1, 1}, {1024, 2048, 14, 2, 1, 1}, {256, 1024, 28, 2, 1, 0}, /* K < M / 2 */
        {256, 512, 56, 2, 1, 0},                                                     /* 784 positions: too many */
        {256, 256, 28, 2, 3, 1}, {32, 512, 28, 2, 3, 0},                             /* 3x3 stride 2: K >= M */
        {672, 112, 14, 1, 1, 1}, {480, 80, 14, 1, 1, 1}, {480, 72, 14, 1, 1, 0},    /* a 16-channel last panel */
    };
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        nn_conv_shape s;
        memset(&s, 0, sizeof s);
        s.N = 1; s.C = picks[i].c; s.M = picks[i].m; s.group = 1;
        nn_geom *g = &s.g;
        g->nd = 2;
        g->in[0] = g->out[0] = g->k[0] = g->s[0] = g->d[0] = 1;
        for (int d = 1; d < 3; d++) {
            g->in[d] = (int64_t)picks[i].hw; g->k[d] = (int64_t)picks[i].k; g->s[d] = (int64_t)picks[i].s; g->d[d] = 1;
            g->pb[d] = g->pe[d] = (int64_t)picks[i].k / 2;
            g->out[d] = (g->in[d] + 2 * g->pb[d] - g->k[d]) / g->s[d] + 1;
        }
        CHECK_MSG(nn_conv_small_prefers(&s, k512) == picks[i].want, "small-plane pick %zu (%zu->%zu %zux%zu k%zu s%zu): %d",
                  i, picks[i].c, picks[i].m, picks[i].hw, picks[i].hw, picks[i].k, picks[i].s,
                  nn_conv_small_prefers(&s, k512));
    }
}

/* The same decision with the AVX2 6x16 kernel (edge tiles of any row count): 7x7 1x1 convs go
 * transposed whatever K / M (49 positions fill 49 of 49 rows, against 49 of 56 columns), 14x14 ones
 * only when they reduce the channels with K >= 256. */
static void test_small_plane_picks_avx2(void) {
    const nn_gemm_kernel *const *kernels;
    const size_t nk = nn_gemm_kernels(&kernels);
    const nn_gemm_kernel *k2 = NULL;
#ifdef NN_HAVE_X86_UKERNELS
    for (size_t i = 0; i < nk; i++)
        if (kernels[i]->ukr == nn_ukr_avx2_6x16) k2 = kernels[i];
#else
    (void)nk;
#endif
    if (!k2) return;   /* the generic level: no AVX2 kernel listed */
    static const struct { size_t c, m, hw; int want; } picks[] = {
        {160, 960, 7, 1}, {192, 1152, 7, 1}, {320, 1280, 7, 1}, {960, 160, 7, 1},
        {96, 576, 14, 0}, {112, 672, 14, 0}, {576, 96, 14, 1}, {64, 64, 28, 0},
    };
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        nn_conv_shape s;
        memset(&s, 0, sizeof s);
        s.N = 1; s.C = picks[i].c; s.M = picks[i].m; s.group = 1;
        nn_geom *g = &s.g;
        g->nd = 2;
        g->in[0] = g->out[0] = g->k[0] = g->s[0] = g->d[0] = 1;
        for (int d = 1; d < 3; d++) {
            g->in[d] = g->out[d] = (int64_t)picks[i].hw;
            g->k[d] = g->s[d] = g->d[d] = 1;
        }
        CHECK_MSG(nn_conv_small_prefers(&s, k2) == picks[i].want, "avx2 small-plane pick %zu (%zu->%zu %zux%zu): %d",
                  i, picks[i].c, picks[i].m, picks[i].hw, picks[i].hw, nn_conv_small_prefers(&s, k2));
    }
}

/* The indirect-GEMM conv (kernels/conv_indirect.c) against the reference: strides 1/2, dilations, odd
 * and asymmetric pads, 1x1 stride 2, K over several slices, channel counts around the 12-row panels,
 * every fused activation, planes narrower and wider than a 32-column panel, batch > 1. */
static void test_conv_indirect(cort_pool *pool) {
    static const struct { size_t n, c, m, h, w, k, s, d, pb, pe; } cases[] = {
        {1, 3, 16, 31, 33, 3, 2, 1, 1, 1}, {2, 5, 13, 9, 7, 3, 1, 1, 1, 1}, {1, 64, 40, 7, 7, 3, 1, 1, 1, 1},
        {1, 3, 64, 37, 35, 7, 2, 1, 3, 3}, {1, 30, 24, 20, 41, 3, 1, 2, 2, 0}, {1, 8, 9, 15, 16, 1, 2, 1, 0, 0},
        {2, 17, 33, 12, 13, 5, 2, 1, 2, 1}, {1, 40, 12, 6, 70, 3, 1, 1, 0, 2}, {1, 29, 4, 11, 9, 2, 2, 2, 1, 0},
        {1, 1, 1, 5, 5, 3, 1, 1, 1, 1}, {1, 96, 24, 16, 16, 3, 1, 1, 1, 1},
        {1, 2, 16, 9, 101, 3, 2, 1, 1, 1}, {1, 3, 8, 6, 67, 7, 2, 1, 3, 2},   /* wide stride-2 rows: vector phase split */
        /* small planes (the transposed path's territory) */
        {2, 70, 100, 7, 7, 3, 1, 1, 1, 1}, {1, 300, 64, 14, 14, 3, 2, 1, 1, 1}, {1, 33, 48, 13, 13, 1, 2, 1, 0, 0},
        {1, 520, 20, 5, 5, 3, 1, 1, 1, 1},
        {1, 352, 32, 14, 14, 3, 2, 1, 1, 1},    /* K 3168: beyond the avx2 tile's tstore_k_max (K-sliced GEMM) */
        {1, 300, 112, 14, 14, 1, 2, 1, 0, 0},   /* 112 = 3 x 32 + 16: the half-width last panel, K over 2 slices */
        /* 13 avx2 channel panels (the last one half): the K-block sweep also on the 3-thread pool */
        {1, 150, 200, 9, 9, 3, 2, 1, 1, 1},
        /* wide rows: 111 (the squeezenet stem), 80, 50 per row, straddling tiles with K over slices */
        {1, 3, 24, 224, 224, 3, 2, 1, 0, 0}, {1, 4, 12, 40, 80, 3, 1, 1, 1, 1}, {2, 6, 20, 9, 100, 3, 2, 1, 1, 1}, {1, 40, 30, 17, 51, 3, 1, 1, 1, 1},
        /* 64 <= K <= 256 on wide rows: runs of full tiles in one kernel call (squeezenet's expand3x3) */
        {1, 16, 64, 20, 70, 3, 1, 1, 1, 1}, {2, 8, 20, 11, 99, 3, 1, 1, 1, 1},
        /* no junk columns (1x1 stride 2: virtual rows = output rows) with 64 <= K <= 256: panels and
         * runs of full tiles cross output rows (35 and 25 columns a row) */
        {2, 64, 24, 50, 70, 1, 2, 1, 0, 0}, {1, 100, 40, 30, 50, 1, 2, 1, 0, 0},
        /* batches of at least two images per thread: whole images per thread, padded in its own planes */
        {7, 6, 20, 11, 13, 3, 2, 1, 1, 1}, {6, 1, 32, 20, 30, 3, 1, 1, 1, 1},
    };
    const int acts[] = { CORT_ACT_NONE, CORT_ACT_RELU, CORT_ACT_CLIP, CORT_ACT_LEAKY_RELU, CORT_ACT_SILU,
                         CORT_ACT_HARD_SIGMOID, CORT_ACT_HARD_SWISH };
    size_t taken = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const size_t N = cases[ci].n, C = cases[ci].c, M = cases[ci].m, k = cases[ci].k;
        nn_conv_shape s;
        memset(&s, 0, sizeof s);
        s.N = N; s.C = C; s.M = M; s.group = 1;
        nn_geom *g = &s.g;
        g->nd = 2;
        g->in[0] = g->out[0] = g->k[0] = g->s[0] = g->d[0] = 1;
        g->in[1] = (int64_t)cases[ci].h; g->in[2] = (int64_t)cases[ci].w;
        for (int i = 1; i < 3; i++) {
            g->k[i] = (int64_t)k; g->s[i] = (int64_t)cases[ci].s; g->d[i] = (int64_t)cases[ci].d;
            g->pb[i] = (int64_t)cases[ci].pb; g->pe[i] = (int64_t)cases[ci].pe;
            g->out[i] = (g->in[i] + g->pb[i] + g->pe[i] - ((g->k[i] - 1) * g->d[i] + 1)) / g->s[i] + 1;
        }
        const size_t in = (size_t)(g->in[1] * g->in[2]), out = (size_t)(g->out[1] * g->out[2]), K = C * k * k;
        float *x = rand_buf(N * C * in), *w = rand_buf(M * K), *b = rand_buf(M);
        float *y = malloc(N * M * out * sizeof(float)), *r = malloc(N * M * out * sizeof(float));
        float *res = rand_buf(N * M * out), *want = malloc(N * M * out * sizeof(float));
        nn_conv_f32_ref(&s, x, w, b, r);
        nn_gemm_packed wp, wt;
        CHECK_OK(nn_conv_pack_weights(w, M, K, 1, &wp));
        CHECK_OK(nn_conv_small_pack(w, M, K, &wt));
        taken += nn_conv_indirect_applies(&s, &wp);
        for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
            nn_act act = { acts[ai], acts[ai] == CORT_ACT_CLIP ? -0.5f : acts[ai] == CORT_ACT_HARD_SIGMOID ? 0.2f : 0.1f,
                           acts[ai] == CORT_ACT_CLIP ? 0.75f : 0.5f };
            for (size_t i = 0; i < N * M * out; i++) y[i] = NAN;
            /* pass & 1: the indirect path / the transposed small-plane path (any plane size);
             * pass & 2: with a fused residual (added before the activation);
             * pass & 4: the output written over the residual (y == sum), where the path allows it:
             * the small-plane kernel, and the gemm path (im2col, no prepacked weights) for the cases
             * the indirect path would take */
            for (int pass = 0; pass < 8; pass++) {
            if ((pass & 4) && !(pass & 2)) continue;
            const int onto = (pass & 4) != 0;
            if (onto && (pass & 1) && !nn_conv_small_sum_in_place(&wt, &act)) continue;
            const float *sum = pass & 2 ? res : NULL;
            for (size_t i = 0; i < N * M * out; i++) y[i] = onto ? res[i] : NAN;
            if (onto) sum = y;
            if (!(pass & 1))
                CHECK_OK(nn_conv_f32_sum((ai & 1) ? pool : NULL, NULL, &s, x, w, b, sum, &act, y,
                                         onto && !nn_conv_sum_in_place(&s, &wp) ? NULL : &wp, NULL));
            else CHECK_OK(nn_conv_small_f32((ai & 1) ? pool : NULL, &s, x, w, &wt, b, sum, &act, y, NULL));
            for (size_t i = 0; i < N * M * out; i++) {
                float v = r[i] + (pass & 2 ? res[i] : 0.0f);
                switch (act.kind) {
                case CORT_ACT_RELU: v = v > 0 ? v : 0; break;
                case CORT_ACT_CLIP: v = v < act.alpha ? act.alpha : v > act.beta ? act.beta : v; break;
                case CORT_ACT_LEAKY_RELU: v = v >= 0 ? v : v * act.alpha; break;
                case CORT_ACT_SILU: v = v / (1.0f + expf(-v)); break;
                case CORT_ACT_HARD_SIGMOID: v = fmaxf(0.0f, fminf(1.0f, act.alpha * v + act.beta)); break;
                case CORT_ACT_HARD_SWISH: v = v * fmaxf(0.0f, fminf(1.0f, v / 6.0f + 0.5f)); break;
                default: break;
                }
                want[i] = v;
            }
            const double worst = max_rel_err(y, want, N * M * out);   /* NaN (an unwritten output) is INFINITY */
            CHECK_MSG(worst < 1e-4, "%s conv case %zu act %d residual %d in place %d: err %g",
                      pass & 1 ? "small-plane" : "indirect", ci, act.kind, (pass >> 1) & 1, onto, worst);
            }
        }
        nn_gemm_packed_free(&wp);
        nn_gemm_packed_free(&wt);
        free(x); free(w); free(b); free(y); free(r); free(res); free(want);
    }
    /* the cases are meant for the indirect path: all take it on AVX-512 */
    if (nn_gemm_best_kernel()->edge) CHECK_MSG(taken == sizeof cases / sizeof cases[0], "indirect path taken %zu times", taken);
}

static void test_pool(cort_pool *pool) {
    static const conv_case cases[] = {
        {2, 1, 3, 3, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 2, 4, 4, 1, {9, 8}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {2, 1}},
        {1, 2, 5, 5, 1, {20}, {4}, {3}, {2}, {3}, {1}},
        {3, 1, 4, 4, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {1, 1, 0}},
        {2, 1, 2, 2, 1, {12, 13}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {1, 1}},
        {2, 2, 3, 3, 1, {111, 111}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}},    /* squeezenet, ceil mode */
        {2, 1, 2, 2, 1, {112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},    /* resnet */
        {1, 1, 3, 3, 1, {40}, {5}, {3}, {1}, {2}, {4}},
        {2, 1, 2, 2, 1, {6, 1500}, {2, 3}, {1, 1}, {1, 1}, {0, 1}, {1, 1}},     /* row too wide: generic */
        {2, 1, 2, 2, 1, {5, 50}, {2, 3}, {1, 1}, {1, 1}, {0, 1}, {1, 1}},       /* stride 1, vector windows */
        {2, 1, 2, 2, 1, {9, 83}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 1}},       /* k5 stride 2 */
        {2, 1, 1, 1, 1, {4, 35}, {1, 3}, {1, 2}, {1, 1}, {0, 0}, {0, 0}},       /* exact fit, no pads */
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int kind = 0; kind < NN_POOL_KINDS; kind++)
            for (int flag = 0; flag < 2; flag++) {
                const conv_case *c = &cases[ci];
                nn_conv_shape s;
                if (!make_geom(c, 0, &s)) continue;
                if (kind != NN_POOL_MAX) for (int i = 0; i < 3; i++) s.g.d[i] = 1;
                /* recompute outputs for the undilated window */
                if (kind != NN_POOL_MAX) {
                    conv_case cc = *c;
                    for (int i = 0; i < 3; i++) cc.d[i] = 1;
                    make_geom(&cc, 0, &s);
                }
                size_t planes = s.N * s.C, in = (size_t)nn_geom_in_size(&s.g), out = (size_t)nn_geom_out_size(&s.g);
                float *x = rand_buf(planes * in), *y = malloc(planes * out * sizeof(float));
                float *r = malloc(planes * out * sizeof(float));
                int64_t *iy = malloc(planes * out * sizeof(int64_t)), *ir = malloc(planes * out * sizeof(int64_t));
                nn_pool_params pp = { kind, flag, 3.0f, flag };
                nn_pool_f32(pool, &pp, &s.g, planes, x, y, kind == NN_POOL_MAX ? iy : NULL);
                nn_pool_f32_ref(&pp, &s.g, planes, x, r, kind == NN_POOL_MAX ? ir : NULL);
                double err = max_rel_err(y, r, planes * out);
                CHECK_MSG(err < 1e-5, "pool case %zu kind %d flag %d: err %g", ci, kind, flag, err);
                if (kind == NN_POOL_MAX) {
                    CHECK_MSG(!memcmp(iy, ir, planes * out * sizeof(int64_t)), "pool indices case %zu", ci);
                    /* without indices (the separable 2-D fast path) */
                    nn_pool_f32(pool, &pp, &s.g, planes, x, y, NULL);
                    const uint32_t ulp = tu_max_ulp(y, r, planes * out, NULL);
                    CHECK_MSG(ulp == 0, "maxpool no-indices case %zu flag %d: %u ulp", ci, flag, (unsigned)ulp);
                }
                free(x); free(y); free(r); free(iy); free(ir);
            }
}


/* ---- operator-level checks: a node is assembled by hand and run through its op definition ---- */
static cort_pool *g_pool;
static int g_act;               /* fused activation given to the next run_op node */
static float g_act_alpha, g_act_beta;

static cort_status *run_op(const char *op_type, int opset, cort_attr_ir *attrs, size_t n_attrs, cort_value **inputs,
                           size_t n_in, cort_value **outputs, size_t n_out) {
    const cort_op_def *def = cort_op_find("", op_type, opset);
    if (!def) return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "%s-%d not found", op_type, opset);
    cort_node_ir ir;
    memset(&ir, 0, sizeof ir);
    ir.name = "t"; ir.op_type = op_type; ir.domain = ""; ir.attrs = attrs; ir.n_attrs = n_attrs;
    int32_t slots[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    cort_node node;
    memset(&node, 0, sizeof node);
    node.ir = &ir; node.name = "t"; node.op_type = op_type; node.domain = ""; node.opset = opset; node.op = def;
    node.n_inputs = n_in; node.n_outputs = n_out; node.in_slot = slots; node.out_slot = slots;
    node.act = g_act; node.act_alpha = g_act_alpha; node.act_beta = g_act_beta;
    void *state = NULL;
    if (def->init) {
        cort_status *st = def->init(&node, &state);
        if (st) return st;
    }
    node.state = state;
    cort_kernel_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.node = &node; ctx.state = state; ctx.opset = opset; ctx.inputs = inputs; ctx.n_inputs = n_in;
    ctx.outputs = outputs; ctx.n_outputs = n_out; ctx.pool = g_pool;
    cort_status *st = def->run(&ctx);
    if (def->free_state) def->free_state(state);
    return st;
}

static cort_attr_ir attr_ints(const char *name, int64_t *v, size_t n) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_INTS; a.ints = v; a.n = n; return a;
}
static cort_attr_ir attr_int(const char *name, int64_t v) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_INT; a.i = v; return a;
}
static cort_attr_ir attr_float(const char *name, float v) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_FLOAT; a.f = v; return a;
}

static cort_value *tensor_rand(cort_type t, const int64_t *shape, size_t rank) {
    cort_value *v = NULL;
    if (tu_check_ok(cort_tensor_create(t, shape, rank, &v), __FILE__, __LINE__, "tensor_create") == 0) return NULL;
    size_t n = cort_tensor_element_count(v);
    for (size_t i = 0; i < n; i++) {
        float f = frand();
        if (t == CORT_TYPE_FLOAT) ((float *)cort_tensor_data(v))[i] = f;
        else if (t == CORT_TYPE_FLOAT16) ((uint16_t *)cort_tensor_data(v))[i] = cort_f32_to_f16(f);
    }
    return v;
}
static float tget(const cort_value *v, size_t i) {
    if (cort_tensor_type(v) == CORT_TYPE_FLOAT16) return cort_f16_to_f32(((const uint16_t *)cort_tensor_data(v))[i]);
    return ((const float *)cort_tensor_data(v))[i];
}
static void release_all(cort_value **v, size_t n) { for (size_t i = 0; i < n; i++) { cort_value_release(v[i]); v[i] = NULL; } }

static void test_op_conv_f16(void) {
    int64_t xs[4] = { 1, 4, 9, 9 }, ws[4] = { 6, 2, 3, 3 }, bs[1] = { 6 };
    int64_t pads[4] = { 1, 1, 1, 1 };
    cort_attr_ir at[2] = { attr_ints("pads", pads, 4), attr_int("group", 2) };
    cort_value *in[3] = { tensor_rand(CORT_TYPE_FLOAT16, xs, 4), tensor_rand(CORT_TYPE_FLOAT16, ws, 4),
                          tensor_rand(CORT_TYPE_FLOAT16, bs, 1) };
    cort_value *out[1] = { NULL };
    CHECK_OK(run_op("Conv", 11, at, 2, in, 3, out, 1));
    if (out[0]) {
        CHECK(cort_tensor_type(out[0]) == CORT_TYPE_FLOAT16 && cort_tensor_shape(out[0])[2] == 9);
        nn_conv_shape s; memset(&s, 0, sizeof s);
        s.N = 1; s.C = 4; s.M = 6; s.group = 2;
        nn_geom *g = &s.g; g->nd = 2;
        for (int i = 0; i < 3; i++) { g->in[i] = g->out[i] = i ? 9 : 1; g->k[i] = i ? 3 : 1; g->s[i] = g->d[i] = 1; g->pb[i] = g->pe[i] = i ? 1 : 0; }
        float x[324], w[108], b[6], r[486];
        for (size_t i = 0; i < 324; i++) x[i] = tget(in[0], i);
        for (size_t i = 0; i < 108; i++) w[i] = tget(in[1], i);
        for (size_t i = 0; i < 6; i++) b[i] = tget(in[2], i);
        nn_conv_f32_ref(&s, x, w, b, r);
        double worst = 0;
        for (size_t i = 0; i < 486; i++) { double d = fabs(tget(out[0], i) - r[i]); if (d > worst) worst = d; }
        CHECK_MSG(worst < 1e-2, "conv f16 err %g", worst);
    }
    release_all(out, 1);
    /* W channel mismatch: X has 4 channels, group 2 needs W[:,2,...] */
    int64_t wbad[4] = { 6, 3, 3, 3 };
    cort_value_release(in[1]);
    in[1] = tensor_rand(CORT_TYPE_FLOAT16, wbad, 4);
    CHECK_ERR(run_op("Conv", 11, at, 2, in, 3, out, 1), CORT_ERROR_INVALID_ARGUMENT, "'W' has shape [6,3,3,3]");
    release_all(out, 1);
    release_all(in, 3);
}

static void test_op_matmul(void) {
    int64_t as[4] = { 2, 1, 3, 4 }, bs[3] = { 3, 4, 5 };
    cort_value *in[2] = { tensor_rand(CORT_TYPE_FLOAT, as, 4), tensor_rand(CORT_TYPE_FLOAT, bs, 3) }, *out[1] = { NULL };
    CHECK_OK(run_op("MatMul", 13, NULL, 0, in, 2, out, 1));
    if (out[0]) {
        const int64_t *ys = cort_tensor_shape(out[0]);
        CHECK(cort_tensor_rank(out[0]) == 4 && ys[0] == 2 && ys[1] == 3 && ys[2] == 3 && ys[3] == 5);
        const float *a = cort_tensor_data(in[0]), *b = cort_tensor_data(in[1]), *y = cort_tensor_data(out[0]);
        double worst = 0;
        for (int i0 = 0; i0 < 2; i0++) for (int i1 = 0; i1 < 3; i1++) for (int m = 0; m < 3; m++) for (int n = 0; n < 5; n++) {
            double acc = 0;
            for (int k = 0; k < 4; k++) acc += a[(i0 * 3 + m) * 4 + k] * b[(i1 * 4 + k) * 5 + n];
            double d = fabs(acc - y[((i0 * 3 + i1) * 3 + m) * 5 + n]);
            if (d > worst) worst = d;
        }
        CHECK_MSG(worst < 1e-5, "matmul broadcast err %g", worst);
    }
    release_all(out, 1);
    int64_t bbad[2] = { 5, 2 };
    cort_value_release(in[1]);
    in[1] = tensor_rand(CORT_TYPE_FLOAT, bbad, 2);
    CHECK_ERR(run_op("MatMul", 13, NULL, 0, in, 2, out, 1), CORT_ERROR_INVALID_ARGUMENT, "inner dimensions 4 and 5");
    release_all(out, 1);
    release_all(in, 2);
}

static void test_op_gemm(void) {
    int64_t as[2] = { 7, 5 }, bs[2] = { 9, 7 }, cs[1] = { 9 };   /* transA: A is [K,M]; transB: B is [N,K] */
    cort_attr_ir at[4] = { attr_int("transA", 1), attr_int("transB", 1), attr_float("alpha", 0.5f),
                           attr_float("beta", 2.0f) };
    cort_value *in[3] = { tensor_rand(CORT_TYPE_FLOAT, as, 2), tensor_rand(CORT_TYPE_FLOAT, bs, 2),
                          tensor_rand(CORT_TYPE_FLOAT, cs, 1) }, *out[1] = { NULL };
    CHECK_OK(run_op("Gemm", 13, at, 4, in, 3, out, 1));
    if (out[0]) {
        const float *a = cort_tensor_data(in[0]), *b = cort_tensor_data(in[1]), *c = cort_tensor_data(in[2]);
        const float *y = cort_tensor_data(out[0]);
        double worst = 0;
        for (int m = 0; m < 5; m++) for (int n = 0; n < 9; n++) {
            double acc = 0;
            for (int k = 0; k < 7; k++) acc += a[k * 5 + m] * b[n * 7 + k];
            double d = fabs(0.5 * acc + 2.0 * c[n] - y[m * 9 + n]);
            if (d > worst) worst = d;
        }
        CHECK_MSG(worst < 1e-5, "gemm err %g", worst);
    }
    release_all(out, 1);
    int64_t cbad[1] = { 4 };
    cort_value_release(in[2]);
    in[2] = tensor_rand(CORT_TYPE_FLOAT, cbad, 1);
    CHECK_ERR(run_op("Gemm", 13, at, 4, in, 3, out, 1), CORT_ERROR_INVALID_ARGUMENT, "'C' has shape [4]");
    release_all(out, 1);
    release_all(in, 3);
}

/* Conv with a fused Clip(0, 6) epilogue (what the optimizer makes of Conv+Clip) */
static void test_op_conv_fused(const char *op, int depthwise) {
    int64_t xs[4] = { 2, 3, 6, 40 }, ws[4] = { depthwise ? 6 : 5, depthwise ? 1 : 3, 3, 3 }, bs[1] = { ws[0] };
    if (!strcmp(op, "ConvTranspose")) { ws[0] = 3; ws[1] = 5; bs[0] = 5; }
    cort_attr_ir at[1] = { attr_int("group", depthwise ? 3 : 1) };
    cort_value *in[3] = { tensor_rand(CORT_TYPE_FLOAT, xs, 4), tensor_rand(CORT_TYPE_FLOAT, ws, 4),
                          tensor_rand(CORT_TYPE_FLOAT, bs, 1) }, *plain[1] = { NULL }, *fused[1] = { NULL };
    if (in[0]) for (size_t i = 0; i < 2 * 3 * 6 * 40; i++) ((float *)cort_tensor_data(in[0]))[i] *= 8.0f;
    CHECK_OK(run_op(op, 11, at, 1, in, 3, plain, 1));
    g_act = CORT_ACT_CLIP; g_act_alpha = 0.0f; g_act_beta = 6.0f;
    CHECK_OK(run_op(op, 11, at, 1, in, 3, fused, 1));
    g_act = 0;
    if (plain[0] && fused[0]) {
        const float *p = cort_tensor_data(plain[0]), *f = cort_tensor_data(fused[0]);
        int ok = 1, clipped = 0;
        for (size_t i = 0; i < cort_tensor_element_count(plain[0]); i++) {
            float want = p[i] < 0 ? 0 : p[i] > 6 ? 6 : p[i];
            if (f[i] != want) ok = 0;
            if (p[i] < 0 || p[i] > 6) clipped++;
        }
        CHECK_MSG(ok && clipped > 0, "%s fused clip (depthwise %d): ok %d clipped %d", op, depthwise, ok, clipped);
    }
    release_all(plain, 1);
    release_all(fused, 1);
    release_all(in, 3);
}

/* Conv/Gemm with a fused SiLU epilogue (Conv -> Sigmoid -> Mul folded by the optimizer) against
 * x / (1 + exp(-x)) applied to the plain output in double */
static void test_op_fused_silu(const char *op, int depthwise) {
    int gemm = !strcmp(op, "Gemm");
    int64_t xs[4] = { 2, 6, 7, 45 }, ws[4] = { depthwise ? 12 : 5, depthwise ? 1 : 6, 3, 3 }, bs[1] = { ws[0] };
    int64_t gx[2] = { 37, 50 }, gw[2] = { 50, 29 }, gb[1] = { 29 };
    if (!strcmp(op, "ConvTranspose")) { ws[0] = 6; ws[1] = 5; }
    cort_attr_ir at[1] = { attr_int("group", depthwise ? 6 : 1) };
    cort_value *in[3] = { gemm ? tensor_rand(CORT_TYPE_FLOAT, gx, 2) : tensor_rand(CORT_TYPE_FLOAT, xs, 4),
                          gemm ? tensor_rand(CORT_TYPE_FLOAT, gw, 2) : tensor_rand(CORT_TYPE_FLOAT, ws, 4),
                          gemm ? tensor_rand(CORT_TYPE_FLOAT, gb, 1) : tensor_rand(CORT_TYPE_FLOAT, bs, 1) };
    cort_value *plain[1] = { NULL }, *fused[1] = { NULL };
    if (in[0]) {   /* a wide range so both tails of the sigmoid are exercised */
        float *x = cort_tensor_data(in[0]);
        for (size_t i = 0; i < cort_tensor_element_count(in[0]); i++) x[i] *= 12.0f;
    }
    CHECK_OK(run_op(op, 11, at, gemm ? 0 : 1, in, 3, plain, 1));
    g_act = CORT_ACT_SILU;
    CHECK_OK(run_op(op, 11, at, gemm ? 0 : 1, in, 3, fused, 1));
    g_act = 0;
    if (plain[0] && fused[0]) {
        const float *p = cort_tensor_data(plain[0]), *f = cort_tensor_data(fused[0]);
        double worst = 0.0;
        for (size_t i = 0; i < cort_tensor_element_count(plain[0]); i++) {
            double want = p[i] / (1.0 + exp(-(double)p[i]));
            double err = fabs(f[i] - want) / (fabs(want) > 1e-30 ? fabs(want) : 1e-30);
            if (err > worst) worst = err;
        }
        CHECK_MSG(worst < 2e-6, "%s fused silu (depthwise %d): rel err %g", op, depthwise, worst);
    }
    release_all(plain, 1);
    release_all(fused, 1);
    release_all(in, 3);
}

/* The vectorized epilogues against double-precision formulas over a wide input range. */
static void test_act_epilogue(void) {
    enum { n = 4099 };
    static float y[n], x[n];
    const int kinds[] = { CORT_ACT_SIGMOID, CORT_ACT_SILU };
    for (int t = 0; t < 4; t++) {   /* t >= 2: the AVX2 epilogue directly */
        for (size_t i = 0; i < n; i++) x[i] = y[i] = -100.0f + 200.0f * (float)i / (float)(n - 1);
        x[0] = y[0] = -0.0f; x[1] = y[1] = 1e-30f; x[2] = y[2] = -1e-7f;
        nn_act a = { kinds[t & 1], 0.0f, 0.0f };
        if (t < 2) nn_act_apply(&a, y, n);
#ifdef NN_HAVE_X86_UKERNELS
        else if (nn_isa()->act_sigmoid_silu) nn_isa()->act_sigmoid_silu(a.kind, y, n);
#endif
        else nn_act_apply(&a, y, n);
        double worst = 0.0;
        for (size_t i = 0; i < n; i++) {
            double s = 1.0 / (1.0 + exp(-(double)x[i])), want = a.kind == CORT_ACT_SILU ? x[i] * s : s;
            double err = fabs(y[i] - want) / (fabs(want) > 1e-30 ? fabs(want) : 1e-30);
            if (err > worst) worst = err;
        }
        CHECK_MSG(worst < 1e-6, "act %d (pass %d) epilogue rel err %g", a.kind, t, worst);
    }
}

static void test_op_errors(void) {
    int64_t xs[4] = { 1, 1, 2, 2 }, k[2] = { 3, 3 };
    cort_attr_ir at[1] = { attr_ints("kernel_shape", k, 2) };
    cort_value *in[3] = { tensor_rand(CORT_TYPE_FLOAT, xs, 4), NULL, NULL }, *out[2] = { NULL, NULL };
    CHECK_ERR(run_op("MaxPool", 12, at, 1, in, 1, out, 2), CORT_ERROR_INVALID_ARGUMENT, "smaller than the kernel");
    release_all(out, 2);
    /* MaxUnpool with an index outside the output */
    int64_t us[4] = { 1, 1, 1, 1 }, kk[2] = { 2, 2 };
    cort_attr_ir ua[1] = { attr_ints("kernel_shape", kk, 2) };
    cort_value_release(in[0]);
    in[0] = tensor_rand(CORT_TYPE_FLOAT, us, 4);
    CHECK_OK(cort_tensor_create(CORT_TYPE_INT64, us, 4, &in[1]));
    if (in[1]) ((int64_t *)cort_tensor_data(in[1]))[0] = 99;
    CHECK_ERR(run_op("MaxUnpool", 11, ua, 1, in, 2, out, 1), CORT_ERROR_INVALID_ARGUMENT, "'I'[0] = 99");
    release_all(out, 2);
    /* missing required input */
    cort_value *none[2] = { NULL, NULL };
    CHECK_ERR(run_op("Conv", 11, NULL, 0, none, 2, out, 1), CORT_ERROR_INVALID_ARGUMENT, "'X' is missing");
    release_all(in, 3);
}

static void test_op_layernorm_quant(void) {
    int64_t xs[3] = { 2, 3, 4 }, ss[2] = { 3, 4 };
    cort_attr_ir at[2] = { attr_int("axis", 1), attr_float("epsilon", 1e-5f) };
    cort_value *in[3] = { tensor_rand(CORT_TYPE_FLOAT, xs, 3), tensor_rand(CORT_TYPE_FLOAT, ss, 2),
                          tensor_rand(CORT_TYPE_FLOAT, ss, 2) }, *out[3] = { NULL, NULL, NULL };
    CHECK_OK(run_op("LayerNormalization", 17, at, 2, in, 3, out, 3));
    if (out[0] && out[1] && out[2]) {
        const float *x = cort_tensor_data(in[0]), *sc = cort_tensor_data(in[1]), *b = cort_tensor_data(in[2]);
        const float *y = cort_tensor_data(out[0]), *mean = cort_tensor_data(out[1]), *inv = cort_tensor_data(out[2]);
        double worst = 0;
        for (int r = 0; r < 2; r++) {
            double m = 0, v = 0;
            for (int i = 0; i < 12; i++) m += x[r * 12 + i];
            m /= 12;
            for (int i = 0; i < 12; i++) v += (x[r * 12 + i] - m) * (x[r * 12 + i] - m);
            v /= 12;
            double is = 1.0 / sqrt(v + 1e-5);
            worst = fmax(worst, fabs(mean[r] - m));
            worst = fmax(worst, fabs(inv[r] - is) / is);
            for (int i = 0; i < 12; i++) worst = fmax(worst, fabs(y[r * 12 + i] - ((x[r * 12 + i] - m) * is * sc[i] + b[i])));
        }
        CHECK_MSG(worst < 1e-4, "layernorm err %g", worst);
        CHECK(cort_tensor_rank(out[1]) == 3 && cort_tensor_shape(out[1])[1] == 1);
    }
    release_all(out, 3);
    release_all(in, 3);
    /* QuantizeLinear: round half to even, saturation, int8 */
    int64_t n4[1] = { 5 };
    cort_value *q[3] = { NULL, NULL, NULL };
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, n4, 1, &q[0]));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, NULL, 0, &q[1]));
    CHECK_OK(cort_tensor_create(CORT_TYPE_INT8, NULL, 0, &q[2]));
    if (q[0] && q[1] && q[2]) {
        const float xv[5] = { 2.5f, 3.5f, -2.5f, 300.0f, -300.0f };
        memcpy(cort_tensor_data(q[0]), xv, sizeof xv);
        *(float *)cort_tensor_data(q[1]) = 1.0f;
        *(int8_t *)cort_tensor_data(q[2]) = 1;
        CHECK_OK(run_op("QuantizeLinear", 13, NULL, 0, q, 3, out, 1));
        if (out[0]) {
            const int8_t *y = cort_tensor_data(out[0]);
            CHECK(y[0] == 3 && y[1] == 5 && y[2] == -1 && y[3] == 127 && y[4] == -128);
        }
    }
    release_all(out, 1);
    release_all(q, 3);
}

/* Every allocation of a run fails in turn: the op must report OUT_OF_MEMORY and leak nothing
 * (ASan builds check the leaks). */
static void test_op_oom(const char *op, int opset, cort_type t, const int64_t *xs, const int64_t *ws, size_t rank) {
    int64_t bs[1] = { op[0] == 'C' && op[4] == 'T' ? ws[1] : ws[0] };
    cort_value *in[3] = { tensor_rand(t, xs, rank), tensor_rand(t, ws, rank), tensor_rand(t, bs, 1) };
    int clean = 1, ok_seen = 0;
    for (long n = 1; n < 200 && !ok_seen; n++) {
        cort_value *out[1] = { NULL };
        cort_test_alloc_fail_at(n);
        cort_status *st = run_op(op, opset, NULL, 0, in, 3, out, 1);
        cort_test_alloc_fail_at(0);
        if (!st) ok_seen = 1;
        else if (cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY) clean = 0;
        cort_status_free(st);
        release_all(out, 1);
    }
    CHECK_MSG(clean && ok_seen, "%s under allocation failures: clean %d, finished %d", op, clean, ok_seen);
    release_all(in, 3);
}

/* Winograd F(4x4,3x3) against the reference conv: odd sizes (partial tiles), pads (symmetric,
 * asymmetric, none), batches, bias, channel counts around the gemm panel sizes, fused activations. */
static void test_winograd(cort_pool *pool) {
    static const conv_case cases[] = {
        {2, 1, 1, 2, 1, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
        {2, 1, 3, 5, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 2, 7, 13, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 16, 12, 1, {10, 17}, {3, 3}, {1, 1}, {1, 1}, {0, 2}, {1, 0}},
        {2, 1, 33, 25, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 2, 64, 40, 1, {23, 19}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 64, 64, 1, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 300, 37, 1, {7, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 5, 4, 1, {4, 70}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, {2, 2}},
        /* several tile blocks per image: the activation runs after the last block (Relu, SiLU) */
        {2, 1, 4, 4, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 64, 64, 1, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 2, 96, 40, 1, {48, 50}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        /* F(2x2) territory: 7x7 .. 11x11 (odd sizes leave partial 2x2 tiles) */
        {2, 1, 130, 140, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 2, 33, 17, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {0, 1}, {1, 0}},
        /* tile-parallel on the pool (>= 2 blocks per thread, the last partial; the activation on
         * each tile, after the bias): SiLU, bias only, Relu, SiLU + bias */
        {2, 2, 32, 32, 1, {96, 96}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 24, 40, 1, {100, 90}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 40, 24, 1, {90, 101}, {3, 3}, {1, 1}, {1, 1}, {0, 1}, {1, 0}},
        {2, 2, 17, 33, 1, {97, 95}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        /* one image of few channels, whose 1 MB blocks would cover most of the map: two smaller blocks per
         * thread (whole 32-tile panels, or 16-tile steps) */
        {2, 1, 16, 64, 1, {55, 55}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 8, 24, 1, {41, 45}, {3, 3}, {1, 1}, {1, 1}, {0, 1}, {1, 0}},
        /* a batch of at least two images per thread: whole images per thread (7 over 3 threads) */
        {2, 7, 9, 20, 1, {13, 15}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
    };
    /* which tile size the conv init picks: 4x4 from 12x12 up (from 8 input and 16 output
     * channels), 2x2 on 7x7..11x11 maps with many channels, none for few channels or stride 2 */
    static const struct { size_t c, m; int64_t hw, stride; int tile; } picks[] = {
        {512, 512, 7, 1, 2}, {256, 256, 14, 1, 4}, {128, 128, 11, 1, 2}, {64, 64, 7, 1, 0},
        {512, 512, 6, 1, 0}, {64, 64, 56, 1, 4}, {16, 64, 55, 1, 4}, {256, 256, 28, 2, 0},
        {8, 16, 28, 1, 4}, {4, 64, 56, 1, 0}, {64, 8, 56, 1, 0}, {96, 24, 160, 1, 4}, {16, 16, 11, 1, 0},
    };
    for (size_t pi = 0; pi < sizeof picks / sizeof picks[0]; pi++) {
        const conv_case pc = {2, 1, picks[pi].c, picks[pi].m, 1, {picks[pi].hw, picks[pi].hw}, {3, 3},
                              {picks[pi].stride, picks[pi].stride}, {1, 1}, {1, 1}, {1, 1}};
        nn_conv_shape s;
        if (!make_geom(&pc, 0, &s)) continue;
        CHECK_MSG(nn_wino_applies(&s) == picks[pi].tile, "winograd pick %zu (C=%zu %lldx%lld stride %lld): %d, expected %d",
                  pi, s.C, (long long)s.g.in[1], (long long)s.g.in[2], (long long)picks[pi].stride, nn_wino_applies(&s),
                  picks[pi].tile);
    }
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        nn_conv_shape s;
        if (!make_geom(&cases[ci], 0, &s)) continue;
        CHECK_MSG(nn_wino_geometry_ok(&s), "winograd case %zu geometry", ci);
        const size_t xin = s.N * s.C * (size_t)nn_geom_in_size(&s.g), yn = s.N * s.M * (size_t)nn_geom_out_size(&s.g);
        float *x = rand_buf(xin), *w = rand_buf(s.M * s.C * 9), *b = ci % 2 ? rand_buf(s.M) : NULL;
        float *y = rand_buf(yn), *r = malloc(yn * sizeof(float));
        nn_act act = { (int)(ci % 3 == 2 ? CORT_ACT_SILU : ci % 3 == 1 ? CORT_ACT_RELU : CORT_ACT_NONE), 0, 0 };
        nn_conv_f32_ref(&s, x, w, b, r);
        nn_act_apply(&act, r, yn);
        /* every case with both tile sizes, on one thread and on the pool (enough tiles: each
         * thread runs its own blocks through all three phases) */
        for (int tile = 2; tile <= 4; tile += 2)
            for (int threaded = 0; threaded < 2; threaded++) {
            nn_wino_weights ww;
            CHECK_OK(nn_wino_pack(w, s.M, s.C, tile, NN_WINO_2D, &ww));
            for (size_t i = 0; i < yn; i++) y[i] = NAN;
            CHECK_OK(nn_wino_conv(threaded ? pool : NULL, &s, x, &ww, b, &act, y, NULL));
            double err = max_rel_err(y, r, yn);
            /* F(4x4) transforms lose a few bits: scale the bound with the dot-product length */
            CHECK_MSG(err < 2e-5 * sqrt((double)s.C * 9),
                      "winograd F(%dx%d) case %zu (C=%zu M=%zu %lldx%lld) threaded %d: err %g", tile, tile, ci, s.C,
                      s.M, (long long)s.g.in[1], (long long)s.g.in[2], threaded, err);
            nn_wino_free(&ww);
            }
        free(x); free(w); free(b); free(y); free(r);
    }
}

/* 1-D Winograd F(4, 3) for 3x1 and 1x3 convs against the reference: partial tiles along the axis,
 * pads along it (none, symmetric, asymmetric, wider than a tile), tile rows shorter and longer
 * than a vector of 16 tiles (runs that split a vector), batches, bias, fused activations, one
 * thread and the pool (tile-parallel and phase-parallel), and 1-D convs (rank 3 input). */
static void test_winograd_1d(cort_pool *pool) {
    static const conv_case cases[] = {
        {2, 1, 16, 16, 1, {8, 5}, {3, 1}, {1, 1}, {1, 1}, {1, 0}, {1, 0}},
        {2, 2, 3, 5, 1, {9, 7}, {3, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
        {2, 1, 17, 19, 1, {13, 24}, {3, 1}, {1, 1}, {1, 1}, {2, 0}, {1, 0}},
        {2, 3, 64, 40, 1, {32, 48}, {3, 1}, {1, 1}, {1, 1}, {1, 0}, {1, 0}},
        {2, 2, 33, 70, 1, {16, 40}, {3, 1}, {1, 1}, {1, 1}, {0, 0}, {2, 0}},
        {2, 1, 8, 8, 1, {6, 100}, {3, 1}, {1, 1}, {1, 1}, {5, 0}, {4, 0}},
        {2, 1, 16, 16, 1, {5, 8}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}},
        {2, 2, 3, 5, 1, {7, 9}, {1, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
        {2, 1, 17, 19, 1, {24, 13}, {1, 3}, {1, 1}, {1, 1}, {0, 2}, {0, 1}},
        {2, 3, 32, 64, 1, {32, 48}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}},
        {2, 2, 64, 33, 1, {16, 24}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}},
        {2, 1, 24, 16, 1, {3, 150}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 0}},
        {2, 1, 8, 8, 1, {4, 70}, {1, 3}, {1, 1}, {1, 1}, {0, 20}, {0, 19}},
        {2, 2, 48, 48, 1, {96, 90}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}},
        {2, 2, 48, 48, 1, {90, 96}, {3, 1}, {1, 1}, {1, 1}, {1, 0}, {1, 0}},
        /* whole images per thread, each in two blocks of tiles */
        {2, 6, 48, 48, 1, {48, 100}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}},
        {1, 2, 40, 24, 1, {77}, {3}, {1}, {1}, {1}, {1}},
        {1, 3, 16, 32, 1, {1000}, {3}, {1}, {1}, {0}, {2}},
    };
    /* 1-D picks: from 32 channels in and out and 8 outputs along the axis; no stride, dilation or
     * padding across the axis */
    static const conv_case picks[] = {
        {2, 1, 64, 64, 1, {32, 48}, {3, 1}, {1, 1}, {1, 1}, {1, 0}, {1, 0}},
        {2, 1, 32, 64, 1, {32, 48}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}},
        {2, 1, 24, 64, 1, {32, 48}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}},
        {2, 1, 64, 24, 1, {32, 48}, {3, 1}, {1, 1}, {1, 1}, {1, 0}, {1, 0}},
        {2, 1, 64, 64, 1, {5, 48}, {3, 1}, {1, 1}, {1, 1}, {1, 0}, {1, 0}},
        {2, 1, 64, 64, 1, {32, 48}, {3, 1}, {2, 1}, {1, 1}, {1, 0}, {1, 0}},
        {2, 1, 64, 64, 1, {32, 48}, {3, 1}, {1, 2}, {1, 1}, {1, 0}, {1, 0}},
        {2, 1, 64, 64, 1, {32, 48}, {1, 3}, {1, 1}, {1, 2}, {0, 2}, {0, 2}},
        {2, 1, 64, 64, 1, {32, 48}, {3, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 64, 64, 1, {32, 48}, {1, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 1}},
        {1, 1, 64, 64, 1, {300}, {3}, {1}, {1}, {1}, {1}},
    };
    static const int pick_tile[] = { 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 4 };
    static const int pick_axis[] = { NN_WINO_H, NN_WINO_W, NN_WINO_W, NN_WINO_H, NN_WINO_H, NN_WINO_H, NN_WINO_H,
                                     NN_WINO_W, NN_WINO_H, NN_WINO_W, NN_WINO_W };
    for (size_t pi = 0; pi < sizeof picks / sizeof picks[0]; pi++) {
        nn_conv_shape s;
        CHECK(make_geom(&picks[pi], 0, &s));
        CHECK_MSG(nn_wino_applies(&s) == pick_tile[pi], "1-D winograd pick %zu: %d, expected %d", pi,
                  nn_wino_applies(&s), pick_tile[pi]);
        CHECK_MSG(nn_wino_axis(&s) == pick_axis[pi], "1-D winograd pick %zu axis %d", pi, nn_wino_axis(&s));
    }
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        nn_conv_shape s;
        CHECK(make_geom(&cases[ci], 0, &s));
        CHECK_MSG(nn_wino_geometry_ok(&s), "1-D winograd case %zu geometry", ci);
        const int axis = nn_wino_axis(&s);
        CHECK(axis != NN_WINO_2D);
        const size_t xin = s.N * s.C * (size_t)nn_geom_in_size(&s.g), yn = s.N * s.M * (size_t)nn_geom_out_size(&s.g);
        float *x = rand_buf(xin), *w = rand_buf(s.M * s.C * 3), *b = ci % 2 ? rand_buf(s.M) : NULL;
        float *y = rand_buf(yn), *r = malloc(yn * sizeof(float));
        nn_act act = { (int)(ci % 3 == 2 ? CORT_ACT_SILU : ci % 3 == 1 ? CORT_ACT_RELU : CORT_ACT_NONE), 0, 0 };
        nn_conv_f32_ref(&s, x, w, b, r);
        nn_act_apply(&act, r, yn);
        for (int threaded = 0; threaded < 2; threaded++) {
            nn_wino_weights ww;
            CHECK_OK(nn_wino_pack(w, s.M, s.C, 4, axis, &ww));
            CHECK(ww.ne == 6 && ww.axis == axis);
            for (size_t i = 0; i < yn; i++) y[i] = NAN;
            CHECK_OK(nn_wino_conv(threaded ? pool : NULL, &s, x, &ww, b, &act, y, NULL));
            const double err = max_rel_err(y, r, yn);
            CHECK_MSG(err < 2e-5 * sqrt((double)s.C * 3), "1-D winograd case %zu (axis %d C=%zu M=%zu %lldx%lld) threaded %d: err %g",
                      ci, axis, s.C, s.M, (long long)s.g.in[1], (long long)s.g.in[2], threaded, err);
            nn_wino_free(&ww);
        }
        free(x); free(w); free(b); free(y); free(r);
    }
}

/* A conv's GEMM: A prepacked (the weights), B a plain matrix read in place with a row stride wider
 * than N (the input planes). These run in the rows-outer order: each A panel sweeps runs of B
 * panels, and with K past a slice the sweep's slices run in turn (the edge panel of B packed per
 * slice). Several sweeps, an edge panel, 1 to 3 K slices; 1 thread, column tasks and row tasks on
 * the pool (160 x 300: few column panels, many row panels, split by rows); bias, residual, beta = 1
 * and activations in the last slice only. */
static void test_gemm_conv_order(cort_pool *pool) {
    const nn_gemm_kernel *const *kernels;
    size_t nk = nn_gemm_kernels(&kernels);
    static const size_t sizes[][3] = { {40, 300, 600}, {20, 100, 520}, {64, 49, 300}, {13, 40, 257}, {97, 1030, 300},
                                       {200, 20, 700}, {40, 33, 64}, {30, 530, 256}, {160, 300, 520}, {160, 300, 200} };
    for (size_t ki = 0; ki <= nk; ki++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int variant = 0; variant < 4; variant++) {
                const size_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2], ldb = N + 11 + si, ldc = N + 3;
                const int with_sum = variant & 1, beta_one = variant == 2;
                float *A = rand_buf(M * K), *B = rand_buf(K * ldb), *S = rand_buf(M * ldc), *C = rand_buf(M * ldc);
                float *R = malloc(M * ldc * sizeof(float)), *bias = rand_buf(M);
                memcpy(R, C, M * ldc * sizeof(float));
                nn_gemm_b b = nn_gemm_b_matrix(B, ldb, 0);
                nn_act act = { variant < 2 ? CORT_ACT_RELU : CORT_ACT_SILU, 0, 0 };
                const nn_gemm_kernel *kern = ki < nk ? kernels[ki] : NULL;
                nn_gemm_packed pa;
                CHECK_OK(nn_gemm_pack_a(kern, M, K, 1.0f, A, K, 0, &pa));
                nn_gemm_opts o = { &pa, NULL, bias, &act, NULL, with_sum ? S : NULL, NULL };
                CHECK_OK(nn_sgemm_opt(variant >= 2 ? NULL : pool, kern, M, N, K, 1.0f, A, K, 0, &b, beta_one ? 1.0f : 0.0f,
                                      C, ldc, &o));
                nn_sgemm_ref(M, N, K, 1.0f, A, K, 0, &b, beta_one ? 1.0f : 0.0f, R, ldc);
                for (size_t i = 0; i < M; i++)
                    for (size_t q = 0; q < N; q++) {
                        float v = R[i * ldc + q] + bias[i] + (with_sum ? S[i * ldc + q] : 0.0f);
                        if (act.kind == CORT_ACT_RELU) v = v > 0 ? v : 0;
                        if (act.kind == CORT_ACT_SILU) v = v / (1.0f + expf(-v));
                        R[i * ldc + q] = v;
                    }
                double err = max_rel_err(C, R, M * ldc);
                CHECK_MSG(err < 1e-4, "conv-order gemm %s M=%zu N=%zu K=%zu variant %d: err %g", kern ? kern->name : "auto",
                          M, N, K, variant, err);
                nn_gemm_packed_free(&pa);
                free(A); free(B); free(S); free(C); free(R); free(bias);
            }
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(3, &pool));
    test_gemm(pool);
    test_gemm_sum(pool);
    test_gemm_conv_order(pool);
    test_conv(pool);
    test_small_plane_picks();
    test_small_plane_picks_avx2();
    test_conv_indirect(pool);
    test_pool(pool);
    test_winograd(pool);
    test_winograd_1d(pool);
    g_pool = pool;
    test_op_conv_f16();
    test_op_matmul();
    test_op_gemm();
    test_op_errors();
    test_op_conv_fused("Conv", 0);
    test_op_conv_fused("Conv", 1);
    test_op_conv_fused("ConvTranspose", 0);
    test_op_fused_silu("Conv", 0);
    test_op_fused_silu("Conv", 1);
    test_op_fused_silu("ConvTranspose", 0);
    test_op_fused_silu("Gemm", 0);
    test_act_epilogue();
    {
        int64_t xs[4] = { 1, 4, 9, 9 }, ws[4] = { 6, 4, 3, 3 }, wt[4] = { 4, 6, 3, 3 };
        test_op_oom("Conv", 11, CORT_TYPE_FLOAT, xs, ws, 4);
        test_op_oom("Conv", 11, CORT_TYPE_FLOAT16, xs, ws, 4);
        test_op_oom("ConvTranspose", 11, CORT_TYPE_FLOAT, xs, wt, 4);
        int64_t a[3] = { 2, 5, 7 }, b[3] = { 2, 7, 9 };
        test_op_oom("MatMul", 13, CORT_TYPE_FLOAT16, a, b, 3);
    }
    test_op_layernorm_quant();
    cort_pool_free(pool);
    return tu_finish();
}
