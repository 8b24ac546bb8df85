/* Data-movement operators: bilinear Resize, constant Pad, DepthToSpace (DCR), Concat along channels. */
#ifdef CORT_HAVE_XNNPACK
#include <math.h>
#include <string.h>
#include "xnn_internal.h"

/* ---------------------------------------------------------------- Resize (linear, 4-D, H/W only) */
typedef struct resize_state {
    xnn_base base;
    uint32_t flags;
    int      pytorch_half_pixel, align_corners;
    int      have_sizes;
    float    scales[4];
    int64_t  sizes[4];
} resize_state;

/* scales (index 1 for opset 10, 2 after) and sizes (index 3) constants */
static int resize_params(const cort_node *node, float *scales, int64_t *sizes, int *have_sizes) {
    size_t si = node->opset < 11 ? 1 : 2;
    const cort_value *sc = xnn_const_input(node, si), *sz = node->opset >= 11 ? xnn_const_input(node, 3) : NULL;
    int has_sc_input = si < node->n_inputs && node->in_slot[si] >= 0;
    int has_sz_input = node->opset >= 11 && 3 < node->n_inputs && node->in_slot[3] >= 0;
    *have_sizes = 0;
    if (sc && sc->count == 4 && sc->type == CORT_TYPE_FLOAT) {
        memcpy(scales, sc->data, 4 * sizeof(float));
        return scales[0] == 1.0f && scales[1] == 1.0f && scales[2] > 0 && scales[3] > 0 && !(has_sz_input && (!sz || sz->count));
    }
    if (has_sc_input && (!sc || sc->count)) return 0;
    if (sz && sz->count == 4 && sz->type == CORT_TYPE_INT64) {
        memcpy(sizes, sz->data, 4 * sizeof(int64_t));
        *have_sizes = 1;
        return sizes[2] > 0 && sizes[3] > 0;
    }
    return 0;
}

static int resize_supports(const cort_node *node, const cort_tinfo *in, char *reason, size_t len) {
    if (strcmp(cort_attr_str(node, "mode", "nearest"), "linear")) XNN_REFUSE("mode is not linear");
    if (in[0].rank != 4) XNN_REFUSE("input rank %d (supported: 4)", in[0].rank);
    const char *ct = node->opset < 11 ? "asymmetric" : cort_attr_str(node, "coordinate_transformation_mode", "half_pixel");
    if (strcmp(ct, "half_pixel") && strcmp(ct, "pytorch_half_pixel") && strcmp(ct, "align_corners") &&
        strcmp(ct, "asymmetric"))
        XNN_REFUSE("coordinate_transformation_mode '%s'", ct);
    if (cort_attr_int(node, "antialias", 0)) XNN_REFUSE("antialias");
    float scales[4];
    int64_t sizes[4];
    int have_sizes;
    if (!resize_params(node, scales, sizes, &have_sizes)) XNN_REFUSE("scales/sizes are not constant, or resize N or C");
    return 1;
}

static cort_status *resize_create(const cort_node *node, const xnn_base *b, size_t key, xnn_operator_t *op) {
    enum xnn_status st = xnn_create_resize_bilinear2d_nhwc_f32(key, key, key, ((const resize_state *)b)->flags, op);
    return st == xnn_status_success ? NULL : xnn_call_error(node, "xnn_create_resize_bilinear2d_nhwc_f32", st);
}

static cort_status *resize_init(const cort_node *node, void **state) {
    resize_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = xnn_base_init(node, &s->base, resize_create, 0);
    if (st) { xnn_free_state(s); return st; }
    const char *ct = node->opset < 11 ? "asymmetric" : cort_attr_str(node, "coordinate_transformation_mode", "half_pixel");
    if (!strcmp(ct, "align_corners")) { s->flags = XNN_FLAG_ALIGN_CORNERS; s->align_corners = 1; }
    else if (!strcmp(ct, "asymmetric")) s->flags = XNN_FLAG_TENSORFLOW_LEGACY_MODE;
    else s->pytorch_half_pixel = !strcmp(ct, "pytorch_half_pixel");
    resize_params(node, s->scales, s->sizes, &s->have_sizes);
    *state = s;
    return NULL;
}

