/* Session options, session creation (all one-time work happens here) and metadata queries. */
#include "session.h"
#include "../core/prepacked.h"
#include "../core/bufcache.h"
#include "../onnx/onnx.h"
#include "../core/cpu_features.h"
#include "custom_ops.h"
#include "profiler.h"
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- session options */
cort_status *cort_session_options_create(cort_session_options **out) {
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_create: out is NULL");
    cort_session_options *o = cort_calloc(1, sizeof *o);
    if (!o) return cort_error_oom();
    o->threads = 0;
    o->level = 2;
    *out = o;
    return NULL;
}

static void provider_cfg_free(cort_provider_cfg *p) {
    for (size_t i = 0; i < p->n; i++) { cort_free(p->keys[i]); cort_free(p->values[i]); }
    cort_free(p->keys);
    cort_free(p->values);
    cort_free(p->name);
    memset(p, 0, sizeof *p);
}

void cort_session_options_free(cort_session_options *o) {
    if (!o) return;
    for (size_t i = 0; i < o->n_providers; i++) provider_cfg_free(&o->providers[i]);
    for (size_t i = 0; i < o->n_dims; i++) cort_free(o->dim_names[i]);
    cort_free(o->dim_names);
    cort_free(o->dim_values);
    cort_custom_op_set_release(o->custom_ops);
    cort_pool_free(o->shared_pool);
    cort_free(o->profile_prefix);
    for (size_t i = 0; i < o->n_inits; i++) { cort_free(o->init_names[i]); cort_value_release(o->init_values[i]); }
    cort_free(o->init_names);
    cort_free(o->init_values);
    for (size_t i = 0; i < o->n_ext; i++) { cort_free(o->ext_names[i]); cort_free(o->ext_bytes[i]); }
    cort_free(o->ext_names);
    cort_free(o->ext_bytes);
    cort_free(o->ext_lens);
    cort_free(o->optimized_path);
    cort_free(o->optimized_ext_file);
    cort_prepacked_weights_release(o->prepacked);
    cort_free(o);
}

cort_status *cort_session_options_set_profile_file(cort_session_options *o, int enable, const char *prefix) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_profile_file: options is NULL");
    char *p = NULL;
    if (prefix && !(p = cort_strdup(prefix))) return cort_error_oom();
    cort_free(o->profile_prefix);
    o->profile_prefix = p;
    o->profile_file = enable ? 1 : 0;
    return NULL;
}

cort_status *cort_session_options_add_initializer(cort_session_options *o, const char *name, cort_value *value) {
    if (!o || !name || !value)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_add_initializer: options, name or value is NULL");
    if (value->kind != CORT_VKIND_TENSOR)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_add_initializer: '%s' is not a tensor", name);
    for (size_t i = 0; i < o->n_inits; i++)
        if (!strcmp(o->init_names[i], name)) {
            cort_value_release(o->init_values[i]);
            o->init_values[i] = cort_value_retain(value);
            return NULL;
        }
    char **nn = cort_realloc(o->init_names, (o->n_inits + 1) * sizeof *nn);
    if (!nn) return cort_error_oom();
    o->init_names = nn;
    cort_value **nv = cort_realloc(o->init_values, (o->n_inits + 1) * sizeof *nv);
    if (!nv) return cort_error_oom();
    o->init_values = nv;
    if (!(nn[o->n_inits] = cort_strdup(name))) return cort_error_oom();
    nv[o->n_inits++] = cort_value_retain(value);
    return NULL;
}

