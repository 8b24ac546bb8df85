/* The kernel-facing node API (declared in op.h), in one place: node-named errors and attribute
 * accessors, creation-time constants (cort_node_const_*, cort_node_init_pool), the fused
 * activation epilogue, and the run-time helpers (cort_kernel_*: outputs, views, scratch,
 * cancellation). The compiler (compile.c) and the executor (exec.c) own the rest. */
#include "graph.h"
#include "../core/bufcache.h"
#include "../onnx/onnx.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- errors and attributes */

const cort_attr_ir *cort_attr_get(const cort_node *node, const char *name) {
    const cort_node_ir *ir = node->ir;
    for (size_t i = 0; i < ir->n_attrs; i++)
        if (!strcmp(ir->attrs[i].name, name)) return &ir->attrs[i];
    return NULL;
}

int64_t cort_attr_int(const cort_node *node, const char *name, int64_t dflt) {
    const cort_attr_ir *a = cort_attr_get(node, name);
    if (!a) return dflt;
    if (a->type == CORT_ATTR_FLOAT) {
        /* a float where an int is expected: out-of-range or NaN would be undefined to convert */
        if (!(a->f > -9.2e18f && a->f < 9.2e18f)) return a->f > 0 ? INT64_MAX : INT64_MIN;
        return (int64_t)a->f;
    }
    return a->i;
}

float cort_attr_float(const cort_node *node, const char *name, float dflt) {
    const cort_attr_ir *a = cort_attr_get(node, name);
    if (!a) return dflt;
    if (a->type == CORT_ATTR_INT) return (float)a->i;
    return a->f;
}

const char *cort_attr_str(const cort_node *node, const char *name, const char *dflt) {
    const cort_attr_ir *a = cort_attr_get(node, name);
    return a && a->type == CORT_ATTR_STRING && a->s ? a->s : dflt;
}

size_t cort_attr_ints(const cort_node *node, const char *name, const int64_t **out) {
    const cort_attr_ir *a = cort_attr_get(node, name);
    if (!a || a->type != CORT_ATTR_INTS) { *out = NULL; return 0; }
    *out = a->ints;
    return a->n;
}

size_t cort_attr_floats(const cort_node *node, const char *name, const float **out) {
    const cort_attr_ir *a = cort_attr_get(node, name);
    if (!a || a->type != CORT_ATTR_FLOATS) { *out = NULL; return 0; }
    *out = a->floats;
    return a->n;
}

size_t cort_attr_strings(const cort_node *node, const char *name, const char *const **out) {
    const cort_attr_ir *a = cort_attr_get(node, name);
    if (!a || a->type != CORT_ATTR_STRINGS) { *out = NULL; return 0; }
    *out = a->strings;
    return a->n;
}

const cort_value *cort_attr_tensor(const cort_node *node, const char *name) {
    const cort_attr_ir *a = cort_attr_get(node, name);
    return a && (a->type == CORT_ATTR_TENSOR || a->type == CORT_ATTR_SPARSE_TENSOR) ? a->t : NULL;
}

const cort_graph_ir *cort_attr_graph(const cort_node *node, const char *name) {
    const cort_attr_ir *a = cort_attr_get(node, name);
    return a && a->type == CORT_ATTR_GRAPH ? a->g : NULL;
}

cort_status *cort_node_error(const cort_node *node, cort_code code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!node) return cort_error(code, "%s", msg);
    return cort_error(code, "node '%s' (%s%s%s): %s", node->name, node->domain[0] ? node->domain : "",
                      node->domain[0] ? "." : "", node->op_type, msg);
}

/* ---------------------------------------------------------------- creation-time constants */
const cort_value *cort_node_const_input_lazy(const cort_node *node, size_t i) {
    if (!node || i >= node->n_inputs || node->in_slot[i] < 0 || !node->graph) return NULL;
    return node->graph->consts[node->in_slot[i]];
}

const cort_value *cort_node_const_input(const cort_node *node, size_t i) {
    cort_value *v = (cort_value *)cort_node_const_input_lazy(node, i);
    if (v && v->lazy_src) {
        cort_status *st = cort_value_materialize(v);
        /* out of memory: treated as not constant here; compile's last step reports it */
        if (st) { cort_status_free(st); return NULL; }
    }
    return v;
}

