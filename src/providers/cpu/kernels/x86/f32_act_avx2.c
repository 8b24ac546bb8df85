/* AVX2+FMA Sigmoid/SiLU epilogue (the math of act_ukernels.h with rcpps) for CPUs without
 * AVX-512; the cheap kinds are left to the compiler-vectorized scalar loops. */
#define NN_ACT_VEC_INLINE
#include "../act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS

__attribute__((target("avx2,fma")))
void nn_act_avx2(int kind, float *y, size_t n) {
    const int silu = kind == NN_ACT_KIND_SILU;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(y + i);
        _mm256_storeu_ps(y + i, silu ? nn_silu256(v) : nn_sigmoid256(v));
    }
    if (i < n) {   /* the tail through a buffer, so it gets the same math as the body */
        float tmp[8] = { 0 };
        for (size_t k = 0; k < n - i; k++) tmp[k] = y[i + k];
        const __m256 v = _mm256_loadu_ps(tmp);
        _mm256_storeu_ps(tmp, silu ? nn_silu256(v) : nn_sigmoid256(v));
        for (size_t k = 0; k < n - i; k++) y[i + k] = tmp[k];
    }
}
#endif
