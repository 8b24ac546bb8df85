/* The XNNPACK provider's vtable: options, per-session instance (pthreadpool), node selection, and the
 * partition plan (which outputs stay NHWC between XNNPACK nodes). */
#ifdef CORT_HAVE_XNNPACK
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "xnn_internal.h"

static const char *const option_keys[] = { "threads", "nhwc_chains", NULL };

static cort_status *xnn_provider_create(const char *const *keys, const char *const *values, size_t n,
                                        int session_threads, void **instance) {
    long threads = session_threads > 0 ? session_threads : 1;
    int nhwc = 1;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(keys[i], "threads")) {
            char *end = NULL;
            errno = 0;
            long v = strtol(values[i], &end, 10);
            if (errno || end == values[i] || *end || v < 0 || v > 1024)
                return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                                  "XNNPACK provider: option 'threads' = '%s', expected an integer 0..1024 "
                                  "(0 = the session's thread count)", values[i]);
            if (v > 0) threads = v;
        } else if (!strcmp(keys[i], "nhwc_chains")) {
            if (strcmp(values[i], "0") && strcmp(values[i], "1"))
                return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                                  "XNNPACK provider: option 'nhwc_chains' = '%s', expected 0 or 1", values[i]);
            nhwc = values[i][0] == '1';
        } else {
            return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                              "XNNPACK provider: unknown option '%s' (valid: threads, nhwc_chains)", keys[i]);
        }
    }
    xnn_owner *owner = NULL;
    CORT_TRY(xnn_owner_get(&owner));
    xnn_instance *inst = cort_calloc(1, sizeof *inst);
    if (!inst) return cort_error_oom();
    inst->owner = owner;
    inst->threads = (int)threads;
    inst->nhwc_chains = nhwc;
    atomic_flag_clear(&inst->tp_busy);
    atomic_init(&inst->tp, NULL);
    if (pthread_mutex_init(&inst->tp_lock, NULL)) { cort_free(inst); return cort_error_oom(); }
    *instance = inst;
    return NULL;
}

static void xnn_provider_destroy(void *instance) {
    xnn_instance *inst = instance;
    if (!inst) return;
    pthreadpool_t tp = atomic_load(&inst->tp);
    if (tp) pthreadpool_destroy(tp);
    pthread_mutex_destroy(&inst->tp_lock);
    cort_free(inst);
}

static const void *xnn_provider_allocator(void *instance) { return ((xnn_instance *)instance)->owner; }

pthreadpool_t xnn_tp_take(xnn_instance *inst) {
    if (inst->threads <= 1) return NULL;
    pthreadpool_t tp = atomic_load_explicit(&inst->tp, memory_order_acquire);
    if (!tp) {
        pthread_mutex_lock(&inst->tp_lock);
        tp = atomic_load_explicit(&inst->tp, memory_order_relaxed);
        if (!tp && !inst->tp_failed) {
            /* pthreadpool allocates with the system allocator, outside cort's accounting; if it
             * cannot, this session's XNNPACK operators simply run on the calling thread */
            tp = pthreadpool_create((size_t)inst->threads);
            if (tp) atomic_store_explicit(&inst->tp, tp, memory_order_release);
            else inst->tp_failed = 1;
        }
        pthread_mutex_unlock(&inst->tp_lock);
        if (!tp) return NULL;
    }
    if (atomic_flag_test_and_set_explicit(&inst->tp_busy, memory_order_acquire)) return NULL;
    return tp;
}

void xnn_tp_give(xnn_instance *inst, pthreadpool_t tp) {
    if (tp) atomic_flag_clear_explicit(&inst->tp_busy, memory_order_release);
}

/* ---------------------------------------------------------------- node selection */
static const xnn_kind *const kind_tables[] = { xnn_conv_kinds, xnn_pool_kinds, xnn_gemm_kinds, xnn_elementwise_kinds,
                                               xnn_shape_kinds };

const xnn_kind *xnn_kind_find(const char *op_type) {
    for (size_t t = 0; t < sizeof kind_tables / sizeof kind_tables[0]; t++)
        for (const xnn_kind *k = kind_tables[t]; k->op_type; k++)
            if (!strcmp(k->op_type, op_type)) return k;
    return NULL;
}

