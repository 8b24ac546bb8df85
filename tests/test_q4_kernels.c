/* The 4-bit weight kernels (kernels/q4_gemm.h) against a plain loop over the dequantized matrix,
 * for every kernel the ISA level under test lists: the dequantized panels bit for bit (the same
 * float expression scale * (q - zp)), the GEMV kernel and the SGEMM over dequantized panels within a
 * tolerance scaled to the output. Shapes: K inside, at and across block edges (K not a multiple of
 * the block, odd K), N tails, blocks of 16 to 128, no / packed uint8 / float zero points, bias,
 * M = 1, 2, 7, 33, 1 and 2 threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/threadpool.h"
#include "providers/cpu/kernels/q4_gemm.h"

static uint32_t rng_state = 4321;
static uint32_t rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}
static float frnd(void) { return (float)(rnd() % 20001) / 10000.0f - 1.0f; }

static const tu_tol TOL = { 1e-4, 2e-5, 1e-6 };

typedef struct q4_case {
    size_t K, N, block, blocks, zstride;
    int zp_mode;
    uint8_t *b, *zu8;
    float *scales, *zf32, *w;   /* w: K x N, the reference dequantization */
} q4_case;

static void make_case(q4_case *c, size_t K, size_t N, size_t block, int zp_mode) {
    memset(c, 0, sizeof *c);
    c->K = K; c->N = N; c->block = block; c->blocks = (K + block - 1) / block; c->zstride = (c->blocks + 1) / 2;
    c->zp_mode = zp_mode;
    const size_t nb = N * c->blocks * block / 2;
    c->b = malloc(nb);
    for (size_t i = 0; i < nb; i++) c->b[i] = (uint8_t)rnd();
    /* the extremes 0 and 15 in both nibbles */
    for (size_t i = 0; i < nb && i < 4; i++) c->b[i] = i & 1 ? 0xf0 : 0x0f;
    c->scales = malloc(N * c->blocks * sizeof(float));
    for (size_t i = 0; i < N * c->blocks; i++) c->scales[i] = frnd() * 0.1f;
    if (zp_mode == NN_Q4_ZP_U8) {
        c->zu8 = malloc(N * c->zstride);
        for (size_t i = 0; i < N * c->zstride; i++) c->zu8[i] = (uint8_t)rnd();
    } else if (zp_mode == NN_Q4_ZP_F32) {
        c->zf32 = malloc(N * c->blocks * sizeof(float));
        for (size_t i = 0; i < N * c->blocks; i++) c->zf32[i] = frnd() * 8.0f + 7.5f;
    }
    c->w = malloc(K * N * sizeof(float));
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < K; k++) {
            const size_t g = k / block, j = k % block;
            const int q = (c->b[(n * c->blocks + g) * (block / 2) + j / 2] >> ((j & 1) * 4)) & 15;
            float z = 8.0f;
            if (c->zu8) z = (float)((c->zu8[n * c->zstride + g / 2] >> ((g & 1) * 4)) & 15);
            if (c->zf32) z = c->zf32[n * c->blocks + g];
            c->w[k * N + n] = ((float)q - z) * c->scales[n * c->blocks + g];
        }
}

static void free_case(q4_case *c) {
    free(c->b); free(c->zu8); free(c->scales); free(c->zf32); free(c->w);
}

static void ref_gemm(const q4_case *c, size_t M, const float *a, const float *bias, float *y) {
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < c->N; n++) {
            double s = bias ? bias[n] : 0.0;
            for (size_t k = 0; k < c->K; k++) s += (double)a[m * c->K + k] * (double)c->w[k * c->N + n];
            y[m * c->N + n] = (float)s;
        }
}

/* every K slice start the SGEMM may ask for and odd ones: the dequantized values bit for bit */
static void check_dequant(const nn_q4_kernel *k, const q4_case *c, const nn_q4_weights *w) {
    const size_t starts[] = { 0, 1, c->block - 1, c->block, c->K / 2, c->K - 1 };
    float *dst = malloc((c->K * 32 + 1) * sizeof(float));
    size_t bad = 0;
    for (size_t si = 0; si < sizeof starts / sizeof starts[0]; si++) {
        const size_t k0 = starts[si] < c->K ? starts[si] : 0, kc = c->K - k0;
        for (size_t jp = 0; jp < w->panels; jp++) {
            dst[kc * 32] = 12345.0f;
            k->dequant(w, nn_q4_panel(w, jp), k0, kc, dst, 32);
            for (size_t i = 0; i < kc; i++)
                for (size_t j = 0; j < NN_Q4_NR; j++) {
                    const size_t n = jp * NN_Q4_NR + j;
                    const float want = n < c->N ? c->w[(k0 + i) * c->N + n] : 0.0f;
                    if (memcmp(&dst[i * 32 + j], &want, sizeof want) != 0 && !(want == 0.0f && dst[i * 32 + j] == 0.0f))
                        bad++;
                }
            bad += dst[kc * 32] != 12345.0f;
        }
    }
    CHECK_MSG(bad == 0, "%s dequant K=%zu N=%zu block=%zu zp=%d: %zu values differ", k->name, c->K, c->N, c->block,
              c->zp_mode, bad);
    free(dst);
}

