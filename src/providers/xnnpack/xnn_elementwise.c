/* Elementwise operators: Add/Sub/Mul/Div/Min/Max (N-d broadcasting), Relu/Clip (clamp, or nothing
 * when the producer already clamps), Sigmoid, HardSwish, LeakyRelu, Elu, PRelu, Softmax. */
#ifdef CORT_HAVE_XNNPACK
#include <string.h>
#include "xnn_internal.h"
#include "xnn_test.h"

/* ---------------------------------------------------------------- binary */
enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MIN, B_MAX };
static const char *const binary_names[] = { "Add", "Sub", "Mul", "Div", "Min", "Max" };

typedef struct binary_state { xnn_base base; int op; } binary_state;

static int binary_op(const cort_node *node) {
    for (int i = 0; i < 6; i++)
        if (!strcmp(node->op_type, binary_names[i])) return i;
    return -1;
}

static int binary_supports(const cort_node *node, const cort_tinfo *in, char *reason, size_t len) {
    if (node->n_inputs != 2) XNN_REFUSE("%zu inputs (XNNPACK takes exactly 2)", node->n_inputs);
    if (!xnn_float_input(in, 2, 1) || !in[1].present) XNN_REFUSE("input 1 is not a float tensor");
    for (int i = 0; i < 2; i++)
        if (in[i].rank > XNN_MAX_TENSOR_DIMS) XNN_REFUSE("rank %d > %d", in[i].rank, XNN_MAX_TENSOR_DIMS);
    return 1;
}

static cort_status *binary_create(const cort_node *node, const xnn_base *b, size_t key, xnn_operator_t *op) {
    (void)key;
    enum xnn_status st;
    switch (((const binary_state *)b)->op) {
    case B_ADD: st = xnn_create_add_nd_f32(b->out_min, b->out_max, 0, op); break;
    case B_SUB: st = xnn_create_subtract_nd_f32(b->out_min, b->out_max, 0, op); break;
    case B_MUL: st = xnn_create_multiply_nd_f32(b->out_min, b->out_max, 0, op); break;
    case B_DIV: st = xnn_create_divide_nd_f32(b->out_min, b->out_max, 0, op); break;
    case B_MIN: st = xnn_create_minimum_nd_f32(0, op); break;
    default: st = xnn_create_maximum_nd_f32(0, op); break;
    }
    return st == xnn_status_success ? NULL : xnn_call_error(node, "xnn_create_*_nd_f32", st);
}

static cort_status *binary_init(const cort_node *node, void **state) {
    binary_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    s->op = binary_op(node);
    cort_status *st = xnn_base_init(node, &s->base, binary_create, s->op <= B_DIV);
    if (!st) st = xnn_op_prime(node, &s->base, 0);
    if (st) { xnn_free_state(s); return st; }
    *state = s;
    return NULL;
}

typedef enum xnn_status (*binary_setup_fn)(xnn_operator_t, size_t, const size_t *, size_t, const size_t *, const float *,
                                           const float *, float *, pthreadpool_t);

static cort_status *binary_xnn(cort_kernel_ctx *ctx, size_t ar, const size_t *ash, size_t br, const size_t *bsh,
                               const float *a, const float *b, float *y) {
    binary_state *s = (binary_state *)ctx->state;
    static const binary_setup_fn setups[] = { xnn_setup_add_nd_f32, xnn_setup_subtract_nd_f32, xnn_setup_multiply_nd_f32,
                                              xnn_setup_divide_nd_f32, xnn_setup_minimum_nd_f32, xnn_setup_maximum_nd_f32 };
    xnn_operator_t op = NULL;
    CORT_TRY(xnn_op_take(ctx->node, &s->base, 0, &op));
    pthreadpool_t tp = xnn_tp_take(s->base.inst);
    const char *call = "xnn_setup_*_nd_f32";
    enum xnn_status xs = setups[s->op](op, ar, ash, br, bsh, a, b, y, tp);
    if (xs == xnn_status_success) { call = "xnn_run_operator"; xs = xnn_run_operator(op, tp); }
    xnn_tp_give(s->base.inst, tp);
    xnn_op_give(&s->base, 0, op);
    return xs == xnn_status_success ? NULL : xnn_call_error(ctx->node, call, xs);
}

