/* Level-2 pattern fusions over a compiled graph (see graph.h). Each pattern keeps its last node,
 * turns it into a fused operator of domain "cort" (src/providers/cpu/fu_*.c) and marks the other
 * nodes skipped. A pattern only fires when every intermediate value is consumed inside it and is
 * not a graph output, all its nodes run on the CPU provider, and its constants have the exact
 * values the fused kernel assumes. Patterns:
 *   ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul gamma)(/Add beta) over the last axis
 *                                               -> cort.LayerNorm(X, gamma, beta) epsilon
 *   x*0.5*(1+erf(x/sqrt2)) (both Mul orders)    -> cort.Gelu(x)
 *   MatMul with a run-time B (attention) + Div/Mul(scalar), + Add(bias[N]), + Add(residual),
 *   + cort.Gelu                                 -> cort.FusedMatMul(A, B, bias, residual) alpha activation
 *   cort.LayerNorm(a + (b + bias))              -> cort.LayerNorm(a, gamma, beta, b, bias)
 *   cort.Gelu(v + bias)                         -> cort.Gelu(v, bias)
 *   cort.Gelu(MatMul(A, constant B), bias)      -> cort.FusedMatMul(A, B, bias) activation (packed B kept)
 *   x * HardSigmoid(x; 1/6, 0.5)                -> HardSwish(x)
 * MatMuls with constant weights stay MatMul (they keep their weights packed at creation); their
 * bias and residual Adds fold into the LayerNorm / Gelu that follows instead, and a bias Add left
 * over after all of the above becomes cort.FusedMatMul(A, B, bias), taking over the MatMul's
 * packed weights. */
#include <math.h>
#include <string.h>
#include "graph.h"
#include "provider.h"

#define FUSE_OUTPUT_USE (1 << 20)   /* use count added for graph outputs: never fusible */

typedef struct fuse_index {
    int32_t *producer;   /* per slot: executed node producing it, or -1 */
    int32_t *uses;       /* per slot: reads by executed nodes (+FUSE_OUTPUT_USE for graph outputs) */
    int32_t *consumer;   /* per slot: the first executed reader, or -1 */
} fuse_index;

static cort_status *index_build(const cort_graph *g, fuse_index *x) {
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
        if (s >= 0) x->uses[s] += FUSE_OUTPUT_USE;
    }
    return NULL;
}

/* Whether n is a CPU-run node of (domain, op) with float output 0. */
static int is_op(const cort_graph *g, const cort_node *n, const char *domain, const char *op) {
    return n && !strcmp(n->op_type, op) && !strcmp(n->domain, domain) && n->provider &&
           (n->provider->caps & CORT_PROVIDER_PATTERNS) &&
           !n->act && n->n_outputs == 1 && n->out_slot[0] >= 0 && !n->n_implicit &&
           g->slot_info[n->out_slot[0]].elem == CORT_TYPE_FLOAT;
}

/* The executed producer of slot s if it is (domain, op) and s is read exactly `uses` times. */
static cort_node *producer_of(cort_graph *g, const fuse_index *x, int32_t s, const char *domain, const char *op,
                              int32_t uses) {
    if (s < 0 || x->producer[s] < 0 || x->uses[s] != uses) return NULL;
    cort_node *n = &g->nodes[x->producer[s]];
    return is_op(g, n, domain, op) ? n : NULL;
}

/* The only consumer of slot s if it is (domain, op). */
static cort_node *sole_consumer(cort_graph *g, const fuse_index *x, int32_t s, const char *op) {
    if (s < 0 || x->uses[s] != 1 || x->consumer[s] < 0) return NULL;
    cort_node *n = &g->nodes[x->consumer[s]];
    return is_op(g, n, "", op) ? n : NULL;
}

/* A constant float scalar (any shape with one element). */
static int const_scalar(const cort_graph *g, int32_t s, float *v) {
    if (s < 0) return 0;
    const cort_value *c = g->slot_info[s].value;
    if (!c || c->kind != CORT_VKIND_TENSOR || c->type != CORT_TYPE_FLOAT || c->count != 1) return 0;
    *v = *(const float *)c->data;
    return 1;
}

