/* Reduce* kernels. The input shape is collapsed into alternating kept/reduced runs (size-1 dims
 * dropped, adjacent dims of the same kind merged), which turns the common LayerNorm / pooling
 * patterns into two float32 fast paths:
 *   row: the innermost run is reduced  -> each output reduces contiguous rows (8-lane partial sums);
 *   col: the innermost run is kept     -> outputs are updated a contiguous block at a time.
 * Anything else (and every non-float type) goes through the generic path: an odometer over the
 * reduced positions per output, accumulating in double, or exactly in int64 for integer inputs. */
#include <math.h>
#include <string.h>
#include "reduce.h"

typedef struct rd_plan {
    size_t nk, nr;                                  /* kept / reduced runs, outer to inner */
    size_t kd[CORT_MAX_RANK], ks[CORT_MAX_RANK];    /* kept run sizes and input strides */
    size_t rd[CORT_MAX_RANK], rs[CORT_MAX_RANK];    /* reduced run sizes and input strides */
    size_t O, R;                                    /* output count, reduced positions per output */
    int inner_reduced;                              /* the innermost run is a reduced one */
} rd_plan;

static void plan_build(const int64_t *dims, size_t rank, const uint8_t *red, rd_plan *p) {
    size_t stride[CORT_MAX_RANK], s = 1;
    for (size_t i = rank; i-- > 0;) { stride[i] = s; s *= (size_t)dims[i]; }
    p->nk = p->nr = 0; p->O = p->R = 1; p->inner_reduced = 0;
    int last = -1;
    for (size_t i = 0; i < rank; i++) {
        size_t d = (size_t)dims[i];
        if (d == 1) continue;
        int f = red[i] ? 1 : 0;
        size_t *ld = f ? p->rd : p->kd, *ls = f ? p->rs : p->ks, *n = f ? &p->nr : &p->nk;
        if (f == last) { ld[*n - 1] *= d; ls[*n - 1] = stride[i]; }
        else { ld[*n] = d; ls[*n] = stride[i]; (*n)++; }
        if (f) p->R *= d; else p->O *= d;
        last = f;
    }
    p->inner_reduced = last == 1;
}

static size_t out_offset(const rd_plan *p, size_t o, size_t nk) {
    size_t off = 0;
    for (size_t d = nk; d-- > 0;) { off += (o % p->kd[d]) * p->ks[d]; o /= p->kd[d]; }
    return off;
}

/* Advances an odometer over rd[0..n); returns the new offset. */
static inline size_t odo_next(const rd_plan *p, size_t n, size_t *idx, size_t off) {
    for (size_t d = n; d-- > 0;) {
        off += p->rs[d];
        if (++idx[d] < p->rd[d]) return off;
        off -= p->rs[d] * p->rd[d];
        idx[d] = 0;
    }
    return off;
}

/* ---------------- float32 fast path ---------------- */

static float row_sum(const float *x, size_t n) {
    float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) for (int j = 0; j < 8; j++) a[j] += x[i + j];
    float s = ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]));
    for (; i < n; i++) s += x[i];
    return s;
}
static float row_sumsq(const float *x, size_t n) {
    float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) for (int j = 0; j < 8; j++) a[j] += x[i + j] * x[i + j];
    float s = ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]));
    for (; i < n; i++) s += x[i] * x[i];
    return s;
}
static float row_sumabs(const float *x, size_t n) {
    float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) for (int j = 0; j < 8; j++) a[j] += fabsf(x[i + j]);
    float s = ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]));
    for (; i < n; i++) s += fabsf(x[i]);
    return s;
}
/* NaN propagates like numpy: once seen, the result stays NaN */
static float row_max(const float *x, size_t n, float m) {
    for (size_t i = 0; i < n; i++) m = (x[i] > m || x[i] != x[i]) ? x[i] : m;
    return m;
}
static float row_min(const float *x, size_t n, float m) {
    for (size_t i = 0; i < n; i++) m = (x[i] < m || x[i] != x[i]) ? x[i] : m;
    return m;
}
static float row_prod(const float *x, size_t n) {
    float p = 1;
    for (size_t i = 0; i < n; i++) p *= x[i];
    return p;
}
static float row_sumexp(const float *x, size_t n, float m) {
    float s = 0;
    for (size_t i = 0; i < n; i++) s += expf(x[i] - m);
    return s;
}

