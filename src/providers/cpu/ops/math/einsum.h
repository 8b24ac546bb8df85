/* Einsum internals, exposed for the unit test (batched-GEMM path vs naive loops). */
#ifndef CORT_CPU_RD_EINSUM_H
#define CORT_CPU_RD_EINSUM_H
#include "../ops_common.h"

#define RD_EINSUM_MAX_INPUTS 16
#define RD_EINSUM_MAX_LABELS (52 + CORT_MAX_RANK)

/* A parsed equation bound to concrete input shapes. Labels: 0..51 letters, 52.. ellipsis dims. */
typedef struct rd_einsum_plan {
    size_t n_in;
    size_t in_rank[RD_EINSUM_MAX_INPUTS];
    int in_label[RD_EINSUM_MAX_INPUTS][CORT_MAX_RANK];
    int64_t in_dims[RD_EINSUM_MAX_INPUTS][CORT_MAX_RANK];
    size_t out_rank;
    int out_label[CORT_MAX_RANK];
    int64_t out_dims[CORT_MAX_RANK];
    int64_t size[RD_EINSUM_MAX_LABELS];          /* -1: label unused */
} rd_einsum_plan;

/* Parses `eq` against the input shapes. err (size errlen) receives a message on failure (returns 0). */
int rd_einsum_parse(const char *eq, size_t n_in, const int64_t *const *dims, const size_t *ranks, rd_einsum_plan *p,
                    char *err, size_t errlen);
/* float32 evaluation; fast = 0 forces the naive loops. y has p->out_dims. */
cort_status *rd_einsum_f32(const rd_einsum_plan *p, const float *const *x, float *y, cort_pool *pool, int fast,
                          cort_kernel_ctx *ctx);   /* ctx: scratch (may be NULL) */
#endif
