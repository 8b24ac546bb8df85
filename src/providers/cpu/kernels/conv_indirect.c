/* Convolution as an indirect GEMM: no im2col matrix is ever packed.
 *
 * The input is copied once into a zero-padded buffer; for stride 2 it is also split into its four
 * (row, column) parity phases. In that buffer every kernel tap (c, kh, kw) of a whole output row
 * is a contiguous run of floats at a fixed offset, so computing the output over a "virtual" row
 * width Wv (the padded, or phase, width) turns the convolution into C_v[M, OH*Wv] = W[M, K] *
 * B[K, OH*Wv] where row k of B starts at buffer + off[k]: the micro-kernel reads B in place
 * through a table of row pointers. Columns ow >= OW of each virtual row are junk. A panel inside
 * one output row is stored straight into Y; one that straddles two rows is computed into a stack
 * tile and its valid columns copied out. Where it wastes little, panels instead start at every
 * output row (ind_geom_tiling) and all are stored straight into Y.
 *
 * Cost compared with implicit im2col: one copy of the input (only the phases the kernel uses)
 * instead of packing K*OH*OW floats, plus (Wv - OW)/Wv junk columns of compute. */
#include <stdatomic.h>
#include <string.h>
#include "../ops/nn/conv.h"
#include "isa_config.h"
#include "../../../core/alloc.h"
#include "../../../core/cpu_features.h"

/* Column panels per task. Each row stream of Y is written in runs of bp * NR floats, and cold Y
 * lines are cheaper in long runs (squeezenet's and resnet50's stems gained with 32 panels), but a
 * task's B panels (K * NR floats each, re-read per A panel) must stay in L2:
 * bp * K * NR * 4 bytes <= the core's L2 (tuned on 1 MB L2s; a Zen 3's is 512 KB, where 1 MB of
 * panels sent every A panel's pass to L3: resnet50's 3x3 stride-2 conv at 56x56 missed L2 twice as
 * often in a cache simulation). */
#define IND_BLOCK_MIN 8
#define IND_BLOCK_MAX 32
#define IND_L2_UNKNOWN (512 * 1024)   /* assumed where the CPU does not report its L2 */
#define IND_MAX_SLOTS 64       /* threads of the image-parallel mode (one slot each) */

typedef struct ind_geom {
    size_t C, M, K, KH, KW, S, D;
    size_t IH, IW, OH, OW;
    int64_t pt, pl;          /* top/left padding */
    size_t Hp, Wp;           /* padded (S = 1) or phase (S = 2) plane dims; Wv = Wp */
    size_t plane;            /* floats per plane, incl. slack */
    size_t nphase;           /* planes per channel: 1 or 4 */
    unsigned phases;         /* bit ph set if some tap reads phase plane ph (a 1x1 stride-2 conv reads one) */
    size_t ncols;            /* OH * Wp virtual output columns */
    int rowtile;             /* panels start at each output row (else every NR virtual columns) */
    size_t row_panels;       /* rowtile: panels per output row */
    size_t npanels;          /* panels over the output */
} ind_geom;

/* Which convolutions this path takes: 2-D (or 1-D), one group, equal strides 1 or 2, and not a
 * stride-1 1x1 (that reads its input in place already). */
