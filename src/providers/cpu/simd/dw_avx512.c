/* AVX-512F row kernel of depthwise convolution: 16 outputs per step, every tap accumulated in a
 * register before one store; out-of-range input columns (padding) are masked off the loads. */
#include "dw_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx512f")))
static inline __mmask16 range_mask(int64_t first, int64_t step, int64_t limit) {
    /* lanes l with 0 <= first + l*step < limit */
    __mmask16 m = 0;
    for (int l = 0; l < 16; l++) {
        int64_t i = first + l * step;
        if (i >= 0 && i < limit) m |= (__mmask16)(1u << l);
    }
    return m;
}

/* lanes l with 0 <= first + l < limit, without a loop */
static inline __mmask16 span_mask(int64_t first, int64_t limit) {
    int64_t lo = first < 0 ? -first : 0, hi = limit - first;
    if (hi > 16) hi = 16;
    if (lo >= hi) return 0;
    return (__mmask16)((((uint32_t)1 << hi) - 1) & ~(((uint32_t)1 << lo) - 1));
}

/* 16 inputs of one tap for outputs ow..ow+15 (lanes beyond out_mask and outside [0, IW) are 0) */
__attribute__((target("avx512f")))
static inline __m512 tap_load(const float *r, int64_t first, int64_t IW, int64_t sw, __mmask16 out_mask) {
    if (sw == 1) {
        __mmask16 m = out_mask;
        if (first < 0 || first + 16 > IW) m &= span_mask(first, IW);
        return _mm512_maskz_loadu_ps(m, r + first);
    }
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    if (sw == 2) {
        const __m512i even = _mm512_add_epi32(lanes, lanes);
        __mmask16 m0 = 0xffff, m1 = 0xffff;
        if (first < 0 || first + 32 > IW) { m0 = span_mask(first, IW); m1 = span_mask(first + 16, IW); }
        __m512 lo = _mm512_maskz_loadu_ps(m0, r + first), hi = _mm512_maskz_loadu_ps(m1, r + first + 16);
        return _mm512_maskz_mov_ps(out_mask, _mm512_permutex2var_ps(lo, even, hi));
    }
    __mmask16 m = out_mask & range_mask(first, sw, IW);
    __m512i idx = _mm512_add_epi32(_mm512_set1_epi32((int)first), _mm512_mullo_epi32(lanes, _mm512_set1_epi32((int)sw)));
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, r, 4);
}

__attribute__((target("avx512f")))
static inline __m512 dw_act(__m512 acc, int kind, __m512 vlo, __m512 vhi) {
    const __m512 zero = _mm512_setzero_ps();
    if (kind == 1) return _mm512_max_ps(acc, zero);
    if (kind == 2) return _mm512_min_ps(_mm512_max_ps(acc, vlo), vhi);
    if (kind == 3) return _mm512_mask_mul_ps(acc, _mm512_cmp_ps_mask(acc, zero, _CMP_LT_OQ), acc, vlo);
    return acc;
}

/* Four output vectors at a time when the row is wide enough (four independent FMA chains hide the
 * FMA latency); a narrower remainder splits its taps over three accumulators for the same reason. */
