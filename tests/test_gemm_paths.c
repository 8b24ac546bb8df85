/* The SGEMM micro-kernels called directly, against a plain reference, for every kernel the ISA level
 * under test lists (at avx512 that includes the AVX2 one, so both x86 kernels are covered on an
 * AVX-512 machine): every tile height and width up to MR x NR, K = 1 and K past a slice, packed A
 * or rows read in place, B packed, read in place or through row pointers (b_ind), accumulate, row
 * and column bias, the fused residual (c_add), every activation, runs of tiles (panels), prefetch
 * hints; the M = 1 panel kernels (gemv_panel); the transposed-store tiles; and the indirect conv
 * with weights packed for each edge-capable kernel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "providers/cpu/kernels/gemm.h"
#include "providers/cpu/ops/nn/conv.h"
#include "graph/op.h"

static uint32_t rng_state = 777;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static float *rand_buf(size_t n) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = frand();
    return p;
}

static float act_ref(int kind, float v, float lo, float hi) {
    switch (kind) {
    case CORT_ACT_RELU: return v > 0 ? v : 0;
    case CORT_ACT_CLIP: return v < lo ? lo : v > hi ? hi : v;
    case CORT_ACT_LEAKY_RELU: return v >= 0 ? v : v * lo;
    case CORT_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case CORT_ACT_HARD_SIGMOID: return fmaxf(0.0f, fminf(1.0f, lo * v + hi));
    case CORT_ACT_SILU: return v / (1.0f + expf(-v));
    case CORT_ACT_HARD_SWISH: return v * fmaxf(0.0f, fminf(1.0f, v / 6.0f + 0.5f));
    case CORT_ACT_GELU: return (float)(v * 0.5 * erfc(-v / sqrt(2.0)));
    default: return v;
    }
}

static const tu_tol tol = { 1e-4, 1e-4, 1e-6 };

/* One call of k->ukr on a tile of `rows` x `cols` (or `np` full-width tiles), K = kc. */
typedef struct ukr_case {
    size_t rows, cols, kc, np;
    int a_inplace, b_mode;   /* b_mode 0 packed (ldb = NR * np), 1 in place (wider ldb), 2 b_ind */
    int accumulate, bias, col_bias, c_add, act, prefetch;
} ukr_case;

