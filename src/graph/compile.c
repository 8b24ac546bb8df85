/* Graph compilation: inline model-local functions, assign value slots, resolve outer-scope names,
 * order nodes topologically, resolve kernels, run creation-time inference and constant folding,
 * and compute when each intermediate can be released. Everything that can fail does so here. */
#include "graph.h"
#include "provider.h"
#include "passes/passes.h"
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_FUNCTION_DEPTH 32

/* ---------------------------------------------------------------- expansion of functions */
typedef struct xnode { const cort_node_ir *ir; int opset; } xnode;
typedef struct xlist { xnode *v; size_t n, cap; } xlist;

static cort_status *xlist_push(xlist *l, const cort_node_ir *ir, int opset) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        xnode *v = cort_realloc(l->v, cap * sizeof *v);
        if (!v) return cort_error_oom();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].ir = ir;
    l->v[l->n].opset = opset;
    l->n++;
    return NULL;
}

static const char *norm_domain(const char *d) { return d && strcmp(d, "ai.onnx") ? d : ""; }

static int64_t opset_in(const cort_opset_ir *ops, size_t n, const char *domain) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(norm_domain(ops[i].domain), domain)) return ops[i].version;
    return -1;
}

static const cort_function_ir *find_function(const cort_model_ir *m, const cort_node_ir *n) {
    for (size_t i = 0; i < m->n_functions; i++)
        if (!strcmp(m->functions[i].name, n->op_type) && !strcmp(norm_domain(m->functions[i].domain), n->domain))
            return &m->functions[i];
    return NULL;
}

static const char *map_name(cort_arena *a, const char *prefix, const char *name, const cort_function_ir *f,
                            const cort_node_ir *call) {
    if (!name[0]) return name;
    for (size_t i = 0; i < f->n_inputs; i++)
        if (!strcmp(f->inputs[i], name)) return i < call->n_inputs ? call->inputs[i] : "";
    for (size_t i = 0; i < f->n_outputs; i++)
        if (!strcmp(f->outputs[i], name)) return i < call->n_outputs ? call->outputs[i] : "";
    size_t lp = strlen(prefix), ln = strlen(name);
    char *s = cort_arena_alloc(a, lp + ln + 1);
    if (!s) return NULL;
    memcpy(s, prefix, lp);
    memcpy(s + lp, name, ln + 1);
    return s;
}

static cort_status *expand_nodes(cort_graph *g, const cort_node_ir *nodes, size_t n, const cort_opset_ir *ops,
                                 size_t n_ops, int depth, xlist *out, unsigned *counter);

/* Inlines one call of a model-local function: names inside get a unique prefix, formal inputs and
 * outputs map to the call's actual names, ref_attr_name attributes take the caller's values. */
static cort_status *inline_call(cort_graph *g, const cort_function_ir *f, const cort_node_ir *call, int depth,
                                xlist *out, unsigned *counter) {
    if (depth > MAX_FUNCTION_DEPTH)
        return cort_error(CORT_ERROR_INVALID_MODEL, "node '%s' (%s): function nesting deeper than %d (recursive?)",
                          call->name, call->op_type, MAX_FUNCTION_DEPTH);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "__fn%u/", (*counter)++);
    cort_node_ir *body = cort_arena_alloc(g->arena, (f->n_nodes ? f->n_nodes : 1) * sizeof *body);
    if (!body) return cort_error_oom();
    for (size_t i = 0; i < f->n_nodes; i++) {
        const cort_node_ir *src = &f->nodes[i];
        cort_node_ir *d = &body[i];
        *d = *src;
        d->inputs = cort_arena_alloc(g->arena, (src->n_inputs + 1) * sizeof *d->inputs);
        d->outputs = cort_arena_alloc(g->arena, (src->n_outputs + 1) * sizeof *d->outputs);
        d->attrs = cort_arena_alloc(g->arena, (src->n_attrs + 1) * sizeof *d->attrs);
        if (!d->inputs || !d->outputs || !d->attrs) return cort_error_oom();
        for (size_t k = 0; k < src->n_inputs; k++)
            if (!(d->inputs[k] = map_name(g->arena, prefix, src->inputs[k], f, call))) return cort_error_oom();
        for (size_t k = 0; k < src->n_outputs; k++)
            if (!(d->outputs[k] = map_name(g->arena, prefix, src->outputs[k], f, call))) return cort_error_oom();
        size_t na = 0;
        for (size_t k = 0; k < src->n_attrs; k++) {
            const cort_attr_ir *a = &src->attrs[k];
            if (a->ref_attr_name) {
                const cort_attr_ir *v = NULL;
                for (size_t c = 0; c < call->n_attrs; c++)
                    if (!strcmp(call->attrs[c].name, a->ref_attr_name)) v = &call->attrs[c];
                for (size_t c = 0; !v && c < f->n_attr_defaults; c++)
                    if (!strcmp(f->attr_defaults[c].name, a->ref_attr_name)) v = &f->attr_defaults[c];
                if (!v) continue;   /* attribute not given: the op's default applies */
                d->attrs[na] = *v;
                d->attrs[na].name = a->name;
                d->attrs[na].ref_attr_name = NULL;
            } else d->attrs[na] = *a;
            na++;
        }
        d->n_attrs = na;
        if (!d->name[0]) d->name = call->name;
    }
    const cort_opset_ir *ops = f->n_opsets ? f->opsets : g->opts->model->opsets;
    size_t n_ops = f->n_opsets ? f->n_opsets : g->opts->model->n_opsets;
    return expand_nodes(g, body, f->n_nodes, ops, n_ops, depth + 1, out, counter);
}

