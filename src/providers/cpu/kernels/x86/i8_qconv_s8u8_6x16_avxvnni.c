/* AVX-VNNI byte micro-kernel for the integer convs (nn_igemm_kernel.quad == 2) at the AVX2 level: 6 int8
 * weight rows interleaved by k quad (quad q of row i at 24 q + 4 i) against one uint8 activation panel of
 * 16 columns (two ymm per k quad). The 256-bit vpdpbusd has no embedded broadcast, so each weight quad is
 * broadcast into a register and serves both halves of the panel. Same wrapping sums and epilogue
 * corrections as the AVX-512 kernel. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>

#include "i8_vnni_avx2.h"

__attribute__((target(NN_VNNI256_TARGET))) void nn_igemm_cukr_avxvnni_6x16(size_t kq4, const uint8_t *a, size_t lda,
                                                                      const int8_t *b, int32_t *c, size_t ldc,
                                                                      const int32_t *rz, const int32_t *cz) {
    (void)lda;
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (size_t q = 0; q < kq4; q++, a += 24, b += 64) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)b);
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(b + 32));
#define NN_VROW(C0, C1, I)                                        \
    {                                                             \
        const __m256i w = _mm256_set1_epi32(nn_vnni256_word(a + 4 * (I))); \
        C0 = nn_vnni256_dot(C0, b0, w);                                 \
        C1 = nn_vnni256_dot(C1, b1, w);                                 \
    }
        NN_VROW(c00, c01, 0) NN_VROW(c10, c11, 1) NN_VROW(c20, c21, 2)
        NN_VROW(c30, c31, 3) NN_VROW(c40, c41, 4) NN_VROW(c50, c51, 5)
#undef NN_VROW
    }
    const __m256i z0 = _mm256_loadu_si256((const __m256i *)(const void *)cz);
    const __m256i z1 = _mm256_loadu_si256((const __m256i *)(const void *)(cz + 8));
    const __m256i s0 = _mm256_loadu_si256((const __m256i *)(const void *)(cz + 16));
    const __m256i s1 = _mm256_loadu_si256((const __m256i *)(const void *)(cz + 24));
#define NN_VST(I, C0, C1)                                                                                  \
    _mm256_storeu_si256((__m256i *)(void *)(c + (I) * ldc), nn_vnni256_fix(C0, rz + 2 * (I), z0, s0));        \
    _mm256_storeu_si256((__m256i *)(void *)(c + (I) * ldc + 8), nn_vnni256_fix(C1, rz + 2 * (I), z1, s1));
    NN_VST(0, c00, c01) NN_VST(1, c10, c11) NN_VST(2, c20, c21) NN_VST(3, c30, c31) NN_VST(4, c40, c41)
    NN_VST(5, c50, c51)
#undef NN_VST
}
#endif