/* g->wscratch at least `bytes` big; allocated outside the session's weight arena (which only
 * grows) because it is freed at the end of compile. */
cort_status *cort_graph_wscratch_reserve(cort_graph *g, size_t bytes) {
    if (g->wscratch && g->wscratch_bytes >= bytes) return NULL;
    cort_free(g->wscratch);
    cort_huge_arena *prev = cort_huge_arena_bind(NULL);
    g->wscratch = cort_malloc(bytes);
    cort_huge_arena_bind(prev);
    g->wscratch_bytes = g->wscratch ? bytes : 0;
    return g->wscratch ? NULL : cort_error_oom();
}

void cort_graph_wscratch_drop(cort_graph *g) {
    cort_free(g->wscratch);
    g->wscratch = NULL;
    g->wscratch_bytes = 0;
}

cort_status *cort_node_const_data(const cort_node *node, size_t i, const void **out) {
    const cort_value *v = cort_node_const_input_lazy(node, i);
    *out = NULL;
    if (!v) return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu is not a constant", i);
    if (!v->lazy_src) { *out = v->data; return NULL; }
    cort_graph *g = node->graph;
    CORT_TRY(cort_graph_wscratch_reserve(g, v->bytes));   /* sized for the biggest before init: a no-op then */
    memcpy(g->wscratch, v->lazy_src, v->bytes);
    *out = g->wscratch;
    return NULL;
}

cort_pool *cort_node_init_pool(const cort_node *node) {
    return node && node->graph && node->graph->opts ? node->graph->opts->pool : NULL;
}

struct cort_prepacked_weights *cort_node_prepacked(const cort_node *node) {
    return node && node->graph && node->graph->opts ? node->graph->opts->prepacked : NULL;
}

void cort_node_const_input_packed(const cort_node *node, size_t i) {
    const cort_value *v = cort_node_const_input_lazy(node, i);
    if (!v || v->kind != CORT_VKIND_TENSOR) return;
    if (i < 32) ((cort_node *)node)->const_packed |= (uint32_t)1 << i;   /* node lives in g->nodes */
    if (node->graph->opts)
        cort_model_drop_pages(node->graph->opts->model, v->lazy_src ? v->lazy_src : v->data, v->bytes);
}

void cort_node_const_input_drop(const cort_node *node, size_t i, size_t off, size_t n) {
    const cort_value *v = cort_node_const_input_lazy(node, i);
    if (!v || v->kind != CORT_VKIND_TENSOR || off > v->bytes || n > v->bytes - off || !node->graph->opts) return;
    const uint8_t *p = v->lazy_src ? v->lazy_src : v->data;
    if (p) cort_model_drop_pages(node->graph->opts->model, p + off, n);
}

/* ---------------------------------------------------------------- fused activations */
void cort_apply_activation(const cort_node *node, float *y, size_t n) {
    switch (node->act) {
    case CORT_ACT_RELU:
        for (size_t i = 0; i < n; i++) y[i] = y[i] > 0 ? y[i] : 0;
        break;
    case CORT_ACT_CLIP:
        for (size_t i = 0; i < n; i++) y[i] = y[i] < node->act_alpha ? node->act_alpha : y[i] > node->act_beta ? node->act_beta : y[i];
        break;
    case CORT_ACT_LEAKY_RELU:
        for (size_t i = 0; i < n; i++) y[i] = y[i] >= 0 ? y[i] : y[i] * node->act_alpha;
        break;
    case CORT_ACT_SIGMOID:
        for (size_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-y[i]));
        break;
    case CORT_ACT_HARD_SIGMOID:
        for (size_t i = 0; i < n; i++) {
            float v = node->act_alpha * y[i] + node->act_beta;
            y[i] = v < 0 ? 0 : v > 1 ? 1 : v;
        }
        break;
    case CORT_ACT_HARD_SWISH:
        for (size_t i = 0; i < n; i++) {
            float v = y[i] * (1.0f / 6.0f) + 0.5f;
            y[i] *= v < 0 ? 0 : v > 1 ? 1 : v;
        }
        break;
    case CORT_ACT_SILU:
        for (size_t i = 0; i < n; i++) y[i] = y[i] / (1.0f + expf(-y[i]));
        break;
    case CORT_ACT_GELU:
        for (size_t i = 0; i < n; i++) y[i] = (float)(y[i] * 0.5 * erfc(-y[i] / sqrt(2.0)));
        break;
    default: break;
    }
}

