/* AVX2+FMA depthwise convolution kernels (CPUs without AVX-512).
 * - Row kernel: 8 outputs per vector, four vectors in flight on wide rows. Interior vectors are
 *   plain (or, for stride 2, deinterleaved) loads; the few vectors touching the padding or the row
 *   end are gathered through a small buffer.
 * - Channel-blocked kernel (3x3/5x5, stride 1/2): 8 channels in the lanes, transposed 8x8 into a
 *   padded scratch band and back out, every activation applied on registers before the transpose
 *   out; every lane is busy whatever the row width, and no tap needs a mask or a shuffle. */
#define NN_ACT_VEC_INLINE
#include "../dw_ukernels.h"
#include "../act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>
#include "x32_store_avx2.h"
#include "x32_transpose_8x8_avx2.h"

/* inputs of one tap for outputs ow..ow+n-1 (n <= 8); lanes outside [0, IW) or >= n are 0 */
__attribute__((target("avx2,fma")))
static inline __m256 tap_load8(const float *r, int64_t first, int64_t IW, int64_t sw, int64_t n) {
    if (n == 8 && first >= 0) {
        if (sw == 1 && first + 8 <= IW) return _mm256_loadu_ps(r + first);
        if (sw == 2 && first + 16 <= IW) {
            const __m256 lo = _mm256_loadu_ps(r + first), hi = _mm256_loadu_ps(r + first + 8);
            /* even elements of lo|hi, in order */
            const __m256 ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
            return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
        }
    }
    float tmp[8];
    for (int64_t l = 0; l < 8; l++) {
        const int64_t i = first + l * sw;
        tmp[l] = l < n && i >= 0 && i < IW ? r[i] : 0.0f;
    }
    return _mm256_loadu_ps(tmp);
}

__attribute__((target("avx2,fma")))
static inline __m256 dw_act8(__m256 acc, int kind, __m256 vlo, __m256 vhi) {
    const __m256 zero = _mm256_setzero_ps();
    if (kind == CORT_ACT_RELU) return _mm256_max_ps(acc, zero);
    if (kind == CORT_ACT_CLIP) return _mm256_min_ps(_mm256_max_ps(acc, vlo), vhi);
    if (kind == CORT_ACT_LEAKY_RELU)
        return _mm256_blendv_ps(acc, _mm256_mul_ps(acc, vlo), _mm256_cmp_ps(acc, zero, _CMP_LT_OQ));
    return acc;
}

__attribute__((target("avx2,fma")))
void nn_dw_row_avx2(float *y, int64_t OW, float bias, const float *const *rows, const float *w, const int64_t *offs,
                    int ntaps, int64_t IW, int64_t sw, const nn_dw_act *act) {
    const int kind = act ? act->act : 0;
    const __m256 vlo = _mm256_set1_ps(act ? act->lo : 0.0f), vhi = _mm256_set1_ps(act ? act->hi : 0.0f);
    int64_t ow = 0;
    for (; ow + 32 <= OW; ow += 32) {
        __m256 a0 = _mm256_set1_ps(bias), a1 = a0, a2 = a0, a3 = a0;
        for (int t = 0; t < ntaps; t++) {
            const __m256 wv = _mm256_set1_ps(w[t]);
            const float *r = rows[t];
            const int64_t first = ow * sw + offs[t], step = 8 * sw;
            a0 = _mm256_fmadd_ps(wv, tap_load8(r, first, IW, sw, 8), a0);
            a1 = _mm256_fmadd_ps(wv, tap_load8(r, first + step, IW, sw, 8), a1);
            a2 = _mm256_fmadd_ps(wv, tap_load8(r, first + 2 * step, IW, sw, 8), a2);
            a3 = _mm256_fmadd_ps(wv, tap_load8(r, first + 3 * step, IW, sw, 8), a3);
        }
        _mm256_storeu_ps(y + ow, dw_act8(a0, kind, vlo, vhi));
        _mm256_storeu_ps(y + ow + 8, dw_act8(a1, kind, vlo, vhi));
        _mm256_storeu_ps(y + ow + 16, dw_act8(a2, kind, vlo, vhi));
        _mm256_storeu_ps(y + ow + 24, dw_act8(a3, kind, vlo, vhi));
    }
    for (; ow < OW; ow += 8) {
        const int64_t n = OW - ow < 8 ? OW - ow : 8;
        __m256 a0 = _mm256_set1_ps(bias), a1 = _mm256_setzero_ps(), a2 = a1;
        int t = 0;
        for (; t + 3 <= ntaps; t += 3) {
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(w[t]), tap_load8(rows[t], ow * sw + offs[t], IW, sw, n), a0);
            a1 = _mm256_fmadd_ps(_mm256_set1_ps(w[t + 1]), tap_load8(rows[t + 1], ow * sw + offs[t + 1], IW, sw, n), a1);
            a2 = _mm256_fmadd_ps(_mm256_set1_ps(w[t + 2]), tap_load8(rows[t + 2], ow * sw + offs[t + 2], IW, sw, n), a2);
        }
        for (; t < ntaps; t++)
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(w[t]), tap_load8(rows[t], ow * sw + offs[t], IW, sw, n), a0);
        const __m256 acc = dw_act8(_mm256_add_ps(_mm256_add_ps(a0, a1), a2), kind, vlo, vhi);
        if (n == 8) {
            _mm256_storeu_ps(y + ow, acc);
        } else {
            float tmp[8];
            _mm256_storeu_ps(tmp, acc);
            for (int64_t l = 0; l < n; l++) y[ow + l] = tmp[l];
        }
    }
}
#endif

