/* Convolutions whose output plane is small (7x7, 10x10, ...): computed transposed, as
 *   Y^T[P, M] = im2col(X)^T[P, K] * W^T[K, M]      (P = OH*OW output positions)
 * so that the output positions run along the micro-kernel's 12 broadcast rows (edge tiles of 4 or
 * 8 rows) and the output channels along its 32 vector columns. A 7x7 plane in the usual
 * orientation fills 49 of 64 vector lanes; here 49 of 52 rows. W^T is packed once at session
 * creation; the small result is transposed into NCHW with bias and activation on the way. */
#include <string.h>
#include "../ops/nn/conv.h"
#include "../../../core/alloc.h"
#include "isa_config.h"

#define SMALL_MAX_POSITIONS 256
/* The K-block sweep's partial sums (mtiles x tstore_rows x NR floats) live on the stack: room for
 * the AVX2 tile's 43 tiles of 6 x 16 on SMALL_MAX_POSITIONS positions */
#define TSTORE_ACC_FLOATS (44 * 6 * 16)

/* Fraction of computed lanes that are useful when n items are tiled by `tile` with edge variants
 * of width `edge` (the narrowest tile the kernel can run). */
static double tile_efficiency(size_t n, size_t tile, size_t edge) {
    const size_t full = n / tile * tile, rem = n - full;
    const size_t cost = full + (rem ? (rem + edge - 1) / edge * edge : 0);
    return cost ? (double)n / (double)cost : 1.0;
}

int nn_conv_small_prefers(const nn_conv_shape *s, const nn_gemm_kernel *k) {
    const nn_geom *g = &s->g;
    if (!k || !k->edge || s->group != 1 || g->in[0] != 1 || g->k[0] != 1 || g->out[0] != 1) return 0;
    const size_t P = (size_t)(g->out[1] * g->out[2]);
    if (P == 0 || P > SMALL_MAX_POSITIONS || s->M < 16) return 0;
    /* usual: positions over 32-column panels (16-column edge); transposed: positions over 12-row
     * panels (4-row edge) and channels over 32-column panels (16-column edge) */
    const double usual = tile_efficiency(P, k->nr, k->nr / 2);
    /* The AVX2 6x16 kernel has an edge variant per row count (row_edge 1): 7x7 1x1 convs with
     * K < M went transposed 7-15 % faster on Zen 1 (160 -> 960, 192 -> 1152, 320 -> 1280), while
     * 14x14 (usual tiling 98 % full) stays as it is (96 -> 576 measured 6 % slower transposed) */
    const double trans = tile_efficiency(P, k->mr, k->row_edge ? k->row_edge : 4) *
                         tile_efficiency(s->M, k->nr, k->nr / 2);
    if (trans > usual * 1.08) return 1;
    /* A kernel with a transposed-store tile reads the positions in place and runs tiles of any
     * height, so when the usual orientation computes wasted columns (14x14: 208 for 196) a 1x1 conv
     * that reduces or keeps the channels in whole panels wins transposed (576->96, 1024->256,
     * 512->256); with K < M the per-tile transposed epilogue costs more than the waste (256->1024,
     * 96->576). */
    const size_t K = s->C * (size_t)(g->k[1] * g->k[2]);
    const int pointwise = g->k[1] == 1 && g->k[2] == 1 && g->s[1] == 1 && g->s[2] == 1 && g->pb[1] == 0 &&
                          g->pb[2] == 0 && g->pe[1] == 0 && g->pe[2] == 0;
    /* 1x1 stride 2 (a ResNet downsample: its im2col is a strided gather) pays the epilogue even at
     * K = M / 2 (resnet50's 512->1024 at 28x28 -> 14x14, 1024->2048 at 14x14 -> 7x7) */
    const int stride2 = g->s[1] == 2 && g->s[2] == 2;
    const int down = stride2 && g->k[1] == 1 && g->k[2] == 1 && g->pb[1] == 0 && g->pb[2] == 0 && g->pe[1] == 0 &&
                     g->pe[2] == 0;
    /* and k x k stride 2 with K >= M (im2col then the transposed kernel): resnet50's 256-channel
     * 3x3 28x28 -> 14x14 conv */
    if (!k->tstore || usual >= 1.0 || s->M % 16) return 0;
    return (down && 2 * K >= s->M && K >= 256) || (stride2 && K >= s->M) || (pointwise && K >= s->M && K >= 256);
}