cort_status *cort_session_options_add_external_data(cort_session_options *o, const char *file_name, const void *bytes,
                                                     size_t length) {
    if (!o || !file_name || (!bytes && length))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                          "cort_session_options_add_external_data: options, file_name or bytes is NULL");
    size_t k = 0;
    while (k < o->n_ext && strcmp(o->ext_names[k], file_name)) k++;
    void *copy = cort_malloc(length ? length : 1);
    if (!copy) return cort_error_oom();
    if (length) memcpy(copy, bytes, length);
    if (k == o->n_ext) {
        char **nn = cort_realloc(o->ext_names, (k + 1) * sizeof *nn);
        if (nn) o->ext_names = nn;
        void **nb = nn ? cort_realloc(o->ext_bytes, (k + 1) * sizeof *nb) : NULL;
        if (nb) o->ext_bytes = nb;
        size_t *nl = nb ? cort_realloc(o->ext_lens, (k + 1) * sizeof *nl) : NULL;
        if (nl) o->ext_lens = nl;
        char *name = nl ? cort_strdup(file_name) : NULL;
        if (!name) { cort_free(copy); return cort_error_oom(); }
        o->ext_names[k] = name;
        o->ext_bytes[k] = NULL;
        o->n_ext++;
    }
    cort_free(o->ext_bytes[k]);
    o->ext_bytes[k] = copy;
    o->ext_lens[k] = length;
    return NULL;
}

cort_status *cort_session_options_set_optimized_model_path(cort_session_options *o, const char *path) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_optimized_model_path: options is NULL");
    char *p = NULL;
    if (path && *path && !(p = cort_strdup(path))) return cort_error_oom();
    cort_free(o->optimized_path);
    o->optimized_path = p;
    return NULL;
}

cort_status *cort_session_options_set_optimized_model_external_data(cort_session_options *o, const char *file_name,
                                                                   uint64_t min_bytes) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_optimized_model_external_data: options is NULL");
    if (file_name && (strchr(file_name, '/') || !strcmp(file_name, "..") || !strcmp(file_name, ".")))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                          "cort_session_options_set_optimized_model_external_data: '%s' must be a file name, not a path",
                          file_name);
    char *p = NULL;
    if (file_name && *file_name && !(p = cort_strdup(file_name))) return cort_error_oom();
    cort_free(o->optimized_ext_file);
    o->optimized_ext_file = p;
    o->optimized_ext_min = (size_t)min_bytes;
    return NULL;
}

/* Initializers given through the options replace the model's of the same name, or turn a graph
 * input of that name into a constant; any other name is an error. The model keeps one reference. */
static cort_status *apply_initializers(cort_model_ir *m, const cort_session_options *o) {
    cort_graph_ir *g = m->graph;
    if (!o || !o->n_inits || !g) return NULL;
    size_t extra = 0;
    for (size_t k = 0; k < o->n_inits; k++) {
        size_t i = 0;
        while (i < g->n_initializers && strcmp(g->initializers[i].name, o->init_names[k])) i++;
        if (i < g->n_initializers) {
            const cort_value *old = g->initializers[i].value;
            if (old && old->kind == CORT_VKIND_TENSOR && old->type != o->init_values[k]->type)
                return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                                  "initializer '%s' given in the session options has element type %s, the model's is %s",
                                  o->init_names[k], cort_type_name(o->init_values[k]->type), cort_type_name(old->type));
            continue;
        }
        size_t j = 0;
        while (j < g->n_inputs && strcmp(g->inputs[j].name, o->init_names[k])) j++;
        if (j == g->n_inputs)
            return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                              "initializer '%s' given in the session options: the model has no initializer or input of that name",
                              o->init_names[k]);
        extra++;
    }
    cort_initializer_ir *arr = g->initializers;
    if (extra) {
        arr = cort_arena_alloc(m->arena, (g->n_initializers + extra) * sizeof *arr);
        if (!arr) return cort_error_oom();
        if (g->n_initializers) memcpy(arr, g->initializers, g->n_initializers * sizeof *arr);
    }
    size_t n = g->n_initializers;
    for (size_t k = 0; k < o->n_inits; k++) {
        cort_value **owned = cort_realloc(m->owned_values, (m->n_owned_values + 1) * sizeof *owned);
        if (!owned) return cort_error_oom();
        m->owned_values = owned;
        m->cap_owned_values = m->n_owned_values + 1;
        owned[m->n_owned_values++] = cort_value_retain(o->init_values[k]);
        size_t i = 0;
        while (i < n && strcmp(arr[i].name, o->init_names[k])) i++;
        if (i == n) {
            memset(&arr[n], 0, sizeof arr[n]);
            arr[n].name = cort_arena_strndup(m->arena, o->init_names[k], strlen(o->init_names[k]));
            if (!arr[n].name) return cort_error_oom();
            n++;
        }
        arr[i].value = o->init_values[k];
    }
    g->initializers = arr;
    g->n_initializers = n;
    return NULL;
}

