/* Scatter (deprecated), ScatterElements, ScatterND: output = copy of data with updates written
 * (or combined with reduction add/mul/max/min) at the indexed positions. Indices are validated
 * before anything is written. */
#include <string.h>
#include "tensor_common.h"
#include "tensor_ops.h"
#include "index.h"

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };
typedef void (*red_fn)(void *dst, const void *src);

/* Integer arithmetic goes through uint64 so overflow wraps instead of being undefined. */
#define RED_INT(NAME, T)                                                                                      \
    static void NAME##_add(void *d, const void *s) { T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); \
        a = (T)((uint64_t)a + (uint64_t)b); memcpy(d, &a, sizeof a); }                                         \
    static void NAME##_mul(void *d, const void *s) { T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); \
        a = (T)((uint64_t)a * (uint64_t)b); memcpy(d, &a, sizeof a); }                                         \
    static void NAME##_max(void *d, const void *s) { T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); \
        if (b > a) memcpy(d, &b, sizeof b); }                                                                  \
    static void NAME##_min(void *d, const void *s) { T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); \
        if (b < a) memcpy(d, &b, sizeof b); }
#define RED_FLT(NAME, T)                                                                                      \
    static void NAME##_add(void *d, const void *s) { T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); \
        a = a + b; memcpy(d, &a, sizeof a); }                                                                  \
    static void NAME##_mul(void *d, const void *s) { T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); \
        a = a * b; memcpy(d, &a, sizeof a); }                                                                  \
    static void NAME##_max(void *d, const void *s) { T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); \
        if (b > a || b != b) memcpy(d, &b, sizeof b); }                                                        \
    static void NAME##_min(void *d, const void *s) { T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); \
        if (b < a || b != b) memcpy(d, &b, sizeof b); }
#define RED_HALF(NAME, TO, FROM)                                                                              \
    static float NAME##_ld(const void *p) { uint16_t h; memcpy(&h, p, 2); return TO(h); }                      \
    static void NAME##_st(void *p, float f) { uint16_t h = FROM(f); memcpy(p, &h, 2); }                         \
    static void NAME##_add(void *d, const void *s) { NAME##_st(d, NAME##_ld(d) + NAME##_ld(s)); }             \
    static void NAME##_mul(void *d, const void *s) { NAME##_st(d, NAME##_ld(d) * NAME##_ld(s)); }             \
    static void NAME##_max(void *d, const void *s) { float a = NAME##_ld(d), b = NAME##_ld(s);                 \
        if (b > a || b != b) memcpy(d, s, 2); }                                                                \
    static void NAME##_min(void *d, const void *s) { float a = NAME##_ld(d), b = NAME##_ld(s);                 \
        if (b < a || b != b) memcpy(d, s, 2); }

RED_INT(i8, int8_t) RED_INT(i16, int16_t) RED_INT(i32, int32_t) RED_INT(i64, int64_t)
RED_INT(u8, uint8_t) RED_INT(u16, uint16_t) RED_INT(u32, uint32_t) RED_INT(u64, uint64_t)
RED_FLT(f32, float) RED_FLT(f64, double)
RED_HALF(f16, cort_f16_to_f32, cort_f32_to_f16) RED_HALF(bf16, cort_bf16_to_f32, cort_f32_to_bf16)
/* bool: add = or, mul = and, max = or, min = and */
static void b_or(void *d, const void *s) { *(uint8_t *)d = (uint8_t)(*(uint8_t *)d || *(const uint8_t *)s); }
static void b_and(void *d, const void *s) { *(uint8_t *)d = (uint8_t)(*(uint8_t *)d && *(const uint8_t *)s); }

#define RED_ROW(NAME) { NAME##_add, NAME##_mul, NAME##_max, NAME##_min }
static red_fn get_red(cort_type t, int red) {
    static const red_fn tab[][4] = {
        RED_ROW(f32), RED_ROW(u8), RED_ROW(i8), RED_ROW(u16), RED_ROW(i16), RED_ROW(i32), RED_ROW(i64),
        RED_ROW(f16), RED_ROW(f64), RED_ROW(u32), RED_ROW(u64), RED_ROW(bf16), { b_or, b_and, b_or, b_and },
    };
    int row;
    switch (t) {
    case CORT_TYPE_FLOAT: row = 0; break;
    case CORT_TYPE_UINT8: row = 1; break;
    case CORT_TYPE_INT8: row = 2; break;
    case CORT_TYPE_UINT16: row = 3; break;
    case CORT_TYPE_INT16: row = 4; break;
    case CORT_TYPE_INT32: row = 5; break;
    case CORT_TYPE_INT64: row = 6; break;
    case CORT_TYPE_FLOAT16: row = 7; break;
    case CORT_TYPE_DOUBLE: row = 8; break;
    case CORT_TYPE_UINT32: row = 9; break;
    case CORT_TYPE_UINT64: row = 10; break;
    case CORT_TYPE_BFLOAT16: row = 11; break;
    case CORT_TYPE_BOOL: row = 12; break;
    default: return NULL;
    }
    return tab[row][red - RED_ADD];
}

