/* AVX2 QLinearAdd in the fixed-point form (quant_ukernels.h): 32 lanes per step by int16 pairs and
 * vpmaddwd (then 16 with two vpmulld per eight), where the 64 KB table costs a gathered load per result.
 * Lanes near a tie (each on its own, not the 16 around it), the tail and parameters the form does not
 * take are computed one by one in double, the reference expression. */
#include "../quant_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

#define QA2_T __attribute__((target("avx2")))

/* One result of the reference expression: ((a - za) as op (b - zb) bs) / ys in double, clamped to
 * +-2^30, rounded half to even (adding and subtracting 1.5 * 2^52), + zy, saturated. A Mul only
 * comes here if a caller passes one (the op code does not). */
static uint8_t qa2_ref1(const nn_qbinary8_params *p, uint8_t a, uint8_t b) {
    const int32_t va = p->in_signed ? (int32_t)(int8_t)a : (int32_t)a, vb = p->in_signed ? (int32_t)(int8_t)b : (int32_t)b;
    const double da = (double)(va - p->za) * p->as, db = (double)(vb - p->zb) * p->bs;
    double v = (p->mul ? da * db : da + db) / p->ys;
    if (v > 1073741824.0) v = 1073741824.0;
    if (v < -1073741824.0) v = -1073741824.0;
    const double magic = 6755399441055744.0;
    int32_t r = (int32_t)((v + magic) - magic) + p->zy;
    const int32_t lo = p->out_signed ? -128 : 0, hi = p->out_signed ? 127 : 255;
    return (uint8_t)(r < lo ? lo : r > hi ? hi : r);
}

QA2_T static inline __m256i qa2_widen(const uint8_t *p, int sgn) {
    const __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return sgn ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
}