cort_status *cort_session_options_set_threads(cort_session_options *o, int threads) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_threads: options is NULL");
    if (threads < 0)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_threads: threads is %d, expected >= 0", threads);
    o->threads = threads;
    return NULL;
}

cort_status *cort_session_options_set_optimization_level(cort_session_options *o, int level) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_optimization_level: options is NULL");
    if (level < 0 || level > 2)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                          "cort_session_options_set_optimization_level: level is %d, expected 0, 1 or 2", level);
    o->level = level;
    return NULL;
}

cort_status *cort_session_options_add_custom_op(cort_session_options *o, const cort_custom_op *op) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_add_custom_op: options is NULL");
    return cort_custom_op_set_add(&o->custom_ops, op);
}

cort_status *cort_session_options_load_custom_op_library(cort_session_options *o, const char *path) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_load_custom_op_library: options is NULL");
    return cort_custom_op_library_load(o, path);
}

cort_status *cort_thread_pool_create(int threads, int allow_spinning, cort_thread_pool **out) {
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_thread_pool_create: out is NULL");
    *out = NULL;
    if (threads < 0)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_thread_pool_create: threads is %d, expected >= 0", threads);
    cort_thread_pool *tp = cort_calloc(1, sizeof *tp);
    if (!tp) return cort_error_oom();
    cort_status *st = cort_pool_create_ex(threads, allow_spinning != 0, &tp->pool);
    if (st) { cort_free(tp); return st; }
    *out = tp;
    return NULL;
}

void cort_thread_pool_release(cort_thread_pool *tp) {
    if (!tp) return;
    cort_pool_free(tp->pool);
    cort_free(tp);
}

int cort_thread_pool_threads(const cort_thread_pool *tp) { return tp ? cort_pool_threads(tp->pool) : 0; }

cort_status *cort_session_options_set_thread_pool(cort_session_options *o, cort_thread_pool *tp) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_thread_pool: options is NULL");
    cort_pool *p = tp ? cort_pool_retain(tp->pool) : NULL;
    cort_pool_free(o->shared_pool);
    o->shared_pool = p;
    return NULL;
}

cort_status *cort_session_options_set_prepacked_weights(cort_session_options *o, cort_prepacked_weights *c) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_prepacked_weights: options is NULL");
    cort_prepacked_weights *prev = o->prepacked;
    o->prepacked = cort_prepacked_retain(c);
    cort_prepacked_weights_release(prev);
    return NULL;
}

cort_status *cort_session_options_set_spinning(cort_session_options *o, int allow) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_spinning: options is NULL");
    o->no_spin = !allow;
    return NULL;
}

cort_status *cort_session_options_set_profiling(cort_session_options *o, int enable) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_profiling: options is NULL");
    o->profiling = enable != 0;
    return NULL;
}

cort_status *cort_session_options_set_max_tensor_bytes(cort_session_options *o, uint64_t bytes) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_max_tensor_bytes: options is NULL");
    o->max_tensor_bytes = bytes > CORT_MAX_ADDRESSABLE_BYTES ? CORT_MAX_ADDRESSABLE_BYTES : (size_t)bytes;
    return NULL;
}

cort_status *cort_session_options_set_fold_budget(cort_session_options *o, uint64_t bytes) {
    if (!o) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_fold_budget: options is NULL");
    o->fold_budget = bytes > CORT_MAX_ADDRESSABLE_BYTES ? CORT_MAX_ADDRESSABLE_BYTES : (size_t)bytes;
    o->fold_budget_set = 1;
    return NULL;
}

