/* AVX-512F fused-activation epilogue for conv/gemm tiles and rows. The Sigmoid/SiLU math and its
 * accuracy are described in act_ukernels.h (polynomial exp, vscalefps, rcp14 + Newton). */
#define NN_ACT_VEC_INLINE
#include "../act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS

/* One kind per instantiation so the loop body is straight-line code; two vectors per step keep
 * the long Sigmoid/SiLU dependency chains overlapped. */
static inline __attribute__((always_inline, target("avx512f"))) void act_loop(const int kind, float lo, float hi,
                                                                               float *y, size_t n) {
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 a = _mm512_loadu_ps(y + i), b = _mm512_loadu_ps(y + i + 16);
        _mm512_storeu_ps(y + i, nn_act512(kind, a, vlo, vhi));
        _mm512_storeu_ps(y + i + 16, nn_act512(kind, b, vlo, vhi));
    }
    for (; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, nn_act512(kind, _mm512_maskz_loadu_ps(m, y + i), vlo, vhi));
    }
}

/* exp(x) for x <= 0 (a row minus its maximum); vscalefps makes the results below FLT_MIN
 * denormal, then 0. */
static inline __attribute__((always_inline, target("avx512f"))) __m512 exp_nonpos512(__m512 x) {
    __m512 n;
    const __m512 p = nn_exp_tiny512(x, &n);
    return _mm512_scalef_ps(p, n);
}

__attribute__((target("avx512f")))
float nn_exp_shift_sum_avx512(const float *x, float *y, size_t n, float m) {
    const __m512 vm = _mm512_set1_ps(m);
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 a = exp_nonpos512(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));
        const __m512 b = exp_nonpos512(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vm));
        _mm512_storeu_ps(y + i, a);
        _mm512_storeu_ps(y + i + 16, b);
        s0 = _mm512_add_ps(s0, a);
        s1 = _mm512_add_ps(s1, b);
    }
    for (; i < n; i += 16) {
        const __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        const __m512 a = exp_nonpos512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm));
        _mm512_mask_storeu_ps(y + i, k, a);
        s0 = _mm512_mask_add_ps(s0, k, s0, a);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

/* Numerical Recipes' erfc (fractional error < 1.2e-7): erfc(z) = t * exp(p(t) - z^2), t = 1/(1 + z/2) */
static inline __attribute__((always_inline, target("avx512f"))) __m512 gelu512(__m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
    const __m512 d = _mm512_fmadd_ps(z, _mm512_set1_ps(0.5f), one);
    __m512 t = _mm512_rcp14_ps(d);
    t = _mm512_fmadd_ps(t, _mm512_fnmadd_ps(d, t, one), t);   /* Newton: 2^-28 relative */
    __m512 p;
    NN_ERFC_POLY(_mm512_fmadd_ps, _mm512_set1_ps, p, t);
    p = _mm512_fnmadd_ps(z, z, p);   /* <= -1.2655: exp_nonpos512's range */
    const __m512 h = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), t), exp_nonpos512(p));
    /* x < 0: x * h; else x * (1 - h) (h = erfc(|x| / sqrt(2)) / 2) */
    const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mul_ps(x, _mm512_mask_blend_ps(neg, _mm512_sub_ps(one, h), h));
}

__attribute__((target("avx512f")))
void nn_gelu_avx512(const float *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 a = gelu512(_mm512_loadu_ps(x + i)), b = gelu512(_mm512_loadu_ps(x + i + 16));
        _mm512_storeu_ps(y + i, a);
        _mm512_storeu_ps(y + i + 16, b);
    }
    for (; i < n; i += 16) {
        const __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, k, gelu512(_mm512_maskz_loadu_ps(k, x + i)));
    }
}

__attribute__((target("avx512f")))
void nn_act_avx512(int kind, float lo, float hi, float *y, size_t n) {
    NN_ACT_KIND_DISPATCH(act_loop, kind, lo, hi, y, n);
}
#endif
