/* Initializers from memory: cort_session_options_add_initializer (overriding a model initializer,
 * making an input constant, lifetime, errors) and cort_session_options_add_external_data (a model
 * with external data loaded from memory). ext_weights.onnx: Y = X * W + B with W [2,3] and B [3]
 * stored in ext_weights.bin (W at offset 0, B at 64; tests/models/make_api_models.py). The
 * reference reads the .bin file itself. */
#include "testutil.h"
#include <stdlib.h>
#include <string.h>

#define MODEL(name) "tests/models/" name

static int run_y(cort_session *s, const float *x, float *y) {
    int64_t shape[2] = { 2, 3 };
    cort_value *in = NULL, *out = NULL;
    if (!CHECK_OK(cort_tensor_wrap((void *)x, 6 * sizeof(float), CORT_TYPE_FLOAT, shape, 2, &in))) return 0;
    const char *in_names[1] = { "X" }, *out_names[1] = { "Y" };
    int ok = CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 1, &out));
    if (ok) memcpy(y, cort_tensor_data(out), 6 * sizeof(float));
    cort_value_release(out);
    cort_value_release(in);
    return ok;
}

static void reference(const float *x, const float *w, const float *b, float *y) {
    for (int i = 0; i < 6; i++) y[i] = x[i] * w[i] + b[i % 3];
}

static void test_external_data_in_memory(void) {
    size_t len = 0;
    unsigned char *bin = tu_read_file(MODEL("ext_weights.bin"), &len);
    size_t mlen = 0;
    unsigned char *model = tu_read_file(MODEL("ext_weights.onnx"), &mlen);
    CHECK(bin && len == 76 && model);
    if (!bin || len != 76 || !model) { free(bin); free(model); return; }
    float w[6], b[3], x[6] = { 1, -2, 3, -4, 5, -6 }, y[6], want[6];
    memcpy(w, bin, sizeof w);
    memcpy(b, bin + 64, sizeof b);
    cort_session *s = NULL;
    /* from memory without the bytes: no folder to look in */
    CHECK_ERR(cort_session_create_from_memory(model, mlen, NULL, &s), CORT_ERROR_INVALID_MODEL, "ext_weights.bin");
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_add_external_data(o, "ext_weights.bin", bin, len));
    if (CHECK_OK(cort_session_create_from_memory(model, mlen, o, &s))) {
        reference(x, w, b, want);
        if (run_y(s, x, y)) CHECK(tu_max_ulp(y, want, 6, NULL) == 0);
        cort_session_release(s);
    }
    /* the in-memory bytes win over the file next to the model, and were copied at add time */
    float w2[6] = { 2, 2, 2, -1, -1, -1 }, b2[3] = { 10, 20, 30 };
    unsigned char bin2[76];
    memcpy(bin2, bin, sizeof bin2);
    memcpy(bin2, w2, sizeof w2);
    memcpy(bin2 + 64, b2, sizeof b2);
    CHECK_OK(cort_session_options_add_external_data(o, "ext_weights.bin", bin2, sizeof bin2));   /* replaces */
    memset(bin2, 0, sizeof bin2);
    if (CHECK_OK(cort_session_create(MODEL("ext_weights.onnx"), o, &s))) {
        reference(x, w2, b2, want);
        if (run_y(s, x, y)) CHECK(tu_max_ulp(y, want, 6, NULL) == 0);
        cort_session_release(s);
    }
    /* too short for the offsets the model gives */
    CHECK_OK(cort_session_options_add_external_data(o, "ext_weights.bin", bin, 70));
    CHECK_ERR(cort_session_create_from_memory(model, mlen, o, &s), CORT_ERROR_INVALID_MODEL, "70 bytes");
    CHECK_CODE(cort_session_options_add_external_data(o, NULL, bin, 4), CORT_ERROR_INVALID_ARGUMENT);
    cort_session_options_free(o);
    free(bin);
    free(model);
}

