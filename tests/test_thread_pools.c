/* Shared thread pools: sessions sharing one pool start no threads of their own, run correctly and
 * concurrently on it, and keep it alive after the caller's handle is gone; the workers stop with
 * the last reference. Spinning: the option reaches the pool (its effect on idle CPU is measured by
 * bench/idle_cpu.c, not asserted here). */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "testutil.h"
#include "session/session.h"
#include "core/threadpool.h"

#define MODEL "tests/models/mlp.onnx"

static int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* A joined thread can stay listed in /proc/self/task for a while after pthread_join returns (under
 * qemu-user for milliseconds: the emulator clears the guest's tid before its host thread exits), so
 * counts are read once they reach the expected value or, failing that, after 10 s of polling. */
static int count_reaches(int want) {
    int n = thread_count();
    for (int i = 0; i < 1000 && n != want; i++) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        n = thread_count();
    }
    return n;
}

/* The count once it has not changed for 100 ms (threads of earlier tests still exiting). */
static int settled_count(void) {
    int n = thread_count(), same = 0;
    for (int i = 0; i < 500 && same < 10; i++) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        int m = thread_count();
        same = m == n ? same + 1 : 0;
        n = m;
    }
    return n;
}

static cort_session *open_with(cort_thread_pool *tp, int threads, int spin) {
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_options_create(&o))) return NULL;
    CHECK_OK(cort_session_options_set_threads(o, threads));
    if (!spin) CHECK_OK(cort_session_options_set_spinning(o, 0));
    if (tp) CHECK_OK(cort_session_options_set_thread_pool(o, tp));
    CHECK_OK(cort_session_create(MODEL, o, &s));
    cort_session_options_free(o);
    return s;
}

static int run_once(cort_session *s, float *out, size_t n_out) {
    size_t n_in = cort_session_input_count(s);
    if (n_in != 1) return 0;
    cort_value_type vt;
    int64_t dims[8];
    if (cort_session_input_type(s, 0, &vt, dims, 8) || vt.rank < 0) return 0;
    size_t rank = (size_t)vt.rank;
    for (size_t i = 0; i < rank; i++)
        if (dims[i] < 0) dims[i] = 1;
    cort_value *x = NULL, *y = NULL;
    if (cort_tensor_create(CORT_TYPE_FLOAT, dims, rank, &x)) return 0;
    float *px = cort_tensor_data(x);
    for (size_t i = 0; i < cort_tensor_element_count(x); i++) px[i] = (float)((i * 7) % 13) / 13.0f;
    const char *in = cort_session_input_name(s, 0), *out_name = cort_session_output_name(s, 0);
    cort_status *st = cort_session_run(s, NULL, &in, &x, 1, &out_name, 1, &y);
    int ok = st == NULL;
    cort_status_free(st);
    if (ok) {
        size_t n = cort_tensor_element_count(y) < n_out ? cort_tensor_element_count(y) : n_out;
        memcpy(out, cort_tensor_data(y), n * sizeof *out);
    }
    cort_value_release(x);
    cort_value_release(y);
    return ok;
}

typedef struct worker { cort_session *s; const float *want; int ok; } worker;
static void *hammer(void *arg) {
    worker *w = arg;
    float got[16];
    w->ok = 1;
    for (int i = 0; i < 40 && w->ok; i++) {
        w->ok = run_once(w->s, got, 10);
        for (int k = 0; w->ok && k < 10; k++) w->ok = fabsf(got[k] - w->want[k]) <= 1e-5f * (1 + fabsf(w->want[k]));
    }
    return NULL;
}

