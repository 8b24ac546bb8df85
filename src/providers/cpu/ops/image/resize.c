/* Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9).
 *
 * Every axis gets a table of taps: for each output coordinate, `ntaps` (input index, weight) pairs
 * following the ONNX reference (_interpolate_1d_with_x: coordinate transform, ratio in (0, 1],
 * edge-clamped neighbours, antialias footprint scaled by 1/scale, exclude_outside renormalization).
 * Linear and cubic resizes are separable, so the fast path applies one axis at a time
 * ([outer, n_in, inner] -> [outer, n_out, inner] with contiguous `inner` rows), skipping identity
 * axes (N and C of an NCHW resize). Nearest is a pure N-D gather of element bytes (any type).
 * tf_crop_and_resize points outside the ROI on any axis take extrapolation_value. */
#include <math.h>
#include <string.h>
#include "resize.h"
#include "../reduce/reduce_ops.h"
#include "../../kernels/isa_config.h"
#include "../../../../core/once.h"

typedef struct rs_axis {
    size_t in, out, ntaps;
    int64_t *idx;          /* out * ntaps input indices, clamped to [0, in) */
    double *w;             /* out * ntaps weights */
    float *wf;             /* same, float */
    uint8_t *outside;      /* out flags (tf_crop_and_resize), NULL when none is outside */
    int identity;
} rs_axis;

static void axis_free(rs_axis *a) {
    cort_free(a->idx); cort_free(a->w); cort_free(a->wf); cort_free(a->outside);
    memset(a, 0, sizeof *a);
}

static double cubic_w(double x, double A) {
    x = fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0;
}

/* Input coordinate of output coordinate x along one axis; *outside for tf_crop_and_resize misses. */
static double coord(const rd_resize_params *p, size_t d, double x, int *outside) {
    double in = (double)p->in[d], scale = p->scale[d], ow = scale * in;   /* float output width, as the reference */
    *outside = 0;
    switch (p->ctm) {
    case RS_ASYMMETRIC: return x / scale;
    case RS_ALIGN_CORNERS: return ow == 1 ? 0 : x * (in - 1) / (ow - 1);
    case RS_PYTORCH_HALF_PIXEL: return ow == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case RS_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / scale;
    case RS_HALF_PIXEL_SYMMETRIC: {
        double adj = (double)p->out[d] / ow, center = in / 2, off = center * (1 - adj);
        return off + (x + 0.5) / scale - 0.5;
    }
    case RS_TF_CROP_AND_RESIZE: {
        double r0 = p->roi0[d], r1 = p->roi1[d], v;
        if (ow == 1) v = (r1 - r0) * (in - 1) / 2;
        else v = x * (r1 - r0) * (in - 1) / (ow - 1);
        v += r0 * (in - 1);
        if (v < 0 || v > in - 1) *outside = 1;
        return v;
    }
    default: return (x + 0.5) / scale - 0.5;
    }
}

static int64_t nearest_index(const rd_resize_params *p, size_t d, double v) {
    double f = floor(v), r = v - f;
    int64_t i;
    switch (p->nearest_mode) {
    case RS_ROUND_PREFER_CEIL: i = (int64_t)(r >= 0.5 ? f + 1 : f); break;
    case RS_FLOOR: i = (int64_t)f; break;
    case RS_CEIL: i = (int64_t)ceil(v); break;
    case RS_SIMPLE: i = p->scale[d] < 1 ? (int64_t)ceil(v) : (int64_t)v; break;
    default: i = (int64_t)(r > 0.5 ? f + 1 : f); break;
    }
    return i;
}

