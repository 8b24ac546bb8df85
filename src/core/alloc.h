/* Process-wide allocator. Every allocation cort makes goes through here so that statistics and
 * failure injection cover them all. Memory is 64-byte aligned. */
#ifndef CORT_CORE_ALLOC_H
#define CORT_CORE_ALLOC_H
#include <stddef.h>
#include "cort.h"

#define CORT_ALIGNMENT 64

void *cort_malloc(size_t size);                 /* NULL on failure (or size 0 gives a valid block) */
void *cort_calloc(size_t count, size_t size);   /* zeroed; checks count*size overflow */
void *cort_realloc(void *ptr, size_t size);     /* like realloc; on failure ptr is untouched */
void  cort_free(void *ptr);                     /* NULL is a no-op */
void *cort_malloc_huge(size_t size);            /* cort_malloc for long-lived blocks (huge pages) */
/* A session's huge arena: while bound to a thread (bind returns the previous binding), that
 * thread's cort_malloc_huge blocks are carved from it; they stay valid until the arena is freed
 * (cort_free on them is allowed and only updates the statistics). Not thread-safe: one binder. */
typedef struct cort_huge_arena cort_huge_arena;
cort_status *cort_huge_arena_create(cort_huge_arena **out);
void cort_huge_arena_free(cort_huge_arena *a);   /* NULL is a no-op */
cort_huge_arena *cort_huge_arena_bind(cort_huge_arena *a);
char *cort_strdup(const char *s);
char *cort_strndup(const char *s, size_t n);

/* Identity of the process-wide CPU allocator (stable, non-NULL once initialized). */
const void *cort_cpu_allocator_identity(void);
/* Ensures the process-wide allocator is initialized (once-guarded). */
cort_status *cort_alloc_init(void);

/* Test hook: the n-th allocation from now (1-based) and all later ones fail while armed;
 * n = 0 disarms. Returns the number of allocations counted since the last arm. */
void   cort_test_alloc_fail_at(long n);
long   cort_test_alloc_count(void);
#endif
