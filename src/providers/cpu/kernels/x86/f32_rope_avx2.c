/* AVX2+FMA RotaryEmbedding row (see rope_ukernels.h). Interleaved pairs stay in their lanes: with
 * cos duplicated per pair (c0 c0 c1 c1 ...), sin as (-s0 s0 -s1 s1 ...) and x with each pair
 * swapped, y = cos * x + sin * swapped(x). */
#include <string.h>
#include "../rope_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

__attribute__((target("avx2,fma")))
void nn_rope_row_avx2(const float *x, float *y, const float *c, const float *s, size_t half, size_t n,
                      int interleaved) {
    size_t i = 0;
    if (interleaved) {
        const __m256 sign = _mm256_setr_ps(-1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f);
        for (; i + 4 <= half; i += 4) {
            const __m128 c4 = _mm_loadu_ps(c + i), s4 = _mm_loadu_ps(s + i);
            const __m256 cc = _mm256_set_m128(_mm_unpackhi_ps(c4, c4), _mm_unpacklo_ps(c4, c4));
            const __m256 ss = _mm256_mul_ps(_mm256_set_m128(_mm_unpackhi_ps(s4, s4), _mm_unpacklo_ps(s4, s4)), sign);
            const __m256 xv = _mm256_loadu_ps(x + 2 * i);
            const __m256 xs = _mm256_permute_ps(xv, 0xB1);
            _mm256_storeu_ps(y + 2 * i, _mm256_fmadd_ps(cc, xv, _mm256_mul_ps(ss, xs)));
        }
        for (; i < half; i++) {
            const float x1 = x[2 * i], x2 = x[2 * i + 1];
            y[2 * i] = c[i] * x1 - s[i] * x2;
            y[2 * i + 1] = s[i] * x1 + c[i] * x2;
        }
    } else {
        for (; i + 8 <= half; i += 8) {
            const __m256 cv = _mm256_loadu_ps(c + i), sv = _mm256_loadu_ps(s + i);
            const __m256 x1 = _mm256_loadu_ps(x + i), x2 = _mm256_loadu_ps(x + i + half);
            _mm256_storeu_ps(y + i, _mm256_fmsub_ps(cv, x1, _mm256_mul_ps(sv, x2)));
            _mm256_storeu_ps(y + i + half, _mm256_fmadd_ps(sv, x1, _mm256_mul_ps(cv, x2)));
        }
        for (; i < half; i++) {
            const float x1 = x[i], x2 = x[i + half];
            y[i] = c[i] * x1 - s[i] * x2;
            y[i + half] = s[i] * x1 + c[i] * x2;
        }
    }
    memcpy(y + 2 * half, x + 2 * half, (n - 2 * half) * sizeof(float));
}
#endif
