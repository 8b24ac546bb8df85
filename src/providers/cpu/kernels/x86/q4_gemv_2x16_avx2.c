/* AVX2 4-bit weight kernels (q4_gemm.h): the AVX-512 scheme on two 8-column halves. An 8-byte load
 * widened to 8 int32 lanes holds two consecutive k of 8 columns (low and high nibble); up to 2 rows
 * of A, 4 accumulator chains in all. */
#include "../q4_gemm.h"
#ifdef NN_HAVE_X86_Q4
#include <immintrin.h>

#define NN_AVX2 __attribute__((target("avx2,fma")))
#define NN_AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

NN_AVX2_INLINE __m256 q4_zp8(const nn_q4_weights *w, const uint8_t *rec, size_t h) {
    if (w->zp_mode == NN_Q4_ZP_U8)
        return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(rec + 64 + 8 * h))));
    if (w->zp_mode == NN_Q4_ZP_F32) return _mm256_loadu_ps((const void *)(rec + 64 + 32 * h));
    return _mm256_set1_ps(8.0f);
}

NN_AVX2_INLINE __m256i q4_load8(const uint8_t *q) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)q));
}

NN_AVX2_INLINE __m256 q4_deq(__m256i nib, __m256 z, __m256 s) {
    return _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(nib), z), s);
}

NN_AVX2_INLINE void q4_store_row(__m256 v0, __m256 v1, const float *bias, float *y, size_t cols) {
    if (cols == NN_Q4_NR) {
        if (bias) {
            v0 = _mm256_add_ps(v0, _mm256_loadu_ps(bias));
            v1 = _mm256_add_ps(v1, _mm256_loadu_ps(bias + 8));
        }
        _mm256_storeu_ps(y, v0);
        _mm256_storeu_ps(y + 8, v1);
        return;
    }
    float t[NN_Q4_NR];
    _mm256_storeu_ps(t, v0);
    _mm256_storeu_ps(t + 8, v1);
    for (size_t j = 0; j < cols; j++) y[j] = t[j] + (bias ? bias[j] : 0.0f);
}

/* even / odd k, columns 0-7 / 8-15 of row r: separate variables (not arrays) so they stay in
 * registers; the `R > r` tests fold away for each constant R. Two rows already give four chains
 * and eight would not fit in 16 registers, so there the odd k join the even ones' chains. */
#define Q4_ROWS(X) X(0, e00, e01, o00, o01) X(1, e10, e11, o10, o11)

NN_AVX2_INLINE void q4_gemv_rows(const nn_q4_weights *w, const uint8_t *panel, const float *a, size_t lda,
                                 const float *bias, float *y, size_t ldy, size_t cols, const size_t R) {
#define Q4_ZERO(r, E0, E1, O0, O1) __m256 E0 = _mm256_setzero_ps(), E1 = E0, O0 = E0, O1 = E0;
    Q4_ROWS(Q4_ZERO)
#undef Q4_ZERO
    const __m256i m15 = _mm256_set1_epi32(15);
    for (size_t g = 0; g < w->blocks; g++) {
        const uint8_t *rec = panel + g * w->rec, *q = rec + w->zp_off;
        const size_t k0 = g * w->block, kn = w->K - k0 < w->block ? w->K - k0 : w->block;
        const __m256 s0 = _mm256_loadu_ps((const void *)rec), s1 = _mm256_loadu_ps((const void *)(rec + 32));
        const __m256 z0 = q4_zp8(w, rec, 0), z1 = q4_zp8(w, rec, 1);
        const float *ak = a + k0;
        for (size_t i = 0; i < kn; i += 2, q += 16) {
            const __m256i x0 = q4_load8(q), x1 = q4_load8(q + 8);
            const __m256 de0 = q4_deq(_mm256_and_si256(x0, m15), z0, s0), de1 = q4_deq(_mm256_and_si256(x1, m15), z1, s1);
            const __m256 do0 = q4_deq(_mm256_srli_epi32(x0, 4), z0, s0), do1 = q4_deq(_mm256_srli_epi32(x1, 4), z1, s1);
            const int odd = i + 1 < kn;
#define Q4_FMA(r, E0, E1, O0, O1) if (R > r) { \
                const float *ar = ak + r * lda + i; \
                const __m256 ae = _mm256_set1_ps(ar[0]); \
                E0 = _mm256_fmadd_ps(ae, de0, E0); \
                E1 = _mm256_fmadd_ps(ae, de1, E1); \
                if (odd && R == 1) { \
                    const __m256 ao = _mm256_set1_ps(ar[1]); \
                    O0 = _mm256_fmadd_ps(ao, do0, O0); \
                    O1 = _mm256_fmadd_ps(ao, do1, O1); \
                } else if (odd) { \
                    const __m256 ao = _mm256_set1_ps(ar[1]); \
                    E0 = _mm256_fmadd_ps(ao, do0, E0); \
                    E1 = _mm256_fmadd_ps(ao, do1, E1); } }
            Q4_ROWS(Q4_FMA)
#undef Q4_FMA
        }
    }