cort_status *nn_conv_small_pack(const float *w, size_t M, size_t K, nn_gemm_packed *out) {
    return nn_conv_small_pack_par(NULL, w, M, K, out);
}

cort_status *nn_conv_small_pack_par(cort_pool *pool, const float *w, size_t M, size_t K, nn_gemm_packed *out) {
    nn_gemm_b b = nn_gemm_b_matrix(w, K, 1);   /* B = W^T: W stored [M][K] */
    return nn_gemm_pack_b_par(pool, NULL, K, M, &b, out);
}

/* col[k][p] for k = (c, kh, kw), p = (oh, ow): the K x P patch matrix of one image. */
static void im2col_small(const nn_geom *g, size_t c0, size_t C, const float *x, float *col) {
    const int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2], KH = g->k[1], KW = g->k[2];
    const size_t P = (size_t)(OH * OW);
    for (size_t c = c0; c < C; c++)
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++) {
                float *d = col + ((c * (size_t)KH + (size_t)kh) * (size_t)KW + (size_t)kw) * P;
                const float *xc = x + c * (size_t)(IH * IW);
                for (int64_t oh = 0; oh < OH; oh++, d += OW) {
                    const int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                    if (ih < 0 || ih >= IH) { memset(d, 0, (size_t)OW * sizeof(float)); continue; }
                    const float *xr = xc + ih * IW;
                    for (int64_t ow = 0; ow < OW; ow++) {
                        const int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                        d[ow] = iw >= 0 && iw < IW ? xr[iw] : 0.0f;
                    }
                }
            }
}

typedef struct im2col_job { const nn_geom *g; const float *x; float *col; } im2col_job;

/* channels [begin, end): serial, the im2col of 512 channels x 9 taps of a 7x7 plane was a tenth
 * of resnet50's layer4 3x3 convs at 2 threads */
static void im2col_run(void *arg, size_t begin, size_t end) {
    const im2col_job *j = arg;
    im2col_small(j->g, begin, end, j->x, j->col);
}

typedef struct small_out_job {
    const float *yt;      /* [P][M] */
    const float *bias, *sum;
    const nn_act *act;
    float *y;             /* [M][P] */
    size_t P, M;
} small_out_job;

/* Y[m][p] = act(Yt[p][m] + bias[m] + sum[m][p]) for channel blocks [begin, end) of 16: 16x16
 * tiles (transposed in registers when AVX-512 is there), then bias, residual and activation in one
 * pass over the block's rows while they are in L1. */
static void small_out_run(void *arg, size_t begin, size_t end) {
    const small_out_job *j = arg;
    const size_t P = j->P, M = j->M;
    void (*const t16)(const float *, size_t, float *, size_t) = nn_isa()->transpose16;
    for (size_t blk = begin; blk < end; blk++) {
        const size_t m0 = blk * 16, m1 = m0 + 16 < M ? m0 + 16 : M;
        for (size_t p0 = 0; p0 < P; p0 += 16) {
            const size_t p1 = p0 + 16 < P ? p0 + 16 : P;
            if (t16 && m1 - m0 == 16 && p1 - p0 == 16) {
                t16(j->yt + p0 * M + m0, M, j->y + m0 * P + p0, P);
                continue;
            }
            for (size_t m = m0; m < m1; m++) {
                float *ym = j->y + m * P;
                for (size_t p = p0; p < p1; p++) ym[p] = j->yt[p * M + m];
            }
        }
        for (size_t m = m0; m < m1; m++) {
            float *ym = j->y + m * P;
            const float b = j->bias ? j->bias[m] : 0.0f;
            if (j->sum) {
                const float *sm = j->sum + m * P;
                for (size_t p = 0; p < P; p++) ym[p] += b + sm[p];
            } else if (b != 0.0f) {
                for (size_t p = 0; p < P; p++) ym[p] += b;
            }
            nn_act_apply(j->act, ym, P);
        }
    }
}

