/* 4-bit weight GEMV / GEMM driver: kernel tables per ISA level, packing, threading (see q4_gemm.h). */
#include <string.h>
#include "q4_gemm.h"
#include "../../../core/alloc.h"
#include "../../../core/checked.h"

static const nn_q4_kernel k_generic = { "q4_gemv_4x16_generic", CORT_ISA_GENERIC, 4, 8, nn_q4_gemv_generic_4x16,
                                        nn_q4_dequant_generic_16 };
static const nn_q4_kernel *const kernels_generic[] = { &k_generic };
#ifdef NN_HAVE_X86_Q4
static const nn_q4_kernel k_avx2 = { "q4_gemv_2x16_avx2", CORT_ISA_AVX2, 2, 8, nn_q4_gemv_avx2_2x16,
                                     nn_q4_dequant_avx2_16 };
static const nn_q4_kernel k_avx512 = { "q4_gemv_4x16_avx512", CORT_ISA_AVX512, 4, 16, nn_q4_gemv_avx512_4x16,
                                       nn_q4_dequant_avx512_16 };
static const nn_q4_kernel *const kernels_avx2[] = { &k_avx2, &k_generic };
static const nn_q4_kernel *const kernels_avx512[] = { &k_avx512, &k_avx2, &k_generic };
#endif

typedef struct q4_config { const nn_q4_kernel *const *kernels; size_t n; } q4_config;
static const q4_config q4_configs[CORT_ISA_LEVEL_COUNT] = {
    [CORT_ISA_GENERIC] = { kernels_generic, 1 },
#ifdef NN_HAVE_X86_Q4
    [CORT_ISA_AVX2] = { kernels_avx2, 2 },
    [CORT_ISA_AVX512] = { kernels_avx512, 3 },
#else
    [CORT_ISA_AVX2] = { kernels_generic, 1 },
    [CORT_ISA_AVX512] = { kernels_generic, 1 },
#endif
    [CORT_ISA_NEON] = { kernels_generic, 1 },
};

const nn_q4_kernel *nn_q4_best_kernel(void) { return q4_configs[cort_cpu_isa()].kernels[0]; }
size_t nn_q4_kernels(const nn_q4_kernel *const **out) {
    *out = q4_configs[cort_cpu_isa()].kernels;
    return q4_configs[cort_cpu_isa()].n;
}

cort_status *nn_q4_pack(size_t K, size_t N, size_t block, const uint8_t *b, const float *scales, const uint8_t *zp_u8,
                        const float *zp_f32, nn_q4_weights *out) {
    return nn_q4_pack_ex(K, N, block, b, scales, zp_u8, zp_f32, NULL, NULL, out);
}

cort_status *nn_q4_pack_ex(size_t K, size_t N, size_t block, const uint8_t *b, const float *scales,
                           const uint8_t *zp_u8, const float *zp_f32, void (*done)(void *ctx, size_t n0, size_t n1),
                           void *ctx, nn_q4_weights *out) {
    memset(out, 0, sizeof *out);
    if (!K || !N || block < 2 || (block & 1)) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "q4 pack: bad shape");
    nn_q4_weights w = { K, N, block, (K + block - 1) / block, (N + NN_Q4_NR - 1) / NN_Q4_NR,
                        zp_u8 ? NN_Q4_ZP_U8 : zp_f32 ? NN_Q4_ZP_F32 : NN_Q4_ZP_NONE, 0, 0, NULL };
    w.zp_off = 64 + (w.zp_mode == NN_Q4_ZP_U8 ? 16 : w.zp_mode == NN_Q4_ZP_F32 ? 64 : 0);
    w.rec = w.zp_off + block / 2 * NN_Q4_NR;
    size_t bytes;
    if (cort_mul_size_ovf(w.panels, w.blocks, &bytes) || cort_mul_size_ovf(bytes, w.rec, &bytes))
        return cort_error_oom();
    if (!(w.data = cort_malloc_huge(bytes))) return cort_error_oom();
    memset(w.data, 0, bytes);
    const size_t blob = block / 2, zstride = (w.blocks + 1) / 2;
    for (size_t n = 0; n < N; n++) {
        const size_t jp = n / NN_Q4_NR, j = n % NN_Q4_NR;
        for (size_t g = 0; g < w.blocks; g++) {
            uint8_t *rec = w.data + (jp * w.blocks + g) * w.rec;
            memcpy(rec + 4 * j, &scales[n * w.blocks + g], 4);
            if (w.zp_mode == NN_Q4_ZP_U8) rec[64 + j] = (uint8_t)((zp_u8[n * zstride + g / 2] >> ((g & 1) * 4)) & 15);
            else if (w.zp_mode == NN_Q4_ZP_F32) memcpy(rec + 64 + 4 * j, &zp_f32[n * w.blocks + g], 4);
            const uint8_t *src = b + (n * w.blocks + g) * blob;
            uint8_t *dst = rec + w.zp_off + j;
            /* the source pairs k = 2p, 2p + 1 in one byte already, low nibble first */
            for (size_t p = 0; p < blob; p++) dst[p * NN_Q4_NR] = src[p];
        }
        /* in runs of 16 panels: one release per column costs more than it saves */
        if (done && ((n + 1) % (16 * NN_Q4_NR) == 0 || n == N - 1)) done(ctx, n + 1 - (n % (16 * NN_Q4_NR) + 1), n + 1);
    }
    *out = w;
    return NULL;
}