cort_status *cort_session_options_append_provider(cort_session_options *o, const char *name, const char *const *keys,
                                                  const char *const *values, size_t count) {
    if (!o || !name) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_append_provider: options or name is NULL");
    if (count && (!keys || !values))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_append_provider: %zu options but keys/values is NULL",
                          count);
    const cort_provider_vtable *vt = cort_provider_find(name);
    if (!vt) {
        char avail[256] = "";
        size_t off = 0;
        for (const cort_provider_vtable *const *p = cort_provider_registry; *p && off < sizeof avail; p++)
            off += (size_t)snprintf(avail + off, sizeof avail - off, "%s%s", off ? ", " : "", (*p)->name);
        return cort_error(CORT_ERROR_NOT_IMPLEMENTED,
                          "cort_session_options_append_provider: provider '%s' is not available in this build "
                          "(available: %s)", name, avail);
    }
    for (size_t i = 0; i < count; i++) {
        const char *const *valid = vt->option_keys;
        int ok = 0;
        for (size_t k = 0; valid && valid[k]; k++) ok |= keys[i] && !strcmp(keys[i], valid[k]);
        if (!ok) {
            char list[256] = "";
            size_t off = 0;
            for (size_t k = 0; valid && valid[k] && off < sizeof list; k++)
                off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", k ? ", " : "", valid[k]);
            return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                              "cort_session_options_append_provider: provider '%s' has no option '%s' (valid: %s)", name,
                              keys[i] ? keys[i] : "(null)", off ? list : "none; use cort_session_options_set_threads");
        }
        if (!values[i])
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_append_provider: value of '%s' is NULL",
                              keys[i]);
    }
    if (o->n_providers == CORT_MAX_PROVIDERS)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_append_provider: more than %d providers",
                          CORT_MAX_PROVIDERS);
    cort_provider_cfg *p = &o->providers[o->n_providers];
    if (!(p->name = cort_strdup(name))) return cort_error_oom();
    p->keys = cort_calloc(count + 1, sizeof *p->keys);
    p->values = cort_calloc(count + 1, sizeof *p->values);
    if (!p->keys || !p->values) { provider_cfg_free(p); return cort_error_oom(); }
    for (size_t i = 0; i < count; i++) {
        p->keys[i] = cort_strdup(keys[i]);
        p->values[i] = cort_strdup(values[i]);
        p->n++;
        if (!p->keys[i] || !p->values[i]) { provider_cfg_free(p); return cort_error_oom(); }
    }
    o->n_providers++;
    return NULL;
}

cort_status *cort_session_options_set_dim(cort_session_options *o, const char *name, int64_t value) {
    if (!o || !name) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_dim: options or name is NULL");
    if (value < 0)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_options_set_dim: dimension '%s' = %lld, expected >= 0",
                          name, (long long)value);
    for (size_t i = 0; i < o->n_dims; i++)
        if (!strcmp(o->dim_names[i], name)) { o->dim_values[i] = value; return NULL; }
    char **nn = cort_realloc(o->dim_names, (o->n_dims + 1) * sizeof *nn);
    if (!nn) return cort_error_oom();
    o->dim_names = nn;
    int64_t *nv = cort_realloc(o->dim_values, (o->n_dims + 1) * sizeof *nv);
    if (!nv) return cort_error_oom();
    o->dim_values = nv;
    if (!(nn[o->n_dims] = cort_strdup(name))) return cort_error_oom();
    nv[o->n_dims++] = value;
    return NULL;
}

/* ---------------------------------------------------------------- run options */
cort_status *cort_run_options_create(cort_run_options **out) {
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_run_options_create: out is NULL");
    cort_run_options *o = cort_calloc(1, sizeof *o);
    if (!o) return cort_error_oom();
    atomic_init(&o->refs, 1);
    atomic_init(&o->terminate, 0);
    *out = o;
    return NULL;
}

void cort_run_options_retain_internal(cort_run_options *o) {
    if (o) atomic_fetch_add(&o->refs, 1);
}

void cort_run_options_free(cort_run_options *o) {
    if (o && atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1) cort_free(o);
}

void cort_run_options_set_terminate(cort_run_options *o, int terminate) {
    if (o) atomic_store(&o->terminate, terminate ? 1 : 0);
}