static cort_status *resize_run(cort_kernel_ctx *ctx) {
    resize_state *s = (resize_state *)ctx->state;
    const cort_value *X = ctx->inputs[0];
    if (X->kind != CORT_VKIND_TENSOR || X->type != CORT_TYPE_FLOAT || X->rank != 4 || !X->count) return xnn_run_cpu(ctx);
    int64_t o[4] = { X->shape[0], X->shape[1], 0, 0 };
    for (int i = 2; i < 4; i++) {
        if (s->have_sizes) o[i] = s->sizes[i];
        else {
            o[i] = (int64_t)floor((double)X->shape[i] * s->scales[i]);
            /* XNNPACK maps coordinates with in/out; ONNX with the given scale: equal only when exact */
            if (!s->align_corners && (double)X->shape[i] * s->scales[i] != (double)o[i]) return xnn_run_cpu(ctx);
        }
        if (o[i] <= 1 && (s->align_corners || s->pytorch_half_pixel)) return xnn_run_cpu(ctx);
        if (o[i] < 1 || o[i] > (1 << 24)) return xnn_run_cpu(ctx);
    }
    if (s->have_sizes && (s->sizes[0] != o[0] || s->sizes[1] != o[1])) return xnn_run_cpu(ctx);
    cort_value *Y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, o, 4, &Y));
    size_t n = (size_t)o[0], c = (size_t)o[1];
    const float *xin;
    float *tmp_in = NULL, *tmp_out = NULL, *xout = NULL;
    cort_status *st = xnn_input_nhwc(s->base.inst, ctx->pool, X, &xin, &tmp_in);
    if (st) return st;
    if ((st = xnn_output_begin(ctx->node, Y, &xout, &tmp_out))) goto done;
    xnn_operator_t op = NULL;
    if ((st = xnn_op_take(ctx->node, &s->base, c, &op))) goto done;
    pthreadpool_t tp = xnn_tp_take(s->base.inst);
    const char *call = "xnn_setup_resize_bilinear2d_nhwc_f32";
    enum xnn_status xs = xnn_setup_resize_bilinear2d_nhwc_f32(op, n, (size_t)X->shape[2], (size_t)X->shape[3], (size_t)o[2],
                                                              (size_t)o[3], xin, xout, tp);
    if (xs == xnn_status_success) { call = "xnn_run_operator"; xs = xnn_run_operator(op, tp); }
    xnn_tp_give(s->base.inst, tp);
    xnn_op_give(&s->base, c, op);
    if (xs != xnn_status_success) { st = xnn_call_error(ctx->node, call, xs); goto done; }
    xnn_output_done(s->base.inst, ctx->pool, Y, tmp_out);
    tmp_out = NULL;
done:
    cort_free(tmp_in);
    cort_free(tmp_out);
    return st;
}

/* ---------------------------------------------------------------- Pad (constant mode, non-negative pads) */
typedef struct pad_state {
    xnn_base base;
    size_t   rank;
    size_t   pre[XNN_MAX_TENSOR_DIMS], post[XNN_MAX_TENSOR_DIMS];
    float    value;
} pad_state;

static int pad_params(const cort_node *node, size_t rank, size_t *pre, size_t *post, float *value) {
    if (strcmp(cort_attr_str(node, "mode", "constant"), "constant")) return 0;
    const int64_t *p = NULL;
    size_t n;
    *value = 0.0f;
    if (node->opset < 11) {
        n = cort_attr_ints(node, "pads", &p);
        *value = cort_attr_float(node, "value", 0.0f);
    } else {
        const cort_value *pv = xnn_const_input(node, 1);
        if (!pv || pv->type != CORT_TYPE_INT64) return 0;
        p = pv->data;
        n = pv->count;
        if (node->n_inputs > 2 && node->in_slot[2] >= 0) {
            const cort_value *cv = xnn_const_input(node, 2);
            if (!cv || cv->type != CORT_TYPE_FLOAT || cv->count != 1) return 0;
            *value = ((const float *)cv->data)[0];
        }
        if (node->n_inputs > 3 && node->in_slot[3] >= 0) return 0;   /* axes */
    }
    if (n != 2 * rank || rank < 1 || rank > XNN_MAX_TENSOR_DIMS) return 0;
    for (size_t i = 0; i < rank; i++) {
        if (p[i] < 0 || p[rank + i] < 0 || p[i] > (1 << 24) || p[rank + i] > (1 << 24)) return 0;
        pre[i] = (size_t)p[i];
        post[i] = (size_t)p[rank + i];
    }
    return 1;
}