/* The transposed-store path (kernels with a tstore tile): per (channel panel, position tile) one
 * kernel call over all of K that reads the patch matrix in place ([K][P]: a tile's positions are
 * contiguous in every row) and stores the tile transposed into Y with bias, residual and
 * activation: no packing of the patch matrix, no Y^T scratch and no pass over it (both were a
 * sizeable part of a 7x7 pointwise conv). Position tiles hold at most MR rows (tstore_rows when
 * that avoids a tile of 1: with 12x32, 49 = 13 + 12 + 12 + 12), spread evenly. */
typedef struct tstore_job {
    const float *at;          /* A^T, [K][P] (lda = P) */
    const nn_gemm_packed *wt;
    const float *bias, *sum;
    const nn_act *act;
    float *y;
    size_t P, M, K, mtiles, npanels;
    int pos_major;
    size_t kblock;            /* items are (tile group, channel panel) pairs swept in K blocks (the */
    size_t ngroups;           /* kernel's tstore_kblock), or 0; groups: of the position tiles */
} tstore_job;

/* How many position tiles P takes: MR rows each, a remainder of 1 merged into a full tile where
 * the kernel takes MR + 1 rows (tstore_run then spreads the rows evenly over them). */
static size_t tstore_tiles(const nn_gemm_kernel *k, size_t P) {
    const size_t mr = k->mr, t = (P + mr - 1) / mr;
    return k->tstore_rows > mr && P % mr == 1 && P > mr ? t - 1 : t;
}

/* The arguments of tile (channel panel jp, position tile ip) over all of K. Rows are spread
 * evenly over the tiles: a 1- or 2-row tile runs at the FMA latency, not its throughput (49 = 8 x
 * 6 + 1 costs about 52 rows' time with 6x16; 4 x 6 + 5 x 5 costs 49). */
static void tstore_tile(const tstore_job *j, size_t jp, size_t ip, nn_tstore_args *t) {
    const nn_gemm_kernel *k = j->wt->k;
    const size_t base = j->P / j->mtiles, extra = j->P % j->mtiles;
    const size_t r0 = ip * base + (ip < extra ? ip : extra), c0 = jp * k->nr;
    t->K = j->K; t->kc_max = NN_GEMM_KC;
    t->a = j->at + r0; t->lda = j->P;
    t->b = j->wt->data; t->b_panels = j->npanels; t->jp = jp;
    t->rows = base + (ip < extra);
    t->cols = j->M - c0 < k->nr ? j->M - c0 : k->nr;
    t->y = j->y + c0 * j->P + r0; t->ldy = j->P;
    t->bias = j->bias ? j->bias + c0 : NULL;
    t->sum = j->sum ? j->sum + c0 * j->P + r0 : NULL;
    t->act = j->act ? j->act->kind : 0;
    t->act_lo = j->act ? j->act->alpha : 0.0f; t->act_hi = j->act ? j->act->beta : 0.0f;
    t->prefetch_next = 0;
    t->prefetch_block = NULL;
    t->k_begin = t->k_end = 0; t->acc = NULL; t->first = t->last = 1;
}

/* items: jp * mtiles + ip, so a task's consecutive tiles share the B panel; or position-major
 * (ip * npanels + jp) */
static void tstore_run(void *arg, size_t begin, size_t end) {
    const tstore_job *j = arg;
    for (size_t it = begin; it < end; it++) {
        const size_t jp = j->pos_major ? it % j->npanels : it / j->mtiles, ip = j->pos_major ? it / j->npanels : it % j->mtiles;
        nn_tstore_args t;
        tstore_tile(j, jp, ip, &t);
        /* the first tile of a panel in this task pulls the next panel's weights from memory */
        t.prefetch_next = (it == begin || ip == 0) && jp + 1 < j->npanels;
        j->wt->k->tstore(&t);
    }
}

