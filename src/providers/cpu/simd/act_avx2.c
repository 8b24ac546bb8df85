/* AVX2+FMA Sigmoid/SiLU epilogue (same expf approximation as act_avx512.c) for CPUs without
 * AVX-512; the cheap kinds are left to the compiler-vectorized scalar loops. */
#include "act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

static inline __attribute__((target("avx2,fma"))) __m256 nn_exp256(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(-87.0f), x);   /* 2^n built from the exponent field: keep n >= -126 */
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

__attribute__((target("avx2,fma")))
void nn_act_avx2(int kind, float *y, size_t n) {
    const __m256 one = _mm256_set1_ps(1.0f), lim = _mm256_set1_ps(88.0f);
    const __m256 inf = _mm256_set1_ps(__builtin_inff());
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(y + i);
        const __m256 t = _mm256_sub_ps(_mm256_setzero_ps(), v);
        __m256 d = _mm256_add_ps(one, nn_exp256(_mm256_min_ps(lim, t)));
        d = _mm256_blendv_ps(d, inf, _mm256_cmp_ps(t, lim, _CMP_GT_OQ));   /* overflow as expf does */
        _mm256_storeu_ps(y + i, _mm256_div_ps(kind == NN_ACT_KIND_SILU ? v : one, d));
    }
    for (; i < n; i++) {
        const float e = 1.0f + __builtin_expf(-y[i]);
        y[i] = kind == NN_ACT_KIND_SILU ? y[i] / e : 1.0f / e;
    }
}
#endif
