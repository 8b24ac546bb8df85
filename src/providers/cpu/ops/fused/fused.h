/* Kernels of the fused operators (domain "cort") that the level-2 optimizer (src/graph/fuse.c)
 * substitutes for decomposed subgraphs. float32 only: the optimizer only fuses float graphs. */
#ifndef CORT_CPU_FU_COMMON_H
#define CORT_CPU_FU_COMMON_H
#include <stddef.h>
#include "../../../../graph/op.h"

/* y = x * 0.5 * (1 + erf(x / sqrt(2))) over n floats; y may equal x. AVX-512 or AVX2 in one pass
 * (nn_gelu_avx512, nn_gelu_avx2), else fu_gelu_f32_chunks: erfc's argument, exp and the product as three
 * passes over 512-value chunks through the dispatched fu_vec / ew_simd kernels. */
void fu_gelu_f32(const float *x, float *y, size_t n);
void fu_gelu_f32_chunks(const float *x, float *y, size_t n);
/* Reference of the above (libm erff), for tests. */
void fu_gelu_f32_ref(const float *x, float *y, size_t n);

/* LayerNorm over contiguous rows of length c of t = x + skip + pre_bias (skip: same layout as x,
 * pre_bias: [c]; both may be NULL, pre_bias only with skip): y = (t - mean) / sqrt(var + eps) *
 * scale + bias (scale, bias may be NULL); var is the mean of squared deviations. */
void fu_layernorm_rows(const float *x, const float *skip, const float *pre_bias, float *y, size_t rows, size_t c,
                       const float *scale, const float *bias, float eps, cort_pool *pool);

extern const cort_op_def fu_op_gelu;          /* cort.Gelu(X, bias?) */
extern const cort_op_def fu_op_layernorm;     /* cort.LayerNorm(X, scale?, bias?, skip?, skip_bias?) epsilon */
extern const cort_op_def fu_op_fused_matmul;  /* cort.FusedMatMul(A, B, bias?, residual?) alpha, activation */
extern const cort_op_def fu_op_pwdw_conv;     /* cort.PwDwConv(X, Wp, Bp?, Wd, Bd?): 1x1 conv, then depthwise */

enum { FU_ACT_NONE = 0, FU_ACT_GELU = 1 };
#endif
