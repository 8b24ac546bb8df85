/* Packed SGEMM (BLIS-style): for each KC slice of K, A is packed into MR-row panels (alpha folded
 * in) and B into NR-column panels, then tiles of the C matrix are distributed over the pool. Each
 * task walks NR panels of B (kept hot in L1) against a block of A panels (kept in L2). */
#include <stdint.h>
#include <string.h>
#include "gemm.h"
#include "../../../core/alloc.h"
#include "copy_ukernels.h"
#include "isa_config.h"

#define NN_KC NN_GEMM_KC        /* K slice: a B micro-panel of KC x NR floats stays in L1/L2 */
#define NN_BLOCK_ROWS 96       /* rows of A per task block (L2 resident) */
#define NN_BLOCK_COLS 256      /* columns of B per task block */
#define NN_SHORT_K_ACT 64      /* up to this K, every activation runs on the accumulators (default of xact_k_max) */
#define NN_B_PREFETCH_PANELS 4 /* how far ahead B read in place is prefetched */
#define NN_B_ROWS_AHEAD 8      /* ... and how many K steps ahead within a panel, into L1 */
#define NN_SWEEP_PANELS 8      /* at least this many B panels swept per A panel in the rows-outer order */
#define NN_SWEEP_FLOATS 16384  /* ... and as many as fit in 64 KB: longer C row runs per sweep */

static const nn_gemm_kernel k_scalar = { "scalar_4x16", CORT_ISA_GENERIC, 4, 16, nn_ukr_scalar_4x16, 0, 0, NULL, NULL, 0 };
#ifdef NN_HAVE_X86_UKERNELS
static const nn_gemm_kernel k_avx2 = { "avx2_6x16", CORT_ISA_AVX2, 6, 16, nn_ukr_avx2_6x16, 1, 1,
                                         nn_gemv_panel_avx2_16, nn_ukr_avx2_6x16_tstore, 6, 1, SIZE_MAX, 3072, 128, 1 };
static const nn_gemm_kernel k_avx512 = { "avx512_12x32", CORT_ISA_AVX512, 12, 32, nn_ukr_avx512_12x32, 1, 1,
                                            nn_gemv_panel_avx512_32, nn_ukr_avx512_12x32_tstore, 13 };
#endif

/* The micro-kernels usable at each ISA level, best first (tests run every one). */
typedef struct gemm_config {
    const nn_gemm_kernel *const *kernels;
    size_t n_kernels;
} gemm_config;

static const nn_gemm_kernel *const kernels_generic[] = { &k_scalar };
#ifdef NN_HAVE_X86_UKERNELS
static const nn_gemm_kernel *const kernels_avx2[] = { &k_avx2, &k_scalar };
static const nn_gemm_kernel *const kernels_avx512[] = { &k_avx512, &k_avx2, &k_scalar };
#endif
static const gemm_config gemm_configs[] = {
    [CORT_ISA_GENERIC] = { kernels_generic, 1 },
    [CORT_ISA_NEON] = { kernels_generic, 1 },
#ifdef NN_HAVE_X86_UKERNELS
    [CORT_ISA_AVX2] = { kernels_avx2, 2 },
    [CORT_ISA_AVX512] = { kernels_avx512, 3 },
#else
    [CORT_ISA_AVX2] = { kernels_generic, 1 },
    [CORT_ISA_AVX512] = { kernels_generic, 1 },
#endif
};

static const gemm_config *gemm_cfg(void) { return &gemm_configs[cort_cpu_isa()]; }

const nn_gemm_kernel *nn_gemm_best_kernel(void) { return gemm_cfg()->kernels[0]; }

size_t nn_gemm_kernels(const nn_gemm_kernel *const **out) {
    *out = gemm_cfg()->kernels;
    return gemm_cfg()->n_kernels;
}

static void pack_b_matrix(const nn_gemm_b *b, size_t k0, size_t kc, size_t j0, size_t ncols, size_t nr, float *dst) {
    if (!b->trans) {
        const float *src = b->data + k0 * b->ld + j0;
        for (size_t p = 0; p < kc; p++, src += b->ld, dst += nr) {
            memcpy(dst, src, ncols * sizeof(float));
            for (size_t j = ncols; j < nr; j++) dst[j] = 0.0f;
        }
    } else {
        size_t jv = 0;
        /* 16x16 blocks transposed in registers */
        void (*const t16)(const float *, size_t, float *, size_t) = nn_isa()->transpose16;
        if (t16 && kc >= 16 && ncols >= 16) {
            const size_t kv = kc / 16 * 16;
            for (; jv + 16 <= ncols; jv += 16) {
                const float *src = b->data + (j0 + jv) * b->ld + k0;
                for (size_t p = 0; p < kv; p += 16) t16(src + p, b->ld, dst + p * nr + jv, nr);
                for (size_t j = jv; j < jv + 16; j++)
                    for (size_t p = kv; p < kc; p++) dst[p * nr + j] = src[(j - jv) * b->ld + p];
            }
        }
        for (size_t j = jv; j < ncols; j++) {
            const float *src = b->data + (j0 + j) * b->ld + k0;
            for (size_t p = 0; p < kc; p++) dst[p * nr + j] = src[p];
        }
        for (size_t j = ncols; j < nr; j++)
            for (size_t p = 0; p < kc; p++) dst[p * nr + j] = 0.0f;
    }
}

float nn_gemm_b_at(const nn_gemm_b *B, size_t k, size_t j) {
    float v;
    (B->pack ? B->pack : pack_b_matrix)(B, k, 1, j, 1, 1, &v);
    return v;
}

static void pack_a_panel(const float *A, size_t lda, int transA, float alpha, size_t i0, size_t rows, size_t k0,
                         size_t kc, size_t mr, float *dst) {
    if (!transA) {
        size_t pv = 0;
        /* 16 columns of the panel's rows at a time, transposed in registers (padding rows zeroed) */
        void (*const ta)(const float *, size_t, size_t, float, float *, size_t, size_t) = nn_isa()->transpose_scaled;
        if (ta && mr <= 16 && kc >= 16) {
            for (; pv + 16 <= kc; pv += 16)
                ta(A + i0 * lda + k0 + pv, lda, rows, alpha, dst + pv * mr, mr, mr);
        }
        for (size_t i = 0; i < rows; i++) {
            const float *src = A + (i0 + i) * lda + k0;
            for (size_t p = pv; p < kc; p++) dst[p * mr + i] = alpha * src[p];
        }
        for (size_t i = rows; i < mr; i++)
            for (size_t p = pv; p < kc; p++) dst[p * mr + i] = 0.0f;
        return;
    } else {
        for (size_t p = 0; p < kc; p++) {
            const float *src = A + (k0 + p) * lda + i0;
            for (size_t i = 0; i < rows; i++) dst[p * mr + i] = alpha * src[i];
        }
    }
    for (size_t i = rows; i < mr; i++)
        for (size_t p = 0; p < kc; p++) dst[p * mr + i] = 0.0f;
}

