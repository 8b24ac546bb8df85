/* AVX-512BW kernels of the 8-bit MaxPool (see pool_ukernels.h). Stride 2 takes the maximum at every
 * byte position and keeps the even ones with one truncating word-to-byte narrow (vpmovwb) instead of
 * gathering every other byte. Loads and stores are masked at the row's end, so no scalar tail runs
 * and nothing past the last byte a window needs is read. */
#include "../pool_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

#define P8_T512 __attribute__((target("avx512f,avx512bw,avx512vl")))

P8_T512 static inline __mmask64 p8_mask(size_t avail) {
    return avail >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << avail) - 1;
}

P8_T512 void nn_pool_rows_max8_avx512(const uint8_t *x, size_t stride, size_t nrows, size_t n, uint8_t flip, int acc,
                                      uint8_t *buf) {
    const __m512i f = _mm512_set1_epi8((char)flip);
    for (size_t i = 0; i < n; i += 64) {
        const __mmask64 m = p8_mask(n - i);
        __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
        for (size_t r = 1; r < nrows; r++) {
            const __m512i w = _mm512_maskz_loadu_epi8(m, x + r * stride + i);
            v = flip ? _mm512_max_epi8(v, w) : _mm512_max_epu8(v, w);
        }
        v = _mm512_xor_si512(v, f);
        if (acc) v = _mm512_max_epu8(v, _mm512_maskz_loadu_epi8(m, buf + i));
        _mm512_mask_storeu_epi8(buf + i, m, v);
    }
}

P8_T512 void nn_pool_window_max8_avx512(const uint8_t *row, size_t k, size_t s, size_t n, uint8_t flip, uint8_t *y) {
    const size_t total = (n - 1) * s + k;   /* bytes the windows cover */
    if (s == 1) {
        const __m512i f = _mm512_set1_epi8((char)flip);
        for (size_t o = 0; o < n; o += 64) {
            __m512i m = _mm512_maskz_loadu_epi8(p8_mask(total - o), row + o);
            for (size_t t = 1; t < k; t++) m = _mm512_max_epu8(m, _mm512_maskz_loadu_epi8(p8_mask(total - o - t), row + o + t));
            _mm512_mask_storeu_epi8(y + o, p8_mask(n - o), _mm512_xor_si512(m, f));
        }
        return;
    }
    const __m256i f = _mm256_set1_epi8((char)flip);
    for (size_t o = 0; o < n; o += 32) {   /* s == 2: 32 outputs from 64 byte positions */
        const uint8_t *b = row + 2 * o;
        __m512i m = _mm512_maskz_loadu_epi8(p8_mask(total - 2 * o), b);
        for (size_t t = 1; t < k; t++) m = _mm512_max_epu8(m, _mm512_maskz_loadu_epi8(p8_mask(total - 2 * o - t), b + t));
        const size_t r = n - o < 32 ? n - o : 32;
        _mm256_mask_storeu_epi8(y + o, (__mmask32)(r == 32 ? 0xffffffffu : (1u << r) - 1),
                                _mm256_xor_si256(_mm512_cvtepi16_epi8(m), f));
    }
}
#endif
