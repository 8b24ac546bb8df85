/* AVX2+FMA 6x16 SGEMM micro-kernel: 12 accumulators, 2 B vectors, 1 broadcast register. */
#include "../gemm_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

static inline __attribute__((target("avx2,fma"))) __m256 nn_act8(__m256 v, int act, __m256 lo, __m256 hi) {
    if (act == 1) return _mm256_max_ps(v, _mm256_setzero_ps());
    if (act == 2) return _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    if (act == 3) return _mm256_blendv_ps(v, _mm256_mul_ps(v, lo), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
    return v;
}

#define NN_ROW(i, av)                                                \
    do {                                                             \
        const __m256 ai = _mm256_set1_ps(av);                        \
        c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);                  \
        c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);                  \
    } while (0)
#define NN_INIT(i) __m256 c##i##0 = args->bias ? _mm256_set1_ps(args->bias[i]) : _mm256_setzero_ps(), c##i##1 = c##i##0
#define NN_STORE(i)                                                              \
    do {                                                                         \
        float *ci = c + (size_t)(i) * ldc;                                       \
        if (args->accumulate) {                                                  \
            c##i##0 = _mm256_add_ps(c##i##0, _mm256_loadu_ps(ci));               \
            c##i##1 = _mm256_add_ps(c##i##1, _mm256_loadu_ps(ci + 8));          \
        }                                                                        \
        if (act) {                                                               \
            c##i##0 = nn_act8(c##i##0, act, vlo, vhi);                            \
            c##i##1 = nn_act8(c##i##1, act, vlo, vhi);                            \
        }                                                                        \
        _mm256_storeu_ps(ci, c##i##0);                                           \
        _mm256_storeu_ps(ci + 8, c##i##1);                                       \
    } while (0)

__attribute__((target("avx2,fma")))
void nn_ukr_avx2_6x16(const nn_ukr_args *args) {
    NN_INIT(0); NN_INIT(1); NN_INIT(2); NN_INIT(3); NN_INIT(4); NN_INIT(5);
    const size_t kc = args->kc, ldb = args->ldb, ldc = args->ldc;
    const float *b = args->b;
    float *c = args->c;
    if (args->a_rs == 1) {
        const float *a = args->a;
        const size_t step = args->a_cs;
        for (size_t p = 0; p < kc; p++, a += step, b += ldb) {
            const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
            NN_ROW(0, a[0]); NN_ROW(1, a[1]); NN_ROW(2, a[2]); NN_ROW(3, a[3]); NN_ROW(4, a[4]); NN_ROW(5, a[5]);
        }
    } else {   /* rows of A read in place (a_cs == 1) */
        const size_t rs = args->a_rs;
        const float *r0 = args->a, *r1 = r0 + rs, *r2 = r1 + rs, *r3 = r2 + rs, *r4 = r3 + rs, *r5 = r4 + rs;
        for (size_t p = 0; p < kc; p++, b += ldb) {
            const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
            NN_ROW(0, r0[p]); NN_ROW(1, r1[p]); NN_ROW(2, r2[p]); NN_ROW(3, r3[p]); NN_ROW(4, r4[p]); NN_ROW(5, r5[p]);
        }
    }
    const int act = args->act;
    const __m256 vlo = _mm256_set1_ps(args->act_lo), vhi = _mm256_set1_ps(args->act_hi);
    NN_STORE(0); NN_STORE(1); NN_STORE(2); NN_STORE(3); NN_STORE(4); NN_STORE(5);
}
#endif
