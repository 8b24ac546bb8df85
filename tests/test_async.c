/* cort_session_run_async: lifetimes, callbacks, cancellation, release from callbacks.
 * Deadlines here only detect hangs (a hang fails the test); nothing asserts on speed. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"

#define MODEL(name) "tests/models/" name
#define HANG_SECONDS 120

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t in_use(void) {
    cort_allocator_stats s;
    cort_status_free(cort_allocator_get_stats(&s));
    return s.bytes_in_use;
}

/* Waits until *counter reaches target; returns 0 on a hang. */
static int wait_count(atomic_int *counter, int target) {
    double deadline = now_s() + HANG_SECONDS;
    while (atomic_load(counter) < target) {
        if (now_s() > deadline) return 0;
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    return 1;
}

/* Allocations made by a job are freed just after its callback returns: wait for the count to settle. */
static int wait_in_use(size_t target) {
    double deadline = now_s() + HANG_SECONDS;
    while (in_use() != target) {
        if (now_s() > deadline) return 0;
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    return 1;
}

static cort_session *open_model(const char *path, int threads) {
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    cort_status_free(cort_session_options_create(&o));
    cort_status_free(cort_session_options_set_threads(o, threads));
    CHECK_OK(cort_session_create(path, o, &s));
    cort_session_options_free(o);
    return s;
}

/* ---- 1. the caller frees everything right after submitting; 1 intra-op thread ---- */
typedef struct result {
    atomic_int done;
    cort_code code;
    pthread_t thread;
    float y[8];
    size_t n_outputs;
} result;

static void cb_store(void *user, cort_status *st, cort_value **outs, size_t n) {
    result *r = user;
    r->code = cort_status_code(st);
    r->thread = pthread_self();
    r->n_outputs = n;
    cort_status_free(st);
    if (n >= 1 && outs[0]) memcpy(r->y, cort_tensor_data(outs[0]), sizeof r->y);
    for (size_t i = 0; i < n; i++) cort_value_release(outs[i]);
    atomic_store(&r->done, 1);
}

static const float X[8] = { -1, 2, -3, 4, 5, -6, 7, -8 }, B[4] = { 0.5f, -1.0f, 2.0f, 0.0f };

static int check_y(const float *y) {
    for (int i = 0; i < 8; i++)
        if (fabsf(y[i] - ((X[i] > 0 ? X[i] : 0) + B[i % 4])) > 1e-6f) return 0;
    return 1;
}

static void test_caller_frees_everything(void) {
    cort_session *s = open_model(MODEL("relu_add.onnx"), 1);
    if (!s) return;
    result r = { 0 };
    int64_t shape[2] = { 2, 4 };
    float *data = malloc(sizeof X);
    memcpy(data, X, sizeof X);
    cort_value *in = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &in));
    memcpy(cort_tensor_data(in), X, sizeof X);
    free(data);
    char **in_names = malloc(sizeof(char *)), **out_names = malloc(sizeof(char *));
    in_names[0] = strdup("X");
    out_names[0] = strdup("Y");
    cort_value **ins = malloc(sizeof(cort_value *));
    ins[0] = in;
    cort_run_options *ro = NULL;
    CHECK_OK(cort_run_options_create(&ro));
    CHECK_OK(cort_session_run_async(s, ro, (const char *const *)in_names, ins, 1, (const char *const *)out_names, 1, NULL,
                                    cb_store, &r));
    /* poison and free everything the call was given */
    in_names[0][0] = '#';
    out_names[0][0] = '#';
    free(in_names[0]); free(out_names[0]); free(in_names); free(out_names);
    ins[0] = NULL;
    free(ins);
    cort_value_release(in);
    cort_run_options_free(ro);
    cort_session_release(s);   /* the run keeps the session alive */
    CHECK_MSG(wait_count(&r.done, 1), "callback never came (hang)");
    CHECK(r.code == CORT_OK && r.n_outputs == 1 && check_y(r.y));
    CHECK(!pthread_equal(r.thread, pthread_self()));
}

