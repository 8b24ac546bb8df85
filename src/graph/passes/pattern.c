/* Helpers shared by the level-2 pattern passes (passes/fuse_*.c): see pattern.h. */
#include <math.h>
#include <string.h>
#include "pattern.h"
#include "../provider.h"

cort_status *pat_index_build(const cort_graph *g, cort_pass_index *x) {
    if (!x->producer) {
        x->producer = cort_malloc((g->n_slots + 1) * 3 * sizeof(int32_t));
        if (!x->producer) return cort_error_oom();
        x->uses = x->producer + g->n_slots + 1;
        x->consumer = x->uses + g->n_slots + 1;
    }
    for (size_t s = 0; s < g->n_slots; s++) { x->producer[s] = -1; x->uses[s] = 0; x->consumer[s] = -1; }
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->skip[i]) continue;
        const cort_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->out_slot[k] >= 0) x->producer[n->out_slot[k]] = (int32_t)i;
        for (size_t k = 0; k < n->n_inputs + n->n_implicit; k++) {
            int32_t s = k < n->n_inputs ? n->in_slot[k] : n->implicit_slot[k - n->n_inputs];
            if (s < 0) continue;
            if (x->consumer[s] < 0) x->consumer[s] = (int32_t)i;
            x->uses[s]++;
        }
    }
    for (size_t i = 0; i < g->ir->n_outputs; i++) {
        int32_t s = cort_namemap_get(&g->names, g->ir->outputs[i].name);
        if (s >= 0) x->uses[s] += PAT_OUTPUT_USE;
    }
    return NULL;
}

/* Whether n is a node of (domain, op) on a pattern provider (the CPU) with float output 0. */
int pat_is_op(const cort_graph *g, const cort_node *n, const char *domain, const char *op) {
    return n && !strcmp(n->op_type, op) && !strcmp(n->domain, domain) && n->provider &&
           (n->provider->caps & CORT_PROVIDER_PATTERNS) &&
           !n->act && n->n_outputs == 1 && n->out_slot[0] >= 0 && !n->n_implicit &&
           g->slot_info[n->out_slot[0]].elem == CORT_TYPE_FLOAT;
}

/* The executed producer of slot s if it is (domain, op) and s is read exactly `uses` times. */
cort_node *pat_producer_of(cort_graph *g, const cort_pass_index *x, int32_t s, const char *domain, const char *op,
                           int32_t uses) {
    if (s < 0 || x->producer[s] < 0 || x->uses[s] != uses) return NULL;
    cort_node *n = &g->nodes[x->producer[s]];
    return pat_is_op(g, n, domain, op) ? n : NULL;
}

/* The only consumer of slot s if it is (domain, op). */
cort_node *pat_sole_consumer(cort_graph *g, const cort_pass_index *x, int32_t s, const char *op) {
    if (s < 0 || x->uses[s] != 1 || x->consumer[s] < 0) return NULL;
    cort_node *n = &g->nodes[x->consumer[s]];
    return pat_is_op(g, n, "", op) ? n : NULL;
}

/* A constant float scalar (any shape with one element). */
int pat_const_scalar(const cort_graph *g, int32_t s, float *v) {
    if (s < 0) return 0;
    const cort_value *c = g->slot_info[s].value;
    if (!c || c->kind != CORT_VKIND_TENSOR || c->type != CORT_TYPE_FLOAT || c->count != 1) return 0;
    *v = *(const float *)c->data;
    return 1;
}

/* A constant float vector broadcasting only along the last axis of a rank-`rank` value: count == c,
 * last dim == c, rank <= rank. */
int pat_const_row(const cort_graph *g, int32_t s, int64_t c, int rank) {
    if (s < 0 || c <= 0) return 0;
    const cort_value *v = g->slot_info[s].value;
    return v && v->kind == CORT_VKIND_TENSOR && v->type == CORT_TYPE_FLOAT && v->rank >= 1 &&
           (int)v->rank <= rank && v->count == (size_t)c && v->shape[v->rank - 1] == c;
}

/* Input slot of binary node n other than s (-1 if n does not read s exactly once). */
int32_t pat_other_input(const cort_node *n, int32_t s) {
    if (n->n_inputs != 2) return -1;
    if (n->in_slot[0] == s && n->in_slot[1] != s) return n->in_slot[1];
    if (n->in_slot[1] == s && n->in_slot[0] != s) return n->in_slot[0];
    return -1;
}

