/* Dropout: identity at inference (mask all true); in training mode (opset 12+, training_mode input
 * true, ratio > 0) elements are dropped with a seeded xorshift RNG, scaled by 1/(1-ratio). The RNG
 * cannot match other runtimes bit for bit; only the statistics are meaningful. */
#include <string.h>
#include "nn_common.h"

static cort_status *dropout_infer(cort_infer_ctx *ctx) {
    cort_infer_same(ctx);
    if (ctx->n_outputs > 1) {
        cort_type mt = ctx->opset >= 10 ? CORT_TYPE_BOOL : ctx->inputs[0].elem;
        cort_tinfo_tensor_shape(&ctx->outputs[1], mt, ctx->inputs[0].dims, ctx->inputs[0].rank);
    }
    return NULL;
}

static uint64_t xorshift(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return *s = x;
}

static cort_status *dropout_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "data", 0, -1));
    cort_value *x = ctx->inputs[0];
    float ratio = cort_attr_float(ctx->node, "ratio", 0.5f);
    int training = 0;
    if (ctx->opset >= 12) {
        const cort_value *r = nn_opt_input(ctx, 1), *t = nn_opt_input(ctx, 2);
        if (r) {
            if (r->count != 1 || !cort_type_is_float(r->type))
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'ratio' must be a float scalar");
            ratio = (float)cort_load_f64(r->data, r->type, 0);
        }
        if (t) {
            if (t->count != 1)
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'training_mode' must be a scalar");
            training = cort_load_i64(t->data, t->type, 0) != 0;
        }
    }
    if (training && (ratio < 0.0f || ratio > 1.0f))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "ratio = %g, expected in [0, 1]", (double)ratio);
    const int want_mask = ctx->n_outputs > 1 && ctx->node->out_slot[1] >= 0;
    cort_value *mask = NULL;
    if (want_mask) {
        cort_type mt = ctx->opset >= 10 ? CORT_TYPE_BOOL : x->type;
        CORT_TRY(cort_kernel_output(ctx, 1, mt, x->shape, x->rank, &mask));
        if (mt == CORT_TYPE_BOOL) memset(mask->data, 1, mask->bytes);
        else for (size_t i = 0; i < mask->count; i++) cort_store_f64(mask->data, mt, i, 1.0);
    }
    if (!training || ratio == 0.0f) {
        cort_kernel_set_output(ctx, 0, cort_value_retain(x));
        return NULL;
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    uint64_t s = (uint64_t)cort_attr_int(ctx->node, "seed", 0) * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    const double scale = ratio < 1.0f ? 1.0 / (1.0 - ratio) : 0.0;
    for (size_t i = 0; i < x->count; i++) {
        int keep = (double)(xorshift(&s) >> 11) * (1.0 / 9007199254740992.0) >= ratio;
        cort_store_f64(y->data, y->type, i, keep ? cort_load_f64(x->data, x->type, i) * scale : 0.0);
        if (mask) ((uint8_t *)mask->data)[i] = (uint8_t)keep;
    }
    return NULL;
}

const cort_op_def nn_op_dropout = {
    .name = "Dropout", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = dropout_infer, .run = dropout_run };
