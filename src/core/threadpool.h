/* Persistent thread pool. One parallel_for at a time is dispatched to the workers; a caller that
 * finds the pool busy (another concurrent run) runs its loop inline, so concurrent runs never
 * oversubscribe the cores. Idle workers spin briefly, then sleep on a condition variable. */
#ifndef CORT_CORE_THREADPOOL_H
#define CORT_CORE_THREADPOOL_H
#include <stdatomic.h>
#include <stddef.h>
#include "cort.h"

typedef struct cort_pool cort_pool;
typedef void (*cort_range_fn)(void *arg, size_t begin, size_t end);

/* threads = total participants including the caller (1 = no worker threads); <= 0 = one per core. */
cort_status *cort_pool_create(int threads, cort_pool **out);
/* The same with the idle policy chosen: spin = 1 lets idle workers spin for CORT_POOL_SPIN_NS before
 * sleeping (the default), 0 makes them sleep as soon as they find no work. */
cort_status *cort_pool_create_ex(int threads, int spin, cort_pool **out);
/* Pools are reference counted (sessions share them): retain adds one, free drops one and stops the
 * workers with the last. Never drop the last reference from inside one of the pool's own loops. */
cort_pool   *cort_pool_retain(cort_pool *pool);
void         cort_pool_free(cort_pool *pool);
long long    cort_pool_spin_ns(const cort_pool *pool);   /* idle spin before sleeping; 0 for NULL */
int          cort_pool_threads(const cort_pool *pool);    /* 1 for NULL */
/* Calls fn(arg, begin, end) over disjoint ranges covering [0, n). Ranges hold at least `grain`
 * items (except possibly the last). pool may be NULL (runs inline). Returns after all ranges ran. */
void         cort_parallel_for(cort_pool *pool, size_t n, size_t grain, cort_range_fn fn, void *arg);
/* Per-thread scratch for a parallel_for with more ranges than threads: a range call claims one of n
 * slots (busy flags, initialized to 0) for its duration and releases it at its end. At most
 * cort_pool_threads() ranges run at once, so with n at least that a free slot is found at once;
 * with fewer slots the claim spins until one is released. Returns the slot's index. */
size_t       cort_slot_claim(atomic_int *busy, size_t n);
void         cort_slot_release(atomic_int *busy, size_t slot);
/* Number of online CPUs (>= 1). */
int          cort_cpu_count(void);
#endif
