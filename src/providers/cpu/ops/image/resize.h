/* Resize / Upsample internals, exposed for the unit test (separable fast path vs direct reference). */
#ifndef CORT_CPU_RD_RESIZE_H
#define CORT_CPU_RD_RESIZE_H
#include "../ops_common.h"

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum { RS_HALF_PIXEL, RS_ASYMMETRIC, RS_PYTORCH_HALF_PIXEL, RS_ALIGN_CORNERS, RS_TF_CROP_AND_RESIZE,
       RS_HALF_PIXEL_SYMMETRIC, RS_TF_HALF_PIXEL_FOR_NN };
enum { RS_ROUND_PREFER_FLOOR, RS_ROUND_PREFER_CEIL, RS_FLOOR, RS_CEIL, RS_SIMPLE };

typedef struct rd_resize_params {
    int mode, ctm, nearest_mode, exclude_outside, antialias;
    double cubic_a, extrapolation;
    size_t rank;
    int64_t in[CORT_MAX_RANK], out[CORT_MAX_RANK];
    double scale[CORT_MAX_RANK];
    double roi0[CORT_MAX_RANK], roi1[CORT_MAX_RANK];
} rd_resize_params;

/* Resizes float32 x (shape p->in) into y (shape p->out). fast = 0: direct N-D reference evaluation
 * (tensor product of the 1-D weights at every output point). */
cort_status *rd_resize_f32(const rd_resize_params *p, const float *x, float *y, cort_pool *pool, int fast);
#endif