/* A constant float vector broadcasting only along the last axis of a rank-`rank` value: count == c,
 * last dim == c, rank <= rank. */
static int const_row(const cort_graph *g, int32_t s, int64_t c, int rank) {
    if (s < 0 || c <= 0) return 0;
    const cort_value *v = g->slot_info[s].value;
    return v && v->kind == CORT_VKIND_TENSOR && v->type == CORT_TYPE_FLOAT && v->rank >= 1 &&
           (int)v->rank <= rank && v->count == (size_t)c && v->shape[v->rank - 1] == c;
}

/* Input slot of binary node n other than s (-1 if n does not read s exactly once). */
static int32_t other_input(const cort_node *n, int32_t s) {
    if (n->n_inputs != 2) return -1;
    if (n->in_slot[0] == s && n->in_slot[1] != s) return n->in_slot[1];
    if (n->in_slot[1] == s && n->in_slot[0] != s) return n->in_slot[0];
    return -1;
}

static int same_static_shape(const cort_tinfo *a, const cort_tinfo *b) {
    if (a->rank < 0 || a->rank != b->rank || !cort_tinfo_shape_known(a) || !cort_tinfo_shape_known(b)) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* Turns `keep` into domain.<op_type>(in...) of the given opset with the given attributes; its output
 * slot stays. */
static cort_status *rewrite_as(cort_graph *g, cort_node *keep, const char *domain, const char *op_type, int opset,
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
static void drop(cort_graph *g, cort_node *n) {
    g->skip[n->index] = 1;
    if (n->op && n->op->free_state && n->state) n->op->free_state(n->state);
    n->state = NULL;
}

static cort_status *rewrite(cort_graph *g, cort_node *keep, const char *op_type, const int32_t *in, size_t n_in,
                            const cort_attr_ir *attrs, size_t n_attrs) {
    return rewrite_as(g, keep, "cort", op_type, 1, in, n_in, attrs, n_attrs, NULL);
}

static cort_attr_ir attr_f(const char *name, float f) {
    cort_attr_ir a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = CORT_ATTR_FLOAT;
    a.f = f;
    return a;
}

static cort_attr_ir attr_i(const char *name, int64_t i) {
    cort_attr_ir a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = CORT_ATTR_INT;
    a.i = i;
    return a;
}

/* ---------------------------------------------------------------- MatMul epilogues */
/* A float MatMul whose B is computed at run time (attention). MatMul packs a constant B once at
 * creation; replacing it would pack the weights a second time, and the bias is then better fused
 * downstream (LayerNorm's skip/bias inputs, Gelu's bias) while MatMul keeps its packed B. */
static int matmul_float(const cort_graph *g, const cort_node *mm) {
    return mm->n_inputs == 2 && mm->in_slot[0] >= 0 && mm->in_slot[1] >= 0 &&
           g->slot_info[mm->in_slot[0]].elem == CORT_TYPE_FLOAT && g->slot_info[mm->in_slot[1]].elem == CORT_TYPE_FLOAT;
}
static int matmul_dynamic(const cort_graph *g, const cort_node *mm) {
    return matmul_float(g, mm) && !g->consts[mm->in_slot[1]];
}

/* MatMul + Add(bias[N]) -> cort.FusedMatMul(A, B, bias). const_b = 0: B computed at run time
 * (attention), before the patterns below. const_b = 1: B constant and packed at creation, for the
 * pairs no pattern below took (a classifier before its Softmax); the fused node takes over the
 * MatMul's state (its packed B) instead of packing again, and its gemm starts from the bias. */
static cort_status *fuse_matmul_bias(cort_graph *g, fuse_index *x, int const_b) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !is_op(g, n, "", "Add") || n->n_inputs != 2) continue;
        for (int side = 0; side < 2; side++) {
            int32_t ms = n->in_slot[side], bs = n->in_slot[1 - side];
            cort_node *mm = producer_of(g, x, ms, "", "MatMul", 1);
            if (!mm || !matmul_float(g, mm) || !g->consts[mm->in_slot[1]] != !const_b) continue;
            const cort_tinfo *mt = &g->slot_info[ms];
            if (mt->rank < 1 || !const_row(g, bs, mt->dims[mt->rank - 1], mt->rank)) continue;
            int32_t in[3] = { mm->in_slot[0], mm->in_slot[1], bs };
            CORT_TRY(rewrite_as(g, n, "cort", "FusedMatMul", 1, in, 3, NULL, 0, const_b ? mm : NULL));
            drop(g, mm);
            break;
        }
    }
    return NULL;
}

