/* The exact int GEMM (kernels/int_gemm.h) against a plain int32 loop, bit for bit, for every kernel
 * the ISA level under test lists (at avx2 the AVX2 ones and the generic one; at avx512 the AVX-512
 * ones too, and with AVX512-VNNI the u8 x s8 byte kernel): M, K, N across
 * tile edges and odd K, uint8/int8 for each operand, zero points at the type's extremes and
 * random, scalar or per row of A / per column of B, and 1 or 3 threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/threadpool.h"
#include "providers/cpu/kernels/int_gemm.h"
#include "providers/cpu/ops/quant/quant.h"

static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

static int32_t ld8(const uint8_t *p, int s, size_t i) { return s ? (int32_t)(int8_t)p[i] : (int32_t)p[i]; }

/* zmode: 0 none, 1 scalar min of type, 2 scalar max of type, 3 random scalar, 4 random per row/col */
static void make_zp(uint8_t *z, size_t n, int s, int zmode, size_t *count) {
    *count = zmode == 4 ? n : 1;
    for (size_t i = 0; i < *count; i++) {
        uint32_t r = rnd() & 255;
        z[i] = zmode == 1 ? (uint8_t)(s ? 0x80 : 0) : zmode == 2 ? (uint8_t)(s ? 0x7f : 255) : (uint8_t)r;
    }
}

/* nn_igemm_epi's tiles copied into a C matrix (the conv's requantizing epilogue reads them alike) */
typedef struct epi_copy { int32_t *c; size_t ldc; } epi_copy;
static void epi_copy_tile(void *ctx, const int32_t *tile, size_t ldt, size_t i0, size_t rows, size_t j0, size_t cols) {
    const epi_copy *e = ctx;
    for (size_t r = 0; r < rows; r++) memcpy(e->c + (i0 + r) * e->ldc + j0, tile + r * ldt, cols * sizeof(int32_t));
}

static void run_case(cort_pool *pool, const nn_igemm_kernel *k, size_t M, size_t K, size_t N, int as, int bs,
                     int zma, int zmb) {
    uint8_t *a = malloc(M * K + 1), *b = malloc(K * N + 1), za[80], *zb = malloc(N + 1);
    for (size_t i = 0; i < M * K; i++) a[i] = (uint8_t)rnd();
    for (size_t i = 0; i < K * N; i++) b[i] = (uint8_t)rnd();
    /* extremes in the data too: a run of the type's min and max */
    for (size_t i = 0; i < M * K && i < 7; i++) a[i] = (uint8_t)(i & 1 ? (as ? 0x80 : 0) : (as ? 0x7f : 255));
    for (size_t i = 0; i < K * N && i < 7; i++) b[i] = (uint8_t)(i & 1 ? (bs ? 0x7f : 255) : (bs ? 0x80 : 0));
    size_t zac, zbc;
    make_zp(za, M, as, zma, &zac);
    make_zp(zb, N, bs, zmb, &zbc);
    nn_i8_operand oa = { a, as, K, zma ? za : NULL, as, zac }, ob = { b, bs, N, zmb ? zb : NULL, bs, zbc };
    int16_t *ap = malloc(nn_igemm_a_size(k, M, K) * sizeof(int16_t)), *bp = malloc(nn_igemm_b_size(k, K, N) * sizeof(int16_t));
    int32_t *c = malloc((M * N + 1) * sizeof(int32_t));
    memset(c, 0x5a, (M * N + 1) * sizeof(int32_t));
    nn_igemm_pack_a(k, M, K, &oa, ap);
    nn_igemm_pack_b(k, K, N, &ob, bp);
    nn_igemm(pool, k, M, N, K, ap, bp, c, N);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            int32_t zai = zma ? ld8(za, as, zac > 1 ? i : 0) : 0, zbj = zmb ? ld8(zb, bs, zbc > 1 ? j : 0) : 0, sum = 0;
            for (size_t p = 0; p < K; p++) sum += (ld8(a, as, i * K + p) - zai) * (ld8(b, bs, p * N + j) - zbj);
            if (c[i * N + j] != sum && !bad++) first = i * N + j;
        }
    CHECK_MSG(bad == 0, "%s M=%zu K=%zu N=%zu a%s b%s zp %d/%d: %zu wrong (first at %zu)", k->name, M, K, N,
              as ? "s8" : "u8", bs ? "s8" : "u8", zma, zmb, bad, first);
    CHECK_MSG(c[M * N] == 0x5a5a5a5a, "%s M=%zu K=%zu N=%zu wrote past C", k->name, M, K, N);
    int32_t *c2 = malloc((M * N + 1) * sizeof(int32_t));
    memset(c2, 0x5a, (M * N + 1) * sizeof(int32_t));
    epi_copy e = { c2, N };
    nn_igemm_epi(pool, k, M, N, K, ap, bp, epi_copy_tile, &e);
    CHECK_MSG(memcmp(c, c2, (M * N + 1) * sizeof(int32_t)) == 0, "%s M=%zu K=%zu N=%zu: epilogue tiles differ", k->name,
              M, K, N);
    free(a); free(b); free(zb); free(ap); free(bp); free(c); free(c2);
}

