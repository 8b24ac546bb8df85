#include "value.h"
#include "alloc.h"
#include "status.h"
#include "types.h"
#include "checked.h"
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

char cort_empty_string[1];

size_t cort_type_size(cort_type t) {
    switch (t) {
    case CORT_TYPE_FLOAT: case CORT_TYPE_INT32: case CORT_TYPE_UINT32: return 4;
    case CORT_TYPE_UINT8: case CORT_TYPE_INT8: case CORT_TYPE_BOOL: return 1;
    case CORT_TYPE_FLOAT8E4M3FN: case CORT_TYPE_FLOAT8E4M3FNUZ: case CORT_TYPE_FLOAT8E5M2:
    case CORT_TYPE_FLOAT8E5M2FNUZ: case CORT_TYPE_FLOAT8E8M0: return 1;
    /* sub-byte types are unpacked in memory: every op that moves bytes works on them unchanged */
    case CORT_TYPE_UINT4: case CORT_TYPE_INT4: case CORT_TYPE_FLOAT4E2M1: case CORT_TYPE_UINT2: case CORT_TYPE_INT2:
        return 1;
    case CORT_TYPE_UINT16: case CORT_TYPE_INT16: case CORT_TYPE_FLOAT16: case CORT_TYPE_BFLOAT16: return 2;
    case CORT_TYPE_INT64: case CORT_TYPE_DOUBLE: case CORT_TYPE_UINT64: case CORT_TYPE_COMPLEX64: return 8;
    case CORT_TYPE_COMPLEX128: return 16;
    case CORT_TYPE_STRING: return sizeof(char *);
    default: return 0;
    }
}

const char *cort_type_name(cort_type t) {
    static const char *const names[] = { "undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
                                         "string", "bool", "float16", "double", "uint32", "uint64", "complex64",
                                         "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz",
                                         "float8e5m2", "float8e5m2fnuz", "uint4", "int4", "float4e2m1",
                                         "float8e8m0", "uint2", "int2" };
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "undefined";
}

size_t cort_shape_count(const int64_t *dims, size_t rank, int *overflow) {
    size_t n = 1;
    *overflow = 0;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0) { *overflow = 1; return 0; }
        if (dims[i] && n > SIZE_MAX / (size_t)dims[i]) { *overflow = 1; return 0; }
        n *= (size_t)dims[i];
    }
    return n;
}

static cort_value *value_new(cort_vkind kind) {
    cort_value *v = cort_calloc(1, sizeof *v);
    if (!v) return NULL;
    atomic_init(&v->refs, 1);
    v->kind = kind;
    return v;
}

static cort_status *tensor_header(cort_type type, const int64_t *dims, size_t rank, cort_value **out) {
    size_t es = cort_type_size(type);
    if (!es) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "tensor: unsupported element type %d", (int)type);
    if (rank > CORT_MAX_RANK)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "tensor: rank %zu exceeds the maximum %d", rank, CORT_MAX_RANK);
    if (rank && !dims) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "tensor: shape is NULL for rank %zu", rank);
    int ovf;
    size_t count = cort_shape_count(dims, rank, &ovf);
    if (ovf || (es && count > CORT_MAX_ADDRESSABLE_BYTES / es)) {
        char buf[256];
        return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                          "tensor: invalid shape %s (a negative dim, or more than the %zu bytes a process can address)",
                          cort_shape_str(dims, rank, buf, sizeof buf), (size_t)CORT_MAX_ADDRESSABLE_BYTES);
    }
    cort_value *v = value_new(CORT_VKIND_TENSOR);
    if (!v) return cort_error_oom();
    v->type = type;
    v->rank = rank;
    if (rank) memcpy(v->shape, dims, rank * sizeof *dims);
    v->count = count;
    v->bytes = count * es;
    *out = v;
    return NULL;
}

cort_status *cort_tensor_alloc(cort_type type, const int64_t *dims, size_t rank, cort_value **out) {
    return cort_tensor_alloc_ex(type, dims, rank, 0, out);
}

