/* Operator definitions of the 'shape' family, declared for the files that define them; the provider lists them in op_table.c. */
#ifndef CORT_CPU_SH_OPS_H
#define CORT_CPU_SH_OPS_H
#include "../../../../graph/op.h"

/* ops/tensor/reshape.c: outputs are views of the input (no copy) */
extern const cort_op_def sh_op_reshape, sh_op_flatten, sh_op_squeeze, sh_op_unsqueeze, sh_op_identity;
/* ops/tensor/transpose.c */
extern const cort_op_def sh_op_transpose, sh_op_depth_to_space, sh_op_space_to_depth;
/* ops/tensor/concat_split.c */
extern const cort_op_def sh_op_concat, sh_op_split;
/* ops/tensor/slice_pad.c */
extern const cort_op_def sh_op_slice, sh_op_pad, sh_op_center_crop_pad;
/* ops/tensor/gather.c */
extern const cort_op_def sh_op_gather, sh_op_gather_elements, sh_op_gather_nd;
/* ops/tensor/scatter.c */
extern const cort_op_def sh_op_scatter, sh_op_scatter_elements, sh_op_scatter_nd;
/* ops/tensor/expand_tile.c */
extern const cort_op_def sh_op_expand, sh_op_tile;
/* ops/tensor/constant.c */
extern const cort_op_def sh_op_constant, sh_op_constant_of_shape, sh_op_shape, sh_op_size, sh_op_range,
    sh_op_eye_like, sh_op_one_hot;
/* ops/tensor/select.c */
extern const cort_op_def sh_op_non_zero, sh_op_compress, sh_op_trilu, sh_op_reverse_sequence;
#endif
