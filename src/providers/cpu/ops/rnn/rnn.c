/* RNN, GRU and LSTM (ONNX opsets 1..22): attribute parsing, shape validation and inference. The cell
 * math lives in ops/rnn/rnn_cell_impl.h (instantiated for float and double by ops/rnn/rnn_cell.c). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "rnn.h"

static const char *const act_names[] = {
    "Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",
    "Softsign", "Softplus",
};

static int act_uses_alpha(int k) {
    return k == MI_ACT_AFFINE || k == MI_ACT_LEAKYRELU || k == MI_ACT_THRESHOLDEDRELU || k == MI_ACT_SCALEDTANH ||
           k == MI_ACT_HARDSIGMOID || k == MI_ACT_ELU;
}
static int act_uses_beta(int k) { return k == MI_ACT_AFFINE || k == MI_ACT_SCALEDTANH || k == MI_ACT_HARDSIGMOID; }
static float act_default_alpha(int k) {
    switch (k) {
    case MI_ACT_LEAKYRELU: return 0.01f;
    case MI_ACT_HARDSIGMOID: return 0.2f;
    default: return 1.0f;
    }
}
static float act_default_beta(int k) { return k == MI_ACT_HARDSIGMOID ? 0.5f : (k == MI_ACT_SCALEDTANH ? 1.0f : 0.0f); }

static cort_status *rnn_init(const cort_node *node, int cell, void **state) {
    mi_rnn_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = NULL;
    st->cell = cell;
    st->n_act = cell == MI_CELL_RNN ? 1 : (cell == MI_CELL_GRU ? 2 : 3);
    const char *dir = cort_attr_str(node, "direction", "forward");
    if (!strcmp(dir, "forward")) st->direction = MI_DIR_FORWARD;
    else if (!strcmp(dir, "reverse")) st->direction = MI_DIR_REVERSE;
    else if (!strcmp(dir, "bidirectional")) st->direction = MI_DIR_BIDI;
    else {
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL,
                              "attribute 'direction' is '%s', expected forward, reverse or bidirectional", dir);
        goto error;
    }
    st->n_dir = st->direction == MI_DIR_BIDI ? 2 : 1;
    st->hidden = cort_attr_int(node, "hidden_size", 0);
    if (st->hidden < 0) {
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'hidden_size' is %lld, expected > 0",
                              (long long)st->hidden);
        goto error;
    }
    if (cort_attr_get(node, "clip")) {
        st->has_clip = 1;
        st->clip = cort_attr_float(node, "clip", 0.0f);
        if (!(st->clip >= 0.0f)) {
            err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'clip' is %g, expected >= 0", (double)st->clip);
            goto error;
        }
    }
    st->input_forget = cell == MI_CELL_LSTM && cort_attr_int(node, "input_forget", 0) != 0;
    st->linear_before_reset = cell == MI_CELL_GRU && cort_attr_int(node, "linear_before_reset", 0) != 0;
    int64_t layout = cort_attr_int(node, "layout", 0);
    if (layout != 0 && layout != 1) {
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'layout' is %lld, expected 0 or 1", (long long)layout);
        goto error;
    }
    st->layout = (int)layout;

    const char *const *names = NULL;
    size_t n_names = cort_attr_strings(node, "activations", &names);
    const char *defaults[3] = { "Sigmoid", "Tanh", "Tanh" };
    if (cell == MI_CELL_RNN) defaults[0] = "Tanh";
    size_t want = (size_t)(st->n_act * st->n_dir);
    /* a single set for a bidirectional node is applied to both directions (as onnxruntime does) */
    if (n_names != 0 && n_names != want && !(st->n_dir == 2 && n_names == (size_t)st->n_act)) {
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'activations' has %zu entries, expected %zu",
                              n_names, want);
        goto error;
    }
    const float *alphas = NULL, *betas = NULL;
    size_t n_alpha = cort_attr_floats(node, "activation_alpha", &alphas);
    size_t n_beta = cort_attr_floats(node, "activation_beta", &betas);
    size_t ia = 0, ib = 0;
    for (size_t k = 0; k < want; k++) {
        const char *nm = n_names ? names[k % n_names] : defaults[k % (size_t)st->n_act];
        int kind = -1;
        for (int j = 0; j < (int)(sizeof act_names / sizeof act_names[0]); j++)
            if (!strcasecmp(nm, act_names[j])) kind = j;
        if (kind < 0) {
            err = cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "activation '%s' is not supported", nm);
            goto error;
        }
        st->act[k].kind = kind;
        st->act[k].alpha = act_default_alpha(kind);
        st->act[k].beta = act_default_beta(kind);
        /* alpha/beta lists are consumed only by the activations that take them */
        if (act_uses_alpha(kind) && ia < n_alpha) st->act[k].alpha = alphas[ia++];
        if (act_uses_beta(kind) && ib < n_beta) st->act[k].beta = betas[ib++];
    }
    *state = st;
    return NULL;
