/* Gemm and MatMul with a constant 2-D weight matrix, as XNNPACK fully-connected operators:
 * Y[batch, N] = X[batch, K] * W + bias, batch = every leading dimension of X flattened. */
#ifdef CORT_HAVE_XNNPACK
#include <string.h>
#include "xnn_internal.h"

typedef struct fc_state {
    xnn_base     base;
    int          gemm;
    size_t       k, n;
    const float *weights;   /* [K][N] when transposed, else [N][K] */
    uint32_t     flags;
    float       *owned;     /* weights scaled by alpha (else they point into the model) */
    float       *bias;
} fc_state;

static int fc_supports(const cort_node *node, const cort_tinfo *in, char *reason, size_t len) {
    int gemm = !strcmp(node->op_type, "Gemm");
    if (node->n_inputs < 2) XNN_REFUSE("missing B");
    const cort_value *B = xnn_const_input(node, 1);
    if (!B || B->type != CORT_TYPE_FLOAT || B->rank != 2) XNN_REFUSE("B is not a constant 2-D float tensor");
    if (!B->count) XNN_REFUSE("B is empty");
    int64_t trans_b = gemm ? cort_attr_int(node, "transB", 0) : 0;
    int64_t k = trans_b ? B->shape[1] : B->shape[0], n = trans_b ? B->shape[0] : B->shape[1];
    if (gemm) {
        if (cort_attr_int(node, "transA", 0)) XNN_REFUSE("transA = 1");
        if (in[0].rank >= 0 && in[0].rank != 2) XNN_REFUSE("A has rank %d", in[0].rank);
        if (node->n_inputs > 2 && node->in_slot[2] >= 0) {
            const cort_value *C = xnn_const_input(node, 2);
            if (!C || C->type != CORT_TYPE_FLOAT) XNN_REFUSE("C is not a constant float tensor");
            int vec = C->count == 1 || (C->count == (size_t)n && C->shape[C->rank - 1] == n);
            if (!vec || C->rank > 2) XNN_REFUSE("C is not broadcast along rows (bias)");
        }
    } else if (in[0].rank >= 0 && in[0].rank < 2) {
        XNN_REFUSE("A has rank %d", in[0].rank);
    }
    if (in[0].rank >= 1 && in[0].dims[in[0].rank - 1] >= 0 && in[0].dims[in[0].rank - 1] != k)
        XNN_REFUSE("inner dimensions differ");
    return 1;
}

static cort_status *fc_create(const cort_node *node, const xnn_base *b, size_t key, xnn_operator_t *op) {
    (void)key;
    const fc_state *s = (const fc_state *)b;
    enum xnn_status st = xnn_create_fully_connected_nc_f32(s->k, s->n, s->k, s->n, s->weights, s->bias, b->out_min,
                                                           b->out_max, s->flags, op);
    return st == xnn_status_success ? NULL : xnn_call_error(node, "xnn_create_fully_connected_nc_f32", st);
}

static cort_status *fc_init(const cort_node *node, void **state) {
    fc_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = xnn_base_init(node, &s->base, fc_create, 1);
    if (st) goto error;
    s->gemm = !strcmp(node->op_type, "Gemm");
    const cort_value *B = xnn_const_input(node, 1);
    int64_t trans_b = s->gemm ? cort_attr_int(node, "transB", 0) : 0;
    s->k = (size_t)(trans_b ? B->shape[1] : B->shape[0]);
    s->n = (size_t)(trans_b ? B->shape[0] : B->shape[1]);
    s->flags = trans_b ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS;
    s->weights = B->data;
    float alpha = s->gemm ? cort_attr_float(node, "alpha", 1.0f) : 1.0f;
    float beta = s->gemm ? cort_attr_float(node, "beta", 1.0f) : 1.0f;
    if (alpha != 1.0f) {
        if (!(s->owned = cort_malloc(B->count * sizeof(float)))) { st = cort_error_oom(); goto error; }
        for (size_t i = 0; i < B->count; i++) s->owned[i] = alpha * ((const float *)B->data)[i];
        s->weights = s->owned;
    }
    const cort_value *C = s->gemm ? xnn_const_input(node, 2) : NULL;
    if (C) {
        if (!(s->bias = cort_malloc(s->n * sizeof(float)))) { st = cort_error_oom(); goto error; }
        for (size_t j = 0; j < s->n; j++) s->bias[j] = beta * ((const float *)C->data)[C->count == 1 ? 0 : j];
    }
    if ((st = xnn_op_prime(node, &s->base, 0))) goto error;
    *state = s;
    return NULL;
error:
    cort_free(s->owned);
    cort_free(s->bias);
    xnn_free_state(s);
    return st;
}

static void fc_free(void *state) {
    fc_state *s = state;
    if (!s) return;
    cort_free(s->owned);
    cort_free(s->bias);
    xnn_free_state(s);
}

static cort_status *fc_run(cort_kernel_ctx *ctx) {
    fc_state *s = (fc_state *)ctx->state;
    const cort_node *node = ctx->node;
    const cort_value *A = ctx->inputs[0];
    if (A->kind != CORT_VKIND_TENSOR || A->type != CORT_TYPE_FLOAT || A->rank < 2 || (s->gemm && A->rank != 2) ||
        A->shape[A->rank - 1] != (int64_t)s->k || xnn_any_nhwc_input(ctx))
        return xnn_run_cpu(ctx);   /* the reference kernel reports the mismatch (and reads NCHW) */
    int64_t oshape[CORT_MAX_RANK];
    memcpy(oshape, A->shape, A->rank * sizeof *oshape);
    oshape[A->rank - 1] = (int64_t)s->n;
    cort_value *Y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, oshape, A->rank, &Y));
    size_t batch = s->k ? A->count / s->k : 0;
    if (!Y->count) return NULL;
    if (!batch) return xnn_run_cpu(ctx);
    const float *in;
    float *tmp = NULL;
    CORT_TRY(xnn_input(A, &in, &tmp));
    xnn_operator_t op = NULL;
    cort_status *st = xnn_op_take(node, &s->base, 0, &op);
    if (st) { cort_free(tmp); return st; }
    pthreadpool_t tp = xnn_tp_take(s->base.inst);
    const char *call = "xnn_setup_fully_connected_nc_f32";
    enum xnn_status xs = xnn_setup_fully_connected_nc_f32(op, batch, in, Y->data, tp);
    if (xs == xnn_status_success) { call = "xnn_run_operator"; xs = xnn_run_operator(op, tp); }
    xnn_tp_give(s->base.inst, tp);
    xnn_op_give(&s->base, 0, op);
    cort_free(tmp);
    return xs == xnn_status_success ? NULL : xnn_call_error(node, call, xs);
}

static const cort_op_def gemm_def = { .name = "Gemm", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = fc_init, .free_state = fc_free, .infer = xnn_infer,
    .run = fc_run };
static const cort_op_def matmul_def = { .name = "MatMul", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = fc_init, .free_state = fc_free, .infer = xnn_infer,
    .run = fc_run };

const xnn_kind xnn_gemm_kinds[] = {
    { "Gemm", 7, fc_supports, &gemm_def, 1 },
    { "MatMul", 1, fc_supports, &matmul_def, 1 },
    { NULL, 0, NULL, NULL, 0 },
};
#else
typedef int xnn_gemm_unused;
#endif
