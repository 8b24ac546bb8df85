/* Partial stores of a ymm register, shared by the AVX2 kernels that end rows or planes mid-vector. */
#ifndef CORT_CPU_X86_X32_STORE_AVX2_H
#define CORT_CPU_X86_X32_STORE_AVX2_H
#include <stddef.h>
#include <immintrin.h>

/* v's first n (1..8) lanes to p by plain 32/16/8/4-byte stores: a vmaskmovps store is microcoded on
 * Zen 1 (~15 cycles), and the depthwise bands of a 7x7 or 14x14 plane and the gemm's transposed-store
 * tiles end with many of them. */
static inline __attribute__((always_inline, target("avx2,fma"))) void nn_store_first8_avx2(float *p, __m256 v,
                                                                                           size_t n) {
    if (n >= 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    __m128 h = _mm256_castps256_ps128(v);
    if (n >= 4) {
        _mm_storeu_ps(p, h);
        p += 4;
        n -= 4;
        h = _mm256_extractf128_ps(v, 1);
    }
    if (n >= 2) {
        _mm_storel_pi((__m64 *)(void *)p, h);
        p += 2;
        n -= 2;
        h = _mm_movehl_ps(h, h);
    }
    if (n) _mm_store_ss(p, h);
}
#endif