static float f32_init(rd_reduce_kind k) {
    switch (k) {
    case RD_MAX: case RD_LOGSUMEXP: return -INFINITY;
    case RD_MIN: return INFINITY;
    case RD_PROD: return 1;
    default: return 0;
    }
}
static float f32_finish(rd_reduce_kind k, float acc, float m, size_t R) {
    switch (k) {
    case RD_MEAN: return acc / (float)R;
    case RD_L2: return sqrtf(acc);
    case RD_LOGSUM: return logf(acc);
    case RD_LOGSUMEXP: return isinf(m) || m != m ? m : m + logf(acc);
    default: return acc;
    }
}

typedef struct rd_job {
    rd_reduce_kind kind;
    const rd_plan *p;
    const cort_value *x;
    cort_value *y;
} rd_job;

/* row mode: innermost run (length L, stride 1) is reduced */
static void fast_rows(void *arg, size_t begin, size_t end) {
    const rd_job *j = arg;
    const rd_plan *p = j->p;
    const float *x = j->x->data;
    float *y = j->y->data;
    size_t nro = p->nr ? p->nr - 1 : 0, L = p->nr ? p->rd[p->nr - 1] : 1, RB = p->R / L;
    rd_reduce_kind k = j->kind;
    for (size_t o = begin; o < end; o++) {
        const float *base = x + out_offset(p, o, p->nk);
        size_t idx[CORT_MAX_RANK] = {0}, off = 0;
        float acc = f32_init(k), m = -INFINITY;
        if (k == RD_LOGSUMEXP) {
            for (size_t b = 0; b < RB; b++) { m = row_max(base + off, L, m); off = odo_next(p, nro, idx, off); }
            acc = 0;
            if (isinf(m) || m != m) { y[o] = m; continue; }
        }
        for (size_t b = 0; b < RB; b++) {
            const float *r = base + off;
            switch (k) {
            case RD_SUM: case RD_MEAN: acc += row_sum(r, L); break;
            case RD_SUMSQ: case RD_L2: acc += row_sumsq(r, L); break;
            case RD_L1: acc += row_sumabs(r, L); break;
            case RD_LOGSUM: acc += row_sum(r, L); break;
            case RD_MAX: acc = row_max(r, L, acc); break;
            case RD_MIN: acc = row_min(r, L, acc); break;
            case RD_PROD: acc *= row_prod(r, L); break;
            case RD_LOGSUMEXP: acc += row_sumexp(r, L, m); break;
            }
            off = odo_next(p, nro, idx, off);
        }
        y[o] = f32_finish(k, acc, m, p->R);
    }
}

