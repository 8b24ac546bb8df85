/* AVX-512F 12x32 SGEMM micro-kernel: 24 zmm accumulators, 2 B vectors, broadcasts of A. */
#include "gemm_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

#define NN_ROW(i)                                                    \
    do {                                                             \
        const __m512 ai = _mm512_set1_ps(a[i]);                      \
        c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0);                  \
        c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);                  \
    } while (0)
#define NN_STORE(i)                                                              \
    do {                                                                         \
        float *ci = c + (size_t)(i) * ldc;                                       \
        if (accumulate) {                                                        \
            c##i##0 = _mm512_add_ps(c##i##0, _mm512_loadu_ps(ci));               \
            c##i##1 = _mm512_add_ps(c##i##1, _mm512_loadu_ps(ci + 16));          \
        }                                                                        \
        _mm512_storeu_ps(ci, c##i##0);                                           \
        _mm512_storeu_ps(ci + 16, c##i##1);                                      \
    } while (0)

__attribute__((target("avx512f")))
void nn_ukr_avx512_12x32(size_t kc, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                         int accumulate) {
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    __m512 c60 = c00, c61 = c00, c70 = c00, c71 = c00, c80 = c00, c81 = c00;
    __m512 c90 = c00, c91 = c00, c100 = c00, c101 = c00, c110 = c00, c111 = c00;
    for (size_t p = 0; p < kc; p++, a += 12, b += ldb) {
        const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
        NN_ROW(0); NN_ROW(1); NN_ROW(2); NN_ROW(3); NN_ROW(4); NN_ROW(5);
        NN_ROW(6); NN_ROW(7); NN_ROW(8); NN_ROW(9); NN_ROW(10); NN_ROW(11);
    }
    NN_STORE(0); NN_STORE(1); NN_STORE(2); NN_STORE(3); NN_STORE(4); NN_STORE(5);
    NN_STORE(6); NN_STORE(7); NN_STORE(8); NN_STORE(9); NN_STORE(10); NN_STORE(11);
}
#endif