typedef struct gemm_job {
    const nn_gemm_kernel *k;
    size_t M, N, K;
    float alpha;
    const float *A; size_t lda; int transA;
    const nn_gemm_b *B;
    float *C; size_t ldc;
    const float *row_bias;   /* added to row i on the first K slice, or NULL */
    const float *col_bias;   /* added to column j on the first K slice (AVX-512 kernel only), or NULL */
    const float *sum;        /* added (same ldc as C) after the last K slice, before act; or NULL */
    const nn_act *act;       /* applied to each tile after the last K slice, or NULL */
    int beta_one;            /* accumulate into C from the first slice on */
    int a_direct;            /* A is row-major with alpha 1: full panels are read in place, unpacked */
    int b_direct;            /* B is a plain row-major matrix: full panels are read in place, unpacked */
    int pack_a_in_task;      /* each task packs its own A panels per slice (tasks own disjoint rows) */
    int pack_b_in_task;      /* each task packs its own B panels per slice (tasks own disjoint columns) */
    int rows_outer;          /* A panels outside, runs of sweep B panels inside (K slices between them) */
    int multi;               /* rows_outer: a sweep's full tiles go to the kernel in one call */
    size_t sweep;
    const float *apre;       /* prepacked A (full layout) or NULL */
    const float *bpre;       /* prepacked B (full layout) or NULL */
    const cort_kernel_ctx *ctx;   /* for cancellation checks between K slices; may be NULL */
    float *apack;            /* all of A: slice at k0 starts at k0*mpanels*mr, panel ip at +ip*mr*kc; or per-task blocks */
    float *bpack;            /* all of B (same layout by N panels), or per-task blocks */
    size_t mpanels, npanels, bm, bn, tasks_n, task_astride, task_bstride;   /* blocks in panels; tasks [m][n] */
} gemm_job;

static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

/* Block size (in panels) splitting n panels into threads..3*threads tasks so that the busiest
 * thread's share, ceil(tasks / threads) * block, is smallest. Ties go to fewer, larger tasks (each
 * task re-reads the shared operand; 22 panels on 2 threads: 2 tasks of 11, not 6 of 4), except
 * for big products (`big`), where more tasks let a thread that runs ahead take work from one that
 * was held up (a core shared with other load, a VM's slow vCPU). On a Zen 3 VM whose second vCPU
 * slows down for minutes at a time, bert_encoder's 2-thread sum of per-node minimums went 149 ->
 * 144, 199 -> 184 and 160 -> 151 ms in three alternated A/Bs (resnet50 mixed, within the noise);
 * with every product taking it, mobilenet_v2's small ones measured slower (7.7 -> 8.8 ms). */
static size_t balanced_block(size_t n, size_t threads, int big) {
    size_t best = div_up(n, threads), best_cost = SIZE_MAX;
    for (size_t t = threads; t <= 3 * threads && t <= n; t++) {
        const size_t b = div_up(n, t), tasks = div_up(n, b), cost = div_up(tasks, threads) * b;
        if (cost < best_cost || (big && cost == best_cost)) { best_cost = cost; best = b; }
    }
    return best ? best : 1;
}
/* Busiest thread's panels when n panels go in blocks of b to threads that claim them in turn:
 * the full blocks spread evenly, the short last one joins a thread that got one fewer. */
static size_t busiest_share(size_t n, size_t b, size_t threads) {
    const size_t full = n / b, rem = n % b, q = full / threads;
    return full % threads ? (q + 1) * b : q * b + rem;
}
/* The block size in [bmin, bmax] whose busiest share is smallest (ties: the larger block). 86
 * panels on 2 threads in blocks of 8 leave one thread 46 of them; blocks of 4 leave it 44. */
static size_t balanced_upto(size_t n, size_t threads, size_t bmin, size_t bmax) {
    size_t best = bmax, best_share = busiest_share(n, bmax, threads);
    for (size_t b = bmax - 1; b >= bmin && b > 0; b--) {
        const size_t share = busiest_share(n, b, threads);
        if (share < best_share) { best_share = share; best = b; }
    }
    return best;
}
static size_t slice_len(size_t K, size_t k0) { return K - k0 < NN_KC ? K - k0 : NN_KC; }

static void job_pack_a(void *arg, size_t begin, size_t end) {
    const gemm_job *j = arg;
    const size_t mr = j->k->mr;
    for (size_t ip = begin; ip < end; ip++) {
        size_t i0 = ip * mr, rows = j->M - i0 < mr ? j->M - i0 : mr;
        if (j->a_direct && rows == mr) continue;
        for (size_t k0 = 0; k0 < j->K; k0 += NN_KC) {
            size_t kc = slice_len(j->K, k0);
            pack_a_panel(j->A, j->lda, j->transA, j->alpha, i0, rows, k0, kc, mr,
                         j->apack + k0 * j->mpanels * mr + ip * mr * kc);
        }
    }
}

static void pack_b_panels(const gemm_job *j, size_t jp0, size_t jp1, size_t k0, size_t kc, float *dst) {
    const size_t nr = j->k->nr;
    nn_pack_b_fn pack = j->B->pack ? j->B->pack : pack_b_matrix;
    for (size_t jp = jp0; jp < jp1; jp++) {
        size_t c0 = jp * nr, cols = j->N - c0 < nr ? j->N - c0 : nr;
        if (j->b_direct && cols == nr) continue;
        pack(j->B, k0, kc, c0, cols, nr, dst + (jp - jp0) * nr * kc);
    }
}

static void job_pack_b(void *arg, size_t begin, size_t end) {
    const gemm_job *j = arg;
    for (size_t jp = begin; jp < end; jp++)
        for (size_t k0 = 0; k0 < j->K; k0 += NN_KC) {
            size_t kc = slice_len(j->K, k0);
            pack_b_panels(j, jp, jp + 1, k0, kc, j->bpack + k0 * j->npanels * j->k->nr + jp * j->k->nr * kc);
        }
}

/* One MR x NR tile of C for K slice [k0, k0 + kc): A panel ip of ablock (the block starting at
 * panel ip0), B panel jp of bblock (starting at jp0). */
typedef struct tile_ctx {
    const gemm_job *j;
    size_t k0, kc, ip0, jp0, ip1, jp1;
    int accumulate, last;
    const float *ablock, *bblock;
    float *tile, *bias_pad;
} tile_ctx;

