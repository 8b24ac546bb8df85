/* Category encoders of ai.onnx.ml: LabelEncoder (v1, v2, v4 with tensor attributes),
 * CategoryMapper, OneHotEncoder. Keys are sorted once at init; lookups are binary searches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ml_common.h"
#include "../misc_common.h"

enum { K_STR, K_INT, K_FLT };

/* A column of keys or values: strings, integers or floats (attribute lists or a tensor attribute;
 * the storage is borrowed from the node's attributes except for the converted arrays). */
typedef struct col {
    int kind;
    cort_type type;           /* element type of the tensor the column is read from or written to */
    size_t n;
    const char *const *s;
    int64_t *i;               /* owned */
    double *f;                /* owned */
} col;

static void col_free(col *c) { cort_free(c->i); cort_free(c->f); }

static int type_kind(cort_type t) {
    return t == CORT_TYPE_STRING ? K_STR : (t == CORT_TYPE_FLOAT || t == CORT_TYPE_DOUBLE) ? K_FLT : K_INT;
}

/* Reads the `prefix`_strings / _int64s / _floats / _tensor attribute into c; returns 0 if none. */
static cort_status *col_read(const cort_node *node, const char *prefix, col *c, int *found) {
    char name[64];
    const char *const *s;
    const int64_t *iv;
    const float *fv;
    size_t n;
    *found = 1;
    memset(c, 0, sizeof *c);
    snprintf(name, sizeof name, "%s_strings", prefix);
    if ((n = cort_attr_strings(node, name, &s))) { c->kind = K_STR; c->type = CORT_TYPE_STRING; c->n = n; c->s = s; return NULL; }
    snprintf(name, sizeof name, "%s_int64s", prefix);
    if ((n = cort_attr_ints(node, name, &iv))) {
        c->kind = K_INT; c->type = CORT_TYPE_INT64; c->n = n;
        if (!(c->i = cort_malloc(n * sizeof *c->i))) return cort_error_oom();
        memcpy(c->i, iv, n * sizeof *iv);
        return NULL;
    }
    snprintf(name, sizeof name, "%s_floats", prefix);
    if ((n = cort_attr_floats(node, name, &fv))) {
        c->kind = K_FLT; c->type = CORT_TYPE_FLOAT; c->n = n;
        if (!(c->f = cort_malloc(n * sizeof *c->f))) return cort_error_oom();
        for (size_t k = 0; k < n; k++) c->f[k] = fv[k];
        return NULL;
    }
    snprintf(name, sizeof name, "%s_tensor", prefix);
    const cort_value *t = cort_attr_tensor(node, name);
    if (t && t->count) {
        c->type = t->type; c->n = t->count; c->kind = type_kind(t->type);
        if (c->kind == K_STR) { c->s = (const char *const *)t->data; return NULL; }
        if (c->kind == K_FLT) {
            if (!(c->f = cort_malloc(t->count * sizeof *c->f))) return cort_error_oom();
            for (size_t k = 0; k < t->count; k++) c->f[k] = cort_load_f64(t->data, t->type, k);
        } else {
            if (!(CORT_TBIT(t->type) & (CORT_TBIT(CORT_TYPE_INT64) | CORT_TBIT(CORT_TYPE_INT32) | CORT_TBIT(CORT_TYPE_INT16))))
                return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute '%s' is a %s tensor, expected string, int64, int32, int16, float or double",
                                       name, cort_type_name(t->type));
            if (!(c->i = cort_malloc(t->count * sizeof *c->i))) return cort_error_oom();
            for (size_t k = 0; k < t->count; k++) c->i[k] = cort_load_i64(t->data, t->type, k);
        }
        return NULL;
    }
    *found = 0;
    return NULL;
}

static const char *col_str(const col *c, size_t k) { return c->s[k] ? c->s[k] : ""; }