/* Where the packed weights of the K block after [.., k_end) of panel jp start (its steps are
 * contiguous where the block size divides the kc slices, as 128 does; else the run fetched
 * strays past the slice, which costs a few useless prefetches), or NULL after the last panel. */
static const float *tstore_next_block(const tstore_job *j, size_t jp, size_t k_end) {
    const size_t nr = j->wt->k->nr;
    if (k_end >= j->K) { k_end = 0; jp++; }
    if (jp >= j->npanels) return NULL;
    const size_t s0 = k_end / NN_GEMM_KC * NN_GEMM_KC, kc = j->K - s0 < NN_GEMM_KC ? j->K - s0 : NN_GEMM_KC;
    return j->wt->data + s0 * j->npanels * nr + jp * nr * kc + (k_end - s0) * nr;
}

/* Items are (group of position tiles, channel panel), group-major: each K block of the panel's
 * weights (kblock x NR floats, in L1) is used by all of the group's tiles before the next, the
 * tiles' sums carried on this thread's stack (in per-thread slots of one scratch block, the
 * 2-thread 7x7 convs ran 10 % slower). Tile by tile over all of K, every tile streamed its whole
 * weight panel and K rows of A from L2. One group when tasks hold whole panels; else one per
 * thread, so that a thread reads the part of the input its share of the previous conv wrote. */
static void tstore_panels_run(void *arg, size_t begin, size_t end) {
    const tstore_job *j = arg;
    const nn_gemm_kernel *k = j->wt->k;
    const size_t stride = k->tstore_rows * k->nr;
    float acc[TSTORE_ACC_FLOATS] __attribute__((aligned(64)));
    for (size_t it = begin; it < end; it++) {
        const size_t g = it / j->npanels, jp = it % j->npanels;
        const size_t ip0 = g * j->mtiles / j->ngroups, ip1 = (g + 1) * j->mtiles / j->ngroups;
        for (size_t k0 = 0; k0 < j->K; k0 += j->kblock)
            for (size_t ip = ip0; ip < ip1; ip++) {
                nn_tstore_args t;
                tstore_tile(j, jp, ip, &t);
                t.k_begin = k0;
                t.k_end = k0 + j->kblock < j->K ? k0 + j->kblock : j->K;
                t.first = k0 == 0;
                t.last = t.k_end == j->K;
                t.acc = acc + (ip - ip0) * stride;
                /* the first tile of a block pulls the weights of the block after it into L2
                 * meanwhile (this panel's next block, or the next panel's first) */
                if (ip == ip0) t.prefetch_block = tstore_next_block(j, jp, t.k_end);
                k->tstore(&t);
            }
    }
}

static int tstore_usable(const nn_gemm_packed *wt, const nn_act *act) {
    /* the kernel the level's config chose has a transposed-store tile */
    return wt->k && wt->k->tstore && (!act || (act->kind >= CORT_ACT_NONE && act->kind <= CORT_ACT_HARD_SWISH)) &&
           (!wt->k->tstore_k_max || wt->K <= wt->k->tstore_k_max) && wt->k == nn_gemm_best_kernel();
}

int nn_conv_small_sum_in_place(const nn_gemm_packed *wt, const nn_act *act) {
    return wt && tstore_usable(wt, act);
}

