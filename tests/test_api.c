/* Public C API: arguments, errors (each names what is wrong), results, ownership and leaks.
 * Run from the repository root (models in tests/models/). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

#define MODEL(name) "tests/models/" name

static size_t in_use(void) {
    cort_allocator_stats s;
    cort_status_free(cort_allocator_get_stats(&s));
    return s.bytes_in_use;
}

static void test_status_and_options(void) {
    CHECK(cort_status_code(NULL) == CORT_OK);
    CHECK(!strcmp(cort_status_message(NULL), ""));
    cort_status_free(NULL);
    CHECK(!strcmp(cort_code_name(CORT_ERROR_CANCELLED), "CANCELLED"));
    CHECK(cort_type_size(CORT_TYPE_BFLOAT16) == 2 && cort_type_size(CORT_TYPE_COMPLEX128) == 16);
    CHECK(!strcmp(cort_type_name(CORT_TYPE_FLOAT16), "float16"));

    cort_session_options *o = NULL;
    CHECK_CODE(cort_session_options_create(NULL), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_OK(cort_session_options_create(&o));
    CHECK_ERR(cort_session_options_set_threads(o, -1), CORT_ERROR_INVALID_ARGUMENT, "-1");
    CHECK_ERR(cort_session_options_set_threads(NULL, 1), CORT_ERROR_INVALID_ARGUMENT, "NULL");
    CHECK_OK(cort_session_options_set_threads(o, 1));
    CHECK_ERR(cort_session_options_set_optimization_level(o, 3), CORT_ERROR_INVALID_ARGUMENT, "3");
    CHECK_OK(cort_session_options_set_optimization_level(o, 0));
    CHECK_OK(cort_session_options_append_provider(o, "cpu", NULL, NULL, 0));
    CHECK_ERR(cort_session_options_append_provider(o, "nosuch", NULL, NULL, 0), CORT_ERROR_NOT_IMPLEMENTED, "nosuch");
    CHECK_ERR(cort_session_options_append_provider(o, "cpu", NULL, NULL, 2), CORT_ERROR_INVALID_ARGUMENT, "NULL");
    CHECK_ERR(cort_session_options_set_dim(o, "N", -3), CORT_ERROR_INVALID_ARGUMENT, "-3");
    CHECK_OK(cort_session_options_set_dim(o, "N", 2));
    cort_session_options_free(o);
    cort_session_options_free(NULL);

    cort_run_options *ro = NULL;
    CHECK_OK(cort_run_options_create(&ro));
    cort_run_options_set_terminate(ro, 1);
    cort_run_options_set_terminate(NULL, 1);
    cort_run_options_free(ro);
    cort_run_options_free(NULL);
}

static void test_values(void) {
    int64_t shape[2] = { 2, 3 };
    cort_value *t = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &t));
    CHECK(cort_tensor_rank(t) == 2 && cort_tensor_shape(t)[1] == 3 && cort_tensor_type(t) == CORT_TYPE_FLOAT);
    CHECK(cort_tensor_element_count(t) == 6 && cort_tensor_bytes(t) == 24);
    const float *d = cort_tensor_data(t);
    int zero = 1;
    for (int i = 0; i < 6; i++) zero &= d[i] == 0.0f;
    CHECK(zero);
    CHECK(((uintptr_t)d & 63) == 0);
    CHECK(cort_value_retain(t) == t);
    cort_value_release(t);
    cort_value_release(t);
    cort_value_release(NULL);

    int64_t bad[2] = { 2, -1 };
    CHECK_ERR(cort_tensor_create(CORT_TYPE_FLOAT, bad, 2, &t), CORT_ERROR_INVALID_ARGUMENT, "[2,?]");
    CHECK_ERR(cort_tensor_create((cort_type)99, shape, 2, &t), CORT_ERROR_INVALID_ARGUMENT, "99");
    CHECK_CODE(cort_tensor_create(CORT_TYPE_FLOAT, NULL, 2, &t), CORT_ERROR_INVALID_ARGUMENT);
    float buf[6] = { 0 };
    CHECK_ERR(cort_tensor_wrap(buf, 8, CORT_TYPE_FLOAT, shape, 2, &t), CORT_ERROR_INVALID_ARGUMENT, "24");
    CHECK_OK(cort_tensor_wrap(buf, sizeof buf, CORT_TYPE_FLOAT, shape, 2, &t));
    CHECK(cort_tensor_data(t) == buf);
    cort_value_release(t);

    /* strings */
    CHECK_OK(cort_tensor_create(CORT_TYPE_STRING, shape, 1, &t));
    CHECK(!strcmp(((char **)cort_tensor_data(t))[0], ""));
    CHECK_OK(cort_tensor_set_string(t, 1, "hello"));
    CHECK(!strcmp(((char **)cort_tensor_data(t))[1], "hello"));
    CHECK_CODE(cort_tensor_set_string(t, 5, "x"), CORT_ERROR_INVALID_ARGUMENT);
    cort_value_release(t);

    /* sequence / optional */
    cort_value *a = NULL, *seq = NULL, *opt = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_INT64, shape, 1, &a));
    CHECK_OK(cort_sequence_create(CORT_TYPE_INT64, &a, 1, &seq));
    CHECK(cort_value_kind(seq) == 2 && cort_sequence_length(seq) == 1 && cort_sequence_at(seq, 0) == a);
    CHECK(cort_sequence_at(seq, 1) == NULL);
    CHECK_OK(cort_optional_create(NULL, 1, CORT_TYPE_FLOAT, &opt));
    CHECK(cort_value_kind(opt) == 3 && cort_optional_value(opt) == NULL);
    cort_value_release(opt);
    CHECK_OK(cort_optional_create(seq, 2, CORT_TYPE_INT64, &opt));
    CHECK(cort_optional_value(opt) == seq);
    cort_value_release(opt);
    cort_value_release(seq);
    cort_value_release(a);
}