/* np > 1: tiles jp .. jp + np - 1, all full, in one call of the AVX-512 kernel (nn_ukr_args.panels) */
static inline __attribute__((always_inline)) void gemm_tile(const tile_ctx *t, size_t ip, size_t jp,
                                                            int first_row_panel, size_t np) {
    const gemm_job *j = t->j;
    const size_t mr = j->k->mr, nr = j->k->nr, k0 = t->k0, kc = t->kc;
    size_t c0 = jp * nr, cols = j->N - c0 < nr ? j->N - c0 : nr;
    const float *bp = t->bblock + (jp - t->jp0) * nr * kc;
    size_t ldb = nr;
    if (j->b_direct && cols == nr) { bp = j->B->data + k0 * j->B->ld + c0; ldb = j->B->ld; }
    size_t r0 = ip * mr, rows = j->M - r0 < mr ? j->M - r0 : mr;
    nn_ukr_args u;
    u.b_ind = NULL; u.b_off = 0; u.b_prefetch = NULL; u.b_prefetch_ld = 0; u.c_add = NULL; u.panels = np;
    u.b_rows_ahead = 0;
    u.perm = NULL; u.kept = 0;
    /* prepacked B (constant weights) is read from memory: prefetch the next panel, from every tile
     * of the task's first row block (a miss queue full of the first tile's prefetches drops some;
     * the later tiles ask again; measured on ocr_rec's 40 x 120 x 6625 classifier). The later row
     * blocks find the task's B panels in L2. A cap on the task's row panels instead (16) left
     * BERT's 128-token MatMuls at avx2 (22 panels of 6 rows) to start every panel cold. */
    /* With one K slice the next task's first panel follows this one in bpre: fetch it too (else
     * every task block starts on a cold panel) */
    const size_t pf_end = j->K <= NN_KC ? j->npanels : t->jp1;
    if (j->bpre && jp + 1 < pf_end && ip - t->ip0 < div_up(NN_BLOCK_ROWS, mr)) u.b_prefetch = bp + nr * kc;
    /* B read in place from many planes (a 1x1 conv's K input channels: K streams that the hardware
     * prefetchers lose track of): fetch the panel NN_B_PREFETCH_PANELS ahead, row by row
     * (MobileNetV2's 112x112 and resnet50's 56x56 pointwise convs) */
    else if (j->b_direct && ldb != nr && first_row_panel && jp + np - 1 + NN_B_PREFETCH_PANELS + 1 < j->npanels) {
        u.b_prefetch = bp + NN_B_PREFETCH_PANELS * nr;
        u.b_prefetch_ld = ldb;
    }
    /* a prepacked A (conv weights) is read from memory once per K slice, by its first column
     * panel's tile: that tile fetches the next A panel meanwhile (squeezenet's 512 -> 1000
     * classifier conv, resnet50's 256 -> 1024 convs at 14x14) */
    if (!u.b_prefetch && j->apre && jp == t->jp0 && ip + 1 < t->ip1 && rows == mr) {
        u.b_prefetch = t->ablock + (ip + 1 - t->ip0) * mr * kc;
        u.b_prefetch_ld = mr;
    }
    u.kc = kc;
    u.b = bp;
    u.ldb = ldb;
    /* ... and the later row panels, which find B in L2, fetch its rows NN_B_ROWS_AHEAD steps ahead
     * into L1 (Zen 3, 1 thread: a 256 -> 128 1x1 conv at 56x56 87 -> 92 GFLOP/s with B in L2;
     * resnet50 -1 %). Not for short K: an OCR detector's 16-96 channel convs went 2.5 % slower. */
    if (j->b_direct && ldb != nr && !u.b_prefetch && j->K >= 128) u.b_rows_ahead = NN_B_ROWS_AHEAD;
    if (j->a_direct && rows == mr) {
        u.a = j->A + r0 * j->lda + k0; u.a_rs = j->lda; u.a_cs = 1;
    } else {
        u.a = t->ablock + (ip - t->ip0) * mr * kc; u.a_rs = 1; u.a_cs = mr;
    }
    u.bias = NULL;
    u.col_bias = j->col_bias && k0 == 0 ? j->col_bias + c0 : NULL;
    if (j->row_bias && k0 == 0) {
        if (rows == mr) {
            u.bias = j->row_bias + r0;
        } else {   /* the kernel reads MR bias values */
            for (size_t r = 0; r < mr; r++) t->bias_pad[r] = r < rows ? j->row_bias[r0 + r] : 0.0f;
            u.bias = t->bias_pad;
        }
    }
    float *c = j->C + r0 * j->ldc + c0;
    /* a 1x1 conv's output planes are M cold write streams: the next tile's rows are fetched for
     * writing meanwhile (MobileNetV2's 112x112 expand conv; two tiles ahead measured no better);
     * so are a prepacked-B product's, whose column-panel sweeps write every row of C a tile at a
     * time (ocr_rec's 40 x 120 x 6625 classifier, BERT's FFN MatMuls) */
    if ((j->b_direct || j->bpre) && !t->accumulate && jp + np < t->jp1)
        for (size_t r = 0; r < rows; r++) {
            __builtin_prefetch(c + r * j->ldc + np * nr, 1, 3);
            __builtin_prefetch(c + r * j->ldc + np * nr + 16, 1, 3);
        }
    /* and the next tile's residual rows, M more streams (a 16-channel 320x320 conv + residual in
     * an OCR detector) */
    if (j->b_direct && t->last && j->sum && jp + np < t->jp1) {
        const float *sn = j->sum + r0 * j->ldc + c0 + np * nr;
        for (size_t r = 0; r < rows; r++) {
            __builtin_prefetch(sn + r * j->ldc, 0, 3);
            __builtin_prefetch(sn + r * j->ldc + 16, 0, 3);
        }
    }
    u.act = 0;
    u.act_lo = u.act_hi = 0.0f;
    u.rows = rows; u.cols = cols;
    const float *sum = t->last && j->sum ? j->sum + r0 * j->ldc + c0 : NULL;
    if ((rows == mr && cols == nr) || j->k->edge) {
        u.c = c; u.ldc = j->ldc; u.accumulate = t->accumulate;
        /* the residual goes in before the activation: in the kernel when it can, else right after */
        if (j->k->edge) u.c_add = sum;
        const int sum_after = sum && !j->k->edge;
        /* Relu/Clip/LeakyRelu (and HardSwish on the edge-capable kernel) run on the accumulators */
        /* Sigmoid/HardSigmoid/SiLU too when K is short: then the pass over C would cost as much as
         * the product (measured slower for long K with the AVX-512 kernel; the AVX2 one takes them
         * at every K: 14x14 80 -> 480 and 112 -> 672 + SiLU 13-16 % faster on Zen 1) */
        const size_t xact_k_max = j->k->xact_k_max ? j->k->xact_k_max : NN_SHORT_K_ACT;
        int in_kernel = t->last && j->act && !sum_after &&
                        (j->act->kind <= CORT_ACT_LEAKY_RELU ||
                         (j->k->edge && (j->act->kind == CORT_ACT_HARD_SWISH ||
                                         (j->K <= xact_k_max && j->act->kind < CORT_ACT_GELU))) ||
                         (j->act->kind == CORT_ACT_GELU && j->k->gelu_regs));
        if (in_kernel) { u.act = j->act->kind; u.act_lo = j->act->alpha; u.act_hi = j->act->beta; }
        j->k->ukr(&u);
        const size_t width = np > 1 ? np * nr : cols;
        if (sum_after)
            for (size_t r = 0; r < rows; r++)
                for (size_t q = 0; q < width; q++) c[r * j->ldc + q] += sum[r * j->ldc + q];
        if (t->last && j->act && !in_kernel)
            for (size_t r = 0; r < rows; r++) nn_act_apply(j->act, c + r * j->ldc, width);
    } else {
        float *tile = t->tile;
        u.c = tile; u.ldc = nr; u.accumulate = 0;
        j->k->ukr(&u);
        for (size_t r = 0; r < rows; r++) {
            float *cr = c + r * j->ldc;
            const float *tr = tile + r * nr;
            if (t->accumulate)
                for (size_t q = 0; q < cols; q++) cr[q] += tr[q];
            else
                for (size_t q = 0; q < cols; q++) cr[q] = tr[q];
            if (sum)
                for (size_t q = 0; q < cols; q++) cr[q] += sum[r * j->ldc + q];
            if (t->last && j->act) nn_act_apply(j->act, cr, cols);
        }
    }
}

