/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12, 13).
 * input [N, C, d1..dk], target [N, d1..dk]; loss[n, d] = -input[n, target, d] * weight[target],
 * 0 where target == ignore_index. reduction none / sum / mean (mean divides by the summed weights
 * of the counted targets). SoftmaxCrossEntropyLoss applies LogSoftmax over C first and can output it. */
#include <math.h>
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

enum { LOSS_NONE, LOSS_SUM, LOSS_MEAN };

typedef struct loss_state { int reduction, has_ignore; int64_t ignore_index; } loss_state;

static cort_status *loss_init(const cort_node *node, void **state) {
    const char *r = cort_attr_str(node, "reduction", "mean");
    int red = !strcmp(r, "none") ? LOSS_NONE : !strcmp(r, "sum") ? LOSS_SUM : !strcmp(r, "mean") ? LOSS_MEAN : -1;
    if (red < 0) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'reduction' has unsupported value '%s'", r);
    loss_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    s->reduction = red;
    s->has_ignore = cort_attr_get(node, "ignore_index") != NULL;
    s->ignore_index = cort_attr_int(node, "ignore_index", 0);
    *state = s;
    return NULL;
}

/* logp: [N, C, D] log-probabilities (double). Writes the loss output. */
static cort_status *nll(cort_kernel_ctx *ctx, const loss_state *s, const double *logp, const cort_value *scores,
                        const cort_value *target, const cort_value *weight) {
    size_t N = (size_t)scores->shape[0], C = (size_t)scores->shape[1], D = rd_prod(scores->shape, 2, scores->rank);
    double *loss = cort_kernel_scratch(ctx, (N * D > 0 ? N * D : 1) * sizeof *loss);
    if (!loss) return cort_error_oom();
    double total = 0, wsum = 0;
    for (size_t n = 0; n < N; n++)
        for (size_t d = 0; d < D; d++) {
            int64_t t = cort_load_i64(target->data, target->type, n * D + d);
            if (s->has_ignore && t == s->ignore_index) { loss[n * D + d] = 0; continue; }
            if (t < 0 || (size_t)t >= C) {
                cort_kernel_scratch_free(ctx, loss);
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'target' entry %zu is %lld, expected [0,%zu)",
                                       n * D + d, (long long)t, C);
            }
            double w = weight ? cort_load_f64(weight->data, weight->type, (size_t)t) : 1;
            double l = -logp[(n * C + (size_t)t) * D + d] * w;
            loss[n * D + d] = l;
            total += l;
            wsum += w;
        }
    cort_value *y;
    cort_status *st;
    if (s->reduction == LOSS_NONE) {
        int64_t od[CORT_MAX_RANK];
        od[0] = (int64_t)N;
        for (size_t i = 2; i < scores->rank; i++) od[i - 1] = scores->shape[i];
        st = cort_kernel_output(ctx, 0, scores->type, od, scores->rank - 1, &y);
        if (!st) for (size_t i = 0; i < N * D; i++) cort_store_f64(y->data, y->type, i, loss[i]);
    } else {
        st = cort_kernel_output(ctx, 0, scores->type, NULL, 0, &y);
        if (!st) cort_store_f64(y->data, y->type, 0, s->reduction == LOSS_SUM ? total : total / wsum);
    }
    cort_kernel_scratch_free(ctx, loss);
    return st;
}

static cort_status *check_inputs(cort_kernel_ctx *ctx, const cort_value *x, const cort_value *t, const cort_value *w) {
    char s1[128], s2[128];
    if (!x || !t || x->kind != CORT_VKIND_TENSOR || t->kind != CORT_VKIND_TENSOR || !cort_type_is_float(x->type) ||
        !cort_type_is_int(t->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 must be a float tensor and input 1 an integer tensor");
    int ok = x->rank >= 2 && t->rank == x->rank - 1 && t->shape[0] == x->shape[0];
    for (size_t i = 2; ok && i < x->rank; i++) ok = t->shape[i - 1] == x->shape[i];
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 has shape %s and input 1 %s, expected [N,C,d...] and [N,d...]",
                               rd_shape_str(x, s1, sizeof s1), rd_shape_str(t, s2, sizeof s2));
    if (w && (w->kind != CORT_VKIND_TENSOR || !cort_type_is_float(w->type) || w->rank != 1 || w->shape[0] != x->shape[1]))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'weight' must be a float tensor of shape [%lld]",
                               (long long)x->shape[1]);
    return NULL;
}

static cort_status *nll_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0), *t = rd_input(ctx, 1), *w = rd_input(ctx, 2);
    CORT_TRY(check_inputs(ctx, x, t, w));
    double *logp;
    CORT_TRY(rd_to_f64_scratch(ctx, x, &logp));
    cort_status *st = nll(ctx, ctx->state, logp, x, t, w);
    cort_kernel_scratch_free(ctx, logp);
    return st;
}

static cort_status *sce_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0), *t = rd_input(ctx, 1), *w = rd_input(ctx, 2);
    CORT_TRY(check_inputs(ctx, x, t, w));
    double *lp;
    CORT_TRY(rd_to_f64_scratch(ctx, x, &lp));
    size_t N = (size_t)x->shape[0], C = (size_t)x->shape[1], D = rd_prod(x->shape, 2, x->rank);
    for (size_t n = 0; n < N; n++)
        for (size_t d = 0; d < D; d++) {
            double *p = lp + n * C * D + d, m = -INFINITY, s = 0;
            for (size_t c = 0; c < C; c++) m = p[c * D] > m ? p[c * D] : m;
            for (size_t c = 0; c < C; c++) s += exp(p[c * D] - m);
            double l = m + log(s);
            for (size_t c = 0; c < C; c++) p[c * D] -= l;
        }
    cort_status *st = nll(ctx, ctx->state, lp, x, t, w);
    if (!st && ctx->n_outputs > 1 && ctx->node->out_slot[1] >= 0) {
        cort_value *y;
        st = cort_kernel_output(ctx, 1, x->type, x->shape, x->rank, &y);
        if (!st) rd_store_f64_round(y->data, y->type, lp, y->count);
    }
    cort_kernel_scratch_free(ctx, lp);
    return st;
}

static cort_status *loss_infer(cort_infer_ctx *ctx) {
    const loss_state *s = ctx->state;
    const cort_tinfo *x = rd_tinput(ctx, 0);
    if (!x) return NULL;
    if (s->reduction != LOSS_NONE) cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, NULL, 0);
    else if (x->rank >= 2) {
        int64_t od[CORT_MAX_RANK];
        od[0] = x->dims[0];
        for (int i = 2; i < x->rank; i++) od[i - 1] = x->dims[i];
        cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, od, x->rank - 1);
    } else cort_tinfo_tensor(&ctx->outputs[0], x->elem);
    if (ctx->n_outputs > 1) {
        if (x->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[1], x->elem, x->dims, x->rank);
        else cort_tinfo_tensor(&ctx->outputs[1], x->elem);
    }
    return NULL;
}

const cort_op_def rd_op_nll_loss = { .name = "NegativeLogLikelihoodLoss", .domain = "", .min_opset = 12, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .init = loss_init, .free_state = cort_free, .infer = loss_infer,
    .run = nll_run };
const cort_op_def rd_op_sce_loss = { .name = "SoftmaxCrossEntropyLoss", .domain = "", .min_opset = 12, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .init = loss_init, .free_state = cort_free, .infer = loss_infer,
    .run = sce_run };
