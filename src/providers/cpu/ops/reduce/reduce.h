/* Reduce* kernels (ReduceSum, ReduceMean, ...): exposed for the unit test, which checks the float32
 * fast path against the type-generic reference path. */
#ifndef CORT_CPU_RD_REDUCE_H
#define CORT_CPU_RD_REDUCE_H
#include "../ops_common.h"

typedef enum rd_reduce_kind {
    RD_SUM, RD_MEAN, RD_MAX, RD_MIN, RD_PROD, RD_L1, RD_L2, RD_LOGSUM, RD_LOGSUMEXP, RD_SUMSQ
} rd_reduce_kind;

/* Reduces x over the axes flagged in `reduce` (rank entries) into y, whose element count is the
 * product of the kept dims. fast != 0 selects the float32 fast path (x->type must be float);
 * otherwise the generic path runs for any numeric type. pool may be NULL. */
void rd_reduce_compute(rd_reduce_kind kind, const cort_value *x, const uint8_t *reduce, cort_value *y,
                       cort_pool *pool, int fast);
#endif
