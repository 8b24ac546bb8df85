/* Residual Adds into the epilogue of the conv before them (level 2; ops with CORT_OP_FUSES_SUM). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "passes.h"
#include "../provider.h"

/* Conv -> Add(conv, r) where the Add is the conv output's only consumer and r has the output's
 * exact static shape: the conv adds r in its epilogue (before any activation fused next, so
 * ResNet's Conv + Add + Relu becomes one node). */
cort_status *cort_pass_fuse_residual(cort_graph *g, cort_pass_index *x) {
    (void)x;
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !n->op || !(n->op->flags & CORT_OP_FUSES_SUM) || n->act || n->sum_input || n->n_outputs != 1)
            continue;
        int32_t s = n->out_slot[0];
        if (s < 0 || g->slot_info[s].elem != CORT_TYPE_FLOAT || cort_graph_is_output(g->ir, g->slot_names[s])) continue;
        size_t j = 0;
        if (cort_graph_consumers(g, s, &j) != 1) continue;
        cort_node *a = &g->nodes[j];
        if (a->domain[0] || strcmp(a->op_type, "Add") || a->n_inputs != 2 || a->out_slot[0] < 0 || j <= i) continue;
        const int32_t r = a->in_slot[0] == s ? a->in_slot[1] : a->in_slot[0];
        if (r < 0 || r == s) continue;
        const cort_tinfo *ti = &g->slot_info[s], *tr = &g->slot_info[r];
        int same = ti->kind == CORT_VKIND_TENSOR && tr->kind == CORT_VKIND_TENSOR && tr->elem == CORT_TYPE_FLOAT &&
                   ti->rank >= 0 && ti->rank == tr->rank;
        for (int d = 0; same && d < ti->rank; d++) same = ti->dims[d] >= 0 && ti->dims[d] == tr->dims[d];
        if (!same) continue;
        /* the addend must exist when the conv runs; if a node between the two produces it (an FPN's
         * Resize), run the conv later, right before the Add: only the Add reads its output, so the
         * order stays valid (not across nodes with subgraphs, which keep pointers to their node) */
        int later = 0, movable = 1;
        for (size_t k = i + 1; k < j; k++) {
            for (size_t o = 0; o < g->nodes[k].n_outputs; o++) later |= g->nodes[k].out_slot[o] == r;
            movable &= g->nodes[k].n_implicit == 0;
        }
        if (later && !movable) continue;
        if (later) {
            cort_node moved = *n;
            const uint8_t moved_skip = g->skip[i];
            memmove(&g->nodes[i], &g->nodes[i + 1], (j - 1 - i) * sizeof *g->nodes);
            memmove(&g->skip[i], &g->skip[i + 1], (j - 1 - i) * sizeof *g->skip);
            g->nodes[j - 1] = moved;
            g->skip[j - 1] = moved_skip;
            for (size_t k = i; k < j; k++) g->nodes[k].index = k;
            n = &g->nodes[j - 1];
            a = &g->nodes[j];
            i--;   /* position i now holds the next node: look at it again */
        }
        /* the addend goes after every input the op can take (X, W, B for Conv), missing ones as -1 */
        const size_t at = n->n_inputs > 3 ? n->n_inputs : 3;
        int32_t *in = cort_arena_alloc(g->arena, (at + 2) * sizeof *in);
        if (!in) return cort_error_oom();
        for (size_t k = 0; k < at; k++) in[k] = k < n->n_inputs ? n->in_slot[k] : -1;
        in[at] = r;
        n->in_slot = in;
        n->sum_input = at;
        n->n_inputs = at + 1;
        n->out_slot[0] = a->out_slot[0];
        g->skip[j] = 1;
    }
    return NULL;
}
