/* Concat and Split: block copies along one axis. A split along an axis with only size-1
 * dimensions before it yields contiguous pieces, which are returned as views. */
#include <stdio.h>
#include <string.h>
#include "tensor_common.h"
#include "tensor_ops.h"

/* ---------------- Concat ---------------- */

static int64_t concat_axis_attr(const cort_node *node) { return cort_attr_int(node, "axis", node->opset < 4 ? 1 : 0); }

static cort_status *concat_init(const cort_node *node, void **state) {
    *state = NULL;
    if (node->opset >= 4 && !cort_attr_get(node, "axis"))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'axis' is required");
    if (node->n_inputs == 0) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "needs at least one input");
    return NULL;
}

static cort_status *concat_infer(cort_infer_ctx *ctx) {
    cort_type t = CORT_TYPE_UNDEFINED;
    int rank = -1;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const cort_tinfo *in = sh_tin(ctx, i);
        if (!in) continue;
        if (t == CORT_TYPE_UNDEFINED) t = in->elem;
        if (rank < 0) rank = in->rank;
    }
    cort_tinfo_tensor(&ctx->outputs[0], t);
    if (rank <= 0) return NULL;
    int64_t axis = concat_axis_attr(ctx->node), out[CORT_MAX_RANK];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return NULL;
    for (int d = 0; d < rank; d++) out[d] = -1;
    out[axis] = 0;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const cort_tinfo *in = sh_tin(ctx, i);
        if (!in || in->rank != rank) { out[axis] = -1; continue; }
        for (int d = 0; d < rank; d++) {
            if (d == axis) {
                if (in->dims[d] < 0 || out[axis] < 0) out[axis] = -1;
                else out[axis] = cort_dim_add(out[axis], in->dims[d]);
            } else if (out[d] < 0) {
                out[d] = in->dims[d];
            }
        }
    }
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, rank);
    return NULL;
}

static cort_status *concat_run(cort_kernel_ctx *ctx) {
    cort_value *first, *out;
    char b1[256], b2[256];
    CORT_TRY(sh_input(ctx, 0, &first));
    const size_t r = first->rank;
    if (r == 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' is a scalar; cannot concatenate",
                               sh_in_name(ctx->node, 0));
    int64_t axis;
    CORT_TRY(sh_axis(ctx->node, "attribute 'axis'", concat_axis_attr(ctx->node), (int64_t)r, &axis));
    int64_t out_dims[CORT_MAX_RANK];
    memcpy(out_dims, first->shape, r * sizeof *out_dims);
    out_dims[axis] = 0;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        cort_value *in;
        CORT_TRY(sh_input(ctx, i, &in));
        if (in->type != first->type)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, input 0 has %s", i,
                                   sh_in_name(ctx->node, i), cort_type_name(in->type), cort_type_name(first->type));
        int ok = in->rank == r;
        for (size_t d = 0; ok && d < r; d++) ok = (int64_t)d == axis || in->shape[d] == first->shape[d];
        if (!ok)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %zu '%s' has shape %s, incompatible with input 0 shape %s along axis %lld", i,
                                   sh_in_name(ctx->node, i), sh_dims_str(in->shape, in->rank, b1, sizeof b1),
                                   sh_dims_str(first->shape, r, b2, sizeof b2), (long long)axis);
        out_dims[axis] += in->shape[axis];
    }
    /* planned in place: when every input already sits at its place in the output, nothing to copy */
    if (ctx->node->concat_inplace && ctx->exec) {
        cort_value *base = cort_kernel_planned_output(ctx);
        int in_place = base && base->type == first->type && base->rank == r;
        for (size_t d = 0; in_place && d < r; d++) in_place = base->shape[d] == out_dims[d];
        size_t off = 0;
        for (size_t i = 0; in_place && i < ctx->n_inputs; i++) {
            const cort_value *in = ctx->inputs[i];
            in_place = (const char *)in->data == (const char *)base->data + off;
            off += in->bytes;
        }
        if (in_place) {
            cort_kernel_set_output(ctx, 0, cort_value_retain(base));
            return NULL;
        }
    }
    CORT_TRY(cort_kernel_output(ctx, 0, first->type, out_dims, r, &out));
    const size_t es = sh_esize(first->type);
    int64_t out_strides[CORT_MAX_RANK];
    sh_strides(out_dims, r, out_strides);
    int64_t offset = 0;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const cort_value *in = ctx->inputs[i];
        sh_nd plan = { .rank = (int)r };
        memcpy(plan.dims, in->shape, r * sizeof *plan.dims);
        sh_strides(in->shape, r, plan.ss);
        memcpy(plan.ds, out_strides, r * sizeof *plan.ds);
        sh_nd_copy(ctx->pool, es, (char *)out->data + (size_t)(offset * out_strides[axis]) * es, in->data, &plan);
        offset += in->shape[axis];
    }
    return sh_strings_own(out);
}