static cort_status *axis_build(const rd_resize_params *p, size_t d, rs_axis *a) {
    size_t in = (size_t)p->in[d], out = (size_t)p->out[d];
    double scale = p->scale[d];
    int aa = p->antialias && scale < 1 && p->mode != RS_NEAREST;
    int64_t start;
    size_t nt;
    if (p->mode == RS_NEAREST) { start = 0; nt = 1; }
    else if (p->mode == RS_LINEAR) { start = aa ? (int64_t)floor(-1 / scale) + 1 : 0; nt = (size_t)(2 - 2 * start); }
    else { start = aa ? (int64_t)floor(-2 / scale) + 1 : -1; nt = (size_t)(2 - 2 * start); }
    memset(a, 0, sizeof *a);
    a->in = in; a->out = out; a->ntaps = nt;
    if (nt > ((size_t)1 << 24) || (out && nt > SIZE_MAX / sizeof(double) / out)) return cort_error_oom();
    size_t n = out * nt > 0 ? out * nt : 1;
    a->idx = cort_malloc(n * sizeof *a->idx);
    a->w = cort_malloc(n * sizeof *a->w);
    a->wf = cort_malloc(n * sizeof *a->wf);
    if (!a->idx || !a->w || !a->wf) { axis_free(a); return cort_error_oom(); }
    int identity = in == out;
    double s = scale < 1 ? scale : 1;
    for (size_t o = 0; o < out; o++) {
        int64_t *ix = a->idx + o * nt;
        double *w = a->w + o * nt;
        int outside;
        double v = coord(p, d, (double)o, &outside);
        if (outside) {
            if (!a->outside) {
                a->outside = cort_calloc(out, 1);
                if (!a->outside) { axis_free(a); return cort_error_oom(); }
            }
            a->outside[o] = 1;
            identity = 0;
        }
        if (p->mode == RS_NEAREST) {
            int64_t i = nearest_index(p, d, v);
            ix[0] = i < 0 ? 0 : i >= (int64_t)in ? (int64_t)in - 1 : i;
            w[0] = 1;
        } else {
            double f = floor(v), r = v - f, sum = 0;
            if (r == 0) { f -= 1; r = 1; }   /* the reference keeps the ratio in (0, 1] */
            for (size_t t = 0; t < nt; t++) {
                double arg = ((double)(start + (int64_t)t) - r);
                double wt = p->mode == RS_LINEAR ? (aa ? fmax(0, 1 - fabs(arg * s)) : 1 - fabs(arg))
                                                 : cubic_w(aa ? arg * s : arg, p->cubic_a);
                int64_t i = (int64_t)f + start + (int64_t)t;
                if (p->exclude_outside && (i < 0 || i >= (int64_t)in)) wt = 0;
                w[t] = wt;
                sum += wt;
                ix[t] = i < 0 ? 0 : i >= (int64_t)in ? (int64_t)in - 1 : i;
            }
            if ((aa || p->exclude_outside) && sum != 0)
                for (size_t t = 0; t < nt; t++) w[t] /= sum;
        }
        if (identity) {
            double at = 0, other = 0;
            for (size_t t = 0; t < nt; t++) {
                if (ix[t] == (int64_t)o) at += w[t];
                else other += fabs(w[t]);
            }
            if (at != 1 || other != 0) identity = 0;
        }
        for (size_t t = 0; t < nt; t++) a->wf[o * nt + t] = (float)w[t];
    }
    a->identity = identity;
    return NULL;
}

/* ---------------- nearest: N-D gather of element bytes ---------------- */

typedef struct gather_job {
    const rd_resize_params *p;
    const rs_axis *ax;
    const uint8_t *x;
    uint8_t *y;
    size_t es;
    size_t in_stride[CORT_MAX_RANK];
    const void *extrap;       /* element bytes of extrapolation_value */
    int rep2;                 /* the last axis doubles every element (idx[w] == w / 2): 2x upsampling */
    void (*rep2_f32)(const float *src, float *dst, size_t n);   /* rep2 rows of floats: the level's kernel, or NULL */
} gather_job;

static void gather_rows(void *arg, size_t begin, size_t end) {
    const gather_job *j = arg;
    size_t r = j->p->rank, last = r - 1, W = (size_t)j->p->out[last], es = j->es;
    const rs_axis *la = &j->ax[last];
    /* the output coordinates of row `begin` over the leading axes, then advanced like an odometer
     * (a division per axis per row was most of a 2x upsampling) */
    size_t o[CORT_MAX_RANK] = { 0 };
    for (size_t d = last, rem = begin; d-- > 0;) {
        o[d] = rem % (size_t)j->p->out[d];
        rem /= (size_t)j->p->out[d];
    }
    size_t prev_base = SIZE_MAX;
    for (size_t row = begin; row < end; row++) {
        size_t base = 0;
        int out_any = 0;
        for (size_t d = 0; d < last; d++) {
            base += (size_t)j->ax[d].idx[o[d]] * j->in_stride[d];
            if (j->ax[d].outside && j->ax[d].outside[o[d]]) out_any = 1;
        }
        for (size_t d = last; d-- > 0;) {
            if (++o[d] < (size_t)j->p->out[d]) break;
            o[d] = 0;
        }
        uint8_t *yr = j->y + row * W * es;
        const uint8_t *xr = j->x + base * es;
        if (!out_any && !la->outside && base == prev_base) {   /* upsampled rows repeat the row above */
            memcpy(yr, yr - W * es, W * es);
            continue;
        }
        prev_base = out_any ? SIZE_MAX : base;
        if (es == 4 && !out_any && !la->outside) {
            const uint32_t *xs = (const uint32_t *)xr;
            uint32_t *ys = (uint32_t *)yr;
            if (j->rep2) {
                if (j->rep2_f32) { j->rep2_f32((const float *)xs, (float *)ys, W); continue; }
                size_t w = 0;
                for (; w + 2 <= W; w += 2) ys[w] = ys[w + 1] = xs[w / 2];
                if (w < W) ys[w] = xs[w / 2];
            } else {
                for (size_t w = 0; w < W; w++) ys[w] = xs[la->idx[w]];
            }
            continue;
        }
        for (size_t w = 0; w < W; w++) {
            const void *src = out_any || (la->outside && la->outside[w]) ? j->extrap : xr + (size_t)la->idx[w] * es;
            memcpy(yr + w * es, src, es);
        }
    }
}

