/* Gradient ("ai.onnx.preview.training", opset 1): dY/dX for each X in 'xs' by reverse-mode
 * differentiation of the part of the enclosing graph that computes 'y' from 'xs' and 'zs'.
 *
 * init walks the graph IR backwards from y and records the forward nodes as a tape, stopping at the
 * names in xs/zs (fed from the Gradient node's own inputs, so a gradient can be taken at any point)
 * and at constants (initializers, Constant nodes). run recomputes the forward values from the
 * Gradient inputs in double precision, seeds dY with ones and backpropagates; broadcast operands
 * receive their gradient summed back to their own shape. */
#include <math.h>
#include <string.h>
#include "../misc_common.h"
#include "../../../../graph/graph.h"

#define GRAD_DOMAIN "ai.onnx.preview.training"

enum grad_kind {
    G_ADD, G_SUB, G_MUL, G_DIV,                           /* binary, numpy broadcasting */
    G_NEG, G_IDENTITY, G_RELU, G_SIGMOID, G_TANH, G_EXP,  /* unary */
    G_MATMUL                                              /* 2-D only */
};
static const struct { const char *name; int kind, arity; } grad_ops[] = {
    { "Add", G_ADD, 2 }, { "Sub", G_SUB, 2 }, { "Mul", G_MUL, 2 }, { "Div", G_DIV, 2 },
    { "Neg", G_NEG, 1 }, { "Identity", G_IDENTITY, 1 }, { "Relu", G_RELU, 1 }, { "Sigmoid", G_SIGMOID, 1 },
    { "Tanh", G_TANH, 1 }, { "Exp", G_EXP, 1 }, { "MatMul", G_MATMUL, 2 },
};

typedef struct grad_step {
    int kind, arity;
    int32_t in[2], out;              /* value ids */
    const cort_node_ir *ir;          /* forward node, for messages */
} grad_step;

typedef struct grad_state {
    size_t n_x, n_z;                 /* value ids [0, n_x + n_z) are the Gradient inputs */
    size_t n_values, cap_values;
    const char **names;              /* per value id (borrowed from the IR) */
    const cort_value **consts;       /* per value id: constant tensor (borrowed) or NULL */
    grad_step *steps;                /* forward order */
    size_t n_steps;
    int32_t y;
} grad_state;

static void grad_free(void *p) {
    grad_state *st = p;
    if (!st) return;
    cort_free(st->names);
    cort_free(st->consts);
    cort_free(st->steps);
    cort_free(st);
}

static int32_t grad_lookup(const grad_state *st, const char *name) {
    for (size_t i = 0; i < st->n_values; i++)
        if (!strcmp(st->names[i], name)) return (int32_t)i;
    return -1;
}

static cort_status *grad_add_value(grad_state *st, const char *name, const cort_value *c, int32_t *id) {
    if (st->n_values == st->cap_values) {
        size_t cap = st->cap_values ? 2 * st->cap_values : 16;
        const char **nn = cort_realloc(st->names, cap * sizeof *nn);
        if (!nn) return cort_error_oom();
        st->names = nn;
        const cort_value **nc = cort_realloc(st->consts, cap * sizeof *nc);
        if (!nc) return cort_error_oom();
        st->consts = nc;
        st->cap_values = cap;
    }
    st->names[st->n_values] = name;
    st->consts[st->n_values] = c;
    *id = (int32_t)st->n_values++;
    return NULL;
}

/* How messages name a forward node: its name, else its first output. */
static const char *fwd_name(const cort_node_ir *p) {
    return p->name && p->name[0] ? p->name : p->n_outputs ? p->outputs[0] : "";
}

/* Index of the IR node producing `name`, or -1. */
static long grad_producer(const cort_graph_ir *ir, const char *name) {
    for (size_t k = 0; k < ir->n_nodes; k++)
        for (size_t o = 0; o < ir->nodes[k].n_outputs; o++)
            if (!strcmp(ir->nodes[k].outputs[o], name)) return (long)k;
    return -1;
}

/* Resolves a name that is not yet a value: a constant becomes a leaf value (*id >= 0); a name computed
 * by a supported node gives *id = -1 and *producer = that node. Anything else fails. */
