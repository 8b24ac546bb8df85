/* AVX-512F helpers of the 2-D MaxPool fast path. Comparisons keep the first value unless a later one
 * is greater, as the portable code does. */
#ifndef CORT_CPU_SIMD_POOL_UKERNELS_H
#define CORT_CPU_SIMD_POOL_UKERNELS_H
#include <stddef.h>
#include "gemm_ukernels.h"

#ifdef NN_HAVE_X86_UKERNELS
/* row[i] = max(row[i], x[i]) for i < n */
void nn_max_rows_avx512(float *row, const float *x, size_t n);
/* y[o] = max_{kw<k} t[first + o*sw + kw] for the leading multiple of 16 outputs of count (every
 * window inside t, and t readable 32 floats past the last window for sw == 2); returns how many
 * outputs were written (0 when sw is neither 1 nor 2). */
size_t nn_max_window_avx512(const float *t, size_t first, size_t k, size_t sw, size_t count, float *y);
#endif
#endif
