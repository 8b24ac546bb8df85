/* The map operators of ai.onnx.ml: ZipMap (score rows to a sequence of maps, one per row, as
 * classifiers' probability outputs are exported), DictVectorizer (a map, or a sequence of maps,
 * to dense rows over a fixed vocabulary) and CastMap (an int64-keyed map to a tensor). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ml_common.h"
#include "../misc_common.h"

/* ---- ZipMap ---- */
static cort_status *zipmap_init(const cort_node *node, void **state) {
    const int64_t *i;
    const char *const *s;
    size_t ni = cort_attr_ints(node, "classlabels_int64s", &i), ns = cort_attr_strings(node, "classlabels_strings", &s);
    if (!ni == !ns)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "exactly one of 'classlabels_int64s' and 'classlabels_strings' must be set");
    *state = NULL;
    return NULL;
}
static cort_status *zipmap_infer(cort_infer_ctx *ctx) {
    if (!ctx->n_outputs) return NULL;
    cort_tinfo_unknown(&ctx->outputs[0]);
    ctx->outputs[0].kind = CORT_VKIND_SEQUENCE;
    return NULL;
}
static cort_status *zipmap_run(cort_kernel_ctx *ctx) {
    CORT_TRY(mi_want_tensor(ctx, 0, "X"));
    const cort_value *x = ctx->inputs[0];
    const int64_t *li;
    const char *const *ls;
    size_t ni = cort_attr_ints(ctx->node, "classlabels_int64s", &li), ns = cort_attr_strings(ctx->node, "classlabels_strings", &ls);
    size_t nk = ni ? ni : ns, n, c;
    char buf[96];
    if (x->type != CORT_TYPE_FLOAT)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s, expected float", cort_type_name(x->type));
    CORT_TRY(ml_rows(ctx, x, &n, &c));
    if (x->rank > 2 || c != nk)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is float%s, expected [N,%zu] (one column per label)",
                               cort_shape_str(x->shape, x->rank, buf, sizeof buf), nk);
    cort_value *keys = NULL, *seq = NULL;
    int64_t d[1] = { (int64_t)nk };
    cort_status *err = cort_tensor_alloc(ni ? CORT_TYPE_INT64 : CORT_TYPE_STRING, d, 1, &keys);
    if (err) return err;
    if (ni) memcpy(keys->data, li, nk * sizeof *li);
    else for (size_t k = 0; k < nk && !err; k++) err = cort_string_set(keys, k, ls[k], strlen(ls[k]));
    if (!err) err = cort_sequence_new(CORT_TYPE_UNDEFINED, &seq);
    for (size_t r = 0; r < n && !err; r++) {
        /* every map shares the one keys tensor; each owns its row of values */
        cort_value *vals = NULL, *map = NULL;
        if ((err = cort_tensor_alloc(CORT_TYPE_FLOAT, d, 1, &vals))) break;
        memcpy(vals->data, (const float *)x->data + r * c, c * sizeof(float));
        err = cort_map_create(keys, vals, &map);
        cort_value_release(vals);
        if (!err) err = cort_sequence_push(seq, map);
        cort_value_release(map);
    }
    cort_value_release(keys);
    if (err) { cort_value_release(seq); return err; }
    cort_kernel_set_output(ctx, 0, seq);
    return NULL;
}
const cort_op_def ml_op_zipmap = { .name = "ZipMap", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = zipmap_init, .infer = zipmap_infer, .run = zipmap_run };

/* ---- DictVectorizer ---- */
/* The vocabulary is sorted once at init: a lookup is a binary search, so big vocabularies (word
 * counts) cost log V per key. */
static void dv_free(void *p) {
    ml_index *ix = p;
    if (ix) ml_index_free(ix);
    cort_free(ix);
}
static cort_status *dv_init(const cort_node *node, void **state) {
    const int64_t *vi;
    const char *const *vs;
    size_t ni = cort_attr_ints(node, "int64_vocabulary", &vi), ns = cort_attr_strings(node, "string_vocabulary", &vs);
    if (!ni == !ns)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "exactly one of 'int64_vocabulary' and 'string_vocabulary' must be set");
    ml_index *ix = cort_calloc(1, sizeof *ix);
    if (!ix) return cort_error_oom();
    ix->n = ni ? ni : ns;
    if (ni) ix->i = vi; else ix->s = vs;
    cort_status *err = ml_index_build(ix);
    if (err) { cort_free(ix); return err; }
    *state = ix;
    return NULL;
}
static cort_status *dv_infer(cort_infer_ctx *ctx) {
    (void)ctx;   /* the value type is only known from the map at run time */
    return NULL;
}

