/* Conv and ConvTranspose (1-D and 2-D, any group count, depthwise included) on XNNPACK's NHWC
 * convolution/deconvolution. Weights are repacked once at init (OIHW -> per-group OHWI) and kept,
 * so further operator instances for concurrent runs are created from them without touching the model. */
#ifdef CORT_HAVE_XNNPACK
#include <string.h>
#include "xnn_internal.h"

typedef struct conv_state {
    xnn_base   base;
    xnn_window w;
    int        transpose;
    uint32_t   groups;
    size_t     gic, goc, cin, cout;   /* per-group and total input/output channels */
    float     *weights;               /* XNNPACK layout */
    float     *bias;                  /* cout entries or NULL */
    uint32_t   adj[2];                /* ConvTranspose output_padding [h, w] */
    int        dynamic_same;          /* SAME_* padding: operators keyed by input (h, w) */
} conv_state;

static int conv_supports(const cort_node *node, const cort_tinfo *in, char *reason, size_t len) {
    int transpose = !strcmp(node->op_type, "ConvTranspose");
    if (node->n_inputs < 2) XNN_REFUSE("missing weights");
    const cort_value *W = xnn_const_input(node, 1);
    if (!W || W->type != CORT_TYPE_FLOAT) XNN_REFUSE("weights are not a constant float tensor");
    if (W->rank != 3 && W->rank != 4) XNN_REFUSE("%zu-D weights (supported: 1-D and 2-D convolutions)", W->rank);
    for (size_t i = 0; i < W->rank; i++)
        if (W->shape[i] < 1 || W->shape[i] > (1 << 24)) XNN_REFUSE("weights have an empty or huge dimension");
    if (in[0].rank >= 0 && (size_t)in[0].rank != W->rank) XNN_REFUSE("input rank %d != weight rank %zu", in[0].rank, W->rank);
    int64_t group = cort_attr_int(node, "group", 1);
    if (group < 1 || group > (1 << 24)) XNN_REFUSE("group %lld", (long long)group);
    int64_t cin = transpose ? W->shape[0] : W->shape[1] * group, cout = transpose ? W->shape[1] * group : W->shape[0];
    if ((transpose ? W->shape[0] : W->shape[0]) % group) XNN_REFUSE("channels not divisible by group");
    if (in[0].rank >= 2 && in[0].dims[1] >= 0 && in[0].dims[1] != cin)
        XNN_REFUSE("input has %lld channels, weights expect %lld", (long long)in[0].dims[1], (long long)cin);
    if (node->n_inputs > 2 && node->in_slot[2] >= 0) {
        const cort_value *B = xnn_const_input(node, 2);
        if (!B || B->type != CORT_TYPE_FLOAT || B->rank != 1 || B->shape[0] != cout) XNN_REFUSE("bias is not a constant float[%lld]", (long long)cout);
    }
    int nd = (int)W->rank - 2;
    const int64_t *ks;
    size_t nk = cort_attr_ints(node, "kernel_shape", &ks);
    if (nk && (nk != (size_t)nd || memcmp(ks, W->shape + 2, (size_t)nd * sizeof *ks)))
        XNN_REFUSE("kernel_shape does not match the weights");
    xnn_window w;
    if (!xnn_window_parse(node, nd, W->shape + 2, &w, reason, len)) return 0;
    if (transpose) {
        const int64_t *v;
        if (cort_attr_ints(node, "output_shape", &v)) XNN_REFUSE("output_shape is not supported");
        if (w.same_upper || w.same_lower) XNN_REFUSE("auto_pad SAME with ConvTranspose is not supported");
        size_t n = cort_attr_ints(node, "output_padding", &v);
        if (n && n != (size_t)nd) XNN_REFUSE("output_padding has %zu values", n);
        for (size_t i = 0; i < n; i++)
            if (v[i] < 0 || v[i] >= w.s[2 - nd + i]) XNN_REFUSE("output_padding %lld is not below the stride", (long long)v[i]);
    }
    return 1;
}

