/* AVX2 integer-conv helpers (int_gemm.h: nn_qconv_ops).
 * dw_taps: 16 outputs per step, taps in pairs: the two taps' int16 inputs interleaved (vpunpck*wd)
 * against the broadcast weight pair, so one vpmaddwd does two taps for 8 outputs; |x|, |w| <= 255
 * keep every pair sum exact. The interleave works within 128-bit lanes, so the two accumulators
 * hold outputs 0-3/8-11 and 4-7/12-15 and are put in order once at the store.
 * rq_row: vcvtps2dq rounds half to even (the default MXCSR mode, as nearbyintf); see qrq16 for the
 * clamps. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include <math.h>
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

__attribute__((target("avx2"))) void nn_qwiden_avx2(const void *x, size_t n, int is_signed, int32_t zp, int16_t *out) {
    const __m256i vz = _mm256_set1_epi16((int16_t)zp);
    const uint8_t *u = x;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(u + i));
        const __m256i w = is_signed ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm256_sub_epi16(w, vz));
    }
    for (; i + 8 <= n; i += 8) {
        const __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(u + i));
        const __m128i w = is_signed ? _mm_cvtepi8_epi16(b) : _mm_cvtepu8_epi16(b);
        _mm_storeu_si128((__m128i *)(void *)(out + i), _mm_sub_epi16(w, _mm256_castsi256_si128(vz)));
    }
    if (i < n) nn_qwiden_generic(u + i, n - i, is_signed, zp, out + i);
}

/* 32 bytes read as 16 16-bit words: the even bytes are each word's low byte, the odd ones its high byte. */
__attribute__((target("avx2"))) void nn_qwiden2_avx2(const void *x, size_t n, int is_signed, int32_t zp, int16_t *ev,
                                                     int16_t *od) {
    const __m256i vz = _mm256_set1_epi16((int16_t)zp);
    const uint8_t *u = x;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(u + i));
        __m256i e, o;
        if (is_signed) { e = _mm256_srai_epi16(_mm256_slli_epi16(v, 8), 8); o = _mm256_srai_epi16(v, 8); }
        else { e = _mm256_and_si256(v, _mm256_set1_epi16(0xff)); o = _mm256_srli_epi16(v, 8); }
        _mm256_storeu_si256((__m256i *)(void *)(ev + i / 2), _mm256_sub_epi16(e, vz));
        _mm256_storeu_si256((__m256i *)(void *)(od + i / 2), _mm256_sub_epi16(o, vz));
    }
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(u + i)), z = _mm256_castsi256_si128(vz);
        __m128i e, o;
        if (is_signed) { e = _mm_srai_epi16(_mm_slli_epi16(v, 8), 8); o = _mm_srai_epi16(v, 8); }
        else { e = _mm_and_si128(v, _mm_set1_epi16(0xff)); o = _mm_srli_epi16(v, 8); }
        _mm_storeu_si128((__m128i *)(void *)(ev + i / 2), _mm_sub_epi16(e, z));
        _mm_storeu_si128((__m128i *)(void *)(od + i / 2), _mm_sub_epi16(o, z));
    }
    if (i < n) nn_qwiden2_generic(u + i, n - i, is_signed, zp, ev + i / 2, od + i / 2);
}

__attribute__((target("avx2"))) void nn_qwino_in_avx2(const int16_t *const *e, const int16_t *const *o, size_t n,
                                                      int16_t *v, size_t vstride) {
    size_t t = 0;
#define NN_LD(P) _mm256_loadu_si256((const __m256i *)(const void *)(P))
    for (; t + 16 <= n; t += 16) {
        __m256i h[4][4];
        for (int i = 0; i < 4; i++) {
            const __m256i e0 = NN_LD(e[i] + t), e1 = NN_LD(e[i] + t + 1), o0 = NN_LD(o[i] + t), o1 = NN_LD(o[i] + t + 1);
            h[i][0] = _mm256_sub_epi16(e0, e1);
            h[i][1] = _mm256_add_epi16(o0, e1);
            h[i][2] = _mm256_sub_epi16(e1, o0);
            h[i][3] = _mm256_sub_epi16(o0, o1);
        }
        for (int j = 0; j < 4; j++) {
            _mm256_storeu_si256((__m256i *)(void *)(v + (size_t)j * vstride + t), _mm256_sub_epi16(h[0][j], h[2][j]));
            _mm256_storeu_si256((__m256i *)(void *)(v + (size_t)(4 + j) * vstride + t), _mm256_add_epi16(h[1][j], h[2][j]));
            _mm256_storeu_si256((__m256i *)(void *)(v + (size_t)(8 + j) * vstride + t), _mm256_sub_epi16(h[2][j], h[1][j]));
            _mm256_storeu_si256((__m256i *)(void *)(v + (size_t)(12 + j) * vstride + t), _mm256_sub_epi16(h[1][j], h[3][j]));
        }
    }
#undef NN_LD
    if (t < n) {
        const int16_t *e2[4] = { e[0] + t, e[1] + t, e[2] + t, e[3] + t }, *o2[4] = { o[0] + t, o[1] + t, o[2] + t, o[3] + t };
        nn_qwino_in_generic(e2, o2, n - t, v + t, vstride);
    }
}