static cort_status *fuse_matmul_scale(cort_graph *g, fuse_index *x) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        int div = is_op(g, n, "", "Div");
        if (g->skip[i] || !(div || is_op(g, n, "", "Mul")) || n->n_inputs != 2) continue;
        for (int side = 0; side < (div ? 1 : 2); side++) {
            int32_t ms = n->in_slot[side];
            float c;
            cort_node *mm = producer_of(g, x, ms, "", "MatMul", 1);
            if (!mm || !matmul_dynamic(g, mm) || !const_scalar(g, n->in_slot[1 - side], &c)) continue;
            if (!isfinite(c) || c == 0.0f) continue;
            /* the scalar must not broadcast the product to a higher rank */
            const cort_value *cv = g->slot_info[n->in_slot[1 - side]].value;
            if ((int)cv->rank > g->slot_info[ms].rank) continue;
            cort_attr_ir a = attr_f("alpha", div ? 1.0f / c : c);
            int32_t in[2] = { mm->in_slot[0], mm->in_slot[1] };
            CORT_TRY(rewrite(g, n, "FusedMatMul", in, 2, &a, 1));
            drop(g, mm);
            break;
        }
    }
    return NULL;
}

static cort_status *fuse_matmul_residual(cort_graph *g, fuse_index *x) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !is_op(g, n, "", "Add") || n->n_inputs != 2) continue;
        for (int side = 0; side < 2; side++) {
            int32_t fs = n->in_slot[side], rs = n->in_slot[1 - side];
            cort_node *f = producer_of(g, x, fs, "cort", "FusedMatMul", 1);
            if (!f || f->n_inputs != 3 || f->ir->n_attrs || rs < 0 || rs == fs) continue;
            const cort_tinfo *rt = &g->slot_info[rs];
            if (rt->elem != CORT_TYPE_FLOAT || !same_static_shape(rt, &g->slot_info[fs]) ||
                !same_static_shape(rt, &g->slot_info[n->out_slot[0]]))
                continue;
            int32_t in[4] = { f->in_slot[0], f->in_slot[1], f->in_slot[2], rs };
            CORT_TRY(rewrite(g, n, "FusedMatMul", in, 4, NULL, 0));
            drop(g, f);
            break;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- GELU */
static int near(float v, double want) { return fabs((double)v - want) <= 1e-6 * fabs(want); }

static cort_status *fuse_gelu(cort_graph *g, fuse_index *x) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *e = &g->nodes[i];
        if (g->skip[i] || !is_op(g, e, "", "Erf") || e->n_inputs != 1) continue;
        /* d = h / sqrt(2) or h * (1/sqrt(2)) */
        int32_t ds = e->in_slot[0], h = -1;
        float c;
        cort_node *dn = producer_of(g, x, ds, "", "Div", 1);
        if (dn && dn->n_inputs == 2 && const_scalar(g, dn->in_slot[1], &c) && near(c, M_SQRT2)) h = dn->in_slot[0];
        if (!dn && (dn = producer_of(g, x, ds, "", "Mul", 1)) && dn->n_inputs == 2)
            for (int s = 0; s < 2 && h < 0; s++)
                if (const_scalar(g, dn->in_slot[1 - s], &c) && near(c, M_SQRT1_2)) h = dn->in_slot[s];
        if (h < 0 || g->slot_info[h].elem != CORT_TYPE_FLOAT) continue;
        /* a = erf + 1 */
        cort_node *an = sole_consumer(g, x, e->out_slot[0], "Add");
        if (!an || !const_scalar(g, other_input(an, e->out_slot[0]), &c) || c != 1.0f) continue;
        /* y = (h * 0.5) * a, or (h * a) * 0.5 */
        cort_node *m = sole_consumer(g, x, an->out_slot[0], "Mul"), *half = NULL, *last = NULL;
        if (!m) continue;
        int32_t o = other_input(m, an->out_slot[0]);
        if (o < 0) continue;
        if (o == h) {
            last = sole_consumer(g, x, m->out_slot[0], "Mul");
            if (!last || !const_scalar(g, other_input(last, m->out_slot[0]), &c) || c != 0.5f) continue;
        } else {
            half = producer_of(g, x, o, "", "Mul", 1);
            if (!half || other_input(half, h) < 0 || !const_scalar(g, other_input(half, h), &c) || c != 0.5f) continue;
            last = m;
        }
        /* every constant must be a scalar that does not raise the rank */
        const cort_tinfo *ht = &g->slot_info[h], *yt = &g->slot_info[last->out_slot[0]];
        if (!same_static_shape(ht, yt) && !(ht->rank >= 0 && ht->rank == yt->rank)) continue;
        int32_t in[1] = { h };
        CORT_TRY(rewrite(g, last, "Gelu", in, 1, NULL, 0));
        drop(g, dn);
        drop(g, e);
        drop(g, an);
        if (half) drop(g, half);
        if (m != last) drop(g, m);
    }
    return NULL;
}

