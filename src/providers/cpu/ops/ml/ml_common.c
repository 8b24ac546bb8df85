/* Helpers shared by the ai.onnx.ml operators. */
#include <math.h>
#include <string.h>
#include "ml_common.h"
#include "../ops_common.h"

cort_status *ml_post_attr(const cort_node *node, int *out) {
    static const char *const names[] = { "NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT" };
    const char *s = cort_attr_str(node, "post_transform", "NONE");
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, names[i])) { *out = i; return NULL; }
    return cort_node_error(node, CORT_ERROR_INVALID_MODEL,
                           "attribute 'post_transform' is '%s', expected NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT", s);
}

double ml_logistic(double x) {
    /* exp of a non-positive argument only, so large |x| never overflows */
    double v = 1.0 / (1.0 + exp(-fabs(x)));
    return x < 0 ? 1.0 - v : v;
}

/* erfinv by Winitzki's closed form refined with Newton steps on libm's erf: full double
 * precision, where the closed form alone is off by up to ~2e-3. */
static double erfinv(double y) {
    if (y <= -1) return -INFINITY;
    if (y >= 1) return INFINITY;
    if (y == 0) return 0;
    const double a = 0.147, pi = 3.14159265358979323846;
    double l = log((1 - y) * (1 + y));
    double t = 2 / (pi * a) + 0.5 * l;
    double x = sqrt(sqrt(t * t - l / a) - t);
    if (y < 0) x = -x;
    for (int k = 0; k < 3; k++) {
        double d = (erf(x) - y) / (2 / sqrt(pi) * exp(-x * x));
        x -= d;
    }
    return x;
}

double ml_probit(double p) { return 1.41421356237309504880 * erfinv(2 * p - 1); }

void ml_post_apply(int post, double *s, size_t n) {
    switch (post) {
    case ML_POST_LOGISTIC:
        for (size_t i = 0; i < n; i++) s[i] = ml_logistic(s[i]);
        break;
    case ML_POST_PROBIT:
        for (size_t i = 0; i < n; i++) s[i] = ml_probit(s[i]);
        break;
    case ML_POST_SOFTMAX: {
        if (!n) break;
        double m = s[0], sum = 0;
        for (size_t i = 1; i < n; i++) if (s[i] > m) m = s[i];
        for (size_t i = 0; i < n; i++) { s[i] = exp(s[i] - m); sum += s[i]; }
        for (size_t i = 0; i < n; i++) s[i] /= sum;
        break;
    }
    case ML_POST_SOFTMAX_ZERO: {
        /* a score of exactly zero means "no evidence" and stays zero */
        if (!n) break;
        double m = s[0], sum = 0;
        for (size_t i = 1; i < n; i++) if (s[i] > m) m = s[i];
        for (size_t i = 0; i < n; i++) {
            if (s[i] != 0) { s[i] = exp(s[i] - m); sum += s[i]; }
        }
        if (sum == 0) { for (size_t i = 0; i < n; i++) s[i] = 0.5; break; }
        for (size_t i = 0; i < n; i++) s[i] /= sum;
        break;
    }
    default: break;
    }
}

cort_status *ml_attr_f64(const cort_node *node, const char *name, const char *tensor_name, double **out, size_t *n) {
    *out = NULL;
    *n = 0;
    const float *f = NULL;
    size_t k = cort_attr_floats(node, name, &f);
    const cort_value *t = NULL;
    if (!k && tensor_name && (t = cort_attr_tensor(node, tensor_name))) {
        if (!cort_type_is_float(t->type))
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute '%s' is a %s tensor, expected a float type",
                                   tensor_name, cort_type_name(t->type));
        k = t->count;
    }
    if (!k) return NULL;
    double *d = cort_malloc(k * sizeof *d);
    if (!d) return cort_error_oom();
    for (size_t i = 0; i < k; i++) d[i] = t ? cort_load_f64(t->data, t->type, i) : (double)f[i];
    *out = d;
    *n = k;
    return NULL;
}

cort_status *ml_rows(const cort_kernel_ctx *ctx, const cort_value *x, size_t *n, size_t *c) {
    char buf[96];
    if (!x || x->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is not a tensor");
    if (x->rank == 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s%s, expected [C] or [N,C]",
                               cort_type_name(x->type), cort_shape_str(x->shape, x->rank, buf, sizeof buf));
    if (x->rank == 1) { *n = 1; *c = (size_t)x->shape[0]; return NULL; }
    *n = (size_t)x->shape[0];
    *c = *n ? x->count / *n : 0;
    if (!*n) { *c = 1; for (size_t i = 1; i < x->rank; i++) *c *= (size_t)x->shape[i]; }
    return NULL;
}

cort_status *ml_to_f64(cort_kernel_ctx *ctx, const cort_value *x, double **out) {
    if (x->type == CORT_TYPE_STRING)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is a string tensor, expected a numeric type");
    return rd_to_f64_scratch(ctx, x, out);
}

static int ix_cmp(const ml_index *ix, size_t a, size_t b) {
    if (ix->s) return strcmp(ix->s[a] ? ix->s[a] : "", ix->s[b] ? ix->s[b] : "");
    return ix->i[a] < ix->i[b] ? -1 : ix->i[a] > ix->i[b];
}
/* stable merge sort of positions (equal values keep their attribute order) */
static void ix_sort(const ml_index *ix, size_t *p, size_t *tmp, size_t n) {
    if (n < 2) return;
    size_t h = n / 2, a = 0, b = h, o = 0;
    ix_sort(ix, p, tmp, h);
    ix_sort(ix, p + h, tmp, n - h);
    while (a < h && b < n) tmp[o++] = ix_cmp(ix, p[b], p[a]) < 0 ? p[b++] : p[a++];
    while (a < h) tmp[o++] = p[a++];
    while (b < n) tmp[o++] = p[b++];
    memcpy(p, tmp, n * sizeof *p);
}
cort_status *ml_index_build(ml_index *ix) {
    ix->order = cort_malloc((ix->n ? ix->n : 1) * sizeof *ix->order);
    size_t *tmp = cort_malloc((ix->n ? ix->n : 1) * sizeof *tmp);
    if (!ix->order || !tmp) { cort_free(tmp); cort_free(ix->order); ix->order = NULL; return cort_error_oom(); }
    for (size_t k = 0; k < ix->n; k++) ix->order[k] = k;
    ix_sort(ix, ix->order, tmp, ix->n);
    cort_free(tmp);
    return NULL;
}
/* last sorted position whose value is <= the key (upper bound - 1), then an equality check */
long ml_index_find_str(const ml_index *ix, const char *s) {
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *m = ix->s[ix->order[mid]];
        if (strcmp(m ? m : "", s) <= 0) lo = mid + 1; else hi = mid;
    }
    if (!lo) return -1;
    const char *m = ix->s[ix->order[lo - 1]];
    return !strcmp(m ? m : "", s) ? (long)ix->order[lo - 1] : -1;
}
long ml_index_find_i64(const ml_index *ix, int64_t v) {
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->i[ix->order[mid]] <= v) lo = mid + 1; else hi = mid;
    }
    return lo && ix->i[ix->order[lo - 1]] == v ? (long)ix->order[lo - 1] : -1;
}
void ml_index_free(ml_index *ix) {
    cort_free(ix->order);
    ix->order = NULL;
}
