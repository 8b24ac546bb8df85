/* Convolution as an indirect GEMM: no im2col matrix is ever packed.
 *
 * The input is copied once into a zero-padded buffer; for stride 2 it is also split into its four
 * (row, column) parity phases. In that buffer every kernel tap (c, kh, kw) of a whole output row
 * is a contiguous run of floats at a fixed offset, so computing the output over a "virtual" row
 * width Wv (the padded, or phase, width) turns the convolution into C_v[M, OH*Wv] = W[M, K] *
 * B[K, OH*Wv] where row k of B starts at buffer + off[k]: the micro-kernel reads B in place
 * through a table of row pointers. Columns ow >= OW of each virtual row are junk (they straddle
 * two rows) and are dropped when the virtual output is compacted into Y, which is also where
 * bias-free activations such as SiLU are applied.
 *
 * Cost compared with implicit im2col: one copy of the input (only the phases the kernel uses)
 * instead of packing K*OH*OW floats, plus (Wv - OW)/Wv junk columns of compute. */
#include <string.h>
#include "nn_conv.h"
#include "simd/copy_ukernels.h"
#include "../../core/alloc.h"

#define IND_BLOCK_PANELS 8   /* 32-column panels per task: a task's output block stays in L2 */

typedef struct ind_geom {
    size_t C, M, K, KH, KW, S, D;
    size_t IH, IW, OH, OW;
    int64_t pt, pl;          /* top/left padding */
    size_t Hp, Wp;           /* padded (S = 1) or phase (S = 2) plane dims; Wv = Wp */
    size_t plane;            /* floats per plane, incl. slack */
    size_t nphase;           /* planes per channel: 1 or 4 */
    unsigned phases;         /* bit ph set if some tap reads phase plane ph (a 1x1 stride-2 conv reads one) */
    size_t ncols;            /* OH * Wp virtual output columns */
    int rowtile;             /* tiles never straddle two output rows (see ind_rows_run) */
    size_t row_panels;       /* rowtile: panels per output row */
} ind_geom;

/* Which convolutions this path takes: 2-D (or 1-D), one group, equal strides 1 or 2, and not a
 * stride-1 1x1 (that reads its input in place already). */
int nn_conv_indirect_applies(const nn_conv_shape *s, const nn_gemm_packed *wpack) {
    const nn_geom *g = &s->g;
    if (s->group != 1 || !wpack || !wpack->k || !wpack->k->edge || g->in[0] != 1 || g->k[0] != 1 || g->out[0] != 1)
        return 0;
    if (g->s[1] != g->s[2] || (g->s[1] != 1 && g->s[1] != 2) || g->d[1] != g->d[2]) return 0;
    if (g->s[1] == 1 && g->k[1] == 1 && g->k[2] == 1) return 0;
    if (wpack->rows != s->M || wpack->K != s->C * (size_t)(g->k[1] * g->k[2])) return 0;
    return 1;
}

static void ind_geom_make(const nn_conv_shape *s, ind_geom *q) {
    const nn_geom *g = &s->g;
    q->C = s->C; q->M = s->M;
    q->KH = (size_t)g->k[1]; q->KW = (size_t)g->k[2]; q->K = q->C * q->KH * q->KW;
    q->S = (size_t)g->s[1]; q->D = (size_t)g->d[1];
    q->IH = (size_t)g->in[1]; q->IW = (size_t)g->in[2]; q->OH = (size_t)g->out[1]; q->OW = (size_t)g->out[2];
    q->pt = g->pb[1]; q->pl = g->pb[2];
    /* padded extent actually read: (O-1)*S + (K-1)*D + 1 */
    const size_t hp = (q->OH - 1) * q->S + (q->KH - 1) * q->D + 1, wp = (q->OW - 1) * q->S + (q->KW - 1) * q->D + 1;
    q->nphase = q->S == 1 ? 1 : 4;
    q->Hp = q->S == 1 ? hp : (hp + 1) / 2;
    q->Wp = q->S == 1 ? wp : (wp + 1) / 2;
    q->ncols = q->OH * q->Wp;
    q->phases = 0;
    for (size_t kh = 0; kh < q->KH; kh++)
        for (size_t kw = 0; kw < q->KW; kw++)
            q->phases |= 1u << (q->S == 1 ? 0 : ((kh * q->D) & 1) * 2 + ((kw * q->D) & 1));
    /* a virtual row read from the last rows of a plane runs past it by up to Wp + 32 floats */
    q->plane = q->Hp * q->Wp + q->Wp + 64;
}

