/* Float MaxPool / AveragePool / LpPool kernels. The optimized kernel clips each window's kernel
 * range per dimension once, so the inner loops run branch-free; planes go to the pool. */
#include <float.h>
#include <math.h>
#include "nn_pool.h"
#include "simd/pool_ukernels.h"

typedef struct krange { int64_t lo, hi, start, clip_size; } krange;

/* Kernel indices kk in [lo, hi) land inside the input; clip_size is the window length clipped to
 * the padded input (the AveragePool count_include_pad divisor). */
static krange window_range(const nn_geom *g, int dim, int64_t o) {
    krange r;
    const int64_t s = g->s[dim], d = g->d[dim], k = g->k[dim], in = g->in[dim];
    r.start = o * s - g->pb[dim];
    r.lo = r.start >= 0 ? 0 : (-r.start + d - 1) / d;
    r.hi = in - 1 - r.start < 0 ? 0 : (in - 1 - r.start) / d + 1;
    if (r.hi > k) r.hi = k;
    if (r.lo > r.hi) r.lo = r.hi;
    int64_t end = r.start + (k - 1) * d + 1, limit = in + g->pe[dim];
    r.clip_size = (end < limit ? end : limit) - r.start;
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

#define NN_MAXPOOL_ROW_MAX 1024

/* 2-D MaxPool without dilation or indices, separable: the window's rows are reduced first with
 * contiguous (vectorizable) maxima into a row buffer, then each output takes the max of KW
 * neighbours in it. Returns 0 when the shape does not fit (the generic kernel runs instead). */
static int maxpool_plane_2d(const nn_geom *g, const float *x, float *y, int avx512) {
    const int64_t IW = g->in[2], OH = g->out[1], OW = g->out[2];
    if (g->in[0] != 1 || g->out[0] != 1 || g->k[0] != 1 || g->d[1] != 1 || g->d[2] != 1 || IW > NN_MAXPOOL_ROW_MAX)
        return 0;
    float row[NN_MAXPOOL_ROW_MAX + 16];   /* the vector window pass may read row[IW] */
    krange cols[NN_MAXPOOL_ROW_MAX];
    if (OW > NN_MAXPOOL_ROW_MAX) return 0;
    for (int64_t ow = 0; ow < OW; ow++) cols[ow] = window_range(g, 2, ow);
    for (int64_t oh = 0; oh < OH; oh++) {
        const krange rh = window_range(g, 1, oh);
        float *yr = y + oh * OW;
        if (rh.lo >= rh.hi) {
            for (int64_t ow = 0; ow < OW; ow++) yr[ow] = -FLT_MAX;
            continue;
        }
        const float *x0 = x + (rh.start + rh.lo) * IW;
        for (int64_t i = 0; i < IW; i++) row[i] = x0[i];
        row[IW] = 0.0f;
        for (int64_t kh = rh.lo + 1; kh < rh.hi; kh++) {
            const float *xr = x + (rh.start + kh) * IW;
#ifdef NN_HAVE_X86_UKERNELS
            if (avx512) { nn_max_rows_avx512(row, xr, (size_t)IW); continue; }
#endif
            for (int64_t i = 0; i < IW; i++) row[i] = xr[i] > row[i] ? xr[i] : row[i];
        }
        int64_t vec_lo = 0, vec_n = 0;   /* outputs [vec_lo, vec_lo + vec_n) done by the vector pass */
#ifdef NN_HAVE_X86_UKERNELS
        const int64_t sw = g->s[2], k = g->k[2], pl = g->pb[2];
        if (avx512 && k <= 16) {
            /* outputs whose whole window lies inside the row */
            int64_t lo = (pl + sw - 1) / sw, hi = IW - k + pl < 0 ? -1 : (IW - k + pl) / sw;
            if (hi > OW - 1) hi = OW - 1;
            if (hi >= lo)
                vec_n = (int64_t)nn_max_window_avx512(row, (size_t)(lo * sw - pl), (size_t)k, (size_t)sw,
                                                      (size_t)(hi - lo + 1), yr + lo);
            vec_lo = lo;
        }
#endif
        for (int64_t ow = 0; ow < OW; ow++) {
            if (ow == vec_lo && vec_n) { ow += vec_n - 1; continue; }
            const krange rw = cols[ow];
            if (rw.lo >= rw.hi) { yr[ow] = -FLT_MAX; continue; }
            /* index from row itself: rw.start may be negative (padding), rw.start + kw never is */
            float best = row[rw.start + rw.lo];
            for (int64_t kw = rw.lo + 1; kw < rw.hi; kw++) best = row[rw.start + kw] > best ? row[rw.start + kw] : best;
            yr[ow] = best;
        }
    }
    return 1;
}

typedef struct pool_job {
    const nn_pool_params *p;
    const nn_geom *g;
    const float *x;
    float *y;
    int64_t *idx;
} pool_job;

static void pool_run(void *arg, size_t begin, size_t end) {
    const pool_job *j = arg;
    const int64_t in = nn_geom_in_size(j->g), out = nn_geom_out_size(j->g);
    const int fast = j->p->kind == NN_POOL_MAX && !j->idx;
    int avx512 = 0;
#ifdef NN_HAVE_X86_UKERNELS
    avx512 = __builtin_cpu_supports("avx512f");
#endif
    for (size_t pl = begin; pl < end; pl++)
        if (!fast || !maxpool_plane_2d(j->g, j->x + (int64_t)pl * in, j->y + (int64_t)pl * out, avx512))
            pool_plane(j->p, j->g, j->x + (int64_t)pl * in, j->y + (int64_t)pl * out,
                   j->idx ? j->idx + (int64_t)pl * out : NULL, (int64_t)pl * in);
}

void nn_pool_f32(cort_pool *pool, const nn_pool_params *p, const nn_geom *g, size_t planes, const float *x, float *y,
                 int64_t *indices) {
    pool_job j = { p, g, x, y, indices };
    double work = (double)planes * (double)nn_geom_out_size(g) * (double)nn_geom_k_size(g);
    cort_parallel_for(work < 32768.0 ? NULL : pool, planes, 1, pool_run, &j);
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
