/* Float pooling kernels over NC[D]HW planes with geometry normalized to 3 spatial dims. */
#ifndef CORT_CPU_NN_POOL_H
#define CORT_CPU_NN_POOL_H
#include "nn_common.h"

enum { NN_POOL_MAX = 0, NN_POOL_AVG = 1, NN_POOL_LP = 2, NN_POOL_KINDS = 3 };

typedef struct nn_pool_params {
    int   kind;
    int   count_include_pad;   /* AVG: divide by the window clipped to the padded input, else by valid elements */
    float p;                   /* LP */
    int   storage_order;       /* MAX indices: 0 row-major, 1 column-major spatial offsets */
} nn_pool_params;

/* planes = N*C; y has planes*out elements; indices (MAX only, may be NULL) get the flat index of
 * each maximum in x (plane offset included, as ONNX MaxPool's Indices output). */
void nn_pool_f32(cort_pool *pool, const nn_pool_params *p, const nn_geom *g, size_t planes, const float *x, float *y,
                 int64_t *indices);
/* MaxPool of uint8 or (is_signed) int8 planes without indices, exact (bytes compared as values);
 * returns 0 (nothing done) when a row is wider than the kernel's row buffer. */
int nn_pool_max8(cort_pool *pool, const nn_geom *g, size_t planes, int is_signed, const void *x, void *y);
void nn_pool_f32_ref(const nn_pool_params *p, const nn_geom *g, size_t planes, const float *x, float *y,
                     int64_t *indices);
#endif
