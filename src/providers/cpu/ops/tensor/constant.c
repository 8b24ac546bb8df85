/* Generators: Constant, ConstantOfShape, Shape, Size, Range, EyeLike, OneHot. */
#include <math.h>
#include <string.h>
#include "tensor_common.h"
#include "tensor_ops.h"

/* "1" of a numeric or bool element type, written into buf (16 bytes). */
static void one_value(cort_type t, void *buf) {
    memset(buf, 0, 16);
    if (t == CORT_TYPE_BOOL) *(uint8_t *)buf = 1;
    else if (t == CORT_TYPE_COMPLEX64) { float f = 1.0f; memcpy(buf, &f, 4); }
    else if (t == CORT_TYPE_COMPLEX128) { double d = 1.0; memcpy(buf, &d, 8); }
    else cort_store_f64(buf, t, 0, 1.0);
}

/* ---------------- Constant ---------------- */

typedef struct constant_state { cort_value *v; } constant_state;

static void constant_free(void *state) {
    constant_state *s = state;
    if (!s) return;
    cort_value_release(s->v);
    cort_free(s);
}

static cort_status *constant_make(const cort_node *node, cort_value **out) {
    const cort_attr_ir *a = NULL;
    static const char *const names[] = { "value", "sparse_value", "value_float", "value_floats", "value_int",
                                         "value_ints", "value_string", "value_strings" };
    int which = -1, count = 0;
    for (int i = 0; i < 8; i++) {
        const cort_attr_ir *x = cort_attr_get(node, names[i]);
        if (x) { a = x; which = i; count++; }
    }
    if (count != 1)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "exactly one value attribute must be set, found %d", count);
    cort_value *v = NULL;
    int64_t n = (int64_t)a->n;
    switch (which) {
    case 0: case 1:
        if (!a->t || a->t->kind != CORT_VKIND_TENSOR)
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute '%s' holds no tensor", names[which]);
        *out = cort_value_retain(a->t);
        return NULL;
    case 2:
        CORT_TRY(cort_tensor_alloc(CORT_TYPE_FLOAT, NULL, 0, &v));
        memcpy(v->data, &a->f, sizeof(float));
        break;
    case 3:
        CORT_TRY(cort_tensor_alloc(CORT_TYPE_FLOAT, &n, 1, &v));
        if (a->n) memcpy(v->data, a->floats, a->n * sizeof(float));
        break;
    case 4:
        CORT_TRY(cort_tensor_alloc(CORT_TYPE_INT64, NULL, 0, &v));
        memcpy(v->data, &a->i, sizeof(int64_t));
        break;
    case 5:
        CORT_TRY(cort_tensor_alloc(CORT_TYPE_INT64, &n, 1, &v));
        if (a->n) memcpy(v->data, a->ints, a->n * sizeof(int64_t));
        break;
    case 6: {
        CORT_TRY(cort_tensor_alloc(CORT_TYPE_STRING, NULL, 0, &v));
        cort_status *st = cort_string_set(v, 0, a->s ? a->s : "", a->s ? a->s_len : 0);
        if (st) { cort_value_release(v); return st; }
        break;
    }
    default:
        CORT_TRY(cort_tensor_alloc(CORT_TYPE_STRING, &n, 1, &v));
        for (size_t i = 0; i < a->n; i++) {
            cort_status *st = cort_string_set(v, i, a->strings[i], a->string_lens ? a->string_lens[i] : strlen(a->strings[i]));
            if (st) { cort_value_release(v); return st; }
        }
    }
    *out = v;
    return NULL;
}

static cort_status *constant_init(const cort_node *node, void **state) {
    constant_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = constant_make(node, &s->v);
    if (st) { cort_free(s); return st; }
    *state = s;
    return NULL;
}

static cort_status *constant_infer(cort_infer_ctx *ctx) {
    const constant_state *s = ctx->state;
    if (!s || !s->v) return NULL;
    cort_tinfo_tensor_shape(&ctx->outputs[0], s->v->type, s->v->shape, (int)s->v->rank);
    ctx->outputs[0].value = s->v;
    return NULL;
}