/* ---------------------------------------------------------------- session */
static void session_destroy(cort_session *s) {
    cort_graph_free(s->graph);
    for (size_t i = 0; i < s->n_providers; i++) s->providers[i].vt->destroy(s->providers[i].instance);
    cort_pool_free(s->pool);
    cort_bufcache_release(s->cache);
    cort_free((void *)s->profile);
    cort_model_free(s->model);
    for (size_t i = 0; i < s->n_dims; i++) cort_free(s->dim_names[i]);
    cort_free(s->dim_names);
    cort_free(s->dim_values);
    cort_huge_arena_free(s->weights);   /* last: the packed weights of every node state live here */
    cort_prepacked_weights_release(s->prepacked);   /* after the graph: node states point into it */
    cort_trace_free(s->trace);
    cort_free(s);
}

static cort_status *session_finish(cort_model_ir *model, const cort_session_options *o, const void *alloc_id,
                                   cort_trace *trace, int64_t load_t0, cort_session **out) {
    cort_status *st = NULL;
    int64_t init_t0 = trace ? cort_trace_now() : 0;
    cort_session *s = cort_calloc(1, sizeof *s);
    if (!s) { cort_model_free(model); cort_trace_free(trace); return cort_error_oom(); }
    atomic_init(&s->refs, 1);
    s->model = model;
    s->trace = trace;
    cort_trace_session(trace, "model_loading_uri", load_t0, init_t0);
    if ((st = apply_initializers(model, o))) goto error;
    s->threads = o ? o->threads : 0;
    if (s->threads <= 0) s->threads = cort_cpu_count();
    if (o && o->shared_pool) s->threads = cort_pool_threads(o->shared_pool);   /* the pool decides */
    s->copts.model = model;
    s->copts.optimization_level = o ? o->level : 2;
    s->copts.max_tensor_bytes = o ? o->max_tensor_bytes : 0;
    s->copts.fold_budget = o ? o->fold_budget : 0;
    s->copts.fold_budget_set = o ? o->fold_budget_set : 0;
    if (o && o->n_dims) {
        s->dim_names = cort_calloc(o->n_dims, sizeof *s->dim_names);
        s->dim_values = cort_calloc(o->n_dims, sizeof *s->dim_values);
        if (!s->dim_names || !s->dim_values) { st = cort_error_oom(); goto error; }
        for (size_t i = 0; i < o->n_dims; i++) {
            if (!(s->dim_names[i] = cort_strdup(o->dim_names[i]))) { st = cort_error_oom(); goto error; }
            s->dim_values[i] = o->dim_values[i];
            s->n_dims++;
        }
    }
    s->copts.dim_names = (const char **)s->dim_names;
    s->copts.dim_values = s->dim_values;
    s->copts.n_dims = s->n_dims;
    if (o && o->custom_ops) {
        /* user kernels are tried before every provider; the session keeps its own reference */
        s->providers[s->n_providers].vt = &cort_custom_provider;
        s->providers[s->n_providers++].instance = cort_custom_op_set_retain(o->custom_ops);
    }
    for (size_t i = 0; o && i < o->n_providers; i++) {
        const cort_provider_cfg *pc = &o->providers[i];
        const cort_provider_vtable *vt = cort_provider_find(pc->name);
        if (!vt || (vt->caps & CORT_PROVIDER_DEFAULT)) continue;   /* the default takes the rest anyway */
        void *inst = NULL;
        if ((st = vt->create((const char *const *)pc->keys, (const char *const *)pc->values, pc->n, s->threads, &inst)))
            goto error;
        s->providers[s->n_providers].vt = vt;
        s->providers[s->n_providers++].instance = inst;
    }
    s->copts.providers = s->providers;
    s->copts.n_providers = s->n_providers;
    if (!model->graph) { st = cort_error(CORT_ERROR_INVALID_MODEL, "model has no graph"); goto error; }
    /* the pool first: creation packs weights on it */
    if (o && o->shared_pool) s->pool = cort_pool_retain(o->shared_pool);
    else if ((st = cort_pool_create_ex(s->threads, !(o && o->no_spin), &s->pool))) goto error;
    s->copts.pool = s->pool;
    if (o && o->prepacked) s->copts.prepacked = s->prepacked = cort_prepacked_retain(o->prepacked);
    /* the weights packed while compiling go to the session's huge-page arena */
    if ((st = cort_huge_arena_create(&s->weights))) goto error;
    cort_huge_arena *prev = cort_huge_arena_bind(s->weights);
    st = cort_graph_compile(model->graph, &s->copts, NULL, NULL, &s->graph);
    cort_huge_arena_bind(prev);
    if (st) goto error;
    if ((st = cort_bufcache_create(CORT_SESSION_CACHE_BYTES, &s->cache))) goto error;
    if (o && o->profiling) {
        if (!(s->profile = cort_calloc(2 * (s->graph->n_nodes + 1), sizeof *s->profile))) { st = cort_error_oom(); goto error; }
        for (size_t i = 0; i < 2 * (s->graph->n_nodes + 1); i++) atomic_init(&s->profile[i], 0);
    }
    s->cpu_allocator = alloc_id;
    if (o && o->optimized_path && (st = cort_session_save_optimized(s, o->optimized_path, o->optimized_ext_file, o->optimized_ext_min))) goto error;
    cort_trace_session(trace, "session_initialization", init_t0, cort_trace_now());
    *out = s;
    return NULL;
error:
    session_destroy(s);
    return st;
}

