"""ONNX's own backend test runner (onnx.backend.test.BackendTest) driving cort through cort.backend.

By default ~100 representative node tests run (a few seconds). Set CORT_BACKEND_ALL=1 to run every
node test shipped with the onnx package (known failures stay excluded)."""
import os
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import onnx.backend.test  # noqa: E402

import cort.backend  # noqa: E402

# onnx 1.12's runner compares string outputs with `np.object`, which numpy >= 1.24 removed.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    if "object" not in np.__dict__:
        np.object = object

REPRESENTATIVE = [
    # element-wise math, broadcasting, activations
    "abs", "add_bcast", "add_uint8", "sub_bcast", "mul_example", "div_bcast", "pow_bcast_array",
    "mod_mixed_sign_int32", "sqrt", "exp", "log", "reciprocal", "sign", "floor", "round", "erf", "sin", "tanh",
    "sigmoid", "relu", "leakyrelu", "selu", "hardswish", "softplus", "clip", "clip_default_int8_min",
    "prelu_broadcast", "max_example", "sum_example", "mean_example", "where_example", "and_bcast4v4d", "xor3d",
    "not_2d", "equal_bcast", "greater_equal_bcast", "isnan", "bitshift_left_uint16",
    # reductions, arg, cumulative, softmax, sorting
    "reduce_sum_keepdims_example", "reduce_mean_default_axes_keepdims_example",
    "reduce_max_negative_axes_keepdims_example", "reduce_log_sum_exp_keepdims_random", "reduce_l2_keep_dims_example",
    "argmax_keepdims_example", "argmin_no_keepdims_random_select_last_index", "cumsum_2d_axis_1", "softmax_axis_1",
    "logsoftmax_default_axis", "hardmax_example", "top_k", "top_k_smallest",
    # linear algebra, conv, pooling, normalization, recurrent
    "matmul_2d", "matmul_4d", "gemm_all_attributes", "einsum_batch_matmul", "det_2d", "basic_conv_with_padding",
    "conv_with_strides_and_asymmetric_padding", "convtranspose_pads", "averagepool_2d_pads", "maxpool_2d_ceil",
    "maxpool_with_argmax_2d_precomputed_strides", "globalaveragepool", "batchnorm_example", "instancenorm_example",
    "layer_normalization_2d_axis0", "lrn", "lstm_defaults", "gru_defaults", "rnn_seq_length",
    # shapes and data movement
    "reshape_negative_dim", "reshape_allowzero_reordered", "transpose_all_permutations_3",
    "concat_3d_axis_negative_2", "split_variable_parts_default_axis", "slice_negative_axes", "squeeze",
    "unsqueeze_two_axes", "flatten_axis2", "expand_dim_changed", "tile", "constant_pad", "edge_pad", "gather_1",
    "gather_elements_negative_indices", "gathernd_example_int32_batch_dim1", "scatter_elements_with_negative_indices",
    "scatternd_multiply", "onehot_with_axis", "nonzero_example", "unique_sorted_with_axis", "compress_default_axis",
    "depthtospace_crd_mode", "shape_start_negative_1", "constantofshape_int_zeros", "range_int32_type_negative_delta",
    "eyelike_with_dtype", "triu_neg", "resize_upsample_scales_linear", "resize_downsample_sizes_nearest",
    "reversesequence_batch",
    # types, strings, quantization
    "cast_FLOAT_to_FLOAT16", "cast_STRING_to_FLOAT", "cast_FLOAT_to_STRING", "castlike_DOUBLE_to_FLOAT",
    "strnormalizer_export_monday_casesensintive_lower", "quantizelinear_axis", "qlinearmatmul_2D",
    "dynamicquantizelinear", "matmulinteger",
    # sequences, optionals, control flow, functions
    "sequence_insert_at_back", "sequence_map_identity_1_sequence", "identity_sequence",
    "optional_get_element_sequence", "optional_has_element_empty", "if_seq", "loop11", "loop13_seq", "scan9_sum",
    "sce_mean_weight_ii", "nllloss_NCd1d2_with_weight_reduction_mean", "dft", "stft", "mvn", "celu_expanded",
]

# Known failures: training-mode ops and RNG outputs that cannot match bit for bit, TfIdfVectorizer
# (not implemented), the bfloat16 CastLike function bodies, and onnx 1.12's runner itself failing
# on a sequence of scalars (test_loop16_seq_none).
KNOWN_FAILING = [
    r"^test_adam_multiple_", r"^test_bernoulli", r"^test_training_dropout", r"^test_tfidfvectorizer",
    r"^test_castlike_(BFLOAT16_to_FLOAT|FLOAT_to_BFLOAT16)_expanded_", r"^test_loop16_seq_none_",
]

backend_test = onnx.backend.test.BackendTest(cort.backend, __name__)
if os.environ.get("CORT_BACKEND_ALL") == "1":
    backend_test.include(r"^test_.*_cpu$")
else:
    for name in REPRESENTATIVE:
        backend_test.include(r"^test_%s_cpu$" % name)
for pattern in KNOWN_FAILING:
    backend_test.exclude(pattern)

# Only node tests (the others are real-world models downloaded from the network or PyTorch exports);
# tests filtered out above (and the CUDA variants) are dropped rather than reported as skipped.
OnnxBackendNodeModelTest = backend_test.test_cases["OnnxBackendNodeModelTest"]
for _name in [n for n in vars(OnnxBackendNodeModelTest) if n.startswith("test_")]:
    if getattr(getattr(OnnxBackendNodeModelTest, _name), "__unittest_skip__", False):
        delattr(OnnxBackendNodeModelTest, _name)


def test_representative_names_exist():
    data = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    missing = [n for n in REPRESENTATIVE if not os.path.isdir(os.path.join(data, "test_" + n))]
    assert not missing, missing


def test_run_node():
    from onnx import helper
    node = helper.make_node("Add", ["x", "y"], ["z"])
    x = np.array([1, 2], np.float32)
    out = cort.backend.run_node(node, [x, x])
    assert out["z"].tolist() == [2, 4] and out[0].tolist() == [2, 4]


def test_prepare_kwargs_and_devices():
    from onnx import helper, TensorProto as TP
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                            [helper.make_tensor_value_info("x", TP.FLOAT, [2])],
                                            [helper.make_tensor_value_info("y", TP.FLOAT, [2])]))
    rep = cort.backend.prepare(m, "CPU", graph_optimization_level=0, intra_op_num_threads=1)
    assert rep.session.get_session_options().intra_op_num_threads == 1
    x = np.array([-1, 1], np.float32)
    assert rep.run([x])[0].tolist() == [0, 1]
    assert rep.run(x)[0].tolist() == [0, 1]
    assert rep.run({"x": x})[0].tolist() == [0, 1]
    assert cort.backend.run_model(m, [x])[0].tolist() == [0, 1]
    assert cort.backend.supports_device("CPU") and not cort.backend.supports_device("CUDA")
    assert cort.backend.is_compatible(m)
    with pytest.raises(RuntimeError):
        cort.backend.prepare(m, "CUDA")
