/* Winograd F(4x4, 3x3) and F(2x2, 3x3) convolution for 2-D 3x3 stride-1 dilation-1 ungrouped
 * float Convs, and the 1-D F(4, 3) for 3x1 and 1x3 ones (the same transforms along one axis: 6
 * products per 4 outputs instead of 12). Each 6x6 (4x4) input tile d becomes V = B^T d B, each 3x3 filter g becomes
 * U = G g G^T (once, at session creation), and the 36 (16) element-wise products summed over
 * channels are independent SGEMMs  M_xi[M, tiles] = U_xi[M, C] * V_xi[C, tiles];  Y = A^T M A
 * gives a 4x4 (2x2) output tile. F(4x4): 36 multiplies per 16 outputs instead of 144; F(2x2): 16
 * per 4 instead of 36, for maps too small for 4x4 tiles (7x7: 16 tiles of 2x2, 4 of 4x4). */
#ifndef CORT_CPU_NN_WINOGRAD_H
#define CORT_CPU_NN_WINOGRAD_H
#include "../ops/nn/conv.h"

typedef struct nn_wino_weights {
    size_t M, C;
    int    m;               /* output tile side: 4 (F(4x4, 3x3)) or 2 (F(2x2, 3x3)) */
    int    axis;            /* NN_WINO_2D, or the one axis of a 3x1 (NN_WINO_H) or 1x3 (NN_WINO_W) conv */
    size_t ne;              /* transformed elements: (m + 2)^2, or m + 2 along one axis */
    nn_gemm_packed u[36];   /* U_xi as packed gemm A operands (ne of them) */
} nn_wino_weights;

enum { NN_WINO_2D = 0, NN_WINO_H = 1, NN_WINO_W = 2 };

/* Whether s is a conv Winograd handles and is expected to beat im2col + gemm for: 0 (no), or the
 * output tile side to use (4 or 2; 4 along the axis of a 1-D one). */
int nn_wino_applies(const nn_conv_shape *s);
/* Which transform s's kernel takes (meaningful when nn_wino_geometry_ok): NN_WINO_2D for 3x3,
 * NN_WINO_H for 3x1, NN_WINO_W for 1x3. */
int nn_wino_axis(const nn_conv_shape *s);
/* Transforms and packs w[M, C, 3, 3] for output tiles of side m (4 or 2), or w[M, C, 3, 1] /
 * w[M, C, 1, 3] for axis NN_WINO_H / NN_WINO_W (m must be 4). */
cort_status *nn_wino_pack(const float *w, size_t M, size_t C, int m, int axis, nn_wino_weights *out);
/* The same with the packs spread over pool (may be NULL). */
cort_status *nn_wino_pack_par(cort_pool *pool, const float *w, size_t M, size_t C, int m, int axis,
                              nn_wino_weights *out);
void nn_wino_free(nn_wino_weights *w);
/* y = act(conv(x, w) + bias) for x[N, C, H, W] (s must satisfy the geometry of nn_wino_applies,
 * the profitability part aside). ctx may be NULL. */
cort_status *nn_wino_conv(cort_pool *pool, const nn_conv_shape *s, const float *x, const nn_wino_weights *w,
                          const float *bias, const nn_act *act, float *y, cort_kernel_ctx *ctx);
/* The geometry part of nn_wino_applies (for tests). */
int nn_wino_geometry_ok(const nn_conv_shape *s);
#endif