__attribute__((target("avx2"))) void nn_qpack2_8_avx2(const void *xa, const void *xb, size_t n, int is_signed,
                                                      int32_t zp, int16_t *out, size_t pstride) {
    const __m256i vz = _mm256_set1_epi16((int16_t)zp);
    const uint8_t *ua = xa, *ub = xb;
    size_t q = 0;
    for (; q + 16 <= n; q += 16, out += pstride) {
        const __m128i ba = _mm_loadu_si128((const __m128i *)(const void *)(ua + q));
        const __m256i a = _mm256_sub_epi16(is_signed ? _mm256_cvtepi8_epi16(ba) : _mm256_cvtepu8_epi16(ba), vz);
        __m256i b = _mm256_setzero_si256();
        if (ub) {
            const __m128i bb = _mm_loadu_si128((const __m128i *)(const void *)(ub + q));
            b = _mm256_sub_epi16(is_signed ? _mm256_cvtepi8_epi16(bb) : _mm256_cvtepu8_epi16(bb), vz);
        }
        const __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b);
        _mm256_storeu_si256((__m256i *)(void *)out, _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(out + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
    if (q < n) nn_qpack2_8_generic(ua + q, ub ? ub + q : NULL, n - q, is_signed, zp, out, pstride);
}

/* 16 results (vm0 multiplies columns 0-7, vm1 columns 8-15): the product clamped above at 2^30
 * (vcvtps2dq turns any overflow into INT32_MIN, right only for negative ones), packed to int16 with saturation, the zero point added with int16
 * saturation, packed to 8 bits with saturation. Every clamp moves only values that saturate the
 * 8-bit result anyway, in the direction they saturate, so this equals the scalar expression. */
__attribute__((target("avx2"))) static inline __m128i qrq16v(__m256i a0, __m256i a1, __m256i vb, __m256 vm0, __m256 vm1,
                                                             __m256i vz16, int is_signed) {
    const __m256 hi = _mm256_set1_ps(1073741824.0f);
    const __m256 f0 = _mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(a0, vb)), vm0), hi);
    const __m256 f1 = _mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(a1, vb)), vm1), hi);
    const __m256i w16 = _mm256_adds_epi16(_mm256_permute4x64_epi64(_mm256_packs_epi32(_mm256_cvtps_epi32(f0), _mm256_cvtps_epi32(f1)), 0xd8), vz16);
    const __m128i a = _mm256_castsi256_si128(w16), b = _mm256_extracti128_si256(w16, 1);
    return is_signed ? _mm_packs_epi16(a, b) : _mm_packus_epi16(a, b);
}
__attribute__((target("avx2"))) static inline __m128i qrq16m(const int32_t *acc, __m256i vb, __m256 vm0, __m256 vm1,
                                                             __m256i vz16, int is_signed) {
    return qrq16v(_mm256_loadu_si256((const __m256i *)(const void *)acc), _mm256_loadu_si256((const __m256i *)(const void *)(acc + 8)),
                  vb, vm0, vm1, vz16, is_signed);
}
/* One multiplier for all 16 columns. */
__attribute__((target("avx2"))) static inline __m128i qrq16(const int32_t *acc, __m256i vb, __m256 vm, __m256i vz16,
                                                            int is_signed) {
    return qrq16m(acc, vb, vm, vm, vz16, is_signed);
}

/* The first n < 16 bytes of v to d, in at most four stores (no byte-masked store in AVX2). */
__attribute__((target("avx2"))) static inline void qrq_store_part(uint8_t *d, __m128i v, size_t n) {
    if (n & 8) { _mm_storel_epi64((__m128i *)(void *)d, v); v = _mm_srli_si128(v, 8); d += 8; }
    if (n & 4) { const int32_t t = _mm_cvtsi128_si32(v); memcpy(d, &t, 4); v = _mm_srli_si128(v, 4); d += 4; }
    if (n & 2) { const uint16_t t = (uint16_t)_mm_extract_epi16(v, 0); memcpy(d, &t, 2); v = _mm_srli_si128(v, 2); d += 2; }
    if (n & 1) *d = (uint8_t)_mm_cvtsi128_si32(v);
}

/* The last n < 16 values: vpmaskmovd reads none past n, and the bytes go out in pieces (a zero-padded
 * copy through memory stalls on store forwarding, twice). */