error:
    cort_free(st);
    return err;
}

static cort_status *rnn_init_rnn(const cort_node *node, void **state) { return rnn_init(node, MI_CELL_RNN, state); }
static cort_status *rnn_init_gru(const cort_node *node, void **state) { return rnn_init(node, MI_CELL_GRU, state); }
static cort_status *rnn_init_lstm(const cort_node *node, void **state) { return rnn_init(node, MI_CELL_LSTM, state); }
static void rnn_free(void *state) { cort_free(state); }

static int gates_of(int cell) { return cell == MI_CELL_RNN ? 1 : (cell == MI_CELL_GRU ? 3 : 4); }

static cort_status *rnn_infer(cort_infer_ctx *ctx) {
    const mi_rnn_state *st = ctx->state;
    const cort_tinfo *x = mi_tin(ctx, 0), *r = mi_tin(ctx, 2);
    if (!x || !st) return NULL;
    cort_type t = x->elem;
    int64_t S = -1, Bt = -1, H = st->hidden ? st->hidden : -1, D = st->n_dir;
    if (x->rank == 3) { S = x->dims[st->layout ? 1 : 0]; Bt = x->dims[st->layout ? 0 : 1]; }
    if (H < 0 && r && r->rank == 3) H = r->dims[2];
    for (size_t i = 0; i < ctx->n_outputs; i++) {
        if (i == 0) {
            int64_t d0[4] = { S, D, Bt, H }, d1[4] = { Bt, S, D, H };
            cort_tinfo_tensor_shape(&ctx->outputs[0], t, st->layout ? d1 : d0, 4);
        } else {
            int64_t d0[3] = { D, Bt, H }, d1[3] = { Bt, D, H };
            cort_tinfo_tensor_shape(&ctx->outputs[i], t, st->layout ? d1 : d0, 3);
        }
    }
    return NULL;
}

/* Checks that input i (if present) has type t and exactly the given shape. */
static cort_status *check_shape(const cort_kernel_ctx *ctx, size_t i, const char *what, cort_type t, const int64_t *dims,
                                size_t rank) {
    const cort_value *v = ctx->inputs[i];
    CORT_TRY(mi_want_tensor(ctx, i, what));
    if (v->type != t)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected %s", i, what,
                               cort_type_name(v->type), cort_type_name(t));
    int ok = v->rank == rank;
    for (size_t k = 0; ok && k < rank; k++) ok = dims[k] < 0 || v->shape[k] == dims[k];
    if (!ok) {
        char got[128], exp[128];
        cort_shape_str(v->shape, v->rank, got, sizeof got);
        size_t len = 0;
        exp[len++] = '[';
        for (size_t k = 0; k < rank && len + 24 < sizeof exp; k++) {
            if (dims[k] < 0) len += (size_t)snprintf(exp + len, sizeof exp - len, "%s*", k ? "," : "");
            else len += (size_t)snprintf(exp + len, sizeof exp - len, "%s%lld", k ? "," : "", (long long)dims[k]);
        }
        snprintf(exp + len, sizeof exp - len, "]");
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, expected %s", i, what,
                               got, exp);
    }
    return NULL;
}

