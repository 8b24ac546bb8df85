/* AVX2 kernels of the pools (see pool_ukernels.h): the row reductions and window steps of the
 * separable 2-D path, and the global pools. Stride-2 windows deinterleave two loads with a shuffle
 * and a lane permute instead of gathering. */
#include "../pool_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

#define POOL2_TARGET __attribute__((target("avx2,fma")))

/* v > best ? v : best (vmaxps returns its second operand on NaN and on equal values): from a
 * non-NaN start the NaN-ignoring maximum, from a NaN start NaN. */
POOL2_TARGET static inline __m256 max_gt8(__m256 best, __m256 v) { return _mm256_max_ps(v, best); }

POOL2_TARGET
void nn_pool_rows_max_avx2(const float *x, size_t stride, size_t nrows, size_t n, float *buf) {
    const __m256 ninf = _mm256_set1_ps(-__builtin_inff());
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = ninf, b = ninf;
        for (size_t r = 0; r < nrows; r++) {
            a = max_gt8(a, _mm256_loadu_ps(x + r * stride + i));
            b = max_gt8(b, _mm256_loadu_ps(x + r * stride + i + 8));
        }
        _mm256_storeu_ps(buf + i, a);
        _mm256_storeu_ps(buf + i + 8, b);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 a = ninf;
        for (size_t r = 0; r < nrows; r++) a = max_gt8(a, _mm256_loadu_ps(x + r * stride + i));
        _mm256_storeu_ps(buf + i, a);
    }
    for (; i < n; i++) {
        float a = -__builtin_inff();
        for (size_t r = 0; r < nrows; r++) a = x[r * stride + i] > a ? x[r * stride + i] : a;
        buf[i] = a;
    }
}

POOL2_TARGET
void nn_pool_rows_sum_avx2(const float *x, size_t stride, size_t nrows, size_t n, float *buf) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        for (size_t r = 1; r < nrows; r++) {
            a = _mm256_add_ps(a, _mm256_loadu_ps(x + r * stride + i));
            b = _mm256_add_ps(b, _mm256_loadu_ps(x + r * stride + i + 8));
        }
        _mm256_storeu_ps(buf + i, a);
        _mm256_storeu_ps(buf + i + 8, b);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 a = _mm256_loadu_ps(x + i);
        for (size_t r = 1; r < nrows; r++) a = _mm256_add_ps(a, _mm256_loadu_ps(x + r * stride + i));
        _mm256_storeu_ps(buf + i, a);
    }
    for (; i < n; i++) {
        float a = x[i];
        for (size_t r = 1; r < nrows; r++) a += x[r * stride + i];
        buf[i] = a;
    }
}

/* elements first, first + 2, ..., first + 14 */
POOL2_TARGET static inline __m256 load_even8(const float *p) {
    const __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 8);
    const __m256 ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));   /* 0 2 8 10 | 4 6 12 14 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* y[o] = reduction over kw < k of t[o * sw + kw] in kw order, o < count (t holds
 * (count - 1) * sw + k floats); max: v > best ? v : best from t[o * sw]; avg: the sum times scale. */
POOL2_TARGET static inline void pool_window(const float *t, size_t k, size_t sw, size_t count, int is_max, float scale,
                                            float *y) {
    const size_t width = (count - 1) * sw + k;
    size_t o = 0;
    if (sw == 1 || sw == 2) {
        const __m256 vs = _mm256_set1_ps(scale);
        /* the last float a vector of outputs from o reads: o * sw + k - 1 + 7 * sw (+1 for the odd
         * half of a stride-2 load) */
        for (; o + 8 <= count && o * sw + k + 8 * sw - 1 <= width; o += 8) {
            const float *p = t + o * sw;
            __m256 acc = sw == 1 ? _mm256_loadu_ps(p) : load_even8(p);
            for (size_t kw = 1; kw < k; kw++) {
                const __m256 v = sw == 1 ? _mm256_loadu_ps(p + kw) : load_even8(p + kw);
                acc = is_max ? max_gt8(acc, v) : _mm256_add_ps(acc, v);
            }
            _mm256_storeu_ps(y + o, is_max ? acc : _mm256_mul_ps(acc, vs));
        }
    }
    for (; o < count; o++) {
        const float *p = t + o * sw;
        float acc = p[0];
        for (size_t kw = 1; kw < k; kw++) acc = is_max ? (p[kw] > acc ? p[kw] : acc) : acc + p[kw];
        y[o] = is_max ? acc : acc * scale;
    }
}

POOL2_TARGET void nn_pool_window_max_avx2(const float *t, size_t k, size_t sw, size_t count, float *y) {
    if (k == 3 && sw == 2) pool_window(t, 3, 2, count, 1, 1.0f, y);
    else if (k == 2 && sw == 2) pool_window(t, 2, 2, count, 1, 1.0f, y);
    else if (k == 3 && sw == 1) pool_window(t, 3, 1, count, 1, 1.0f, y);
    else pool_window(t, k, sw, count, 1, 1.0f, y);
}

