/* AVX512-VNNI byte micro-kernel for the integer convs (nn_igemm_kernel.quad == 2): A one tile of 16 int8
 * weight rows interleaved by k quad (quad q of row i at 64 q + 4 i, so every broadcast is one constant
 * offset from one pointer), B one panel of uint8 activation k quads (16 columns x 4 bytes = one zmm). vpdpbusd
 * takes its unsigned bytes from the vector and its signed ones from the broadcast, so the activations are
 * the vector and a weight quad the broadcast, the conv's natural layout. The raw sums wrap like the
 * reference's (vpdpbusd does not saturate); the zero points come off in the epilogue (int_gemm.h). */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include <string.h>
#include "i8_rq16_avx512.h"

#define NN_C_TARGET "avx512f,avx512bw,avx512vl,avx512vnni"

__attribute__((target(NN_C_TARGET))) static inline __m512i nn_c_fix(__m512i acc, const int32_t *rz, __m512i zb,
                                                                    __m512i cs) {
    const __m512i t = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_set1_epi32(rz[1]), zb),
                                       _mm512_mullo_epi32(_mm512_set1_epi32(rz[0]), cs));
    return _mm512_sub_epi32(acc, t);
}

/* C += dots of bv's uint8 quads with the int8 quad at P broadcast from memory. In asm because gcc 12 copies
 * every accumulator twice per step around the intrinsic (it does not tie the accumulator register). */
#define NN_CDOT(C, BV, P) \
    __asm__("vpdpbusd %1%{1to16%}, %2, %0" : "+v"(C) : "m"(*(const uint8_t(*)[4])(const void *)(P)), "v"(BV));

/* The 16x16 tile's sums c0..c15 over kq4 k quads (a, b advanced past them): declared and accumulated here,
 * so both tile forms below keep the accumulators in registers. */
#define NN_C_TILE16                                                                                                 \
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;            \
    __m512i c8 = c0, c9 = c0, c10 = c0, c11 = c0, c12 = c0, c13 = c0, c14 = c0, c15 = c0;                          \
    for (size_t q = 0; q < kq4; q++, a += 64, b += 64) {                                                           \
        const __m512i bv = _mm512_loadu_si512((const void *)b);                                                    \
        NN_CDOT(c0, bv, a) NN_CDOT(c1, bv, a + 4) NN_CDOT(c2, bv, a + 8) NN_CDOT(c3, bv, a + 12)                   \
        NN_CDOT(c4, bv, a + 16) NN_CDOT(c5, bv, a + 20) NN_CDOT(c6, bv, a + 24) NN_CDOT(c7, bv, a + 28)            \
        NN_CDOT(c8, bv, a + 32) NN_CDOT(c9, bv, a + 36) NN_CDOT(c10, bv, a + 40) NN_CDOT(c11, bv, a + 44)          \
        NN_CDOT(c12, bv, a + 48) NN_CDOT(c13, bv, a + 52) NN_CDOT(c14, bv, a + 56) NN_CDOT(c15, bv, a + 60)        \
    }

__attribute__((target(NN_C_TARGET))) void nn_igemm_cukr_avx512vnni_16x16(size_t kq4, const uint8_t *a, size_t lda,
                                                                          const int8_t *b, int32_t *c, size_t ldc,
                                                                          const int32_t *rz, const int32_t *cz) {
    (void)lda;
    NN_C_TILE16
    const __m512i zb = _mm512_loadu_si512((const void *)cz), cs = _mm512_loadu_si512((const void *)(cz + 16));
#define NN_CST(I, C) _mm512_storeu_si512((void *)(c + (I) * ldc), nn_c_fix(C, rz + 2 * (I), zb, cs));
    NN_CST(0, c0) NN_CST(1, c1) NN_CST(2, c2) NN_CST(3, c3) NN_CST(4, c4) NN_CST(5, c5) NN_CST(6, c6) NN_CST(7, c7)
    NN_CST(8, c8) NN_CST(9, c9) NN_CST(10, c10) NN_CST(11, c11) NN_CST(12, c12) NN_CST(13, c13) NN_CST(14, c14)
    NN_CST(15, c15)
#undef NN_CST
}