const xnn_kind *xnn_kind_of_def(const cort_op_def *def) {
    for (size_t t = 0; t < sizeof kind_tables / sizeof kind_tables[0]; t++)
        for (const xnn_kind *k = kind_tables[t]; k->op_type; k++)
            if (k->def == def) return k;
    return NULL;
}

static int xnn_provider_supports(void *instance, const cort_node *node, const cort_tinfo *in, char *reason,
                                 size_t len) {
    (void)instance;
    if (node->domain[0]) XNN_REFUSE("domain '%s' is not handled by XNNPACK", node->domain);
    const xnn_kind *k = xnn_kind_find(node->op_type);
    if (!k) XNN_REFUSE("%s has no XNNPACK operator", node->op_type);
    if (node->opset < k->min_opset) XNN_REFUSE("opset %d < %d", node->opset, k->min_opset);
    if (!cort_op_find(node->domain, node->op_type, node->opset)) XNN_REFUSE("no CPU kernel to share inference with");
    if (node->n_inputs < 1 || !xnn_float_input(in, node->n_inputs, 0)) XNN_REFUSE("input 0 is not a float tensor");
    for (size_t i = 1; i < node->n_outputs; i++)
        if (node->out_slot[i] >= 0) XNN_REFUSE("output %zu is used", i);
    return k->supports(node, in, reason, len);
}

static const cort_op_def *xnn_provider_kernel(void *instance, const cort_node *node) {
    (void)instance;
    const xnn_kind *k = xnn_kind_find(node->op_type);
    return k ? k->def : NULL;
}

/* ---------------------------------------------------------------- partition: NHWC across chains */
/* Ops whose kernel honours XNN_EMIT_NHWC on output 0 (they write it channels-last when asked). */
static const char *const emit_ops[] = { "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
                                        "Resize", "DepthToSpace", "Relu", "Clip", "Sigmoid", "HardSwish", "LeakyRelu",
                                        "Elu", "Add", "Sub", "Mul", "Div", "Min", "Max", "Concat", NULL };
/* Ops that read a channels-last input 0 without a transpose (binary ops: see binary_accepts). */
static const char *const read_ops[] = { "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "Resize",
                                        "DepthToSpace", "Relu", "Clip", "Sigmoid", "HardSwish", "LeakyRelu", "Elu", NULL };

static int in_list(const char *const *list, const char *op) {
    for (; *list; list++)
        if (!strcmp(*list, op)) return 1;
    return 0;
}

static int is_binary(const char *op) {
    static const char *const ops[] = { "Add", "Sub", "Mul", "Div", "Min", "Max", NULL };
    return in_list(ops, op);
}

static int xnn_owns(const cort_graph *g, size_t i) {
    const cort_node *n = &g->nodes[i];
    return !g->skip[i] && n->op && n->provider == &cort_provider_xnnpack && xnn_kind_of_def(n->op) &&
           n->state;
}

static int shape_known(const cort_tinfo *t) { return t->kind == CORT_VKIND_TENSOR && cort_tinfo_shape_known(t); }

/* A binary op reads input k channels-last when that input is not broadcast (its shape is the output's,
 * rank 3..6) and the other operand maps onto NHWC: the same full shape (channels-last too, or
 * transposed once), or one whose NCHW memory already is its NHWC memory (per-channel [C,1,1], scalar,
 * [1,1,H,W]...): then broadcasting works on the permuted shapes. */
static int binary_accepts(const cort_graph *g, const cort_node *n, size_t k) {
    if (n->n_inputs != 2 || n->n_outputs < 1 || n->out_slot[0] < 0 || n->in_slot[0] < 0 || n->in_slot[1] < 0) return 0;
    const cort_tinfo *y = &g->slot_info[n->out_slot[0]], *x = &g->slot_info[n->in_slot[k]],
                     *o = &g->slot_info[n->in_slot[1 - k]];
    if (!shape_known(y) || !shape_known(x) || !shape_known(o)) return 0;
    int r = y->rank;
    if (r < 3 || r > XNN_MAX_TENSOR_DIMS || x->rank != r || o->rank > r) return 0;
    if (memcmp(x->dims, y->dims, (size_t)r * sizeof y->dims[0])) return 0;
    if (o->rank == r && !memcmp(o->dims, y->dims, (size_t)r * sizeof y->dims[0])) return 1;
    int64_t p[CORT_MAX_RANK];
    for (int i = 0; i < r; i++) p[i] = i < r - o->rank ? 1 : o->dims[i - (r - o->rank)];
    int64_t sp = 1;
    for (int i = 2; i < r; i++) sp *= p[i];
    return p[1] == 1 || sp == 1;
}