static void run_ukr_case(const nn_gemm_kernel *k, const ukr_case *uc) {
    const size_t mr = k->mr, nr = k->nr, np = uc->np ? uc->np : 1, kc = uc->kc;
    const size_t width = np * nr, cols = np > 1 ? width : uc->cols, rows = uc->rows;
    const size_t ldb = uc->b_mode == 0 ? width : width + 5, ldc = width + 7, lda = kc + 3;
    /* A: packed [kc][mr] (padding rows random: their results must not be stored) or rows in place */
    float *ap = rand_buf(kc * mr), *ar = rand_buf(mr * lda);
    float *B = rand_buf((kc + 1) * ldb + 64), *C = rand_buf(mr * ldc), *want = malloc(mr * ldc * sizeof(float));
    float *bias = rand_buf(mr), *cb = rand_buf(width), *add = rand_buf(mr * ldc), *pf = rand_buf(kc * 64 + 64);
    const float **bind = malloc(kc * sizeof *bind);
    const size_t boff = 3;
    for (size_t p = 0; p < kc; p++) bind[p] = B + (kc - 1 - p) * ldb;   /* rows in reverse order */
    memcpy(want, C, mr * ldc * sizeof(float));
    const float lo = uc->act == CORT_ACT_HARD_SIGMOID ? 0.2f : uc->act == CORT_ACT_CLIP ? -0.3f : 0.1f;
    const float hi = uc->act == CORT_ACT_CLIP ? 0.4f : 0.5f;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            double s = 0.0;
            for (size_t p = 0; p < kc; p++) {
                const float a = uc->a_inplace ? ar[i * lda + p] : ap[p * mr + i];
                const float b = uc->b_mode == 2 ? bind[p][boff + j] : B[p * ldb + j];
                s += (double)a * (double)b;
            }
            float v = (float)s;
            if (uc->bias) v += bias[i];
            if (uc->col_bias) v += cb[j];
            if (uc->accumulate) v += want[i * ldc + j];
            if (uc->c_add) v += add[i * ldc + j];
            want[i * ldc + j] = act_ref(uc->act, v, lo, hi);
        }
    nn_ukr_args u;
    memset(&u, 0, sizeof u);
    u.kc = kc;
    if (uc->a_inplace) { u.a = ar; u.a_rs = lda; u.a_cs = 1; }
    else { u.a = ap; u.a_rs = 1; u.a_cs = mr; }
    u.b = B; u.ldb = ldb;
    if (uc->b_mode == 2) { u.b_ind = bind; u.b_off = boff; }
    /* B in place without the L2 prefetch: its rows fetched ahead into L1 as gemm.c does (a kernel
     * may ignore it; the result must not change) */
    if (uc->b_mode == 1 && !uc->prefetch) u.b_rows_ahead = 8;
    u.c = C; u.ldc = ldc;
    u.bias = uc->bias ? bias : NULL;
    u.col_bias = uc->col_bias ? cb : NULL;
    u.rows = rows; u.cols = np > 1 ? 0 : cols;
    u.c_add = uc->c_add ? add : NULL;
    u.accumulate = uc->accumulate;
    u.act = uc->act; u.act_lo = lo; u.act_hi = hi;
    u.panels = np > 1 ? np : 0;
    if (uc->prefetch) { u.b_prefetch = pf; u.b_prefetch_ld = uc->prefetch == 2 ? 16 : 0; }
    k->ukr(&u);
    /* elements outside the tile must be untouched: compare the whole buffer */
    CHECK_CLOSE(C, want, mr * ldc, tol,
                "ukr %s rows %zu cols %zu kc %zu np %zu a_inplace %d b_mode %d acc %d bias %d cb %d add %d act %d pf %d",
                k->name, rows, cols, kc, np, uc->a_inplace, uc->b_mode, uc->accumulate, uc->bias, uc->col_bias, uc->c_add,
                uc->act, uc->prefetch);
    free(ap); free(ar); free(B); free(C); free(want); free(bias); free(cb); free(add); free(pf); free(bind);
}

static const int all_acts[] = { CORT_ACT_NONE, CORT_ACT_RELU, CORT_ACT_CLIP, CORT_ACT_LEAKY_RELU, CORT_ACT_SIGMOID,
                                CORT_ACT_HARD_SIGMOID, CORT_ACT_SILU, CORT_ACT_HARD_SWISH };
#define N_ACTS (sizeof all_acts / sizeof all_acts[0])