static void run_case(cort_pool *pool, const nn_q4_kernel *k, size_t K, size_t N, size_t block, int zp_mode,
                     int with_bias) {
    q4_case c;
    make_case(&c, K, N, block, zp_mode);
    nn_q4_weights w;
    if (!CHECK_OK(nn_q4_pack(K, N, block, c.b, c.scales, c.zu8, c.zf32, &w))) { free_case(&c); return; }
    check_dequant(k, &c, &w);
    const size_t Ms[] = { 1, 2, 7, 33 }, Mmax = 33;
    float *a = malloc(Mmax * K * sizeof(float)), *bias = with_bias ? malloc(N * sizeof(float)) : NULL;
    float *want = malloc((Mmax * N) * sizeof(float)), *got = malloc((Mmax * N + 1) * sizeof(float));
    for (size_t i = 0; i < Mmax * K; i++) a[i] = frnd();
    for (size_t i = 0; bias && i < N; i++) bias[i] = frnd();
    for (size_t mi = 0; mi < sizeof Ms / sizeof Ms[0]; mi++) {
        const size_t M = Ms[mi];
        ref_gemm(&c, M, a, bias, want);
        got[M * N] = 777.0f;
        nn_q4_gemv(pool, k, &w, M, a, K, bias, got, N);
        CHECK_CLOSE(got, want, M * N, TOL, "%s gemv M=%zu K=%zu N=%zu block=%zu zp=%d bias=%d", k->name, M, K, N, block,
                    zp_mode, with_bias);
        CHECK_MSG(got[M * N] == 777.0f, "%s gemv wrote past C", k->name);
        if (M < 7) continue;
        const nn_q4_gemm_ctx qc = { k, &w };
        const nn_gemm_b gb = nn_q4_gemm_b(&qc);
        nn_gemm_opts o = { NULL, NULL, NULL, NULL, NULL, NULL, bias };
        CHECK_OK(nn_sgemm_opt(pool, NULL, M, N, K, 1.0f, a, K, 0, &gb, 0.0f, got, N, &o));
        CHECK_CLOSE(got, want, M * N, TOL, "%s sgemm M=%zu K=%zu N=%zu block=%zu zp=%d bias=%d", k->name, M, K, N,
                    block, zp_mode, with_bias);
    }
    free(a); free(bias); free(want); free(got);
    nn_q4_free(&w);
    free_case(&c);
}

/* nn_q4_pack_ex reports every column once, in order, and packs what nn_q4_pack packs */
typedef struct cover { size_t next; int ok; } cover;
static void on_done(void *ctx, size_t n0, size_t n1) {
    cover *c = ctx;
    c->ok &= n0 == c->next && n1 > n0;
    c->next = n1;
}
static void test_pack_progress(void) {
    const size_t Ns[] = { 1, 16, 255, 256, 257, 600 };
    for (size_t i = 0; i < sizeof Ns / sizeof Ns[0]; i++) {
        q4_case c;
        make_case(&c, 64, Ns[i], 32, NN_Q4_ZP_U8);
        nn_q4_weights w1, w2;
        cover cv = { 0, 1 };
        CHECK_OK(nn_q4_pack(64, Ns[i], 32, c.b, c.scales, c.zu8, NULL, &w1));
        CHECK_OK(nn_q4_pack_ex(64, Ns[i], 32, c.b, c.scales, c.zu8, NULL, on_done, &cv, &w2));
        CHECK_MSG(cv.ok && cv.next == Ns[i], "pack progress N=%zu: ranges %s, ended at %zu", Ns[i], cv.ok ? "ok" : "bad",
                  cv.next);
        CHECK(w1.data && w2.data && !memcmp(w1.data, w2.data, w1.panels * w1.blocks * w1.rec));
        nn_q4_free(&w1);
        nn_q4_free(&w2);
        free_case(&c);
    }
}

int main(void) {
    test_pack_progress();
    const nn_q4_kernel *const *ks;
    const size_t nk = nn_q4_kernels(&ks);
    CHECK(nk >= 1 && ks[0] == nn_q4_best_kernel());
    cort_pool *pools[2] = { NULL, NULL };
    CHECK_OK(cort_pool_create(2, &pools[1]));
    const size_t Ks[] = { 16, 50, 64, 129, 300 }, Ns[] = { 1, 16, 17, 40 }, blocks[] = { 16, 32, 64, 128 };
    size_t n = 0;
    for (size_t ki = 0; ki < nk; ki++)
        for (size_t a = 0; a < sizeof Ks / sizeof Ks[0]; a++)
            for (size_t b = 0; b < sizeof Ns / sizeof Ns[0]; b++)
                for (size_t bl = 0; bl < sizeof blocks / sizeof blocks[0]; bl++)
                    for (int zp = 0; zp < 3; zp++, n++)
                        run_case(pools[n & 1], ks[ki], Ks[a], Ns[b], blocks[bl], zp, (int)(n % 3 == 1));
    /* an LLM-sized row: many panels over the pool */
    run_case(pools[1], ks[0], 1024, 200, 32, NN_Q4_ZP_U8, 1);
    cort_pool_free(pools[1]);
    return tu_finish();
}
