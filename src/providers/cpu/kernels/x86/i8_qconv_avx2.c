/* AVX2 integer-conv helpers (int_gemm.h: nn_qconv_ops).
 * dw_taps: 16 outputs per step, taps in pairs: the two taps' int16 inputs interleaved (vpunpck*wd)
 * against the broadcast weight pair, so one vpmaddwd does two taps for 8 outputs; |x|, |w| <= 255
 * keep every pair sum exact. The interleave works within 128-bit lanes, so the two accumulators
 * hold outputs 0-3/8-11 and 4-7/12-15 and are put in order once at the store.
 * rq_row: vcvtps2dq rounds half to even (the default MXCSR mode, as nearbyintf); the product is first
 * clamped to +-2^30, which changes no saturated 8-bit result and keeps the zero-point add in range;
 * the saturating packs then clamp to the 8-bit type. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include <string.h>

__attribute__((target("avx2"))) void nn_qdw_taps_avx2(int32_t *y, size_t n, const int16_t *x, const size_t *off,
                                                      size_t ntaps, const int16_t *w) {
    if (ntaps > 64) { nn_qdw_taps_generic(y, n, x, off, ntaps, w); return; }
    int32_t wp[32];
    const int16_t *xa[32], *xb[32];
    const size_t np = (ntaps + 1) / 2;
    for (size_t p = 0; p < np; p++) {   /* an odd tap count pairs the last tap with itself at weight 0 */
        const size_t t1 = 2 * p + 1 < ntaps ? 2 * p + 1 : 2 * p;
        const uint32_t w1 = 2 * p + 1 < ntaps ? (uint16_t)w[t1] : 0;
        wp[p] = (int32_t)((uint32_t)(uint16_t)w[2 * p] | w1 << 16);
        xa[p] = x + off[2 * p];
        xb[p] = x + off[t1];
    }
    size_t o = 0;
    for (; o + 16 <= n; o += 16) {
        __m256i lo = _mm256_setzero_si256(), hi = lo;
        for (size_t p = 0; p < np; p++) {
            const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(xa[p] + o));
            const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(xb[p] + o));
            const __m256i wv = _mm256_set1_epi32(wp[p]);
            lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), wv));   /* outputs 0-3, 8-11 */
            hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), wv));   /* outputs 4-7, 12-15 */
        }
        _mm256_storeu_si256((__m256i *)(void *)(y + o), _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(y + o + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
    for (; o + 8 <= n; o += 8) {
        __m256i acc = _mm256_setzero_si256();
        for (size_t p = 0; p < np; p++) {
            const __m256i a = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(xa[p] + o)));
            const __m256i b = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(xb[p] + o)));
            /* a in the low half of each int32 lane, b in the high half: one vpmaddwd per pair */
            const __m256i ab = _mm256_or_si256(_mm256_and_si256(a, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(b, 16));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(ab, _mm256_set1_epi32(wp[p])));
        }
        _mm256_storeu_si256((__m256i *)(void *)(y + o), acc);
    }
    if (o < n) nn_qdw_taps_generic(y + o, n - o, x + o, off, ntaps, w);
}

__attribute__((target("avx2"))) void nn_qpack2_16_avx2(const int16_t *ra, const int16_t *rb, size_t n, int16_t *out,
                                                       size_t pstride) {
    for (size_t q = 0; q < n; q += 16, out += pstride) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(ra + q));
        const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(rb + q));
        const __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b);
        _mm256_storeu_si256((__m256i *)(void *)out, _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(out + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
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
    if (q < n) {   /* the tail through a zero-padded copy: the same vector expression, n - q bytes kept */
        int32_t t[16] = { 0 };
        uint8_t o[16];
        memcpy(t, acc + q, (n - q) * sizeof *t);
        nn_qrq_row_avx2(t, 16, bias, mult, yzp, is_signed, o);
        memcpy(d + q, o, n - q);
    }
}
#endif
