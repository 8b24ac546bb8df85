/* QDQ chains of elementwise ops as byte tables (level 2, after kernels are built):
 *   QuantizeLinear(f_k(... f_1(DequantizeLinear(x)) ...))  ->  cort.QLut(x)
 * where each f_i is an elementwise float op of one non-constant input (its other inputs constant
 * scalars, of rank 0 unless the value's rank is known to be at least theirs: Erf(x / sqrt2) of a QDQ
 * transformer's GELU, a Sigmoid, Sqrt(v + eps), ...), every
 * intermediate read once, and the DQ and Q per tensor. The result is a function of x's byte alone,
 * so the pass evaluates it once for the 256 bytes with the nodes' own kernels (DQ, each f_i, Q) and
 * the new node looks it up (src/providers/cpu/ops/quant/qlut.c): what each element would have
 * computed, without the float tensors between. A kernel may take a different code path for a
 * vector's tail than for its body; the table gives every element the body's value. */
#include <string.h>
#include "pattern.h"
#include "../provider.h"
#include "../../core/alloc.h"

#define LUT_CHAIN_MAX 6

static const char *const unary_ops[] = { "Abs", "Ceil", "Celu", "Clip", "Cos", "Elu", "Erf", "Exp", "Floor", "Gelu",
                                         "HardSigmoid", "HardSwish", "LeakyRelu", "Log", "Mish", "Neg", "Reciprocal",
                                         "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin", "Softplus", "Softsign",
                                         "Sqrt", "Tan", "Tanh" };
static const char *const binary_ops[] = { "Add", "Div", "Max", "Min", "Mul", "Pow", "Sub" };

static int in_list(const char *op, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(op, list[i])) return 1;
    return 0;
}

static const cort_value *const_tensor(const cort_graph *g, int32_t s) {
    const cort_value *v = s >= 0 ? g->consts[s] : NULL;
    return v && v->kind == CORT_VKIND_TENSOR && (v->data || v->lazy_src) ? v : NULL;
}

/* The one non-constant input of elementwise node n (its other inputs constant scalars of rank at most
 * the value's, so the output has the value's shape), or -1. */
static int32_t lut_input(const cort_graph *g, const cort_node *n) {
    const int unary = in_list(n->op_type, unary_ops, sizeof unary_ops / sizeof unary_ops[0]);
    if (!unary && !in_list(n->op_type, binary_ops, sizeof binary_ops / sizeof binary_ops[0])) return -1;
    if (!pat_is_op(g, n, "", n->op_type) || (!unary && n->n_inputs != 2)) return -1;
    int32_t v = -1;
    for (size_t i = 0; i < n->n_inputs; i++) {
        const int32_t s = n->in_slot[i];
        if (s < 0) continue;
        const cort_value *c = const_tensor(g, s);
        if (c) {
            if (c->count != 1 || c->type != CORT_TYPE_FLOAT) return -1;
            continue;
        }
        if (v >= 0 || i != 0) return -1;   /* the value first (Sub(c, x) and Div(c, x) stay as they are) */
        v = s;
    }
    if (v < 0 || g->slot_info[v].elem != CORT_TYPE_FLOAT) return -1;
    /* a constant of rank r > 0 broadcasts the value up to rank r: only where the value's rank is known
     * to be at least r (0-d constants always keep the value's shape) */
    for (size_t i = 1; i < n->n_inputs; i++)
        if (n->in_slot[i] >= 0 && g->consts[n->in_slot[i]]->rank > 0 &&
            (g->slot_info[v].rank < 0 || (int)g->consts[n->in_slot[i]]->rank > g->slot_info[v].rank))
            return -1;
    return v;
}

/* Per-tensor float scale and 8-bit zero point of a (De)QuantizeLinear node. */
static int qparams_scalar(const cort_graph *g, const cort_node *q) {
    if (q->n_inputs < 3 || q->in_slot[1] < 0 || q->in_slot[2] < 0 || q->n_outputs != 1 || q->out_slot[0] < 0) return 0;
    const cort_value *s = const_tensor(g, q->in_slot[1]), *z = const_tensor(g, q->in_slot[2]);
    return s && z && s->count == 1 && s->type == CORT_TYPE_FLOAT && z->count == 1 &&
           (z->type == CORT_TYPE_UINT8 || z->type == CORT_TYPE_INT8) && !cort_attr_int(q, "block_size", 0) &&
           !cort_attr_int(q, "output_dtype", 0) && q->provider && (q->provider->caps & CORT_PROVIDER_PATTERNS) &&
           !q->n_implicit;
}

/* Runs node n's kernel on `in` (its inputs, one replaced), serially; *out is its output 0. */
static cort_status *eval_node(const cort_node *n, cort_value *const *in, cort_value **out) {
    cort_value *outs[4] = { NULL, NULL, NULL, NULL };
    if (n->n_outputs > 4) return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "internal: too many outputs");
    cort_exec ex = { NULL, NULL, 0, NULL, NULL, NULL, NULL, 1u << 20 };
    cort_kernel_ctx ctx = { n, n->state, n->opset, in, n->n_inputs, outs, n->n_outputs, NULL, 0, NULL, &ex };
    cort_status *st = n->op->run(&ctx);
    for (size_t i = 1; i < 4; i++) cort_value_release(outs[i]);
    if (st) { cort_value_release(outs[0]); return st; }
    *out = outs[0];
    return NULL;
}

