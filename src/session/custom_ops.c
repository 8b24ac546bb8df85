/* Custom operators: kernels a user registers on session options (cort_session_options_add_custom_op)
 * or through a shared library (cort_session_options_load_custom_op_library). They reach the graph
 * compiler as a provider tried before every other one, so a user op can also replace a built-in
 * op for a domain/op/version range. The user's callbacks see only the public cort_op_context; the
 * wrapper below adapts them to the internal kernel contract (init/infer/run). */
#include "custom_ops.h"
#include "../graph/provider.h"
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

typedef struct custom_entry {
    cort_op_def def;        /* first member: node->op points here, so init finds the entry */
    cort_custom_op op;      /* copy of the user's description; strings below */
    char *domain, *op_type;
} custom_entry;

struct cort_custom_op_set {
    atomic_long refs;
    custom_entry **entries;
    size_t n, cap;
};

struct cort_op_context {
    const cort_node *node;
    cort_infer_ctx *infer;     /* during infer */
    cort_kernel_ctx *kernel;   /* during compute */
};

typedef struct custom_state {
    const custom_entry *e;
    void *user_state;
} custom_state;

/* ---------------------------------------------------------------- the set */
void cort_custom_op_set_release(cort_custom_op_set *s) {
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
    for (size_t i = 0; i < s->n; i++) {
        cort_free(s->entries[i]->domain);
        cort_free(s->entries[i]->op_type);
        cort_free(s->entries[i]);
    }
    cort_free(s->entries);
    cort_free(s);
}

cort_custom_op_set *cort_custom_op_set_retain(cort_custom_op_set *s) {
    if (s) atomic_fetch_add(&s->refs, 1);
    return s;
}

size_t cort_custom_op_set_count(const cort_custom_op_set *s) { return s ? s->n : 0; }

/* ---------------------------------------------------------------- kernel adapter */
static const custom_entry *entry_of(const cort_node *node) { return (const custom_entry *)node->op; }

static cort_status *custom_init(const cort_node *node, void **state) {
    const custom_entry *e = entry_of(node);
    custom_state *cs = cort_calloc(1, sizeof *cs);
    if (!cs) return cort_error_oom();
    cs->e = e;
    if (e->op.create) {
        cort_op_context c = { node, NULL, NULL };
        cort_status *st = e->op.create(e->op.user, &c, &cs->user_state);
        if (st) {
            cort_free(cs);
            return cort_error_wrap(st, "node '%s' (%s.%s): custom op create: ", node->name, e->domain[0] ? e->domain : "ai.onnx",
                                   node->op_type);
        }
    }
    *state = cs;
    return NULL;
}

static void custom_free_state(void *state) {
    custom_state *cs = state;
    if (!cs) return;
    if (cs->e->op.destroy) cs->e->op.destroy(cs->e->op.user, cs->user_state);
    cort_free(cs);
}

static cort_status *custom_infer(cort_infer_ctx *ctx) {
    const custom_state *cs = ctx->state;
    if (!cs->e->op.infer) return NULL;   /* outputs stay unknown until run time */
    cort_op_context c = { ctx->node, ctx, NULL };
    cort_status *st = cs->e->op.infer(cs->e->op.user, cs->user_state, &c);
    if (st) return cort_error_wrap(st, "node '%s' (%s): custom op infer: ", ctx->node->name, ctx->node->op_type);
    return NULL;
}

static cort_status *custom_run(cort_kernel_ctx *ctx) {
    const custom_state *cs = ctx->state;
    cort_op_context c = { ctx->node, NULL, ctx };
    cort_status *st = cs->e->op.compute(cs->e->op.user, cs->user_state, &c);
    if (st) return cort_error_wrap(st, "node '%s' (%s): custom op compute: ", ctx->node->name, ctx->node->op_type);
    for (size_t i = 0; i < ctx->n_outputs; i++)
        if (!ctx->outputs[i] && ctx->node->out_slot[i] >= 0)
            return cort_node_error(ctx->node, CORT_ERROR_RUNTIME, "custom op compute returned without producing output %zu", i);
    return NULL;
}

/* ---------------------------------------------------------------- registration */
static int range_overlaps(const cort_custom_op *a, const cort_custom_op *b) {
    int a_hi = a->end_version ? a->end_version : INT32_MAX, b_hi = b->end_version ? b->end_version : INT32_MAX;
    return a->since_version <= b_hi && b->since_version <= a_hi;
}