static cort_status *expand_nodes(cort_graph *g, const cort_node_ir *nodes, size_t n, const cort_opset_ir *ops,
                                 size_t n_ops, int depth, xlist *out, unsigned *counter) {
    const cort_model_ir *m = g->opts->model;
    for (size_t i = 0; i < n; i++) {
        const cort_node_ir *nd = &nodes[i];
        const cort_function_ir *f = find_function(m, nd);
        const cort_provider_vtable *dflt = cort_provider_default();
        if (f && !dflt->find(NULL, nd->domain, nd->op_type, (int)opset_in(ops, n_ops, nd->domain))) {
            CORT_TRY(inline_call(g, f, nd, depth, out, counter));
            continue;
        }
        int64_t v = opset_in(ops, n_ops, nd->domain);
        if (v < 0) v = opset_in(m->opsets, m->n_opsets, nd->domain);
        if (v < 0) {
            if (nd->domain[0])
                return cort_error(CORT_ERROR_NOT_IMPLEMENTED,
                                  "node '%s' (%s.%s): domain '%s' is not imported by the model (no opset_import entry)",
                                  nd->name, nd->domain, nd->op_type, nd->domain);
            v = 1;   /* IR 3 models without an explicit default-domain import */
        }
        CORT_TRY(xlist_push(out, nd, (int)v));
    }
    return NULL;
}

/* ---------------------------------------------------------------- slots */
static cort_status *slot_new(cort_graph *g, const char *name, int32_t *out) {
    if (g->n_slots == g->cap_slots) {
        size_t cap = g->cap_slots ? g->cap_slots * 2 : 64;
        const char **names = cort_realloc(g->slot_names, cap * sizeof *names);
        if (!names) return cort_error_oom();
        g->slot_names = names;
        cort_tinfo *info = cort_realloc(g->slot_info, cap * sizeof *info);
        if (!info) return cort_error_oom();
        g->slot_info = info;
        cort_value **consts = cort_realloc(g->consts, cap * sizeof *consts);
        if (!consts) return cort_error_oom();
        g->consts = consts;
        int32_t *lu = cort_realloc(g->last_use, cap * sizeof *lu);
        if (!lu) return cort_error_oom();
        g->last_use = lu;
        g->cap_slots = cap;
    }
    int32_t s = (int32_t)g->n_slots++;
    g->slot_names[s] = name;
    cort_tinfo_unknown(&g->slot_info[s]);
    g->consts[s] = NULL;
    g->last_use[s] = -1;
    CORT_TRY(cort_namemap_put(&g->names, name, s));
    *out = s;
    return NULL;
}

/* Whether `name` is visible in g or any enclosing graph. */
static int visible_in(const cort_graph *g, const char *name) {
    for (; g; g = g->parent)
        if (cort_namemap_get(&g->names, name) >= 0) return 1;
    return 0;
}

static const cort_tinfo *outer_info(const cort_graph *g, const char *name) {
    for (; g; g = g->parent) {
        int32_t s = cort_namemap_get(&g->names, name);
        if (s >= 0) return &g->slot_info[s];
    }
    return NULL;
}

/* Resolves a name used by a node: local slot, else a new outer-scope slot. -2 if unknown. */
static cort_status *resolve(cort_graph *g, const char *name, int32_t *out) {
    int32_t s = cort_namemap_get(&g->names, name);
    if (s >= 0) { *out = s; return NULL; }
    if (!g->parent || !visible_in(g->parent, name)) { *out = -2; return NULL; }
    CORT_TRY(slot_new(g, name, &s));
    const cort_tinfo *oi = outer_info(g->parent, name);
    if (oi) { g->slot_info[s] = *oi; g->slot_info[s].value = NULL; }
    size_t k = g->n_outer;
    const char **nn = cort_realloc(g->outer_names, (k + 1) * sizeof *nn);
    if (!nn) return cort_error_oom();
    g->outer_names = nn;
    int32_t *os = cort_realloc(g->outer_slots, (k + 1) * sizeof *os);
    if (!os) return cort_error_oom();
    g->outer_slots = os;
    nn[k] = name;
    os[k] = s;
    g->n_outer = k + 1;
    *out = s;
    return NULL;
}

/* Free names of a graph IR: used by its nodes (or nested subgraphs) but defined nowhere inside. */
typedef struct strset { const char **v; size_t n, cap; } strset;
static int strset_has(const strset *s, const char *x) {
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], x)) return 1;
    return 0;
}
static cort_status *strset_add(strset *s, const char *x) {
    if (strset_has(s, x)) return NULL;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        const char **v = cort_realloc(s->v, cap * sizeof *v);
        if (!v) return cort_error_oom();
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return NULL;
}

static cort_status *free_names(const cort_graph_ir *gi, strset *out, int depth) {
    if (depth > 64) return cort_error(CORT_ERROR_INVALID_MODEL, "subgraphs nested deeper than 64");
    cort_namemap def = { 0 };
    cort_status *st = NULL;
    for (size_t i = 0; i < gi->n_inputs && !st; i++) st = cort_namemap_put(&def, gi->inputs[i].name, 0);
    for (size_t i = 0; i < gi->n_initializers && !st; i++) st = cort_namemap_put(&def, gi->initializers[i].name, 0);
    for (size_t i = 0; i < gi->n_nodes && !st; i++)
        for (size_t k = 0; k < gi->nodes[i].n_outputs && !st; k++)
            if (gi->nodes[i].outputs[k][0]) st = cort_namemap_put(&def, gi->nodes[i].outputs[k], 0);
    for (size_t i = 0; i < gi->n_nodes && !st; i++) {
        const cort_node_ir *nd = &gi->nodes[i];
        for (size_t k = 0; k < nd->n_inputs && !st; k++)
            if (nd->inputs[k][0] && cort_namemap_get(&def, nd->inputs[k]) < 0) st = strset_add(out, nd->inputs[k]);
        for (size_t a = 0; a < nd->n_attrs && !st; a++) {
            const cort_attr_ir *at = &nd->attrs[a];
            size_t ng = at->type == CORT_ATTR_GRAPH ? 1 : at->type == CORT_ATTR_GRAPHS ? at->n : 0;
            for (size_t j = 0; j < ng && !st; j++) {
                const cort_graph_ir *sub = at->type == CORT_ATTR_GRAPH ? at->g : at->graphs[j];
                if (!sub) continue;
                strset inner = { 0 };
                st = free_names(sub, &inner, depth + 1);
                for (size_t q = 0; q < inner.n && !st; q++)
                    if (cort_namemap_get(&def, inner.v[q]) < 0) st = strset_add(out, inner.v[q]);
                cort_free(inner.v);
            }
        }
    }
    for (size_t i = 0; i < gi->n_outputs && !st; i++)
        if (cort_namemap_get(&def, gi->outputs[i].name) < 0) st = strset_add(out, gi->outputs[i].name);
    cort_namemap_free(&def);
    return st;
}

