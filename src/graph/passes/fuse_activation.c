/* Activations into the epilogue of the op before them (level 2; ops with CORT_OP_FUSES_ACTIVATION). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "passes.h"
#include "../provider.h"

/* x -> Sigmoid -> Mul(x, sigmoid(x)) where x has exactly those two consumers: SiLU in the epilogue. */
static int fuse_silu(cort_graph *g, cort_node *n, int32_t s) {
    size_t sig = SIZE_MAX, mul = SIZE_MAX;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->skip[i]) continue;
        const cort_node *c = &g->nodes[i];
        if (c->domain[0] || c->n_inputs < 1) continue;
        if (!strcmp(c->op_type, "Sigmoid") && c->in_slot[0] == s) sig = i;
    }
    if (sig == SIZE_MAX) return 0;
    int32_t sig_out = g->nodes[sig].out_slot[0];
    if (sig_out < 0 || cort_graph_is_output(g->ir, g->slot_names[sig_out])) return 0;
    size_t first = 0;
    if (cort_graph_consumers(g, sig_out, &first) != 1) return 0;
    const cort_node *m = &g->nodes[first];
    if (m->domain[0] || strcmp(m->op_type, "Mul") || m->n_inputs != 2 || m->out_slot[0] < 0) return 0;
    if (!((m->in_slot[0] == s && m->in_slot[1] == sig_out) || (m->in_slot[1] == s && m->in_slot[0] == sig_out))) return 0;
    mul = first;
    n->act = CORT_ACT_SILU;
    n->out_slot[0] = m->out_slot[0];
    g->skip[sig] = 1;
    g->skip[mul] = 1;
    return 1;
}

/* Folds a float activation that is the only consumer of a Conv/Gemm/MatMul output into that node. */
cort_status *cort_pass_fuse_activation(cort_graph *g, cort_pass_index *x) {
    (void)x;
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !n->op || !(n->op->flags & CORT_OP_FUSES_ACTIVATION) || n->act || n->n_outputs < 1) continue;
        int32_t s = n->out_slot[0];
        if (s < 0 || g->slot_info[s].elem != CORT_TYPE_FLOAT || cort_graph_is_output(g->ir, g->slot_names[s])) continue;
        size_t j = 0, nc = cort_graph_consumers(g, s, &j);
        if (nc == 2 && (n->op->flags & CORT_OP_FUSES_SILU) && fuse_silu(g, n, s)) continue;
        if (nc != 1) continue;
        cort_node *a = &g->nodes[j];
        if (a->domain[0] || a->n_outputs != 1 || a->out_slot[0] < 0 || a->in_slot[0] != s) continue;
        int act = 0;
        float alpha = 0, beta = 0;
        if (!strcmp(a->op_type, "Relu")) act = CORT_ACT_RELU;
        else if (!strcmp(a->op_type, "HardSwish")) act = CORT_ACT_HARD_SWISH;
        else if (!strcmp(a->op_type, "LeakyRelu")) { act = CORT_ACT_LEAKY_RELU; alpha = cort_attr_float(a, "alpha", 0.01f); }
        else if (!strcmp(a->op_type, "Sigmoid")) act = CORT_ACT_SIGMOID;
        else if (!strcmp(a->op_type, "HardSigmoid")) {
            act = CORT_ACT_HARD_SIGMOID;
            alpha = cort_attr_float(a, "alpha", 0.2f);
            beta = cort_attr_float(a, "beta", 0.5f);
        } else if (!strcmp(a->op_type, "Clip")) {
            act = CORT_ACT_CLIP;
            alpha = -INFINITY;
            beta = INFINITY;
            if (a->opset < 11) { alpha = cort_attr_float(a, "min", -INFINITY); beta = cort_attr_float(a, "max", INFINITY); }
            else {
                for (size_t k = 1; k < a->n_inputs && k < 3; k++) {
                    if (a->in_slot[k] < 0) continue;
                    const cort_value *v = g->slot_info[a->in_slot[k]].value;
                    if (!v || v->kind != CORT_VKIND_TENSOR || v->count != 1 || v->type != CORT_TYPE_FLOAT) { act = 0; break; }
                    if (k == 1) alpha = *(const float *)v->data;
                    else beta = *(const float *)v->data;
                }
            }
        }
        if (!act) continue;
        n->act = act;
        n->act_alpha = alpha;
        n->act_beta = beta;
        n->out_slot[0] = a->out_slot[0];
        g->skip[j] = 1;
    }
    return NULL;
}