#ifdef NN_HAVE_X86_UKERNELS
/* ---- channel-blocked kernel ---- */

/* Full unrolling of the fixed-count loops over register arrays (clang-14 keeps them rolled, the
 * arrays in memory, under "GCC unroll"). */
#if defined(__clang__)
#define NN_DW8_UNROLL _Pragma("clang loop unroll(full)")
#else
#define NN_DW8_UNROLL _Pragma("GCC unroll 16")
#endif

/* lanes < n (n in 0..8) set */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256i lane_mask8(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n < 8 ? n : 8)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

size_t nn_dw_cb8_scratch_floats(int K, int S, int64_t HB, int64_t OW) {
    const int64_t IHp = (HB - 1) * S + K, IWp = (OW - 1) * S + K;
    return (size_t)(IHp * IWp + ((HB * OW + 7) & ~(int64_t)7) + K * K + 1) * 8;
}

/* Input rows [ih0, ih1) of nc channel planes [IH][IW] (channel stride xcs) -> pixel vectors at
 * their place in the padded [IHp][IWp][8] band buffer, whose row 0 is input row ihb. Only the
 * interior columns are written, so the zero left/right border survives across calls. Rows whose
 * width is a multiple of 8 go row by row (each 8-pixel chunk lands in 8 consecutive slots: no
 * per-pixel position bookkeeping; input columns right of the last window, which have no slot, are
 * clipped once per row): 3x3 s2 at 56x56 0.217 -> 0.175 ms, s1 0.48 -> 0.43, 112x112 0.43 ->
 * 0.39 on Zen 1. Other widths run through the flattened rows, every transpose full (row by row,
 * their half-empty tail chunks made 28x28 5-12 % and 14x14 16-25 % slower). */
