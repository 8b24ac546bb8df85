/* The process-wide CPU allocator: one owner object, created, published and initialized inside
 * one once-guard (the XNNPACK lesson: never publish an owner that a racing initializer can
 * replace). Blocks carry a 64-byte header holding their size, so statistics are exact and the
 * data stays 64-byte aligned. */
#include "alloc.h"
#include "once.h"
#include "status.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct cpu_allocator {
    cort_allocator impl;          /* system or user allocator */
    atomic_size_t  in_use, peak, allocations;
} cpu_allocator;

static cort_once g_once = CORT_ONCE_INIT;
static cpu_allocator *_Atomic g_owner;
static const cort_allocator *g_pending_user;  /* read only inside the once initializer */

static atomic_long fail_at;    /* test hook: 0 = off */
static atomic_long alloc_count;

static void *sys_alloc(void *ctx, size_t size, size_t alignment) {
    (void)ctx;
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1)) return NULL;
    return p;
}
static void sys_free(void *ctx, void *p) { (void)ctx; free(p); }

static cort_status *init_owner(void *arg) {
    (void)arg;
    /* The owner lives for the whole process: allocated from the system, never freed, never replaced. */
    cpu_allocator *a = NULL;
    if (posix_memalign((void **)&a, CORT_ALIGNMENT, sizeof *a)) return cort_error_oom();
    memset(a, 0, sizeof *a);
    if (g_pending_user) a->impl = *g_pending_user;
    else a->impl = (cort_allocator){ CORT_ALLOCATOR_VERSION, sys_alloc, sys_free, NULL };
    atomic_init(&a->in_use, 0);
    atomic_init(&a->peak, 0);
    atomic_init(&a->allocations, 0);
    atomic_store_explicit(&g_owner, a, memory_order_release);
    return NULL;
}

cort_status *cort_alloc_init(void) { return cort_once_run(&g_once, init_owner, NULL); }

static cpu_allocator *owner(void) {
    cpu_allocator *a = atomic_load_explicit(&g_owner, memory_order_acquire);
    if (a && cort_once_done(&g_once)) return a;
    cort_status *st = cort_alloc_init();
    if (st) { cort_status_free(st); return NULL; }
    return atomic_load_explicit(&g_owner, memory_order_acquire);
}

const void *cort_cpu_allocator_identity(void) { return owner(); }

/* Errors of cort_set_allocator are static: building a message would allocate, which would itself
 * initialize the default allocator and defeat the call. */
static cort_status err_null = { CORT_ERROR_INVALID_ARGUMENT, 1, (char *)"cort_set_allocator: allocator is NULL" };
static cort_status err_version = { CORT_ERROR_INVALID_ARGUMENT, 1,
                                   (char *)"cort_set_allocator: unsupported version (expected CORT_ALLOCATOR_VERSION)" };
static cort_status err_funcs = { CORT_ERROR_INVALID_ARGUMENT, 1, (char *)"cort_set_allocator: alloc and free must be set" };
static cort_status err_in_use = { CORT_ERROR_INVALID_ARGUMENT, 1,
                                  (char *)"cort_set_allocator: the allocator is already in use; install it before the first cort call" };

cort_status *cort_set_allocator(const cort_allocator *allocator) {
    if (!allocator) return &err_null;
    if (allocator->version != CORT_ALLOCATOR_VERSION) return &err_version;
    if (!allocator->alloc || !allocator->free) return &err_funcs;
    /* Installing the allocator IS the one-time initialization, done under the guard's lock so a
     * concurrent first allocation either happens before (and we refuse) or after (and uses it). */
    static cort_allocator copy;   /* written once, before publication, under the once lock below */
    pthread_mutex_lock(&g_once.lock);
    if (atomic_load(&g_once.done)) {
        pthread_mutex_unlock(&g_once.lock);
        return &err_in_use;
    }
    copy = *allocator;
    g_pending_user = &copy;
    cort_status *st = init_owner(NULL);
    if (!st) atomic_store_explicit(&g_once.done, 1, memory_order_release);
    pthread_mutex_unlock(&g_once.lock);
    return st;
}

cort_status *cort_allocator_get_stats(cort_allocator_stats *out) {
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_allocator_get_stats: out is NULL");
    cpu_allocator *a = owner();
    if (!a) return cort_error_oom();
    out->bytes_in_use = atomic_load(&a->in_use);
    out->peak_bytes = atomic_load(&a->peak);
    out->allocations = atomic_load(&a->allocations);
    return NULL;
}

void cort_test_alloc_fail_at(long n) {
    atomic_store(&alloc_count, 0);
    atomic_store(&fail_at, n);
}
long cort_test_alloc_count(void) { return atomic_load(&alloc_count); }

typedef struct block_header { size_t size; size_t magic; } block_header;
#define HEADER CORT_ALIGNMENT
#define MAGIC ((size_t)0xC0A7C0A7u)

/* Failure injection: whether this allocation is the one (or after the one) told to fail. */
static int injected_failure(void) {
    long n = atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed) + 1;
    long f = atomic_load_explicit(&fail_at, memory_order_relaxed);
    return f > 0 && n >= f;
}