static cort_status *dv_check_map(cort_kernel_ctx *ctx, const cort_value *m, int str_vocab) {
    if (!m || m->kind != CORT_VKIND_MAP || !m->map_keys || !m->map_values || m->map_values->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is not a map of tensors (or a sequence of maps)");
    const cort_value *k = m->map_keys;
    if ((k->type == CORT_TYPE_STRING) != str_vocab || k->count != m->map_values->count)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has %s keys (%zu) and %zu values; the vocabulary is %s",
                               cort_type_name(k->type), k->count, m->map_values->count, str_vocab ? "strings" : "int64");
    return NULL;
}

static cort_status *dv_run(cort_kernel_ctx *ctx) {
    const ml_index *ix = ctx->state;
    const cort_value *x = ctx->inputs[0];
    int str_vocab = ix->s != NULL;
    size_t v = ix->n;
    int is_seq = x && x->kind == CORT_VKIND_SEQUENCE;
    size_t n = is_seq ? x->n_items : 1;
    const cort_value *first = is_seq ? (n ? x->items[0] : NULL) : x;
    if (first) CORT_TRY(dv_check_map(ctx, first, str_vocab));
    cort_type t = first ? first->map_values->type : CORT_TYPE_FLOAT;
    int64_t d[2] = { (int64_t)n, (int64_t)v };
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, t, d, 2, &y));
    if (t != CORT_TYPE_STRING) memset(y->data, 0, y->bytes);
    for (size_t r = 0; r < n; r++) {
        const cort_value *m = is_seq ? x->items[r] : x;
        CORT_TRY(dv_check_map(ctx, m, str_vocab));
        if (m->map_values->type != t)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' map %zu holds %s values, map 0 %s", r,
                                   cort_type_name(m->map_values->type), cort_type_name(t));
        const cort_value *k = m->map_keys;
        for (size_t e = 0; e < k->count; e++) {
            long col = str_vocab ? ml_index_find_str(ix, cort_string_get(k, e)) : ml_index_find_i64(ix, cort_load_i64(k->data, k->type, e));
            if (col < 0) continue;   /* keys outside the vocabulary are dropped */
            CORT_TRY(mi_copy_elems(y, r * v + (size_t)col, m->map_values, e, 1));
        }
    }
    return NULL;
}
const cort_op_def ml_op_dict_vectorizer = { .name = "DictVectorizer", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .init = dv_init, .free_state = dv_free, .infer = dv_infer, .run = dv_run };