cort_status *cort_tensor_alloc_ex(cort_type type, const int64_t *dims, size_t rank, int huge, cort_value **out) {
    cort_value *v = NULL;
    CORT_TRY(tensor_header(type, dims, rank, &v));
    v->data = huge && type != CORT_TYPE_STRING ? cort_malloc_huge(v->bytes) : cort_malloc(v->bytes);
    if (!v->data) { cort_free(v); return cort_error_oom(); }
    v->owns_data = 1;
    if (type == CORT_TYPE_STRING)
        for (size_t i = 0; i < v->count; i++) ((char **)v->data)[i] = cort_empty_string;
    *out = v;
    return NULL;
}

cort_status *cort_tensor_alloc_zero(cort_type type, const int64_t *dims, size_t rank, cort_value **out) {
    cort_value *v = NULL;
    CORT_TRY(cort_tensor_alloc(type, dims, rank, &v));
    if (type != CORT_TYPE_STRING) memset(v->data, 0, v->bytes);
    *out = v;
    return NULL;
}

cort_status *cort_tensor_view(cort_type type, const int64_t *dims, size_t rank, void *data, cort_value *base,
                              cort_value **out) {
    cort_value *v = NULL;
    CORT_TRY(tensor_header(type, dims, rank, &v));
    v->data = data;
    v->base = base ? cort_value_retain(base) : NULL;
    *out = v;
    return NULL;
}

void cort_pages_drop(const void *p, size_t n) {
    const long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0 || !p || !n) return;
    const uintptr_t lo = (uintptr_t)p, a = (lo + (uintptr_t)pg - 1) / (uintptr_t)pg * (uintptr_t)pg,
                    b = (lo + n) / (uintptr_t)pg * (uintptr_t)pg;
    if (b > a) (void)madvise((void *)a, b - a, MADV_DONTNEED);   /* advice only: failure changes nothing */
}

cort_status *cort_value_materialize(cort_value *v) {
    if (!v || !v->lazy_src) return NULL;
    /* not from a session's weight arena: the copy may outlive the session (a graph output) */
    cort_huge_arena *prev = cort_huge_arena_bind(NULL);
    void *d = cort_malloc_huge(v->bytes);
    cort_huge_arena_bind(prev);
    if (!d) return cort_error_oom();
    memcpy(d, v->lazy_src, v->bytes);
    cort_pages_drop(v->lazy_src, v->bytes);
    v->data = d;
    v->owns_data = 1;
    v->lazy_src = NULL;
    cort_value_release(v->base);
    v->base = NULL;
    return NULL;
}

cort_status *cort_string_set(cort_value *t, size_t i, const char *s, size_t len) {
    char **slot = (char **)t->data + i;
    char *d;
    if (len == 0) d = cort_empty_string;
    else if (!(d = cort_strndup(s, len))) return cort_error_oom();
    if (t->owns_data && *slot && *slot != cort_empty_string) cort_free(*slot);
    *slot = d;
    return NULL;
}

cort_status *cort_tensor_clone(const cort_value *src, cort_value **out) {
    if (!src || src->kind != CORT_VKIND_TENSOR)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "clone: not a tensor");
    cort_value *v = NULL;
    CORT_TRY(cort_tensor_alloc(src->type, src->shape, src->rank, &v));
    if (src->type == CORT_TYPE_STRING) {
        for (size_t i = 0; i < src->count; i++) {
            const char *s = cort_string_get(src, i);
            cort_status *st = cort_string_set(v, i, s, strlen(s));
            if (st) { cort_value_release(v); return st; }
        }
    } else if (src->bytes) memcpy(v->data, src->data, src->bytes);
    *out = v;
    return NULL;
}

