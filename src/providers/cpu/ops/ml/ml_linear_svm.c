/* Linear and support-vector models of ai.onnx.ml: LinearClassifier, LinearRegressor,
 * SVMClassifier, SVMRegressor. Scores are computed in double; outputs are float. */
#include <math.h>
#include <string.h>
#include "ml_common.h"
#include "../misc_common.h"
#include "../ops_common.h"

typedef struct labels { size_t n; const int64_t *i; const char *const *s; } labels;

static cort_status *labels_read(const cort_node *node, labels *l, const char *int_name, int required) {
    size_t ni = cort_attr_ints(node, int_name, &l->i), ns = cort_attr_strings(node, "classlabels_strings", &l->s);
    if ((ni && ns) || (required && !ni && !ns))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "exactly one of '%s' and 'classlabels_strings' must be set", int_name);
    l->n = ni ? ni : ns;
    if (!ns) l->s = NULL;
    return NULL;
}

/* Y (labels, [N]) and Z (float scores, [N, cols]) outputs of a classifier. */
static cort_status *classifier_outputs(cort_kernel_ctx *ctx, const labels *l, size_t n, size_t cols, cort_value **y, cort_value **z) {
    int64_t d1[1] = { (int64_t)n }, d2[2] = { (int64_t)n, (int64_t)cols };
    CORT_TRY(cort_kernel_output(ctx, 0, l->s ? CORT_TYPE_STRING : CORT_TYPE_INT64, d1, 1, y));
    *z = NULL;
    if (mi_out_wanted(ctx, 1)) CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, d2, 2, z));
    return NULL;
}
static cort_status *set_label(cort_value *y, const labels *l, size_t r, size_t k) {
    if (l->s) return cort_string_set(y, r, l->s[k], strlen(l->s[k]));
    ((int64_t *)y->data)[r] = l->i ? l->i[k] : (int64_t)k;
    return NULL;
}
static void store_row(cort_value *z, size_t r, const double *s, size_t cols) {
    if (!z) return;
    float *o = (float *)z->data + r * cols;
    for (size_t j = 0; j < cols; j++) o[j] = (float)s[j];
}
static size_t argmax(const double *s, size_t n) {
    size_t b = 0;
    for (size_t j = 1; j < n; j++) if (s[j] > s[b]) b = j;
    return b;
}
static cort_status *classifier_infer(cort_infer_ctx *ctx, int str, int64_t cols) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    int64_t n = x && x->rank >= 1 ? (x->rank == 1 ? 1 : x->dims[0]) : -1;
    int64_t d1[1] = { n }, d2[2] = { n, cols };
    if (ctx->n_outputs > 0) cort_tinfo_tensor_shape(&ctx->outputs[0], str ? CORT_TYPE_STRING : CORT_TYPE_INT64, d1, 1);
    if (ctx->n_outputs > 1) cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_FLOAT, d2, 2);
    return NULL;
}
static cort_status *want_numeric_rows(cort_kernel_ctx *ctx, size_t *n, size_t *c) {
    const cort_value *x = ctx->inputs[0];
    CORT_TRY(ml_rows(ctx, x, n, c));
    if (!(ML_NUMERIC & CORT_TBIT(x->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s, expected float, double, int64 or int32",
                               cort_type_name(x->type));
    return NULL;
}

/* ---- LinearClassifier / LinearRegressor ---- */
typedef struct lin_state { double *w, *b; size_t nw, nb, rows; int post; labels l; } lin_state;
static void lin_free(void *p) {
    lin_state *st = p;
    if (!st) return;
    cort_free(st->w); cort_free(st->b); cort_free(st);
}
static cort_status *lin_init(const cort_node *node, void **state, int classifier) {
    lin_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = ml_post_attr(node, &st->post);
    if (!err) err = ml_attr_f64(node, "coefficients", NULL, &st->w, &st->nw);
    if (!err) err = ml_attr_f64(node, "intercepts", NULL, &st->b, &st->nb);
    if (!err && classifier) err = labels_read(node, &st->l, "classlabels_ints", 1);
    if (!err) {
        if (classifier) st->rows = st->nb ? st->nb : st->l.n;
        else {
            int64_t t = cort_attr_int(node, "targets", 1);
            if (t <= 0) err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'targets' is %lld, expected > 0", (long long)t);
            st->rows = (size_t)t;
        }
    }
    if (!err && (!st->rows || !st->nw || st->nw % st->rows))
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "%zu coefficients do not split into %zu rows", st->nw, st->rows);
    if (!err && st->nb && st->nb != st->rows)
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "%zu intercepts for %zu score rows", st->nb, st->rows);
    if (!err && classifier && st->rows != st->l.n && !(st->rows == 1 && st->l.n == 2))
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "%zu score rows for %zu class labels", st->rows, st->l.n);
    if (err) { lin_free(st); return err; }
    *state = st;
    return NULL;
}
static cort_status *linc_init(const cort_node *node, void **state) { return lin_init(node, state, 1); }
static cort_status *linr_init(const cort_node *node, void **state) { return lin_init(node, state, 0); }

