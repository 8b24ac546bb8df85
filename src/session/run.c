/* cort_session_run: argument validation, input checking against the declared types, execution,
 * and delivery into caller-preallocated outputs. */
#include "session.h"
#include "../core/bufcache.h"
#include "profiler.h"
#include <stdio.h>
#include <string.h>

static int dims_str(char *buf, size_t n, const int64_t *d, int rank) {
    cort_shape_str(d, rank < 0 ? 0 : (size_t)rank, buf, n);
    return 0;
}

static const char *kind_name(int k) {
    switch (k) {
    case CORT_VKIND_TENSOR: return "tensor";
    case CORT_VKIND_SEQUENCE: return "sequence";
    case CORT_VKIND_OPTIONAL: return "optional";
    case CORT_VKIND_MAP: return "map";
    default: return "unknown";
    }
}

/* Checks a fed value against the input's compiled (declared + session dims) type. */
cort_status *cort_run_check_input(const cort_graph *g, size_t idx, const cort_value *v) {
    const char *name = g->input_info[idx]->name;
    const cort_tinfo *t = &g->slot_info[g->input_slots[idx]];
    if (t->kind == CORT_VKIND_UNKNOWN) return NULL;
    if (t->kind != v->kind)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "input '%s': expected a %s, got a %s", name, kind_name(t->kind),
                          kind_name(v->kind));
    if (t->kind == CORT_VKIND_TENSOR) {
        if (t->elem && t->elem != v->type)
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "input '%s': expected element type %s, got %s", name,
                              cort_type_name(t->elem), cort_type_name(v->type));
        if (t->rank >= 0 && !g->input_type_only[idx]) {
            char want[256], got[256];
            int bad = (size_t)t->rank != v->rank;
            size_t bad_dim = 0;
            for (int i = 0; !bad && i < t->rank; i++)
                if (t->dims[i] >= 0 && t->dims[i] != v->shape[i]) { bad = 1; bad_dim = (size_t)i; }
            if (bad) {
                dims_str(want, sizeof want, t->dims, t->rank);
                dims_str(got, sizeof got, v->shape, (int)v->rank);
                if ((size_t)t->rank != v->rank)
                    return cort_error(CORT_ERROR_INVALID_ARGUMENT, "input '%s': expected rank %d %s, got rank %zu %s", name,
                                      t->rank, want, v->rank, got);
                return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                                  "input '%s': expected shape %s, got %s (dimension %zu is %lld, expected %lld)", name,
                                  want, got, bad_dim, (long long)v->shape[bad_dim], (long long)t->dims[bad_dim]);
            }
        }
    } else if (t->elem && v->type && t->elem != v->type && t->kind == CORT_VKIND_SEQUENCE) {
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "input '%s': expected a sequence of %s, got a sequence of %s", name,
                          cort_type_name(t->elem), cort_type_name(v->type));
    }
    return NULL;
}

static cort_status *deliver(const char *name, cort_value *dst, const cort_value *src) {
    if (dst->kind != CORT_VKIND_TENSOR || src->kind != CORT_VKIND_TENSOR)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "output '%s': only tensors can be written into a preallocated value",
                          name);
    char want[256], got[256];
    if (dst->type != src->type)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "output '%s': preallocated tensor has element type %s, result is %s",
                          name, cort_type_name(dst->type), cort_type_name(src->type));
    int same = dst->rank == src->rank;
    for (size_t i = 0; same && i < src->rank; i++) same = dst->shape[i] == src->shape[i];
    if (!same) {
        dims_str(want, sizeof want, dst->shape, (int)dst->rank);
        dims_str(got, sizeof got, src->shape, (int)src->rank);
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "output '%s': preallocated tensor has shape %s, result has shape %s",
                          name, want, got);
    }
    if (src->type == CORT_TYPE_STRING) {
        if (!dst->owns_data)
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "output '%s': string outputs need a runtime-owned tensor", name);
        for (size_t i = 0; i < src->count; i++) {
            const char *s = cort_string_get(src, i);
            CORT_TRY(cort_string_set(dst, i, s, strlen(s)));
        }
    } else if (src->bytes && dst->data != src->data) memcpy(dst->data, src->data, src->bytes);
    return NULL;
}

