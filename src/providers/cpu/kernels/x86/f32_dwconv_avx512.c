/* AVX-512F depthwise convolution kernels.
 * - Row and plane kernels (outputs along a row in the lanes): 16 outputs per step, every tap
 *   accumulated in a register before one store; out-of-range input columns (padding) are masked
 *   off the loads.
 * - Channel-blocked kernel for narrow planes (16 channels in the lanes, as NCHWc runtimes do): a
 *   7-wide row would fill 7 of 16 lanes in the row kernels; here every lane is busy at any width.
 * The fused activation is applied on registers: Relu/Clip/LeakyRelu by the row and plane kernels,
 * any CORT_ACT_* (SiLU included) by the channel-blocked one. */
#define NN_ACT_VEC_INLINE
#include "../dw_ukernels.h"
#include "../act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS

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

/* The row and plane kernels get only the cheap kinds (see dw_ukernels.h). */
__attribute__((target("avx512f")))
static inline __m512 dw_act(__m512 acc, int kind, __m512 vlo, __m512 vhi) {
    const __m512 zero = _mm512_setzero_ps();
    if (kind == CORT_ACT_RELU) return _mm512_max_ps(acc, zero);
    if (kind == CORT_ACT_CLIP) return _mm512_min_ps(_mm512_max_ps(acc, vlo), vhi);
    if (kind == CORT_ACT_LEAKY_RELU) return _mm512_mask_mul_ps(acc, _mm512_cmp_ps_mask(acc, zero, _CMP_LT_OQ), acc, vlo);
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

/* 3x3: the nine weights stay in registers. The load masks depend only on the column, so they are
 * computed once per chunk of up to 16 output vectors (256 columns) and reused by every row: computed
 * per vector they cost more than the taps. */
__attribute__((target("avx512f")))
static void dw3x3_plane(const float *x, int64_t IH, int64_t IW, const float *w, float bias, float *y, int64_t OH,
                        int64_t OW, int64_t sw, int64_t pt, int64_t pl, const nn_dw_act *act, int prefetch) {
    const int kind = act ? act->act : 0;
    const __m512 vlo = _mm512_set1_ps(act ? act->lo : 0.0f), vhi = _mm512_set1_ps(act ? act->hi : 0.0f);
    const __m512 vb = _mm512_set1_ps(bias);
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i even = _mm512_add_epi32(lanes, lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512 w0 = _mm512_set1_ps(w[0]), w1 = _mm512_set1_ps(w[1]), w2 = _mm512_set1_ps(w[2]);
    const __m512 w3 = _mm512_set1_ps(w[3]), w4 = _mm512_set1_ps(w[4]), w5 = _mm512_set1_ps(w[5]);
    const __m512 w6 = _mm512_set1_ps(w[6]), w7 = _mm512_set1_ps(w[7]), w8 = _mm512_set1_ps(w[8]);
    enum { CHUNK = 16 };
    __mmask16 om[CHUNK], mk[CHUNK][4];
    for (int64_t ow0 = 0; ow0 < OW; ow0 += CHUNK * 16) {
        const int nv = (int)((OW - ow0 + 15) / 16 < CHUNK ? (OW - ow0 + 15) / 16 : CHUNK);
        for (int v = 0; v < nv; v++) {
            const int64_t ow = ow0 + v * 16, n = OW - ow < 16 ? OW - ow : 16, first = ow * sw - pl;
            om[v] = (__mmask16)((1u << n) - 1);
            if (sw == 1) {
                for (int k = 0; k < 3; k++) mk[v][k] = om[v] & span_mask(first + k, IW);
            } else {
                mk[v][0] = span_mask(first, IW);
                mk[v][1] = span_mask(first + 16, IW);
                mk[v][2] = span_mask(first + 2, IW);
                mk[v][3] = span_mask(first + 18, IW);
            }
        }
        for (int64_t oh = 0; oh < OH; oh++) {
            const int64_t ih = oh * sw - pt;
            const float *r0 = ih >= 0 && ih < IH ? x + ih * IW : NULL;
            const float *r1 = ih + 1 >= 0 && ih + 1 < IH ? x + (ih + 1) * IW : NULL;
            const float *r2 = ih + 2 >= 0 && ih + 2 < IH ? x + (ih + 2) * IW : NULL;
            float *yr = y + oh * OW;
            if (prefetch) {   /* the rows the next output row adds, this chunk's columns */
                const int64_t last = ih + 2 + sw, span = (nv * 16 * sw + 2) * 4;
                for (int64_t rr = last - sw + 1; rr <= last && rr < IH; rr++) {
                    const char *pr = (const char *)(x + rr * IW + (ow0 * sw - pl > 0 ? ow0 * sw - pl : 0));
                    for (int64_t o = 0; o < span; o += 64) _mm_prefetch(pr + o, _MM_HINT_T0);
                }
            }
            for (int v = 0; v < nv; v++) {
                const int64_t ow = ow0 + v * 16, first = ow * sw - pl;
                __m512 a0 = vb, a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps();
                if (sw == 1) {
                    const __mmask16 m0 = mk[v][0], m1 = mk[v][1], m2 = mk[v][2];
                    if (r0) a0 = row3_s1(r0, first, m0, m1, m2, w0, w1, w2, a0);
                    if (r1) a1 = row3_s1(r1, first, m0, m1, m2, w3, w4, w5, a1);
                    if (r2) a2 = row3_s1(r2, first, m0, m1, m2, w6, w7, w8, a2);
                } else {
                    if (r0) a0 = row3_s2(r0, first, mk[v], even, odd, w0, w1, w2, a0);
                    if (r1) a1 = row3_s2(r1, first, mk[v], even, odd, w3, w4, w5, a1);
                    if (r2) a2 = row3_s2(r2, first, mk[v], even, odd, w6, w7, w8, a2);
                }
                const __m512 acc = dw_act(_mm512_add_ps(_mm512_add_ps(a0, a1), a2), kind, vlo, vhi);
                _mm512_mask_storeu_ps(yr + ow, om[v], acc);
            }
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
                        int64_t OH, int64_t OW, int64_t sw, int64_t pt, int64_t pl, const nn_dw_act *act,
                        int prefetch) {
    if (K == 3) dw3x3_plane(x, IH, IW, w, bias, y, OH, OW, sw, pt, pl, act, prefetch);
    else dw_plane_k(5, x, IH, IW, w, bias, y, OH, OW, sw, pt, pl, act);
}
#endif

#ifdef NN_HAVE_X86_UKERNELS
/* ---- channel-blocked kernel ---- */

/* Full unrolling of the fixed-count loops over register arrays (clang-14 keeps them rolled, the
 * arrays in memory, under "GCC unroll"). */
#if defined(__clang__)
#define NN_DW_UNROLL _Pragma("clang loop unroll(full)")
#else
#define NN_DW_UNROLL _Pragma("GCC unroll 32")
#endif

/* r[i][j] <- r[j][i] for a 16x16 block (64 shuffles). */
static inline __attribute__((always_inline, target("avx512f"))) void tr16x16(__m512 r[16]) {
    __m512 t[16];
NN_DW_UNROLL
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
NN_DW_UNROLL
    for (int i = 0; i < 4; i++) {
        const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
        const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    /* now 128-bit lane L of r[4b + k] holds rows 4b..4b+3 of column 4L + k */
NN_DW_UNROLL
    for (int k = 0; k < 4; k++) {
        t[k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88);
        t[4 + k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xdd);
        t[8 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
        t[12 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xdd);
    }
NN_DW_UNROLL
    for (int k = 0; k < 4; k++) {
        r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
        r[4 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0x88);
        r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xdd);
        r[12 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0xdd);
    }
}

static inline __mmask16 tail_mask(int64_t n) { return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1); }

size_t nn_dw_cb_scratch_floats(int K, int S, int64_t HB, int64_t OW) {
    const int64_t IHp = (HB - 1) * S + K, IWp = (OW - 1) * S + K;
    return (size_t)(IHp * IWp + ((HB * OW + 15) & ~(int64_t)15) + K * K + 1) * 16;
}

/* Input rows [ih0, ih1) of nc channel planes [IH][IW] (channel stride xcs) -> pixel vectors at
 * their place in the padded [IHp][IWp][16] band buffer, whose row 0 is input row ihb. Only the
 * interior columns are written, so the zero left/right border survives across calls. */
__attribute__((target("avx512f")))
static void cb_load_input(const float *x, int64_t xcs, int nc, int64_t IW, int64_t ih0, int64_t ih1, int64_t ihb,
                          int64_t pl, float *pin, int64_t IWp) {
    const float *xb = x + ih0 * IW;
    const int64_t HW = (ih1 - ih0) * IW;
    int64_t ih = ih0 - ihb, iw = 0;
    for (int64_t p0 = 0; p0 < HW; p0 += 16) {
        const __mmask16 m = tail_mask(HW - p0);
        __m512 r[16];
NN_DW_UNROLL
        for (int c = 0; c < 16; c++) r[c] = c < nc ? _mm512_maskz_loadu_ps(m, xb + c * xcs + p0) : _mm512_setzero_ps();
        tr16x16(r);
        const int64_t np = HW - p0 < 16 ? HW - p0 : 16;
NN_DW_UNROLL
        for (int j = 0; j < 16; j++) {
            if (j < np) {
                const int64_t pw = iw + pl;
                if (pw < IWp) _mm512_storeu_ps(pin + (ih * IWp + pw) * 16, r[j]);
                if (++iw == IW) { iw = 0; ih++; }
            }
        }
    }
}

/* P adjacent output pixels (16 channels each) of one output row, the P accumulators in registers
 * across all K*K taps. Each tap is one weight vector and P FMAs with L1-resident inputs as memory
 * operands (loads are not the limit at one zmm FMA per cycle); only the p loop needs unrolling,
 * which clang does as well as gcc. */
static inline __attribute__((always_inline, target("avx512f"))) void cb_group(const int K, const int S, const int P,
                                                                              const float *in, int64_t rs,
                                                                              const float *wt, __m512 vb,
                                                                              float *out) {
    __m512 acc[8];
NN_DW_UNROLL
    for (int p = 0; p < P; p++) acc[p] = vb;
    for (int kh = 0; kh < K; kh++) {
        const float *row = in + kh * rs;
        for (int kw = 0; kw < K; kw++) {
            const __m512 wv = _mm512_loadu_ps(wt + (kh * K + kw) * 16);
NN_DW_UNROLL
            for (int p = 0; p < P; p++) acc[p] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(row + (p * S + kw) * 16), acc[p]);
        }
    }
NN_DW_UNROLL
    for (int p = 0; p < P; p++) _mm512_storeu_ps(out + p * 16, acc[p]);
}

/* Output rows split into groups of at most 8 pixels of equal size (7 + 7 for a 14-wide row). */
static inline __attribute__((always_inline, target("avx512f"))) void cb_plane(const int K, const int S,
                                                                              const float *pin, int64_t IWp,
                                                                              const float *wt, __m512 vb,
                                                                              float *pout, int64_t OH, int64_t OW) {
    const int64_t rs = IWp * 16, groups = (OW + 7) / 8, P = (OW + groups - 1) / groups;
    for (int64_t oh = 0; oh < OH; oh++) {
        const float *in = pin + oh * S * rs;
        float *out = pout + oh * OW * 16;
        for (int64_t ow = 0; ow < OW; ow += P) {
            const int64_t n = OW - ow < P ? OW - ow : P;
            const float *i0 = in + ow * S * 16;
            float *o0 = out + ow * 16;
            switch (n) {
            case 8: cb_group(K, S, 8, i0, rs, wt, vb, o0); break;
            case 7: cb_group(K, S, 7, i0, rs, wt, vb, o0); break;
            case 6: cb_group(K, S, 6, i0, rs, wt, vb, o0); break;
            case 5: cb_group(K, S, 5, i0, rs, wt, vb, o0); break;
            case 4: cb_group(K, S, 4, i0, rs, wt, vb, o0); break;
            case 3: cb_group(K, S, 3, i0, rs, wt, vb, o0); break;
            case 2: cb_group(K, S, 2, i0, rs, wt, vb, o0); break;
            default: cb_group(K, S, 1, i0, rs, wt, vb, o0); break;
            }
        }
    }
}

__attribute__((target("avx512f")))
static void cb_plane_3_1(const float *pin, int64_t IWp, const float *wt, __m512 vb, float *pout, int64_t OH,
                         int64_t OW) {
    cb_plane(3, 1, pin, IWp, wt, vb, pout, OH, OW);
}
__attribute__((target("avx512f")))
static void cb_plane_3_2(const float *pin, int64_t IWp, const float *wt, __m512 vb, float *pout, int64_t OH,
                         int64_t OW) {
    cb_plane(3, 2, pin, IWp, wt, vb, pout, OH, OW);
}
__attribute__((target("avx512f")))
static void cb_plane_5_1(const float *pin, int64_t IWp, const float *wt, __m512 vb, float *pout, int64_t OH,
                         int64_t OW) {
    cb_plane(5, 1, pin, IWp, wt, vb, pout, OH, OW);
}
__attribute__((target("avx512f")))
static void cb_plane_5_2(const float *pin, int64_t IWp, const float *wt, __m512 vb, float *pout, int64_t OH,
                         int64_t OW) {
    cb_plane(5, 2, pin, IWp, wt, vb, pout, OH, OW);
}

/* [P][16] pixel vectors -> nc channel planes, the activation applied on the way. */
static inline __attribute__((always_inline, target("avx512f"))) void cb_store(const int kind, const float *pout,
                                                                              int64_t P, int nc, float *y,
                                                                              int64_t ycs, __m512 lo, __m512 hi) {
    for (int64_t p0 = 0; p0 < P; p0 += 16) {
        const __mmask16 m = tail_mask(P - p0);
        __m512 r[16];
NN_DW_UNROLL
        for (int j = 0; j < 16; j++) r[j] = nn_act512(kind, _mm512_loadu_ps(pout + (p0 + j) * 16), lo, hi);
        tr16x16(r);
NN_DW_UNROLL
        for (int c = 0; c < 16; c++)
            if (c < nc) _mm512_mask_storeu_ps(y + c * ycs + p0, m, r[c]);
    }
}

__attribute__((target("avx512f")))
void nn_dw_cb_avx512(int K, int S, const float *x, int64_t xcs, int64_t IH, int64_t IW, int64_t pt, int64_t pl,
                     const float *w, const float *bias, int nc, float *y, int64_t ycs, int64_t OW, int64_t oh0,
                     int64_t oh1, int64_t HB, const nn_dw_act *act, float *scratch, int fresh) {
    const int64_t IHp = (HB - 1) * S + K, IWp = (OW - 1) * S + K, KK = (int64_t)K * K;
    float *pin = scratch, *pout = pin + IHp * IWp * 16;
    float *wt = pout + ((HB * OW + 15) & ~(int64_t)15) * 16;
    if (fresh)
        for (int64_t i = 0; i < IHp * IWp; i++) _mm512_storeu_ps(pin + i * 16, _mm512_setzero_ps());
    /* weights [nc][KK] -> [KK][16] by 16x16 transposes (scalar stores 64 bytes apart were a
     * measurable share of a 7x7 block) */
    for (int64_t k0 = 0; k0 < KK; k0 += 16) {
        const __mmask16 m = tail_mask(KK - k0);
        __m512 r[16];
NN_DW_UNROLL
        for (int c = 0; c < 16; c++) r[c] = c < nc ? _mm512_maskz_loadu_ps(m, w + c * KK + k0) : _mm512_setzero_ps();
        tr16x16(r);
NN_DW_UNROLL
        for (int k = 0; k < 16; k++)
            if (k0 + k < KK) _mm512_storeu_ps(wt + (k0 + k) * 16, r[k]);
    }
    const __m512 vb = bias ? _mm512_maskz_loadu_ps(tail_mask(nc), bias) : _mm512_setzero_ps();
    const int kind = act ? act->act : 0;
    const __m512 lo = _mm512_set1_ps(act ? act->lo : 0.0f), hi = _mm512_set1_ps(act ? act->hi : 0.0f);
    for (int64_t ob = oh0; ob < oh1; ob += HB) {
        const int64_t hb = oh1 - ob < HB ? oh1 - ob : HB, ihb = ob * S - pt, nrows = (hb - 1) * S + K;
        /* buffer rows over the top/bottom padding are zeroed (an earlier band may have used them) */
        const int64_t ih0 = ihb < 0 ? 0 : ihb, ih1 = ihb + nrows > IH ? IH : ihb + nrows;
        for (int64_t r = 0; r < nrows; r++)
            if (ihb + r < ih0 || ihb + r >= ih1)
                for (int64_t i = 0; i < IWp; i++) _mm512_storeu_ps(pin + (r * IWp + i) * 16, _mm512_setzero_ps());
        if (ih1 > ih0) cb_load_input(x, xcs, nc, IW, ih0, ih1, ihb, pl, pin, IWp);
        if (K == 3) (S == 1 ? cb_plane_3_1 : cb_plane_3_2)(pin, IWp, wt, vb, pout, hb, OW);
        else (S == 1 ? cb_plane_5_1 : cb_plane_5_2)(pin, IWp, wt, vb, pout, hb, OW);
        const int64_t P = hb * OW;
        float *yb = y + ob * OW;
        switch (kind) {
        case CORT_ACT_RELU: cb_store(CORT_ACT_RELU, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_CLIP: cb_store(CORT_ACT_CLIP, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_LEAKY_RELU: cb_store(CORT_ACT_LEAKY_RELU, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_SIGMOID: cb_store(CORT_ACT_SIGMOID, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_HARD_SIGMOID: cb_store(CORT_ACT_HARD_SIGMOID, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_SILU: cb_store(CORT_ACT_SILU, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_HARD_SWISH: cb_store(CORT_ACT_HARD_SWISH, pout, P, nc, yb, ycs, lo, hi); break;
        default: cb_store(0, pout, P, nc, yb, ycs, lo, hi); break;
        }
    }
}
#endif