static int parse_reduction(const cort_node *node) {
    if (node->opset < 16 || !strcmp(node->op_type, "Scatter")) return RED_NONE;
    const char *s = cort_attr_str(node, "reduction", "none");
    if (!strcmp(s, "none")) return RED_NONE;
    if (!strcmp(s, "add")) return RED_ADD;
    if (!strcmp(s, "mul")) return RED_MUL;
    if (node->opset >= 18 && !strcmp(s, "max")) return RED_MAX;
    if (node->opset >= 18 && !strcmp(s, "min")) return RED_MIN;
    return -1;
}

static cort_status *scatter_init(const cort_node *node, void **state) {
    *state = NULL;
    if (parse_reduction(node) < 0)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'reduction' = '%s' is not supported in opset %d",
                               cort_attr_str(node, "reduction", ""), node->opset);
    return NULL;
}

/* Output = data; common to all three. Returns the reduction function (NULL for none). */
static cort_status *scatter_prepare(cort_kernel_ctx *ctx, cort_value **data, cort_value **ind, cort_value **upd,
                                    int *red, red_fn *fn) {
    CORT_TRY(sh_input(ctx, 0, data));
    CORT_TRY(sh_input(ctx, 1, ind));
    CORT_TRY(sh_input(ctx, 2, upd));
    CORT_TRY(sh_index_check_type(ctx->node, 1, *ind));
    if ((*upd)->type != (*data)->type)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 '%s' has type %s, input 0 has %s",
                               sh_in_name(ctx->node, 2), cort_type_name((*upd)->type), cort_type_name((*data)->type));
    *red = parse_reduction(ctx->node);
    *fn = NULL;
    if (*red < 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "invalid attribute 'reduction'");
    if (*red != RED_NONE && !(*fn = get_red((*data)->type, *red)))
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "reduction '%s' is not supported for type %s",
                               cort_attr_str(ctx->node, "reduction", ""), cort_type_name((*data)->type));
    return NULL;
}

static cort_status *scatter_el_run(cort_kernel_ctx *ctx) {
    cort_value *data, *ind, *upd, *out;
    int red;
    red_fn fn;
    char b1[256], b2[256], b3[256];
    CORT_TRY(scatter_prepare(ctx, &data, &ind, &upd, &red, &fn));
    const size_t r = data->rank;
    if (r == 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' is a scalar", sh_in_name(ctx->node, 0));
    int64_t axis;
    CORT_TRY(sh_axis(ctx->node, "attribute 'axis'", cort_attr_int(ctx->node, "axis", 0), (int64_t)r, &axis));
    int ok = ind->rank == r && upd->rank == r;
    for (size_t d = 0; ok && d < r; d++)
        ok = upd->shape[d] == ind->shape[d] && ((int64_t)d == axis || ind->shape[d] <= data->shape[d]);
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 '%s' (shape %s) and input 2 '%s' (shape %s) do not fit input 0 of shape %s",
                               sh_in_name(ctx->node, 1), sh_dims_str(ind->shape, ind->rank, b1, sizeof b1),
                               sh_in_name(ctx->node, 2), sh_dims_str(upd->shape, upd->rank, b2, sizeof b2),
                               sh_dims_str(data->shape, r, b3, sizeof b3));
    CORT_TRY(sh_index_check_all(ctx->node, 1, ind, data->shape[axis], axis, sh_dims_str(data->shape, r, b1, sizeof b1)));
    CORT_TRY(cort_kernel_output(ctx, 0, data->type, data->shape, r, &out));
    const size_t es = sh_esize(data->type);
    if (data->bytes) memcpy(out->data, data->data, data->bytes);
    int64_t ds[CORT_MAX_RANK], idx[CORT_MAX_RANK] = { 0 }, base = 0;
    sh_strides(data->shape, r, ds);
    char *dst = out->data;
    const char *src = upd->data;
    for (size_t i = 0; i < upd->count; i++) {
        int64_t k = sh_index_norm(sh_index_load(ind, i), data->shape[axis]);
        char *p = dst + (size_t)(base + k * ds[axis]) * es;
        if (fn) fn(p, src + i * es);
        else memcpy(p, src + i * es, es);
        for (size_t d = r; d-- > 0;) {
            idx[d]++;
            if ((int64_t)d != axis) base += ds[d];
            if (idx[d] < ind->shape[d]) break;
            if ((int64_t)d != axis) base -= ds[d] * idx[d];
            idx[d] = 0;
        }
    }
    return sh_strings_own(out);
}

