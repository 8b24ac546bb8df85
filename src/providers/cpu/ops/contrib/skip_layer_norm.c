/* Layer normalizations over the last axis with a residual added first, as ONNX Runtime's
 * transformer fusions write them, float32:
 *   com.microsoft.SkipLayerNormalization(input, skip, gamma, beta?, bias?) epsilon
 *   com.microsoft.SkipSimplifiedLayerNormalization(input, skip, gamma, bias?) epsilon
 *     t = input + skip + bias (skip: input's shape, or a trailing part of it repeated over the
 *     leading axes); outputs: y, mean, inv_std_var (one per row, shape input[:-1] + [1]) and t
 *   ai.onnx SimplifiedLayerNormalization(X, scale) axis, epsilon: RMS normalization over the axes
 *     from `axis` on (ONNX Runtime registers it in the ai.onnx domain, version 1); outputs Y and
 *     inv_std_var
 * The plain form is y = (t - mean) / sqrt(var + eps) * gamma + beta with the corrected two-pass
 * variance of cort's LayerNorm; the simplified form y = t / sqrt(mean(t^2) + eps) * gamma. */
#include <math.h>
#include <string.h>
#include "contrib.h"
#include "../../kernels/vec.h"

typedef struct sln_job {
    const float *x, *skip, *gamma, *beta, *bias;
    size_t skip_rows;      /* rows of skip, repeated over x's rows */
    float *y, *mean, *inv, *sum;
    size_t c;
    float eps;
    int simplified;
} sln_job;

static void sln_task(void *arg, size_t begin, size_t end) {
    const sln_job *j = arg;
    const fu_vec_kernels *k = fu_vec_best();
    const size_t c = j->c;
    const float rc = 1.0f / (float)c;
    for (size_t r = begin; r < end; r++) {
        const float *x = j->x + r * c;
        float *y = j->y + r * c;
        float *t = j->sum ? j->sum + r * c : y;   /* the sum is formed where it is wanted, else in y */
        if (j->skip) {
            k->add(x, j->skip + (r % j->skip_rows) * c, t, c);
            if (j->bias) k->add(t, j->bias, t, c);
        } else if (t != x) {
            memcpy(t, x, c * sizeof *t);
        }
        float m = 0.0f, inv, d;
        if (j->simplified) {
            float ms = k->sqdev(t, c, 0.0f, &d) * rc;
            inv = 1.0f / sqrtf(ms + j->eps);
        } else {
            m = k->sum(t, c) * rc;
            float v = (k->sqdev(t, c, m, &d) - d * d * rc) * rc;
            m += d * rc;
            inv = 1.0f / sqrtf((v < 0.0f ? 0.0f : v) + j->eps);
        }
        if (j->mean) j->mean[r] = m;
        if (j->inv) j->inv[r] = inv;
        k->norm(t, y, c, m, inv, j->gamma, j->simplified ? NULL : j->beta);
    }
}

static cort_status *sln_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = &ctx->inputs[0];
    cort_infer_same(ctx);
    int64_t dims[CORT_MAX_RANK];
    for (size_t i = 1; i < ctx->n_outputs && i < 3; i++) {
        if (x->rank < 1) { nn_infer_type(ctx, i, CORT_TYPE_FLOAT); continue; }
        for (int d = 0; d < x->rank; d++) dims[d] = d == x->rank - 1 ? 1 : x->dims[d];
        cort_tinfo_tensor_shape(&ctx->outputs[i], CORT_TYPE_FLOAT, dims, x->rank);
    }
    if (ctx->n_outputs > 3) {
        if (x->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[3], CORT_TYPE_FLOAT, x->dims, x->rank);
        else nn_infer_type(ctx, 3, CORT_TYPE_FLOAT);
    }
    return NULL;
}

static int out_wanted(const cort_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_outputs && ctx->node->out_slot[i] >= 0;
}