/* rows_outer: every A panel of the task against B panels [jb, je) of the slice; the full tiles
 * in one kernel call where it takes them. */
static void sweep_tiles(const tile_ctx *tc, size_t jb, size_t je) {
    const gemm_job *j = tc->j;
    const size_t nr = j->k->nr, full = j->multi ? (j->N / nr < je ? j->N / nr : je) : jb;
    for (size_t ip = tc->ip0; ip < tc->ip1; ip++) {
        size_t jp = jb;
        if (full > jb + 1) { gemm_tile(tc, ip, jb, ip == tc->ip0, full - jb); jp = full; }
        for (; jp < je; jp++) gemm_tile(tc, ip, jp, ip == tc->ip0, 1);
    }
}

/* rows_outer over several K slices (A prepacked): sweep by sweep, each sweep's K slices in turn, so
 * the sweep's columns of C stay cached between slices; the edge panel of B is packed per slice when
 * a sweep reaches it. */
static void job_rows_outer_sliced(const gemm_job *j, size_t t, size_t ip0, size_t ip1, size_t jp0, size_t jp1,
                                  float *tile, float *bias_pad) {
    const size_t mr = j->k->mr, nr = j->k->nr;
    for (size_t jb = jp0; jb < jp1; jb += j->sweep) {
        const size_t je = jp1 < jb + j->sweep ? jp1 : jb + j->sweep;
        for (size_t k0 = 0; k0 < j->K; k0 += NN_KC) {
            if (j->ctx && cort_kernel_cancelled(j->ctx)) return;
            const size_t kc = slice_len(j->K, k0);
            tile_ctx tc = { j, k0, kc, ip0, jp0, ip1, jp1, k0 > 0 || j->beta_one, k0 + kc == j->K, NULL, NULL,
                            tile, bias_pad };
            tc.ablock = j->apre + k0 * j->mpanels * mr + ip0 * mr * kc;
            if (j->bpre) {
                tc.bblock = j->bpre + k0 * j->npanels * nr + jp0 * nr * kc;
            } else {
                float *dst = j->bpack + t * j->task_bstride;
                pack_b_panels(j, jb, je, k0, kc, dst + (jb - jp0) * nr * kc);
                tc.bblock = dst;
            }
            sweep_tiles(&tc, jb, je);
        }
    }
}

static void job_compute(void *arg, size_t begin, size_t end) {
    const gemm_job *j = arg;
    const size_t mr = j->k->mr, nr = j->k->nr;
    float tile[NN_MAX_TILE], bias_pad[NN_MAX_MR];
    for (size_t t = begin; t < end; t++) {
        size_t mb = t / j->tasks_n, nb = t % j->tasks_n;
        size_t ip0 = mb * j->bm, ip1 = ip0 + j->bm < j->mpanels ? ip0 + j->bm : j->mpanels;
        size_t jp0 = nb * j->bn, jp1 = jp0 + j->bn < j->npanels ? jp0 + j->bn : j->npanels;
        if (j->rows_outer && j->K > NN_KC) { job_rows_outer_sliced(j, t, ip0, ip1, jp0, jp1, tile, bias_pad); continue; }
        for (size_t k0 = 0; k0 < j->K; k0 += NN_KC) {
            /* a cancelled run leaves C unspecified; the caller reports the cancellation */
            if (j->ctx && cort_kernel_cancelled(j->ctx)) return;
            const size_t kc = slice_len(j->K, k0);
            tile_ctx tc = { j, k0, kc, ip0, jp0, ip1, jp1, k0 > 0 || j->beta_one, k0 + kc == j->K, NULL, NULL,
                            tile, bias_pad };
            if (j->apre) {
                tc.ablock = j->apre + k0 * j->mpanels * mr + ip0 * mr * kc;
            } else if (j->pack_a_in_task) {
                float *dst = j->apack + t * j->task_astride;
                for (size_t ip = ip0; ip < ip1; ip++) {
                    size_t i0 = ip * mr, rows = j->M - i0 < mr ? j->M - i0 : mr;
                    if (j->a_direct && rows == mr) continue;
                    pack_a_panel(j->A, j->lda, j->transA, j->alpha, i0, rows, k0, kc, mr, dst + (ip - ip0) * mr * kc);
                }
                tc.ablock = dst;
            } else {
                tc.ablock = j->apack + k0 * j->mpanels * mr + ip0 * mr * kc;
            }
            if (j->bpre) {
                tc.bblock = j->bpre + k0 * j->npanels * nr + jp0 * nr * kc;
            } else if (j->pack_b_in_task) {
                float *dst = j->bpack + t * j->task_bstride;
                pack_b_panels(j, jp0, jp1, k0, kc, dst);
                tc.bblock = dst;
            } else {
                tc.bblock = j->bpack + k0 * j->npanels * nr + jp0 * nr * kc;
            }
            if (j->rows_outer) {
                /* one K slice over many columns: each A panel sweeps a run of B panels (kept in L1),
                 * so C is written as MR sequential row streams instead of M at once */
                for (size_t jb = jp0; jb < jp1; jb += j->sweep)
                    sweep_tiles(&tc, jb, jp1 < jb + j->sweep ? jp1 : jb + j->sweep);
                continue;
            }
            /* rows in L2-sized blocks: each block of A panels meets every B panel while cached */
            const size_t rows_blk = div_up(NN_BLOCK_ROWS, mr);
            for (size_t ib = ip0; ib < ip1; ib += rows_blk)
                for (size_t jp = jp0; jp < jp1; jp++)
                    for (size_t ip = ib; ip < ip1 && ip < ib + rows_blk; ip++) gemm_tile(&tc, ip, jp, ip == ib, 1);
        }
    }
}

