/* Optimizer steps of the "ai.onnx.preview.training" domain (opset 1): Adagrad, Adam, Momentum.
 * Inputs are R (learning rate), T (update count), then N tensors per group; outputs are the updated
 * tensors group by group. Arithmetic is done in double and stored in each tensor's type. */
#include <math.h>
#include <string.h>
#include "../misc_common.h"

#define TRAIN_DOMAIN "ai.onnx.preview.training"

enum { OPT_ADAGRAD, OPT_ADAM, OPT_MOMENTUM };

/* Number of input groups (X, G, H... ) and output groups per optimizer. */
static size_t in_groups(int opt) { return opt == OPT_ADAM ? 4 : 3; }
static size_t out_groups(int opt) { return opt == OPT_ADAM ? 3 : 2; }

static cort_status *train_init(const cort_node *node, int opt) {
    size_t ni = node->n_inputs, no = node->n_outputs, g = in_groups(opt);
    if (ni < 2 + g || (ni - 2) % g != 0)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "has %zu inputs, expected 2 + %zu*N", ni, g);
    size_t n = (ni - 2) / g;
    if (no > out_groups(opt) * n)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "has %zu outputs, expected at most %zu", no, out_groups(opt) * n);
    if (opt == OPT_MOMENTUM) {
        const char *mode = cort_attr_str(node, "mode", "standard");
        if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'mode' is '%s', expected standard or nesterov", mode);
    }
    return NULL;
}
static cort_status *adagrad_init(const cort_node *node, void **state) { *state = NULL; return train_init(node, OPT_ADAGRAD); }
static cort_status *adam_init(const cort_node *node, void **state) { *state = NULL; return train_init(node, OPT_ADAM); }
static cort_status *momentum_init(const cort_node *node, void **state) { *state = NULL; return train_init(node, OPT_MOMENTUM); }

static cort_status *train_infer(cort_infer_ctx *ctx, int opt) {
    size_t g = in_groups(opt), n = ctx->n_inputs >= 2 + g ? (ctx->n_inputs - 2) / g : 0;
    for (size_t o = 0; o < ctx->n_outputs && n; o++) {
        /* output group k element j mirrors input group k (X, then the state tensors after G) */
        size_t grp = o / n, j = o % n, src = 2 + (grp == 0 ? 0 : grp + 1) * n + j;
        const cort_tinfo *t = mi_tin(ctx, src);
        if (t) cort_tinfo_tensor_shape(&ctx->outputs[o], t->elem, t->dims, t->rank);
    }
    return NULL;
}
static cort_status *adagrad_infer(cort_infer_ctx *ctx) { return train_infer(ctx, OPT_ADAGRAD); }
static cort_status *adam_infer(cort_infer_ctx *ctx) { return train_infer(ctx, OPT_ADAM); }
static cort_status *momentum_infer(cort_infer_ctx *ctx) { return train_infer(ctx, OPT_MOMENTUM); }

static const char *const group_names[3][4] = { { "X", "G", "H", "" }, { "X", "G", "V", "H" }, { "X", "G", "V", "" } };

