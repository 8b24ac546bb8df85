/* AVX-512 4-bit weight kernels (q4_gemm.h). One 16-byte load widened to 16 int32 lanes holds two
 * consecutive k of the panel's 16 columns (low and high nibble); each is converted, has the zero
 * point subtracted and is scaled in registers, then FMAs against broadcasts of up to 4 rows of A.
 * Four k per step feed four accumulator chains per row, so one row alone is not bound by the FMA
 * latency. */
#include "../q4_gemm.h"
#ifdef NN_HAVE_X86_Q4
#include <immintrin.h>

#define NN_AVX512 __attribute__((target("avx512f")))
#define NN_AVX512_INLINE static inline __attribute__((always_inline, target("avx512f")))

NN_AVX512_INLINE __m512 q4_zp16(const nn_q4_weights *w, const uint8_t *rec) {
    if (w->zp_mode == NN_Q4_ZP_U8)
        return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(rec + 64))));
    if (w->zp_mode == NN_Q4_ZP_F32) return _mm512_loadu_ps((const void *)(rec + 64));
    return _mm512_set1_ps(8.0f);
}

NN_AVX512_INLINE __m512i q4_load16(const uint8_t *q) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)q));
}

NN_AVX512_INLINE __m512 q4_deq(__m512i nib, __m512 z, __m512 s) {
    return _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(nib), z), s);
}

/* The GEMV's dequantization without a conversion: a nibble OR'ed into the bits of 2^23 is the float
 * 2^23 + q, exactly. With an integer zero point, subtracting 2^23 + z (exact too) leaves q - z
 * exactly, as the conversion would; a float zero point (F) takes 2^23 off first, then z. The low
 * nibble's mask and OR are one ternary-logic op ((x & 15) | 2^23's bits, truth table 0xEA). */
NN_AVX512_INLINE __m512 q4_deq_lo(__m512i x, __m512i m15, __m512i mg, __m512 zz, __m512 z, __m512 s, const int F) {
    __m512 v = _mm512_sub_ps(_mm512_castsi512_ps(_mm512_ternarylogic_epi32(x, m15, mg, 0xEA)), zz);
    if (F) v = _mm512_sub_ps(v, z);
    return _mm512_mul_ps(v, s);
}
NN_AVX512_INLINE __m512 q4_deq_hi(__m512i x, __m512i mg, __m512 zz, __m512 z, __m512 s, const int F) {
    __m512 v = _mm512_sub_ps(_mm512_castsi512_ps(_mm512_or_si512(_mm512_srli_epi32(x, 4), mg)), zz);
    if (F) v = _mm512_sub_ps(v, z);
    return _mm512_mul_ps(v, s);
}

/* Row r's four chains are separate variables (not an array) so they stay in registers; the
 * `R > r` tests fold away for each constant R. */
#define Q4_ROWS(X) X(0, c00, c01, c02, c03) X(1, c10, c11, c12, c13) X(2, c20, c21, c22, c23) X(3, c30, c31, c32, c33)