/* ---------------------------------------------------------------- types of declared values */
static void tinfo_from_type_ir(cort_tinfo *t, const cort_type_ir *ty, const cort_compile_opts *o) {
    cort_tinfo_unknown(t);
    if (!ty || ty->kind == CORT_VKIND_UNKNOWN) return;
    t->kind = ty->kind;
    if (ty->kind == CORT_VKIND_TENSOR) {
        t->elem = ty->elem_type;
        if (ty->rank >= 0 && ty->rank <= CORT_MAX_RANK) {
            t->rank = ty->rank;
            for (int i = 0; i < ty->rank; i++) {
                t->dims[i] = ty->dims[i];
                if (t->dims[i] < 0 && ty->dim_params && ty->dim_params[i])
                    for (size_t k = 0; k < o->n_dims; k++)
                        if (!strcmp(o->dim_names[k], ty->dim_params[i])) t->dims[i] = o->dim_values[k];
            }
        }
    } else if (ty->kind == CORT_VKIND_SEQUENCE && ty->inner) {
        t->elem = ty->inner->elem_type;
    } else if (ty->kind == CORT_VKIND_OPTIONAL && ty->inner) {
        t->inner = ty->inner->kind;
        t->elem = ty->inner->kind == CORT_VKIND_SEQUENCE && ty->inner->inner ? ty->inner->inner->elem_type
                                                                             : ty->inner->elem_type;
    }
}

static void tinfo_from_value(cort_tinfo *t, const cort_value *v) {
    cort_tinfo_unknown(t);
    t->kind = v->kind;
    t->elem = v->type;
    if (v->kind == CORT_VKIND_TENSOR) {
        t->rank = (int)v->rank;
        for (size_t i = 0; i < v->rank; i++) t->dims[i] = v->shape[i];
        t->value = v;
    }
}

cort_status *cort_graph_const_slot(cort_graph *g, const char *name, cort_value *value, int32_t *out) {
    const char *nm = cort_arena_strndup(g->arena, name, strlen(name));
    if (!nm) { cort_value_release(value); return cort_error_oom(); }
    int32_t s;
    cort_status *st = slot_new(g, nm, &s);
    if (st) { cort_value_release(value); return st; }
    g->consts[s] = value;
    tinfo_from_value(&g->slot_info[s], value);
    *out = s;
    return NULL;
}

/* ---------------------------------------------------------------- constant folding */
static int foldable(const cort_node *n) {
    const char *op = n->op_type;
    if (!strncmp(op, "Random", 6) || !strcmp(op, "Multinomial") || !strcmp(op, "Bernoulli") ||
        !strcmp(op, "If") || !strcmp(op, "Loop") || !strcmp(op, "Scan") || !strcmp(op, "SequenceMap") ||
        !strcmp(op, "Dropout"))
        return 0;
    if (n->provider && (n->provider->caps & CORT_PROVIDER_OPAQUE)) return 0;
    return n->n_implicit == 0;
}

#define FOLD_MAX_BYTES (64u << 20)

static cort_graph *root_graph(cort_graph *g) {
    while (g->parent) g = g->parent;
    return g;
}

static cort_status *try_fold(cort_graph *g, cort_node *n) {
    if (!foldable(n)) return NULL;
    /* the fold budget (graph.h): outputs whose size inference knows must fit what is left of it;
     * the kernel may create no tensor bigger than that either (ex.max_bytes), so an output of
     * unknown shape is refused at its allocation, not after it */
    cort_graph *root = root_graph(g);
    size_t left = root->fold_limit > root->fold_used ? root->fold_limit - root->fold_used : 0, known = 0;
    if (left > cort_max_tensor_bytes(g->opts)) left = cort_max_tensor_bytes(g->opts);
    for (size_t i = 0; i < n->n_outputs; i++) {
        if (n->out_slot[i] < 0) continue;
        const cort_tinfo *t = &g->slot_info[n->out_slot[i]];
        size_t b;
        if (t->kind != CORT_VKIND_TENSOR || !cort_tinfo_shape_known(t)) continue;
        if (!cort_tensor_fits(t->elem, t->dims, (size_t)t->rank, left, &b) || (known += b) > left) return NULL;
    }
    if (!left) return NULL;
    cort_value **in = cort_calloc(n->n_inputs + n->n_outputs + 2, sizeof *in);
    if (!in) return cort_error_oom();
    cort_value **outs = in + n->n_inputs + 1;
    cort_value *dummy = NULL;
    int is_shape = !strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size");
    for (size_t i = 0; i < n->n_inputs; i++) {
        in[i] = NULL;
        if (n->in_slot[i] < 0) continue;
        const cort_tinfo *t = &g->slot_info[n->in_slot[i]];
        if (t->value) { in[i] = (cort_value *)t->value; continue; }
        /* Shape/Size only read the shape: fold them when the shape is static. */
        if (is_shape && i == 0 && t->kind == CORT_VKIND_TENSOR && cort_tinfo_shape_known(t) && t->elem) {
            static char no_data;
            cort_status *vst = cort_tensor_view(t->elem, t->dims, (size_t)t->rank, &no_data, NULL, &dummy);
            if (vst) { cort_free(in); return cort_status_code(vst) == CORT_ERROR_OUT_OF_MEMORY ? vst : (cort_status_free(vst), NULL); }
            in[i] = dummy;
            continue;
        }
        cort_value_release(dummy);
        cort_free(in);
        return NULL;
    }
    for (size_t i = 0; i < n->n_inputs; i++)
        if (in[i] && in[i]->kind == CORT_VKIND_TENSOR && in[i]->bytes > FOLD_MAX_BYTES && !is_shape) {
            cort_value_release(dummy);
            cort_free(in);
            return NULL;
        }
    for (size_t i = 0; i < n->n_inputs; i++) {   /* the kernel reads them: out of the file first */
        cort_status *mst = in[i] ? cort_value_materialize(in[i]) : NULL;
        if (mst) { cort_value_release(dummy); cort_free(in); return mst; }
    }
    cort_exec ex = { NULL, NULL, 0, NULL, NULL, NULL, NULL, left };
    cort_kernel_ctx ctx = { n, n->state, n->opset, in, n->n_inputs, outs, n->n_outputs, NULL, 0, NULL, &ex };
    cort_status *st = n->op->run(&ctx);
    cort_value_release(dummy);
    int ok = !st;
    cort_status_free(st);   /* a failing fold is left for run time, where it reports the same error */
    for (size_t i = 0; ok && i < n->n_outputs; i++)
        if (n->out_slot[i] >= 0 && !outs[i]) ok = 0;
    size_t made = 0;
    for (size_t i = 0; ok && i < n->n_outputs; i++)
        if (n->out_slot[i] >= 0 && outs[i]) made += outs[i]->kind == CORT_VKIND_TENSOR ? outs[i]->bytes : 0;
    if (ok && made > left) ok = 0;   /* several outputs, each below the limit, together above it */
    if (ok) {
        root->fold_used += made;
        for (size_t i = 0; i < n->n_outputs; i++) {
            int32_t s = n->out_slot[i];
            if (s < 0) continue;
            g->consts[s] = outs[i];
            outs[i] = NULL;
            tinfo_from_value(&g->slot_info[s], g->consts[s]);
        }
        if (g->opts->optimization_level >= 1) g->skip[n->index] = 1;
    }
    for (size_t i = 0; i < n->n_outputs; i++) cort_value_release(outs[i]);
    cort_free(in);
    return NULL;
}

