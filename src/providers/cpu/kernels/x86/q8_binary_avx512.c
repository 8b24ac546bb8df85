/* AVX-512 form of nn_qbinary8 (quant_ukernels.h).
 * The reference: eight lanes of double per step, so each result is the scalar expression's own
 * rounding; faster than the 64 KB table's gathers on the int8 models. cvtpd2dq rounds half to even in
 * the default rounding mode, as the scalar reference does.
 * QLinearAdd takes the fixed-point form (quant_ukernels.h) where the scales allow it; a block with a
 * lane near a tie takes the double form. */
#include "../quant_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

#define NN_B_TARGET "avx512f,avx512bw,avx512vl,avx512dq"

__attribute__((target(NN_B_TARGET))) static inline __m512i nn_b_widen(const uint8_t *p, __mmask16 m, int sgn) {
    const __m128i v = _mm_maskz_loadu_epi8(m, p);
    return sgn ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
}

/* Eight results of (va op vb) / ys, clamped to +-2^30 and rounded, as int32. */
__attribute__((target(NN_B_TARGET))) static inline __m256i nn_b_eval(__m512d va, __m512d vb, int mul, __m512d ys) {
    const __m512d lim = _mm512_set1_pd(1073741824.0);
    __m512d q = _mm512_div_pd(mul ? _mm512_mul_pd(va, vb) : _mm512_add_pd(va, vb), ys);
    q = _mm512_max_pd(_mm512_min_pd(q, lim), _mm512_sub_pd(_mm512_setzero_pd(), lim));
    return _mm512_cvtpd_epi32(q);
}

/* Elements [i, i + 16) under mask m in double (the reference form). */
__attribute__((target(NN_B_TARGET))) static inline void nn_b_block_f64(const nn_qbinary8_params *p, const uint8_t *a,
                                                                        const uint8_t *b, uint8_t *y, size_t i,
                                                                        __mmask16 m, __m512d bconst) {
    const __m512d as = _mm512_set1_pd((double)p->as), bs = _mm512_set1_pd((double)p->bs), ys = _mm512_set1_pd(p->ys);
    const __m512i lo = _mm512_set1_epi32(p->out_signed ? -128 : 0), hi = _mm512_set1_epi32(p->out_signed ? 127 : 255);
    const int sgn = p->in_signed, mul = p->mul;
    const __m512i ai = _mm512_sub_epi32(nn_b_widen(a + i, m, sgn), _mm512_set1_epi32(p->za));
    const __m512d a0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(ai)), as);
    const __m512d a1 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(ai, 1)), as);
    __m512d b0 = bconst, b1 = bconst;
    if (!p->b_scalar) {
        const __m512i bi = _mm512_sub_epi32(nn_b_widen(b + i, m, sgn), _mm512_set1_epi32(p->zb));
        b0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(bi)), bs);
        b1 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(bi, 1)), bs);
    }
    const __m512i r = _mm512_inserti64x4(_mm512_castsi256_si512(nn_b_eval(a0, b0, mul, ys)),
                                         nn_b_eval(a1, b1, mul, ys), 1);
    const __m512i s = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(r, _mm512_set1_epi32(p->zy)), lo), hi);
    _mm_mask_storeu_epi8(y + i, m, _mm512_cvtepi32_epi8(s));
}

