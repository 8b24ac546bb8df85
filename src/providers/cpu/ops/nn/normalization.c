/* Normalizations: BatchNormalization, InstanceNormalization, LayerNormalization,
 * GroupNormalization, LpNormalization, MeanVarianceNormalization, LRN. Statistics are accumulated
 * in double so long rows (BERT hidden sizes, big images) do not lose precision. */
#include <math.h>
#include <string.h>
#include "nn_common.h"

/* Checks that input i is a tensor of `count` elements (a per-channel parameter). */
static cort_status *check_param(const cort_kernel_ctx *ctx, size_t i, const char *name, size_t count,
                                size_t alt_count) {
    const cort_value *v = nn_opt_input(ctx, i);
    char buf[160];
    if (!v || v->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is missing", i, name);
    if (v->count != count && v->count != alt_count)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, expected %zu "
                               "elements", i, name, nn_shape(v, buf, sizeof buf), count);
    return NULL;
}

/* Float views of inputs [0, n) (missing ones stay NULL). */
static cort_status *load_inputs(const cort_kernel_ctx *ctx, size_t n, nn_fbuf *bufs) {
    for (size_t i = 0; i < n; i++) {
        bufs[i].p = bufs[i].owned = NULL;
        const cort_value *v = nn_opt_input(ctx, i);
        if (v) CORT_TRY(nn_fbuf_in(v, &bufs[i]));
    }
    return NULL;
}
static void free_bufs(nn_fbuf *bufs, size_t n) { for (size_t i = 0; i < n; i++) nn_fbuf_free(&bufs[i]); }

/* ---- BatchNormalization ---- */
static cort_status *bn_infer(cort_infer_ctx *ctx) {
    cort_infer_same(ctx);
    for (size_t i = 1; i < ctx->n_outputs; i++) {
        if (nn_infer_has(ctx, 3)) cort_tinfo_tensor_shape(&ctx->outputs[i], ctx->inputs[3].elem, ctx->inputs[3].dims,
                                                          ctx->inputs[3].rank);
        else nn_infer_type(ctx, i, ctx->inputs[0].elem);
    }
    return NULL;
}

