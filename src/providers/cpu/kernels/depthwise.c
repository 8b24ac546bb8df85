/* Depthwise convolution.
 * - AVX-512 and AVX2, 2-D 3x3/5x5 at stride 1/2 without depth multiplier (MobileNet,
 *   EfficientNet): the channel-blocked kernel, 16 (AVX2: 8) channels in the vector lanes,
 *   transposed in and out of a per-task scratch band by band, every activation (SiLU included)
 *   applied on registers before the transpose out. Measured faster than the per-plane kernels at
 *   every plane size of those models (7x7 .. 112x112), most at small planes where a row fills few
 *   lanes (docs/performance.md, "Depthwise and Winograd measurements").
 * - Otherwise per output plane: the whole-plane kernel (AVX-512, same shapes, e.g. depth
 *   multiplier > 1) or a row kernel (outputs along the row in the lanes), or the portable loops. */
#include <stdatomic.h>
#include <string.h>
#include "depthwise.h"
#include "../../../core/alloc.h"
#include "dw_ukernels.h"

#define NN_DW_MAX_TAPS 64
/* Output pixels per band of the channel-blocked kernel (its scratch holds a band). */
#define NN_DW_CB_BAND_PIXELS 1024
/* Widest output row of a 3x3 stride-2 conv sent through the channel-blocked kernel (wider rows take
 * the plane kernel). */
#define NN_DW_CB_MAX_OW_3X3_S2 28
/* 3x3 output rows at least this wide (half as wide at stride 2) go to the plane kernel when it
 * applies the activation itself */
#define NN_DW_CB_MAX_OW_CHEAP_ACT 56
/* Inputs from this size on stream from memory, not the caches (see nn_conv_depthwise_f32). */
#define NN_DW_PREFETCH_MIN_BYTES ((size_t)16 << 20)
/* Largest per-task scratch of the channel-blocked kernel, in floats (a band of very wide rows
 * beyond it takes the plane kernel). */
#define NN_DW_CB_MAX_SCRATCH (256 * 1024)

typedef void (*dw_row_fn)(float *, int64_t, float, const float *const *, const float *, const int64_t *, int, int64_t,
                          int64_t, const nn_dw_act *);

static nn_dw_act dw_act_of(const nn_act *act) {
    nn_dw_act a = { act ? act->kind : 0, act ? act->alpha : 0.0f, act ? act->beta : 0.0f };
    return a;
}

#ifdef NN_HAVE_X86_UKERNELS
/* The activations the channel-blocked kernel applies (the others go through nn_act_apply). */
static int dw_act_known(const nn_act *act) {
    return !act || (act->kind >= CORT_ACT_NONE && act->kind <= CORT_ACT_HARD_SWISH);
}
#endif

/* The row and plane kernels take the cheap activations on their registers; Sigmoid/SiLU inlined
 * there measured slower than a second pass over the row or plane while it is in L1, where the
 * epilogue loop overlaps two vectors. */
static int dw_act_in_kernel(const nn_act *act) {
    return !act || act->kind == CORT_ACT_NONE || act->kind == CORT_ACT_RELU || act->kind == CORT_ACT_CLIP ||
           act->kind == CORT_ACT_LEAKY_RELU;
}

/* Depthwise plane through a row kernel: the taps of each output row are gathered first so the
 * kernel can keep its accumulators in registers across all of them. */
static int depthwise_plane_rows(const nn_geom *g, const float *x, const float *w, float bias, const nn_act *act,
                                float *y, dw_row_fn row) {
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
    const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
    const int64_t KD = g->k[0], KH = g->k[1], KW = g->k[2];
    if (KD * KH * KW > NN_DW_MAX_TAPS) return 0;
    const int in_kernel = dw_act_in_kernel(act);
    const nn_dw_act ka = dw_act_of(in_kernel ? act : NULL);
    const float *rows[NN_DW_MAX_TAPS];
    float wt[NN_DW_MAX_TAPS];
    int64_t offs[NN_DW_MAX_TAPS];
    for (int64_t od = 0; od < OD; od++)
        for (int64_t oh = 0; oh < OH; oh++) {
            int nt = 0;
            for (int64_t kd = 0; kd < KD; kd++) {
                int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                if (id < 0 || id >= ID) continue;
                for (int64_t kh = 0; kh < KH; kh++) {
                    int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                    if (ih < 0 || ih >= IH) continue;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        rows[nt] = x + (id * IH + ih) * IW;
                        wt[nt] = w[(kd * KH + kh) * KW + kw];
                        offs[nt] = kw * g->d[2] - g->pb[2];
                        nt++;
                    }
                }
            }
            row(y + (od * OH + oh) * OW, OW, bias, rows, wt, offs, nt, IW, g->s[2], &ka);
            if (!in_kernel) nn_act_apply(act, y + (od * OH + oh) * OW, (size_t)OW);
        }
    return 1;
}