/* ---- 2. preallocated outputs; a wrong static shape is refused by the call, a wrong dynamic one by the callback ---- */
static atomic_int never_called;
static void cb_never(void *user, cort_status *st, cort_value **outs, size_t n) {
    (void)user; (void)outs; (void)n;
    cort_status_free(st);
    atomic_fetch_add(&never_called, 1);
}
static void test_preallocated(void) {
    cort_session *s = open_model(MODEL("relu_add.onnx"), 1);
    if (!s) return;
    int64_t shape[2] = { 2, 4 }, wrong[2] = { 8, 1 }, late[2] = { 3, 4 };
    cort_value *in = NULL, *pre = NULL, *bad = NULL, *bad_late = NULL, *bad_type = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &in));
    memcpy(cort_tensor_data(in), X, sizeof X);
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &pre));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, wrong, 2, &bad));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, late, 2, &bad_late));
    CHECK_OK(cort_tensor_create(CORT_TYPE_DOUBLE, shape, 2, &bad_type));
    const char *in_names[] = { "X" }, *out_names[] = { "Y" };
    result r1 = { 0 }, r2 = { 0 };
    int before = atomic_load(&never_called);
    CHECK_OK(cort_session_run_async(s, NULL, in_names, &in, 1, out_names, 1, &pre, cb_store, &r1));
    /* dimension 1 is static (4) in the model: the call itself refuses [8,1] */
    cort_status *st = cort_session_run_async(s, NULL, in_names, &in, 1, out_names, 1, &bad, cb_never, NULL);
    CHECK(st && cort_status_code(st) == CORT_ERROR_INVALID_ARGUMENT && strstr(cort_status_message(st), "'Y'") &&
          strstr(cort_status_message(st), "[8,1]"));
    cort_status_free(st);
    CHECK_CODE(cort_session_run_async(s, NULL, in_names, &in, 1, out_names, 1, &bad_type, cb_never, NULL),
               CORT_ERROR_INVALID_ARGUMENT);
    /* N is symbolic: [3,4] can only be found wrong by running, so the callback reports it */
    CHECK_OK(cort_session_run_async(s, NULL, in_names, &in, 1, out_names, 1, &bad_late, cb_store, &r2));
    cort_value_release(bad);
    cort_value_release(bad_late);
    cort_value_release(bad_type);
    CHECK(wait_count(&r1.done, 1) && wait_count(&r2.done, 1));
    CHECK(r1.code == CORT_OK && check_y(r1.y) && check_y(cort_tensor_data(pre)));
    CHECK(r2.code == CORT_ERROR_INVALID_ARGUMENT && r2.n_outputs == 0);
    CHECK(atomic_load(&never_called) == before);
    cort_value_release(pre);
    cort_value_release(in);
    cort_session_release(s);
}