static void scale_c(size_t M, size_t N, float beta, float *C, size_t ldc) {
    for (size_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        if (beta == 0.0f) memset(c, 0, N * sizeof(float));
        else for (size_t q = 0; q < N; q++) c[q] *= beta;
    }
}


/* M == 1 (a fully connected layer at batch 1): packing B would cost as much as the product, so
 * stream B once instead. Each task owns a run of output columns. */
typedef struct gemv_job {
    size_t N, K;
    float alpha, beta;
    const float *a; size_t inca;
    const nn_gemm_b *B;
    float *c;
} gemv_job;

#define NN_GEMV_COLS 256

static void gemv_run(void *arg, size_t begin, size_t end) {
    const gemv_job *j = arg;
    const nn_gemm_b *B = j->B;
    for (size_t blk = begin; blk < end; blk++) {
        size_t j0 = blk * NN_GEMV_COLS, n = j->N - j0 < NN_GEMV_COLS ? j->N - j0 : NN_GEMV_COLS;
        float acc[NN_GEMV_COLS];
        if (!B->trans) {
            for (size_t q = 0; q < n; q++) acc[q] = 0.0f;
            for (size_t p = 0; p < j->K; p++) {
                const float ap = j->a[p * j->inca], *b = B->data + p * B->ld + j0;
                for (size_t q = 0; q < n; q++) acc[q] += ap * b[q];
            }
        } else {
            for (size_t q = 0; q < n; q++) {
                const float *b = B->data + (j0 + q) * B->ld;
                float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
                size_t p = 0;
                if (j->inca == 1)
                    for (; p + 4 <= j->K; p += 4) {
                        s0 += j->a[p] * b[p]; s1 += j->a[p + 1] * b[p + 1];
                        s2 += j->a[p + 2] * b[p + 2]; s3 += j->a[p + 3] * b[p + 3];
                    }
                for (; p < j->K; p++) s0 += j->a[p * j->inca] * b[p];
                acc[q] = (s0 + s1) + (s2 + s3);
            }
        }
        float *c = j->c + j0;
        if (j->beta == 0.0f) for (size_t q = 0; q < n; q++) c[q] = j->alpha * acc[q];
        else for (size_t q = 0; q < n; q++) c[q] = j->alpha * acc[q] + j->beta * c[q];
    }
}

/* M == 1 with B prepacked: each task owns a run of NR-column panels and takes them in groups,
 * K slice by K slice, so it reads each slice's part of the packed B as one contiguous run.
 * Panel by panel over all of K (a 16 KB run per slice and a jump to the next slice) restarted
 * the hardware prefetchers every 16 KB: a 1280 -> 1000 Gemm whose weights come from memory ran
 * at 17 GB/s with 16-column panels. */
typedef struct gemv_packed_job {
    const nn_gemm_kernel *k;
    size_t N, K, npanels;
    float alpha, beta;
    const float *a; size_t inca;
    const float *bpre;
    float *c;
} gemv_packed_job;

#define NN_GEMV_GROUP_FLOATS 1024   /* accumulators of a group of panels (on the stack) */

static void gemv_packed_run(void *arg, size_t begin, size_t end) {
    const gemv_packed_job *j = arg;
    const size_t nr = j->k->nr, per_group = NN_GEMV_GROUP_FLOATS / nr;
    float acc[NN_GEMV_GROUP_FLOATS];
    for (size_t g0 = begin; g0 < end; g0 += per_group) {
        const size_t g1 = end - g0 < per_group ? end : g0 + per_group;
        memset(acc, 0, (g1 - g0) * nr * sizeof(float));
        for (size_t k0 = 0; k0 < j->K; k0 += NN_KC) {
            const size_t kc = slice_len(j->K, k0);
            const float *bp = j->bpre + k0 * j->npanels * nr + g0 * nr * kc, *a = j->a + k0 * j->inca;
            for (float *ac = acc; ac < acc + (g1 - g0) * nr; ac += nr, bp += nr * kc) {
                if (j->k->gemv_panel) { j->k->gemv_panel(kc, a, j->inca, bp, ac); continue; }
                const float *b = bp;
                for (size_t p = 0; p < kc; p++, b += nr) {
                    const float ap = a[p * j->inca];
                    for (size_t q = 0; q < nr; q++) ac[q] += ap * b[q];
                }
            }
        }
        const size_t c0 = g0 * nr, cols = (j->N < g1 * nr ? j->N : g1 * nr) - c0;
        float *c = j->c + c0;
        if (j->beta == 0.0f) for (size_t q = 0; q < cols; q++) c[q] = j->alpha * acc[q];
        else for (size_t q = 0; q < cols; q++) c[q] = j->alpha * acc[q] + j->beta * c[q];
    }
}

cort_status *nn_sgemm(cort_pool *pool, const nn_gemm_kernel *kernel, size_t M, size_t N, size_t K, float alpha,
                      const float *A, size_t lda, int transA, const nn_gemm_b *B, float beta, float *C, size_t ldc) {
    return nn_sgemm_ex(pool, kernel, M, N, K, alpha, A, lda, transA, B, beta, NULL, NULL, C, ldc);
}

/* C += S (the fused residual), row by row. */
static void sum_c(const float *S, size_t M, size_t N, float *C, size_t ldc) {
    if (!S) return;
    for (size_t i = 0; i < M; i++)
        for (size_t q = 0; q < N; q++) C[i * ldc + q] += S[i * ldc + q];
}

static void act_c(const nn_act *act, size_t M, size_t N, float *C, size_t ldc) {
    if (!act || act->kind == CORT_ACT_NONE) return;
    for (size_t i = 0; i < M; i++) nn_act_apply(act, C + i * ldc, N);
}