static void test_bad_models(void) {
    cort_session *s = NULL;
    CHECK_ERR(cort_session_create("tests/models/does_not_exist.onnx", NULL, &s), CORT_ERROR_IO, "does_not_exist");
    CHECK_CODE(cort_session_create(NULL, NULL, &s), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_create(MODEL("relu_add.onnx"), NULL, NULL), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_create_from_memory(NULL, 10, NULL, &s), CORT_ERROR_INVALID_ARGUMENT);
    const char junk[] = "this is not an onnx model at all, just text";
    CHECK_CODE(cort_session_create_from_memory(junk, sizeof junk, NULL, &s), CORT_ERROR_INVALID_MODEL);
    CHECK_CODE(cort_session_create_from_memory("", 0, NULL, &s), CORT_ERROR_INVALID_MODEL);
    size_t len = 0;
    unsigned char *bytes = tu_read_file(MODEL("relu_add.onnx"), &len);
    CHECK(bytes != NULL);
    if (bytes) {
        int crashed_or_ok = 0;
        for (size_t cut = 1; cut < len; cut += 7) {
            cort_status *st = cort_session_create_from_memory(bytes, cut, NULL, &s);
            if (!st) { crashed_or_ok++; cort_session_release(s); continue; }
            if (cort_status_code(st) != CORT_ERROR_INVALID_MODEL) crashed_or_ok++;
            cort_status_free(st);
        }
        CHECK_MSG(crashed_or_ok == 0, "%d truncations did not fail with INVALID_MODEL", crashed_or_ok);
        free(bytes);
    }
    /* fuzzer find: a Shape node whose other input is unknown leaked the folding placeholder */
    cort_status *st = cort_session_create(MODEL("regress_try_fold_leak.onnx"), NULL, &s);
    if (!st) cort_session_release(s);
    cort_status_free(st);
    st = cort_session_create(MODEL("unsupported.onnx"), NULL, &s);
    CHECK_ERR(st, CORT_ERROR_NOT_IMPLEMENTED, "mystery");
    st = cort_session_create(MODEL("unsupported.onnx"), NULL, &s);
    CHECK_ERR(st, CORT_ERROR_NOT_IMPLEMENTED, "NoSuchOp");
}