/* col mode: innermost run (length K, stride 1) is kept; items are groups of K outputs */
static void fast_cols(void *arg, size_t begin, size_t end) {
    enum { CH = 256 };
    const rd_job *j = arg;
    const rd_plan *p = j->p;
    const float *x = j->x->data;
    float *y = j->y->data;
    size_t K = p->kd[p->nk - 1];
    rd_reduce_kind k = j->kind;
    float acc[CH], mx[CH];
    for (size_t g = begin; g < end; g++) {
        size_t gbase = out_offset(p, g, p->nk - 1);
        for (size_t c0 = 0; c0 < K; c0 += CH) {
            size_t cn = K - c0 < CH ? K - c0 : CH;
            const float *base = x + gbase + c0;
            size_t idx[CORT_MAX_RANK] = {0}, off = 0;
            for (size_t c = 0; c < cn; c++) { acc[c] = f32_init(k); mx[c] = -INFINITY; }
            if (k == RD_LOGSUMEXP) {
                for (size_t b = 0; b < p->R; b++) {
                    const float *r = base + off;
                    for (size_t c = 0; c < cn; c++) mx[c] = (r[c] > mx[c] || r[c] != r[c]) ? r[c] : mx[c];
                    off = odo_next(p, p->nr, idx, off);
                }
                for (size_t c = 0; c < cn; c++) acc[c] = 0;
                off = 0; memset(idx, 0, sizeof idx);
            }
            for (size_t b = 0; b < p->R; b++) {
                const float *r = base + off;
                switch (k) {
                case RD_SUM: case RD_MEAN: case RD_LOGSUM: for (size_t c = 0; c < cn; c++) acc[c] += r[c]; break;
                case RD_SUMSQ: case RD_L2: for (size_t c = 0; c < cn; c++) acc[c] += r[c] * r[c]; break;
                case RD_L1: for (size_t c = 0; c < cn; c++) acc[c] += fabsf(r[c]); break;
                case RD_MAX: for (size_t c = 0; c < cn; c++) acc[c] = (r[c] > acc[c] || r[c] != r[c]) ? r[c] : acc[c]; break;
                case RD_MIN: for (size_t c = 0; c < cn; c++) acc[c] = (r[c] < acc[c] || r[c] != r[c]) ? r[c] : acc[c]; break;
                case RD_PROD: for (size_t c = 0; c < cn; c++) acc[c] *= r[c]; break;
                case RD_LOGSUMEXP:
                    for (size_t c = 0; c < cn; c++) if (!isinf(mx[c]) && mx[c] == mx[c]) acc[c] += expf(r[c] - mx[c]);
                    break;
                }
                off = odo_next(p, p->nr, idx, off);
            }
            for (size_t c = 0; c < cn; c++) y[g * K + c0 + c] = f32_finish(k, acc[c], mx[c], p->R);
        }
    }
}

/* ---------------- generic path ---------------- */

static int int_exact(rd_reduce_kind k) {
    return k == RD_SUM || k == RD_MEAN || k == RD_PROD || k == RD_MAX || k == RD_MIN || k == RD_L1 || k == RD_SUMSQ;
}

static void generic_outputs(void *arg, size_t begin, size_t end) {
    const rd_job *j = arg;
    const rd_plan *p = j->p;
    const void *x = j->x->data;
    cort_type t = j->x->type;
    rd_reduce_kind k = j->kind;
    int use_int = (cort_type_is_int(t) || t == CORT_TYPE_BOOL) && int_exact(k), u64 = t == CORT_TYPE_UINT64;
    for (size_t o = begin; o < end; o++) {
        size_t base = out_offset(p, o, p->nk);
        size_t idx[CORT_MAX_RANK] = {0}, off = 0;
        if (use_int) {
            int64_t acc = k == RD_PROD ? 1 : 0;
            for (size_t b = 0; b < p->R; b++) {
                int64_t v = cort_load_i64(x, t, base + off);
                if (b == 0 && (k == RD_MAX || k == RD_MIN)) acc = v;
                switch (k) {
                case RD_SUM: case RD_MEAN: acc = (int64_t)((uint64_t)acc + (uint64_t)v); break;
                case RD_PROD: acc = (int64_t)((uint64_t)acc * (uint64_t)v); break;
                case RD_L1: acc = (int64_t)((uint64_t)acc + (uint64_t)(v < 0 && !u64 ? -(uint64_t)v : (uint64_t)v)); break;
                case RD_SUMSQ: acc = (int64_t)((uint64_t)acc + (uint64_t)v * (uint64_t)v); break;
                case RD_MAX: if (u64 ? (uint64_t)v > (uint64_t)acc : v > acc) acc = v; break;
                case RD_MIN: if (u64 ? (uint64_t)v < (uint64_t)acc : v < acc) acc = v; break;
                default: break;
                }
                off = odo_next(p, p->nr, idx, off);
            }
            if (k == RD_MEAN) acc = u64 ? (int64_t)((uint64_t)acc / p->R) : acc / (int64_t)p->R;
            cort_store_i64(j->y->data, t, o, acc);
            continue;
        }
        double acc = k == RD_PROD ? 1 : k == RD_MAX || k == RD_LOGSUMEXP ? -INFINITY : k == RD_MIN ? INFINITY : 0;
        double m = -INFINITY;
        if (k == RD_LOGSUMEXP) {
            for (size_t b = 0; b < p->R; b++) {
                double v = cort_load_f64(x, t, base + off);
                m = (v > m || v != v) ? v : m;
                off = odo_next(p, p->nr, idx, off);
            }
            off = 0; memset(idx, 0, sizeof idx);
            acc = 0;
        }
        if (k != RD_LOGSUMEXP || (!isinf(m) && m == m))
            for (size_t b = 0; b < p->R; b++) {
                double v = cort_load_f64(x, t, base + off);
                switch (k) {
                case RD_SUM: case RD_MEAN: case RD_LOGSUM: acc += v; break;
                case RD_SUMSQ: case RD_L2: acc += v * v; break;
                case RD_L1: acc += fabs(v); break;
                case RD_MAX: acc = (v > acc || v != v) ? v : acc; break;
                case RD_MIN: acc = (v < acc || v != v) ? v : acc; break;
                case RD_PROD: acc *= v; break;
                case RD_LOGSUMEXP: acc += exp(v - m); break;
                }
                off = odo_next(p, p->nr, idx, off);
            }
        switch (k) {
        case RD_MEAN: acc /= (double)p->R; break;
        case RD_L2: acc = sqrt(acc); break;
        case RD_LOGSUM: acc = log(acc); break;
        case RD_LOGSUMEXP: acc = isinf(m) || m != m ? m : m + log(acc); break;
        default: break;
        }
        cort_store_f64(j->y->data, t, o, acc);
    }
}