static cort_status *lin_scores(cort_kernel_ctx *ctx, const lin_state *st, double **xd, size_t *n) {
    size_t c;
    CORT_TRY(want_numeric_rows(ctx, n, &c));
    if (c * st->rows != st->nw)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has %zu features, the model %zu", c, st->nw / st->rows);
    return rd_to_f64_scratch(ctx, ctx->inputs[0], xd);
}
static void lin_row(const lin_state *st, const double *x, double *s) {
    size_t c = st->nw / st->rows;
    for (size_t j = 0; j < st->rows; j++) {
        double a = st->nb ? st->b[j] : 0;
        const double *w = st->w + j * c;
        for (size_t k = 0; k < c; k++) a += x[k] * w[k];
        s[j] = a;
    }
}

static cort_status *linc_infer(cort_infer_ctx *ctx) {
    const lin_state *st = ctx->state;
    return st ? classifier_infer(ctx, st->l.s != NULL, (int64_t)(st->rows == 1 && st->l.n == 2 ? 2 : st->rows)) : NULL;
}
static cort_status *linc_run(cort_kernel_ctx *ctx) {
    const lin_state *st = ctx->state;
    double *xd = NULL;
    size_t n;
    CORT_TRY(lin_scores(ctx, st, &xd, &n));
    size_t c = st->nw / st->rows, cols = st->rows == 1 && st->l.n == 2 ? 2 : st->rows;
    cort_value *y, *z;
    cort_status *err = classifier_outputs(ctx, &st->l, n, cols, &y, &z);
    double *s = cort_kernel_scratch(ctx, (cols + 1) * sizeof *s);
    if (!err && !s) err = cort_error_oom();
    for (size_t r = 0; r < n && !err; r++) {
        lin_row(st, xd + r * c, cols == st->rows ? s : s + 1);
        /* one score row for two classes: [-s, s] */
        if (cols != st->rows) s[0] = -s[1];
        ml_post_apply(st->post, s, cols);
        err = set_label(y, &st->l, r, argmax(s, cols));
        store_row(z, r, s, cols);
    }
    if (s) cort_kernel_scratch_free(ctx, s);
    cort_kernel_scratch_free(ctx, xd);
    return err;
}
static cort_status *linr_infer(cort_infer_ctx *ctx) {
    const lin_state *st = ctx->state;
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!st || !ctx->n_outputs) return NULL;
    int64_t d[2] = { x && x->rank >= 1 ? (x->rank == 1 ? 1 : x->dims[0]) : -1, (int64_t)st->rows };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, 2);
    return NULL;
}
static cort_status *linr_run(cort_kernel_ctx *ctx) {
    const lin_state *st = ctx->state;
    double *xd = NULL;
    size_t n;
    CORT_TRY(lin_scores(ctx, st, &xd, &n));
    size_t c = st->nw / st->rows;
    int64_t d[2] = { (int64_t)n, (int64_t)st->rows };
    cort_value *y;
    cort_status *err = cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, d, 2, &y);
    double *s = cort_kernel_scratch(ctx, st->rows * sizeof *s);
    if (!err && !s) err = cort_error_oom();
    for (size_t r = 0; r < n && !err; r++) {
        lin_row(st, xd + r * c, s);
        ml_post_apply(st->post, s, st->rows);
        store_row(y, r, s, st->rows);
    }
    if (s) cort_kernel_scratch_free(ctx, s);
    cort_kernel_scratch_free(ctx, xd);
    return err;
}
const cort_op_def ml_op_linear_classifier = { .name = "LinearClassifier", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = ML_NUMERIC, .init = linc_init, .free_state = lin_free, .infer = linc_infer, .run = linc_run };
const cort_op_def ml_op_linear_regressor = { .name = "LinearRegressor", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = ML_NUMERIC, .init = linr_init, .free_state = lin_free, .infer = linr_infer, .run = linr_run };

