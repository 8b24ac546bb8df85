/* AVX2 forms of quant_ukernels.h. */
#include "../quant_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>
#include "../../ops/quant/quant.h"

__attribute__((target("avx2"))) void nn_minmax_f32_avx2(const float *x, size_t n, float *lo, float *hi) {
    /* vminps(a, b) is a < b ? a : b, so folding x as the first operand skips NaN lanes like the
     * scalar x < lo ? x : lo */
    __m256 l0 = _mm256_set1_ps(*lo), l1 = l0, h0 = _mm256_set1_ps(*hi), h1 = h0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        l0 = _mm256_min_ps(a, l0); l1 = _mm256_min_ps(b, l1);
        h0 = _mm256_max_ps(a, h0); h1 = _mm256_max_ps(b, h1);
    }
    float lb[8], hb[8];
    _mm256_storeu_ps(lb, _mm256_min_ps(l0, l1));
    _mm256_storeu_ps(hb, _mm256_max_ps(h0, h1));
    float l = *lo, h = *hi;
    for (int k = 0; k < 8; k++) {
        l = lb[k] < l ? lb[k] : l;
        h = hb[k] > h ? hb[k] : h;
    }
    for (; i < n; i++) {
        l = x[i] < l ? x[i] : l;
        h = x[i] > h ? x[i] : h;
    }
    *lo = l;
    *hi = h;
}

__attribute__((target("avx2"))) void nn_quantize8_f32_avx2(const float *x, size_t n, float scale, int32_t zp,
                                                           int is_signed, void *y) {
    const __m256 s = _mm256_set1_ps(scale), lim = _mm256_set1_ps(1073741824.0f), nlim = _mm256_set1_ps(-1073741824.0f);
    const __m256i z = _mm256_set1_epi32(zp);
    uint8_t *d = y;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 q0 = _mm256_div_ps(_mm256_loadu_ps(x + i), s), q1 = _mm256_div_ps(_mm256_loadu_ps(x + i + 8), s);
        /* NaN lanes to 0, then clamp (max/min return their second operand on NaN: none left) */
        q0 = _mm256_andnot_ps(_mm256_cmp_ps(q0, q0, _CMP_UNORD_Q), q0);
        q1 = _mm256_andnot_ps(_mm256_cmp_ps(q1, q1, _CMP_UNORD_Q), q1);
        q0 = _mm256_min_ps(_mm256_max_ps(q0, nlim), lim);
        q1 = _mm256_min_ps(_mm256_max_ps(q1, nlim), lim);
        const __m256i i0 = _mm256_add_epi32(_mm256_cvtps_epi32(q0), z), i1 = _mm256_add_epi32(_mm256_cvtps_epi32(q1), z);
        const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(i0, i1), 0xd8);   /* 16 int16 in order */
        const __m128i a = _mm256_castsi256_si128(w16), b = _mm256_extracti128_si256(w16, 1);
        _mm_storeu_si128((__m128i *)(void *)(d + i), is_signed ? _mm_packs_epi16(a, b) : _mm_packus_epi16(a, b));
    }
    for (; i < n; i++) {
        const int32_t v = nn_q_add_sat(nn_q_round(x[i] / scale), zp);
        d[i] = (uint8_t)(is_signed ? (v < -128 ? -128 : v > 127 ? 127 : v) : (v < 0 ? 0 : v > 255 ? 255 : v));
    }
}

/* The AVX2 kernel's steps sixteen lanes wide, the tail as a masked pass; the clamp to the 8-bit
 * range before the narrowing replaces the saturating packs. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) void nn_quantize8_f32_avx512(const float *x, size_t n,
                                                                                 float scale, int32_t zp,
                                                                                 int is_signed, void *y) {
    const __m512 s = _mm512_set1_ps(scale), lim = _mm512_set1_ps(1073741824.0f), nlim = _mm512_set1_ps(-1073741824.0f);
    const __m512i z = _mm512_set1_epi32(zp), lo = _mm512_set1_epi32(is_signed ? -128 : 0);
    const __m512i hi = _mm512_set1_epi32(is_signed ? 127 : 255);
    uint8_t *d = y;
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
        __m512 q = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), s);
        q = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(q, q, _CMP_ORD_Q), q);   /* NaN lanes to 0 */
        q = _mm512_min_ps(_mm512_max_ps(q, nlim), lim);
        __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(q), z);
        v = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
        _mm_mask_storeu_epi8(d + i, m, _mm512_cvtepi32_epi8(v));
    }
}

/* (v - zp) is exact in int32 and in float (|v - zp| <= 510), so (float)(v - zp) * scale is the
 * per-byte table entry (lut[v] - lut[zp]) * scale the portable loop reads, bit for bit. */
__attribute__((target("avx2"))) void nn_dequantize8_f32_avx2(const void *x, size_t n, int is_signed, int32_t zp,
                                                             float scale, float *y) {
    const __m256 s = _mm256_set1_ps(scale);
    const __m256i z = _mm256_set1_epi32(zp);
    const uint8_t *b = x;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)(b + i));
        const __m256i w = is_signed ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(w, z)), s));
    }
    for (; i < n; i++) {
        const int32_t v = is_signed ? (int32_t)(int8_t)b[i] : (int32_t)b[i];
        y[i] = (float)(v - zp) * scale;
    }
}

__attribute__((target("avx512f"))) void nn_dequantize8_f32_avx512(const void *x, size_t n, int is_signed, int32_t zp,
                                                                  float scale, float *y) {
    const __m512 s = _mm512_set1_ps(scale);
    const __m512i z = _mm512_set1_epi32(zp);
    const uint8_t *b = x;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        const __m512i w = is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(w, z)), s));
    }
    for (; i < n; i++) {
        const int32_t v = is_signed ? (int32_t)(int8_t)b[i] : (int32_t)b[i];
        y[i] = (float)(v - zp) * scale;
    }
}
/* i32_scale: the product, then the sum, each rounded once (no FMA, as the Cast, Mul and Add nodes it
 * replaces): GCC does not contract in ISO C mode, clang is told so */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
__attribute__((target("avx2"))) void nn_i32_scale_f32_avx2(const int32_t *x, size_t n, const float *scale,
                                                          const float *bias, float *y) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)(x + i))),
                                 _mm256_loadu_ps(scale + i));
        if (bias) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + i));
        _mm256_storeu_ps(y + i, v);
    }
    for (; i < n; i++) {
        const float v = (float)x[i] * scale[i];
        y[i] = bias ? v + bias[i] : v;
    }
}

__attribute__((target("avx512f"))) void nn_i32_scale_f32_avx512(const int32_t *x, size_t n, const float *scale,
                                                              const float *bias, float *y) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512((const void *)(x + i))),
                                 _mm512_loadu_ps(scale + i));
        if (bias) v = _mm512_add_ps(v, _mm512_loadu_ps(bias + i));
        _mm512_storeu_ps(y + i, v);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, x + i)), _mm512_maskz_loadu_ps(m, scale + i));
        if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + i));
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}
#endif