const cort_op_def sh_op_concat = { .name = "Concat", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = concat_init, .infer = concat_infer, .run = concat_run };

/* ---------------- Split ---------------- */

static cort_status *split_init(const cort_node *node, void **state) {
    *state = NULL;
    if (node->n_outputs == 0) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "needs at least one output");
    if (node->opset >= 18 && cort_attr_get(node, "num_outputs")) {
        int64_t n = cort_attr_int(node, "num_outputs", 0);
        if (n != (int64_t)node->n_outputs)
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'num_outputs' = %lld but the node has %zu outputs",
                                   (long long)n, node->n_outputs);
    }
    if (node->opset < 13) {
        const int64_t *s;
        size_t n = cort_attr_ints(node, "split", &s);
        if (s && n != node->n_outputs)
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'split' has %zu entries but the node has %zu outputs",
                                   n, node->n_outputs);
    }
    return NULL;
}

/* Sizes of the pieces along an axis of length dim. split (n entries) may be NULL. Returns 0, or -1
 * with a message. */
static int split_sizes(const cort_node *node, int64_t dim, const int64_t *split, size_t n_split, size_t n_out,
                       int64_t *sizes, char *err, size_t errlen) {
    if (split) {
        int64_t sum = 0;
        if (n_split != n_out) {
            snprintf(err, errlen, "'split' has %zu entries but the node has %zu outputs", n_split, n_out);
            return -1;
        }
        for (size_t i = 0; i < n_split; i++) {
            if (split[i] < 0) { snprintf(err, errlen, "split[%zu] = %lld is negative", i, (long long)split[i]); return -1; }
            sizes[i] = split[i];
            if (__builtin_add_overflow(sum, split[i], &sum)) {
                snprintf(err, errlen, "'split' sum overflows");
                return -1;
            }
        }
        if (sum != dim) {
            snprintf(err, errlen, "'split' sums to %lld but the axis has length %lld", (long long)sum, (long long)dim);
            return -1;
        }
        return 0;
    }
    if (node->opset >= 18 && cort_attr_get(node, "num_outputs")) {
        int64_t chunk = (dim + (int64_t)n_out - 1) / (int64_t)n_out, left = dim;
        for (size_t i = 0; i < n_out; i++) {
            sizes[i] = left < chunk ? left : chunk;
            left -= sizes[i];
        }
        if (n_out > 1 && sizes[n_out - 1] <= 0 && dim > 0) {
            snprintf(err, errlen, "axis of length %lld cannot be split into %zu outputs", (long long)dim, n_out);
            return -1;
        }
        return 0;
    }
    if (dim % (int64_t)n_out) {
        snprintf(err, errlen, "axis of length %lld cannot be split evenly into %zu outputs", (long long)dim, n_out);
        return -1;
    }
    for (size_t i = 0; i < n_out; i++) sizes[i] = dim / (int64_t)n_out;
    return 0;
}