/* Lazy constants (value.h) in graph g. Before any kernel is built (final = 0): one stays in the file
 * only if every reader is a Conv, MatMul or Gemm reading it as input 1, the weights those kernels
 * pack, and it is no graph output and g no subgraph (outer-scope readers are implicit inputs, never
 * kernels that pack). At the end (final = 1): only if every executed reader packed it. The rest are
 * copied into memory of their own now. */
static cort_status *settle_lazy_consts(cort_graph *g, int final) {
    size_t biggest = 0;
    g->wscratch_last = 0;
    for (size_t s = 0; s < g->n_slots; s++) {
        cort_value *v = g->consts[s];
        if (!v || !v->lazy_src) continue;
        int keep = !g->parent && !cort_graph_is_output(g->ir, g->slot_names[s]), conv = 0;
        for (size_t i = 0; i < g->n_nodes && keep; i++) {
            const cort_node *n = &g->nodes[i];
            if (g->skip[i]) continue;
            for (size_t k = 0; k < n->n_inputs + n->n_implicit && keep; k++) {
                int32_t q = k < n->n_inputs ? n->in_slot[k] : n->implicit_slot[k - n->n_inputs];
                if (q != (int32_t)s) continue;
                if (final) keep = k < 32 && ((n->const_packed >> k) & 1);
                else keep = k == 1 && !n->domain[0] &&
                            (!strcmp(n->op_type, "Conv") || !strcmp(n->op_type, "MatMul") || !strcmp(n->op_type, "Gemm"));
                if (keep && !strcmp(n->op_type, "Conv")) {
                    conv = 1;
                    if (i + 1 > g->wscratch_last) g->wscratch_last = i + 1;
                }
            }
        }
        if (!keep) CORT_TRY(cort_value_materialize(v));
        else if (conv && v->bytes > biggest) biggest = v->bytes;   /* MatMul/Gemm pack from the bytes */
    }
    /* one buffer for the biggest a Conv copies through: regrowing it would fault it in again */
    if (!final && biggest) CORT_TRY(cort_graph_wscratch_reserve(g, biggest));
    if (final) cort_graph_wscratch_drop(g);
    return NULL;
}

/* ---------------------------------------------------------------- fusion (level 2) */
/* Consumers of slot s among executed nodes; returns the count and the first consumer's index. */
size_t cort_graph_consumers(const cort_graph *g, int32_t s, size_t *first) {
    size_t c = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->skip[i]) continue;
        const cort_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_inputs + n->n_implicit; k++) {
            int32_t q = k < n->n_inputs ? n->in_slot[k] : n->implicit_slot[k - n->n_inputs];
            if (q == s) { if (!c) *first = i; c++; }
        }
    }
    return c;
}

int cort_graph_is_output(const cort_graph_ir *ir, const char *name) {
    for (size_t i = 0; i < ir->n_outputs; i++)
        if (!strcmp(ir->outputs[i].name, name)) return 1;
    return 0;
}

/* ---------------------------------------------------------------- main */
static cort_status *node_err(const cort_node_ir *nd, cort_code code, const char *fmt, const char *arg) {
    return cort_error(code, "node '%s' (%s): %s%s", nd->name, nd->op_type, fmt, arg ? arg : "");
}

static const cort_op_def *provider_kernel(cort_graph *g, cort_node *n) {
    const cort_compile_opts *o = g->opts;
    if (!o->n_providers) return NULL;
    cort_tinfo ins_stack[16], *ins = ins_stack;
    if (n->n_inputs > 16 && !(ins = cort_calloc(n->n_inputs, sizeof *ins))) return NULL;
    for (size_t i = 0; i < n->n_inputs; i++) {
        if (n->in_slot[i] >= 0) ins[i] = g->slot_info[n->in_slot[i]];
        else { cort_tinfo_unknown(&ins[i]); ins[i].present = 0; }
    }
    const cort_op_def *found = NULL;
    for (size_t p = 0; p < o->n_providers && !found; p++) {
        const cort_provider *pv = &o->providers[p];
        char reason[128] = "";
        if (pv->vt->supports(pv->instance, n, ins, reason, sizeof reason)) {
            const cort_op_def *k = pv->vt->kernel(pv->instance, n);
            if (k) { n->provider = pv->vt; found = k; }
        } else if (!n->provider_note) {
            /* keep the first refusal: cort info --nodes shows why a node stayed on the CPU */
            char note[192];
            snprintf(note, sizeof note, "%s: %s", pv->vt->name, reason[0] ? reason : "not supported");
            n->provider_note = cort_arena_strndup(g->arena, note, strlen(note));
        }
    }
    if (ins != ins_stack) cort_free(ins);
    return found;
}

