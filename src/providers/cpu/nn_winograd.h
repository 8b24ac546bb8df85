/* Winograd F(4x4, 3x3) convolution for 2-D 3x3 stride-1 dilation-1 ungrouped float Convs.
 * Each 6x6 input tile d becomes V = B^T d B, each 3x3 filter g becomes U = G g G^T (once, at
 * session creation), and the 36 element-wise products summed over channels are 36 independent
 * SGEMMs  M_xi[M, tiles] = U_xi[M, C] * V_xi[C, tiles];  Y = A^T M A gives a 4x4 output tile.
 * That is 36 multiplies per 16 outputs instead of 144 (4x fewer flops than im2col + gemm). */
#ifndef CORT_CPU_NN_WINOGRAD_H
#define CORT_CPU_NN_WINOGRAD_H
#include "nn_conv.h"

typedef struct nn_wino_weights {
    size_t M, C;
    nn_gemm_packed u[36];   /* U_xi as packed gemm A operands */
} nn_wino_weights;

/* Whether s is a conv Winograd handles and is expected to beat im2col + gemm for. */
int nn_wino_applies(const nn_conv_shape *s);
/* Transforms and packs w[M, C, 3, 3]. */
cort_status *nn_wino_pack(const float *w, size_t M, size_t C, nn_wino_weights *out);
/* The same with the 36 packs spread over pool (may be NULL). */
cort_status *nn_wino_pack_par(cort_pool *pool, const float *w, size_t M, size_t C, nn_wino_weights *out);
void nn_wino_free(nn_wino_weights *w);
/* y = act(conv(x, w) + bias) for x[N, C, H, W] (s must satisfy the geometry of nn_wino_applies,
 * the profitability part aside). ctx may be NULL. */
cort_status *nn_wino_conv(cort_pool *pool, const nn_conv_shape *s, const float *x, const nn_wino_weights *w,
                          const float *bias, const nn_act *act, float *y, cort_kernel_ctx *ctx);
/* The geometry part of nn_wino_applies (for tests). */
int nn_wino_geometry_ok(const nn_conv_shape *s);
#endif