static cort_status *split_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    for (size_t i = 0; i < ctx->n_outputs; i++) cort_tinfo_tensor(&ctx->outputs[i], t);
    if (!in || in->rank <= 0) return NULL;
    int64_t axis = cort_attr_int(ctx->node, "axis", 0);
    if (axis < 0) axis += in->rank;
    if (axis < 0 || axis >= in->rank) return NULL;
    int64_t *split = NULL, *sizes = cort_malloc(2 * ctx->n_outputs * sizeof *sizes);
    if (!sizes) return NULL;
    size_t n_split = 0;
    const int64_t *a;
    int known = 1;
    if (ctx->opset < 13 && (n_split = cort_attr_ints(ctx->node, "split", &a)) && a) {
        split = (int64_t *)a;
    } else if (sh_tin(ctx, 1)) {
        split = sizes + ctx->n_outputs;
        known = sh_tinfo_ints(sh_tin(ctx, 1), split, ctx->n_outputs, &n_split);
    }
    char err[128];
    int64_t dims[CORT_MAX_RANK];
    memcpy(dims, in->dims, (size_t)in->rank * sizeof *dims);
    if (known && in->dims[axis] >= 0 &&
        split_sizes(ctx->node, in->dims[axis], split, n_split, ctx->n_outputs, sizes, err, sizeof err) == 0) {
        for (size_t i = 0; i < ctx->n_outputs; i++) {
            dims[axis] = sizes[i];
            cort_tinfo_tensor_shape(&ctx->outputs[i], t, dims, in->rank);
        }
    } else if (known && split) {
        for (size_t i = 0; i < ctx->n_outputs && i < n_split; i++) {
            dims[axis] = split[i];
            cort_tinfo_tensor_shape(&ctx->outputs[i], t, dims, in->rank);
        }
    } else {
        dims[axis] = -1;
        for (size_t i = 0; i < ctx->n_outputs; i++) cort_tinfo_tensor_shape(&ctx->outputs[i], t, dims, in->rank);
    }
    cort_free(sizes);
    return NULL;
}

static cort_status *split_run(cort_kernel_ctx *ctx) {
    cort_value *in, *sv = NULL;
    cort_status *st = NULL;
    char err[256];
    CORT_TRY(sh_input(ctx, 0, &in));
    const size_t r = in->rank, n_out = ctx->n_outputs;
    if (r == 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' is a scalar; cannot split",
                               sh_in_name(ctx->node, 0));
    int64_t axis;
    CORT_TRY(sh_axis(ctx->node, "attribute 'axis'", cort_attr_int(ctx->node, "axis", 0), (int64_t)r, &axis));
    int64_t *sizes = cort_kernel_scratch(ctx, 2 * n_out * sizeof *sizes), *split = NULL;
    if (!sizes) return cort_error_oom();
    size_t n_split = 0;
    const int64_t *a;
    if (ctx->opset < 13 && (n_split = cort_attr_ints(ctx->node, "split", &a)) && a) {
        split = (int64_t *)a;
    } else {
        if ((st = sh_input_opt(ctx, 1, &sv))) goto done;
        if (sv) {
            split = sizes + n_out;
            if ((st = sh_read_ints(ctx->node, 1, sv, split, n_out, &n_split))) goto done;
        }
    }
    if (split_sizes(ctx->node, in->shape[axis], split, n_split, n_out, sizes, err, sizeof err)) {
        st = cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' axis %lld: %s", sh_in_name(ctx->node, 0),
                             (long long)axis, err);
        goto done;
    }
    const size_t es = sh_esize(in->type);
    const int contiguous = sh_prod(in->shape, 0, (size_t)axis) == 1;
    int64_t in_strides[CORT_MAX_RANK], dims[CORT_MAX_RANK];
    sh_strides(in->shape, r, in_strides);
    memcpy(dims, in->shape, r * sizeof *dims);
    int64_t offset = 0;
    for (size_t i = 0; i < n_out; i++) {
        dims[axis] = sizes[i];
        const char *src = (const char *)in->data + (size_t)(offset * in_strides[axis]) * es;
        offset += sizes[i];
        cort_value *out;
        if (contiguous) {
            if ((st = cort_kernel_view(ctx, in->type, dims, r, (void *)src, in, &out))) goto done;
            cort_kernel_set_output(ctx, i, out);
            continue;
        }
        if ((st = cort_kernel_output(ctx, i, in->type, dims, r, &out))) goto done;
        sh_nd plan = { .rank = (int)r };
        memcpy(plan.dims, dims, r * sizeof *dims);
        memcpy(plan.ss, in_strides, r * sizeof *in_strides);
        sh_strides(dims, r, plan.ds);
        sh_nd_copy(ctx->pool, es, out->data, src, &plan);
        if ((st = sh_strings_own(out))) goto done;
    }
done:
    cort_kernel_scratch_free(ctx, sizes);
    return st;
}

const cort_op_def sh_op_split = { .name = "Split", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = split_init, .infer = split_infer, .run = split_run };