/* ---------------- linear / cubic: separable passes ---------------- */

typedef struct pass_job {
    const rs_axis *a;
    const void *src;
    void *dst;
    size_t nin, nout, inner;
} pass_job;

#define RS_PASS(T, W, SUF)                                                                      \
static void pass_##SUF(void *arg, size_t begin, size_t end) {                                   \
    const pass_job *j = arg;                                                                    \
    const rs_axis *a = j->a;                                                                    \
    size_t nt = a->ntaps, inner = j->inner;                                                     \
    const T *src = j->src;                                                                      \
    T *dst = j->dst;                                                                            \
    for (size_t r = begin; r < end; r++) {                                                      \
        size_t o = r / j->nout, q = r % j->nout;                                                \
        const int64_t *ix = a->idx + q * nt;                                                    \
        const T *w = a->W + q * nt;                                                             \
        const T *s = src + o * j->nin * inner;                                                  \
        T *d = dst + r * inner;                                                                 \
        if (inner == 1) {                                                                       \
            T acc = 0;                                                                          \
            for (size_t t = 0; t < nt; t++) acc += w[t] * s[ix[t]];                             \
            d[0] = acc;                                                                         \
            continue;                                                                           \
        }                                                                                       \
        const T *s0 = s + (size_t)ix[0] * inner;                                                \
        for (size_t k = 0; k < inner; k++) d[k] = w[0] * s0[k];                                 \
        for (size_t t = 1; t < nt; t++) {                                                       \
            const T *st = s + (size_t)ix[t] * inner;                                            \
            T wt = w[t];                                                                        \
            if (wt == 0) continue;                                                              \
            for (size_t k = 0; k < inner; k++) d[k] += wt * st[k];                              \
        }                                                                                       \
    }                                                                                           \
}
RS_PASS(float, wf, f32)
RS_PASS(double, w, f64)

/* Runs the separable passes from src (shape p->in) to dst (shape p->out) on T = float or double.
 * work holds two buffers of `cap` elements each. */
static void run_passes(const rd_resize_params *p, const rs_axis *ax, const void *src, void *dst, void *work, size_t cap,
                       size_t es, int dbl, cort_pool *pool) {
    int64_t cur[CORT_MAX_RANK];
    memcpy(cur, p->in, p->rank * sizeof *cur);
    size_t todo[CORT_MAX_RANK], nt = 0;
    for (size_t d = p->rank; d-- > 0;) if (!ax[d].identity) todo[nt++] = d;
    const void *s = src;
    for (size_t k = 0; k < nt; k++) {
        size_t d = todo[k];
        void *o = k + 1 == nt ? dst : (uint8_t *)work + (k % 2) * cap * es;
        size_t outer = rd_prod(cur, 0, d), inner = rd_prod(cur, d + 1, p->rank);
        pass_job j = { &ax[d], s, o, (size_t)cur[d], (size_t)p->out[d], inner };
        size_t items = outer * (size_t)p->out[d];
        size_t grain = 16384 / (inner * ax[d].ntaps + 1) + 1;
        cort_parallel_for(pool, items, grain, dbl ? pass_f64 : pass_f32, &j);
        cur[d] = p->out[d];
        s = o;
    }
    if (nt == 0) memcpy(dst, src, rd_prod(p->out, 0, p->rank) * es);
}

/* Sets tf_crop_and_resize points outside the ROI to the extrapolation value. */
static void apply_extrapolation(const rd_resize_params *p, const rs_axis *ax, void *y, int dbl) {
    int any = 0;
    for (size_t d = 0; d < p->rank; d++) if (ax[d].outside) any = 1;
    if (!any) return;
    size_t n = rd_prod(p->out, 0, p->rank);
    size_t idx[CORT_MAX_RANK] = {0};
    for (size_t i = 0; i < n; i++) {
        int out = 0;
        for (size_t d = 0; d < p->rank; d++) if (ax[d].outside && ax[d].outside[idx[d]]) out = 1;
        if (out) { if (dbl) ((double *)y)[i] = p->extrapolation; else ((float *)y)[i] = (float)p->extrapolation; }
        for (size_t d = p->rank; d-- > 0;) { if (++idx[d] < (size_t)p->out[d]) break; idx[d] = 0; }
    }
}