static cort_status *bn_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "X", 1, -1));
    const cort_value *x = ctx->inputs[0];
    const size_t N = (size_t)x->shape[0], C = x->rank > 1 ? (size_t)x->shape[1] : 1;
    const size_t S = (N && C) ? x->count / (N * C) : 0;
    const int training = ctx->opset >= 14 && cort_attr_int(ctx->node, "training_mode", 0) != 0;
    /* opset < 9 with spatial = 0: statistics per (channel, position) */
    const int per_elem = ctx->opset < 9 && cort_attr_int(ctx->node, "spatial", 1) == 0;
    const size_t P = per_elem ? C * S : C;
    static const char *const names[] = { "X", "scale", "B", "mean", "var" };
    for (size_t i = 1; i < 5; i++) CORT_TRY(check_param(ctx, i, names[i], P, P));
    const float eps = cort_attr_float(ctx->node, "epsilon", 1e-5f);
    const float momentum = cort_attr_float(ctx->node, "momentum", 0.9f);
    cort_value *y, *rm = NULL, *rv = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    nn_fbuf in[5], fy = { 0 }, frm = { 0 }, frv = { 0 };
    float *mean = NULL;
    cort_status *st = load_inputs(ctx, 5, in);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (st) goto done;
    mean = cort_kernel_scratch(ctx, 2 * P * sizeof(float) + 1);
    if (!mean) { st = cort_error_oom(); goto done; }
    float *var = mean + P;
    if (training) {
        for (size_t c = 0; c < C; c++) {
            double s = 0, s2 = 0;
            for (size_t n = 0; n < N; n++) {
                const float *xp = in[0].p + (n * C + c) * S;
                for (size_t i = 0; i < S; i++) { s += xp[i]; s2 += (double)xp[i] * xp[i]; }
            }
            double cnt = (double)(N * S), m = cnt ? s / cnt : 0, v = cnt ? s2 / cnt - m * m : 0;
            mean[c] = (float)m;
            var[c] = (float)(v < 0 ? 0 : v);
        }
        for (size_t k = 1; k < 3 && k < ctx->n_outputs; k++) {
            if (ctx->node->out_slot[k] < 0) continue;
            cort_value *o;
            const cort_value *src = ctx->inputs[k + 2];
            st = cort_kernel_output(ctx, k, src->type, src->shape, src->rank, &o);
            if (st) goto done;
            nn_fbuf *fo = k == 1 ? &frm : &frv;
            st = nn_fbuf_out(o, fo);
            if (st) goto done;
            for (size_t c = 0; c < C; c++)
                fo->p[c] = in[k + 2].p[c] * momentum + (k == 1 ? mean[c] : var[c]) * (1.0f - momentum);
            if (k == 1) rm = o; else rv = o;
        }
    } else {
        memcpy(mean, in[3].p, P * sizeof(float));
        memcpy(var, in[4].p, P * sizeof(float));
        /* opset < 14 training-era outputs (mean, var, saved_mean, saved_var): at inference they are
         * the running statistics */
        for (size_t k = 1; k < ctx->n_outputs && k < 5; k++) {
            if (ctx->node->out_slot[k] < 0) continue;
            const cort_value *src = ctx->inputs[k % 2 ? 3 : 4];
            cort_value *o;
            st = cort_kernel_output(ctx, k, src->type, src->shape, src->rank, &o);
            if (st) goto done;
            memcpy(o->data, src->data, src->bytes);
        }
    }
    for (size_t n = 0; n < N; n++)
        for (size_t c = 0; c < C; c++) {
            const float *xp = in[0].p + (n * C + c) * S;
            float *yp = fy.p + (n * C + c) * S;
            if (per_elem) {
                for (size_t i = 0; i < S; i++) {
                    size_t p = c * S + i;
                    yp[i] = (xp[i] - mean[p]) / sqrtf(var[p] + eps) * in[1].p[p] + in[2].p[p];
                }
            } else {
                float a = in[1].p[c] / sqrtf(var[c] + eps), b = in[2].p[c] - mean[c] * a;
                for (size_t i = 0; i < S; i++) yp[i] = xp[i] * a + b;
            }
        }
    nn_fbuf_commit(&fy, y);
    if (rm) nn_fbuf_commit(&frm, rm);
    if (rv) nn_fbuf_commit(&frv, rv);
done:
    cort_kernel_scratch_free(ctx, mean);
    free_bufs(in, 5);
    nn_fbuf_free(&fy); nn_fbuf_free(&frm); nn_fbuf_free(&frv);
    return st;
}

/* Mean and 1/sqrt(variance + eps) of n floats (double accumulation; variance clamped at 0). */
static void row_moments(const float *x, size_t n, float eps, float *mean, float *inv) {
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) { s += x[i]; s2 += (double)x[i] * x[i]; }
    double m = n ? s / (double)n : 0, v = n ? s2 / (double)n - m * m : 0;
    *mean = (float)m;
    *inv = (float)(1.0 / sqrt((v < 0 ? 0 : v) + eps));
}

/* ---- InstanceNormalization / GroupNormalization: normalize contiguous groups of N*G rows ---- */
typedef struct group_norm_job {
    const float *x, *scale, *bias;
    float *y;
    size_t groups, group_len, chans_per_group, chan_len;   /* per sample */
    float eps;
    int scale_per_group;
} group_norm_job;

static void group_norm_run(void *arg, size_t begin, size_t end) {
    const group_norm_job *j = arg;
    for (size_t t = begin; t < end; t++) {
        const float *x = j->x + t * j->group_len;
        float *y = j->y + t * j->group_len;
        float mf, inv;
        row_moments(x, j->group_len, j->eps, &mf, &inv);
        size_t g = t % j->groups;
        for (size_t c = 0; c < j->chans_per_group; c++) {
            size_t p = j->scale_per_group ? g : g * j->chans_per_group + c;
            float a = j->scale[p] * inv, b = j->bias[p] - mf * a;
            const float *xc = x + c * j->chan_len;
            float *yc = y + c * j->chan_len;
            for (size_t i = 0; i < j->chan_len; i++) yc[i] = xc[i] * a + b;
        }
    }
}