__attribute__((target("avx2"))) static inline void qrq_tail(const int32_t *acc, size_t n, __m256i vb, __m256 vm,
                                                            __m256i vz16, int is_signed, uint8_t *d) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i lo = _mm256_maskload_epi32((const int *)acc, _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n), lane));
    const __m256i hi = _mm256_maskload_epi32((const int *)(acc + 8), _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n - 8), lane));
    qrq_store_part(d, qrq16v(lo, hi, vb, vm, vm, vz16, is_signed), n);
}

__attribute__((target("avx2"))) void nn_qrq_row_avx2(const int32_t *acc, size_t n, int32_t bias, float mult,
                                                     int32_t yzp, int is_signed, void *dst) {
    const __m256i vb = _mm256_set1_epi32(bias), vz16 = _mm256_set1_epi16((int16_t)yzp);
    const __m256 vm = _mm256_set1_ps(mult);
    uint8_t *d = dst;
    size_t q = 0;
    for (; q + 16 <= n; q += 16) _mm_storeu_si128((__m128i *)(void *)(d + q), qrq16(acc + q, vb, vm, vz16, is_signed));
    if (q < n) qrq_tail(acc + q, n - q, vb, vm, vz16, is_signed, d + q);
}

__attribute__((target("avx2"))) void nn_qrq_tile_cols_avx2(const int32_t *acc, size_t ldt, size_t rows, size_t cols,
                                                           const float *mult, int32_t yzp, int is_signed, uint8_t *dst,
                                                           size_t ldd) {
    float m[16] = { 0 };   /* zero-padded: the padding columns compute yzp and are not stored */
    int finite = 1;
    for (size_t q = 0; q < cols && q < 16; q++) {
        m[q] = mult[q];
        finite &= isfinite(mult[q]) != 0;
    }
    if (!finite || cols > 16) {
        nn_qrq_tile_cols_generic(acc, ldt, rows, cols, mult, yzp, is_signed, dst, ldd);
        return;
    }
    const __m256 vm0 = _mm256_loadu_ps(m), vm1 = _mm256_loadu_ps(m + 8);
    const __m256i vz16 = _mm256_set1_epi16((int16_t)yzp);
    for (size_t r = 0; r < rows; r++) {
        if (cols == 16) {
            _mm_storeu_si128((__m128i *)(void *)(dst + r * ldd), qrq16m(acc + r * ldt, _mm256_setzero_si256(), vm0, vm1, vz16, is_signed));
            continue;
        }
        int32_t t[16] = { 0 };
        uint8_t o[16];
        memcpy(t, acc + r * ldt, cols * sizeof(int32_t));
        _mm_storeu_si128((__m128i *)(void *)o, qrq16m(t, _mm256_setzero_si256(), vm0, vm1, vz16, is_signed));
        memcpy(dst + r * ldd, o, cols);
    }
}

/* qrq16m's products (one multiplier) rounded to int32 from the accumulators lo (columns 0-7), hi (8-15). */
__attribute__((target("avx2"))) static inline void qrq_i32x16(__m256i lo, __m256i hi, __m256i vb, __m256 vm, __m256i *plo,
                                                              __m256i *phi) {
    const __m256 top = _mm256_set1_ps(1073741824.0f);
    *plo = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(lo, vb)), vm), top));
    *phi = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(hi, vb)), vm), top));
}

/* A GEMM tile's rows of cols <= 16 columns, two at a time: each row's vpackssdw leaves its quarters in
 * the order 0 2 | 1 3, the zero point is added as in qrq16m, and one vpackuswb / vpacksswb of the two
 * rows' words followed by one vpermd (instead of a vpermq, a vextracti128 and a pack per row) puts row 0
 * in the low lane and row 1 in the high one. The saturations are qrq16m's, so are the bytes. Narrow
 * tiles (a plane's last columns) load with vpmaskmovd and store in pieces, no zero-padded copy. */
__attribute__((target("avx2"), always_inline)) static inline void qrq_tile_avx2_(const int32_t *acc, size_t ldt,
                                                                               size_t rows, size_t cols, int full,
                                                                               const int32_t *bias, const float *mult,
                                                                               int32_t yzp, int is_signed, uint8_t *dst,
                                                                               size_t ldd) {
    const __m256i vz16 = _mm256_set1_epi16((int16_t)yzp), lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mlo = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)cols), lane);
    const __m256i mhi = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)cols - 8), lane);
