/* AVX512-VNNI direct conv tile (nn_qconv_ops.cdirect16, see nn_qcdirect_args in int_gemm.h): 16 output
 * channels x 16 consecutive positions of the padded-width output grid, read straight from the
 * quad-interleaved input copy. At stride 1, grid positions p..p+15 meet the input at p..p+15 plus a
 * constant offset per tap, so each (channel quad, tap) step is one 64-byte load (16 positions x four
 * channels' bytes) and 16 vpdpbusd against the 16 rows' int8 weight quads, broadcast from memory: the
 * same multiply-adds as the packed GEMM without the im2col copy. The grid's extra columns past the
 * output width are computed and masked off at the store. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include <stdint.h>
#include "i8_rq16_avx512.h"

#define CD_T __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

/* acc += dots of bv's uint8 quads with the int8 quad at P, broadcast from memory (asm: gcc 12 otherwise
 * moves each accumulator around the intrinsic) */
#define CD_DOT(ACC, BV, P) \
    __asm__("vpdpbusd %1%{1to16%}, %2, %0" : "+v"(ACC) : "m"(*(const uint8_t(*)[4])(const void *)(P)), "v"(BV));

/* Rows i..i+3 requantized together (bias and mult hold 16 entries, so a last group of fewer than four
 * real rows reads inside them) and stored segment by segment. */
CD_T static inline __attribute__((always_inline)) void cd_store4(const nn_qcdirect_args *g, size_t i, __m512i a0,
                                                                 __m512i a1, __m512i a2, __m512i a3) {
    const __m512i o = nn_qrq_pack4_avx512(
        nn_qrq_i32_avx512(a0, _mm512_set1_epi32(g->bias[i]), _mm512_set1_ps(g->mult[i])),
        nn_qrq_i32_avx512(a1, _mm512_set1_epi32(g->bias[i + 1]), _mm512_set1_ps(g->mult[i + 1])),
        nn_qrq_i32_avx512(a2, _mm512_set1_epi32(g->bias[i + 2]), _mm512_set1_ps(g->mult[i + 2])),
        nn_qrq_i32_avx512(a3, _mm512_set1_epi32(g->bias[i + 3]), _mm512_set1_ps(g->mult[i + 3])),
        _mm512_set1_epi16((int16_t)g->yzp), g->is_signed);
    const __m128i r[4] = { _mm512_castsi512_si128(o), _mm512_extracti32x4_epi32(o, 1), _mm512_extracti32x4_epi32(o, 2),
                           _mm512_extracti32x4_epi32(o, 3) };
    for (size_t k = 0; k < 4 && i + k < g->rows; k++) {
        const uintptr_t row = (uintptr_t)g->y + (i + k) * g->ldy;
        /* masked-off bytes are not touched, so a segment's base may lie before the row */
        for (size_t s = 0; s < g->nseg; s++)
            _mm_mask_storeu_epi8((void *)(row + (uintptr_t)g->delta[s]), (__mmask16)g->mask[s], r[k]);
    }
}

CD_T void nn_qcdirect16_avx512vnni(const nn_qcdirect_args *g) {
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    __m512i c8 = c0, c9 = c0, c10 = c0, c11 = c0, c12 = c0, c13 = c0, c14 = c0, c15 = c0;
    const uint8_t *a = g->a, *x = g->x;
    const int32_t *off = g->off;
    for (size_t t = 0; t < g->nq; t++, a += 64) {
        const __m512i bv = _mm512_loadu_si512((const void *)(x + off[t]));
        CD_DOT(c0, bv, a) CD_DOT(c1, bv, a + 4) CD_DOT(c2, bv, a + 8) CD_DOT(c3, bv, a + 12)
        CD_DOT(c4, bv, a + 16) CD_DOT(c5, bv, a + 20) CD_DOT(c6, bv, a + 24) CD_DOT(c7, bv, a + 28)
        CD_DOT(c8, bv, a + 32) CD_DOT(c9, bv, a + 36) CD_DOT(c10, bv, a + 40) CD_DOT(c11, bv, a + 44)
        CD_DOT(c12, bv, a + 48) CD_DOT(c13, bv, a + 52) CD_DOT(c14, bv, a + 56) CD_DOT(c15, bv, a + 60)
    }
    /* the accumulators named, never gathered into an array: an array made gcc 12 shuffle them through one
     * register inside the loop above */
    cd_store4(g, 0, c0, c1, c2, c3);
    if (g->rows > 4) cd_store4(g, 4, c4, c5, c6, c7);
    if (g->rows > 8) cd_store4(g, 8, c8, c9, c10, c11);
    if (g->rows > 12) cd_store4(g, 12, c12, c13, c14, c15);
}
#endif
