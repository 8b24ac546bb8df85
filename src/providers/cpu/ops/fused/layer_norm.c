/* cort.LayerNorm(X, scale?, bias?, skip?, skip_bias?): normalization over the last axis of
 * X + skip + skip_bias, substituted for the decomposed ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div
 * (/Mul/Add) chain that exporters emit for opsets < 17 and for the residual/bias Adds before it.
 * Two passes per row (mean, then squared deviations, with the corrected two-pass formula) like the
 * decomposed graph, so the result does not suffer from the cancellation of E[x^2] - E[x]^2. */
#include <math.h>
#include <string.h>
#include "fused.h"
#include "../nn/nn_common.h"
#include "../../kernels/vec.h"

typedef struct ln_job {
    const float *x, *scale, *bias;
    const float *skip, *pre_bias;   /* optional: y = LN(x + skip + pre_bias) */
    float *y;
    size_t c;
    float eps;
} ln_job;

static void ln_task(void *arg, size_t begin, size_t end) {
    const ln_job *j = arg;
    const float rc = 1.0f / (float)j->c;
    const fu_vec_kernels *k = fu_vec_best();
    for (size_t r = begin; r < end; r++) {
        const float *x = j->x + r * j->c;
        if (j->skip) {   /* the sum is formed in y and normalized in place */
            float *t = j->y + r * j->c;
            k->add(x, j->skip + r * j->c, t, j->c);
            if (j->pre_bias) k->add(t, j->pre_bias, t, j->c);
            x = t;
        }
        float m = k->sum(x, j->c) * rc, d;
        /* corrected two-pass: the deviations' sum fixes the rounding of the first mean */
        float v = (k->sqdev(x, j->c, m, &d) - d * d * rc) * rc;
        m += d * rc;
        v = v < 0.0f ? 0.0f : v;
        k->norm(x, j->y + r * j->c, j->c, m, 1.0f / sqrtf(v + j->eps), j->scale, j->bias);
    }
}

void fu_layernorm_rows(const float *x, const float *skip, const float *pre_bias, float *y, size_t rows, size_t c,
                       const float *scale, const float *bias, float eps, cort_pool *pool) {
    if (!rows || !c) return;
    ln_job j = { x, scale, bias, skip, pre_bias, y, c, eps };
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
    const cort_value *x = nn_opt_input(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR || x->type != CORT_TYPE_FLOAT || x->rank < 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'X' must be a float tensor of rank >= 1, got %s of rank %zu",
                               x ? cort_type_name(x->type) : "nothing", x ? x->rank : 0);
    size_t c = (size_t)x->shape[x->rank - 1];
    const float *scale, *bias, *pre_bias;
    CORT_TRY(check_param(ctx, 1, "scale", c, &scale));
    CORT_TRY(check_param(ctx, 2, "bias", c, &bias));
    CORT_TRY(check_param(ctx, 4, "skip_bias", c, &pre_bias));
    const cort_value *skip = nn_opt_input(ctx, 3);
    if (skip) {
        int ok = skip->kind == CORT_VKIND_TENSOR && skip->type == CORT_TYPE_FLOAT && skip->rank == x->rank;
        for (size_t i = 0; ok && i < x->rank; i++) ok = skip->shape[i] == x->shape[i];
        char sx[160], ss[160];
        if (!ok)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 3 'skip' is %s%s, expected float of input 0's shape %s",
                                   cort_type_name(skip->type), nn_shape(skip, ss, sizeof ss), nn_shape(x, sx, sizeof sx));
    } else if (pre_bias) {
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 4 'skip_bias' needs input 3 'skip'");
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    fu_layernorm_rows(x->data, skip ? skip->data : NULL, pre_bias, y->data, c ? x->count / c : 0, c, scale, bias,
                      cort_attr_float(ctx->node, "epsilon", 1e-5f), ctx->pool);
    return NULL;
}

const cort_op_def fu_op_layernorm = { .name = "LayerNorm", .domain = "cort", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .infer = ln_infer, .run = ln_run };
