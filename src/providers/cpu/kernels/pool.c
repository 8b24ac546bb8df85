/* Float MaxPool / AveragePool / LpPool kernels: a separable row-vector path for 1-D/2-D undilated
 * MaxPool (no indices) and AveragePool, and a generic per-output kernel (clipped window ranges, so
 * its inner loops run branch-free) for everything else; planes go to the pool. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "../ops/nn/pool.h"
#include "pool_ukernels.h"
#include "isa_config.h"

typedef struct krange { int64_t lo, hi, start, clip_size; } krange;

/* Kernel indices kk in [lo, hi) land inside the input; clip_size counts the taps that land inside
 * the padded input (the AveragePool count_include_pad divisor): with dilation d only every d-th
 * position of the window's extent is a tap, so the holes between taps are not counted. */
static krange window_range(const nn_geom *g, int dim, int64_t o) {
    krange r;
    const int64_t s = g->s[dim], d = g->d[dim], k = g->k[dim], in = g->in[dim];
    r.start = o * s - g->pb[dim];
    r.lo = r.start >= 0 ? 0 : (-r.start + d - 1) / d;
    r.hi = in - 1 - r.start < 0 ? 0 : (in - 1 - r.start) / d + 1;
    if (r.hi > k) r.hi = k;
    if (r.lo > r.hi) r.lo = r.hi;
    const int64_t limit = in + g->pe[dim];
    r.clip_size = limit > r.start ? (limit - r.start + d - 1) / d : 0;
    if (r.clip_size > k) r.clip_size = k;
    return r;
}

static int64_t index_of(const nn_geom *g, int storage_order, int64_t id, int64_t ih, int64_t iw) {
    if (!storage_order) return (id * g->in[1] + ih) * g->in[2] + iw;
    /* column-major over the real spatial dims */
    if (g->nd == 3) return id + ih * g->in[0] + iw * g->in[0] * g->in[1];
    if (g->nd == 2) return ih + iw * g->in[1];
    return iw;
}

static void pool_plane(const nn_pool_params *p, const nn_geom *g, const float *x, float *y, int64_t *idx,
                       int64_t base) {
    const int64_t IH = g->in[1], IW = g->in[2];
    for (int64_t od = 0; od < g->out[0]; od++) {
        krange rd = window_range(g, 0, od);
        for (int64_t oh = 0; oh < g->out[1]; oh++) {
            krange rh = window_range(g, 1, oh);
            for (int64_t ow = 0; ow < g->out[2]; ow++) {
                krange rw = window_range(g, 2, ow);
                if (p->kind == NN_POOL_MAX) {
                    float best = -FLT_MAX;
                    int64_t bi = -1;
                    for (int64_t kd = rd.lo; kd < rd.hi; kd++) {
                        int64_t id = rd.start + kd * g->d[0];
                        for (int64_t kh = rh.lo; kh < rh.hi; kh++) {
                            int64_t ih = rh.start + kh * g->d[1];
                            const float *xr = x + (id * IH + ih) * IW + rw.start;
                            for (int64_t kw = rw.lo; kw < rw.hi; kw++) {
                                float v = xr[kw * g->d[2]];
                                if (v > best || bi < 0) {
                                    best = v;
                                    bi = idx ? index_of(g, p->storage_order, id, ih, rw.start + kw * g->d[2]) : 0;
                                }
                            }
                        }
                    }
                    *y++ = best;
                    if (idx) *idx++ = bi < 0 ? -1 : base + bi;
                } else {
                    float acc = 0.0f;
                    for (int64_t kd = rd.lo; kd < rd.hi; kd++) {
                        int64_t id = rd.start + kd * g->d[0];
                        for (int64_t kh = rh.lo; kh < rh.hi; kh++) {
                            int64_t ih = rh.start + kh * g->d[1];
                            const float *xr = x + (id * IH + ih) * IW + rw.start;
                            if (p->kind == NN_POOL_AVG) {
                                if (g->d[2] == 1)
                                    for (int64_t kw = rw.lo; kw < rw.hi; kw++) acc += xr[kw];
                                else
                                    for (int64_t kw = rw.lo; kw < rw.hi; kw++) acc += xr[kw * g->d[2]];
                            } else if (p->p == 2.0f) {
                                for (int64_t kw = rw.lo; kw < rw.hi; kw++) acc += xr[kw * g->d[2]] * xr[kw * g->d[2]];
                            } else if (p->p == 1.0f) {
                                for (int64_t kw = rw.lo; kw < rw.hi; kw++) acc += fabsf(xr[kw * g->d[2]]);
                            } else {
                                for (int64_t kw = rw.lo; kw < rw.hi; kw++) acc += powf(fabsf(xr[kw * g->d[2]]), p->p);
                            }
                        }
                    }
                    if (p->kind == NN_POOL_AVG) {
                        int64_t cnt = p->count_include_pad ? rd.clip_size * rh.clip_size * rw.clip_size
                                                           : (rd.hi - rd.lo) * (rh.hi - rh.lo) * (rw.hi - rw.lo);
                        *y++ = cnt > 0 ? acc / (float)cnt : 0.0f;
                    } else {
                        *y++ = p->p == 2.0f ? sqrtf(acc) : p->p == 1.0f ? acc : powf(acc, 1.0f / p->p);
                    }
                }
            }
        }
    }
}