/* The op on channels-last data: every operand's NCHW shape (padded to the output rank) is permuted to
 * [N, spatial..., C]. A channels-last operand is used as is; an NCHW operand whose memory already is
 * its NHWC memory (C = 1 or spatial = 1: per-channel, scalar) too; any other NCHW operand is
 * transposed. The result stays channels-last when the node's flag asks for it. */
static cort_status *binary_run_nhwc(cort_kernel_ctx *ctx, cort_value *Y) {
    binary_state *s = (binary_state *)ctx->state;
    const cort_value *in[2] = { ctx->inputs[0], ctx->inputs[1] };
    size_t r = Y->rank;
    if (r < 3) return xnn_run_cpu(ctx);
    size_t sh[2][XNN_MAX_TENSOR_DIMS];
    const float *data[2];
    float *tmp[2] = { NULL, NULL }, *tmp_out = NULL, *y = NULL;
    cort_status *st = NULL;
    for (int k = 0; k < 2; k++) {
        const cort_value *X = in[k];
        if (xnn_is_nhwc(X) && X->rank != r) return xnn_run_cpu(ctx);   /* broadcast channels-last: not mapped */
    }
    for (int k = 0; k < 2; k++) {
        const cort_value *X = in[k];
        int64_t p[XNN_MAX_TENSOR_DIMS];
        size_t off = r - X->rank;
        for (size_t i = 0; i < r; i++) p[i] = i < off ? 1 : X->shape[i - off];
        sh[k][0] = (size_t)p[0];
        for (size_t i = 2; i < r; i++) sh[k][i - 1] = (size_t)p[i];
        sh[k][r - 1] = (size_t)p[1];
        size_t sp = 1;
        for (size_t i = 2; i < r; i++) sp *= (size_t)p[i];
        if (xnn_is_nhwc(X) || p[1] == 1 || sp == 1) {
            st = xnn_input(X, &data[k], &tmp[k]);
        } else if (!(tmp[k] = xnn_buf(X->count))) {
            st = cort_error_oom();
        } else {
            xnn_nchw_to_nhwc(s->base.inst, ctx->pool, X->data, tmp[k], (size_t)p[0], (size_t)p[1], sp);
            data[k] = tmp[k];
        }
        if (st) goto done;
    }
    if ((st = xnn_output_begin(ctx->node, Y, &y, &tmp_out))) goto done;
    if ((st = binary_xnn(ctx, r, sh[0], r, sh[1], data[0], data[1], y))) goto done;
    xnn_output_done(s->base.inst, ctx->pool, Y, tmp_out);
    tmp_out = NULL;
done:
    cort_free(tmp[0]);
    cort_free(tmp[1]);
    cort_free(tmp_out);
    return st;
}

