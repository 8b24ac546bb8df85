/* Helpers shared by the AVX512-VNNI matmul byte micro-kernels (i8_gemm_u8s8_16x16_avx512.c and
 * i8_gemm_u8s8_8x32_avx512vnni.c); include after <immintrin.h>. */
#ifndef CORT_CPU_KERNELS_X86_I8_VNNI_AVX512_H
#define CORT_CPU_KERNELS_X86_I8_VNNI_AVX512_H

#define NN_Q_TARGET "avx512f,avx512bw,avx512vnni"

/* Four bytes as one int32 (a k quad to broadcast). */
static inline int32_t nn_q_word(const uint8_t *p) {
    int32_t w;
    __builtin_memcpy(&w, p, 4);
    return w;
}

/* acc + the u8 x s8 quad dots of a and b. Through asm under GCC: GCC 12 rotates a tile's 16
 * accumulators through copies (65 vmovdqa and a spill per k quad), which halves the kernel's rate;
 * the asm pins each accumulator to its register. */
__attribute__((target(NN_Q_TARGET))) static inline __m512i nn_q_dot(__m512i acc, __m512i a, __m512i b) {
#if defined(__GNUC__) && !defined(__clang__)
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
    return acc;
#else
    return _mm512_dpbusd_epi32(acc, a, b);
#endif
}

/* The zero-point correction of int_gemm.h's byte kernels for one row (rz: its zero point and
 * sum_k (a - za)) and 16 columns (zb: their zero points, cs: their sums): acc - (rz[1] * zb +
 * rz[0] * cs), wrapping. */
__attribute__((target(NN_Q_TARGET))) static inline __m512i nn_q_fix(__m512i acc, const int32_t *rz, __m512i zb,
                                                                    __m512i cs) {
    const __m512i t = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_set1_epi32(rz[1]), zb),
                                       _mm512_mullo_epi32(_mm512_set1_epi32(rz[0]), cs));
    return _mm512_sub_epi32(acc, t);
}
#endif
