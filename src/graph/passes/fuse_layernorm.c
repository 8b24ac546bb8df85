/* LayerNorm (level 2):
 *   ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul gamma)(/Add beta) over the last axis
 *                                               -> cort.LayerNorm(X, gamma, beta) epsilon
 *   cort.LayerNorm(a + (b + bias))              -> cort.LayerNorm(a, gamma, beta, b, bias)
 * (src/providers/cpu/ops/fused/layer_norm.c). */
#include <math.h>
#include <string.h>
#include "pattern.h"

/* ReduceMean over exactly the last axis with keepdims, reading slot `in`. */
static int mean_last_axis(const cort_graph *g, const cort_node *r, int32_t in, int rank) {
    if (r->n_inputs < 1 || r->in_slot[0] != in || cort_attr_int(r, "keepdims", 1) != 1) return 0;
    const int64_t *axes = NULL;
    size_t na = cort_attr_ints(r, "axes", &axes);
    int64_t ax;
    if (na) {
        if (na != 1) return 0;
        ax = axes[0];
    } else {
        if (r->n_inputs < 2 || r->in_slot[1] < 0) return 0;
        const cort_value *v = g->slot_info[r->in_slot[1]].value;
        if (!v || v->kind != CORT_VKIND_TENSOR || v->type != CORT_TYPE_INT64 || v->count != 1) return 0;
        ax = *(const int64_t *)v->data;
    }
    return ax == -1 || ax == rank - 1;
}

cort_status *cort_pass_fuse_layernorm(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *dv = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, dv, "", "Div") || dv->n_inputs != 2) continue;
        int32_t ds = dv->in_slot[0], ss = dv->in_slot[1];
        float eps, two;
        cort_node *sq = pat_producer_of(g, x, ss, "", "Sqrt", 1);
        cort_node *ae = sq ? pat_producer_of(g, x, sq->in_slot[0], "", "Add", 1) : NULL;
        if (!ae || ae->n_inputs != 2) continue;
        int32_t vs = -1;
        for (int s = 0; s < 2 && vs < 0; s++)
            if (pat_const_scalar(g, ae->in_slot[1 - s], &eps)) vs = ae->in_slot[s];
        if (vs < 0 || !(eps >= 0) || !isfinite(eps)) continue;
        cort_node *rv = pat_producer_of(g, x, vs, "", "ReduceMean", 1);
        cort_node *pw = rv ? pat_producer_of(g, x, rv->in_slot[0], "", "Pow", 1) : NULL;
        if (!pw || pw->n_inputs != 2 || pw->in_slot[0] != ds || !pat_const_scalar(g, pw->in_slot[1], &two) ||
            two != 2.0f)
            continue;
        cort_node *sb = pat_producer_of(g, x, ds, "", "Sub", 2);
        if (!sb || sb->n_inputs != 2) continue;
        int32_t xs = sb->in_slot[0];
        cort_node *rm = pat_producer_of(g, x, sb->in_slot[1], "", "ReduceMean", 1);
        const cort_tinfo *xt = xs >= 0 ? &g->slot_info[xs] : NULL;
        if (!rm || !xt || xt->elem != CORT_TYPE_FLOAT || xt->rank < 1 || xt->dims[xt->rank - 1] <= 0) continue;
        int rank = xt->rank;
        int64_t c = xt->dims[rank - 1];
        if (!mean_last_axis(g, rm, xs, rank) || !mean_last_axis(g, rv, pw->out_slot[0], rank)) continue;
        /* the chain must keep X's shape (no broadcasting by the scalars) */
        if (g->slot_info[dv->out_slot[0]].rank != rank) continue;
        cort_node *last = dv, *mul = NULL, *add = NULL;
        int32_t gamma = -1, beta = -1;
        cort_node *cand = pat_sole_consumer(g, x, dv->out_slot[0], "Mul");
        if (cand && pat_const_row(g, pat_other_input(cand, dv->out_slot[0]), c, rank)) {
            mul = cand;
            gamma = pat_other_input(cand, dv->out_slot[0]);
            last = mul;
        }
        cand = pat_sole_consumer(g, x, last->out_slot[0], "Add");
        if (cand && pat_const_row(g, pat_other_input(cand, last->out_slot[0]), c, rank)) {
            add = cand;
            beta = pat_other_input(cand, last->out_slot[0]);
            last = add;
        }
        int32_t in[3] = { xs, gamma, beta };
        cort_attr_ir a = pat_attr_f("epsilon", eps);
        CORT_TRY(pat_rewrite(g, last, "LayerNorm", in, beta >= 0 ? 3 : gamma >= 0 ? 2 : 1, &a, 1));
        pat_drop(g, rm);
        pat_drop(g, sb);
        pat_drop(g, pw);
        pat_drop(g, rv);
        pat_drop(g, ae);
        pat_drop(g, sq);
        if (last != dv) pat_drop(g, dv);
        if (mul && last != mul) pat_drop(g, mul);
    }
    return NULL;
}

/* cort.LayerNorm(Add(a, Add(b, bias))) -> cort.LayerNorm(a, gamma, beta, skip = b, bias): the
 * residual sum and the preceding MatMul's bias are formed in the normalization's first pass. */
cort_status *cort_pass_fuse_skip_layernorm(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *ln = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, ln, "cort", "LayerNorm") || ln->n_inputs > 3) continue;
        int32_t xs = ln->in_slot[0];
        cort_node *add = pat_producer_of(g, x, xs, "", "Add", 1);
        if (!add || add->n_inputs != 2) continue;
        const cort_tinfo *xt = &g->slot_info[xs];
        int32_t a = add->in_slot[0], b = add->in_slot[1];
        if (a < 0 || b < 0 || a == b || !pat_same_static_shape(&g->slot_info[a], xt) ||
            !pat_same_static_shape(&g->slot_info[b], xt) || g->slot_info[a].elem != CORT_TYPE_FLOAT ||
            g->slot_info[b].elem != CORT_TYPE_FLOAT)
            continue;
        int32_t v = -1, bias = -1;
        cort_node *ba = pat_bias_add(g, x, b, xt->dims[xt->rank - 1], xt->rank, &v, &bias);
        if (ba) b = v;
        else if ((ba = pat_bias_add(g, x, a, xt->dims[xt->rank - 1], xt->rank, &v, &bias))) a = v;
        int32_t in[5] = { a, ln->n_inputs > 1 ? ln->in_slot[1] : -1, ln->n_inputs > 2 ? ln->in_slot[2] : -1, b, bias };
        cort_attr_ir at = ln->ir->attrs[0];
        CORT_TRY(pat_rewrite(g, ln, "LayerNorm", in, bias >= 0 ? 5 : 4, &at, 1));
        pat_drop(g, add);
        if (ba) pat_drop(g, ba);
    }
    return NULL;
}