/* Whether v (or what it is a view of) belongs to the session: an initializer, a folded constant or the
 * mapped model. Such results are copied, so a caller writing into an output never changes the model. */
static int session_owned(const cort_session *session, const cort_value *v) {
    const cort_graph *g = session->graph;
    for (int depth = 0; v && depth < 16; depth++, v = v->base) {
        if (v == session->model->blob) return 1;
        for (size_t s = 0; s < g->n_slots; s++)
            if (g->consts[s] == v) return 1;
    }
    return 0;
}

/* A preallocated output checked against what the compiled graph knows before anything runs: its
 * kind, element type and every dimension that is static. deliver() checks the rest afterwards. */
cort_status *cort_run_check_preallocated(const cort_graph *g, size_t k, const char *fn, const cort_value *dst) {
    const char *name = g->output_info[k]->name;
    const cort_tinfo *t = &g->slot_info[g->output_slots[k]];
    if (dst->kind != CORT_VKIND_TENSOR)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: output '%s': only tensors can be written into a preallocated value (got a %s)",
                          fn, name, kind_name(dst->kind));
    if (t->kind != CORT_VKIND_UNKNOWN && t->kind != CORT_VKIND_TENSOR)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: output '%s' is a %s; it cannot be written into a preallocated tensor",
                          fn, name, kind_name(t->kind));
    if (t->elem && t->elem != dst->type)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: output '%s': preallocated tensor has element type %s, the model's output is %s",
                          fn, name, cort_type_name(dst->type), cort_type_name(t->elem));
    if (dst->type == CORT_TYPE_STRING && !dst->owns_data)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: output '%s': string outputs need a runtime-owned tensor", fn, name);
    if (t->rank >= 0) {
        int bad = (size_t)t->rank != dst->rank;
        for (int i = 0; !bad && i < t->rank; i++) bad = t->dims[i] >= 0 && t->dims[i] != dst->shape[i];
        if (bad) {
            char want[256], got[256];
            dims_str(want, sizeof want, t->dims, t->rank);
            dims_str(got, sizeof got, dst->shape, (int)dst->rank);
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: output '%s': preallocated tensor has shape %s, the model's output has shape %s",
                              fn, name, got, want);
        }
    }
    return NULL;
}

