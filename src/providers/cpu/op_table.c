/* The CPU provider's operator table: every op definition of src/providers/cpu/ops/, in one array
 * sorted by (domain, op type, first opset version), so a lookup is a binary search and a reader
 * finds every op the provider has in one place. tests/test_op_table.c checks the order and that
 * version ranges of one op never overlap. */
#include <string.h>
#include "../../graph/op.h"

extern const cort_op_def ew_op_abs;
extern const cort_op_def ew_op_acos;
extern const cort_op_def ew_op_acosh;
extern const cort_op_def ew_op_add;
extern const cort_op_def img_op_affine_grid;
extern const cort_op_def ew_op_and;
extern const cort_op_def rd_op_argmax;
extern const cort_op_def rd_op_argmin;
extern const cort_op_def ew_op_asin;
extern const cort_op_def ew_op_asinh;
extern const cort_op_def ew_op_atan;
extern const cort_op_def ew_op_atanh;
extern const cort_op_def nn_op_attention;
extern const cort_op_def nn_op_flex_attention;
extern const cort_op_def nn_op_causal_conv_with_state;
extern const cort_op_def nn_op_linear_attention;
extern const cort_op_def nn_op_gelu;
extern const cort_op_def nn_op_rms_norm;
extern const cort_op_def nn_op_rotary_embedding;
extern const cort_op_def nn_op_swiglu;
extern const cort_op_def nn_op_swish;
extern const cort_op_def nn_op_average_pool;
extern const cort_op_def nn_op_batch_norm;
extern const cort_op_def mi_op_bernoulli;
extern const cort_op_def sh_op_bitcast;
extern const cort_op_def ew_op_bitshift;
extern const cort_op_def ew_op_bitwise_and;
extern const cort_op_def ew_op_bitwise_not;
extern const cort_op_def ew_op_bitwise_or;
extern const cort_op_def ew_op_bitwise_xor;
extern const cort_op_def mi_op_blackman_window;
extern const cort_op_def ew_op_cast;
extern const cort_op_def ew_op_cast_like;
extern const cort_op_def ew_op_ceil;
extern const cort_op_def ew_op_celu;
extern const cort_op_def sh_op_center_crop_pad;
extern const cort_op_def ew_op_clip;
extern const cort_op_def img_op_col2im;
extern const cort_op_def sh_op_compress;
extern const cort_op_def sh_op_concat;
extern const cort_op_def mi_op_concat_from_sequence;
extern const cort_op_def sh_op_constant;
extern const cort_op_def sh_op_constant_of_shape;
extern const cort_op_def nn_op_conv;
extern const cort_op_def nn_op_conv_integer;
extern const cort_op_def nn_op_conv_transpose;
extern const cort_op_def ew_op_cos;
extern const cort_op_def ew_op_cosh;
extern const cort_op_def math_op_cumprod;
extern const cort_op_def rd_op_cumsum;
extern const cort_op_def mi_op_dft;
extern const cort_op_def nn_op_deform_conv;
extern const cort_op_def sh_op_depth_to_space;
extern const cort_op_def nn_op_dequantize_linear;
extern const cort_op_def rd_op_det;
extern const cort_op_def ew_op_div;
extern const cort_op_def nn_op_dropout;
extern const cort_op_def nn_op_dynamic_quantize_linear;
extern const cort_op_def rd_op_einsum;
extern const cort_op_def ew_op_elu;
extern const cort_op_def ew_op_equal;
extern const cort_op_def ew_op_erf;
extern const cort_op_def ew_op_exp;
extern const cort_op_def sh_op_expand;
extern const cort_op_def sh_op_eye_like;
extern const cort_op_def sh_op_flatten;
extern const cort_op_def ew_op_floor;
extern const cort_op_def mi_op_gru;
extern const cort_op_def sh_op_gather;
extern const cort_op_def sh_op_gather_elements;
extern const cort_op_def sh_op_gather_nd;
extern const cort_op_def nn_op_gemm;
extern const cort_op_def nn_op_global_average_pool;
extern const cort_op_def nn_op_global_lp_pool;
extern const cort_op_def nn_op_global_max_pool;
extern const cort_op_def ew_op_greater;
extern const cort_op_def ew_op_greater_or_equal;
extern const cort_op_def rd_op_grid_sample;
extern const cort_op_def nn_op_group_norm;
extern const cort_op_def mi_op_hamming_window;
extern const cort_op_def mi_op_hann_window;
extern const cort_op_def ew_op_hard_sigmoid;
extern const cort_op_def ew_op_hard_swish;
extern const cort_op_def rd_op_hardmax;
extern const cort_op_def sh_op_identity;
extern const cort_op_def ctl_op_if;
extern const cort_op_def img_op_image_decoder;
extern const cort_op_def nn_op_instance_norm;
extern const cort_op_def ew_op_isinf;
extern const cort_op_def ew_op_isnan;
extern const cort_op_def nn_op_lrn;
extern const cort_op_def mi_op_lstm;
extern const cort_op_def nn_op_layer_norm;
extern const cort_op_def ew_op_leaky_relu;
extern const cort_op_def ew_op_less;
extern const cort_op_def ew_op_less_or_equal;
extern const cort_op_def ew_op_log;
extern const cort_op_def rd_op_log_softmax;
extern const cort_op_def ctl_op_loop;
extern const cort_op_def nn_op_lp_norm;
extern const cort_op_def nn_op_lp_pool;
extern const cort_op_def nn_op_matmul;
extern const cort_op_def nn_op_matmul_integer;
extern const cort_op_def ew_op_max;
extern const cort_op_def nn_op_max_pool;
extern const cort_op_def nn_op_max_roi_pool;
extern const cort_op_def nn_op_max_unpool;
extern const cort_op_def ew_op_mean;
extern const cort_op_def nn_op_mvn;
extern const cort_op_def mi_op_mel_weight_matrix;
extern const cort_op_def ew_op_min;
extern const cort_op_def ew_op_mish;
extern const cort_op_def ew_op_mod;
extern const cort_op_def ew_op_mul;
extern const cort_op_def mi_op_multinomial;
extern const cort_op_def ew_op_neg;
extern const cort_op_def rd_op_nll_loss;
extern const cort_op_def rd_op_nms;
extern const cort_op_def sh_op_non_zero;
extern const cort_op_def ew_op_not;
extern const cort_op_def sh_op_one_hot;
extern const cort_op_def mi_op_optional;
extern const cort_op_def mi_op_optional_get_element;
extern const cort_op_def mi_op_optional_has_element;
extern const cort_op_def ew_op_or;
extern const cort_op_def ew_op_prelu;
extern const cort_op_def sh_op_pad;
extern const cort_op_def ew_op_pow;
extern const cort_op_def nn_op_qlinear_conv;
extern const cort_op_def nn_op_qlinear_matmul;
extern const cort_op_def nn_op_quantize_linear;
extern const cort_op_def mi_op_rnn;
extern const cort_op_def mi_op_random_normal;
extern const cort_op_def mi_op_random_normal_like;
extern const cort_op_def mi_op_random_uniform;
extern const cort_op_def mi_op_random_uniform_like;
extern const cort_op_def sh_op_range;
extern const cort_op_def ew_op_reciprocal;
extern const cort_op_def rd_op_reduce_l1;
extern const cort_op_def rd_op_reduce_l2;
extern const cort_op_def rd_op_reduce_log_sum;
extern const cort_op_def rd_op_reduce_log_sum_exp;
extern const cort_op_def rd_op_reduce_max;
extern const cort_op_def rd_op_reduce_mean;
extern const cort_op_def rd_op_reduce_min;
extern const cort_op_def rd_op_reduce_prod;
extern const cort_op_def rd_op_reduce_sum;
extern const cort_op_def rd_op_reduce_sum_square;
extern const cort_op_def txt_op_regex_full_match;
extern const cort_op_def ew_op_relu;
extern const cort_op_def sh_op_reshape;
extern const cort_op_def rd_op_resize;
extern const cort_op_def sh_op_reverse_sequence;
extern const cort_op_def rd_op_roi_align;
extern const cort_op_def ew_op_round;
extern const cort_op_def mi_op_stft;
extern const cort_op_def ctl_op_scan;
extern const cort_op_def sh_op_scatter;
extern const cort_op_def sh_op_scatter_elements;
extern const cort_op_def sh_op_scatter_nd;
extern const cort_op_def ew_op_selu;
extern const cort_op_def mi_op_sequence_at;
extern const cort_op_def mi_op_sequence_construct;
extern const cort_op_def mi_op_sequence_empty;
extern const cort_op_def mi_op_sequence_erase;
extern const cort_op_def mi_op_sequence_insert;
extern const cort_op_def mi_op_sequence_length;
extern const cort_op_def ctl_op_sequence_map;
extern const cort_op_def sh_op_shape;
extern const cort_op_def ew_op_shrink;
extern const cort_op_def ew_op_sigmoid;
extern const cort_op_def ew_op_sign;
extern const cort_op_def ew_op_sin;
extern const cort_op_def ew_op_sinh;
extern const cort_op_def sh_op_size;
extern const cort_op_def sh_op_slice;
extern const cort_op_def rd_op_softmax;
extern const cort_op_def rd_op_sce_loss;
extern const cort_op_def ew_op_softplus;
extern const cort_op_def ew_op_softsign;
extern const cort_op_def sh_op_space_to_depth;
extern const cort_op_def sh_op_split;
extern const cort_op_def mi_op_split_to_sequence;
extern const cort_op_def ew_op_sqrt;
extern const cort_op_def sh_op_squeeze;
extern const cort_op_def txt_op_string_concat;
extern const cort_op_def mi_op_string_normalizer;
extern const cort_op_def txt_op_string_split;
extern const cort_op_def ew_op_sub;
extern const cort_op_def ew_op_sum;
extern const cort_op_def ew_op_tan;
extern const cort_op_def ew_op_tanh;
extern const cort_op_def sh_op_tensor_scatter;
extern const cort_op_def mi_op_tfidf_vectorizer;
extern const cort_op_def ew_op_thresholded_relu;
extern const cort_op_def sh_op_tile;
extern const cort_op_def rd_op_topk;
extern const cort_op_def sh_op_transpose;
extern const cort_op_def sh_op_trilu;
extern const cort_op_def rd_op_unique;
extern const cort_op_def sh_op_unsqueeze;
extern const cort_op_def rd_op_upsample;
extern const cort_op_def ew_op_where;
extern const cort_op_def ew_op_xor;
extern const cort_op_def mi_op_adagrad;
extern const cort_op_def mi_op_adam;
extern const cort_op_def mi_op_gradient;
extern const cort_op_def mi_op_momentum;
extern const cort_op_def ctb_op_dequantize_linear;
extern const cort_op_def ctb_op_dynamic_quantize_matmul;
extern const cort_op_def ctb_op_grid_sample;
extern const cort_op_def ctb_op_matmul_integer_to_float;
extern const cort_op_def ctb_op_matmul_nbits;
extern const cort_op_def ctb_op_qgemm;
extern const cort_op_def ctb_op_qlinear_add;
extern const cort_op_def ctb_op_qlinear_average_pool;
extern const cort_op_def ctb_op_qlinear_concat;
extern const cort_op_def ctb_op_qlinear_global_average_pool;
extern const cort_op_def ctb_op_qlinear_leaky_relu;
extern const cort_op_def ctb_op_qlinear_mul;
extern const cort_op_def ctb_op_qlinear_sigmoid;
extern const cort_op_def ctb_op_qlinear_softmax;
extern const cort_op_def ctb_op_quantize_linear;
extern const cort_op_def ctb_op_rotary_embedding;
extern const cort_op_def ctb_op_attention;
extern const cort_op_def ctb_op_qattention;
extern const cort_op_def ctb_op_group_query_attention;
extern const cort_op_def ctb_op_nhwc_max_pool;
extern const cort_op_def ctb_op_multi_head_attention;
extern const cort_op_def ctb_op_bias_add;
extern const cort_op_def ctb_op_bias_gelu;
extern const cort_op_def ctb_op_bias_softmax;
extern const cort_op_def ctb_op_embed_layer_norm;
extern const cort_op_def ctb_op_fast_gelu;
extern const cort_op_def ctb_op_fused_conv;
extern const cort_op_def ctb_op_fused_gemm;
extern const cort_op_def ctb_op_fused_matmul;
extern const cort_op_def ctb_op_gelu;
extern const cort_op_def ctb_op_quick_gelu;
extern const cort_op_def ctb_op_skip_layer_norm;
extern const cort_op_def ctb_op_skip_simplified_layer_norm;
extern const cort_op_def ctb_op_trilu;
extern const cort_op_def ctb_op_layer_norm_v1;
extern const cort_op_def ctb_op_simplified_layer_norm;
extern const cort_op_def fu_op_fused_matmul;
extern const cort_op_def fu_op_gelu;
extern const cort_op_def fu_op_layernorm;
extern const cort_op_def fu_op_pwdw_conv;
extern const cort_op_def q_op_qlut;