const cort_op_def *cort_graph_provider_find(const cort_graph *g, const cort_node *n, const char *domain,
                                            const char *op_type, int opset) {
    const cort_provider_vtable *vt = n->provider;
    if (!vt || !vt->find) return NULL;
    void *instance = NULL;   /* the default provider has none */
    for (size_t p = 0; g->opts && p < g->opts->n_providers; p++)
        if (g->opts->providers[p].vt == vt) instance = g->opts->providers[p].instance;
    return vt->find(instance, domain, op_type, opset);
}

static cort_status *infer_node(cort_graph *g, cort_node *n) {
    const cort_provider_vtable *dflt = cort_provider_default();
    n->provider = dflt;
    const cort_op_def *op = provider_kernel(g, n);
    if (!op) op = dflt->kernel(NULL, n);
    if (!op) {
        int lo, hi;
        const char *dom = n->domain[0] ? n->domain : "ai.onnx";
        if (dflt->known && dflt->known(NULL, n->domain, n->op_type, &lo, &hi))
            return cort_error(CORT_ERROR_NOT_IMPLEMENTED,
                              "node '%s' (%s): operator %s.%s is not implemented for opset version %d (implemented: %d..%d)",
                              n->name, n->op_type, dom, n->op_type, n->opset, lo, hi);
        return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "node '%s' (%s): operator %s.%s (opset version %d) is not implemented",
                          n->name, n->op_type, dom, n->op_type, n->opset);
    }
    n->op = op;
    if (op->types && (size_t)op->type_input < n->n_inputs && n->in_slot[op->type_input] >= 0) {
        const cort_tinfo *t = &g->slot_info[n->in_slot[op->type_input]];
        if (t->kind == CORT_VKIND_TENSOR && t->elem != CORT_TYPE_UNDEFINED && !(op->types & CORT_TBIT(t->elem)))
            return cort_error(CORT_ERROR_NOT_IMPLEMENTED,
                              "node '%s' (%s): input %d '%s' has element type %s, which %s (opset %d) does not support",
                              n->name, n->op_type, op->type_input, n->ir->inputs[op->type_input], cort_type_name(t->elem),
                              n->op_type, n->opset);
    }
    if (op->init) {
        cort_status *st = op->init(n, &n->state);
        if (st) {
            if (strncmp(cort_status_message(st), "node '", 6))
                st = cort_error_wrap(st, "node '%s' (%s): ", n->name, n->op_type);
            return st;
        }
    }
    /* one slot more than needed: infer functions may assume at least one input and one output */
    cort_tinfo *ins = cort_calloc(n->n_inputs + n->n_outputs + 2, sizeof *ins);
    if (!ins) return cort_error_oom();
    cort_tinfo *outs = ins + n->n_inputs + 1;
    cort_tinfo_unknown(&ins[n->n_inputs]);
    ins[n->n_inputs].present = 0;
    cort_tinfo_unknown(&outs[n->n_outputs]);
    for (size_t i = 0; i < n->n_inputs; i++) {
        if (n->in_slot[i] >= 0) ins[i] = g->slot_info[n->in_slot[i]];
        else { cort_tinfo_unknown(&ins[i]); ins[i].present = 0; }
    }
    for (size_t i = 0; i < n->n_outputs; i++) cort_tinfo_unknown(&outs[i]);
    cort_infer_ctx ictx = { n, n->opset, n->state, n->n_inputs, ins, n->n_outputs, outs };
    cort_status *st = op->infer(&ictx);
    if (st) {
        cort_free(ins);
        if (strncmp(cort_status_message(st), "node '", 6))
            st = cort_error_wrap(st, "node '%s' (%s): ", n->name, n->op_type);
        return st;
    }
    for (size_t i = 0; i < n->n_outputs; i++) {
        int32_t s = n->out_slot[i];
        if (s < 0) continue;
        cort_tinfo declared = g->slot_info[s];   /* from value_info, if any */
        outs[i].value = NULL;
        outs[i].present = 1;
        if (outs[i].kind == CORT_VKIND_UNKNOWN && declared.kind != CORT_VKIND_UNKNOWN) outs[i] = declared;
        g->slot_info[s] = outs[i];
        /* the size policy: a shape known now that no tensor may have fails creation, naming the
         * node, before any kernel or fold allocates it */
        const cort_tinfo *t = &g->slot_info[s];   /* outs lives in ins, freed before the message */
        size_t bytes, lim = cort_max_tensor_bytes(g->opts);
        if (t->kind == CORT_VKIND_TENSOR && cort_tinfo_shape_known(t) &&
            !cort_tensor_fits(t->elem, t->dims, (size_t)t->rank, lim, &bytes)) {
            char buf[256];
            cort_shape_str(t->dims, (size_t)t->rank, buf, sizeof buf);
            cort_free(ins);
            if (bytes == SIZE_MAX)
                return cort_error(CORT_ERROR_INVALID_MODEL,
                                  "node '%s' (%s): output %zu '%s' would have shape %s%s, whose byte size overflows "
                                  "(max_tensor_bytes is %zu)", n->name, n->op_type, i, n->ir->outputs[i],
                                  cort_type_name(t->elem), buf, lim);
            return cort_error(CORT_ERROR_INVALID_MODEL,
                              "node '%s' (%s): output %zu '%s' would have shape %s%s, %zu bytes, above "
                              "max_tensor_bytes %zu", n->name, n->op_type, i, n->ir->outputs[i],
                              cort_type_name(t->elem), buf, bytes, lim);
        }
    }
    cort_free(ins);
    return try_fold(g, n);
}