#define Q4_STORE(r, E0, E1, O0, O1) if (R > r) q4_store_row(_mm256_add_ps(E0, O0), _mm256_add_ps(E1, O1), bias, y + r * ldy, cols);
    Q4_ROWS(Q4_STORE)
#undef Q4_STORE
}
#undef Q4_ROWS

NN_AVX2 void nn_q4_gemv_avx2_2x16(const nn_q4_weights *w, const uint8_t *panel, const float *a, size_t lda,
                                  size_t rows, const float *bias, float *y, size_t ldy, size_t cols) {
    if (rows == 1) q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 1);
    else q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 2);
}

NN_AVX2 void nn_q4_dequant_avx2_16(const nn_q4_weights *w, const uint8_t *panel, size_t k0, size_t kc, float *dst,
                                   size_t ldd) {
    const __m256i m15 = _mm256_set1_epi32(15);
    for (size_t i = 0; i < kc;) {
        const size_t k = k0 + i, g = k / w->block, kb = k % w->block;
        const size_t n = w->block - kb < kc - i ? w->block - kb : kc - i;
        const uint8_t *rec = panel + g * w->rec, *q = rec + w->zp_off + (kb / 2) * NN_Q4_NR;
        const __m256 s0 = _mm256_loadu_ps((const void *)rec), s1 = _mm256_loadu_ps((const void *)(rec + 32));
        const __m256 z0 = q4_zp8(w, rec, 0), z1 = q4_zp8(w, rec, 1);
        float *d = dst + i * ldd;
        size_t t = 0;
        if (kb & 1) {   /* a slice starting at an odd k: the high nibble of its pair */
            _mm256_storeu_ps(d, q4_deq(_mm256_srli_epi32(q4_load8(q), 4), z0, s0));
            _mm256_storeu_ps(d + 8, q4_deq(_mm256_srli_epi32(q4_load8(q + 8), 4), z1, s1));
            t = 1; q += 16; d += ldd;
        }
        for (; t + 2 <= n; t += 2, q += 16, d += 2 * ldd) {
            const __m256i x0 = q4_load8(q), x1 = q4_load8(q + 8);
            _mm256_storeu_ps(d, q4_deq(_mm256_and_si256(x0, m15), z0, s0));
            _mm256_storeu_ps(d + 8, q4_deq(_mm256_and_si256(x1, m15), z1, s1));
            _mm256_storeu_ps(d + ldd, q4_deq(_mm256_srli_epi32(x0, 4), z0, s0));
            _mm256_storeu_ps(d + ldd + 8, q4_deq(_mm256_srli_epi32(x1, 4), z1, s1));
        }
        if (t < n) {
            _mm256_storeu_ps(d, q4_deq(_mm256_and_si256(q4_load8(q), m15), z0, s0));
            _mm256_storeu_ps(d + 8, q4_deq(_mm256_and_si256(q4_load8(q + 8), m15), z1, s1));
        }
        i += n;
    }
}
#endif
