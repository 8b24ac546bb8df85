/* QuantizeLinear, DequantizeLinear (per-tensor and per-axis), DynamicQuantizeLinear. */
#include <float.h>
#include <string.h>
#include "quant.h"

/* Per-axis layout of a scale/zero-point pair against x: element i uses entry (i / inner) % n. */
typedef struct q_axis { size_t n, inner; } q_axis;

static cort_status *q_layout(cort_kernel_ctx *ctx, const cort_value *x, const cort_value *scale,
                             const cort_value *zp, q_axis *qa) {
    char bs[160], bx[160];
    qa->n = 1; qa->inner = 1;
    if (zp && zp->count != scale->count)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 2 zero point has shape %s but the scale has shape %s",
                               nn_shape(zp, bx, sizeof bx), nn_shape(scale, bs, sizeof bs));
    if (scale->rank == 0 || (scale->rank == 1 && scale->count == 1 && ctx->opset < 13)) {
        if (scale->count != 1) goto bad;
        return NULL;
    }
    if (ctx->opset < 13 || scale->rank != 1) goto bad;
    int64_t axis = cort_attr_int(ctx->node, "axis", 1);
    if (axis < 0) axis += (int64_t)x->rank;
    if (axis < 0 || axis >= (int64_t)x->rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' = %lld is out of range for "
                               "input 'x' of shape %s", (long long)cort_attr_int(ctx->node, "axis", 1),
                               nn_shape(x, bx, sizeof bx));
    if ((int64_t)scale->count != x->shape[axis]) {
        if (scale->count == 1) return NULL;
        goto bad;
    }
    qa->n = scale->count;
    for (size_t i = (size_t)axis + 1; i < x->rank; i++) qa->inner *= (size_t)x->shape[i];
    return NULL;
bad:
    return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                           "input 1 scale has shape %s, expected a scalar or a 1-D tensor matching the axis of 'x' %s",
                           nn_shape(scale, bs, sizeof bs), nn_shape(x, bx, sizeof bx));
}

static cort_status *quantize_infer(cort_infer_ctx *ctx) {
    cort_type t = nn_infer_has(ctx, 2) && ctx->inputs[2].elem ? ctx->inputs[2].elem : CORT_TYPE_UINT8;
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, ctx->inputs[0].dims, ctx->inputs[0].rank);
    return NULL;
}

static cort_status *quantize_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "x", 0, -1));
    CORT_TRY(nn_check_input(ctx, 1, "y_scale", 0, -1));
    const cort_value *x = ctx->inputs[0], *sc = ctx->inputs[1], *zp = nn_opt_input(ctx, 2);
    cort_type yt = zp ? zp->type : CORT_TYPE_UINT8;
    if (!nn_q_is_8bit(yt))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 2 'y_zero_point' has type %s, expected int8 or uint8", cort_type_name(yt));
    q_axis qa;
    CORT_TRY(q_layout(ctx, x, sc, zp, &qa));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yt, x->shape, x->rank, &y));
    for (size_t i = 0; i < x->count; i++) {
        size_t c = qa.n == 1 ? 0 : (i / qa.inner) % qa.n;
        float v = x->type == CORT_TYPE_FLOAT ? ((const float *)x->data)[i] : (float)cort_load_f64(x->data, x->type, i);
        int32_t q = nn_q_round(v / nn_q_scale(sc, c));
        nn_q_store(y, i, nn_q_add_sat(q, zp ? nn_q_load(zp, c) : 0));
    }
    return NULL;
}

static cort_status *dequantize_infer(cort_infer_ctx *ctx) {
    cort_type t = nn_infer_has(ctx, 1) && ctx->inputs[1].elem ? ctx->inputs[1].elem : CORT_TYPE_FLOAT;
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, ctx->inputs[0].dims, ctx->inputs[0].rank);
    return NULL;
}

static cort_status *dequantize_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "x", 0, -1));
    CORT_TRY(nn_check_input(ctx, 1, "x_scale", 0, -1));
    const cort_value *x = ctx->inputs[0], *sc = ctx->inputs[1], *zp = nn_opt_input(ctx, 2);
    if (!nn_q_is_8bit(x->type) && x->type != CORT_TYPE_INT32)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'x' has type %s, expected int8, uint8 or int32", cort_type_name(x->type));
    q_axis qa;
    CORT_TRY(q_layout(ctx, x, sc, zp, &qa));
    cort_type yt = cort_type_is_float(sc->type) ? sc->type : CORT_TYPE_FLOAT;
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yt, x->shape, x->rank, &y));
    for (size_t i = 0; i < x->count; i++) {
        size_t c = qa.n == 1 ? 0 : (i / qa.inner) % qa.n;
        float v = (float)(nn_q_load(x, i) - (zp ? nn_q_load(zp, c) : 0)) * nn_q_scale(sc, c);
        if (yt == CORT_TYPE_FLOAT) ((float *)y->data)[i] = v;
        else cort_store_f64(y->data, yt, i, v);
    }
    return NULL;
}

static cort_status *dynq_infer(cort_infer_ctx *ctx) {
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_UINT8, ctx->inputs[0].dims, ctx->inputs[0].rank);
    if (ctx->n_outputs > 1) cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_FLOAT, NULL, 0);
    if (ctx->n_outputs > 2) cort_tinfo_tensor_shape(&ctx->outputs[2], CORT_TYPE_UINT8, NULL, 0);
    return NULL;
}

static cort_status *dynq_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "x", 0, -1));
    const cort_value *x = ctx->inputs[0];
    if (x->type != CORT_TYPE_FLOAT)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'x' has type %s, expected float",
                               cort_type_name(x->type));
    const float *xd = x->data;
    float lo = 0.0f, hi = 0.0f;   /* the range always includes 0 */
    for (size_t i = 0; i < x->count; i++) {
        if (xd[i] < lo) lo = xd[i];
        if (xd[i] > hi) hi = xd[i];
    }
    float scale = (hi - lo) / 255.0f;
    int32_t zp = scale > 0.0f ? nn_q_round(-lo / scale) : 0;
    zp = zp < 0 ? 0 : zp > 255 ? 255 : zp;
    cort_value *y, *ys, *yz;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_UINT8, x->shape, x->rank, &y));
    for (size_t i = 0; i < x->count; i++)
        nn_q_store(y, i, scale > 0.0f ? nn_q_add_sat(nn_q_round(xd[i] / scale), zp) : zp);
    if (ctx->n_outputs > 1) {
        CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, NULL, 0, &ys));
        *(float *)ys->data = scale;
    }
    if (ctx->n_outputs > 2) {
        CORT_TRY(cort_kernel_output(ctx, 2, CORT_TYPE_UINT8, NULL, 0, &yz));
        *(uint8_t *)yz->data = (uint8_t)zp;
    }
    return NULL;
}

const cort_op_def nn_op_quantize_linear = {
    .name = "QuantizeLinear", .domain = "", .min_opset = 10, .max_opset = 18, .types = 0, .type_input = 0,
    .infer = quantize_infer, .run = quantize_run };
const cort_op_def nn_op_dequantize_linear = {
    .name = "DequantizeLinear", .domain = "", .min_opset = 10, .max_opset = 18, .types = 0, .type_input = 0,
    .infer = dequantize_infer, .run = dequantize_run };
const cort_op_def nn_op_dynamic_quantize_linear = {
    .name = "DynamicQuantizeLinear", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX, .types = 0,
    .type_input = 0, .infer = dynq_infer, .run = dynq_run };