static cort_status *build_axes(const rd_resize_params *p, rs_axis *ax) {
    memset(ax, 0, p->rank * sizeof *ax);
    for (size_t d = 0; d < p->rank; d++) {
        cort_status *st = axis_build(p, d, &ax[d]);
        if (st) { for (size_t e = 0; e < d; e++) axis_free(&ax[e]); return st; }
    }
    return NULL;
}

/* Largest intermediate element count of the pass sequence. */
static size_t work_cap(const rd_resize_params *p) {
    int64_t cur[CORT_MAX_RANK];
    memcpy(cur, p->in, p->rank * sizeof *cur);
    size_t cap = rd_prod(cur, 0, p->rank);
    for (size_t d = p->rank; d-- > 0;) {
        cur[d] = p->out[d];
        size_t c = rd_prod(cur, 0, p->rank);
        if (c > cap) cap = c;
    }
    return cap;
}

/* Direct evaluation: every output point sums the tensor product of its per-axis taps. */
static void reference_f32(const rd_resize_params *p, const rs_axis *ax, const float *x, float *y) {
    size_t n = rd_prod(p->out, 0, p->rank), r = p->rank;
    size_t stride[CORT_MAX_RANK], s = 1;
    for (size_t d = r; d-- > 0;) { stride[d] = s; s *= (size_t)p->in[d]; }
    size_t o[CORT_MAX_RANK] = {0};
    for (size_t i = 0; i < n; i++) {
        size_t t[CORT_MAX_RANK] = {0};
        double acc = 0;
        int done = 0;
        while (!done) {
            double w = 1;
            size_t off = 0;
            for (size_t d = 0; d < r; d++) {
                w *= ax[d].w[o[d] * ax[d].ntaps + t[d]];
                off += (size_t)ax[d].idx[o[d] * ax[d].ntaps + t[d]] * stride[d];
            }
            acc += w * x[off];
            done = 1;
            for (size_t d = r; d-- > 0;) { if (++t[d] < ax[d].ntaps) { done = 0; break; } t[d] = 0; }
        }
        y[i] = (float)acc;
        for (size_t d = r; d-- > 0;) { if (++o[d] < (size_t)p->out[d]) break; o[d] = 0; }
    }
}

/* The fast path over built axes. work: 2 * work_cap(p) floats for linear and cubic (unused for
 * nearest). */
static void resize_f32_axes(const rd_resize_params *p, const rs_axis *ax, const float *x, float *y, float *work,
                            cort_pool *pool) {
    if (p->mode == RS_NEAREST) {
        float ev = (float)p->extrapolation;
        gather_job j = { p, ax, (const uint8_t *)x, (uint8_t *)y, 4, {0}, &ev, 1, NULL };
        const rs_axis *la = &ax[p->rank - 1];
        for (size_t w = 0; w < la->out && j.rep2; w++) j.rep2 = la->ntaps == 1 && la->idx[w] == (int64_t)(w / 2);
        j.rep2_f32 = j.rep2 ? nn_isa()->copy_rep2 : NULL;
        size_t s = 1;
        for (size_t d = p->rank; d-- > 0;) { j.in_stride[d] = s; s *= (size_t)p->in[d]; }
        size_t rows = rd_prod(p->out, 0, p->rank - 1);
        cort_parallel_for(pool, rows, 4096 / ((size_t)p->out[p->rank - 1] + 1) + 1, gather_rows, &j);
    } else {
        run_passes(p, ax, x, y, work, work_cap(p), sizeof(float), 0, pool);
        apply_extrapolation(p, ax, y, 0);
    }
}

cort_status *rd_resize_f32(const rd_resize_params *p, const float *x, float *y, cort_pool *pool, int fast) {
    rs_axis ax[CORT_MAX_RANK];
    CORT_TRY(build_axes(p, ax));
    cort_status *st = NULL;
    if (!fast) {
        reference_f32(p, ax, x, y);
        apply_extrapolation(p, ax, y, 0);
    } else {
        float *work = p->mode == RS_NEAREST ? NULL : cort_malloc(2 * work_cap(p) * sizeof *work);
        if (p->mode != RS_NEAREST && !work) st = cort_error_oom();
        else resize_f32_axes(p, ax, x, y, work, pool);
        cort_free(work);
    }
    for (size_t d = 0; d < p->rank; d++) axis_free(&ax[d]);
    return st;
}

