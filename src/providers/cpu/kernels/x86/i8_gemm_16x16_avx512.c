/* AVX-512 exact int GEMM micro-kernels, 16 rows x 16 columns over the int16 packs of int_gemm.h:
 * one packed-B k-pair row (16 columns x 2 k) is exactly one zmm, so a row of C is one accumulator
 * and 16 rows leave registers for B and the broadcast. The VNNI variant fuses the pair dot and the
 * add (vpdpwssd, non-saturating: the same wrapping int32 sum as vpmaddwd + vpaddd); the plain one
 * runs where AVX512-VNNI is missing. Exact for |operands| <= 255 like the AVX2 kernel. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>

/* A row's (a[2p], a[2p + 1]) int16 pair as the int32 vpdpwssd / vpmaddwd broadcast. */
static inline int32_t nn_i8_pair(const int16_t *p) {
    int32_t w;
    __builtin_memcpy(&w, p, 4);
    return w;
}

#define NN_I8_TARGET "avx512f,avx512bw,avx512vl,avx512vnni"
#define NN_I8_FN(t) nn_igemm_ukr_avx512vnni_##t
#define NN_I8_DOT(C, X, B) C = _mm512_dpwssd_epi32(C, B, X)
#define NN_I8_DOTY(C, X, B) C = _mm256_dpwssd_epi32(C, B, X)
#include "i8_gemm_16x16_avx512.h"
#undef NN_I8_TARGET
#undef NN_I8_FN
#undef NN_I8_DOT
#undef NN_I8_DOTY

#define NN_I8_TARGET "avx512f,avx512bw,avx512vl"
#define NN_I8_FN(t) nn_igemm_ukr_avx512_##t
#define NN_I8_DOT(C, X, B) C = _mm512_add_epi32(C, _mm512_madd_epi16(X, B))
#define NN_I8_DOTY(C, X, B) C = _mm256_add_epi32(C, _mm256_madd_epi16(X, B))
#include "i8_gemm_16x16_avx512.h"
#endif
