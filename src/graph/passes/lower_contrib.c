/* com.microsoft.FusedConv / FusedGemm (graphs ONNX Runtime saved) -> plain ai.onnx Conv / Gemm
 * nodes carrying the activation in node->act and Z as the fused residual, exactly what cort's own
 * activation and residual passes make of Conv + Relu (+ Add): the passes after this one (1x1 +
 * depthwise fusion, in-place Concat) then see the convolutions ONNX Runtime's optimizer hid in
 * FusedConv. The node keeps the kernel state its delegate built (packed weights); activations
 * that no epilogue applies (Tanh, Elu, ...) stay on the delegating op. */
#include <string.h>
#include "pattern.h"
#include "../provider.h"
#include "../../providers/cpu/ops/contrib/contrib.h"

extern const cort_op_def ctb_op_fused_conv, ctb_op_fused_gemm;

cort_status *cort_pass_lower_contrib(cort_graph *g, cort_pass_index *x) {
    (void)x;
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || (n->op != &ctb_op_fused_conv && n->op != &ctb_op_fused_gemm) || !n->state || n->act ||
            !n->provider || !(n->provider->caps & CORT_PROVIDER_PATTERNS))
            continue;
        ctb_delegate *d = n->state;
        if (d->act.extra) continue;
        n->op = d->inner;
        n->op_type = d->inner->name;
        n->domain = d->inner->domain;
        n->state = d->inner_state;
        n->act = d->act.kind;
        n->act_alpha = d->act.alpha;
        n->act_beta = d->act.beta;
        n->sum_input = d->sum_input;
        d->inner_state = NULL;   /* now the node's */
        ctb_delegate_free(d);
    }
    return NULL;
}
