/* Row micro-kernels of the separable 2-D MaxPool / AveragePool fast path (kernels/pool.c) and
 * of the global pools. A window is reduced in two steps: over its (valid) rows, then over k
 * neighbouring columns of that row reduction.
 *
 * MaxPool's reference takes a window's first valid value and replaces it by every later greater
 * one: a NaN met first is the result, a later NaN is ignored. That order survives separation only
 * while no NaN comes first in a column, so the fused kernels redo the rows where one does, and
 * the row-buffer kernel takes the NaN-ignoring maximum (the caller applies the first value's NaN). */
#ifndef CORT_CPU_SIMD_POOL_UKERNELS_H
#define CORT_CPU_SIMD_POOL_UKERNELS_H
#include <stddef.h>
#include <stdint.h>
#include "gemm_ukernels.h"

#define NN_POOL_FUSED_KMAX 17
typedef struct nn_pool2d_rows {
    const float *x;
    size_t x_stride, x_step, nrows, lpad, avail, k, sw, count, out_rows;
    float *y;
    size_t y_stride;
    float scale;
    size_t row_count, pad_end;
    int include_pad;
} nn_pool2d_rows;
#ifdef NN_HAVE_X86_UKERNELS
/* buf[i] = NaN-ignoring max over r < nrows of x[r * stride + i] (-inf if all NaN), i < n */
void nn_pool_rows_max_avx512(const float *x, size_t stride, size_t nrows, size_t n, float *buf);
/* buf[i] = sum over r < nrows of x[r * stride + i], i < n; nrows >= 1 */
void nn_pool_rows_sum_avx512(const float *x, size_t stride, size_t nrows, size_t n, float *buf);
/* Fused vertical + horizontal windows of out_rows output rows, without a row buffer. For output
 * row i and o < count: y[i * y_stride + o] = max (avg: mean) over r < nrows, kw < k of window
 * column o * sw + kw of row i * x_step + r * x_stride, where only columns [lpad, avail) exist (the
 * others are padding) and x points at column lpad. sw is 1 or 2, k <= NN_POOL_FUSED_KMAX, lpad < min(k, 16).
 * max: padding is skipped as the reference skips it, with its NaN rule; every window starts
 * before avail, so none is all padding.
 * avg: the sum over existing columns divided by row_count * (include_pad ? the window's columns
 * before pad_end : its existing columns), 0 if that is 0; windows inside [lpad, avail) are
 * multiplied by scale (= 1 / (row_count * k)) instead. */

void nn_pool_max2d_avx512(const nn_pool2d_rows *a);
void nn_pool_avg2d_avx512(const nn_pool2d_rows *a);
/* Sum of x[0..n) (16 lanes x 4 accumulators, then a lane reduction). */
float nn_pool_sum_avx512(const float *x, size_t n);
/* Max of x[0..n), n >= 1, with the reference's NaN rule (x[0] NaN gives NaN, others are ignored). */
float nn_pool_max_avx512(const float *x, size_t n);
/* The AVX2 forms of the row and global kernels above, and the window step of the row-buffer
 * path: y[o] for o < count reduces t[o * sw + kw], kw < k, in kw order (max: v > best ? v : best
 * from the first; avg: the sum times scale), t holding (count - 1) * sw + k floats. */
void nn_pool_rows_max_avx2(const float *x, size_t stride, size_t nrows, size_t n, float *buf);
void nn_pool_rows_sum_avx2(const float *x, size_t stride, size_t nrows, size_t n, float *buf);
void nn_pool_window_max_avx2(const float *t, size_t k, size_t sw, size_t count, float *y);
/* y[o] for o < count: the max of columns 2o, 2o + 1 of rows x + r * stride, r < nrows, in the reference's
 * order (a NaN at x[2o] gives NaN, any other NaN is skipped); reads only those columns */
void nn_pool_max_k2s2_avx2(const float *x, size_t stride, size_t nrows, size_t count, float *y);
/* the same for columns 2o, 2o + 1, 2o + 2 (reads columns up to 2 count) */
void nn_pool_max_k3s2_avx2(const float *x, size_t stride, size_t nrows, size_t count, float *y);
void nn_pool_window_avg_avx2(const float *t, size_t k, size_t sw, size_t count, float scale, float *y);
float nn_pool_sum_avx2(const float *x, size_t n);
float nn_pool_max_avx2(const float *x, size_t n);
/* 8-bit MaxPool (bytes compared as unsigned; flip 0x80 orders int8 that way and is undone on output):
 *   rows_max8:   buf[i] = max over r < nrows of x[r * stride + i] ^ flip, i < n, nrows >= 1; with
 *                acc, buf[i] joins the maximum;
 *   window_max8: y[o] = (max over t < k of row[o * s + t]) ^ flip, o < n, n >= 1, s 1 or 2;
 *                reads only row[0 .. (n - 1) * s + k). */
void nn_pool_rows_max8_avx2(const uint8_t *x, size_t stride, size_t nrows, size_t n, uint8_t flip, int acc,
                            uint8_t *buf);
void nn_pool_rows_max8_avx512(const uint8_t *x, size_t stride, size_t nrows, size_t n, uint8_t flip, int acc,
                              uint8_t *buf);
void nn_pool_window_max8_avx2(const uint8_t *row, size_t k, size_t s, size_t n, uint8_t flip, uint8_t *y);
void nn_pool_window_max8_avx512(const uint8_t *row, size_t k, size_t s, size_t n, uint8_t flip, uint8_t *y);
#endif
#endif