/* The value of a reduction over an empty set. */
static void fill_empty(rd_reduce_kind k, cort_value *y) {
    cort_type t = y->type;
    if (t == CORT_TYPE_BOOL) {   /* False < True: the max of nothing is False, the min True */
        for (size_t i = 0; i < y->count; i++) cort_store_i64(y->data, t, i, k == RD_MIN);
        return;
    }
    if (cort_type_is_int(t)) {
        int64_t lo, hi;
        switch (t) {
        case CORT_TYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
        case CORT_TYPE_UINT8: lo = 0; hi = UINT8_MAX; break;
        case CORT_TYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
        case CORT_TYPE_UINT16: lo = 0; hi = UINT16_MAX; break;
        case CORT_TYPE_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
        case CORT_TYPE_UINT32: lo = 0; hi = UINT32_MAX; break;
        case CORT_TYPE_UINT64: lo = 0; hi = -1; break;
        default: lo = INT64_MIN; hi = INT64_MAX; break;
        }
        int64_t v = k == RD_PROD ? 1 : k == RD_MIN ? hi : (k == RD_MAX || k == RD_LOGSUM || k == RD_LOGSUMEXP) ? lo : 0;
        for (size_t i = 0; i < y->count; i++) cort_store_i64(y->data, t, i, v);
        return;
    }
    double v = k == RD_PROD ? 1 : k == RD_MIN ? INFINITY : k == RD_MEAN ? NAN
             : (k == RD_MAX || k == RD_LOGSUM || k == RD_LOGSUMEXP) ? -INFINITY : 0;
    for (size_t i = 0; i < y->count; i++) cort_store_f64(y->data, t, i, v);
}

void rd_reduce_compute(rd_reduce_kind kind, const cort_value *x, const uint8_t *reduce, cort_value *y,
                       cort_pool *pool, int fast) {
    rd_plan p;
    plan_build(x->shape, x->rank, reduce, &p);
    if (p.O == 0) return;
    if (p.R == 0) { fill_empty(kind, y); return; }
    rd_job job = { kind, &p, x, y };
    const size_t target = 16384;   /* input elements per task */
    if (fast && x->type == CORT_TYPE_FLOAT) {
        if (p.nr == 0 || p.inner_reduced) {
            size_t grain = target / p.R + 1;
            cort_parallel_for(pool, p.O, grain, fast_rows, &job);
        } else {
            size_t K = p.kd[p.nk - 1], groups = p.O / K;
            size_t grain = target / (p.R * K) + 1;
            cort_parallel_for(pool, groups, grain, fast_cols, &job);
        }
        return;
    }
    cort_parallel_for(pool, p.O, target / p.R + 1, generic_outputs, &job);
}

