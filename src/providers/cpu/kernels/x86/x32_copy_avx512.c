/* AVX-512F copies: the 2x repeat of nearest upsampling, the 2-way interleave of a 2x2 stride-2
 * ConvTranspose, the stride-2 gather (two 16-float loads and one permute per 16 outputs instead
 * of 16 scalar loads; the scalar input phase split of stride-2 convolutions was a large share of a
 * stem conv) and a 16x16 transpose (packing a transposed B, e.g. Gemm weights with transB = 1, at
 * session creation, where scalar stores 128 bytes apart showed in the profile). */
#include "../copy_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>
#include "x32_transpose_16x16_avx512.h"

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
void nn_copy_rep2_avx512(const float *src, float *dst, size_t n) {
    const __m512i lo_idx = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    const __m512i hi_idx = _mm512_add_epi32(lo_idx, _mm512_set1_epi32(8));
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 v = _mm512_loadu_ps(src + i / 2);
        _mm512_storeu_ps(dst + i, _mm512_permutexvar_ps(lo_idx, v));
        _mm512_storeu_ps(dst + i + 16, _mm512_permutexvar_ps(hi_idx, v));
    }
    if (i < n) {   /* the last n - i outputs read (n - i + 1) / 2 inputs */
        const size_t m = n - i, half = (m + 1) / 2;
        const __m512 v = _mm512_maskz_loadu_ps((__mmask16)((1u << half) - 1u), src + i / 2);
        const __mmask16 m0 = m >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << m) - 1u);
        const __mmask16 m1 = m <= 16 ? 0 : (__mmask16)((1u << (m - 16)) - 1u);
        _mm512_mask_storeu_ps(dst + i, m0, _mm512_permutexvar_ps(lo_idx, v));
        if (m1) _mm512_mask_storeu_ps(dst + i + 16, m1, _mm512_permutexvar_ps(hi_idx, v));
    }
}

__attribute__((target("avx512f")))
void nn_interleave2_avx512(const float *a, const float *b, float bias, float *dst, size_t n) {
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    /* output lane i: a[i / 2] for even i, b[i / 2] (second operand) for odd */
    const __m512i lo = _mm512_add_epi32(_mm512_srli_epi32(lanes, 1),
                                        _mm512_slli_epi32(_mm512_and_si512(lanes, _mm512_set1_epi32(1)), 4));
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    const __m512 vb = _mm512_set1_ps(bias);
    for (size_t i = 0; i < n; i += 16) {
        const size_t m = n - i < 16 ? n - i : 16;
        const __mmask16 in = (__mmask16)((1u << m) - 1u);
        const __m512 va = _mm512_maskz_loadu_ps(in, a + i), vbb = _mm512_maskz_loadu_ps(in, b + i);
        const __mmask16 m0 = m >= 8 ? (__mmask16)0xffff : (__mmask16)((1u << (2 * m)) - 1u);
        const __mmask16 m1 = m <= 8 ? 0 : m >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (2 * (m - 8))) - 1u);
        _mm512_mask_storeu_ps(dst + 2 * i, m0, _mm512_add_ps(_mm512_permutex2var_ps(va, lo, vbb), vb));
        if (m1) _mm512_mask_storeu_ps(dst + 2 * i + 16, m1, _mm512_add_ps(_mm512_permutex2var_ps(va, hi, vbb), vb));
    }
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