static cort_status *rnn_run(cort_kernel_ctx *ctx) {
    const mi_rnn_state *st = ctx->state;
    const cort_node *node = ctx->node;
    CORT_TRY(mi_want_tensor(ctx, 0, "X"));
    CORT_TRY(mi_want_tensor(ctx, 1, "W"));
    CORT_TRY(mi_want_tensor(ctx, 2, "R"));
    const cort_value *X = ctx->inputs[0], *W = ctx->inputs[1], *R = ctx->inputs[2];
    cort_type t = X->type;
    if (t != CORT_TYPE_FLOAT && t != CORT_TYPE_DOUBLE)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "input 0 'X' has type %s; only float and double are supported",
                               cort_type_name(t));
    if (X->rank != 3) {
        char buf[128];
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has shape %s, expected rank 3",
                               cort_shape_str(X->shape, X->rank, buf, sizeof buf));
    }
    mi_rnn_args a;
    memset(&a, 0, sizeof a);
    a.st = st;
    a.pool = ctx->pool;
    a.kctx = ctx;
    a.S = X->shape[st->layout ? 1 : 0];
    a.Bt = X->shape[st->layout ? 0 : 1];
    a.I = X->shape[2];
    a.D = st->n_dir;
    a.G = gates_of(st->cell);
    if (R->rank != 3) {
        char buf[128];
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'R' has shape %s, expected rank 3",
                               cort_shape_str(R->shape, R->rank, buf, sizeof buf));
    }
    a.H = st->hidden ? st->hidden : R->shape[2];
    if (a.H > (int64_t)1 << 28)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "hidden size %lld is too large", (long long)a.H);
    int64_t GH = a.G * a.H;
    { int64_t d[3] = { a.D, GH, a.I }; CORT_TRY(check_shape(ctx, 1, "W", t, d, 3)); }
    { int64_t d[3] = { a.D, GH, a.H }; CORT_TRY(check_shape(ctx, 2, "R", t, d, 3)); }
    if (mi_in(ctx, 3)) { int64_t d[2] = { a.D, 2 * GH }; CORT_TRY(check_shape(ctx, 3, "B", t, d, 2)); a.B = ctx->inputs[3]->data; }
    int64_t hd[3] = { a.D, a.Bt, a.H };
    if (st->layout) { hd[0] = a.Bt; hd[1] = a.D; }
    if (mi_in(ctx, 5)) { CORT_TRY(check_shape(ctx, 5, "initial_h", t, hd, 3)); a.init_h = ctx->inputs[5]->data; }
    if (st->cell == MI_CELL_LSTM) {
        if (mi_in(ctx, 6)) { CORT_TRY(check_shape(ctx, 6, "initial_c", t, hd, 3)); a.init_c = ctx->inputs[6]->data; }
        if (mi_in(ctx, 7)) { int64_t d[2] = { a.D, 3 * a.H }; CORT_TRY(check_shape(ctx, 7, "P", t, d, 2)); a.P = ctx->inputs[7]->data; }
    }
    (void)W;
    /* scratch-size sanity: S*B*G*H elements of projection must be addressable */
    size_t xw;
    if (__builtin_mul_overflow((size_t)a.S * (size_t)a.Bt, (size_t)GH, &xw) || xw > ((size_t)1 << 40))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "sequence %lld x batch %lld x gates %lld is too large",
                               (long long)a.S, (long long)a.Bt, (long long)GH);

    int64_t *lens = cort_kernel_scratch(ctx, ((size_t)a.Bt + 1) * sizeof(int64_t));
    if (!lens) return cort_error_oom();
    cort_status *err = NULL;
    const cort_value *sl = mi_in(ctx, 4);
    for (int64_t b = 0; b < a.Bt; b++) lens[b] = a.S;
    if (sl) {
        if ((err = mi_want_tensor(ctx, 4, "sequence_lens"))) goto done;
        if ((sl->type != CORT_TYPE_INT32 && sl->type != CORT_TYPE_INT64) || sl->rank != 1 || sl->shape[0] != a.Bt) {
            char buf[128];
            err = cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 4 'sequence_lens' is %s%s, expected int32[%lld]",
                                  cort_type_name(sl->type), cort_shape_str(sl->shape, sl->rank, buf, sizeof buf),
                                  (long long)a.Bt);
            goto done;
        }
        for (int64_t b = 0; b < a.Bt; b++) {
            int64_t v = cort_load_i64(sl->data, sl->type, (size_t)b);
            if (v < 0 || v > a.S) {
                err = cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                      "input 4 'sequence_lens' has value %lld at batch %lld, expected 0..%lld",
                                      (long long)v, (long long)b, (long long)a.S);
                goto done;
            }
            lens[b] = v;
        }
    }
    a.lens = lens;
    a.X = X->data;
    a.W = W->data;
    a.R = R->data;
    cort_value *out;
    if (mi_out_wanted(ctx, 0)) {
        int64_t d0[4] = { a.S, a.D, a.Bt, a.H }, d1[4] = { a.Bt, a.S, a.D, a.H };
        if ((err = cort_kernel_output(ctx, 0, t, st->layout ? d1 : d0, 4, &out))) goto done;
        a.Y = out->data;
    }
    if (mi_out_wanted(ctx, 1)) {
        if ((err = cort_kernel_output(ctx, 1, t, hd, 3, &out))) goto done;
        a.Y_h = out->data;
    }
    if (st->cell == MI_CELL_LSTM && mi_out_wanted(ctx, 2)) {
        if ((err = cort_kernel_output(ctx, 2, t, hd, 3, &out))) goto done;
        a.Y_c = out->data;
    }
    err = t == CORT_TYPE_FLOAT ? mi_rnn_compute_f32(&a) : mi_rnn_compute_f64(&a);
done:
    cort_kernel_scratch_free(ctx, lens);
    return err;
}

#define MI_RNN_TYPES (CORT_TBIT(CORT_TYPE_FLOAT) | CORT_TBIT(CORT_TYPE_DOUBLE))
const cort_op_def mi_op_rnn = { .name = "RNN", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = MI_RNN_TYPES, .init = rnn_init_rnn, .free_state = rnn_free, .infer = rnn_infer,
    .run = rnn_run };
const cort_op_def mi_op_gru = { .name = "GRU", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = MI_RNN_TYPES, .init = rnn_init_gru, .free_state = rnn_free, .infer = rnn_infer,
    .run = rnn_run };
const cort_op_def mi_op_lstm = { .name = "LSTM", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = MI_RNN_TYPES, .init = rnn_init_lstm, .free_state = rnn_free, .infer = rnn_infer,
    .run = rnn_run };