/* ---- CastMap ---- */
enum { CAST_FLOAT, CAST_STRING, CAST_INT64 };
typedef struct castmap_state { int to, sparse; int64_t max_map; } castmap_state;
static cort_status *castmap_init(const cort_node *node, void **state) {
    castmap_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    const char *to = cort_attr_str(node, "cast_to", "TO_FLOAT"), *form = cort_attr_str(node, "map_form", "DENSE");
    st->to = !strcmp(to, "TO_FLOAT") ? CAST_FLOAT : !strcmp(to, "TO_STRING") ? CAST_STRING : !strcmp(to, "TO_INT64") ? CAST_INT64 : -1;
    st->sparse = !strcmp(form, "SPARSE") ? 1 : !strcmp(form, "DENSE") ? 0 : -1;
    st->max_map = cort_attr_int(node, "max_map", 1);
    cort_status *err = NULL;
    if (st->to < 0) err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'cast_to' is '%s', expected TO_FLOAT, TO_STRING or TO_INT64", to);
    else if (st->sparse < 0) err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'map_form' is '%s', expected DENSE or SPARSE", form);
    else if (st->sparse && (st->max_map < 0 || st->max_map > ((int64_t)1 << 40)))
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'max_map' is %lld", (long long)st->max_map);
    if (err) { cort_free(st); return err; }
    *state = st;
    return NULL;
}
static cort_status *castmap_infer(cort_infer_ctx *ctx) {
    const castmap_state *st = ctx->state;
    if (!ctx->n_outputs || !st) return NULL;
    cort_type t = st->to == CAST_FLOAT ? CORT_TYPE_FLOAT : st->to == CAST_STRING ? CORT_TYPE_STRING : CORT_TYPE_INT64;
    int64_t d[2] = { 1, st->sparse ? st->max_map : -1 };
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, d, 2);
    return NULL;
}
/* Stores map value e (float or string) into element o of y, converted to y's type. */
static cort_status *castmap_store(cort_value *y, size_t o, const cort_value *v, size_t e) {
    char buf[64];
    if (v->type == CORT_TYPE_STRING) {
        const char *s = cort_string_get(v, e);
        if (y->type == CORT_TYPE_STRING) return cort_string_set(y, o, s, strlen(s));
        if (y->type == CORT_TYPE_FLOAT) ((float *)y->data)[o] = strtof(s, NULL);
        else ((int64_t *)y->data)[o] = strtoll(s, NULL, 10);
        return NULL;
    }
    double f = cort_load_f64(v->data, v->type, e);
    if (y->type == CORT_TYPE_STRING) {
        /* "%f", the formatting of C++'s std::to_string that ONNX Runtime uses */
        int n = snprintf(buf, sizeof buf, "%f", f);
        return cort_string_set(y, o, buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : strlen(buf));
    }
    if (y->type == CORT_TYPE_FLOAT) ((float *)y->data)[o] = (float)f;
    else ((int64_t *)y->data)[o] = isfinite(f) && fabs(f) < 9.2e18 ? (int64_t)f : 0;
    return NULL;
}
static cort_status *castmap_run(cort_kernel_ctx *ctx) {
    const castmap_state *st = ctx->state;
    const cort_value *m = ctx->inputs[0];
    if (!m || m->kind != CORT_VKIND_MAP || !m->map_keys || !m->map_values || m->map_values->kind != CORT_VKIND_TENSOR ||
        m->map_keys->type != CORT_TYPE_INT64 || m->map_keys->count != m->map_values->count ||
        (m->map_values->type != CORT_TYPE_FLOAT && m->map_values->type != CORT_TYPE_STRING))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is not a map(int64, float) or map(int64, string)");
    const cort_value *k = m->map_keys, *v = m->map_values;
    const int64_t *keys = k->data;
    size_t n = k->count;
    cort_type t = st->to == CAST_FLOAT ? CORT_TYPE_FLOAT : st->to == CAST_STRING ? CORT_TYPE_STRING : CORT_TYPE_INT64;
    int64_t d[2] = { 1, st->sparse ? st->max_map : (int64_t)n };
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, t, d, 2, &y));
    if (t != CORT_TYPE_STRING) memset(y->data, 0, y->bytes);   /* SPARSE: absent keys are 0 ("" for strings) */
    if (st->sparse) {
        for (size_t e = 0; e < n; e++) {
            if (keys[e] < 0 || keys[e] >= st->max_map)
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has key %lld, outside [0, max_map=%lld)",
                                       (long long)keys[e], (long long)st->max_map);
            CORT_TRY(castmap_store(y, (size_t)keys[e], v, e));
        }
        return NULL;
    }
    /* DENSE: values in ascending key order (maps need not arrive sorted) */
    size_t *ord = cort_kernel_scratch(ctx, (n ? n : 1) * sizeof *ord);
    if (!ord) return cort_error_oom();
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && keys[ord[j - 1]] > keys[i]; j--) ord[j] = ord[j - 1];
        ord[j] = i;
    }
    cort_status *err = NULL;
    for (size_t i = 0; i < n && !err; i++) err = castmap_store(y, i, v, ord[i]);
    cort_kernel_scratch_free(ctx, ord);
    return err;
}
const cort_op_def ml_op_cast_map = { .name = "CastMap", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .init = castmap_init, .free_state = cort_free, .infer = castmap_infer, .run = castmap_run };