__attribute__((target("avx2,fma")))
static void cb8_load_input(const float *x, int64_t xcs, int nc, int64_t IW, int64_t ih0, int64_t ih1, int64_t ihb,
                           int64_t pl, float *pin, int64_t IWp) {
    if (IW % 8 == 0) {
        const int64_t ncols = IW < IWp - pl ? IW : IWp - pl;   /* columns with a slot */
        for (int64_t ih = ih0; ih < ih1; ih++) {
            const float *xr = x + ih * IW;
            float *dst = pin + ((ih - ihb) * IWp + pl) * 8;
            int64_t iw = 0;
            for (; iw + 8 <= ncols; iw += 8) {
                __m256 r[8];
NN_DW8_UNROLL
                for (int c = 0; c < 8; c++) r[c] = c < nc ? _mm256_loadu_ps(xr + c * xcs + iw) : _mm256_setzero_ps();
                nn_tr8x8_avx2(r);
NN_DW8_UNROLL
                for (int j = 0; j < 8; j++) _mm256_storeu_ps(dst + (iw + j) * 8, r[j]);
            }
            if (iw < ncols) {
                const int64_t np = ncols - iw;
                const __m256i m = lane_mask8(np);
                __m256 r[8];
NN_DW8_UNROLL
                for (int c = 0; c < 8; c++) r[c] = c < nc ? _mm256_maskload_ps(xr + c * xcs + iw, m) : _mm256_setzero_ps();
                nn_tr8x8_avx2(r);
NN_DW8_UNROLL
                for (int j = 0; j < 8; j++)
                    if (j < np) _mm256_storeu_ps(dst + (iw + j) * 8, r[j]);
            }
        }
        return;
    }
    const float *xb = x + ih0 * IW;
    const int64_t HW = (ih1 - ih0) * IW;
    int64_t ih = ih0 - ihb, iw = 0;
    for (int64_t p0 = 0; p0 < HW; p0 += 8) {
        const int64_t np = HW - p0 < 8 ? HW - p0 : 8;
        __m256 r[8];
        if (np == 8) {
NN_DW8_UNROLL
            for (int c = 0; c < 8; c++) r[c] = c < nc ? _mm256_loadu_ps(xb + c * xcs + p0) : _mm256_setzero_ps();
        } else {
            const __m256i m = lane_mask8(np);
NN_DW8_UNROLL
            for (int c = 0; c < 8; c++) r[c] = c < nc ? _mm256_maskload_ps(xb + c * xcs + p0, m) : _mm256_setzero_ps();
        }
        nn_tr8x8_avx2(r);
        if (np == 8 && iw + 8 <= IW && iw + 8 + pl <= IWp) {   /* all 8 inside one row, all placed */
            float *dst = pin + (ih * IWp + iw + pl) * 8;
NN_DW8_UNROLL
            for (int j = 0; j < 8; j++) _mm256_storeu_ps(dst + j * 8, r[j]);
            if ((iw += 8) == IW) { iw = 0; ih++; }
            continue;
        }
NN_DW8_UNROLL
        for (int j = 0; j < 8; j++) {
            if (j < np) {
                /* input columns right of the last window are not needed (and have no place) */
                if (iw + pl < IWp) _mm256_storeu_ps(pin + (ih * IWp + iw + pl) * 8, r[j]);
                if (++iw == IW) { iw = 0; ih++; }
            }
        }
    }
}

/* P adjacent output pixels (8 channels each) of one output row, the P accumulators in registers
 * across all K*K taps. Per kernel row, its K weight vectors stay in registers and each input
 * pixel is loaded once and fed to every accumulator whose window covers it (the loops unroll
 * completely, so every index below is a constant). Written out like this because with the taps
 * as memory operands gcc rotated the inputs through registers and spilled an accumulator, a
 * store-to-load chain through every tap (3x3 at 56x56: ~1.5 cycles per FMA on Zen 1). */
#if defined(__clang__)
#define NN_DW8_UNROLL_ALL _Pragma("clang loop unroll(full)")
#else
#define NN_DW8_UNROLL_ALL _Pragma("GCC unroll 32")
#endif
static inline __attribute__((always_inline, target("avx2,fma"))) void cb8_group(const int K, const int S, const int P,
                                                                                const float *in, int64_t rs,
                                                                                const float *wt, __m256 vb,
                                                                                float *out) {
    __m256 acc[8];
NN_DW8_UNROLL
    for (int p = 0; p < P; p++) acc[p] = vb;
    for (int kh = 0; kh < K; kh++) {
        const float *row = in + kh * rs;
        __m256 w[5];
NN_DW8_UNROLL
        for (int kw = 0; kw < K; kw++) w[kw] = _mm256_loadu_ps(wt + (kh * K + kw) * 8);
NN_DW8_UNROLL_ALL
        for (int i = 0; i < (P - 1) * S + K; i++) {
            const __m256 x = _mm256_loadu_ps(row + i * 8);
NN_DW8_UNROLL
            for (int kw = 0; kw < K; kw++) {
                const int d = i - kw;
                if (d >= 0 && d % S == 0 && d / S < P) acc[d / S] = _mm256_fmadd_ps(w[kw], x, acc[d / S]);
            }
        }
    }
NN_DW8_UNROLL
    for (int p = 0; p < P; p++) _mm256_storeu_ps(out + p * 8, acc[p]);
}