/* QLinearMatMul's requantization rounds with nn_q_round_fast: the same int32 as nn_q_round for
 * every float, checked on all halves and near-halves below 2^22, random products of int32
 * accumulators and scales, the 2^22 boundary, huge values and NaN. */
static void test_round_fast(void) {
    size_t bad = 0;
    float worst = 0;
    for (int32_t n = -(1 << 22); n < (1 << 22); n += 997) {
        const float cands[] = { (float)n + 0.5f, (float)n - 0.5f, nextafterf((float)n + 0.5f, 0), nextafterf((float)n + 0.5f, 1e30f),
                                (float)n * 0.001f, (float)n * 0.25f };
        for (size_t c = 0; c < sizeof cands / sizeof cands[0]; c++)
            if (nn_q_round_fast(cands[c]) != nn_q_round(cands[c]) && !bad++) worst = cands[c];
    }
    for (int i = 0; i < 200000; i++) {
        const int32_t acc = (int32_t)(rnd() << 8) >> (rnd() % 31);
        const float mult = (float)(rnd() % 100000 + 1) * 1e-7f, f = (float)acc * mult;
        if (nn_q_round_fast(f) != nn_q_round(f) && !bad++) worst = f;
    }
    const float edge[] = { 4194303.5f, 4194304.0f, -4194303.5f, -4194304.5f, 8388609.0f, 3e9f, -3e9f, 2147483520.0f,
                           -2147483648.0f, -0.0f, 0.49999997f, -0.5f, 1.5f, 2.5f, NAN, INFINITY, -INFINITY };
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        if (nn_q_round_fast(edge[i]) != nn_q_round(edge[i]) && !bad++) worst = edge[i];
    CHECK_MSG(bad == 0, "nn_q_round_fast differs from nn_q_round on %zu values (first %.9g)", bad, (double)worst);
}

int main(void) {
    test_round_fast();
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(3, &pool));
    const nn_igemm_kernel *const *ks;
    const size_t nk = nn_igemm_kernels(&ks);
    CHECK(nk >= 1 && ks[0] == nn_igemm_best_kernel());
    /* the matmul ops run the AMX tile exactly where the probe allows it (and it is tested below) */
    const nn_igemm_kernel *mm = nn_igemm_best_mm_kernel();
    CHECK_MSG((strstr(mm->name, "amx") != NULL) == (cort_cpu_amx_tiles() == 1), "matmul kernel %s, amx tiles %d",
              mm->name, cort_cpu_amx_tiles());
    CHECK(mm == ks[nk - 1] || !mm->quad);
    static const size_t Ms[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 15, 16, 17, 31, 33, 67 };
    static const size_t Ks[] = { 1, 2, 3, 8, 31, 64, 300 };
    static const size_t Ns[] = { 1, 7, 15, 16, 17, 32, 33, 130 };
    for (size_t ki = 0; ki < nk; ki++)
        for (size_t mi = 0; mi < sizeof Ms / sizeof Ms[0]; mi++)
            for (size_t kk = 0; kk < sizeof Ks / sizeof Ks[0]; kk++)
                for (size_t ni = 0; ni < sizeof Ns / sizeof Ns[0]; ni++) {
                    const size_t M = Ms[mi], K = Ks[kk], N = Ns[ni];
                    const unsigned v = (unsigned)(mi * 49 + kk * 7 + ni);
                    /* rotate types and zero-point modes across the shapes, every combination seen */
                    run_case(mi & 1 ? pool : NULL, ks[ki], M, K, N, (int)(v & 1), (int)((v >> 1) & 1), (int)(v % 5),
                             (int)((v / 5) % 5));
                }
    /* every type and zero-point combination on one edge-heavy shape */
    for (size_t ki = 0; ki < nk; ki++)
        for (int t = 0; t < 4; t++)
            for (int za = 0; za < 5; za++)
                for (int zb = 0; zb < 5; zb++) run_case(pool, ks[ki], 67, 299, 130, t & 1, t >> 1, za, zb);
    cort_pool_free(pool);
    return tu_finish();
}
