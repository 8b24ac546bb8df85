/* SGEMM micro-kernels. A micro-kernel computes one MR x NR tile of C:
 *   C_tile = [C_tile if accumulate] + [bias[i] per row if bias] + A_tile * B_tile
 * where A(i,p) = a[i*a_rs + p*a_cs] (a packed panel: a_rs = 1, a_cs = MR; A read in place:
 * a_rs = lda, a_cs = 1) and B(p,j) = b[p*ldb + j] (ldb = NR for a packed panel, the row stride
 * when B is read in place). C rows are ldc floats apart. The x86 kernels are compiled with
 * per-function target attributes so that the library needs no global -march flag; nn_gemm picks
 * one at run time. */
#ifndef CORT_CPU_SIMD_GEMM_UKERNELS_H
#define CORT_CPU_SIMD_GEMM_UKERNELS_H
#include <stddef.h>
#include <stdint.h>
#include "../../../core/cpu_features.h"

typedef struct nn_ukr_args {
    size_t       kc;
    const float *a;  size_t a_rs, a_cs;
    const float *b;  size_t ldb;
    float       *c;  size_t ldc;
    const float *bias;        /* MR per-row start values, or NULL */
    const float *col_bias;    /* ext kernels: per-column start values (cols of them), or NULL */
    size_t       rows, cols;  /* edge kernels: valid rows/columns of the tile (0 = MR/NR); only
                               * those rows and columns of C are read and written */
    const float *const *b_ind;   /* edge kernels: if set, B row p is b_ind[p] + b_off (b, ldb unused;
                                  * NR floats are read from each row even for a narrower tile) */
    size_t       b_off;
    int          b_ind_ahead; /* b_ind: also prefetch row p + 8 while row p is used (taps of other
                               * channels and phases, a panel too big to stay in L1) */
    size_t       b_rows_ahead;   /* B read in place (b set, ldb != NR): also prefetch row p + this
                                  * while row p is used, 0: not (rows a plane apart; the AVX2 kernel) */
    const float *b_prefetch;  /* optional: NR floats per k to prefetch into L2 (a packed panel, or the */
    size_t       b_prefetch_ld;   /* columns of B further right); rows b_prefetch_ld floats apart (0: NR) */
    const float *c_add;       /* edge kernels: if set, a tile (same ldc as c) added before act */
    int          accumulate;
    int          act;         /* 0, or applied before the store: 1 relu, 2 clip(lo, hi), 3 leaky relu(lo),
                               * 7 hard swish (edge kernels; CORT_ACT_* of core/act.h) */
    float        act_lo, act_hi;
    size_t       panels;      /* ext kernels: this many adjacent full tiles (0 = 1): b, c, c_add,
                               * col_bias and b_prefetch advance by NR floats per tile, and each next
                               * tile's C rows are prefetched for writing */
    const int32_t *perm;      /* the AVX-512 kernel, a 32-column tile: if set, C row i is written (and
                               * read for accumulate / c_add) as `kept` contiguous floats, column p of
                               * them being the tile's column perm[p] (a conv tile straddling output
                               * rows, its junk columns dropped); perm holds 32 entries */
    size_t       kept;
} nn_ukr_args;

/* One tile over all of K, stored transposed (the small-plane conv: rows are output positions,
 * columns output channels): y[j * ldy + i] = act(sum_k A(i,k) B(k,j) + bias[j] + sum[j * ldy + i])
 * for i < rows, j < cols. A and B are in the packed layouts of nn_gemm_pack_a / nn_gemm_pack_b (K in
 * slices of kc_max; panel ip of a_panels, jp of b_panels). */
