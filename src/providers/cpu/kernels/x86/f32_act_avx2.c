/* AVX2+FMA Sigmoid/SiLU epilogue (the math of act_ukernels.h with rcpps) for CPUs without
 * AVX-512; the cheap kinds are left to the compiler-vectorized scalar loops. */
#define NN_ACT_VEC_INLINE
#include "../act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS

__attribute__((target("avx2,fma")))
void nn_act_avx2(int kind, float *y, size_t n) {
    const int silu = kind == CORT_ACT_SILU;
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

/* Every CORT_ACT_* kind up to HardSwish over a row (nn_act_apply's vector path): one kind per
 * instantiation so the loop body is straight-line code; the tail goes through a buffer with the same
 * math. Without it the avx2 level ran the scalar loops, whose ReLU compiled to a branch per element
 * (an OCR detector's ReLU after an upsampling ConvTranspose: 12 ms for 2.4M floats). */
static inline __attribute__((always_inline, target("avx2,fma"))) void act_loop(const int kind, float lo, float hi,
                                                                            float *y, size_t n) {
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = _mm256_loadu_ps(y + i), b = _mm256_loadu_ps(y + i + 8);
        _mm256_storeu_ps(y + i, nn_act256(kind, a, vlo, vhi));
        _mm256_storeu_ps(y + i + 8, nn_act256(kind, b, vlo, vhi));
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, nn_act256(kind, _mm256_loadu_ps(y + i), vlo, vhi));
    if (i < n) {
        float tmp[8] = { 0 };
        for (size_t k = 0; k < n - i; k++) tmp[k] = y[i + k];
        _mm256_storeu_ps(tmp, nn_act256(kind, _mm256_loadu_ps(tmp), vlo, vhi));
        for (size_t k = 0; k < n - i; k++) y[i + k] = tmp[k];
    }
}

__attribute__((target("avx2,fma")))
void nn_act_all_avx2(int kind, float lo, float hi, float *y, size_t n) {
    NN_ACT_KIND_DISPATCH(act_loop, kind, lo, hi, y, n);
}

__attribute__((target("avx2,fma")))
float nn_exp_shift_sum_avx2(const float *x, float *y, size_t n, float m) {
    const __m256 vm = _mm256_set1_ps(m);
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = nn_exp_nonpos256(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        const __m256 b = nn_exp_nonpos256(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vm));
        _mm256_storeu_ps(y + i, a);
        _mm256_storeu_ps(y + i + 8, b);
        s0 = _mm256_add_ps(s0, a);
        s1 = _mm256_add_ps(s1, b);
    }
    if (i < n) {   /* the tail through a buffer, with the same math; its padding lanes add 0 */
        float tmp[16];
        for (size_t k = 0; k < 16; k++) tmp[k] = i + k < n ? x[i + k] - m : -__builtin_inff();
        const __m256 a = nn_exp_nonpos256(_mm256_loadu_ps(tmp)), b = nn_exp_nonpos256(_mm256_loadu_ps(tmp + 8));
        s0 = _mm256_add_ps(s0, a);
        s1 = _mm256_add_ps(s1, b);
        _mm256_storeu_ps(tmp, a);
        _mm256_storeu_ps(tmp + 8, b);
        for (size_t k = 0; i + k < n; k++) y[i + k] = tmp[k];
    }
    const __m256 s = _mm256_add_ps(s0, s1);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

__attribute__((target("avx2,fma")))
void nn_gelu_avx2(const float *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = nn_gelu256(_mm256_loadu_ps(x + i)), b = nn_gelu256(_mm256_loadu_ps(x + i + 8));
        _mm256_storeu_ps(y + i, a);
        _mm256_storeu_ps(y + i + 8, b);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, nn_gelu256(_mm256_loadu_ps(x + i)));
    if (i < n) {   /* the tail through a buffer, so it gets the same math as the body */
        float tmp[8] = { 0 };
        for (size_t k = 0; k < n - i; k++) tmp[k] = x[i + k];
        _mm256_storeu_ps(tmp, nn_gelu256(_mm256_loadu_ps(tmp)));
        for (size_t k = 0; k < n - i; k++) y[i + k] = tmp[k];
    }
}
#endif
