/* MaxPool (floor and ceil mode), AveragePool (floor mode), 1-D and 2-D, and GlobalAveragePool on
 * XNNPACK's NHWC pooling.
 * XNNPACK fixes the channel count (and the padding) at creation, so operators are keyed by the
 * channel count — and by the input size when auto_pad SAME or ceil_mode makes the padding depend on it. */
#ifdef CORT_HAVE_XNNPACK
#include <string.h>
#include "xnn_internal.h"

enum { POOL_MAX, POOL_AVG, POOL_GLOBAL_AVG };

typedef struct pool_state {
    xnn_base   base;
    int        kind;
    xnn_window w;
    int        ceil;   /* MaxPool ceil_mode: extra end padding (ignored by max pooling) per input size */
} pool_state;

#define KEY(c, h, w) (((size_t)(c) << 40) | ((size_t)(h) << 20) | (size_t)(w))

static enum xnn_status pool_create_raw(int kind, const xnn_window *w, const uint32_t *pad, size_t c, float lo, float hi,
                                       xnn_operator_t *op) {
    if (kind == POOL_MAX)
        return xnn_create_max_pooling2d_nhwc_f32(pad[0], pad[3], pad[2], pad[1], w->k[0], w->k[1], w->s[0], w->s[1],
                                                 w->d[0], w->d[1], c, c, c, lo, hi, 0, op);
    if (kind == POOL_AVG)
        return xnn_create_average_pooling2d_nhwc_f32(pad[0], pad[3], pad[2], pad[1], w->k[0], w->k[1], w->s[0], w->s[1],
                                                     c, c, c, lo, hi, 0, op);
    return xnn_create_global_average_pooling_nwc_f32(c, c, c, lo, hi, 0, op);
}

static int pool_kind(const cort_node *node) {
    return !strcmp(node->op_type, "MaxPool") ? POOL_MAX : !strcmp(node->op_type, "AveragePool") ? POOL_AVG : POOL_GLOBAL_AVG;
}

static int pool_supports(const cort_node *node, const cort_tinfo *in, char *reason, size_t len) {
    int kind = pool_kind(node);
    if (in[0].rank >= 0 && in[0].rank < 3) XNN_REFUSE("input rank %d", in[0].rank);
    if (kind == POOL_GLOBAL_AVG) return 1;
    const int64_t *ks;
    size_t nk = cort_attr_ints(node, "kernel_shape", &ks);
    if (nk != 1 && nk != 2) XNN_REFUSE("%zu-D pooling (supported: 1-D, 2-D)", nk);
    if (in[0].rank >= 0 && (size_t)in[0].rank != nk + 2) XNN_REFUSE("input rank %d for %zu-D pooling", in[0].rank, nk);
    xnn_window w;
    if (!xnn_window_parse(node, (int)nk, NULL, &w, reason, len)) return 0;
    if (cort_attr_int(node, "ceil_mode", 0) && (kind != POOL_MAX || w.same_upper || w.same_lower))
        XNN_REFUSE("ceil_mode = 1 (supported for MaxPool without auto_pad SAME)");
    if (w.k[0] * w.k[1] == 1) XNN_REFUSE("1x1 pooling");
    if (kind == POOL_AVG) {
        if (w.d[0] != 1 || w.d[1] != 1) XNN_REFUSE("dilated average pooling");
        int padded = w.same_upper || w.same_lower || w.pad[0] || w.pad[1] || w.pad[2] || w.pad[3];
        if (padded && cort_attr_int(node, "count_include_pad", 0))
            XNN_REFUSE("count_include_pad = 1 with padding (XNNPACK averages over the valid pixels only)");
    }
    /* let XNNPACK judge the parameters once (cheap: pooling has no weights) */
    uint32_t pad[4] = { 0, 0, 0, 0 };
    if (!w.same_upper && !w.same_lower) memcpy(pad, w.pad, sizeof pad);
    xnn_operator_t op = NULL;
    enum xnn_status st = pool_create_raw(kind, &w, pad, 1, -INFINITY, INFINITY, &op);
    if (st != xnn_status_success) XNN_REFUSE("XNNPACK rejects the pooling parameters (%s)", xnn_status_str(st));
    xnn_delete_operator(op);
    return 1;
}

/* Padding for input size hw: SAME, or the given pads plus, in ceil mode, the end padding that makes
 * XNNPACK's floor division yield ONNX's ceil output size. 0 when that last window would start past
 * the input and its left padding (ONNX implementations drop such a window; the CPU kernel decides). */
static int pool_pads(const pool_state *s, const int64_t *hw, uint32_t *pad) {
    memcpy(pad, s->w.pad, 4 * sizeof *pad);
    if (s->w.same_upper || s->w.same_lower) { xnn_window_same_pads(&s->w, hw, pad); return 1; }
    if (!s->ceil) return 1;
    for (int i = 0; i < 2; i++) {
        int64_t ek = (int64_t)(s->w.k[i] - 1) * s->w.d[i] + 1, st = s->w.s[i];
        int64_t span = hw[i] + pad[i] + pad[2 + i] - ek;
        if (span < 0) return 0;
        int64_t out = (span + st - 1) / st + 1;
        if ((out - 1) * st >= hw[i] + pad[i]) return 0;
        pad[2 + i] += (uint32_t)((out - 1) * st - span);
    }
    return 1;
}

