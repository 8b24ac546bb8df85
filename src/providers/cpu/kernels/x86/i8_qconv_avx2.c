/* AVX2 integer-conv helpers (int_gemm.h: nn_qconv_ops).
 * dw_row: 8 outputs per step; each tap's int16 inputs are sign-extended to int32 lanes whose high
 * halves vpmaddwd multiplies by 0, so x * w is exact and nothing saturates.
 * rq_row: vcvtps2dq rounds half to even (the default MXCSR mode, as nearbyintf); the product is first
 * clamped to +-2^30, which changes no saturated 8-bit result and keeps the zero-point add in range;
 * the saturating packs then clamp to the 8-bit type. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>

__attribute__((target("avx2"))) void nn_qdw_row_avx2(int32_t *y, size_t n, const int16_t *x, size_t xstep, size_t dw,
                                                     size_t kh, size_t kw, const int16_t *w) {
    size_t o = 0;
    for (; o + 8 <= n; o += 8) {
        __m256i acc = _mm256_setzero_si256();
        for (size_t i = 0; i < kh; i++) {
            const int16_t *xr = x + i * xstep + o;
            for (size_t j = 0; j < kw; j++) {
                const __m256i xv = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(xr + j * dw)));
                const __m256i wv = _mm256_set1_epi32((int32_t)(uint16_t)w[i * kw + j]);
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(xv, wv));
            }
        }
        _mm256_storeu_si256((__m256i *)(void *)(y + o), acc);
    }
    if (o < n) nn_qdw_row_generic(y + o, n - o, x + o, xstep, dw, kh, kw, w);
}

__attribute__((target("avx2"))) void nn_qrq_row_avx2(const int32_t *acc, size_t n, int32_t bias, float mult,
                                                     int32_t yzp, int is_signed, void *dst) {
    const __m256i vb = _mm256_set1_epi32(bias), vz = _mm256_set1_epi32(yzp);
    const __m256 vm = _mm256_set1_ps(mult), lo = _mm256_set1_ps(-1073741824.0f), hi = _mm256_set1_ps(1073741824.0f);
    uint8_t *d = dst;
    size_t q = 0;
    for (; q + 16 <= n; q += 16) {
        __m256 f0 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(acc + q)), vb)), vm);
        __m256 f1 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(acc + q + 8)), vb)), vm);
        f0 = _mm256_min_ps(_mm256_max_ps(f0, lo), hi);
        f1 = _mm256_min_ps(_mm256_max_ps(f1, lo), hi);
        const __m256i i0 = _mm256_add_epi32(_mm256_cvtps_epi32(f0), vz), i1 = _mm256_add_epi32(_mm256_cvtps_epi32(f1), vz);
        const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(i0, i1), 0xd8);   /* 16 int16 in order */
        const __m128i a = _mm256_castsi256_si128(w16), b = _mm256_extracti128_si256(w16, 1);
        const __m128i r = is_signed ? _mm_packs_epi16(a, b) : _mm_packus_epi16(a, b);
        _mm_storeu_si128((__m128i *)(void *)(d + q), r);
    }
    if (q < n) nn_qrq_row_generic(acc + q, n - q, bias, mult, yzp, is_signed, d + q);
}
#endif
