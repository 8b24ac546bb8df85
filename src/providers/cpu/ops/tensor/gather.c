/* Gather, GatherElements, GatherND. Every index is checked against its axis before any data is
 * read; the first bad one is reported with its position and value. */
#include <string.h>
#include "tensor_common.h"
#include "tensor_ops.h"
#include "index.h"

/* ---------------- Gather ---------------- */

static cort_status *gather_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *data = sh_tin(ctx, 0), *ind = sh_tin(ctx, 1);
    cort_type t = data ? data->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    if (!data || !ind || data->rank <= 0 || ind->rank < 0 || data->rank - 1 + ind->rank > CORT_MAX_RANK) return NULL;
    int64_t axis = cort_attr_int(ctx->node, "axis", 0), out[CORT_MAX_RANK];
    if (axis < 0) axis += data->rank;
    if (axis < 0 || axis >= data->rank) return NULL;
    int r = 0;
    for (int64_t d = 0; d < axis; d++) out[r++] = data->dims[d];
    for (int d = 0; d < ind->rank; d++) out[r++] = ind->dims[d];
    for (int64_t d = axis + 1; d < data->rank; d++) out[r++] = data->dims[d];
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, r);
    return NULL;
}

typedef struct gather_job {
    const cort_value *ind;
    const char *src;
    char *dst;
    int64_t n, axis_len;
    size_t row_bytes;
} gather_job;

static void gather_rows(void *arg, size_t begin, size_t end) {
    const gather_job *j = arg;
    for (size_t it = begin; it < end; it++) {
        int64_t o = (int64_t)it / j->n, k = (int64_t)it % j->n;
        int64_t i = sh_index_norm(sh_index_load(j->ind, (size_t)k), j->axis_len);
        memcpy(j->dst + it * j->row_bytes, j->src + (size_t)(o * j->axis_len + i) * j->row_bytes, j->row_bytes);
    }
}

static cort_status *gather_run(cort_kernel_ctx *ctx) {
    cort_value *data, *ind, *out;
    char b1[256];
    CORT_TRY(sh_input(ctx, 0, &data));
    CORT_TRY(sh_input(ctx, 1, &ind));
    CORT_TRY(sh_index_check_type(ctx->node, 1, ind));
    const size_t r = data->rank, q = ind->rank;
    if (r == 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' is a scalar; Gather needs rank >= 1",
                               sh_in_name(ctx->node, 0));
    int64_t axis;
    CORT_TRY(sh_axis(ctx->node, "attribute 'axis'", cort_attr_int(ctx->node, "axis", 0), (int64_t)r, &axis));
    if (r - 1 + q > CORT_MAX_RANK)
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "output rank %zu exceeds the maximum %d", r - 1 + q,
                               CORT_MAX_RANK);
    const int64_t D = data->shape[axis];
    CORT_TRY(sh_index_check_all(ctx->node, 1, ind, D, axis, sh_dims_str(data->shape, r, b1, sizeof b1)));
    int64_t dims[CORT_MAX_RANK];
    size_t k = 0;
    for (int64_t d = 0; d < axis; d++) dims[k++] = data->shape[d];
    for (size_t d = 0; d < q; d++) dims[k++] = ind->shape[d];
    for (size_t d = (size_t)axis + 1; d < r; d++) dims[k++] = data->shape[d];
    CORT_TRY(cort_kernel_output(ctx, 0, data->type, dims, k, &out));
    if (out->count == 0) return NULL;
    const size_t es = sh_esize(data->type);
    gather_job j = { ind, data->data, out->data, (int64_t)ind->count, D,
                     (size_t)sh_prod(data->shape, (size_t)axis + 1, r) * es };
    size_t items = (size_t)sh_prod(data->shape, 0, (size_t)axis) * ind->count;
    size_t total = items * j.row_bytes;
    if (total >= (256u << 10) && cort_pool_threads(ctx->pool) > 1) {
        size_t grain = j.row_bytes ? (32u << 10) / j.row_bytes : items;
        cort_parallel_for(ctx->pool, items, grain ? grain : 1, gather_rows, &j);
    } else {
        gather_rows(&j, 0, items);
    }
    return sh_strings_own(out);
}

const cort_op_def sh_op_gather = { .name = "Gather", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = gather_infer, .run = gather_run };

/* ---------------- GatherElements ---------------- */

static cort_status *gather_el_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *data = sh_tin(ctx, 0), *ind = sh_tin(ctx, 1);
    cort_type t = data ? data->elem : CORT_TYPE_UNDEFINED;
    if (ind && ind->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[0], t, ind->dims, ind->rank);
    else cort_tinfo_tensor(&ctx->outputs[0], t);
    return NULL;
}