/* ---- SVM ---- */
enum { K_LINEAR, K_POLY, K_RBF, K_SIGMOID };
typedef struct svm_state {
    int kernel, post, one_class;
    double gamma, coef0, degree;
    double *coef, *sv, *rho, *pa, *pb;
    size_t n_coef, n_sv_vals, n_rho, n_pa, n_pb;
    size_t n_vec, feat, classes;
    int64_t *starts;          /* first support vector of each class */
    const int64_t *per_class;
    labels l;
    int linear_mode, all_positive;
} svm_state;
static void svm_free(void *p) {
    svm_state *st = p;
    if (!st) return;
    cort_free(st->coef); cort_free(st->sv); cort_free(st->rho); cort_free(st->pa); cort_free(st->pb); cort_free(st->starts);
    cort_free(st);
}
static cort_status *svm_init(const cort_node *node, void **state, int classifier) {
    svm_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = ml_post_attr(node, &st->post);
    const char *k = cort_attr_str(node, "kernel_type", "LINEAR");
    st->kernel = !strcmp(k, "LINEAR") ? K_LINEAR : !strcmp(k, "POLY") ? K_POLY : !strcmp(k, "RBF") ? K_RBF : !strcmp(k, "SIGMOID") ? K_SIGMOID : -1;
    if (!err && st->kernel < 0) err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'kernel_type' is '%s', expected LINEAR, POLY, RBF or SIGMOID", k);
    const float *kp;
    size_t nkp = cort_attr_floats(node, "kernel_params", &kp);
    if (nkp > 0) st->gamma = kp[0];
    if (nkp > 1) st->coef0 = kp[1];
    if (nkp > 2) st->degree = kp[2];
    if (!err) err = ml_attr_f64(node, "coefficients", NULL, &st->coef, &st->n_coef);
    if (!err) err = ml_attr_f64(node, "support_vectors", NULL, &st->sv, &st->n_sv_vals);
    if (!err) err = ml_attr_f64(node, "rho", NULL, &st->rho, &st->n_rho);
    if (!err) err = ml_attr_f64(node, "prob_a", NULL, &st->pa, &st->n_pa);
    if (!err) err = ml_attr_f64(node, "prob_b", NULL, &st->pb, &st->n_pb);
    if (err) goto done;
    if (!st->n_rho) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'rho' is missing"); goto done; }
    st->all_positive = 1;
    for (size_t i = 0; i < st->n_coef; i++) if (st->coef[i] < 0) st->all_positive = 0;
    if (classifier) {
        if ((err = labels_read(node, &st->l, "classlabels_ints", 0))) goto done;
        st->classes = st->l.n ? st->l.n : 1;
        size_t npc = cort_attr_ints(node, "vectors_per_class", &st->per_class);
        if (npc && npc != st->classes) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "%zu vectors_per_class entries for %zu classes", npc, st->classes); goto done; }
        if (!(st->starts = cort_calloc(st->classes, sizeof *st->starts))) { err = cort_error_oom(); goto done; }
        for (size_t i = 0; i < npc; i++) {
            if (st->per_class[i] < 0) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "vectors_per_class[%zu] is negative", i); goto done; }
            st->starts[i] = (int64_t)st->n_vec;
            st->n_vec += (size_t)st->per_class[i];
        }
        if (!st->n_vec) {
            st->linear_mode = 1;
            if (st->n_coef % st->classes) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "%zu coefficients for %zu classes", st->n_coef, st->classes); goto done; }
            st->feat = st->n_coef / st->classes;
        } else {
            size_t pairs = st->classes * (st->classes - 1) / 2;
            if (st->n_sv_vals % st->n_vec || st->n_coef != (st->classes - 1) * st->n_vec || st->n_rho < pairs) {
                err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "support vectors, coefficients (%zu) and rho (%zu) do not fit %zu classes with %zu vectors",
                                      st->n_coef, st->n_rho, st->classes, st->n_vec);
                goto done;
            }
            st->feat = st->n_sv_vals / st->n_vec;
            if (st->n_pa && (st->n_pa < pairs || st->n_pb < pairs)) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "prob_a / prob_b need %zu entries", pairs); goto done; }
        }
    } else {
        int64_t ns = cort_attr_int(node, "n_supports", 0);
        st->one_class = cort_attr_int(node, "one_class", 0) != 0;
        if (ns < 0) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'n_supports' is negative"); goto done; }
        st->n_vec = (size_t)ns;
        if (st->n_vec) {
            if (st->n_sv_vals % st->n_vec || st->n_coef < st->n_vec) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "support vectors do not fit n_supports=%zu", st->n_vec); goto done; }
            st->feat = st->n_sv_vals / st->n_vec;
        } else {
            st->linear_mode = 1;
            st->feat = st->n_coef;
        }
    }
