/* AVX2 byte stride-2 gather (copy_ukernels.h): the even bytes of two 32-byte loads by a word mask and
 * one unsigned pack, whose 128-bit lane order a 64-bit permute puts right: 32 outputs per step. */
#include "../copy_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx2"))) void nn_copy_stride2_u8_avx2(const uint8_t *src, uint8_t *dst, size_t n) {
    const __m256i even = _mm256_set1_epi16(0x00ff);
    size_t i = 0;
    /* a step reads src[2i .. 2i + 63]; i + 32 < n keeps 2i + 63 <= 2n - 2 */
    for (; i + 32 < n; i += 32) {
        const __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(src + 2 * i)), even);
        const __m256i b = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(src + 2 * i + 32)), even);
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xd8));
    }
    for (; i < n; i++) dst[i] = src[2 * i];
}
#endif
