/* The dynamic quantizer's int MatMul tail (level 2):
 *   Mul(Cast<float>(MatMulInteger(A, B, a_zp, b_zp)), Mul(a_scale, b_scale))
 *     -> com.microsoft.MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp, b_zp)
 * which writes float(acc) * (a_scale * b_scale[n]) from each finished GEMM tile: the same float
 * operations as the nodes (the scale product rounded once as the Mul node rounds it, then one
 * rounding per element), so the outputs are equal bit for bit, while the int32 product and its
 * float copy never reach memory. The bias Add after it stays: the LayerNorm and Gelu passes fold
 * it (taking it here would change which of their kernels runs, and so the model's bytes). The fused node takes
 * over MatMulInteger's packed B (same B and zero point values). Fires when B is a constant 2-D
 * 8-bit matrix, a_scale and a_zp are scalars, b_scale is a constant scalar or [N] vector and every
 * intermediate value is read only inside the pattern. */
#include <string.h>
#include "pattern.h"
#include "../provider.h"

static int slot_count_is(const cort_graph *g, int32_t s, size_t want) {
    if (s < 0) return 0;
    const cort_tinfo *t = &g->slot_info[s];
    if (t->rank < 0 || !cort_tinfo_shape_known(t)) return 0;
    size_t c = 1;
    for (int i = 0; i < t->rank; i++) c *= (size_t)t->dims[i];
    return c == want;
}

static int is_node(const cort_node *n, const char *op) { return n && !n->domain[0] && !strcmp(n->op_type, op); }

/* The executed producer of s if it is default-domain `op` and s is read once. */
static cort_node *sole_producer(cort_graph *g, const cort_pass_index *x, int32_t s, const char *op) {
    if (s < 0 || x->producer[s] < 0 || x->uses[s] != 1) return NULL;
    cort_node *n = &g->nodes[x->producer[s]];
    return is_node(n, op) && n->n_outputs == 1 && !n->n_implicit && n->provider &&
                   (n->provider->caps & CORT_PROVIDER_PATTERNS)
               ? n
               : NULL;
}

static cort_status *try_fuse(cort_graph *g, cort_pass_index *x, cort_node *mul) {
    for (int side = 0; side < 2; side++) {
        const int32_t cs = mul->in_slot[side], ss = mul->in_slot[1 - side];
        cort_node *cast = sole_producer(g, x, cs, "Cast");
        if (!cast || cast->n_inputs != 1 || cort_attr_int(cast, "to", 0) != CORT_TYPE_FLOAT) continue;
        cort_node *mm = sole_producer(g, x, cast->in_slot[0], "MatMulInteger");
        if (!mm || mm->n_inputs < 2 || mm->in_slot[0] < 0 || mm->in_slot[1] < 0) continue;
        const cort_value *b = g->slot_info[mm->in_slot[1]].value;
        if (!b || b->kind != CORT_VKIND_TENSOR || b->rank != 2 ||
            (b->type != CORT_TYPE_UINT8 && b->type != CORT_TYPE_INT8))
            continue;
        const size_t N = (size_t)b->shape[1];
        const int32_t az = mm->n_inputs > 2 ? mm->in_slot[2] : -1, bz = mm->n_inputs > 3 ? mm->in_slot[3] : -1;
        if (az >= 0 && !slot_count_is(g, az, 1)) continue;
        /* the scale: Mul(a_scale scalar, b_scale constant scalar or [N]), either order */
        if (ss < 0 || x->producer[ss] < 0) continue;
        cort_node *sm = &g->nodes[x->producer[ss]];
        if (!pat_is_op(g, sm, "", "Mul") || sm->n_inputs != 2) continue;
        int32_t as = -1, bs = -1;
        for (int k = 0; k < 2; k++) {
            const cort_value *c = g->slot_info[sm->in_slot[k]].value;
            const int32_t o = sm->in_slot[1 - k];
            if (c && c->kind == CORT_VKIND_TENSOR && c->type == CORT_TYPE_FLOAT &&
                (c->count == 1 || (c->rank == 1 && c->count == N)) && o >= 0 &&
                g->slot_info[o].elem == CORT_TYPE_FLOAT && slot_count_is(g, o, 1)) {
                as = o;
                bs = sm->in_slot[k];
                break;
            }
        }
        if (as < 0 || !pat_same_static_shape(&g->slot_info[cs], &g->slot_info[mul->out_slot[0]])) continue;
        const int32_t in[6] = { mm->in_slot[0], mm->in_slot[1], as, bs, az, bz };
        const int32_t scale_uses = x->uses[ss];
        CORT_TRY(pat_rewrite_as(g, mul, "com.microsoft", "MatMulIntegerToFloat", 1, in, 6, NULL, 0, mm));
        pat_drop(g, mm);
        pat_drop(g, cast);
        if (scale_uses == 1) pat_drop(g, sm);
        return pat_index_build(g, x);
    }
    return NULL;
}

cort_status *cort_pass_fuse_int_matmul(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, n, "", "Mul") || n->n_inputs != 2) continue;
        CORT_TRY(try_fuse(g, x, n));
    }
    return NULL;
}

/* cort.Gelu(MatMulIntegerToFloat(...) (, bias)) -> MatMulIntegerToFloat(..., bias) with node->act GELU:
 * the tile epilogue adds the bias and applies GELU to each tile while it is in L1 (a transformer's
 * FFN), instead of a pass over the product. The same float operations in the same order, per
 * element, as cort.Gelu's row pass; GELU's kernels compute every element of a vector the same way
 * but the last elements of a row may take a scalar tail, so the product's width (the row) must be a
 * multiple of 16: then every tile's columns (multiples of 16 wide) and every row split alike run in
 * vectors only (test_fuse checks the bytes against the unfused node). */
cort_status *cort_pass_fuse_int_matmul_gelu(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !pat_is_op(g, n, "cort", "Gelu") || n->n_inputs < 1 || n->n_inputs > 2) continue;
        cort_node *mm = pat_producer_of(g, x, n->in_slot[0], "com.microsoft", "MatMulIntegerToFloat", 1);
        if (!mm || mm->act || mm->n_inputs < 4 || mm->n_inputs > 7 || mm->n_implicit) continue;
        const cort_tinfo *t = &g->slot_info[n->in_slot[0]];
        if (t->rank < 1 || !cort_tinfo_shape_known(t) || t->dims[t->rank - 1] <= 0 || t->dims[t->rank - 1] % 16) continue;
        const int32_t gb = n->n_inputs == 2 ? n->in_slot[1] : -1, mb = mm->n_inputs == 7 ? mm->in_slot[6] : -1;
        if (gb >= 0 && (mb >= 0 || !slot_count_is(g, gb, (size_t)t->dims[t->rank - 1]))) continue;
        int32_t in[7] = { -1, -1, -1, -1, -1, -1, -1 };
        for (size_t k = 0; k < mm->n_inputs; k++) in[k] = mm->in_slot[k];
        if (gb >= 0) in[6] = gb;
        CORT_TRY(pat_rewrite_as(g, n, "com.microsoft", "MatMulIntegerToFloat", mm->opset, in, 7, mm->ir->attrs,
                                mm->ir->n_attrs, mm));
        n->act = CORT_ACT_GELU;
        pat_drop(g, mm);
        CORT_TRY(pat_index_build(g, x));
    }
    return NULL;
}
