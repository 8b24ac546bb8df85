/* CumSum along the axis given by input 1, with the exclusive and reverse attributes.
 * float32 accumulates in float (as numpy does), double in double, integers exactly in int64
 * (wrapping like the C types), float16/bfloat16 in float. */
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

typedef struct cs_job {
    const cort_value *x;
    cort_value *y;
    size_t n, inner;
    int exclusive, reverse;
} cs_job;

static void cs_task(void *arg, size_t begin, size_t end) {
    const cs_job *j = arg;
    cort_type t = j->x->type;
    size_t n = j->n, inner = j->inner;
    for (size_t r = begin; r < end; r++) {
        size_t o = r / inner, c = r % inner, base = o * n * inner + c;
        for (size_t s = 0; s < n; s++) {
            /* walk the axis forwards or backwards; `prev` is the position written before this one */
            size_t i = j->reverse ? n - 1 - s : s;
            size_t p = base + i * inner;
            if (t == CORT_TYPE_FLOAT) {
                static const float zero = 0;
                const float *x = j->x->data;
                float *y = j->y->data;
                size_t q = j->reverse ? p + inner : p - inner;
                float prev_sum = s ? y[q] : zero;
                float prev_x = s ? x[q] : zero;
                y[p] = j->exclusive ? prev_sum + prev_x : prev_sum + x[p];
            } else if (t == CORT_TYPE_DOUBLE) {
                const double *x = j->x->data;
                double *y = j->y->data;
                size_t q = j->reverse ? p + inner : p - inner;
                double prev_sum = s ? y[q] : 0, prev_x = s ? x[q] : 0;
                y[p] = j->exclusive ? prev_sum + prev_x : prev_sum + x[p];
            } else if (cort_type_is_int(t)) {
                size_t q = j->reverse ? p + inner : p - inner;
                uint64_t prev_sum = s ? (uint64_t)cort_load_i64(j->y->data, t, q) : 0;
                uint64_t prev_x = s ? (uint64_t)cort_load_i64(j->x->data, t, q) : 0;
                uint64_t v = j->exclusive ? prev_sum + prev_x : prev_sum + (uint64_t)cort_load_i64(j->x->data, t, p);
                cort_store_i64(j->y->data, t, p, (int64_t)v);
            } else {
                size_t q = j->reverse ? p + inner : p - inner;
                float prev_sum = s ? (float)cort_load_f64(j->y->data, t, q) : 0;
                float prev_x = s ? (float)cort_load_f64(j->x->data, t, q) : 0;
                float v = j->exclusive ? prev_sum + prev_x : prev_sum + (float)cort_load_f64(j->x->data, t, p);
                cort_store_f64(j->y->data, t, p, v);
            }
        }
    }
}

static cort_status *cumsum_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0), *at = rd_input(ctx, 1);
    if (!x || x->kind != CORT_VKIND_TENSOR || !(cort_type_is_float(x->type) || cort_type_is_int(x->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'x' must be a numeric tensor");
    if (!at) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'axis' is required");
    int64_t a[1];
    size_t na;
    CORT_TRY(rd_read_ints(ctx->node, at, 1, "axis", a, 1, &na));
    if (na != 1) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'axis' must hold one value, has %zu", na);
    size_t axis;
    CORT_TRY(rd_axis(ctx->node, a[0], x->rank, "input 1 'axis'", &axis));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    size_t n = (size_t)x->shape[axis], inner = rd_prod(x->shape, axis + 1, x->rank);
    size_t rows = rd_prod(x->shape, 0, axis) * inner;
    if (!n || !rows) return NULL;
    /* the running value is read back from y, so float16 sums round at every step like the type does */
    cs_job j = { x, y, n, inner, cort_attr_int(ctx->node, "exclusive", 0) != 0, cort_attr_int(ctx->node, "reverse", 0) != 0 };
    cort_parallel_for(ctx->pool, rows, 16384 / n + 1, cs_task, &j);
    return NULL;
}

const cort_op_def rd_op_cumsum = { .name = "CumSum", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = cort_infer_same, .run = cumsum_run };
