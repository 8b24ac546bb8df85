/* Bump allocator for the model IR: a list of chunks from cort_malloc, all freed at once.
 * Chunks double in size (64 KB .. 4 MB) so a model with millions of nodes needs few chunks;
 * a request larger than the current chunk size gets a chunk of its own. */
#include <stdint.h>
#include <string.h>
#include "../graph/ir.h"
#include "../core/alloc.h"
#include "../core/status.h"

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    /* data follows, 16-aligned (the header is 32 bytes on LP64; see chunk_data) */
} arena_chunk;

struct cort_arena {
    arena_chunk *head;
    size_t next_cap;
};

#define ARENA_HDR (((sizeof(arena_chunk) + 15) / 16) * 16)
#define ARENA_MIN_CHUNK ((size_t)64 << 10)
#define ARENA_MAX_CHUNK ((size_t)4 << 20)

static uint8_t *chunk_data(arena_chunk *c) { return (uint8_t *)c + ARENA_HDR; }

cort_status *cort_arena_create(cort_arena **out) {
    cort_arena *a = cort_calloc(1, sizeof *a);
    if (!a) return cort_error_oom();
    a->next_cap = ARENA_MIN_CHUNK;
    *out = a;
    return NULL;
}

void *cort_arena_alloc(cort_arena *a, size_t size) {
    if (size > SIZE_MAX - 64 - ARENA_HDR) return NULL;
    size_t need = (size + 15) & ~(size_t)15;
    if (need == 0) need = 16;
    arena_chunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = a->next_cap;
        int oversized = need > cap;     /* own chunk, does not disturb the growth schedule */
        if (oversized) cap = need;
        else if (a->next_cap < ARENA_MAX_CHUNK) a->next_cap *= 2;
        arena_chunk *n = cort_malloc(ARENA_HDR + cap);
        if (!n) return NULL;
        n->used = 0;
        n->cap = cap;
        if (c && oversized && c->cap - c->used >= 1024) {
            /* keep bumping in the current chunk: put the big one behind it */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            a->head = n;
        }
        c = n;
    }
    void *p = chunk_data(c) + c->used;
    c->used += need;
    memset(p, 0, need);
    return p;
}

char *cort_arena_strndup(cort_arena *a, const char *s, size_t n) {
    if (n == SIZE_MAX) return NULL;
    char *d = cort_arena_alloc(a, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void cort_arena_free(cort_arena *a) {
    if (!a) return;
    for (arena_chunk *c = a->head; c;) {
        arena_chunk *next = c->next;
        cort_free(c);
        c = next;
    }
    cort_free(a);
}
