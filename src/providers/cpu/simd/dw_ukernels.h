/* Depthwise convolution row kernels: y[ow] = bias + sum_t w[t] * rows[t][ow*sw + offs[t]] for
 * ow in [0, OW), where input columns outside [0, IW) count as zero (padding); then act (0 none,
 * 1 relu, 2 clip(lo, hi), 3 leaky relu(lo)) is applied before the store. */
#ifndef CORT_CPU_SIMD_DW_UKERNELS_H
#define CORT_CPU_SIMD_DW_UKERNELS_H
#include <stdint.h>
#include "gemm_ukernels.h"

#ifdef NN_HAVE_X86_UKERNELS
typedef struct nn_dw_act { int act; float lo, hi; } nn_dw_act;
void nn_dw_row_avx512(float *y, int64_t OW, float bias, const float *const *rows, const float *w, const int64_t *offs,
                      int ntaps, int64_t IW, int64_t sw, const nn_dw_act *act);
/* Whole output plane of a KxK (K = 3 or 5), dilation 1, stride sw (1 or 2) depthwise conv with pads pt
 * (top) and pl (left); bottom/right padding follows from the sizes. */
void nn_dw_plane_avx512(int K, const float *x, int64_t IH, int64_t IW, const float *w, float bias, float *y,
                        int64_t OH, int64_t OW, int64_t sw, int64_t pt, int64_t pl, const nn_dw_act *act);
void nn_dw_row_avx2(float *y, int64_t OW, float bias, const float *const *rows, const float *w, const int64_t *offs,
                    int ntaps, int64_t IW, int64_t sw, const nn_dw_act *act);
#endif
#endif