/* Writes the header of a block at base and counts it; returns the user pointer. */
static void *block_finish(cpu_allocator *a, char *base, size_t size, size_t magic) {
    block_header *h = (block_header *)(base + HEADER - sizeof(block_header));
    h->size = size;
    h->magic = magic;
    size_t now = atomic_fetch_add_explicit(&a->in_use, size, memory_order_relaxed) + size;
    atomic_fetch_add_explicit(&a->allocations, 1, memory_order_relaxed);
    size_t peak = atomic_load_explicit(&a->peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&a->peak, &peak, now)) {}
    return base + HEADER;
}

void *cort_malloc(size_t size) {
    if (injected_failure()) return NULL;
    cpu_allocator *a = owner();
    if (!a || size > SIZE_MAX - HEADER) return NULL;
    char *base = a->impl.alloc(a->impl.context, size + HEADER, CORT_ALIGNMENT);
    if (!base) return NULL;
    return block_finish(a, base, size, MAGIC);
}

/* Long-lived blocks (packed weights, copied initializers): 2 MB aligned, made resident in one
 * MADV_POPULATE_WRITE call instead of a page fault per 4 KB (faults on fresh pages were most of
 * the creation time of the CNNs), and in transparent huge pages where that can pay (below). While
 * a session is being created its arena is bound to the creating thread and that thread's blocks
 * are carved from the arena's chunks (the first 2 MB, then 4 MB; blocks over 2 MB get their own);
 * such a block is released with the arena, cort_free only updates the statistics. Other threads
 * (the pool's workers packing in parallel) get standalone blocks. */
#define HUGE_PAGE ((size_t)2 << 20)
#define ARENA_CHUNK ((size_t)4 << 20)
#define ARENA_MAGIC ((size_t)0xA7E4A7E4u)

typedef struct huge_chunk { struct huge_chunk *next; size_t size, used, populated; int huge; } huge_chunk;
struct cort_huge_arena { huge_chunk *chunks; size_t total; };

/* A slow huge page (see below) costs about ten times what a good one saves in 4 KB faults, and the
 * risk is per page: the first ARENA_SMALL_BYTES of a session's weights, and standalone blocks under
 * HUGE_MIN_BLOCK, stay in small pages, where huge pages could not win much (docs/performance.md,
 * "Measurements behind code choices"). */
#define ARENA_SMALL_BYTES ((size_t)32 << 20)
#define HUGE_MIN_BLOCK ((size_t)8 << 20)

static _Thread_local cort_huge_arena *tls_arena;

/* Huge pages are only worth it while the system hands them out cheaply. In a VM whose balloon
 * returns free 2 MB blocks to the host (free page reporting), every huge page is refaulted 4 KB at
 * a time by the host and costs about ten times a warm one. So huge pages are populated as they are
 * handed out, 2 MB at a time, and timed: one slower than a threshold (well above a warm page's
 * cost) turns them off for the rest of the process (a race between two creating threads only costs
 * one more slow page). */
static atomic_int thp_off;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Makes [p, p + len) resident in one call per 2 MB (instead of a fault per 4 KB page). Huge-page
 * memory is timed page by page: the first slow one turns huge pages off for the process and the
 * rest of the range falls back to small pages, so a bad stretch costs one slow page. */
static void populate(char *p, size_t len, int huge) {
#ifdef MADV_POPULATE_WRITE
    if (!huge) {
        if (len) (void)madvise(p, len, MADV_POPULATE_WRITE);   /* advisory: else faulted in later */
        return;
    }
    for (size_t off = 0; off < len; off += HUGE_PAGE) {
        const size_t n = len - off < HUGE_PAGE ? len - off : HUGE_PAGE;
        if (atomic_load_explicit(&thp_off, memory_order_relaxed)) {
#ifdef MADV_NOHUGEPAGE
            (void)madvise(p + off, len - off, MADV_NOHUGEPAGE);
#endif
            (void)madvise(p + off, len - off, MADV_POPULATE_WRITE);
            return;
        }
        const double t0 = now_ms();
        if (!madvise(p + off, n, MADV_POPULATE_WRITE) && now_ms() - t0 > 0.8)
            atomic_store_explicit(&thp_off, 1, memory_order_relaxed);
    }
#else
    (void)p; (void)len; (void)huge;
#endif
}

/* A 2 MB-aligned block marked for huge pages (unless they are off); *huge tells which. */
static char *huge_alloc(size_t total, int *huge) {
    char *base = sys_alloc(NULL, total, HUGE_PAGE);
    *huge = 0;
#ifdef MADV_HUGEPAGE
    if (base && total >= HUGE_PAGE && !atomic_load_explicit(&thp_off, memory_order_relaxed))
        *huge = !madvise(base, total, MADV_HUGEPAGE);
#endif
    return base;
}

/* A standalone long-lived block: its whole 2 MB pages populated now, the tail faulted lazily;
 * huge pages only if want_huge. */
