/* com.microsoft.BiasSoftmax(data, bias) axis, is_inner_broadcast: softmax(data + bias) over the
 * axes from `axis` on (flattened, as Softmax before opset 13), the bias broadcast to data's shape
 * numpy-style (an additive attention mask), float32. */
#include <string.h>
#include "contrib.h"
#include "../nn/softmax.h"

static cort_status *bsm_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

static cort_status *bsm_run(cort_kernel_ctx *ctx) {
    const cort_value *x, *b;
    CORT_TRY(ctb_float_input(ctx, 0, "data", 1, &x));
    CORT_TRY(ctb_float_input(ctx, 1, "bias", 0, &b));
    char b1[160], b2[160];
    int ok = b->rank <= x->rank;
    for (size_t i = 0; ok && i < b->rank; i++) {
        int64_t db = b->shape[b->rank - 1 - i], dx = x->shape[x->rank - 1 - i];
        ok = db == 1 || db == dx;
    }
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 'bias' of shape %s does not broadcast to input 0's shape %s",
                               nn_shape(b, b1, sizeof b1), nn_shape(x, b2, sizeof b2));
    int64_t axis = cort_attr_int(ctx->node, "axis", 1), a = axis < 0 ? axis + (int64_t)x->rank : axis;
    if (a < 0 || a >= (int64_t)x->rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' = %lld is out of range for "
                               "input 0 of shape %s", (long long)axis, nn_shape(x, b2, sizeof b2));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    if (!y->count) return NULL;
    int64_t str[CORT_MAX_RANK];
    cort_broadcast_strides(x->shape, x->rank, b->shape, b->rank, str);
    const float *xp = x->data, *bp = b->data;
    float *yp = y->data;
    size_t idx[CORT_MAX_RANK] = { 0 }, off = 0;
    for (size_t i = 0; i < x->count; i++) {
        yp[i] = xp[i] + bp[off];
        for (size_t d = x->rank; d-- > 0;) {   /* odometer over x's index, tracking bias's offset */
            off += (size_t)str[d];
            if (++idx[d] < (size_t)x->shape[d]) break;
            off -= (size_t)str[d] * idx[d];
            idx[d] = 0;
        }
    }
    size_t n = 1;
    for (size_t d = (size_t)a; d < x->rank; d++) n *= (size_t)x->shape[d];
    rd_softmax_f32(RD_SOFTMAX, yp, yp, x->count / n, n, 1, ctx->pool, 1);
    return NULL;
}

const cort_op_def ctb_op_bias_softmax = { .name = "BiasSoftmax", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .infer = bsm_infer, .run = bsm_run };