static cort_status *grad_resolve(const cort_node *node, const cort_graph_ir *ir, grad_state *st, const char *name,
                                 int32_t *id, long *producer) {
    *id = -1;
    for (size_t i = 0; i < ir->n_initializers; i++)
        if (!strcmp(ir->initializers[i].name, name)) {
            CORT_TRY(cort_value_materialize(ir->initializers[i].value));   /* read at run time */
            return grad_add_value(st, name, ir->initializers[i].value, id);
        }
    long k = grad_producer(ir, name);
    if (k < 0) {
        for (size_t i = 0; i < ir->n_inputs; i++)
            if (!strcmp(ir->inputs[i].name, name))
                return cort_node_error(node, CORT_ERROR_INVALID_MODEL,
                                       "'y' depends on graph input '%s', which is in neither 'xs' nor 'zs'", name);
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED,
                               "'y' depends on '%s', which is not produced by a node of this graph", name);
    }
    const cort_node_ir *p = &ir->nodes[k];
    if (!p->domain[0] && !strcmp(p->op_type, "Constant")) {
        for (size_t a = 0; a < p->n_attrs; a++)
            if (!strcmp(p->attrs[a].name, "value") && p->attrs[a].t) return grad_add_value(st, name, p->attrs[a].t, id);
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED,
                               "'y' depends on Constant node '%s' without a 'value' tensor, which Gradient does not support", fwd_name(p));
    }
    size_t op = 0;
    while (op < sizeof grad_ops / sizeof grad_ops[0] && strcmp(grad_ops[op].name, p->op_type)) op++;
    if (p->domain[0] || op == sizeof grad_ops / sizeof grad_ops[0])
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "cannot differentiate through node '%s' (%s%s%s): operator not supported",
                               fwd_name(p), p->domain[0] ? p->domain : "", p->domain[0] ? "." : "", p->op_type);
    if (p->n_inputs < (size_t)grad_ops[op].arity || (grad_ops[op].arity == 2 && !p->inputs[1][0]) || !p->inputs[0][0])
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "node '%s' (%s) on the path to 'y' has %zu inputs, expected %d",
                               fwd_name(p), p->op_type, p->n_inputs, grad_ops[op].arity);
    if (strcmp(p->outputs[0], name))
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "cannot differentiate output '%s' of node '%s' (%s)", name, fwd_name(p), p->op_type);
    *producer = k;
    return NULL;
}

/* Builds the tape by an iterative depth-first walk from y (no recursion: graphs may be deep). */
static cort_status *grad_build(const cort_node *node, const cort_graph_ir *ir, grad_state *st, const char *y) {
    cort_status *err = NULL;
    uint8_t *mark = cort_calloc(ir->n_nodes + 1, 1);              /* 1 on the stack, 2 done */
    long *stack = cort_malloc((ir->n_nodes + 1) * sizeof *stack);
    if (!mark || !stack) { err = cort_error_oom(); goto done; }
    st->steps = cort_malloc((ir->n_nodes + 1) * sizeof *st->steps);
    if (!st->steps) { err = cort_error_oom(); goto done; }
    long k;
    if ((st->y = grad_lookup(st, y)) >= 0) goto done;
    if ((err = grad_resolve(node, ir, st, y, &st->y, &k))) goto done;
    if (st->y >= 0) goto done;
    size_t top = 0;
    stack[top++] = k;
    mark[k] = 1;
    while (top) {
        const cort_node_ir *p = &ir->nodes[stack[top - 1]];
        size_t op = 0;
        while (strcmp(grad_ops[op].name, p->op_type)) op++;
        grad_step s = { grad_ops[op].kind, grad_ops[op].arity, { -1, -1 }, -1, p };
        int ready = 1;
        for (int i = 0; i < s.arity && ready; i++) {
            if ((s.in[i] = grad_lookup(st, p->inputs[i])) >= 0) continue;
            long q = -1;
            if ((err = grad_resolve(node, ir, st, p->inputs[i], &s.in[i], &q))) goto done;
            if (s.in[i] >= 0) continue;
            if (mark[q] == 1) {
                err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "the graph computing 'y' has a cycle through node '%s' (%s)",
                                      fwd_name(&ir->nodes[q]), ir->nodes[q].op_type);
                goto done;
            }
            stack[top++] = q;
            mark[q] = 1;
            ready = 0;
        }
        if (!ready) continue;
        if ((err = grad_add_value(st, p->outputs[0], NULL, &s.out))) goto done;
        st->steps[st->n_steps++] = s;
        mark[stack[--top]] = 2;
    }
    st->y = grad_lookup(st, y);