/* ---------------- operator glue ---------------- */

typedef struct rd_reduce_state {
    int keepdims, noop;
    int has_axes_attr;
    size_t n_axes;
    int64_t axes[CORT_MAX_RANK];
} rd_reduce_state;

/* ReduceSum reads axes from input 1 since opset 13, the others since 18. */
static int axes_from_input(const char *op, int opset) {
    return strcmp(op, "ReduceSum") == 0 ? opset >= 13 : opset >= 18;
}

static cort_status *reduce_init(const cort_node *node, void **state) {
    rd_reduce_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    s->keepdims = cort_attr_int(node, "keepdims", 1) != 0;
    s->noop = cort_attr_int(node, "noop_with_empty_axes", 0) != 0;
    const int64_t *axes;
    size_t n = cort_attr_ints(node, "axes", &axes);
    if (n > CORT_MAX_RANK) {
        cort_free(s);
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'axes' has %zu entries, at most %d supported",
                               n, CORT_MAX_RANK);
    }
    s->has_axes_attr = cort_attr_get(node, "axes") != NULL;
    s->n_axes = n;
    if (n) memcpy(s->axes, axes, n * sizeof *axes);
    *state = s;
    return NULL;
}

/* Resolves the axes into a mask. *identity is set when nothing is reduced (noop_with_empty_axes). */
static cort_status *resolve_axes(const cort_node *node, const rd_reduce_state *s, const int64_t *axes, size_t n,
                                 size_t rank, uint8_t *mask, int *identity) {
    *identity = 0;
    if (n == 0) {
        if (s->noop) { memset(mask, 0, rank); *identity = 1; return NULL; }
        memset(mask, 1, rank);
        return NULL;
    }
    memset(mask, 0, rank);
    for (size_t i = 0; i < n; i++) {
        size_t a;
        CORT_TRY(rd_axis(node, axes[i], rank, "axes entry", &a));
        mask[a] = 1;
    }
    return NULL;
}

static void reduced_dims(const int64_t *in, size_t rank, const uint8_t *mask, int keepdims, int64_t *out, size_t *out_rank) {
    size_t r = 0;
    for (size_t i = 0; i < rank; i++) {
        if (!mask[i]) out[r++] = in[i];
        else if (keepdims) out[r++] = 1;
    }
    *out_rank = r;
}

static cort_status *reduce_run(cort_kernel_ctx *ctx, rd_reduce_kind kind) {
    const rd_reduce_state *s = ctx->state;
    const cort_value *x = rd_input(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'data' must be a tensor");
    /* ReduceMax / ReduceMin take bool since opset 20 */
    const int bool_ok = x->type == CORT_TYPE_BOOL && (kind == RD_MAX || kind == RD_MIN) && ctx->opset >= 20;
    if (!cort_type_is_float(x->type) && !cort_type_is_int(x->type) && !bool_ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'data' has unsupported type %s%s",
                               cort_type_name(x->type), x->type == CORT_TYPE_BOOL ? " (ReduceMax / ReduceMin take bool "
                               "since opset 20)" : "");
    int64_t axes[CORT_MAX_RANK];
    size_t n_axes = 0;
    if (axes_from_input(ctx->node->op_type, ctx->opset)) {
        const cort_value *a = rd_input(ctx, 1);
        if (a) CORT_TRY(rd_read_ints(ctx->node, a, 1, "axes", axes, CORT_MAX_RANK, &n_axes));
    } else {
        n_axes = s->n_axes;
        memcpy(axes, s->axes, n_axes * sizeof *axes);
    }
    uint8_t mask[CORT_MAX_RANK];
    int identity;
    CORT_TRY(resolve_axes(ctx->node, s, axes, n_axes, x->rank, mask, &identity));
    if (identity && (kind == RD_SUM || kind == RD_MEAN || kind == RD_MAX || kind == RD_MIN || kind == RD_PROD ||
                     kind == RD_LOGSUMEXP)) {
        cort_kernel_set_output(ctx, 0, cort_value_retain((cort_value *)x));
        return NULL;
    }
    int64_t od[CORT_MAX_RANK];
    size_t orank;
    reduced_dims(x->shape, x->rank, mask, s->keepdims, od, &orank);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, od, orank, &y));
    rd_reduce_compute(kind, x, mask, y, ctx->pool, 1);
    return NULL;
}

