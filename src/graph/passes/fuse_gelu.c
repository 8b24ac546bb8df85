/* GELU (level 2):
 *   x*0.5*(1+erf(x/sqrt2)) (both Mul orders)    -> cort.Gelu(x)
 *   cort.Gelu(v + bias)                         -> cort.Gelu(v, bias)
 * (src/providers/cpu/ops/fused/gelu.c). */
#include <math.h>
#include <string.h>
#include "pattern.h"

static int near(float v, double want) { return fabs((double)v - want) <= 1e-6 * fabs(want); }

cort_status *cort_pass_fuse_gelu(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *e = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, e, "", "Erf") || e->n_inputs != 1) continue;
        /* d = h / sqrt(2) or h * (1/sqrt(2)) */
        int32_t ds = e->in_slot[0], h = -1;
        float c;
        cort_node *dn = pat_producer_of(g, x, ds, "", "Div", 1);
        if (dn && dn->n_inputs == 2 && pat_const_scalar(g, dn->in_slot[1], &c) && near(c, M_SQRT2)) h = dn->in_slot[0];
        if (!dn && (dn = pat_producer_of(g, x, ds, "", "Mul", 1)) && dn->n_inputs == 2)
            for (int s = 0; s < 2 && h < 0; s++)
                if (pat_const_scalar(g, dn->in_slot[1 - s], &c) && near(c, M_SQRT1_2)) h = dn->in_slot[s];
        if (h < 0 || g->slot_info[h].elem != CORT_TYPE_FLOAT) continue;
        /* a = erf + 1 */
        cort_node *an = pat_sole_consumer(g, x, e->out_slot[0], "Add");
        if (!an || !pat_const_scalar(g, pat_other_input(an, e->out_slot[0]), &c) || c != 1.0f) continue;
        /* y = (h * 0.5) * a, or (h * a) * 0.5 */
        cort_node *m = pat_sole_consumer(g, x, an->out_slot[0], "Mul"), *half = NULL, *last = NULL;
        if (!m) continue;
        int32_t o = pat_other_input(m, an->out_slot[0]);
        if (o < 0) continue;
        if (o == h) {
            last = pat_sole_consumer(g, x, m->out_slot[0], "Mul");
            if (!last || !pat_const_scalar(g, pat_other_input(last, m->out_slot[0]), &c) || c != 0.5f) continue;
        } else {
            half = pat_producer_of(g, x, o, "", "Mul", 1);
            if (!half || pat_other_input(half, h) < 0 || !pat_const_scalar(g, pat_other_input(half, h), &c) ||
                c != 0.5f)
                continue;
            last = m;
        }
        /* every constant must be a scalar that does not raise the rank */
        const cort_tinfo *ht = &g->slot_info[h], *yt = &g->slot_info[last->out_slot[0]];
        if (!pat_same_static_shape(ht, yt) && !(ht->rank >= 0 && ht->rank == yt->rank)) continue;
        int32_t in[1] = { h };
        CORT_TRY(pat_rewrite(g, last, "Gelu", in, 1, NULL, 0));
        pat_drop(g, dn);
        pat_drop(g, e);
        pat_drop(g, an);
        if (half) pat_drop(g, half);
        if (m != last) pat_drop(g, m);
    }
    return NULL;
}

/* cort.Gelu(Add(v, bias)) -> cort.Gelu(v, bias) */
cort_status *cort_pass_fuse_bias_gelu(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, n, "cort", "Gelu") || n->n_inputs != 1) continue;
        const cort_tinfo *t = &g->slot_info[n->in_slot[0]];
        if (t->rank < 1 || t->dims[t->rank - 1] <= 0) continue;
        int32_t v = -1, bias = -1;
        cort_node *ba = pat_bias_add(g, x, n->in_slot[0], t->dims[t->rank - 1], t->rank, &v, &bias);
        if (!ba) continue;
        int32_t in[2] = { v, bias };
        CORT_TRY(pat_rewrite(g, n, "Gelu", in, 2, NULL, 0));
        pat_drop(g, ba);
    }
    return NULL;
}
