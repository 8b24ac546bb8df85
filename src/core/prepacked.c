/* cort_prepacked_weights: a mutex-guarded list of packed buffers owned by a reference-counted
 * container. Sessions hold a reference, so the buffers they read outlive every session using them
 * whatever the release order. Lookups are rare (once per packed weight at session creation), so a
 * list scan under the lock costs nothing next to hashing the weight. */
#include "prepacked.h"
#include "alloc.h"
#include "status.h"
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

typedef struct prepack_entry {
    struct prepack_entry *next;
    cort_prepack_key key;
    void *obj;
    void (*free_obj)(void *obj);
} prepack_entry;

struct cort_prepacked_weights {
    atomic_long refs;
    pthread_mutex_t lock;
    prepack_entry *head;   /* guarded by lock */
    size_t count;          /* guarded by lock */
    uint64_t bytes;        /* source bytes of the stored buffers; guarded by lock */
};

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t fmix64(uint64_t k) {
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* Two 64-bit lanes mixed with different multipliers and rotations over the same 16-byte blocks;
 * a hit also needs the byte count, kind and every packing parameter to be equal. */
void cort_prepack_hash(const void *bytes, size_t n, cort_prepack_key *key) {
    const unsigned char *p = bytes;
    const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = 0x9e3779b97f4a7c15ULL ^ n, h2 = 0x6a09e667f3bcc909ULL ^ (n * c1);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint64_t k1, k2;
        memcpy(&k1, p + i, 8);
        memcpy(&k2, p + i + 8, 8);
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
        h1 = rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        h2 = rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
    }
    uint64_t t1 = 0, t2 = 0;
    unsigned char tail[16] = { 0 };
    memcpy(tail, p + i, n - i);
    memcpy(&t1, tail, 8);
    memcpy(&t2, tail + 8, 8);
    h1 ^= rotl64(t1 * c1, 31) * c2;
    h2 ^= rotl64(t2 * c2, 33) * c1;
    h1 ^= n; h2 ^= n;
    h1 += h2; h2 += h1;
    h1 = fmix64(h1); h2 = fmix64(h2);
    h1 += h2; h2 += h1;
    key->hash[0] = h1;
    key->hash[1] = h2;
    key->src_bytes = n;
}

static int key_eq(const cort_prepack_key *a, const cort_prepack_key *b) {
    if (a->hash[0] != b->hash[0] || a->hash[1] != b->hash[1] || a->src_bytes != b->src_bytes || a->kind != b->kind)
        return 0;
    for (int i = 0; i < CORT_PREPACK_NPARAMS; i++)
        if (a->params[i] != b->params[i]) return 0;
    return 1;
}

static prepack_entry *find_locked(cort_prepacked_weights *c, const cort_prepack_key *key) {
    for (prepack_entry *e = c->head; e; e = e->next)
        if (key_eq(&e->key, key)) return e;
    return NULL;
}

void *cort_prepack_find(cort_prepacked_weights *c, const cort_prepack_key *key) {
    pthread_mutex_lock(&c->lock);
    prepack_entry *e = find_locked(c, key);
    void *obj = e ? e->obj : NULL;
    pthread_mutex_unlock(&c->lock);
    return obj;
}

void *cort_prepack_insert(cort_prepacked_weights *c, const cort_prepack_key *key, void *obj,
                          void (*free_obj)(void *obj)) {
    prepack_entry *n = cort_calloc(1, sizeof *n);
    pthread_mutex_lock(&c->lock);
    prepack_entry *e = find_locked(c, key);
    void *got = NULL;
    if (e) got = e->obj;   /* another session packed the same weight meanwhile: keep the first */
    else if (n) {
        n->key = *key;
        n->obj = obj;
        n->free_obj = free_obj;
        n->next = c->head;
        c->head = n;
        c->count++;
        c->bytes += key->src_bytes;
        got = obj;
        n = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    cort_free(n);
    if (got != obj) free_obj(obj);
    return got;
}

cort_status *cort_prepacked_weights_create(cort_prepacked_weights **out) {
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_prepacked_weights_create: out is NULL");
    *out = NULL;
    cort_prepacked_weights *c = cort_calloc(1, sizeof *c);
    if (!c) return cort_error_oom();
    if (pthread_mutex_init(&c->lock, NULL)) {
        cort_free(c);
        return cort_error(CORT_ERROR_RUNTIME, "cort_prepacked_weights_create: pthread_mutex_init failed");
    }
    atomic_init(&c->refs, 1);
    *out = c;
    return NULL;
}

cort_prepacked_weights *cort_prepacked_retain(cort_prepacked_weights *c) {
    if (c) atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

void cort_prepacked_weights_release(cort_prepacked_weights *c) {
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) return;
    for (prepack_entry *e = c->head, *next; e; e = next) {
        next = e->next;
        e->free_obj(e->obj);
        cort_free(e);
    }
    pthread_mutex_destroy(&c->lock);
    cort_free(c);
}

size_t cort_prepacked_weights_count(cort_prepacked_weights *c) {
    if (!c) return 0;
    pthread_mutex_lock(&c->lock);
    size_t n = c->count;
    pthread_mutex_unlock(&c->lock);
    return n;
}

uint64_t cort_prepacked_weights_bytes(cort_prepacked_weights *c) {
    if (!c) return 0;
    pthread_mutex_lock(&c->lock);
    uint64_t n = c->bytes;
    pthread_mutex_unlock(&c->lock);
    return n;
}