/* The options' in-memory external-data files and overridden initializers as the loader takes them
 * (at most cap files). */
static cort_status *load_extras(const cort_session_options *o, cort_ext_data *ext, size_t cap, cort_load_extras *x) {
    memset(x, 0, sizeof *x);
    if (!o) return NULL;
    if (o->n_ext > cap)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "session options: %zu external-data files given in memory, at most %zu",
                          o->n_ext, cap);
    for (size_t i = 0; i < o->n_ext; i++) ext[i] = (cort_ext_data){ o->ext_names[i], o->ext_bytes[i], o->ext_lens[i] };
    x->ext = ext;
    x->n_ext = o->n_ext;
    x->overridden = (const char *const *)o->init_names;
    x->n_overridden = o->n_inits;
    return NULL;
}

cort_status *cort_session_end_profiling(cort_session *s, const char **file) {
    if (!s || !file) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_end_profiling: session or file is NULL");
    if (!s->trace) { *file = ""; return NULL; }
    return cort_trace_end(s->trace, file);
}

int64_t cort_session_profiling_start_ns(const cort_session *s) {
    return s ? cort_trace_start_epoch_ns(s->trace) : 0;
}

cort_status *cort_session_create(const char *path, const cort_session_options *options, cort_session **out) {
    if (!path) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_create: path is NULL");
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_create: out is NULL");
    CORT_TRY(cort_alloc_init());
    CORT_TRY(cort_cpu_info_get(NULL));   /* probes the CPU; reports a bad CORT_ISA */
    /* the owner this session's allocations start from (the race test checks all sessions agree) */
    const void *alloc_id = cort_provider_default()->allocator(NULL);
    cort_trace *trace = NULL;
    int64_t t0 = cort_trace_now();
    cort_model_ir *model;
    cort_ext_data ext[64];
    cort_load_extras extras;
    CORT_TRY(load_extras(options, ext, 64, &extras));
    if (options && options->profile_file)
        CORT_TRY(cort_trace_create(options->profile_prefix, options->threads > 0 ? options->threads : cort_cpu_count(), &trace));
    cort_status *lst = cort_model_load_file_ex(path, &extras, &model);
    if (lst) { cort_trace_free(trace); return lst; }
    return session_finish(model, options, alloc_id, trace, t0, out);
}

