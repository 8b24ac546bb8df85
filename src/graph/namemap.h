/* String -> int32 map (open addressing) used to resolve value names while compiling a graph. */
#ifndef CORT_GRAPH_NAMEMAP_H
#define CORT_GRAPH_NAMEMAP_H
#include <stddef.h>
#include <stdint.h>
#include "cort.h"

typedef struct cort_namemap {
    const char **keys;   /* borrowed strings */
    int32_t *vals;
    size_t cap, len;
} cort_namemap;

cort_status *cort_namemap_put(cort_namemap *m, const char *key, int32_t val);   /* overwrites */
int32_t      cort_namemap_get(const cort_namemap *m, const char *key);          /* -1 if absent */
void         cort_namemap_free(cort_namemap *m);
#endif