/* Total order used for sorting and lookup; NaN equals NaN and sorts last. */
static int cmp_f(double a, double b) {
    if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
    return a < b ? -1 : a > b;
}
static int col_cmp(const col *c, size_t a, size_t b) {
    if (c->kind == K_STR) return strcmp(col_str(c, a), col_str(c, b));
    if (c->kind == K_INT) return c->i[a] < c->i[b] ? -1 : c->i[a] > c->i[b];
    return cmp_f(c->f[a], c->f[b]);
}

typedef struct sorted_keys { col keys; size_t *order; } sorted_keys;

/* insertion-merge sort of indices by key, stable (later duplicates after earlier ones) */
static void sort_idx(const col *c, size_t *idx, size_t *tmp, size_t n) {
    if (n < 2) return;
    size_t h = n / 2;
    sort_idx(c, idx, tmp, h);
    sort_idx(c, idx + h, tmp, n - h);
    size_t a = 0, b = h, o = 0;
    while (a < h && b < n) tmp[o++] = col_cmp(c, idx[b], idx[a]) < 0 ? idx[b++] : idx[a++];
    while (a < h) tmp[o++] = idx[a++];
    while (b < n) tmp[o++] = idx[b++];
    memcpy(idx, tmp, n * sizeof *idx);
}

static cort_status *keys_sort(sorted_keys *k) {
    size_t n = k->keys.n;
    k->order = cort_malloc((n ? n : 1) * sizeof *k->order);
    size_t *tmp = cort_malloc((n ? n : 1) * sizeof *tmp);
    if (!k->order || !tmp) { cort_free(tmp); return cort_error_oom(); }
    for (size_t i = 0; i < n; i++) k->order[i] = i;
    sort_idx(&k->keys, k->order, tmp, n);
    cort_free(tmp);
    return NULL;
}

/* Position (in attribute order) of the last key equal to element i of x, or -1. */
static long keys_find(const sorted_keys *k, const cort_value *x, size_t i) {
    const col *c = &k->keys;
    size_t lo = 0, hi = c->n;
    const char *s = c->kind == K_STR ? cort_string_get(x, i) : NULL;
    int64_t iv = c->kind == K_INT ? cort_load_i64(x->data, x->type, i) : 0;
    double fv = c->kind == K_FLT ? cort_load_f64(x->data, x->type, i) : 0;
    /* upper bound: first sorted key greater than x */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, e = k->order[mid];
        int r = c->kind == K_STR ? strcmp(col_str(c, e), s)
              : c->kind == K_INT ? (c->i[e] < iv ? -1 : c->i[e] > iv)
              : cmp_f(c->f[e], fv);
        if (r <= 0) lo = mid + 1; else hi = mid;
    }
    if (!lo) return -1;
    size_t e = k->order[lo - 1];
    int eq = c->kind == K_STR ? !strcmp(col_str(c, e), s)
           : c->kind == K_INT ? c->i[e] == iv : !cmp_f(c->f[e], fv);
    return eq ? (long)e : -1;
}

/* ---- LabelEncoder ---- */
typedef struct le_state {
    sorted_keys k;
    col v;
    int v1_index;             /* v1 with classes_strings: values are the key positions */
    const char *dflt_s;
    int64_t dflt_i;
    double dflt_f;
} le_state;

static void le_free(void *p) {
    le_state *st = p;
    if (!st) return;
    col_free(&st->k.keys);
    col_free(&st->v);
    cort_free(st->k.order);
    cort_free(st);
}