static char *huge_block(size_t total, int want_huge) {
    int huge = 0;
    char *base = want_huge ? huge_alloc(total, &huge) : sys_alloc(NULL, total, HUGE_PAGE);
    if (base) populate(base, total / HUGE_PAGE * HUGE_PAGE, huge);
    return base;
}

cort_status *cort_huge_arena_create(cort_huge_arena **out) {
    *out = cort_calloc(1, sizeof **out);
    return *out ? NULL : cort_error_oom();
}

void cort_huge_arena_free(cort_huge_arena *a) {
    if (!a) return;
    for (huge_chunk *c = a->chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    cort_free(a);
}

cort_huge_arena *cort_huge_arena_bind(cort_huge_arena *a) {
    cort_huge_arena *prev = tls_arena;
    tls_arena = a;
    return prev;
}

void *cort_malloc_huge(size_t size) {
    cpu_allocator *a = owner();
    cort_huge_arena *ar = tls_arena;
    if (!a || a->impl.alloc != sys_alloc || size > SIZE_MAX / 2 || (!ar && size < HUGE_PAGE)) return cort_malloc(size);
    if (injected_failure()) return NULL;
    const size_t need = (size + HEADER + CORT_ALIGNMENT - 1) / CORT_ALIGNMENT * CORT_ALIGNMENT;
    char *base;
    size_t magic = MAGIC;
    if (ar) {
        huge_chunk *c = ar->chunks;
        const size_t hdr = CORT_ALIGNMENT;
        if (need + hdr > ARENA_CHUNK / 2) {
            /* a big block gets a chunk of its own (listed after the current one) */
            huge_chunk *own = (huge_chunk *)(void *)huge_block(need + hdr, ar->total >= ARENA_SMALL_BYTES);
            if (!own) return NULL;
            own->size = own->used = own->populated = need + hdr;
            if (c) { own->next = c->next; c->next = own; }
            else { own->next = NULL; ar->chunks = own; }
            base = (char *)own + hdr;
        } else {
            if (!c || c->size - c->used < need) {
                /* a new chunk; the old one's tail stays unused and, past its last populated page,
                 * not resident. The first is 2 MB, and chunks stay in small pages until the arena
                 * holds ARENA_SMALL_BYTES. */
                int huge = 0;
                char *mem;
                if (ar->chunks && ar->total >= ARENA_SMALL_BYTES) mem = huge_alloc(ARENA_CHUNK, &huge);
                else if (ar->chunks) mem = sys_alloc(NULL, ARENA_CHUNK, HUGE_PAGE);
                else mem = sys_alloc(NULL, HUGE_PAGE, HUGE_PAGE);
                if (!mem) return NULL;
                c = (huge_chunk *)(void *)mem;
                c->size = ar->chunks ? ARENA_CHUNK : HUGE_PAGE;
                c->used = c->populated = hdr;
                c->huge = huge;
                c->next = ar->chunks;
                ar->chunks = c;
            }
            base = (char *)c + c->used;
            c->used += need;
            if (c->used > c->populated) {
                /* populated as it is carved: huge chunks a 2 MB page at a time, others to the end
                 * of the block's last 4 KB page (one call instead of a fault per page) */
                const size_t unit = c->huge ? HUGE_PAGE : 4096;
                size_t end = (c->used + unit - 1) / unit * unit;
                if (end > c->size) end = c->size;
                const size_t from = c->populated / unit * unit;
                populate((char *)c + from, end - from, c->huge);
                c->populated = end;
            }
        }
        ar->total += need;
        magic = ARENA_MAGIC;
    } else {
        /* not rounded up: a partial last 2 MB stays in small pages rather than growing the RSS */
        base = huge_block(size + HEADER, size >= HUGE_MIN_BLOCK);
        if (!base) return NULL;
    }
    return block_finish(a, base, size, magic);
}

void cort_free(void *ptr) {
    if (!ptr) return;
    cpu_allocator *a = atomic_load_explicit(&g_owner, memory_order_acquire);
    char *base = (char *)ptr - HEADER;
    block_header *h = (block_header *)((char *)ptr - sizeof(block_header));
    atomic_fetch_sub_explicit(&a->in_use, h->size, memory_order_relaxed);
    if (h->magic == ARENA_MAGIC) return;   /* released with its arena */
    h->magic = 0;
    a->impl.free(a->impl.context, base);
}

void *cort_calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = cort_malloc(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

void *cort_realloc(void *ptr, size_t size) {
    if (!ptr) return cort_malloc(size);
    block_header *h = (block_header *)((char *)ptr - sizeof(block_header));
    if (size <= h->size && size >= h->size / 2) return ptr;
    void *n = cort_malloc(size);
    if (!n) return NULL;
    memcpy(n, ptr, h->size < size ? h->size : size);
    cort_free(ptr);
    return n;
}

char *cort_strndup(const char *s, size_t n) {
    char *d = cort_malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}
char *cort_strdup(const char *s) { return s ? cort_strndup(s, strlen(s)) : NULL; }