done:
    if (err) { svm_free(st); return err; }
    *state = st;
    return NULL;
}
static cort_status *svmc_init(const cort_node *node, void **state) { return svm_init(node, state, 1); }
static cort_status *svmr_init(const cort_node *node, void **state) { return svm_init(node, state, 0); }

/* Four partial sums: the additions of one sum form a dependency chain that would otherwise bound
 * the loop by the adder's latency. */
static double sqdist(const double *a, const double *b, size_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        double d0 = a[i] - b[i], d1 = a[i + 1] - b[i + 1], d2 = a[i + 2] - b[i + 2], d3 = a[i + 3] - b[i + 3];
        s0 += d0 * d0; s1 += d1 * d1; s2 += d2 * d2; s3 += d3 * d3;
    }
    for (; i < n; i++) { double d = a[i] - b[i]; s0 += d * d; }
    return (s0 + s1) + (s2 + s3);
}
static double dot(const double *a, const double *b, size_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) { s0 += a[i] * b[i]; s1 += a[i + 1] * b[i + 1]; s2 += a[i + 2] * b[i + 2]; s3 += a[i + 3] * b[i + 3]; }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}
static double kdot(const svm_state *st, const double *a, const double *b, size_t n, int kernel) {
    if (kernel == K_RBF) return exp(-st->gamma * sqdist(a, b, n));
    double s = dot(a, b, n);
    if (kernel == K_POLY) return pow(s * st->gamma + st->coef0, st->degree);
    if (kernel == K_SIGMOID) return tanh(s * st->gamma + st->coef0);
    return s;
}

