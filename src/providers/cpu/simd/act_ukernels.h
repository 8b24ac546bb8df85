/* Vectorized activation epilogues. kind: NN_ACT_KIND_* (same values as CORT_ACT_*). */
#ifndef CORT_CPU_SIMD_ACT_UKERNELS_H
#define CORT_CPU_SIMD_ACT_UKERNELS_H
#include <stddef.h>
#include "gemm_ukernels.h"

enum { NN_ACT_KIND_RELU = 1, NN_ACT_KIND_CLIP = 2, NN_ACT_KIND_LEAKY_RELU = 3, NN_ACT_KIND_SIGMOID = 4,
       NN_ACT_KIND_HARD_SIGMOID = 5, NN_ACT_KIND_SILU = 6 };
#ifdef NN_HAVE_X86_UKERNELS
/* Every kind above; lo/hi are the activation's alpha/beta. */
void nn_act_avx512(int kind, float lo, float hi, float *y, size_t n);
/* Sigmoid and SiLU only (the kinds whose scalar form needs expf). */
void nn_act_avx2(int kind, float *y, size_t n);
#endif
#endif