static cort_status *fuse_matmul_gelu(cort_graph *g, fuse_index *x) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !is_op(g, n, "cort", "Gelu")) continue;
        cort_node *f = producer_of(g, x, n->in_slot[0], "cort", "FusedMatMul", 1);
        if (!f) continue;
        int has_act = 0;
        for (size_t a = 0; a < f->ir->n_attrs; a++) has_act |= !strcmp(f->ir->attrs[a].name, "activation");
        if (has_act || f->ir->n_attrs > 1) continue;
        cort_attr_ir at[2];
        size_t na = f->ir->n_attrs;
        if (na) at[0] = f->ir->attrs[0];
        at[na++] = attr_i("activation", 1);
        int32_t in[4];
        size_t nin = f->n_inputs;
        memcpy(in, f->in_slot, nin * sizeof *in);
        CORT_TRY(rewrite(g, n, "FusedMatMul", in, nin, at, na));
        drop(g, f);
    }
    return NULL;
}

/* ---------------------------------------------------------------- LayerNorm */
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

static cort_status *fuse_layernorm(cort_graph *g, fuse_index *x) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *dv = &g->nodes[i];
        if (g->skip[i] || !is_op(g, dv, "", "Div") || dv->n_inputs != 2) continue;
        int32_t ds = dv->in_slot[0], ss = dv->in_slot[1];
        float eps, two;
        cort_node *sq = producer_of(g, x, ss, "", "Sqrt", 1);
        cort_node *ae = sq ? producer_of(g, x, sq->in_slot[0], "", "Add", 1) : NULL;
        if (!ae || ae->n_inputs != 2) continue;
        int32_t vs = -1;
        for (int s = 0; s < 2 && vs < 0; s++)
            if (const_scalar(g, ae->in_slot[1 - s], &eps)) vs = ae->in_slot[s];
        if (vs < 0 || !(eps >= 0) || !isfinite(eps)) continue;
        cort_node *rv = producer_of(g, x, vs, "", "ReduceMean", 1);
        cort_node *pw = rv ? producer_of(g, x, rv->in_slot[0], "", "Pow", 1) : NULL;
        if (!pw || pw->n_inputs != 2 || pw->in_slot[0] != ds || !const_scalar(g, pw->in_slot[1], &two) || two != 2.0f)
            continue;
        cort_node *sb = producer_of(g, x, ds, "", "Sub", 2);
        if (!sb || sb->n_inputs != 2) continue;
        int32_t xs = sb->in_slot[0];
        cort_node *rm = producer_of(g, x, sb->in_slot[1], "", "ReduceMean", 1);
        const cort_tinfo *xt = xs >= 0 ? &g->slot_info[xs] : NULL;
        if (!rm || !xt || xt->elem != CORT_TYPE_FLOAT || xt->rank < 1 || xt->dims[xt->rank - 1] <= 0) continue;
        int rank = xt->rank;
        int64_t c = xt->dims[rank - 1];
        if (!mean_last_axis(g, rm, xs, rank) || !mean_last_axis(g, rv, pw->out_slot[0], rank)) continue;
        /* the chain must keep X's shape (no broadcasting by the scalars) */
        if (g->slot_info[dv->out_slot[0]].rank != rank) continue;
        cort_node *last = dv, *mul = NULL, *add = NULL;
        int32_t gamma = -1, beta = -1;
        cort_node *cand = sole_consumer(g, x, dv->out_slot[0], "Mul");
        if (cand && const_row(g, other_input(cand, dv->out_slot[0]), c, rank)) {
            mul = cand;
            gamma = other_input(cand, dv->out_slot[0]);
            last = mul;
        }
        cand = sole_consumer(g, x, last->out_slot[0], "Add");
        if (cand && const_row(g, other_input(cand, last->out_slot[0]), c, rank)) {
            add = cand;
            beta = other_input(cand, last->out_slot[0]);
            last = add;
        }
        int32_t in[3] = { xs, gamma, beta };
        cort_attr_ir a = attr_f("epsilon", eps);
        CORT_TRY(rewrite(g, last, "LayerNorm", in, beta >= 0 ? 3 : gamma >= 0 ? 2 : 1, &a, 1));
        drop(g, rm);
        drop(g, sb);
        drop(g, pw);
        drop(g, rv);
        drop(g, ae);
        drop(g, sq);
        if (last != dv) drop(g, dv);
        if (mul && last != mul) drop(g, mul);
    }
    return NULL;
}

