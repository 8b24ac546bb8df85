/* Operator list of the 'fused' family (see registry.c): internal operators of domain "cort" that
 * only the level-2 optimizer (src/graph/fuse.c) creates. */
#include "ops/fused/fused.h"

const cort_op_def *const cort_ops_fused[] = {
    &fu_op_gelu,
    &fu_op_layernorm,
    &fu_op_fused_matmul,
    &fu_op_pwdw_conv,
    NULL
};