static int pad_supports(const cort_node *node, const cort_tinfo *in, char *reason, size_t len) {
    size_t pre[XNN_MAX_TENSOR_DIMS], post[XNN_MAX_TENSOR_DIMS];
    float v;
    if (in[0].rank < 1) XNN_REFUSE("input rank unknown or 0");
    if (!pad_params(node, (size_t)in[0].rank, pre, post, &v))
        XNN_REFUSE("not constant mode with constant non-negative pads (rank <= %d)", XNN_MAX_TENSOR_DIMS);
    return 1;
}

static cort_status *pad_create(const cort_node *node, const xnn_base *b, size_t key, xnn_operator_t *op) {
    (void)key;
    uint32_t bits;
    memcpy(&bits, &((const pad_state *)b)->value, sizeof bits);
    enum xnn_status st = xnn_create_constant_pad_nd_x32(&bits, 0, op);
    return st == xnn_status_success ? NULL : xnn_call_error(node, "xnn_create_constant_pad_nd_x32", st);
}

static cort_status *pad_init(const cort_node *node, void **state) {
    pad_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = xnn_base_init(node, &s->base, pad_create, 0);
    if (!st) {
        s->rank = (size_t)node->graph->slot_info[node->in_slot[0]].rank;
        if (!pad_params(node, s->rank, s->pre, s->post, &s->value))
            st = cort_node_error(node, CORT_ERROR_RUNTIME, "pads changed after selection");
    }
    if (!st) st = xnn_op_prime(node, &s->base, 0);
    if (st) { xnn_free_state(s); return st; }
    *state = s;
    return NULL;
}

static cort_status *pad_run(cort_kernel_ctx *ctx) {
    pad_state *s = (pad_state *)ctx->state;
    const cort_value *X = ctx->inputs[0];
    if (X->kind != CORT_VKIND_TENSOR || X->type != CORT_TYPE_FLOAT || X->rank != s->rank || !X->count ||
        xnn_any_nhwc_input(ctx))
        return xnn_run_cpu(ctx);
    int64_t o[XNN_MAX_TENSOR_DIMS];
    size_t ish[XNN_MAX_TENSOR_DIMS];
    for (size_t i = 0; i < s->rank; i++) {
        ish[i] = (size_t)X->shape[i];
        o[i] = X->shape[i] + (int64_t)(s->pre[i] + s->post[i]);
    }
    cort_value *Y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, o, s->rank, &Y));
    const float *in;
    float *tmp = NULL;
    CORT_TRY(xnn_input(X, &in, &tmp));
    xnn_operator_t op = NULL;
    cort_status *st = xnn_op_take(ctx->node, &s->base, 0, &op);
    if (st) { cort_free(tmp); return st; }
    pthreadpool_t tp = xnn_tp_take(s->base.inst);
    const char *call = "xnn_setup_constant_pad_nd_x32";
    enum xnn_status xs = xnn_setup_constant_pad_nd_x32(op, s->rank, ish, s->pre, s->post, in, Y->data, tp);
    if (xs == xnn_status_success) { call = "xnn_run_operator"; xs = xnn_run_operator(op, tp); }
    xnn_tp_give(s->base.inst, tp);
    xnn_op_give(&s->base, 0, op);
    cort_free(tmp);
    return xs == xnn_status_success ? NULL : xnn_call_error(ctx->node, call, xs);
}

/* ---------------------------------------------------------------- DepthToSpace (DCR) */
typedef struct d2s_state { xnn_base base; uint32_t block; } d2s_state;

static int d2s_supports(const cort_node *node, const cort_tinfo *in, char *reason, size_t len) {
    if (strcmp(cort_attr_str(node, "mode", "DCR"), "DCR")) XNN_REFUSE("mode CRD");
    int64_t b = cort_attr_int(node, "blocksize", 0);
    if (b < 2 || b > 1024) XNN_REFUSE("blocksize %lld", (long long)b);
    if (in[0].rank != 4) XNN_REFUSE("input rank %d (supported: 4)", in[0].rank);
    if (in[0].dims[1] >= 0 && in[0].dims[1] % (b * b)) XNN_REFUSE("channels not divisible by blocksize^2");
    return 1;
}

static cort_status *d2s_create(const cort_node *node, const xnn_base *b, size_t key, xnn_operator_t *op) {
    uint32_t bs = ((const d2s_state *)b)->block;
    enum xnn_status st = xnn_create_depth_to_space_nhwc_x32(key, key * bs * bs, key, bs, 0, op);
    return st == xnn_status_success ? NULL : xnn_call_error(node, "xnn_create_depth_to_space_nhwc_x32", st);
}

