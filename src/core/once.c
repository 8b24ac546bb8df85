#include "once.h"
#include <time.h>

static atomic_int test_delay_us;

void cort_once_test_set_delay_us(int us) { atomic_store(&test_delay_us, us); }

static void test_delay(void) {
    int us = atomic_load_explicit(&test_delay_us, memory_order_relaxed);
    if (us > 0) {
        struct timespec ts = { 0, (long)us * 1000L };
        nanosleep(&ts, NULL);
    }
}

int cort_once_done(cort_once *once) { return atomic_load_explicit(&once->done, memory_order_acquire); }

#ifndef CORT_BROKEN_ONCE
cort_status *cort_once_run(cort_once *once, cort_status *(*init)(void *arg), void *arg) {
    if (atomic_load_explicit(&once->done, memory_order_acquire)) return NULL;
    pthread_mutex_lock(&once->lock);
    cort_status *st = NULL;
    if (!atomic_load_explicit(&once->done, memory_order_relaxed)) {
        test_delay();
        st = init(arg);
        if (!st) atomic_store_explicit(&once->done, 1, memory_order_release);
        else once->attempts++;
    }
    pthread_mutex_unlock(&once->lock);
    return st;
}
#else
/* The naive version: check, (window), init, publish — no lock. Races on purpose. */
cort_status *cort_once_run(cort_once *once, cort_status *(*init)(void *arg), void *arg) {
    if (atomic_load_explicit(&once->done, memory_order_relaxed)) return NULL;
    test_delay();
    cort_status *st = init(arg);
    if (!st) atomic_store_explicit(&once->done, 1, memory_order_relaxed);
    return st;
}
#endif
