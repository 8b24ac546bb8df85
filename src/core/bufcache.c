#include "bufcache.h"
#include "alloc.h"
#include "status.h"
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define N_BUCKETS 128
#define HDR 64     /* block header: class and owner; keeps the payload 64-byte aligned */

#define N_SMALL 64     /* classes 0..63: multiples of 64 bytes up to 4 KiB */
#define HOT_REACH 8    /* a request may take a free block up to this many classes (4x the size) bigger */

typedef struct block {
    struct block *next;
    size_t cls_bytes;         /* capacity of the payload */
    cort_bufcache *owner;
    unsigned long long freed; /* when it was put back (the cache's put count) */
} block;

struct cort_bufcache {
    atomic_long refs;
    pthread_mutex_t mu;
    block *free_list[N_BUCKETS];
    size_t cached, max_bytes;
    unsigned long long puts;
};

_Static_assert(sizeof(block) <= HDR, "block header fits");

/* Size classes: multiples of 64 up to 4 KiB, then 4 steps per power of two (<= 25% slack). */
static size_t class_of(size_t bytes, size_t *cap) {
    if (bytes <= 4096) {
        size_t c = (bytes + 63) / 64;
        if (!c) c = 1;
        *cap = c * 64;
        return c - 1;   /* 0..63 */
    }
    size_t p = 4096, idx = 64;
    while (p * 2 < bytes && idx < N_BUCKETS - 4) { p *= 2; idx += 4; }
    for (size_t q = 1; q <= 4; q++) {
        size_t c = p + p * q / 4;
        if (bytes <= c) { *cap = c; return idx + q - 1; }
    }
    *cap = bytes;   /* beyond the largest class: exact size, never cached */
    return N_BUCKETS;
}

cort_status *cort_bufcache_create(size_t max_bytes, cort_bufcache **out) {
    cort_bufcache *c = cort_calloc(1, sizeof *c);
    if (!c) return cort_error_oom();
    atomic_init(&c->refs, 1);
    pthread_mutex_init(&c->mu, NULL);
    c->max_bytes = max_bytes;
    *out = c;
    return NULL;
}

static void cache_destroy(cort_bufcache *c) {
    for (size_t i = 0; i < N_BUCKETS; i++)
        for (block *b = c->free_list[i]; b;) {
            block *n = b->next;
            cort_free(b);
            b = n;
        }
    pthread_mutex_destroy(&c->mu);
    cort_free(c);
}

static void unref(cort_bufcache *c) {
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) cache_destroy(c);
}

void cort_bufcache_release(cort_bufcache *c) {
    if (!c) return;
    /* drop the free blocks now: a dead session should not pin memory for outstanding outputs */
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < N_BUCKETS; i++) {
        for (block *b = c->free_list[i]; b;) {
            block *n = b->next;
            cort_free(b);
            b = n;
        }
        c->free_list[i] = NULL;
    }
    c->cached = 0;
    c->max_bytes = 0;
    pthread_mutex_unlock(&c->mu);
    unref(c);
}

void *cort_bufcache_get(cort_bufcache *c, size_t bytes) {
    size_t cap, cls = class_of(bytes, &cap);
    block *b = NULL;
    if (cls < N_BUCKETS) {
        /* The most recently freed block that fits, from this class or one up to 4x bigger: it is
         * still in the caches, while the head of a class last used a whole run ago has to be
         * fetched (from memory) before it is overwritten: a conv writing to such a cold block ran
         * almost twice as long as the next, identical one (docs/performance.md). */
        size_t pick = cls;
        pthread_mutex_lock(&c->mu);
        if (cls >= N_SMALL)
            for (size_t k = cls + 1; k < N_BUCKETS && k <= cls + HOT_REACH; k++)
                if (c->free_list[k] && (!c->free_list[pick] || c->free_list[k]->freed > c->free_list[pick]->freed))
                    pick = k;
        b = c->free_list[pick];
        if (b) { c->free_list[pick] = b->next; c->cached -= HDR + b->cls_bytes; }
        pthread_mutex_unlock(&c->mu);
    }
    if (!b) {
        if (cap > SIZE_MAX - HDR || !(b = cort_malloc(HDR + cap))) return NULL;
        b->cls_bytes = cap;
        b->owner = c;
    }
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return (char *)b + HDR;
}