static int accepts_nhwc(const cort_graph *g, size_t j, size_t k) {
    const cort_node *n = &g->nodes[j];
    if (!xnn_owns(g, j)) return 0;
    if (is_binary(n->op_type)) return binary_accepts(g, n, k);
    if (!strcmp(n->op_type, "Concat")) return 1;   /* every input; only channel-axis Concats are taken */
    return k == 0 && in_list(read_ops, n->op_type);
}

static int graph_output(const cort_graph *g, int32_t s) {
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->output_slots && g->output_slots[i] == s) return 1;
    for (size_t i = 0; g->ir && i < g->ir->n_outputs; i++)
        if (!strcmp(g->ir->outputs[i].name, g->slot_names[s])) return 1;
    return 0;
}

/* Whether output slot s of an XNNPACK node may stay channels-last: it is a 3-D/4-D float activation,
 * not a graph output, not read by a subgraph, and every reader is an XNNPACK node that reads it NHWC. */
static int nhwc_ok(const cort_graph *g, int32_t s) {
    const cort_tinfo *t = &g->slot_info[s];
    if (t->kind != CORT_VKIND_TENSOR || t->elem != CORT_TYPE_FLOAT || (t->rank != 3 && t->rank != 4)) return 0;
    if (g->consts[s] || graph_output(g, s)) return 0;
    size_t readers = 0;
    for (size_t j = 0; j < g->n_nodes; j++) {
        if (g->skip[j]) continue;
        const cort_node *n = &g->nodes[j];
        for (size_t k = 0; k < n->n_implicit; k++)
            if (n->implicit_slot[k] == s) return 0;
        for (size_t k = 0; k < n->n_inputs; k++) {
            if (n->in_slot[k] != s) continue;
            if (!accepts_nhwc(g, j, k)) return 0;
            readers++;
        }
    }
    return readers > 0;
}

static cort_status *xnn_provider_partition(void *instance, cort_graph *g) {
    const xnn_instance *inst = instance;
    if (!inst || !inst->nhwc_chains || !g) return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *n = &g->nodes[i];
        if (!xnn_owns(g, i)) continue;   /* other providers' flags are theirs */
        n->provider_flags &= ~XNN_EMIT_NHWC;
        if (!in_list(emit_ops, n->op_type) || n->n_outputs < 1 || n->out_slot[0] < 0) continue;
        if (nhwc_ok(g, n->out_slot[0])) n->provider_flags |= XNN_EMIT_NHWC;
    }
    return NULL;
}

const cort_provider_vtable cort_provider_xnnpack = {
    .name = "xnnpack",
    .caps = CORT_PROVIDER_LAYOUTS,   /* its kernels read the NHWC chains its partition plans */
    .option_keys = option_keys,
    .create = xnn_provider_create,
    .destroy = xnn_provider_destroy,
    .supports = xnn_provider_supports,
    .kernel = xnn_provider_kernel,
    .allocator = xnn_provider_allocator,
    .partition = xnn_provider_partition,
};

/* ---------------------------------------------------------------- per-node state */
static xnn_instance *find_instance(const cort_node *node) {
    const cort_compile_opts *o = node->graph ? node->graph->opts : NULL;
    for (size_t i = 0; o && i < o->n_providers; i++)
        if (o->providers[i].vt == &cort_provider_xnnpack) return o->providers[i].instance;
    return NULL;
}