void nn_q4_free(nn_q4_weights *w) {
    if (!w) return;
    cort_free(w->data);
    w->data = NULL;
}

typedef struct q4_gemv_job {
    const nn_q4_kernel *k;
    const nn_q4_weights *w;
    size_t M, lda, ldc;
    const float *A, *bias;
    float *C;
} q4_gemv_job;

/* A task owns whole panels; a panel (one block run, tens of KB) stays in L2 while every row group
 * of A passes over it. */
static void q4_gemv_range(void *arg, size_t begin, size_t end) {
    const q4_gemv_job *j = arg;
    for (size_t jp = begin; jp < end; jp++) {
        const size_t c0 = jp * NN_Q4_NR, cols = j->w->N - c0 < NN_Q4_NR ? j->w->N - c0 : NN_Q4_NR;
        const uint8_t *panel = nn_q4_panel(j->w, jp);
        for (size_t r0 = 0; r0 < j->M; r0 += j->k->mr) {
            const size_t rows = j->M - r0 < j->k->mr ? j->M - r0 : j->k->mr;
            j->k->gemv(j->w, panel, j->A + r0 * j->lda, j->lda, rows, j->bias ? j->bias + c0 : NULL,
                       j->C + r0 * j->ldc + c0, j->ldc, cols);
        }
    }
}

void nn_q4_gemv(cort_pool *pool, const nn_q4_kernel *k, const nn_q4_weights *w, size_t M, const float *A, size_t lda,
                const float *bias, float *C, size_t ldc) {
    if (!M) return;
    q4_gemv_job j = { k, w, M, lda, ldc, A, bias, C };
    /* at least ~64K multiply-adds per range, so a small layer stays on one thread */
    const size_t per = w->K * NN_Q4_NR * M, grain = per >= 65536 ? 1 : 65536 / per;
    cort_parallel_for(pool, w->panels, grain, q4_gemv_range, &j);
}

static void q4_pack_b(const nn_gemm_b *b, size_t k0, size_t kc, size_t j0, size_t ncols, size_t nr, float *dst) {
    const nn_q4_gemm_ctx *c = b->ctx;
    (void)ncols;
    for (size_t s = 0; s < nr; s += NN_Q4_NR) {
        const size_t col = j0 + s;
        if (col < c->w->N) {
            c->k->dequant(c->w, nn_q4_panel(c->w, col / NN_Q4_NR), k0, kc, dst + s, nr);
        } else {
            for (size_t i = 0; i < kc; i++) memset(dst + i * nr + s, 0, NN_Q4_NR * sizeof(float));
        }
    }
}

nn_gemm_b nn_q4_gemm_b(const nn_q4_gemm_ctx *ctx) {
    nn_gemm_b b = { q4_pack_b, NULL, 0, 0, ctx };
    return b;
}