done:
    cort_free(mark);
    cort_free(stack);
    return err;
}

static cort_status *grad_init(const cort_node *node, void **state) {
    const char *const *xs = NULL, *const *zs = NULL;
    const size_t n_x = cort_attr_strings(node, "xs", &xs), n_z = cort_attr_strings(node, "zs", &zs);
    const char *y = cort_attr_str(node, "y", NULL);
    if (!y || !y[0]) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'y' is required");
    if (n_x == 0) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'xs' is required and must not be empty");
    if (node->n_inputs != n_x + n_z)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "has %zu inputs, expected %zu (one per name in 'xs' and 'zs')",
                               node->n_inputs, n_x + n_z);
    if (node->n_outputs > n_x)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "has %zu outputs, expected at most %zu (one per name in 'xs')",
                               node->n_outputs, n_x);
    if (!node->graph || !node->graph->ir)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "needs the enclosing graph, which is not available here");
    grad_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = NULL;
    st->n_x = n_x;
    st->n_z = n_z;
    for (size_t i = 0; i < n_x + n_z; i++) {
        const char *name = i < n_x ? xs[i] : zs[i - n_x];
        int32_t id;
        if (!name || !name[0] || grad_lookup(st, name) >= 0) {
            err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute '%s' entry '%s' is empty or repeated",
                                  i < n_x ? "xs" : "zs", name ? name : "");
            goto error;
        }
        if ((err = grad_add_value(st, name, NULL, &id))) goto error;
    }
    if ((err = grad_build(node, node->graph->ir, st, y))) goto error;
    *state = st;
    return NULL;
error:
    grad_free(st);
    return err;
}

static cort_status *grad_infer(cort_infer_ctx *ctx) {
    for (size_t i = 0; i < ctx->n_outputs; i++) {
        const cort_tinfo *x = mi_tin(ctx, i);
        if (x && x->kind == CORT_VKIND_TENSOR) cort_tinfo_tensor_shape(&ctx->outputs[i], x->elem, x->dims, x->rank);
        else if (x) cort_tinfo_tensor(&ctx->outputs[i], x->elem);
    }
    return NULL;
}

/* ---- run time: dense double tensors ---- */

typedef struct gt {
    size_t rank, count;
    int64_t shape[CORT_MAX_RANK];
    double *d;                       /* NULL: not computed (value) / zero (gradient) */
} gt;

static cort_status *gt_alloc(gt *t, const int64_t *shape, size_t rank, int zero) {
    int overflow = 0;
    t->rank = rank;
    if (rank) memcpy(t->shape, shape, rank * sizeof *shape);
    t->count = cort_shape_count(shape, rank, &overflow);
    if (overflow || t->count > SIZE_MAX / sizeof(double)) return cort_error_oom();
    t->d = zero ? cort_calloc(t->count ? t->count : 1, sizeof(double)) : cort_malloc((t->count ? t->count : 1) * sizeof(double));
    return t->d ? NULL : cort_error_oom();
}

/* Walks the elements of a broadcast output, keeping the matching element offsets of both operands. */
typedef struct bc_iter {
    size_t rank;
    int64_t dims[CORT_MAX_RANK], idx[CORT_MAX_RANK], sa[CORT_MAX_RANK], sb[CORT_MAX_RANK];
    int64_t oa, ob;
} bc_iter;

static void bc_start(bc_iter *it, const gt *out, const gt *a, const gt *b) {
    it->rank = out->rank;
    memcpy(it->dims, out->shape, out->rank * sizeof(int64_t));
    memset(it->idx, 0, sizeof it->idx);
    cort_broadcast_strides(out->shape, out->rank, a->shape, a->rank, it->sa);
    cort_broadcast_strides(out->shape, out->rank, b->shape, b->rank, it->sb);
    it->oa = it->ob = 0;
}
static void bc_next(bc_iter *it) {
    for (size_t r = it->rank; r-- > 0;) {
        it->oa += it->sa[r];
        it->ob += it->sb[r];
        if (++it->idx[r] < it->dims[r]) return;
        it->oa -= it->sa[r] * it->dims[r];
        it->ob -= it->sb[r] * it->dims[r];
        it->idx[r] = 0;
    }
}