static cort_status *conv_create(const cort_node *node, const xnn_base *b, size_t key, xnn_operator_t *op) {
    const conv_state *s = (const conv_state *)b;
    uint32_t pad[4];
    memcpy(pad, s->w.pad, sizeof pad);
    if (s->dynamic_same) {
        int64_t hw[2] = { (int64_t)(key >> 32), (int64_t)(key & 0xffffffffu) };
        xnn_window_same_pads(&s->w, hw, pad);
    }
    enum xnn_status st;
    if (!s->transpose)
        st = xnn_create_convolution2d_nhwc_f32(pad[0], pad[3], pad[2], pad[1], s->w.k[0], s->w.k[1], s->w.s[0], s->w.s[1],
                                               s->w.d[0], s->w.d[1], s->groups, s->gic, s->goc, s->cin, s->cout,
                                               s->weights, s->bias, b->out_min, b->out_max, 0, op);
    else
        st = xnn_create_deconvolution2d_nhwc_f32(pad[0], pad[3], pad[2], pad[1], s->w.k[0], s->w.k[1], s->w.s[0], s->w.s[1],
                                                 s->w.d[0], s->w.d[1], s->groups, s->gic, s->goc, s->cin, s->cout,
                                                 s->weights, s->bias, b->out_min, b->out_max, 0, op);
    return st == xnn_status_success ? NULL
                                    : xnn_call_error(node, s->transpose ? "xnn_create_deconvolution2d_nhwc_f32"
                                                                        : "xnn_create_convolution2d_nhwc_f32", st);
}

static cort_status *conv_init(const cort_node *node, void **state) {
    char reason[128] = "";
    cort_status *st = NULL;
    conv_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    s->transpose = !strcmp(node->op_type, "ConvTranspose");
    if ((st = xnn_base_init(node, &s->base, conv_create, 1))) goto error;
    const cort_value *W = xnn_const_input(node, 1), *B = xnn_const_input(node, 2);
    if (!W) { st = cort_node_error(node, CORT_ERROR_RUNTIME, "weights are not constant"); goto error; }
    int nd = (int)W->rank - 2;
    if (!xnn_window_parse(node, nd, W->shape + 2, &s->w, reason, sizeof reason)) {
        st = cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "%s", reason);
        goto error;
    }
    s->dynamic_same = s->w.same_upper || s->w.same_lower;
    s->groups = (uint32_t)cort_attr_int(node, "group", 1);
    if (!s->transpose) { s->goc = (size_t)W->shape[0] / s->groups; s->gic = (size_t)W->shape[1]; }
    else { s->gic = (size_t)W->shape[0] / s->groups; s->goc = (size_t)W->shape[1]; }
    s->cin = s->gic * s->groups;
    s->cout = s->goc * s->groups;
    if (s->transpose) {
        const int64_t *v;
        size_t n = cort_attr_ints(node, "output_padding", &v);
        for (size_t i = 0; i < n; i++) s->adj[2 - nd + i] = (uint32_t)v[i];
    }
    size_t kh = s->w.k[0], kw = s->w.k[1], ksz = kh * kw;
    s->weights = cort_malloc(W->count * sizeof(float));
    if (!s->weights) { st = cort_error_oom(); goto error; }
    const float *w = W->data;
    for (size_t g = 0; g < s->groups; g++)
        for (size_t oc = 0; oc < s->goc; oc++)
            for (size_t k = 0; k < ksz; k++)
                for (size_t ic = 0; ic < s->gic; ic++) {
                    size_t src = s->transpose ? ((g * s->gic + ic) * s->goc + oc) * ksz + k
                                              : ((g * s->goc + oc) * s->gic + ic) * ksz + k;
                    s->weights[((g * s->goc + oc) * ksz + k) * s->gic + ic] = w[src];
                }
    if (B) {
        s->bias = cort_malloc(s->cout * sizeof(float));
        if (!s->bias) { st = cort_error_oom(); goto error; }
        memcpy(s->bias, B->data, s->cout * sizeof(float));
    }
    if (!s->dynamic_same && (st = xnn_op_prime(node, &s->base, 0))) goto error;   /* validates the parameters now */
    *state = s;
    return NULL;
error:
    xnn_base_free(&s->base);
    cort_free(s->weights);
    cort_free(s->bias);
    cort_free(s);
    return st;
}

static void conv_free(void *state) {
    conv_state *s = state;
    if (!s) return;
    cort_free(s->weights);
    cort_free(s->bias);
    xnn_free_state(s);
}

