/* The executor: runs a compiled graph once. All per-run state lives here (values, scratch arrays);
 * the graph itself is only read, so concurrent runs need no locks. */
#include "graph.h"
#include "provider.h"
#include "../core/bufcache.h"
#include "../session/profiler.h"
#include <string.h>
#include <time.h>

#define MAX_SUBGRAPH_DEPTH 64

cort_status *cort_graph_execute(cort_exec *ex, const cort_graph *g, cort_value *const *inputs,
                                cort_value *const *outer, cort_value **outputs) {
    cort_status *st = NULL;
    size_t max_io = 1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const cort_node *n = &g->nodes[i];
        size_t m = n->n_inputs > n->n_outputs ? n->n_inputs : n->n_outputs;
        if (n->n_implicit > m) m = n->n_implicit;
        if (m > max_io) max_io = m;
    }
    size_t values_bytes = (g->n_slots + 3 * max_io + 1) * sizeof(cort_value *);
    cort_value **values = ex->cache ? cort_bufcache_get(ex->cache, values_bytes) : cort_malloc(values_bytes);
    if (!values) return cort_error_oom();
    memset(values, 0, values_bytes);
    cort_value **saved_values = ex->values;
    const cort_graph *saved_graph = ex->graph;
    ex->values = values;
    ex->graph = g;
    cort_value **in = values + g->n_slots, **outs = in + max_io, **impl = outs + max_io;

    for (size_t s = 0; s < g->n_slots; s++)
        if (g->consts[s]) values[s] = cort_value_retain(g->consts[s]);
    for (size_t i = 0; i < g->n_inputs; i++) {
        cort_value_release(values[g->input_slots[i]]);
        values[g->input_slots[i]] = cort_value_retain(inputs[i]);
    }
    for (size_t i = 0; i < g->n_outer; i++) values[g->outer_slots[i]] = cort_value_retain(outer[i]);

    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->skip[i]) continue;
        const cort_node *n = &g->nodes[i];
        if (ex->terminate && atomic_load_explicit(ex->terminate, memory_order_relaxed)) {
            st = cort_error(CORT_ERROR_CANCELLED, "run cancelled (terminate was set) before node '%s' (%s)", n->name,
                            n->op_type);
            goto done;
        }
        for (size_t k = 0; k < n->n_inputs; k++) {
            in[k] = n->in_slot[k] >= 0 ? values[n->in_slot[k]] : NULL;
            if (n->in_slot[k] >= 0 && !in[k]) {
                st = cort_node_error(n, CORT_ERROR_RUNTIME, "input %zu '%s' has no value (an optional output that was not produced?)",
                                     k, n->ir->inputs[k]);
                goto done;
            }
        }
        /* a provider-private layout (NHWC chains) must never reach a node of another provider */
        for (size_t k = 0; k < n->n_inputs; k++)
            if (in[k] && in[k]->kind == CORT_VKIND_TENSOR && in[k]->layout &&
                (!n->provider || !(n->provider->caps & CORT_PROVIDER_LAYOUTS))) {
                st = cort_node_error(n, CORT_ERROR_RUNTIME, "internal error: input %zu '%s' arrives in a provider-private "
                                     "layout (%d)", k, n->ir->inputs[k], (int)in[k]->layout);
                goto done;
            }
        for (size_t k = 0; k < n->n_implicit; k++) impl[k] = values[n->implicit_slot[k]];
        memset(outs, 0, n->n_outputs * sizeof *outs);
        cort_kernel_ctx ctx = { n, n->state, n->opset, in, n->n_inputs, outs, n->n_outputs,
                                impl, n->n_implicit, ex->pool, ex };
        struct timespec t0;
        if (ex->profile) clock_gettime(CLOCK_MONOTONIC, &t0);
        int64_t trace_t0 = ex->trace ? cort_trace_now() : 0;
        st = n->op->run(&ctx);
        if (ex->trace && !st) cort_trace_node(ex->trace, n, in, n->n_inputs, outs, n->n_outputs, trace_t0, cort_trace_now());
        if (ex->profile) {
            struct timespec t1;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            int64_t ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
            atomic_fetch_add_explicit(&ex->profile[2 * i], (uint64_t)(ns > 0 ? ns : 0), memory_order_relaxed);
            atomic_fetch_add_explicit(&ex->profile[2 * i + 1], 1, memory_order_relaxed);
        }
        if (st) {
            for (size_t k = 0; k < n->n_outputs; k++) cort_value_release(outs[k]);
            if (strncmp(cort_status_message(st), "node '", 6) && cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY)
                st = cort_error_wrap(st, "node '%s' (%s): ", n->name, n->op_type);
            goto done;
        }
        for (size_t k = 0; k < n->n_outputs; k++) {
            int32_t s = n->out_slot[k];
            if (s < 0) { cort_value_release(outs[k]); continue; }
            cort_value_release(values[s]);
            values[s] = outs[k];
        }
        for (const int32_t *r = g->release[i]; r && *r >= 0; r++) {
            cort_value_release(values[*r]);
            values[*r] = NULL;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        if (!values[g->output_slots[i]]) {
            st = cort_error(CORT_ERROR_RUNTIME, "graph output %zu '%s' was not produced", i, g->slot_names[g->output_slots[i]]);
            for (size_t k = 0; k < i; k++) { cort_value_release(outputs[k]); outputs[k] = NULL; }
            goto done;
        }
        if (values[g->output_slots[i]]->kind == CORT_VKIND_TENSOR && values[g->output_slots[i]]->layout) {
            st = cort_error(CORT_ERROR_RUNTIME, "internal error: graph output '%s' is in a provider-private layout",
                            g->slot_names[g->output_slots[i]]);
            for (size_t k = 0; k < i; k++) { cort_value_release(outputs[k]); outputs[k] = NULL; }
            goto done;
        }
        outputs[i] = cort_value_retain(values[g->output_slots[i]]);
    }
