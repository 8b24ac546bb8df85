/* Vectorized activation epilogues. kind: NN_ACT_KIND_* (same values as CORT_ACT_RELU/CLIP/LEAKY_RELU). */
#ifndef CORT_CPU_SIMD_ACT_UKERNELS_H
#define CORT_CPU_SIMD_ACT_UKERNELS_H
#include <stddef.h>
#include "gemm_ukernels.h"

enum { NN_ACT_KIND_RELU = 1, NN_ACT_KIND_CLIP = 2, NN_ACT_KIND_LEAKY_RELU = 3 };
#ifdef NN_HAVE_X86_UKERNELS
void nn_act_avx512(int kind, float lo, float hi, float *y, size_t n);
#endif
#endif