/* 2-D square 3x3 / 5x5, dilation 1, equal strides 1 or 2: the shapes of the plane and
 * channel-blocked kernels. */
static int dw_is_kxk(const nn_geom *g) {
    return g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->k[1] == g->k[2] && (g->k[1] == 3 || g->k[1] == 5) &&
           g->d[1] == 1 && g->d[2] == 1 && g->s[1] == g->s[2] && (g->s[2] == 1 || g->s[2] == 2);
}

typedef void (*dw_plane_fn)(int K, const float *x, int64_t IH, int64_t IW, const float *w, float bias, float *y,
                            int64_t OH, int64_t OW, int64_t sw, int64_t pt, int64_t pl, const nn_dw_act *act,
                            int prefetch);

static void depthwise_kxk(dw_plane_fn plane, const nn_geom *g, const float *x, const float *w, float bias,
                          const nn_act *act, float *y, int prefetch) {
    const int in_kernel = dw_act_in_kernel(act);
    const nn_dw_act ka = dw_act_of(in_kernel ? act : NULL);
    plane((int)g->k[1], x, g->in[1], g->in[2], w, bias, y, g->out[1], g->out[2], g->s[2], g->pb[1],
                       g->pb[2], &ka, prefetch);
    if (!in_kernel) nn_act_apply(act, y, (size_t)(g->out[1] * g->out[2]));
}

/* One output plane of a depthwise conv: y = bias + sum_k w[k] * x[window]. Row oriented so the
 * innermost loop runs along contiguous output (and, for stride 1, input) elements. */
static void depthwise_plane(const nn_geom *g, const float *x, const float *w, float bias, const nn_act *act,
                            float *y) {
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
    const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
    const int64_t KD = g->k[0], KH = g->k[1], KW = g->k[2];
    const int64_t sw = g->s[2];
    for (int64_t od = 0; od < OD; od++)
        for (int64_t oh = 0; oh < OH; oh++) {
            float *yr = y + (od * OH + oh) * OW;
            for (int64_t ow = 0; ow < OW; ow++) yr[ow] = bias;
            for (int64_t kd = 0; kd < KD; kd++) {
                int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                if (id < 0 || id >= ID) continue;
                for (int64_t kh = 0; kh < KH; kh++) {
                    int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                    if (ih < 0 || ih >= IH) continue;
                    const float *xr = x + (id * IH + ih) * IW;
                    const float *wr = w + (kd * KH + kh) * KW;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const float wv = wr[kw];
                        const int64_t off = kw * g->d[2] - g->pb[2];
                        /* valid ow: 0 <= ow*sw + off < IW */
                        int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                        int64_t hi = IW - 1 - off < 0 ? -1 : (IW - 1 - off) / sw;
                        if (hi > OW - 1) hi = OW - 1;
                        if (sw == 1) {
                            const float *xs = xr + off;
                            for (int64_t ow = lo; ow <= hi; ow++) yr[ow] += wv * xs[ow];
                        } else {
                            for (int64_t ow = lo; ow <= hi; ow++) yr[ow] += wv * xr[ow * sw + off];
                        }
                    }
                }
            }
            nn_act_apply(act, yr, (size_t)OW);
        }
}

/* What each ISA level runs: a row kernel for the plane path, and whether the AVX-512 whole-plane
 * KxK kernel and the channel-blocked path are used. */
typedef void (*dw_cb_fn)(int K, int S, const float *x, int64_t xcs, int64_t IH, int64_t IW, int64_t pt, int64_t pl,
                         const float *w, const float *bias, int nc, float *y, int64_t ycs, int64_t OW, int64_t oh0,
                         int64_t oh1, int64_t HB, const nn_dw_act *act, float *scratch, int fresh);
