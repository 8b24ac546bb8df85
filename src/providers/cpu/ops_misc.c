/* Operator list of the 'misc' family (see registry.c): recurrent nets, sequences and optionals,
 * signal processing, random generators, StringNormalizer and the preview training optimizers. */
#include "ops/misc_common.h"

const cort_op_def *const cort_ops_misc[] = {
    &mi_op_rnn, &mi_op_gru, &mi_op_lstm,
    &mi_op_sequence_empty, &mi_op_sequence_construct, &mi_op_sequence_at, &mi_op_sequence_insert,
    &mi_op_sequence_erase, &mi_op_sequence_length, &mi_op_split_to_sequence, &mi_op_concat_from_sequence,
    &mi_op_optional, &mi_op_optional_has_element, &mi_op_optional_get_element,
    &mi_op_dft, &mi_op_stft, &mi_op_hann_window, &mi_op_hamming_window, &mi_op_blackman_window,
    &mi_op_mel_weight_matrix,
    &mi_op_random_normal, &mi_op_random_uniform, &mi_op_random_normal_like, &mi_op_random_uniform_like,
    &mi_op_multinomial, &mi_op_bernoulli,
    &mi_op_string_normalizer,
    &mi_op_adagrad, &mi_op_adam, &mi_op_momentum,
    NULL
};
