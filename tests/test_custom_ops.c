/* Custom operators: registration rules, the kernel contract (create/infer/compute, attributes,
 * outputs, errors), no constant folding of user kernels, sessions outliving their options,
 * concurrent runs, and a library loaded from a file (tests/custom_op_lib/). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

#define MODEL(name) "tests/models/" name

/* ---- an in-process ScaledAdd that counts its calls and records what it saw ---- */
typedef struct seen {
    atomic_int creates, destroys, infers, computes;
    float alpha;
    char tag[32];
    int opset;
    int fail_compute, fail_create;
} seen;

typedef struct node_state { float alpha; } node_state;

static cort_status *sa_create(void *user, const cort_op_context *node, void **state) {
    seen *s = user;
    atomic_fetch_add(&s->creates, 1);
    if (s->fail_create) return cort_status_create(CORT_ERROR_INVALID_MODEL, "alpha out of range (test)");
    node_state *ns = malloc(sizeof *ns);
    if (!ns) return cort_status_create(CORT_ERROR_OUT_OF_MEMORY, "out of memory");
    ns->alpha = 1.0f;
    cort_op_attr_float(node, "alpha", &ns->alpha);
    const char *tag = cort_op_attr_string(node, "tag");
    snprintf(s->tag, sizeof s->tag, "%s", tag ? tag : "(none)");
    s->alpha = ns->alpha;
    s->opset = cort_op_opset(node);
    *state = ns;
    return NULL;
}
static void sa_destroy(void *user, void *state) {
    atomic_fetch_add(&((seen *)user)->destroys, 1);
    free(state);
}
static cort_status *sa_infer(void *user, void *state, cort_op_context *ctx) {
    (void)state;
    atomic_fetch_add(&((seen *)user)->infers, 1);
    cort_type t;
    int64_t dims[16];
    int rank;
    cort_status *st = cort_op_input_type(ctx, 0, &t, dims, 16, &rank);
    if (st) return st;
    return cort_op_set_output_type(ctx, 0, CORT_TYPE_FLOAT, dims, rank);
}
typedef struct par { const float *a, *b; float *y; size_t nb; float alpha; } par;
static void sa_range(void *arg, size_t begin, size_t end) {
    const par *p = arg;
    for (size_t i = begin; i < end; i++) p->y[i] = p->alpha * p->a[i] + p->b[i % p->nb];
}
static cort_status *sa_compute(void *user, void *state, cort_op_context *ctx) {
    seen *s = user;
    atomic_fetch_add(&s->computes, 1);
    if (s->fail_compute) return cort_status_create(CORT_ERROR_RUNTIME, "user kernel refused (test)");
    const cort_value *a = cort_op_input(ctx, 0), *b = cort_op_input(ctx, 1);
    cort_value *y = NULL;
    cort_status *st = cort_op_output(ctx, 0, CORT_TYPE_FLOAT, cort_tensor_shape(a), cort_tensor_rank(a), &y);
    if (st) return st;
    /* a second make of the same output is refused */
    cort_value *again = NULL;
    st = cort_op_output(ctx, 0, CORT_TYPE_FLOAT, cort_tensor_shape(a), cort_tensor_rank(a), &again);
    if (!st) return cort_status_create(CORT_ERROR_RUNTIME, "cort_op_output accepted output 0 twice");
    cort_status_free(st);
    par p = { cort_tensor_data(a), cort_tensor_data(b), cort_tensor_data(y), cort_tensor_element_count(b),
              ((const node_state *)state)->alpha };
    cort_op_parallel_for(ctx, cort_tensor_element_count(a), sa_range, &p);
    return NULL;
}

static cort_custom_op scaled_add(seen *s) {
    cort_custom_op op = { CORT_CUSTOM_OP_VERSION, "test.cort", "ScaledAdd", 1, 0, s,
                          sa_create, sa_destroy, sa_infer, sa_compute };
    return op;
}

static cort_session *create(const char *path, cort_session_options *o, cort_status **st_out) {
    cort_session *s = NULL;
    cort_status *st = cort_session_create(path, o, &s);
    if (st_out) *st_out = st;
    else CHECK_OK(st);
    return s;
}

/* A session of model with the in-process ScaledAdd registered (threads 0 = default); the options
 * are freed before it returns, so every user also checks that a session outlives its options. */
static cort_session *open_scaled_add(const char *model, seen *sn, int threads) {
    cort_session_options *o = NULL;
    if (!CHECK_OK(cort_session_options_create(&o))) return NULL;
    if (threads) CHECK_OK(cort_session_options_set_threads(o, threads));
    cort_custom_op op = scaled_add(sn);
    CHECK_OK(cort_session_options_add_custom_op(o, &op));
    cort_session *s = create(model, o, NULL);
    cort_session_options_free(o);
    return s;
}

static const float B[4] = { 0.5f, -1.0f, 2.0f, -3.0f };

