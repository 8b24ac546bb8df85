/* 16x16 float transpose in AVX-512 registers, shared by the copy and gemm micro-kernels. */
#ifndef CORT_CPU_SIMD_TR16_AVX512_H
#define CORT_CPU_SIMD_TR16_AVX512_H
#include <immintrin.h>

/* r[i][j] <- r[j][i]: unpacks (row pairs), in-lane shuffles (row quads), then two 128-bit lane
 * shuffles (64 shuffles in all). */
static inline __attribute__((always_inline, target("avx512f"))) void nn_tr16x16_avx512(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {   /* pairs of rows interleaved */
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {   /* each 128-bit lane k of r[i + c]: rows i..i+3 of column 4k + c */
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {   /* lanes 0,2 / 1,3 of rows 0-3 and 4-7 (t[c], t[c+4]); 8-15 likewise */
        t[c] = _mm512_shuffle_f32x4(r[c], r[c + 4], 0x88);
        t[c + 4] = _mm512_shuffle_f32x4(r[c], r[c + 4], 0xDD);
        t[c + 8] = _mm512_shuffle_f32x4(r[c + 8], r[c + 12], 0x88);
        t[c + 12] = _mm512_shuffle_f32x4(r[c + 8], r[c + 12], 0xDD);
    }
    for (int c = 0; c < 4; c++) {
        r[c] = _mm512_shuffle_f32x4(t[c], t[c + 8], 0x88);
        r[c + 8] = _mm512_shuffle_f32x4(t[c], t[c + 8], 0xDD);
        r[c + 4] = _mm512_shuffle_f32x4(t[c + 4], t[c + 12], 0x88);
        r[c + 12] = _mm512_shuffle_f32x4(t[c + 4], t[c + 12], 0xDD);
    }
}
#endif