static cort_status *d2s_init(const cort_node *node, void **state) {
    d2s_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = xnn_base_init(node, &s->base, d2s_create, 0);
    if (st) { xnn_free_state(s); return st; }
    s->block = (uint32_t)cort_attr_int(node, "blocksize", 2);
    *state = s;
    return NULL;
}

static cort_status *d2s_run(cort_kernel_ctx *ctx) {
    d2s_state *s = (d2s_state *)ctx->state;
    const cort_value *X = ctx->inputs[0];
    int64_t b = s->block;
    if (X->kind != CORT_VKIND_TENSOR || X->type != CORT_TYPE_FLOAT || X->rank != 4 || !X->count || X->shape[1] % (b * b))
        return xnn_run_cpu(ctx);
    int64_t o[4] = { X->shape[0], X->shape[1] / (b * b), X->shape[2] * b, X->shape[3] * b };
    cort_value *Y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, o, 4, &Y));
    size_t n = (size_t)o[0], c = (size_t)o[1];
    const float *xin;
    float *tmp_in = NULL, *tmp_out = NULL, *xout = NULL;
    cort_status *st = xnn_input_nhwc(s->base.inst, ctx->pool, X, &xin, &tmp_in);
    if (st) return st;
    if ((st = xnn_output_begin(ctx->node, Y, &xout, &tmp_out))) goto done;
    xnn_operator_t op = NULL;
    if ((st = xnn_op_take(ctx->node, &s->base, c, &op))) goto done;
    pthreadpool_t tp = xnn_tp_take(s->base.inst);
    const char *call = "xnn_setup_depth_to_space_nhwc_x32";
    enum xnn_status xs = xnn_setup_depth_to_space_nhwc_x32(op, n, (size_t)X->shape[2], (size_t)X->shape[3], xin, xout, tp);
    if (xs == xnn_status_success) { call = "xnn_run_operator"; xs = xnn_run_operator(op, tp); }
    xnn_tp_give(s->base.inst, tp);
    xnn_op_give(&s->base, c, op);
    if (xs != xnn_status_success) { st = xnn_call_error(ctx->node, call, xs); goto done; }
    xnn_output_done(s->base.inst, ctx->pool, Y, tmp_out);
    tmp_out = NULL;
done:
    cort_free(tmp_in);
    cort_free(tmp_out);
    return st;
}

/* ---------------------------------------------------------------- Concat along channels (3-D/4-D)
 * No XNNPACK operator: a plain copy that keeps channels-last data channels-last, so a Concat between
 * XNNPACK convolutions (SqueezeNet's fire modules) is no layout boundary. */
typedef struct concat_state { xnn_base base; } concat_state;

static int concat_supports(const cort_node *node, const cort_tinfo *in, char *reason, size_t len) {
    int r = in[0].rank;
    if (r != 3 && r != 4) XNN_REFUSE("input rank %d (supported: 3, 4)", r);
    int64_t axis = cort_attr_int(node, "axis", 1);
    if (axis != 1 && axis != 1 - r) XNN_REFUSE("axis %lld is not the channel axis", (long long)axis);
    for (size_t i = 0; i < node->n_inputs; i++)
        if (!in[i].present || !xnn_float_input(in, node->n_inputs, i) || in[i].rank != r)
            XNN_REFUSE("input %zu is not a float tensor of rank %d", i, r);
    return 1;
}

static cort_status *concat_init(const cort_node *node, void **state) {
    concat_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = xnn_base_init(node, &s->base, NULL, 0);
    if (st) { xnn_free_state(s); return st; }
    *state = s;
    return NULL;
}

/* one input's channels [off, off + c) of the output, over n * sp pixels; layouts per side */
typedef struct cc_args { const float *src; float *dst; size_t n, c, sp, ct, off; int in_nhwc, out_nhwc; } cc_args;

static void cc_range(void *p, size_t begin, size_t end) {   /* range of (image, pixel) rows */
    const cc_args *a = p;
    for (size_t r = begin; r < end; r++) {
        size_t b = r / a->sp, px = r % a->sp;
        float *d = a->out_nhwc ? a->dst + r * a->ct + a->off : a->dst + (b * a->ct + a->off) * a->sp + px;
        size_t dstep = a->out_nhwc ? 1 : a->sp;
        const float *sr = a->in_nhwc ? a->src + r * a->c : a->src + b * a->c * a->sp + px;
        size_t sstep = a->in_nhwc ? 1 : a->sp;
        if (dstep == 1 && sstep == 1) { memcpy(d, sr, a->c * sizeof(float)); continue; }
        for (size_t c = 0; c < a->c; c++) d[c * dstep] = sr[c * sstep];
    }
}

