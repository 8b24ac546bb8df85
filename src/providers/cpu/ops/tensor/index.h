/* Index tensors (int32/int64) of Gather*, Scatter*, ReverseSequence: loading and range checks. */
#ifndef CORT_CPU_SH_INDEX_H
#define CORT_CPU_SH_INDEX_H
#include "tensor_common.h"

static inline cort_status *sh_index_check_type(const cort_node *node, size_t input, const cort_value *t) {
    if (t->type == CORT_TYPE_INT32 || t->type == CORT_TYPE_INT64) return NULL;
    return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected int32 or int64", input,
                           sh_in_name(node, input), cort_type_name(t->type));
}

static inline int64_t sh_index_load(const cort_value *t, size_t i) {
    return t->type == CORT_TYPE_INT32 ? (int64_t)((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

/* v already checked to lie in [-D, D). */
static inline int64_t sh_index_norm(int64_t v, int64_t D) { return v < 0 ? v + D : v; }

/* Checks that every index lies in [-D, D); names the first bad one. */
static inline cort_status *sh_index_check_all(const cort_node *node, size_t input, const cort_value *t, int64_t D,
                                              int64_t axis, const char *data_shape) {
    for (size_t i = 0; i < t->count; i++) {
        int64_t v = sh_index_load(t, i);
        if (v < -D || v >= D)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %zu '%s' has index %lld at position %zu, out of range [%lld, %lld] for axis %lld of data shape %s",
                                   input, sh_in_name(node, input), (long long)v, i, (long long)-D, (long long)(D - 1),
                                   (long long)axis, data_shape);
    }
    return NULL;
}
#endif
