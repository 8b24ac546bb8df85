/* Runtime values: tensors, sequences, optionals, maps. Reference counted (atomic). */
#ifndef CORT_CORE_VALUE_H
#define CORT_CORE_VALUE_H
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include "cort.h"

#define CORT_MAX_RANK 16
/* Initializers at least this big may stay lazy (lazy_src); smaller ones are copied at load. */
#define CORT_LAZY_MIN_BYTES ((size_t)64 << 10)

typedef enum cort_vkind {
    CORT_VKIND_UNKNOWN = 0, CORT_VKIND_TENSOR = 1, CORT_VKIND_SEQUENCE = 2,
    CORT_VKIND_OPTIONAL = 3, CORT_VKIND_MAP = 4
} cort_vkind;

struct cort_value {
    atomic_long refs;
    cort_vkind  kind;
    /* tensor */
    cort_type   type;           /* element type; for sequences: element type of the items; optional: see below */
    size_t      rank;
    int64_t     shape[CORT_MAX_RANK];
    size_t      count;          /* number of elements (product of shape) */
    size_t      bytes;          /* count * cort_type_size(type) */
    void       *data;           /* strings: char*[count], each NUL-terminated */
    uint8_t     owns_data;      /* data (and, for strings, each element) freed on release */
    /* memory layout of a rank-4 (or 3-D/5-D) activation: 0 = as the shape says (NCHW), 1 = channels
     * last (NHWC) while the shape stays NCHW. Only providers that agreed on it (partition hook) ever
     * see a value with layout 1; every other consumer gets the default layout. */
    uint8_t     layout;
    /* custom release of data (e.g. munmap of a mapped model file); called once on last release */
    void      (*release_fn)(void *ctx, void *data, size_t bytes);
    void       *release_ctx;
    /* custom destruction of the whole value (header and data), e.g. return to a buffer cache */
    void      (*destroy_fn)(cort_value *v);
    void       *destroy_ctx;
    cort_value *base;           /* keep-alive for views into another value's data (retained) */
    /* A graph initializer still in the mapped model file because its raw_data is misaligned for its
     * type (protobuf puts it anywhere): data is NULL and the bytes are at lazy_src, inside base (the
     * mapping, retained). Exists only while a session is being compiled, and afterwards only for a
     * weight every reader packed at creation (nothing reads it then): a weight that is only packed is
     * never copied. cort_value_materialize makes it an ordinary tensor. */
    const void *lazy_src;
    /* sequence */
    cort_value **items;
    size_t       n_items, cap_items;
    /* optional: elem == NULL means empty; opt_kind = kind of contents (tensor or sequence) */
    cort_value  *elem;
    cort_vkind   opt_kind;
    /* map */
    cort_value  *map_keys, *map_values;
};

/* A static "" used for empty string elements (never freed). */
extern char cort_empty_string[1];

/* New tensor with uninitialized data (strings are set to ""). dims may be NULL for rank 0. */
cort_status *cort_tensor_alloc(cort_type type, const int64_t *dims, size_t rank, cort_value **out);
/* huge: the data is a long-lived block (cort_malloc_huge: 2 MB pages when big), e.g. an initializer
 * copied out of a model; never call it while a session arena is bound if the value can escape. */
cort_status *cort_tensor_alloc_ex(cort_type type, const int64_t *dims, size_t rank, int huge, cort_value **out);
/* New tensor with zeroed data. */
cort_status *cort_tensor_alloc_zero(cort_type type, const int64_t *dims, size_t rank, cort_value **out);
/* A tensor whose data points into memory owned elsewhere; base (may be NULL) is retained as keep-alive. */
cort_status *cort_tensor_view(cort_type type, const int64_t *dims, size_t rank, void *data, cort_value *base,
                              cort_value **out);
/* Drops the whole pages inside [p, p + n) of a read-only private file mapping from the resident set
 * (they are read back from the file if touched again). Only for such mappings. */
void cort_pages_drop(const void *p, size_t n);
/* A lazy initializer (lazy_src) copied into memory of its own, its file pages dropped; no-op for any
 * other value. Not thread-safe: only the thread compiling the session that owns v may call it. */
cort_status *cort_value_materialize(cort_value *v);
/* Deep copy of a tensor (strings duplicated). */
cort_status *cort_tensor_clone(const cort_value *src, cort_value **out);
/* Element count of a shape; returns 0 and sets *overflow on overflow/negative dims. */
size_t cort_shape_count(const int64_t *dims, size_t rank, int *overflow);
/* Sets string element i to a copy of s[0..len). */
cort_status *cort_string_set(cort_value *t, size_t i, const char *s, size_t len);
static inline const char *cort_string_get(const cort_value *t, size_t i) {
    const char *s = ((char *const *)t->data)[i];
    return s ? s : "";
}

/* Sequences (items retained). */
cort_status *cort_sequence_new(cort_type elem_type, cort_value **out);
cort_status *cort_sequence_push(cort_value *seq, cort_value *item);   /* retains item */
/* Optionals. */
cort_status *cort_optional_new(cort_value *contents, cort_vkind contents_kind, cort_type elem_type, cort_value **out);

/* Formats "float[1,3,224,224]" into buf. */
const char *cort_shape_str(const int64_t *dims, size_t rank, char *buf, size_t buflen);
#endif