cort_status *xnn_base_init(const cort_node *node, xnn_base *b, xnn_create_fn create, int fuses_activation) {
    b->inst = find_instance(node);
    if (!b->inst) return cort_node_error(node, CORT_ERROR_RUNTIME, "XNNPACK kernel outside an XNNPACK session");
    b->create = create;
    b->out_min = -INFINITY;
    b->out_max = INFINITY;
    if (fuses_activation) {
        const cort_node *act = NULL;
        float lo, hi;
        if (xnn_fusion_target(node, &lo, &hi, &act)) { b->out_min = lo; b->out_max = hi; }
    }
    b->cpu = cort_op_find(node->domain, node->op_type, node->opset);
    if (!b->cpu) return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "no CPU kernel for opset %d", node->opset);
    if (b->cpu->init) CORT_TRY(b->cpu->init(node, &b->cpu_state));
    if (pthread_mutex_init(&b->lock, NULL)) {
        if (b->cpu->free_state) b->cpu->free_state(b->cpu_state);
        b->cpu = NULL;
        return cort_error_oom();
    }
    return NULL;
}

void xnn_base_free(xnn_base *b) {
    if (!b->cpu) return;   /* never initialized */
    for (size_t i = 0; i < b->n_free; i++) xnn_delete_operator(b->free_ops[i]);
    cort_free(b->free_ops);
    cort_free(b->free_keys);
    if (b->cpu->free_state) b->cpu->free_state(b->cpu_state);
    pthread_mutex_destroy(&b->lock);
}

void xnn_free_state(void *state) {
    if (!state) return;
    xnn_base_free(state);
    cort_free(state);
}

cort_status *xnn_infer(cort_infer_ctx *ctx) {
    const xnn_base *b = ctx->state;
    cort_infer_ctx c = *ctx;
    const cort_op_def *cpu = b ? b->cpu : cort_op_find(ctx->node->domain, ctx->node->op_type, ctx->opset);
    if (!cpu) return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "no CPU kernel to infer shapes");
    c.state = b ? b->cpu_state : NULL;
    return cpu->infer(&c);
}

cort_status *xnn_run_cpu(cort_kernel_ctx *ctx) {
    const xnn_base *b = ctx->state;
    cort_kernel_ctx c = *ctx;
    c.state = b->cpu_state;
    cort_status *st = NULL;
    cort_value *nchw[8] = { NULL }, *ins[8];
    if (xnn_any_nhwc_input(ctx)) {   /* the CPU kernel reads NCHW only */
        if (ctx->n_inputs > 8) return cort_node_error(ctx->node, CORT_ERROR_RUNTIME, "%zu inputs", ctx->n_inputs);
        for (size_t i = 0; i < ctx->n_inputs; i++) {
            ins[i] = ctx->inputs[i];
            if (!xnn_is_nhwc(ins[i])) continue;
            if ((st = xnn_relayout(b->inst, ctx->pool, ins[i], 0, &nchw[i]))) goto done;
            ins[i] = nchw[i];
        }
        c.inputs = ins;
    }
    if ((st = b->cpu->run(&c))) goto done;
    cort_value *Y = ctx->n_outputs ? ctx->outputs[0] : NULL;
    if (Y && Y->kind == CORT_VKIND_TENSOR && Y->type == CORT_TYPE_FLOAT && !xnn_is_nhwc(Y) &&
        xnn_want_nhwc(ctx->node, Y->shape, Y->rank)) {
        cort_value *T = NULL;
        if ((st = xnn_relayout(b->inst, ctx->pool, Y, 1, &T))) goto done;
        cort_kernel_set_output(ctx, 0, T);   /* releases Y */
    }
done:
    for (size_t i = 0; i < 8; i++) cort_value_release(nchw[i]);
    return st;
}

cort_status *xnn_call_error(const cort_node *node, const char *call, enum xnn_status s) {
    if (s == xnn_status_out_of_memory) return cort_error_oom();
    return cort_node_error(node, CORT_ERROR_RUNTIME, "%s failed: xnn_status %d (%s)", call, (int)s, xnn_status_str(s));
}

cort_status *xnn_op_take(const cort_node *node, xnn_base *b, size_t key, xnn_operator_t *op) {
    pthread_mutex_lock(&b->lock);
    for (size_t i = b->n_free; i-- > 0;) {
        if (b->free_keys[i] != key) continue;
        *op = b->free_ops[i];
        b->free_ops[i] = b->free_ops[b->n_free - 1];
        b->free_keys[i] = b->free_keys[b->n_free - 1];
        b->n_free--;
        pthread_mutex_unlock(&b->lock);
        return NULL;
    }
    pthread_mutex_unlock(&b->lock);
    return b->create(node, b, key, op);   /* all busy (or a new key): one more instance */
}

