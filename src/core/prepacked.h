/* The prepacked-weights container (cort.h: cort_prepacked_weights): packed weight buffers shared
 * by every session created with the same container. Buffers are found by what they were made
 * from (a 128-bit hash of the source bytes, their byte count, the packing kind and parameters),
 * never by initializer name, so two models sharing a weight find it too. */
#ifndef CORT_CORE_PREPACKED_H
#define CORT_CORE_PREPACKED_H
#include <stddef.h>
#include <stdint.h>
#include "cort.h"

#define CORT_PREPACK_NPARAMS 8
typedef struct cort_prepack_key {
    uint64_t hash[2];     /* of the source bytes (two independent 64-bit lanes) */
    uint64_t src_bytes;
    uint32_t kind;        /* which kernel family packed it (CORT_PREPACK_KIND_*) */
    uint64_t params[CORT_PREPACK_NPARAMS];   /* shapes, tile, micro-kernel identity; unused = 0 */
} cort_prepack_key;

enum { CORT_PREPACK_KIND_CONV = 1, CORT_PREPACK_KIND_MATMUL_B = 2, CORT_PREPACK_KIND_PWDW = 3 };

/* Fills key->hash and key->src_bytes from bytes[n] (any alignment); kind and params untouched. */
void cort_prepack_hash(const void *bytes, size_t n, cort_prepack_key *key);
/* The object stored under a key equal to *key in every field, or NULL. Thread-safe. */
void *cort_prepack_find(cort_prepacked_weights *c, const cort_prepack_key *key);
/* Stores obj (ownership passes to the container; free_obj(obj) frees it with the container) unless
 * another thread stored one under the same key meanwhile: then obj is freed at once and the stored
 * one returned. Returns NULL (obj freed) only when out of memory. Thread-safe. */
void *cort_prepack_insert(cort_prepacked_weights *c, const cort_prepack_key *key, void *obj,
                          void (*free_obj)(void *obj));
cort_prepacked_weights *cort_prepacked_retain(cort_prepacked_weights *c);
#endif
