/* AVX2 QLinearAdd in the fixed-point form (quant_ukernels.h): eight int32 lanes per step, two vpmulld
 * and an add per eight results where the 64 KB table costs eight gathered loads. Lanes near a tie
 * (each on its own, not the 16 around it), the tail and parameters the form does not take are
 * computed one by one in double, the reference expression. */
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