/* ---------------------------------------------------------------- compile phases */
/* 2. slots for initializers, inputs and node outputs */
static cort_status *make_slots(cort_graph *g, const xlist *xl) {
    const cort_graph_ir *ir = g->ir;
    const cort_compile_opts *opts = g->opts;
    cort_graph *parent = g->parent;
    for (size_t i = 0; i < ir->n_initializers; i++) {
        int32_t s;
        if (cort_namemap_get(&g->names, ir->initializers[i].name) >= 0) {
            return cort_error(CORT_ERROR_INVALID_MODEL, "initializer '%s' is defined twice", ir->initializers[i].name);
        }
        CORT_TRY(slot_new(g, ir->initializers[i].name, &s));
        g->consts[s] = cort_value_retain(ir->initializers[i].value);
        tinfo_from_value(&g->slot_info[s], g->consts[s]);
    }
    g->input_slots = cort_calloc(ir->n_inputs + 1, sizeof *g->input_slots);
    g->input_info = cort_calloc(ir->n_inputs + 1, sizeof *g->input_info);
    if (!g->input_slots || !g->input_info) return cort_error_oom();
    for (size_t i = 0; i < ir->n_inputs; i++) {
        const cort_value_info_ir *vi = &ir->inputs[i];
        if (cort_namemap_get(&g->names, vi->name) >= 0) {
            if (parent) {   /* subgraph inputs are positional: keep the slot even if an initializer shares it */
                return cort_error(CORT_ERROR_INVALID_MODEL, "subgraph input '%s' is defined twice", vi->name);
            }
            continue;   /* an initializer with the same name: a constant, not fed by users */
        }
        int32_t s;
        CORT_TRY(slot_new(g, vi->name, &s));
        tinfo_from_type_ir(&g->slot_info[s], &vi->type, opts);
        g->input_slots[g->n_inputs] = s;
        g->input_info[g->n_inputs++] = vi;
    }
    for (size_t i = 0; i < xl->n; i++) {
        const cort_node_ir *nd = xl->v[i].ir;
        for (size_t k = 0; k < nd->n_outputs; k++) {
            if (!nd->outputs[k][0]) continue;
            if (cort_namemap_get(&g->names, nd->outputs[k]) >= 0) {
                return node_err(nd, CORT_ERROR_INVALID_MODEL, "output is already produced elsewhere: ", nd->outputs[k]);
            }
            int32_t s;
            CORT_TRY(slot_new(g, nd->outputs[k], &s));
        }
    }
    /* declared types of intermediates/outputs (value_info) seed inference where ops cannot infer */
    for (size_t i = 0; i < ir->n_value_infos + ir->n_outputs; i++) {
        const cort_value_info_ir *vi = i < ir->n_value_infos ? &ir->value_infos[i] : &ir->outputs[i - ir->n_value_infos];
        int32_t s = cort_namemap_get(&g->names, vi->name);
        if (s >= 0 && !g->consts[s] && g->slot_info[s].kind == CORT_VKIND_UNKNOWN)
            tinfo_from_type_ir(&g->slot_info[s], &vi->type, opts);
    }
    return NULL;
}

/* 3. nodes: resolve inputs (local or outer scope) and implicit inputs of subgraphs; *out: the nodes
 * in file order, for order_nodes. */
static cort_status *make_nodes(cort_graph *g, const xlist *xl, cort_node **out) {
    cort_status *st = NULL;
    g->n_nodes = xl->n;
    g->nodes = cort_calloc(xl->n + 1, sizeof *g->nodes);
    g->skip = cort_calloc(xl->n + 1, 1);
    g->release = cort_calloc(xl->n + 1, sizeof *g->release);
    cort_node *tmp = cort_calloc(xl->n + 1, sizeof *tmp);
    if (!g->nodes || !g->skip || !g->release || !tmp) { cort_free(tmp); return cort_error_oom(); }
    for (size_t i = 0; i < xl->n && !st; i++) {
        const cort_node_ir *nd = xl->v[i].ir;
        cort_node *n = &tmp[i];
        n->ir = nd;
        n->name = nd->name ? nd->name : "";
        n->op_type = nd->op_type;
        n->domain = norm_domain(nd->domain);
        n->opset = xl->v[i].opset;
        n->n_inputs = nd->n_inputs;
        n->n_outputs = nd->n_outputs;
        n->graph = g;
        n->in_slot = cort_arena_alloc(g->arena, (nd->n_inputs + 1) * sizeof(int32_t));
        n->out_slot = cort_arena_alloc(g->arena, (nd->n_outputs + 1) * sizeof(int32_t));
        if (!n->in_slot || !n->out_slot) { st = cort_error_oom(); break; }
        for (size_t k = 0; k < nd->n_inputs && !st; k++) {
            if (!nd->inputs[k][0]) { n->in_slot[k] = -1; continue; }
            st = resolve(g, nd->inputs[k], &n->in_slot[k]);
            if (!st && n->in_slot[k] == -2) {
                char what[64];
                snprintf(what, sizeof what, "input %zu '", k);
                st = cort_error(CORT_ERROR_INVALID_MODEL,
                                "node '%s' (%s): %s%s' is not produced by any node, graph input or initializer",
                                nd->name, nd->op_type, what, nd->inputs[k]);
            }
        }
        for (size_t k = 0; k < nd->n_outputs; k++)
            n->out_slot[k] = nd->outputs[k][0] ? cort_namemap_get(&g->names, nd->outputs[k]) : -1;
        /* implicit inputs */
        strset fv = { 0 };
        for (size_t a = 0; a < nd->n_attrs && !st; a++) {
            const cort_attr_ir *at = &nd->attrs[a];
            size_t ng = at->type == CORT_ATTR_GRAPH ? 1 : at->type == CORT_ATTR_GRAPHS ? at->n : 0;
            for (size_t j = 0; j < ng && !st; j++) {
                const cort_graph_ir *sub = at->type == CORT_ATTR_GRAPH ? at->g : at->graphs[j];
                if (sub) st = free_names(sub, &fv, 0);
            }
        }
        if (!st && fv.n) {
            n->implicit_slot = cort_arena_alloc(g->arena, fv.n * sizeof(int32_t));
            n->implicit_names = cort_arena_alloc(g->arena, fv.n * sizeof(char *));
            if (!n->implicit_slot || !n->implicit_names) st = cort_error_oom();
            for (size_t q = 0; q < fv.n && !st; q++) {
                int32_t s;
                st = resolve(g, fv.v[q], &s);
                if (!st && s == -2)
                    st = cort_error(CORT_ERROR_INVALID_MODEL,
                                    "node '%s' (%s): subgraph uses '%s', which is not defined in any enclosing scope",
                                    nd->name, nd->op_type, fv.v[q]);
                if (!st) {
                    n->implicit_slot[n->n_implicit] = s;
                    n->implicit_names[n->n_implicit++] = fv.v[q];
                }
            }
        }
        cort_free(fv.v);
    }
    if (st) { cort_free(tmp); return st; }
    *out = tmp;
    return NULL;
}

