/* 8x8 float transpose in ymm registers, shared by the AVX2 kernels that need one. */
#ifndef CORT_CPU_X86_X32_TRANSPOSE_8X8_AVX2_H
#define CORT_CPU_X86_X32_TRANSPOSE_8X8_AVX2_H
#include <immintrin.h>

/* r[i][j] <- r[j][i]: pairs of rows interleaved, then 64-bit pairs, then the 128-bit halves
 * exchanged. */
static inline __attribute__((always_inline, target("avx2,fma"))) void nn_tr8x8_avx2(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    /* u_k: rows 0..3 (low half) / 4..7 of column k (low 128 bits) and column k + 4 (high) */
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    /* the high halves through extract + insert: vperm2f128 is 8 uops at one per 3 cycles on Zen 1
     * (a third of an 8x8 transpose there), the pair 3 cheap ones; low halves: gcc emits vinsertf128 */
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_insertf128_ps(u4, _mm256_extractf128_ps(u0, 1), 0);
    r[5] = _mm256_insertf128_ps(u5, _mm256_extractf128_ps(u1, 1), 0);
    r[6] = _mm256_insertf128_ps(u6, _mm256_extractf128_ps(u2, 1), 0);
    r[7] = _mm256_insertf128_ps(u7, _mm256_extractf128_ps(u3, 1), 0);
}
#endif
