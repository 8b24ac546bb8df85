/* AVX-512F stride-2 gather: two 16-float loads and one permute per 16 outputs, instead of 16
 * scalar loads (the input phase split of stride-2 convolutions was ~30 % of a stem conv). */
#include "copy_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx512f")))
void nn_copy_stride2_avx512(const float *src, float *dst, size_t n) {
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i even = _mm512_add_epi32(lanes, lanes);
    size_t i = 0;
    /* a full block reads src[2i .. 2i + 31]; 2i + 31 <= 2n - 2 keeps it inside what is allowed */
    for (; i + 16 < n; i += 16) {
        const __m512 lo = _mm512_loadu_ps(src + 2 * i), hi = _mm512_loadu_ps(src + 2 * i + 16);
        _mm512_storeu_ps(dst + i, _mm512_permutex2var_ps(lo, even, hi));
    }
    for (; i < n; i++) dst[i] = src[2 * i];
}
#endif
