/* Helpers shared by the AVX-VNNI byte micro-kernels (i8_gemm_u8s8_6x16_avxvnni.c and
 * i8_qconv_s8u8_6x16_avxvnni.c); include after <immintrin.h>. */
#ifndef CORT_CPU_KERNELS_X86_I8_VNNI_AVX2_H
#define CORT_CPU_KERNELS_X86_I8_VNNI_AVX2_H

#define NN_VNNI256_TARGET "avx2,avxvnni"

/* Four bytes as one int32 (a k quad to broadcast). */
static inline int32_t nn_vnni256_word(const uint8_t *p) {
    int32_t w;
    __builtin_memcpy(&w, p, 4);
    return w;
}

/* acc + the u8 x s8 quad dots of u and s. Through asm under GCC: GCC 12 copied the 12 accumulators
 * of a 6x16 tile around each intrinsic (51 register moves per k quad, half the rate); {vex} asks for
 * the AVX-VNNI encoding, which CPUs without AVX512-VL run. */
__attribute__((target(NN_VNNI256_TARGET))) static inline __m256i nn_vnni256_dot(__m256i acc, __m256i u, __m256i s) {
#if defined(__GNUC__) && !defined(__clang__)
    __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(u), "x"(s));
    return acc;
#else
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#endif
}

/* The zero-point correction of int_gemm.h's byte kernels for one row (rz: its zero point and sum)
 * and eight columns (zb: their zero points, cs: their sums): acc - (rz[1] * zb + rz[0] * cs), wrapping. */
__attribute__((target(NN_VNNI256_TARGET))) static inline __m256i nn_vnni256_fix(__m256i acc, const int32_t *rz,
                                                                               __m256i zb, __m256i cs) {
    const __m256i t = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_set1_epi32(rz[1]), zb),
                                       _mm256_mullo_epi32(_mm256_set1_epi32(rz[0]), cs));
    return _mm256_sub_epi32(acc, t);
}
#endif
