/* AVX-VNNI byte GEMM micro-kernels for the matmul-type ops at the avx2 level (quad 1 packs of
 * int_gemm.h, as the AVX-512 u8s8 kernels): 6 uint8 rows broadcast a k quad each against one packed
 * int8 panel of 16 columns (two ymm per quad). The 256-bit vpdpbusd adds four u8 x s8 products per
 * lane without saturating, so the raw sums wrap like the reference's; the zero points come off in the
 * epilogue through the row and column sums. Four times the products per instruction of the
 * vpdpwssd int16-pair kernel at this level. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>

#include "i8_vnni_avx2.h"

__attribute__((target(NN_VNNI256_TARGET))) void nn_igemm_qukr_avxvnni_6x16(size_t kq4, const uint8_t *a, size_t lda,
                                                                      const int8_t *b, int32_t *c, size_t ldc,
                                                                      const int32_t *rz, const int32_t *cz) {
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const uint8_t *a3 = a + 3 * lda;
    for (size_t p = 0; p < 4 * kq4; p += 4, b += 64) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)b);
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(b + 32));
#define NN_WROW(C0, C1, AP)                                       \
    {                                                             \
        const __m256i w = _mm256_set1_epi32(nn_vnni256_word((AP) + p)); \
        C0 = nn_vnni256_dot(C0, w, b0);                                 \
        C1 = nn_vnni256_dot(C1, w, b1);                                 \
    }
        NN_WROW(c00, c01, a) NN_WROW(c10, c11, a + lda) NN_WROW(c20, c21, a + 2 * lda)
        NN_WROW(c30, c31, a3) NN_WROW(c40, c41, a3 + lda) NN_WROW(c50, c51, a3 + 2 * lda)
#undef NN_WROW
    }
    const __m256i z0 = _mm256_loadu_si256((const __m256i *)(const void *)cz);
    const __m256i z1 = _mm256_loadu_si256((const __m256i *)(const void *)(cz + 8));
    const __m256i s0 = _mm256_loadu_si256((const __m256i *)(const void *)(cz + 16));
    const __m256i s1 = _mm256_loadu_si256((const __m256i *)(const void *)(cz + 24));
#define NN_WST(I, C0, C1)                                                                           \
    _mm256_storeu_si256((__m256i *)(void *)(c + (I) * ldc), nn_vnni256_fix(C0, rz + 2 * (I), z0, s0)); \
    _mm256_storeu_si256((__m256i *)(void *)(c + (I) * ldc + 8), nn_vnni256_fix(C1, rz + 2 * (I), z1, s1));
    NN_WST(0, c00, c01) NN_WST(1, c10, c11) NN_WST(2, c20, c21) NN_WST(3, c30, c31) NN_WST(4, c40, c41)
    NN_WST(5, c50, c51)
#undef NN_WST
}

/* One row: two k quads per step into two accumulator pairs, so the dots do not wait on one add chain. */
__attribute__((target(NN_VNNI256_TARGET))) void nn_igemm_qukr_avxvnni_1x16(size_t kq4, const uint8_t *a, size_t lda,
                                                                     const int8_t *b, int32_t *c, size_t ldc,
                                                                     const int32_t *rz, const int32_t *cz) {
    (void)lda;
    (void)ldc;
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
    size_t p = 0;
    for (; p + 2 <= kq4; p += 2, b += 128) {
        const __m256i w0 = _mm256_set1_epi32(nn_vnni256_word(a + 4 * p)), w1 = _mm256_set1_epi32(nn_vnni256_word(a + 4 * p + 4));
        c0 = _mm256_dpbusd_avx_epi32(c0, w0, _mm256_loadu_si256((const __m256i *)(const void *)b));
        c1 = _mm256_dpbusd_avx_epi32(c1, w0, _mm256_loadu_si256((const __m256i *)(const void *)(b + 32)));
        c2 = _mm256_dpbusd_avx_epi32(c2, w1, _mm256_loadu_si256((const __m256i *)(const void *)(b + 64)));
        c3 = _mm256_dpbusd_avx_epi32(c3, w1, _mm256_loadu_si256((const __m256i *)(const void *)(b + 96)));
    }
    for (; p < kq4; p++, b += 64) {
        const __m256i w0 = _mm256_set1_epi32(nn_vnni256_word(a + 4 * p));
        c0 = _mm256_dpbusd_avx_epi32(c0, w0, _mm256_loadu_si256((const __m256i *)(const void *)b));
        c1 = _mm256_dpbusd_avx_epi32(c1, w0, _mm256_loadu_si256((const __m256i *)(const void *)(b + 32)));
    }
    const __m256i lo = _mm256_add_epi32(c0, c2), hi = _mm256_add_epi32(c1, c3);
    _mm256_storeu_si256((__m256i *)(void *)c,
                        nn_vnni256_fix(lo, rz, _mm256_loadu_si256((const __m256i *)(const void *)cz),
                                 _mm256_loadu_si256((const __m256i *)(const void *)(cz + 16))));
    _mm256_storeu_si256((__m256i *)(void *)(c + 8),
                        nn_vnni256_fix(hi, rz, _mm256_loadu_si256((const __m256i *)(const void *)(cz + 8)),
                                 _mm256_loadu_si256((const __m256i *)(const void *)(cz + 24))));
}
#endif