static cort_status *group_norm_common(cort_kernel_ctx *ctx, size_t groups, int per_group) {
    CORT_TRY(nn_check_input(ctx, 0, "X", 2, -1));
    const cort_value *x = ctx->inputs[0];
    const size_t N = (size_t)x->shape[0], C = (size_t)x->shape[1];
    char buf[160];
    if (groups == 0 || C % groups)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has shape %s: %zu channels are "
                               "not divisible into %zu groups", nn_shape(x, buf, sizeof buf), C, groups);
    size_t P = per_group ? groups : C;
    CORT_TRY(check_param(ctx, 1, "scale", P, P));
    CORT_TRY(check_param(ctx, 2, "B", P, P));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    nn_fbuf in[3], fy = { 0 };
    cort_status *st = load_inputs(ctx, 3, in);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (!st) {
        size_t chan_len = (N && C) ? x->count / (N * C) : 0;
        group_norm_job j = { in[0].p, in[1].p, in[2].p, fy.p, groups, chan_len * (C / groups), C / groups, chan_len,
                             cort_attr_float(ctx->node, "epsilon", 1e-5f), per_group };
        cort_parallel_for(x->count < 65536 ? NULL : ctx->pool, N * groups, 1, group_norm_run, &j);
        nn_fbuf_commit(&fy, y);
    }
    free_bufs(in, 3);
    nn_fbuf_free(&fy);
    return st;
}

static cort_status *instnorm_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "X", 2, -1));
    return group_norm_common(ctx, (size_t)ctx->inputs[0]->shape[1], 0);
}

static cort_status *groupnorm_run(cort_kernel_ctx *ctx) {
    int64_t g = cort_attr_int(ctx->node, "num_groups", 0);
    if (g < 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'num_groups' = %lld, expected >= 1",
                               (long long)g);
    return group_norm_common(ctx, (size_t)g, ctx->opset < 21);
}

/* ---- LayerNormalization ---- */
static cort_status *ln_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = &ctx->inputs[0];
    cort_infer_same(ctx);
    int64_t axis = cort_attr_int(ctx->node, "axis", -1);
    for (size_t i = 1; i < 3 && i < ctx->n_outputs; i++) {
        if (x->rank < 0) { nn_infer_type(ctx, i, CORT_TYPE_FLOAT); continue; }
        int64_t a = axis < 0 ? axis + x->rank : axis, dims[CORT_MAX_RANK];
        for (int d = 0; d < x->rank; d++) dims[d] = d < a ? x->dims[d] : 1;
        cort_tinfo_tensor_shape(&ctx->outputs[i], CORT_TYPE_FLOAT, dims, x->rank);
    }
    return NULL;
}

typedef struct ln_job {
    const float *x, *scale, *bias;
    const size_t *sidx, *bidx;   /* broadcast maps over a row (NULL: identity) */
    float *y, *mean, *inv;
    size_t row;
    float eps;
} ln_job;

static void ln_run_rows(void *arg, size_t begin, size_t end) {
    const ln_job *j = arg;
    for (size_t r = begin; r < end; r++) {
        const float *x = j->x + r * j->row;
        float *y = j->y + r * j->row;
        float mf, inv;
        row_moments(x, j->row, j->eps, &mf, &inv);
        if (j->mean) j->mean[r] = mf;
        if (j->inv) j->inv[r] = inv;
        if (!j->sidx && !j->bidx) {
            if (j->bias)
                for (size_t i = 0; i < j->row; i++) y[i] = (x[i] - mf) * inv * j->scale[i] + j->bias[i];
            else
                for (size_t i = 0; i < j->row; i++) y[i] = (x[i] - mf) * inv * j->scale[i];
        } else {
            for (size_t i = 0; i < j->row; i++) {
                float sc = j->scale[j->sidx ? j->sidx[i] : i];
                float b = j->bias ? j->bias[j->bidx ? j->bidx[i] : i] : 0.0f;
                y[i] = (x[i] - mf) * inv * sc + b;
            }
        }
    }
}