cort_status *cort_session_create_from_memory(const void *bytes, size_t length, const cort_session_options *options,
                                             cort_session **out) {
    if (!bytes && length) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_create_from_memory: bytes is NULL");
    if (!out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_create_from_memory: out is NULL");
    CORT_TRY(cort_alloc_init());
    CORT_TRY(cort_cpu_info_get(NULL));   /* probes the CPU; reports a bad CORT_ISA */
    const void *alloc_id = cort_provider_default()->allocator(NULL);
    cort_trace *trace = NULL;
    int64_t t0 = cort_trace_now();
    cort_model_ir *model;
    cort_ext_data ext[64];
    cort_load_extras extras;
    CORT_TRY(load_extras(options, ext, 64, &extras));
    if (options && options->profile_file)
        CORT_TRY(cort_trace_create(options->profile_prefix, options->threads > 0 ? options->threads : cort_cpu_count(), &trace));
    cort_status *lst = cort_model_load_memory_ex(bytes ? bytes : "", length, &extras, &model);
    if (lst) { cort_trace_free(trace); return lst; }
    return session_finish(model, options, alloc_id, trace, t0, out);
}

cort_session *cort_session_retain(cort_session *s) {
    if (s) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void cort_session_release(cort_session *s) {
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) session_destroy(s);
}

size_t cort_session_input_count(const cort_session *s) { return s ? s->graph->n_inputs : 0; }
size_t cort_session_output_count(const cort_session *s) { return s ? s->graph->n_outputs : 0; }
const char *cort_session_input_name(const cort_session *s, size_t i) {
    return s && i < s->graph->n_inputs ? s->graph->input_info[i]->name : NULL;
}
const char *cort_session_output_name(const cort_session *s, size_t i) {
    return s && i < s->graph->n_outputs ? s->graph->output_info[i]->name : NULL;
}

static cort_status *value_type(const cort_value_info_ir *vi, cort_value_type *type, int64_t *dims, size_t max_dims) {
    if (!type) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "type is NULL");
    const cort_type_ir *t = &vi->type;
    type->kind = t->kind;
    type->elem_type = t->kind == CORT_VKIND_TENSOR ? t->elem_type
                    : t->inner ? (t->inner->kind == CORT_VKIND_TENSOR ? t->inner->elem_type
                                  : t->inner->inner ? t->inner->inner->elem_type : CORT_TYPE_UNDEFINED)
                               : CORT_TYPE_UNDEFINED;
    type->rank = t->kind == CORT_VKIND_TENSOR ? t->rank : -1;
    for (int i = 0; dims && i < type->rank && (size_t)i < max_dims; i++) dims[i] = t->dims[i];
    return NULL;
}

cort_status *cort_session_input_type(const cort_session *s, size_t i, cort_value_type *type, int64_t *dims, size_t max_dims) {
    if (!s || i >= s->graph->n_inputs)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_input_type: index %zu out of range", i);
    return value_type(s->graph->input_info[i], type, dims, max_dims);
}

cort_status *cort_session_output_type(const cort_session *s, size_t i, cort_value_type *type, int64_t *dims,
                                      size_t max_dims) {
    if (!s || i >= s->graph->n_outputs)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_output_type: index %zu out of range", i);
    return value_type(s->graph->output_info[i], type, dims, max_dims);
}

static const char *dim_name(const cort_value_info_ir *vi, size_t d) {
    const cort_type_ir *t = &vi->type;
    if (t->kind != CORT_VKIND_TENSOR || t->rank < 0 || d >= (size_t)t->rank || !t->dim_params) return NULL;
    return t->dim_params[d];
}
const char *cort_session_input_dim_name(const cort_session *s, size_t i, size_t d) {
    return s && i < s->graph->n_inputs ? dim_name(s->graph->input_info[i], d) : NULL;
}
const char *cort_session_output_dim_name(const cort_session *s, size_t i, size_t d) {
    return s && i < s->graph->n_outputs ? dim_name(s->graph->output_info[i], d) : NULL;
}