cort_status *nn_sgemm_ex(cort_pool *pool, const nn_gemm_kernel *kernel, size_t M, size_t N, size_t K, float alpha,
                         const float *A, size_t lda, int transA, const nn_gemm_b *B, float beta,
                         const float *row_bias, const nn_act *act, float *C, size_t ldc) {
    nn_gemm_opts o = { NULL, NULL, row_bias, act, NULL };
    return nn_sgemm_opt(pool, kernel, M, N, K, alpha, A, lda, transA, B, beta, C, ldc, &o);
}

cort_status *nn_sgemm_opt(cort_pool *pool, const nn_gemm_kernel *kernel, size_t M, size_t N, size_t K, float alpha,
                          const float *A, size_t lda, int transA, const nn_gemm_b *B, float beta, float *C, size_t ldc,
                          const nn_gemm_opts *opts) {
    const float *row_bias = opts ? opts->row_bias : NULL;
    const nn_act *act = opts ? opts->act : NULL;
    const float *sum = opts ? opts->sum : NULL;
    cort_kernel_ctx *kctx = opts ? opts->ctx : NULL;
    if (M == 0 || N == 0) return NULL;
    if (act && act->kind == CORT_ACT_NONE) act = NULL;
    const float *col_bias = opts ? opts->col_bias : NULL;
    const nn_gemm_kernel *kk = kernel ? kernel : nn_gemm_best_kernel();
    /* the AVX-512 kernel starts its accumulators from the column bias (C written once); every
     * other path gets C prefilled with it */
    if (col_bias && (beta != 0.0f || M == 1 || !kk->ext)) {
        for (size_t i = 0; i < M; i++) {
            float *c = C + i * ldc;
            if (beta == 0.0f) memcpy(c, col_bias, N * sizeof(float));
            else for (size_t q = 0; q < N; q++) c[q] = beta * c[q] + col_bias[q];
        }
        beta = 1.0f;
        col_bias = NULL;
    }
    if (K == 0 || alpha == 0.0f || (M == 1 && !B->pack && !kernel && row_bias)) {
        if (beta != 1.0f) scale_c(M, N, beta, C, ldc);
        if (row_bias)
            for (size_t i = 0; i < M; i++)
                for (size_t q = 0; q < N; q++) C[i * ldc + q] += row_bias[i];
        if (K == 0 || alpha == 0.0f) { sum_c(sum, M, N, C, ldc); act_c(act, M, N, C, ldc); return NULL; }
        beta = 1.0f;
        row_bias = NULL;
    }
    if (M == 1 && !kernel && opts && opts->bpack && opts->bpack->k == nn_gemm_best_kernel() && opts->bpack->rows == N &&
        opts->bpack->K == K) {
        const nn_gemm_kernel *bk = opts->bpack->k;
        gemv_packed_job g = { bk, N, K, div_up(N, bk->nr), alpha, beta, A, transA ? lda : 1, opts->bpack->data, C };
        double bytes = (double)N * (double)K * sizeof(float);
        cort_parallel_for(bytes < 262144.0 ? NULL : pool, g.npanels, 1, gemv_packed_run, &g);
        sum_c(sum, M, N, C, ldc);
        act_c(act, M, N, C, ldc);
        return NULL;
    }
    if (M == 1 && !B->pack && !kernel) {
        gemv_job g = { N, K, alpha, beta, A, transA ? lda : 1, B, C };
        double bytes = (double)N * (double)K * sizeof(float);
        cort_parallel_for(bytes < 262144.0 ? NULL : pool, div_up(N, NN_GEMV_COLS), 1, gemv_run, &g);
        sum_c(sum, M, N, C, ldc);
        act_c(act, M, N, C, ldc);
        return NULL;
    }
    if (beta != 0.0f && beta != 1.0f) {
        scale_c(M, N, beta, C, ldc);
        beta = 1.0f;
    }
    gemm_job j;
    memset(&j, 0, sizeof j);
    j.k = kernel ? kernel : nn_gemm_best_kernel();
    const size_t mr = j.k->mr, nr = j.k->nr;
    j.row_bias = row_bias;
    j.col_bias = col_bias;
    j.act = act;
    j.sum = sum;
    j.M = M; j.N = N; j.K = K; j.alpha = alpha; j.A = A; j.lda = lda; j.transA = transA; j.B = B; j.C = C; j.ldc = ldc;
    j.beta_one = beta == 1.0f;
    j.ctx = kctx;
    if (opts && opts->apack && opts->apack->k == j.k && opts->apack->rows == M && opts->apack->K == K &&
        opts->apack->alpha == alpha)
        j.apre = opts->apack->data;
    if (opts && opts->bpack && opts->bpack->k == j.k && opts->bpack->rows == N && opts->bpack->K == K)
        j.bpre = opts->bpack->data;
    j.mpanels = div_up(M, mr);
    j.npanels = div_up(N, nr);
    const size_t kc_max = K < NN_KC ? K : NN_KC;

    /* small problems are not worth waking the workers */
    double flops = (double)M * (double)N * (double)K;
    cort_pool *p = flops < 64.0 * 64.0 * 64.0 ? NULL : pool;
    const size_t threads = (size_t)cort_pool_threads(p);
    const int big = flops >= 33554432.0;   /* 2^25 multiply-adds: BERT's projections and up */
    /* One thread: a single task packs each K slice of A and B right before using it (both stay
     * in L2). Several threads: wide B (conv spatial dims, long sequences) -> tasks own column
     * blocks, pack their own B and share an A packed once for all of K; narrow B -> tasks own row
     * blocks, pack their own A and share a fully packed B. Either way a gemm costs at most two
     * pool dispatches. */
    j.b_direct = !B->pack && !B->trans && !j.bpre;
    /* A rows a power-of-two-ish distance apart alias in L1 when read as twelve streams; pack those
     * unless B is so narrow that packing A would not pay off */
    j.a_direct = !transA && alpha == 1.0f && (lda % 256 != 0 || N <= 128) && !j.apre;
    /* small K, wide C (1x1 convs on big planes): write C in row streams */
    j.rows_outer = K <= 64 && j.npanels >= 4 * NN_SWEEP_PANELS && j.mpanels > 2;
    /* ... and at any K for a conv's GEMM (weights prepacked, the activation read in place): each
     * weight panel then stays in L1 for a sweep of column panels streamed from L2, instead of every
     * tile streaming its weight panel from L2 and writing its C rows into M scattered lines
     * (docs/performance.md, "conv GEMMs rows-outer") */
    if (j.apre && j.b_direct && j.mpanels > 2 && j.npanels >= 2) j.rows_outer = 1;
    /* ... where an ext kernel takes a sweep's full tiles in one call (B read in place: its tiles
     * are NR columns apart), so the per-tile set-up is paid once per sweep (a 16 -> 64 channel 1x1
     * conv at 55x55) */
    j.multi = j.rows_outer && j.b_direct && j.k->ext;
    /* a cold C (a big activation) is written faster in long row runs than in many short ones */
    j.sweep = NN_SWEEP_FLOATS / (nr * kc_max);
    if (j.sweep < NN_SWEEP_PANELS) j.sweep = NN_SWEEP_PANELS;
    /* column tasks when there are enough columns to balance the threads; else row blocks. A conv
     * GEMM with few column panels and many row panels splits its rows: a 14x14 plane's 13 panels
     * of 16 go to 2 threads as 7 + 6, its 96 or more row panels split evenly, and each task still
     * sweeps every column panel with its weight panels in L1 */
    const int few_cols = j.rows_outer && j.apre && j.npanels < 8 * threads && j.mpanels >= 8 * threads;
    if (threads == 1 || (j.npanels >= 6 * threads && !few_cols) || j.mpanels < 2 * threads) {
        j.pack_b_in_task = 1;
        j.bm = j.mpanels;
        /* B read in place needs no L2-sized column blocks; packed B does */
        j.bn = threads == 1 && j.b_direct ? j.npanels : div_up(NN_BLOCK_COLS, nr);
        /* rows-outer tasks span at least a sweep: short row runs per task would undo it */
        if (j.rows_outer && j.bn < j.sweep) j.bn = j.sweep;
        if (threads > 1 && div_up(j.npanels, j.bn) < 3 * threads) j.bn = balanced_block(j.npanels, threads, big);
        else if (threads > 1) j.bn = balanced_upto(j.npanels, threads, j.rows_outer ? j.sweep : (j.bn + 1) / 2, j.bn);
        /* a small A (or a single task) is cheaper to repack per task than to share behind a barrier
         * (a barrier costs about the time to pack 8-32K floats); one thread has no barrier, so it
         * packs A once for all its column blocks */
        const double repacks = (double)div_up(j.npanels, j.bn) / (double)threads - 1.0;
        j.pack_a_in_task = j.bn >= j.npanels || (threads > 1 && j.mpanels * mr <= 2 * NN_BLOCK_ROWS &&
                                                 repacks * (double)M * (double)K < 32768.0);
    } else {
        j.pack_a_in_task = 1;
        j.bn = j.npanels;
        j.bm = div_up(NN_BLOCK_ROWS, mr);
        if (div_up(j.mpanels, j.bm) < 3 * threads) j.bm = balanced_block(j.mpanels, threads, big);
        else j.bm = balanced_upto(j.mpanels, threads, (j.bm + 1) / 2, j.bm);
    }
    /* operands read in place only need their edge panel packed: cheaper per task than a barrier */
    if (j.a_direct) j.pack_a_in_task = 1;
    if (j.b_direct) j.pack_b_in_task = 1;
    if (j.apre) j.pack_a_in_task = 0;
    if (j.bpre) j.pack_b_in_task = 0;
    if (j.bm == 0) j.bm = 1;
    if (j.bn == 0) j.bn = 1;
    j.tasks_n = div_up(j.npanels, j.bn);
    const size_t tasks = div_up(j.mpanels, j.bm) * j.tasks_n;
    j.task_astride = j.bm * mr * kc_max;
    j.task_bstride = j.bn * nr * kc_max;

    /* one allocation for both packed operands; fails cleanly on overflow */
    if (j.mpanels > SIZE_MAX / (mr * K) || j.npanels > SIZE_MAX / (nr * K) || tasks > SIZE_MAX / j.task_bstride ||
        tasks > SIZE_MAX / j.task_astride)
        return cort_error_oom();
    size_t a_elems = j.apre ? 0 : j.pack_a_in_task ? tasks * j.task_astride : j.mpanels * mr * K;
    size_t b_elems = j.bpre ? 0 : j.pack_b_in_task ? tasks * j.task_bstride : j.npanels * nr * K;
    if (a_elems > SIZE_MAX / sizeof(float) - b_elems) return cort_error_oom();
    float *scratch = NULL;
    if (a_elems + b_elems) {
        /* the session's recycled scratch: a steady-state run does not call the allocator */
        scratch = cort_kernel_scratch(kctx, (a_elems + b_elems) * sizeof(float));
        if (!scratch) return cort_error_oom();
    }
    j.apack = scratch;
    j.bpack = scratch ? scratch + a_elems : NULL;
    if (!j.apre && !j.pack_a_in_task) cort_parallel_for(p, j.mpanels, 1, job_pack_a, &j);
    if (!j.bpre && !j.pack_b_in_task) cort_parallel_for(p, j.npanels, 1, job_pack_b, &j);
    cort_parallel_for(p, tasks, 1, job_compute, &j);
    cort_kernel_scratch_free(kctx, scratch);
    if (kctx && cort_kernel_cancelled(kctx)) return cort_kernel_cancelled_status(kctx);
    return NULL;
}

