/* 8-bit MaxPool (ops/nn/pool.h nn_pool_max8): the max of bytes is the max of their values, so no
 * float copy is made. int8 bytes are flipped by 0x80 on the way in and out, which orders them as
 * uint8. Per output row the window's input rows are reduced to one row, then each output takes the
 * max of its taps along that row; outputs whose window lies inside the row skip the clipping. A
 * window with no input tap gives the type's minimum (the float path's -FLT_MAX, saturated). The
 * loops are written for the vectorizer (this file is built at -O3). */
#include <string.h>
#include "../../ops/nn/pool.h"
#include "../isa_config.h"

enum { POOL8_ROW = 4096 };

typedef struct pool8_job {
    const nn_geom *g;
    const uint8_t *x;
    uint8_t *y;
    uint8_t flip;
    int64_t ow_lo, ow_hi;   /* outputs whose window lies inside the row */
    /* per-ISA kernels (pool_ukernels.h), or NULL */
    void (*rows)(const uint8_t *x, size_t stride, size_t nrows, size_t n, uint8_t flip, int acc, uint8_t *buf);
    void (*window)(const uint8_t *row, size_t k, size_t s, size_t n, uint8_t flip, uint8_t *y);
} pool8_job;

/* Taps [lo, hi) of the window of output o along dim (clipped to the input), its first input index. */
static void pool8_taps(const nn_geom *g, int dim, int64_t o, int64_t *lo, int64_t *hi, int64_t *start) {
    const int64_t s = g->s[dim], d = g->d[dim], k = g->k[dim], in = g->in[dim];
    const int64_t st = o * s - g->pb[dim];
    int64_t a = st >= 0 ? 0 : (-st + d - 1) / d, b = in - 1 - st < 0 ? 0 : (in - 1 - st) / d + 1;
    if (b > k) b = k;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
    *start = st;
}

static void pool8_row_max(uint8_t *restrict row, const uint8_t *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) row[i] = src[i] > row[i] ? src[i] : row[i];
}

static void pool8_row_flip(uint8_t *restrict row, const uint8_t *restrict src, size_t n, uint8_t flip) {
    for (size_t i = 0; i < n; i++) row[i] = (uint8_t)(src[i] ^ flip);
}

/* Inside outputs [lo, hi): y[o] = max over taps of row[o * s - pad + t * d] (all inside the row). */
static void pool8_inner(const uint8_t *restrict row, int64_t pad, int64_t lo, int64_t hi, int64_t k, int64_t s,
                        int64_t d, uint8_t *restrict y) {
    const int64_t n = hi - lo;
    const uint8_t *r = row + (lo * s - pad);   /* the first inside window's first tap */
    uint8_t *yo = y + lo;
    if (s == 1 && d == 1) {
        for (int64_t o = 0; o < n; o++) yo[o] = r[o];
        for (int64_t t = 1; t < k; t++)
            for (int64_t o = 0; o < n; o++) yo[o] = r[o + t] > yo[o] ? r[o + t] : yo[o];
        return;
    }
    if (s == 2 && d == 1) {
        for (int64_t o = 0; o < n; o++) yo[o] = r[2 * o];
        for (int64_t t = 1; t < k; t++)
            for (int64_t o = 0; o < n; o++) yo[o] = r[2 * o + t] > yo[o] ? r[2 * o + t] : yo[o];
        return;
    }
    for (int64_t o = 0; o < n; o++) {
        uint8_t m = r[o * s];
        for (int64_t t = 1; t < k; t++) m = r[o * s + t * d] > m ? r[o * s + t * d] : m;
        yo[o] = m;
    }
}

/* The window's input rows reduced into row (flipped), the portable loops. */
static void pool8_rows(const uint8_t *src, size_t stride, size_t nrows, size_t n, uint8_t flip, int acc,
                       uint8_t *restrict row) {
    for (size_t r = 0; r < nrows; r++, src += stride) {
        if (!acc && r == 0) pool8_row_flip(row, src, n, flip);
        else if (flip) {
            uint8_t tmp[POOL8_ROW];
            pool8_row_flip(tmp, src, n, flip);
            pool8_row_max(row, tmp, n);
        } else {
            pool8_row_max(row, src, n);
        }
    }
}

