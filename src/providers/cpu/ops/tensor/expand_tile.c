/* Expand and Tile: broadcasting copies. Both become strided plans where repeated dimensions have
 * source stride 0 (see kernels/copy_nd.c). */
#include <stdio.h>
#include <string.h>
#include "tensor_common.h"
#include "tensor_ops.h"

/* ---------------- Expand ---------------- */

/* Bidirectional broadcast of in[r] with shape[n]; -1 (unknown) propagates. Returns the bad output
 * axis or -1 when compatible. */
static int expand_dims(const int64_t *in, size_t r, const int64_t *shape, size_t n, int64_t *out, size_t *out_rank) {
    size_t R = r > n ? r : n;
    for (size_t i = 0; i < R; i++) {
        int64_t a = i + r >= R ? in[i + r - R] : 1, b = i + n >= R ? shape[i + n - R] : 1;
        if (a == b || b == 1) out[i] = a;
        else if (a == 1) out[i] = b;
        else if (a < 0 || b < 0) out[i] = -1;
        else return (int)i;
    }
    *out_rank = R;
    return -1;
}

static cort_status *expand_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0), *sv = sh_tin(ctx, 1);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    int64_t shape[CORT_MAX_RANK], out[CORT_MAX_RANK];
    size_t n, R;
    if (!in || in->rank < 0) return NULL;
    if (sh_tinfo_ints(sv, shape, CORT_MAX_RANK, &n)) {
        for (size_t i = 0; i < n; i++) if (shape[i] < 0) shape[i] = -1;
        if (expand_dims(in->dims, (size_t)in->rank, shape, n, out, &R) < 0)
            cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, (int)R);
    } else if (sv && sv->rank == 1 && sv->dims[0] >= 0 && sv->dims[0] <= CORT_MAX_RANK) {
        R = (size_t)(sv->dims[0] > in->rank ? sv->dims[0] : in->rank);
        for (size_t i = 0; i < R; i++) out[i] = -1;
        cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, (int)R);
    }
    return NULL;
}

static cort_status *expand_run(cort_kernel_ctx *ctx) {
    cort_value *in, *sv, *out;
    int64_t shape[CORT_MAX_RANK], dims[CORT_MAX_RANK], in_strides[CORT_MAX_RANK];
    size_t n, R;
    char b1[256], b2[256];
    CORT_TRY(sh_input(ctx, 0, &in));
    CORT_TRY(sh_input(ctx, 1, &sv));
    CORT_TRY(sh_read_ints(ctx->node, 1, sv, shape, CORT_MAX_RANK, &n));
    for (size_t i = 0; i < n; i++)
        if (shape[i] < 0)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s' has negative entry %lld at %zu",
                                   sh_in_name(ctx->node, 1), (long long)shape[i], i);
    int bad = expand_dims(in->shape, in->rank, shape, n, dims, &R);
    if (bad >= 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 '%s' of shape %s cannot be expanded to input 1 '%s' = %s (axis %d)",
                               sh_in_name(ctx->node, 0), sh_dims_str(in->shape, in->rank, b1, sizeof b1),
                               sh_in_name(ctx->node, 1), sh_dims_str(shape, n, b2, sizeof b2), bad);
    CORT_TRY(cort_kernel_output(ctx, 0, in->type, dims, R, &out));
    sh_strides(in->shape, in->rank, in_strides);
    sh_nd plan = { .rank = (int)R };
    for (size_t i = 0; i < R; i++) {
        size_t j = i + in->rank - R;   /* wraps when the input has no such axis */
        plan.dims[i] = dims[i];
        plan.ss[i] = i + in->rank >= R && in->shape[j] != 1 ? in_strides[j] : 0;
    }
    sh_strides(dims, R, plan.ds);
    sh_nd_copy(ctx->pool, sh_esize(in->type), out->data, in->data, &plan);
    return sh_strings_own(out);
}

const cort_op_def sh_op_expand = { .name = "Expand", .domain = "", .min_opset = 8, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = expand_infer, .run = expand_run };

/* ---------------- Tile ---------------- */

/* Repeats per axis: input 1 (opset >= 6) or the (tiles, axis) scalars of opset 1. */
static cort_status *tile_repeats(cort_kernel_ctx *ctx, size_t r, int64_t *rep) {
    cort_value *v;
    size_t n;
    CORT_TRY(sh_input(ctx, 1, &v));
    if (ctx->opset < 6) {
        cort_value *av;
        int64_t tiles, axis;
        CORT_TRY(sh_read_scalar_i64(ctx->node, 1, v, &tiles));
        CORT_TRY(sh_input(ctx, 2, &av));
        CORT_TRY(sh_read_scalar_i64(ctx->node, 2, av, &axis));
        CORT_TRY(sh_axis(ctx->node, "input 2 'axis'", axis, (int64_t)r, &axis));
        for (size_t d = 0; d < r; d++) rep[d] = 1;
        rep[axis] = tiles;
        n = r;
    } else {
        CORT_TRY(sh_read_ints(ctx->node, 1, v, rep, CORT_MAX_RANK, &n));
    }
    if (n != r)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s' has %zu entries, input 0 '%s' has rank %zu",
                               sh_in_name(ctx->node, 1), n, sh_in_name(ctx->node, 0), r);
    for (size_t d = 0; d < r; d++)
        if (rep[d] < 0)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s' has negative repeat %lld at %zu",
                                   sh_in_name(ctx->node, 1), (long long)rep[d], d);
    return NULL;
}

static cort_status *tile_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    if (!in || in->rank < 0) return NULL;
    int64_t rep[CORT_MAX_RANK], out[CORT_MAX_RANK];
    size_t n;
    int known = ctx->opset >= 6 && sh_tinfo_ints(sh_tin(ctx, 1), rep, CORT_MAX_RANK, &n) && n == (size_t)in->rank;
    for (int d = 0; d < in->rank; d++)
        out[d] = known ? cort_dim_mul(in->dims[d], rep[d]) : -1;
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, in->rank);
    return NULL;
}

static cort_status *tile_run(cort_kernel_ctx *ctx) {
    cort_value *in, *out;
    int64_t rep[CORT_MAX_RANK], dims[CORT_MAX_RANK], in_strides[CORT_MAX_RANK], out_strides[CORT_MAX_RANK];
    CORT_TRY(sh_input(ctx, 0, &in));
    const size_t r = in->rank;
    CORT_TRY(tile_repeats(ctx, r, rep));
    for (size_t d = 0; d < r; d++) {
        if (rep[d] && in->shape[d] > INT64_MAX / rep[d])
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "repeat %lld on axis %zu overflows", (long long)rep[d], d);
        dims[d] = in->shape[d] * rep[d];
    }
    CORT_TRY(cort_kernel_output(ctx, 0, in->type, dims, r, &out));
    sh_strides(in->shape, r, in_strides);
    sh_strides(dims, r, out_strides);
    sh_nd plan = { .rank = (int)(2 * r) };
    for (size_t d = 0; d < r; d++) {
        plan.dims[2 * d] = rep[d];
        plan.ss[2 * d] = 0;
        plan.ds[2 * d] = in->shape[d] * out_strides[d];
        plan.dims[2 * d + 1] = in->shape[d];
        plan.ss[2 * d + 1] = in_strides[d];
        plan.ds[2 * d + 1] = out_strides[d];
    }
    sh_nd_copy(ctx->pool, sh_esize(in->type), out->data, in->data, &plan);
    return sh_strings_own(out);
}

const cort_op_def sh_op_tile = { .name = "Tile", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = tile_infer, .run = tile_run };