/* ---- separable 2-D fast path (MaxPool without indices, AveragePool; no dilation) ----
 * Output rows whose window lies inside the input go to the AVX-512 kernel in one call per plane
 * (window rows reduced in registers, then the k taps of each row with permutes); rows meeting the
 * top or bottom padding go one at a time with their valid rows only. The kernel also handles the
 * left/right padding when it is narrower than the window (and 16); otherwise the outputs whose
 * window meets it are computed directly from x, with column ranges clipped once per call. Without
 * AVX-512 (or for strides > 2, windows wider than NN_POOL_FUSED_KMAX) the valid rows are reduced
 * into a row buffer first, POOL_BUF columns at a time. No allocation: the buffer is on the stack. */
#define POOL_BUF 2048
#define POOL_BORDER_MAX 16

typedef struct pool_job {
    const nn_pool_params *p;
    const nn_geom *g;
    const float *x;
    float *y;
    int64_t *idx;
    int fast;                /* the separable path applies */
    const nn_isa_config *isa;
    size_t row_chunks;       /* tasks per plane (fast path): output rows split so 2 threads have work */
    int fused;               /* inner outputs go to the level's pool_{max,avg}2d */
    int64_t lpad;            /* fused: left padding the kernel handles itself (no border outputs) */
    int64_t ow_lo, ow_hi;    /* outputs [ow_lo, ow_hi) of a row go to the row kernels, the rest are borders */
    int64_t oh_lo, oh_hi;    /* output rows whose window rows are all inside the input */
    krange border[POOL_BORDER_MAX];   /* column windows of ow < ow_lo, then ow >= ow_hi, if they fit */
} pool_job;

/* Portable row reductions, as the vector kernels: the max ignores NaN (see pool_ukernels.h). */
static void rows_max_ref(const float *x, size_t stride, size_t nrows, size_t n, float *buf) {
    for (size_t i = 0; i < n; i++) buf[i] = -INFINITY;
    for (size_t r = 0; r < nrows; r++)
        for (size_t i = 0; i < n; i++) buf[i] = x[r * stride + i] > buf[i] ? x[r * stride + i] : buf[i];
}
static void rows_sum_ref(const float *x, size_t stride, size_t nrows, size_t n, float *buf) {
    for (size_t i = 0; i < n; i++) buf[i] = x[i];
    for (size_t r = 1; r < nrows; r++)
        for (size_t i = 0; i < n; i++) buf[i] += x[r * stride + i];
}
static void window_max_ref(const float *t, size_t k, size_t sw, size_t count, float *y) {
    for (size_t o = 0; o < count; o++) {
        const float *p = t + o * sw;
        float best = p[0];
        for (size_t kw = 1; kw < k; kw++) best = p[kw] > best ? p[kw] : best;
        y[o] = best;
    }
}
/* The reference's NaN rule after a NaN-ignoring max: y[o] is NaN if its window's first value
 * first[o * sw] is. */
static void first_nan_rule(const float *first, size_t sw, size_t count, float *y) {
    for (size_t o = 0; o < count; o++)
        if (isnan(first[o * sw])) y[o] = first[o * sw];
}
static void window_avg_ref(const float *t, size_t k, size_t sw, size_t count, float scale, float *y) {
    for (size_t o = 0; o < count; o++) {
        const float *p = t + o * sw;
        float acc = p[0];
        for (size_t kw = 1; kw < k; kw++) acc += p[kw];
        y[o] = acc * scale;
    }
}