/* ---------------------------------------------------------------- HardSwish */
/* Mul(x, HardSigmoid(x; alpha = 1/6, beta = 0.5)) -> HardSwish(x) (opset-14 kernel; older exporters
 * decompose it like this). */
static cort_status *fuse_hardswish(cort_graph *g, fuse_index *x) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *m = &g->nodes[i];
        if (g->skip[i] || !is_op(g, m, "", "Mul") || m->n_inputs != 2) continue;
        for (int side = 0; side < 2; side++) {
            cort_node *hs = producer_of(g, x, m->in_slot[side], "", "HardSigmoid", 1);
            int32_t xs = m->in_slot[1 - side];
            if (!hs || hs->n_inputs != 1 || hs->in_slot[0] != xs || cort_attr_float(hs, "alpha", 0.2f) != 1.0f / 6.0f ||
                cort_attr_float(hs, "beta", 0.5f) != 0.5f)
                continue;
            int32_t in[1] = { xs };
            CORT_TRY(rewrite_as(g, m, "", "HardSwish", 14, in, 1, NULL, 0, NULL));
            drop(g, hs);
            break;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- bias / residual into consumers */
/* If slot s is Add(v, bias row of length c) read only once, the Add node and v's slot. */
static cort_node *bias_add(cort_graph *g, const fuse_index *x, int32_t s, int64_t c, int rank, int32_t *v,
                           int32_t *bias) {
    cort_node *a = producer_of(g, x, s, "", "Add", 1);
    if (!a || a->n_inputs != 2) return NULL;
    for (int side = 0; side < 2; side++) {
        int32_t in = a->in_slot[side], b = a->in_slot[1 - side];
        if (in < 0 || !const_row(g, b, c, rank) || !same_static_shape(&g->slot_info[in], &g->slot_info[s])) continue;
        *v = in;
        *bias = b;
        return a;
    }
    return NULL;
}

/* cort.LayerNorm(Add(a, Add(b, bias))) -> cort.LayerNorm(a, gamma, beta, skip = b, bias): the
 * residual sum and the preceding MatMul's bias are formed in the normalization's first pass. */
static cort_status *fuse_skip_layernorm(cort_graph *g, fuse_index *x) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *ln = &g->nodes[i];
        if (g->skip[i] || !is_op(g, ln, "cort", "LayerNorm") || ln->n_inputs > 3) continue;
        int32_t xs = ln->in_slot[0];
        cort_node *add = producer_of(g, x, xs, "", "Add", 1);
        if (!add || add->n_inputs != 2) continue;
        const cort_tinfo *xt = &g->slot_info[xs];
        int32_t a = add->in_slot[0], b = add->in_slot[1];
        if (a < 0 || b < 0 || a == b || !same_static_shape(&g->slot_info[a], xt) ||
            !same_static_shape(&g->slot_info[b], xt) || g->slot_info[a].elem != CORT_TYPE_FLOAT ||
            g->slot_info[b].elem != CORT_TYPE_FLOAT)
            continue;
        int32_t v = -1, bias = -1;
        cort_node *ba = bias_add(g, x, b, xt->dims[xt->rank - 1], xt->rank, &v, &bias);
        if (ba) b = v;
        else if ((ba = bias_add(g, x, a, xt->dims[xt->rank - 1], xt->rank, &v, &bias))) a = v;
        int32_t in[5] = { a, ln->n_inputs > 1 ? ln->in_slot[1] : -1, ln->n_inputs > 2 ? ln->in_slot[2] : -1, b, bias };
        cort_attr_ir at = ln->ir->attrs[0];
        CORT_TRY(rewrite(g, ln, "LayerNorm", in, bias >= 0 ? 5 : 4, &at, 1));
        drop(g, add);
        if (ba) drop(g, ba);
    }
    return NULL;
}

