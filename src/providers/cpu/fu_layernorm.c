/* cort.LayerNorm: normalization over the last axis, substituted for the decomposed
 * ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul/Add) chain that exporters emit for opsets < 17.
 * Two passes per row (mean, then mean of squared deviations) like the decomposed graph, so the
 * result does not suffer from the cancellation of the one-pass E[x^2] - E[x]^2 form. */
#include <math.h>
#include <string.h>
#include "fu_common.h"
#include "nn_common.h"

#define LN_LANES 16

/* Lane-wise partial sums: the fixed-width inner loops vectorize at -O2 without -ffast-math. */
static float row_sum(const float *restrict x, size_t n) {
    float acc[LN_LANES] = { 0 };
    size_t i = 0;
    for (; i + LN_LANES <= n; i += LN_LANES)
        for (size_t l = 0; l < LN_LANES; l++) acc[l] += x[i + l];
    float s = 0;
    for (; i < n; i++) s += x[i];
    for (size_t l = 0; l < LN_LANES; l++) s += acc[l];
    return s;
}

static float row_sqdev(const float *restrict x, size_t n, float m) {
    float acc[LN_LANES] = { 0 };
    size_t i = 0;
    for (; i + LN_LANES <= n; i += LN_LANES)
        for (size_t l = 0; l < LN_LANES; l++) { float d = x[i + l] - m; acc[l] += d * d; }
    float s = 0;
    for (; i < n; i++) { float d = x[i] - m; s += d * d; }
    for (size_t l = 0; l < LN_LANES; l++) s += acc[l];
    return s;
}

static void row_apply(const float *restrict x, float *restrict y, size_t n, float m, float inv,
                      const float *restrict scale, const float *restrict bias) {
    if (scale && bias) for (size_t i = 0; i < n; i++) y[i] = (x[i] - m) * inv * scale[i] + bias[i];
    else if (scale) for (size_t i = 0; i < n; i++) y[i] = (x[i] - m) * inv * scale[i];
    else if (bias) for (size_t i = 0; i < n; i++) y[i] = (x[i] - m) * inv + bias[i];
    else for (size_t i = 0; i < n; i++) y[i] = (x[i] - m) * inv;
}

typedef struct ln_job {
    const float *x, *scale, *bias;
    float *y;
    size_t c;
    float eps;
} ln_job;

static void ln_task(void *arg, size_t begin, size_t end) {
    const ln_job *j = arg;
    const float rc = 1.0f / (float)j->c;
    for (size_t r = begin; r < end; r++) {
        const float *x = j->x + r * j->c;
        float m = row_sum(x, j->c) * rc;
        float v = row_sqdev(x, j->c, m) * rc;
        row_apply(x, j->y + r * j->c, j->c, m, 1.0f / sqrtf(v + j->eps), j->scale, j->bias);
    }
}

void fu_layernorm_rows(const float *x, float *y, size_t rows, size_t c, const float *scale, const float *bias,
                       float eps, cort_pool *pool) {
    if (!rows || !c) return;
    ln_job j = { x, scale, bias, y, c, eps };
    cort_parallel_for(pool, rows, 16384 / c + 1, ln_task, &j);
}

static cort_status *ln_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

static cort_status *check_param(cort_kernel_ctx *ctx, size_t i, const char *name, size_t c, const float **out) {
    const cort_value *p = nn_opt_input(ctx, i);
    *out = NULL;
    if (!p) return NULL;
    if (p->kind != CORT_VKIND_TENSOR || p->type != CORT_TYPE_FLOAT || p->count != c ||
        (p->rank > 0 && (size_t)p->shape[p->rank - 1] != c))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu '%s' is %s with %zu elements, expected float with last dimension %zu", i,
                               name, cort_type_name(p->type), p->count, c);
    *out = p->data;
    return NULL;
}

static cort_status *ln_run(cort_kernel_ctx *ctx) {
    const cort_value *x = ctx->inputs[0];
    if (!x || x->kind != CORT_VKIND_TENSOR || x->type != CORT_TYPE_FLOAT || x->rank < 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'X' must be a float tensor of rank >= 1, got %s of rank %zu",
                               x ? cort_type_name(x->type) : "nothing", x ? x->rank : 0);
    size_t c = (size_t)x->shape[x->rank - 1];
    const float *scale, *bias;
    CORT_TRY(check_param(ctx, 1, "scale", c, &scale));
    CORT_TRY(check_param(ctx, 2, "bias", c, &bias));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    fu_layernorm_rows(x->data, y->data, c ? x->count / c : 0, c, scale, bias,
                      cort_attr_float(ctx->node, "epsilon", 1e-5f), ctx->pool);
    return NULL;
}

const cort_op_def fu_op_layernorm = { "LayerNorm", "cort", 1, 1 << 30, CORT_TBIT(CORT_TYPE_FLOAT), 0, NULL, NULL,
                                      ln_infer, ln_run };