int pat_same_static_shape(const cort_tinfo *a, const cort_tinfo *b) {
    if (a->rank < 0 || a->rank != b->rank || !cort_tinfo_shape_known(a) || !cort_tinfo_shape_known(b)) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* Turns `keep` into domain.<op_type>(in...) of the given opset with the given attributes; its output
 * slot stays. */
cort_status *pat_rewrite_as(cort_graph *g, cort_node *keep, const char *domain, const char *op_type, int opset,
                            const int32_t *in, size_t n_in, const cort_attr_ir *attrs, size_t n_attrs,
                            cort_node *adopt) {
    const cort_op_def *op = cort_graph_provider_find(g, keep, domain, op_type, opset);
    if (!op) return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "fused operator %s.%s is not registered", domain, op_type);
    cort_node_ir *ir = cort_arena_alloc(g->arena, sizeof *ir);
    int32_t *slots = cort_arena_alloc(g->arena, (n_in + 1) * sizeof *slots);
    const char **names = cort_arena_alloc(g->arena, (n_in + 1) * sizeof *names);
    cort_attr_ir *at = cort_arena_alloc(g->arena, (n_attrs + 1) * sizeof *at);
    if (!ir || !slots || !names || !at) return cort_error_oom();
    /* inputs the adopted state packed stay packed (by slot: the fused op numbers them its own way) */
    uint32_t packed = 0;
    for (size_t k = 0; adopt && k < n_in && k < 32; k++)
        for (size_t j = 0; j < adopt->n_inputs && j < 32; j++)
            if (in[k] >= 0 && in[k] == adopt->in_slot[j] && ((adopt->const_packed >> j) & 1)) packed |= (uint32_t)1 << k;
    *ir = *keep->ir;
    ir->op_type = op->name;
    ir->domain = domain;
    for (size_t k = 0; k < n_in; k++) {
        slots[k] = in[k];
        names[k] = in[k] >= 0 ? g->slot_names[in[k]] : "";
    }
    ir->inputs = names;
    ir->n_inputs = n_in;
    ir->n_outputs = 1;
    if (n_attrs) memcpy(at, attrs, n_attrs * sizeof *at);
    ir->attrs = at;
    ir->n_attrs = n_attrs;
    if (keep->op && keep->op->free_state && keep->state) keep->op->free_state(keep->state);
    keep->state = NULL;
    keep->ir = ir;
    keep->op_type = ir->op_type;
    keep->domain = domain;
    keep->opset = opset;
    keep->op = op;
    keep->n_inputs = n_in;
    keep->in_slot = slots;
    keep->n_outputs = 1;
    keep->act = 0;
    keep->const_packed = packed;
    if (adopt) {   /* the fused op's state is the one `adopt` already made (e.g. its packed weights) */
        keep->state = adopt->state;
        adopt->state = NULL;
        return NULL;
    }
    if (op->init) CORT_TRY(op->init(keep, &keep->state));
    return NULL;
}

/* Marks n as not executed and releases its state now rather than with the graph (nothing reads the
 * state of a skipped node). */
void pat_drop(cort_graph *g, cort_node *n) {
    g->skip[n->index] = 1;
    if (n->op && n->op->free_state && n->state) n->op->free_state(n->state);
    n->state = NULL;
}

cort_status *pat_rewrite(cort_graph *g, cort_node *keep, const char *op_type, const int32_t *in, size_t n_in,
                         const cort_attr_ir *attrs, size_t n_attrs) {
    return pat_rewrite_as(g, keep, "cort", op_type, 1, in, n_in, attrs, n_attrs, NULL);
}

cort_attr_ir pat_attr_f(const char *name, float f) {
    cort_attr_ir a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = CORT_ATTR_FLOAT;
    a.f = f;
    return a;
}

cort_attr_ir pat_attr_i(const char *name, int64_t i) {
    cort_attr_ir a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = CORT_ATTR_INT;
    a.i = i;
    return a;
}

/* A float MatMul whose B is computed at run time (attention). MatMul packs a constant B once at
 * creation; replacing it would pack the weights a second time, and the bias is then better fused
 * downstream (LayerNorm's skip/bias inputs, Gelu's bias) while MatMul keeps its packed B. */
int pat_matmul_float(const cort_graph *g, const cort_node *mm) {
    return mm->n_inputs == 2 && mm->in_slot[0] >= 0 && mm->in_slot[1] >= 0 &&
           g->slot_info[mm->in_slot[0]].elem == CORT_TYPE_FLOAT && g->slot_info[mm->in_slot[1]].elem == CORT_TYPE_FLOAT;
}

/* If slot s is Add(v, bias row of length c) read only once, the Add node and v's slot. */
cort_node *pat_bias_add(cort_graph *g, const cort_pass_index *x, int32_t s, int64_t c, int rank, int32_t *v,
                        int32_t *bias) {
    cort_node *a = pat_producer_of(g, x, s, "", "Add", 1);
    if (!a || a->n_inputs != 2) return NULL;
    for (int side = 0; side < 2; side++) {
        int32_t in = a->in_slot[side], b = a->in_slot[1 - side];
        if (in < 0 || !pat_const_row(g, b, c, rank) || !pat_same_static_shape(&g->slot_info[in], &g->slot_info[s]))
            continue;
        *v = in;
        *bias = b;
        return a;
    }
    return NULL;
}