static cort_status *binary_run(cort_kernel_ctx *ctx) {
    const cort_node *node = ctx->node;
    const cort_value *A = ctx->inputs[0], *B = ctx->inputs[1];
    if (!A || !B || A->kind != CORT_VKIND_TENSOR || B->kind != CORT_VKIND_TENSOR || A->type != CORT_TYPE_FLOAT ||
        B->type != CORT_TYPE_FLOAT || A->rank > XNN_MAX_TENSOR_DIMS || B->rank > XNN_MAX_TENSOR_DIMS)
        return xnn_run_cpu(ctx);
    int64_t oshape[CORT_MAX_RANK];
    int orank = 0;
    cort_status *st = cort_broadcast_shapes(A->shape, (int)A->rank, B->shape, (int)B->rank, oshape, &orank);
    if (st) { cort_status_free(st); return xnn_run_cpu(ctx); }   /* the reference reports the mismatch */
    cort_value *Y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, oshape, (size_t)orank, &Y));
    if (!Y->count) return NULL;
    if (xnn_is_nhwc(A) || xnn_is_nhwc(B)) return binary_run_nhwc(ctx, Y);
    /* both operands NCHW: compute NCHW; a channels-last result costs one transpose of the output
     * (never more than transposing the operands) */
    float *ty = NULL, *y = Y->data;
    if (xnn_want_nhwc(node, oshape, (size_t)orank)) {
        if (!(ty = xnn_buf(Y->count))) return cort_error_oom();
        y = ty;
    }
    size_t ash[XNN_MAX_TENSOR_DIMS] = { 1 }, bsh[XNN_MAX_TENSOR_DIMS] = { 1 };
    for (size_t i = 0; i < A->rank; i++) ash[i] = (size_t)A->shape[i];
    for (size_t i = 0; i < B->rank; i++) bsh[i] = (size_t)B->shape[i];
    const float *a, *b;
    float *ta = NULL, *tb = NULL;
    if ((st = xnn_input(A, &a, &ta)) || (st = xnn_input(B, &b, &tb))) goto done;
    if ((st = binary_xnn(ctx, A->rank ? A->rank : 1, ash, B->rank ? B->rank : 1, bsh, a, b, y))) goto done;
    if (ty) {
        xnn_nchw_to_nhwc(((binary_state *)ctx->state)->base.inst, ctx->pool, ty, Y->data, (size_t)oshape[0],
                         (size_t)oshape[1], xnn_spatial(oshape, (size_t)orank));
        Y->layout = 1;
    }
done:
    cort_free(ta);
    cort_free(tb);
    cort_free(ty);
    return st;
}

/* ---------------------------------------------------------------- unary (channels = 1: any shape) */
enum { U_CLAMP, U_SIGMOID, U_HARDSWISH, U_LEAKY, U_ELU, U_PRELU, U_SOFTMAX };

typedef struct unary_state {
    xnn_base base;
    int      op;
    int      passthrough;   /* Relu/Clip already applied by the XNNPACK producer */
    float    lo, hi, alpha;
    /* PRelu: slope per channel; nchw = channels are axis 1 (transposed), else the last axis */
    float   *slope;
    size_t   channels;
    int      nchw;
    int      rank;
    /* Softmax: channels = product of dims from `axis` on */
    int64_t  axis;
} unary_state;

static int unary_op(const cort_node *node) {
    const char *t = node->op_type;
    if (!strcmp(t, "Relu") || !strcmp(t, "Clip")) return U_CLAMP;
    if (!strcmp(t, "Sigmoid")) return U_SIGMOID;
    if (!strcmp(t, "HardSwish")) return U_HARDSWISH;
    if (!strcmp(t, "LeakyRelu")) return U_LEAKY;
    if (!strcmp(t, "Elu")) return U_ELU;
    if (!strcmp(t, "PRelu")) return U_PRELU;
    return U_SOFTMAX;
}

/* PRelu slope layouts XNNPACK can take: one value, per channel (axis 1), or along the last axis. */
static int prelu_layout(const cort_value *slope, int xrank, int *nchw, size_t *channels) {
    if (slope->count == 1) { *nchw = 0; *channels = 1; return 1; }
    if (xrank < 2 || slope->rank > (size_t)xrank) return 0;
    int off = xrank - (int)slope->rank, axis = -1;
    for (size_t i = 0; i < slope->rank; i++) {
        if (slope->shape[i] == 1) continue;
        if (axis >= 0) return 0;
        axis = off + (int)i;
    }
    if (axis == xrank - 1) { *nchw = 0; *channels = slope->count; return 1; }
    if (axis == 1) { *nchw = 1; *channels = slope->count; return 1; }
    return 0;
}

static int softmax_axis(const cort_node *node, int rank, int64_t *axis) {
    int64_t a = cort_attr_int(node, "axis", node->opset >= 13 ? -1 : 1);
    if (a < 0) {
        if (rank < 0) return a == -1 ? (*axis = -1, 1) : 0;
        a += rank;
    }
    if (rank >= 0 && (a < 0 || a >= rank)) return 0;
    if (node->opset >= 13 && rank >= 0 && a != rank - 1) return 0;
    if (node->opset >= 13 && rank < 0) return 0;
    *axis = a;
    return 1;
}

