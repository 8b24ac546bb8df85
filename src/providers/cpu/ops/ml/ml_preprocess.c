/* Element-wise and per-row feature transforms of ai.onnx.ml: Binarizer, Scaler, Normalizer,
 * Imputer, ArrayFeatureExtractor, FeatureVectorizer. */
#include <math.h>
#include <string.h>
#include "ml_common.h"
#include "../ops_common.h"
#include "../misc_common.h"

static cort_status *want_numeric(const cort_kernel_ctx *ctx, const cort_value *x) {
    if (!x || x->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is not a tensor");
    if (!(ML_NUMERIC & CORT_TBIT(x->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s, expected float, double, int64 or int32",
                               cort_type_name(x->type));
    return NULL;
}

/* out0: float tensor of the input's shape */
static cort_status *infer_float_same_shape(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!ctx->n_outputs) return NULL;
    if (x && x->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, x->dims, x->rank);
    else cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_FLOAT);
    return NULL;
}

/* ---- Binarizer ---- */
static cort_status *binarizer_run(cort_kernel_ctx *ctx) {
    const cort_value *x = ctx->inputs[0];
    CORT_TRY(want_numeric(ctx, x));
    double th = cort_attr_float(ctx->node, "threshold", 0.0f);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    for (size_t i = 0; i < x->count; i++) cort_store_f64(y->data, y->type, i, cort_load_f64(x->data, x->type, i) > th ? 1.0 : 0.0);
    return NULL;
}
const cort_op_def ml_op_binarizer = { .name = "Binarizer", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = ML_NUMERIC, .infer = cort_infer_same, .run = binarizer_run };

/* ---- Scaler ---- */
typedef struct scaler_state { double *offset, *scale; size_t n_offset, n_scale; } scaler_state;
static void scaler_free(void *p) {
    scaler_state *st = p;
    if (!st) return;
    cort_free(st->offset);
    cort_free(st->scale);
    cort_free(st);
}
static cort_status *scaler_init(const cort_node *node, void **state) {
    scaler_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = ml_attr_f64(node, "offset", NULL, &st->offset, &st->n_offset);
    if (!err) err = ml_attr_f64(node, "scale", NULL, &st->scale, &st->n_scale);
    if (err) { scaler_free(st); return err; }
    *state = st;
    return NULL;
}
static cort_status *scaler_run(cort_kernel_ctx *ctx) {
    const scaler_state *st = ctx->state;
    const cort_value *x = ctx->inputs[0];
    CORT_TRY(want_numeric(ctx, x));
    size_t n, c;
    CORT_TRY(ml_rows(ctx, x, &n, &c));
    if ((st->n_offset > 1 && st->n_offset != c) || (st->n_scale > 1 && st->n_scale != c))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'X' has %zu features but 'offset' has %zu and 'scale' %zu values (expected 1 or %zu)",
                               c, st->n_offset, st->n_scale, c);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    float *o = y->data;
    for (size_t i = 0; i < x->count; i++) {
        size_t j = c ? i % c : 0;
        double off = st->n_offset ? st->offset[st->n_offset > 1 ? j : 0] : 0.0;
        double sc = st->n_scale ? st->scale[st->n_scale > 1 ? j : 0] : 1.0;
        o[i] = (float)((cort_load_f64(x->data, x->type, i) - off) * sc);
    }
    return NULL;
}
const cort_op_def ml_op_scaler = { .name = "Scaler", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = ML_NUMERIC, .init = scaler_init, .free_state = scaler_free, .infer = infer_float_same_shape, .run = scaler_run };