/* Row tiling: panels start at ow = 0, NR, 2 NR, ... of each output row and the last one is masked
 * (a 16-column kernel if at most 16 remain), so every tile is stored straight into Y: no virtual
 * output, no compaction pass, and each tile's stores stay within the rows of a few planes. It
 * computes rowcols columns per row against Wp (+ the compaction) for the virtual layout; it loses
 * only on narrow rows (OW = 7: 16 against 9). */
static void ind_geom_tiling(ind_geom *q, size_t nr) {
    const size_t rem = q->OW % nr, rowcols = q->OW / nr * nr + (rem == 0 ? 0 : rem <= nr / 2 ? nr / 2 : nr);
    q->rowtile = rowcols * 8 <= q->Wp * 9;
    q->row_panels = (q->OW + nr - 1) / nr;
}

typedef struct pad_job {
    const ind_geom *q;
    const float *x;
    float *buf;
    int avx512;
} pad_job;

/* Channel c -> its padded plane (S = 1) or its four phase planes (S = 2), zero outside the input. */
static void pad_run(void *arg, size_t begin, size_t end) {
    const pad_job *j = arg;
    const ind_geom *q = j->q;
    for (size_t c = begin; c < end; c++) {
        const float *xc = j->x + c * q->IH * q->IW;
        for (size_t ph = 0; ph < q->nphase; ph++) {
            if (!(q->phases >> ph & 1)) continue;
            float *dst = j->buf + (c * q->nphase + ph) * q->plane;
            const size_t a = ph >> 1, b = ph & 1;   /* row and column parity (S = 2) */
            for (size_t i = 0; i < q->Hp; i++) {
                float *d = dst + i * q->Wp;
                const int64_t ih = (int64_t)(q->S == 1 ? i : 2 * i + a) - q->pt;
                if (ih < 0 || ih >= (int64_t)q->IH) { memset(d, 0, q->Wp * sizeof(float)); continue; }
                const float *xr = xc + (size_t)ih * q->IW;
                if (q->S == 1) {
                    /* columns [lo, hi) of the padded row come from the input */
                    const int64_t lo = q->pl < 0 ? 0 : q->pl;
                    int64_t hi = q->pl + (int64_t)q->IW;
                    if (hi > (int64_t)q->Wp) hi = (int64_t)q->Wp;
                    if (lo >= hi) { memset(d, 0, q->Wp * sizeof(float)); continue; }
                    memset(d, 0, (size_t)lo * sizeof(float));
                    memcpy(d + lo, xr + (lo - q->pl), (size_t)(hi - lo) * sizeof(float));
                    memset(d + hi, 0, (q->Wp - (size_t)hi) * sizeof(float));
                } else {
                    /* phase column jj reads input column 2*jj + b - pl: valid for jj in [lo, hi) */
                    const int64_t off = (int64_t)b - q->pl;
                    int64_t lo = off >= 0 ? 0 : (-off + 1) / 2, hi = ((int64_t)q->IW - off + 1) / 2;
                    if (hi > (int64_t)q->Wp) hi = (int64_t)q->Wp;
                    if (lo > hi) lo = hi;
                    for (int64_t jj = 0; jj < lo; jj++) d[jj] = 0.0f;
                    const float *xs = xr + off;
#ifdef NN_HAVE_X86_UKERNELS
                    if (hi > lo && j->avx512) nn_copy_stride2_avx512(xs + 2 * lo, d + lo, (size_t)(hi - lo));
                    else
#endif
                    for (int64_t jj = lo; jj < hi; jj++) d[jj] = xs[2 * jj];
                    for (int64_t jj = hi; jj < (int64_t)q->Wp; jj++) d[jj] = 0.0f;
                }
            }
            memset(dst + q->Hp * q->Wp, 0, (q->plane - q->Hp * q->Wp) * sizeof(float));
        }
    }
}

typedef struct ind_job {
    const ind_geom *q;
    const nn_gemm_packed *w;
    const float *buf;        /* padded / phase planes */
    const float *bias;
    const nn_act *act;
    float *cv;               /* virtual output [M][ncols] */
    float *y;                /* [M][OH][OW] */
    const float *sum;        /* added to y before act (fused residual), [M][OH][OW], or NULL */
    cort_kernel_ctx *ctx;
    size_t tasks_n, bm;      /* tasks are [M blocks of bm panels][column (row) blocks] */
    size_t rows_per_task;    /* rowtile */
} ind_job;

