/* Body of the AVX-512 exact int GEMM micro-kernels (i8_gemm_16x16_avx512.c includes it once per
 * instruction set, so the VNNI and the plain kernels are the same code with a different pair dot).
 * Expects NN_I8_FN(name) (function name with the variant's suffix), NN_I8_TARGET, and
 * NN_I8_DOT(acc, x, b) / NN_I8_DOTY(acc, x, b): acc + (x . b) over int16 pairs in zmm / ymm. */

/* All 16 rows; a row's A pair is broadcast per k pair (an embedded broadcast operand of vpdpwssd). */
__attribute__((target(NN_I8_TARGET))) void NN_I8_FN(16x16)(size_t kp2, const int16_t *a, size_t lda, const int16_t *b,
                                                          int32_t *c, size_t ldc) {
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    __m512i c8 = c0, c9 = c0, c10 = c0, c11 = c0, c12 = c0, c13 = c0, c14 = c0, c15 = c0;
    const int16_t *a0 = a, *a4 = a + 4 * lda, *a8 = a + 8 * lda, *a12 = a + 12 * lda;
    for (size_t p = 0; p < 2 * kp2; p += 2, b += 32) {
        const __m512i bv = _mm512_loadu_si512((const void *)b);
#define NN_IROW(C, AP) NN_I8_DOT(C, _mm512_set1_epi32(nn_i8_pair(AP + p)), bv);
        NN_IROW(c0, a0) NN_IROW(c1, a0 + lda) NN_IROW(c2, a0 + 2 * lda) NN_IROW(c3, a0 + 3 * lda)
        NN_IROW(c4, a4) NN_IROW(c5, a4 + lda) NN_IROW(c6, a4 + 2 * lda) NN_IROW(c7, a4 + 3 * lda)
        NN_IROW(c8, a8) NN_IROW(c9, a8 + lda) NN_IROW(c10, a8 + 2 * lda) NN_IROW(c11, a8 + 3 * lda)
        NN_IROW(c12, a12) NN_IROW(c13, a12 + lda) NN_IROW(c14, a12 + 2 * lda) NN_IROW(c15, a12 + 3 * lda)
#undef NN_IROW
    }
    _mm512_storeu_si512((void *)c, c0);              _mm512_storeu_si512((void *)(c + ldc), c1);
    _mm512_storeu_si512((void *)(c + 2 * ldc), c2);  _mm512_storeu_si512((void *)(c + 3 * ldc), c3);
    _mm512_storeu_si512((void *)(c + 4 * ldc), c4);  _mm512_storeu_si512((void *)(c + 5 * ldc), c5);
    _mm512_storeu_si512((void *)(c + 6 * ldc), c6);  _mm512_storeu_si512((void *)(c + 7 * ldc), c7);
    _mm512_storeu_si512((void *)(c + 8 * ldc), c8);  _mm512_storeu_si512((void *)(c + 9 * ldc), c9);
    _mm512_storeu_si512((void *)(c + 10 * ldc), c10); _mm512_storeu_si512((void *)(c + 11 * ldc), c11);
    _mm512_storeu_si512((void *)(c + 12 * ldc), c12); _mm512_storeu_si512((void *)(c + 13 * ldc), c13);
    _mm512_storeu_si512((void *)(c + 14 * ldc), c14); _mm512_storeu_si512((void *)(c + 15 * ldc), c15);
}

/* The first 8 columns: the low half of each packed-B row, ymm accumulators. */
__attribute__((target(NN_I8_TARGET))) void NN_I8_FN(16x16_half)(size_t kp2, const int16_t *a, size_t lda,
                                                               const int16_t *b, int32_t *c, size_t ldc) {
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    __m256i c8 = c0, c9 = c0, c10 = c0, c11 = c0, c12 = c0, c13 = c0, c14 = c0, c15 = c0;
    const int16_t *a0 = a, *a4 = a + 4 * lda, *a8 = a + 8 * lda, *a12 = a + 12 * lda;
    for (size_t p = 0; p < 2 * kp2; p += 2, b += 32) {
        const __m256i bv = _mm256_loadu_si256((const __m256i *)(const void *)b);
#define NN_IROW(C, AP) NN_I8_DOTY(C, _mm256_set1_epi32(nn_i8_pair(AP + p)), bv);
        NN_IROW(c0, a0) NN_IROW(c1, a0 + lda) NN_IROW(c2, a0 + 2 * lda) NN_IROW(c3, a0 + 3 * lda)
        NN_IROW(c4, a4) NN_IROW(c5, a4 + lda) NN_IROW(c6, a4 + 2 * lda) NN_IROW(c7, a4 + 3 * lda)
        NN_IROW(c8, a8) NN_IROW(c9, a8 + lda) NN_IROW(c10, a8 + 2 * lda) NN_IROW(c11, a8 + 3 * lda)
        NN_IROW(c12, a12) NN_IROW(c13, a12 + lda) NN_IROW(c14, a12 + 2 * lda) NN_IROW(c15, a12 + 3 * lda)
#undef NN_IROW
    }
#define NN_ST(I, C) _mm256_storeu_si256((__m256i *)(void *)(c + (I) * ldc), C);
    NN_ST(0, c0) NN_ST(1, c1) NN_ST(2, c2) NN_ST(3, c3) NN_ST(4, c4) NN_ST(5, c5) NN_ST(6, c6) NN_ST(7, c7)
    NN_ST(8, c8) NN_ST(9, c9) NN_ST(10, c10) NN_ST(11, c11) NN_ST(12, c12) NN_ST(13, c13) NN_ST(14, c14) NN_ST(15, c15)
#undef NN_ST
}

/* One row: four k pairs per step into four accumulators, so the dots do not wait on one add chain. */
__attribute__((target(NN_I8_TARGET))) void NN_I8_FN(1x16)(size_t kp2, const int16_t *a, size_t lda, const int16_t *b,
                                                         int32_t *c, size_t ldc) {
    (void)lda;
    (void)ldc;
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;
    size_t p = 0;
    for (; p + 4 <= kp2; p += 4, b += 128) {
        NN_I8_DOT(c0, _mm512_set1_epi32(nn_i8_pair(a + 2 * p)), _mm512_loadu_si512((const void *)b));
        NN_I8_DOT(c1, _mm512_set1_epi32(nn_i8_pair(a + 2 * p + 2)), _mm512_loadu_si512((const void *)(b + 32)));
        NN_I8_DOT(c2, _mm512_set1_epi32(nn_i8_pair(a + 2 * p + 4)), _mm512_loadu_si512((const void *)(b + 64)));
        NN_I8_DOT(c3, _mm512_set1_epi32(nn_i8_pair(a + 2 * p + 6)), _mm512_loadu_si512((const void *)(b + 96)));
    }
    for (; p < kp2; p++, b += 32) NN_I8_DOT(c0, _mm512_set1_epi32(nn_i8_pair(a + 2 * p)), _mm512_loadu_si512((const void *)b));
    _mm512_storeu_si512((void *)c, _mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)));
}