static void test_shared_pool(void) {
    float want[16];
    cort_session *ref = open_with(NULL, 1, 1);
    if (!ref) return;
    CHECK(run_once(ref, want, 10));
    cort_session_release(ref);

    int before = settled_count();
    cort_thread_pool *tp = NULL;
    if (!CHECK_OK(cort_thread_pool_create(3, 1, &tp))) return;
    CHECK(cort_thread_pool_threads(tp) == 3);
    { const int n = count_reaches(before + 2); CHECK_MSG(n == before + 2, "a 3-thread pool started %d threads", n - before); }
    enum { N = 8 };
    cort_session *s[N];
    for (int i = 0; i < N; i++) s[i] = open_with(tp, 2 /* ignored */, 1);
    /* negative control of the count: sessions with own pools would add 2 workers each (16 here) */
    { const int n = count_reaches(before + 2); CHECK_MSG(n == before + 2, "8 sessions on a shared pool: %d threads beyond the pool's", n - before - 2); }
    cort_thread_pool_release(tp);   /* the sessions keep it */
    pthread_t t[N];
    worker w[N];
    for (int i = 0; i < N; i++) {
        w[i].s = s[i];
        w[i].want = want;
        if (s[i]) pthread_create(&t[i], NULL, hammer, &w[i]);
    }
    for (int i = 0; i < N; i++)
        if (s[i]) { pthread_join(t[i], NULL); CHECK(w[i].ok); }
    for (int i = 0; i < N; i++) {
        CHECK(!s[i] || s[i]->pool == s[0]->pool);
        CHECK(!s[i] || s[i]->threads == 3);
    }
    for (int i = 0; i < N; i++) cort_session_release(s[i]);
    { const int n = count_reaches(before); CHECK_MSG(n == before, "pool workers left after the last session: %d", n - before); }
}

static void test_own_pools_for_contrast(void) {
    int before = settled_count();
    cort_session *a = open_with(NULL, 3, 1), *b = open_with(NULL, 3, 1);
    { const int n = count_reaches(before + 4); CHECK_MSG(n == before + 4, "two 3-thread sessions started %d threads", n - before); }
    CHECK(a && b && a->pool != b->pool);
    cort_session_release(a);
    cort_session_release(b);
    CHECK(count_reaches(before) == before);
}

static void test_spinning_option(void) {
    cort_session *spin = open_with(NULL, 2, 1), *nospin = open_with(NULL, 2, 0);
    CHECK(spin && cort_pool_spin_ns(spin->pool) > 0);
    CHECK(nospin && cort_pool_spin_ns(nospin->pool) == 0);
    float y[16];
    CHECK(nospin && run_once(nospin, y, 10));
    cort_session_release(spin);
    cort_session_release(nospin);
    cort_thread_pool *tp = NULL;
    CHECK_OK(cort_thread_pool_create(2, 0, &tp));
    CHECK(tp && cort_pool_spin_ns(tp->pool) == 0);
    cort_thread_pool_release(tp);
}

static void test_bad_arguments(void) {
    cort_thread_pool *tp = (cort_thread_pool *)1;
    CHECK_CODE(cort_thread_pool_create(-1, 1, &tp), CORT_ERROR_INVALID_ARGUMENT);
    CHECK(tp == NULL);
    CHECK_CODE(cort_thread_pool_create(2, 1, NULL), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_options_set_thread_pool(NULL, NULL), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_session_options_set_spinning(NULL, 0), CORT_ERROR_INVALID_ARGUMENT);
    cort_thread_pool_release(NULL);
    CHECK(cort_thread_pool_threads(NULL) == 0);
    /* options dropping their pool again, and options freed while holding one */
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_thread_pool_create(2, 1, &tp));
    CHECK_OK(cort_session_options_set_thread_pool(o, tp));
    CHECK_OK(cort_session_options_set_thread_pool(o, NULL));
    CHECK_OK(cort_session_options_set_thread_pool(o, tp));
    cort_thread_pool_release(tp);
    cort_session_options_free(o);
}

int main(void) {
    /* Runtimes that start a helper thread with the process's first pthread_create (TSan's
     * background thread) would shift the first count: start one thread and join it first. */
    cort_pool *warm = NULL;
    if (CHECK_OK(cort_pool_create(2, &warm))) cort_pool_free(warm);
    test_own_pools_for_contrast();
    test_shared_pool();
    test_spinning_option();
    test_bad_arguments();
    return tu_finish();
}
