/* Row kernels of attention's decode path (one or two query rows per head, where a GEMM tile would
 * be mostly empty): K and V rows are read in place once per KV head and applied to every query
 * row of the head group while in registers.
 *   dots:  out[r * ldo] = sum_d q[r * ldq + d] * k[d]           for r < nq (one key row k)
 *   axpys: y[r * ldy + d] += p[r * ldp] * v[d], d < n           for r < nq (one value row v)
 * nq is at most NN_ATTN_MAX_ROWS. And the row steps around the GEMM path (plain -O2 leaves loops
 * of unknown length scalar):
 *   scale: y[i] = x[i] * s       (y may be x)
 *   add:   y[i] += x[i]          (a float attention mask) */
#ifndef CORT_CPU_KERNELS_ATTN_UKERNELS_H
#define CORT_CPU_KERNELS_ATTN_UKERNELS_H
#include <stddef.h>
#include "gemm_ukernels.h"   /* NN_HAVE_X86_UKERNELS */

#define NN_ATTN_MAX_ROWS 8

typedef struct nn_attn_kernels {
    void (*dots)(const float *k, const float *q, size_t ldq, size_t nq, size_t n, float *out, size_t ldo);
    void (*axpys)(const float *v, const float *p, size_t ldp, size_t nq, size_t n, float *y, size_t ldy);
    void (*scale)(const float *x, float *y, size_t n, float s);
    void (*add)(const float *x, float *y, size_t n);
} nn_attn_kernels;

void nn_attn_dots_generic(const float *k, const float *q, size_t ldq, size_t nq, size_t n, float *out, size_t ldo);
void nn_attn_axpys_generic(const float *v, const float *p, size_t ldp, size_t nq, size_t n, float *y, size_t ldy);
void nn_attn_scale_generic(const float *x, float *y, size_t n, float s);
void nn_attn_add_generic(const float *x, float *y, size_t n);
#ifdef NN_HAVE_X86_UKERNELS
void nn_attn_scale_avx2(const float *x, float *y, size_t n, float s);
void nn_attn_add_avx2(const float *x, float *y, size_t n);
void nn_attn_dots_avx2(const float *k, const float *q, size_t ldq, size_t nq, size_t n, float *out, size_t ldo);
void nn_attn_axpys_avx2(const float *v, const float *p, size_t ldp, size_t nq, size_t n, float *y, size_t ldy);
#endif
/* The kernels of the ISA level in use (from cort_cpu_isa(), never from the CPU). */
const nn_attn_kernels *nn_attn_best(void);
#endif
