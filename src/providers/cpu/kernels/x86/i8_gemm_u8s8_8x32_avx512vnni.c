/* AVX512-VNNI byte GEMM micro-kernels, 8 rows x 32 columns, over the quad-1 byte packs of int_gemm.h
 * (uint8 A rows of kq bytes, int8 B panels of 32 columns x 4 bytes per k quad). Per k quad the tile
 * loads two B vectors and broadcasts 8 words of A for 16 vpdpbusd, where the 16x16 tile loads 17
 * times for its 16 (docs/performance.md has the rates). Raw sums wrap like the reference's; the
 * zero points come off in the epilogue with wrapping vpmulld. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include "i8_vnni_avx512.h"

__attribute__((target(NN_Q_TARGET))) void nn_igemm_qukr_avx512vnni_8x32(size_t kq4, const uint8_t *a, size_t lda,
                                                                         const int8_t *b, int32_t *c, size_t ldc,
                                                                         const int32_t *rz, const int32_t *cz) {
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    __m512i d0 = c0, d1 = c0, d2 = c0, d3 = c0, d4 = c0, d5 = c0, d6 = c0, d7 = c0;
    const uint8_t *a0 = a, *a4 = a + 4 * lda;
    for (size_t p = 0; p < 4 * kq4; p += 4, b += 128) {
        const __m512i b0 = _mm512_loadu_si512((const void *)b), b1 = _mm512_loadu_si512((const void *)(b + 64));
#define NN_QROW(C, D, AP) { const __m512i av = _mm512_set1_epi32(nn_q_word(AP + p)); C = nn_q_dot(C, av, b0); D = nn_q_dot(D, av, b1); }
        NN_QROW(c0, d0, a0) NN_QROW(c1, d1, a0 + lda) NN_QROW(c2, d2, a0 + 2 * lda) NN_QROW(c3, d3, a0 + 3 * lda)
        NN_QROW(c4, d4, a4) NN_QROW(c5, d5, a4 + lda) NN_QROW(c6, d6, a4 + 2 * lda) NN_QROW(c7, d7, a4 + 3 * lda)
#undef NN_QROW
    }
    const __m512i zb0 = _mm512_loadu_si512((const void *)cz), zb1 = _mm512_loadu_si512((const void *)(cz + 16));
    const __m512i cs0 = _mm512_loadu_si512((const void *)(cz + 32)), cs1 = _mm512_loadu_si512((const void *)(cz + 48));
#define NN_QST(I, C, D)                                                                                   \
    _mm512_storeu_si512((void *)(c + (I) * ldc), nn_q_fix(C, rz + 2 * (I), zb0, cs0));                  \
    _mm512_storeu_si512((void *)(c + (I) * ldc + 16), nn_q_fix(D, rz + 2 * (I), zb1, cs1));
    NN_QST(0, c0, d0) NN_QST(1, c1, d1) NN_QST(2, c2, d2) NN_QST(3, c3, d3)
    NN_QST(4, c4, d4) NN_QST(5, c5, d5) NN_QST(6, c6, d6) NN_QST(7, c7, d7)
#undef NN_QST
}

/* One row: four k quads per step into eight accumulators, so the dots do not wait on one add chain. */
__attribute__((target(NN_Q_TARGET))) void nn_igemm_qukr_avx512vnni_1x32(size_t kq4, const uint8_t *a, size_t lda,
                                                                         const int8_t *b, int32_t *c, size_t ldc,
                                                                         const int32_t *rz, const int32_t *cz) {
    (void)lda;
    (void)ldc;
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, d0 = c0, d1 = c0, d2 = c0, d3 = c0;
    size_t p = 0;
#define NN_Q1(C, D, Q)                                                                        \
    {                                                                                         \
        const __m512i av = _mm512_set1_epi32(nn_q_word(a + 4 * (p + (Q))));                   \
        C = _mm512_dpbusd_epi32(C, av, _mm512_loadu_si512((const void *)(b + 128 * (Q))));      \
        D = _mm512_dpbusd_epi32(D, av, _mm512_loadu_si512((const void *)(b + 128 * (Q) + 64))); \
    }
    for (; p + 4 <= kq4; p += 4, b += 512) {
        NN_Q1(c0, d0, 0) NN_Q1(c1, d1, 1) NN_Q1(c2, d2, 2) NN_Q1(c3, d3, 3)
    }
    for (; p < kq4; p++, b += 128) NN_Q1(c0, d0, 0)
#undef NN_Q1
    const __m512i cs = _mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3));
    const __m512i ds = _mm512_add_epi32(_mm512_add_epi32(d0, d1), _mm512_add_epi32(d2, d3));
    _mm512_storeu_si512((void *)c, nn_q_fix(cs, rz, _mm512_loadu_si512((const void *)cz),
                                            _mm512_loadu_si512((const void *)(cz + 32))));
    _mm512_storeu_si512((void *)(c + 16), nn_q_fix(ds, rz, _mm512_loadu_si512((const void *)(cz + 16)),
                                                   _mm512_loadu_si512((const void *)(cz + 48))));
}
#endif