static cort_status *gather_el_run(cort_kernel_ctx *ctx) {
    cort_value *data, *ind, *out;
    char b1[256], b2[256];
    CORT_TRY(sh_input(ctx, 0, &data));
    CORT_TRY(sh_input(ctx, 1, &ind));
    CORT_TRY(sh_index_check_type(ctx->node, 1, ind));
    const size_t r = data->rank;
    int64_t axis;
    if (r == 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' is a scalar", sh_in_name(ctx->node, 0));
    CORT_TRY(sh_axis(ctx->node, "attribute 'axis'", cort_attr_int(ctx->node, "axis", 0), (int64_t)r, &axis));
    int ok = ind->rank == r;
    for (size_t d = 0; ok && d < r; d++) ok = (int64_t)d == axis || ind->shape[d] <= data->shape[d];
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 '%s' has shape %s, incompatible with input 0 '%s' of shape %s", sh_in_name(ctx->node, 1),
                               sh_dims_str(ind->shape, ind->rank, b1, sizeof b1), sh_in_name(ctx->node, 0),
                               sh_dims_str(data->shape, r, b2, sizeof b2));
    CORT_TRY(sh_index_check_all(ctx->node, 1, ind, data->shape[axis], axis, sh_dims_str(data->shape, r, b1, sizeof b1)));
    CORT_TRY(cort_kernel_output(ctx, 0, data->type, ind->shape, r, &out));
    if (out->count == 0) return NULL;
    int64_t ds[CORT_MAX_RANK], idx[CORT_MAX_RANK] = { 0 };
    sh_strides(data->shape, r, ds);
    const size_t es = sh_esize(data->type);
    const char *src = data->data;
    char *dst = out->data;
    int64_t base = 0;   /* data offset of idx with the axis coordinate left out */
    for (size_t i = 0; i < out->count; i++) {
        int64_t k = sh_index_norm(sh_index_load(ind, i), data->shape[axis]);
        memcpy(dst + i * es, src + (size_t)(base + k * ds[axis]) * es, es);
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

const cort_op_def sh_op_gather_elements = { .name = "GatherElements", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = gather_el_infer, .run = gather_el_run };

/* ---------------- GatherND ---------------- */

static cort_status *gather_nd_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *data = sh_tin(ctx, 0), *ind = sh_tin(ctx, 1);
    cort_type t = data ? data->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    int64_t b = ctx->opset >= 12 ? cort_attr_int(ctx->node, "batch_dims", 0) : 0, out[CORT_MAX_RANK];
    if (!data || !ind || data->rank < 1 || ind->rank < 1) return NULL;
    int64_t k = ind->dims[ind->rank - 1];
    if (k < 0 || b < 0 || b > data->rank || k > data->rank - b) return NULL;   /* b + k may overflow */
    int r = 0;
    for (int d = 0; d < ind->rank - 1; d++) out[r++] = ind->dims[d];
    for (int64_t d = b + k; d < data->rank; d++) {
        if (r >= CORT_MAX_RANK) return NULL;
        out[r++] = data->dims[d];
    }
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, r);
    return NULL;
}

static cort_status *gather_nd_run(cort_kernel_ctx *ctx) {
    cort_value *data, *ind, *out;
    char b1[256], b2[256];
    CORT_TRY(sh_input(ctx, 0, &data));
    CORT_TRY(sh_input(ctx, 1, &ind));
    CORT_TRY(sh_index_check_type(ctx->node, 1, ind));
    const int64_t b = ctx->opset >= 12 ? cort_attr_int(ctx->node, "batch_dims", 0) : 0;
    const int64_t r = (int64_t)data->rank, q = (int64_t)ind->rank;
    if (r < 1 || q < 1 || b < 0 || b >= r || b >= q)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "batch_dims = %lld must be less than the ranks of input 0 '%s' (%lld) and input 1 '%s' (%lld)",
                               (long long)b, sh_in_name(ctx->node, 0), (long long)r, sh_in_name(ctx->node, 1), (long long)q);
    const int64_t k = ind->shape[q - 1];
    int ok = k >= 0 && b + k <= r && (q - 1) + (r - b - k) <= CORT_MAX_RANK;
    for (int64_t d = 0; ok && d < b; d++) ok = ind->shape[d] == data->shape[d];
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 '%s' of shape %s does not fit input 0 '%s' of shape %s with batch_dims %lld",
                               sh_in_name(ctx->node, 1), sh_dims_str(ind->shape, (size_t)q, b1, sizeof b1),
                               sh_in_name(ctx->node, 0), sh_dims_str(data->shape, (size_t)r, b2, sizeof b2), (long long)b);
    int64_t dims[CORT_MAX_RANK], strides[CORT_MAX_RANK];
    size_t nd = 0;
    for (int64_t d = 0; d < q - 1; d++) dims[nd++] = ind->shape[d];
    for (int64_t d = b + k; d < r; d++) dims[nd++] = data->shape[d];
    sh_strides(data->shape, (size_t)r, strides);
    const int64_t B = sh_prod(data->shape, 0, (size_t)b), M = sh_prod(ind->shape, (size_t)b, (size_t)q - 1);
    const int64_t S = sh_prod(data->shape, (size_t)(b + k), (size_t)r), batch_stride = b > 0 ? strides[b - 1] : 0;
    /* validate every coordinate first */
    for (size_t i = 0; i < ind->count; i++) {
        int64_t axis = b + (int64_t)(i % (size_t)k), v = sh_index_load(ind, i), D = data->shape[axis];
        if (v < -D || v >= D)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 1 '%s' has index %lld at position %zu, out of range [%lld, %lld] for axis %lld of input 0 shape %s",
                                   sh_in_name(ctx->node, 1), (long long)v, i, (long long)-D, (long long)(D - 1), (long long)axis,
                                   sh_dims_str(data->shape, (size_t)r, b1, sizeof b1));
    }
    CORT_TRY(cort_kernel_output(ctx, 0, data->type, dims, nd, &out));
    if (out->count == 0) return NULL;
    const size_t es = sh_esize(data->type), row_bytes = (size_t)S * es;
    const char *src = data->data;
    char *dst = out->data;
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t m = 0; m < M; m++) {
            size_t row = (size_t)(bi * M + m);
            int64_t off = bi * batch_stride;
            for (int64_t j = 0; j < k; j++)
                off += sh_index_norm(sh_index_load(ind, row * (size_t)k + (size_t)j), data->shape[b + j]) * strides[b + j];
            memcpy(dst + row * row_bytes, src + (size_t)off * es, row_bytes);
        }
    return sh_strings_own(out);
}

const cort_op_def sh_op_gather_nd = { .name = "GatherND", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = gather_nd_infer, .run = gather_nd_run };
