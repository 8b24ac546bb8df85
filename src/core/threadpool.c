#include "threadpool.h"
#include "alloc.h"
#include "status.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

/* Idle workers spin this long before sleeping: long enough to catch the next parallel_for of the
 * same run (and the next run of a benchmark loop), short enough not to burn an idle core. Time, not
 * iterations: under a hypervisor PAUSE may exit to the host, so an iteration count means nothing,
 * and waking a sleeping worker there costs far more than the spin (docs/performance.md). */
#ifndef CORT_POOL_SPIN_NS
#define CORT_POOL_SPIN_NS 5000000LL
#endif

static long long mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The chunks are split into lanes, one per participant, each with its own counter on its own
 * cache line: a thread takes chunks from its lane without touching the others' lines and steals
 * from the other lanes only when its own is empty. One shared counter taken chunk by chunk made
 * every grab a cross-core cache-line transfer (1-4 us under this hypervisor), which cost a small
 * GEMM at 2 threads more than it gained. A participant's lane is fixed (the dispatching thread
 * lane 0, worker i lane i + 1), so consecutive kernels that split their work the same way give
 * each thread the part of the data it wrote itself: taken in order of arrival, a depthwise conv
 * read half its input from the other core's cache (MobileNetV2's ran slower at 2 threads than at 1). */
#define POOL_LANES 16
typedef struct lane {
    _Alignas(64) atomic_size_t next;
    size_t end;
} lane;

typedef struct job {
    cort_range_fn fn;
    void *arg;
    size_t n, chunks, lanes;
    _Alignas(64) atomic_size_t done;     /* chunks finished (each participant adds its count once) */
    lane lane[POOL_LANES];
} job;

