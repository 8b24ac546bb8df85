/* AVX2+FMA row kernel of depthwise convolution (CPUs without AVX-512): 8 outputs per vector, four
 * vectors in flight on wide rows. Interior vectors are plain (or, for stride 2, deinterleaved)
 * loads; the few vectors touching the padding or the row end are gathered through a small buffer. */
#include "../dw_ukernels.h"
#include "../act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

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
    if (kind == NN_ACT_KIND_RELU) return _mm256_max_ps(acc, zero);
    if (kind == NN_ACT_KIND_CLIP) return _mm256_min_ps(_mm256_max_ps(acc, vlo), vhi);
    if (kind == NN_ACT_KIND_LEAKY_RELU)
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
