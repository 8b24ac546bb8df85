#include "namemap.h"
#include "../core/alloc.h"
#include "../core/status.h"
#include <string.h>

static size_t hash(const char *s) {
    size_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static cort_status *grow(cort_namemap *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    const char **keys = cort_calloc(cap, sizeof *keys);
    int32_t *vals = cort_calloc(cap, sizeof *vals);
    if (!keys || !vals) { cort_free(keys); cort_free(vals); return cort_error_oom(); }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            size_t j = hash(m->keys[i]) & (cap - 1);
            while (keys[j]) j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
    cort_free(m->keys);
    cort_free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return NULL;
}

cort_status *cort_namemap_put(cort_namemap *m, const char *key, int32_t val) {
    if ((m->len + 1) * 2 > m->cap) CORT_TRY(grow(m));
    size_t j = hash(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (!strcmp(m->keys[j], key)) { m->vals[j] = val; return NULL; }
        j = (j + 1) & (m->cap - 1);
    }
    m->keys[j] = key;
    m->vals[j] = val;
    m->len++;
    return NULL;
}

int32_t cort_namemap_get(const cort_namemap *m, const char *key) {
    if (!m->cap) return -1;
    size_t j = hash(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (!strcmp(m->keys[j], key)) return m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    return -1;
}

void cort_namemap_free(cort_namemap *m) {
    cort_free(m->keys);
    cort_free(m->vals);
    memset(m, 0, sizeof *m);
}
