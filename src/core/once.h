/* A once-guard that can report failure and be retried.
 *
 * pthread_once cannot return an error, so a failed initialization would either be retried forever
 * inside pthread_once or never. cort_once runs `init` under a mutex until it succeeds once; every
 * caller that returns success observes the complete initialization (release/acquire on `done`).
 * A failed attempt may retry later. An initializer that publishes an owner (e.g. a context handed
 * to a third-party library) must keep it published even if a later step fails: the guard never
 * discards state on failure, the initializer decides what is already final (see alloc.c and
 * docs/concurrency.md).
 *
 * CORT_BROKEN_ONCE (test-only build option) replaces the guard with the naive unsynchronized
 * check-then-init that ORT's XNNPACK provider had, to prove the race tests can fail. */
#ifndef CORT_CORE_ONCE_H
#define CORT_CORE_ONCE_H
#include <pthread.h>
#include <stdatomic.h>
#include "cort.h"

typedef struct cort_once {
    atomic_int      done;
    pthread_mutex_t lock;
    int             attempts;   /* failed attempts so far (guarded by lock) */
} cort_once;
#define CORT_ONCE_INIT { 0, PTHREAD_MUTEX_INITIALIZER, 0 }

/* Runs init(arg) unless a previous call succeeded. Returns NULL when initialized (now or before),
 * otherwise the initializer's failure status (the next call retries). */
cort_status *cort_once_run(cort_once *once, cort_status *(*init)(void *arg), void *arg);
/* Whether initialization has completed successfully (acquire). */
int cort_once_done(cort_once *once);
/* Test hook: widen the window between the check and the publication (microseconds). */
void cort_once_test_set_delay_us(int us);
#endif
