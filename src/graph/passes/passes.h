/* The level-2 graph optimizer: one file per pass in this folder, run in order by cort_passes_run
 * (passes.c) at two points of cort_graph_compile. Every pass works on a compiled graph in place:
 * it may rewrite nodes (new op, state, slots), reorder them, and mark others skipped.
 *
 * Before kernels are built (CORT_PASSES_BEFORE_KERNELS):
 *   fuse_qdq.c         DQ(x), DQ(const w)[, DQ(bias)] -> Conv / MatMul [-> Relu/Clip] -> Q ->
 *                      QLinearConv / QLinearMatMul (so they pack the integer weights once)
 *   fold_bn.c          Conv/ConvTranspose + BatchNormalization with constant parameters -> the
 *                      convolution with folded weights (so it packs them once)
 * After inference and constant folding (CORT_PASSES_AFTER_KERNELS), in this order:
 *   fuse_qdq_lut.c     Q(elementwise ops of one value (DQ(x))) -> cort.QLut(x), a byte table the pass
 *                      evaluates with the nodes' own kernels
 *   lower_contrib.c    com.microsoft.FusedConv / FusedGemm -> Conv / Gemm with node->act (and the
 *                      conv's Z as its fused residual), so the passes below see them
 *   fuse_layernorm.c   ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul)(/Add) -> cort.LayerNorm
 *   fuse_gelu.c        x*0.5*(1+erf(x/sqrt2)) -> cort.Gelu
 *   fuse_matmul.c      run-time-B MatMul + bias, scale, residual, Gelu -> cort.FusedMatMul
 *   fuse_layernorm.c   cort.LayerNorm(a + (b + bias)) -> cort.LayerNorm(a, gamma, beta, b, bias)
 *   fuse_gelu.c        cort.Gelu(v + bias) -> cort.Gelu(v, bias)
 *   fuse_matmul.c      cort.Gelu(MatMul(A, constant B) (, bias)) -> cort.FusedMatMul (packed B kept)
 *   fuse_hardswish.c   x * HardSigmoid(x; 1/6, 0.5) -> HardSwish
 *   fuse_matmul.c      constant-B MatMul + bias left over -> cort.FusedMatMul (packed B kept)
 *   fuse_residual.c    Conv (CORT_OP_FUSES_SUM) + Add(residual) -> the conv adds it in its epilogue
 *   fuse_activation.c  Conv/Gemm/MatMul (CORT_OP_FUSES_ACTIVATION) + Relu/Clip/... or Sigmoid+Mul
 *                      (SiLU) -> node->act
 *   fuse_pw_dw.c       1x1 expand Conv + depthwise 3x3 Conv, big intermediate -> cort.PwDwConv
 *                      (only when no provider was appended)
 *   plan_inplace.c     Concat of single-use conv outputs -> producers write into its output
 *                      (only when no provider was appended)
 * The pattern passes (fuse_*.c) share pattern.h. Providers' partition hooks run after all of these. */
#ifndef CORT_GRAPH_PASSES_PASSES_H
#define CORT_GRAPH_PASSES_PASSES_H
#include "../graph.h"

typedef struct cort_pass_index cort_pass_index;   /* producers / readers of each slot (pattern.h) */
typedef cort_status *(*cort_pass_fn)(cort_graph *g, cort_pass_index *x);

enum { CORT_PASSES_BEFORE_KERNELS = 0, CORT_PASSES_AFTER_KERNELS = 1 };

/* Runs the passes of one phase in order (level-2 sessions only; the caller checks the level). */
cort_status *cort_passes_run(cort_graph *g, int phase);

cort_status *cort_pass_fuse_qdq(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_qdq_lut(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fold_bn(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_int_matmul(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_int_matmul_gelu(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_lower_contrib(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_layernorm(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_gelu(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_matmul_bias_dynamic(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_matmul_scale(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_matmul_residual(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_matmul_gelu(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_skip_layernorm(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_bias_gelu(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_packed_matmul_gelu(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_hardswish(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_matmul_bias_packed(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_residual(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_activation(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_fuse_pw_dw(cort_graph *g, cort_pass_index *x);
cort_status *cort_pass_plan_inplace(cort_graph *g, cort_pass_index *x);
#endif
