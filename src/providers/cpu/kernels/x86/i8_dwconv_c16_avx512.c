/* AVX-512 depthwise int8 conv with 16 channels in the vector lanes (see nn_qdwc16_args in int_gemm.h).
 * For small planes the per-plane path (one channel per call, outputs in the lanes) pays its per-plane
 * setup on a few dozen outputs; here the setup is per 16 channels and every tap is one FMA on 16
 * channels. The products are exact in float: |x - zx|, |w - zw| <= 255, so with at most 256 taps every
 * partial sum is an integer below 2^24 and the FMA chain gives the int32 sum the integer loop gives.
 * The input goes in as 16x16 transposes of widened bytes; the int32 sums come out the same way. */
#include "../int_gemm.h"
#include "i8_dwconv_c16.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include <string.h>
#include "x32_transpose_16x16_avx512.h"
#include "i8_rq16_avx512.h"

#define DWC_T __attribute__((target("avx512f,avx512bw,avx512vl")))

DWC_T static inline __mmask16 dwc_mask(size_t n) { return (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u); }

/* The input into the channel-interleaved padded buffer xb[(r * wp + c) * 16 + ch]: borders zeroed,
 * then 16 pixels of the flattened plane per transpose (a 7-column plane would waste 9 of 16 per row),
 * each stored at its padded position. */
DWC_T static void dwc_fill(const nn_qdwc16_args *a) {
    const size_t wp = a->wp, plane = a->ih * a->iw;
    const __m512i vz = _mm512_set1_epi32(a->xzp);
    nn_dwc_zero_borders(a);
    size_t r = 0, c = 0;   /* pixel p0's row and column */
    for (size_t p0 = 0; p0 < plane; p0 += 16) {
        const size_t nb = plane - p0 < 16 ? plane - p0 : 16;
        const __mmask16 m = dwc_mask(nb);
        __m512 v[16];
        /* constant trip counts, fully unrolled, so v stays in registers */
#pragma GCC unroll 16
        for (size_t ch = 0; ch < 16; ch++) {
            const __m128i b = _mm_maskz_loadu_epi8(ch < a->nch ? m : 0, a->x + ch * a->xstride + p0);
            const __m512i w = a->is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
            v[ch] = _mm512_cvtepi32_ps(_mm512_sub_epi32(w, vz));
        }
        nn_tr16x16_avx512(v);
#pragma GCC unroll 16
        for (size_t q = 0; q < 16; q++) {
            if (q < nb) _mm512_storeu_ps(a->xb + ((r + a->pt) * wp + c + a->pl) * 16, v[q]);
            if (q < nb && ++c == a->iw) { c = 0; r++; }
        }
    }
}

/* All output pixels, 8 per step wherever they are in the plane (a row's tail joins the next row's
 * head), each a chain of ks FMAs; the last step repeats the last pixel instead of running short. */
DWC_T static void dwc_pixels(const nn_qdwc16_args *a, const size_t *toff, size_t ks, int32_t *t) {
    const size_t P = a->oh * a->ow;
    size_t oh = 0, ow = 0;   /* pixel p0's position */
    for (size_t p0 = 0; p0 < P; p0 += 8) {
        const float *b[8];
        size_t idx[8];
        nn_dwc_pixel_block(a, p0, 8, &oh, &ow, b, idx);
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        const float *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3], *b4 = b[4], *b5 = b[5], *b6 = b[6], *b7 = b[7];
        for (size_t k = 0; k < ks; k++) {
            const __m512 wv = _mm512_loadu_ps(a->w + k * 16);
            const size_t o = toff[k];
            a0 = _mm512_fmadd_ps(_mm512_loadu_ps(b0 + o), wv, a0);
            a1 = _mm512_fmadd_ps(_mm512_loadu_ps(b1 + o), wv, a1);
            a2 = _mm512_fmadd_ps(_mm512_loadu_ps(b2 + o), wv, a2);
            a3 = _mm512_fmadd_ps(_mm512_loadu_ps(b3 + o), wv, a3);
            a4 = _mm512_fmadd_ps(_mm512_loadu_ps(b4 + o), wv, a4);
            a5 = _mm512_fmadd_ps(_mm512_loadu_ps(b5 + o), wv, a5);
            a6 = _mm512_fmadd_ps(_mm512_loadu_ps(b6 + o), wv, a6);
            a7 = _mm512_fmadd_ps(_mm512_loadu_ps(b7 + o), wv, a7);
        }
        _mm512_storeu_si512((void *)(t + idx[0] * 16), _mm512_cvtps_epi32(a0));
        _mm512_storeu_si512((void *)(t + idx[1] * 16), _mm512_cvtps_epi32(a1));
        _mm512_storeu_si512((void *)(t + idx[2] * 16), _mm512_cvtps_epi32(a2));
        _mm512_storeu_si512((void *)(t + idx[3] * 16), _mm512_cvtps_epi32(a3));
        _mm512_storeu_si512((void *)(t + idx[4] * 16), _mm512_cvtps_epi32(a4));
        _mm512_storeu_si512((void *)(t + idx[5] * 16), _mm512_cvtps_epi32(a5));
        _mm512_storeu_si512((void *)(t + idx[6] * 16), _mm512_cvtps_epi32(a6));
        _mm512_storeu_si512((void *)(t + idx[7] * 16), _mm512_cvtps_epi32(a7));
    }
}

DWC_T void nn_qdwc16_avx512(const nn_qdwc16_args *a) {
    dwc_fill(a);
    const size_t ks = a->kh * a->kw, P = a->oh * a->ow;
    size_t toff[NN_QDWC16_MAX_TAPS];
    for (size_t i = 0; i < a->kh; i++)
        for (size_t j = 0; j < a->kw; j++) toff[i * a->kw + j] = (i * a->dh * a->wp + j * a->dw) * 16;
    dwc_pixels(a, toff, ks, a->tmp);
    /* [P][16] -> [nch][P], requantized on the way when y is set */
    const __m256i vz16 = _mm256_set1_epi16((int16_t)a->yzp);
    for (size_t p0 = 0; p0 < P; p0 += 16) {
        const size_t nb = P - p0 < 16 ? P - p0 : 16;
        __m512 v[16];
#pragma GCC unroll 16
        for (size_t i = 0; i < 16; i++)   /* rows past P read nothing (mask 0) and are zero */
            v[i] = _mm512_maskz_loadu_ps(i < nb ? 0xffff : 0, (const float *)(const void *)(a->tmp + (p0 + i) * 16));
        nn_tr16x16_avx512(v);
        const __mmask16 m = dwc_mask(nb);
        if (a->y) {
#pragma GCC unroll 16
            for (size_t ch = 0; ch < 16; ch++)
                if (ch < a->nch)
                    _mm_mask_storeu_epi8(a->y + ch * P + p0, m,
                                         nn_qrq16_avx512(_mm512_castps_si512(v[ch]), _mm512_set1_epi32(a->bias[ch]),
                                                         _mm512_set1_ps(a->mult[ch]), vz16, a->y_signed));
        } else {
#pragma GCC unroll 16
            for (size_t ch = 0; ch < 16; ch++)
                if (ch < a->nch) _mm512_mask_storeu_ps((float *)(void *)(a->out + ch * P + p0), m, v[ch]);
        }
    }
}
#endif
