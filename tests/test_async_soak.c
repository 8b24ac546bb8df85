/* Soak: 10,000 async runs (CORT_SOAK_RUNS overrides) mixing normal runs, cancelled runs, runs whose
 * session the caller releases right after submitting, and callbacks that release. Every callback
 * must come exactly once, every run must succeed or be cancelled, and nothing may leak. The deadline
 * only detects hangs. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"

#define HANG_SECONDS 600

static atomic_int *calls;
static atomic_int done, bad_status, bad_value;
static const float X[8] = { -1, 2, -3, 4, 5, -6, 7, -8 };

static size_t in_use(void) {
    cort_allocator_stats s;
    cort_status_free(cort_allocator_get_stats(&s));
    return s.bytes_in_use;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void cb(void *user, cort_status *st, cort_value **outs, size_t n) {
    size_t id = (size_t)(uintptr_t)user;
    atomic_fetch_add(&calls[id], 1);
    cort_code c = cort_status_code(st);
    if (c != CORT_OK && c != CORT_ERROR_CANCELLED) atomic_fetch_add(&bad_status, 1);
    if (!st) {
        const float *y = cort_tensor_data(outs[0]);
        if (n != 1 || y[1] != 2.0f + -1.0f) atomic_fetch_add(&bad_value, 1);
    }
    cort_status_free(st);
    for (size_t i = 0; i < n; i++) cort_value_release(outs[i]);
    atomic_fetch_add(&done, 1);
}

int main(void) {
    int runs = 10000;
    const char *e = getenv("CORT_SOAK_RUNS");
    if (e && atoi(e) > 0) runs = atoi(e);
    calls = calloc((size_t)runs, sizeof *calls);
    size_t base = in_use();
    unsigned seed = 12345;
    cort_session *s = NULL;
    int64_t shape[2] = { 2, 4 };
    const char *in_names[] = { "X" }, *out_names[] = { "Y" };
    int submitted = 0;
    for (int i = 0; i < runs; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = (seed >> 16) % 100;
        if (!s) {
            cort_session_options *o = NULL;
            cort_status_free(cort_session_options_create(&o));
            cort_status_free(cort_session_options_set_threads(o, 1 + (int)(r % 2)));
            if (!CHECK_OK(cort_session_create("tests/models/relu_add.onnx", o, &s))) { cort_session_options_free(o); break; }
            cort_session_options_free(o);
        }
        cort_value *in = NULL;
        CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &in));
        memcpy(cort_tensor_data(in), X, sizeof X);
        cort_run_options *ro = NULL;
        if (r < 30) cort_status_free(cort_run_options_create(&ro));
        cort_status *st = cort_session_run_async(s, ro, in_names, &in, 1, out_names, 1, NULL, cb, (void *)(uintptr_t)i);
        if (st) { CHECK_OK(st); } else submitted++;
        if (ro && r < 20) cort_run_options_set_terminate(ro, 1);   /* cancel most runs that have options */
        cort_run_options_free(ro);
        cort_value_release(in);
        if (r >= 90) { cort_session_release(s); s = NULL; }   /* release with runs in flight */
    }
    cort_session_release(s);
    double deadline = now_s() + HANG_SECONDS;
    while (atomic_load(&done) < submitted && now_s() < deadline) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    CHECK_MSG(atomic_load(&done) == submitted, "%d of %d callbacks came (hang?)", atomic_load(&done), submitted);
    int wrong = 0;
    for (int i = 0; i < submitted; i++) wrong += atomic_load(&calls[i]) != 1;
    CHECK_MSG(wrong == 0, "%d runs did not get exactly one callback", wrong);
    CHECK_MSG(atomic_load(&bad_status) == 0, "%d runs failed with something other than CANCELLED", atomic_load(&bad_status));
    CHECK_MSG(atomic_load(&bad_value) == 0, "%d runs returned wrong values", atomic_load(&bad_value));
    /* the last jobs free their memory just after their callbacks: let them settle */
    while (in_use() != base && now_s() < deadline) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    CHECK_MSG(in_use() == base, "bytes in use %zu at start, %zu at end", base, in_use());
    printf("soak: %d async runs submitted\n", submitted);
    free(calls);
    return tu_finish();
}