struct cort_pool {
    atomic_int refs;
    int threads;
    long long spin_ns;        /* idle workers spin this long, then sleep (0: sleep at once) */
    pthread_t *tids;
    struct worker_arg *wargs;
    int n_started;
    pthread_mutex_t mu;       /* only for sleeping and waking workers */
    pthread_cond_t cv;
    atomic_uint gen;          /* bumped once per dispatched job */
    _Atomic(job *) cur;       /* the job being dispatched, or NULL */
    atomic_int active;        /* workers that may be looking at cur */
    atomic_int sleepers;      /* workers waiting on cv */
    atomic_int stop;
    pthread_mutex_t dispatch; /* one parallel_for at a time; others run inline */
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

typedef struct worker_arg {
    cort_pool *pool;
    size_t lane;
} worker_arg;

static void run_chunks(job *j, size_t first_lane) {
    const size_t me = first_lane % j->lanes;
    size_t ran = 0;
    for (size_t k = 0; k < j->lanes; k++) {   /* own lane first, then steal from the next ones */
        lane *l = &j->lane[(me + k) % j->lanes];
        if (atomic_load_explicit(&l->next, memory_order_relaxed) >= l->end) continue;
        for (;;) {
            const size_t c = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
            if (c >= l->end) break;
            const size_t b = c * j->n / j->chunks, e = (c + 1) * j->n / j->chunks;
            if (e > b) j->fn(j->arg, b, e);
            ran++;
        }
    }
    if (ran) atomic_fetch_add_explicit(&j->done, ran, memory_order_release);
}

/* A worker joins a job without locks: it announces itself in `active` before reading `cur`, and
 * the dispatcher clears `cur` before waiting for `active` to drain, so a worker either sees the
 * job while the dispatcher still waits for it, or sees NULL (all seq_cst). */
static void *worker_main(void *p) {
    const worker_arg *wa = p;
    cort_pool *pool = wa->pool;
    unsigned seen = 0;
    for (;;) {
        unsigned spins = 0;
        long long t0 = 0;
        while (atomic_load(&pool->gen) == seen && !atomic_load(&pool->stop)) {
            cpu_relax();
            if (++spins % 64) continue;   /* the clock every 64 pauses */
            if (!t0) t0 = mono_ns();
            if (mono_ns() - t0 < pool->spin_ns) continue;
            pthread_mutex_lock(&pool->mu);
            atomic_fetch_add(&pool->sleepers, 1);
            while (atomic_load(&pool->gen) == seen && !atomic_load(&pool->stop)) pthread_cond_wait(&pool->cv, &pool->mu);
            atomic_fetch_sub(&pool->sleepers, 1);
            pthread_mutex_unlock(&pool->mu);
            spins = 0;
            t0 = 0;
        }
        if (atomic_load(&pool->stop)) return NULL;
        seen = atomic_load(&pool->gen);
        atomic_fetch_add(&pool->active, 1);
        job *j = atomic_load(&pool->cur);
        if (j) run_chunks(j, wa->lane);
        atomic_fetch_sub(&pool->active, 1);
    }
}

size_t cort_slot_claim(atomic_int *busy, size_t n) {
    for (size_t slot = 0;; slot = (slot + 1) % n) {
        int idle = 0;
        if (atomic_compare_exchange_strong(&busy[slot], &idle, 1)) return slot;
    }
}

void cort_slot_release(atomic_int *busy, size_t slot) { atomic_store(&busy[slot], 0); }

int cort_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

cort_status *cort_pool_create(int threads, cort_pool **out) { return cort_pool_create_ex(threads, 1, out); }

cort_status *cort_pool_create_ex(int threads, int spin, cort_pool **out) {
    if (threads <= 0) threads = cort_cpu_count();
    cort_pool *pool = cort_calloc(1, sizeof *pool);
    if (!pool) return cort_error_oom();
    atomic_init(&pool->refs, 1);
    pool->threads = threads;
    pool->spin_ns = spin ? CORT_POOL_SPIN_NS : 0;
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->cv, NULL);
    pthread_mutex_init(&pool->dispatch, NULL);
    atomic_init(&pool->gen, 0);
    atomic_init(&pool->cur, NULL);
    atomic_init(&pool->active, 0);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->stop, 0);
    if (threads > 1) {
        pool->tids = cort_calloc((size_t)threads - 1, sizeof *pool->tids);
        pool->wargs = cort_calloc((size_t)threads - 1, sizeof *pool->wargs);
        if (!pool->tids || !pool->wargs) { cort_pool_free(pool); return cort_error_oom(); }
        for (int i = 0; i < threads - 1; i++) {
            pool->wargs[i].pool = pool;
            pool->wargs[i].lane = (size_t)i + 1;
            if (pthread_create(&pool->tids[i], NULL, worker_main, &pool->wargs[i])) {
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

cort_pool *cort_pool_retain(cort_pool *pool) {
    if (pool) atomic_fetch_add(&pool->refs, 1);
    return pool;
}

long long cort_pool_spin_ns(const cort_pool *pool) { return pool ? pool->spin_ns : 0; }

void cort_pool_free(cort_pool *pool) {
    if (!pool || atomic_fetch_sub(&pool->refs, 1) != 1) return;
    pthread_mutex_lock(&pool->mu);
    atomic_store(&pool->stop, 1);
    pthread_cond_broadcast(&pool->cv);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->n_started; i++) pthread_join(pool->tids[i], NULL);
    cort_free(pool->tids);
    cort_free(pool->wargs);
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
    j.lanes = (size_t)pool->threads < POOL_LANES ? (size_t)pool->threads : POOL_LANES;
    if (j.lanes > j.chunks) j.lanes = j.chunks;
    for (size_t l = 0; l < j.lanes; l++) {
        atomic_init(&j.lane[l].next, l * j.chunks / j.lanes);
        j.lane[l].end = (l + 1) * j.chunks / j.lanes;
    }
    atomic_init(&j.done, 0);
    atomic_store(&pool->cur, &j);
    atomic_fetch_add(&pool->gen, 1);
    if (atomic_load(&pool->sleepers) > 0) {   /* a worker that went to sleep re-checks gen under mu */
        pthread_mutex_lock(&pool->mu);
        pthread_cond_broadcast(&pool->cv);
        pthread_mutex_unlock(&pool->mu);
    }
    run_chunks(&j, 0);
    for (unsigned spins = 0; atomic_load_explicit(&j.done, memory_order_acquire) < j.chunks; spins++) {
        if (spins < 1000) cpu_relax();
        else sched_yield();
    }
    /* j lives on this stack: no worker may still hold it when we return */
    atomic_store(&pool->cur, NULL);
    for (unsigned spins = 0; atomic_load(&pool->active) > 0; spins++) {
        if (spins < 1000) cpu_relax();
        else sched_yield();
    }
    pthread_mutex_unlock(&pool->dispatch);
}
