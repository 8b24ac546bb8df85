/* AVX2 form of the channel-lane depthwise int8 conv (nn_qdwc16_args in int_gemm.h; the AVX-512 form
 * is i8_dwconv_c16_avx512.c): the 16 channels are two ymm halves, the transposes 8x8, and the int32
 * sums are requantized per channel by the AVX2 row kernel (the same expression). Exact for the same
 * reason: every partial sum is an integer below 2^24. */
#include "../int_gemm.h"
#include "i8_dwconv_c16.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include <string.h>
#include "x32_transpose_8x8_avx2.h"

#define DWC2_T __attribute__((target("avx2,fma")))

/* 8 bytes of plane row data from p, only the first nb (the rest zero) when nb < 8. */
DWC2_T static inline __m128i dwc2_load8(const uint8_t *p, size_t nb) {
    if (nb >= 8) return _mm_loadl_epi64((const __m128i *)(const void *)p);
    uint8_t t[8] = { 0 };
    memcpy(t, p, nb);
    return _mm_loadl_epi64((const __m128i *)(const void *)t);
}

DWC2_T static void dwc2_fill(const nn_qdwc16_args *a) {
    const size_t wp = a->wp, plane = a->ih * a->iw;
    const __m256i vz = _mm256_set1_epi32(a->xzp);
    nn_dwc_zero_borders(a);
    size_t r = 0, c = 0;   /* pixel p0's row and column */
    for (size_t p0 = 0; p0 < plane; p0 += 8) {
        const size_t nb = plane - p0 < 8 ? plane - p0 : 8;
        const size_t r0 = r, c0 = c;
        for (size_t h = 0; h < 2; h++) {
            __m256 v[8];
#pragma GCC unroll 8
            for (size_t q = 0; q < 8; q++) {
                const size_t ch = 8 * h + q;
                const __m128i b = ch < a->nch ? dwc2_load8(a->x + ch * a->xstride + p0, nb) : _mm_setzero_si128();
                const __m256i w = a->is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
                v[q] = _mm256_cvtepi32_ps(_mm256_sub_epi32(w, vz));
            }
            nn_tr8x8_avx2(v);
            r = r0;
            c = c0;
#pragma GCC unroll 8
            for (size_t q = 0; q < 8; q++) {
                if (q < nb) _mm256_storeu_ps(a->xb + ((r + a->pt) * wp + c + a->pl) * 16 + 8 * h, v[q]);
                if (q < nb && ++c == a->iw) { c = 0; r++; }
            }
        }
    }
}

/* All output pixels, 4 per step wherever they are in the plane; the last step repeats the last pixel. */
DWC2_T static void dwc2_pixels(const nn_qdwc16_args *a, const size_t *toff, size_t ks, int32_t *t) {
    const size_t P = a->oh * a->ow;
    size_t oh = 0, ow = 0;
    for (size_t p0 = 0; p0 < P; p0 += 4) {
        const float *b[4];
        size_t idx[4];
        nn_dwc_pixel_block(a, p0, 4, &oh, &ow, b, idx);
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        const float *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
        for (size_t k = 0; k < ks; k++) {
            const __m256 w0 = _mm256_loadu_ps(a->w + k * 16), w1 = _mm256_loadu_ps(a->w + k * 16 + 8);
            const size_t o = toff[k];
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(b0 + o), w0, a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(b0 + o + 8), w1, a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(b1 + o), w0, a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(b1 + o + 8), w1, a3);
            a4 = _mm256_fmadd_ps(_mm256_loadu_ps(b2 + o), w0, a4);
            a5 = _mm256_fmadd_ps(_mm256_loadu_ps(b2 + o + 8), w1, a5);
            a6 = _mm256_fmadd_ps(_mm256_loadu_ps(b3 + o), w0, a6);
            a7 = _mm256_fmadd_ps(_mm256_loadu_ps(b3 + o + 8), w1, a7);
        }
#define DWC2_ST(J, LO, HI)                                                                         \
    _mm256_storeu_si256((__m256i *)(void *)(t + idx[J] * 16), _mm256_cvtps_epi32(LO));             \
    _mm256_storeu_si256((__m256i *)(void *)(t + idx[J] * 16 + 8), _mm256_cvtps_epi32(HI));
        DWC2_ST(0, a0, a1) DWC2_ST(1, a2, a3) DWC2_ST(2, a4, a5) DWC2_ST(3, a6, a7)
#undef DWC2_ST
    }
}

DWC2_T void nn_qdwc16_avx2(const nn_qdwc16_args *a) {
    dwc2_fill(a);
    const size_t ks = a->kh * a->kw, P = a->oh * a->ow;
    size_t toff[NN_QDWC16_MAX_TAPS];
    for (size_t i = 0; i < a->kh; i++)
        for (size_t j = 0; j < a->kw; j++) toff[i * a->kw + j] = (i * a->dh * a->wp + j * a->dw) * 16;
    dwc2_pixels(a, toff, ks, a->tmp);
    /* [P][16] -> [nch][P] */
    for (size_t p0 = 0; p0 < P; p0 += 8) {
        const size_t nb = P - p0 < 8 ? P - p0 : 8;
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)nb), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        for (size_t h = 0; h < 2 && 8 * h < a->nch; h++) {
            __m256 v[8];
#pragma GCC unroll 8
            for (size_t i = 0; i < 8; i++)
                v[i] = i < nb ? _mm256_loadu_ps((const float *)(const void *)(a->tmp + (p0 + i) * 16 + 8 * h))
                              : _mm256_setzero_ps();
            nn_tr8x8_avx2(v);
#pragma GCC unroll 8
            for (size_t q = 0; q < 8; q++)
                if (8 * h + q < a->nch)
                    _mm256_maskstore_epi32(a->out + (8 * h + q) * P + p0, m, _mm256_castps_si256(v[q]));
        }
    }
    if (a->y)
        for (size_t ch = 0; ch < a->nch; ch++)
            nn_qrq_row_avx2(a->out + ch * P, P, a->bias[ch], a->mult[ch], a->yzp, a->y_signed, a->y + ch * P);
}
#endif