static void test_run_relu_add(void) {
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create(MODEL("relu_add.onnx"), NULL, &s))) return;
    CHECK(cort_session_input_count(s) == 1 && cort_session_output_count(s) == 2);
    CHECK(!strcmp(cort_session_input_name(s, 0), "X"));
    CHECK(!strcmp(cort_session_output_name(s, 1), "Z"));
    CHECK(cort_session_input_name(s, 1) == NULL);
    cort_value_type vt;
    int64_t dims[4];
    CHECK_OK(cort_session_input_type(s, 0, &vt, dims, 4));
    CHECK(vt.kind == 1 && vt.elem_type == CORT_TYPE_FLOAT && vt.rank == 2 && dims[0] == -1 && dims[1] == 4);
    CHECK(cort_session_input_dim_name(s, 0, 0) && !strcmp(cort_session_input_dim_name(s, 0, 0), "N"));
    CHECK(cort_session_input_dim_name(s, 0, 1) == NULL);
    CHECK(!strcmp(cort_session_metadata(s, "producer_name"), "cort-tests"));
    CHECK(cort_session_metadata(s, "metadata:purpose") && !strcmp(cort_session_metadata(s, "metadata:purpose"), "api tests"));
    CHECK(cort_session_metadata(s, "metadata:nope") == NULL);
    CHECK(cort_session_opset(s, "") == 13 && cort_session_opset(s, "ai.onnx") == 13 && cort_session_ir_version(s) == 8);
    CHECK(cort_session_allocator(s, "cpu") != NULL && cort_session_allocator(s, "xnnpack") == NULL);

    float x[8] = { -1, 2, -3, 4, 5, -6, 7, -8 }, b[4] = { 0.5f, -1.0f, 2.0f, 0.0f };
    int64_t shape[2] = { 2, 4 };
    cort_value *in = NULL;
    CHECK_OK(cort_tensor_wrap(x, sizeof x, CORT_TYPE_FLOAT, shape, 2, &in));
    const char *in_names[] = { "X" }, *out_names[] = { "Y", "Z" };
    cort_value *outs[2] = { NULL, NULL };
    CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 2, outs));
    if (outs[0] && outs[1]) {
        const float *y = cort_tensor_data(outs[0]), *z = cort_tensor_data(outs[1]);
        int ok = cort_tensor_shape(outs[0])[0] == 2 && cort_tensor_shape(outs[0])[1] == 4;
        for (int i = 0; i < 8; i++) ok &= fabsf(y[i] - ((x[i] > 0 ? x[i] : 0) + b[i % 4])) < 1e-6f && z[i] == x[i];
        CHECK(ok);
    }
    cort_value_release(outs[0]);
    cort_value_release(outs[1]);

    /* preallocated output of the right shape is written in place */
    cort_value *pre = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &pre));
    cort_value *o2[1] = { pre };
    CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 1, o2));
    CHECK(o2[0] == pre && fabsf(((float *)cort_tensor_data(pre))[1] - 1.0f) < 1e-6f);
    cort_value_release(pre);
    /* ... and of the wrong shape is refused, naming both shapes */
    int64_t wrong[2] = { 4, 2 };
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, wrong, 2, &pre));
    o2[0] = pre;
    CHECK_ERR(cort_session_run(s, NULL, in_names, &in, 1, out_names, 1, o2), CORT_ERROR_INVALID_ARGUMENT, "[4,2]");
    cort_value_release(pre);

    /* bad arguments */
    cort_value *o1[1] = { NULL };
    const char *bad_name[] = { "nope" };
    CHECK_ERR(cort_session_run(s, NULL, bad_name, &in, 1, out_names, 1, o1), CORT_ERROR_INVALID_ARGUMENT, "'nope'");
    CHECK(o1[0] == NULL);
    CHECK_ERR(cort_session_run(s, NULL, NULL, NULL, 0, out_names, 1, o1), CORT_ERROR_INVALID_ARGUMENT, "'X' was not given");
    CHECK_ERR(cort_session_run(s, NULL, in_names, &in, 1, bad_name, 1, o1), CORT_ERROR_INVALID_ARGUMENT, "'nope'");
    CHECK_CODE(cort_session_run(NULL, NULL, in_names, &in, 1, out_names, 1, o1), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_run(s, NULL, in_names, NULL, 1, out_names, 1, o1), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_run(s, NULL, in_names, &in, 1, out_names, 1, NULL), CORT_ERROR_INVALID_ARGUMENT);
    cort_value *twice[2] = { in, in };
    const char *twice_names[] = { "X", "X" };
    CHECK_ERR(cort_session_run(s, NULL, twice_names, twice, 2, out_names, 1, o1), CORT_ERROR_INVALID_ARGUMENT, "twice");
    int64_t ishape[2] = { 2, 4 };
    cort_value *iv = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_INT64, ishape, 2, &iv));
    CHECK_ERR(cort_session_run(s, NULL, in_names, &iv, 1, out_names, 1, o1), CORT_ERROR_INVALID_ARGUMENT, "int64");
    cort_value_release(iv);
    int64_t r3[3] = { 2, 4, 1 };
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, r3, 3, &iv));
    CHECK_ERR(cort_session_run(s, NULL, in_names, &iv, 1, out_names, 1, o1), CORT_ERROR_INVALID_ARGUMENT, "rank");
    cort_value_release(iv);
    int64_t d5[2] = { 2, 5 };
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, d5, 2, &iv));
    CHECK_ERR(cort_session_run(s, NULL, in_names, &iv, 1, out_names, 1, o1), CORT_ERROR_INVALID_ARGUMENT, "dimension 1");
    cort_value_release(iv);
    CHECK(o1[0] == NULL);

    cort_value_release(in);
    cort_session_release(s);
    cort_session_release(NULL);
}