/* Output rows split into groups of at most 8 pixels of equal size (7 + 7 for a 14-wide row). */
static inline __attribute__((always_inline, target("avx2,fma"))) void cb8_plane(const int K, const int S,
                                                                                const float *pin, int64_t IWp,
                                                                                const float *wt, __m256 vb,
                                                                                float *pout, int64_t OH, int64_t OW) {
    const int64_t rs = IWp * 8, groups = (OW + 7) / 8, P = (OW + groups - 1) / groups;
    for (int64_t oh = 0; oh < OH; oh++) {
        const float *in = pin + oh * S * rs;
        float *out = pout + oh * OW * 8;
        for (int64_t ow = 0; ow < OW; ow += P) {
            const int64_t n = OW - ow < P ? OW - ow : P;
            const float *i0 = in + ow * S * 8;
            float *o0 = out + ow * 8;
            switch (n) {
            case 8: cb8_group(K, S, 8, i0, rs, wt, vb, o0); break;
            case 7: cb8_group(K, S, 7, i0, rs, wt, vb, o0); break;
            case 6: cb8_group(K, S, 6, i0, rs, wt, vb, o0); break;
            case 5: cb8_group(K, S, 5, i0, rs, wt, vb, o0); break;
            case 4: cb8_group(K, S, 4, i0, rs, wt, vb, o0); break;
            case 3: cb8_group(K, S, 3, i0, rs, wt, vb, o0); break;
            case 2: cb8_group(K, S, 2, i0, rs, wt, vb, o0); break;
            default: cb8_group(K, S, 1, i0, rs, wt, vb, o0); break;
            }
        }
    }
}

__attribute__((target("avx2,fma")))
static void cb8_plane_3_1(const float *pin, int64_t IWp, const float *wt, __m256 vb, float *pout, int64_t OH,
                          int64_t OW) {
    cb8_plane(3, 1, pin, IWp, wt, vb, pout, OH, OW);
}
__attribute__((target("avx2,fma")))
static void cb8_plane_3_2(const float *pin, int64_t IWp, const float *wt, __m256 vb, float *pout, int64_t OH,
                          int64_t OW) {
    cb8_plane(3, 2, pin, IWp, wt, vb, pout, OH, OW);
}
__attribute__((target("avx2,fma")))
static void cb8_plane_5_1(const float *pin, int64_t IWp, const float *wt, __m256 vb, float *pout, int64_t OH,
                          int64_t OW) {
    cb8_plane(5, 1, pin, IWp, wt, vb, pout, OH, OW);
}
__attribute__((target("avx2,fma")))
static void cb8_plane_5_2(const float *pin, int64_t IWp, const float *wt, __m256 vb, float *pout, int64_t OH,
                          int64_t OW) {
    cb8_plane(5, 2, pin, IWp, wt, vb, pout, OH, OW);
}


/* [P][8] pixel vectors -> nc channel planes, the activation applied on the way. */
static inline __attribute__((always_inline, target("avx2,fma"))) void cb8_store(const int kind, const float *pout,
                                                                                int64_t P, int nc, float *y,
                                                                                int64_t ycs, __m256 lo, __m256 hi) {
    for (int64_t p0 = 0; p0 < P; p0 += 8) {
        __m256 r[8];
NN_DW8_UNROLL
        for (int j = 0; j < 8; j++) r[j] = nn_act256(kind, _mm256_loadu_ps(pout + (p0 + j) * 8), lo, hi);
        nn_tr8x8_avx2(r);
        if (P - p0 >= 8) {
NN_DW8_UNROLL
            for (int c = 0; c < 8; c++)
                if (c < nc) _mm256_storeu_ps(y + c * ycs + p0, r[c]);
        } else {
NN_DW8_UNROLL
            for (int c = 0; c < 8; c++)
                if (c < nc) nn_store_first8_avx2(y + c * ycs + p0, r[c], (size_t)(P - p0));
        }
    }
}