void cort_bufcache_put(cort_bufcache *c, void *p) {
    if (!p) return;
    block *b = (block *)((char *)p - HDR);
    size_t cap, cls = class_of(b->cls_bytes, &cap);
    int keep = 0;
    pthread_mutex_lock(&c->mu);
    if (cls < N_BUCKETS && cap == b->cls_bytes && c->cached + HDR + b->cls_bytes <= c->max_bytes) {
        b->next = c->free_list[cls];
        b->freed = ++c->puts;
        c->free_list[cls] = b;
        c->cached += HDR + b->cls_bytes;
        keep = 1;
    }
    pthread_mutex_unlock(&c->mu);
    if (!keep) cort_free(b);
    unref(c);
}

size_t cort_bufcache_cached_bytes(cort_bufcache *c) {
    pthread_mutex_lock(&c->mu);
    size_t n = c->cached;
    pthread_mutex_unlock(&c->mu);
    return n;
}

static void destroy_cached_tensor(cort_value *v) {
    cort_bufcache_put(v->destroy_ctx, v);
}

cort_status *cort_bufcache_tensor(cort_bufcache *c, cort_type type, const int64_t *dims, size_t rank, cort_value **out) {
    size_t es = cort_type_size(type);
    if (!es || type == CORT_TYPE_STRING || rank > CORT_MAX_RANK || (rank && !dims))
        return cort_tensor_alloc(type, dims, rank, out);   /* the general path reports the error */
    int ovf;
    size_t count = cort_shape_count(dims, rank, &ovf);
    if (ovf || count > (SIZE_MAX - 2 * HDR) / es) return cort_tensor_alloc(type, dims, rank, out);
    size_t hdr = (sizeof(cort_value) + 63) & ~(size_t)63;
    cort_value *v = cort_bufcache_get(c, hdr + count * es);
    if (!v) return cort_error_oom();
    memset(v, 0, sizeof *v);
    atomic_init(&v->refs, 1);
    v->kind = CORT_VKIND_TENSOR;
    v->type = type;
    v->rank = rank;
    if (rank) memcpy(v->shape, dims, rank * sizeof *dims);
    v->count = count;
    v->bytes = count * es;
    v->data = (char *)v + hdr;
    v->destroy_fn = destroy_cached_tensor;
    v->destroy_ctx = c;
    *out = v;
    return NULL;
}

static void destroy_cached_view(cort_value *v) {
    cort_value_release(v->base);
    cort_bufcache_put(v->destroy_ctx, v);
}

cort_status *cort_bufcache_view(cort_bufcache *c, cort_type type, const int64_t *dims, size_t rank, void *data,
                                cort_value *base, cort_value **out) {
    size_t es = cort_type_size(type);
    int ovf = 0;
    size_t count = rank <= CORT_MAX_RANK && (dims || !rank) ? cort_shape_count(dims, rank, &ovf) : 0;
    if (!es || rank > CORT_MAX_RANK || (rank && !dims) || ovf || (es && count > SIZE_MAX / es))
        return cort_tensor_view(type, dims, rank, data, base, out);   /* the general path reports the error */
    cort_value *v = cort_bufcache_get(c, sizeof *v);
    if (!v) return cort_error_oom();
    memset(v, 0, sizeof *v);
    atomic_init(&v->refs, 1);
    v->kind = CORT_VKIND_TENSOR;
    v->type = type;
    v->rank = rank;
    if (rank) memcpy(v->shape, dims, rank * sizeof *dims);
    v->count = count;
    v->bytes = count * es;
    v->data = data;
    v->base = base ? cort_value_retain(base) : NULL;
    v->destroy_fn = destroy_cached_view;
    v->destroy_ctx = c;
    *out = v;
    return NULL;
}