#define QRQ_LD_(p, h) (full ? _mm256_loadu_si256((const __m256i *)(const void *)((p) + 8 * (h))) \
                            : _mm256_maskload_epi32((const int *)((p) + 8 * (h)), (h) ? mhi : mlo))
    size_t r = 0;
    for (; r + 2 <= rows && isfinite(mult[r]) && isfinite(mult[r + 1]); r += 2) {
        const int32_t *a = acc + r * ldt;
        __m256i a0, a1, b0, b1;
        qrq_i32x16(QRQ_LD_(a, 0), QRQ_LD_(a, 1), _mm256_set1_epi32(bias ? bias[r] : 0), _mm256_set1_ps(mult[r]), &a0, &a1);
        qrq_i32x16(QRQ_LD_(a + ldt, 0), QRQ_LD_(a + ldt, 1), _mm256_set1_epi32(bias ? bias[r + 1] : 0),
                   _mm256_set1_ps(mult[r + 1]), &b0, &b1);
        const __m256i w0 = _mm256_adds_epi16(_mm256_packs_epi32(a0, a1), vz16);
        const __m256i w1 = _mm256_adds_epi16(_mm256_packs_epi32(b0, b1), vz16);
        const __m256i o = _mm256_permutevar8x32_epi32(is_signed ? _mm256_packs_epi16(w0, w1) : _mm256_packus_epi16(w0, w1),
                                                      _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        if (full) {
            _mm_storeu_si128((__m128i *)(void *)(dst + r * ldd), _mm256_castsi256_si128(o));
            _mm_storeu_si128((__m128i *)(void *)(dst + (r + 1) * ldd), _mm256_extracti128_si256(o, 1));
        } else {
            qrq_store_part(dst + r * ldd, _mm256_castsi256_si128(o), cols);
            qrq_store_part(dst + (r + 1) * ldd, _mm256_extracti128_si256(o, 1), cols);
        }
    }
    for (; r < rows; r++) {
        const int32_t b = bias ? bias[r] : 0;
        if (!isfinite(mult[r])) {   /* a zero y_scale: the portable expression */
            nn_qrq_row_generic(acc + r * ldt, cols, b, mult[r], yzp, is_signed, dst + r * ldd);
            continue;
        }
        __m256i a0, a1;
        qrq_i32x16(QRQ_LD_(acc + r * ldt, 0), QRQ_LD_(acc + r * ldt, 1), _mm256_set1_epi32(b), _mm256_set1_ps(mult[r]), &a0, &a1);
        const __m256i w = _mm256_adds_epi16(_mm256_permute4x64_epi64(_mm256_packs_epi32(a0, a1), 0xd8), vz16);
        const __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);
        const __m128i v = is_signed ? _mm_packs_epi16(lo, hi) : _mm_packus_epi16(lo, hi);
        if (full) _mm_storeu_si128((__m128i *)(void *)(dst + r * ldd), v);
        else qrq_store_part(dst + r * ldd, v, cols);
    }
#undef QRQ_LD_
}
__attribute__((target("avx2"))) void nn_qrq_tile_avx2(const int32_t *acc, size_t ldt, size_t rows, size_t cols,
                                                      const int32_t *bias, const float *mult, int32_t yzp, int is_signed,
                                                      uint8_t *dst, size_t ldd) {
    if (cols == 16) qrq_tile_avx2_(acc, ldt, rows, 16, 1, bias, mult, yzp, is_signed, dst, ldd);
    else if (cols < 16) qrq_tile_avx2_(acc, ldt, rows, cols, 0, bias, mult, yzp, is_signed, dst, ldd);
    else
        for (size_t r = 0; r < rows; r++)
            nn_qrq_row_avx2(acc + r * ldt, cols, bias ? bias[r] : 0, mult[r], yzp, is_signed, dst + r * ldd);
}

/* out[(q / 16) * pstride + 4 * (q % 16) + r] = row r's byte q ^ flip, 16 columns per step. */
__attribute__((target("avx2"))) void nn_qquad4_avx2(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                                                    const uint8_t *r3, size_t n, uint8_t flip, uint8_t *out,
                                                    size_t pstride) {
    const __m128i f = _mm_set1_epi8((char)flip);
    for (size_t q = 0; q < n; q += 16, out += pstride) {
        const __m128i v0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(r0 + q)), f);
        const __m128i v1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(r1 + q)), f);
        const __m128i v2 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(r2 + q)), f);
        const __m128i v3 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(r3 + q)), f);
        const __m128i l01 = _mm_unpacklo_epi8(v0, v1), h01 = _mm_unpackhi_epi8(v0, v1);
        const __m128i l23 = _mm_unpacklo_epi8(v2, v3), h23 = _mm_unpackhi_epi8(v2, v3);
        _mm_storeu_si128((__m128i *)(void *)out, _mm_unpacklo_epi16(l01, l23));
        _mm_storeu_si128((__m128i *)(void *)(out + 16), _mm_unpackhi_epi16(l01, l23));
        _mm_storeu_si128((__m128i *)(void *)(out + 32), _mm_unpacklo_epi16(h01, h23));
        _mm_storeu_si128((__m128i *)(void *)(out + 48), _mm_unpackhi_epi16(h01, h23));
    }
}
#endif
