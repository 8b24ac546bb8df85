/* SGEMM micro-kernels. A micro-kernel computes one MR x NR tile of C from packed panels:
 *   a: kc steps of MR floats (column of op(A), alpha already applied), b: kc steps of NR floats,
 *   ldb floats apart (NR for a packed panel; the row stride when B is read in place).
 *   accumulate = 0: C_tile = a*b;  accumulate = 1: C_tile += a*b.  C rows are ldc floats apart.
 * The x86 kernels are compiled with per-function target attributes so that the library needs no
 * global -march flag; nn_gemm picks one at run time. */
#ifndef CORT_CPU_SIMD_GEMM_UKERNELS_H
#define CORT_CPU_SIMD_GEMM_UKERNELS_H
#include <stddef.h>

typedef void (*nn_gemm_ukr_fn)(size_t kc, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                               int accumulate);

typedef struct nn_gemm_kernel {
    const char    *name;
    size_t         mr, nr;
    nn_gemm_ukr_fn ukr;
} nn_gemm_kernel;

void nn_ukr_scalar_4x16(size_t kc, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
        int accumulate);
#if defined(__x86_64__) || defined(__i386__)
#define NN_HAVE_X86_UKERNELS 1
void nn_ukr_avx2_6x16(size_t kc, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
        int accumulate);
void nn_ukr_avx512_12x32(size_t kc, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
        int accumulate);
#endif
#endif