__attribute__((target("avx512f")))
void nn_dw_row_avx512(float *y, int64_t OW, float bias, const float *const *rows, const float *w, const int64_t *offs,
                      int ntaps, int64_t IW, int64_t sw, const nn_dw_act *act) {
    const int kind = act ? act->act : 0;
    const __m512 vlo = _mm512_set1_ps(act ? act->lo : 0.0f), vhi = _mm512_set1_ps(act ? act->hi : 0.0f);
    int64_t ow = 0;
    for (; ow + 64 <= OW; ow += 64) {
        __m512 a0 = _mm512_set1_ps(bias), a1 = a0, a2 = a0, a3 = a0;
        for (int t = 0; t < ntaps; t++) {
            const __m512 wv = _mm512_set1_ps(w[t]);
            const float *r = rows[t];
            const int64_t first = ow * sw + offs[t], step = 16 * sw;
            a0 = _mm512_fmadd_ps(wv, tap_load(r, first, IW, sw, 0xffff), a0);
            a1 = _mm512_fmadd_ps(wv, tap_load(r, first + step, IW, sw, 0xffff), a1);
            a2 = _mm512_fmadd_ps(wv, tap_load(r, first + 2 * step, IW, sw, 0xffff), a2);
            a3 = _mm512_fmadd_ps(wv, tap_load(r, first + 3 * step, IW, sw, 0xffff), a3);
        }
        _mm512_storeu_ps(y + ow, dw_act(a0, kind, vlo, vhi));
        _mm512_storeu_ps(y + ow + 16, dw_act(a1, kind, vlo, vhi));
        _mm512_storeu_ps(y + ow + 32, dw_act(a2, kind, vlo, vhi));
        _mm512_storeu_ps(y + ow + 48, dw_act(a3, kind, vlo, vhi));
    }
    for (; ow < OW; ow += 16) {
        const int64_t n = OW - ow < 16 ? OW - ow : 16;
        const __mmask16 out_mask = (__mmask16)((1u << n) - 1);
        __m512 a0 = _mm512_set1_ps(bias), a1 = _mm512_setzero_ps(), a2 = a1;
        int t = 0;
        for (; t + 3 <= ntaps; t += 3) {
            const int64_t base = ow * sw;
            a0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), tap_load(rows[t], base + offs[t], IW, sw, out_mask), a0);
            a1 = _mm512_fmadd_ps(_mm512_set1_ps(w[t + 1]), tap_load(rows[t + 1], base + offs[t + 1], IW, sw, out_mask),
                                 a1);
            a2 = _mm512_fmadd_ps(_mm512_set1_ps(w[t + 2]), tap_load(rows[t + 2], base + offs[t + 2], IW, sw, out_mask),
                                 a2);
        }
        for (; t < ntaps; t++)
            a0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), tap_load(rows[t], ow * sw + offs[t], IW, sw, out_mask), a0);
        __m512 acc = _mm512_add_ps(_mm512_add_ps(a0, a1), a2);
        _mm512_mask_storeu_ps(y + ow, out_mask, dw_act(acc, kind, vlo, vhi));
    }
}
#endif

#ifdef NN_HAVE_X86_UKERNELS
/* One kernel row (3 taps) for 16 outputs from input row r at column `first`: masked loads, so the
 * vectors touching the padding or the row end need no separate path. */
__attribute__((target("avx512f")))
static inline __m512 row3_s1(const float *r, int64_t first, __mmask16 m0, __mmask16 m1, __mmask16 m2, __m512 w0,
                             __m512 w1, __m512 w2, __m512 a) {
    a = _mm512_fmadd_ps(w0, _mm512_maskz_loadu_ps(m0, r + first), a);
    a = _mm512_fmadd_ps(w1, _mm512_maskz_loadu_ps(m1, r + first + 1), a);
    return _mm512_fmadd_ps(w2, _mm512_maskz_loadu_ps(m2, r + first + 2), a);
}

/* Stride 2: columns first + 2l + kw; even/odd lanes of two 16-float loads (at first and first+2). */
__attribute__((target("avx512f")))
static inline __m512 row3_s2(const float *r, int64_t first, const __mmask16 *m, __m512i even, __m512i odd, __m512 w0,
                             __m512 w1, __m512 w2, __m512 a) {
    const __m512 lo = _mm512_maskz_loadu_ps(m[0], r + first), hi = _mm512_maskz_loadu_ps(m[1], r + first + 16);
    const __m512 lo2 = _mm512_maskz_loadu_ps(m[2], r + first + 2), hi2 = _mm512_maskz_loadu_ps(m[3], r + first + 18);
    a = _mm512_fmadd_ps(w0, _mm512_permutex2var_ps(lo, even, hi), a);
    a = _mm512_fmadd_ps(w1, _mm512_permutex2var_ps(lo, odd, hi), a);
    return _mm512_fmadd_ps(w2, _mm512_permutex2var_ps(lo2, even, hi2), a);
}