typedef struct dw_kernels {
    dw_row_fn row;           /* NULL: the portable plane loop */
    dw_plane_fn kxk;         /* whole planes of 3x3 / 5x5 convs, or NULL */
    dw_cb_fn cb;             /* channel-blocked 3x3 / 5x5 kernel, or NULL */
    size_t (*cb_scratch)(int K, int S, int64_t HB, int64_t OW);
    size_t cb_lanes;         /* channels per block of cb */
    /* 3x3 stride 2 rows wider than this, and 3x3 rows with a cheap activation at least cheap_ow wide
     * (half as wide at stride 2), take the per-plane kernels (see depthwise_cb) */
    int64_t cb_max_ow_3x3_s2, cb_max_ow_cheap_act;
} dw_kernels;
static const dw_kernels dw_generic = { NULL, NULL, NULL, NULL, 0, 0, 0 };
#ifdef NN_HAVE_X86_UKERNELS
static const dw_kernels dw_avx2 = { nn_dw_row_avx2, NULL, nn_dw_cb_avx2, nn_dw_cb8_scratch_floats, 8,
                                    INT64_MAX, INT64_MAX };
static const dw_kernels dw_avx512 = { nn_dw_row_avx512, nn_dw_plane_avx512, nn_dw_cb_avx512, nn_dw_cb_scratch_floats, 16,
                                      NN_DW_CB_MAX_OW_3X3_S2, NN_DW_CB_MAX_OW_CHEAP_ACT };
#endif
static const dw_kernels *dw_config(cort_isa_level l) {
#ifdef NN_HAVE_X86_UKERNELS
    if (l == CORT_ISA_AVX512) return &dw_avx512;
    if (l == CORT_ISA_AVX2) return &dw_avx2;
#endif
    (void)l;
    return &dw_generic;
}

typedef struct dw_job {
    const nn_conv_shape *s;
    const float *x, *w, *bias;
    const nn_act *act;
    float *y;
    const dw_kernels *k;
    int prefetch;   /* the plane kernel prefetches its next input rows */
} dw_job;

static void dw_run(void *arg, size_t begin, size_t end) {
    const dw_job *j = arg;
    const nn_conv_shape *s = j->s;
    const size_t in_size = (size_t)nn_geom_in_size(&s->g), out_size = (size_t)nn_geom_out_size(&s->g);
    const size_t ks = (size_t)nn_geom_k_size(&s->g), mult = s->M / s->group;
    for (size_t t = begin; t < end; t++) {
        size_t n = t / s->M, m = t % s->M, c = m / mult;
        const float *xp = j->x + (n * s->C + c) * in_size, *wp = j->w + m * ks;
        float bv = j->bias ? j->bias[m] : 0.0f, *yp = j->y + (n * s->M + m) * out_size;
        if (j->k->kxk && dw_is_kxk(&s->g)) { depthwise_kxk(j->k->kxk, &s->g, xp, wp, bv, j->act, yp, j->prefetch); continue; }
        if (j->k->row && depthwise_plane_rows(&s->g, xp, wp, bv, j->act, yp, j->k->row)) continue;
        depthwise_plane(&s->g, xp, wp, bv, j->act, yp);
    }
}

#ifdef NN_HAVE_X86_UKERNELS
/* Channel-blocked path. Work items are (block of k->cb_lanes channels, band of output rows) pairs;
 * task t of ntasks runs items [t*nitems/ntasks, (t+1)*nitems/ntasks). With several threads there
 * are up to DW_CB_TASKS_PER_THREAD tasks per thread, so a thread that is slowed down (a vCPU the
 * host takes away: one ran 1.4-2x slower than the other for minutes) gives its later tasks to the
 * other; each call of the range function claims one of `nslots` scratch slots for its duration and
 * clears the slot's padding once per conv. The items go band by band (all channel blocks of a
 * band, then the next band), so a task reads the rows of every channel that the same thread of
 * the expand conv before it wrote (that conv splits positions); block by block, half the input came
 * from the other core. */