static void value_destroy(cort_value *v) {
    if (v->destroy_fn) { v->destroy_fn(v); return; }
    switch (v->kind) {
    case CORT_VKIND_TENSOR:
        if (v->release_fn) v->release_fn(v->release_ctx, v->data, v->bytes);
        else if (v->owns_data) {
            if (v->type == CORT_TYPE_STRING && v->data)
                for (size_t i = 0; i < v->count; i++) {
                    char *s = ((char **)v->data)[i];
                    if (s && s != cort_empty_string) cort_free(s);
                }
            cort_free(v->data);
        }
        cort_value_release(v->base);
        break;
    case CORT_VKIND_SEQUENCE:
        for (size_t i = 0; i < v->n_items; i++) cort_value_release(v->items[i]);
        cort_free(v->items);
        break;
    case CORT_VKIND_OPTIONAL: cort_value_release(v->elem); break;
    case CORT_VKIND_MAP:
        cort_value_release(v->map_keys);
        cort_value_release(v->map_values);
        break;
    default: break;
    }
    cort_free(v);
}

cort_value *cort_value_retain(cort_value *v) {
    if (v) atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    return v;
}

void cort_value_release(cort_value *v) {
    if (!v) return;
    if (atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) == 1) value_destroy(v);
}

int cort_value_kind(const cort_value *v) { return v ? (int)v->kind : 0; }

/* ---- public tensor API ---- */
cort_status *cort_tensor_create(cort_type type, const int64_t *shape, size_t rank, cort_value **out) {
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_tensor_create: out is NULL");
    return cort_tensor_alloc_zero(type, shape, rank, out);
}

cort_status *cort_tensor_wrap(void *data, size_t bytes, cort_type type, const int64_t *shape, size_t rank,
                              cort_value **out) {
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_tensor_wrap: out is NULL");
    cort_value *v = NULL;
    CORT_TRY(tensor_header(type, shape, rank, &v));
    if (!data && v->bytes) {
        cort_free(v);
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_tensor_wrap: data is NULL for %zu bytes", v->bytes);
    }
    if (bytes < v->bytes) {
        size_t need = v->bytes;
        cort_free(v);
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_tensor_wrap: buffer has %zu bytes, shape needs %zu",
                          bytes, need);
    }
    v->data = data;
    *out = v;
    return NULL;
}

void *cort_tensor_data(const cort_value *v) { return v && v->kind == CORT_VKIND_TENSOR ? v->data : NULL; }
cort_type cort_tensor_type(const cort_value *v) { return v && v->kind == CORT_VKIND_TENSOR ? v->type : CORT_TYPE_UNDEFINED; }
size_t cort_tensor_rank(const cort_value *v) { return v && v->kind == CORT_VKIND_TENSOR ? v->rank : 0; }
const int64_t *cort_tensor_shape(const cort_value *v) { return v && v->kind == CORT_VKIND_TENSOR ? v->shape : NULL; }
size_t cort_tensor_element_count(const cort_value *v) { return v && v->kind == CORT_VKIND_TENSOR ? v->count : 0; }
size_t cort_tensor_bytes(const cort_value *v) { return v && v->kind == CORT_VKIND_TENSOR ? v->bytes : 0; }

cort_status *cort_tensor_set_string(cort_value *v, size_t index, const char *s) {
    if (!v || v->kind != CORT_VKIND_TENSOR || v->type != CORT_TYPE_STRING)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_tensor_set_string: not a string tensor");
    if (!v->owns_data)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_tensor_set_string: tensor wraps caller memory");
    if (index >= v->count)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_tensor_set_string: index %zu >= %zu elements", index, v->count);
    if (!s) s = "";
    return cort_string_set(v, index, s, strlen(s));
}

/* ---- sequences, optionals, maps ---- */
cort_status *cort_sequence_new(cort_type elem_type, cort_value **out) {
    cort_value *v = value_new(CORT_VKIND_SEQUENCE);
    if (!v) return cort_error_oom();
    v->type = elem_type;
    *out = v;
    return NULL;
}

