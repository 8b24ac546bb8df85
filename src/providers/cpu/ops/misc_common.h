/* Shared helpers of the 'misc' operator family (mi_*.c): output bookkeeping, scalar reads and the
 * op definitions each mi_*.c file exports (listed in op_table.c). */
#ifndef CORT_CPU_MI_COMMON_H
#define CORT_CPU_MI_COMMON_H
#include "../../../graph/op.h"

/* Whether output i exists in the node and is requested (not ""). */
static inline int mi_out_wanted(const cort_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_outputs && ctx->node->out_slot && ctx->node->out_slot[i] >= 0;
}
/* Input i if present (NULL for missing optional inputs or out of range). */
static inline cort_value *mi_in(const cort_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}
static inline const cort_tinfo *mi_tin(const cort_infer_ctx *ctx, size_t i) {
    return i < ctx->n_inputs && ctx->inputs[i].present ? &ctx->inputs[i] : NULL;
}

/* Reads a tensor of exactly one element (any rank) of an integer type as int64. */
cort_status *mi_scalar_i64(const cort_kernel_ctx *ctx, size_t i, const char *what, int64_t *out);
/* Reads a one-element float/double/f16/bf16/int tensor as double. */
cort_status *mi_scalar_f64(const cort_kernel_ctx *ctx, size_t i, const char *what, double *out);
/* Requires input i to be a tensor (not a sequence/optional); names it in the error. */
cort_status *mi_want_tensor(const cort_kernel_ctx *ctx, size_t i, const char *what);
/* Copies n elements between tensors of the same type (strings duplicated). */
cort_status *mi_copy_elems(cort_value *dst, size_t dst_off, const cort_value *src, size_t src_off, size_t n);

/* Op definitions, one per operator and opset range. */
extern const cort_op_def mi_op_rnn, mi_op_gru, mi_op_lstm;
extern const cort_op_def mi_op_sequence_empty, mi_op_sequence_construct, mi_op_sequence_at, mi_op_sequence_insert,
    mi_op_sequence_erase, mi_op_sequence_length, mi_op_split_to_sequence, mi_op_concat_from_sequence;
extern const cort_op_def mi_op_optional, mi_op_optional_has_element, mi_op_optional_get_element;
extern const cort_op_def mi_op_dft, mi_op_stft, mi_op_hann_window, mi_op_hamming_window, mi_op_blackman_window,
    mi_op_mel_weight_matrix;
extern const cort_op_def mi_op_random_normal, mi_op_random_uniform, mi_op_random_normal_like,
    mi_op_random_uniform_like, mi_op_multinomial, mi_op_bernoulli;
extern const cort_op_def mi_op_string_normalizer;
extern const cort_op_def mi_op_adagrad, mi_op_adam, mi_op_momentum;
#endif
