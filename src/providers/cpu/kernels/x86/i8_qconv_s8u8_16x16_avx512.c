/* AVX512-VNNI byte micro-kernel for the integer convs (nn_igemm_kernel.quad == 2): A one tile of 16 int8
 * weight rows interleaved by k quad (quad q of row i at 64 q + 4 i, so every broadcast is one constant
 * offset from one pointer), B one panel of uint8 activation k quads (16 columns x 4 bytes = one zmm). vpdpbusd
 * takes its unsigned bytes from the vector and its signed ones from the broadcast, so the activations are
 * the vector and a weight quad the broadcast, the conv's natural layout. The raw sums wrap like the
 * reference's (vpdpbusd does not saturate); the zero points come off in the epilogue (int_gemm.h). */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>

#define NN_C_TARGET "avx512f,avx512bw,avx512vnni"

__attribute__((target(NN_C_TARGET))) static inline __m512i nn_c_fix(__m512i acc, const int32_t *rz, __m512i zb,
                                                                    __m512i cs) {
    const __m512i t = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_set1_epi32(rz[1]), zb),
                                       _mm512_mullo_epi32(_mm512_set1_epi32(rz[0]), cs));
    return _mm512_sub_epi32(acc, t);
}

/* C += dots of bv's uint8 quads with the int8 quad at P broadcast from memory. In asm because gcc 12 copies
 * every accumulator twice per step around the intrinsic (it does not tie the accumulator register). */
#define NN_CDOT(C, BV, P) \
    __asm__("vpdpbusd %1%{1to16%}, %2, %0" : "+v"(C) : "m"(*(const uint8_t(*)[4])(const void *)(P)), "v"(BV));

__attribute__((target(NN_C_TARGET))) void nn_igemm_cukr_avx512vnni_16x16(size_t kq4, const uint8_t *a, size_t lda,
                                                                          const int8_t *b, int32_t *c, size_t ldc,
                                                                          const int32_t *rz, const int32_t *cz) {
    (void)lda;
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    __m512i c8 = c0, c9 = c0, c10 = c0, c11 = c0, c12 = c0, c13 = c0, c14 = c0, c15 = c0;
    for (size_t q = 0; q < kq4; q++, a += 64, b += 64) {
        const __m512i bv = _mm512_loadu_si512((const void *)b);
        NN_CDOT(c0, bv, a) NN_CDOT(c1, bv, a + 4) NN_CDOT(c2, bv, a + 8) NN_CDOT(c3, bv, a + 12)
        NN_CDOT(c4, bv, a + 16) NN_CDOT(c5, bv, a + 20) NN_CDOT(c6, bv, a + 24) NN_CDOT(c7, bv, a + 28)
        NN_CDOT(c8, bv, a + 32) NN_CDOT(c9, bv, a + 36) NN_CDOT(c10, bv, a + 40) NN_CDOT(c11, bv, a + 44)
        NN_CDOT(c12, bv, a + 48) NN_CDOT(c13, bv, a + 52) NN_CDOT(c14, bv, a + 56) NN_CDOT(c15, bv, a + 60)
    }
    const __m512i zb = _mm512_loadu_si512((const void *)cz), cs = _mm512_loadu_si512((const void *)(cz + 16));
#define NN_CST(I, C) _mm512_storeu_si512((void *)(c + (I) * ldc), nn_c_fix(C, rz + 2 * (I), zb, cs));
    NN_CST(0, c0) NN_CST(1, c1) NN_CST(2, c2) NN_CST(3, c3) NN_CST(4, c4) NN_CST(5, c5) NN_CST(6, c6) NN_CST(7, c7)
    NN_CST(8, c8) NN_CST(9, c9) NN_CST(10, c10) NN_CST(11, c11) NN_CST(12, c12) NN_CST(13, c13) NN_CST(14, c14)
    NN_CST(15, c15)
#undef NN_CST
}

#endif