done:
    ex->values = saved_values;
    ex->graph = saved_graph;
    for (size_t s = 0; s < g->n_slots; s++) cort_value_release(values[s]);
    if (ex->cache) cort_bufcache_put(ex->cache, values);
    else cort_free(values);
    return st;
}

/* ---- subgraphs ---- */
struct cort_subgraph { cort_graph g; };

cort_status *cort_subgraph_compile(const cort_node *node, const cort_graph_ir *gi, cort_subgraph **out) {
    cort_graph *g;
    CORT_TRY(cort_graph_compile(gi, node->graph->opts, node->graph, node, &g));
    *out = (cort_subgraph *)g;
    return NULL;
}

void cort_subgraph_free(cort_subgraph *sg) { cort_graph_free((cort_graph *)sg); }
size_t cort_subgraph_input_count(const cort_subgraph *sg) { return ((const cort_graph *)sg)->n_inputs; }
size_t cort_subgraph_output_count(const cort_subgraph *sg) { return ((const cort_graph *)sg)->n_outputs; }
const cort_tinfo *cort_subgraph_output_info(const cort_subgraph *sg, size_t i) {
    const cort_graph *g = (const cort_graph *)sg;
    return i < g->n_outputs ? &g->slot_info[g->output_slots[i]] : NULL;
}

cort_status *cort_subgraph_run(cort_kernel_ctx *ctx, const cort_subgraph *sg, cort_value *const *inputs, size_t n_inputs,
                               cort_value **outputs, size_t n_outputs) {
    const cort_graph *g = (const cort_graph *)sg;
    if (n_inputs != g->n_inputs)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "subgraph expects %zu inputs, given %zu", g->n_inputs,
                               n_inputs);
    if (n_outputs != g->n_outputs)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "subgraph has %zu outputs, expected %zu", g->n_outputs,
                               n_outputs);
    if (ctx->exec && ctx->exec->depth >= MAX_SUBGRAPH_DEPTH)
        return cort_node_error(ctx->node, CORT_ERROR_RUNTIME, "subgraphs nested deeper than %d", MAX_SUBGRAPH_DEPTH);
    cort_value *outer_stack[16], **outer = outer_stack;
    if (g->n_outer > 16 && !(outer = cort_calloc(g->n_outer, sizeof *outer))) return cort_error_oom();
    for (size_t i = 0; i < g->n_outer; i++) outer[i] = ctx->implicit[g->outer_index[i]];
    cort_exec sub = ctx->exec ? *ctx->exec : (cort_exec){ NULL, ctx->pool, 0, NULL, NULL, NULL, NULL };
    sub.profile = NULL;   /* counters index top-level nodes only */
    sub.trace = NULL;
    sub.depth++;
    cort_status *st = cort_graph_execute(&sub, g, inputs, outer, outputs);
    if (outer != outer_stack) cort_free(outer);
    return st;
}