/* cort.Gelu(Add(v, bias)) -> cort.Gelu(v, bias) */
static cort_status *fuse_bias_gelu(cort_graph *g, fuse_index *x) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !is_op(g, n, "cort", "Gelu") || n->n_inputs != 1) continue;
        const cort_tinfo *t = &g->slot_info[n->in_slot[0]];
        if (t->rank < 1 || t->dims[t->rank - 1] <= 0) continue;
        int32_t v = -1, bias = -1;
        cort_node *ba = bias_add(g, x, n->in_slot[0], t->dims[t->rank - 1], t->rank, &v, &bias);
        if (!ba) continue;
        int32_t in[2] = { v, bias };
        CORT_TRY(rewrite(g, n, "Gelu", in, 2, NULL, 0));
        drop(g, ba);
    }
    return NULL;
}

/* cort.Gelu(MatMul(A, B) (, bias)) with B constant -> cort.FusedMatMul(A, B (, bias)) activation=GELU,
 * taking over the MatMul's packed B: the gemm starts from the bias and applies GELU to each tile
 * while it is in L1 instead of two more passes over the product (a transformer's FFN) */
static cort_status *fuse_packed_matmul_gelu(cort_graph *g, fuse_index *x) {
    CORT_TRY(index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (g->skip[i] || !is_op(g, n, "cort", "Gelu") || n->n_inputs > 2) continue;
        cort_node *mm = producer_of(g, x, n->in_slot[0], "", "MatMul", 1);
        if (!mm || !matmul_float(g, mm) || !g->consts[mm->in_slot[1]]) continue;
        const int has_bias = n->n_inputs == 2 && n->in_slot[1] >= 0;
        const cort_attr_ir at = attr_i("activation", 1);
        int32_t in[3] = { mm->in_slot[0], mm->in_slot[1], has_bias ? n->in_slot[1] : -1 };
        CORT_TRY(rewrite_as(g, n, "cort", "FusedMatMul", 1, in, has_bias ? 3 : 2, &at, 1, mm));
        drop(g, mm);
    }
    return NULL;
}