static void test_ukernels(void) {
    const nn_gemm_kernel *const *kernels;
    const size_t nk = nn_gemm_kernels(&kernels);
    size_t tested = 0;
    static const size_t kcs[] = { 1, 2, 5, 17, 64, 256 };
    for (size_t ki = 0; ki < nk; ki++) {
        const nn_gemm_kernel *k = kernels[ki];
        size_t n = 0;
        /* full tiles, every option that any kernel honours on them */
        for (size_t kci = 0; kci < sizeof kcs / sizeof kcs[0]; kci++)
            for (int v = 0; v < 8; v++) {
                /* Relu, Clip and LeakyRelu: every kernel applies them on its registers */
                ukr_case uc = { k->mr, k->nr, kcs[kci], 0, v & 1, 0, (v >> 1) & 1, (v >> 2) & 1, 0, 0, all_acts[(kci + (size_t)v) % 4], 0 };
                if (v & 4) uc.b_mode = 1;
                if (k->ext && (v & 2)) uc.col_bias = 1;
                run_ukr_case(k, &uc);
                n++;
            }
        /* full tiles with Sigmoid / SiLU on the registers (the AVX2 kernel has its own full-tile
         * variant for them), with accumulation, residual, B in place */
        if (k->edge)
            for (size_t kci = 0; kci < sizeof kcs / sizeof kcs[0]; kci++)
                for (int v = 0; v < 8; v++) {
                    ukr_case uc = { k->mr, k->nr, kcs[kci], 0, v & 1, (v >> 1) & 1, (v >> 2) & 1, 1, 0, v == 3 || v == 6,
                                    (v & 1) ? CORT_ACT_SIGMOID : CORT_ACT_SILU, 0 };
                    if (k->ext) uc.col_bias = v == 5;
                    run_ukr_case(k, &uc);
                    n++;
                }
        /* GELU on the registers where the kernel says so: full tiles and runs of them, every edge
         * shape, with accumulation, residual, bias, B packed, in place and indirect */
        if (k->gelu_regs)
            for (size_t rows = 1; rows <= k->mr; rows++)
                for (size_t cols = 1; cols <= k->nr; cols++) {
                    const unsigned v = (unsigned)(rows * 13 + cols * 5);
                    ukr_case uc = { rows, cols, kcs[(rows + cols) % (sizeof kcs / sizeof kcs[0])], 0, 0, (int)(v % 3),
                                    (int)(v >> 1 & 1), (int)(v >> 2 & 1), 0, (int)(v >> 3 & 1), CORT_ACT_GELU, 0 };
                    if (uc.b_mode == 1 && (rows < k->mr || cols < k->nr)) uc.b_mode = 0;
                    run_ukr_case(k, &uc);
                    n++;
                    if (rows == k->mr && cols == k->nr)
                        for (int m = 0; m < 3; m++) {
                            uc.np = 2 + (size_t)m;
                            uc.b_mode = m;
                            run_ukr_case(k, &uc);
                            n++;
                        }
                }
        if (!k->edge) { tested += n; continue; }
        /* edge kernels: every tile shape, every activation, residual, indirect B */
        for (size_t rows = 1; rows <= k->mr; rows++)
            for (size_t cols = 1; cols <= k->nr; cols++) {
                const size_t kc = kcs[(rows * 7 + cols) % (sizeof kcs / sizeof kcs[0])];
                const unsigned v = (unsigned)(rows * 31 + cols * 7);
                ukr_case uc = { rows, cols, kc, 0, 0, (int)(v % 3), (int)(v >> 1 & 1), (int)(v >> 2 & 1), 0,
                                (int)(v >> 3 & 1), all_acts[(rows + cols) % N_ACTS], (int)(v >> 4 & 1) };
                if (uc.b_mode == 1) uc.b_mode = 0;   /* B in place is for full panels only */
                if (k->ext) uc.col_bias = (int)(v >> 5 & 1);
                run_ukr_case(k, &uc);
                n++;
            }
        for (size_t ai = 0; ai < N_ACTS; ai++)
            for (int v = 0; v < 4; v++) {
                ukr_case uc = { k->mr - (size_t)v % 2, k->nr - (size_t)v, 33, 0, 0, v % 3, v & 1, v == 1, k->ext && v == 2,
                                v != 3, all_acts[ai], v == 3 };
                run_ukr_case(k, &uc);
                n++;
            }
        if (k->ext) {   /* runs of full tiles in one call, B in place or indirect */
            for (size_t np = 2; np <= 4; np++)
                for (int v = 0; v < 6; v++) {
                    ukr_case uc = { v < 3 ? k->mr : k->mr - 1, 0, v == 0 ? 1 : 20 + (size_t)v, np, 0, v % 3 == 2 ? 2 : 1,
                                    v & 1, v == 1, v == 2 || v == 3, v >= 3, all_acts[(np + (size_t)v) % N_ACTS], v == 4 };
                    run_ukr_case(k, &uc);
                    n++;
                }
            /* full-height runs (one call for every tile: the AVX2 kernel's own loop) with every
             * activation, short and long K */
            for (size_t ai = 0; ai < N_ACTS; ai++) {
                ukr_case uc = { k->mr, 0, ai % 2 ? 16 : 70, 3, 0, (int)(ai % 3), (int)(ai / 2 % 2), 1, 0,
                                (int)(ai / 4), all_acts[ai], (int)(ai == 5) };
                run_ukr_case(k, &uc);
                n++;
            }
        }
        tested += n;
    }
    CHECK(tested > 0);
}