cort_status *cort_sequence_push(cort_value *seq, cort_value *item) {
    if (seq->n_items == seq->cap_items) {
        size_t cap = seq->cap_items ? seq->cap_items * 2 : 4;
        cort_value **n = cort_realloc(seq->items, cap * sizeof *n);
        if (!n) return cort_error_oom();
        seq->items = n;
        seq->cap_items = cap;
    }
    seq->items[seq->n_items++] = cort_value_retain(item);
    if (seq->type == CORT_TYPE_UNDEFINED && item && item->kind == CORT_VKIND_TENSOR) seq->type = item->type;
    return NULL;
}

cort_status *cort_sequence_create(cort_type elem_type, cort_value *const *items, size_t count, cort_value **out) {
    if (!out || (count && !items)) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_sequence_create: NULL argument");
    for (size_t i = 0; i < count; i++)
        if (!items[i]) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_sequence_create: item %zu is NULL", i);
    cort_value *s = NULL;
    CORT_TRY(cort_sequence_new(elem_type, &s));
    for (size_t i = 0; i < count; i++) {
        cort_status *st = cort_sequence_push(s, items[i]);
        if (st) { cort_value_release(s); return st; }
    }
    *out = s;
    return NULL;
}

size_t cort_sequence_length(const cort_value *s) { return s && s->kind == CORT_VKIND_SEQUENCE ? s->n_items : 0; }
cort_value *cort_sequence_at(const cort_value *s, size_t i) {
    return s && s->kind == CORT_VKIND_SEQUENCE && i < s->n_items ? s->items[i] : NULL;
}
cort_type cort_sequence_elem_type(const cort_value *s) {
    return s && s->kind == CORT_VKIND_SEQUENCE ? s->type : CORT_TYPE_UNDEFINED;
}

cort_status *cort_optional_new(cort_value *contents, cort_vkind kind, cort_type elem_type, cort_value **out) {
    cort_value *v = value_new(CORT_VKIND_OPTIONAL);
    if (!v) return cort_error_oom();
    v->elem = cort_value_retain(contents);
    v->opt_kind = contents ? contents->kind : kind;
    v->type = contents && contents->kind == CORT_VKIND_TENSOR ? contents->type
            : contents && contents->kind == CORT_VKIND_SEQUENCE ? contents->type : elem_type;
    *out = v;
    return NULL;
}

cort_status *cort_optional_create(cort_value *contents, int contents_kind, cort_type elem_type, cort_value **out) {
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_optional_create: out is NULL");
    return cort_optional_new(contents, (cort_vkind)contents_kind, elem_type, out);
}
cort_value *cort_optional_value(const cort_value *o) { return o && o->kind == CORT_VKIND_OPTIONAL ? o->elem : NULL; }

cort_status *cort_map_create(cort_value *keys, cort_value *values, cort_value **out) {
    if (!keys || !values || !out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_map_create: NULL argument");
    cort_value *v = value_new(CORT_VKIND_MAP);
    if (!v) return cort_error_oom();
    v->map_keys = cort_value_retain(keys);
    v->map_values = cort_value_retain(values);
    *out = v;
    return NULL;
}
cort_value *cort_map_keys(const cort_value *m) { return m && m->kind == CORT_VKIND_MAP ? m->map_keys : NULL; }
cort_value *cort_map_values(const cort_value *m) { return m && m->kind == CORT_VKIND_MAP ? m->map_values : NULL; }

const char *cort_shape_str(const int64_t *dims, size_t rank, char *buf, size_t buflen) {
    size_t o = 0;
    o += (size_t)snprintf(buf + o, o < buflen ? buflen - o : 0, "[");
    for (size_t i = 0; i < rank && o < buflen; i++) {
        if (dims[i] < 0) o += (size_t)snprintf(buf + o, buflen - o, "%s?", i ? "," : "");
        else o += (size_t)snprintf(buf + o, buflen - o, "%s%lld", i ? "," : "", (long long)dims[i]);
    }
    if (o < buflen) snprintf(buf + o, buflen - o, "]");
    return buf;
}
