/* AVX-512F pieces of the separable 2-D MaxPool (nn_pool_kernels.c): the row maximum and the
 * window maximum along a row for 16 outputs at a time. */
#include "pool_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx512f")))
void nn_max_rows_avx512(float *row, const float *x, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 a = _mm512_loadu_ps(row + i), b = _mm512_loadu_ps(x + i);
        /* b > a ? b : a, as the scalar code (a NaN in row stays) */
        _mm512_storeu_ps(row + i, _mm512_mask_mov_ps(a, _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ), b));
    }
    for (; i < n; i++) row[i] = x[i] > row[i] ? x[i] : row[i];
}

__attribute__((target("avx512f")))
static inline __m512 max_gt(__m512 best, __m512 v) {
    return _mm512_mask_mov_ps(best, _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ), v);
}

__attribute__((target("avx512f")))
size_t nn_max_window_avx512(const float *t, size_t first, size_t k, size_t sw, size_t count, float *y) {
    if (sw != 1 && sw != 2) return 0;
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i even = _mm512_add_epi32(lanes, lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    size_t o = 0;
    for (; o + 16 <= count; o += 16) {
        const float *p = t + first + o * sw;
        __m512 best;
        if (sw == 1) {
            best = _mm512_loadu_ps(p);
            for (size_t kw = 1; kw < k; kw++) best = max_gt(best, _mm512_loadu_ps(p + kw));
        } else {
            best = _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
            for (size_t kw = 1; kw < k; kw++) {
                const float *q = p + (kw & ~(size_t)1);
                const __m512 v = _mm512_permutex2var_ps(_mm512_loadu_ps(q), (kw & 1) ? odd : even,
                                                        _mm512_loadu_ps(q + 16));
                best = max_gt(best, v);
            }
        }
        _mm512_storeu_ps(y + o, best);
    }
    return o;
}
#endif