static cort_status *constant_run(cort_kernel_ctx *ctx) {
    const constant_state *s = ctx->state;
    if (!s || !s->v) return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "constant was not initialized");
    cort_kernel_set_output(ctx, 0, cort_value_retain(s->v));
    return NULL;
}

const cort_op_def sh_op_constant = { .name = "Constant", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .init = constant_init, .free_state = constant_free, .infer = constant_infer, .run = constant_run };

/* ---------------- ConstantOfShape ---------------- */

static cort_status *cos_init(const cort_node *node, void **state) {
    *state = NULL;
    const cort_value *v = cort_attr_tensor(node, "value");
    if (v && (v->kind != CORT_VKIND_TENSOR || v->count != 1))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'value' must hold exactly one element, it has %zu",
                               v->kind == CORT_VKIND_TENSOR ? v->count : 0);
    return NULL;
}

static cort_status *cos_infer(cort_infer_ctx *ctx) {
    const cort_value *v = cort_attr_tensor(ctx->node, "value");
    cort_type t = v ? v->type : CORT_TYPE_FLOAT;
    int64_t shape[CORT_MAX_RANK];
    size_t n;
    const cort_tinfo *s = sh_tin(ctx, 0);
    if (sh_tinfo_ints(s, shape, CORT_MAX_RANK, &n)) cort_tinfo_tensor_shape(&ctx->outputs[0], t, shape, (int)n);
    else if (s && s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= CORT_MAX_RANK) {
        for (int64_t i = 0; i < s->dims[0]; i++) shape[i] = -1;
        cort_tinfo_tensor_shape(&ctx->outputs[0], t, shape, (int)s->dims[0]);
    } else cort_tinfo_tensor(&ctx->outputs[0], t);
    return NULL;
}

static cort_status *cos_run(cort_kernel_ctx *ctx) {
    cort_value *sv, *out;
    int64_t shape[CORT_MAX_RANK];
    size_t n;
    CORT_TRY(sh_input(ctx, 0, &sv));
    CORT_TRY(sh_read_ints(ctx->node, 0, sv, shape, CORT_MAX_RANK, &n));
    for (size_t i = 0; i < n; i++)
        if (shape[i] < 0)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' has negative entry %lld at %zu",
                                   sh_in_name(ctx->node, 0), (long long)shape[i], i);
    const cort_value *v = cort_attr_tensor(ctx->node, "value");
    cort_type t = v ? v->type : CORT_TYPE_FLOAT;
    CORT_TRY(cort_kernel_output(ctx, 0, t, shape, n, &out));
    if (v && v->count == 1) sh_fill(out->data, out->count, sh_esize(t), v->data);
    else sh_zero(out);
    return sh_strings_own(out);
}

const cort_op_def sh_op_constant_of_shape = { .name = "ConstantOfShape", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_INT64), .init = cos_init, .infer = cos_infer, .run = cos_run };

/* ---------------- Shape / Size ---------------- */

static void shape_range(const cort_node *node, int64_t r, int64_t *start, int64_t *end) {
    int64_t s = 0, e = r;
    if (node->opset >= 15) {
        s = cort_attr_int(node, "start", 0);
        e = cort_attr_int(node, "end", r);
    }
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    *start = s;
    *end = e > s ? e : s;
}

static cort_status *shape_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    int64_t n = -1;
    if (in && in->rank >= 0) {
        int64_t s, e;
        shape_range(ctx->node, in->rank, &s, &e);
        n = e - s;
    }
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_INT64, &n, 1);
    return NULL;
}

static cort_status *shape_run(cort_kernel_ctx *ctx) {
    cort_value *in, *out;
    int64_t s, e;
    CORT_TRY(sh_input(ctx, 0, &in));
    shape_range(ctx->node, (int64_t)in->rank, &s, &e);
    int64_t n = e - s;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_INT64, &n, 1, &out));
    if (n) memcpy(out->data, in->shape + s, (size_t)n * sizeof(int64_t));
    return NULL;
}

const cort_op_def sh_op_shape = { .name = "Shape", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .infer = shape_infer, .run = shape_run };

static cort_status *size_infer(cort_infer_ctx *ctx) {
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_INT64, NULL, 0);
    return NULL;
}