static cort_status *le_init(const cort_node *node, void **state) {
    le_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = NULL;
    int found = 0;
    if (node->opset < 2) {
        /* v1: classes_strings maps string <-> position; direction follows the input type (run) */
        const char *const *s;
        size_t n = cort_attr_strings(node, "classes_strings", &s);
        st->k.keys.kind = K_STR; st->k.keys.type = CORT_TYPE_STRING; st->k.keys.n = n; st->k.keys.s = s;
        st->v1_index = 1;
        st->dflt_s = cort_attr_str(node, "default_string", "_Unused");
        st->dflt_i = cort_attr_int(node, "default_int64", -1);
        if ((err = keys_sort(&st->k))) goto fail;
        *state = st;
        return NULL;
    }
    if ((err = col_read(node, "keys", &st->k.keys, &found))) goto fail;
    if (!found) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "no keys_* attribute is set"); goto fail; }
    if ((err = col_read(node, "values", &st->v, &found))) goto fail;
    if (!found) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "no values_* attribute is set"); goto fail; }
    if (st->v.n != st->k.keys.n) {
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "%zu keys but %zu values", st->k.keys.n, st->v.n);
        goto fail;
    }
    st->dflt_s = cort_attr_str(node, "default_string", "_Unused");
    st->dflt_i = cort_attr_int(node, "default_int64", -1);
    st->dflt_f = cort_attr_get(node, "default_float") ? cort_attr_float(node, "default_float", 0) : -0.0;
    const cort_value *dt = cort_attr_tensor(node, "default_tensor");
    if (dt && dt->count) {
        if (dt->type != st->v.type) {
            err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'default_tensor' is %s, the values are %s",
                                  cort_type_name(dt->type), cort_type_name(st->v.type));
            goto fail;
        }
        if (st->v.kind == K_STR) st->dflt_s = cort_string_get(dt, 0);
        else if (st->v.kind == K_INT) st->dflt_i = cort_load_i64(dt->data, dt->type, 0);
        else st->dflt_f = cort_load_f64(dt->data, dt->type, 0);
    }
    if ((err = keys_sort(&st->k))) goto fail;
    *state = st;
    return NULL;
fail:
    le_free(st);
    return err;
}

static cort_status *le_infer(cort_infer_ctx *ctx) {
    const le_state *st = ctx->state;
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!ctx->n_outputs || !st) return NULL;
    cort_type out = st->v1_index ? (x && x->elem == CORT_TYPE_STRING ? CORT_TYPE_INT64 : x && x->elem == CORT_TYPE_INT64 ? CORT_TYPE_STRING : CORT_TYPE_UNDEFINED)
                                 : st->v.type;
    if (out == CORT_TYPE_UNDEFINED) return NULL;
    if (x && x->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[0], out, x->dims, x->rank);
    else cort_tinfo_tensor(&ctx->outputs[0], out);
    return NULL;
}

static cort_status *le_run(cort_kernel_ctx *ctx) {
    const le_state *st = ctx->state;
    CORT_TRY(mi_want_tensor(ctx, 0, "X"));
    const cort_value *x = ctx->inputs[0];
    cort_value *y;
    if (st->v1_index) {
        if (x->type == CORT_TYPE_STRING) {
            CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_INT64, x->shape, x->rank, &y));
            for (size_t i = 0; i < x->count; i++) {
                long e = keys_find(&st->k, x, i);
                ((int64_t *)y->data)[i] = e < 0 ? st->dflt_i : e;
            }
            return NULL;
        }
        if (x->type != CORT_TYPE_INT64)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s, expected string or int64", cort_type_name(x->type));
        CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_STRING, x->shape, x->rank, &y));
        for (size_t i = 0; i < x->count; i++) {
            int64_t v = ((const int64_t *)x->data)[i];
            const char *s = v >= 0 && (uint64_t)v < st->k.keys.n ? col_str(&st->k.keys, (size_t)v) : st->dflt_s;
            CORT_TRY(cort_string_set(y, i, s, strlen(s)));
        }
        return NULL;
    }
    int xk = type_kind(x->type);
    if (xk != st->k.keys.kind || (st->k.keys.kind == K_INT && !(CORT_TBIT(x->type) & (CORT_TBIT(CORT_TYPE_INT64) | CORT_TBIT(CORT_TYPE_INT32) | CORT_TBIT(CORT_TYPE_INT16)))))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s but the keys are %s",
                               cort_type_name(x->type), cort_type_name(st->k.keys.type));
    CORT_TRY(cort_kernel_output(ctx, 0, st->v.type, x->shape, x->rank, &y));
    for (size_t i = 0; i < x->count; i++) {
        long e = keys_find(&st->k, x, i);
        if (st->v.kind == K_STR) {
            const char *s = e < 0 ? st->dflt_s : col_str(&st->v, (size_t)e);
            CORT_TRY(cort_string_set(y, i, s, strlen(s)));
        } else if (st->v.kind == K_INT) {
            int64_t v = e < 0 ? st->dflt_i : st->v.i[e];
            if (y->type == CORT_TYPE_INT64) ((int64_t *)y->data)[i] = v;
            else if (y->type == CORT_TYPE_INT32) ((int32_t *)y->data)[i] = (int32_t)v;
            else ((int16_t *)y->data)[i] = (int16_t)v;
        } else {
            cort_store_f64(y->data, y->type, i, e < 0 ? st->dflt_f : st->v.f[e]);
        }
    }
    return NULL;
}
const cort_op_def ml_op_label_encoder = { .name = "LabelEncoder", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .init = le_init, .free_state = le_free, .infer = le_infer, .run = le_run };

