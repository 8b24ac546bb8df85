/* AVX-512F copies: the stride-2 gather (two 16-float loads and one permute per 16 outputs instead
 * of 16 scalar loads; the input phase split of stride-2 convolutions was ~30 % of a stem conv) and
 * a 16x16 transpose (packing a transposed B, e.g. Gemm weights with transB = 1, at session
 * creation: scalar stores 128 bytes apart were ~15 % of creating mobilenet_v2). */
#include "copy_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>
#include "tr16_avx512.h"

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

__attribute__((target("avx512f")))
void nn_transpose16_avx512(const float *src, size_t ld, float *dst, size_t ldd) {
    nn_transpose_avx512(src, ld, 16, 1.0f, dst, ldd, 16);
}

__attribute__((target("avx512f")))
void nn_transpose_avx512(const float *src, size_t ld, size_t rows, float scale, float *dst, size_t ldd, size_t width) {
    __m512 r[16];
    const __m512 sc = _mm512_set1_ps(scale);
    for (size_t i = 0; i < 16; i++) r[i] = i < rows ? _mm512_mul_ps(_mm512_loadu_ps(src + i * ld), sc) : _mm512_setzero_ps();
    nn_tr16x16_avx512(r);
    const __mmask16 m = (__mmask16)((1u << width) - 1u);
    for (size_t c = 0; c < 16; c++) _mm512_mask_storeu_ps(dst + c * ldd, m, r[c]);
}
#endif
