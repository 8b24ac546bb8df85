/* The elementwise com.microsoft ops of transformer graphs, float32:
 *   Gelu(X)              x * (1 + erf(x / sqrt 2)) / 2 (cort's fused GELU kernel)
 *   BiasGelu(A, B)       Gelu(A + B), B a row over the last axis
 *   FastGelu(X, bias?)   the tanh approximation x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) of X + bias
 *   QuickGelu(X) alpha   x * sigmoid(alpha x), alpha 1.702 by default
 *   BiasAdd(X, bias, skip)  X + bias + skip, bias a row over the last axis, skip X's shape */
#include <math.h>
#include <string.h>
#include "contrib.h"
#include "../../kernels/vec.h"

enum { G_ERF, G_TANH, G_QUICK, G_ADD };

typedef struct gjob {
    int kind;
    const float *x, *bias, *skip;
    float *y;
    size_t c;          /* row length (bias period) */
    float alpha;
} gjob;

static void tanh_gelu(float *y, size_t n) {
    const float k = 0.7978845608028654f, c3 = 0.044715f * 0.7978845608028654f;
    for (size_t i = 0; i < n; i++) {
        const float x = y[i];
        y[i] = 0.5f * x * (1.0f + tanhf(x * (k + c3 * x * x)));
    }
}

static void quick_gelu(float *y, size_t n, float alpha) {
    for (size_t i = 0; i < n; i++) {
        const float v = alpha * y[i];
        /* sigmoid without overflow of exp(-v) for very negative v */
        const float s = v >= 0.0f ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v));
        y[i] *= s;
    }
}

static void g_task(void *arg, size_t begin, size_t end) {
    const gjob *j = arg;
    const fu_vec_kernels *k = fu_vec_best();
    for (size_t r = begin; r < end; r++) {
        const float *x = j->x + r * j->c;
        float *y = j->y + r * j->c;
        if (j->bias) k->add(x, j->bias, y, j->c);
        else if (x != y) memcpy(y, x, j->c * sizeof *y);
        switch (j->kind) {
        case G_ERF: fu_gelu_f32(y, y, j->c); break;
        case G_TANH: tanh_gelu(y, j->c); break;
        case G_QUICK: quick_gelu(y, j->c, j->alpha); break;
        case G_ADD: k->add(y, j->skip + r * j->c, y, j->c); break;
        default: break;
        }
    }
}

static cort_status *g_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

static cort_status *g_run(cort_kernel_ctx *ctx, int kind, size_t bias_input, int bias_required) {
    const cort_value *x;
    CORT_TRY(ctb_float_input(ctx, 0, "X", 0, &x));
    const size_t c = x->rank ? (size_t)x->shape[x->rank - 1] : 1;
    const float *bias = NULL, *skip = NULL;
    if (bias_input) {
        if (bias_required && !nn_opt_input(ctx, bias_input))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu 'bias' is missing", bias_input);
        CORT_TRY(ctb_row_param(ctx, bias_input, "bias", c, &bias));
    }
    if (kind == G_ADD) {
        const cort_value *s = nn_opt_input(ctx, 2);
        int ok = s && s->kind == CORT_VKIND_TENSOR && s->type == CORT_TYPE_FLOAT && s->count == x->count;
        if (!ok) {
            char b1[160], b2[160];
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 2 'skip' is %s%s, expected float of input 0's shape %s",
                                   s ? cort_type_name(s->type) : "missing", s ? nn_shape(s, b1, sizeof b1) : "",
                                   nn_shape(x, b2, sizeof b2));
        }
        skip = s->data;
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    if (!y->count || !c) return NULL;
    gjob j = { kind, x->data, bias, skip, y->data, c, cort_attr_float(ctx->node, "alpha", 1.702f) };
    cort_parallel_for(ctx->pool, x->count / c, 16384 / c + 1, g_task, &j);
    return NULL;
}

static cort_status *gelu_run(cort_kernel_ctx *ctx) { return g_run(ctx, G_ERF, 0, 0); }
static cort_status *bias_gelu_run(cort_kernel_ctx *ctx) { return g_run(ctx, G_ERF, 1, 1); }
static cort_status *fast_gelu_run(cort_kernel_ctx *ctx) { return g_run(ctx, G_TANH, 1, 0); }
static cort_status *quick_gelu_run(cort_kernel_ctx *ctx) { return g_run(ctx, G_QUICK, 0, 0); }
static cort_status *bias_add_run(cort_kernel_ctx *ctx) { return g_run(ctx, G_ADD, 1, 1); }

#define CTB_EW(var, nm, fn) \
    const cort_op_def var = { .name = nm, .domain = "com.microsoft", .min_opset = 1, .max_opset = CORT_OPSET_MAX, \
                              .types = CORT_TBIT(CORT_TYPE_FLOAT), .infer = g_infer, .run = fn }
CTB_EW(ctb_op_gelu, "Gelu", gelu_run);
CTB_EW(ctb_op_bias_gelu, "BiasGelu", bias_gelu_run);
CTB_EW(ctb_op_fast_gelu, "FastGelu", fast_gelu_run);
CTB_EW(ctb_op_quick_gelu, "QuickGelu", quick_gelu_run);
CTB_EW(ctb_op_bias_add, "BiasAdd", bias_add_run);