/* ---------------------------------------------------------------- run time */
/* Output 0 of a node feeding an in-place Concat: a view into the Concat's output (allocated by the
 * first of its producers to run). Returns NULL (and the caller allocates normally) if the shape
 * asked for is not the one planned at creation. */
static cort_value *concat_view(cort_kernel_ctx *ctx, cort_type type, const int64_t *dims, size_t rank) {
    const cort_node *n = ctx->node;
    cort_exec *ex = ctx->exec;
    if (!ex || !ex->values || !ex->graph || ex->graph != n->graph || type != CORT_TYPE_FLOAT) return NULL;
    const cort_tinfo *mine = &n->graph->slot_info[n->out_slot[0]], *whole = &n->graph->slot_info[n->out_view_slot];
    if ((size_t)mine->rank != rank) return NULL;
    for (size_t d = 0; d < rank; d++)
        if (mine->dims[d] != dims[d]) return NULL;
    cort_value *base = ex->values[n->out_view_slot];
    if (!base) {
        cort_status *st = ex->cache ? cort_bufcache_tensor(ex->cache, CORT_TYPE_FLOAT, whole->dims, (size_t)whole->rank, &base)
                                    : cort_tensor_alloc(CORT_TYPE_FLOAT, whole->dims, (size_t)whole->rank, &base);
        if (st) { cort_status_free(st); return NULL; }
        ex->values[n->out_view_slot] = base;
    }
    size_t count = 1;
    for (size_t d = 0; d < rank; d++) count *= (size_t)dims[d];
    if (base->type != CORT_TYPE_FLOAT || n->out_view_offset + count > base->count) return NULL;
    cort_value *v = NULL;
    cort_status *st = cort_kernel_view(ctx, CORT_TYPE_FLOAT, dims, rank, (float *)base->data + n->out_view_offset, base, &v);
    if (st) { cort_status_free(st); return NULL; }
    return v;
}

/* The size policy at run time (graph.h): the largest tensor this execution may create. */
static size_t kernel_max_bytes(const cort_kernel_ctx *ctx) {
    if (ctx && ctx->exec && ctx->exec->max_bytes) return ctx->exec->max_bytes;
    return cort_max_tensor_bytes(ctx && ctx->node && ctx->node->graph ? ctx->node->graph->opts : NULL);
}

static cort_status *check_size(const cort_kernel_ctx *ctx, const char *what, size_t i, cort_type type,
                               const int64_t *dims, size_t rank) {
    size_t bytes, lim = kernel_max_bytes(ctx);
    if (rank > CORT_MAX_RANK || (rank && !dims) || cort_tensor_fits(type, dims, rank, lim, &bytes)) return NULL;
    char buf[256];
    cort_shape_str(dims, rank, buf, sizeof buf);
    if (bytes == SIZE_MAX)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "%s %zu would have shape %s%s, not a valid size",
                               what, i, cort_type_name(type), buf);
    return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                           "%s %zu would have shape %s%s, %zu bytes, above the limit of %zu (max_tensor_bytes%s)", what,
                           i, cort_type_name(type), buf, bytes, lim,
                           ctx->exec && ctx->exec->max_bytes ? ", or what is left of the constant-folding budget" : "");
}

cort_status *cort_kernel_output(cort_kernel_ctx *ctx, size_t i, cort_type type, const int64_t *dims, size_t rank,
                                cort_value **out) {
    if (i >= ctx->n_outputs)
        return cort_node_error(ctx->node, CORT_ERROR_RUNTIME, "kernel asked for output %zu of %zu", i, ctx->n_outputs);
    CORT_TRY(check_size(ctx, "output", i, type, dims, rank));
    cort_value *v = NULL;
    if (i == 0 && ctx->node->has_out_view && (v = concat_view(ctx, type, dims, rank))) {
        cort_value_release(ctx->outputs[i]);
        ctx->outputs[i] = v;
        *out = v;
        return NULL;
    }
    cort_status *st = ctx->exec && ctx->exec->cache ? cort_bufcache_tensor(ctx->exec->cache, type, dims, rank, &v)
                                                    : cort_tensor_alloc(type, dims, rank, &v);
    if (st) {
        if (cort_status_code(st) == CORT_ERROR_OUT_OF_MEMORY) return st;
        return cort_error_wrap(st, "node '%s' (%s): output %zu: ", ctx->node->name, ctx->node->op_type, i);
    }
    cort_value_release(ctx->outputs[i]);
    ctx->outputs[i] = v;
    *out = v;
    return NULL;
}

