/* com.microsoft.NhwcMaxPool(x) kernel_shape, pads, strides, dilations, auto_pad, ceil_mode: MaxPool
 * of a channels-last (N, spatial..., C) int8 / uint8 tensor, what ONNX Runtime's NHWC transformer
 * writes between quantized convolutions. The input is moved to channels-first, cort's MaxPool
 * runs on it and the result moves back (a max is exact in any layout). */
#include <string.h>
#include "contrib.h"
#include "../quant/quant.h"

extern const cort_op_def nn_op_max_pool;

static cort_status *plain_fill(const cort_node *node, ctb_delegate *d) { (void)node; d->opset = 12; return NULL; }
static cort_status *nmp_init(const cort_node *node, void **state) {
    return ctb_delegate_init(node, &nn_op_max_pool, plain_fill, state);
}

static cort_status *nmp_infer(cort_infer_ctx *ctx) {
    if (ctx->inputs[0].elem) nn_infer_type(ctx, 0, ctx->inputs[0].elem);
    return NULL;
}

/* channels-last <-> channels-first of a byte tensor with d (the source's dims) */
static void move_channels(const uint8_t *src, uint8_t *dst, const int64_t *d, size_t rank, int to_first) {
    const size_t N = (size_t)d[0], C = to_first ? (size_t)d[rank - 1] : (size_t)d[1];
    size_t sp = 1;
    for (size_t i = to_first ? 1 : 2; i < (to_first ? rank - 1 : rank); i++) sp *= (size_t)d[i];
    for (size_t n = 0; n < N; n++)
        for (size_t c = 0; c < C; c++)
            for (size_t p = 0; p < sp; p++) {
                if (to_first) dst[(n * C + c) * sp + p] = src[(n * sp + p) * C + c];
                else dst[(n * sp + p) * C + c] = src[(n * C + c) * sp + p];
            }
}

static cort_status *nmp_run(cort_kernel_ctx *ctx) {
    const cort_value *x = nn_opt_input(ctx, 0);
    char buf[160];
    if (!x || x->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(x->type) || x->rank < 3)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'x' is %s%s, expected int8 or uint8 "
                               "(N, spatial..., C)", x ? cort_type_name(x->type) : "missing",
                               x ? nn_shape(x, buf, sizeof buf) : "");
    int64_t dims[CORT_MAX_RANK];
    dims[0] = x->shape[0];
    dims[1] = x->shape[x->rank - 1];
    for (size_t i = 2; i < x->rank; i++) dims[i] = x->shape[i - 1];
    cort_value *t = NULL, *out[1] = { NULL };
    CORT_TRY(cort_kernel_tensor(ctx, x->type, dims, x->rank, &t));
    move_channels(x->data, t->data, x->shape, x->rank, 1);
    cort_value *in[1] = { t };
    cort_status *st = ctb_run_inner(ctx, ctx->state, in, 1, out, 1);
    if (!st && (!out[0] || out[0]->type != x->type))
        st = cort_node_error(ctx->node, CORT_ERROR_RUNTIME, "internal: MaxPool gave no output of the input's type");
    if (!st) {
        const cort_value *f = out[0];
        int64_t yd[CORT_MAX_RANK];
        yd[0] = f->shape[0];
        yd[f->rank - 1] = f->shape[1];
        for (size_t i = 2; i < f->rank; i++) yd[i - 1] = f->shape[i];
        cort_value *y;
        st = cort_kernel_output(ctx, 0, x->type, yd, f->rank, &y);
        if (!st) move_channels(f->data, y->data, f->shape, f->rank, 0);
    }
    cort_value_release(t);
    cort_value_release(out[0]);
    return st;
}

const cort_op_def ctb_op_nhwc_max_pool = { .name = "NhwcMaxPool", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = 0, .init = nmp_init, .free_state = ctb_delegate_free, .infer = nmp_infer,
    .run = nmp_run };
