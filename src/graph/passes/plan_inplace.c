/* In-place Concat (level 2): producers write straight into the Concat's output. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "passes.h"
#include "../provider.h"

/* Concat whose inputs are each the single-use output of its own producer that can write into a
 * view (Conv), along an axis with only 1s before it (so each input is one contiguous slice of
 * the output), all shapes static: the producers write straight into the Concat's output. */
cort_status *cort_pass_plan_inplace(cort_graph *g, cort_pass_index *x) {
    (void)x;
    for (size_t c = 0; c < g->n_nodes; c++) {
        cort_node *n = &g->nodes[c];
        if (g->skip[c] || n->domain[0] || strcmp(n->op_type, "Concat") || n->n_inputs < 2 || n->n_outputs != 1 ||
            n->out_slot[0] < 0 || n->opset < 4)
            continue;
        const cort_tinfo *o = &g->slot_info[n->out_slot[0]];
        if (o->kind != CORT_VKIND_TENSOR || o->elem != CORT_TYPE_FLOAT || o->rank < 1) continue;
        int64_t axis = cort_attr_int(n, "axis", 0);
        if (axis < 0) axis += o->rank;
        if (axis < 0 || axis >= o->rank) continue;
        int ok = 1;
        for (int d = 0; d < o->rank; d++) ok &= o->dims[d] >= 0 && (d >= axis || o->dims[d] == 1);
        size_t inner = 1;
        for (int d = (int)axis + 1; d < o->rank; d++) inner *= (size_t)o->dims[d];
        size_t prod[64];
        if (!ok || n->n_inputs > 64) continue;
        int64_t along = 0;
        for (size_t k = 0; k < n->n_inputs && ok; k++) {
            const int32_t s = n->in_slot[k];
            size_t first = 0;
            ok = s >= 0 && !cort_graph_is_output(g->ir, g->slot_names[s]) && cort_graph_consumers(g, s, &first) == 1;
            for (size_t q = 0; q < k && ok; q++) ok = n->in_slot[q] != s;
            const cort_tinfo *t = ok ? &g->slot_info[s] : NULL;
            ok = ok && t->kind == CORT_VKIND_TENSOR && t->elem == CORT_TYPE_FLOAT && t->rank == o->rank;
            for (int d = 0; ok && d < o->rank; d++) ok = t->dims[d] >= 0 && (d == axis || t->dims[d] == o->dims[d]);
            size_t p = c;
            for (size_t i = 0; ok && i < c; i++)
                if (!g->skip[i] && g->nodes[i].n_outputs == 1 && g->nodes[i].out_slot[0] == s) p = i;
            ok = ok && p < c && g->nodes[p].op && (g->nodes[p].op->flags & CORT_OP_OUTPUT_VIEW) &&
                 !g->nodes[p].has_out_view && g->nodes[p].provider &&
                 (g->nodes[p].provider->caps & CORT_PROVIDER_OUTPUT_VIEWS);
            if (ok) { prod[k] = p; along += t->dims[axis]; }
        }
        if (!ok || along != o->dims[axis]) continue;
        size_t off = 0;
        for (size_t k = 0; k < n->n_inputs; k++) {
            cort_node *p = &g->nodes[prod[k]];
            p->has_out_view = 1;
            p->out_view_slot = n->out_slot[0];
            p->out_view_offset = off;
            off += (size_t)g->slot_info[n->in_slot[k]].dims[axis] * inner;
        }
        n->concat_inplace = 1;
    }
    return NULL;
}