/* ---- Normalizer ---- */
enum { NORM_MAX, NORM_L1, NORM_L2 };
static cort_status *normalizer_init(const cort_node *node, void **state) {
    const char *s = cort_attr_str(node, "norm", "MAX");
    intptr_t m = !strcmp(s, "MAX") ? NORM_MAX : !strcmp(s, "L1") ? NORM_L1 : !strcmp(s, "L2") ? NORM_L2 : -1;
    if (m < 0) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'norm' is '%s', expected MAX, L1 or L2", s);
    *state = (void *)(m + 1);   /* never NULL, no allocation */
    return NULL;
}
static cort_status *normalizer_run(cort_kernel_ctx *ctx) {
    int mode = (int)((intptr_t)ctx->state - 1);
    const cort_value *x = ctx->inputs[0];
    CORT_TRY(want_numeric(ctx, x));
    size_t n, c;
    CORT_TRY(ml_rows(ctx, x, &n, &c));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    float *o = y->data;
    for (size_t r = 0; r < n; r++) {
        double div = 0;
        for (size_t j = 0; j < c; j++) {
            double v = cort_load_f64(x->data, x->type, r * c + j);
            if (mode == NORM_MAX) { if (fabs(v) > div) div = fabs(v); }
            else if (mode == NORM_L1) div += fabs(v);
            else div += v * v;
        }
        if (mode == NORM_L2) div = sqrt(div);
        if (div == 0) div = 1;   /* spec: a zero divisor leaves the row as it is */
        for (size_t j = 0; j < c; j++) o[r * c + j] = (float)(cort_load_f64(x->data, x->type, r * c + j) / div);
    }
    return NULL;
}
const cort_op_def ml_op_normalizer = { .name = "Normalizer", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = ML_NUMERIC, .init = normalizer_init, .infer = infer_float_same_shape, .run = normalizer_run };

/* ---- Imputer ---- */
typedef struct imputer_state { double *fvals; const int64_t *ivals; size_t n_f, n_i; double rf; int64_t ri; } imputer_state;
static void imputer_free(void *p) {
    imputer_state *st = p;
    if (st) cort_free(st->fvals);
    cort_free(st);
}
static cort_status *imputer_init(const cort_node *node, void **state) {
    imputer_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = ml_attr_f64(node, "imputed_value_floats", NULL, &st->fvals, &st->n_f);
    if (err) { imputer_free(st); return err; }
    st->n_i = cort_attr_ints(node, "imputed_value_int64s", &st->ivals);
    st->rf = cort_attr_float(node, "replaced_value_float", 0.0f);
    st->ri = cort_attr_int(node, "replaced_value_int64", 0);
    if (!st->n_f && !st->n_i) {
        imputer_free(st);
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "neither 'imputed_value_floats' nor 'imputed_value_int64s' is set");
    }
    *state = st;
    return NULL;
}
static cort_status *imputer_run(cort_kernel_ctx *ctx) {
    const imputer_state *st = ctx->state;
    const cort_value *x = ctx->inputs[0];
    CORT_TRY(want_numeric(ctx, x));
    int is_float = x->type == CORT_TYPE_FLOAT || x->type == CORT_TYPE_DOUBLE;
    size_t nv = is_float ? st->n_f : st->n_i;
    if (!nv)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s but only 'imputed_value_%s' is set",
                               cort_type_name(x->type), is_float ? "int64s" : "floats");
    size_t n, c;
    CORT_TRY(ml_rows(ctx, x, &n, &c));
    if (nv != 1 && nv != c)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has %zu features but %zu imputed values are given",
                               c, nv);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    memcpy(y->data, x->data, x->bytes);
    for (size_t i = 0; i < x->count; i++) {
        size_t j = nv == 1 ? 0 : i % c;
        if (is_float) {
            double v = cort_load_f64(x->data, x->type, i);
            if (isnan(st->rf) ? isnan(v) : v == st->rf) cort_store_f64(y->data, y->type, i, st->fvals[j]);
        } else if (x->type == CORT_TYPE_INT64) {
            int64_t *p = (int64_t *)y->data + i;
            if (*p == st->ri) *p = st->ivals[j];
        } else {
            int32_t *p = (int32_t *)y->data + i;
            if (*p == st->ri) *p = (int32_t)st->ivals[j];
        }
    }
    return NULL;
}
const cort_op_def ml_op_imputer = { .name = "Imputer", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = ML_NUMERIC, .init = imputer_init, .free_state = imputer_free, .infer = cort_infer_same, .run = imputer_run };