/* runs custom_op.onnx on a [3,4] input and checks Y = relu(alpha*X + B) */
static int run_and_check(cort_session *sess, float alpha) {
    int64_t shape[2] = { 3, 4 };
    cort_value *x = NULL, *y = NULL;
    if (cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &x)) return 0;
    float *px = cort_tensor_data(x);
    for (int i = 0; i < 12; i++) px[i] = (float)i * 0.25f - 1.0f;
    const char *in[] = { "X" }, *out[] = { "Y" };
    cort_status *st = cort_session_run(sess, NULL, in, &x, 1, out, 1, &y);
    int ok = st == NULL;
    if (st) { fprintf(stderr, "run: %s\n", cort_status_message(st)); cort_status_free(st); }
    for (int i = 0; ok && i < 12; i++) {
        float want = alpha * px[i] + B[i % 4];
        if (want < 0) want = 0;
        if (fabsf(((float *)cort_tensor_data(y))[i] - want) > 1e-6f) ok = 0;
    }
    cort_value_release(x);
    cort_value_release(y);
    return ok;
}

static void test_unregistered_is_not_implemented(void) {
    cort_status *st = NULL;
    cort_session *s = create(MODEL("custom_op.onnx"), NULL, &st);
    CHECK(!s);
    CHECK_ERR(st, CORT_ERROR_NOT_IMPLEMENTED, "test.cort.ScaledAdd");
}

static void test_in_process(void) {
    seen sn = { 0 };
    cort_session *s = open_scaled_add(MODEL("custom_op.onnx"), &sn, 2);
    if (!s) return;
    CHECK(atomic_load(&sn.creates) == 1 && atomic_load(&sn.infers) >= 1);
    CHECK(sn.alpha == 2.5f && !strcmp(sn.tag, "hello") && sn.opset == 3);
    const char *name, *type, *provider;
    int found = 0;
    for (size_t i = 0; i < cort_session_node_count(s); i++) {
        CHECK_OK(cort_session_node_info(s, i, &name, &type, &provider));
        if (!strcmp(type, "ScaledAdd")) { found = 1; CHECK(!strcmp(provider, "custom")); }
    }
    CHECK_MSG(found, "no ScaledAdd node in the compiled session");
    CHECK(run_and_check(s, 2.5f));
    CHECK(run_and_check(s, 2.5f));
    CHECK(atomic_load(&sn.computes) == 2);
    cort_session_release(s);
    CHECK(atomic_load(&sn.destroys) == 1);
}

/* constant inputs only: a built-in node like this would be folded at creation; a user kernel runs each time */
static void test_never_folded(void) {
    seen sn = { 0 };
    cort_session *s = open_scaled_add(MODEL("custom_op_const.onnx"), &sn, 0);
    if (!s) return;
    int before = atomic_load(&sn.computes);
    int64_t shape[2] = { 2, 3 };
    cort_value *x = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &x));
    memset(cort_tensor_data(x), 0, 6 * sizeof(float));
    const char *in[] = { "X" }, *out[] = { "Y" };
    for (int r = 0; r < 3; r++) {
        cort_value *y = NULL;
        CHECK_OK(cort_session_run(s, NULL, in, &x, 1, out, 1, &y));
        if (y) CHECK(((float *)cort_tensor_data(y))[5] == 10.0f);   /* 1 * 5 + 5 */
        cort_value_release(y);
    }
    CHECK_MSG(atomic_load(&sn.computes) - before == 3, "compute ran %d times in 3 runs (folded?)",
              atomic_load(&sn.computes) - before);
    cort_value_release(x);
    cort_session_release(s);
}

static void test_registration_rules(void) {
    seen sn = { 0 };
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    cort_custom_op op = scaled_add(&sn);
    op.version = 99;
    CHECK_ERR(cort_session_options_add_custom_op(o, &op), CORT_ERROR_INVALID_ARGUMENT, "version");
    op = scaled_add(&sn);
    op.compute = NULL;
    CHECK_ERR(cort_session_options_add_custom_op(o, &op), CORT_ERROR_INVALID_ARGUMENT, "compute");
    op = scaled_add(&sn);
    op.op_type = "";
    CHECK_ERR(cort_session_options_add_custom_op(o, &op), CORT_ERROR_INVALID_ARGUMENT, "op_type");
    op = scaled_add(&sn);
    op.since_version = 3;
    op.end_version = 2;
    CHECK_ERR(cort_session_options_add_custom_op(o, &op), CORT_ERROR_INVALID_ARGUMENT, "3..2");
    CHECK_CODE(cort_session_options_add_custom_op(o, NULL), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_options_add_custom_op(NULL, &op), CORT_ERROR_INVALID_ARGUMENT);
    /* versions 1..2 only: the model imports test.cort version 3 */
    op = scaled_add(&sn);
    op.end_version = 2;
    CHECK_OK(cort_session_options_add_custom_op(o, &op));
    op.since_version = 2;
    op.end_version = 5;
    CHECK_ERR(cort_session_options_add_custom_op(o, &op), CORT_ERROR_INVALID_ARGUMENT, "overlap");
    cort_status *st = NULL;
    cort_session *s = create(MODEL("custom_op.onnx"), o, &st);
    CHECK(!s);
    CHECK_ERR(st, CORT_ERROR_NOT_IMPLEMENTED, "ScaledAdd");
    /* a session made before a later registration keeps its own set */
    op.since_version = 3;
    op.end_version = 0;
    CHECK_OK(cort_session_options_add_custom_op(o, &op));
    s = create(MODEL("custom_op.onnx"), o, NULL);
    CHECK(s && run_and_check(s, 2.5f));
    cort_custom_op other = scaled_add(&sn);
    other.op_type = "Other";
    CHECK_OK(cort_session_options_add_custom_op(o, &other));
    CHECK(s && run_and_check(s, 2.5f));
    cort_session_release(s);
    cort_session_options_free(o);
}

