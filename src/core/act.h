/* The fused-activation kinds: one numbering from the fusion passes (node->act) through the ops'
 * epilogues down to the micro-kernels, which switch on it in registers. */
#ifndef CORT_CORE_ACT_H
#define CORT_CORE_ACT_H

enum { CORT_ACT_NONE = 0, CORT_ACT_RELU, CORT_ACT_CLIP, CORT_ACT_LEAKY_RELU, CORT_ACT_SIGMOID, CORT_ACT_HARD_SIGMOID,
       CORT_ACT_SILU /* x * sigmoid(x) */, CORT_ACT_HARD_SWISH /* x * clamp(x / 6 + 0.5, 0, 1) */,
       CORT_ACT_GELU /* x * (1 + erf(x / sqrt(2))) / 2: only in kernels' epilogues (cort.FusedMatMul's
                      * activation; in node->act only of MatMulIntegerToFloat, whose tile epilogue runs
                      * it); of the float micro-kernels only the AVX2 6x16 one applies it on registers
                      * (nn_gemm_kernel.gelu_regs) */ };

#endif
