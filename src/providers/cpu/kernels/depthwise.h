/* Depthwise convolution (C == group, one input channel per group, any depth multiplier M/C),
 * split out of the Conv kernels: see kernels/depthwise.c. */
#ifndef CORT_CPU_NN_CONV_DEPTHWISE_H
#define CORT_CPU_NN_CONV_DEPTHWISE_H
#include "../ops/nn/conv.h"

/* y = depthwise_conv(x, w) + bias, act applied. kernel selects the ISA as nn_conv_f32 does (a
 * gemm kernel of one ISA selects the depthwise kernels of the same ISA; NULL = best). ctx (may
 * be NULL) provides per-run scratch for the channel-blocked path. Never fails. */
void nn_conv_depthwise_f32(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s, const float *x,
                           const float *w, const float *bias, const nn_act *act, float *y, cort_kernel_ctx *ctx);
/* Planes c0..c1-1 of a depthwise conv with one output channel per input channel (g a 2-D geometry
 * or 1-D), input planes x_ps floats apart and output planes y_ps apart (a band of rows inside
 * bigger planes: cort.PwDwConv), on the calling thread. Never fails. */
void nn_conv_depthwise_planes_f32(const nn_geom *g, size_t c0, size_t c1, const float *x, size_t x_ps, const float *w,
                                  const float *bias, const nn_act *act, float *y, size_t y_ps);
#endif