/* gemv_panel: acc += a * (one packed panel), K = 1.. past the 4-step unroll, strided a. */
static void test_gemv_panels(void) {
    const nn_gemm_kernel *const *kernels;
    const size_t nk = nn_gemm_kernels(&kernels);
    for (size_t ki = 0; ki < nk; ki++) {
        const nn_gemm_kernel *k = kernels[ki];
        if (!k->gemv_panel) continue;
        static const size_t kcs[] = { 1, 3, 4, 5, 8, 13, 256 };
        for (size_t kci = 0; kci < sizeof kcs / sizeof kcs[0]; kci++)
            for (size_t inca = 1; inca <= 3; inca += 2) {
                const size_t kc = kcs[kci], nr = k->nr;
                float *a = rand_buf(kc * inca), *b = rand_buf(kc * nr), *acc = rand_buf(nr), *want = malloc(nr * sizeof(float));
                for (size_t j = 0; j < nr; j++) {
                    double s = acc[j];
                    for (size_t p = 0; p < kc; p++) s += (double)a[p * inca] * (double)b[p * nr + j];
                    want[j] = (float)s;
                }
                k->gemv_panel(kc, a, inca, b, acc);
                CHECK_CLOSE(acc, want, nr, tol, "gemv_panel %s kc %zu inca %zu", k->name, kc, inca);
                free(a); free(b); free(acc); free(want);
            }
    }
}

/* The M = 1 paths of nn_sgemm_opt (B plain: the streaming loop; B prepacked: the panel kernel) with
 * alpha, beta, row and column bias, residual and activation; N past the prepacked path's 1024-column
 * groups (a partial last group and panel), K over several slices. */
static void test_gemv_paths(cort_pool *pool) {
    static const size_t sizes[][2] = { { 1, 1 }, { 7, 3 }, { 300, 17 }, { 512, 1000 }, { 3264, 33 }, { 65, 515 },
                                       { 300, 2100 }, { 1300, 1030 } };
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int v = 0; v < 8; v++) {
            const size_t K = sizes[si][0], N = sizes[si][1];
            const int tb = v & 1, packed = (v >> 1) & 1;
            const float alpha = v & 4 ? 0.5f : 1.0f, beta = v == 5 ? 0.25f : 0.0f;
            float *A = rand_buf(K), *B = rand_buf(K * N), *C = rand_buf(N), *R = malloc(N * sizeof(float));
            float *S = rand_buf(N), *cb = rand_buf(N);
            memcpy(R, C, N * sizeof(float));
            nn_gemm_b b = nn_gemm_b_matrix(B, tb ? K : N, tb);
            nn_act act = { all_acts[(si + (size_t)v) % N_ACTS], 0.1f, 0.6f };
            if (act.kind == CORT_ACT_CLIP) act.alpha = -0.2f;
            nn_gemm_packed bp = { 0 };
            nn_gemm_opts o = { NULL, NULL, NULL, &act, NULL, v & 2 ? S : NULL, v & 4 ? cb : NULL };
            if (packed) { CHECK_OK(nn_gemm_pack_b(NULL, K, N, &b, &bp)); o.bpack = &bp; }
            CHECK_OK(nn_sgemm_opt(si & 1 ? pool : NULL, NULL, 1, N, K, alpha, A, K, 0, &b, beta, C, N, &o));
            nn_sgemm_ref(1, N, K, alpha, A, K, 0, &b, beta, R, N);
            for (size_t q = 0; q < N; q++) {
                float x = R[q] + (v & 2 ? S[q] : 0.0f) + (v & 4 ? cb[q] : 0.0f);
                R[q] = act_ref(act.kind, x, act.alpha, act.beta);
            }
            CHECK_CLOSE(C, R, N, tol, "gemv K %zu N %zu tb %d packed %d v %d", K, N, tb, packed, v);
            nn_gemm_packed_free(&bp);
            free(A); free(B); free(C); free(R); free(S); free(cb);
        }
}

/* The transposed-store tiles: every row count up to tstore_rows, column counts around NR and NR / 2,
 * K over one and several slices, bias, residual, every activation. */