/* Index map of a parameter broadcast over the normalized dims (NULL when it is already full size). */
static cort_status *ln_param_map(cort_kernel_ctx *ctx, size_t pi, const char *name, const int64_t *ndims,
                                 size_t nrank, size_t row, size_t **out) {
    const cort_value *p = nn_opt_input(ctx, pi);
    *out = NULL;
    if (!p || p->count == row) {
        if (p && p->rank > nrank) goto bad;
        return NULL;
    }
    if (p->rank > nrank) goto bad;
    for (size_t i = 0; i < p->rank; i++) {
        int64_t d = p->shape[p->rank - 1 - i];
        if (d != 1 && d != ndims[nrank - 1 - i]) goto bad;
    }
    int64_t str[CORT_MAX_RANK];
    cort_broadcast_strides(ndims, nrank, p->shape, p->rank, str);
    size_t *map = cort_malloc((row + 1) * sizeof(size_t));
    if (!map) return cort_error_oom();
    for (size_t i = 0; i < row; i++) {
        size_t rem = i, off = 0;
        for (size_t d = nrank; d-- > 0;) {
            off += (rem % (size_t)ndims[d]) * (size_t)str[d];
            rem /= (size_t)ndims[d];
        }
        map[i] = off;
    }
    *out = map;
    return NULL;
bad:;
    char bp[160], bx[160];
    return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, not broadcastable to "
                           "the normalized shape %s", pi, name, nn_shape(p, bp, sizeof bp),
                           cort_shape_str(ndims, nrank, bx, sizeof bx));
}

static cort_status *ln_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "X", 1, -1));
    CORT_TRY(nn_check_input(ctx, 1, "Scale", 0, -1));
    const cort_value *x = ctx->inputs[0];
    int64_t axis = cort_attr_int(ctx->node, "axis", -1), a = axis < 0 ? axis + (int64_t)x->rank : axis;
    char buf[160];
    if (a < 0 || a >= (int64_t)x->rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' = %lld is out of range for "
                               "input 0 'X' of shape %s", (long long)axis, nn_shape(x, buf, sizeof buf));
    size_t rows = 1, row = 1;
    for (size_t d = 0; d < x->rank; d++) *(d < (size_t)a ? &rows : &row) *= (size_t)x->shape[d];
    const int64_t *ndims = x->shape + a;
    size_t nrank = x->rank - (size_t)a;
    size_t *smap = NULL, *bmap = NULL;
    nn_fbuf in[3], fy = { 0 };
    cort_value *y, *mo = NULL, *io = NULL;
    memset(in, 0, sizeof in);
    cort_status *st = ln_param_map(ctx, 1, "Scale", ndims, nrank, row, &smap);
    if (!st) st = ln_param_map(ctx, 2, "B", ndims, nrank, row, &bmap);
    if (!st) st = cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y);
    int64_t sdims[CORT_MAX_RANK];
    for (size_t d = 0; d < x->rank; d++) sdims[d] = d < (size_t)a ? x->shape[d] : 1;
    if (!st && ctx->n_outputs > 1 && ctx->node->out_slot[1] >= 0)
        st = cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, sdims, x->rank, &mo);
    if (!st && ctx->n_outputs > 2 && ctx->node->out_slot[2] >= 0)
        st = cort_kernel_output(ctx, 2, CORT_TYPE_FLOAT, sdims, x->rank, &io);
    if (!st) st = load_inputs(ctx, 3, in);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (!st) {
        ln_job j = { in[0].p, in[1].p, in[2].p, smap, bmap, fy.p, mo ? mo->data : NULL, io ? io->data : NULL, row,
                     cort_attr_float(ctx->node, "epsilon", 1e-5f) };
        cort_parallel_for(x->count < 32768 ? NULL : ctx->pool, rows, 1, ln_run_rows, &j);
        nn_fbuf_commit(&fy, y);
    }
    cort_free(smap);
    cort_free(bmap);
    free_bufs(in, 3);
    nn_fbuf_free(&fy);
    return st;
}

