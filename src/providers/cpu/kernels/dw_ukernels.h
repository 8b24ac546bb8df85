/* Depthwise convolution row kernels: y[ow] = bias + sum_t w[t] * rows[t][ow*sw + offs[t]] for
 * ow in [0, OW), where input columns outside [0, IW) count as zero (padding); then act (0 none,
 * CORT_ACT_RELU, _CLIP(lo, hi) or _LEAKY_RELU(lo) of core/act.h) is applied before the
 * store. The channel-blocked kernel takes any CORT_ACT_* (lo/hi = alpha/beta). */
#ifndef CORT_CPU_SIMD_DW_UKERNELS_H
#define CORT_CPU_SIMD_DW_UKERNELS_H
#include <stdint.h>
#include "gemm_ukernels.h"

typedef struct nn_dw_act { int act; float lo, hi; } nn_dw_act;
typedef void (*nn_dw_row_fn)(float *y, int64_t OW, float bias, const float *const *rows, const float *w,
                             const int64_t *offs, int ntaps, int64_t IW, int64_t sw, const nn_dw_act *act);
#ifdef NN_HAVE_X86_UKERNELS
void nn_dw_row_avx512(float *y, int64_t OW, float bias, const float *const *rows, const float *w, const int64_t *offs,
                      int ntaps, int64_t IW, int64_t sw, const nn_dw_act *act);
/* Whole output plane of a KxK (K = 3 or 5), dilation 1, stride sw (1 or 2) depthwise conv with pads pt
 * (top) and pl (left); bottom/right padding follows from the sizes. prefetch (3x3): fetch the input
 * rows of the next output row meanwhile (only pays when the input streams from memory). */
void nn_dw_plane_avx512(int K, const float *x, int64_t IH, int64_t IW, const float *w, float bias, float *y,
                        int64_t OH, int64_t OW, int64_t sw, int64_t pt, int64_t pl, const nn_dw_act *act,
                        int prefetch);
/* Channel-blocked KxK (K = 3 or 5), stride S (1 or 2), dilation 1 depthwise conv of nc <= 16
 * channels: planes x[c * xcs + IH*IW] -> output rows [oh0, oh1) of y[c * ycs + OH*OW], weights
 * w[nc][K*K], bias[nc] or NULL, pads pt/pl (bottom/right follow from the sizes). The rows run in
 * bands of at most HB output rows through scratch: nn_dw_cb_scratch_floats(K, S, HB, OW) floats
 * (no alignment needed). fresh = 1 on the first use of scratch with this geometry (zeroes the
 * left/right padding border, which later calls with the same geometry and HB leave intact). */
size_t nn_dw_cb_scratch_floats(int K, int S, int64_t HB, int64_t OW);
void nn_dw_cb_avx512(int K, int S, const float *x, int64_t xcs, int64_t IH, int64_t IW, int64_t pt, int64_t pl,
                     const float *w, const float *bias, int nc, float *y, int64_t ycs, int64_t OW, int64_t oh0,
                     int64_t oh1, int64_t HB, const nn_dw_act *act, float *scratch, int fresh);
/* The channel-blocked kernel above with 8 channels in the lanes (nc <= 8) and its scratch
 * (nn_dw_cb8_scratch_floats floats). */
size_t nn_dw_cb8_scratch_floats(int K, int S, int64_t HB, int64_t OW);
void nn_dw_cb_avx2(int K, int S, const float *x, int64_t xcs, int64_t IH, int64_t IW, int64_t pt, int64_t pl,
                   const float *w, const float *bias, int nc, float *y, int64_t ycs, int64_t OW, int64_t oh0,
                   int64_t oh1, int64_t HB, const nn_dw_act *act, float *scratch, int fresh);
void nn_dw_row_avx2(float *y, int64_t OW, float bias, const float *const *rows, const float *w, const int64_t *offs,
                    int ntaps, int64_t IW, int64_t sw, const nn_dw_act *act);
#endif
#endif
