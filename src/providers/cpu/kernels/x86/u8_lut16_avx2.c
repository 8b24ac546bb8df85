/* AVX2 form of nn_lut16_u8 (quant_ukernels.h): eight table reads per vpgatherdd. */
#include "../quant_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx2"))) void nn_lut16_u8_avx2(const uint8_t *lut, const uint8_t *a, const uint8_t *b,
                                                      uint8_t *y, size_t n) {
    const __m256i low = _mm256_set1_epi32(0xff);
    /* the dword bytes 0, 4, 8, 12 of each 128-bit half to the front */
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i a0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(a + i)));
        const __m256i b0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b + i)));
        const __m256i a1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(a + i + 8)));
        const __m256i b1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b + i + 8)));
        const __m256i i0 = _mm256_or_si256(_mm256_slli_epi32(a0, 8), b0);
        const __m256i i1 = _mm256_or_si256(_mm256_slli_epi32(a1, 8), b1);
        const __m256i g0 = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)lut, i0, 1), low);
        const __m256i g1 = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)lut, i1, 1), low);
        const __m256i p0 = _mm256_shuffle_epi8(g0, pick), p1 = _mm256_shuffle_epi8(g1, pick);
        const uint32_t w0 = (uint32_t)_mm256_extract_epi32(p0, 0), w1 = (uint32_t)_mm256_extract_epi32(p0, 4);
        const uint32_t w2 = (uint32_t)_mm256_extract_epi32(p1, 0), w3 = (uint32_t)_mm256_extract_epi32(p1, 4);
        const __m128i out = _mm_setr_epi32((int)w0, (int)w1, (int)w2, (int)w3);
        _mm_storeu_si128((__m128i *)(void *)(y + i), out);
    }
    for (; i < n; i++) y[i] = lut[(size_t)a[i] << 8 | b[i]];
}
#endif
