/* Operator list of the 'shape' family (see registry.c). */
#include "../../graph/op.h"

const cort_op_def *const cort_ops_shape[] = {
    NULL
};
