/* AVX-512F fused-activation epilogue for conv/gemm tiles and rows. Sigmoid and SiLU use a
 * Cephes-style expf (range reduction by ln2, degree-6 polynomial, 2^n by vscalefps): about 2 ulp,
 * so the fused result matches the unfused Sigmoid + Mul to ~1e-7 relative. */
#include "act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

/* exp(x); vscalefps saturates to +inf / 0 outside the float range. */
static inline __attribute__((target("avx512f"))) __m512 nn_exp512(__m512 x) {
    x = _mm512_max_ps(_mm512_set1_ps(-103.0f), x);   /* operand order keeps NaN */
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n);
}

/* 1 + exp(-x); overflows to +inf for x < -88.7 like expf, so SiLU gives -0 there as the unfused
 * Sigmoid + Mul does. */
static inline __attribute__((target("avx512f"))) __m512 nn_one_plus_exp_neg(__m512 v) {
    return _mm512_add_ps(_mm512_set1_ps(1.0f), nn_exp512(_mm512_sub_ps(_mm512_setzero_ps(), v)));
}

__attribute__((target("avx512f")))
void nn_act_avx512(int kind, float lo, float hi, float *y, size_t n) {
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi), zero = _mm512_setzero_ps();
    const __m512 one = _mm512_set1_ps(1.0f);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, y + i);
        switch (kind) {
        case NN_ACT_KIND_RELU: v = _mm512_max_ps(v, zero); break;
        case NN_ACT_KIND_CLIP: v = _mm512_min_ps(_mm512_max_ps(v, vlo), vhi); break;
        case NN_ACT_KIND_LEAKY_RELU: v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, vlo); break;
        case NN_ACT_KIND_SIGMOID: v = _mm512_div_ps(one, nn_one_plus_exp_neg(v)); break;
        case NN_ACT_KIND_HARD_SIGMOID: v = _mm512_min_ps(_mm512_max_ps(_mm512_fmadd_ps(vlo, v, vhi), zero), one); break;
        case NN_ACT_KIND_SILU: v = _mm512_div_ps(v, nn_one_plus_exp_neg(v)); break;
        default: break;
        }
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}
#endif
