/* The requantization of 16 int32 accumulators at AVX-512 (rq_row's expression, int_gemm.h), shared by
 * the kernels that requantize in registers. */
#ifndef CORT_CPU_KERNELS_X86_I8_RQ16_AVX512_H
#define CORT_CPU_KERNELS_X86_I8_RQ16_AVX512_H
#include <immintrin.h>

/* 16 results: the product clamped above at 2^30 (vcvtps2dq turns an overflow into INT32_MIN, right
 * only for negative ones), narrowed to int16 with saturation, the zero point added with int16
 * saturation, narrowed to 8 bits with saturation: every clamp moves only values that saturate the
 * 8-bit result anyway, in the direction they saturate, so this is the scalar expression. vb and vm
 * may differ per lane (channels in lanes) or not. */
static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl"))) __m128i
nn_qrq16_avx512(__m512i acc, __m512i vb, __m512 vm, __m256i vz16, int is_signed) {
    const __m512 f = _mm512_min_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc, vb)), vm),
                                   _mm512_set1_ps(1073741824.0f));
    const __m256i w16 = _mm256_adds_epi16(_mm512_cvtsepi32_epi16(_mm512_cvtps_epi32(f)), vz16);
    return is_signed ? _mm256_cvtsepi16_epi8(w16) : _mm256_cvtusepi16_epi8(_mm256_max_epi16(w16, _mm256_setzero_si256()));
}
/* nn_qrq16_avx512's product rounded to int32, before any narrowing. */
static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl"))) __m512i
nn_qrq_i32_avx512(__m512i acc, __m512i vb, __m512 vm) {
    return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc, vb)), vm),
                                            _mm512_set1_ps(1073741824.0f)));
}
/* Four vectors of nn_qrq_i32_avx512 narrowed together: vpackssdw of two interleaves their 4-value quarters
 * per 128-bit lane, one vpaddsw adds the zero point to two vectors, vpacksswb / vpackuswb leaves
 * vector j's quarter L in dword 4L + j, and one vpermd puts vector j's 16 bytes in lane j. Each step
 * saturates as nn_qrq16_avx512's (vpackuswb sends negative words to 0, as its vpmaxsw + vpmovuswb), so the
 * bytes are the same, and four vectors take 6 uops instead of 20 (vpmovsdw and vpmovuswb are two each). */
static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl"))) __m512i
nn_qrq_pack4_avx512(__m512i v0, __m512i v1, __m512i v2, __m512i v3, __m512i vz16, int is_signed) {
    const __m512i w01 = _mm512_adds_epi16(_mm512_packs_epi32(v0, v1), vz16);
    const __m512i w23 = _mm512_adds_epi16(_mm512_packs_epi32(v2, v3), vz16);
    const __m512i b = is_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
    return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
}
#endif
