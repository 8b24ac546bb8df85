#include <math.h>
#include <string.h>
#include "pattern.h"

/* Mul(x, HardSigmoid(x; alpha = 1/6, beta = 0.5)) -> HardSwish(x) (opset-14 kernel; older exporters
 * decompose it like this). */
cort_status *cort_pass_fuse_hardswish(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *m = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, m, "", "Mul") || m->n_inputs != 2) continue;
        for (int side = 0; side < 2; side++) {
            cort_node *hs = pat_producer_of(g, x, m->in_slot[side], "", "HardSigmoid", 1);
            int32_t xs = m->in_slot[1 - side];
            if (!hs || hs->n_inputs != 1 || hs->in_slot[0] != xs || cort_attr_float(hs, "alpha", 0.2f) != 1.0f / 6.0f ||
                cort_attr_float(hs, "beta", 0.5f) != 0.5f)
                continue;
            int32_t in[1] = { xs };
            CORT_TRY(pat_rewrite_as(g, m, "", "HardSwish", 14, in, 1, NULL, 0, NULL));
            pat_drop(g, hs);
            break;
        }
    }
    return NULL;
}