#define DW_CB_TASKS_PER_THREAD 4
#define DW_CB_MAX_SLOTS 64
typedef struct dw_cb_job {
    const nn_conv_shape *s;
    const dw_kernels *k;
    const float *x, *w, *bias;
    nn_dw_act act;
    float *y, *scratch;
    size_t slot, ntasks, nitems, nbands;
    int band_major;
    int64_t hb;   /* output rows per band */
    size_t nslots;
    atomic_int busy[DW_CB_MAX_SLOTS];
    int cleared[DW_CB_MAX_SLOTS];   /* written by the slot's holder only */
} dw_cb_job;

static void dw_cb_run(void *arg, size_t begin, size_t end) {
    dw_cb_job *j = arg;
    const nn_conv_shape *s = j->s;
    const nn_geom *g = &s->g;
    const size_t in_size = (size_t)nn_geom_in_size(g), out_size = (size_t)nn_geom_out_size(g);
    const size_t ks = (size_t)nn_geom_k_size(g), L = j->k->cb_lanes, cblocks = (s->C + L - 1) / L;
    const size_t slot = cort_slot_claim(j->busy, j->nslots);
    float *sc = j->scratch + slot * j->slot;
    int fresh = !j->cleared[slot];
    j->cleared[slot] = 1;
    for (size_t t = begin; t < end; t++) {
        for (size_t it = t * j->nitems / j->ntasks; it < (t + 1) * j->nitems / j->ntasks; it++) {
            const size_t nblocks = j->nitems / j->nbands;
            const size_t b = j->band_major ? it % nblocks : it / j->nbands;
            const size_t band = j->band_major ? it / nblocks : it % j->nbands;
            const size_t n = b / cblocks, c0 = b % cblocks * L, nc = s->C - c0 < L ? s->C - c0 : L;
            const int64_t oh0 = (int64_t)band * j->hb, oh1 = oh0 + j->hb < g->out[1] ? oh0 + j->hb : g->out[1];
            j->k->cb((int)g->k[1], (int)g->s[2], j->x + (n * s->C + c0) * in_size, (int64_t)in_size, g->in[1],
                     g->in[2], g->pb[1], g->pb[2], j->w + c0 * ks, j->bias ? j->bias + c0 : NULL, (int)nc,
                     j->y + (n * s->M + c0) * out_size, (int64_t)out_size, g->out[2], oh0, oh1, j->hb, &j->act,
                     sc, fresh);
            fresh = 0;
        }
    }
    cort_slot_release(j->busy, slot);
}

