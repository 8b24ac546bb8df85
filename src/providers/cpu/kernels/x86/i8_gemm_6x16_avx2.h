/* Body of the AVX2 exact int GEMM micro-kernels (i8_gemm_6x16_avx2.c includes it once per
 * instruction set: plain AVX2 and AVX-VNNI). Expects NN_I8_FN(name), NN_I8_TARGET and
 * NN_I8_DOT(acc, x, b): acc + (x . b) over int16 pairs in ymm. */

__attribute__((target(NN_I8_TARGET))) void NN_I8_FN(6x16)(size_t kp2, const int16_t *a, size_t lda,
                                                            const int16_t *b, int32_t *c, size_t ldc) {
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const int16_t *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda, *a4 = a + 4 * lda, *a5 = a + 5 * lda;
    for (size_t p = 0; p < kp2; p++, b += 32) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)b);
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(b + 16));
        int32_t w;
        __m256i x;
#define NN_IROW(AP, C0, C1) \
        __builtin_memcpy(&w, AP + 2 * p, 4); x = _mm256_set1_epi32(w); \
        NN_I8_DOT(C0, x, b0); NN_I8_DOT(C1, x, b1);
        NN_IROW(a0, c00, c01) NN_IROW(a1, c10, c11) NN_IROW(a2, c20, c21)
        NN_IROW(a3, c30, c31) NN_IROW(a4, c40, c41) NN_IROW(a5, c50, c51)
#undef NN_IROW
    }
#define NN_ISTORE(I, C0, C1) \
    _mm256_storeu_si256((__m256i *)(void *)(c + (I) * ldc), C0); \
    _mm256_storeu_si256((__m256i *)(void *)(c + (I) * ldc + 8), C1);
    NN_ISTORE(0, c00, c01) NN_ISTORE(1, c10, c11) NN_ISTORE(2, c20, c21)
    NN_ISTORE(3, c30, c31) NN_ISTORE(4, c40, c41) NN_ISTORE(5, c50, c51)
#undef NN_ISTORE
}

__attribute__((target(NN_I8_TARGET))) void NN_I8_FN(6x16_half)(size_t kp2, const int16_t *a, size_t lda,
                                                                 const int16_t *b, int32_t *c, size_t ldc) {
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
    const int16_t *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda, *a4 = a + 4 * lda, *a5 = a + 5 * lda;
    for (size_t p = 0; p < kp2; p++, b += 32) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)b);
        int32_t w;
#define NN_IROW(AP, C) \
        __builtin_memcpy(&w, AP + 2 * p, 4); NN_I8_DOT(C, _mm256_set1_epi32(w), b0);
        NN_IROW(a0, c0) NN_IROW(a1, c1) NN_IROW(a2, c2) NN_IROW(a3, c3) NN_IROW(a4, c4) NN_IROW(a5, c5)
#undef NN_IROW
    }
    _mm256_storeu_si256((__m256i *)(void *)c, c0);
    _mm256_storeu_si256((__m256i *)(void *)(c + ldc), c1);
    _mm256_storeu_si256((__m256i *)(void *)(c + 2 * ldc), c2);
    _mm256_storeu_si256((__m256i *)(void *)(c + 3 * ldc), c3);
    _mm256_storeu_si256((__m256i *)(void *)(c + 4 * ldc), c4);
    _mm256_storeu_si256((__m256i *)(void *)(c + 5 * ldc), c5);
}

/* One row: two k pairs per step into four accumulators (two per 8 columns), so consecutive
 * vpmaddwd results do not wait on one add chain; the products are B-load bound. */
__attribute__((target(NN_I8_TARGET))) void NN_I8_FN(1x16)(size_t kp2, const int16_t *a, size_t lda,
                                                            const int16_t *b, int32_t *c, size_t ldc) {
    (void)lda;
    (void)ldc;
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
    size_t p = 0;
    int32_t w0, w1;
    for (; p + 2 <= kp2; p += 2, b += 64) {
        __builtin_memcpy(&w0, a + 2 * p, 4);
        __builtin_memcpy(&w1, a + 2 * p + 2, 4);
        const __m256i x0 = _mm256_set1_epi32(w0), x1 = _mm256_set1_epi32(w1);
        NN_I8_DOT(c0, x0, _mm256_loadu_si256((const __m256i *)(const void *)b));
        NN_I8_DOT(c1, x0, _mm256_loadu_si256((const __m256i *)(const void *)(b + 16)));
        NN_I8_DOT(c2, x1, _mm256_loadu_si256((const __m256i *)(const void *)(b + 32)));
        NN_I8_DOT(c3, x1, _mm256_loadu_si256((const __m256i *)(const void *)(b + 48)));
    }
    if (p < kp2) {
        __builtin_memcpy(&w0, a + 2 * p, 4);
        const __m256i x0 = _mm256_set1_epi32(w0);
        NN_I8_DOT(c0, x0, _mm256_loadu_si256((const __m256i *)(const void *)b));
        NN_I8_DOT(c1, x0, _mm256_loadu_si256((const __m256i *)(const void *)(b + 16)));
    }
    _mm256_storeu_si256((__m256i *)(void *)c, _mm256_add_epi32(c0, c2));
    _mm256_storeu_si256((__m256i *)(void *)(c + 8), _mm256_add_epi32(c1, c3));
}