/* ---------------------------------------------------------------- expand + depthwise conv */
/* An expanded tensor at least this big leaves the caches between the two convs (it is written to
 * memory and read back); smaller ones stay in L2 / L3 and gain nothing: measured on this machine
 * (2 cores of a shared 32 MB L3), an OCR detector's 6.5 and 26 MB ones 1.96 -> 1.43 and 6.10 ->
 * 3.66 ms, its 7.4 MB one and MobileNetV2's 4.8 MB one unchanged. */
#define PWDW_MIN_BYTES ((size_t)6 << 20)
/* narrowest depthwise output row (half of it at stride 2) fused: NN_DW_CB_MAX_OW_CHEAP_ACT */
#define PWDW_MIN_OW 56

static int ints_all(const cort_node *n, const char *name, int64_t v) {
    const int64_t *p;
    size_t k = cort_attr_ints(n, name, &p);
    for (size_t i = 0; i < k; i++)
        if (p[i] != v) return 0;
    return 1;
}

/* A static-shape, float, 2-D Conv on the CPU with constant weights (and bias): rank-4 X, W, Y known. */
static int conv_static(const cort_graph *g, const cort_node *n) {
    if (!n || strcmp(n->op_type, "Conv") || n->domain[0] || !n->provider || !(n->provider->caps & CORT_PROVIDER_PATTERNS) ||
        n->n_outputs != 1 || n->out_slot[0] < 0 || n->sum_input || n->has_out_view || n->n_inputs < 2 ||
        n->n_inputs > 3 || n->in_slot[0] < 0 || n->in_slot[1] < 0 || !g->consts[n->in_slot[1]] ||
        (n->n_inputs == 3 && n->in_slot[2] >= 0 && !g->consts[n->in_slot[2]]))
        return 0;
    const int32_t sl[3] = { n->in_slot[0], n->in_slot[1], n->out_slot[0] };
    for (int i = 0; i < 3; i++) {
        const cort_tinfo *t = &g->slot_info[sl[i]];
        if (t->kind != CORT_VKIND_TENSOR || t->elem != CORT_TYPE_FLOAT || t->rank != 4 || !cort_tinfo_shape_known(t))
            return 0;
    }
    return ints_all(n, "dilations", 1);
}

/* Conv 1x1 (X -> T, stride 1, no pads, one group) whose only reader is a depthwise Conv (T -> Y,
 * one output channel per channel, 3x3 at stride 1 or 2), T at least PWDW_MIN_BYTES ->
 * cort.PwDwConv(X, Wp, Bp, Wd, Bd) carrying both activations: T never exists (fu_pwdw.c). Runs
 * after the activation fusion (the convs carry theirs) and only without other providers. */