static void test_user_errors(void) {
    seen sn = { 0 };
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    cort_custom_op op = scaled_add(&sn);
    CHECK_OK(cort_session_options_add_custom_op(o, &op));
    sn.fail_create = 1;
    cort_status *st = NULL;
    cort_session *s = create(MODEL("custom_op.onnx"), o, &st);
    CHECK(!s);
    CHECK_ERR(st, CORT_ERROR_INVALID_MODEL, "scale_add");
    sn.fail_create = 0;
    s = create(MODEL("custom_op.onnx"), o, NULL);
    cort_session_options_free(o);
    if (!s) return;
    sn.fail_compute = 1;
    int64_t shape[2] = { 1, 4 };
    cort_value *x = NULL, *y = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &x));
    const char *in[] = { "X" }, *out[] = { "Y" };
    st = cort_session_run(s, NULL, in, &x, 1, out, 1, &y);
    CHECK(y == NULL);
    CHECK_MSG(st && strstr(cort_status_message(st), "scale_add") && strstr(cort_status_message(st), "user kernel refused"),
              "message: %s", cort_status_message(st));
    cort_status_free(st);
    sn.fail_compute = 0;
    cort_value_release(x);
    cort_session_release(s);
}

typedef struct worker { cort_session *s; int ok; } worker;
static void *run_many(void *arg) {
    worker *w = arg;
    w->ok = 1;
    for (int i = 0; i < 50 && w->ok; i++) w->ok = run_and_check(w->s, 2.5f);
    return NULL;
}
static void test_concurrent_runs(void) {
    seen sn = { 0 };
    cort_session *s = open_scaled_add(MODEL("custom_op.onnx"), &sn, 2);
    if (!s) return;
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) { w[i].s = s; pthread_create(&t[i], NULL, run_many, &w[i]); }
    for (int i = 0; i < 4; i++) { pthread_join(t[i], NULL); CHECK(w[i].ok); }
    CHECK(atomic_load(&sn.computes) == 200);
    cort_session_release(s);
}

static void test_library(void) {
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_ERR(cort_session_options_load_custom_op_library(o, "/nonexistent/libnothing.so"), CORT_ERROR_INVALID_ARGUMENT,
              "/nonexistent/libnothing.so");
    CHECK_ERR(cort_session_options_load_custom_op_library(o, "libm.so.6"), CORT_ERROR_INVALID_ARGUMENT,
              "cort_register_custom_ops");
    CHECK_CODE(cort_session_options_load_custom_op_library(o, NULL), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_OK(cort_session_options_load_custom_op_library(o, CORT_TEST_CUSTOM_LIB));
    cort_session *s = create(MODEL("custom_op.onnx"), o, NULL);
    cort_session_options_free(o);
    if (!s) return;
    CHECK(run_and_check(s, 2.5f));
    cort_session_release(s);
    /* registering twice on the same options: the second overlaps the first */
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_load_custom_op_library(o, CORT_TEST_CUSTOM_LIB));
    CHECK_ERR(cort_session_options_load_custom_op_library(o, CORT_TEST_CUSTOM_LIB), CORT_ERROR_INVALID_ARGUMENT, "overlap");
    cort_session_options_free(o);
}

static void test_status_create(void) {
    cort_status *st = cort_status_create(CORT_OK, NULL);
    CHECK(cort_status_code(st) == CORT_ERROR_RUNTIME && !strcmp(cort_status_message(st), ""));
    cort_status_free(st);
    st = cort_status_create(CORT_ERROR_IO, "disk %s gone");
    CHECK(cort_status_code(st) == CORT_ERROR_IO && !strcmp(cort_status_message(st), "disk %s gone"));
    cort_status_free(st);
    const cort_custom_op_api *api = cort_get_custom_op_api();
    CHECK(api && api->version == CORT_CUSTOM_OP_VERSION && api->op_output == cort_op_output);
}

int main(void) {
    test_unregistered_is_not_implemented();
    test_in_process();
    test_never_folded();
    test_registration_rules();
    test_user_errors();
    test_concurrent_runs();
    test_library();
    test_status_create();
    return tu_finish();
}