cort_status *cort_run_check_args(const cort_session *session, const char *fn, const char *const *input_names,
                                 cort_value *const *inputs, size_t input_count, const char *const *output_names,
                                 size_t output_count, cort_value *const *outputs, cort_value **fed, size_t *out_idx) {
    const cort_graph *g = session->graph;
    for (size_t i = 0; i < input_count; i++) {
        if (!input_names[i]) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: input_names[%zu] is NULL", fn, i);
        if (!inputs[i])
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: inputs[%zu] ('%s') is NULL", fn, i, input_names[i]);
        size_t k = 0;
        while (k < g->n_inputs && strcmp(g->input_info[k]->name, input_names[i])) k++;
        if (k == g->n_inputs) {
            char list[512] = "";
            size_t o = 0;
            for (size_t q = 0; q < g->n_inputs && o < sizeof list; q++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s'%s'", q ? ", " : "", g->input_info[q]->name);
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: unknown input name '%s' (the model's inputs are: %s)", fn,
                              input_names[i], list);
        }
        if (fed[k]) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: input '%s' is given twice", fn, input_names[i]);
        CORT_TRY(cort_run_check_input(g, k, inputs[i]));
        fed[k] = inputs[i];
    }
    for (size_t k = 0; k < g->n_inputs; k++)
        if (!fed[k]) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: input '%s' was not given", fn, g->input_info[k]->name);
    for (size_t i = 0; i < output_count; i++) {
        if (!output_names[i]) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: output_names[%zu] is NULL", fn, i);
        size_t k = 0;
        while (k < g->n_outputs && strcmp(g->output_info[k]->name, output_names[i])) k++;
        if (k == g->n_outputs)
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: unknown output name '%s'", fn, output_names[i]);
        if (outputs && outputs[i]) CORT_TRY(cort_run_check_preallocated(g, k, fn, outputs[i]));
        if (out_idx) out_idx[i] = k;
    }
    return NULL;
}

cort_status *cort_session_run(cort_session *session, const cort_run_options *run_options, const char *const *input_names,
                              cort_value *const *inputs, size_t input_count, const char *const *output_names,
                              size_t output_count, cort_value **outputs) {
    if (!session) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_run: session is NULL");
    if (input_count && (!input_names || !inputs))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_run: input_count is %zu but input_names or inputs is NULL",
                          input_count);
    if (output_count && (!output_names || !outputs))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                          "cort_session_run: output_count is %zu but output_names or outputs is NULL", output_count);
    const cort_graph *g = session->graph;
    cort_status *st = NULL;
    /* small graphs use the stack: a steady-state run allocates nothing here */
    cort_value *fed_stack[32];
    size_t idx_stack[16];
    size_t n_fed = g->n_inputs + g->n_outputs + 1;
    cort_value **fed = n_fed <= 32 ? fed_stack : cort_malloc(n_fed * sizeof *fed);
    size_t *out_idx = output_count < 16 ? idx_stack : cort_malloc((output_count + 1) * sizeof *out_idx);
    if (!fed || !out_idx) {
        if (fed != fed_stack) cort_free(fed);
        if (out_idx != idx_stack) cort_free(out_idx);
        return cort_error_oom();
    }
    memset(fed, 0, n_fed * sizeof *fed);
    cort_value **results = fed + g->n_inputs;

    if ((st = cort_run_check_args(session, "cort_session_run", input_names, inputs, input_count, output_names, output_count,
                                  outputs, fed, out_idx)))
        goto done;

    {
        cort_run_options *ro = (cort_run_options *)run_options;
        cort_run_options_retain_internal(ro);
        cort_exec ex = { ro ? &ro->terminate : NULL, session->pool, 0, session->cache, session->profile, NULL, NULL };
        ex.trace = session->trace;
        int64_t t0 = session->trace ? cort_trace_now() : 0;
        st = cort_graph_execute(&ex, g, fed, NULL, results);
        if (session->trace) cort_trace_session(session->trace, "model_run", t0, cort_trace_now());
        cort_run_options_free(ro);
    }
    if (st) goto done;
    for (size_t k = 0; k < g->n_outputs; k++)
        if (results[k] && results[k]->kind == CORT_VKIND_TENSOR && session_owned(session, results[k])) {
            /* a constant (folded or an initializer) is returned as a copy the caller may write; for
             * fixed-size types the copy comes from the session's recycling cache, so steady-state
             * runs of a graph with constant outputs do not allocate */
            cort_value *copy = NULL;
            const cort_value *r = results[k];
            if (r->type != CORT_TYPE_STRING && session->cache) {
                if ((st = cort_bufcache_tensor(session->cache, r->type, r->shape, r->rank, &copy))) goto done;
                if (r->bytes) memcpy(copy->data, r->data, r->bytes);
            } else if ((st = cort_tensor_clone(r, &copy))) {
                goto done;
            }
            cort_value_release(results[k]);
            results[k] = copy;
        }
    for (size_t i = 0; i < output_count; i++)
        if (outputs[i] && (st = deliver(output_names[i], outputs[i], results[out_idx[i]]))) goto done;
    for (size_t i = 0; i < output_count; i++)
        if (!outputs[i]) outputs[i] = cort_value_retain(results[out_idx[i]]);
done:
    for (size_t k = 0; k < g->n_outputs; k++) cort_value_release(results[k]);
    if (out_idx != idx_stack) cort_free(out_idx);
    if (fed != fed_stack) cort_free(fed);
    return st;
}