POOL2_TARGET void nn_pool_window_avg_avx2(const float *t, size_t k, size_t sw, size_t count, float scale, float *y) {
    if (k == 3 && sw == 2) pool_window(t, 3, 2, count, 0, scale, y);
    else if (k == 2 && sw == 2) pool_window(t, 2, 2, count, 0, scale, y);
    else if (k == 3 && sw == 1) pool_window(t, 3, 1, count, 0, scale, y);
    else pool_window(t, k, sw, count, 0, scale, y);
}

/* K-column MaxPool windows (K = 2 or 3) at stride 2 over nrows rows without a row buffer: 16 input
 * columns of a row split into even and odd columns (vshufps; the lane order fixed once at the end
 * with a vpermpd), folded in the reference's order, row by row and column by column, each value
 * replacing the running one only if greater: a NaN at a window's first value gives NaN, any other
 * is skipped, as in nn_pool_f32_ref. The third column of 8 windows, 2o + 2 .. 2o + 16, is columns
 * 2, 4 | 6, 8 of a load at q + 2 and 10, 12 | 14, 16 as lanes 1, 3 of one at q + 9 (nothing past
 * 16 is read), in the lanes' order of the first two. */
POOL2_TARGET static inline __m256 max_s2_8(const float *x, size_t stride, size_t nrows, size_t o, const int K) {
    __m256 best = _mm256_set1_ps(0.0f);
    for (size_t r = 0; r < nrows; r++) {
        const float *q = x + r * stride + 2 * o;
        const __m256 a0 = _mm256_loadu_ps(q), a1 = _mm256_loadu_ps(q + 8);
        const __m256 even = _mm256_shuffle_ps(a0, a1, 0x88);
        best = r ? max_gt8(best, even) : even;
        best = max_gt8(best, _mm256_shuffle_ps(a0, a1, 0xdd));
        if (K == 3) best = max_gt8(best, _mm256_shuffle_ps(_mm256_loadu_ps(q + 2), _mm256_loadu_ps(q + 9), 0xd8));
    }
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(best), 0xd8));
}

/* The 3x3 ones (squeezenet's and resnet50's) went through the row buffer (rows, windows, then a
 * scalar pass for the NaN rule) at 2.5x the AVX-512 fused kernel's time on Zen 5; on Zen 3 an
 * earlier version of this kernel, with a scalar tail, measured no faster than it
 * (docs/performance.md). */
POOL2_TARGET static inline void pool_max_s2(const float *x, size_t stride, size_t nrows, size_t count, float *y,
                                            const int K) {
    size_t o = 0;
    for (; o + 8 <= count; o += 8) _mm256_storeu_ps(y + o, max_s2_8(x, stride, nrows, o, K));
    /* the last outputs as the last 8 again (a scalar tail was half a 54-output row's time) */
    if (o < count && count >= 8) {
        _mm256_storeu_ps(y + count - 8, max_s2_8(x, stride, nrows, count - 8, K));
        return;
    }
    for (; o < count; o++) {
        float best = x[2 * o];
        for (size_t r = 0; r < nrows; r++)
            for (int c = 0; c < K; c++) {
                const float v = x[r * stride + 2 * o + (size_t)c];
                best = v > best ? v : best;
            }
        y[o] = best;
    }
}

POOL2_TARGET
void nn_pool_max_k2s2_avx2(const float *x, size_t stride, size_t nrows, size_t count, float *y) {
    if (nrows == 2) pool_max_s2(x, stride, 2, count, y, 2);
    else pool_max_s2(x, stride, nrows, count, y, 2);
}

POOL2_TARGET
void nn_pool_max_k3s2_avx2(const float *x, size_t stride, size_t nrows, size_t count, float *y) {
    if (nrows == 3) pool_max_s2(x, stride, 3, count, y, 3);
    else pool_max_s2(x, stride, nrows, count, y, 3);
}

POOL2_TARGET
float nn_pool_sum_avx2(const float *x, size_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
    }
    for (; i + 8 <= n; i += 8) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    const __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    float sum = _mm_cvtss_f32(h);
    for (; i < n; i++) sum += x[i];
    return sum;
}

POOL2_TARGET
float nn_pool_max_avx2(const float *x, size_t n) {
    /* every lane starts from x[0]: a leading NaN reaches the result, no other NaN does */
    const __m256 first = _mm256_set1_ps(x[0]);
    __m256 a0 = first, a1 = first, a2 = first, a3 = first;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = max_gt8(a0, _mm256_loadu_ps(x + i));
        a1 = max_gt8(a1, _mm256_loadu_ps(x + i + 8));
        a2 = max_gt8(a2, _mm256_loadu_ps(x + i + 16));
        a3 = max_gt8(a3, _mm256_loadu_ps(x + i + 24));
    }
    for (; i + 8 <= n; i += 8) a0 = max_gt8(a0, _mm256_loadu_ps(x + i));
    float lanes[8];
    _mm256_storeu_ps(lanes, max_gt8(max_gt8(a0, a1), max_gt8(a2, a3)));
    float best = lanes[0];
    for (int l = 1; l < 8; l++) best = lanes[l] > best ? lanes[l] : best;
    for (; i < n; i++) best = x[i] > best ? x[i] : best;
    return best;
}
#endif