static cort_status *pool_create(const cort_node *node, const xnn_base *b, size_t key, xnn_operator_t *op) {
    const pool_state *s = (const pool_state *)b;
    uint32_t pad[4];
    int64_t hw[2] = { (int64_t)((key >> 20) & 0xfffff), (int64_t)(key & 0xfffff) };
    if (!pool_pads(s, hw, pad)) return cort_node_error(node, CORT_ERROR_RUNTIME, "pooling window outside the input");
    enum xnn_status st = pool_create_raw(s->kind, &s->w, pad, key >> 40, b->out_min, b->out_max, op);
    return st == xnn_status_success ? NULL : xnn_call_error(node, "xnn_create_*_pooling_f32", st);
}

static cort_status *pool_init(const cort_node *node, void **state) {
    pool_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    s->kind = pool_kind(node);
    s->ceil = s->kind == POOL_MAX && cort_attr_int(node, "ceil_mode", 0);
    cort_status *st = xnn_base_init(node, &s->base, pool_create, 1);
    char reason[128];
    if (!st && s->kind != POOL_GLOBAL_AVG) {
        const int64_t *ks;
        size_t nk = cort_attr_ints(node, "kernel_shape", &ks);
        if (!xnn_window_parse(node, (int)nk, NULL, &s->w, reason, sizeof reason))
            st = cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "%s", reason);
    }
    if (st) { xnn_free_state(s); return st; }
    *state = s;
    return NULL;
}

static cort_status *pool_run(cort_kernel_ctx *ctx) {
    pool_state *s = (pool_state *)ctx->state;
    const cort_node *node = ctx->node;
    const cort_value *X = ctx->inputs[0];
    if (X->kind != CORT_VKIND_TENSOR || X->type != CORT_TYPE_FLOAT || X->rank < 3) return xnn_run_cpu(ctx);
    size_t n = (size_t)X->shape[0], c = (size_t)X->shape[1], sp = 1;
    for (size_t i = 2; i < X->rank; i++) sp *= (size_t)X->shape[i];
    int64_t oshape[CORT_MAX_RANK];
    size_t key;
    int64_t hw[2] = { 1, 1 };
    if (s->kind == POOL_GLOBAL_AVG) {
        oshape[0] = (int64_t)n;
        oshape[1] = (int64_t)c;
        for (size_t i = 2; i < X->rank; i++) oshape[i] = 1;
        key = KEY(c, 0, 0);
    } else {
        int nd = s->w.nd;
        if (X->rank != (size_t)nd + 2) return xnn_run_cpu(ctx);
        hw[0] = nd == 2 ? X->shape[2] : 1;
        hw[1] = X->shape[nd + 1];
        if (c >= (1u << 23) || hw[0] >= (1 << 20) || hw[1] >= (1 << 20)) return xnn_run_cpu(ctx);
        uint32_t pad[4];
        if (!pool_pads(s, hw, pad)) return xnn_run_cpu(ctx);
        int per_size = s->w.same_upper || s->w.same_lower || s->ceil;   /* padding depends on the input size */
        key = per_size ? KEY(c, hw[0], hw[1]) : KEY(c, 0, 0);
        int64_t o[2];
        for (int i = 0; i < 2; i++) {
            int64_t span = hw[i] + pad[i] + pad[2 + i] - ((int64_t)(s->w.k[i] - 1) * s->w.d[i] + 1);
            if (span < 0) return xnn_run_cpu(ctx);   /* window larger than the padded input: the reference decides */
            o[i] = span / s->w.s[i] + 1;
        }
        oshape[0] = (int64_t)n;
        oshape[1] = (int64_t)c;
        if (nd == 2) { oshape[2] = o[0]; oshape[3] = o[1]; }
        else oshape[2] = o[1];
    }
    if (!X->count || !c) return xnn_run_cpu(ctx);
    cort_value *Y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, oshape, X->rank, &Y));
    if (!Y->count) return NULL;
    cort_status *st = NULL;
    float *tmp_in = NULL, *tmp_out = NULL, *xout = NULL;
    const float *xin;
    if ((st = xnn_input_nhwc(s->base.inst, ctx->pool, X, &xin, &tmp_in))) return st;
    if ((st = xnn_output_begin(node, Y, &xout, &tmp_out))) goto done;
    xnn_operator_t op = NULL;
    if ((st = xnn_op_take(node, &s->base, key, &op))) goto done;
    pthreadpool_t tp = xnn_tp_take(s->base.inst);
    enum xnn_status xs;
    const char *call = "xnn_setup_*_pooling_f32";
    if (s->kind == POOL_MAX) xs = xnn_setup_max_pooling2d_nhwc_f32(op, n, (size_t)hw[0], (size_t)hw[1], xin, xout, tp);
    else if (s->kind == POOL_AVG) xs = xnn_setup_average_pooling2d_nhwc_f32(op, n, (size_t)hw[0], (size_t)hw[1], xin, xout, tp);
    else xs = xnn_setup_global_average_pooling_nwc_f32(op, n, sp, xin, xout, tp);
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

static const cort_op_def maxpool_def = { .name = "MaxPool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = pool_init, .free_state = xnn_free_state,
    .infer = xnn_infer, .run = pool_run };
static const cort_op_def avgpool_def = { .name = "AveragePool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = pool_init, .free_state = xnn_free_state,
    .infer = xnn_infer, .run = pool_run };
static const cort_op_def gavgpool_def = { .name = "GlobalAveragePool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = pool_init, .free_state = xnn_free_state,
    .infer = xnn_infer, .run = pool_run };

const xnn_kind xnn_pool_kinds[] = {
    { "MaxPool", 1, pool_supports, &maxpool_def, 1 },
    { "AveragePool", 7, pool_supports, &avgpool_def, 1 },
    { "GlobalAveragePool", 1, pool_supports, &gavgpool_def, 1 },
    { NULL, 0, NULL, NULL, 0 },
};
#else
typedef int xnn_pool_unused;
#endif