/* 3x3: the nine weights stay in registers. */
__attribute__((target("avx512f")))
static void dw3x3_plane(const float *x, int64_t IH, int64_t IW, const float *w, float bias, float *y, int64_t OH,
                        int64_t OW, int64_t sw, int64_t pt, int64_t pl, const nn_dw_act *act) {
    const int kind = act ? act->act : 0;
    const __m512 vlo = _mm512_set1_ps(act ? act->lo : 0.0f), vhi = _mm512_set1_ps(act ? act->hi : 0.0f);
    const __m512 vb = _mm512_set1_ps(bias);
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i even = _mm512_add_epi32(lanes, lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512 w0 = _mm512_set1_ps(w[0]), w1 = _mm512_set1_ps(w[1]), w2 = _mm512_set1_ps(w[2]);
    const __m512 w3 = _mm512_set1_ps(w[3]), w4 = _mm512_set1_ps(w[4]), w5 = _mm512_set1_ps(w[5]);
    const __m512 w6 = _mm512_set1_ps(w[6]), w7 = _mm512_set1_ps(w[7]), w8 = _mm512_set1_ps(w[8]);
    for (int64_t oh = 0; oh < OH; oh++) {
        const int64_t ih = oh * sw - pt;
        const float *r0 = ih >= 0 && ih < IH ? x + ih * IW : NULL;
        const float *r1 = ih + 1 >= 0 && ih + 1 < IH ? x + (ih + 1) * IW : NULL;
        const float *r2 = ih + 2 >= 0 && ih + 2 < IH ? x + (ih + 2) * IW : NULL;
        float *yr = y + oh * OW;
        for (int64_t ow = 0; ow < OW; ow += 16) {
            const int64_t n = OW - ow < 16 ? OW - ow : 16;
            const __mmask16 out_mask = (__mmask16)((1u << n) - 1);
            const int64_t first = ow * sw - pl;
            __m512 a0 = vb, a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps();
            if (sw == 1) {
                const __mmask16 m0 = out_mask & span_mask(first, IW), m1 = out_mask & span_mask(first + 1, IW);
                const __mmask16 m2 = out_mask & span_mask(first + 2, IW);
                if (r0) a0 = row3_s1(r0, first, m0, m1, m2, w0, w1, w2, a0);
                if (r1) a1 = row3_s1(r1, first, m0, m1, m2, w3, w4, w5, a1);
                if (r2) a2 = row3_s1(r2, first, m0, m1, m2, w6, w7, w8, a2);
            } else {
                const __mmask16 m[4] = { span_mask(first, IW), span_mask(first + 16, IW), span_mask(first + 2, IW),
                                         span_mask(first + 18, IW) };
                if (r0) a0 = row3_s2(r0, first, m, even, odd, w0, w1, w2, a0);
                if (r1) a1 = row3_s2(r1, first, m, even, odd, w3, w4, w5, a1);
                if (r2) a2 = row3_s2(r2, first, m, even, odd, w6, w7, w8, a2);
            }
            const __m512 acc = dw_act(_mm512_add_ps(_mm512_add_ps(a0, a1), a2), kind, vlo, vhi);
            _mm512_mask_storeu_ps(yr + ow, out_mask, acc);
        }
    }
}

/* One kernel row of K taps (K = 3 or 5) for 16 outputs starting at input column `first`. */
__attribute__((target("avx512f")))
static inline __m512 rowk(const int K, const float *r, int64_t first, int64_t sw, const __mmask16 *m, __m512i even,
                          __m512i odd, const float *w, __m512 a) {
    if (sw == 1) {
#pragma GCC unroll 5
        for (int kw = 0; kw < K; kw++)
            a = _mm512_fmadd_ps(_mm512_set1_ps(w[kw]), _mm512_maskz_loadu_ps(m[kw], r + first + kw), a);
        return a;
    }
    /* stride 2: tap kw reads the even (kw even) or odd lanes of the 32 floats at first + (kw & ~1) */
#pragma GCC unroll 3
    for (int kw = 0; kw < K; kw += 2) {
        const __m512 lo = _mm512_maskz_loadu_ps(m[kw], r + first + kw);
        const __m512 hi = _mm512_maskz_loadu_ps(m[kw + 1], r + first + kw + 16);
        a = _mm512_fmadd_ps(_mm512_set1_ps(w[kw]), _mm512_permutex2var_ps(lo, even, hi), a);
        if (kw + 1 < K) a = _mm512_fmadd_ps(_mm512_set1_ps(w[kw + 1]), _mm512_permutex2var_ps(lo, odd, hi), a);
    }
    return a;
}

/* Whole plane of a KxK depthwise conv; one accumulator per kernel row keeps the FMA chains short. */
__attribute__((target("avx512f")))
static inline void dw_plane_k(const int K, const float *x, int64_t IH, int64_t IW, const float *w, float bias,
                              float *y, int64_t OH, int64_t OW, int64_t sw, int64_t pt, int64_t pl,
                              const nn_dw_act *act) {
    const int kind = act ? act->act : 0;
    const __m512 vlo = _mm512_set1_ps(act ? act->lo : 0.0f), vhi = _mm512_set1_ps(act ? act->hi : 0.0f);
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i even = _mm512_add_epi32(lanes, lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (int64_t oh = 0; oh < OH; oh++) {
        const float *r[5];
        for (int kh = 0; kh < K; kh++) {
            const int64_t ih = oh * sw - pt + kh;
            r[kh] = ih >= 0 && ih < IH ? x + ih * IW : NULL;
        }
        float *yr = y + oh * OW;
        for (int64_t ow = 0; ow < OW; ow += 16) {
            const int64_t n = OW - ow < 16 ? OW - ow : 16;
            const __mmask16 out_mask = (__mmask16)((1u << n) - 1);
            const int64_t first = ow * sw - pl;
            __mmask16 m[6] = { 0, 0, 0, 0, 0, 0 };
            if (sw == 1) {
#pragma GCC unroll 5
                for (int kw = 0; kw < K; kw++) m[kw] = out_mask & span_mask(first + kw, IW);
            } else {   /* pair kw (even): low and high 16 floats */
#pragma GCC unroll 3
                for (int kw = 0; kw < K; kw += 2) {
                    m[kw] = span_mask(first + kw, IW);
                    m[kw + 1] = span_mask(first + kw + 16, IW);
                }
            }
            /* rows are independent FMA chains (overlapped out of order), summed at the end */
            __m512 acc = _mm512_set1_ps(bias);
#pragma GCC unroll 5
            for (int kh = 0; kh < K; kh++)
                if (r[kh]) acc = _mm512_add_ps(acc, rowk(K, r[kh], first, sw, m, even, odd, w + kh * K,
                                                        _mm512_setzero_ps()));
            _mm512_mask_storeu_ps(yr + ow, out_mask, dw_act(acc, kind, vlo, vhi));
        }
    }
}

__attribute__((target("avx512f")))
void nn_dw_plane_avx512(int K, const float *x, int64_t IH, int64_t IW, const float *w, float bias, float *y,
                        int64_t OH, int64_t OW, int64_t sw, int64_t pt, int64_t pl, const nn_dw_act *act) {
    if (K == 3) dw3x3_plane(x, IH, IW, w, bias, y, OH, OW, sw, pt, pl, act);
    else dw_plane_k(5, x, IH, IW, w, bias, y, OH, OW, sw, pt, pl, act);
}
#endif
