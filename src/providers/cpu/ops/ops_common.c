/* Shared helpers of the 'reduce' family; see ops/ops_common.h. */
#include <math.h>
#include <string.h>
#include "ops_common.h"

cort_status *rd_axis(const cort_node *node, int64_t axis, size_t rank, const char *what, size_t *out) {
    if (rd_axis_ok(axis, rank, out)) return NULL;
    return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "%s %lld is out of range for rank %zu (expected [%lld,%lld])",
                           what, (long long)axis, rank, -(long long)rank, (long long)rank - 1);
}

const char *rd_shape_str(const cort_value *t, char *buf, size_t len) {
    return cort_shape_str(t->shape, t->rank, buf, len);
}

cort_status *rd_read_ints(const cort_node *node, const cort_value *t, size_t index, const char *name,
                          int64_t *buf, size_t cap, size_t *n) {
    char sb[128];
    if (!t || t->kind != CORT_VKIND_TENSOR)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' must be a tensor", index, name);
    if (t->type != CORT_TYPE_INT64 && t->type != CORT_TYPE_INT32)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected int64 or int32",
                               index, name, cort_type_name(t->type));
    if (t->rank > 1)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, expected a 1-D tensor",
                               index, name, rd_shape_str(t, sb, sizeof sb));
    if (t->count > cap)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has %zu elements, at most %zu allowed",
                               index, name, t->count, cap);
    for (size_t i = 0; i < t->count; i++)
        buf[i] = t->type == CORT_TYPE_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    *n = t->count;
    return NULL;
}

cort_status *rd_read_floats(const cort_node *node, const cort_value *t, size_t index, const char *name,
                            double *buf, size_t cap, size_t *n) {
    char sb[128];
    if (!t || t->kind != CORT_VKIND_TENSOR)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' must be a tensor", index, name);
    if (!cort_type_is_float(t->type))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected a float type",
                               index, name, cort_type_name(t->type));
    if (t->rank > 1)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, expected a 1-D tensor",
                               index, name, rd_shape_str(t, sb, sizeof sb));
    if (t->count > cap)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has %zu elements, at most %zu allowed",
                               index, name, t->count, cap);
    for (size_t i = 0; i < t->count; i++) buf[i] = cort_load_f64(t->data, t->type, i);
    *n = t->count;
    return NULL;
}

int rd_const_ints(const cort_tinfo *t, int64_t *buf, size_t cap, size_t *n) {
    const cort_value *v = t ? t->value : NULL;
    if (!v || v->kind != CORT_VKIND_TENSOR || v->rank > 1 || v->count > cap) return 0;
    if (v->type != CORT_TYPE_INT64 && v->type != CORT_TYPE_INT32) return 0;
    for (size_t i = 0; i < v->count; i++)
        buf[i] = v->type == CORT_TYPE_INT64 ? ((const int64_t *)v->data)[i] : ((const int32_t *)v->data)[i];
    *n = v->count;
    return 1;
}

int rd_const_floats(const cort_tinfo *t, double *buf, size_t cap, size_t *n) {
    const cort_value *v = t ? t->value : NULL;
    if (!v || v->kind != CORT_VKIND_TENSOR || v->rank > 1 || v->count > cap || !cort_type_is_float(v->type)) return 0;
    for (size_t i = 0; i < v->count; i++) buf[i] = cort_load_f64(v->data, v->type, i);
    *n = v->count;
    return 1;
}

