/* Operator list of the 'elementwise' family (see registry.c). The kernels live in ew_*.c. */
#include "../../graph/op.h"
#include "ops/math/elementwise_ops.h"

#define EW_LIST_OP(var) &ew_op_##var,
const cort_op_def *const cort_ops_elementwise[] = {
    EW_OPS_ALL(EW_LIST_OP)
    NULL
};
