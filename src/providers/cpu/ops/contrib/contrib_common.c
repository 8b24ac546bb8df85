/* Shared parts of the com.microsoft ops: activations by name, and the delegation of an op to
 * another op's kernel with an activation folded into a copy of the node (see contrib.h). */
#include <math.h>
#include <string.h>
#include "contrib.h"
#include "../../../../core/alloc.h"

/* a NaN parameter stands for one the node does not give (FusedGemm's activation_alpha/beta/gamma) */
static float param(const float *p, size_t n, size_t k, float dflt) { return k < n && p[k] == p[k] ? p[k] : dflt; }

cort_status *ctb_act_parse(const cort_node *node, const char *name, const float *p, size_t n, ctb_act *out) {
    memset(out, 0, sizeof *out);
    if (!name || !name[0] || !strcmp(name, "Identity")) return NULL;
    if (!strcmp(name, "Relu")) out->kind = CORT_ACT_RELU;
    else if (!strcmp(name, "Sigmoid")) out->kind = CORT_ACT_SIGMOID;
    else if (!strcmp(name, "LeakyRelu")) { out->kind = CORT_ACT_LEAKY_RELU; out->alpha = param(p, n, 0, 0.01f); }
    else if (!strcmp(name, "Clip")) {
        out->kind = CORT_ACT_CLIP;
        out->alpha = param(p, n, 0, -INFINITY);
        out->beta = param(p, n, 1, INFINITY);
    } else if (!strcmp(name, "HardSigmoid")) {
        out->kind = CORT_ACT_HARD_SIGMOID;
        out->alpha = param(p, n, 0, 0.2f);
        out->beta = param(p, n, 1, 0.5f);
    } else if (!strcmp(name, "HardSwish")) out->kind = CORT_ACT_HARD_SWISH;
    else if (!strcmp(name, "Tanh")) out->extra = CTB_EXTRA_TANH;
    else if (!strcmp(name, "Elu")) { out->extra = CTB_EXTRA_ELU; out->e_alpha = param(p, n, 0, 1.0f); }
    else if (!strcmp(name, "Softplus")) out->extra = CTB_EXTRA_SOFTPLUS;
    else if (!strcmp(name, "ThresholdedRelu")) {
        out->extra = CTB_EXTRA_THRESHOLDED_RELU;
        out->e_alpha = param(p, n, 0, 1.0f);
    } else if (!strcmp(name, "ScaledTanh")) {
        out->extra = CTB_EXTRA_SCALED_TANH;
        out->e_alpha = param(p, n, 0, 1.0f);
        out->e_beta = param(p, n, 1, 1.0f);
    } else if (!strcmp(name, "Selu")) {
        out->extra = CTB_EXTRA_SELU;
        out->e_alpha = param(p, n, 0, 1.67326319217681884765625f);
        out->e_gamma = param(p, n, 2, 1.05070102214813232421875f);
    } else if (!strcmp(name, "Gelu")) out->extra = CTB_EXTRA_GELU;
    else
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'activation' = '%s' is not supported "
                               "(Relu, Sigmoid, Tanh, LeakyRelu, Clip, HardSigmoid, HardSwish, Elu, Selu, Softplus, "
                               "ThresholdedRelu, ScaledTanh, Gelu)", name);
    return NULL;
}

void ctb_act_extra(const ctb_act *a, float *y, size_t n) {
    const float al = a->e_alpha, be = a->e_beta, ga = a->e_gamma;
    switch (a->extra) {
    case CTB_EXTRA_TANH: for (size_t i = 0; i < n; i++) y[i] = tanhf(y[i]); break;
    case CTB_EXTRA_ELU: for (size_t i = 0; i < n; i++) y[i] = y[i] >= 0.0f ? y[i] : al * expm1f(y[i]); break;
    case CTB_EXTRA_SOFTPLUS:
        /* log(1 + e^x) without overflow for large x */
        for (size_t i = 0; i < n; i++) y[i] = y[i] > 0.0f ? y[i] + log1pf(expf(-y[i])) : log1pf(expf(y[i]));
        break;
    case CTB_EXTRA_THRESHOLDED_RELU: for (size_t i = 0; i < n; i++) y[i] = y[i] > al ? y[i] : 0.0f; break;
    case CTB_EXTRA_SCALED_TANH: for (size_t i = 0; i < n; i++) y[i] = al * tanhf(be * y[i]); break;
    case CTB_EXTRA_SELU:
        for (size_t i = 0; i < n; i++) y[i] = ga * (y[i] > 0.0f ? y[i] : al * expm1f(y[i]));
        break;
    case CTB_EXTRA_GELU: fu_gelu_f32(y, y, n); break;
    default: break;
    }
}

/* The node as the inner kernel sees it: the activation and sum input folded in. Built per call
 * (a struct copy) so that whatever the passes changed on the real node since init is seen. */
