/* AVX-512F fused-activation epilogue (Relu, Clip, LeakyRelu) for conv/gemm tiles and rows. */
#include "act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx512f")))
void nn_act_avx512(int kind, float lo, float hi, float *y, size_t n) {
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi), zero = _mm512_setzero_ps();
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, y + i);
        if (kind == NN_ACT_KIND_RELU) v = _mm512_max_ps(v, zero);
        else if (kind == NN_ACT_KIND_CLIP) v = _mm512_min_ps(_mm512_max_ps(v, vlo), vhi);
        else v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, vlo);   /* leaky */
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}
#endif
