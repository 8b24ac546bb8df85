/* ArgMax / ArgMin along one axis: int64 indices, keepdims, select_last_index (opset 12+).
 * Integers compare exactly (int64, or uint64 for uint64); floats compare as double, NaN is ignored
 * unless every value is NaN (then index 0 / the last index). */
#include <string.h>
#include "../ops_common.h"
#include "reduce_ops.h"

typedef struct arg_job {
    const cort_value *x;
    int64_t *y;
    size_t n, inner;
    int is_max, last;
} arg_job;

static void arg_task(void *arg, size_t begin, size_t end) {
    const arg_job *j = arg;
    cort_type t = j->x->type;
    int ints = cort_type_is_int(t), u64 = t == CORT_TYPE_UINT64;
    for (size_t r = begin; r < end; r++) {
        size_t o = r / j->inner, c = r % j->inner, base = o * j->n * j->inner + c;
        size_t best = 0;
        if (t == CORT_TYPE_FLOAT) {
            const float *x = (const float *)j->x->data + base;
            float b = x[0];
            for (size_t i = 1; i < j->n; i++) {
                float v = x[i * j->inner];
                int better = j->is_max ? (j->last ? v >= b : v > b) : (j->last ? v <= b : v < b);
                if (better || (b != b && v == v)) { b = v; best = i; }
            }
        } else if (ints) {
            int64_t b = cort_load_i64(j->x->data, t, base);
            for (size_t i = 1; i < j->n; i++) {
                int64_t v = cort_load_i64(j->x->data, t, base + i * j->inner);
                int gt = u64 ? (uint64_t)v > (uint64_t)b : v > b, lt = u64 ? (uint64_t)v < (uint64_t)b : v < b;
                int better = j->is_max ? (gt || (j->last && v == b)) : (lt || (j->last && v == b));
                if (better) { b = v; best = i; }
            }
        } else {
            double b = cort_load_f64(j->x->data, t, base);
            for (size_t i = 1; i < j->n; i++) {
                double v = cort_load_f64(j->x->data, t, base + i * j->inner);
                int better = j->is_max ? (j->last ? v >= b : v > b) : (j->last ? v <= b : v < b);
                if (better || (b != b && v == v)) { b = v; best = i; }
            }
        }
        j->y[r] = (int64_t)best;
    }
}

static cort_status *arg_run(cort_kernel_ctx *ctx, int is_max) {
    const cort_value *x = rd_input(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR || !(cort_type_is_float(x->type) || cort_type_is_int(x->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'data' must be a numeric tensor");
    size_t axis;
    CORT_TRY(rd_axis(ctx->node, cort_attr_int(ctx->node, "axis", 0), x->rank, "attribute 'axis'", &axis));
    int keepdims = cort_attr_int(ctx->node, "keepdims", 1) != 0;
    int last = cort_attr_int(ctx->node, "select_last_index", 0) != 0;
    size_t n = (size_t)x->shape[axis];
    int64_t od[CORT_MAX_RANK];
    size_t r = 0;
    for (size_t i = 0; i < x->rank; i++) {
        if (i != axis) od[r++] = x->shape[i];
        else if (keepdims) od[r++] = 1;
    }
    size_t outer = rd_prod(x->shape, 0, axis), inner = rd_prod(x->shape, axis + 1, x->rank);
    if (n == 0 && outer * inner > 0) {
        char sb[128];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'data' has shape %s: cannot take the arg%s of an empty axis %zu",
                               rd_shape_str(x, sb, sizeof sb), is_max ? "max" : "min", axis);
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_INT64, od, r, &y));
    arg_job j = { x, y->data, n, inner, is_max, last };
    cort_parallel_for(ctx->pool, outer * inner, 16384 / (n + 1) + 1, arg_task, &j);
    return NULL;
}

static cort_status *arg_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0);
    cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_INT64);
    if (!x || x->rank < 0) return NULL;
    size_t axis;
    CORT_TRY(rd_axis(ctx->node, cort_attr_int(ctx->node, "axis", 0), (size_t)x->rank, "attribute 'axis'", &axis));
    int keepdims = cort_attr_int(ctx->node, "keepdims", 1) != 0;
    int64_t od[CORT_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if ((size_t)i != axis) od[r++] = x->dims[i];
        else if (keepdims) od[r++] = 1;
    }
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_INT64, od, r);
    return NULL;
}

static cort_status *run_argmax(cort_kernel_ctx *ctx) { return arg_run(ctx, 1); }
static cort_status *run_argmin(cort_kernel_ctx *ctx) { return arg_run(ctx, 0); }

const cort_op_def rd_op_argmax = { .name = "ArgMax", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = arg_infer, .run = run_argmax };
const cort_op_def rd_op_argmin = { .name = "ArgMin", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = arg_infer, .run = run_argmin };