static int fast_applies(const nn_pool_params *p, const nn_geom *g, const int64_t *indices) {
    if (p->kind == NN_POOL_MAX ? indices != NULL : p->kind != NN_POOL_AVG) return 0;
    return g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->pb[0] == 0 && g->pe[0] == 0 && g->d[1] == 1 &&
           g->d[2] == 1 && g->k[2] <= POOL_BUF;
}

/* [lo, hi) of the outputs along dim whose window lies inside the input. */
static void inner_outputs(const nn_geom *g, int dim, int64_t *lo, int64_t *hi) {
    const int64_t s = g->s[dim], k = g->k[dim], pad = g->pb[dim], in = g->in[dim], out = g->out[dim];
    int64_t a = (pad + s - 1) / s, b = in - k + pad >= 0 ? (in - k + pad) / s + 1 : 0;
    if (a > out) a = out;
    if (b > out) b = out;
    if (b < a) b = a;
    *lo = a;
    *hi = b;
}

/* An output whose window meets the row padding, straight from x (row-major, first value wins).
 * xr is the first valid row of the window. */
static float border_output(const nn_pool_params *p, const nn_geom *g, const float *xr, const krange *rh,
                           const krange *rw) {
    const int64_t IW = g->in[2], nr = rh->hi - rh->lo, nc = rw->hi - rw->lo;
    if (p->kind == NN_POOL_MAX) {
        if (nc <= 0) return -FLT_MAX;
        float best = xr[rw->start + rw->lo];
        for (int64_t r = 0; r < nr; r++)
            for (int64_t kw = rw->lo; kw < rw->hi; kw++) {
                const float v = xr[r * IW + rw->start + kw];
                best = v > best ? v : best;
            }
        return best;
    }
    float acc = 0.0f;
    for (int64_t r = 0; r < nr; r++)
        for (int64_t kw = rw->lo; kw < rw->hi; kw++) acc += xr[r * IW + rw->start + kw];
    const int64_t cnt = p->count_include_pad ? rh->clip_size * rw->clip_size : nr * nc;
    return cnt > 0 ? acc / (float)cnt : 0.0f;
}

/* Output rows [oh, oh + n) sharing the row window rh (n > 1 only for inner rows, whose window
 * start advances by the row stride). */
