/* Saving the optimized graph (cort_session_options_set_optimized_model_path): for models that
 * exercise each fusion (activation, residual, BatchNorm folding, GELU, LayerNorm, FusedMatMul,
 * MatMulIntegerToFloat and its GELU, PwDwConv, HardSwish), the saved file loads in a new session and
 * gives the outputs of the session that wrote it, for random inputs; and errors are reported. */
#include "testutil.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODEL(name) "tests/models/" name

static uint64_t rng = 88172645463325252ull;
static float frand(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((rng >> 11) % 2000001) / 1000000.0f - 1.0f;
}

/* Random float inputs for s (symbolic dims: 2 for the first, 32 for the others); NULL entries for inputs that are not float tensors. */
static int make_inputs(cort_session *s, cort_value **in, const char **names) {
    size_t n = cort_session_input_count(s);
    for (size_t i = 0; i < n; i++) {
        cort_value_type t;
        int64_t dims[8];
        names[i] = cort_session_input_name(s, i);
        if (!CHECK_OK(cort_session_input_type(s, i, &t, dims, 8))) return 0;
        if (t.kind != 1 || t.elem_type != CORT_TYPE_FLOAT || t.rank < 0 || t.rank > 8) return 0;
        for (int k = 0; k < t.rank; k++) if (dims[k] < 0) dims[k] = k == 0 ? 2 : 32;
        if (!CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, dims, (size_t)t.rank, &in[i]))) return 0;
        float *p = cort_tensor_data(in[i]);
        for (size_t e = 0; e < cort_tensor_element_count(in[i]); e++) p[e] = frand();
    }
    return 1;
}

static void check_model_ext(const char *name, const char *ext_file, uint64_t ext_min) {
    char path[256], saved[256];
    snprintf(path, sizeof path, MODEL("%s"), name);
    snprintf(saved, sizeof saved, "/tmp/cort_test_saved_%d_%s", (int)getpid(), name);
    for (char *c = saved + 5; *c; c++) if (*c == '/') *c = '_';
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_optimized_model_path(o, saved));
    if (ext_file) CHECK_OK(cort_session_options_set_optimized_model_external_data(o, ext_file, ext_min));
    cort_session *a = NULL, *b = NULL;
    int ok = CHECK_OK(cort_session_create(path, o, &a));
    cort_session_options_free(o);
    if (!ok) return;
    if (!CHECK_OK(cort_session_create(saved, NULL, &b))) {
        fprintf(stderr, "%s: the saved model does not load\n", name);
        cort_session_release(a);
        return;
    }
    size_t n_in = cort_session_input_count(a), n_out = cort_session_output_count(a);
    CHECK(n_in == cort_session_input_count(b) && n_out == cort_session_output_count(b));
    cort_value *in[8] = { 0 }, *oa[8] = { 0 }, *ob[8] = { 0 };
    const char *in_names[8], *out_names[8];
    if (n_in <= 8 && n_out <= 8 && make_inputs(a, in, in_names)) {
        for (size_t i = 0; i < n_out; i++) {
            out_names[i] = cort_session_output_name(a, i);
            CHECK(!strcmp(out_names[i], cort_session_output_name(b, i)));
        }
        if (CHECK_OK(cort_session_run(a, NULL, in_names, in, n_in, out_names, n_out, oa)) &&
            CHECK_OK(cort_session_run(b, NULL, in_names, in, n_in, out_names, n_out, ob)))
            for (size_t i = 0; i < n_out; i++) {
                size_t n = cort_tensor_element_count(oa[i]);
                CHECK(n == cort_tensor_element_count(ob[i]) && cort_tensor_type(oa[i]) == cort_tensor_type(ob[i]));
                if (cort_tensor_type(oa[i]) == CORT_TYPE_FLOAT && n == cort_tensor_element_count(ob[i]))
                    CHECK_CLOSE(cort_tensor_data(ob[i]), cort_tensor_data(oa[i]), n, TU_TOL(1e-5, 1e-5, 1e-6),
                                "%s output %zu", name, i);
            }
    } else {
        fprintf(stderr, "%s: inputs not all float tensors\n", name);
        CHECK(0);
    }
    for (size_t i = 0; i < 8; i++) { cort_value_release(in[i]); cort_value_release(oa[i]); cort_value_release(ob[i]); }
    cort_session_release(a);
    cort_session_release(b);
    remove(saved);
}

static void check_model(const char *name) { check_model_ext(name, NULL, 0); }

/* Initializers of at least ext_min bytes go to the external file next to the model. */
static void test_external_initializers(void) {
    char ext[64], ext_path[128], saved[128];
    snprintf(ext, sizeof ext, "cort_test_ext_%d.bin", (int)getpid());
    snprintf(ext_path, sizeof ext_path, "/tmp/%s", ext);
    snprintf(saved, sizeof saved, "/tmp/cort_test_saved_%d_ext.onnx", (int)getpid());
    /* mlp.onnx: W1 64x128 floats (32 KiB), W2 128x10 (5 KiB), biases below 1 KiB */
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_optimized_model_path(o, saved));
    CHECK_OK(cort_session_options_set_optimized_model_external_data(o, ext, 1024));
    if (CHECK_OK(cort_session_create(MODEL("mlp.onnx"), o, &s))) cort_session_release(s);
    size_t ext_len = 0, model_len = 0;
    void *eb = tu_read_file(ext_path, &ext_len), *mb = tu_read_file(saved, &model_len);
    /* W1 padded to 64 bytes, then W2 (5120 bytes) */
    CHECK_MSG(eb && ext_len == 64 * 128 * 4 + 128 * 10 * 4, "external file of %zu bytes", ext_len);
    CHECK_MSG(mb && model_len < 4096, "model of %zu bytes still holds the big weights", model_len);
    free(eb);
    free(mb);
    CHECK_CODE(cort_session_options_set_optimized_model_external_data(o, "../x.bin", 0), CORT_ERROR_INVALID_ARGUMENT);
    cort_session_options_free(o);
    remove(saved);
    remove(ext_path);
    /* and the saved model with external data loads and computes the same (round trip helper) */
    check_model_ext("mlp.onnx", ext, 1024);
    check_model_ext("fuse_conv_bn.onnx", ext, 16);
    remove(ext_path);
}

int main(void) {
    static const char *models[] = { "mlp.onnx", "relu_add.onnx", "fuse_conv_act.onnx", "fuse_conv_bn.onnx",
                                    "fuse_conv_epilogue.onnx", "fuse_encoder.onnx", "fuse_gelu_bias.onnx",
                                    "fuse_hardswish.onnx", "fuse_pwdw.onnx", "fuse_variants.onnx", "fuse_concat.onnx",
                                    "fuse_int_matmul.onnx", "fuse_int_matmul_gelu.onnx",
                                    /* BatchNorm folding names several folded weights alike */
                                    "realworld/ocr_tiny_det/model.onnx" };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) check_model(models[i]);
    test_external_initializers();
    /* an unwritable path fails creation with IO */
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_optimized_model_path(o, "/nonexistent_dir_cort/x.onnx"));
    CHECK_ERR(cort_session_create(MODEL("mlp.onnx"), o, &s), CORT_ERROR_IO, "/nonexistent_dir_cort/x.onnx");
    CHECK_OK(cort_session_options_set_optimized_model_path(o, NULL));   /* off again */
    if (CHECK_OK(cort_session_create(MODEL("mlp.onnx"), o, &s))) cort_session_release(s);
    cort_session_options_free(o);
    return tu_finish();
}