cort_status *nn_conv_small_f32(cort_pool *pool, const nn_conv_shape *s, const float *x, const float *w,
                               const nn_gemm_packed *wt, const float *bias, const float *sum, const nn_act *act,
                               float *y, cort_kernel_ctx *ctx) {
    const nn_geom *g = &s->g;
    const size_t P = (size_t)(g->out[1] * g->out[2]), in_size = (size_t)(g->in[1] * g->in[2]);
    const size_t K = s->C * (size_t)(g->k[1] * g->k[2]), M = s->M;
    const int pointwise = g->k[1] == 1 && g->k[2] == 1 && g->s[1] == 1 && g->s[2] == 1 && g->pb[1] == 0 &&
                          g->pb[2] == 0 && g->pe[1] == 0 && g->pe[2] == 0;
    const size_t ncol = pointwise ? 0 : K * P;
    const int tstore = tstore_usable(wt, act);
    const size_t work = tstore ? 0 : P * M;
    /* whole channel panels per task where they balance the threads (each reads its weights once) */
    const size_t threads = (size_t)cort_pool_threads(pool);
    const size_t npanels = tstore ? (M + wt->k->nr - 1) / wt->k->nr : 0, mtiles = tstore ? tstore_tiles(wt->k, P) : 0;
    const int whole_panels = npanels >= 4 * threads;
    /* ... swept in K blocks where the kernel takes them and the tiles' sums fit the stack buffer */
    const size_t kblock = tstore && wt->k->tstore_kblock && K > wt->k->tstore_kblock &&
                                  mtiles * wt->k->tstore_rows * wt->k->nr <= TSTORE_ACC_FLOATS
                              ? wt->k->tstore_kblock : 0;
    const size_t ngroups = whole_panels ? 1 : threads < mtiles ? threads : mtiles;
    float *scratch = ncol + work ? cort_kernel_scratch(ctx, (ncol + work) * sizeof(float)) : NULL;
    if (ncol + work && !scratch) return cort_error_oom();
    float *col = scratch, *yt = scratch ? scratch + ncol : NULL;
    cort_status *st = NULL;
    for (size_t n = 0; n < s->N && !st; n++) {
        const float *xn = x + n * s->C * in_size;
        if (!pointwise) {
            im2col_job ij = { g, xn, col };
            cort_parallel_for(ncol < 32768 ? NULL : pool, s->C, 1, im2col_run, &ij);
        }
        if (tstore) {
            tstore_job tj = { pointwise ? xn : col, wt, bias, sum ? sum + n * M * P : NULL,
                              act && act->kind != CORT_ACT_NONE ? act : NULL, y + n * M * P, P, M, K, mtiles, npanels, 0,
                              kblock, ngroups };
            const double flops = 2.0 * (double)P * (double)M * (double)K;
            if (kblock) {
                cort_parallel_for(flops < 262144.0 ? NULL : pool, ngroups * npanels, 1, tstore_panels_run, &tj);
                if (ctx && cort_kernel_cancelled(ctx)) st = cort_kernel_cancelled_status(ctx);
                continue;
            }
            const size_t grain = whole_panels ? mtiles : 1;
            /* too few channel panels to give each thread whole ones: split the positions instead
             * (items position-major), so a thread reads only its half of the input, most of which
             * its own share of the previous conv wrote (MobileNetV2 and EfficientNet-B0's 14x14
             * project convs at 2 threads) */
            tj.pos_major = grain == 1 && threads > 1;
            cort_parallel_for(flops < 262144.0 ? NULL : pool, npanels * mtiles, grain, tstore_run, &tj);
            if (ctx && cort_kernel_cancelled(ctx)) st = cort_kernel_cancelled_status(ctx);
            continue;
        }
        /* A = col^T: col is stored [K][P], i.e. A^T row-major with lda = P */
        nn_gemm_b b = nn_gemm_b_matrix(w, K, 1);   /* only read if wt does not match */
        nn_gemm_opts o = { NULL, wt, NULL, NULL, ctx };
        st = nn_sgemm_opt(pool, wt->k, P, M, K, 1.0f, pointwise ? xn : col, P, 1, &b, 0.0f, yt, M, &o);
        if (st) break;
        small_out_job oj = { yt, bias, sum ? sum + n * M * P : NULL, act, y + n * M * P, P, M };
        cort_parallel_for(P * M < 16384 ? NULL : pool, (M + 15) / 16, 1, small_out_run, &oj);
    }
    cort_kernel_scratch_free(ctx, scratch);
    return st;
}
