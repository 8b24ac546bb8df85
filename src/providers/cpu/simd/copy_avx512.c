/* AVX-512F copies: the stride-2 gather (two 16-float loads and one permute per 16 outputs instead
 * of 16 scalar loads; the input phase split of stride-2 convolutions was ~30 % of a stem conv) and
 * a 16x16 transpose (packing a transposed B, e.g. Gemm weights with transB = 1, at session
 * creation: scalar stores 128 bytes apart were ~15 % of creating mobilenet_v2). */
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

__attribute__((target("avx512f")))
void nn_transpose16_avx512(const float *src, size_t ld, float *dst, size_t ldd) {
    nn_transpose_avx512(src, ld, 16, 1.0f, dst, ldd, 16);
}

__attribute__((target("avx512f")))
void nn_transpose_avx512(const float *src, size_t ld, size_t rows, float scale, float *dst, size_t ldd, size_t width) {
    __m512 r[16], t[16];
    const __m512 sc = _mm512_set1_ps(scale);
    for (size_t i = 0; i < 16; i++) r[i] = i < rows ? _mm512_mul_ps(_mm512_loadu_ps(src + i * ld), sc) : _mm512_setzero_ps();
    for (int i = 0; i < 16; i += 2) {   /* pairs of rows interleaved */
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {   /* each 128-bit lane k of r[i + c]: rows i..i+3 of column 4k + c */
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {   /* lanes 0,2 / 1,3 of rows 0-3 and 4-7 (t[c], t[c+4]); 8-15 likewise */
        t[c] = _mm512_shuffle_f32x4(r[c], r[c + 4], 0x88);
        t[c + 4] = _mm512_shuffle_f32x4(r[c], r[c + 4], 0xDD);
        t[c + 8] = _mm512_shuffle_f32x4(r[c + 8], r[c + 12], 0x88);
        t[c + 12] = _mm512_shuffle_f32x4(r[c + 8], r[c + 12], 0xDD);
    }
    const __mmask16 m = (__mmask16)((1u << width) - 1u);
    for (int c = 0; c < 4; c++) {
        _mm512_mask_storeu_ps(dst + (size_t)c * ldd, m, _mm512_shuffle_f32x4(t[c], t[c + 8], 0x88));
        _mm512_mask_storeu_ps(dst + (size_t)(c + 8) * ldd, m, _mm512_shuffle_f32x4(t[c], t[c + 8], 0xDD));
        _mm512_mask_storeu_ps(dst + (size_t)(c + 4) * ldd, m, _mm512_shuffle_f32x4(t[c + 4], t[c + 12], 0x88));
        _mm512_mask_storeu_ps(dst + (size_t)(c + 12) * ldd, m, _mm512_shuffle_f32x4(t[c + 4], t[c + 12], 0xDD));
    }
}
#endif
