/* AVX2 forms of the copies around the convolution kernels (copy_ukernels.h): the stride-2 gather
 * (two loads, a shuffle and a lane permute per 8 outputs), the 2x repeat of nearest upsampling
 * and the 2-way interleave of a 2x2 stride-2 ConvTranspose (unpack + 128-bit lane exchange), and
 * the 16x16 / scaled transposes of the gemm packing and the small-plane conv as 8x8 blocks. */
#include "../copy_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>
#include "x32_transpose_8x8_avx2.h"

__attribute__((target("avx2,fma")))
void nn_copy_stride2_avx2(const float *src, float *dst, size_t n) {
    size_t i = 0;
    /* a full block reads src[2i .. 2i + 15]; i + 8 < n keeps 2i + 15 <= 2n - 2 */
    for (; i + 8 < n; i += 8) {
        const __m256 lo = _mm256_loadu_ps(src + 2 * i), hi = _mm256_loadu_ps(src + 2 * i + 8);
        const __m256 ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));   /* 0 2 8 10 | 4 6 12 14 */
        _mm256_storeu_ps(dst + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0))));
    }
    for (; i < n; i++) dst[i] = src[2 * i];
}

__attribute__((target("avx2,fma")))
void nn_copy_rep2_avx2(const float *src, float *dst, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 v = _mm256_loadu_ps(src + i / 2);
        const __m256 a = _mm256_unpacklo_ps(v, v), b = _mm256_unpackhi_ps(v, v);   /* 0011 4455 | 2233 6677 */
        _mm256_storeu_ps(dst + i, _mm256_permute2f128_ps(a, b, 0x20));
        _mm256_storeu_ps(dst + i + 8, _mm256_permute2f128_ps(a, b, 0x31));
    }
    for (; i < n; i++) dst[i] = src[i / 2];
}

__attribute__((target("avx2,fma")))
void nn_interleave2_avx2(const float *a, const float *b, float bias, float *dst, size_t n) {
    const __m256 vb = _mm256_set1_ps(bias);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 va = _mm256_add_ps(_mm256_loadu_ps(a + i), vb), vbb = _mm256_add_ps(_mm256_loadu_ps(b + i), vb);
        const __m256 lo = _mm256_unpacklo_ps(va, vbb), hi = _mm256_unpackhi_ps(va, vbb);   /* a0 b0 a1 b1 | a4 .. */
        _mm256_storeu_ps(dst + 2 * i, _mm256_permute2f128_ps(lo, hi, 0x20));
        _mm256_storeu_ps(dst + 2 * i + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
    }
    for (; i < n; i++) {
        dst[2 * i] = a[i] + bias;
        dst[2 * i + 1] = b[i] + bias;
    }
}

/* lanes < n (0..8) */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256i first_lanes(size_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__attribute__((target("avx2,fma")))
void nn_transpose_avx2(const float *src, size_t ld, size_t rows, float scale, float *dst, size_t ldd, size_t width) {
    const __m256 sc = _mm256_set1_ps(scale);
    for (size_t r0 = 0; r0 < width; r0 += 8) {
        const size_t wn = width - r0 < 8 ? width - r0 : 8;
        const __m256i m = first_lanes(wn);
        for (size_t c0 = 0; c0 < 16; c0 += 8) {
            __m256 r[8];
            for (size_t i = 0; i < 8; i++)
                r[i] = r0 + i < rows ? _mm256_mul_ps(_mm256_loadu_ps(src + (r0 + i) * ld + c0), sc) : _mm256_setzero_ps();
            nn_tr8x8_avx2(r);
            for (size_t c = 0; c < 8; c++) {
                if (wn == 8) _mm256_storeu_ps(dst + (c0 + c) * ldd + r0, r[c]);
                else _mm256_maskstore_ps(dst + (c0 + c) * ldd + r0, m, r[c]);
            }
        }
    }
}

__attribute__((target("avx2,fma")))
void nn_transpose16_avx2(const float *src, size_t ld, float *dst, size_t ldd) {
    for (size_t r0 = 0; r0 < 16; r0 += 8)
        for (size_t c0 = 0; c0 < 16; c0 += 8) {
            __m256 r[8];
            for (size_t i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + (r0 + i) * ld + c0);
            nn_tr8x8_avx2(r);
            for (size_t c = 0; c < 8; c++) _mm256_storeu_ps(dst + (c0 + c) * ldd + r0, r[c]);
        }
}
#endif
