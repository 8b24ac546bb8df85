/* AVX2+FMA attention decode kernels (see attn_ukernels.h): a key or value row is loaded 8 floats at
 * a time and applied to every query row of the head group, so K and V stream through once. */
#include "../attn_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

static inline __attribute__((always_inline, target("avx2,fma"))) float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma")))
void nn_attn_dots_avx2(const float *k, const float *q, size_t ldq, size_t nq, size_t n, float *out, size_t ldo) {
    __m256 acc[NN_ATTN_MAX_ROWS];
    for (size_t r = 0; r < nq; r++) acc[r] = _mm256_setzero_ps();
    size_t d = 0;
    for (; d + 8 <= n; d += 8) {
        const __m256 kv = _mm256_loadu_ps(k + d);
        for (size_t r = 0; r < nq; r++) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(q + r * ldq + d), kv, acc[r]);
    }
    for (size_t r = 0; r < nq; r++) {
        float s = hsum256(acc[r]);
        for (size_t t = d; t < n; t++) s += q[r * ldq + t] * k[t];
        out[r * ldo] = s;
    }
}

__attribute__((target("avx2,fma")))
void nn_attn_axpys_avx2(const float *v, const float *p, size_t ldp, size_t nq, size_t n, float *y, size_t ldy) {
    size_t d = 0;
    for (; d + 8 <= n; d += 8) {
        const __m256 vv = _mm256_loadu_ps(v + d);
        for (size_t r = 0; r < nq; r++) {
            float *yr = y + r * ldy + d;
            _mm256_storeu_ps(yr, _mm256_fmadd_ps(_mm256_set1_ps(p[r * ldp]), vv, _mm256_loadu_ps(yr)));
        }
    }
    for (; d < n; d++)
        for (size_t r = 0; r < nq; r++) y[r * ldy + d] += p[r * ldp] * v[d];
}

__attribute__((target("avx2,fma")))
void nn_attn_scale_avx2(const float *x, float *y, size_t n, float s) {
    const __m256 vs = _mm256_set1_ps(s);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs));
    for (; i < n; i++) y[i] = x[i] * s;
}

__attribute__((target("avx2,fma")))
void nn_attn_add_avx2(const float *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
    for (; i < n; i++) y[i] += x[i];
}
#endif