/* ---- LpNormalization ---- */
static cort_status *lpnorm_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "input", 1, -1));
    const cort_value *x = ctx->inputs[0];
    int64_t axis = cort_attr_int(ctx->node, "axis", -1), a = axis < 0 ? axis + (int64_t)x->rank : axis;
    int64_t p = cort_attr_int(ctx->node, "p", 2);
    char buf[160];
    if (a < 0 || a >= (int64_t)x->rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' = %lld is out of range for "
                               "input 0 of shape %s", (long long)axis, nn_shape(x, buf, sizeof buf));
    if (p != 1 && p != 2)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'p' = %lld, expected 1 or 2",
                               (long long)p);
    size_t outer = 1, n = (size_t)x->shape[a], inner = 1;
    for (size_t d = 0; d < x->rank; d++)
        if (d < (size_t)a) outer *= (size_t)x->shape[d];
        else if (d > (size_t)a) inner *= (size_t)x->shape[d];
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    nn_fbuf fx = { 0 }, fy = { 0 };
    cort_status *st = nn_fbuf_in(x, &fx);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (!st) {
        for (size_t o = 0; o < outer; o++)
            for (size_t i = 0; i < inner; i++) {
                const float *xp = fx.p + o * n * inner + i;
                float *yp = fy.p + o * n * inner + i;
                double s = 0;
                for (size_t k = 0; k < n; k++) s += p == 1 ? fabs((double)xp[k * inner]) : (double)xp[k * inner] * xp[k * inner];
                double norm = p == 1 ? s : sqrt(s);
                for (size_t k = 0; k < n; k++) yp[k * inner] = norm > 0 ? (float)(xp[k * inner] / norm) : 0.0f;
            }
        nn_fbuf_commit(&fy, y);
    }
    nn_fbuf_free(&fx);
    nn_fbuf_free(&fy);
    return st;
}

/* ---- MeanVarianceNormalization: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over `axes` ---- */
static cort_status *mvn_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "X", 0, -1));
    const cort_value *x = ctx->inputs[0];
    static const int64_t dflt_axes[3] = { 0, 2, 3 };
    const int64_t *axes;
    size_t na = cort_attr_ints(ctx->node, "axes", &axes);
    if (!cort_attr_get(ctx->node, "axes")) { axes = dflt_axes; na = 3; }
    int reduced[CORT_MAX_RANK] = { 0 };
    char buf[160];
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + (int64_t)x->rank : axes[i];
        if (a < 0 || a >= (int64_t)x->rank)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "axes[%zu] = %lld is out of range for input "
                                   "0 'X' of shape %s", i, (long long)axes[i], nn_shape(x, buf, sizeof buf));
        reduced[a] = 1;
    }
    /* group id of each element = its index with the reduced dims dropped */
    size_t groups = 1;
    for (size_t d = 0; d < x->rank; d++) if (!reduced[d]) groups *= (size_t)x->shape[d];
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    nn_fbuf fx = { 0 }, fy = { 0 };
    double *acc = cort_kernel_scratch(ctx, (2 * groups + 1) * sizeof(double));
    size_t *gid = cort_kernel_scratch(ctx, (x->count + 1) * sizeof(size_t));
    if (acc) memset(acc, 0, (2 * groups + 1) * sizeof(double));
    cort_status *st = !acc || !gid ? cort_error_oom() : nn_fbuf_in(x, &fx);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (!st) {
        size_t cnt = groups ? x->count / groups : 0;
        for (size_t i = 0; i < x->count; i++) {
            size_t rem = i, g = 0, mul = 1;
            for (size_t d = x->rank; d-- > 0;) {
                size_t idx = rem % (size_t)x->shape[d];
                rem /= (size_t)x->shape[d];
                if (!reduced[d]) { g += idx * mul; mul *= (size_t)x->shape[d]; }
            }
            gid[i] = g;
            acc[2 * g] += fx.p[i];
            acc[2 * g + 1] += (double)fx.p[i] * fx.p[i];
        }
        for (size_t g = 0; g < groups; g++) {
            double m = acc[2 * g] / (double)cnt, v = acc[2 * g + 1] / (double)cnt - m * m;
            acc[2 * g] = m;
            acc[2 * g + 1] = sqrt(v < 0 ? 0 : v) + 1e-9;
        }
        for (size_t i = 0; i < x->count; i++)
            fy.p[i] = (float)((fx.p[i] - acc[2 * gid[i]]) / acc[2 * gid[i] + 1]);
        nn_fbuf_commit(&fy, y);
    }
    cort_kernel_scratch_free(ctx, acc);
    cort_kernel_scratch_free(ctx, gid);
    nn_fbuf_free(&fx);
    nn_fbuf_free(&fy);
    return st;
}