NN_AVX512_INLINE void q4_gemv_rows(const nn_q4_weights *w, const uint8_t *panel, const float *a, size_t lda,
                                   const float *bias, float *y, size_t ldy, size_t cols, const size_t R, const int F) {
#define Q4_ZERO(r, A0, A1, A2, A3) __m512 A0 = _mm512_setzero_ps(), A1 = A0, A2 = A0, A3 = A0;
    Q4_ROWS(Q4_ZERO)
#undef Q4_ZERO
    const __m512i m15 = _mm512_set1_epi32(15), mg = _mm512_set1_epi32(0x4b000000);
    const __m512 two23 = _mm512_set1_ps(8388608.0f);
    for (size_t g = 0; g < w->blocks; g++) {
        const uint8_t *rec = panel + g * w->rec, *q = rec + w->zp_off;
        const size_t k0 = g * w->block, kn = w->K - k0 < w->block ? w->K - k0 : w->block;
        const __m512 s = _mm512_loadu_ps((const void *)rec), z = q4_zp16(w, rec);
        const __m512 zz = F ? two23 : _mm512_add_ps(z, two23);
        const float *ak = a + k0;
        size_t i = 0;
        for (; i + 4 <= kn; i += 4, q += 32) {
            const __m512i x = q4_load16(q), x2 = q4_load16(q + 16);
            const __m512 d0 = q4_deq_lo(x, m15, mg, zz, z, s, F), d1 = q4_deq_hi(x, mg, zz, z, s, F);
            const __m512 d2 = q4_deq_lo(x2, m15, mg, zz, z, s, F), d3 = q4_deq_hi(x2, mg, zz, z, s, F);
#define Q4_FMA4(r, A0, A1, A2, A3) if (R > r) { \
                const float *ar = ak + r * lda + i; \
                A0 = _mm512_fmadd_ps(_mm512_set1_ps(ar[0]), d0, A0); \
                A1 = _mm512_fmadd_ps(_mm512_set1_ps(ar[1]), d1, A1); \
                A2 = _mm512_fmadd_ps(_mm512_set1_ps(ar[2]), d2, A2); \
                A3 = _mm512_fmadd_ps(_mm512_set1_ps(ar[3]), d3, A3); }
            Q4_ROWS(Q4_FMA4)
#undef Q4_FMA4
        }
        for (; i < kn; i += 2, q += 16) {   /* the tail of a K that ends inside the block */
            const __m512i x = q4_load16(q);
            const __m512 d0 = q4_deq_lo(x, m15, mg, zz, z, s, F), d1 = q4_deq_hi(x, mg, zz, z, s, F);
            const int two = i + 1 < kn;
#define Q4_FMA2(r, A0, A1, A2, A3) if (R > r) { \
                const float *ar = ak + r * lda + i; \
                A0 = _mm512_fmadd_ps(_mm512_set1_ps(ar[0]), d0, A0); \
                if (two) A1 = _mm512_fmadd_ps(_mm512_set1_ps(ar[1]), d1, A1); }
            Q4_ROWS(Q4_FMA2)
#undef Q4_FMA2
        }
    }
    const __mmask16 m = (__mmask16)((1u << cols) - 1);
    const __m512 b = bias ? _mm512_maskz_loadu_ps(m, bias) : _mm512_setzero_ps();
#define Q4_STORE(r, A0, A1, A2, A3) if (R > r) \
        _mm512_mask_storeu_ps(y + r * ldy, m, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(A0, A1), _mm512_add_ps(A2, A3)), b));
    Q4_ROWS(Q4_STORE)
#undef Q4_STORE
}
#undef Q4_ROWS

NN_AVX512 void nn_q4_gemv_avx512_4x16(const nn_q4_weights *w, const uint8_t *panel, const float *a, size_t lda,
                                      size_t rows, const float *bias, float *y, size_t ldy, size_t cols) {
    const int f = w->zp_mode == NN_Q4_ZP_F32;
    switch (rows * 2 + (size_t)f) {
    case 2: q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 1, 0); break;
    case 3: q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 1, 1); break;
    case 4: q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 2, 0); break;
    case 5: q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 2, 1); break;
    case 6: q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 3, 0); break;
    case 7: q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 3, 1); break;
    case 8: q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 4, 0); break;
    default: q4_gemv_rows(w, panel, a, lda, bias, y, ldy, cols, 4, 1); break;
    }
}

NN_AVX512 void nn_q4_dequant_avx512_16(const nn_q4_weights *w, const uint8_t *panel, size_t k0, size_t kc, float *dst,
                                       size_t ldd) {
    const __m512i m15 = _mm512_set1_epi32(15);
    for (size_t i = 0; i < kc;) {
        const size_t k = k0 + i, g = k / w->block, kb = k % w->block;
        const size_t n = w->block - kb < kc - i ? w->block - kb : kc - i;
        const uint8_t *rec = panel + g * w->rec, *q = rec + w->zp_off + (kb / 2) * NN_Q4_NR;
        const __m512 s = _mm512_loadu_ps((const void *)rec), z = q4_zp16(w, rec);
        float *d = dst + i * ldd;
        size_t t = 0;
        if (kb & 1) {   /* a slice starting at an odd k: the high nibble of its pair */
            _mm512_storeu_ps(d, q4_deq(_mm512_srli_epi32(q4_load16(q), 4), z, s));
            t = 1; q += 16; d += ldd;
        }
        for (; t + 2 <= n; t += 2, q += 16, d += 2 * ldd) {
            const __m512i x = q4_load16(q);
            _mm512_storeu_ps(d, q4_deq(_mm512_and_si512(x, m15), z, s));
            _mm512_storeu_ps(d + ldd, q4_deq(_mm512_srli_epi32(x, 4), z, s));
        }
        if (t < n) _mm512_storeu_ps(d, q4_deq(_mm512_and_si512(q4_load16(q), m15), z, s));
        i += n;
    }
}
#endif
