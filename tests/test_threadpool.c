/* The thread pool (src/core/threadpool.c): every index of every parallel_for is visited exactly
 * once, with any n and grain, back to back (workers spinning), after pauses long enough for the
 * workers to fall asleep, from several threads at once on one pool (the losers run inline), and
 * across many create/free cycles. Run under TSan in CI, which checks the lock-free join. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"
#include "core/threadpool.h"

typedef struct visit { atomic_int *hits; size_t n; atomic_int bad; } visit;

static void mark(void *arg, size_t begin, size_t end) {
    visit *v = arg;
    if (begin >= end || end > v->n) atomic_fetch_add(&v->bad, 1);
    for (size_t i = begin; i < end && i < v->n; i++) atomic_fetch_add_explicit(&v->hits[i], 1, memory_order_relaxed);
}

/* One parallel_for over n items; returns 1 if every item was visited exactly once. */
static int run_once(cort_pool *pool, size_t n, size_t grain) {
    visit v;
    v.hits = calloc(n ? n : 1, sizeof *v.hits);
    v.n = n;
    atomic_init(&v.bad, 0);
    cort_parallel_for(pool, n, grain, mark, &v);
    int ok = atomic_load(&v.bad) == 0;
    for (size_t i = 0; i < n; i++) ok &= atomic_load(&v.hits[i]) == 1;
    free(v.hits);
    return ok;
}

static void sleep_ms(int ms) {
    struct timespec ts = { 0, (long)ms * 1000000L };
    nanosleep(&ts, NULL);
}

typedef struct caller { cort_pool *pool; int iters; atomic_int *failures; unsigned seed; } caller;

static void *caller_main(void *arg) {
    caller *c = arg;
    for (int i = 0; i < c->iters; i++) {
        c->seed = c->seed * 1103515245u + 12345u;
        size_t n = 1 + (c->seed >> 8) % 300, grain = 1 + (c->seed >> 20) % 7;
        if (!run_once(c->pool, n, grain)) atomic_fetch_add(c->failures, 1);
    }
    return NULL;
}

int main(void) {
    for (int threads = 1; threads <= 4; threads++) {
        cort_pool *pool = NULL;
        if (!CHECK_OK(cort_pool_create(threads, &pool))) continue;
        CHECK(cort_pool_threads(pool) == threads);
        int bad = 0;
        /* back to back, every small size and grain */
        for (size_t n = 0; n < 70; n++)
            for (size_t grain = 0; grain < 5; grain++) bad += !run_once(pool, n, grain);
        for (int r = 0; r < 2000; r++) bad += !run_once(pool, 1000 + (size_t)r, 3);
        CHECK_MSG(bad == 0, "threads %d: %d parallel_for calls missed or repeated items", threads, bad);
        /* after pauses: the workers have gone to sleep and must be woken */
        bad = 0;
        for (int r = 0; r < 6; r++) {
            sleep_ms(r % 2 ? 40 : 1);
            bad += !run_once(pool, 4096, 16);
        }
        CHECK_MSG(bad == 0, "threads %d: %d calls after sleeping went wrong", threads, bad);
        /* several callers on one pool: one dispatches, the others run inline */
        atomic_int failures;
        atomic_init(&failures, 0);
        pthread_t t[4];
        caller c[4];
        for (int k = 0; k < 4; k++) {
            c[k] = (caller){ pool, 1500, &failures, 77u + (unsigned)k };
            CHECK(pthread_create(&t[k], NULL, caller_main, &c[k]) == 0);
        }
        for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
        CHECK_MSG(atomic_load(&failures) == 0, "threads %d: %d concurrent calls went wrong", threads,
                  atomic_load(&failures));
        cort_pool_free(pool);
    }
    /* create / use / free cycles (workers started and joined while spinning or asleep) */
    int bad = 0;
    for (int r = 0; r < 200; r++) {
        cort_pool *pool = NULL;
        if (cort_pool_create(2 + r % 3, &pool)) { bad++; continue; }
        if (r % 2) bad += !run_once(pool, 97, 1);
        cort_pool_free(pool);
    }
    CHECK_MSG(bad == 0, "%d create/free cycles went wrong", bad);
    cort_pool_free(NULL);
    return tu_finish();
}