static int unary_supports(const cort_node *node, const cort_tinfo *in, char *reason, size_t len) {
    float lo, hi;
    int64_t axis;
    int nchw;
    size_t ch;
    switch (unary_op(node)) {
    case U_CLAMP:
        if (!xnn_activation_range(node, &lo, &hi)) XNN_REFUSE("Clip bounds are not constant floats with min <= max");
        return 1;
    case U_PRELU: {
        const cort_value *slope = xnn_const_input(node, 1);
        if (!slope || slope->type != CORT_TYPE_FLOAT || !slope->count) XNN_REFUSE("slope is not a constant float tensor");
        if (slope->count > 1 && in[0].rank < 0) XNN_REFUSE("input rank unknown");
        if (!prelu_layout(slope, in[0].rank, &nchw, &ch)) XNN_REFUSE("slope is not per channel or per last axis");
        return 1;
    }
    case U_SOFTMAX:
        if (!softmax_axis(node, in[0].rank, &axis)) XNN_REFUSE("softmax axis is not the last one");
        return 1;
    default: return 1;
    }
}

static cort_status *unary_create(const cort_node *node, const xnn_base *b, size_t key, xnn_operator_t *op) {
    const unary_state *s = (const unary_state *)b;
    size_t c = key;
    enum xnn_status st;
    switch (s->op) {
    case U_CLAMP: st = xnn_create_clamp_nc_f32(c, c, c, s->lo, s->hi, 0, op); break;
    case U_SIGMOID: st = xnn_create_sigmoid_nc_f32(c, c, c, 0, op); break;
    case U_HARDSWISH: st = xnn_create_hardswish_nc_f32(c, c, c, 0, op); break;
    case U_LEAKY: st = xnn_create_leaky_relu_nc_f32(c, c, c, s->alpha, 0, op); break;
    case U_ELU: st = xnn_create_elu_nc_f32(c, c, c, s->alpha, 0, op); break;
    case U_PRELU:
        st = s->channels == 1 ? xnn_create_leaky_relu_nc_f32(1, 1, 1, s->slope[0], 0, op)
                              : xnn_create_prelu_nc_f32(c, c, c, s->slope, 0, op);
        break;
    default: st = xnn_create_softmax_nc_f32(c, c, c, 0, op); break;
    }
    return st == xnn_status_success ? NULL : xnn_call_error(node, "xnn_create_*_nc_f32", st);
}

static cort_status *unary_init(const cort_node *node, void **state) {
    unary_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    s->op = unary_op(node);
    cort_status *st = xnn_base_init(node, &s->base, unary_create, 0);
    if (st) goto error;
    size_t prime_key = 1;
    switch (s->op) {
    case U_CLAMP:
        xnn_activation_range(node, &s->lo, &s->hi);
        s->passthrough = xnn_activation_fused(node);
        break;
    case U_LEAKY: s->alpha = cort_attr_float(node, "alpha", 0.01f); break;
    case U_ELU: s->alpha = cort_attr_float(node, "alpha", 1.0f); break;
    case U_PRELU: {
        const cort_value *slope = xnn_const_input(node, 1);
        const cort_tinfo *xi = &node->graph->slot_info[node->in_slot[0]];
        s->rank = xi->rank;
        if (!slope || !prelu_layout(slope, s->rank, &s->nchw, &s->channels)) {
            st = cort_node_error(node, CORT_ERROR_RUNTIME, "slope layout changed after selection");
            goto error;
        }
        if (!(s->slope = cort_malloc(slope->count * sizeof(float)))) { st = cort_error_oom(); goto error; }
        memcpy(s->slope, slope->data, slope->count * sizeof(float));
        prime_key = s->channels;
        break;
    }
    case U_SOFTMAX: {
        const cort_tinfo *xi = &node->graph->slot_info[node->in_slot[0]];
        if (!softmax_axis(node, xi->rank, &s->axis)) {
            st = cort_node_error(node, CORT_ERROR_RUNTIME, "softmax axis changed after selection");
            goto error;
        }
        prime_key = 0;   /* channels known at run time */
        break;
    }
    default: break;
    }
    if (!s->passthrough && prime_key && (st = xnn_op_prime(node, &s->base, prime_key))) goto error;
    *state = s;
    return NULL;
error:
    cort_free(s->slope);
    xnn_free_state(s);
    return st;
}

