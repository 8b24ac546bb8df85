/* Softmax / LogSoftmax / Hardmax kernels, exposed for the unit test (fast vs reference). */
#ifndef CORT_CPU_RD_SOFTMAX_H
#define CORT_CPU_RD_SOFTMAX_H
#include "../ops_common.h"

typedef enum rd_softmax_kind { RD_SOFTMAX, RD_LOGSOFTMAX, RD_HARDMAX } rd_softmax_kind;

/* x, y: [outer, n, inner] float32, normalized along n. fast = 0 runs the simple reference loops. */
void rd_softmax_f32(rd_softmax_kind kind, const float *x, float *y, size_t outer, size_t n, size_t inner,
                    cort_pool *pool, int fast);
#endif
