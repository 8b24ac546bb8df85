/* Input access, integer lists and inference helpers shared by the 'shape' family. */
#include <stdio.h>
#include <string.h>
#include "tensor_common.h"

const char *sh_in_name(const cort_node *node, size_t i) {
    if (node && node->ir && i < node->ir->n_inputs && node->ir->inputs[i]) return node->ir->inputs[i];
    return "";
}

cort_status *sh_input_opt(const cort_kernel_ctx *ctx, size_t i, cort_value **out) {
    cort_value *v = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
    if (v && v->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is not a tensor", i,
                               sh_in_name(ctx->node, i));
    *out = v;
    return NULL;
}

cort_status *sh_input(const cort_kernel_ctx *ctx, size_t i, cort_value **out) {
    CORT_TRY(sh_input_opt(ctx, i, out));
    if (!*out)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "required input %zu '%s' is missing", i,
                               sh_in_name(ctx->node, i));
    return NULL;
}

cort_status *sh_read_ints(const cort_node *node, size_t input, const cort_value *t, int64_t *out, size_t max,
                          size_t *n) {
    if (!cort_type_is_int(t->type))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected an integer type",
                               input, sh_in_name(node, input), cort_type_name(t->type));
    if (t->count > max)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has %zu elements, at most %zu allowed",
                               input, sh_in_name(node, input), t->count, max);
    for (size_t i = 0; i < t->count; i++) out[i] = cort_load_i64(t->data, t->type, i);
    *n = t->count;
    return NULL;
}

cort_status *sh_read_scalar_i64(const cort_node *node, size_t input, const cort_value *t, int64_t *out) {
    if (t->count != 1)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has %zu elements, expected a scalar",
                               input, sh_in_name(node, input), t->count);
    if (cort_type_is_float(t->type)) {
        double d = cort_load_f64(t->data, t->type, 0);
        if (!(d > -9.2e18 && d < 9.2e18))
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has value %g, out of range",
                                   input, sh_in_name(node, input), d);
        *out = (int64_t)d;
        return NULL;
    }
    if (!cort_type_is_int(t->type) && t->type != CORT_TYPE_BOOL)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected a number",
                               input, sh_in_name(node, input), cort_type_name(t->type));
    *out = cort_load_i64(t->data, t->type, 0);
    return NULL;
}

cort_status *sh_axis(const cort_node *node, const char *what, int64_t axis, int64_t rank, int64_t *out) {
    if (axis < -rank || axis >= rank)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "%s = %lld is out of range [%lld, %lld] for rank %lld",
                               what, (long long)axis, (long long)-rank, (long long)(rank - 1), (long long)rank);
    *out = axis < 0 ? axis + rank : axis;
    return NULL;
}

const char *sh_dims_str(const int64_t *dims, size_t rank, char *buf, size_t n) {
    size_t off = 0;
    if (n == 0) return buf;
    buf[0] = 0;
    off += (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < rank && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (off < n) snprintf(buf + off, n - off, "]");
    return buf;
}

void sh_strides(const int64_t *dims, size_t rank, int64_t *strides) {
    int64_t s = 1;
    for (size_t i = rank; i-- > 0;) { strides[i] = s; s *= dims[i]; }
}

int64_t sh_prod(const int64_t *dims, size_t begin, size_t end) {
    int64_t p = 1;
    for (size_t i = begin; i < end; i++) p *= dims[i];
    return p;
}

const cort_tinfo *sh_tin(const cort_infer_ctx *ctx, size_t i) {
    if (i >= ctx->n_inputs || !ctx->inputs[i].present) return NULL;
    return &ctx->inputs[i];
}

cort_type sh_tin_type(const cort_infer_ctx *ctx, size_t i) {
    const cort_tinfo *t = sh_tin(ctx, i);
    return t ? t->elem : CORT_TYPE_UNDEFINED;
}

int sh_tinfo_ints(const cort_tinfo *t, int64_t *out, size_t max, size_t *n) {
    if (!t || !t->value || t->value->kind != CORT_VKIND_TENSOR || !cort_type_is_int(t->value->type) ||
        t->value->count > max)
        return 0;
    for (size_t i = 0; i < t->value->count; i++) out[i] = cort_load_i64(t->value->data, t->value->type, i);
    *n = t->value->count;
    return 1;
}

int sh_tinfo_scalar_i64(const cort_tinfo *t, int64_t *out) {
    if (!t || !t->value || t->value->kind != CORT_VKIND_TENSOR || t->value->count != 1) return 0;
    cort_type ty = t->value->type;
    if (cort_type_is_float(ty)) {
        double d = cort_load_f64(t->value->data, ty, 0);
        if (!(d > -9.2e18 && d < 9.2e18)) return 0;
        *out = (int64_t)d;
        return 1;
    }
    if (!cort_type_is_int(ty) && ty != CORT_TYPE_BOOL) return 0;
    *out = cort_load_i64(t->value->data, ty, 0);
    return 1;
}

void sh_fill(void *dst, size_t count, size_t esize, const void *value) {
    if (count == 0 || esize == 0) return;
    const unsigned char *v = value;
    int all_zero = 1;
    for (size_t i = 0; i < esize; i++) all_zero &= v[i] == 0;
    if (all_zero) { memset(dst, 0, count * esize); return; }
    if (esize == 1) { memset(dst, v[0], count); return; }
    /* doubling copies: log2(count) memcpy calls */
    char *d = dst;
    size_t total = count * esize, done = esize;
    memcpy(d, v, esize);
    while (done < total) {
        size_t n = done < total - done ? done : total - done;
        memcpy(d + done, d, n);
        done += n;
    }
}

void sh_zero(cort_value *t) {
    if (t->type == CORT_TYPE_STRING) {
        char **p = t->data;
        for (size_t i = 0; i < t->count; i++) p[i] = cort_empty_string;
        return;
    }
    if (t->bytes) memset(t->data, 0, t->bytes);
}

cort_status *sh_strings_own(cort_value *t) {
    if (t->type != CORT_TYPE_STRING) return NULL;
    char **p = t->data;
    for (size_t i = 0; i < t->count; i++) {
        const char *s = p[i];
        p[i] = cort_empty_string;
        if (!s || !*s) continue;
        cort_status *st = cort_string_set(t, i, s, strlen(s));
        if (st) {
            for (size_t j = i + 1; j < t->count; j++) p[j] = cort_empty_string;
            return st;
        }
    }
    return NULL;
}