/* Offset of tap k = (c, kh, kw) in the planes. */
static size_t tap_offset(const ind_geom *q, size_t c, size_t kh, size_t kw) {
    const size_t r = kh * q->D, s = kw * q->D;
    if (q->S == 1) return c * q->plane + r * q->Wp + s;
    const size_t ph = (r & 1) * 2 + (s & 1);
    return (c * 4 + ph) * q->plane + (r >> 1) * q->Wp + (s >> 1);
}

/* Whether the panel of virtual columns [c0, c0 + cols) lies inside the valid part of one output
 * row: then the kernel writes it straight into Y (no compaction); *y_off = its offset in a plane. */
static int panel_direct(const ind_geom *q, size_t c0, size_t cols, size_t *y_off) {
    const size_t oh = c0 / q->Wp, ow = c0 % q->Wp;
    if (ow + cols > q->OW) return 0;
    *y_off = oh * q->OW + ow;
    return 1;
}

static void ind_run(void *arg, size_t begin, size_t end) {
    const ind_job *j = arg;
    const ind_geom *q = j->q;
    const nn_gemm_kernel *k = j->w->k;
    const size_t mr = k->mr, nr = k->nr, mpanels = (q->M + mr - 1) / mr, plane = q->OH * q->OW;
    const float *rows[NN_GEMM_KC];
    /* the kernel adds the residual (c_add) and applies these activations on its registers */
    const int reg_act = j->act && ((j->act->kind >= CORT_ACT_RELU && j->act->kind <= CORT_ACT_LEAKY_RELU) ||
                                   j->act->kind == CORT_ACT_HARD_SWISH || q->K <= 64 /* stems: SiLU too */);
    for (size_t t = begin; t < end; t++) {
        const size_t ip0 = t / j->tasks_n * j->bm, ip1 = ip0 + j->bm < mpanels ? ip0 + j->bm : mpanels;
        const size_t q0 = t % j->tasks_n * IND_BLOCK_PANELS * nr;
        const size_t q1 = q0 + IND_BLOCK_PANELS * nr < q->ncols ? q0 + IND_BLOCK_PANELS * nr : q->ncols;
        for (size_t k0 = 0; k0 < q->K; k0 += NN_GEMM_KC) {
            if (j->ctx && cort_kernel_cancelled(j->ctx)) return;
            const size_t kc = q->K - k0 < NN_GEMM_KC ? q->K - k0 : NN_GEMM_KC;
            const int last = k0 + kc == q->K;
            size_t c = k0 / (q->KH * q->KW), kh = (k0 / q->KW) % q->KH, kw = k0 % q->KW;
            for (size_t p = 0; p < kc; p++) {
                rows[p] = j->buf + tap_offset(q, c, kh, kw);
                if (++kw == q->KW) { kw = 0; if (++kh == q->KH) { kh = 0; c++; } }
            }
            const float *ablock = j->w->data + k0 * mpanels * mr;
            for (size_t ip = ip0; ip < ip1; ip++) {
                const size_t r0 = ip * mr, nrows = q->M - r0 < mr ? q->M - r0 : mr;
                float bias_pad[16];
                const float *bias = NULL;
                if (j->bias && k0 == 0) {
                    for (size_t r = 0; r < mr; r++) bias_pad[r] = r < nrows ? j->bias[r0 + r] : 0.0f;
                    bias = bias_pad;
                }
                for (size_t c0 = q0; c0 < q1; c0 += nr) {
                    const size_t cols = q1 - c0 < nr ? q1 - c0 : nr;
                    size_t yo = 0;
                    const int direct = panel_direct(q, c0, cols, &yo);
                    nn_ukr_args u;
                    memset(&u, 0, sizeof u);
                    u.kc = kc;
                    u.a = ablock + ip * mr * kc; u.a_rs = 1; u.a_cs = mr;
                    u.b_ind = rows; u.b_off = c0;
                    u.bias = bias;
                    u.rows = nrows; u.cols = cols;
                    u.accumulate = k0 > 0;
                    if (direct) {
                        u.c = j->y + r0 * plane + yo; u.ldc = plane;
                        if (last && j->sum) u.c_add = j->sum + r0 * plane + yo;
                        if (last && reg_act) { u.act = j->act->kind; u.act_lo = j->act->alpha; u.act_hi = j->act->beta; }
                    } else {
                        /* straddles two rows: into the virtual output, compacted below */
                        u.c = j->cv + r0 * q->ncols + c0; u.ldc = q->ncols;
                        if (last && reg_act && !j->sum) { u.act = j->act->kind; u.act_lo = j->act->alpha; u.act_hi = j->act->beta; }
                    }
                    k->ukr(&u);
                    if (direct && last && j->act && !reg_act)
                        for (size_t r = 0; r < nrows; r++) nn_act_apply(j->act, j->y + (r0 + r) * plane + yo, cols);
                }
            }
        }
        /* compact the straddling panels' valid columns into Y (adding the residual and applying the
         * activations the kernel did not) */
        const int act_done = reg_act && !j->sum;
        for (size_t c0 = q0; c0 < q1; c0 += nr) {
            const size_t cols = q1 - c0 < nr ? q1 - c0 : nr, pe = c0 + cols;
            size_t yo;
            if (panel_direct(q, c0, cols, &yo)) continue;
            for (size_t m = ip0 * mr; m < q->M && m < ip1 * mr; m++) {
                const float *src = j->cv + m * q->ncols;
                float *ym = j->y + m * plane;
                size_t v = c0;
                while (v < pe) {
                    const size_t oh = v / q->Wp, ow = v % q->Wp;
                    size_t run = q->Wp - ow;
                    if (run > pe - v) run = pe - v;
                    if (ow < q->OW) {
                        const size_t n = q->OW - ow < run ? q->OW - ow : run;
                        float *d = ym + oh * q->OW + ow;
                        if (j->sum) {
                            const float *r = j->sum + m * plane + oh * q->OW + ow;
                            for (size_t e = 0; e < n; e++) d[e] = src[v + e] + r[e];
                        } else {
                            memcpy(d, src + v, n * sizeof(float));
                        }
                        if (!act_done) nn_act_apply(j->act, d, n);
                    }
                    v += run;
                }
            }
        }
    }
}