/* The axes of one set of params, built once: a node whose shapes and scales do not change between
 * runs (every static-shape model) reuses them, so its runs neither allocate nor recompute them. */
typedef struct rs_plan {
    rd_resize_params p;
    rs_axis ax[CORT_MAX_RANK];
} rs_plan;

static void plan_free(rs_plan *pl) {
    if (!pl) return;
    for (size_t d = 0; d < pl->p.rank; d++) axis_free(&pl->ax[d]);
    cort_free(pl);
}

static int params_equal(const rd_resize_params *a, const rd_resize_params *b) {
    if (a->mode != b->mode || a->ctm != b->ctm || a->nearest_mode != b->nearest_mode ||
        a->exclude_outside != b->exclude_outside || a->antialias != b->antialias || a->cubic_a != b->cubic_a ||
        memcmp(&a->extrapolation, &b->extrapolation, sizeof a->extrapolation) || a->rank != b->rank)
        return 0;
    for (size_t d = 0; d < a->rank; d++)
        if (a->in[d] != b->in[d] || a->out[d] != b->out[d] || memcmp(&a->scale[d], &b->scale[d], sizeof(double)) ||
            memcmp(&a->roi0[d], &b->roi0[d], sizeof(double)) || memcmp(&a->roi1[d], &b->roi1[d], sizeof(double)))
            return 0;
    return 1;
}

/* ---------------- operator glue ---------------- */

typedef struct rs_state {
    int mode, ctm, nearest_mode, exclude_outside, antialias, policy;   /* policy: 0 stretch, 1 not_larger, 2 not_smaller */
    double cubic_a, extrapolation;
    size_t n_axes;
    int64_t axes[CORT_MAX_RANK];
    int is_upsample;
    /* the first run's plan, published once and read by every later run (concurrent ones
     * included); never replaced: runs with other params build and free their own */
    cort_slot plan;
} rs_state;

/* The axes for p: the published plan when p matches it, else a new one, published if none is yet
 * (*own = NULL) or handed to the caller to free (*own). */
static cort_status *plan_get(rs_state *s, const rd_resize_params *p, const rs_plan **out, rs_plan **own) {
    *own = NULL;
    rs_plan *pl = cort_slot_get(&s->plan);
    if (pl && params_equal(&pl->p, p)) { *out = pl; return NULL; }
    rs_plan *mine = cort_calloc(1, sizeof *mine);
    if (!mine) return cort_error_oom();
    mine->p = *p;
    cort_status *st = build_axes(p, mine->ax);
    if (st) { cort_free(mine); return st; }
    *out = mine;
    if (pl || !cort_slot_publish(&s->plan, mine)) *own = mine;
    return NULL;
}

static void rs_free(void *state) {
    rs_state *s = state;
    if (!s) return;
    plan_free(cort_slot_get(&s->plan));
    cort_free(s);
}

static int lookup(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++) if (!strcmp(s, names[i])) return i;
    return -1;
}