/* The table: the 256 bytes of x's type through dq, chain[k-1], ..., chain[0], q. 0 and *ok = 0 when
 * some kernel declines (the pattern is then left alone). */
static cort_status *eval_table(cort_graph *g, const cort_node *dq, cort_node *const *chain, size_t k, const cort_node *q,
                               cort_type xt, int64_t *table, int *ok) {
    *ok = 0;
    cort_value *cur = NULL, *next = NULL;
    const int64_t dims[1] = { 256 };
    CORT_TRY(cort_tensor_create(xt, dims, 1, &cur));
    uint8_t *b = cort_tensor_data(cur);
    for (size_t i = 0; i < 256; i++) b[i] = (uint8_t)i;
    cort_status *st = NULL;
    const cort_node *steps[LUT_CHAIN_MAX + 2];
    size_t ns = 0;
    steps[ns++] = dq;
    for (size_t i = k; i-- > 0;) steps[ns++] = chain[i];
    steps[ns++] = q;
    for (size_t i = 0; i < ns && !st; i++) {
        const cort_node *n = steps[i];
        cort_value *in[8] = { NULL };
        if (n->n_inputs > 8) { st = cort_error(CORT_ERROR_NOT_IMPLEMENTED, "internal: too many inputs"); break; }
        for (size_t j = 0; j < n->n_inputs; j++) {
            if (n->in_slot[j] < 0) continue;
            in[j] = j == 0 ? cur : g->consts[n->in_slot[j]];
            if (j && (st = cort_value_materialize(in[j]))) break;
        }
        if (st) break;
        next = NULL;
        st = eval_node(n, in, &next);
        if (st) break;
        cort_value_release(cur);
        cur = next;
        if (!cur || cur->kind != CORT_VKIND_TENSOR || cur->count != 256) break;
    }
    if (st) {
        const int oom = cort_status_code(st) == CORT_ERROR_OUT_OF_MEMORY;
        cort_value_release(cur);
        if (oom) return st;
        cort_status_free(st);
        return NULL;
    }
    if (cur && cur->kind == CORT_VKIND_TENSOR && cur->count == 256 &&
        (cur->type == CORT_TYPE_UINT8 || cur->type == CORT_TYPE_INT8)) {
        const uint8_t *r = cort_tensor_data(cur);
        for (size_t i = 0; i < 256; i++) table[i] = r[i];
        *ok = 1;
    }
    cort_value_release(cur);
    return NULL;
}

cort_status *cort_pass_fuse_qdq_lut(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *q = &g->nodes[i];
        if (g->skip[i] || q->domain[0] || strcmp(q->op_type, "QuantizeLinear") || !qparams_scalar(g, q)) continue;
        /* back from Q through the chain to a DQ */
        cort_node *chain[LUT_CHAIN_MAX], *dq = NULL;
        size_t k = 0;
        int32_t s = q->in_slot[0];
        while (s >= 0 && x->producer[s] >= 0 && x->uses[s] == 1) {
            cort_node *p = &g->nodes[x->producer[s]];
            if (!p->domain[0] && !strcmp(p->op_type, "DequantizeLinear")) { dq = p; break; }
            const int32_t in = k < LUT_CHAIN_MAX ? lut_input(g, p) : -1;
            if (in < 0) break;
            chain[k++] = p;
            s = in;
        }
        if (!dq || !k || !qparams_scalar(g, dq) || dq->in_slot[0] < 0) continue;
        const cort_type xt = g->slot_info[dq->in_slot[0]].elem, yt = g->consts[q->in_slot[2]]->type;
        if ((xt != CORT_TYPE_UINT8 && xt != CORT_TYPE_INT8) || xt != g->consts[dq->in_slot[2]]->type) continue;
        int64_t *table = cort_arena_alloc(g->arena, 256 * sizeof *table);
        if (!table) return cort_error_oom();
        int ok;
        CORT_TRY(eval_table(g, dq, chain, k, q, xt, table, &ok));
        if (!ok) continue;
        cort_attr_ir at[2];
        memset(at, 0, sizeof at);
        at[0].name = "table";
        at[0].type = CORT_ATTR_INTS;
        at[0].n = 256;
        at[0].ints = table;
        at[1] = pat_attr_i("to", yt);
        const int32_t in[1] = { dq->in_slot[0] };
        const int32_t dq_out = dq->out_slot[0];
        CORT_TRY(pat_rewrite_as(g, q, "cort", "QLut", 1, in, 1, at, 2, NULL));
        for (size_t c = 0; c < k; c++) pat_drop(g, chain[c]);
        if (x->uses[dq_out] == 1) pat_drop(g, dq);
        CORT_TRY(pat_index_build(g, x));
    }
    return NULL;
}