void xnn_op_give(xnn_base *b, size_t key, xnn_operator_t op) {
    pthread_mutex_lock(&b->lock);
    if (b->n_free == b->cap_free) {
        size_t cap = b->cap_free ? 2 * b->cap_free : 4;
        xnn_operator_t *ops = cort_realloc(b->free_ops, cap * sizeof *ops);
        if (ops) b->free_ops = ops;
        size_t *keys = ops ? cort_realloc(b->free_keys, cap * sizeof *keys) : NULL;
        if (keys) b->free_keys = keys;
        if (!ops || !keys) {   /* cannot keep it: drop this instance, the next run creates another */
            pthread_mutex_unlock(&b->lock);
            xnn_delete_operator(op);
            return;
        }
        b->cap_free = cap;
    }
    b->free_ops[b->n_free] = op;
    b->free_keys[b->n_free++] = key;
    pthread_mutex_unlock(&b->lock);
}

cort_status *xnn_op_prime(const cort_node *node, xnn_base *b, size_t key) {
    xnn_operator_t op = NULL;
    CORT_TRY(b->create(node, b, key, &op));
    xnn_op_give(b, key, op);
    return NULL;
}

/* ---------------------------------------------------------------- graph queries */
const cort_value *xnn_const_input(const cort_node *node, size_t i) {
    if (i >= node->n_inputs || node->in_slot[i] < 0 || !node->graph) return NULL;
    const cort_value *v = cort_node_const_input(node, i);   /* copied out of the model file if still there */
    return v && v->kind == CORT_VKIND_TENSOR ? v : NULL;
}

int xnn_float_input(const cort_tinfo *in, size_t n_inputs, size_t i) {
    if (i >= n_inputs || !in[i].present) return 1;
    return in[i].kind == CORT_VKIND_TENSOR && in[i].elem == CORT_TYPE_FLOAT;
}

static int const_scalar(const cort_node *node, size_t i, float *out) {
    if (i >= node->n_inputs || node->in_slot[i] < 0) return 1;   /* absent: keep the default */
    const cort_value *v = xnn_const_input(node, i);
    if (!v || v->type != CORT_TYPE_FLOAT || v->count != 1) return 0;
    *out = ((const float *)v->data)[0];
    return 1;
}

int xnn_activation_range(const cort_node *node, float *lo, float *hi) {
    if (node->domain[0]) return 0;
    if (!strcmp(node->op_type, "Relu")) { *lo = 0.0f; *hi = INFINITY; return 1; }
    if (strcmp(node->op_type, "Clip")) return 0;
    *lo = -INFINITY;
    *hi = INFINITY;
    if (node->opset < 11) {
        *lo = cort_attr_float(node, "min", -INFINITY);
        *hi = cort_attr_float(node, "max", INFINITY);
    } else if (!const_scalar(node, 1, lo) || !const_scalar(node, 2, hi)) {
        return 0;
    }
    return *lo <= *hi && !isnan(*lo) && !isnan(*hi);
}

static int is_graph_output(const cort_graph *g, int32_t s) {
    for (size_t i = 0; i < g->ir->n_outputs; i++)
        if (!strcmp(g->ir->outputs[i].name, g->slot_names[s])) return 1;
    return 0;
}

int xnn_fusion_target(const cort_node *node, float *lo, float *hi, const cort_node **act) {
    const cort_graph *g = node->graph;
    if (!g || node->n_outputs < 1) return 0;
    int32_t s = node->out_slot[0];
    if (s < 0 || is_graph_output(g, s)) return 0;
    const cort_node *user = NULL;
    size_t uses = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const cort_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_implicit; k++)
            if (n->implicit_slot[k] == s) return 0;
        for (size_t k = 0; k < n->n_inputs; k++)
            if (n->in_slot[k] == s) { uses++; user = n; }
    }
    if (uses != 1 || user->in_slot[0] != s || !xnn_activation_range(user, lo, hi)) return 0;
    *act = user;
    return 1;
}