static cort_status *rs_init(const cort_node *node, void **state) {
    static const char *const modes[] = { "nearest", "linear", "cubic" };
    static const char *const ctms[] = { "half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners",
                                        "tf_crop_and_resize", "half_pixel_symmetric", "tf_half_pixel_for_nn" };
    static const char *const nms[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil" };
    static const char *const pols[] = { "stretch", "not_larger", "not_smaller" };
    int up = !strcmp(node->op_type, "Upsample"), v11 = !up && node->opset >= 11;
    rs_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    s->is_upsample = up;
    cort_slot_init(&s->plan);
    const char *m = cort_attr_str(node, "mode", "nearest");
    /* opset 10 Resize and Upsample spell linear "linear" but some exporters write "bilinear" */
    s->mode = lookup(m, modes, 3);
    if (s->mode < 0 && !v11 && !strcmp(m, "bilinear")) s->mode = RS_LINEAR;
    if (s->mode < 0 || (!v11 && s->mode == RS_CUBIC)) goto bad_mode;
    if (v11) {
        const char *c = cort_attr_str(node, "coordinate_transformation_mode", "half_pixel");
        s->ctm = lookup(c, ctms, 7);
        if (s->ctm < 0) {
            cort_free(s);
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'coordinate_transformation_mode' has unsupported value '%s'", c);
        }
        const char *n = cort_attr_str(node, "nearest_mode", "round_prefer_floor");
        s->nearest_mode = lookup(n, nms, 4);
        if (s->nearest_mode < 0) {
            cort_free(s);
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'nearest_mode' has unsupported value '%s'", n);
        }
        const char *pl = cort_attr_str(node, "keep_aspect_ratio_policy", "stretch");
        s->policy = lookup(pl, pols, 3);
        if (s->policy < 0) {
            cort_free(s);
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'keep_aspect_ratio_policy' has unsupported value '%s'", pl);
        }
    } else {
        s->ctm = RS_ASYMMETRIC;
        s->nearest_mode = RS_SIMPLE;
    }
    s->cubic_a = cort_attr_float(node, "cubic_coeff_a", -0.75f);
    s->exclude_outside = cort_attr_int(node, "exclude_outside", 0) != 0;
    s->extrapolation = cort_attr_float(node, "extrapolation_value", 0.0f);
    s->antialias = cort_attr_int(node, "antialias", 0) != 0;
    const int64_t *axes;
    size_t na = cort_attr_ints(node, "axes", &axes);
    if (na > CORT_MAX_RANK) {
        cort_free(s);
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'axes' has %zu entries, at most %d supported", na, CORT_MAX_RANK);
    }
    s->n_axes = na;
    if (na) memcpy(s->axes, axes, na * sizeof *axes);
    *state = s;
    return NULL;
bad_mode:
    cort_free(s);
    return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'mode' has unsupported value '%s'", m);
}

/* Control-input sources, resolved either from run-time tensors or creation-time constants. */
typedef struct rs_inputs {
    int have_scales, have_sizes, have_roi;
    size_t n_scales, n_sizes, n_roi;
    double scales[CORT_MAX_RANK];
    int64_t sizes[CORT_MAX_RANK];
    double roi[2 * CORT_MAX_RANK];
} rs_inputs;

/* Fills the per-axis params (out dims, scales, roi) from the inputs. */
static cort_status *resolve(const cort_node *node, const rs_state *s, const int64_t *in, size_t rank, const rs_inputs *ri,
                            rd_resize_params *p) {
    memset(p, 0, sizeof *p);
    p->mode = s->mode; p->ctm = s->ctm; p->nearest_mode = s->nearest_mode;
    p->exclude_outside = s->exclude_outside; p->antialias = s->antialias;
    p->cubic_a = s->cubic_a; p->extrapolation = s->extrapolation;
    p->rank = rank;
    if (rank == 0) return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must have rank >= 1");
    size_t axes[CORT_MAX_RANK], na = rank;
    if (s->n_axes) {
        na = s->n_axes;
        uint8_t seen[CORT_MAX_RANK] = {0};
        for (size_t i = 0; i < na; i++) {
            CORT_TRY(rd_axis(node, s->axes[i], rank, "attribute 'axes' entry", &axes[i]));
            if (seen[axes[i]]++) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'axes' repeats axis %zu", axes[i]);
        }
    } else {
        for (size_t i = 0; i < rank; i++) axes[i] = i;
    }
    for (size_t d = 0; d < rank; d++) { p->in[d] = in[d]; p->out[d] = in[d]; p->scale[d] = 1; p->roi0[d] = 0; p->roi1[d] = 1; }
    if (ri->have_roi && ri->n_roi && p->ctm == RS_TF_CROP_AND_RESIZE) {
        if (ri->n_roi != 2 * na)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'roi' has %zu values, expected %zu", ri->n_roi, 2 * na);
        for (size_t i = 0; i < na; i++) { p->roi0[axes[i]] = ri->roi[i]; p->roi1[axes[i]] = ri->roi[na + i]; }
    }
    if (ri->have_sizes && ri->n_sizes) {
        if (ri->n_sizes != na)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 'sizes' has %zu values, expected %zu", ri->n_sizes, na);
        for (size_t i = 0; i < na; i++)
            if (ri->sizes[i] < 0)
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 'sizes' entry %zu is %lld, expected >= 0",
                                       i, (long long)ri->sizes[i]);
        if (s->policy) {
            double sc = 0;
            for (size_t i = 0; i < na; i++) {
                double r = in[axes[i]] ? (double)ri->sizes[i] / (double)in[axes[i]] : 1;
                if (i == 0 || (s->policy == 1 ? r < sc : r > sc)) sc = r;
            }
            for (size_t i = 0; i < na; i++) {
                p->scale[axes[i]] = sc;
                double o = floor(sc * (double)in[axes[i]] + 0.5);
                /* a size near INT64_MAX rounds up to 2^63 in double: converting that is undefined */
                if (!(o >= 0 && o <= 9.0e15))
                    return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                           "input 'sizes' entry %zu (%lld) gives a too large output", i,
                                           (long long)ri->sizes[i]);
                p->out[axes[i]] = (int64_t)o;
            }
        } else {
            for (size_t i = 0; i < na; i++) {
                size_t d = axes[i];
                p->out[d] = ri->sizes[i];
                p->scale[d] = in[d] ? (double)ri->sizes[i] / (double)in[d] : 1;
            }
        }
    } else if (ri->have_scales && ri->n_scales) {
        if (ri->n_scales != na)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 'scales' has %zu values, expected %zu", ri->n_scales, na);
        for (size_t i = 0; i < na; i++) {
            size_t d = axes[i];
            double sc = ri->scales[i];
            if (!(sc > 0) || sc > 1e9)
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 'scales' entry %zu is %g, expected > 0", i, sc);
            p->scale[d] = sc;
            double o = floor(sc * (double)in[d]);
            if (o > 9.0e15) return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 'scales' entry %zu (%g) gives a too large output", i, sc);
            p->out[d] = (int64_t)o;
        }
    } else {
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "one of the inputs 'scales' and 'sizes' must be given and non-empty");
    }
    for (size_t d = 0; d < rank; d++)
        if (p->out[d] > 0 && p->in[d] == 0)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has an empty axis %zu that cannot be resized to %lld",
                                   d, (long long)p->out[d]);
    return NULL;
}