void rd_sort(int64_t *idx, int64_t *tmp, size_t n, rd_cmp_fn cmp, const void *ctx) {
    /* bottom-up merge sort: insertion-sort runs of 16, then merge with doubling widths */
    const size_t run = 16;
    for (size_t s = 0; s < n; s += run) {
        size_t e = s + run < n ? s + run : n;
        for (size_t i = s + 1; i < e; i++) {
            int64_t v = idx[i];
            size_t j = i;
            while (j > s && cmp(ctx, v, idx[j - 1]) < 0) { idx[j] = idx[j - 1]; j--; }
            idx[j] = v;
        }
    }
    int64_t *src = idx, *dst = tmp;
    for (size_t w = run; w < n; w *= 2) {
        for (size_t s = 0; s < n; s += 2 * w) {
            size_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n;
            size_t a = s, b = m, o = s;
            while (a < m && b < e) dst[o++] = cmp(ctx, src[b], src[a]) < 0 ? src[b++] : src[a++];
            while (a < m) dst[o++] = src[a++];
            while (b < e) dst[o++] = src[b++];
        }
        int64_t *t = src; src = dst; dst = t;
    }
    if (src != idx) memcpy(idx, src, n * sizeof *idx);
}

static void fill_f64(const cort_value *t, double *d) {
    if (t->type == CORT_TYPE_DOUBLE) memcpy(d, t->data, t->count * sizeof *d);
    else if (t->type == CORT_TYPE_FLOAT) for (size_t i = 0; i < t->count; i++) d[i] = ((const float *)t->data)[i];
    else for (size_t i = 0; i < t->count; i++) d[i] = cort_load_f64(t->data, t->type, i);
}

cort_status *rd_to_f64_scratch(cort_kernel_ctx *ctx, const cort_value *t, double **out) {
    double *d = cort_kernel_scratch(ctx, (t->count ? t->count : 1) * sizeof *d);
    if (!d) return cort_error_oom();
    fill_f64(t, d);
    *out = d;
    return NULL;
}

cort_status *rd_to_f64(const cort_value *t, double **out) {
    double *d = cort_malloc((t->count ? t->count : 1) * sizeof *d);
    if (!d) return cort_error_oom();
    fill_f64(t, d);
    *out = d;
    return NULL;
}

cort_status *rd_to_f32(const cort_value *t, float **out) {
    float *d = cort_malloc((t->count ? t->count : 1) * sizeof *d);
    if (!d) return cort_error_oom();
    if (t->type == CORT_TYPE_FLOAT) memcpy(d, t->data, t->count * sizeof *d);
    else if (t->type == CORT_TYPE_FLOAT16) for (size_t i = 0; i < t->count; i++) d[i] = cort_f16_to_f32(((const uint16_t *)t->data)[i]);
    else if (t->type == CORT_TYPE_BFLOAT16) for (size_t i = 0; i < t->count; i++) d[i] = cort_bf16_to_f32(((const uint16_t *)t->data)[i]);
    else for (size_t i = 0; i < t->count; i++) d[i] = (float)cort_load_f64(t->data, t->type, i);
    *out = d;
    return NULL;
}

void rd_store_f64_round(void *dst, cort_type t, const double *src, size_t n) {
    if (t == CORT_TYPE_FLOAT) { for (size_t i = 0; i < n; i++) ((float *)dst)[i] = (float)src[i]; return; }
    if (t == CORT_TYPE_DOUBLE) { memcpy(dst, src, n * sizeof *src); return; }
    if (cort_type_is_float(t)) { for (size_t i = 0; i < n; i++) cort_store_f64(dst, t, i, src[i]); return; }
    double lo, hi;
    switch (t) {
    case CORT_TYPE_UINT8: lo = 0; hi = 255; break;
    case CORT_TYPE_INT8: lo = -128; hi = 127; break;
    case CORT_TYPE_UINT16: lo = 0; hi = 65535; break;
    case CORT_TYPE_INT16: lo = -32768; hi = 32767; break;
    case CORT_TYPE_UINT32: lo = 0; hi = 4294967295.0; break;
    case CORT_TYPE_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case CORT_TYPE_UINT64: lo = 0; hi = 18446744073709549568.0; break;
    case CORT_TYPE_BOOL: lo = 0; hi = 1; break;
    default: lo = -9223372036854774784.0; hi = 9223372036854774784.0; break;
    }
    for (size_t i = 0; i < n; i++) {
        double v = nearbyint(src[i]);
        if (v != v) v = 0;
        v = v < lo ? lo : v > hi ? hi : v;
        cort_store_f64(dst, t, i, v);
    }
}