static void unary_free(void *state) {
    unary_state *s = state;
    if (!s) return;
    cort_free(s->slope);
    xnn_free_state(s);
}

typedef enum xnn_status (*nc_setup_fn)(xnn_operator_t, size_t, const float *, float *, pthreadpool_t);

static cort_status *unary_run(cort_kernel_ctx *ctx) {
    unary_state *s = (unary_state *)ctx->state;
    const cort_node *node = ctx->node;
    cort_value *X = ctx->inputs[0];
    if (X->kind != CORT_VKIND_TENSOR || X->type != CORT_TYPE_FLOAT) return xnn_run_cpu(ctx);
    /* elementwise: the data keeps its layout; convert only when input and wanted output layouts differ */
    int x_nhwc = xnn_is_nhwc(X), want = xnn_want_nhwc(node, X->shape, X->rank);
    if (s->passthrough) {
        if (x_nhwc == want) { cort_kernel_set_output(ctx, 0, cort_value_retain(X)); return NULL; }
        cort_value *T = NULL;
        CORT_TRY(xnn_relayout(s->base.inst, ctx->pool, X, want, &T));
        cort_kernel_set_output(ctx, 0, T);
        return NULL;
    }
    if (x_nhwc && ((s->op == U_PRELU && s->channels > 1) || s->op == U_SOFTMAX)) return xnn_run_cpu(ctx);
    size_t channels = 1, n = X->count, sp = 1;
    int transpose = 0;
    if (s->op == U_PRELU && s->channels > 1) {
        if ((int)X->rank != s->rank) return xnn_run_cpu(ctx);
        size_t ax = s->nchw ? 1 : X->rank - 1;
        if (X->shape[ax] != (int64_t)s->channels) return xnn_run_cpu(ctx);
        channels = s->channels;
        if (s->nchw) {
            n = (size_t)X->shape[0];
            for (size_t i = 2; i < X->rank; i++) sp *= (size_t)X->shape[i];
            transpose = sp > 1;
        }
    } else if (s->op == U_SOFTMAX) {
        int64_t axis = s->axis < 0 ? (int64_t)X->rank - 1 : s->axis;
        if (axis < 0 || axis >= (int64_t)X->rank || (node->opset >= 13 && axis != (int64_t)X->rank - 1))
            return xnn_run_cpu(ctx);
        for (size_t i = (size_t)axis; i < X->rank; i++) channels *= (size_t)X->shape[i];
    }
    cort_value *Y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, X->shape, X->rank, &Y));
    if (!Y->count) return NULL;
    size_t batch = transpose ? n * sp : X->count / channels;
    cort_status *st = NULL;
    const float *in;
    float *tmp = NULL, *out = Y->data, *tout = NULL;
    if (transpose) {
        if (!(tmp = xnn_buf(X->count)) || !(tout = xnn_buf(X->count))) { st = cort_error_oom(); goto done; }
        xnn_nchw_to_nhwc(s->base.inst, ctx->pool, X->data, tmp, n, channels, sp);
        in = tmp;
        out = tout;
    } else if ((st = xnn_input(X, &in, &tmp))) {
        goto done;
    } else if (x_nhwc != want && !(out = tout = xnn_buf(X->count))) {
        st = cort_error_oom();
        goto done;
    }
    static const nc_setup_fn setups[] = { xnn_setup_clamp_nc_f32, xnn_setup_sigmoid_nc_f32, xnn_setup_hardswish_nc_f32,
                                          xnn_setup_leaky_relu_nc_f32, xnn_setup_elu_nc_f32, xnn_setup_prelu_nc_f32,
                                          xnn_setup_softmax_nc_f32 };
    nc_setup_fn setup = setups[s->op];
    if (s->op == U_PRELU && s->channels == 1) setup = xnn_setup_leaky_relu_nc_f32;
    xnn_operator_t op = NULL;
    if ((st = xnn_op_take(node, &s->base, channels, &op))) goto done;
    pthreadpool_t tp = xnn_tp_take(s->base.inst);
    const char *call = "xnn_setup_*_nc_f32";
    enum xnn_status xs = setup(op, batch, in, out, tp);
    if (xs == xnn_status_success) { call = "xnn_run_operator"; xs = xnn_run_operator(op, tp); }
    xnn_tp_give(s->base.inst, tp);
    xnn_op_give(&s->base, channels, op);
    if (xs != xnn_status_success) { st = xnn_call_error(node, call, xs); goto done; }
    if (transpose) {
        xnn_nhwc_to_nchw(s->base.inst, ctx->pool, tout, Y->data, n, channels, sp);
    } else if (x_nhwc != want) {   /* relayout the result: [N][S][C] <-> [N][C][S] */
        size_t yn = (size_t)X->shape[0], yc = (size_t)X->shape[1], ys = xnn_spatial(X->shape, X->rank);
        if (x_nhwc) xnn_nhwc_to_nchw(s->base.inst, ctx->pool, tout, Y->data, yn, yc, ys);
        else xnn_nchw_to_nhwc(s->base.inst, ctx->pool, tout, Y->data, yn, yc, ys);
    }
    Y->layout = (uint8_t)want;