static cort_status *concat_run(cort_kernel_ctx *ctx) {
    concat_state *s = (concat_state *)ctx->state;
    const cort_value *X0 = ctx->inputs[0];
    if (!X0 || X0->kind != CORT_VKIND_TENSOR || X0->type != CORT_TYPE_FLOAT || (X0->rank != 3 && X0->rank != 4))
        return xnn_run_cpu(ctx);
    int64_t o[4];
    memcpy(o, X0->shape, X0->rank * sizeof o[0]);
    o[1] = 0;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const cort_value *X = ctx->inputs[i];
        if (!X || X->kind != CORT_VKIND_TENSOR || X->type != CORT_TYPE_FLOAT || X->rank != X0->rank ||
            X->shape[0] != X0->shape[0] || xnn_spatial(X->shape, X->rank) != xnn_spatial(X0->shape, X0->rank) ||
            memcmp(X->shape + 2, X0->shape + 2, (X->rank - 2) * sizeof o[0]))
            return xnn_run_cpu(ctx);   /* the reference reports the mismatch */
        o[1] += X->shape[1];
    }
    cort_value *Y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, o, X0->rank, &Y));
    Y->layout = (uint8_t)xnn_want_nhwc(ctx->node, Y->shape, Y->rank);
    if (!Y->count) return NULL;
    int out_nhwc = xnn_is_nhwc(Y);
    size_t n = (size_t)o[0], sp = xnn_spatial(o, X0->rank), off = 0;
    /* output wanted channels-last: placing each NCHW input costs a transpose; concatenating NCHW and
     * transposing the result once costs one per channels-last input plus one. Take the cheaper. */
    float *dst = Y->data, *tmp = NULL;
    size_t in_nhwc = 0;
    for (size_t i = 0; i < ctx->n_inputs; i++) in_nhwc += (size_t)xnn_is_nhwc(ctx->inputs[i]);
    if (out_nhwc && (in_nhwc == 0 || in_nhwc + 1 < ctx->n_inputs - in_nhwc)) {
        if (!(tmp = xnn_buf(Y->count))) return cort_error_oom();
        dst = tmp;
        out_nhwc = 0;
    }
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const cort_value *X = ctx->inputs[i];
        size_t c = (size_t)X->shape[1];
        cc_args a = { X->data, dst, n, c, sp, (size_t)o[1], off, xnn_is_nhwc(X), out_nhwc };
        off += c;
        if (!c) continue;
        if (!a.in_nhwc && !out_nhwc) {   /* NCHW both sides: one block per image */
            for (size_t b = 0; b < n; b++)
                memcpy(dst + (b * a.ct + a.off) * sp, (const float *)X->data + b * c * sp, c * sp * sizeof(float));
            continue;
        }
        if (a.in_nhwc != out_nhwc && c > 1 && sp > 1) xnn_owner_count_transpose(s->base.inst->owner);
        cort_parallel_for(ctx->pool, n * sp, 4096 / c + 1, cc_range, &a);
    }
    if (tmp) {
        xnn_nchw_to_nhwc(s->base.inst, ctx->pool, tmp, Y->data, n, (size_t)o[1], sp);
        cort_free(tmp);
    }
    return NULL;
}

static const cort_op_def concat_def = { .name = "Concat", .domain = "", .min_opset = 4, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = concat_init, .free_state = xnn_free_state,
    .infer = xnn_infer, .run = concat_run };

static const cort_op_def resize_def = { .name = "Resize", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = resize_init, .free_state = xnn_free_state,
    .infer = xnn_infer, .run = resize_run };
static const cort_op_def pad_def = { .name = "Pad", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = pad_init, .free_state = xnn_free_state,
    .infer = xnn_infer, .run = pad_run };
static const cort_op_def d2s_def = { .name = "DepthToSpace", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = d2s_init, .free_state = xnn_free_state,
    .infer = xnn_infer, .run = d2s_run };

const xnn_kind xnn_shape_kinds[] = {
    { "Resize", 10, resize_supports, &resize_def, 0 },
    { "Pad", 2, pad_supports, &pad_def, 0 },
    { "DepthToSpace", 1, d2s_supports, &d2s_def, 0 },
    { "Concat", 4, concat_supports, &concat_def, 0 },
    { NULL, 0, NULL, NULL, 0 },
};
#else
typedef int xnn_shape_unused;
#endif