int xnn_activation_fused(const cort_node *node) {
    const cort_graph *g = node->graph;
    if (!g || node->n_inputs < 1 || node->in_slot[0] < 0) return 0;
    for (size_t i = 0; i < node->index && i < g->n_nodes; i++) {
        const cort_node *p = &g->nodes[i];
        if (p->n_outputs < 1 || p->out_slot[0] != node->in_slot[0]) continue;
        if (p->provider != &cort_provider_xnnpack || g->skip[i]) return 0;
        const xnn_kind *k = xnn_kind_of_def(p->op);
        if (!k || !k->fuses_activation || !p->state) return 0;
        const xnn_base *b = p->state;
        float lo, hi;
        const cort_node *act = NULL;
        return xnn_fusion_target(p, &lo, &hi, &act) && act == node && b->out_min == lo && b->out_max == hi;
    }
    return 0;
}

/* ---------------------------------------------------------------- spatial attributes */
int xnn_window_parse(const cort_node *node, int nd, const int64_t *kshape, xnn_window *w, char *reason, size_t len) {
    memset(w, 0, sizeof *w);
    w->nd = nd;
    const int64_t *v;
    size_t n;
    int64_t k[2] = { 1, 1 }, s[2] = { 1, 1 }, d[2] = { 1, 1 }, p[4] = { 0, 0, 0, 0 };
    int off = 2 - nd;   /* 1-D: the single spatial dim is W */
    if (kshape) {
        for (int i = 0; i < nd; i++) k[off + i] = kshape[i];
    } else {
        n = cort_attr_ints(node, "kernel_shape", &v);
        if (n != (size_t)nd) XNN_REFUSE("kernel_shape has %zu values for %d spatial dims", n, nd);
        for (int i = 0; i < nd; i++) k[off + i] = v[i];
    }
    n = cort_attr_ints(node, "strides", &v);
    if (n && n != (size_t)nd) XNN_REFUSE("strides has %zu values", n);
    for (size_t i = 0; i < n; i++) s[off + i] = v[i];
    n = cort_attr_ints(node, "dilations", &v);
    if (n && n != (size_t)nd) XNN_REFUSE("dilations has %zu values", n);
    for (size_t i = 0; i < n; i++) d[off + i] = v[i];
    n = cort_attr_ints(node, "pads", &v);
    if (n && n != (size_t)(2 * nd)) XNN_REFUSE("pads has %zu values", n);
    if (n) {   /* ONNX: [x1_begin, x2_begin, x1_end, x2_end]; here [top, left, bottom, right] */
        for (int i = 0; i < nd; i++) { p[off + i] = v[i]; p[2 + off + i] = v[nd + i]; }
    }
    for (int i = 0; i < 2; i++) {
        if (k[i] < 1 || k[i] > 1 << 16 || s[i] < 1 || s[i] > 1 << 16 || d[i] < 1 || d[i] > 1 << 16)
            XNN_REFUSE("kernel/stride/dilation out of range");
        w->k[i] = (uint32_t)k[i];
        w->s[i] = (uint32_t)s[i];
        w->d[i] = (uint32_t)d[i];
    }
    for (int i = 0; i < 4; i++) {
        if (p[i] < 0 || p[i] > 1 << 16) XNN_REFUSE("pad %lld unsupported", (long long)p[i]);
        w->pad[i] = (uint32_t)p[i];
    }
    const char *ap = cort_attr_str(node, "auto_pad", "NOTSET");
    if (!strcmp(ap, "SAME_UPPER")) w->same_upper = 1;
    else if (!strcmp(ap, "SAME_LOWER")) w->same_lower = 1;
    else if (!strcmp(ap, "VALID")) memset(w->pad, 0, sizeof w->pad);
    else if (strcmp(ap, "NOTSET")) XNN_REFUSE("auto_pad '%s'", ap);
    return 1;
}

void xnn_window_same_pads(const xnn_window *w, const int64_t *in_hw, uint32_t *pad) {
    for (int i = 0; i < 2; i++) {
        int64_t in = in_hw[i], s = w->s[i], ek = (int64_t)(w->k[i] - 1) * w->d[i] + 1;
        int64_t out = (in + s - 1) / s;
        int64_t total = (out - 1) * s + ek - in;
        if (total < 0) total = 0;
        int64_t small = total / 2, big = total - small;
        pad[i] = (uint32_t)(w->same_upper ? small : big);       /* begin */
        pad[2 + i] = (uint32_t)(w->same_upper ? big : small);   /* end */
    }
}
#else
typedef int xnn_provider_unused;
#endif
