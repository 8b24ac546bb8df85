/* RotaryEmbedding row kernel: rotates the pairs of one head row by per-pair cos/sin (half pairs):
 *   split halves:  (x[i], x[i + half])      -> (c x1 - s x2, s x1 + c x2)
 *   interleaved:   (x[2i], x[2i + 1])       -> the same
 * and copies x[2 half, n) unchanged. y may not alias x. */
#ifndef CORT_CPU_KERNELS_ROPE_UKERNELS_H
#define CORT_CPU_KERNELS_ROPE_UKERNELS_H
#include <stddef.h>
#include "gemm_ukernels.h"   /* NN_HAVE_X86_UKERNELS */

typedef void (*nn_rope_row_fn)(const float *x, float *y, const float *c, const float *s, size_t half, size_t n,
                               int interleaved);

void nn_rope_row_generic(const float *x, float *y, const float *c, const float *s, size_t half, size_t n,
                         int interleaved);
#ifdef NN_HAVE_X86_UKERNELS
void nn_rope_row_avx2(const float *x, float *y, const float *c, const float *s, size_t half, size_t n,
                      int interleaved);
#endif
/* The row kernel of the ISA level in use (from cort_cpu_isa()). */
nn_rope_row_fn nn_rope_row(void);
#endif
