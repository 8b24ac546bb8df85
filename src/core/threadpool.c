#include "threadpool.h"
#include "alloc.h"
#include "status.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

/* Workers spin this many rounds on the generation counter before sleeping: long enough to catch
 * the next parallel_for of the same run (node after node), short enough not to burn an idle core. */
#define SPIN_ROUNDS 20000

typedef struct job {
    cort_range_fn fn;
    void *arg;
    size_t n, chunks;
    atomic_size_t next, done;
    atomic_int refs;          /* workers currently inside this job */
} job;

struct cort_pool {
    int threads;
    pthread_t *tids;
    int n_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_uint gen;
    job *cur;                 /* guarded by mu */
    atomic_int stop;
    pthread_mutex_t dispatch; /* one parallel_for at a time; others run inline */
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void run_chunks(job *j) {
    for (;;) {
        size_t c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (c >= j->chunks) break;
        size_t b = c * j->n / j->chunks, e = (c + 1) * j->n / j->chunks;
        if (e > b) j->fn(j->arg, b, e);
        atomic_fetch_add_explicit(&j->done, 1, memory_order_release);
    }
}

static void *worker_main(void *p) {
    cort_pool *pool = p;
    unsigned seen = 0;
    for (;;) {
        for (int i = 0; i < SPIN_ROUNDS; i++) {
            if (atomic_load_explicit(&pool->gen, memory_order_acquire) != seen || atomic_load(&pool->stop)) break;
            cpu_relax();
        }
        pthread_mutex_lock(&pool->mu);
        while (atomic_load(&pool->gen) == seen && !atomic_load(&pool->stop)) pthread_cond_wait(&pool->cv, &pool->mu);
        if (atomic_load(&pool->stop)) { pthread_mutex_unlock(&pool->mu); return NULL; }
        seen = atomic_load(&pool->gen);
        job *j = pool->cur;
        if (j) atomic_fetch_add(&j->refs, 1);
        pthread_mutex_unlock(&pool->mu);
        if (j) {
            run_chunks(j);
            atomic_fetch_sub_explicit(&j->refs, 1, memory_order_release);
        }
    }
}

int cort_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

cort_status *cort_pool_create(int threads, cort_pool **out) {
    if (threads <= 0) threads = cort_cpu_count();
    cort_pool *pool = cort_calloc(1, sizeof *pool);
    if (!pool) return cort_error_oom();
    pool->threads = threads;
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->cv, NULL);
    pthread_mutex_init(&pool->dispatch, NULL);
    atomic_init(&pool->gen, 0);
    atomic_init(&pool->stop, 0);
    if (threads > 1) {
        pool->tids = cort_calloc((size_t)threads - 1, sizeof *pool->tids);
        if (!pool->tids) { cort_pool_free(pool); return cort_error_oom(); }
        for (int i = 0; i < threads - 1; i++) {
            if (pthread_create(&pool->tids[i], NULL, worker_main, pool)) {
                cort_pool_free(pool);
                return cort_error(CORT_ERROR_RUNTIME, "thread pool: cannot start worker thread %d of %d", i + 1,
                                  threads - 1);
            }
            pool->n_started++;
        }
    }
    *out = pool;
    return NULL;
}

void cort_pool_free(cort_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->mu);
    atomic_store(&pool->stop, 1);
    pthread_cond_broadcast(&pool->cv);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->n_started; i++) pthread_join(pool->tids[i], NULL);
    cort_free(pool->tids);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->cv);
    pthread_mutex_destroy(&pool->dispatch);
    cort_free(pool);
}

int cort_pool_threads(const cort_pool *pool) { return pool ? pool->threads : 1; }

void cort_parallel_for(cort_pool *pool, size_t n, size_t grain, cort_range_fn fn, void *arg) {
    if (!n) return;
    if (!grain) grain = 1;
    if (!pool || pool->threads <= 1 || n <= grain || pthread_mutex_trylock(&pool->dispatch)) {
        fn(arg, 0, n);
        return;
    }
    job j;
    j.fn = fn;
    j.arg = arg;
    j.n = n;
    size_t chunks = (n + grain - 1) / grain, maxc = (size_t)pool->threads * 4;
    j.chunks = chunks < maxc ? chunks : maxc;
    atomic_init(&j.next, 0);
    atomic_init(&j.done, 0);
    atomic_init(&j.refs, 0);
    pthread_mutex_lock(&pool->mu);
    pool->cur = &j;
    atomic_fetch_add_explicit(&pool->gen, 1, memory_order_release);
    pthread_cond_broadcast(&pool->cv);
    pthread_mutex_unlock(&pool->mu);
    run_chunks(&j);
    for (unsigned spins = 0; atomic_load_explicit(&j.done, memory_order_acquire) < j.chunks; spins++) {
        if (spins < 1000) cpu_relax();
        else sched_yield();
    }
    pthread_mutex_lock(&pool->mu);
    pool->cur = NULL;
    pthread_mutex_unlock(&pool->mu);
    while (atomic_load_explicit(&j.refs, memory_order_acquire) > 0) sched_yield();
    pthread_mutex_unlock(&pool->dispatch);
}