cort_status *cort_custom_op_set_add(cort_custom_op_set **setp, const cort_custom_op *op) {
    const char *fn = "cort_session_options_add_custom_op";
    if (!op) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: op is NULL", fn);
    if (op->version != CORT_CUSTOM_OP_VERSION)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: op->version is %u, this library implements %u", fn, op->version,
                          (unsigned)CORT_CUSTOM_OP_VERSION);
    if (!op->op_type || !op->op_type[0])
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: op->op_type is NULL or empty", fn);
    if (!op->compute)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: op '%s' has no compute function", fn, op->op_type);
    if (op->since_version < 1 || (op->end_version && op->end_version < op->since_version))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: op '%s' has version range %d..%d (need 1 <= since <= end, end 0 = open)",
                          fn, op->op_type, op->since_version, op->end_version);
    const char *domain = op->domain ? op->domain : "";
    if (!strcmp(domain, "ai.onnx")) domain = "";
    cort_custom_op_set *s = *setp;
    if (!s) {
        if (!(s = cort_calloc(1, sizeof *s))) return cort_error_oom();
        atomic_init(&s->refs, 1);
        *setp = s;
    } else if (atomic_load(&s->refs) > 1) {
        /* a session holds this set: give the options their own copy so that session never changes */
        cort_custom_op_set *copy = cort_calloc(1, sizeof *copy);
        if (!copy) return cort_error_oom();
        atomic_init(&copy->refs, 1);
        for (size_t i = 0; i < s->n; i++) {
            cort_status *st = cort_custom_op_set_add(&copy, &s->entries[i]->op);
            if (st) { cort_custom_op_set_release(copy); return st; }
        }
        cort_custom_op_set_release(s);
        *setp = s = copy;
    }
    for (size_t i = 0; i < s->n; i++) {
        const custom_entry *e = s->entries[i];
        if (!strcmp(e->domain, domain) && !strcmp(e->op_type, op->op_type) && range_overlaps(&e->op, op))
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: %s.%s versions %d..%d overlap a registered range %d..%d", fn,
                              domain[0] ? domain : "ai.onnx", op->op_type, op->since_version, op->end_version,
                              e->op.since_version, e->op.end_version);
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        custom_entry **grown = cort_realloc(s->entries, cap * sizeof *grown);
        if (!grown) return cort_error_oom();
        s->entries = grown;
        s->cap = cap;
    }
    custom_entry *e = cort_calloc(1, sizeof *e);
    if (!e) return cort_error_oom();
    e->domain = cort_strdup(domain);
    e->op_type = cort_strdup(op->op_type);
    if (!e->domain || !e->op_type) {
        cort_free(e->domain);
        cort_free(e->op_type);
        cort_free(e);
        return cort_error_oom();
    }
    e->op = *op;
    e->op.domain = e->domain;
    e->op.op_type = e->op_type;
    e->def.name = e->op_type;
    e->def.domain = e->domain;
    e->def.min_opset = op->since_version;
    e->def.max_opset = op->end_version ? op->end_version : INT32_MAX;
    e->def.init = custom_init;
    e->def.free_state = custom_free_state;
    e->def.infer = custom_infer;
    e->def.run = custom_run;
    s->entries[s->n++] = e;
    return NULL;
}

/* Libraries stay loaded for the life of the process: sessions created from the options keep calling
 * into them, and a session may outlive every options object. */
cort_status *cort_custom_op_library_load(cort_session_options *options, const char *path) {
    const char *fn = "cort_session_options_load_custom_op_library";
    if (!path || !path[0]) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: path is NULL or empty", fn);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: cannot load '%s': %s", fn, path, why ? why : "unknown error");
    }
    cort_register_custom_ops_fn reg;
    void *sym = dlsym(h, CORT_REGISTER_CUSTOM_OPS_SYMBOL);
    memcpy(&reg, &sym, sizeof reg);
    if (!sym)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: '%s' does not export %s", fn, path, CORT_REGISTER_CUSTOM_OPS_SYMBOL);
    cort_status *st = reg(options, cort_get_custom_op_api());
    if (st) return cort_error_wrap(st, "%s: %s in '%s' failed: ", fn, CORT_REGISTER_CUSTOM_OPS_SYMBOL, path);
    return NULL;
}

