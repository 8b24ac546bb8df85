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

/* A slot holding one value published once, for tables a node builds on its first run and every
 * later run (concurrent ones included) reads: cort_slot_publish stores p if the slot is still empty
 * and returns 1 (the slot owns p from then on), else 0 (p stays the caller's); cort_slot_get reads
 * it with acquire ordering, so the published value's contents are visible. Never replaced. */
typedef struct cort_slot { _Atomic(void *) p; } cort_slot;
static inline void cort_slot_init(cort_slot *s) { atomic_init(&s->p, NULL); }
static inline void *cort_slot_get(cort_slot *s) { return atomic_load_explicit(&s->p, memory_order_acquire); }
static inline int cort_slot_publish(cort_slot *s, void *p) {
    void *none = NULL;
    return atomic_compare_exchange_strong_explicit(&s->p, &none, p, memory_order_acq_rel, memory_order_acquire);
}
#endif