typedef struct nn_tstore_args {
    size_t K, kc_max;
    const float *a; size_t lda;   /* A^T read in place: position i of step p at a[p * lda + i] */
    const float *b; size_t b_panels, jp;
    size_t rows, cols;        /* 1..tstore_rows, 1..NR (only a[p * lda + i] for i < rows is read) */
    float *y; size_t ldy;
    const float *bias;        /* cols values, or NULL */
    const float *sum;         /* laid out like y, or NULL */
    int act; float act_lo, act_hi;   /* CORT_ACT_* */
    int prefetch_next;        /* prefetch B panel jp + 1 into L2 meanwhile (weights read from memory) */
    const float *prefetch_block;   /* or pull this run into L2 meanwhile, NR floats per K step (K
                                    * ranges: the next block's weights, needed a block from now) */
    /* Kernels with tstore_kblock: steps [k_begin, k_end) only, the sums carried in acc (rows x NR
     * floats: read unless first, written unless last; the transposed store only on the last
     * range). k_end == 0: all of K in one call (acc unused). */
    size_t k_begin, k_end;
    float *acc;
    int first, last;
} nn_tstore_args;
/* How many K steps ahead a tstore tile prefetches its rows of A (docs/performance.md) */
#define NN_TSTORE_A_AHEAD 8

typedef void (*nn_gemm_ukr_fn)(const nn_ukr_args *args);

typedef struct nn_gemm_kernel {
    const char    *name;
    cort_isa_level isa;    /* the level whose config chooses it */
    size_t         mr, nr;
    nn_gemm_ukr_fn ukr;
    int            edge;   /* ukr honours rows/cols (else edge tiles go through a scratch tile) */
    int            ext;    /* ukr honours col_bias and panels too (and perm if NR is 32) */
    /* acc[0..nr) += sum_p a[p * inca] * b[p * nr + j] over a packed B panel (M = 1), or NULL */
    void (*gemv_panel)(size_t kc, const float *a, size_t inca, const float *b, float *acc);
    /* the transposed-store tile of this kernel (B packed for it), or NULL */
    void (*tstore)(const nn_tstore_args *t);
    size_t         tstore_rows;   /* the most rows a tstore tile takes (MR, or MR + 1) */
    /* row granularity of its edge tiles (a tile of r < MR rows costs about that of
     * row_edge * ceil(r / row_edge) rows; 0: 4), for choosing the transposed small-plane conv */
    size_t         row_edge;
    /* Sigmoid/HardSigmoid/SiLU run on its accumulators up to this K (0: 64; longer K applies them
     * in a pass over each tile) */
    size_t         xact_k_max;
    /* the longest K a tstore tile keeps in its accumulators (0: any); beyond it the transposed
     * conv runs as a K-sliced GEMM into a scratch Y^T: each tile re-reads its whole weight panel
     * and K rows of A, and with a 16-column panel that traffic outgrew the caches */
    size_t         tstore_k_max;
    /* the tstore tile takes K ranges (nn_tstore_args.k_begin): a channel panel's position tiles
     * then sweep K in blocks of this many steps, the panel's block of weights staying in L1 (0:
     * each tile runs all of K) */
    size_t         tstore_kblock;
    /* ukr applies GELU (CORT_ACT_GELU) on its accumulators at any K, as the vector pass over C
     * would (bit for bit) */
    int            gelu_regs;
} nn_gemm_kernel;

void nn_ukr_scalar_4x16(const nn_ukr_args *args);
#if defined(__x86_64__) || defined(__i386__)
#define NN_HAVE_X86_UKERNELS 1
void nn_ukr_avx2_6x16(const nn_ukr_args *args);
void nn_ukr_avx512_12x32(const nn_ukr_args *args);
/* acc[0..NR) += sum_p a[p * inca] * b[p * NR + j]: a packed B panel of the kernel times a vector */
void nn_gemv_panel_avx512_32(size_t kc, const float *a, size_t inca, const float *b, float *acc);
void nn_gemv_panel_avx2_16(size_t kc, const float *a, size_t inca, const float *b, float *acc);
void nn_ukr_avx2_6x16_tstore(const nn_tstore_args *t);

void nn_ukr_avx512_12x32_tstore(const nn_tstore_args *t);
#endif
#endif