/* ---------------------------------------------------------------- the provider */
static cort_status *custom_create(const char *const *keys, const char *const *values, size_t n, int threads, void **inst) {
    (void)keys; (void)values; (void)n; (void)threads; (void)inst;
    return cort_error(CORT_ERROR_INVALID_ARGUMENT, "the custom-op provider is made from session options, not by name");
}

static void custom_destroy(void *instance) { cort_custom_op_set_release(instance); }

static const custom_entry *custom_lookup(const cort_custom_op_set *s, const char *domain, const char *op_type, int opset) {
    for (size_t i = 0; s && i < s->n; i++) {
        const custom_entry *e = s->entries[i];
        if (!strcmp(e->domain, domain) && !strcmp(e->op_type, op_type) && opset >= e->def.min_opset &&
            opset <= e->def.max_opset)
            return e;
    }
    return NULL;
}

static int custom_supports(void *instance, const cort_node *node, const cort_tinfo *inputs, char *reason, size_t len) {
    (void)inputs;
    if (custom_lookup(instance, node->domain, node->op_type, node->opset)) return 1;
    if (len) reason[0] = 0;
    return 0;
}

static const cort_op_def *custom_kernel(void *instance, const cort_node *node) {
    const custom_entry *e = custom_lookup(instance, node->domain, node->op_type, node->opset);
    return e ? &e->def : NULL;
}

static const cort_op_def *custom_find(void *instance, const char *domain, const char *op_type, int opset) {
    const custom_entry *e = custom_lookup(instance, domain, op_type, opset);
    return e ? &e->def : NULL;
}

const cort_provider_vtable cort_custom_provider = {
    .name = "custom",
    .caps = CORT_PROVIDER_OPAQUE,
    .option_keys = NULL,
    .create = custom_create,
    .destroy = custom_destroy,
    .supports = custom_supports,
    .kernel = custom_kernel,
    .allocator = NULL,
    .partition = NULL,
    .find = custom_find,
    .known = NULL,
};

/* ---------------------------------------------------------------- the public context */
static int type_valid(cort_type t) { return t != CORT_TYPE_UNDEFINED && strcmp(cort_type_name(t), "undefined") != 0; }

const char *cort_op_node_name(const cort_op_context *c) { return c ? c->node->name : NULL; }
const char *cort_op_type(const cort_op_context *c) { return c ? c->node->op_type : NULL; }
int cort_op_opset(const cort_op_context *c) { return c ? c->node->opset : 0; }
size_t cort_op_input_count(const cort_op_context *c) { return c ? c->node->n_inputs : 0; }
size_t cort_op_output_count(const cort_op_context *c) { return c ? c->node->n_outputs : 0; }

int cort_op_attr_int(const cort_op_context *c, const char *name, int64_t *out) {
    if (!c || !name || !cort_attr_get(c->node, name)) return 0;
    if (out) *out = cort_attr_int(c->node, name, 0);
    return 1;
}
int cort_op_attr_float(const cort_op_context *c, const char *name, float *out) {
    if (!c || !name || !cort_attr_get(c->node, name)) return 0;
    if (out) *out = cort_attr_float(c->node, name, 0.0f);
    return 1;
}
const char *cort_op_attr_string(const cort_op_context *c, const char *name) {
    if (!c || !name || !cort_attr_get(c->node, name)) return NULL;
    return cort_attr_str(c->node, name, NULL);
}
size_t cort_op_attr_ints(const cort_op_context *c, const char *name, const int64_t **out) {
    if (out) *out = NULL;
    return c && name ? cort_attr_ints(c->node, name, out) : 0;
}
size_t cort_op_attr_floats(const cort_op_context *c, const char *name, const float **out) {
    if (out) *out = NULL;
    return c && name ? cort_attr_floats(c->node, name, out) : 0;
}

cort_status *cort_op_input_type(const cort_op_context *c, size_t i, cort_type *elem, int64_t *dims, size_t max_dims,
                                int *rank) {
    if (!c || !c->infer)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_input_type: only valid inside a custom op's infer callback");
    if (i >= c->infer->n_inputs)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_input_type: node '%s' has %zu inputs, asked for input %zu",
                          c->node->name, c->infer->n_inputs, i);
    const cort_tinfo *t = &c->infer->inputs[i];
    int known = t->kind == CORT_VKIND_TENSOR;
    if (elem) *elem = known ? t->elem : CORT_TYPE_UNDEFINED;
    int r = known ? t->rank : -1;
    if (rank) *rank = r;
    if (r > 0 && dims) {
        if ((size_t)r > max_dims)
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_input_type: input %zu has rank %d, dims holds %zu", i, r, max_dims);
        memcpy(dims, t->dims, (size_t)r * sizeof *dims);
    }
    return NULL;
}