/* ---- CategoryMapper ---- */
typedef struct cm_state { sorted_keys ks, ki; const char *dflt_s; int64_t dflt_i; } cm_state;
static void cm_free(void *p) {
    cm_state *st = p;
    if (!st) return;
    col_free(&st->ks.keys); col_free(&st->ki.keys);
    cort_free(st->ks.order); cort_free(st->ki.order);
    cort_free(st);
}
static cort_status *cm_init(const cort_node *node, void **state) {
    cm_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = NULL;
    const char *const *s;
    const int64_t *iv;
    size_t ns = cort_attr_strings(node, "cats_strings", &s), ni = cort_attr_ints(node, "cats_int64s", &iv);
    if (ns != ni) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "%zu cats_strings but %zu cats_int64s", ns, ni); goto fail; }
    st->ks.keys = (col){ .kind = K_STR, .type = CORT_TYPE_STRING, .n = ns, .s = s };
    st->ki.keys = (col){ .kind = K_INT, .type = CORT_TYPE_INT64, .n = ni };
    if (ni && !(st->ki.keys.i = cort_malloc(ni * sizeof(int64_t)))) { err = cort_error_oom(); goto fail; }
    if (ni) memcpy(st->ki.keys.i, iv, ni * sizeof *iv);
    st->dflt_s = cort_attr_str(node, "default_string", "_Unused");
    st->dflt_i = cort_attr_int(node, "default_int64", -1);
    if ((err = keys_sort(&st->ks)) || (err = keys_sort(&st->ki))) goto fail;
    *state = st;
    return NULL;
fail:
    cm_free(st);
    return err;
}
static cort_status *cm_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!ctx->n_outputs || !x || (x->elem != CORT_TYPE_STRING && x->elem != CORT_TYPE_INT64)) return NULL;
    cort_type out = x->elem == CORT_TYPE_STRING ? CORT_TYPE_INT64 : CORT_TYPE_STRING;
    if (x->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[0], out, x->dims, x->rank);
    else cort_tinfo_tensor(&ctx->outputs[0], out);
    return NULL;
}
static cort_status *cm_run(cort_kernel_ctx *ctx) {
    const cm_state *st = ctx->state;
    CORT_TRY(mi_want_tensor(ctx, 0, "X"));
    const cort_value *x = ctx->inputs[0];
    cort_value *y;
    if (x->type == CORT_TYPE_STRING) {
        CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_INT64, x->shape, x->rank, &y));
        for (size_t i = 0; i < x->count; i++) {
            long e = keys_find(&st->ks, x, i);
            ((int64_t *)y->data)[i] = e < 0 ? st->dflt_i : st->ki.keys.i[e];
        }
        return NULL;
    }
    if (x->type != CORT_TYPE_INT64)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s, expected string or int64", cort_type_name(x->type));
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_STRING, x->shape, x->rank, &y));
    for (size_t i = 0; i < x->count; i++) {
        long e = keys_find(&st->ki, x, i);
        const char *s = e < 0 ? st->dflt_s : col_str(&st->ks.keys, (size_t)e);
        CORT_TRY(cort_string_set(y, i, s, strlen(s)));
    }
    return NULL;
}
const cort_op_def ml_op_category_mapper = { .name = "CategoryMapper", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_STRING) | CORT_TBIT(CORT_TYPE_INT64), .init = cm_init, .free_state = cm_free,
    .infer = cm_infer, .run = cm_run };

