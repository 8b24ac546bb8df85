/* Packed, cache-blocked SGEMM shared by MatMul, Gemm and Conv:
 *   C[M,N] = alpha * op(A)[M,K] * B[K,N] + beta * C
 * A is a plain row-major matrix (transposed when transA). B is described by an nn_gemm_b so that
 * Conv can pack image patches straight from the input (implicit im2col) instead of materializing
 * the column matrix. beta == 0 means C is write-only (NaNs in C do not propagate). */
#ifndef CORT_CPU_NN_GEMM_H
#define CORT_CPU_NN_GEMM_H
#include <stddef.h>
#include "../../../core/status.h"
#include "../../../core/threadpool.h"
#include "gemm_ukernels.h"
#include "../ops/nn/nn_common.h"
#include "../../../graph/op.h"

/* K slice length of packed operands (nn_gemm_packed layouts are per slice of this many k) */
#define NN_GEMM_KC 256
#define NN_MAX_TILE (16 * 32)  /* largest MR*NR of any kernel */
#define NN_MAX_MR 16

typedef struct nn_gemm_b nn_gemm_b;
/* Packs rows [k0, k0+kc) and columns [j0, j0+ncols) of B into dst[kc][nr] (ncols <= nr; columns
 * ncols..nr-1 must be written as zeros). */
typedef void (*nn_pack_b_fn)(const nn_gemm_b *b, size_t k0, size_t kc, size_t j0, size_t ncols, size_t nr,
                             float *dst);
struct nn_gemm_b {
    nn_pack_b_fn pack;    /* NULL: B is the plain matrix below */
    const float *data;    /* row-major B[K][N] (trans = 0) or B^T stored as [N][K] (trans = 1) */
    size_t       ld;
    int          trans;
    const void  *ctx;     /* for custom packers */
};

static inline nn_gemm_b nn_gemm_b_matrix(const float *data, size_t ld, int trans) {
    nn_gemm_b b = { NULL, data, ld, trans, NULL };
    return b;
}

/* The best micro-kernel this CPU supports. */
const nn_gemm_kernel *nn_gemm_best_kernel(void);
/* Every micro-kernel usable on this CPU (for tests); returns the count, *out points to a static list. */
size_t nn_gemm_kernels(const nn_gemm_kernel *const **out);

/* kernel may be NULL (best). pool may be NULL (single thread). Fails only on out-of-memory. */
cort_status *nn_sgemm(cort_pool *pool, const nn_gemm_kernel *kernel, size_t M, size_t N, size_t K, float alpha,
                      const float *A, size_t lda, int transA, const nn_gemm_b *B, float beta, float *C, size_t ldc);

/* As nn_sgemm, then C[i][*] += row_bias[i] (row_bias may be NULL) and C = act(C) (act may be
 * NULL). Both happen while each tile is still in L1, so Conv gets its bias and fused activation
 * for free. */
cort_status *nn_sgemm_ex(cort_pool *pool, const nn_gemm_kernel *kernel, size_t M, size_t N, size_t K, float alpha,
                         const float *A, size_t lda, int transA, const nn_gemm_b *B, float beta,
                         const float *row_bias, const nn_act *act, float *C, size_t ldc);

/* An operand packed once into the micro-kernel layout (constant weights, packed at session
 * creation): A as MR-row panels (alpha folded in) or B as NR-column panels, per KC slice of K
 * (slice k0 at k0 * panels * R, panel i of it at + i * R * kc). Immutable once made. */
typedef struct nn_gemm_packed {
    const nn_gemm_kernel *k;
    size_t rows, K;     /* A: M x K (rows = M); B: K x N (rows = N) */
    float  alpha;       /* folded into packed A */
    float *data;
} nn_gemm_packed;
/* Packs op(A)[M,K] * alpha for kernel k (NULL = best). */
cort_status *nn_gemm_pack_a(const nn_gemm_kernel *k, size_t M, size_t K, float alpha, const float *A, size_t lda,
                            int transA, nn_gemm_packed *out);
/* Packs B[K,N] for kernel k (NULL = best). */
cort_status *nn_gemm_pack_b(const nn_gemm_kernel *k, size_t K, size_t N, const nn_gemm_b *B, nn_gemm_packed *out);
/* The same, panels spread over pool (may be NULL): for weights packed at session creation. */
cort_status *nn_gemm_pack_a_par(cort_pool *pool, const nn_gemm_kernel *k, size_t M, size_t K, float alpha,
                                const float *A, size_t lda, int transA, nn_gemm_packed *out);
cort_status *nn_gemm_pack_b_par(cort_pool *pool, const nn_gemm_kernel *k, size_t K, size_t N, const nn_gemm_b *B,
                                nn_gemm_packed *out);
void nn_gemm_packed_free(nn_gemm_packed *p);
/* Panels [ip0, ip1) of op(A)[M,K] (alpha 1) packed for kernel k into dst, in the layout of
 * nn_gemm_pack_a (dst holds all ceil(M / k->mr) panels: k->mr * K floats each), where A holds op(A)'s
 * rows from row0 on (row0 <= ip0 * k->mr): per-run operands packed into the caller's scratch, or a
 * big matrix packed a block of rows at a time. */
void nn_gemm_pack_a_panels(const nn_gemm_kernel *k, size_t M, size_t K, const float *A, size_t lda, int transA,
                           size_t row0, size_t ip0, size_t ip1, float *dst);

/* Everything optional about a gemm call. */
typedef struct nn_gemm_opts {
    const nn_gemm_packed *apack;   /* prepacked A matching (M, K, alpha) or NULL; ignored for another kernel */
    const nn_gemm_packed *bpack;   /* prepacked B matching (K, N) or NULL */
    const float *row_bias;         /* C[i][*] += row_bias[i] */
    const nn_act *act;             /* fused activation */
    cort_kernel_ctx *ctx;          /* scratch memory and cancellation; NULL: cort_malloc, never cancelled */
    const float *sum;              /* C += sum (an M x N matrix with C's ldc) before act: a fused residual Add */
    const float *col_bias;         /* C[*][j] += col_bias[j] (N values; a MatMul's bias) */
} nn_gemm_opts;

/* nn_sgemm_ex with options; returns the cancellation status when ctx was cancelled meanwhile. */
cort_status *nn_sgemm_opt(cort_pool *pool, const nn_gemm_kernel *kernel, size_t M, size_t N, size_t K, float alpha,
                          const float *A, size_t lda, int transA, const nn_gemm_b *B, float beta, float *C, size_t ldc,
                          const nn_gemm_opts *opts);

/* C[M, N] = A * B for A packed by nn_gemm_pack_a (M = a->rows, K = a->K, alpha folded in) and B a
 * plain row-major [K][ldb] matrix read in place; N must be a multiple of the kernel's NR, or of 16
 * for an edge-capable kernel (which never reads B past column N then). Single threaded and
 * allocation free, so callers can run many of these in parallel (Winograd). */
void nn_gemm_packed_a_plain_b(const nn_gemm_packed *a, size_t N, const float *B, size_t ldb, float *C, size_t ldc);

/* Naive triple loop, kept as the reference the tests compare against (double accumulation). */
void nn_sgemm_ref(size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda, int transA,
                  const nn_gemm_b *B, float beta, float *C, size_t ldc);
/* Reads element (k, j) of B through its packer (slow; for reference code and tests). */
float nn_gemm_b_at(const nn_gemm_b *B, size_t k, size_t j);
#endif