/* Profiling counters: absent without the option; with it, every executed node counts each run. */
static void test_profiling(void) {
    cort_session *s = NULL;
    uint64_t ns = 0, cnt = 0;
    if (!CHECK_OK(cort_session_create(MODEL("relu_add.onnx"), NULL, &s))) return;
    CHECK_CODE(cort_session_node_profile(s, 0, &ns, &cnt), CORT_ERROR_NOT_IMPLEMENTED);
    cort_session_release(s);
    s = NULL;
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_CODE(cort_session_options_set_profiling(NULL, 1), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_OK(cort_session_options_set_profiling(o, 1));
    if (!CHECK_OK(cort_session_create(MODEL("relu_add.onnx"), o, &s))) { cort_session_options_free(o); return; }
    cort_session_options_free(o);
    float x[8] = { -1, 2, -3, 4, 5, -6, 7, -8 };
    int64_t shape[2] = { 2, 4 };
    cort_value *in = NULL;
    CHECK_OK(cort_tensor_wrap(x, sizeof x, CORT_TYPE_FLOAT, shape, 2, &in));
    const char *in_names[] = { "X" }, *out_names[] = { "Y" };
    for (int r = 0; r < 3; r++) {
        cort_value *out = NULL;
        CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 1, &out));
        cort_value_release(out);
    }
    size_t n = cort_session_node_count(s), executed = 0;
    for (size_t i = 0; i < n; i++) {
        const char *prov = NULL;
        CHECK_OK(cort_session_node_info(s, i, NULL, NULL, &prov));
        CHECK_OK(cort_session_node_profile(s, i, &ns, &cnt));
        /* folded nodes never run; every other node ran once per run */
        CHECK_MSG(cnt == (prov && !strcmp(prov, "folded") ? 0u : 3u), "node %zu (%s) ran %llu times", i, prov,
                  (unsigned long long)cnt);
        executed += cnt != 0;
    }
    CHECK(executed > 0);
    CHECK_CODE(cort_session_node_profile(s, n, &ns, &cnt), CORT_ERROR_INVALID_ARGUMENT);
    cort_session_profile_reset(s);
    CHECK_OK(cort_session_node_profile(s, 0, &ns, &cnt));
    CHECK(ns == 0 && cnt == 0);
    cort_value_release(in);
    cort_session_release(s);
}

