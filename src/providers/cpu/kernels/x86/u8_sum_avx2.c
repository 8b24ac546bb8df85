/* Byte sums (quant_ukernels.h u8_sum) with vpsadbw: 32 or 64 bytes per instruction into 64-bit lanes. */
#include "../quant_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx2"))) uint32_t nn_u8_sum_avx2(const uint8_t *x, size_t n) {
    const __m256i z = _mm256_setzero_si256();
    __m256i s0 = z, s1 = z;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm256_add_epi64(s0, _mm256_sad_epu8(_mm256_loadu_si256((const __m256i *)(const void *)(x + i)), z));
        s1 = _mm256_add_epi64(s1, _mm256_sad_epu8(_mm256_loadu_si256((const __m256i *)(const void *)(x + i + 32)), z));
    }
    uint64_t t[4];
    _mm256_storeu_si256((__m256i *)(void *)t, _mm256_add_epi64(s0, s1));
    uint32_t sum = (uint32_t)(t[0] + t[1] + t[2] + t[3]);
    for (; i < n; i++) sum += x[i];
    return sum;
}

__attribute__((target("avx512f,avx512bw"))) uint32_t nn_u8_sum_avx512(const uint8_t *x, size_t n) {
    const __m512i z = _mm512_setzero_si512();
    __m512i s0 = z, s1 = z;
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        s0 = _mm512_add_epi64(s0, _mm512_sad_epu8(_mm512_loadu_si512((const void *)(x + i)), z));
        s1 = _mm512_add_epi64(s1, _mm512_sad_epu8(_mm512_loadu_si512((const void *)(x + i + 64)), z));
    }
    if (i + 64 <= n) {
        s0 = _mm512_add_epi64(s0, _mm512_sad_epu8(_mm512_loadu_si512((const void *)(x + i)), z));
        i += 64;
    }
    if (i < n) {   /* the tail under a mask: masked-off bytes load as zero */
        const __mmask64 m = _cvtu64_mask64(~0ull >> (64 - (n - i)));
        s1 = _mm512_add_epi64(s1, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(m, (const void *)(x + i)), z));
    }
    return (uint32_t)_mm512_reduce_add_epi64(_mm512_add_epi64(s0, s1));
}
#endif
