/* AVX2 kernels of the 8-bit MaxPool (see pool_ukernels.h). Stride 2 takes the maximum at every byte
 * position, keeps the even byte of each word and packs two vectors with packuswb. Whole vectors run
 * while every byte they load is one the windows need; the rest is a scalar loop. */
#include "../pool_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

#define P8_T2 __attribute__((target("avx2")))
#define P8_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define P8_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))

/* buf[i .. i + 32) of nn_pool_rows_max8_avx2. */
P8_T2 static inline void p8_rows32(const uint8_t *x, size_t stride, size_t nrows, size_t i, uint8_t flip, __m256i f,
                                   int acc, uint8_t *buf) {
    __m256i v = P8_LOAD(x + i);
    for (size_t r = 1; r < nrows; r++) {
        const __m256i w = P8_LOAD(x + r * stride + i);
        v = flip ? _mm256_max_epi8(v, w) : _mm256_max_epu8(v, w);
    }
    v = _mm256_xor_si256(v, f);
    if (acc) v = _mm256_max_epu8(v, P8_LOAD(buf + i));
    P8_STORE(buf + i, v);
}

P8_T2 void nn_pool_rows_max8_avx2(const uint8_t *x, size_t stride, size_t nrows, size_t n, uint8_t flip, int acc,
                                  uint8_t *buf) {
    const __m256i f = _mm256_set1_epi8((char)flip);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) p8_rows32(x, stride, nrows, i, flip, f, acc, buf);
    /* the last partial vector again, overlapping: every lane's result depends only on x and on buf
     * before this call (acc takes max with it, and max is idempotent), so lanes done twice agree */
    if (i < n && n >= 32) {
        p8_rows32(x, stride, nrows, n - 32, flip, f, acc, buf);
        i = n;
    }
    for (; i < n; i++) {
        uint8_t m = acc ? buf[i] : (uint8_t)(x[i] ^ flip);
        for (size_t r = acc ? 0 : 1; r < nrows; r++) {
            const uint8_t v = (uint8_t)(x[r * stride + i] ^ flip);
            m = v > m ? v : m;
        }
        buf[i] = m;
    }
}

P8_T2 void nn_pool_window_max8_avx2(const uint8_t *row, size_t k, size_t s, size_t n, uint8_t flip, uint8_t *y) {
    const size_t total = (n - 1) * s + k;
    const __m256i f = _mm256_set1_epi8((char)flip);
    size_t o = 0;
    if (s == 1) {
        for (; o + 31 + k <= total; o += 32) {
            __m256i m = P8_LOAD(row + o);
            for (size_t t = 1; t < k; t++) m = _mm256_max_epu8(m, P8_LOAD(row + o + t));
            P8_STORE(y + o, _mm256_xor_si256(m, f));
        }
        if (o < n && n >= 32) {   /* the last vector again, overlapping the one before */
            o = n - 32;
            __m256i m = P8_LOAD(row + o);
            for (size_t t = 1; t < k; t++) m = _mm256_max_epu8(m, P8_LOAD(row + o + t));
            P8_STORE(y + o, _mm256_xor_si256(m, f));
            o = n;
        }
    } else {
        const __m256i lo = _mm256_set1_epi16(0xff);
        for (; 2 * o + 63 + k <= total && o + 32 <= n; o += 32) {
            const uint8_t *b = row + 2 * o;
            __m256i m0 = P8_LOAD(b), m1 = P8_LOAD(b + 32);
            for (size_t t = 1; t < k; t++) {
                m0 = _mm256_max_epu8(m0, P8_LOAD(b + t));
                m1 = _mm256_max_epu8(m1, P8_LOAD(b + 32 + t));
            }
            const __m256i p = _mm256_packus_epi16(_mm256_and_si256(m0, lo), _mm256_and_si256(m1, lo));
            P8_STORE(y + o, _mm256_xor_si256(_mm256_permute4x64_epi64(p, 0xd8), f));
        }
        for (; 2 * o + 31 + k <= total && o + 16 <= n; o += 16) {   /* 16 outputs from one vector */
            __m256i m0 = P8_LOAD(row + 2 * o);
            for (size_t t = 1; t < k; t++) m0 = _mm256_max_epu8(m0, P8_LOAD(row + 2 * o + t));
            const __m256i e = _mm256_and_si256(m0, lo);
            const __m128i p = _mm_packus_epi16(_mm256_castsi256_si128(e), _mm256_extracti128_si256(e, 1));
            _mm_storeu_si128((__m128i *)(void *)(y + o), _mm_xor_si128(p, _mm256_castsi256_si128(f)));
        }
    }
    for (; o < n; o++) {
        uint8_t m = row[o * s];
        for (size_t t = 1; t < k; t++) m = row[o * s + t] > m ? row[o * s + t] : m;
        y[o] = (uint8_t)(m ^ flip);
    }
}
#endif