static cort_status *size_run(cort_kernel_ctx *ctx) {
    cort_value *in, *out;
    CORT_TRY(sh_input(ctx, 0, &in));
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_INT64, NULL, 0, &out));
    *(int64_t *)out->data = (int64_t)in->count;
    return NULL;
}

const cort_op_def sh_op_size = { .name = "Size", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .infer = size_infer, .run = size_run };

/* ---------------- Range ---------------- */

#define RANGE_TYPES (CORT_TBIT(CORT_TYPE_FLOAT) | CORT_TBIT(CORT_TYPE_DOUBLE) | CORT_TBIT(CORT_TYPE_INT16) | \
                     CORT_TBIT(CORT_TYPE_INT32) | CORT_TBIT(CORT_TYPE_INT64) | CORT_TBIT(CORT_TYPE_FLOAT16) |  \
                     CORT_TBIT(CORT_TYPE_BFLOAT16) | CORT_TBIT(CORT_TYPE_INT8) | CORT_TBIT(CORT_TYPE_UINT8) |  \
                     CORT_TBIT(CORT_TYPE_UINT16) | CORT_TBIT(CORT_TYPE_UINT32) | CORT_TBIT(CORT_TYPE_UINT64))

/* Element count of Range; -1 with msg on a zero delta / overflow. */
static int64_t range_count(cort_type t, const cort_value *const v[3], const char **msg) {
    if (cort_type_is_float(t)) {
        double s = cort_load_f64(v[0]->data, t, 0), l = cort_load_f64(v[1]->data, t, 0), d = cort_load_f64(v[2]->data, t, 0);
        if (d == 0) { *msg = "delta is 0"; return -1; }
        double diff = l - s;
        if (t == CORT_TYPE_FLOAT) diff = (double)(float)diff;   /* as computed in the element type */
        double n = ceil(diff / d);
        if (!(n == n)) { *msg = "start, limit or delta is NaN"; return -1; }
        if (n > (double)(1ll << 40)) { *msg = "too many elements"; return -1; }
        return n > 0 ? (int64_t)n : 0;
    }
    int64_t s = cort_load_i64(v[0]->data, t, 0), l = cort_load_i64(v[1]->data, t, 0), d = cort_load_i64(v[2]->data, t, 0);
    if (d == 0) { *msg = "delta is 0"; return -1; }
    int64_t diff;
    if (__builtin_sub_overflow(l, s, &diff)) { *msg = "limit - start overflows"; return -1; }
    if (d > 0) return diff > 0 ? (diff - 1) / d + 1 : 0;
    if (d == INT64_MIN) return diff < 0 ? 1 : 0;
    return diff < 0 ? (-(diff + 1)) / (-d) + 1 : 0;
}

static cort_status *range_infer(cort_infer_ctx *ctx) {
    cort_type t = sh_tin_type(ctx, 0);
    int64_t n = -1;
    const cort_tinfo *a = sh_tin(ctx, 0), *b = sh_tin(ctx, 1), *c = sh_tin(ctx, 2);
    if (a && b && c && a->value && b->value && c->value && a->value->count == 1 && b->value->count == 1 &&
        c->value->count == 1 && a->value->type == t && b->value->type == t && c->value->type == t &&
        (cort_type_is_float(t) || cort_type_is_int(t))) {
        const cort_value *v[3] = { a->value, b->value, c->value };
        const char *msg;
        n = range_count(t, v, &msg);
        if (n < 0) n = -1;
    }
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, &n, 1);
    return NULL;
}

