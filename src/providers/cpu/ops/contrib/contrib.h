/* The com.microsoft operators (ONNX Runtime's contrib ops, with its CPU provider's semantics) that
 * ONNX Runtime's own tools write into saved graphs, and the ai.onnx-domain ops it registers below
 * the opsets ONNX defines them at. Most map onto kernels cort already has: the ones that only add
 * an activation or a sum to an existing op run that op's kernel on a copy of the node carrying
 * the activation (ctb_delegate_*), so the packed weights and micro-kernels are the same. */
#ifndef CORT_CPU_CONTRIB_H
#define CORT_CPU_CONTRIB_H
#include <stddef.h>
#include "../../../../graph/op.h"
#include "../nn/nn_common.h"

/* An activation given by name as ONNX Runtime's fused ops carry it. kind: a CORT_ACT_* the
 * epilogues apply, or CORT_ACT_NONE with extra set for those that only run as a pass after. */
enum { CTB_EXTRA_NONE = 0, CTB_EXTRA_TANH, CTB_EXTRA_ELU, CTB_EXTRA_SOFTPLUS, CTB_EXTRA_THRESHOLDED_RELU,
       CTB_EXTRA_SCALED_TANH, CTB_EXTRA_SELU, CTB_EXTRA_GELU };
typedef struct ctb_act {
    int kind;            /* CORT_ACT_* */
    float alpha, beta;   /* as node->act_alpha / act_beta */
    int extra;           /* CTB_EXTRA_*: applied over the output after the kernel */
    float e_alpha, e_beta, e_gamma;
} ctb_act;

/* Parses name with its parameters (params[0..n) in the order ONNX Runtime lists them: LeakyRelu
 * alpha, Clip min max, HardSigmoid alpha beta, ...). Fails naming the node for an unknown name. */
cort_status *ctb_act_parse(const cort_node *node, const char *name, const float *params, size_t n, ctb_act *out);
/* The extra part of an activation over n floats in place. */
void ctb_act_extra(const ctb_act *a, float *y, size_t n);

/* State of an op that runs another op's kernel with an activation (and sum input) folded in. */
typedef struct ctb_delegate {
    const cort_op_def *inner;
    void *inner_state;
    ctb_act act;
    size_t sum_input;    /* node->sum_input for the inner kernel (0: none) */
    int opset;           /* the opset the inner kernel sees (0: the node's) */
} ctb_delegate;

/* init of a delegating op: parses nothing itself (the caller fills act/sum_input through `fill`
 * before the inner op's init sees the node copy). */
cort_status *ctb_delegate_init(const cort_node *node, const cort_op_def *inner,
                               cort_status *(*fill)(const cort_node *node, ctb_delegate *d), void **state);
void ctb_delegate_free(void *state);
cort_status *ctb_delegate_infer(cort_infer_ctx *ctx);
cort_status *ctb_delegate_run(cort_kernel_ctx *ctx);

/* Runs `inner` (whose state is inner_state, made by ctb_delegate_init) on other inputs: a copy of
 * the node with n_in inputs and n_out outputs, outputs[] owned by the caller afterwards. For the
 * quantized ops that run a float kernel between dequantization and quantization. */
cort_status *ctb_run_inner(cort_kernel_ctx *ctx, const ctb_delegate *d, cort_value *const *inputs, size_t n_in,
                           cort_value **outputs, size_t n_out);

/* A float tensor input i, or an error naming it. */
cort_status *ctb_float_input(const cort_kernel_ctx *ctx, size_t i, const char *name, int min_rank,
                             const cort_value **out);
/* Optional float input i whose element count is c (a row parameter), or NULL. */
cort_status *ctb_row_param(const cort_kernel_ctx *ctx, size_t i, const char *name, size_t c, const float **out);
/* *acc += a * b * c * d; 0 when that overflows (the caller reports it as out of memory: dims
 * that come from empty tensors, e.g. a past of length 2^40 with head size 0, can be huge) */
static inline int ctb_size_add(size_t *acc, size_t a, size_t b, size_t c, size_t d) {
    size_t p;
    return !cort_mul_size_ovf(a, b, &p) && !cort_mul_size_ovf(p, c, &p) && !cort_mul_size_ovf(p, d, &p) &&
           !cort_add_size_ovf(*acc, p, acc);
}
#endif