static void test_tstore(void) {
    const nn_gemm_kernel *const *kernels;
    const size_t nk = nn_gemm_kernels(&kernels);
    for (size_t ki = 0; ki < nk; ki++) {
        const nn_gemm_kernel *k = kernels[ki];
        if (!k->tstore) continue;
        const size_t nr = k->nr;
        const size_t colset[] = { 1, nr / 2 - 1, nr / 2, nr / 2 + 1, nr - 1, nr };
        for (size_t rows = 1; rows <= k->tstore_rows; rows++)
            for (size_t ci = 0; ci < sizeof colset / sizeof colset[0]; ci++) {
                const size_t cols = colset[ci], K = (rows + ci) % 3 == 0 ? 300 : (rows + ci) % 3 == 1 ? 1 : 40;
                const size_t P = rows + 2, M = nr + 3, ldy = P + 1, jp = 0;
                const int act = all_acts[(rows + ci) % N_ACTS];
                const int with_bias = (rows + ci) % 2, with_sum = (rows / 2 + ci) % 2;
                float *at = rand_buf(K * P), *w = rand_buf(M * K), *bias = rand_buf(nr), *sum = rand_buf(nr * ldy);
                float *y = rand_buf(nr * ldy), *want = malloc(nr * ldy * sizeof(float));
                memcpy(want, y, nr * ldy * sizeof(float));
                nn_gemm_b b = nn_gemm_b_matrix(w, K, 1);   /* B[k][m] = w[m][k] */
                nn_gemm_packed bp;
                CHECK_OK(nn_gemm_pack_b(k, K, M, &b, &bp));
                const float lo = act == CORT_ACT_HARD_SIGMOID ? 0.2f : -0.1f, hi = 0.5f;
                for (size_t j = 0; j < cols; j++)
                    for (size_t i = 0; i < rows; i++) {
                        double s = 0.0;
                        for (size_t p = 0; p < K; p++) s += (double)at[p * P + 1 + i] * (double)w[j * K + p];
                        float v = (float)s + (with_bias ? bias[j] : 0.0f) + (with_sum ? sum[j * ldy + i] : 0.0f);
                        want[j * ldy + i] = act_ref(act, v, act == CORT_ACT_LEAKY_RELU ? 0.1f : lo, hi);
                    }
                nn_tstore_args t;
                memset(&t, 0, sizeof t);
                t.K = K; t.kc_max = NN_GEMM_KC;
                t.a = at + 1; t.lda = P;   /* the tile starts at position 1 of the plane */
                t.b = bp.data; t.b_panels = (M + nr - 1) / nr; t.jp = jp;
                t.rows = rows; t.cols = cols;
                t.y = y; t.ldy = ldy;
                t.bias = with_bias ? bias : NULL;
                t.sum = with_sum ? sum : NULL;
                t.act = act; t.act_lo = act == CORT_ACT_LEAKY_RELU ? 0.1f : lo; t.act_hi = hi;
                t.prefetch_next = (int)(ci & 1);
                if (k->tstore_kblock && K > k->tstore_kblock && ci % 2 == 0) {
                    /* in K blocks, sums carried in acc; blocks of 7 also cross a kc slice's end */
                    float acc[NN_MAX_TILE];
                    const size_t kb = (rows + ci) % 4 == 1 ? 7 : k->tstore_kblock;
                    for (size_t k0 = 0; k0 < K; k0 += kb) {
                        t.k_begin = k0; t.k_end = k0 + kb < K ? k0 + kb : K;
                        t.acc = acc; t.first = k0 == 0; t.last = t.k_end == K;
                        t.prefetch_block = (k0 / kb) % 2 ? w : NULL;   /* only a hint: results unchanged */
                        k->tstore(&t);
                    }
                } else {
                    k->tstore(&t);
                }
                CHECK_CLOSE(y, want, nr * ldy, tol, "tstore %s rows %zu cols %zu K %zu act %d bias %d sum %d", k->name,
                            rows, cols, K, act, with_bias, with_sum);
                nn_gemm_packed_free(&bp);
                free(at); free(w); free(bias); free(sum); free(y); free(want);
            }
    }
}