void nn_gemm_pack_a_panels(const nn_gemm_kernel *k, size_t M, size_t K, const float *A, size_t lda, int transA,
                           size_t row0, size_t ip0, size_t ip1, float *dst) {
    const size_t mr = k->mr, mpanels = div_up(M, mr);
    for (size_t ip = ip0; ip < ip1 && ip < mpanels; ip++) {
        const size_t i0 = ip * mr, rows = M - i0 < mr ? M - i0 : mr;
        for (size_t k0 = 0; k0 < K; k0 += NN_KC) {
            const size_t kc = slice_len(K, k0);
            pack_a_panel(A, lda, transA, 1.0f, i0 - row0, rows, k0, kc, mr, dst + k0 * mpanels * mr + ip * mr * kc);
        }
    }
}

typedef struct pack_job {
    const nn_gemm_kernel *k;
    size_t rows, K, panels;
    float alpha;
    const float *A; size_t lda; int transA;   /* pack A */
    const nn_gemm_b *B;                       /* or pack B */
    float *d;
} pack_job;

static void pack_run(void *arg, size_t begin, size_t end) {
    const pack_job *j = arg;
    const size_t r = j->B ? j->k->nr : j->k->mr;
    nn_pack_b_fn pack = j->B && j->B->pack ? j->B->pack : pack_b_matrix;
    for (size_t ip = begin; ip < end; ip++) {
        const size_t i0 = ip * r, n = j->rows - i0 < r ? j->rows - i0 : r;
        for (size_t k0 = 0; k0 < j->K; k0 += NN_KC) {
            const size_t kc = slice_len(j->K, k0);
            float *dst = j->d + k0 * j->panels * r + ip * r * kc;
            if (j->B) pack(j->B, k0, kc, i0, n, r, dst);
            else pack_a_panel(j->A, j->lda, j->transA, j->alpha, i0, n, k0, kc, r, dst);
        }
    }
}