static void test_add_initializer(void) {
    size_t len = 0;
    unsigned char *bin = tu_read_file(MODEL("ext_weights.bin"), &len);
    CHECK(bin && len == 76);
    if (!bin || len != 76) { free(bin); return; }
    float w[6], b[3], x[6] = { 0.5f, 1, 2, 4, -8, 16 }, y[6], want[6];
    memcpy(w, bin, sizeof w);
    memcpy(b, bin + 64, sizeof b);
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    /* B overridden with a tensor whose only reference the options then hold */
    float bnew[3] = { 100, -100, 0.25f };
    int64_t bshape[1] = { 3 };
    cort_value *bv = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, bshape, 1, &bv));
    memcpy(cort_tensor_data(bv), bnew, sizeof bnew);
    CHECK_OK(cort_session_options_add_initializer(o, "B", bv));
    cort_value_release(bv);
    cort_session *s = NULL;
    if (CHECK_OK(cort_session_create(MODEL("ext_weights.onnx"), o, &s))) {
        cort_session_options_free(o);   /* the session keeps the value */
        o = NULL;
        reference(x, w, bnew, want);
        if (run_y(s, x, y)) CHECK(tu_max_ulp(y, want, 6, NULL) == 0);
        cort_session_release(s);
    }
    cort_session_options_free(o);
    /* initializers stored in an external file that is not there: providing both by name means the
     * file is never opened (a model from memory has no folder to look in) */
    {
        size_t mlen = 0;
        unsigned char *model = tu_read_file(MODEL("ext_weights.onnx"), &mlen);
        float w2[6] = { 1, 2, 3, 4, 5, 6 };
        int64_t wshape[2] = { 2, 3 };
        cort_value *wv = NULL, *bv2 = NULL;
        CHECK_OK(cort_session_options_create(&o));
        CHECK_OK(cort_tensor_wrap(w2, sizeof w2, CORT_TYPE_FLOAT, wshape, 2, &wv));
        CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, bshape, 1, &bv2));
        memcpy(cort_tensor_data(bv2), bnew, sizeof bnew);
        CHECK_OK(cort_session_options_add_initializer(o, "W", wv));
        CHECK_OK(cort_session_options_add_initializer(o, "B", bv2));
        if (model && CHECK_OK(cort_session_create_from_memory(model, mlen, o, &s))) {
            reference(x, w2, bnew, want);
            if (run_y(s, x, y)) CHECK(tu_max_ulp(y, want, 6, NULL) == 0);
            cort_session_release(s);
        }
        cort_value_release(wv);
        cort_value_release(bv2);
        cort_session_options_free(o);
        free(model);
    }
    /* a graph input becomes a constant: relu_add's X, so the session has no inputs left */
    CHECK_OK(cort_session_options_create(&o));
    float xc[8] = { -1, 2, -3, 4, 5, -6, 7, -8 };
    int64_t xshape[2] = { 2, 4 };
    cort_value *xv = NULL;
    CHECK_OK(cort_tensor_wrap(xc, sizeof xc, CORT_TYPE_FLOAT, xshape, 2, &xv));
    CHECK_OK(cort_session_options_add_initializer(o, "X", xv));
    cort_value_release(xv);
    if (CHECK_OK(cort_session_create(MODEL("relu_add.onnx"), o, &s))) {
        CHECK(cort_session_input_count(s) == 0);
        const char *names[1] = { "Z" };
        cort_value *z = NULL;
        if (CHECK_OK(cort_session_run(s, NULL, NULL, NULL, 0, names, 1, &z)))
            CHECK(cort_tensor_element_count(z) == 8 && tu_max_ulp(cort_tensor_data(z), xc, 8, NULL) == 0);
        cort_value_release(z);
        cort_session_release(s);
    }
    cort_session_options_free(o);
    /* errors: unknown name, wrong element type, not a tensor */
    CHECK_OK(cort_session_options_create(&o));
    cort_value *iv = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_INT64, bshape, 1, &iv));
    CHECK_OK(cort_session_options_add_initializer(o, "nope", iv));
    CHECK_ERR(cort_session_create(MODEL("ext_weights.onnx"), o, &s), CORT_ERROR_INVALID_ARGUMENT, "'nope'");
    cort_session_options_free(o);
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_add_initializer(o, "B", iv));
    CHECK_ERR(cort_session_create(MODEL("ext_weights.onnx"), o, &s), CORT_ERROR_INVALID_ARGUMENT, "int64");
    cort_value *seq = NULL;
    CHECK_OK(cort_sequence_create(CORT_TYPE_FLOAT, NULL, 0, &seq));
    CHECK_CODE(cort_session_options_add_initializer(o, "B", seq), CORT_ERROR_INVALID_ARGUMENT);
    cort_value_release(seq);
    cort_value_release(iv);
    cort_session_options_free(o);
    free(bin);
}

int main(void) {
    test_external_data_in_memory();
    test_add_initializer();
    return tu_finish();
}