static void inner_node(const cort_node *node, const ctb_delegate *d, cort_node *out) {
    *out = *node;
    out->op = d->inner;
    out->act = d->act.kind;
    out->act_alpha = d->act.alpha;
    out->act_beta = d->act.beta;
    out->sum_input = d->sum_input;
    if (d->opset) out->opset = d->opset;
}

void ctb_delegate_free(void *state) {
    ctb_delegate *d = state;
    if (!d) return;
    if (d->inner->free_state && d->inner_state) d->inner->free_state(d->inner_state);
    cort_free(d);
}

cort_status *ctb_delegate_init(const cort_node *node, const cort_op_def *inner,
                               cort_status *(*fill)(const cort_node *node, ctb_delegate *d), void **state) {
    ctb_delegate *d = cort_calloc(1, sizeof *d);
    if (!d) return cort_error_oom();
    d->inner = inner;
    cort_status *st = fill(node, d);
    if (!st && inner->init) {
        cort_node n;
        inner_node(node, d, &n);
        st = inner->init(&n, &d->inner_state);
        /* what the inner init packed is never read from the model again: the real node says so */
        ((cort_node *)node)->const_packed |= n.const_packed;
    }
    if (st) { ctb_delegate_free(d); return st; }
    *state = d;
    return NULL;
}

cort_status *ctb_delegate_infer(cort_infer_ctx *ctx) {
    const ctb_delegate *d = ctx->state;
    cort_node n;
    inner_node(ctx->node, d, &n);
    n.state = d->inner_state;
    cort_infer_ctx c = *ctx;
    c.node = &n;
    c.state = d->inner_state;
    if (d->opset) c.opset = d->opset;
    return d->inner->infer(&c);
}

cort_status *ctb_delegate_run(cort_kernel_ctx *ctx) {
    const ctb_delegate *d = ctx->state;
    cort_node n;
    inner_node(ctx->node, d, &n);
    n.state = d->inner_state;
    cort_kernel_ctx c = *ctx;
    c.node = &n;
    c.state = d->inner_state;
    if (d->opset) c.opset = d->opset;
    CORT_TRY(d->inner->run(&c));
    if (d->act.extra && ctx->n_outputs && ctx->outputs[0]) {
        cort_value *y = ctx->outputs[0];
        if (y->kind == CORT_VKIND_TENSOR && y->type == CORT_TYPE_FLOAT) ctb_act_extra(&d->act, y->data, y->count);
    }
    return NULL;
}

cort_status *ctb_run_inner(cort_kernel_ctx *ctx, const ctb_delegate *d, cort_value *const *inputs, size_t n_in,
                           cort_value **outputs, size_t n_out) {
    int32_t in_slot[16], out_slot[4];
    if (n_in > 16 || n_out > 4)
        return cort_node_error(ctx->node, CORT_ERROR_RUNTIME, "internal: %zu inputs / %zu outputs for the inner kernel",
                               n_in, n_out);
    cort_node n;
    inner_node(ctx->node, d, &n);
    n.state = d->inner_state;
    n.sum_input = 0;
    n.has_out_view = 0;
    n.n_inputs = n_in;
    n.n_outputs = n_out;
    /* no slot of the executor's value table: nothing may take these temporaries over or look
     * them up there (the executor's buffer cache still serves the outputs, so steady runs do not
     * allocate) */
    for (size_t i = 0; i < n_in; i++) in_slot[i] = -1;
    for (size_t i = 0; i < n_out; i++) out_slot[i] = 0;
    n.in_slot = in_slot;
    n.out_slot = out_slot;
    cort_kernel_ctx c = *ctx;
    c.node = &n;
    c.state = d->inner_state;
    if (d->opset) c.opset = d->opset;
    c.inputs = inputs;
    c.n_inputs = n_in;
    c.outputs = outputs;
    c.n_outputs = n_out;
    n.concat_inplace = 0;
    return d->inner->run(&c);
}

cort_status *ctb_float_input(const cort_kernel_ctx *ctx, size_t i, const char *name, int min_rank,
                             const cort_value **out) {
    const cort_value *v = nn_opt_input(ctx, i);
    *out = v;
    if (!v || v->kind != CORT_VKIND_TENSOR || v->type != CORT_TYPE_FLOAT || (int)v->rank < min_rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu '%s' must be a float tensor of rank >= %d, got %s of rank %zu", i, name,
                               min_rank, v ? cort_type_name(v->type) : "nothing", v ? v->rank : 0);
    return NULL;
}

cort_status *ctb_row_param(const cort_kernel_ctx *ctx, size_t i, const char *name, size_t c, const float **out) {
    const cort_value *p = nn_opt_input(ctx, i);
    *out = NULL;
    if (!p) return NULL;
    if (p->kind != CORT_VKIND_TENSOR || p->type != CORT_TYPE_FLOAT || p->count != c) {
        char buf[160];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu '%s' is %s%s, expected float with %zu elements (the last dimension)", i,
                               name, cort_type_name(p->type), nn_shape(p, buf, sizeof buf), c);
    }
    *out = p->data;
    return NULL;
}