static cort_status *range_run(cort_kernel_ctx *ctx) {
    cort_value *v[3], *out;
    static const char *const names[3] = { "start", "limit", "delta" };
    for (size_t i = 0; i < 3; i++) {
        CORT_TRY(sh_input(ctx, i, &v[i]));
        if (v[i]->count != 1 || v[i]->type != v[0]->type)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %zu '%s' (%s) must be a scalar of type %s, got %s with %zu elements", i,
                                   sh_in_name(ctx->node, i), names[i], cort_type_name(v[0]->type),
                                   cort_type_name(v[i]->type), v[i]->count);
    }
    const cort_type t = v[0]->type;
    if (!cort_type_is_float(t) && !cort_type_is_int(t))
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "type %s is not supported", cort_type_name(t));
    const char *msg = "";
    int64_t n = range_count(t, (const cort_value *const *)v, &msg);
    if (n < 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "%s", msg);
    /* Range-27 computes float16 / bfloat16 ranges in stash_type (float by default, or double) and
     * rounds each value once; earlier versions in double, which rounds each value once too */
    int stash = CORT_TYPE_DOUBLE;
    if (ctx->opset >= 27 && (t == CORT_TYPE_FLOAT16 || t == CORT_TYPE_BFLOAT16)) {
        int64_t st = cort_attr_int(ctx->node, "stash_type", CORT_TYPE_FLOAT);
        if (st != CORT_TYPE_FLOAT && st != CORT_TYPE_DOUBLE)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'stash_type' = %lld, expected %d "
                                   "(float) or %d (double)", (long long)st, CORT_TYPE_FLOAT, CORT_TYPE_DOUBLE);
        stash = (int)st;
    }
    CORT_TRY(cort_kernel_output(ctx, 0, t, &n, 1, &out));
    if (t != CORT_TYPE_FLOAT && cort_type_is_float(t) && stash == CORT_TYPE_FLOAT) {
        const float s = (float)cort_load_f64(v[0]->data, t, 0), d = (float)cort_load_f64(v[2]->data, t, 0);
        for (int64_t i = 0; i < n; i++) cort_store_f64(out->data, t, (size_t)i, (double)(s + (float)i * d));
    } else if (t == CORT_TYPE_FLOAT) {
        float s = *(const float *)v[0]->data, d = *(const float *)v[2]->data, *o = out->data;
        for (int64_t i = 0; i < n; i++) o[i] = s + (float)i * d;
    } else if (cort_type_is_float(t)) {
        double s = cort_load_f64(v[0]->data, t, 0), d = cort_load_f64(v[2]->data, t, 0);
        for (int64_t i = 0; i < n; i++) cort_store_f64(out->data, t, (size_t)i, s + (double)i * d);
    } else {
        int64_t s = cort_load_i64(v[0]->data, t, 0), d = cort_load_i64(v[2]->data, t, 0);
        for (int64_t i = 0; i < n; i++) cort_store_i64(out->data, t, (size_t)i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
    }
    return NULL;
}

const cort_op_def sh_op_range = { .name = "Range", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX,
    .types = RANGE_TYPES, .infer = range_infer, .run = range_run };

/* ---------------- EyeLike ---------------- */

static cort_type eye_type(const cort_node *node, cort_type in) {
    const cort_attr_ir *a = cort_attr_get(node, "dtype");
    return a ? (cort_type)a->i : in;
}

static cort_status *eye_init(const cort_node *node, void **state) {
    *state = NULL;
    const cort_attr_ir *a = cort_attr_get(node, "dtype");
    if (a && (a->i <= 0 || a->i > CORT_TYPE_BFLOAT16 || a->i == CORT_TYPE_STRING))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'dtype' = %lld is not a supported type", (long long)a->i);
    return NULL;
}

static cort_status *eye_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = eye_type(ctx->node, in ? in->elem : CORT_TYPE_UNDEFINED);
    if (in && in->rank == 2) cort_tinfo_tensor_shape(&ctx->outputs[0], t, in->dims, 2);
    else cort_tinfo_tensor(&ctx->outputs[0], t);
    return NULL;
}

static cort_status *eye_run(cort_kernel_ctx *ctx) {
    cort_value *in, *out;
    char b1[256];
    CORT_TRY(sh_input(ctx, 0, &in));
    if (in->rank != 2)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' has shape %s, expected rank 2",
                               sh_in_name(ctx->node, 0), sh_dims_str(in->shape, in->rank, b1, sizeof b1));
    cort_type t = eye_type(ctx->node, in->type);
    if (t == CORT_TYPE_STRING || cort_type_size(t) == 0)
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "output type %s is not supported", cort_type_name(t));
    CORT_TRY(cort_kernel_output(ctx, 0, t, in->shape, 2, &out));
    sh_zero(out);
    unsigned char one[16];
    one_value(t, one);
    const int64_t R = in->shape[0], C = in->shape[1];
    int64_t k = cort_attr_int(ctx->node, "k", 0);
    if (k > C) k = C;            /* beyond the matrix either way: keeps i + k from overflowing */
    if (k < -R) k = -R;
    const size_t es = sh_esize(t);
    for (int64_t i = 0; i < R; i++) {
        int64_t j = i + k;
        if (j >= 0 && j < C) memcpy((char *)out->data + (size_t)(i * C + j) * es, one, es);
    }
    return NULL;
}

