/* Operator list of the 'shape' family (see registry.c): data movement and shape ops. The
 * implementations live in sh_*.c. */
#include "../../graph/op.h"
#include "ops/tensor/tensor_ops.h"

const cort_op_def *const cort_ops_shape[] = {
    &sh_op_reshape, &sh_op_flatten, &sh_op_squeeze, &sh_op_unsqueeze, &sh_op_identity,
    &sh_op_transpose, &sh_op_depth_to_space, &sh_op_space_to_depth,
    &sh_op_concat, &sh_op_split,
    &sh_op_slice, &sh_op_pad, &sh_op_center_crop_pad,
    &sh_op_gather, &sh_op_gather_elements, &sh_op_gather_nd,
    &sh_op_scatter, &sh_op_scatter_elements, &sh_op_scatter_nd,
    &sh_op_expand, &sh_op_tile,
    &sh_op_constant, &sh_op_constant_of_shape, &sh_op_shape, &sh_op_size, &sh_op_range, &sh_op_eye_like,
    &sh_op_one_hot,
    &sh_op_non_zero, &sh_op_compress, &sh_op_trilu, &sh_op_reverse_sequence,
    NULL
};