/* 4. topological order (Kahn; stable with respect to file order) */
static cort_status *order_nodes(cort_graph *g, cort_node *tmp, size_t n) {
    cort_status *st = NULL;
    int32_t *indeg = NULL, *order = NULL, **users = NULL;
    size_t *n_users = NULL;
    int32_t *producer = cort_calloc(g->n_slots + 1, sizeof *producer);
    indeg = cort_calloc(n + 1, sizeof *indeg);
    order = cort_calloc(n + 1, sizeof *order);
    n_users = cort_calloc(n + 1, sizeof *n_users);
    users = cort_calloc(n + 1, sizeof *users);
    if (!producer || !indeg || !order || !n_users || !users) {
        cort_free(producer); st = cort_error_oom(); goto done;
    }
    for (size_t s = 0; s < g->n_slots; s++) producer[s] = -1;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < tmp[i].n_outputs; k++)
            if (tmp[i].out_slot[k] >= 0) producer[tmp[i].out_slot[k]] = (int32_t)i;
    for (size_t i = 0; i < n && !st; i++) {
        size_t total = tmp[i].n_inputs + tmp[i].n_implicit;
        for (size_t k = 0; k < total; k++) {
            int32_t s = k < tmp[i].n_inputs ? tmp[i].in_slot[k] : tmp[i].implicit_slot[k - tmp[i].n_inputs];
            if (s < 0 || producer[s] < 0) continue;
            int32_t p = producer[s];
            int32_t *u = cort_realloc(users[p], (n_users[p] + 1) * sizeof *u);
            if (!u) { st = cort_error_oom(); break; }
            users[p] = u;
            u[n_users[p]++] = (int32_t)i;
            indeg[i]++;
        }
    }
    cort_free(producer);
    if (st) goto done;
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++)
        if (!indeg[i]) order[tail++] = (int32_t)i;
    while (head < tail) {
        int32_t i = order[head++];
        for (size_t k = 0; k < n_users[i]; k++)
            if (--indeg[users[i][k]] == 0) order[tail++] = users[i][k];
    }
    if (tail != n) {
        size_t bad = 0;
        while (bad < n && !indeg[bad]) bad++;
        st = cort_error(CORT_ERROR_INVALID_MODEL, "node '%s' (%s) is part of a cycle (graph is not a DAG)",
                        tmp[bad].name, tmp[bad].op_type);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        g->nodes[i] = tmp[order[i]];
        g->nodes[i].index = i;
    }
done:
    if (users)
        for (size_t i = 0; i < n; i++) cort_free(users[i]);
    cort_free(users);
    cort_free(n_users);
    cort_free(indeg);
    cort_free(order);
    cort_free(tmp);
    return st;
}

/* 5. inference, kernel resolution, constant folding — in execution order */
static cort_status *build_kernels(cort_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (!g->skip[i]) CORT_TRY(infer_node(g, &g->nodes[i]));
        /* after the last Conv that packs from the scratch: freed now, it is not resident under the
         * MatMul/Gemm weights packed later (ResNet-50: 9 MB of 163 MB at the peak of creation) */
        if (i + 1 == g->wscratch_last) cort_graph_wscratch_drop(g);
    }
    return NULL;
}

/* 6. graph outputs */
static cort_status *bind_outputs(cort_graph *g) {
    const cort_graph_ir *ir = g->ir;
    g->output_slots = cort_calloc(ir->n_outputs + 1, sizeof *g->output_slots);
    g->output_info = cort_calloc(ir->n_outputs + 1, sizeof *g->output_info);
    if (!g->output_slots || !g->output_info) return cort_error_oom();
    for (size_t i = 0; i < ir->n_outputs; i++) {
        int32_t s;
        CORT_TRY(resolve(g, ir->outputs[i].name, &s));
        if (s == -2) {
            return cort_error(CORT_ERROR_INVALID_MODEL, "graph output %zu '%s' is not produced by any node, input or initializer",
                              i, ir->outputs[i].name);
        }
        g->output_slots[i] = s;
        g->output_info[i] = &ir->outputs[i];
    }
    g->n_outputs = ir->n_outputs;
    return NULL;
}

/* 7. release schedule */
static cort_status *release_schedule(cort_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const cort_node *n = &g->nodes[i];
        if (g->skip[i]) continue;
        for (size_t k = 0; k < n->n_inputs + n->n_implicit; k++) {
            int32_t s = k < n->n_inputs ? n->in_slot[k] : n->implicit_slot[k - n->n_inputs];
            if (s >= 0) g->last_use[s] = (int32_t)i;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) g->last_use[g->output_slots[i]] = INT32_MAX;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const cort_node *n = &g->nodes[i];
        if (g->skip[i]) continue;
        size_t cnt = 0;
        int32_t *list = cort_arena_alloc(g->arena, (n->n_inputs + n->n_implicit + n->n_outputs + 1) * sizeof *list);
        if (!list) return cort_error_oom();
        for (size_t k = 0; k < n->n_inputs + n->n_implicit; k++) {
            int32_t s = k < n->n_inputs ? n->in_slot[k] : n->implicit_slot[k - n->n_inputs];
            if (s < 0 || g->last_use[s] != (int32_t)i) continue;
            int dup = 0;
            for (size_t q = 0; q < cnt; q++) dup |= list[q] == s;
            if (!dup) list[cnt++] = s;
        }
        for (size_t k = 0; k < n->n_outputs; k++) {
            int32_t s = n->out_slot[k];
            if (s >= 0 && g->last_use[s] < 0) list[cnt++] = s;
        }
        list[cnt] = -1;
        g->release[i] = list;
    }
    return NULL;
}

/* 7b. inputs whose contents are never read (unused, or CastLike's type source): only their
 * element type must match the declaration, not their shape */
