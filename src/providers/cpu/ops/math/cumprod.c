/* CumProd (opset 26) along the axis given by input 1, with the exclusive and reverse attributes.
 * float32 multiplies in float (as numpy does), double in double, integers in uint64 (wrapping like
 * the C types, then truncated to the element type), float16/bfloat16 in float, rounding to the
 * type at every step because the running product is read back from y. */
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

typedef struct cp_job {
    const cort_value *x;
    cort_value *y;
    size_t n, inner;
    int exclusive, reverse;
} cp_job;

static void cp_task(void *arg, size_t begin, size_t end) {
    const cp_job *j = arg;
    cort_type t = j->x->type;
    size_t n = j->n, inner = j->inner;
    for (size_t r = begin; r < end; r++) {
        size_t o = r / inner, c = r % inner, base = o * n * inner + c;
        for (size_t s = 0; s < n; s++) {
            /* walk the axis forwards or backwards; q is the position written just before p */
            size_t i = j->reverse ? n - 1 - s : s;
            size_t p = base + i * inner;
            size_t q = j->reverse ? p + inner : p - inner;
            if (t == CORT_TYPE_FLOAT) {
                const float *x = j->x->data;
                float *y = j->y->data;
                float prev = s ? y[q] : 1.0f;
                y[p] = j->exclusive ? (s ? prev * x[q] : 1.0f) : prev * x[p];
            } else if (t == CORT_TYPE_DOUBLE) {
                const double *x = j->x->data;
                double *y = j->y->data;
                double prev = s ? y[q] : 1.0;
                y[p] = j->exclusive ? (s ? prev * x[q] : 1.0) : prev * x[p];
            } else if (cort_type_is_int(t)) {
                /* unsigned arithmetic: overflow wraps instead of being undefined */
                uint64_t prev = s ? (uint64_t)cort_load_i64(j->y->data, t, q) : 1;
                uint64_t v = j->exclusive ? (s ? prev * (uint64_t)cort_load_i64(j->x->data, t, q) : 1)
                                          : prev * (uint64_t)cort_load_i64(j->x->data, t, p);
                cort_store_i64(j->y->data, t, p, (int64_t)v);
            } else {
                float prev = s ? (float)cort_load_f64(j->y->data, t, q) : 1.0f;
                float v = j->exclusive ? (s ? prev * (float)cort_load_f64(j->x->data, t, q) : 1.0f)
                                       : prev * (float)cort_load_f64(j->x->data, t, p);
                cort_store_f64(j->y->data, t, p, v);
            }
        }
    }
}

static cort_status *cumprod_run(cort_kernel_ctx *ctx) {
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
    cp_job j = { x, y, n, inner, cort_attr_int(ctx->node, "exclusive", 0) != 0, cort_attr_int(ctx->node, "reverse", 0) != 0 };
    cort_parallel_for(ctx->pool, rows, 16384 / n + 1, cp_task, &j);
    return NULL;
}

const cort_op_def math_op_cumprod = { .name = "CumProd", .domain = "", .min_opset = 26, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = cort_infer_same, .run = cumprod_run };
