/* 8-bit quantization of float rows (QuantizeLinear's per-tensor case, DynamicQuantizeLinear):
 *   minmax:    *lo = min(*lo, x[i]), *hi = max(*hi, x[i]) over i < n, NaN ignored (x < lo ? x : lo);
 *   quantize8: y[i] = sat8(nn_q_add_sat(nn_q_round(x[i] / scale), zp)), uint8 or (is_signed) int8.
 * The same values as the scalar loops in ops/quant/quantize.c: the quotient is a true division
 * (not a multiply by 1/scale), rounded half to even (vcvtps2dq in the default rounding mode, as
 * nearbyintf); quotients past +-2^30 are clamped first, which saturates the same, and a NaN
 * quotient gives 0 + zp, as nn_q_round does. */
#ifndef CORT_CPU_KERNELS_QUANT_UKERNELS_H
#define CORT_CPU_KERNELS_QUANT_UKERNELS_H
#include <stddef.h>
#include <stdint.h>
#include "gemm_ukernels.h"

#ifdef NN_HAVE_X86_UKERNELS
void nn_minmax_f32_avx2(const float *x, size_t n, float *lo, float *hi);
void nn_quantize8_f32_avx2(const float *x, size_t n, float scale, int32_t zp, int is_signed, void *y);
#endif
#endif