/* The full tile requantized in registers (nn_igemm_kernel.qukr_rq): each row's 16 sums, corrected, go
 * through nn_qrq16_avx512 with the row's bias and multiplier (finite, checked by the caller) straight to
 * 16 bytes of y; only the first `rows` rows are stored. The int32 tile never goes to memory. */
__attribute__((target(NN_C_TARGET))) void nn_igemm_cukr_rq_avx512vnni_16x16(size_t kq4, const uint8_t *a,
                                                                             const int8_t *b, const int32_t *rz,
                                                                             const int32_t *cz, const nn_igemm_rq *rq,
                                                                             size_t i0, size_t rows, size_t j0) {
    NN_C_TILE16
    const __m256i vz16 = _mm256_set1_epi16((int16_t)rq->yzp);
    const int32_t *bias = rq->bias ? rq->bias + i0 : NULL;
    const float *mult = rq->mult + i0;
    uint8_t *y = rq->y + i0 * rq->ldy + j0;
    const int sgn = rq->is_signed;
    if (rq->folded && bias && rows == 16) {
        /* the corrections are in the bias: four rows per narrowing (nn_qrq_pack4_avx512), lane j row j */
        const __m512i vz = _mm512_set1_epi16((int16_t)rq->yzp);
        const size_t ldy = rq->ldy;
#define NN_CRQ4(I, A, B, C, D)                                                                                        \
        {                                                                                                            \
            const __m512i o_ = nn_qrq_pack4_avx512(                                                                  \
                nn_qrq_i32_avx512(A, _mm512_set1_epi32(bias[I]), _mm512_set1_ps(mult[I])),                           \
                nn_qrq_i32_avx512(B, _mm512_set1_epi32(bias[(I) + 1]), _mm512_set1_ps(mult[(I) + 1])),               \
                nn_qrq_i32_avx512(C, _mm512_set1_epi32(bias[(I) + 2]), _mm512_set1_ps(mult[(I) + 2])),               \
                nn_qrq_i32_avx512(D, _mm512_set1_epi32(bias[(I) + 3]), _mm512_set1_ps(mult[(I) + 3])), vz, sgn);     \
            _mm_storeu_si128((__m128i *)(void *)(y + (I) * ldy), _mm512_castsi512_si128(o_));                        \
            _mm_storeu_si128((__m128i *)(void *)(y + ((I) + 1) * ldy), _mm512_extracti32x4_epi32(o_, 1));            \
            _mm_storeu_si128((__m128i *)(void *)(y + ((I) + 2) * ldy), _mm512_extracti32x4_epi32(o_, 2));            \
            _mm_storeu_si128((__m128i *)(void *)(y + ((I) + 3) * ldy), _mm512_extracti32x4_epi32(o_, 3));            \
        }
        NN_CRQ4(0, c0, c1, c2, c3) NN_CRQ4(4, c4, c5, c6, c7) NN_CRQ4(8, c8, c9, c10, c11)
        NN_CRQ4(12, c12, c13, c14, c15)
#undef NN_CRQ4
        return;
    }
    const __m512i zb = _mm512_loadu_si512((const void *)cz), cs = _mm512_loadu_si512((const void *)(cz + 16));
    const int folded = rq->folded;
#define NN_CRQ(I, C)                                                                                                  \
    if ((I) < rows)                                                                                                  \
        _mm_storeu_si128((__m128i *)(void *)(y + (I) * rq->ldy),                                                     \
                         nn_qrq16_avx512(folded ? (C) : nn_c_fix(C, rz + 2 * (I), zb, cs),                           \
                                         _mm512_set1_epi32(bias ? bias[I] : 0), _mm512_set1_ps(mult[I]), vz16, sgn));
    NN_CRQ(0, c0) NN_CRQ(1, c1) NN_CRQ(2, c2) NN_CRQ(3, c3) NN_CRQ(4, c4) NN_CRQ(5, c5) NN_CRQ(6, c6) NN_CRQ(7, c7)
    NN_CRQ(8, c8) NN_CRQ(9, c9) NN_CRQ(10, c10) NN_CRQ(11, c11) NN_CRQ(12, c12) NN_CRQ(13, c13) NN_CRQ(14, c14)
    NN_CRQ(15, c15)
#undef NN_CRQ
}

