/* Numpy-style batched matrix multiplication shapes shared by MatMul, MatMulInteger, QLinearMatMul. */
#ifndef CORT_CPU_NN_MATMUL_H
#define CORT_CPU_NN_MATMUL_H
#include "../nn/nn_common.h"
#include "../../kernels/gemm.h"
#include "../../kernels/int_gemm.h"

typedef struct nn_mm_shape {
    size_t  M, N, K, batch;
    size_t  yrank;
    int64_t ydims[CORT_MAX_RANK];
    size_t  nb;                          /* number of broadcast batch dims */
    int64_t bdims[CORT_MAX_RANK];        /* output batch dims */
    size_t  astride[CORT_MAX_RANK], bstride[CORT_MAX_RANK];   /* in matrices; 0 where broadcast */
} nn_mm_shape;

/* Validates A and B (inputs ai, bi of ctx) and fills the shape. */
cort_status *nn_mm_shape_make(const cort_kernel_ctx *ctx, size_t ai, size_t bi, nn_mm_shape *s);
/* Matrix indices of batch entry b in A and B. */
void nn_mm_batch(const nn_mm_shape *s, size_t b, size_t *a_mat, size_t *b_mat);
/* Shape inference for MatMul-like ops; sets output 0 to type t. */
void nn_mm_infer(cort_infer_ctx *ctx, size_t ai, size_t bi, cort_type t);

/* Op state of MatMul, Gemm and FusedMatMul: input 1 packed at creation when it is a constant float
 * matrix (trans: Gemm's transB). nn_mm_packed_b returns that pack when this run's input 1 is the
 * very constant it was made from, else NULL (the gemm packs per run). */
cort_status *nn_mm_init_packed_b(const cort_node *node, void **state, int trans);
void nn_mm_free_packed_b(void *state);
const nn_gemm_packed *nn_mm_packed_b(const cort_kernel_ctx *ctx);

/* Op state of the 8-bit matrix products (MatMulInteger, QLinearMatMul, MatMulIntegerToFloat,
 * DynamicQuantizeMatMul): input bi packed for the int GEMM at creation when it is a constant 8-bit
 * matrix and its zero point (input bzi, if present) is constant too. nn_imm_packed_b returns that
 * pack (and its kernel in *k) when this run's inputs are those very constants, else NULL. */
cort_status *nn_imm_init_packed(const cort_node *node, void **state, size_t bi, size_t bzi);
/* The same for a B stored transposed ([N, K]: QGemm's transB); the pack is of the upright B. */
cort_status *nn_imm_init_packed_t(const cort_node *node, void **state, size_t bi, size_t bzi, int trans);
void nn_imm_free(void *state);
const int16_t *nn_imm_packed_b(const cort_kernel_ctx *ctx, size_t bi, size_t bzi, const nn_igemm_kernel **k);
#endif