extern const cort_op_def ml_op_array_feature_extractor;
extern const cort_op_def ml_op_binarizer;
extern const cort_op_def ml_op_cast_map;
extern const cort_op_def ml_op_category_mapper;
extern const cort_op_def ml_op_dict_vectorizer;
extern const cort_op_def ml_op_feature_vectorizer;
extern const cort_op_def ml_op_imputer;
extern const cort_op_def ml_op_label_encoder;
extern const cort_op_def ml_op_linear_classifier;
extern const cort_op_def ml_op_linear_regressor;
extern const cort_op_def ml_op_normalizer;
extern const cort_op_def ml_op_one_hot_encoder;
extern const cort_op_def ml_op_svm_classifier;
extern const cort_op_def ml_op_svm_regressor;
extern const cort_op_def ml_op_scaler;
extern const cort_op_def ml_op_tree_ensemble;
extern const cort_op_def ml_op_tree_ensemble_classifier;
extern const cort_op_def ml_op_tree_ensemble_regressor;
extern const cort_op_def ml_op_zipmap;

static const cort_op_def *const op_table[] = {
    /* ai.onnx */
    &ew_op_abs,
    &ew_op_acos,
    &ew_op_acosh,
    &ew_op_add,
    &img_op_affine_grid,
    &ew_op_and,
    &rd_op_argmax,
    &rd_op_argmin,
    &ew_op_asin,
    &ew_op_asinh,
    &ew_op_atan,
    &ew_op_atanh,
    &nn_op_attention,
    &nn_op_average_pool,
    &nn_op_batch_norm,
    &mi_op_bernoulli,
    &sh_op_bitcast,
    &ew_op_bitshift,
    &ew_op_bitwise_and,
    &ew_op_bitwise_not,
    &ew_op_bitwise_or,
    &ew_op_bitwise_xor,
    &mi_op_blackman_window,
    &ew_op_cast,
    &ew_op_cast_like,
    &nn_op_causal_conv_with_state,
    &ew_op_ceil,
    &ew_op_celu,
    &sh_op_center_crop_pad,
    &ew_op_clip,
    &img_op_col2im,
    &sh_op_compress,
    &sh_op_concat,
    &mi_op_concat_from_sequence,
    &sh_op_constant,
    &sh_op_constant_of_shape,
    &nn_op_conv,
    &nn_op_conv_integer,
    &nn_op_conv_transpose,
    &ew_op_cos,
    &ew_op_cosh,
    &math_op_cumprod,
    &rd_op_cumsum,
    &mi_op_dft,
    &nn_op_deform_conv,
    &sh_op_depth_to_space,
    &nn_op_dequantize_linear,
    &rd_op_det,
    &ew_op_div,
    &nn_op_dropout,
    &nn_op_dynamic_quantize_linear,
    &rd_op_einsum,
    &ew_op_elu,
    &ew_op_equal,
    &ew_op_erf,
    &ew_op_exp,
    &sh_op_expand,
    &sh_op_eye_like,
    &sh_op_flatten,
    &ew_op_floor,
    &mi_op_gru,
    &sh_op_gather,
    &sh_op_gather_elements,
    &sh_op_gather_nd,
    &nn_op_gelu,
    &nn_op_gemm,
    &nn_op_global_average_pool,
    &nn_op_global_lp_pool,
    &nn_op_global_max_pool,
    &ew_op_greater,
    &ew_op_greater_or_equal,
    &rd_op_grid_sample,
    &nn_op_group_norm,
    &mi_op_hamming_window,
    &mi_op_hann_window,
    &ew_op_hard_sigmoid,
    &ew_op_hard_swish,
    &rd_op_hardmax,
    &sh_op_identity,
    &ctl_op_if,
    &img_op_image_decoder,
    &nn_op_instance_norm,
    &ew_op_isinf,
    &ew_op_isnan,
    &nn_op_lrn,
    &mi_op_lstm,
    &ctb_op_layer_norm_v1,
    &nn_op_layer_norm,
    &ew_op_leaky_relu,
    &ew_op_less,
    &ew_op_less_or_equal,
    &nn_op_linear_attention,
    &ew_op_log,
    &rd_op_log_softmax,
    &ctl_op_loop,
    &nn_op_lp_norm,
    &nn_op_lp_pool,
    &nn_op_matmul,
    &nn_op_matmul_integer,
    &ew_op_max,
    &nn_op_max_pool,
    &nn_op_max_roi_pool,
    &nn_op_max_unpool,
    &ew_op_mean,
    &nn_op_mvn,
    &mi_op_mel_weight_matrix,
    &ew_op_min,
    &ew_op_mish,
    &ew_op_mod,
    &ew_op_mul,
    &mi_op_multinomial,
    &ew_op_neg,
    &rd_op_nll_loss,
    &rd_op_nms,
    &sh_op_non_zero,
    &ew_op_not,
    &sh_op_one_hot,
    &mi_op_optional,
    &mi_op_optional_get_element,
    &mi_op_optional_has_element,
    &ew_op_or,
    &ew_op_prelu,
    &sh_op_pad,
    &ew_op_pow,
    &nn_op_qlinear_conv,
    &nn_op_qlinear_matmul,
    &nn_op_quantize_linear,
    &nn_op_rms_norm,
    &mi_op_rnn,
    &mi_op_random_normal,
    &mi_op_random_normal_like,
    &mi_op_random_uniform,
    &mi_op_random_uniform_like,
    &sh_op_range,
    &ew_op_reciprocal,
    &rd_op_reduce_l1,
    &rd_op_reduce_l2,
    &rd_op_reduce_log_sum,
    &rd_op_reduce_log_sum_exp,
    &rd_op_reduce_max,
    &rd_op_reduce_mean,
    &rd_op_reduce_min,
    &rd_op_reduce_prod,
    &rd_op_reduce_sum,
    &rd_op_reduce_sum_square,
    &txt_op_regex_full_match,
    &ew_op_relu,
    &sh_op_reshape,
    &rd_op_resize,
    &sh_op_reverse_sequence,
    &rd_op_roi_align,
    &nn_op_rotary_embedding,
    &ew_op_round,
    &mi_op_stft,
    &ctl_op_scan,
    &sh_op_scatter,
    &sh_op_scatter_elements,
    &sh_op_scatter_nd,
    &ew_op_selu,
    &mi_op_sequence_at,
    &mi_op_sequence_construct,
    &mi_op_sequence_empty,
    &mi_op_sequence_erase,
    &mi_op_sequence_insert,
    &mi_op_sequence_length,
    &ctl_op_sequence_map,
    &sh_op_shape,
    &ew_op_shrink,
    &ew_op_sigmoid,
    &ew_op_sign,
    &ctb_op_simplified_layer_norm,
    &ew_op_sin,
    &ew_op_sinh,
    &sh_op_size,
    &sh_op_slice,
    &rd_op_softmax,
    &rd_op_sce_loss,
    &ew_op_softplus,
    &ew_op_softsign,
    &sh_op_space_to_depth,
    &sh_op_split,
    &mi_op_split_to_sequence,
    &ew_op_sqrt,
    &sh_op_squeeze,
    &txt_op_string_concat,
    &mi_op_string_normalizer,
    &txt_op_string_split,
    &ew_op_sub,
    &ew_op_sum,
    &nn_op_swiglu,
    &nn_op_swish,
    &ew_op_tan,
    &ew_op_tanh,
    &sh_op_tensor_scatter,
    &mi_op_tfidf_vectorizer,
    &ew_op_thresholded_relu,
    &sh_op_tile,
    &rd_op_topk,
    &sh_op_transpose,
    &sh_op_trilu,
    &rd_op_unique,
    &sh_op_unsqueeze,
    &rd_op_upsample,
    &ew_op_where,
    &ew_op_xor,
    /* ai.onnx.ml */
    &ml_op_array_feature_extractor,
    &ml_op_binarizer,
    &ml_op_cast_map,
    &ml_op_category_mapper,
    &ml_op_dict_vectorizer,
    &ml_op_feature_vectorizer,
    &ml_op_imputer,
    &ml_op_label_encoder,
    &ml_op_linear_classifier,
    &ml_op_linear_regressor,
    &ml_op_normalizer,
    &ml_op_one_hot_encoder,
    &ml_op_svm_classifier,
    &ml_op_svm_regressor,
    &ml_op_scaler,
    &ml_op_tree_ensemble,
    &ml_op_tree_ensemble_classifier,
    &ml_op_tree_ensemble_regressor,
    &ml_op_zipmap,
    /* ai.onnx.preview */
    &nn_op_flex_attention,
    /* ai.onnx.preview.training */
    &mi_op_adagrad,
    &mi_op_adam,
    &mi_op_gradient,
    &mi_op_momentum,
    /* com.microsoft (ONNX Runtime's contrib ops) */
    &ctb_op_attention,
    &ctb_op_bias_add,
    &ctb_op_bias_gelu,
    &ctb_op_bias_softmax,
    &ctb_op_dequantize_linear,
    &ctb_op_dynamic_quantize_matmul,
    &ctb_op_embed_layer_norm,
    &ctb_op_fast_gelu,
    &ctb_op_fused_conv,
    &ctb_op_fused_gemm,
    &ctb_op_fused_matmul,
    &ctb_op_gelu,
    &ctb_op_grid_sample,
    &ctb_op_group_query_attention,
    &ctb_op_matmul_integer_to_float,
    &ctb_op_matmul_nbits,
    &ctb_op_multi_head_attention,
    &ctb_op_nhwc_max_pool,
    &ctb_op_qattention,
    &ctb_op_qgemm,
    &ctb_op_qlinear_add,
    &ctb_op_qlinear_average_pool,
    &ctb_op_qlinear_concat,
    &ctb_op_qlinear_global_average_pool,
    &ctb_op_qlinear_leaky_relu,
    &ctb_op_qlinear_mul,
    &ctb_op_qlinear_sigmoid,
    &ctb_op_qlinear_softmax,
    &ctb_op_quantize_linear,
    &ctb_op_quick_gelu,
    &ctb_op_rotary_embedding,
    &ctb_op_skip_layer_norm,
    &ctb_op_skip_simplified_layer_norm,
    &ctb_op_trilu,
    /* cort */
    &fu_op_fused_matmul,
    &fu_op_gelu,
    &fu_op_layernorm,
    &fu_op_pwdw_conv,
    &q_op_qlut,
};