static cort_status *conv_run(cort_kernel_ctx *ctx) {
    conv_state *s = (conv_state *)ctx->state;
    const cort_node *node = ctx->node;
    const cort_value *X = ctx->inputs[0];
    int nd = s->w.nd;
    char buf[96];
    if (X->kind != CORT_VKIND_TENSOR || X->type != CORT_TYPE_FLOAT || X->rank != (size_t)nd + 2 || X->shape[1] != (int64_t)s->cin)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' is %s, expected float[N,%zu%s]",
                               node->ir->inputs[0], cort_shape_str(X->shape, X->rank, buf, sizeof buf), s->cin,
                               nd == 2 ? ",H,W" : ",W");
    int64_t n = X->shape[0], hw[2] = { nd == 2 ? X->shape[2] : 1, X->shape[nd + 1] };
    uint32_t pad[4];
    memcpy(pad, s->w.pad, sizeof pad);
    size_t key = 0;
    if (s->dynamic_same) {
        if (hw[0] > 0xffffffffLL || hw[1] > 0xffffffffLL) return xnn_run_cpu(ctx);
        xnn_window_same_pads(&s->w, hw, pad);
        key = ((size_t)hw[0] << 32) | (size_t)hw[1];
    }
    int64_t out_hw[2];
    for (int i = 0; i < 2; i++) {
        int64_t ek = (int64_t)(s->w.k[i] - 1) * s->w.d[i] + 1;
        if (!s->transpose) {
            int64_t span = hw[i] + pad[i] + pad[2 + i] - ek;
            if (span < 0)
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                       "input 0 '%s' (%s) is smaller than the dilated kernel (%lld) plus padding",
                                       node->ir->inputs[0], cort_shape_str(X->shape, X->rank, buf, sizeof buf), (long long)ek);
            out_hw[i] = span / s->w.s[i] + 1;
        } else {
            out_hw[i] = hw[i] > 0 ? s->w.s[i] * (hw[i] - 1) + s->adj[i] + ek - pad[i] - pad[2 + i] : 0;
            if (out_hw[i] < 0) return xnn_run_cpu(ctx);
        }
    }
    int64_t oshape[4] = { n, (int64_t)s->cout, out_hw[0], out_hw[1] };
    if (nd == 1) oshape[2] = out_hw[1];
    cort_value *Y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, oshape, (size_t)nd + 2, &Y));
    if (!Y->count) return NULL;
    if (!X->count) return xnn_run_cpu(ctx);   /* empty input, non-empty output: leave it to the reference */
    cort_status *st = NULL;
    float *tmp_in = NULL, *tmp_out = NULL, *xout = NULL;
    const float *xin;
    /* channels-last input (from an XNNPACK producer) is read as is; the output stays channels-last
     * when every reader takes it (partition), else it is transposed back */
    if ((st = xnn_input_nhwc(s->base.inst, ctx->pool, X, &xin, &tmp_in))) return st;
    if ((st = xnn_output_begin(node, Y, &xout, &tmp_out))) goto done;
    xnn_operator_t op = NULL;
    if ((st = xnn_op_take(node, &s->base, key, &op))) goto done;
    pthreadpool_t tp = xnn_tp_take(s->base.inst);
    enum xnn_status xs;
    const char *call = s->transpose ? "xnn_setup_deconvolution2d_nhwc_f32" : "xnn_setup_convolution2d_nhwc_f32";
    if (!s->transpose)
        xs = xnn_setup_convolution2d_nhwc_f32(op, (size_t)n, (size_t)hw[0], (size_t)hw[1], xin, xout, tp);
    else
        xs = xnn_setup_deconvolution2d_nhwc_f32(op, (size_t)n, (size_t)hw[0], (size_t)hw[1], s->adj[0], s->adj[1], xin,
                                                xout, tp);
    if (xs == xnn_status_success) { call = "xnn_run_operator"; xs = xnn_run_operator(op, tp); }
    xnn_tp_give(s->base.inst, tp);
    xnn_op_give(&s->base, key, op);
    if (xs != xnn_status_success) { st = xnn_call_error(node, call, xs); goto done; }
    xnn_output_done(s->base.inst, ctx->pool, Y, tmp_out);
    tmp_out = NULL;
done:
    cort_free(tmp_in);
    cort_free(tmp_out);
    return st;
}

static const cort_op_def conv_def = { .name = "Conv", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = conv_init, .free_state = conv_free, .infer = xnn_infer,
    .run = conv_run };
static const cort_op_def convt_def = { .name = "ConvTranspose", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = conv_init, .free_state = conv_free, .infer = xnn_infer,
    .run = conv_run };

const xnn_kind xnn_conv_kinds[] = {
    { "Conv", 1, conv_supports, &conv_def, 1 },
    { "ConvTranspose", 1, conv_supports, &convt_def, 1 },
    { NULL, 0, NULL, NULL, 0 },
};
#else
typedef int xnn_conv_unused;
#endif