static cort_status *infer_data(cort_infer_ctx *ctx) {
    const cort_tinfo *data = sh_tin(ctx, 0);
    if (!data) { cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_UNDEFINED); return NULL; }
    if (data->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[0], data->elem, data->dims, data->rank);
    else cort_tinfo_tensor(&ctx->outputs[0], data->elem);
    return NULL;
}

const cort_op_def sh_op_scatter = { .name = "Scatter", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = scatter_init, .infer = infer_data, .run = scatter_el_run };
const cort_op_def sh_op_scatter_elements = { .name = "ScatterElements", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = scatter_init, .infer = infer_data, .run = scatter_el_run };

static cort_status *scatter_nd_run(cort_kernel_ctx *ctx) {
    cort_value *data, *ind, *upd, *out;
    int red;
    red_fn fn;
    char b1[256], b2[256], b3[256];
    CORT_TRY(scatter_prepare(ctx, &data, &ind, &upd, &red, &fn));
    const size_t r = data->rank, q = ind->rank;
    if (q < 1 || r < 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 0 '%s' and 1 '%s' need rank >= 1",
                               sh_in_name(ctx->node, 0), sh_in_name(ctx->node, 1));
    const int64_t k = ind->shape[q - 1];
    /* updates shape = indices.shape[:-1] + data.shape[k:] */
    int ok = k >= 0 && k <= (int64_t)r && upd->rank == q - 1 + r - (size_t)k;
    for (size_t d = 0; ok && d + 1 < q; d++) ok = upd->shape[d] == ind->shape[d];
    for (size_t d = (size_t)k; ok && d < r; d++) ok = upd->shape[q - 1 + d - (size_t)k] == data->shape[d];
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 2 '%s' has shape %s, which does not fit indices shape %s and data shape %s",
                               sh_in_name(ctx->node, 2), sh_dims_str(upd->shape, upd->rank, b1, sizeof b1),
                               sh_dims_str(ind->shape, q, b2, sizeof b2), sh_dims_str(data->shape, r, b3, sizeof b3));
    for (size_t i = 0; i < ind->count; i++) {
        int64_t axis = (int64_t)(i % (size_t)k), v = sh_index_load(ind, i), D = data->shape[axis];
        if (v < -D || v >= D)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 1 '%s' has index %lld at position %zu, out of range [%lld, %lld] for axis %lld of data shape %s",
                                   sh_in_name(ctx->node, 1), (long long)v, i, (long long)-D, (long long)(D - 1),
                                   (long long)axis, sh_dims_str(data->shape, r, b1, sizeof b1));
    }
    CORT_TRY(cort_kernel_output(ctx, 0, data->type, data->shape, r, &out));
    const size_t es = sh_esize(data->type);
    if (data->bytes) memcpy(out->data, data->data, data->bytes);
    int64_t strides[CORT_MAX_RANK];
    sh_strides(data->shape, r, strides);
    const size_t S = (size_t)sh_prod(data->shape, (size_t)k, r), M = (size_t)sh_prod(ind->shape, 0, q - 1);
    char *dst = out->data;
    const char *src = upd->data;
    for (size_t m = 0; m < M; m++) {
        int64_t off = 0;
        for (int64_t j = 0; j < k; j++)
            off += sh_index_norm(sh_index_load(ind, m * (size_t)k + (size_t)j), data->shape[j]) * strides[j];
        char *p = dst + (size_t)off * es;
        const char *s = src + m * S * es;
        if (!fn) { memcpy(p, s, S * es); continue; }
        for (size_t e = 0; e < S; e++) fn(p + e * es, s + e * es);
    }
    return sh_strings_own(out);
}

const cort_op_def sh_op_scatter_nd = { .name = "ScatterND", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = scatter_init, .infer = infer_data, .run = scatter_nd_run };
