/* AVX2 exact int GEMM micro-kernel, 6 rows x 16 columns over the int16 packs of int_gemm.h: per k
 * pair, one broadcast of A's (a[2p], a[2p+1]) int16 pair per row and vpmaddwd against two B
 * vectors (8 columns x 2 k each); 12 accumulators + 2 B + 1 broadcast = 15 registers. vpmaddwd's
 * pair sum cannot overflow for |operands| <= 255, so the result is exact. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>

#define NN_I8_TARGET "avx2"
#define NN_I8_FN(t) nn_igemm_ukr_avx2_##t
#define NN_I8_DOT(C, X, B) C = _mm256_add_epi32(C, _mm256_madd_epi16(X, B))
#include "i8_gemm_6x16_avx2.h"
#undef NN_I8_TARGET
#undef NN_I8_FN
#undef NN_I8_DOT

/* AVX-VNNI (VEX vpdpwssd, client CPUs without AVX-512): the pair dot and the add in one
 * non-saturating instruction, the same int32 sums. */
#define NN_I8_TARGET "avx2,avxvnni"
#define NN_I8_FN(t) nn_igemm_ukr_avxvnni_##t
#define NN_I8_DOT(C, X, B) C = _mm256_dpwssd_avx_epi32(C, X, B)
#include "i8_gemm_6x16_avx2.h"
#endif