static cort_status *sln_run_common(cort_kernel_ctx *ctx, int simplified) {
    const cort_value *x, *s;
    CORT_TRY(ctb_float_input(ctx, 0, "input", 1, &x));
    CORT_TRY(ctb_float_input(ctx, 1, "skip", 1, &s));
    const size_t c = (size_t)x->shape[x->rank - 1];
    char b1[160], b2[160];
    /* skip's dims after its leading 1s must be input's trailing dims: (B, S, H), (1, S, H), (S, H) */
    size_t lead = 0;
    while (lead + 1 < s->rank && s->shape[lead] == 1) lead++;
    int trailing = s->rank - lead <= x->rank;
    for (size_t i = 0; trailing && i < s->rank - lead; i++)
        trailing = s->shape[s->rank - 1 - i] == x->shape[x->rank - 1 - i];
    if (!trailing || (s->count == 0 && x->count != 0))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 'skip' has shape %s, expected input 0's shape %s or a trailing part of it",
                               nn_shape(s, b1, sizeof b1), nn_shape(x, b2, sizeof b2));
    const float *gamma, *beta = NULL, *bias;
    if (!nn_opt_input(ctx, 2))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'gamma' is missing");
    CORT_TRY(ctb_row_param(ctx, 2, "gamma", c, &gamma));
    if (!simplified) CORT_TRY(ctb_row_param(ctx, 3, "beta", c, &beta));
    CORT_TRY(ctb_row_param(ctx, simplified ? 3 : 4, "bias", c, &bias));
    cort_value *y, *mo = NULL, *io = NULL, *so = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    int64_t sd[CORT_MAX_RANK];
    for (size_t d = 0; d < x->rank; d++) sd[d] = d == x->rank - 1 ? 1 : x->shape[d];
    if (out_wanted(ctx, 1)) CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, sd, x->rank, &mo));
    if (out_wanted(ctx, 2)) CORT_TRY(cort_kernel_output(ctx, 2, CORT_TYPE_FLOAT, sd, x->rank, &io));
    if (out_wanted(ctx, 3)) CORT_TRY(cort_kernel_output(ctx, 3, CORT_TYPE_FLOAT, x->shape, x->rank, &so));
    if (!c || !x->count) return NULL;
    sln_job j = { x->data, s->data, gamma, beta, bias, s->count / c, y->data, mo ? mo->data : NULL,
                  io ? io->data : NULL, so ? so->data : NULL, c, cort_attr_float(ctx->node, "epsilon", 1e-12f),
                  simplified };
    cort_parallel_for(ctx->pool, x->count / c, 16384 / c + 1, sln_task, &j);
    return NULL;
}

static cort_status *skip_ln_run(cort_kernel_ctx *ctx) { return sln_run_common(ctx, 0); }
static cort_status *skip_sln_run(cort_kernel_ctx *ctx) { return sln_run_common(ctx, 1); }

static cort_status *simplified_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = &ctx->inputs[0];
    cort_infer_same(ctx);
    if (ctx->n_outputs < 2) return NULL;
    if (x->rank < 1) { nn_infer_type(ctx, 1, CORT_TYPE_FLOAT); return NULL; }
    int64_t axis = cort_attr_int(ctx->node, "axis", -1), a = axis < 0 ? axis + x->rank : axis, dims[CORT_MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = d < a ? x->dims[d] : 1;
    cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_FLOAT, dims, x->rank);
    return NULL;
}

static cort_status *simplified_run(cort_kernel_ctx *ctx) {
    const cort_value *x, *sc;
    CORT_TRY(ctb_float_input(ctx, 0, "X", 1, &x));
    CORT_TRY(ctb_float_input(ctx, 1, "scale", 0, &sc));
    const int64_t axis = cort_attr_int(ctx->node, "axis", -1), a = axis < 0 ? axis + (int64_t)x->rank : axis;
    char buf[160];
    if (a < 0 || a >= (int64_t)x->rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' = %lld is out of range for "
                               "input 0 'X' of shape %s", (long long)axis, nn_shape(x, buf, sizeof buf));
    size_t c = 1;
    for (size_t d = (size_t)a; d < x->rank; d++) c *= (size_t)x->shape[d];
    if (sc->count != c)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'scale' has shape %s, expected %zu "
                               "elements (the normalized axes)", nn_shape(sc, buf, sizeof buf), c);
    cort_value *y, *io = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    int64_t sd[CORT_MAX_RANK];
    for (size_t d = 0; d < x->rank; d++) sd[d] = (int64_t)d < a ? x->shape[d] : 1;
    if (out_wanted(ctx, 1)) CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, sd, x->rank, &io));
    if (!c || !x->count) return NULL;
    sln_job j = { x->data, NULL, sc->data, NULL, NULL, 1, y->data, NULL, io ? io->data : NULL, NULL, c,
                  cort_attr_float(ctx->node, "epsilon", 1e-5f), 1 };
    cort_parallel_for(ctx->pool, x->count / c, 16384 / c + 1, sln_task, &j);
    return NULL;
}

const cort_op_def ctb_op_skip_layer_norm = { .name = "SkipLayerNormalization", .domain = "com.microsoft",
    .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .infer = sln_infer,
    .run = skip_ln_run };
const cort_op_def ctb_op_skip_simplified_layer_norm = { .name = "SkipSimplifiedLayerNormalization",
    .domain = "com.microsoft", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT),
    .infer = sln_infer, .run = skip_sln_run };
const cort_op_def ctb_op_simplified_layer_norm = { .name = "SimplifiedLayerNormalization", .domain = "",
    .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .infer = simplified_infer,
    .run = simplified_run };
