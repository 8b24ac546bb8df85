/* I/O binding: inputs and outputs bound once, repeated runs, preallocated and runtime-allocated
 * outputs, rebinding, clearing, and the checks made at bind time. relu_add.onnx: Y = Relu(X) + B,
 * Z = Identity(X), X float [N, 4]. The reference is a plain cort_session_run of the same inputs and
 * Z, which must equal X bit for bit. */
#include "testutil.h"
#include <string.h>

#define MODEL(name) "tests/models/" name

/* Y and Z for X through cort_session_run (the path the binding must agree with). */
static void plain_run(cort_session *s, float *x, int64_t n, float *y, float *z) {
    int64_t shape[2] = { n, 4 };
    cort_value *in = NULL, *outs[2] = { NULL, NULL };
    CHECK_OK(cort_tensor_wrap(x, (size_t)n * 4 * sizeof(float), CORT_TYPE_FLOAT, shape, 2, &in));
    const char *in_names[1] = { "X" }, *out_names[2] = { "Y", "Z" };
    if (CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 2, outs))) {
        memcpy(y, cort_tensor_data(outs[0]), (size_t)n * 4 * sizeof(float));
        memcpy(z, cort_tensor_data(outs[1]), (size_t)n * 4 * sizeof(float));
    }
    cort_value_release(outs[0]);
    cort_value_release(outs[1]);
    cort_value_release(in);
}

static void test_repeated_runs(void) {
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create(MODEL("relu_add.onnx"), NULL, &s))) return;
    float x[12], yref[12], zref[12];
    for (int i = 0; i < 12; i++) x[i] = (float)(i - 6) * 0.75f;
    int64_t shape[2] = { 3, 4 };
    cort_value *xin = NULL, *ypre = NULL;
    CHECK_OK(cort_tensor_wrap(x, sizeof x, CORT_TYPE_FLOAT, shape, 2, &xin));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &ypre));
    cort_io_binding *b = NULL;
    if (!CHECK_OK(cort_io_binding_create(s, &b))) return;
    CHECK_OK(cort_io_binding_bind_input(b, "X", xin));
    CHECK_OK(cort_io_binding_bind_output(b, "Y", ypre));   /* preallocated */
    CHECK_OK(cort_io_binding_bind_output(b, "Z", NULL));   /* runtime-allocated */
    /* the binding holds its own references */
    cort_value *ykeep = ypre;
    cort_value_release(xin);
    CHECK(cort_io_binding_output(b, 0) == NULL);   /* nothing ran yet */
    CHECK(cort_io_binding_output_count(b) == 2);
    CHECK(!strcmp(cort_io_binding_output_name(b, 0), "Y") && !strcmp(cort_io_binding_output_name(b, 1), "Z"));
    for (int round = 0; round < 3; round++) {
        /* the bound input is read at every run: change it in place */
        for (int i = 0; i < 12; i++) x[i] = (float)((i * 7 + round * 5) % 13) - 6.0f;
        float xcopy[12];
        memcpy(xcopy, x, sizeof x);
        plain_run(s, xcopy, 3, yref, zref);
        if (!CHECK_OK(cort_io_binding_run(b, NULL))) break;
        cort_value *y = cort_io_binding_output(b, 0), *z = cort_io_binding_output(b, 1);
        CHECK(y == ykeep);   /* written into the preallocated tensor */
        CHECK(z && cort_tensor_type(z) == CORT_TYPE_FLOAT && cort_tensor_element_count(z) == 12);
        if (!y || !z) break;
        CHECK(tu_max_ulp(cort_tensor_data(y), yref, 12, NULL) == 0);
        CHECK(tu_max_ulp(cort_tensor_data(z), x, 12, NULL) == 0);
        CHECK(tu_max_ulp(zref, x, 12, NULL) == 0);
    }
    cort_value_release(ypre);
    /* rebinding an input by name replaces it; a new batch size flows through the runtime output */
    float x2[8] = { -1, 2, -3, 4, 5, -6, 7, -8 }, y2[8], z2[8];
    int64_t shape2[2] = { 2, 4 };
    cort_value *x2v = NULL;
    CHECK_OK(cort_tensor_wrap(x2, sizeof x2, CORT_TYPE_FLOAT, shape2, 2, &x2v));
    CHECK_OK(cort_io_binding_bind_input(b, "X", x2v));
    cort_value_release(x2v);
    /* Y is still preallocated as [3, 4]: the run fails with a message naming the output */
    CHECK_ERR(cort_io_binding_run(b, NULL), CORT_ERROR_INVALID_ARGUMENT, "'Y'");
    CHECK(cort_io_binding_output(b, 1) == NULL);   /* a failed run leaves no stale outputs */
    CHECK_OK(cort_io_binding_bind_output(b, "Y", NULL));
    CHECK(cort_io_binding_output_count(b) == 2);   /* rebinding keeps the order */
    if (CHECK_OK(cort_io_binding_run(b, NULL))) {
        plain_run(s, x2, 2, y2, z2);
        cort_value *y = cort_io_binding_output(b, 0);
        CHECK(y && cort_tensor_shape(y)[0] == 2 && tu_max_ulp(cort_tensor_data(y), y2, 8, NULL) == 0);
        /* retaining an output keeps it beyond the next run */
        cort_value *kept = cort_value_retain(y);
        CHECK_OK(cort_io_binding_run(b, NULL));
        CHECK(cort_io_binding_output(b, 0) != kept);
        CHECK(tu_max_ulp(cort_tensor_data(kept), y2, 8, NULL) == 0);
        cort_value_release(kept);
    }
    /* clearing inputs: the next run reports the missing input */
    cort_io_binding_clear_inputs(b);
    CHECK_ERR(cort_io_binding_run(b, NULL), CORT_ERROR_INVALID_ARGUMENT, "'X' was not given");
    cort_io_binding_clear_outputs(b);
    CHECK(cort_io_binding_output_count(b) == 0 && cort_io_binding_output_name(b, 0) == NULL);
    /* the binding keeps the session alive */
    cort_session_release(s);
    CHECK_OK(cort_tensor_wrap(x2, sizeof x2, CORT_TYPE_FLOAT, shape2, 2, &x2v));
    CHECK_OK(cort_io_binding_bind_input(b, "X", x2v));
    CHECK_OK(cort_io_binding_bind_output(b, "Z", NULL));
    cort_value_release(x2v);
    if (CHECK_OK(cort_io_binding_run(b, NULL)))
        CHECK(tu_max_ulp(cort_tensor_data(cort_io_binding_output(b, 0)), x2, 8, NULL) == 0);
    cort_io_binding_free(b);
}

