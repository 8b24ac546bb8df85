/* The once-guard: runs the initializer until it succeeds once, every successful caller sees the
 * complete initialization, failures are reported and retried, concurrent callers agree. */
#include <pthread.h>
#include <stdatomic.h>
#include "testutil.h"
#include "core/once.h"
#include "core/status.h"

static atomic_int calls;
static int fail_first;           /* the first `fail_first` attempts fail */
static int *published;           /* written by the initializer before success */
static int storage = 0;

static cort_status *init_fn(void *arg) {
    (void)arg;
    int n = atomic_fetch_add(&calls, 1) + 1;
    if (n <= fail_first) return cort_error(CORT_ERROR_RUNTIME, "injected failure %d", n);
    storage = 42;
    published = &storage;
    return NULL;
}

static void test_retry_after_failure(void) {
    cort_once once = CORT_ONCE_INIT;
    atomic_store(&calls, 0);
    fail_first = 2;
    published = NULL;
    CHECK_ERR(cort_once_run(&once, init_fn, NULL), CORT_ERROR_RUNTIME, "injected failure 1");
    CHECK(!cort_once_done(&once));
    CHECK_ERR(cort_once_run(&once, init_fn, NULL), CORT_ERROR_RUNTIME, "injected failure 2");
    CHECK_OK(cort_once_run(&once, init_fn, NULL));
    CHECK(cort_once_done(&once) && published && *published == 42);
    CHECK_OK(cort_once_run(&once, init_fn, NULL));
    CHECK(atomic_load(&calls) == 3);   /* never runs again after success */
}

static cort_once shared_once = CORT_ONCE_INIT;
static pthread_barrier_t barrier;
static void *racer(void *p) {
    int *ok = p;
    pthread_barrier_wait(&barrier);
    cort_status *st = cort_once_run(&shared_once, init_fn, NULL);
    /* success must imply the initializer's writes are visible */
    *ok = !st && published && *published == 42;
    cort_status_free(st);
    return NULL;
}

static void test_concurrent_first_use(void) {
    for (int round = 0; round < 20; round++) {
        cort_once fresh = CORT_ONCE_INIT;
        shared_once = fresh;
        atomic_store(&calls, 0);
        fail_first = 0;
        published = NULL;
        storage = 0;
        enum { N = 16 };
        pthread_t th[N];
        int ok[N];
        pthread_barrier_init(&barrier, NULL, N);
        for (int i = 0; i < N; i++) pthread_create(&th[i], NULL, racer, &ok[i]);
        int all = 1;
        for (int i = 0; i < N; i++) { pthread_join(th[i], NULL); all &= ok[i]; }
        pthread_barrier_destroy(&barrier);
        CHECK_MSG(all, "round %d: a caller returned success before initialization was visible", round);
        CHECK_MSG(atomic_load(&calls) == 1, "round %d: initializer ran %d times", round, atomic_load(&calls));
    }
}

/* Concurrent callers while the first attempts fail: every failure is reported to some caller,
 * and once one succeeds, nobody runs the initializer again. */
static void test_concurrent_with_failures(void) {
    cort_once fresh = CORT_ONCE_INIT;
    shared_once = fresh;
    atomic_store(&calls, 0);
    fail_first = 3;
    published = NULL;
    enum { N = 8 };
    pthread_t th[N];
    int ok[N];
    pthread_barrier_init(&barrier, NULL, N);
    for (int i = 0; i < N; i++) pthread_create(&th[i], NULL, racer, &ok[i]);
    int succeeded = 0;
    for (int i = 0; i < N; i++) { pthread_join(th[i], NULL); succeeded += ok[i]; }
    pthread_barrier_destroy(&barrier);
    CHECK(succeeded == N - 3);
    CHECK(atomic_load(&calls) == 4);
}

int main(void) {
    test_retry_after_failure();
    test_concurrent_first_use();
    test_concurrent_with_failures();
    return tu_finish();
}