int nn_conv_indirect_rowtiled(const nn_conv_shape *s, const nn_gemm_packed *wpack) {
    ind_geom q;
    if (!nn_conv_indirect_applies(s, wpack)) return 0;
    ind_geom_make(s, &q);
    ind_geom_tiling(&q, wpack->k->nr);
    return q.rowtile;
}

/* Row-tiled tasks: [M blocks of bm panels][blocks of rows_per_task output rows]. */
static void ind_rows_run(void *arg, size_t begin, size_t end) {
    const ind_job *j = arg;
    const ind_geom *q = j->q;
    const nn_gemm_kernel *k = j->w->k;
    const size_t mr = k->mr, nr = k->nr, mpanels = (q->M + mr - 1) / mr, plane = q->OH * q->OW;
    const float *rows[NN_GEMM_KC];
    const int reg_act = j->act && ((j->act->kind >= CORT_ACT_RELU && j->act->kind <= CORT_ACT_LEAKY_RELU) ||
                                   j->act->kind == CORT_ACT_HARD_SWISH || q->K <= 64);
    for (size_t t = begin; t < end; t++) {
        const size_t ip0 = t / j->tasks_n * j->bm, ip1 = ip0 + j->bm < mpanels ? ip0 + j->bm : mpanels;
        const size_t oh0 = t % j->tasks_n * j->rows_per_task;
        const size_t oh1 = oh0 + j->rows_per_task < q->OH ? oh0 + j->rows_per_task : q->OH;
        for (size_t k0 = 0; k0 < q->K; k0 += NN_GEMM_KC) {
            if (j->ctx && cort_kernel_cancelled(j->ctx)) return;
            const size_t kc = q->K - k0 < NN_GEMM_KC ? q->K - k0 : NN_GEMM_KC;
            const int last = k0 + kc == q->K;
            size_t c = k0 / (q->KH * q->KW), kh = (k0 / q->KW) % q->KH, kw = k0 % q->KW;
            for (size_t p = 0; p < kc; p++) {
                rows[p] = j->buf + tap_offset(q, c, kh, kw);
                if (++kw == q->KW) { kw = 0; if (++kh == q->KH) { kh = 0; c++; } }
            }
            const float *ablock = j->w->data + k0 * mpanels * mr;
            for (size_t ip = ip0; ip < ip1; ip++) {
                const size_t r0 = ip * mr, nrows = q->M - r0 < mr ? q->M - r0 : mr;
                float bias_pad[16];
                const float *bias = NULL;
                if (j->bias && k0 == 0) {
                    for (size_t r = 0; r < mr; r++) bias_pad[r] = r < nrows ? j->bias[r0 + r] : 0.0f;
                    bias = bias_pad;
                }
                nn_ukr_args u;
                memset(&u, 0, sizeof u);
                u.kc = kc;
                u.a = ablock + ip * mr * kc; u.a_rs = 1; u.a_cs = mr;
                u.b_ind = rows;
                u.bias = bias;
                u.rows = nrows;
                u.accumulate = k0 > 0;
                u.ldc = plane;
                if (last && reg_act) { u.act = j->act->kind; u.act_lo = j->act->alpha; u.act_hi = j->act->beta; }
                for (size_t oh = oh0; oh < oh1; oh++)
                    for (size_t ow0 = 0; ow0 < q->OW; ow0 += nr) {
                        const size_t cols = q->OW - ow0 < nr ? q->OW - ow0 : nr, yo = oh * q->OW + ow0;
                        u.b_off = oh * q->Wp + ow0;
                        u.cols = cols;
                        u.c = j->y + r0 * plane + yo;
                        u.c_add = last && j->sum ? j->sum + r0 * plane + yo : NULL;
                        k->ukr(&u);
                        if (last && j->act && !reg_act)
                            for (size_t r = 0; r < nrows; r++) nn_act_apply(j->act, j->y + (r0 + r) * plane + yo, cols);
                    }
            }
        }
    }
}