cort_status *nn_gemm_pack_a_par(cort_pool *pool, const nn_gemm_kernel *k, size_t M, size_t K, float alpha,
                                const float *A, size_t lda, int transA, nn_gemm_packed *out) {
    memset(out, 0, sizeof *out);
    if (!k) k = nn_gemm_best_kernel();
    const size_t mr = k->mr, mpanels = div_up(M, mr);
    if (K && mpanels > SIZE_MAX / sizeof(float) / mr / K) return cort_error_oom();
    float *d = cort_malloc_huge((mpanels * mr * K + 1) * sizeof(float));
    if (!d) return cort_error_oom();
    pack_job j = { k, M, K, mpanels, alpha, A, lda, transA, NULL, d };
    /* weights packed at session creation: worth the session's threads when big */
    cort_parallel_for((double)M * (double)K < 262144.0 ? NULL : pool, mpanels, 1, pack_run, &j);
    out->k = k; out->rows = M; out->K = K; out->alpha = alpha; out->data = d;
    return NULL;
}

cort_status *nn_gemm_pack_a(const nn_gemm_kernel *k, size_t M, size_t K, float alpha, const float *A, size_t lda,
                            int transA, nn_gemm_packed *out) {
    return nn_gemm_pack_a_par(NULL, k, M, K, alpha, A, lda, transA, out);
}

cort_status *nn_gemm_pack_b_par(cort_pool *pool, const nn_gemm_kernel *k, size_t K, size_t N, const nn_gemm_b *B,
                                nn_gemm_packed *out) {
    memset(out, 0, sizeof *out);
    if (!k) k = nn_gemm_best_kernel();
    const size_t nr = k->nr, npanels = div_up(N, nr);
    if (K && npanels > SIZE_MAX / sizeof(float) / nr / K) return cort_error_oom();
    float *d = cort_malloc_huge((npanels * nr * K + 1) * sizeof(float));
    if (!d) return cort_error_oom();
    pack_job j = { k, N, K, npanels, 1.0f, NULL, 0, 0, B, d };
    cort_parallel_for((double)N * (double)K < 262144.0 ? NULL : pool, npanels, 1, pack_run, &j);
    out->k = k; out->rows = N; out->K = K; out->alpha = 1.0f; out->data = d;
    return NULL;
}

cort_status *nn_gemm_pack_b(const nn_gemm_kernel *k, size_t K, size_t N, const nn_gemm_b *B, nn_gemm_packed *out) {
    return nn_gemm_pack_b_par(NULL, k, K, N, B, out);
}

void nn_gemm_packed_a_plain_b(const nn_gemm_packed *a, size_t N, const float *B, size_t ldb, float *C, size_t ldc) {
    const nn_gemm_kernel *k = a->k;
    const size_t mr = k->mr, nr = k->nr, M = a->rows, K = a->K, mpanels = div_up(M, mr);
    const size_t rows_blk = div_up(NN_BLOCK_ROWS, mr);
    float tile[NN_MAX_TILE];
    for (size_t k0 = 0; k0 < K; k0 += NN_KC) {
        const size_t kc = slice_len(K, k0);
        const float *ablock = a->data + k0 * mpanels * mr;
        for (size_t ib = 0; ib < mpanels; ib += rows_blk)
            for (size_t c0 = 0; c0 < N; c0 += nr)
                for (size_t ip = ib; ip < mpanels && ip < ib + rows_blk; ip++) {
                    const size_t r0 = ip * mr, rows = M - r0 < mr ? M - r0 : mr, cols = N - c0 < nr ? N - c0 : nr;
                    nn_ukr_args u;
                    memset(&u, 0, sizeof u);
                    u.kc = kc;
                    u.a = ablock + ip * mr * kc; u.a_rs = 1; u.a_cs = mr;
                    u.b = B + k0 * ldb + c0; u.ldb = ldb;
                    /* on the first column panel pull the next A panel from memory meanwhile: with
                     * few columns (Winograd's products over 16 tiles: resnet50's layer3 convs stream
                     * 9.4 MB of transformed weights each) A arrives too late for the kernel */
                    if (c0 == 0 && ip + 1 < mpanels) {
                        u.b_prefetch = ablock + (ip + 1) * mr * kc;
                        u.b_prefetch_ld = mr;
                    }
                    float *c = C + r0 * ldc + c0;
                    /* an edge-capable kernel stores a partial tile (a 16-column tail: Winograd's
                     * tile counts are multiples of 16, not 32) with masks */
                    if ((rows == mr && cols == nr) || k->edge) {
                        u.c = c; u.ldc = ldc; u.accumulate = k0 > 0; u.rows = rows; u.cols = cols;
                        k->ukr(&u);
                        continue;
                    }
                    u.c = tile; u.ldc = nr;
                    k->ukr(&u);
                    for (size_t r = 0; r < rows; r++) {
                        float *cr = c + r * ldc;
                        const float *tr = tile + r * nr;
                        if (k0 > 0) for (size_t q = 0; q < cols; q++) cr[q] += tr[q];
                        else memcpy(cr, tr, cols * sizeof(float));
                    }
                }
    }
}

void nn_gemm_packed_free(nn_gemm_packed *p) {
    if (!p) return;
    cort_free(p->data);
    p->data = NULL;
}

void nn_sgemm_ref(size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda, int transA,
                  const nn_gemm_b *B, float beta, float *C, size_t ldc) {
    /* one packer call per column (one per element made the unit tests spend half their time in it) */
    float *col = K ? cort_malloc(K * sizeof(float)) : NULL;
    nn_pack_b_fn pack = B->pack ? B->pack : pack_b_matrix;
    for (size_t q = 0; q < N; q++) {
        if (col) pack(B, 0, K, q, 1, 1, col);
        for (size_t i = 0; i < M; i++) {
            double s = 0.0;
            for (size_t p = 0; p < K; p++) {
                float a = transA ? A[p * lda + i] : A[i * lda + p];
                s += (double)a * (double)(col ? col[p] : nn_gemm_b_at(B, p, q));
            }
            float prev = beta == 0.0f ? 0.0f : beta * C[i * ldc + q];
            C[i * ldc + q] = (float)(alpha * s) + prev;
        }
    }
    cort_free(col);
}