static void test_local_function(void) {
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create(MODEL("local_function.onnx"), NULL, &s))) return;
    float x[3] = { -1, 2, 3 };
    int64_t shape[1] = { 3 };
    cort_value *in = NULL, *out = NULL;
    CHECK_OK(cort_tensor_wrap(x, sizeof x, CORT_TYPE_FLOAT, shape, 1, &in));
    const char *in_names[] = { "X" }, *out_names[] = { "Y" };
    CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 1, &out));
    if (out) {
        const float *y = cort_tensor_data(out);
        /* Y = relu(relu(2x) + x) */
        CHECK(y[0] == 0.0f && y[1] == 6.0f && y[2] == 9.0f);
    }
    cort_value_release(out);
    cort_value_release(in);
    cort_session_release(s);
}

/* Concurrent runs on one session give exactly the sequential results. */
typedef struct conc_arg { cort_session *s; cort_value *in; const float *expect; size_t n; int ok; } conc_arg;
static void *conc_main(void *p) {
    conc_arg *a = p;
    const char *in_names[] = { "X" }, *out_names[] = { "P" };
    a->ok = 1;
    for (int r = 0; r < 50; r++) {
        cort_value *out = NULL;
        cort_status *st = cort_session_run(a->s, NULL, in_names, &a->in, 1, out_names, 1, &out);
        if (st) { a->ok = 0; cort_status_free(st); break; }
        a->ok &= !memcmp(cort_tensor_data(out), a->expect, a->n * sizeof(float));
        cort_value_release(out);
    }
    return NULL;
}

static void test_concurrent_runs(void) {
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_threads(o, 2));
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create(MODEL("mlp.onnx"), o, &s))) { cort_session_options_free(o); return; }
    cort_session_options_free(o);
    int64_t shape[2] = { 8, 64 };
    cort_value *in = NULL, *out = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &in));
    float *x = cort_tensor_data(in);
    for (int i = 0; i < 8 * 64; i++) x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    const char *in_names[] = { "X" }, *out_names[] = { "P" };
    if (!CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 1, &out))) goto done;
    CHECK(cort_tensor_shape(out)[0] == 8 && cort_tensor_shape(out)[1] == 10);
    float sum = 0;
    for (int i = 0; i < 10; i++) sum += ((float *)cort_tensor_data(out))[i];
    CHECK(fabsf(sum - 1.0f) < 1e-5f);
    pthread_t th[4];
    conc_arg args[4];
    for (int t = 0; t < 4; t++) {
        args[t] = (conc_arg){ s, in, cort_tensor_data(out), 80, 0 };
        pthread_create(&th[t], NULL, conc_main, &args[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        CHECK_MSG(args[t].ok, "thread %d got results different from the sequential run", t);
    }
done:
    cort_value_release(out);
    cort_value_release(in);
    cort_session_release(s);
}

int main(void) {
    size_t base = in_use();
    test_status_and_options();
    test_values();
    test_bad_models();
    test_run_relu_add();
    test_profiling();
    test_local_function();
    test_concurrent_runs();
    /* everything created above was released: the allocator must be back where it started */
    size_t now = in_use();
    CHECK_MSG(now == base, "bytes in use %zu at start, %zu at end (leak)", base, now);
    return tu_finish();
}