/* ---- LRN ---- */
static cort_status *lrn_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "X", 2, -1));
    const cort_value *x = ctx->inputs[0];
    int64_t size = cort_attr_int(ctx->node, "size", 0);
    if (size < 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'size' = %lld, expected >= 1",
                               (long long)size);
    const float alpha = cort_attr_float(ctx->node, "alpha", 1e-4f), beta = cort_attr_float(ctx->node, "beta", 0.75f);
    const float bias = cort_attr_float(ctx->node, "bias", 1.0f);
    const size_t N = (size_t)x->shape[0], C = (size_t)x->shape[1], S = (N && C) ? x->count / (N * C) : 0;
    const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    nn_fbuf fx = { 0 }, fy = { 0 };
    cort_status *st = nn_fbuf_in(x, &fx);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (!st) {
        for (size_t n = 0; n < N; n++)
            for (size_t c = 0; c < C; c++) {
                int64_t c0 = (int64_t)c - lo < 0 ? 0 : (int64_t)c - lo;
                int64_t c1 = (int64_t)c + hi >= (int64_t)C ? (int64_t)C - 1 : (int64_t)c + hi;
                for (size_t i = 0; i < S; i++) {
                    double sq = 0;
                    for (int64_t k = c0; k <= c1; k++) {
                        float v = fx.p[(n * C + (size_t)k) * S + i];
                        sq += (double)v * v;
                    }
                    size_t at = (n * C + c) * S + i;
                    fy.p[at] = (float)(fx.p[at] / pow(bias + alpha / (double)size * sq, beta));
                }
            }
        nn_fbuf_commit(&fy, y);
    }
    nn_fbuf_free(&fx);
    nn_fbuf_free(&fy);
    return st;
}

static cort_status *same_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

const cort_op_def nn_op_batch_norm = {
    .name = "BatchNormalization", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = bn_infer, .run = bn_run };
const cort_op_def nn_op_instance_norm = {
    .name = "InstanceNormalization", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = same_infer, .run = instnorm_run };
const cort_op_def nn_op_group_norm = {
    .name = "GroupNormalization", .domain = "", .min_opset = 18, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = same_infer, .run = groupnorm_run };
const cort_op_def nn_op_layer_norm = {
    .name = "LayerNormalization", .domain = "", .min_opset = 17, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = ln_infer, .run = ln_run };
const cort_op_def nn_op_lp_norm = {
    .name = "LpNormalization", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = same_infer, .run = lpnorm_run };
const cort_op_def nn_op_mvn = {
    .name = "MeanVarianceNormalization", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .type_input = 0, .infer = same_infer, .run = mvn_run };
const cort_op_def nn_op_lrn = {
    .name = "LRN", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS, .type_input = 0,
    .infer = same_infer, .run = lrn_run };
