/* Operator list of the 'reduce' family (see registry.c). The kernels live in rd_*.c. */
#include "ops/reduce/reduce_ops.h"

const cort_op_def *const cort_ops_reduce[] = {
    &rd_op_reduce_sum, &rd_op_reduce_mean, &rd_op_reduce_max, &rd_op_reduce_min, &rd_op_reduce_prod,
    &rd_op_reduce_l1, &rd_op_reduce_l2, &rd_op_reduce_log_sum, &rd_op_reduce_log_sum_exp, &rd_op_reduce_sum_square,
    &rd_op_softmax, &rd_op_log_softmax, &rd_op_hardmax,
    &rd_op_argmax, &rd_op_argmin, &rd_op_topk, &rd_op_cumsum,
    &rd_op_resize, &rd_op_upsample, &rd_op_einsum,
    &rd_op_unique, &rd_op_det, &rd_op_nms, &rd_op_roi_align, &rd_op_grid_sample,
    &rd_op_nll_loss, &rd_op_sce_loss,
    NULL
};
