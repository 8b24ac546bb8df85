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

__attribute__((target("avx512f")))
void nn_dw_row_avx512(float *y, int64_t OW, float bias, const float *const *rows, const float *w, const int64_t *offs,
                      int ntaps, int64_t IW, int64_t sw, const nn_dw_act *act) {
    const int kind = act ? act->act : 0;
    const __m512 vlo = _mm512_set1_ps(act ? act->lo : 0.0f), vhi = _mm512_set1_ps(act ? act->hi : 0.0f);
    const __m512 zero = _mm512_setzero_ps();
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (int64_t ow = 0; ow < OW; ow += 16) {
        const int64_t n = OW - ow < 16 ? OW - ow : 16;
        const __mmask16 out_mask = (__mmask16)((1u << n) - 1);
        __m512 acc = _mm512_set1_ps(bias);
        for (int t = 0; t < ntaps; t++) {
            const int64_t first = ow * sw + offs[t];
            const __m512 wv = _mm512_set1_ps(w[t]);
            const float *r = rows[t];
            __m512 xv;
            if (sw == 1) {
                __mmask16 m = out_mask;
                if (first < 0 || first + 16 > IW) m &= span_mask(first, IW);
                xv = _mm512_maskz_loadu_ps(m, r + first);
            } else if (sw == 2) {
                __mmask16 m0 = 0xffff, m1 = 0xffff;
                if (first < 0 || first + 32 > IW) { m0 = span_mask(first, IW); m1 = span_mask(first + 16, IW); }
                __m512 lo = _mm512_maskz_loadu_ps(m0, r + first), hi = _mm512_maskz_loadu_ps(m1, r + first + 16);
                xv = _mm512_maskz_mov_ps(out_mask, _mm512_permutex2var_ps(lo, even, hi));
            } else {
                __mmask16 m = out_mask & range_mask(first, sw, IW);
                __m512i idx = _mm512_add_epi32(_mm512_set1_epi32((int)first),
                                               _mm512_mullo_epi32(lanes, _mm512_set1_epi32((int)sw)));
                xv = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, r, 4);
            }
            acc = _mm512_fmadd_ps(wv, xv, acc);
        }
        if (kind == 1) acc = _mm512_max_ps(acc, zero);
        else if (kind == 2) acc = _mm512_min_ps(_mm512_max_ps(acc, vlo), vhi);
        else if (kind == 3) acc = _mm512_mask_mul_ps(acc, _mm512_cmp_ps_mask(acc, zero, _CMP_LT_OQ), acc, vlo);
        _mm512_mask_storeu_ps(y + ow, out_mask, acc);
    }
}
#endif