static cort_status *mark_type_only_inputs(cort_graph *g) {
    g->input_type_only = cort_calloc(g->n_inputs + 1, 1);
    if (!g->input_type_only) return cort_error_oom();
    for (size_t k = 0; k < g->n_inputs; k++) {
        int32_t s = g->input_slots[k];
        int type_only = 1, used = 0;
        for (size_t i = 0; i < g->n_nodes && type_only; i++) {
            const cort_node *n = &g->nodes[i];
            for (size_t q = 0; q < n->n_inputs; q++)
                if (n->in_slot[q] == s) { used = 1; type_only &= !strcmp(n->op_type, "CastLike") && q == 1; }
            for (size_t q = 0; q < n->n_implicit; q++) type_only &= n->implicit_slot[q] != s;
        }
        for (size_t i = 0; i < g->n_outputs; i++) type_only &= g->output_slots[i] != s;
        (void)used;   /* an input nothing reads is as free as one only typed */
        g->input_type_only[k] = (uint8_t)type_only;
    }
    return NULL;
}

/* 8. subgraph: map outer names to the parent node's implicit inputs */
static cort_status *map_outer_names(cort_graph *g) {
    const cort_node *parent_node = g->parent_node;
    if (parent_node && g->n_outer) {
        g->outer_index = cort_calloc(g->n_outer, sizeof *g->outer_index);
        if (!g->outer_index) return cort_error_oom();
        for (size_t i = 0; i < g->n_outer; i++) {
            g->outer_index[i] = -1;
            for (size_t k = 0; k < parent_node->n_implicit; k++)
                if (!strcmp(parent_node->implicit_names[k], g->outer_names[i])) g->outer_index[i] = (int32_t)k;
            if (g->outer_index[i] < 0) {
                return cort_error(CORT_ERROR_INVALID_MODEL, "node '%s' (%s): subgraph value '%s' is not in scope",
                                  parent_node->name, parent_node->op_type, g->outer_names[i]);
            }
        }
    }
    return NULL;
}

cort_status *cort_graph_compile(const cort_graph_ir *ir, const cort_compile_opts *opts, cort_graph *parent,
                                const cort_node *parent_node, cort_graph **out) {
    cort_status *st = NULL;
    xlist xl = { 0 };
    unsigned counter = 0;
    cort_node *tmp = NULL;
    cort_graph *g = cort_calloc(1, sizeof *g);
    if (!g) return cort_error_oom();
    g->ir = ir;
    g->parent = parent;
    g->parent_node = parent_node;
    g->opts = opts;
    if (!parent) {
        size_t init_bytes = 0;
        for (size_t i = 0; i < ir->n_initializers; i++) {
            const cort_value *v = ir->initializers[i].value;
            if (v && v->kind == CORT_VKIND_TENSOR && cort_add_size_ovf(init_bytes, v->bytes, &init_bytes)) init_bytes = SIZE_MAX;
        }
        size_t budget = opts->fold_budget_set ? opts->fold_budget : CORT_DEFAULT_FOLD_BUDGET;
        if (cort_mul_size_ovf(init_bytes, 2, &g->fold_limit) || cort_add_size_ovf(g->fold_limit, budget, &g->fold_limit))
            g->fold_limit = SIZE_MAX;
    }
    if ((st = cort_arena_create(&g->arena))) goto error;
    /* 1. expand functions */
    if ((st = expand_nodes(g, ir->nodes, ir->n_nodes, opts->model->opsets, opts->model->n_opsets, 0, &xl, &counter)))
        goto error;
    if ((st = make_slots(g, &xl))) goto error;                  /* 2 */
    if ((st = make_nodes(g, &xl, &tmp))) goto error;            /* 3 */
    if ((st = order_nodes(g, tmp, xl.n))) goto error;           /* 4 (frees tmp) */
    /* 4a. constants still in the model file stay there only if all their readers pack them */
    if ((st = settle_lazy_consts(g, 0))) goto error;
    /* 4b. BatchNormalization folded into the convolution before it (before its weights are packed) */
    if (opts->optimization_level >= 2 && (st = cort_passes_run(g, CORT_PASSES_BEFORE_KERNELS))) goto error;
    if ((st = build_kernels(g))) goto error;                    /* 5 */
    /* 5b. fusions, then the providers' plans */
    if (opts->optimization_level >= 2 && (st = cort_passes_run(g, CORT_PASSES_AFTER_KERNELS))) goto error;
    for (size_t p = 0; p < opts->n_providers; p++)
        if (opts->providers[p].vt->partition &&
            (st = opts->providers[p].vt->partition(opts->providers[p].instance, g)))
            goto error;
    if ((st = bind_outputs(g))) goto error;                     /* 6 */
    if ((st = release_schedule(g))) goto error;                 /* 7 */
    if ((st = mark_type_only_inputs(g))) goto error;            /* 7b */
    /* 7c. the lazy constants some executed node reads after all get their own copy */
    if ((st = settle_lazy_consts(g, 1))) goto error;
    if ((st = map_outer_names(g))) goto error;                  /* 8 */
    cort_free(xl.v);
    *out = g;
    return NULL;
error:
    cort_free(xl.v);
    cort_graph_free(g);
    return st;
}

void cort_graph_free(cort_graph *g) {
    if (!g) return;
    for (size_t i = 0; g->nodes && i < g->n_nodes; i++)
        if (g->nodes[i].op && g->nodes[i].op->free_state && g->nodes[i].state) g->nodes[i].op->free_state(g->nodes[i].state);
    for (size_t s = 0; s < g->n_slots; s++) cort_value_release(g->consts[s]);
    cort_free(g->slot_names);
    cort_free(g->slot_info);
    cort_free(g->consts);
    cort_free(g->last_use);
    cort_namemap_free(&g->names);
    cort_free(g->input_slots);
    cort_free(g->input_info);
    cort_free(g->input_type_only);
    cort_free(g->output_slots);
    cort_free(g->output_info);
    cort_free(g->outer_slots);
    cort_free(g->outer_names);
    cort_free(g->outer_index);
    cort_free(g->nodes);
    cort_free(g->skip);
    cort_free(g->release);
    cort_free(g->wscratch);
    cort_arena_free(g->arena);
    cort_free(g);
}