/* Runs the channel-blocked path when the shape suits it and its scratch is available. */
static int depthwise_cb(cort_pool *pool, const dw_kernels *k, const nn_conv_shape *s, const float *x, const float *w,
                        const float *bias, const nn_act *act, float *y, cort_kernel_ctx *ctx) {
    const nn_geom *g = &s->g;
    const int64_t OH = g->out[1], OW = g->out[2];
    if (s->M != s->C || !dw_is_kxk(g) || !dw_act_known(act)) return 0;
    /* 3x3 stride 2 transposes 4 input pixels per output for 9 taps: against the AVX-512 plane
     * kernel it only pays on narrow rows (measured in isolation, 1 thread). */
    if (g->k[1] == 3 && g->s[2] == 2 && OW > k->cb_max_ow_3x3_s2) return 0;
    /* In a model, where the input is the expand conv's fresh output, the AVX-512 plane kernel wins
     * on wide rows when the activation runs on its registers (Relu, Clip). With SiLU the
     * channel-blocked kernel stays ahead, on narrow rows for every activation, and for 5x5. The
     * AVX2 level has no plane kernel and sends every such shape to the channel-blocked one
     * (a plane kernel written for it lost to it at every width, and inside cort.PwDwConv to the
     * row kernel). */
    if (g->k[1] == 3 && dw_act_in_kernel(act) &&
        (g->s[2] == 1 ? OW >= k->cb_max_ow_cheap_act : OW >= k->cb_max_ow_cheap_act / 2))
        return 0;
    /* bands of about NN_DW_CB_BAND_PIXELS outputs, of equal height */
    int64_t nbands = (OH * OW + NN_DW_CB_BAND_PIXELS - 1) / NN_DW_CB_BAND_PIXELS;
    if (nbands > OH) nbands = OH;
    const int64_t hb = (OH + nbands - 1) / nbands;
    nbands = (OH + hb - 1) / hb;
    const size_t slot = k->cb_scratch((int)g->k[1], (int)g->s[2], hb, OW);
    if (slot > NN_DW_CB_MAX_SCRATCH) return 0;
    const size_t nitems = s->N * ((s->C + k->cb_lanes - 1) / k->cb_lanes) * (size_t)nbands;
    const size_t work = (size_t)nn_geom_out_size(g) * (size_t)nn_geom_k_size(g) * s->N * s->M;
    if (work < 32768) pool = NULL;
    size_t nslots = (size_t)cort_pool_threads(pool);
    if (nslots > DW_CB_MAX_SLOTS) nslots = DW_CB_MAX_SLOTS;
    if (nslots > nitems) nslots = nitems;
    const size_t ntasks = nslots > 1 && nitems > nslots * DW_CB_TASKS_PER_THREAD ? nslots * DW_CB_TASKS_PER_THREAD
                          : nslots > 1 ? nitems : 1;
    const size_t bytes = nslots * slot * sizeof(float);
    float *scratch = ctx ? cort_kernel_scratch(ctx, bytes) : cort_malloc(bytes);
    if (!scratch) return 0;   /* the per-plane kernels need no scratch */
    dw_cb_job j;
    j.s = s; j.k = k; j.x = x; j.w = w; j.bias = bias; j.act = dw_act_of(act); j.y = y; j.scratch = scratch;
    j.slot = slot; j.ntasks = ntasks; j.nitems = nitems; j.nbands = (size_t)nbands; j.band_major = ntasks > 1;
    j.hb = hb; j.nslots = nslots;
    for (size_t i = 0; i < nslots; i++) { atomic_init(&j.busy[i], 0); j.cleared[i] = 0; }
    cort_parallel_for(pool, ntasks, 1, dw_cb_run, &j);
    if (ctx) cort_kernel_scratch_free(ctx, scratch);
    else cort_free(scratch);
    return 1;
}
#endif

void nn_conv_depthwise_f32(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s, const float *x,
                           const float *w, const float *bias, const nn_act *act, float *y, cort_kernel_ctx *ctx) {
    const size_t out_size = (size_t)nn_geom_out_size(&s->g), ks = (size_t)nn_geom_k_size(&s->g);
    /* an input this large comes from memory: the plane kernel fetches rows ahead (which costs time
     * when the input comes from the caches) */
    const int prefetch = s->N * s->C * (size_t)nn_geom_in_size(&s->g) * sizeof(float) >= NN_DW_PREFETCH_MIN_BYTES;
    /* an explicit gemm kernel (tests) selects the depthwise kernels of its ISA level */
    dw_job j = { s, x, w, bias, act, y, dw_config(kernel ? kernel->isa : cort_cpu_isa()), prefetch };
    (void)ctx;
    (void)kernel;
#ifdef NN_HAVE_X86_UKERNELS
    if (j.k->cb && depthwise_cb(pool, j.k, s, x, w, bias, act, y, ctx)) return;
#endif
    size_t planes = s->N * s->M;
    cort_parallel_for(out_size * ks * planes < 32768 ? NULL : pool, planes, 1, dw_run, &j);
}

void nn_conv_depthwise_planes_f32(const nn_geom *g, size_t c0, size_t c1, const float *x, size_t x_ps, const float *w,
                                  const float *bias, const nn_act *act, float *y, size_t y_ps) {
    const size_t ks = (size_t)nn_geom_k_size(g);
    const dw_kernels *k = dw_config(cort_cpu_isa());
    for (size_t c = c0; c < c1; c++) {
        const float *xp = x + c * x_ps, *wp = w + c * ks;
        const float bv = bias ? bias[c] : 0.0f;
        float *yp = y + c * y_ps;
        if (k->kxk && dw_is_kxk(g)) { depthwise_kxk(k->kxk, g, xp, wp, bv, act, yp, 0); continue; }
        if (k->row && depthwise_plane_rows(g, xp, wp, bv, act, yp, k->row)) continue;
        depthwise_plane(g, xp, wp, bv, act, yp);
    }
}