cort_status *cort_op_set_output_type(cort_op_context *c, size_t i, cort_type elem, const int64_t *dims, int rank) {
    if (!c || !c->infer)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_set_output_type: only valid inside a custom op's infer callback");
    if (i >= c->infer->n_outputs)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_set_output_type: node '%s' has %zu outputs, asked for output %zu",
                          c->node->name, c->infer->n_outputs, i);
    if (!type_valid(elem))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_set_output_type: element type %d is not a cort_type", (int)elem);
    if (rank > CORT_MAX_RANK || (rank > 0 && !dims))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_set_output_type: rank %d (max %d) with dims %p", rank,
                          CORT_MAX_RANK, (const void *)dims);
    if (rank < 0) cort_tinfo_tensor(&c->infer->outputs[i], elem);
    else cort_tinfo_tensor_shape(&c->infer->outputs[i], elem, dims, rank);
    return NULL;
}

const cort_value *cort_op_input(const cort_op_context *c, size_t i) {
    if (!c || !c->kernel || i >= c->kernel->n_inputs) return NULL;
    return c->kernel->inputs[i];
}

cort_status *cort_op_output(cort_op_context *c, size_t i, cort_type type, const int64_t *shape, size_t rank,
                            cort_value **out) {
    if (!c || !c->kernel || !out)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_output: only valid inside a custom op's compute callback, out non-NULL");
    *out = NULL;
    if (i >= c->kernel->n_outputs)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_output: node '%s' has %zu outputs, asked for output %zu",
                          c->node->name, c->kernel->n_outputs, i);
    if (c->kernel->outputs[i])
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_output: output %zu of node '%s' was already made", i, c->node->name);
    if (!type_valid(type))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_output: element type %d is not a cort_type", (int)type);
    if (rank > CORT_MAX_RANK || (rank && !shape))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_output: rank %zu (max %d) with shape %p", rank, CORT_MAX_RANK,
                          (const void *)shape);
    for (size_t d = 0; d < rank; d++)
        if (shape[d] < 0)
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_op_output: dimension %zu is %lld", d, (long long)shape[d]);
    return cort_kernel_output(c->kernel, i, type, shape, rank, out);
}

int cort_op_threads(const cort_op_context *c) { return c && c->kernel ? cort_pool_threads(c->kernel->pool) : 1; }

void cort_op_parallel_for(const cort_op_context *c, size_t n, void (*fn)(void *arg, size_t begin, size_t end), void *arg) {
    if (!fn || !n) return;
    if (!c || !c->kernel) { fn(arg, 0, n); return; }
    cort_parallel_for(c->kernel->pool, n, 1, fn, arg);
}

int cort_op_cancelled(const cort_op_context *c) { return c && c->kernel ? cort_kernel_cancelled(c->kernel) : 0; }

static const cort_custom_op_api custom_api = {
    .version = CORT_CUSTOM_OP_VERSION,
    .add_custom_op = cort_session_options_add_custom_op,
    .status_create = cort_status_create,
    .op_node_name = cort_op_node_name,
    .op_type = cort_op_type,
    .op_opset = cort_op_opset,
    .op_input_count = cort_op_input_count,
    .op_output_count = cort_op_output_count,
    .op_attr_int = cort_op_attr_int,
    .op_attr_float = cort_op_attr_float,
    .op_attr_string = cort_op_attr_string,
    .op_attr_ints = cort_op_attr_ints,
    .op_attr_floats = cort_op_attr_floats,
    .op_input_type = cort_op_input_type,
    .op_set_output_type = cort_op_set_output_type,
    .op_input = cort_op_input,
    .op_output = cort_op_output,
    .op_threads = cort_op_threads,
    .op_parallel_for = cort_op_parallel_for,
    .op_cancelled = cort_op_cancelled,
    .tensor_data = cort_tensor_data,
    .tensor_type = cort_tensor_type,
    .tensor_rank = cort_tensor_rank,
    .tensor_shape = cort_tensor_shape,
    .tensor_element_count = cort_tensor_element_count,
};

const cort_custom_op_api *cort_get_custom_op_api(void) { return &custom_api; }