static void test_bind_checks(void) {
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create(MODEL("relu_add.onnx"), NULL, &s))) return;
    cort_io_binding *b = NULL;
    CHECK_CODE(cort_io_binding_create(NULL, &b), CORT_ERROR_INVALID_ARGUMENT);
    if (!CHECK_OK(cort_io_binding_create(s, &b))) return;
    int64_t shape[2] = { 2, 4 }, bad[2] = { 2, 5 };
    cort_value *f = NULL, *i64 = NULL, *wide = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &f));
    CHECK_OK(cort_tensor_create(CORT_TYPE_INT64, shape, 2, &i64));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, bad, 2, &wide));
    CHECK_ERR(cort_io_binding_bind_input(b, "nope", f), CORT_ERROR_INVALID_ARGUMENT, "'nope'");
    CHECK_ERR(cort_io_binding_bind_input(b, "X", i64), CORT_ERROR_INVALID_ARGUMENT, "int64");
    CHECK_ERR(cort_io_binding_bind_input(b, "X", wide), CORT_ERROR_INVALID_ARGUMENT, "dimension 1");
    CHECK_ERR(cort_io_binding_bind_output(b, "nope", NULL), CORT_ERROR_INVALID_ARGUMENT, "'nope'");
    CHECK_ERR(cort_io_binding_bind_output(b, "Y", i64), CORT_ERROR_INVALID_ARGUMENT, "element type");
    CHECK(cort_io_binding_output_count(b) == 0);   /* failed binds change nothing */
    CHECK_ERR(cort_io_binding_run(b, NULL), CORT_ERROR_INVALID_ARGUMENT, "not given");
    /* cancellation goes through the run options */
    cort_run_options *ro = NULL;
    CHECK_OK(cort_run_options_create(&ro));
    cort_run_options_set_terminate(ro, 1);
    CHECK_OK(cort_io_binding_bind_input(b, "X", f));
    CHECK_CODE(cort_io_binding_run(b, ro), CORT_ERROR_CANCELLED);
    cort_run_options_free(ro);
    cort_value_release(f);
    cort_value_release(i64);
    cort_value_release(wide);
    cort_io_binding_free(b);
    cort_io_binding_free(NULL);
    cort_session_release(s);
}

int main(void) {
    test_repeated_runs();
    test_bind_checks();
    return tu_finish();
}
