/* 4-bit block-quantized weights (com.microsoft.MatMulNBits, bits = 4) kept 4-bit in memory:
 *   Y[M, N] = A[M, K] * W[K, N],  W[k][n] = (q[n][k] - zp[n][k / block]) * scale[n][k / block]
 * The dequantized value is that float expression exactly (the 4-bit difference and an 8-bit zero
 * point convert exactly, a float zero point is subtracted as float), so only the order of the sums
 * differs from a plain loop over the dequantized matrix.
 *
 * Packed layout, made once at session creation: panels of 16 columns (the last one padded with
 * zero scales), each a run of `blocks` block records:
 *   float scale[16]                    the 16 columns' scales of this block
 *   zero points                        none (8), uint8 zp[16], or float zp[16] (zp_mode)
 *   uint8 w[block / 2][16]             w[p][j] = q[2p][j] | q[2p + 1][j] << 4
 * so a 16-byte load and one widening give 16 columns of two consecutive k, a panel is one stream,
 * and the scales and zero points arrive with the weights they belong to.
 *
 * Small M runs a GEMV-style kernel that dequantizes in registers; larger M dequantizes K-slices of
 * panels straight into the SGEMM's packed-B buffer (nn_q4_gemm_b) and runs its micro-kernels. */
#ifndef CORT_CPU_KERNELS_Q4_GEMM_H
#define CORT_CPU_KERNELS_Q4_GEMM_H
#include <stddef.h>
#include <stdint.h>
#include "../../../core/cpu_features.h"
#include "../../../core/status.h"
#include "../../../core/threadpool.h"
#include "gemm.h"

#define NN_Q4_NR 16
enum { NN_Q4_ZP_NONE = 0, NN_Q4_ZP_U8 = 1, NN_Q4_ZP_F32 = 2 };

typedef struct nn_q4_weights {
    size_t K, N, block, blocks, panels;
    int    zp_mode;
    size_t zp_off;     /* offset of the weights in a record (64 + zero point bytes) */
    size_t rec;        /* bytes per block record */
    uint8_t *data;     /* panels * blocks * rec bytes */
} nn_q4_weights;

static inline const uint8_t *nn_q4_panel(const nn_q4_weights *w, size_t jp) {
    return w->data + jp * w->blocks * w->rec;
}

/* gemv: y[r * ldy + j] = bias[j] (0 when NULL) + sum_k a[r * lda + k] * W[k][16 jp + j] for r < rows
 *   (rows <= the kernel's mr), j < cols (<= 16), over panel = nn_q4_panel(w, jp).
 * dequant: dst[i * ldd + j] = W[k0 + i][16 jp + j] for i < kc, j < 16 (padded columns give 0). */
typedef void (*nn_q4_gemv_fn)(const nn_q4_weights *w, const uint8_t *panel, const float *a, size_t lda, size_t rows,
                              const float *bias, float *y, size_t ldy, size_t cols);
typedef void (*nn_q4_dequant_fn)(const nn_q4_weights *w, const uint8_t *panel, size_t k0, size_t kc, float *dst,
                                 size_t ldd);
typedef struct nn_q4_kernel {
    const char      *name;
    cort_isa_level   isa;
    size_t           mr;
    size_t           gemv_below;   /* M from which dequantizing panels for the SGEMM is faster */
    nn_q4_gemv_fn    gemv;
    nn_q4_dequant_fn dequant;
} nn_q4_kernel;

const nn_q4_kernel *nn_q4_best_kernel(void);
/* Every kernel the level in use may run, best first (tests run each). */
size_t nn_q4_kernels(const nn_q4_kernel *const **out);

/* Packs B (N, blocks, block / 2) bytes with scales (N * blocks) and the optional zero points:
 * zp_u8 packed two per byte (N rows of ceil(blocks / 2) bytes, low nibble first) or zp_f32
 * (N * blocks); neither means 8. */
cort_status *nn_q4_pack(size_t K, size_t N, size_t block, const uint8_t *b, const float *scales, const uint8_t *zp_u8,
                        const float *zp_f32, nn_q4_weights *out);
/* The same, calling done(ctx, n0, n1) (may be NULL) once columns [n0, n1) of B are packed: the
 * caller may release those rows of B then. */
cort_status *nn_q4_pack_ex(size_t K, size_t N, size_t block, const uint8_t *b, const float *scales,
                           const uint8_t *zp_u8, const float *zp_f32, void (*done)(void *ctx, size_t n0, size_t n1),
                           void *ctx, nn_q4_weights *out);
void nn_q4_free(nn_q4_weights *w);

/* C[M, N] (row stride ldc) = A[M, K] (row stride lda) * W + bias (may be NULL), by the GEMV
 * kernel k, threaded over panels. */
void nn_q4_gemv(cort_pool *pool, const nn_q4_kernel *k, const nn_q4_weights *w, size_t M, const float *A, size_t lda,
                const float *bias, float *C, size_t ldc);

/* An nn_gemm_b whose packer dequantizes W through k->dequant; ctx must outlive the gemm. The SGEMM
 * kernel's nr must be a multiple of 16 (every kernel's is). */
typedef struct nn_q4_gemm_ctx { const nn_q4_kernel *k; const nn_q4_weights *w; } nn_q4_gemm_ctx;
nn_gemm_b nn_q4_gemm_b(const nn_q4_gemm_ctx *ctx);

void nn_q4_gemv_generic_4x16(const nn_q4_weights *w, const uint8_t *panel, const float *a, size_t lda, size_t rows,
                             const float *bias, float *y, size_t ldy, size_t cols);
void nn_q4_dequant_generic_16(const nn_q4_weights *w, const uint8_t *panel, size_t k0, size_t kc, float *dst,
                              size_t ldd);
#if defined(__x86_64__) || defined(__i386__)
#define NN_HAVE_X86_Q4 1
void nn_q4_gemv_avx2_2x16(const nn_q4_weights *w, const uint8_t *panel, const float *a, size_t lda, size_t rows,
                          const float *bias, float *y, size_t ldy, size_t cols);
void nn_q4_dequant_avx2_16(const nn_q4_weights *w, const uint8_t *panel, size_t k0, size_t kc, float *dst, size_t ldd);
void nn_q4_gemv_avx512_4x16(const nn_q4_weights *w, const uint8_t *panel, const float *a, size_t lda, size_t rows,
                            const float *bias, float *y, size_t ldy, size_t cols);
void nn_q4_dequant_avx512_16(const nn_q4_weights *w, const uint8_t *panel, size_t k0, size_t kc, float *dst,
                             size_t ldd);
#endif
#endif