/* ---- 3. rejected submissions return a status and never call back ---- */
static void expect_rejected(cort_status *st, const char *needle) {
    CHECK_MSG(st != NULL, "run_async accepted a run it could have refused (expected: %s)", needle);
    if (!st) return;
    CHECK(cort_status_code(st) == CORT_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(cort_status_message(st), needle) != NULL, "message '%s' lacks '%s'", cort_status_message(st), needle);
    cort_status_free(st);
}
static void test_rejected(void) {
    cort_session *s = open_model(MODEL("relu_add.onnx"), 1);
    if (!s) return;
    const char *in_names[] = { "X" }, *out_names[] = { "Y" };
    cort_value *nullv[1] = { NULL };
    int before = atomic_load(&never_called);
    CHECK_CODE(cort_session_run_async(s, NULL, in_names, NULL, 1, out_names, 1, NULL, cb_never, NULL),
               CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_run_async(s, NULL, in_names, nullv, 1, out_names, 1, NULL, cb_never, NULL),
               CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_run_async(s, NULL, in_names, nullv, 0, out_names, 1, NULL, NULL, NULL),
               CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_run_async(NULL, NULL, in_names, nullv, 0, out_names, 1, NULL, cb_never, NULL),
               CORT_ERROR_INVALID_ARGUMENT);

    int64_t shape[2] = { 2, 4 }, rank3[3] = { 2, 4, 1 }, dim[2] = { 2, 5 };
    cort_value *x = NULL, *xd = NULL, *x3 = NULL, *x5 = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &x));
    memcpy(cort_tensor_data(x), X, sizeof X);
    CHECK_OK(cort_tensor_create(CORT_TYPE_DOUBLE, shape, 2, &xd));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, rank3, 3, &x3));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, dim, 2, &x5));
    const char *unknown_in[] = { "nope" }, *unknown_out[] = { "W" }, *twice[] = { "X", "X" };
    cort_value *two[2] = { x, x };
    expect_rejected(cort_session_run_async(s, NULL, unknown_in, &x, 1, out_names, 1, NULL, cb_never, NULL), "'nope'");
    expect_rejected(cort_session_run_async(s, NULL, in_names, &x, 1, unknown_out, 1, NULL, cb_never, NULL), "'W'");
    expect_rejected(cort_session_run_async(s, NULL, in_names, nullv, 0, out_names, 1, NULL, cb_never, NULL), "not given");
    expect_rejected(cort_session_run_async(s, NULL, twice, two, 2, out_names, 1, NULL, cb_never, NULL), "twice");
    expect_rejected(cort_session_run_async(s, NULL, in_names, &xd, 1, out_names, 1, NULL, cb_never, NULL), "element type");
    expect_rejected(cort_session_run_async(s, NULL, in_names, &x3, 1, out_names, 1, NULL, cb_never, NULL), "rank");
    expect_rejected(cort_session_run_async(s, NULL, in_names, &x5, 1, out_names, 1, NULL, cb_never, NULL), "dimension 1");
    cort_value_release(xd);
    cort_value_release(x3);
    cort_value_release(x5);
    /* an accepted run still calls back exactly once (the count below is for cb_never's runs only) */
    result r = { 0 };
    CHECK_OK(cort_session_run_async(s, NULL, in_names, &x, 1, out_names, 1, NULL, cb_store, &r));
    CHECK(wait_count(&r.done, 1) && r.code == CORT_OK);
    cort_value_release(x);
    cort_session_release(s);
    /* no callback followed a refused call (one queued before r would most likely have run by now) */
    CHECK(atomic_load(&never_called) == before);
}

/* ---- 4. the last session release inside the callback; callbacks submitting new runs ---- */
typedef struct chain {
    cort_session *s;
    cort_value *in;
    atomic_int remaining, done, ok;
} chain;

static void cb_chain(void *user, cort_status *st, cort_value **outs, size_t n) {
    chain *c = user;
    int good = !st && n == 1 && check_y(cort_tensor_data(outs[0]));
    cort_status_free(st);
    for (size_t i = 0; i < n; i++) cort_value_release(outs[i]);
    if (!good) atomic_store(&c->ok, 0);
    if (atomic_fetch_sub(&c->remaining, 1) > 1) {
        const char *in_names[] = { "X" }, *out_names[] = { "Y" };
        cort_status *st2 = cort_session_run_async(c->s, NULL, in_names, &c->in, 1, out_names, 1, NULL, cb_chain, c);
        if (st2) { atomic_store(&c->ok, 0); cort_status_free(st2); atomic_store(&c->done, 1); }
        return;
    }
    /* last link: drop the last user reference of the session from inside its own callback */
    cort_session_release(c->s);
    cort_value_release(c->in);
    atomic_store(&c->done, 1);
}

static void test_release_in_callback(int threads) {
    size_t base = in_use();
    chain c;
    c.s = open_model(MODEL("relu_add.onnx"), threads);
    if (!c.s) return;
    int64_t shape[2] = { 2, 4 };
    c.in = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &c.in));
    memcpy(cort_tensor_data(c.in), X, sizeof X);
    atomic_init(&c.remaining, 10);
    atomic_init(&c.done, 0);
    atomic_init(&c.ok, 1);
    const char *in_names[] = { "X" }, *out_names[] = { "Y" };
    CHECK_OK(cort_session_run_async(c.s, NULL, in_names, &c.in, 1, out_names, 1, NULL, cb_chain, &c));
    CHECK_MSG(wait_count(&c.done, 1), "chain did not finish (threads=%d)", threads);
    CHECK(atomic_load(&c.ok));
    /* the session is destroyed on the worker after the callback returned; nothing leaks */
    CHECK_MSG(wait_in_use(base), "bytes in use did not return to %zu (now %zu)", base, in_use());
}