/* Input positions of roi / scales / sizes for this op and opset (-1: not an input). */
static void input_slots(const rs_state *s, int opset, int *roi, int *scales, int *sizes) {
    if (s->is_upsample) { *roi = -1; *scales = opset >= 9 ? 1 : -1; *sizes = -1; }
    else if (opset < 11) { *roi = -1; *scales = 1; *sizes = -1; }
    else { *roi = 1; *scales = 2; *sizes = 3; }
}

static cort_status *rs_read_inputs(cort_kernel_ctx *ctx, const rs_state *s, rs_inputs *ri) {
    memset(ri, 0, sizeof *ri);
    int roi, sc, sz;
    input_slots(s, ctx->opset, &roi, &sc, &sz);
    if (sc < 0) {
        const float *f;
        ri->n_scales = cort_attr_floats(ctx->node, "scales", &f);
        if (ri->n_scales > CORT_MAX_RANK)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'scales' has %zu entries", ri->n_scales);
        for (size_t i = 0; i < ri->n_scales; i++) ri->scales[i] = f[i];
        ri->have_scales = 1;
        return NULL;
    }
    const cort_value *t;
    if (roi >= 0 && (t = rd_input(ctx, (size_t)roi)) != NULL) {
        CORT_TRY(rd_read_floats(ctx->node, t, (size_t)roi, "roi", ri->roi, 2 * CORT_MAX_RANK, &ri->n_roi));
        ri->have_roi = 1;
    }
    if ((t = rd_input(ctx, (size_t)sc)) != NULL) {
        CORT_TRY(rd_read_floats(ctx->node, t, (size_t)sc, "scales", ri->scales, CORT_MAX_RANK, &ri->n_scales));
        ri->have_scales = 1;
    }
    if (sz >= 0 && (t = rd_input(ctx, (size_t)sz)) != NULL) {
        CORT_TRY(rd_read_ints(ctx->node, t, (size_t)sz, "sizes", ri->sizes, CORT_MAX_RANK, &ri->n_sizes));
        ri->have_sizes = 1;
        if (ri->have_scales && ri->n_scales && ri->n_sizes)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "only one of 'scales' and 'sizes' may be given");
    }
    return NULL;
}