/* ---- OneHotEncoder ---- */
typedef struct ohe_state { sorted_keys k; int zeros; } ohe_state;
static void ohe_free(void *p) {
    ohe_state *st = p;
    if (!st) return;
    col_free(&st->k.keys);
    cort_free(st->k.order);
    cort_free(st);
}
static cort_status *ohe_init(const cort_node *node, void **state) {
    ohe_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = NULL;
    int found;
    if ((err = col_read(node, "cats", &st->k.keys, &found))) goto fail;
    if (!found || st->k.keys.kind == K_FLT) {
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "one of 'cats_int64s' and 'cats_strings' must be set");
        goto fail;
    }
    st->zeros = cort_attr_int(node, "zeros", 1) != 0;
    if ((err = keys_sort(&st->k))) goto fail;
    *state = st;
    return NULL;
fail:
    ohe_free(st);
    return err;
}
static cort_status *ohe_infer(cort_infer_ctx *ctx) {
    const ohe_state *st = ctx->state;
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!ctx->n_outputs || !st) return NULL;
    if (x && x->rank >= 0 && x->rank < CORT_MAX_RANK) {
        int64_t d[CORT_MAX_RANK];
        memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
        d[x->rank] = (int64_t)st->k.keys.n;
        cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, x->rank + 1);
    } else cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_FLOAT);
    return NULL;
}
static cort_status *ohe_run(cort_kernel_ctx *ctx) {
    const ohe_state *st = ctx->state;
    CORT_TRY(mi_want_tensor(ctx, 0, "X"));
    const cort_value *x = ctx->inputs[0];
    int is_str = x->type == CORT_TYPE_STRING;
    if (is_str != (st->k.keys.kind == K_STR) || x->rank + 1 > CORT_MAX_RANK)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s but the categories are %s",
                               cort_type_name(x->type), is_str ? "integers" : "strings");
    int64_t d[CORT_MAX_RANK];
    memcpy(d, x->shape, x->rank * sizeof *d);
    size_t nc = st->k.keys.n;
    d[x->rank] = (int64_t)nc;
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, d, x->rank + 1, &y));
    float *o = y->data;
    memset(o, 0, y->bytes);
    for (size_t i = 0; i < x->count; i++) {
        long e;
        if (is_str || x->type == CORT_TYPE_INT64) e = keys_find(&st->k, x, i);
        else {
            /* float, double, int32: cast to int64 first, as the spec says */
            double v = cort_load_f64(x->data, x->type, i);
            int64_t iv = isfinite(v) && fabs(v) < 9.2e18 ? (int64_t)v : INT64_MIN;
            cort_value tmp = { .kind = CORT_VKIND_TENSOR, .type = CORT_TYPE_INT64, .count = 1, .data = &iv };
            e = keys_find(&st->k, &tmp, 0);
        }
        if (e < 0) {
            if (!st->zeros)
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' element %zu is not a known category (zeros=0)", i);
            continue;
        }
        o[i * nc + (size_t)e] = 1.0f;
    }
    return NULL;
}
const cort_op_def ml_op_one_hot_encoder = { .name = "OneHotEncoder", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = ML_NUMERIC | CORT_TBIT(CORT_TYPE_STRING), .init = ohe_init, .free_state = ohe_free, .infer = ohe_infer, .run = ohe_run };