cort_status *nn_conv_indirect_f32(cort_pool *pool, const nn_conv_shape *s, const float *x, const nn_gemm_packed *wpack,
                                  const float *bias, const float *sum, const nn_act *act, float *y,
                                  cort_kernel_ctx *ctx) {
    ind_geom q;
    ind_geom_make(s, &q);
    const size_t nr = wpack->k->nr;
    ind_geom_tiling(&q, nr);
    const size_t nbuf = q.C * q.nphase * q.plane, ncv = q.rowtile ? 0 : q.M * q.ncols;
    if (q.C && q.nphase * q.plane > SIZE_MAX / sizeof(float) / 2 / q.C) return cort_error_oom();
    float *buf = cort_kernel_scratch(ctx, (nbuf + ncv) * sizeof(float));
    if (!buf) return cort_error_oom();
    float *cv = buf + nbuf;
    const size_t in_size = q.IH * q.IW, out_size = q.OH * q.OW;
    /* a task's output block: about IND_BLOCK_PANELS panels of columns (whole rows when row-tiled) */
    const size_t rows_per_task = q.row_panels >= IND_BLOCK_PANELS ? 1 : IND_BLOCK_PANELS / q.row_panels;
    const size_t tasks_n = q.rowtile ? (q.OH + rows_per_task - 1) / rows_per_task
                                     : (q.ncols + IND_BLOCK_PANELS * nr - 1) / (IND_BLOCK_PANELS * nr);
    const size_t mpanels = (q.M + wpack->k->mr - 1) / wpack->k->mr;
    const double flops = 2.0 * (double)q.M * (double)q.K * (double)q.ncols;
    cort_pool *p = flops < 262144.0 ? NULL : pool;
    /* few column blocks (small planes): split the output channels too so every thread has work */
    const size_t threads = (size_t)cort_pool_threads(p), want = 3 * threads;
    size_t bm = mpanels;
    if (tasks_n < want) bm = (mpanels * tasks_n + want - 1) / want;
    if (bm == 0) bm = 1;
    const size_t tasks = (mpanels + bm - 1) / bm * tasks_n;
    for (size_t n = 0; n < s->N; n++) {
        pad_job pj = { &q, x + n * q.C * in_size, buf, 0 };
#ifdef NN_HAVE_X86_UKERNELS
        pj.avx512 = __builtin_cpu_supports("avx512f");
#endif
        cort_parallel_for(q.C * in_size < 16384 ? NULL : pool, q.C, 1, pad_run, &pj);
        ind_job j = { &q, wpack, buf, bias, act && act->kind != CORT_ACT_NONE ? act : NULL, cv,
                      y + n * q.M * out_size, sum ? sum + n * q.M * out_size : NULL, ctx, tasks_n, bm, rows_per_task };
        cort_parallel_for(p, tasks, 1, q.rowtile ? ind_rows_run : ind_run, &j);
        if (ctx && cort_kernel_cancelled(ctx)) break;
    }
    cort_kernel_scratch_free(ctx, buf);
    if (ctx && cort_kernel_cancelled(ctx)) return cort_kernel_cancelled_status(ctx);
    return NULL;
}