/* The same 16 rows against only the first n (1..NN_CUKR_COLS_MAX) columns of a panel, as the narrow edge panel
 * of a plane leaves them (7x7: 1 of 16 columns): the roles turn, the weight tile is the vector (16 rows x 4
 * bytes per k quad) and each column's activation quad the broadcast, so the work is n instead of 16 dot steps.
 * vpdpbusd wants the unsigned bytes in its register operand: the broadcast goes into a register first. */
#define NN_CDOTR(C, U, S) __asm__("vpdpbusd %2, %1, %0" : "+v"(C) : "v"(U), "v"(S));

/* u independent sums per column over alternate k quads: one column's chain alone would wait on vpdpbusd's
 * latency every step (an edge of 1 column cost 40 % of a full panel). */
__attribute__((target(NN_C_TARGET), always_inline)) static inline void nn_cols_acc(size_t kq4, const uint8_t *a,
                                                                                 const int8_t *b, size_t n, size_t u,
                                                                                 __m512i *out) {
    __m512i acc[4][NN_CUKR_COLS_MAX];
#pragma GCC unroll 4
    for (size_t v = 0; v < u; v++)
#pragma GCC unroll 16
        for (size_t t = 0; t < n; t++) acc[v][t] = _mm512_setzero_si512();
    size_t q = 0;
    for (; q + u <= kq4; q += u, a += 64 * u, b += 64 * u)
#pragma GCC unroll 4
        for (size_t v = 0; v < u; v++) {
            const __m512i av = _mm512_loadu_si512((const void *)(a + 64 * v));
#pragma GCC unroll 16
            for (size_t t = 0; t < n; t++) {
                int32_t w;
                memcpy(&w, b + 64 * v + 4 * t, 4);
                const __m512i bc = _mm512_set1_epi32(w);
                NN_CDOTR(acc[v][t], bc, av)
            }
        }
    for (; q < kq4; q++, a += 64, b += 64) {
        const __m512i av = _mm512_loadu_si512((const void *)a);
#pragma GCC unroll 16
        for (size_t t = 0; t < n; t++) {
            int32_t w;
            memcpy(&w, b + 4 * t, 4);
            const __m512i bc = _mm512_set1_epi32(w);
            NN_CDOTR(acc[0][t], bc, av)
        }
    }
#pragma GCC unroll 16
    for (size_t t = 0; t < n; t++) {
        __m512i sum = acc[0][t];
#pragma GCC unroll 4
        for (size_t v = 1; v < u; v++) sum = _mm512_add_epi32(sum, acc[v][t]);
        out[t] = sum;
    }
}

#define NN_COLS_CASE(N) case N: nn_cols_acc(kq4, a, b, N, (N) <= 3 ? 4 : (N) <= 6 ? 2 : 1, acc); break;

__attribute__((target(NN_C_TARGET))) void nn_igemm_cukr_avx512vnni_16xn(size_t kq4, const uint8_t *a, const int8_t *b,
                                                                         size_t n, int32_t *c, size_t ldc,
                                                                         const int32_t *rz, const int32_t *cz) {
    __m512i acc[NN_CUKR_COLS_MAX];
    switch (n) {
        NN_COLS_CASE(1) NN_COLS_CASE(2) NN_COLS_CASE(3) NN_COLS_CASE(4) NN_COLS_CASE(5) NN_COLS_CASE(6)
        NN_COLS_CASE(7) NN_COLS_CASE(8) NN_COLS_CASE(9) NN_COLS_CASE(10) NN_COLS_CASE(11) NN_COLS_CASE(12)
        default: return;
    }
    /* rows' corrections out of their (rz[2i], rz[2i + 1]) pairs */
    const __m512i lo = _mm512_loadu_si512((const void *)rz), hi = _mm512_loadu_si512((const void *)(rz + 16));
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i r0 = _mm512_permutex2var_epi32(lo, even, hi);
    const __m512i r1 = _mm512_permutex2var_epi32(lo, _mm512_add_epi32(even, _mm512_set1_epi32(1)), hi);
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32((int32_t)ldc));
    for (size_t t = 0; t < n; t++) {
        const __m512i fix = _mm512_add_epi32(_mm512_mullo_epi32(r1, _mm512_set1_epi32(cz[t])),
                                             _mm512_mullo_epi32(r0, _mm512_set1_epi32(cz[16 + t])));
        _mm512_i32scatter_epi32((void *)(c + t), rows, _mm512_sub_epi32(acc[t], fix), 4);
    }
}

#endif
