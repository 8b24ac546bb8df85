/* AVX-512 form of nn_lut16_u8 (quant_ukernels.h): sixteen table reads per vpgatherdd, narrowed by
 * vpmovdb; the tail is a masked pass of the same loop. */
#include "../quant_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx512f,avx512bw,avx512vl"))) void nn_lut16_u8_avx512(const uint8_t *lut, const uint8_t *a,
                                                                             const uint8_t *b, uint8_t *y, size_t n) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512i a0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(a + i)));
        const __m512i b0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + i)));
        const __m512i a1 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(a + i + 16)));
        const __m512i b1 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + i + 16)));
        const __m512i g0 = _mm512_i32gather_epi32(_mm512_or_si512(_mm512_slli_epi32(a0, 8), b0), lut, 1);
        const __m512i g1 = _mm512_i32gather_epi32(_mm512_or_si512(_mm512_slli_epi32(a1, 8), b1), lut, 1);
        _mm_storeu_si128((__m128i *)(void *)(y + i), _mm512_cvtepi32_epi8(g0));
        _mm_storeu_si128((__m128i *)(void *)(y + i + 16), _mm512_cvtepi32_epi8(g1));
    }
    for (; i < n; i += 16) {
        const size_t r = n - i < 16 ? n - i : 16;
        const __mmask16 m = (__mmask16)((1u << r) - 1u);
        const __m512i a0 = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, a + i));
        const __m512i b0 = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, b + i));
        const __m512i g0 = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m,
                                                       _mm512_or_si512(_mm512_slli_epi32(a0, 8), b0), lut, 1);
        _mm_mask_storeu_epi8(y + i, m, _mm512_cvtepi32_epi8(g0));
    }
}
#endif
