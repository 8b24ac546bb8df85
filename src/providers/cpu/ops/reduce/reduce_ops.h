/* Operator definitions of the 'reduce' family, declared for the files that define them; the provider lists them in op_table.c. */
#ifndef CORT_CPU_RD_OPS_H
#define CORT_CPU_RD_OPS_H
#include "../../../../graph/op.h"

extern const cort_op_def rd_op_reduce_sum, rd_op_reduce_mean, rd_op_reduce_max, rd_op_reduce_min,
    rd_op_reduce_prod, rd_op_reduce_l1, rd_op_reduce_l2, rd_op_reduce_log_sum, rd_op_reduce_log_sum_exp,
    rd_op_reduce_sum_square;
extern const cort_op_def rd_op_argmax, rd_op_argmin;
extern const cort_op_def rd_op_topk;
extern const cort_op_def rd_op_cumsum;
extern const cort_op_def rd_op_softmax, rd_op_log_softmax, rd_op_hardmax;
extern const cort_op_def rd_op_einsum;
extern const cort_op_def rd_op_resize, rd_op_upsample;
extern const cort_op_def rd_op_unique;
extern const cort_op_def rd_op_det;
extern const cort_op_def rd_op_nms;
extern const cort_op_def rd_op_roi_align;
extern const cort_op_def rd_op_grid_sample;
extern const cort_op_def rd_op_nll_loss, rd_op_sce_loss;
#endif
