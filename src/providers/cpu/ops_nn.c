/* Operator list of the 'nn' family (see registry.c). The definitions live in nn_*.c. */
#include "../../graph/op.h"

extern const cort_op_def nn_op_conv, nn_op_conv_transpose, nn_op_conv_integer, nn_op_qlinear_conv;
extern const cort_op_def nn_op_max_pool, nn_op_average_pool, nn_op_lp_pool, nn_op_global_max_pool,
    nn_op_global_average_pool, nn_op_global_lp_pool, nn_op_max_roi_pool, nn_op_max_unpool;
extern const cort_op_def nn_op_batch_norm, nn_op_instance_norm, nn_op_group_norm, nn_op_layer_norm, nn_op_lp_norm,
    nn_op_mvn, nn_op_lrn;
extern const cort_op_def nn_op_matmul, nn_op_gemm, nn_op_matmul_integer, nn_op_qlinear_matmul;
extern const cort_op_def nn_op_quantize_linear, nn_op_dequantize_linear, nn_op_dynamic_quantize_linear;
extern const cort_op_def nn_op_dropout;

const cort_op_def *const cort_ops_nn[] = {
    &nn_op_conv, &nn_op_conv_transpose, &nn_op_conv_integer, &nn_op_qlinear_conv,
    &nn_op_max_pool, &nn_op_average_pool, &nn_op_lp_pool, &nn_op_global_max_pool, &nn_op_global_average_pool,
    &nn_op_global_lp_pool, &nn_op_max_roi_pool, &nn_op_max_unpool,
    &nn_op_batch_norm, &nn_op_instance_norm, &nn_op_group_norm, &nn_op_layer_norm, &nn_op_lp_norm, &nn_op_mvn,
    &nn_op_lrn,
    &nn_op_matmul, &nn_op_gemm, &nn_op_matmul_integer, &nn_op_qlinear_matmul,
    &nn_op_quantize_linear, &nn_op_dequantize_linear, &nn_op_dynamic_quantize_linear,
    &nn_op_dropout,
    NULL
};