cort_status *cort_kernel_tensor(cort_kernel_ctx *ctx, cort_type type, const int64_t *dims, size_t rank, cort_value **out) {
    if (ctx) CORT_TRY(check_size(ctx, "temporary tensor", 0, type, dims, rank));
    if (ctx && ctx->exec && ctx->exec->cache) return cort_bufcache_tensor(ctx->exec->cache, type, dims, rank, out);
    return cort_tensor_alloc(type, dims, rank, out);
}

cort_status *cort_kernel_view(cort_kernel_ctx *ctx, cort_type type, const int64_t *dims, size_t rank, void *data,
                              cort_value *base, cort_value **out) {
    if (ctx && ctx->exec && ctx->exec->cache) return cort_bufcache_view(ctx->exec->cache, type, dims, rank, data, base, out);
    return cort_tensor_view(type, dims, rank, data, base, out);
}

cort_value *cort_kernel_planned_output(cort_kernel_ctx *ctx) {
    const cort_node *n = ctx->node;
    if (!ctx->exec || !ctx->exec->values || ctx->exec->graph != n->graph || n->n_outputs < 1 || n->out_slot[0] < 0)
        return NULL;
    return ctx->exec->values[n->out_slot[0]];
}

cort_value *cort_kernel_reusable_input(cort_kernel_ctx *ctx, size_t k, cort_type type, const int64_t *dims,
                                       size_t rank) {
    const cort_node *n = ctx->node;
    const cort_exec *ex = ctx->exec;
    if (!ex || !ex->values || ex->graph != n->graph || k >= n->n_inputs || n->in_slot[k] < 0 || n->has_out_view)
        return NULL;
    const cort_graph *g = n->graph;
    const int32_t slot = n->in_slot[k];
    if (g->last_use[slot] != (int32_t)(n - g->nodes)) return NULL;
    cort_value *v = ex->values[slot];
    if (!v || k >= ctx->n_inputs || ctx->inputs[k] != v || v->kind != CORT_VKIND_TENSOR || v->type != type ||
        v->base || v->release_fn || v->layout || !v->data || v->rank != rank ||
        atomic_load_explicit(&v->refs, memory_order_acquire) != 1)
        return NULL;
    for (size_t d = 0; d < rank; d++)
        if (v->shape[d] != dims[d]) return NULL;
    return v;
}

void cort_kernel_set_output(cort_kernel_ctx *ctx, size_t i, cort_value *value) {
    if (i >= ctx->n_outputs) { cort_value_release(value); return; }
    cort_value_release(ctx->outputs[i]);
    ctx->outputs[i] = value;
}

void *cort_kernel_scratch(cort_kernel_ctx *ctx, size_t bytes) {
    if (bytes > kernel_max_bytes(ctx)) return NULL;   /* the kernel reports it as out of memory */
    if (ctx && ctx->exec && ctx->exec->cache) return cort_bufcache_get(ctx->exec->cache, bytes);
    return cort_malloc(bytes);
}

void cort_kernel_scratch_free(cort_kernel_ctx *ctx, void *p) {
    if (!p) return;
    if (ctx && ctx->exec && ctx->exec->cache) cort_bufcache_put(ctx->exec->cache, p);
    else cort_free(p);
}

int cort_kernel_cancelled(const cort_kernel_ctx *ctx) {
    return ctx->exec && ctx->exec->terminate && atomic_load_explicit(ctx->exec->terminate, memory_order_relaxed);
}

cort_status *cort_kernel_cancelled_status(const cort_kernel_ctx *ctx) {
    return cort_node_error(ctx->node, CORT_ERROR_CANCELLED, "run cancelled (terminate was set)");
}

int cort_node_output_used(const cort_node *node, size_t i) {
    if (i >= node->n_outputs || node->out_slot[i] < 0) return 0;
    return node->graph->last_use[node->out_slot[i]] >= 0;
}