cort_status *cort_graph_fuse_pw_dw(cort_graph *g) {
    fuse_index x = { 0 };
    cort_status *st = index_build(g, &x);
    for (size_t i = 0; !st && i < g->n_nodes; i++) {
        cort_node *d = &g->nodes[i];
        if (g->skip[i] || !conv_static(g, d)) continue;
        const int32_t t = d->in_slot[0];
        if (x.producer[t] < 0 || x.uses[t] != 1) continue;
        cort_node *p = &g->nodes[x.producer[t]];
        if (!conv_static(g, p) || p->act == CORT_ACT_GELU) continue;
        const cort_tinfo *ti = &g->slot_info[t], *wp = &g->slot_info[p->in_slot[1]], *wd = &g->slot_info[d->in_slot[1]];
        const cort_tinfo *xi = &g->slot_info[p->in_slot[0]];
        const int64_t E = ti->dims[1];
        if (wp->dims[0] != E || wp->dims[2] != 1 || wp->dims[3] != 1 || cort_attr_int(p, "group", 1) != 1 ||
            !ints_all(p, "strides", 1) || !ints_all(p, "pads", 0) || ti->dims[2] != xi->dims[2] ||
            ti->dims[3] != xi->dims[3])
            continue;
        const char *ap = cort_attr_str(p, "auto_pad", "NOTSET");
        if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) continue;
        const int64_t *ks, *ss;
        const size_t nk = cort_attr_ints(d, "kernel_shape", &ks), ns = cort_attr_ints(d, "strides", &ss);
        const int64_t k = wd->dims[2], stride = ns == 2 ? ss[0] : 1;
        if (cort_attr_int(d, "group", 1) != E || wd->dims[0] != E || wd->dims[1] != 1 || wd->dims[3] != k ||
            k != 3 || (nk && (nk != 2 || ks[0] != k || ks[1] != k)) || (ns && (ns != 2 || ss[1] != ss[0])) ||
            (stride != 1 && stride != 2))
            continue;
        if ((size_t)(ti->dims[0] * E * ti->dims[2] * ti->dims[3]) < PWDW_MIN_BYTES / sizeof(float)) continue;
        /* where the depthwise conv alone runs the per-plane 3x3 kernel (wide rows, an activation it
         * applies on its registers): the fused op runs that kernel band by band. The others take the
         * channel-blocked kernel (5x5 too), which the fused op does not (measured slower fused: an OCR
         * detector's 5x5 and HardSwish blocks, 1.26 -> 1.81 ms and 1.55 -> 1.69 ms) */
        const int64_t ow = g->slot_info[d->out_slot[0]].dims[3];
        if ((d->act && d->act != CORT_ACT_RELU && d->act != CORT_ACT_CLIP && d->act != CORT_ACT_LEAKY_RELU) ||
            ow < (stride == 1 ? PWDW_MIN_OW : PWDW_MIN_OW / 2))
            continue;
        /* the depthwise conv's attributes, then the expand conv's activation */
        const size_t na = d->ir->n_attrs;
        cort_attr_ir *at = cort_arena_alloc(g->arena, (na + 3) * sizeof *at);
        if (!at) { st = cort_error_oom(); break; }
        if (na) memcpy(at, d->ir->attrs, na * sizeof *at);
        at[na] = attr_i("pw_activation", p->act);
        at[na + 1] = attr_f("pw_alpha", p->act_alpha);
        at[na + 2] = attr_f("pw_beta", p->act_beta);
        const int32_t in[5] = { p->in_slot[0], p->in_slot[1], p->n_inputs == 3 ? p->in_slot[2] : -1, d->in_slot[1],
                                d->n_inputs == 3 ? d->in_slot[2] : -1 };
        /* rewrite_as clears the node's activation: the depthwise conv's stays the fused op's */
        const int act = d->act;
        const float alpha = d->act_alpha, beta = d->act_beta;
        if ((st = rewrite_as(g, d, "cort", "PwDwConv", 1, in, 5, at, na + 3, NULL))) break;
        d->act = act;
        d->act_alpha = alpha;
        d->act_beta = beta;
        drop(g, p);
        if ((st = index_build(g, &x))) break;
    }
    cort_free(x.producer);
    return st;
}

cort_status *cort_graph_fuse_patterns(cort_graph *g) {
    fuse_index x = { 0 };
    cort_status *st = NULL;
    if (!g->n_nodes || !g->n_slots) return NULL;
    if (!st) st = fuse_layernorm(g, &x);
    if (!st) st = fuse_gelu(g, &x);
    if (!st) st = fuse_matmul_bias(g, &x, 0);
    if (!st) st = fuse_matmul_scale(g, &x);
    if (!st) st = fuse_matmul_residual(g, &x);
    if (!st) st = fuse_matmul_gelu(g, &x);
    if (!st) st = fuse_skip_layernorm(g, &x);
    if (!st) st = fuse_bias_gelu(g, &x);
    if (!st) st = fuse_packed_matmul_gelu(g, &x);
    if (!st) st = fuse_hardswish(g, &x);
    if (!st) st = fuse_matmul_bias(g, &x, 1);
    cort_free(x.producer);
    return st;
}
