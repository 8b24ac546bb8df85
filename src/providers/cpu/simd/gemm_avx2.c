/* AVX2+FMA 6x16 SGEMM micro-kernel: 12 accumulators, 2 B vectors, 1 broadcast register. */
#include "gemm_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

#define NN_ROW(i)                                                    \
    do {                                                             \
        const __m256 ai = _mm256_broadcast_ss(a + (i));              \
        c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);                  \
        c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);                  \
    } while (0)
#define NN_STORE(i)                                                              \
    do {                                                                         \
        float *ci = c + (size_t)(i) * ldc;                                       \
        if (accumulate) {                                                        \
            c##i##0 = _mm256_add_ps(c##i##0, _mm256_loadu_ps(ci));               \
            c##i##1 = _mm256_add_ps(c##i##1, _mm256_loadu_ps(ci + 8));           \
        }                                                                        \
        _mm256_storeu_ps(ci, c##i##0);                                           \
        _mm256_storeu_ps(ci + 8, c##i##1);                                       \
    } while (0)

__attribute__((target("avx2,fma")))
void nn_ukr_avx2_6x16(size_t kc, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                      int accumulate) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (size_t p = 0; p < kc; p++, a += 6, b += ldb) {
        const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        NN_ROW(0); NN_ROW(1); NN_ROW(2); NN_ROW(3); NN_ROW(4); NN_ROW(5);
    }
    NN_STORE(0); NN_STORE(1); NN_STORE(2); NN_STORE(3); NN_STORE(4); NN_STORE(5);
}
#endif