static double unary_fwd(int kind, double x) {
    switch (kind) {
    case G_NEG: return -x;
    case G_RELU: return x > 0.0 ? x : 0.0;
    case G_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case G_TANH: return tanh(x);
    case G_EXP: return exp(x);
    default: return x;
    }
}
/* d out / d in from the input x and output y */
static double unary_bwd(int kind, double x, double y) {
    switch (kind) {
    case G_NEG: return -1.0;
    case G_RELU: return x > 0.0 ? 1.0 : 0.0;
    case G_SIGMOID: return y * (1.0 - y);
    case G_TANH: return 1.0 - y * y;
    case G_EXP: return y;
    default: return 1.0;
    }
}
static double binary_fwd(int kind, double a, double b) {
    switch (kind) {
    case G_ADD: return a + b;
    case G_SUB: return a - b;
    case G_MUL: return a * b;
    default: return a / b;
    }
}

static cort_status *step_shape_error(const cort_node *node, const grad_step *s, const gt *a, const gt *b, const char *why) {
    char sa[128], sb[128];
    return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "forward node '%s' (%s): inputs '%s' %s and '%s' %s %s",
                           fwd_name(s->ir), s->ir->op_type, s->ir->inputs[0], cort_shape_str(a->shape, a->rank, sa, sizeof sa),
                           s->ir->inputs[1], cort_shape_str(b->shape, b->rank, sb, sizeof sb), why);
}

static cort_status *step_forward(const cort_node *node, const grad_step *s, gt *v) {
    const gt *a = &v[s->in[0]], *b = s->arity == 2 ? &v[s->in[1]] : NULL;
    gt *y = &v[s->out];
    if (s->arity == 1) {
        CORT_TRY(gt_alloc(y, a->shape, a->rank, 0));
        for (size_t i = 0; i < a->count; i++) y->d[i] = unary_fwd(s->kind, a->d[i]);
        return NULL;
    }
    if (s->kind == G_MATMUL) {
        if (a->rank != 2 || b->rank != 2 || a->shape[1] != b->shape[0])
            return step_shape_error(node, s, a, b, "are not 2-D matrices [M,K] x [K,N] (Gradient supports 2-D MatMul only)");
        const size_t M = (size_t)a->shape[0], K = (size_t)a->shape[1], N = (size_t)b->shape[1];
        const int64_t dims[2] = { (int64_t)M, (int64_t)N };
        CORT_TRY(gt_alloc(y, dims, 2, 1));
        for (size_t m = 0; m < M; m++)
            for (size_t k = 0; k < K; k++)
                for (size_t n = 0; n < N; n++) y->d[m * N + n] += a->d[m * K + k] * b->d[k * N + n];
        return NULL;
    }
    int64_t dims[CORT_MAX_RANK];
    int rank;
    cort_status *st = cort_broadcast_shapes(a->shape, (int)a->rank, b->shape, (int)b->rank, dims, &rank);
    if (st) { cort_status_free(st); return step_shape_error(node, s, a, b, "cannot be broadcast together"); }
    CORT_TRY(gt_alloc(y, dims, (size_t)rank, 0));
    bc_iter it;
    bc_start(&it, y, a, b);
    for (size_t i = 0; i < y->count; i++, bc_next(&it)) y->d[i] = binary_fwd(s->kind, a->d[it.oa], b->d[it.ob]);
    return NULL;
}

/* Adds the gradient contributions of step s (whose output gradient is g[s->out]) to its inputs. */
static cort_status *step_backward(const grad_step *s, const gt *v, gt *g) {
    const gt *gy = &g[s->out], *y = &v[s->out], *a = &v[s->in[0]], *b = s->arity == 2 ? &v[s->in[1]] : NULL;
    gt *ga = &g[s->in[0]];
    if (!ga->d) CORT_TRY(gt_alloc(ga, a->shape, a->rank, 1));
    if (s->arity == 1) {
        for (size_t i = 0; i < a->count; i++) ga->d[i] += gy->d[i] * unary_bwd(s->kind, a->d[i], y->d[i]);
        return NULL;
    }
    gt *gb = &g[s->in[1]];
    if (!gb->d) CORT_TRY(gt_alloc(gb, b->shape, b->rank, 1));
    if (s->kind == G_MATMUL) {
        /* dA = dY B^T, dB = A^T dY */
        const size_t M = (size_t)a->shape[0], K = (size_t)a->shape[1], N = (size_t)b->shape[1];
        for (size_t m = 0; m < M; m++)
            for (size_t k = 0; k < K; k++)
                for (size_t n = 0; n < N; n++) {
                    const double gmn = gy->d[m * N + n];
                    ga->d[m * K + k] += gmn * b->d[k * N + n];
                    gb->d[k * N + n] += a->d[m * K + k] * gmn;
                }
        return NULL;
    }
    bc_iter it;
    bc_start(&it, y, a, b);
    for (size_t i = 0; i < y->count; i++, bc_next(&it)) {
        const double gi = gy->d[i], av = a->d[it.oa], bv = b->d[it.ob];
        switch (s->kind) {
        case G_ADD: ga->d[it.oa] += gi; gb->d[it.ob] += gi; break;
        case G_SUB: ga->d[it.oa] += gi; gb->d[it.ob] -= gi; break;
        case G_MUL: ga->d[it.oa] += gi * bv; gb->d[it.ob] += gi * av; break;
        default: ga->d[it.oa] += gi / bv; gb->d[it.ob] -= gi * av / (bv * bv); break;
        }
    }
    return NULL;
}