/* The indirect conv with weights packed for each edge-capable kernel the level lists (the best
 * kernel's path is also covered by test_ops_nn's test_conv_indirect). */
static void test_conv_indirect_kernels(cort_pool *pool) {
    static const struct { size_t n, c, m, h, w, k, s, pb; } cases[] = {
        { 1, 3, 16, 31, 33, 3, 2, 1 }, { 2, 5, 13, 9, 7, 3, 1, 1 }, { 1, 16, 20, 20, 70, 3, 1, 1 },
        { 1, 8, 9, 15, 16, 1, 2, 0 }, { 1, 70, 7, 6, 6, 3, 1, 1 }, { 1, 4, 12, 40, 80, 3, 1, 1 },
        { 2, 64, 24, 50, 70, 1, 2, 0 },   /* no junk columns, K = 64: runs cross output rows */
    };
    const nn_gemm_kernel *const *kernels;
    const size_t nk = nn_gemm_kernels(&kernels);
    for (size_t ki = 0; ki < nk; ki++) {
        const nn_gemm_kernel *k = kernels[ki];
        if (!k->edge) continue;
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            nn_conv_shape s;
            memset(&s, 0, sizeof s);
            s.N = cases[ci].n; s.C = cases[ci].c; s.M = cases[ci].m; s.group = 1;
            nn_geom *g = &s.g;
            g->nd = 2;
            g->in[0] = g->out[0] = g->k[0] = g->s[0] = g->d[0] = 1;
            g->in[1] = (int64_t)cases[ci].h; g->in[2] = (int64_t)cases[ci].w;
            for (int i = 1; i < 3; i++) {
                g->k[i] = (int64_t)cases[ci].k; g->s[i] = (int64_t)cases[ci].s; g->d[i] = 1;
                g->pb[i] = g->pe[i] = (int64_t)cases[ci].pb;
                g->out[i] = (g->in[i] + 2 * g->pb[i] - g->k[i]) / g->s[i] + 1;
            }
            const size_t N = s.N, M = s.M, in = (size_t)(g->in[1] * g->in[2]), out = (size_t)(g->out[1] * g->out[2]);
            const size_t K = s.C * cases[ci].k * cases[ci].k;
            float *x = rand_buf(N * s.C * in), *w = rand_buf(M * K), *b = rand_buf(M), *res = rand_buf(N * M * out);
            float *y = malloc(N * M * out * sizeof(float)), *r = malloc(N * M * out * sizeof(float));
            nn_conv_f32_ref(&s, x, w, b, r);
            nn_gemm_packed wp;
            CHECK_OK(nn_gemm_pack_a(k, M, K, 1.0f, w, K, 0, &wp));
            CHECK(nn_conv_indirect_applies(&s, &wp));
            for (size_t ai = 0; ai < N_ACTS; ai++) {
                nn_act act = { all_acts[ai], all_acts[ai] == CORT_ACT_CLIP ? -0.5f : 0.2f, 0.6f };
                const int with_sum = (int)(ai % 2);
                for (size_t i = 0; i < N * M * out; i++) y[i] = NAN;
                CHECK_OK(nn_conv_indirect_f32(ai & 2 ? pool : NULL, &s, x, &wp, b, with_sum ? res : NULL, &act, y, NULL));
                float *want = malloc(N * M * out * sizeof(float));
                for (size_t i = 0; i < N * M * out; i++)
                    want[i] = act_ref(act.kind, r[i] + (with_sum ? res[i] : 0.0f), act.alpha, act.beta);
                CHECK_CLOSE(y, want, N * M * out, tol, "indirect conv %s case %zu act %d sum %d", k->name, ci, act.kind,
                            with_sum);
                free(want);
            }
            nn_gemm_packed_free(&wp);
            free(x); free(w); free(b); free(res); free(y); free(r);
        }
    }
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(3, &pool));
    test_ukernels();
    test_gemv_panels();
    test_gemv_paths(pool);
    test_tstore();
    test_conv_indirect_kernels(pool);
    cort_pool_free(pool);
    return tu_finish();
}