static void fast_rows(const pool_job *j, const float *x, float *y, int64_t oh, int64_t n, const krange *rh,
                      float *buf) {
    const nn_geom *g = j->g;
    const int is_max = j->p->kind == NN_POOL_MAX;
    const int64_t IW = g->in[2], OW = g->out[2], k = g->k[2], sw = g->s[2], pl = g->pb[2];
    const int64_t nr = rh->hi - rh->lo, step = g->s[1] * IW, ow_lo = j->ow_lo, ow_hi = j->ow_hi;
    const int64_t n_border = ow_lo + OW - ow_hi;
    float *y0 = y + oh * OW;
    const float *x0 = x + (rh->start + rh->lo) * IW;
    if (nr <= 0) {
        for (int64_t i = 0; i < n * OW; i++) y0[i] = is_max ? -FLT_MAX : 0.0f;
        return;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t b = 0; b < n_border; b++) {
            const int64_t ow = b < ow_lo ? b : ow_hi + (b - ow_lo);
            krange rw = n_border <= POOL_BORDER_MAX ? j->border[b] : window_range(g, 2, ow);
            y0[i * OW + ow] = border_output(j->p, g, x0 + i * step, rh, &rw);
        }
    if (ow_hi == ow_lo) return;
    const float scale = 1.0f / (float)((j->p->count_include_pad ? rh->clip_size : nr) * k);
    const int64_t c0 = ow_lo * sw - pl;
    if (j->fused) {
        /* x at the first existing column (c0 + lpad >= 0): no pointer before the row is formed */
        const nn_pool2d_rows a = { x0 + (c0 + j->lpad), (size_t)IW, (size_t)step, (size_t)nr, (size_t)j->lpad,
                                   (size_t)(IW - c0), (size_t)k, (size_t)sw, (size_t)(ow_hi - ow_lo), (size_t)n,
                                   y0 + ow_lo, (size_t)OW, scale,
                                   (size_t)(j->p->count_include_pad ? rh->clip_size : nr),
                                   (size_t)(IW - c0 + g->pe[2]), j->p->count_include_pad };
        if (is_max) j->isa->pool_max2d(&a);
        else j->isa->pool_avg2d(&a);
        return;
    }
    /* 2- and 3-wide windows at stride 2: one pass over the rows, no row buffer (cnn_batch's 2x2
     * MaxPools: 5.1 -> 3.1 ms on Zen 3) */
    void (*const ks2)(const float *, size_t, size_t, size_t, float *) =
        !is_max || sw != 2 ? NULL : k == 2 ? j->isa->pool_max_k2s2 : k == 3 ? j->isa->pool_max_k3s2 : NULL;
    if (ks2) {
        for (int64_t i = 0; i < n; i++)
            ks2(x0 + i * step + c0, (size_t)IW, (size_t)nr, (size_t)(ow_hi - ow_lo), y0 + i * OW + ow_lo);
        return;
    }
    const int64_t block = (POOL_BUF - k) / sw + 1;
    for (int64_t i = 0; i < n; i++)
        for (int64_t o0 = ow_lo; o0 < ow_hi; o0 += block) {
            const size_t nb = (size_t)(ow_hi - o0 < block ? ow_hi - o0 : block);
            const size_t width = (nb - 1) * (size_t)sw + (size_t)k;
            const float *xc = x0 + i * step + o0 * sw - pl;
            float *yc = y0 + i * OW + o0;
            if (is_max && j->isa->pool_rows_max) j->isa->pool_rows_max(xc, (size_t)IW, (size_t)nr, width, buf);
            else if (!is_max && j->isa->pool_rows_sum) j->isa->pool_rows_sum(xc, (size_t)IW, (size_t)nr, width, buf);
            else {
                if (is_max) rows_max_ref(xc, (size_t)IW, (size_t)nr, width, buf);
                else rows_sum_ref(xc, (size_t)IW, (size_t)nr, width, buf);
            }
            if (is_max) {
                if (j->isa->pool_window_max) j->isa->pool_window_max(buf, (size_t)k, (size_t)sw, nb, yc);
                else window_max_ref(buf, (size_t)k, (size_t)sw, nb, yc);
                first_nan_rule(xc, (size_t)sw, nb, yc);
            } else if (j->isa->pool_window_avg) {
                j->isa->pool_window_avg(buf, (size_t)k, (size_t)sw, nb, scale, yc);
            } else {
                window_avg_ref(buf, (size_t)k, (size_t)sw, nb, scale, yc);
            }
        }
}

static void fast_plane(const pool_job *j, const float *x, float *y, int64_t oh0, int64_t oh1, float *buf) {
    const nn_geom *g = j->g;
    for (int64_t oh = oh0; oh < oh1;) {
        if (oh >= j->oh_lo && oh < j->oh_hi) {   /* a run of inner rows: one kernel call */
            const int64_t end = oh1 < j->oh_hi ? oh1 : j->oh_hi;
            const krange rh = { 0, g->k[1], oh * g->s[1] - g->pb[1], g->k[1] };
            fast_rows(j, x, y, oh, end - oh, &rh, buf);
            oh = end;
        } else {
            const krange rh = window_range(g, 1, oh);
            fast_rows(j, x, y, oh, 1, &rh, buf);
            oh++;
        }
    }
}

static void pool_run(void *arg, size_t begin, size_t end) {
    const pool_job *j = arg;
    const int64_t in = nn_geom_in_size(j->g), out = nn_geom_out_size(j->g);
    if (!j->fast) {
        for (size_t pl = begin; pl < end; pl++)
            pool_plane(j->p, j->g, j->x + (int64_t)pl * in, j->y + (int64_t)pl * out,
                       j->idx ? j->idx + (int64_t)pl * out : NULL, (int64_t)pl * in);
        return;
    }
    float buf[POOL_BUF];   /* row reductions of the non-fused path */
    const int64_t OH = j->g->out[1], chunks = (int64_t)j->row_chunks;
    for (size_t t = begin; t < end; t++) {
        const int64_t pl = (int64_t)t / chunks, c = (int64_t)t % chunks;
        fast_plane(j, j->x + pl * in, j->y + pl * out, OH * c / chunks, OH * (c + 1) / chunks, buf);
    }
}