int nn_conv_indirect_applies(const nn_conv_shape *s, const nn_gemm_packed *wpack) {
    const nn_geom *g = &s->g;
    if (s->group != 1 || !wpack || !wpack->k || !wpack->k->edge || g->in[0] != 1 || g->k[0] != 1 || g->out[0] != 1)
        return 0;
    if (g->s[1] != g->s[2] || (g->s[1] != 1 && g->s[1] != 2) || g->d[1] != g->d[2]) return 0;
    if (g->s[1] == 1 && g->k[1] == 1 && g->k[2] == 1) return 0;
    if (wpack->k->mr > NN_MAX_MR || wpack->k->mr * wpack->k->nr > NN_MAX_TILE) return 0;   /* stack tile */
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

/* Panels tile either the virtual rows (Wp wide: a panel may straddle two output rows, which costs a
 * copy out of a stack tile) or each output row separately (ow = 0, NR, 2 NR, ...; the last panel
 * masked, a 16-column kernel if at most 16 remain: every panel is stored straight into Y but the
 * last one of each row may compute up to NR - 1 junk columns). Row tiling when that computes at
 * most ~6% more columns. */
static void ind_geom_tiling(ind_geom *q, size_t nr) {
    const size_t rem = q->OW % nr, rowcols = q->OW / nr * nr + (rem == 0 ? 0 : rem <= nr / 2 ? nr / 2 : nr);
    /* Wp == OW (no junk columns: a k x 1 conv with no side padding) tiles the plane as one run of
     * full panels, each stored straight into Y; row tiling would end every row in an edge panel
     * (cnn_batch's 3x1 convs at 16x24: 16 + 8 columns a row, the 8-column tile half as fast) */
    q->rowtile = q->Wp != q->OW && rowcols * 16 <= q->Wp * 17;
    q->row_panels = (q->OW + nr - 1) / nr;
    q->npanels = q->rowtile ? q->OH * q->row_panels : (q->ncols + nr - 1) / nr;
}

typedef struct pad_job {
    const ind_geom *q;
    const float *x;
    float *buf;
    void (*stride2)(const float *src, float *dst, size_t n);   /* the level's vector gather, or NULL */
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
                    if (hi > lo && j->stride2) j->stride2(xs + 2 * lo, d + lo, (size_t)(hi - lo));
                    else
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
    const float *const *taps;   /* B row k (tap k = (c, kh, kw)) starts at taps[k], for all K */
    const float *bias;
    const nn_act *act;
    float *y;                /* [M][OH][OW] */
    const float *sum;        /* added to y before act (fused residual), [M][OH][OW], or NULL */
    cort_kernel_ctx *ctx;
    size_t tasks_n, bm;      /* tasks are [M blocks of bm panels][column blocks of bp panels] */
    size_t bp;
    int multi;               /* the kernel walks runs of full tiles in one call (nn_ukr_args.panels) */
} ind_job;

/* Offset of tap k = (c, kh, kw) in the planes. */
static size_t tap_offset(const ind_geom *q, size_t c, size_t kh, size_t kw) {
    const size_t r = kh * q->D, s = kw * q->D;
    if (q->S == 1) return c * q->plane + r * q->Wp + s;
    const size_t ph = (r & 1) * 2 + (s & 1);
    return (c * 4 + ph) * q->plane + (r >> 1) * q->Wp + (s >> 1);
}

/* A panel ip against column panels [p0, p1): each tile over all of K (the tile stays in registers
 * or L1 between K slices). A tile inside one output row is stored straight into Y; one straddling
 * two rows goes through a stack tile and its valid columns are copied out (a cold virtual-output
 * buffer and a compaction pass cost more than the copy). */
static void ind_tiles(const ind_job *j, size_t ip, size_t p0, size_t p1, float *tile) {
    const ind_geom *q = j->q;
    const nn_gemm_kernel *k = j->w->k;
    const size_t mr = k->mr, nr = k->nr, mpanels = (q->M + mr - 1) / mr, plane = q->OH * q->OW;
    /* the kernel adds the residual (c_add) and applies these activations on its registers */
    const int reg_act = j->act && ((j->act->kind >= CORT_ACT_RELU && j->act->kind <= CORT_ACT_LEAKY_RELU) ||
                                   j->act->kind == CORT_ACT_HARD_SWISH ||
                                   (q->K <= 64 /* stems: SiLU too */ && j->act->kind < CORT_ACT_GELU));
    const size_t r0 = ip * mr, nrows = q->M - r0 < mr ? q->M - r0 : mr;
    float bias_pad[NN_MAX_MR];
    const float *bias = NULL;
    if (j->bias) {
        for (size_t r = 0; r < mr; r++) bias_pad[r] = r < nrows ? j->bias[r0 + r] : 0.0f;
        bias = bias_pad;
    }
    nn_ukr_args u;
    memset(&u, 0, sizeof u);
    u.a_rs = 1; u.a_cs = mr;
    u.rows = nrows;
    /* a column panel's K rows of NR floats from 32 KB on (resnet50's 3x3 stride-2 conv at 28x28, K
     * 1152: 12 % faster with B prefetched ahead; its 1x1 stride-2 256 -> 512, K 256, 5 %; its 7x7
     * stem, K 147, 5 % slower) */
    u.b_ind_ahead = q->K * nr >= 8192;
    /* panel position advanced incrementally: (oh, ow) of its first column, b = its B offset */
    size_t oh, ow, b;
    if (q->rowtile) { oh = p0 / q->row_panels; ow = p0 % q->row_panels * nr; b = oh * q->Wp + ow; }
    else { b = p0 * nr; oh = b / q->Wp; ow = b % q->Wp; }
    for (size_t pi = p0; pi < p1; pi++) {
        const size_t c0 = b, yo = oh * q->OW + ow, ow0 = ow;
        size_t cols;
        int direct;
        if (q->rowtile) {
            cols = q->OW - ow < nr ? q->OW - ow : nr;
            direct = 1;
            ow += nr; b += nr;
            if (ow >= q->OW) { ow = 0; oh++; b = oh * q->Wp; }
        } else {
            cols = q->ncols - b < nr ? q->ncols - b : nr;
            /* no junk columns at all (Wp == OW, e.g. a 1x1 stride-2 conv): the virtual rows are
             * Y's rows, so even a straddling panel is stored straight into Y */
            direct = ow + cols <= q->OW || q->Wp == q->OW;
            b += nr; ow += nr;
            while (ow >= q->Wp) { ow -= q->Wp; oh++; }
        }
        /* one K slice: the full tiles left in this output row go to the kernel in one call that
         * walks them (squeezenet's 16->64 3x3 convs at 55x55, K = 144, gained). With the 32-column
         * AVX-512 tile the stems (K = 27) measured no better or slightly worse, so they keep a call
         * per tile there; a 16-column tile of a stem is so little work that the call is a large
         * share of it (Zen 3, avx2: cnn_batch's K = 9 stem 7.3 -> 3.7 ms, ocr_det's 3.4 -> 2.6,
         * ocr_rec 3.76 -> 3.03 ms in all) */
        size_t run = 1;
        if (j->multi && direct && cols == nr && (q->K >= 64 || nr <= 16) && q->K <= NN_GEMM_KC && (!j->act || reg_act)) {
            /* full panels from here to the row's end (to the plane's when the rows have no junk) */
            const size_t left = q->Wp == q->OW && !q->rowtile ? (q->ncols - c0) / nr : (q->OW - ow0) / nr;
            run = left < p1 - pi ? left : p1 - pi;
            if (run < 1) run = 1;
            for (size_t e = 1; e < run; e++) {   /* advance past the panels the call takes */
                if (q->rowtile) {
                    ow += nr; b += nr;
                    if (ow >= q->OW) { ow = 0; oh++; b = oh * q->Wp; }
                } else {
                    b += nr; ow += nr;
                    while (ow >= q->Wp) { ow -= q->Wp; oh++; }
                }
            }
        }
        u.panels = run;
        u.b_off = c0;
        u.cols = cols;
        u.c_add = NULL;
        u.act = 0;
        u.perm = NULL;
        u.kept = 0;
        /* a tile straddling output rows: a 32-column ext kernel drops its junk columns itself
         * and stores the rest as one run (those columns are consecutive in Y), instead of a
         * stack tile copied out fragment by fragment (squeezenet's 16->64 3x3 conv at 55x55) */
        int32_t perm[32];
        size_t yo_run = yo;
        if (!direct && j->multi && nr == 32) {
            size_t kept = 0, first = SIZE_MAX;
            for (size_t v = 0, pos = c0 % q->Wp, r = c0 / q->Wp; v < cols; v++, pos++) {
                if (pos == q->Wp) { pos = 0; r++; }
                if (pos < q->OW) {
                    if (first == SIZE_MAX) first = r * q->OW + pos;
                    perm[kept++] = (int32_t)v;
                }
            }
            for (size_t p = kept; p < 32; p++) perm[p] = 0;
            if (kept) {
                direct = 1;
                yo_run = first;
                u.perm = perm;
                u.kept = kept;
            }
        }
        if (direct) { u.c = j->y + r0 * plane + yo_run; u.ldc = plane; }
        else { u.c = tile; u.ldc = nr; }
        for (size_t k0 = 0; k0 < q->K; k0 += NN_GEMM_KC) {
            const size_t kc = q->K - k0 < NN_GEMM_KC ? q->K - k0 : NN_GEMM_KC;
            const int last = k0 + kc == q->K;
            u.kc = kc;
            u.a = j->w->data + k0 * mpanels * mr + ip * mr * kc;
            /* the first tile of a row panel reads its weights cold: it fetches the next
             * panel's meanwhile (resnet50's 3x3 stride-2 conv at 56x56, squeezenet's 3x3
             * expand convs) */
            u.b_prefetch = pi == p0 && ip + 1 < mpanels ? u.a + mr * kc : NULL;
            u.b_prefetch_ld = mr;
            u.b_ind = j->taps + k0;
            u.bias = k0 == 0 ? bias : NULL;
            u.accumulate = k0 > 0;
            if (last && direct && j->sum) u.c_add = j->sum + r0 * plane + yo_run;
            if (last && reg_act && (direct || !j->sum)) {
                u.act = j->act->kind; u.act_lo = j->act->alpha; u.act_hi = j->act->beta;
            }
            k->ukr(&u);
        }
        /* the next tile's output rows, for writing: Y is cold in a model and its rows are
         * M streams the hardware prefetcher does not follow (MobileNetV2's stem; prefetching
         * 2 or 4 tiles ahead measured no better) */
        pi += run - 1;
        if (direct && !u.perm && pi + 1 < p1) {
            const float *cf = j->y + r0 * plane + yo + run * nr;
            for (size_t r = 0; r < nrows; r++) {
                __builtin_prefetch(cf + r * plane, 1, 3);
                __builtin_prefetch(cf + r * plane + 16, 1, 3);
            }
        }
        if (direct) {
            const size_t width = u.perm ? u.kept : cols;
            if (j->act && !reg_act)
                for (size_t r = 0; r < nrows; r++) nn_act_apply(j->act, j->y + (r0 + r) * plane + yo_run, width);
            continue;
        }
        /* the valid columns of the straddling tile, row fragment by row fragment */
        const int act_done = reg_act && !j->sum;
        for (size_t v = c0; v < c0 + cols;) {
            const size_t voh = v / q->Wp, vow = v % q->Wp;
            size_t run = q->Wp - vow;
            if (run > c0 + cols - v) run = c0 + cols - v;
            if (vow < q->OW) {
                const size_t n = q->OW - vow < run ? q->OW - vow : run, off = voh * q->OW + vow;
                for (size_t r = 0; r < nrows; r++) {
                    const float *src = tile + r * nr + (v - c0);
                    float *d = j->y + (r0 + r) * plane + off;
                    if (j->sum) {
                        const float *a = j->sum + (r0 + r) * plane + off;
                        for (size_t e = 0; e < n; e++) d[e] = src[e] + a[e];
                    } else {
                        for (size_t e = 0; e < n; e++) d[e] = src[e];   /* short: no libc call */
                    }
                    if (!act_done) nn_act_apply(j->act, d, n);
                }
            }
            v += run;
        }
    }
}

/* Tasks are (block of A panels, block of column panels); A panels outside and column panels inside,
 * so Y is written as MR row streams (column panels outside, each kept in L1 while the A panels
 * stream past, measured 5-10 % slower on cnn_batch's K = 192 and 384 convs on Zen 3). */
static void ind_run(void *arg, size_t begin, size_t end) {
    const ind_job *j = arg;
    const ind_geom *q = j->q;
    const size_t mr = j->w->k->mr, mpanels = (q->M + mr - 1) / mr;
    float tile[NN_MAX_TILE];
    for (size_t t = begin; t < end; t++) {
        if (j->ctx && cort_kernel_cancelled(j->ctx)) return;
        const size_t ip0 = t / j->tasks_n * j->bm, ip1 = ip0 + j->bm < mpanels ? ip0 + j->bm : mpanels;
        const size_t p0 = t % j->tasks_n * j->bp;
        const size_t p1 = p0 + j->bp < q->npanels ? p0 + j->bp : q->npanels;
        for (size_t ip = ip0; ip < ip1; ip++) ind_tiles(j, ip, p0, p1, tile);
    }
}

/* Task tiling of one image for `threads` threads. */
static void ind_tiling(const ind_geom *q, size_t nr, size_t mr, size_t threads, size_t *tasks_n, size_t *bm,
                       size_t *bp, size_t *tasks) {
    const size_t mpanels = (q->M + mr - 1) / mr, want = 3 * threads;
    /* long runs where B fits, but not fewer column blocks than the threads can share */
    size_t b = cort_cpu_l2_bytes(IND_L2_UNKNOWN) / sizeof(float) / (q->K * nr);
    if (b > IND_BLOCK_MAX) b = IND_BLOCK_MAX;
    if (b > q->npanels / want) b = q->npanels / want;
    if (b < IND_BLOCK_MIN) b = IND_BLOCK_MIN;
    *bp = b;
    *tasks_n = (q->npanels + b - 1) / b;
    /* few column blocks (small planes): split the output channels too so every thread has work, into
     * equal blocks (22 panels as 15 + 7 left one thread a third idle on cnn_batch's 16x24 convs) */
    *bm = mpanels;
    if (*tasks_n < want) {
        const size_t nb = (want + *tasks_n - 1) / *tasks_n;
        *bm = (mpanels + nb - 1) / nb;
    }
    if (*bm == 0) *bm = 1;
    *tasks = (mpanels + *bm - 1) / *bm * *tasks_n;
}

/* Image-parallel mode: each task takes whole images (padding and all tiles) on one thread, in a
 * slot of padded planes and tap table it claims for the duration (at most `threads` tasks run at
 * once, so a slot is always free). */
typedef struct ind_img_job {
    ind_job base;             /* y, sum, taps set per image and slot */
    const float *x;
    float *slots;             /* `nslots` slots of slot_bytes: padded planes, then the tap table */
    size_t slot_bytes, buf_bytes, nslots, in_size, out_size, tasks;
    atomic_int busy[IND_MAX_SLOTS];
} ind_img_job;

static void ind_img_run(void *arg, size_t begin, size_t end) {
    ind_img_job *ij = arg;
    const size_t slot = cort_slot_claim(ij->busy, ij->nslots);
    char *base = (char *)ij->slots + slot * ij->slot_bytes;
    ind_job j = ij->base;
    j.taps = (const float *const *)(void *)(base + ij->buf_bytes);
    const ind_geom *q = j.q;
    for (size_t n = begin; n < end; n++) {
        if (j.ctx && cort_kernel_cancelled(j.ctx)) break;
        pad_job pj = { q, ij->x + n * q->C * ij->in_size, (float *)(void *)base, nn_isa()->copy_stride2 };
        pad_run(&pj, 0, q->C);
        j.y = ij->base.y + n * q->M * ij->out_size;
        j.sum = ij->base.sum ? ij->base.sum + n * q->M * ij->out_size : NULL;
        ind_run(&j, 0, ij->tasks);
    }
    cort_slot_release(ij->busy, slot);
}

static void ind_build_taps(const ind_geom *q, float *buf, const float **taps) {
    size_t c = 0, kh = 0, kw = 0;
    for (size_t p = 0; p < q->K; p++) {
        taps[p] = buf + tap_offset(q, c, kh, kw);
        if (++kw == q->KW) { kw = 0; if (++kh == q->KH) { kh = 0; c++; } }
    }
}

cort_status *nn_conv_indirect_f32(cort_pool *pool, const nn_conv_shape *s, const float *x, const nn_gemm_packed *wpack,
                                  const float *bias, const float *sum, const nn_act *act, float *y,
                                  cort_kernel_ctx *ctx) {
    ind_geom q;
    ind_geom_make(s, &q);
    const size_t nr = wpack->k->nr, mr = wpack->k->mr;
    const size_t nbuf = q.C * q.nphase * q.plane;
    if (q.C && q.nphase * q.plane > SIZE_MAX / sizeof(float) / 2 / q.C) return cort_error_oom();
    /* the padded planes, then the tap table (pointers into them) */
    const size_t tap_bytes = q.K * sizeof(float *), buf_bytes = (nbuf * sizeof(float) + 63) / 64 * 64;
    if (q.K > (SIZE_MAX - buf_bytes) / sizeof(float *)) return cort_error_oom();
    const size_t slot_bytes = (buf_bytes + tap_bytes + 63) / 64 * 64;
    const size_t in_size = q.IH * q.IW, out_size = q.OH * q.OW;
    ind_geom_tiling(&q, nr);
    const double flops = 2.0 * (double)q.M * (double)q.K * (double)q.ncols;
    cort_pool *p = flops < 262144.0 ? NULL : pool;
    const size_t threads = (size_t)cort_pool_threads(p);
    const nn_act *ra = act && act->kind != CORT_ACT_NONE ? act : NULL;
    /* a batch of at least two images per thread: whole images per thread, each padded into the
     * thread's own planes (a batch-36 net's 1-channel 3x3 stem: per image, the padding ran on one
     * thread between two dispatches and 2 threads ran it 1.15x as fast as 1), and with the pool's
     * fixed lanes a thread reads the images it wrote in the layer before */
    if (threads > 1 && threads <= IND_MAX_SLOTS && s->N >= 2 * threads && slot_bytes <= SIZE_MAX / threads) {
        ind_img_job ij;
        ij.slots = cort_kernel_scratch(ctx, threads * slot_bytes);
        if (!ij.slots) return cort_error_oom();
        ij.slot_bytes = slot_bytes; ij.buf_bytes = buf_bytes; ij.nslots = threads;
        ij.in_size = in_size; ij.out_size = out_size; ij.x = x;
        for (size_t t = 0; t < threads; t++) {
            char *b = (char *)ij.slots + t * slot_bytes;
            ind_build_taps(&q, (float *)(void *)b, (const float **)(void *)(b + buf_bytes));
            atomic_init(&ij.busy[t], 0);
        }
        size_t tasks_n, bm, bp;
        ind_tiling(&q, nr, mr, 1, &tasks_n, &bm, &bp, &ij.tasks);
        ind_job j = { &q, wpack, NULL, bias, ra, y, sum, ctx, tasks_n, bm, bp, wpack->k->ext };
        ij.base = j;
        cort_parallel_for(p, s->N, 1, ind_img_run, &ij);
        cort_kernel_scratch_free(ctx, ij.slots);
        if (ctx && cort_kernel_cancelled(ctx)) return cort_kernel_cancelled_status(ctx);
        return NULL;
    }
    float *buf = cort_kernel_scratch(ctx, slot_bytes);
    if (!buf) return cort_error_oom();
    const float **taps = (const float **)(void *)((char *)buf + buf_bytes);
    ind_build_taps(&q, buf, taps);
    size_t tasks_n, bm, bp, tasks;
    ind_tiling(&q, nr, mr, threads, &tasks_n, &bm, &bp, &tasks);
    for (size_t n = 0; n < s->N; n++) {
        pad_job pj = { &q, x + n * q.C * in_size, buf, NULL };
        pj.stride2 = nn_isa()->copy_stride2;
        cort_parallel_for(q.C * in_size < 16384 ? NULL : pool, q.C, 1, pad_run, &pj);
        ind_job j = { &q, wpack, taps, bias, ra, y + n * q.M * out_size, sum ? sum + n * q.M * out_size : NULL, ctx,
                      tasks_n, bm, bp, 0 };
        j.multi = wpack->k->ext;
        cort_parallel_for(p, tasks, 1, ind_run, &j);
        if (ctx && cort_kernel_cancelled(ctx)) break;
    }
    cort_kernel_scratch_free(ctx, buf);
    if (ctx && cort_kernel_cancelled(ctx)) return cort_kernel_cancelled_status(ctx);
    return NULL;
}