static cort_status *reduce_infer(cort_infer_ctx *ctx) {
    const rd_reduce_state *s = ctx->state;
    const cort_tinfo *x = rd_tinput(ctx, 0);
    if (!x) return NULL;
    cort_tinfo_tensor(&ctx->outputs[0], x->elem);
    if (x->rank < 0) return NULL;
    int64_t axes[CORT_MAX_RANK];
    size_t n_axes = 0;
    if (axes_from_input(ctx->node->op_type, ctx->opset)) {
        const cort_tinfo *a = rd_tinput(ctx, 1);
        if (a && !rd_const_ints(a, axes, CORT_MAX_RANK, &n_axes)) {
            if (s->keepdims) {   /* rank is kept even when the axes are unknown */
                int64_t d[CORT_MAX_RANK];
                for (int i = 0; i < x->rank; i++) d[i] = -1;
                cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, d, x->rank);
            }
            return NULL;
        }
    } else {
        n_axes = s->n_axes;
        memcpy(axes, s->axes, n_axes * sizeof *axes);
    }
    uint8_t mask[CORT_MAX_RANK];
    int identity;
    CORT_TRY(resolve_axes(ctx->node, s, axes, n_axes, (size_t)x->rank, mask, &identity));
    int64_t od[CORT_MAX_RANK];
    size_t orank;
    reduced_dims(x->dims, (size_t)x->rank, mask, s->keepdims, od, &orank);
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, od, (int)orank);
    return NULL;
}

#define RD_REDUCE_OP(sym, opname, kind, TYPES)                                                   \
    static cort_status *run_##sym(cort_kernel_ctx *ctx) { return reduce_run(ctx, kind); }       \
    const cort_op_def rd_op_##sym = { .name = opname, .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, \
    .types = TYPES, .init = reduce_init, .free_state = cort_free, .infer = reduce_infer, \
    .run = run_##sym };

RD_REDUCE_OP(reduce_sum, "ReduceSum", RD_SUM, CORT_TMASK_NUMERIC)
RD_REDUCE_OP(reduce_mean, "ReduceMean", RD_MEAN, CORT_TMASK_NUMERIC)
RD_REDUCE_OP(reduce_max, "ReduceMax", RD_MAX, CORT_TMASK_NUMERIC | CORT_TBIT(CORT_TYPE_BOOL))
RD_REDUCE_OP(reduce_min, "ReduceMin", RD_MIN, CORT_TMASK_NUMERIC | CORT_TBIT(CORT_TYPE_BOOL))
RD_REDUCE_OP(reduce_prod, "ReduceProd", RD_PROD, CORT_TMASK_NUMERIC)
RD_REDUCE_OP(reduce_l1, "ReduceL1", RD_L1, CORT_TMASK_NUMERIC)
RD_REDUCE_OP(reduce_l2, "ReduceL2", RD_L2, CORT_TMASK_NUMERIC)
RD_REDUCE_OP(reduce_log_sum, "ReduceLogSum", RD_LOGSUM, CORT_TMASK_NUMERIC)
RD_REDUCE_OP(reduce_log_sum_exp, "ReduceLogSumExp", RD_LOGSUMEXP, CORT_TMASK_NUMERIC)
RD_REDUCE_OP(reduce_sum_square, "ReduceSumSquare", RD_SUMSQ, CORT_TMASK_NUMERIC)