void nn_pool_f32(cort_pool *pool, const nn_pool_params *p, const nn_geom *g, size_t planes, const float *x, float *y,
                 int64_t *indices) {
    pool_job j;
    memset(&j, 0, sizeof j);
    j.p = p; j.g = g; j.x = x; j.y = y; j.idx = indices;
    j.fast = fast_applies(p, g, indices);
    j.row_chunks = 1;
    j.isa = nn_isa();
    if (j.fast) {
        inner_outputs(g, 2, &j.ow_lo, &j.ow_hi);
        j.fused = j.isa->pool_max2d && j.isa->pool_avg2d && g->s[2] <= 2 && g->k[2] <= NN_POOL_FUSED_KMAX;
        if (j.fused && g->pb[2] < g->k[2] && g->pb[2] < 16) {
            /* the kernel handles the row padding too; MaxPool leaves windows all in the end padding
             * (-FLT_MAX) to the border code */
            const int64_t last = g->in[2] - 1 + g->pb[2];   /* window starts <= last meet the row */
            const int64_t starts_inside = last < 0 ? 0 : last / g->s[2] + 1;
            j.lpad = g->pb[2];
            j.ow_lo = 0;
            j.ow_hi = p->kind == NN_POOL_AVG || starts_inside > g->out[2] ? g->out[2] : starts_inside;
        }
        inner_outputs(g, 1, &j.oh_lo, &j.oh_hi);
        const int64_t n_border = j.ow_lo + g->out[2] - j.ow_hi;
        for (int64_t b = 0; b < n_border && b < POOL_BORDER_MAX; b++)
            j.border[b] = window_range(g, 2, b < j.ow_lo ? b : j.ow_hi + (b - j.ow_lo));
    }
    const double work = (double)planes * (double)nn_geom_out_size(g) * (double)nn_geom_k_size(g);
    if (work < 32768.0) pool = NULL;
    size_t tasks = planes;
    if (j.fast && pool && planes < 8 && g->out[1] > 1) {
        /* few planes (batch 1, few channels): split output rows too */
        size_t want = (8 + planes - 1) / planes;
        j.row_chunks = want < (size_t)g->out[1] ? want : (size_t)g->out[1];
        tasks = planes * j.row_chunks;
    }
    cort_parallel_for(pool, tasks, 1, pool_run, &j);
}

void nn_pool_f32_ref(const nn_pool_params *p, const nn_geom *g, size_t planes, const float *x, float *y,
                     int64_t *indices) {
    const int64_t in_size = nn_geom_in_size(g);
    for (size_t pl = 0; pl < planes; pl++) {
        const float *xp = x + (int64_t)pl * in_size;
        for (int64_t od = 0; od < g->out[0]; od++)
            for (int64_t oh = 0; oh < g->out[1]; oh++)
                for (int64_t ow = 0; ow < g->out[2]; ow++) {
                    double acc = 0.0, best = -FLT_MAX;
                    int64_t bi = -1, cnt = 0, padded = 0;
                    for (int64_t kd = 0; kd < g->k[0]; kd++)
                        for (int64_t kh = 0; kh < g->k[1]; kh++)
                            for (int64_t kw = 0; kw < g->k[2]; kw++) {
                                int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                                int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                                int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                                if (id < g->in[0] + g->pe[0] && ih < g->in[1] + g->pe[1] && iw < g->in[2] + g->pe[2])
                                    padded++;
                                if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1] || iw < 0 || iw >= g->in[2])
                                    continue;
                                double v = xp[(id * g->in[1] + ih) * g->in[2] + iw];
                                cnt++;
                                if (p->kind == NN_POOL_MAX) {
                                    if (v > best || bi < 0) { best = v; bi = index_of(g, p->storage_order, id, ih, iw); }
                                } else if (p->kind == NN_POOL_AVG) {
                                    acc += v;
                                } else {
                                    acc += pow(fabs(v), p->p);
                                }
                            }
                    float r;
                    if (p->kind == NN_POOL_MAX) r = (float)best;
                    else if (p->kind == NN_POOL_AVG) {
                        int64_t div = p->count_include_pad ? padded : cnt;
                        r = div ? (float)(acc / (double)div) : 0.0f;
                    } else r = (float)pow(acc, 1.0 / p->p);
                    *y++ = r;
                    if (indices) *indices++ = bi < 0 ? -1 : (int64_t)pl * in_size + bi;
                }
    }
}