static cort_status *rs_run(cort_kernel_ctx *ctx) {
    const rs_state *s = ctx->state;
    const cort_value *x = rd_input(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a tensor");
    int numeric = cort_type_is_float(x->type) || cort_type_is_int(x->type);
    if (!numeric && s->mode != RS_NEAREST)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' of type %s needs mode 'nearest'",
                               cort_type_name(x->type));
    if (x->type == CORT_TYPE_STRING)
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "input 0 'X' of type string is not supported");
    rs_inputs ri;
    CORT_TRY(rs_read_inputs(ctx, s, &ri));
    rd_resize_params p;
    CORT_TRY(resolve(ctx->node, s, x->shape, x->rank, &ri, &p));
    int ovf = 0;
    cort_shape_count(p.out, p.rank, &ovf);
    if (ovf) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "output shape overflows");
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, p.out, p.rank, &y));
    if (!y->count) return NULL;
    const rs_plan *pl = NULL;
    rs_plan *own = NULL;
    /* the plan slot is the only part of the state a run writes (once, atomically); the state
     * itself was allocated writable by rs_init */
    CORT_TRY(plan_get((rs_state *)s, &p, &pl, &own));
    const rs_axis *ax = pl->ax;
    cort_status *st = NULL;
    if (x->type == CORT_TYPE_FLOAT) {
        /* the separable passes' intermediates from the session's recycled scratch */
        float *work = p.mode == RS_NEAREST ? NULL : cort_kernel_scratch(ctx, 2 * work_cap(&p) * sizeof *work);
        if (p.mode != RS_NEAREST && !work) st = cort_error_oom();
        else resize_f32_axes(&p, ax, x->data, y->data, work, ctx->pool);
        cort_kernel_scratch_free(ctx, work);
        plan_free(own);
        return st;
    }
    if (p.mode == RS_NEAREST) {
        uint8_t ev[16] = {0};
        double e = p.extrapolation;
        if (numeric) rd_store_f64_round(ev, x->type, &e, 1);
        gather_job j = { &p, ax, x->data, y->data, cort_type_size(x->type), {0}, ev, 0, NULL };
        size_t sst = 1;
        for (size_t d = p.rank; d-- > 0;) { j.in_stride[d] = sst; sst *= (size_t)p.in[d]; }
        size_t rows = rd_prod(p.out, 0, p.rank - 1);
        cort_parallel_for(ctx->pool, rows, 4096 / ((size_t)p.out[p.rank - 1] + 1) + 1, gather_rows, &j);
    } else {
        /* float16/bfloat16 work in float, everything else in double; integers round to nearest */
        int dbl = !rd_is_f32ish(x->type);
        size_t es = dbl ? sizeof(double) : sizeof(float), cap = work_cap(&p);
        void *src = NULL, *dst = cort_malloc(y->count * es), *work = cort_malloc(2 * cap * es);
        if (!dst || !work) st = cort_error_oom();
        else st = dbl ? rd_to_f64(x, (double **)&src) : rd_to_f32(x, (float **)&src);
        if (!st) {
            run_passes(&p, ax, src, dst, work, cap, es, dbl, ctx->pool);
            apply_extrapolation(&p, ax, dst, dbl);
            if (dbl) rd_store_f64_round(y->data, y->type, dst, y->count);
            else for (size_t i = 0; i < y->count; i++) cort_store_f64(y->data, y->type, i, ((float *)dst)[i]);
        }
        cort_free(src); cort_free(dst); cort_free(work);
    }
    plan_free(own);
    return st;
}

static cort_status *rs_infer(cort_infer_ctx *ctx) {
    const rs_state *s = ctx->state;
    const cort_tinfo *x = rd_tinput(ctx, 0);
    if (!x) return NULL;
    cort_tinfo_tensor(&ctx->outputs[0], x->elem);
    if (x->rank < 0) return NULL;
    int64_t unknown[CORT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) unknown[i] = -1;
    if (!cort_tinfo_shape_known(x) || x->rank == 0) {
        cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, unknown, x->rank);
        return NULL;
    }
    rs_inputs ri;
    memset(&ri, 0, sizeof ri);
    int roi, sc, sz, ok = 1;
    input_slots(s, ctx->opset, &roi, &sc, &sz);
    if (sc < 0) {
        const float *f;
        ri.n_scales = cort_attr_floats(ctx->node, "scales", &f);
        if (ri.n_scales > CORT_MAX_RANK) ok = 0;
        else for (size_t i = 0; i < ri.n_scales; i++) ri.scales[i] = f[i];
        ri.have_scales = 1;
    } else {
        const cort_tinfo *t;
        if ((t = rd_tinput(ctx, (size_t)sc)) != NULL) {
            ri.have_scales = rd_const_floats(t, ri.scales, CORT_MAX_RANK, &ri.n_scales);
            if (!ri.have_scales && t->rank == 1 && t->dims[0] != 0) ok = 0;
        }
        if (sz >= 0 && (t = rd_tinput(ctx, (size_t)sz)) != NULL) {
            ri.have_sizes = rd_const_ints(t, ri.sizes, CORT_MAX_RANK, &ri.n_sizes);
            if (!ri.have_sizes) ok = 0;
        }
    }
    rd_resize_params p;
    cort_status *st = ok ? resolve(ctx->node, s, x->dims, (size_t)x->rank, &ri, &p) : NULL;
    if (ok && !st)
        cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, p.out, x->rank);
    else
        cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, unknown, x->rank);
    cort_status_free(st);   /* a bad constant is reported again, with context, at run time */
    return NULL;
}

const cort_op_def rd_op_resize = { .name = "Resize", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX,
    .init = rs_init, .free_state = rs_free, .infer = rs_infer, .run = rs_run,
    .flags = CORT_OP_OUTPUT_VIEW };
const cort_op_def rd_op_upsample = { .name = "Upsample", .domain = "", .min_opset = 7, .max_opset = 9,
    .init = rs_init, .free_state = rs_free, .infer = rs_infer, .run = rs_run };
