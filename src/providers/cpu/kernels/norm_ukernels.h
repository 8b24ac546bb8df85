/* Row kernels of the transformer normalizations (RMSNormalization).
 *   rmsnorm_row: y[i] = x[i] * w[i] / sqrt(mean(x^2) + eps) over one row of n floats. y may be x.
 * The sum of squares is accumulated in several independent float lanes, so a row's result may
 * differ from a serial double sum in the last bits (relative 1e-6 for rows up to 64k). */
#ifndef CORT_CPU_KERNELS_NORM_UKERNELS_H
#define CORT_CPU_KERNELS_NORM_UKERNELS_H
#include <stddef.h>
#include "gemm_ukernels.h"   /* NN_HAVE_X86_UKERNELS */

typedef void (*nn_rmsnorm_row_fn)(const float *x, const float *w, float *y, size_t n, float eps);

void nn_rmsnorm_row_generic(const float *x, const float *w, float *y, size_t n, float eps);
#ifdef NN_HAVE_X86_UKERNELS
void nn_rmsnorm_row_avx2(const float *x, const float *w, float *y, size_t n, float eps);
#endif
/* The row kernel of the ISA level in use (chosen from cort_cpu_isa(), never from the CPU). */
nn_rmsnorm_row_fn nn_rmsnorm_row(void);
#endif
