/* com.microsoft.FusedConv(X, W, B?, Z?) and com.microsoft.FusedGemm(A, B, C?): what ONNX Runtime's
 * optimizer writes for a Conv or Gemm followed by an activation (and for FusedConv an Add of a
 * tensor Z of the output's shape): Y = act(Conv(X, W) + B + Z), Y = act(alpha A'B' + beta C). They
 * run cort's own Conv and Gemm kernels with the activation in the epilogue (Z as the conv's fused
 * residual), so the weights are packed the same way and the activation costs no extra pass where
 * the epilogue has it. Also the ops ONNX Runtime registers under another name or version with
 * ai.onnx semantics: com.microsoft.Trilu and ai.onnx LayerNormalization versions 1..16. */
#include <math.h>
#include <string.h>
#include "contrib.h"

extern const cort_op_def nn_op_conv;
extern const cort_op_def nn_op_gemm;
extern const cort_op_def sh_op_trilu;
extern const cort_op_def nn_op_layer_norm;

static cort_status *fused_conv_fill(const cort_node *node, ctb_delegate *d) {
    const float *p = NULL;
    size_t n = cort_attr_floats(node, "activation_params", &p);
    CORT_TRY(ctb_act_parse(node, cort_attr_str(node, "activation", ""), p, n, &d->act));
    /* Z goes where cort's conv finds a fused residual: right after X, W, B */
    d->sum_input = node->n_inputs > 3 && node->in_slot[3] >= 0 ? 3 : 0;
    return NULL;
}

static cort_status *fused_conv_init(const cort_node *node, void **state) {
    return ctb_delegate_init(node, &nn_op_conv, fused_conv_fill, state);
}

static cort_status *fused_gemm_fill(const cort_node *node, ctb_delegate *d) {
    /* ONNX Runtime copies the activation's own attributes with an "activation_" prefix */
    const char *name = cort_attr_str(node, "activation", "");
    float p[3];
    const char *keys[3] = { "activation_alpha", "activation_beta", "activation_gamma" };
    for (size_t k = 0; k < 3; k++) p[k] = cort_attr_get(node, keys[k]) ? cort_attr_float(node, keys[k], 0.0f) : NAN;
    /* Selu has alpha and gamma (slots 0 and 2), no beta */
    if (!strcmp(name, "Selu")) p[1] = NAN;
    const size_t n = 3;
    return ctb_act_parse(node, name, p, n, &d->act);
}

static cort_status *fused_gemm_init(const cort_node *node, void **state) {
    return ctb_delegate_init(node, &nn_op_gemm, fused_gemm_fill, state);
}

static cort_status *plain_fill(const cort_node *node, ctb_delegate *d) {
    (void)node;
    (void)d;
    return NULL;
}

static cort_status *trilu_init(const cort_node *node, void **state) {
    return ctb_delegate_init(node, &sh_op_trilu, plain_fill, state);
}

static cort_status *layer_norm_init(const cort_node *node, void **state) {
    return ctb_delegate_init(node, &nn_op_layer_norm, plain_fill, state);
}

const cort_op_def ctb_op_fused_conv = { .name = "FusedConv", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = fused_conv_init,
    .free_state = ctb_delegate_free, .infer = ctb_delegate_infer, .run = ctb_delegate_run };
const cort_op_def ctb_op_fused_gemm = { .name = "FusedGemm", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = fused_gemm_init,
    .free_state = ctb_delegate_free, .infer = ctb_delegate_infer, .run = ctb_delegate_run };
const cort_op_def ctb_op_trilu = { .name = "Trilu", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = 0, .init = trilu_init, .free_state = ctb_delegate_free,
    .infer = ctb_delegate_infer, .run = ctb_delegate_run };
/* ONNX Runtime has had LayerNormalization in the ai.onnx domain since version 1, with opset 17's
 * inputs, outputs and attributes; exporters write it for opsets below 17 */
const cort_op_def ctb_op_layer_norm_v1 = { .name = "LayerNormalization", .domain = "", .min_opset = 1,
    .max_opset = 16, .types = CORT_TMASK_FLOATS, .init = layer_norm_init, .free_state = ctb_delegate_free,
    .infer = ctb_delegate_infer, .run = ctb_delegate_run };