static const char *canon_domain(const char *d) { return !strcmp(d, "ai.onnx") ? "" : d; }

static int key_cmp(const char *domain, const char *name, const cort_op_def *e) {
    int c = strcmp(domain, e->domain);
    return c ? c : strcmp(name, e->name);
}

/* Index of the first entry of (domain, name), or -1. */
static long first_entry(const char *domain, const char *name) {
    domain = canon_domain(domain);
    size_t lo = 0, hi = sizeof op_table / sizeof op_table[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(domain, name, op_table[mid]) > 0) lo = mid + 1; else hi = mid;
    }
    return lo < sizeof op_table / sizeof op_table[0] && !key_cmp(domain, name, op_table[lo]) ? (long)lo : -1;
}

const cort_op_def *cort_op_find(const char *domain, const char *op_type, int opset) {
    long i = first_entry(domain, op_type);
    if (i < 0) return NULL;
    for (size_t k = (size_t)i; k < sizeof op_table / sizeof op_table[0] && !key_cmp(canon_domain(domain), op_type, op_table[k]); k++)
        if (opset >= op_table[k]->min_opset && opset <= op_table[k]->max_opset) return op_table[k];
    return NULL;
}

int cort_op_known(const char *domain, const char *op_type, int *min_opset, int *max_opset) {
    long i = first_entry(domain, op_type);
    if (i < 0) return 0;
    int lo = op_table[i]->min_opset, hi = op_table[i]->max_opset;
    for (size_t k = (size_t)i + 1; k < sizeof op_table / sizeof op_table[0] && !key_cmp(canon_domain(domain), op_type, op_table[k]); k++)
        if (op_table[k]->max_opset > hi) hi = op_table[k]->max_opset;
    if (min_opset) *min_opset = lo;
    if (max_opset) *max_opset = hi;
    return 1;
}

size_t cort_op_table(const cort_op_def *const **out) {
    *out = op_table;
    return sizeof op_table / sizeof op_table[0];
}
