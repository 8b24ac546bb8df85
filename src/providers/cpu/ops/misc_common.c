/* Helpers shared by the 'misc' family kernels. */
#include <string.h>
#include "misc_common.h"

cort_status *mi_want_tensor(const cort_kernel_ctx *ctx, size_t i, const char *what) {
    const cort_value *v = mi_in(ctx, i);
    if (!v) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is missing", i, what);
    if (v->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' must be a tensor (got value kind %d)",
                               i, what, (int)v->kind);
    return NULL;
}

cort_status *mi_scalar_i64(const cort_kernel_ctx *ctx, size_t i, const char *what, int64_t *out) {
    CORT_TRY(mi_want_tensor(ctx, i, what));
    const cort_value *v = ctx->inputs[i];
    if (!cort_type_is_int(v->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected an integer type",
                               i, what, cort_type_name(v->type));
    if (v->count != 1) {
        char buf[128];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, expected a scalar",
                               i, what, cort_shape_str(v->shape, v->rank, buf, sizeof buf));
    }
    *out = cort_load_i64(v->data, v->type, 0);
    return NULL;
}

cort_status *mi_scalar_f64(const cort_kernel_ctx *ctx, size_t i, const char *what, double *out) {
    CORT_TRY(mi_want_tensor(ctx, i, what));
    const cort_value *v = ctx->inputs[i];
    if (!cort_type_is_int(v->type) && !cort_type_is_float(v->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected a numeric type",
                               i, what, cort_type_name(v->type));
    if (v->count != 1) {
        char buf[128];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, expected a scalar",
                               i, what, cort_shape_str(v->shape, v->rank, buf, sizeof buf));
    }
    *out = cort_load_f64(v->data, v->type, 0);
    return NULL;
}

cort_status *mi_copy_elems(cort_value *dst, size_t dst_off, const cort_value *src, size_t src_off, size_t n) {
    if (n == 0) return NULL;
    if (dst->type == CORT_TYPE_STRING) {
        for (size_t i = 0; i < n; i++) {
            const char *s = cort_string_get(src, src_off + i);
            CORT_TRY(cort_string_set(dst, dst_off + i, s, strlen(s)));
        }
        return NULL;
    }
    size_t es = cort_type_size(dst->type);
    memcpy((char *)dst->data + dst_off * es, (const char *)src->data + src_off * es, n * es);
    return NULL;
}