const cort_op_def sh_op_eye_like = { .name = "EyeLike", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = eye_init, .infer = eye_infer, .run = eye_run };

/* ---------------- OneHot ---------------- */

static cort_status *onehot_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *ind = sh_tin(ctx, 0);
    cort_type t = sh_tin_type(ctx, 2);
    if (!ind || ind->rank < 0 || ind->rank + 1 > CORT_MAX_RANK) { cort_tinfo_tensor(&ctx->outputs[0], t); return NULL; }
    int64_t r = ind->rank, axis = cort_attr_int(ctx->node, "axis", -1), depth = -1, out[CORT_MAX_RANK];
    if (axis < 0) axis += r + 1;
    if (axis < 0 || axis > r) { cort_tinfo_tensor(&ctx->outputs[0], t); return NULL; }
    if (!sh_tinfo_scalar_i64(sh_tin(ctx, 1), &depth) || depth < 0) depth = -1;
    for (int64_t i = 0, j = 0; i <= r; i++) out[i] = i == axis ? depth : ind->dims[j++];
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, (int)r + 1);
    return NULL;
}

static cort_status *onehot_run(cort_kernel_ctx *ctx) {
    cort_value *ind, *dv, *vals, *out;
    int64_t depth, axis, dims[CORT_MAX_RANK];
    CORT_TRY(sh_input(ctx, 0, &ind));
    CORT_TRY(sh_input(ctx, 1, &dv));
    CORT_TRY(sh_input(ctx, 2, &vals));
    CORT_TRY(sh_read_scalar_i64(ctx->node, 1, dv, &depth));
    if (depth < 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s' (depth) is %lld, must not be negative",
                               sh_in_name(ctx->node, 1), (long long)depth);
    if (vals->count != 2)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 '%s' has %zu elements, expected 2 (off, on)",
                               sh_in_name(ctx->node, 2), vals->count);
    if (!cort_type_is_int(ind->type) && !cort_type_is_float(ind->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' has non-numeric type %s",
                               sh_in_name(ctx->node, 0), cort_type_name(ind->type));
    const int64_t r = (int64_t)ind->rank;
    if (r + 1 > CORT_MAX_RANK)
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "output rank %lld exceeds %d", (long long)(r + 1), CORT_MAX_RANK);
    CORT_TRY(sh_axis(ctx->node, "attribute 'axis'", cort_attr_int(ctx->node, "axis", -1), r + 1, &axis));
    for (int64_t i = 0, j = 0; i <= r; i++) dims[i] = i == axis ? depth : ind->shape[j++];
    CORT_TRY(cort_kernel_output(ctx, 0, vals->type, dims, (size_t)r + 1, &out));
    if (out->count == 0) return NULL;
    const size_t es = sh_esize(vals->type);
    const char *off = vals->data, *on = (const char *)vals->data + es;
    sh_fill(out->data, out->count, es, off);
    const int64_t inner = sh_prod(ind->shape, (size_t)axis, (size_t)r);
    const int is_float = cort_type_is_float(ind->type);
    char *dst = out->data;
    for (size_t i = 0; i < ind->count; i++) {
        int64_t v;
        if (is_float) {
            double d = cort_load_f64(ind->data, ind->type, i);
            if (!(d > -9.2e18 && d < 9.2e18)) continue;
            v = (int64_t)d;
        } else {
            v = cort_load_i64(ind->data, ind->type, i);
        }
        if (v < 0) v += depth;
        if (v < 0 || v >= depth) continue;   /* out of range: all "off" */
        int64_t o = (int64_t)i / inner, in = (int64_t)i % inner;
        memcpy(dst + (size_t)((o * depth + v) * inner + in) * es, on, es);
    }
    return sh_strings_own(out);
}

const cort_op_def sh_op_one_hot = { .name = "OneHot", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = onehot_infer, .run = onehot_run };