static cort_status *gt_from_value(const cort_node *node, const cort_value *src, const char *what, size_t index, gt *t) {
    if (!src || src->kind != CORT_VKIND_TENSOR || !(cort_type_is_float(src->type) || cort_type_is_int(src->type)))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "%s %zu must be a numeric tensor (got %s)", what, index,
                               !src ? "nothing" : src->kind != CORT_VKIND_TENSOR ? "a non-tensor value" : cort_type_name(src->type));
    CORT_TRY(gt_alloc(t, src->shape, src->rank, 0));
    for (size_t i = 0; i < t->count; i++) t->d[i] = cort_load_f64(src->data, src->type, i);
    return NULL;
}

static cort_status *grad_run(cort_kernel_ctx *ctx) {
    const cort_node *node = ctx->node;
    const grad_state *st = ctx->state;
    cort_status *err = NULL;
    gt *v = cort_calloc(st->n_values + 1, sizeof *v), *g = cort_calloc(st->n_values + 1, sizeof *g);
    if (!v || !g) { err = cort_error_oom(); goto done; }
    for (size_t i = 0; i < st->n_x; i++) {
        const cort_value *x = mi_in(ctx, i);
        if (x && x->kind == CORT_VKIND_TENSOR && !cort_type_is_float(x->type)) {
            err = cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected a float type to differentiate",
                                  i, st->names[i], cort_type_name(x->type));
            goto done;
        }
    }
    for (size_t i = 0; i < st->n_values; i++) {
        if (i < st->n_x + st->n_z) err = gt_from_value(node, mi_in(ctx, i), "input", i, &v[i]);
        else if (st->consts[i]) err = gt_from_value(node, st->consts[i], "constant", i, &v[i]);
        if (err) goto done;
    }
    for (size_t k = 0; k < st->n_steps; k++)
        if ((err = step_forward(node, &st->steps[k], v))) goto done;

    const gt *yv = &v[st->y];
    if ((err = gt_alloc(&g[st->y], yv->shape, yv->rank, 0))) goto done;
    for (size_t i = 0; i < yv->count; i++) g[st->y].d[i] = 1.0;
    for (size_t k = st->n_steps; k-- > 0;) {
        if (cort_kernel_cancelled(ctx)) { err = cort_kernel_cancelled_status(ctx); goto done; }
        if (g[st->steps[k].out].d && (err = step_backward(&st->steps[k], v, g))) goto done;
    }

    for (size_t i = 0; i < ctx->n_outputs; i++) {
        if (!mi_out_wanted(ctx, i)) continue;
        const cort_value *x = ctx->inputs[i];
        cort_value *out;
        if ((err = cort_kernel_output(ctx, i, x->type, x->shape, x->rank, &out))) goto done;
        for (size_t e = 0; e < out->count; e++) cort_store_f64(out->data, out->type, e, g[i].d ? g[i].d[e] : 0.0);
    }
done:
    for (size_t i = 0; v && g && i < st->n_values; i++) { cort_free(v[i].d); cort_free(g[i].d); }
    cort_free(v);
    cort_free(g);
    return err;
}

const cort_op_def mi_op_gradient = { .name = "Gradient", .domain = GRAD_DOMAIN, .min_opset = 1, .max_opset = 1,
    .init = grad_init, .free_state = grad_free, .infer = grad_infer, .run = grad_run };