/* ---- 5. many runs in flight; results equal the sequential one ---- */
typedef struct many { atomic_int done, bad; float expect[80]; } many;
static void cb_many(void *user, cort_status *st, cort_value **outs, size_t n) {
    many *m = user;
    if (st || n != 1 || memcmp(cort_tensor_data(outs[0]), m->expect, sizeof m->expect)) atomic_fetch_add(&m->bad, 1);
    cort_status_free(st);
    for (size_t i = 0; i < n; i++) cort_value_release(outs[i]);
    atomic_fetch_add(&m->done, 1);
}

static void test_many_in_flight(void) {
    cort_session *s = open_model(MODEL("mlp.onnx"), 2);
    if (!s) return;
    int64_t shape[2] = { 8, 64 };
    cort_value *in = NULL, *out = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &in));
    float *x = cort_tensor_data(in);
    for (int i = 0; i < 8 * 64; i++) x[i] = (float)((i * 13) % 29) / 14.0f - 1.0f;
    const char *in_names[] = { "X" }, *out_names[] = { "P" };
    static many m;
    atomic_init(&m.done, 0);
    atomic_init(&m.bad, 0);
    if (CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 1, &out))) {
        memcpy(m.expect, cort_tensor_data(out), sizeof m.expect);
        cort_value_release(out);
        enum { RUNS = 128 };
        int accepted = 0;
        for (int i = 0; i < RUNS; i++) {
            cort_status *st = cort_session_run_async(s, NULL, in_names, &in, 1, out_names, 1, NULL, cb_many, &m);
            if (!st) accepted++;
            cort_status_free(st);
        }
        CHECK(accepted == RUNS);
        CHECK(wait_count(&m.done, accepted));
        CHECK_MSG(atomic_load(&m.bad) == 0, "%d of %d async results differ from the sequential run", atomic_load(&m.bad),
                  accepted);
    }
    cort_value_release(in);
    cort_session_release(s);
}

/* ---- 6. terminate stops a long run; latency is reported, not asserted ---- */
typedef struct cancel_res { atomic_int done; cort_code code; double at; } cancel_res;
static void cb_cancel(void *user, cort_status *st, cort_value **outs, size_t n) {
    cancel_res *c = user;
    c->code = cort_status_code(st);
    c->at = now_s();
    cort_status_free(st);
    for (size_t i = 0; i < n; i++) cort_value_release(outs[i]);
    atomic_store(&c->done, 1);
}

static void test_terminate(void) {
    cort_session *s = open_model(MODEL("slow_loop.onnx"), 1);
    if (!s) return;
    int64_t shape[2] = { 256, 256 };
    cort_value *in = NULL, *m = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &in));
    CHECK_OK(cort_tensor_create(CORT_TYPE_INT64, NULL, 0, &m));
    *(int64_t *)cort_tensor_data(m) = 1000000;   /* would take far longer than the hang deadline */
    cort_run_options *ro = NULL;
    CHECK_OK(cort_run_options_create(&ro));
    const char *in_names[] = { "M", "X" }, *out_names[] = { "Y" };
    cort_value *ins[2] = { m, in };
    cancel_res c = { 0 };
    CHECK_OK(cort_session_run_async(s, ro, in_names, ins, 2, out_names, 1, NULL, cb_cancel, &c));
    cort_value_release(in);
    cort_value_release(m);
    struct timespec ts = { 0, 50 * 1000000 };
    nanosleep(&ts, NULL);
    double t0 = now_s();
    cort_run_options_set_terminate(ro, 1);
    cort_run_options_free(ro);   /* the run holds its own reference */
    CHECK_MSG(wait_count(&c.done, 1), "cancelled run never called back");
    CHECK(c.code == CORT_ERROR_CANCELLED);
    printf("cancel latency (set -> callback): %.3f ms\n", (c.at - t0) * 1e3);
    cort_session_release(s);
}

int main(void) {
    size_t base = in_use();
    test_caller_frees_everything();
    test_preallocated();
    test_rejected();
    test_release_in_callback(1);
    test_release_in_callback(2);
    test_many_in_flight();
    test_terminate();
    CHECK_MSG(wait_in_use(base), "bytes in use %zu at start, %zu at end", base, in_use());
    return tu_finish();
}
