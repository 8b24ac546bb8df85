/* AVX-512 byte stride-2 gather (copy_ukernels.h): vpmovwb keeps the low byte of each of 32 words, the
 * even bytes of a 64-byte load, in order; the last step's load and store are masked to the bytes that
 * exist. */
#include "../copy_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx512f,avx512bw,avx512vl"))) void nn_copy_stride2_u8_avx512(const uint8_t *src, uint8_t *dst, size_t n) {
    size_t i = 0;
    for (; i + 32 < n; i += 32)
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm512_cvtepi16_epi8(_mm512_loadu_si512((const void *)(src + 2 * i))));
    if (i < n) {
        const size_t m = n - i;   /* 1 .. 32 outputs from src[2i .. 2i + 2m - 2] */
        const __m512i v = _mm512_maskz_loadu_epi8((__mmask64)((1ull << (2 * m - 1)) - 1u), src + 2 * i);
        _mm256_mask_storeu_epi8(dst + i, (__mmask32)(m == 32 ? 0xffffffffu : (1u << m) - 1u), _mm512_cvtepi16_epi8(v));
    }
}
#endif
