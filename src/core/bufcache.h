/* Per-session recycling cache for tensor blocks and run scratch.
 *
 * Intermediates of a run are allocated as one block (value header + data) and go back to the cache
 * when their last reference is released, so a steady-state run with static shapes reuses the same
 * blocks instead of calling the allocator (large blocks would otherwise be mmapped and page-faulted
 * on every run). Blocks are bucketed by size class (at most 25% slack); a request takes the most
 * recently freed block of its class or of one up to 4x bigger (its lines are likely still cached,
 * a block idle since the previous run is not), and the cache holds at most
 * `max_bytes` of free blocks; beyond that, blocks are freed. The cache is reference counted: every
 * block handed out holds a reference, so an output that outlives its session returns its block to
 * a cache that still exists, and the last block frees the cache. Thread-safe (one mutex; only held
 * to push or pop a free list). */
#ifndef CORT_CORE_BUFCACHE_H
#define CORT_CORE_BUFCACHE_H
#include <stddef.h>
#include "cort.h"
#include "value.h"

typedef struct cort_bufcache cort_bufcache;

cort_status *cort_bufcache_create(size_t max_bytes, cort_bufcache **out);
/* Drops the creator's reference; the cache goes away when no block is outstanding either. */
void cort_bufcache_release(cort_bufcache *c);
/* A tensor (uninitialized data; not for strings) whose header and data come from the cache. */
cort_status *cort_bufcache_tensor(cort_bufcache *c, cort_type type, const int64_t *dims, size_t rank, cort_value **out);
/* A tensor view (header from the cache) over `data`, keeping `base` alive (retained). */
cort_status *cort_bufcache_view(cort_bufcache *c, cort_type type, const int64_t *dims, size_t rank, void *data,
                                cort_value *base, cort_value **out);
/* Raw (uninitialized) scratch of at least `bytes`, 64-byte aligned; give it back with cort_bufcache_put. */
void *cort_bufcache_get(cort_bufcache *c, size_t bytes);
void  cort_bufcache_put(cort_bufcache *c, void *p);
/* Bytes of the allocator currently held in free lists (block headers included), for tests and stats. */
size_t cort_bufcache_cached_bytes(cort_bufcache *c);
#endif
