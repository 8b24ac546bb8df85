/* Operator list of the 'nn' family (see registry.c). */
#include "../../graph/op.h"

const cort_op_def *const cort_ops_nn[] = {
    NULL
};
