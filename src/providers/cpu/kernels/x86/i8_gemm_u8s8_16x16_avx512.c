/* AVX512-VNNI byte GEMM micro-kernels, 16 rows x 16 columns over the byte packs of int_gemm.h (quad
 * kernels): a packed-B k quad (16 columns x 4 int8) is one zmm, vpdpbusd adds the 4 uint8 x int8
 * products of each lane to its int32 without saturating (vpdpbusds would), so the raw sum wraps like
 * the reference's; the zero points come off in the epilogue with wrapping vpmulld. Twice the products
 * per instruction of the int16-pair kernels and half the bytes of A and B. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include "i8_vnni_avx512.h"

__attribute__((target(NN_Q_TARGET))) void nn_igemm_qukr_avx512vnni_16x16(size_t kq4, const uint8_t *a, size_t lda,
                                                                          const int8_t *b, int32_t *c, size_t ldc,
                                                                          const int32_t *rz, const int32_t *cz) {
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    __m512i c8 = c0, c9 = c0, c10 = c0, c11 = c0, c12 = c0, c13 = c0, c14 = c0, c15 = c0;
    const uint8_t *a0 = a, *a4 = a + 4 * lda, *a8 = a + 8 * lda, *a12 = a + 12 * lda;
    for (size_t p = 0; p < 4 * kq4; p += 4, b += 64) {
        const __m512i bv = _mm512_loadu_si512((const void *)b);
#define NN_QROW(C, AP) C = nn_q_dot(C, _mm512_set1_epi32(nn_q_word(AP + p)), bv);
        NN_QROW(c0, a0) NN_QROW(c1, a0 + lda) NN_QROW(c2, a0 + 2 * lda) NN_QROW(c3, a0 + 3 * lda)
        NN_QROW(c4, a4) NN_QROW(c5, a4 + lda) NN_QROW(c6, a4 + 2 * lda) NN_QROW(c7, a4 + 3 * lda)
        NN_QROW(c8, a8) NN_QROW(c9, a8 + lda) NN_QROW(c10, a8 + 2 * lda) NN_QROW(c11, a8 + 3 * lda)
        NN_QROW(c12, a12) NN_QROW(c13, a12 + lda) NN_QROW(c14, a12 + 2 * lda) NN_QROW(c15, a12 + 3 * lda)
#undef NN_QROW
    }
    const __m512i zb = _mm512_loadu_si512((const void *)cz), cs = _mm512_loadu_si512((const void *)(cz + 16));
#define NN_QST(I, C) _mm512_storeu_si512((void *)(c + (I) * ldc), nn_q_fix(C, rz + 2 * (I), zb, cs));
    NN_QST(0, c0) NN_QST(1, c1) NN_QST(2, c2) NN_QST(3, c3) NN_QST(4, c4) NN_QST(5, c5) NN_QST(6, c6) NN_QST(7, c7)
    NN_QST(8, c8) NN_QST(9, c9) NN_QST(10, c10) NN_QST(11, c11) NN_QST(12, c12) NN_QST(13, c13) NN_QST(14, c14)
    NN_QST(15, c15)
#undef NN_QST
}

/* One row: four k quads per step into four accumulators, so the dots do not wait on one add chain. */
__attribute__((target(NN_Q_TARGET))) void nn_igemm_qukr_avx512vnni_1x16(size_t kq4, const uint8_t *a, size_t lda,
                                                                         const int8_t *b, int32_t *c, size_t ldc,
                                                                         const int32_t *rz, const int32_t *cz) {
    (void)lda;
    (void)ldc;
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;
    size_t p = 0;
    for (; p + 4 <= kq4; p += 4, b += 256) {
        c0 = _mm512_dpbusd_epi32(c0, _mm512_set1_epi32(nn_q_word(a + 4 * p)), _mm512_loadu_si512((const void *)b));
        c1 = _mm512_dpbusd_epi32(c1, _mm512_set1_epi32(nn_q_word(a + 4 * p + 4)), _mm512_loadu_si512((const void *)(b + 64)));
        c2 = _mm512_dpbusd_epi32(c2, _mm512_set1_epi32(nn_q_word(a + 4 * p + 8)), _mm512_loadu_si512((const void *)(b + 128)));
        c3 = _mm512_dpbusd_epi32(c3, _mm512_set1_epi32(nn_q_word(a + 4 * p + 12)), _mm512_loadu_si512((const void *)(b + 192)));
    }
    for (; p < kq4; p++, b += 64)
        c0 = _mm512_dpbusd_epi32(c0, _mm512_set1_epi32(nn_q_word(a + 4 * p)), _mm512_loadu_si512((const void *)b));
    const __m512i acc = _mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3));
    _mm512_storeu_si512((void *)c, nn_q_fix(acc, rz, _mm512_loadu_si512((const void *)cz),
                                            _mm512_loadu_si512((const void *)(cz + 16))));
}
#endif