__attribute__((target(NN_B_TARGET))) void nn_qbinary8_avx512(const nn_qbinary8_params *p, const uint8_t *a,
                                                              const uint8_t *b, uint8_t *y, size_t n) {
    const int sgn = p->in_signed;
    /* a broadcast b: its dequantized value once */
    const int32_t bv = sgn ? (int32_t)(int8_t)b[0] : (int32_t)b[0];
    const __m512d bconst = _mm512_mul_pd(_mm512_set1_pd((double)(bv - p->zb)), _mm512_set1_pd((double)p->bs));
    int32_t ma = 0, mb = 0;
    int k = 0;
    if (!nn_qadd8_fixed_params(p, &ma, &mb, &k)) {
        for (size_t i = 0; i < n; i += 16)
            nn_b_block_f64(p, a, b, y, i, n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u), bconst);
        return;
    }
    const __m512i vma = _mm512_set1_epi32(ma), vmb = _mm512_set1_epi32(mb), za = _mm512_set1_epi32(p->za);
    const __m512i half = _mm512_set1_epi32((int32_t)1 << (k - 1)), fmask = _mm512_set1_epi32((int32_t)((1u << k) - 1u));
    const __m512i win = _mm512_set1_epi32(NN_QADD8_WIN), win2 = _mm512_set1_epi32(2 * NN_QADD8_WIN), zy = _mm512_set1_epi32(p->zy);
    const __m512i lo = _mm512_set1_epi32(p->out_signed ? -128 : 0), hi = _mm512_set1_epi32(p->out_signed ? 127 : 255);
    const __m512i bterm = _mm512_set1_epi32((bv - p->zb) * mb);
    const __m128i shift = _mm_cvtsi32_si128(k);
    /* 64 lanes per step without vpmulld: each lane's (a - za, b - zb) as an int16 pair, dotted by vpmaddwd with
     * the multipliers' low 14 bits and, shifted by 14, their high bits (|ma|, |mb| < 2^21 keep those in int16),
     * is the same int32 w; win is added up front, which moves no lane outside the window across a multiple
     * of 2^k. The 16-lane blocks with a lane near a tie are redone in double (Mul never comes here). */
    int32_t wlo, whi;
    nn_qadd8_pair_words(ma, mb, &wlo, &whi);
    const __m512i plo = _mm512_set1_epi32(wlo), phi = _mm512_set1_epi32(whi);
    const __m512i c = _mm512_set1_epi32(((int32_t)1 << (k - 1)) + NN_QADD8_WIN);
    const __m512i za16 = _mm512_set1_epi16((int16_t)p->za), zb16 = _mm512_set1_epi16((int16_t)p->zb);
    const __m512i zy16 = _mm512_set1_epi16((int16_t)p->zy), bc16 = _mm512_set1_epi16((int16_t)(bv - p->zb));
    const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i r16[2];
        unsigned near = 0;   /* bit s: a lane of the 16-lane block s near a tie */
        for (int h = 0; h < 2; h++) {
            const __m256i av = _mm256_loadu_si256((const __m256i *)(const void *)(a + i + 32 * h));
            const __m512i ai = _mm512_sub_epi16(sgn ? _mm512_cvtepi8_epi16(av) : _mm512_cvtepu8_epi16(av), za16);
            __m512i bi = bc16;
            if (!p->b_scalar) {
                const __m256i bw = _mm256_loadu_si256((const __m256i *)(const void *)(b + i + 32 * h));
                bi = _mm512_sub_epi16(sgn ? _mm512_cvtepi8_epi16(bw) : _mm512_cvtepu8_epi16(bw), zb16);
            }
            const __m512i p0 = _mm512_unpacklo_epi16(ai, bi), p1 = _mm512_unpackhi_epi16(ai, bi);
            const __m512i v0 = _mm512_add_epi32(_mm512_add_epi32(_mm512_madd_epi16(p0, plo),
                                                                 _mm512_slli_epi32(_mm512_madd_epi16(p0, phi), 14)), c);
            const __m512i v1 = _mm512_add_epi32(_mm512_add_epi32(_mm512_madd_epi16(p1, plo),
                                                                 _mm512_slli_epi32(_mm512_madd_epi16(p1, phi), 14)), c);
            /* lanes 0-7 of v0 and v1 are elements 0-15 of this half, lanes 8-15 elements 16-31 */
            const unsigned nh = (unsigned)(_mm512_cmple_epu32_mask(_mm512_and_si512(v0, fmask), win2) |
                                           _mm512_cmple_epu32_mask(_mm512_and_si512(v1, fmask), win2));
            near |= (unsigned)((nh & 0xffu) != 0) << (2 * h) | (unsigned)((nh >> 8) != 0) << (2 * h + 1);
            /* lane by lane the packs undo the unpacks: 32 results in order */
            r16[h] = _mm512_adds_epi16(_mm512_packs_epi32(_mm512_sra_epi32(v0, shift), _mm512_sra_epi32(v1, shift)), zy16);
        }
        const __m512i o = p->out_signed ? _mm512_packs_epi16(r16[0], r16[1]) : _mm512_packus_epi16(r16[0], r16[1]);
        _mm512_storeu_si512((void *)(y + i), _mm512_permutexvar_epi64(order, o));
        for (unsigned s = 0; near; s++, near >>= 1)
            if (near & 1u) nn_b_block_f64(p, a, b, y, i + 16 * s, (__mmask16)0xffff, bconst);
    }
    for (; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
        const __m512i ai = _mm512_sub_epi32(nn_b_widen(a + i, m, sgn), za);
        const __m512i bt = p->b_scalar ? bterm
                                       : _mm512_mullo_epi32(_mm512_sub_epi32(nn_b_widen(b + i, m, sgn),
                                                                             _mm512_set1_epi32(p->zb)), vmb);
        const __m512i w = _mm512_add_epi32(_mm512_add_epi32(_mm512_mullo_epi32(ai, vma), bt), half);
        const __mmask16 near = _mm512_mask_cmple_epu32_mask(m, _mm512_and_si512(_mm512_add_epi32(w, win), fmask), win2);
        if (near) {
            nn_b_block_f64(p, a, b, y, i, m, bconst);
            continue;
        }
        const __m512i r = _mm512_add_epi32(_mm512_sra_epi32(w, shift), zy);
        _mm_mask_storeu_epi8(y + i, m, _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(r, lo), hi)));
    }
}
#endif