QA2_T void nn_qadd8_fixed_avx2(const nn_qbinary8_params *p, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n) {
    int32_t ma = 0, mb = 0;
    int k = 0;
    size_t i = 0;
    if (nn_qadd8_fixed_params(p, &ma, &mb, &k)) {
        const int sgn = p->in_signed;
        const __m256i vma = _mm256_set1_epi32(ma), vmb = _mm256_set1_epi32(mb), za = _mm256_set1_epi32(p->za);
        const __m256i zb = _mm256_set1_epi32(p->zb), zy = _mm256_set1_epi32(p->zy);
        const __m256i half = _mm256_set1_epi32((int32_t)1 << (k - 1)), fmask = _mm256_set1_epi32((int32_t)((1u << k) - 1u));
        const __m256i win = _mm256_set1_epi32(NN_QADD8_WIN), over = _mm256_set1_epi32(2 * NN_QADD8_WIN + 1);
        const __m256i lo = _mm256_set1_epi32(p->out_signed ? -128 : 0), hi = _mm256_set1_epi32(p->out_signed ? 127 : 255);
        const int32_t bv = sgn ? (int32_t)(int8_t)b[0] : (int32_t)b[0];
        const __m256i bterm = _mm256_set1_epi32((bv - p->zb) * mb);
        const __m128i shift = _mm_cvtsi32_si128(k);
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        /* 32 lanes per step without vpmulld: each lane's (a - za, b - zb) as an int16 pair, dotted by vpmaddwd
         * with the multipliers' low 14 bits and, shifted by 14, their high bits (|ma|, |mb| < 2^21 keep those
         * in int16), is the same int32 w; win is added up front, which moves no lane outside the window
         * across a multiple of 2^k. */
        int32_t wlo, whi;
        nn_qadd8_pair_words(ma, mb, &wlo, &whi);
        const __m256i plo = _mm256_set1_epi32(wlo), phi = _mm256_set1_epi32(whi);
        const __m256i c = _mm256_set1_epi32(((int32_t)1 << (k - 1)) + NN_QADD8_WIN);
        const __m256i za16 = _mm256_set1_epi16((int16_t)p->za), zb16 = _mm256_set1_epi16((int16_t)p->zb);
        const __m256i zy16 = _mm256_set1_epi16((int16_t)p->zy), bc16 = _mm256_set1_epi16((int16_t)(bv - p->zb));
        for (; i + 32 <= n; i += 32) {
            __m256i r16[2];
            uint32_t near = 0;
            for (int h = 0; h < 2; h++) {
                const __m128i av = _mm_loadu_si128((const __m128i *)(const void *)(a + i + 16 * h));
                const __m256i ai = _mm256_sub_epi16(sgn ? _mm256_cvtepi8_epi16(av) : _mm256_cvtepu8_epi16(av), za16);
                __m256i bi = bc16;
                if (!p->b_scalar) {
                    const __m128i bw = _mm_loadu_si128((const __m128i *)(const void *)(b + i + 16 * h));
                    bi = _mm256_sub_epi16(sgn ? _mm256_cvtepi8_epi16(bw) : _mm256_cvtepu8_epi16(bw), zb16);
                }
                const __m256i p0 = _mm256_unpacklo_epi16(ai, bi), p1 = _mm256_unpackhi_epi16(ai, bi);
                const __m256i v0 = _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(p0, plo),
                                                                     _mm256_slli_epi32(_mm256_madd_epi16(p0, phi), 14)), c);
                const __m256i v1 = _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(p1, plo),
                                                                     _mm256_slli_epi32(_mm256_madd_epi16(p1, phi), 14)), c);
                const unsigned m0 = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(over, _mm256_and_si256(v0, fmask))));
                const unsigned m1 = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(over, _mm256_and_si256(v1, fmask))));
                /* v0 holds elements 0-3 and 8-11 of these 16, v1 elements 4-7 and 12-15 */
                near |= (uint32_t)((m0 & 0xfu) | (m1 & 0xfu) << 4 | (m0 >> 4) << 8 | (m1 >> 4) << 12) << (16 * h);
                /* lane by lane the pack undoes the unpacks: 16 results in order */
                r16[h] = _mm256_adds_epi16(_mm256_packs_epi32(_mm256_sra_epi32(v0, shift), _mm256_sra_epi32(v1, shift)), zy16);
            }
            const __m256i o = p->out_signed ? _mm256_packs_epi16(r16[0], r16[1]) : _mm256_packus_epi16(r16[0], r16[1]);
            _mm256_storeu_si256((__m256i *)(void *)(y + i), _mm256_permute4x64_epi64(o, 0xd8));
            for (uint32_t m = near; m; m &= m - 1) {
                const size_t q = i + (size_t)__builtin_ctz(m);
                y[q] = qa2_ref1(p, a[q], p->b_scalar ? b[0] : b[q]);
            }
        }
        for (; i + 16 <= n; i += 16) {
            __m256i w[2];
            for (int h = 0; h < 2; h++) {
                const __m256i ai = _mm256_sub_epi32(qa2_widen(a + i + 8 * h, sgn), za);
                const __m256i bt = p->b_scalar ? bterm
                                               : _mm256_mullo_epi32(_mm256_sub_epi32(qa2_widen(b + i + 8 * h, sgn), zb), vmb);
                w[h] = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(ai, vma), bt), half);
            }
            /* near a tie: (w + win) mod 2^k <= 2 win, as signed compares (both sides below 2^30) */
            const __m256i n0 = _mm256_cmpgt_epi32(over, _mm256_and_si256(_mm256_add_epi32(w[0], win), fmask));
            const __m256i n1 = _mm256_cmpgt_epi32(over, _mm256_and_si256(_mm256_add_epi32(w[1], win), fmask));
            const unsigned near = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(n0)) |
                                  (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(n1)) << 8;
            const __m256i r0 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(_mm256_sra_epi32(w[0], shift), zy), lo), hi);
            const __m256i r1 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(_mm256_sra_epi32(w[1], shift), zy), lo), hi);
            /* in range already, so the packs only narrow; then the 4-byte groups back in order */
            const __m256i t = _mm256_packs_epi32(r0, r1);
            const __m256i u = p->out_signed ? _mm256_packs_epi16(t, t) : _mm256_packus_epi16(t, t);
            _mm_storeu_si128((__m128i *)(void *)(y + i), _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(u, order)));
            /* the lanes near a tie again in double, one by one (the others keep the vector result) */
            for (unsigned m = near; m; m &= m - 1) {
                const size_t q = i + (size_t)__builtin_ctz(m);
                y[q] = qa2_ref1(p, a[q], p->b_scalar ? b[0] : b[q]);
            }
        }
    }
    for (; i < n; i++) y[i] = qa2_ref1(p, a[i], p->b_scalar ? b[0] : b[i]);
}
#endif
