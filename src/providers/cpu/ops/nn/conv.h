/* Float convolution kernels (shared by Conv, ConvTranspose, and tests).
 * Layout NC[D]HW, geometry normalized to 3 spatial dims (nn_geom). */
#ifndef CORT_CPU_NN_CONV_H
#define CORT_CPU_NN_CONV_H
#include "nn_common.h"
#include "../../kernels/gemm.h"

typedef struct nn_conv_shape {
    size_t  N, C, M, group;   /* batch, input channels, output channels, groups */
    nn_geom g;                /* Conv: in = X spatial, out = Y spatial. ConvTranspose: in = X, out = Y. */
} nn_conv_shape;

/* The attributes of Conv, ConvTranspose, ConvInteger and QLinearConv (output_* only for ConvTranspose). */
typedef struct nn_conv_attrs {
    nn_window w;
    int64_t   group;
    int64_t   output_padding[NN_MAX_SPATIAL];
    int64_t   output_shape[NN_MAX_SPATIAL + 2];
    size_t    n_output_shape;
} nn_conv_attrs;
cort_status *nn_conv_attrs_parse(const cort_node *node, nn_conv_attrs *a);
/* Output type and shape of a (non-transposed) conv whose X is input 0 and W input wi. */
cort_status *nn_conv_infer(cort_infer_ctx *ctx, const nn_conv_attrs *a, size_t wi, cort_type out_type);
/* Run-time validation of X (input xi) and W (input wi) of a non-transposed conv: its shape and Y's dims. */
cort_status *nn_conv_prepare(cort_kernel_ctx *ctx, const nn_conv_attrs *a, size_t xi, size_t wi, nn_conv_shape *cs,
                             int64_t *ydims);

/* Conv: x[N,C,in], w[M,C/group,k], bias[M] or NULL -> y[N,M,out].
 * Uses the direct depthwise kernel when C/group == 1, else packed SGEMM with implicit im2col.
 * kernel: gemm micro-kernel (NULL = best). act: fused activation epilogue or NULL. */
cort_status *nn_conv_f32(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s, const float *x,
                         const float *w, const float *bias, const nn_act *act, float *y);
/* As nn_conv_f32 with the weights of each group prepacked (wpack[group], from nn_conv_pack_weights;
 * may be NULL) and ctx for scratch memory and cancellation (may be NULL). */
cort_status *nn_conv_f32_opt(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s, const float *x,
                             const float *w, const float *bias, const nn_act *act, float *y,
                             const nn_gemm_packed *wpack, cort_kernel_ctx *ctx);
/* As nn_conv_f32_opt, plus y += sum (an N x M x out tensor, y's shape) before act: a fused residual
 * Add, applied in the gemm/indirect epilogues or, for depthwise, in one pass after. */
cort_status *nn_conv_f32_sum(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s, const float *x,
                             const float *w, const float *bias, const float *sum, const nn_act *act, float *y,
                             const nn_gemm_packed *wpack, cort_kernel_ctx *ctx);
/* Whether nn_conv_f32_sum may be called with y == sum (the residual overwritten by the output):
 * the gemm paths, which then accumulate onto it; not the depthwise or indirect ones. */
int nn_conv_sum_in_place(const nn_conv_shape *s, const nn_gemm_packed *wpack);
/* y = act(y + sum) over n floats (parallel over 4096-float chunks). */
void nn_add_act(cort_pool *pool, float *y, const float *sum, size_t n, const nn_act *act);
/* Packs Conv weights w[M, Kg] (Kg = C/group * kernel size) per group into out[group] for the best
 * kernel. Returns NULL without packing (out untouched) for depthwise convs, which do not use gemm. */
cort_status *nn_conv_pack_weights(const float *w, size_t M, size_t Kg, size_t group, nn_gemm_packed *out);
cort_status *nn_conv_pack_weights_par(cort_pool *pool, const float *w, size_t M, size_t Kg, size_t group,
                                      nn_gemm_packed *out);   /* packing spread over pool (may be NULL) */
int nn_conv_uses_gemm(size_t C, size_t group);
/* The indirect-GEMM path (kernels/conv_indirect.c): whether it takes conv s with weights prepacked in
 * wpack (one group, strides 1 or 2, not a stride-1 1x1, an edge-capable kernel), and the conv. */
int nn_conv_indirect_applies(const nn_conv_shape *s, const nn_gemm_packed *wpack);
cort_status *nn_conv_indirect_f32(cort_pool *pool, const nn_conv_shape *s, const float *x, const nn_gemm_packed *wpack,
                                  const float *bias, const float *sum, const nn_act *act, float *y,
                                  cort_kernel_ctx *ctx);
void nn_conv_f32_ref(const nn_conv_shape *s, const float *x, const float *w, const float *bias, float *y);

/* ConvTranspose: x[N,C,in], w[C,M/group,k], bias[M] or NULL -> y[N,M,out]. ctx (may be NULL)
 * provides the scratch. */
cort_status *nn_convtranspose_f32(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s,
                                  const float *x, const float *w, const float *bias, const nn_act *act, float *y,
                                  cort_kernel_ctx *ctx);
void nn_convtranspose_f32_ref(const nn_conv_shape *s, const float *x, const float *w, const float *bias, float *y);
/* Small output planes computed transposed (kernels/conv_small.c): whether that beats the usual
 * orientation for kernel k, W^T packed once (out->rows = M), and the conv (one group, 2-D). */
int nn_conv_small_prefers(const nn_conv_shape *s, const nn_gemm_kernel *k);
cort_status *nn_conv_small_pack(const float *w, size_t M, size_t K, nn_gemm_packed *out);
cort_status *nn_conv_small_pack_par(cort_pool *pool, const float *w, size_t M, size_t K, nn_gemm_packed *out);
cort_status *nn_conv_small_f32(cort_pool *pool, const nn_conv_shape *s, const float *x, const float *w,
                               const nn_gemm_packed *wt, const float *bias, const float *sum, const nn_act *act,
                               float *y, cort_kernel_ctx *ctx);
/* Whether nn_conv_small_f32 may be called with y == sum (each tile reads its residual before
 * storing over it: the AVX-512 transposed kernel). */
int nn_conv_small_sum_in_place(const nn_gemm_packed *wt, const nn_act *act);
#endif
