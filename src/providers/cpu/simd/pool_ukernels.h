/* Row micro-kernels of the separable 2-D MaxPool / AveragePool fast path (nn_pool_kernels.c) and
 * of the global pools. A window is reduced in two steps: over its (valid) rows, then over k
 * neighbouring columns of that row reduction.
 *
 * MaxPool's reference takes a window's first valid value and replaces it by every later greater
 * one: a NaN met first is the result, a later NaN is ignored. That order does not survive
 * separation, so the row reductions take the NaN-ignoring maximum and the first value's NaN is
 * applied afterwards (the fused kernels do it themselves). */
#ifndef CORT_CPU_SIMD_POOL_UKERNELS_H
#define CORT_CPU_SIMD_POOL_UKERNELS_H
#include <stddef.h>
#include "gemm_ukernels.h"

#ifdef NN_HAVE_X86_UKERNELS
/* buf[i] = NaN-ignoring max over r < nrows of x[r * stride + i] (-inf if all NaN), i < n */
void nn_pool_rows_max_avx512(const float *x, size_t stride, size_t nrows, size_t n, float *buf);
/* buf[i] = sum over r < nrows of x[r * stride + i], i < n; nrows >= 1 */
void nn_pool_rows_sum_avx512(const float *x, size_t stride, size_t nrows, size_t n, float *buf);
/* Fused vertical + horizontal windows of out_rows output rows, without a row buffer. For output
 * row i and o < count: y[i * y_stride + o] = max (avg: scale * sum) over r < nrows, kw < k of
 * x[i * x_step + r * x_stride + o * sw + kw], where only columns [lpad, avail) of x exist (they
 * are read, the others are padding). sw is 1 or 2, k <= NN_POOL_FUSED_KMAX.
 * avg: windows must not meet padding (lpad 0, every window inside avail).
 * max: padding is skipped as the reference skips it, with its NaN rule; lpad < min(k, 16) and
 * every window starts before avail, so none is all padding. */
#define NN_POOL_FUSED_KMAX 17
typedef struct nn_pool2d_rows {
    const float *x;
    size_t x_stride, x_step, nrows, lpad, avail, k, sw, count, out_rows;
    float *y;
    size_t y_stride;
    float scale;
} nn_pool2d_rows;
void nn_pool_max2d_avx512(const nn_pool2d_rows *a);
void nn_pool_avg2d_avx512(const nn_pool2d_rows *a);
/* Sum of x[0..n) (16 lanes x 4 accumulators, then a lane reduction). */
float nn_pool_sum_avx512(const float *x, size_t n);
/* Max of x[0..n), n >= 1, with the reference's NaN rule (x[0] NaN gives NaN, others are ignored). */
float nn_pool_max_avx512(const float *x, size_t n);
#endif
#endif