__attribute__((target("avx2,fma")))
void nn_dw_cb_avx2(int K, int S, const float *x, int64_t xcs, int64_t IH, int64_t IW, int64_t pt, int64_t pl,
                   const float *w, const float *bias, int nc, float *y, int64_t ycs, int64_t OW, int64_t oh0,
                   int64_t oh1, int64_t HB, const nn_dw_act *act, float *scratch, int fresh) {
    const int64_t IHp = (HB - 1) * S + K, IWp = (OW - 1) * S + K, KK = (int64_t)K * K;
    float *pin = scratch, *pout = pin + IHp * IWp * 8;
    float *wt = pout + ((HB * OW + 7) & ~(int64_t)7) * 8;
    if (fresh)
        for (int64_t i = 0; i < IHp * IWp; i++) _mm256_storeu_ps(pin + i * 8, _mm256_setzero_ps());
    /* weights [nc][KK] -> [KK][8] by 8x8 transposes */
    for (int64_t k0 = 0; k0 < KK; k0 += 8) {
        const __m256i m = lane_mask8(KK - k0);
        __m256 r[8];
NN_DW8_UNROLL
        for (int c = 0; c < 8; c++) r[c] = c < nc ? _mm256_maskload_ps(w + c * KK + k0, m) : _mm256_setzero_ps();
        nn_tr8x8_avx2(r);
NN_DW8_UNROLL
        for (int k = 0; k < 8; k++)
            if (k0 + k < KK) _mm256_storeu_ps(wt + (k0 + k) * 8, r[k]);
    }
    const __m256 vb = bias ? _mm256_maskload_ps(bias, lane_mask8(nc)) : _mm256_setzero_ps();
    const int kind = act ? act->act : 0;
    const __m256 lo = _mm256_set1_ps(act ? act->lo : 0.0f), hi = _mm256_set1_ps(act ? act->hi : 0.0f);
    for (int64_t ob = oh0; ob < oh1; ob += HB) {
        const int64_t hb = oh1 - ob < HB ? oh1 - ob : HB, ihb = ob * S - pt, nrows = (hb - 1) * S + K;
        /* buffer rows over the top/bottom padding are zeroed (an earlier band may have used them) */
        const int64_t ih0 = ihb < 0 ? 0 : ihb, ih1 = ihb + nrows > IH ? IH : ihb + nrows;
        for (int64_t r = 0; r < nrows; r++)
            if (ihb + r < ih0 || ihb + r >= ih1)
                for (int64_t i = 0; i < IWp; i++) _mm256_storeu_ps(pin + (r * IWp + i) * 8, _mm256_setzero_ps());
        if (ih1 > ih0) cb8_load_input(x, xcs, nc, IW, ih0, ih1, ihb, pl, pin, IWp);
        if (K == 3) (S == 1 ? cb8_plane_3_1 : cb8_plane_3_2)(pin, IWp, wt, vb, pout, hb, OW);
        else (S == 1 ? cb8_plane_5_1 : cb8_plane_5_2)(pin, IWp, wt, vb, pout, hb, OW);
        const int64_t P = hb * OW;
        float *yb = y + ob * OW;
        switch (kind) {
        case CORT_ACT_RELU: cb8_store(CORT_ACT_RELU, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_CLIP: cb8_store(CORT_ACT_CLIP, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_LEAKY_RELU: cb8_store(CORT_ACT_LEAKY_RELU, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_SIGMOID: cb8_store(CORT_ACT_SIGMOID, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_HARD_SIGMOID: cb8_store(CORT_ACT_HARD_SIGMOID, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_SILU: cb8_store(CORT_ACT_SILU, pout, P, nc, yb, ycs, lo, hi); break;
        case CORT_ACT_HARD_SWISH: cb8_store(CORT_ACT_HARD_SWISH, pout, P, nc, yb, ycs, lo, hi); break;
        default: cb8_store(0, pout, P, nc, yb, ycs, lo, hi); break;
        }
    }
}
#endif