done:
    cort_free(tmp);
    cort_free(tout);
    return st;
}

int cort_xnnpack_test_passthrough(const struct cort_node *node) {
    if (!node->op || node->op->init != unary_init || !node->state) return -1;
    const unary_state *s = node->state;
    return s->op == U_CLAMP ? s->passthrough : -1;
}

#define BIN_DEF(var, P_NAME) \
    static const cort_op_def var = { .name = P_NAME, .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, \
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = binary_init, .free_state = xnn_free_state, \
    .infer = xnn_infer, .run = binary_run }
#define UN_DEF(var, P_NAME) \
    static const cort_op_def var = { .name = P_NAME, .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, \
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = unary_init, .free_state = unary_free, \
    .infer = xnn_infer, .run = unary_run }
BIN_DEF(add_def, "Add"); BIN_DEF(sub_def, "Sub"); BIN_DEF(mul_def, "Mul"); BIN_DEF(div_def, "Div");
BIN_DEF(min_def, "Min"); BIN_DEF(max_def, "Max");
UN_DEF(relu_def, "Relu"); UN_DEF(clip_def, "Clip"); UN_DEF(sigmoid_def, "Sigmoid"); UN_DEF(hardswish_def, "HardSwish");
UN_DEF(leaky_def, "LeakyRelu"); UN_DEF(elu_def, "Elu"); UN_DEF(prelu_def, "PRelu"); UN_DEF(softmax_def, "Softmax");

const xnn_kind xnn_elementwise_kinds[] = {
    { "Add", 7, binary_supports, &add_def, 1 },
    { "Sub", 7, binary_supports, &sub_def, 1 },
    { "Mul", 7, binary_supports, &mul_def, 1 },
    { "Div", 7, binary_supports, &div_def, 1 },
    { "Min", 8, binary_supports, &min_def, 0 },
    { "Max", 8, binary_supports, &max_def, 0 },
    { "Relu", 6, unary_supports, &relu_def, 0 },
    { "Clip", 6, unary_supports, &clip_def, 0 },
    { "Sigmoid", 6, unary_supports, &sigmoid_def, 0 },
    { "HardSwish", 14, unary_supports, &hardswish_def, 0 },
    { "LeakyRelu", 6, unary_supports, &leaky_def, 0 },
    { "Elu", 6, unary_supports, &elu_def, 0 },
    { "PRelu", 7, unary_supports, &prelu_def, 0 },
    { "Softmax", 1, unary_supports, &softmax_def, 0 },
    { NULL, 0, NULL, NULL, 0 },
};
#else
typedef int xnn_elementwise_unused;
#endif