static cort_status *train_run(cort_kernel_ctx *ctx, int opt) {
    const cort_node *node = ctx->node;
    size_t g = in_groups(opt), n = (ctx->n_inputs - 2) / g;
    double R;
    int64_t T;
    CORT_TRY(mi_scalar_f64(ctx, 0, "R", &R));
    CORT_TRY(mi_scalar_i64(ctx, 1, "T", &T));
    const float norm = cort_attr_float(node, "norm_coefficient", 0.0f);
    const double eps = cort_attr_float(node, "epsilon", 1e-6f);
    const double alpha = cort_attr_float(node, "alpha", opt == OPT_ADAM ? 0.9f : 0.0f);
    const double beta = cort_attr_float(node, "beta", opt == OPT_ADAM ? 0.999f : 0.0f);
    const double decay = cort_attr_float(node, "decay_factor", 0.0f);
    const double post = cort_attr_float(node, "norm_coefficient_post", 0.0f);
    const int nesterov = opt == OPT_MOMENTUM && !strcmp(cort_attr_str(node, "mode", "standard"), "nesterov");
    double r = R;
    if (opt == OPT_ADAGRAD) r = R / (1.0 + (double)T * decay);
    if (opt == OPT_ADAM && T > 0) r = R * sqrt(1.0 - pow(beta, (double)T)) / (1.0 - pow(alpha, (double)T));
    const double beta_adj = T > 0 ? beta : 1.0;

    for (size_t j = 0; j < n; j++) {
        const cort_value *in[4] = { NULL, NULL, NULL, NULL };
        for (size_t k = 0; k < g; k++) {
            size_t idx = 2 + k * n + j;
            CORT_TRY(mi_want_tensor(ctx, idx, group_names[opt][k]));
            in[k] = ctx->inputs[idx];
            if (!cort_type_is_float(in[k]->type))
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected a float type", idx,
                                       group_names[opt][k], cort_type_name(in[k]->type));
            if (k && (in[k]->rank != in[0]->rank || memcmp(in[k]->shape, in[0]->shape, in[0]->rank * sizeof(int64_t)))) {
                char a[128], b[128];
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, expected %s like input %zu 'X'",
                                       idx, group_names[opt][k], cort_shape_str(in[k]->shape, in[k]->rank, a, sizeof a),
                                       cort_shape_str(in[0]->shape, in[0]->rank, b, sizeof b), 2 + j);
            }
        }
        /* outputs: X_new, then the updated state tensors (H / V,H / V) */
        cort_value *out[3] = { NULL, NULL, NULL };
        for (size_t k = 0; k < out_groups(opt); k++) {
            size_t o = k * n + j;
            if (!mi_out_wanted(ctx, o)) continue;
            const cort_value *like = in[k == 0 ? 0 : k + 1];
            CORT_TRY(cort_kernel_output(ctx, o, like->type, like->shape, like->rank, &out[k]));
        }
        const cort_value *X = in[0], *G = in[1];
        for (size_t i = 0; i < X->count; i++) {
            double x = cort_load_f64(X->data, X->type, i), gr = norm * x + cort_load_f64(G->data, G->type, i);
            double xn, s1 = 0.0, s2 = 0.0;
            if (opt == OPT_ADAGRAD) {
                double h = cort_load_f64(in[2]->data, in[2]->type, i) + gr * gr;
                xn = x - r * gr / (sqrt(h) + eps);
                s1 = h;
            } else if (opt == OPT_ADAM) {
                double v = alpha * cort_load_f64(in[2]->data, in[2]->type, i) + (1.0 - alpha) * gr;
                double h = beta * cort_load_f64(in[3]->data, in[3]->type, i) + (1.0 - beta) * gr * gr;
                xn = (1.0 - post) * (x - r * v / (sqrt(h) + eps));
                s1 = v;
                s2 = h;
            } else {
                double v = alpha * cort_load_f64(in[2]->data, in[2]->type, i) + beta_adj * gr;
                xn = nesterov ? x - R * (gr + alpha * v) : x - R * v;
                s1 = v;
            }
            if (out[0]) cort_store_f64(out[0]->data, out[0]->type, i, xn);
            if (out[1]) cort_store_f64(out[1]->data, out[1]->type, i, s1);
            if (out[2]) cort_store_f64(out[2]->data, out[2]->type, i, s2);
        }
    }
    return NULL;
}
static cort_status *adagrad_run(cort_kernel_ctx *ctx) { return train_run(ctx, OPT_ADAGRAD); }
static cort_status *adam_run(cort_kernel_ctx *ctx) { return train_run(ctx, OPT_ADAM); }
static cort_status *momentum_run(cort_kernel_ctx *ctx) { return train_run(ctx, OPT_MOMENTUM); }

const cort_op_def mi_op_adagrad = { .name = "Adagrad", .domain = TRAIN_DOMAIN, .min_opset = 1, .max_opset = 1,
    .init = adagrad_init, .infer = adagrad_infer, .run = adagrad_run };
const cort_op_def mi_op_adam = { .name = "Adam", .domain = TRAIN_DOMAIN, .min_opset = 1, .max_opset = 1,
    .init = adam_init, .infer = adam_infer, .run = adam_run };
const cort_op_def mi_op_momentum = { .name = "Momentum", .domain = TRAIN_DOMAIN, .min_opset = 1, .max_opset = 1,
    .init = momentum_init, .infer = momentum_infer, .run = momentum_run };