/* ---- ArrayFeatureExtractor ---- */
static cort_status *afe_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (ctx->n_outputs && x && x->elem != CORT_TYPE_UNDEFINED) cort_tinfo_tensor(&ctx->outputs[0], x->elem);
    return NULL;
}
static cort_status *afe_run(cort_kernel_ctx *ctx) {
    const cort_value *x = ctx->inputs[0], *idx = mi_in(ctx, 1);
    CORT_TRY(mi_want_tensor(ctx, 0, "X"));
    CORT_TRY(mi_want_tensor(ctx, 1, "Y"));
    if (idx->type != CORT_TYPE_INT64)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'Y' is %s, expected int64", cort_type_name(idx->type));
    if (x->rank == 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is a scalar, expected rank >= 1");
    int64_t last = x->shape[x->rank - 1];
    const int64_t *ix = idx->data;
    for (size_t k = 0; k < idx->count; k++)
        if (ix[k] < 0 || ix[k] >= last)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'Y' holds index %lld, out of range [0, %lld)",
                                   (long long)ix[k], (long long)last);
    int64_t dims[CORT_MAX_RANK];
    size_t rank = x->rank;
    if (rank == 1) { dims[0] = 1; dims[1] = (int64_t)idx->count; rank = 2; }
    else { memcpy(dims, x->shape, rank * sizeof *dims); dims[rank - 1] = (int64_t)idx->count; }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, dims, rank, &y));
    size_t rows = last ? x->count / (size_t)last : 0;
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < idx->count; k++)
            CORT_TRY(mi_copy_elems(y, r * idx->count + k, x, r * (size_t)last + (size_t)ix[k], 1));
    return NULL;
}
const cort_op_def ml_op_array_feature_extractor = { .name = "ArrayFeatureExtractor", .domain = ML_DOMAIN, .min_opset = 1,
    .max_opset = ML_OPSET_MAX, .types = ML_NUMERIC | CORT_TBIT(CORT_TYPE_STRING), .infer = afe_infer, .run = afe_run };

/* ---- FeatureVectorizer ---- */
static cort_status *fv_infer(cort_infer_ctx *ctx) {
    if (ctx->n_outputs) cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_FLOAT);
    return NULL;
}
static cort_status *fv_run(cort_kernel_ctx *ctx) {
    const int64_t *dimsattr = NULL;
    size_t nd = cort_attr_ints(ctx->node, "inputdimensions", &dimsattr);
    size_t n_rows = 0, total = 0;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const cort_value *x = ctx->inputs[i];
        if (!x) continue;
        if (x->kind != CORT_VKIND_TENSOR || !(ML_NUMERIC & CORT_TBIT(x->type)) || x->rank == 0)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu is not a numeric tensor of rank >= 1", i);
        size_t r = x->rank == 1 ? 1 : (size_t)x->shape[0];
        if (i == 0 || !n_rows) n_rows = r;
        else if (r != n_rows)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu has %zu rows, input 0 has %zu", i, r, n_rows);
        size_t w = i < nd ? (size_t)(dimsattr[i] > 0 ? dimsattr[i] : 0) : (r ? x->count / r : 0);
        total += w;
    }
    int64_t dims[2] = { (int64_t)n_rows, (int64_t)total };
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, dims, 2, &y));
    float *o = y->data;
    size_t col = 0;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const cort_value *x = ctx->inputs[i];
        if (!x) continue;
        size_t r = x->rank == 1 ? 1 : (size_t)x->shape[0];
        size_t have = r ? x->count / r : 0;
        size_t w = i < nd ? (size_t)(dimsattr[i] > 0 ? dimsattr[i] : 0) : have;
        /* inputdimensions may cut or zero-pad an input's row */
        for (size_t rr = 0; rr < n_rows; rr++)
            for (size_t j = 0; j < w; j++)
                o[rr * total + col + j] = j < have ? (float)cort_load_f64(x->data, x->type, rr * have + j) : 0.0f;
        col += w;
    }
    return NULL;
}
const cort_op_def ml_op_feature_vectorizer = { .name = "FeatureVectorizer", .domain = ML_DOMAIN, .min_opset = 1,
    .max_opset = ML_OPSET_MAX, .types = ML_NUMERIC, .infer = fv_infer, .run = fv_run };
