/* MatMul epilogues (level 2): a MatMul's bias, scale, residual and GELU become one
 * cort.FusedMatMul (src/providers/cpu/ops/fused/fused_matmul.c).
 *   MatMul with a run-time B (attention) + Div/Mul(scalar), + Add(bias[N]), + Add(residual),
 *   + cort.Gelu                                 -> cort.FusedMatMul(A, B, bias, residual) alpha activation
 *   cort.Gelu(MatMul(A, constant B), bias)      -> cort.FusedMatMul(A, B, bias) activation (packed B kept)
 * MatMuls with constant weights stay MatMul (they keep their weights packed at creation); their
 * bias and residual Adds fold into the LayerNorm / Gelu that follows instead, and a bias Add left
 * over after all of the above becomes cort.FusedMatMul(A, B, bias), taking over the MatMul's
 * packed weights. */
#include <math.h>
#include <string.h>
#include "pattern.h"

static int matmul_dynamic(const cort_graph *g, const cort_node *mm) {
    return pat_matmul_float(g, mm) && !g->consts[mm->in_slot[1]];
}

/* MatMul + Add(bias[N]) -> cort.FusedMatMul(A, B, bias). const_b = 0: B computed at run time
 * (attention), before the patterns below. const_b = 1: B constant and packed at creation, for the
 * pairs no pattern below took (a classifier before its Softmax); the fused node takes over the
 * MatMul's state (its packed B) instead of packing again, and its gemm starts from the bias. */
static cort_status *fuse_matmul_bias(cort_graph *g, cort_pass_index *x, int const_b) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, n, "", "Add") || n->n_inputs != 2) continue;
        for (int side = 0; side < 2; side++) {
            int32_t ms = n->in_slot[side], bs = n->in_slot[1 - side];
            cort_node *mm = pat_producer_of(g, x, ms, "", "MatMul", 1);
            if (!mm || !pat_matmul_float(g, mm) || !g->consts[mm->in_slot[1]] != !const_b) continue;
            const cort_tinfo *mt = &g->slot_info[ms];
            if (mt->rank < 1 || !pat_const_row(g, bs, mt->dims[mt->rank - 1], mt->rank)) continue;
            int32_t in[3] = { mm->in_slot[0], mm->in_slot[1], bs };
            CORT_TRY(pat_rewrite_as(g, n, "cort", "FusedMatMul", 1, in, 3, NULL, 0, const_b ? mm : NULL));
            pat_drop(g, mm);
            break;
        }
    }
    return NULL;
}

cort_status *cort_pass_fuse_matmul_scale(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        int div = pat_is_op(g, n, "", "Div");
        if (g->skip[i] || !(div || pat_is_op(g, n, "", "Mul")) || n->n_inputs != 2) continue;
        for (int side = 0; side < (div ? 1 : 2); side++) {
            int32_t ms = n->in_slot[side];
            float c;
            cort_node *mm = pat_producer_of(g, x, ms, "", "MatMul", 1);
            if (!mm || !matmul_dynamic(g, mm) || !pat_const_scalar(g, n->in_slot[1 - side], &c)) continue;
            if (!isfinite(c) || c == 0.0f) continue;
            /* the scalar must not broadcast the product to a higher rank */
            const cort_value *cv = g->slot_info[n->in_slot[1 - side]].value;
            if ((int)cv->rank > g->slot_info[ms].rank) continue;
            cort_attr_ir a = pat_attr_f("alpha", div ? 1.0f / c : c);
            int32_t in[2] = { mm->in_slot[0], mm->in_slot[1] };
            CORT_TRY(pat_rewrite(g, n, "FusedMatMul", in, 2, &a, 1));
            pat_drop(g, mm);
            break;
        }
    }
    return NULL;
}

cort_status *cort_pass_fuse_matmul_residual(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, n, "", "Add") || n->n_inputs != 2) continue;
        for (int side = 0; side < 2; side++) {
            int32_t fs = n->in_slot[side], rs = n->in_slot[1 - side];
            cort_node *f = pat_producer_of(g, x, fs, "cort", "FusedMatMul", 1);
            if (!f || f->n_inputs != 3 || f->ir->n_attrs || rs < 0 || rs == fs) continue;
            const cort_tinfo *rt = &g->slot_info[rs];
            if (rt->elem != CORT_TYPE_FLOAT || !pat_same_static_shape(rt, &g->slot_info[fs]) ||
                !pat_same_static_shape(rt, &g->slot_info[n->out_slot[0]]))
                continue;
            int32_t in[4] = { f->in_slot[0], f->in_slot[1], f->in_slot[2], rs };
            CORT_TRY(pat_rewrite(g, n, "FusedMatMul", in, 4, NULL, 0));
            pat_drop(g, f);
            break;
        }
    }
    return NULL;
}

cort_status *cort_pass_fuse_matmul_gelu(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, n, "cort", "Gelu")) continue;
        cort_node *f = pat_producer_of(g, x, n->in_slot[0], "cort", "FusedMatMul", 1);
        if (!f) continue;
        int has_act = 0;
        for (size_t a = 0; a < f->ir->n_attrs; a++) has_act |= !strcmp(f->ir->attrs[a].name, "activation");
        if (has_act || f->ir->n_attrs > 1) continue;
        cort_attr_ir at[2];
        size_t na = f->ir->n_attrs;
        if (na) at[0] = f->ir->attrs[0];
        at[na++] = pat_attr_i("activation", 1);
        int32_t in[4];
        size_t nin = f->n_inputs;
        memcpy(in, f->in_slot, nin * sizeof *in);
        CORT_TRY(pat_rewrite(g, n, "FusedMatMul", in, nin, at, na));
        pat_drop(g, f);
    }
    return NULL;
}

/* cort.Gelu(MatMul(A, B) (, bias)) with B constant -> cort.FusedMatMul(A, B (, bias)) activation=GELU,
 * taking over the MatMul's packed B: the gemm starts from the bias and applies GELU to each tile
 * while it is in L1 instead of two more passes over the product (a transformer's FFN) */
cort_status *cort_pass_fuse_packed_matmul_gelu(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, n, "cort", "Gelu") || n->n_inputs > 2) continue;
        cort_node *mm = pat_producer_of(g, x, n->in_slot[0], "", "MatMul", 1);
        if (!mm || !pat_matmul_float(g, mm) || !g->consts[mm->in_slot[1]]) continue;
        const int has_bias = n->n_inputs == 2 && n->in_slot[1] >= 0;
        const cort_attr_ir at = pat_attr_i("activation", 1);
        int32_t in[3] = { mm->in_slot[0], mm->in_slot[1], has_bias ? n->in_slot[1] : -1 };
        CORT_TRY(pat_rewrite_as(g, n, "cort", "FusedMatMul", 1, in, has_bias ? 3 : 2, &at, 1, mm));
        pat_drop(g, mm);
    }
    return NULL;
}

cort_status *cort_pass_fuse_matmul_bias_dynamic(cort_graph *g, cort_pass_index *x) { return fuse_matmul_bias(g, x, 0); }
cort_status *cort_pass_fuse_matmul_bias_packed(cort_graph *g, cort_pass_index *x) { return fuse_matmul_bias(g, x, 1); }
