/* 256-entry byte table lookups with AVX-512 VBMI (see quant_ukernels.h): the table is four zmm; two
 * two-source byte permutes (vpermi2b, 7 index bits each) look up the low and the high half, and the
 * index's top bit picks between them: three instructions per 64 bytes instead of 64 scalar loads. */
#include "../quant_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

#define L8_T __attribute__((target("avx512f,avx512bw,avx512vbmi")))

L8_T void nn_lut8_u8_avx512vbmi(const uint8_t *lut, const uint8_t *x, uint8_t *y, size_t n) {
    const __m512i t0 = _mm512_loadu_si512((const void *)lut), t1 = _mm512_loadu_si512((const void *)(lut + 64));
    const __m512i t2 = _mm512_loadu_si512((const void *)(lut + 128)), t3 = _mm512_loadu_si512((const void *)(lut + 192));
    for (size_t i = 0; i < n; i += 64) {
        const __mmask64 m = n - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (n - i)) - 1;
        const __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
        const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
        _mm512_mask_storeu_epi8(y + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
    }
}
#endif