/* libsvm's pairwise coupling of the pairwise probabilities r (k x k) into p (k). */
static void multiclass_probability(size_t k, const double *r, double *p, double *q, double *qp) {
    for (size_t t = 0; t < k; t++) {
        p[t] = 1.0 / (double)k;
        q[t * k + t] = 0;
        for (size_t j = 0; j < t; j++) { q[t * k + t] += r[j * k + t] * r[j * k + t]; q[t * k + j] = q[j * k + t]; }
        for (size_t j = t + 1; j < k; j++) { q[t * k + t] += r[j * k + t] * r[j * k + t]; q[t * k + j] = -r[j * k + t] * r[t * k + j]; }
    }
    size_t max_iter = k > 100 ? k : 100;
    double eps = 0.005 / (double)k;
    for (size_t it = 0; it < max_iter; it++) {
        double pqp = 0, max_err = 0;
        for (size_t t = 0; t < k; t++) {
            qp[t] = 0;
            for (size_t j = 0; j < k; j++) qp[t] += q[t * k + j] * p[j];
            pqp += p[t] * qp[t];
        }
        for (size_t t = 0; t < k; t++) if (fabs(qp[t] - pqp) > max_err) max_err = fabs(qp[t] - pqp);
        if (max_err < eps) break;
        for (size_t t = 0; t < k; t++) {
            double diff = (-qp[t] + pqp) / q[t * k + t];
            p[t] += diff;
            pqp = (pqp + diff * (diff * q[t * k + t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
            for (size_t j = 0; j < k; j++) { qp[j] = (qp[j] + diff * q[t * k + j]) / (1 + diff); p[j] /= 1 + diff; }
        }
    }
}

static size_t svmc_cols(const svm_state *st) {
    if (st->linear_mode) return st->classes == 1 ? 2 : st->classes;   /* one score: [-s, s] */
    if (st->n_pa) return st->classes;
    size_t pairs = st->classes * (st->classes - 1) / 2;
    return pairs == 1 ? 2 : pairs;
}
static cort_status *svmc_infer(cort_infer_ctx *ctx) {
    const svm_state *st = ctx->state;
    return st ? classifier_infer(ctx, st->l.s != NULL, (int64_t)svmc_cols(st)) : NULL;
}
/* Per-row scratch of SVMClassifier, in doubles. */
static size_t svmc_scratch(const svm_state *st) {
    size_t k = st->classes, pairs = k * (k - 1) / 2;
    return st->n_vec + 4 * k + 2 * pairs + 2 * k * k + 4;
}

/* One row: kernel values, pairwise decisions and votes (or the liblinear scores), probabilities,
 * post-transform; writes label `row` of y and row `row` of z (may be NULL). */
static cort_status *svmc_row(const svm_state *st, const double *x, size_t c, double *buf, cort_value *y, cort_value *z,
                             size_t row) {
    size_t k = st->classes, pairs = k * (k - 1) / 2, cols = svmc_cols(st);
    double *kern = buf, *votes = kern + st->n_vec, *s = votes + k, *r = s + (pairs > k ? pairs : k) + 2,
           *q = r + k * k, *qp = q + k * k;
    size_t label, ns;
    if (st->linear_mode) {
        /* rho[0] for every class, as the ONNX reference and ONNX Runtime do */
        for (size_t j = 0; j < k; j++) s[j] = kdot(st, x, st->coef + j * c, c, K_LINEAR) + st->rho[0];
        ns = k;
        label = argmax(s, k);
        if (k == 1) { s[1] = s[0]; s[0] = -s[1]; ns = 2; label = s[1] > 0; }
        ml_post_apply(st->post, s, ns);
    } else {
        for (size_t v = 0; v < st->n_vec; v++) kern[v] = kdot(st, x, st->sv + v * c, c, st->kernel);
        for (size_t j = 0; j < k; j++) votes[j] = 0;
        size_t e = 0;
        for (size_t i = 0; i < k; i++)
            for (size_t j = i + 1; j < k; j++, e++) {
                /* pair (i, j): class i's vectors weighted by coefficient row j-1, class j's by row i */
                double a = st->rho[e];
                const double *ci = st->coef + (j - 1) * st->n_vec, *cj = st->coef + i * st->n_vec;
                for (int64_t v = st->starts[i]; v < st->starts[i] + st->per_class[i]; v++) a += ci[v] * kern[v];
                for (int64_t v = st->starts[j]; v < st->starts[j] + st->per_class[j]; v++) a += cj[v] * kern[v];
                s[e] = a;
                votes[a > 0 ? i : j] += 1;
            }
        label = argmax(votes, k);
        ns = pairs;
        if (st->n_pa) {
            for (size_t i = 0; i < k * k; i++) r[i] = 0;
            e = 0;
            for (size_t i = 0; i < k; i++)
                for (size_t j = i + 1; j < k; j++, e++) {
                    double v = 1 - ml_logistic(s[e] * st->pa[e] + st->pb[e]);
                    v = v < 1e-7 ? 1e-7 : v > 1 - 1e-7 ? 1 - 1e-7 : v;
                    r[i * k + j] = v;
                    r[j * k + i] = 1 - v;
                }
            multiclass_probability(k, r, s, q, qp);   /* label stays the vote's, as libsvm's predict */
            ns = k;
            ml_post_apply(st->post, s, ns);
        } else if (pairs == 1) {
            /* one decision value: [-s, s] like the linear binary case */
            s[1] = s[0]; s[0] = -s[1]; ns = 2;
            ml_post_apply(st->post, s, ns);
        } else {
            ml_post_apply(st->post, s, ns);
        }
    }
    store_row(z, row, s, cols);
    if (!st->l.n) { ((int64_t *)y->data)[row] = (int64_t)label; return NULL; }
    return set_label(y, &st->l, row, label < st->l.n ? label : 0);
}

/* Rows split into one contiguous part per thread, each with its own slice of scratch. */
typedef struct svmc_job {
    const svm_state *st;
    const double *x;
    size_t n, c, parts, per;
    double *buf;
    cort_value *y, *z;
    cort_status **errs;
} svmc_job;
static void svmc_parts(void *arg, size_t b, size_t e) {
    svmc_job *job = arg;
    for (size_t p = b; p < e; p++) {
        size_t r0 = job->n * p / job->parts, r1 = job->n * (p + 1) / job->parts;
        for (size_t row = r0; row < r1 && !job->errs[p]; row++)
            job->errs[p] = svmc_row(job->st, job->x + row * job->c, job->c, job->buf + p * job->per, job->y, job->z, row);
    }
}

static cort_status *svmc_run(cort_kernel_ctx *ctx) {
    const svm_state *st = ctx->state;
    size_t n, c;
    CORT_TRY(want_numeric_rows(ctx, &n, &c));
    if (c != st->feat)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has %zu features, the model %zu", c, st->feat);
    double *xd = NULL;
    CORT_TRY(rd_to_f64_scratch(ctx, ctx->inputs[0], &xd));
    cort_value *y = NULL, *z = NULL;
    cort_status *err = classifier_outputs(ctx, &st->l, n, svmc_cols(st), &y, &z);
    /* a row costs n_vec kernel evaluations: parts of at least 16 rows */
    size_t threads = (size_t)cort_pool_threads(ctx->pool), parts = n / 16;
    if (parts > threads) parts = threads;
    if (parts < 1) parts = 1;
    svmc_job job = { .st = st, .x = xd, .n = n, .c = c, .parts = parts, .per = svmc_scratch(st), .y = y, .z = z };
    if (!err) {
        job.buf = cort_kernel_scratch(ctx, parts * job.per * sizeof *job.buf);
        job.errs = cort_kernel_scratch(ctx, parts * sizeof *job.errs);
        if (!job.buf || !job.errs) err = cort_error_oom();
    }
    if (!err) {
        memset(job.errs, 0, parts * sizeof *job.errs);
        cort_parallel_for(parts > 1 ? ctx->pool : NULL, parts, 1, svmc_parts, &job);
        for (size_t p = 0; p < parts; p++) {
            if (!err) err = job.errs[p];
            else cort_status_free(job.errs[p]);
        }
    }
    if (job.buf) cort_kernel_scratch_free(ctx, job.buf);
    if (job.errs) cort_kernel_scratch_free(ctx, job.errs);
    cort_kernel_scratch_free(ctx, xd);
    return err;
}
static cort_status *svmr_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!ctx->n_outputs) return NULL;
    int64_t d[2] = { x && x->rank >= 1 ? (x->rank == 1 ? 1 : x->dims[0]) : -1, 1 };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, 2);
    return NULL;
}
typedef struct svmr_job { const svm_state *st; const double *x; size_t c; float *y; } svmr_job;
static void svmr_rows(void *arg, size_t b, size_t e) {
    const svmr_job *job = arg;
    const svm_state *st = job->st;
    size_t c = job->c;
    for (size_t row = b; row < e; row++) {
        const double *x = job->x + row * c;
        double s = 0;
        if (st->linear_mode) s = kdot(st, x, st->coef, c, K_LINEAR);
        else for (size_t v = 0; v < st->n_vec; v++) s += st->coef[v] * kdot(st, x, st->sv + v * c, c, st->kernel);
        s += st->rho[0];
        if (st->one_class) s = s > 0 ? 1 : -1;
        else ml_post_apply(st->post, &s, 1);
        job->y[row] = (float)s;
    }
}
static cort_status *svmr_run(cort_kernel_ctx *ctx) {
    const svm_state *st = ctx->state;
    size_t n, c;
    CORT_TRY(want_numeric_rows(ctx, &n, &c));
    if (c != st->feat)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has %zu features, the model %zu", c, st->feat);
    double *xd = NULL;
    CORT_TRY(rd_to_f64_scratch(ctx, ctx->inputs[0], &xd));
    int64_t d[2] = { (int64_t)n, 1 };
    cort_value *y;
    cort_status *err = cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, d, 2, &y);
    if (!err) {
        svmr_job job = { st, xd, c, y->data };
        cort_parallel_for(ctx->pool, n, st->n_vec > 64 ? 16 : 1024, svmr_rows, &job);
    }
    cort_kernel_scratch_free(ctx, xd);
    return err;
}
const cort_op_def ml_op_svm_classifier = { .name = "SVMClassifier", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = ML_NUMERIC, .init = svmc_init, .free_state = svm_free, .infer = svmc_infer, .run = svmc_run };
const cort_op_def ml_op_svm_regressor = { .name = "SVMRegressor", .domain = ML_DOMAIN, .min_opset = 1, .max_opset = ML_OPSET_MAX,
    .types = ML_NUMERIC, .init = svmr_init, .free_state = svm_free, .infer = svmr_infer, .run = svmr_run };