const char *cort_session_metadata(const cort_session *s, const char *key) {
    if (!s || !key) return NULL;
    const cort_model_ir *m = s->model;
#define OR_EMPTY(x) ((x) ? (x) : "")
    if (!strcmp(key, "producer_name")) return OR_EMPTY(m->producer_name);
    if (!strcmp(key, "producer_version")) return OR_EMPTY(m->producer_version);
    if (!strcmp(key, "domain")) return OR_EMPTY(m->domain);
    if (!strcmp(key, "doc_string")) return OR_EMPTY(m->doc);
    if (!strcmp(key, "graph_name")) return OR_EMPTY(m->graph ? m->graph->name : NULL);
    if (!strcmp(key, "graph_doc_string")) return OR_EMPTY(m->graph ? m->graph->doc : NULL);
    if (!strncmp(key, "metadata:", 9))
        for (size_t i = 0; i < m->n_metadata; i++)
            if (!strcmp(m->metadata[i].key, key + 9)) return OR_EMPTY(m->metadata[i].value);
#undef OR_EMPTY
    return NULL;
}

size_t cort_session_node_count(const cort_session *s) { return s ? s->graph->n_nodes : 0; }

cort_status *cort_session_node_info(const cort_session *s, size_t i, const char **name, const char **op_type,
                                    const char **provider) {
    if (!s || i >= s->graph->n_nodes)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_node_info: index %zu out of range (%zu nodes)", i,
                          s ? s->graph->n_nodes : 0);
    const cort_node *n = &s->graph->nodes[i];
    if (name) *name = n->name;
    if (op_type) *op_type = n->op_type;
    if (provider) *provider = s->graph->skip[i] ? "folded" : (n->provider ? n->provider : cort_provider_default())->name;
    return NULL;
}

const char *cort_session_node_note(const cort_session *s, size_t i) {
    return s && i < s->graph->n_nodes ? s->graph->nodes[i].provider_note : NULL;
}

cort_status *cort_session_node_profile(const cort_session *s, size_t i, uint64_t *total_ns, uint64_t *count) {
    if (!s || i >= s->graph->n_nodes)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_node_profile: index %zu out of range (%zu nodes)", i,
                          s ? s->graph->n_nodes : 0);
    if (!s->profile)
        return cort_error(CORT_ERROR_NOT_IMPLEMENTED,
                          "cort_session_node_profile: the session was created without cort_session_options_set_profiling");
    if (total_ns) *total_ns = atomic_load_explicit(&s->profile[2 * i], memory_order_relaxed);
    if (count) *count = atomic_load_explicit(&s->profile[2 * i + 1], memory_order_relaxed);
    return NULL;
}

void cort_session_profile_reset(cort_session *s) {
    if (!s || !s->profile) return;
    for (size_t i = 0; i < 2 * s->graph->n_nodes; i++) atomic_store_explicit(&s->profile[i], 0, memory_order_relaxed);
}

size_t cort_session_metadata_count(const cort_session *s) { return s ? s->model->n_metadata : 0; }
const char *cort_session_metadata_key(const cort_session *s, size_t i) {
    return s && i < s->model->n_metadata ? s->model->metadata[i].key : NULL;
}
int64_t cort_session_model_version(const cort_session *s) { return s ? s->model->model_version : 0; }

int64_t cort_session_ir_version(const cort_session *s) { return s ? s->model->ir_version : 0; }
int64_t cort_session_opset(const cort_session *s, const char *domain) {
    if (!s) return 0;
    if (!domain || !strcmp(domain, "ai.onnx")) domain = "";
    for (size_t i = 0; i < s->model->n_opsets; i++) {
        const char *d = s->model->opsets[i].domain ? s->model->opsets[i].domain : "";
        if (!strcmp(d, "ai.onnx")) d = "";
        if (!strcmp(d, domain)) return s->model->opsets[i].version;
    }
    return 0;
}

const void *cort_session_allocator(const cort_session *s, const char *provider) {
    if (!s || !provider) return NULL;
    const cort_provider_vtable *dflt = cort_provider_default();
    if (!strcmp(provider, dflt->name)) return s->cpu_allocator;   /* the identity the session started with */
    for (size_t i = 0; i < s->n_providers; i++)
        if (!strcmp(s->providers[i].vt->name, provider))
            return s->providers[i].vt->allocator ? s->providers[i].vt->allocator(s->providers[i].instance) : NULL;
    return NULL;
}