static void pool8_run(void *arg, size_t begin, size_t end) {
    const pool8_job *j = arg;
    const nn_geom *g = j->g;
    const int64_t in = nn_geom_in_size(g), out = nn_geom_out_size(g), IW = g->in[2], OW = g->out[2];
    const uint8_t flip = j->flip;
    const int isa_window = j->window && (g->s[2] == 1 || g->s[2] == 2) && g->d[2] == 1;
    uint8_t row[POOL8_ROW], ybuf[POOL8_ROW];
    for (size_t pl = begin; pl < end; pl++) {
        const uint8_t *xp = j->x + (int64_t)pl * in;
        uint8_t *yp = j->y + (int64_t)pl * out;
        for (int64_t od = 0; od < g->out[0]; od++) {
            int64_t dlo, dhi, dst;
            pool8_taps(g, 0, od, &dlo, &dhi, &dst);
            for (int64_t oh = 0; oh < g->out[1]; oh++, yp += OW) {
                int64_t hlo, hhi, hst;
                pool8_taps(g, 1, oh, &hlo, &hhi, &hst);
                int any = 0;
                if (hhi > hlo)
                    for (int64_t kd = dlo; kd < dhi; kd++, any = 1) {
                        const uint8_t *src = xp + ((dst + kd * g->d[0]) * g->in[1] + hst + hlo * g->d[1]) * IW;
                        const size_t stride = (size_t)(g->d[1] * IW), nrows = (size_t)(hhi - hlo);
                        if (j->rows) j->rows(src, stride, nrows, (size_t)IW, flip, any, row);
                        else pool8_rows(src, stride, nrows, (size_t)IW, flip, any, row);
                    }
                if (!any) {
                    memset(yp, flip, (size_t)OW);   /* type minimum: 0, or -128 (0x80) */
                    continue;
                }
                if (j->ow_hi > j->ow_lo) {
                    if (isa_window) {
                        j->window(row + (j->ow_lo * g->s[2] - g->pb[2]), (size_t)g->k[2], (size_t)g->s[2],
                                  (size_t)(j->ow_hi - j->ow_lo), flip, yp + j->ow_lo);
                    } else {
                        pool8_inner(row, g->pb[2], j->ow_lo, j->ow_hi, g->k[2], g->s[2], g->d[2], ybuf);
                        for (int64_t ow = j->ow_lo; ow < j->ow_hi; ow++) yp[ow] = (uint8_t)(ybuf[ow] ^ flip);
                    }
                }
                for (int64_t ow = 0; ow < OW; ow++) {
                    if (ow >= j->ow_lo && ow < j->ow_hi) { ow = j->ow_hi - 1; continue; }
                    int64_t lo, hi, st;
                    pool8_taps(g, 2, ow, &lo, &hi, &st);
                    uint8_t m = 0;
                    for (int64_t kw = lo; kw < hi; kw++) {
                        const uint8_t v = row[st + kw * g->d[2]];
                        m = v > m ? v : m;
                    }
                    yp[ow] = (uint8_t)(m ^ flip);
                }
            }
        }
    }
}

int nn_pool_max8(cort_pool *pool, const nn_geom *g, size_t planes, int is_signed, const void *x, void *y) {
    if (g->in[2] > POOL8_ROW || g->out[2] > POOL8_ROW) return 0;
    pool8_job j = { g, x, y, (uint8_t)(is_signed ? 0x80 : 0), 0, 0, nn_isa()->pool_rows_max8, nn_isa()->pool_window_max8 };
    /* outputs whose whole window (k taps, dilation d) lies inside the row */
    const int64_t s = g->s[2], span = (g->k[2] - 1) * g->d[2] + 1, pad = g->pb[2], iw = g->in[2];
    int64_t a = (pad + s - 1) / s, b = iw - span + pad >= 0 ? (iw - span + pad) / s + 1 : 0;
    if (a > g->out[2]) a = g->out[2];
    if (b > g->out[2]) b = g->out[2];
    if (b < a) b = a;
    j.ow_lo = a;
    j.ow_hi = b;
    const double work = (double)planes * (double)nn_geom_out_size(g) * (double)nn_geom_k_size(g);
    cort_parallel_for(work < 32768.0 ? NULL : pool, planes, 1, pool8_run, &j);
    return 1;
}
