/* I/O binding: inputs and outputs bound by name once, then runs without passing them again. The
 * binding keeps the name and value arrays cort_session_run takes, so a run builds nothing: steady
 * runs with preallocated outputs allocate nothing here. */
#include "session.h"
#include <string.h>

typedef struct binding_slot {
    char *name;
    cort_value *value;   /* input: the bound value; output: the preallocated tensor or NULL */
} binding_slot;

struct cort_io_binding {
    cort_session *session;
    binding_slot *in, *out;
    size_t n_in, n_out, cap_in, cap_out;
    /* what cort_session_run takes, rebuilt when the bindings change */
    const char **in_names, **out_names;
    cort_value **in_values, **results;
    int have_results;
};

cort_status *cort_io_binding_create(cort_session *session, cort_io_binding **out) {
    if (!session || !out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_io_binding_create: session or out is NULL");
    cort_io_binding *b = cort_calloc(1, sizeof *b);
    if (!b) return cort_error_oom();
    b->session = cort_session_retain(session);
    *out = b;
    return NULL;
}

static void drop_results(cort_io_binding *b) {
    for (size_t i = 0; i < b->n_out; i++) {
        cort_value_release(b->results[i]);
        b->results[i] = NULL;
    }
    b->have_results = 0;
}

static void clear_slots(binding_slot *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        cort_free(s[i].name);
        cort_value_release(s[i].value);
    }
}

void cort_io_binding_clear_inputs(cort_io_binding *b) {
    if (!b) return;
    clear_slots(b->in, b->n_in);
    b->n_in = 0;
}

void cort_io_binding_clear_outputs(cort_io_binding *b) {
    if (!b) return;
    drop_results(b);
    clear_slots(b->out, b->n_out);
    b->n_out = 0;
}

void cort_io_binding_free(cort_io_binding *b) {
    if (!b) return;
    cort_io_binding_clear_inputs(b);
    cort_io_binding_clear_outputs(b);
    cort_free(b->in);
    cort_free(b->out);
    cort_free(b->in_names);
    cort_free(b->out_names);
    cort_free(b->in_values);
    cort_free(b->results);
    cort_session_release(b->session);
    cort_free(b);
}

/* Room for one more slot in *slots and in the run arrays sized alike. */
static cort_status *grow(binding_slot **slots, size_t n, size_t *cap, const char ***names, cort_value ***values) {
    if (n < *cap) return NULL;
    size_t nc = *cap ? 2 * *cap : 4;
    binding_slot *ns = cort_realloc(*slots, nc * sizeof *ns);
    if (!ns) return cort_error_oom();
    *slots = ns;
    const char **nn = cort_realloc((void *)*names, nc * sizeof *nn);
    if (!nn) return cort_error_oom();
    *names = nn;
    cort_value **nv = cort_realloc(*values, nc * sizeof *nv);
    if (!nv) return cort_error_oom();
    /* results must stay NULL beyond what a run filled */
    memset(nv + *cap, 0, (nc - *cap) * sizeof *nv);
    *values = nv;
    *cap = nc;
    return NULL;
}

/* Binds name -> value in slots, replacing an existing slot of that name. */
static cort_status *bind(binding_slot **slots, size_t *n, size_t *cap, const char ***names, cort_value ***values,
                         const char *name, cort_value *value) {
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*slots)[i].name, name)) {
            cort_value_release((*slots)[i].value);
            (*slots)[i].value = cort_value_retain(value);
            return NULL;
        }
    CORT_TRY(grow(slots, *n, cap, names, values));
    char *copy = cort_strdup(name);
    if (!copy) return cort_error_oom();
    (*slots)[*n].name = copy;
    (*slots)[*n].value = cort_value_retain(value);
    (*names)[*n] = copy;
    (*n)++;
    return NULL;
}

cort_status *cort_io_binding_bind_input(cort_io_binding *b, const char *name, cort_value *value) {
    if (!b || !name || !value)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_io_binding_bind_input: binding, name or value is NULL");
    const cort_graph *g = b->session->graph;
    size_t k = 0;
    while (k < g->n_inputs && strcmp(g->input_info[k]->name, name)) k++;
    if (k == g->n_inputs)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_io_binding_bind_input: the model has no input named '%s'", name);
    CORT_TRY(cort_run_check_input(g, k, value));
    return bind(&b->in, &b->n_in, &b->cap_in, &b->in_names, &b->in_values, name, value);
}

cort_status *cort_io_binding_bind_output(cort_io_binding *b, const char *name, cort_value *value) {
    if (!b || !name) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_io_binding_bind_output: binding or name is NULL");
    const cort_graph *g = b->session->graph;
    size_t k = 0;
    while (k < g->n_outputs && strcmp(g->output_info[k]->name, name)) k++;
    if (k == g->n_outputs)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_io_binding_bind_output: the model has no output named '%s'", name);
    if (value) CORT_TRY(cort_run_check_preallocated(g, k, "cort_io_binding_bind_output", value));
    /* results of an earlier run no longer line up with the bound outputs once they change */
    drop_results(b);
    return bind(&b->out, &b->n_out, &b->cap_out, &b->out_names, &b->results, name, value);
}

cort_status *cort_io_binding_run(cort_io_binding *b, const cort_run_options *run_options) {
    if (!b) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_io_binding_run: binding is NULL");
    drop_results(b);
    for (size_t i = 0; i < b->n_in; i++) b->in_values[i] = b->in[i].value;
    for (size_t i = 0; i < b->n_out; i++) b->results[i] = b->out[i].value;
    cort_status *st = cort_session_run(b->session, run_options, b->in_names, b->in_values, b->n_in, b->out_names,
                                       b->n_out, b->results);
    if (st) {
        /* cort_session_run put back NULL where it allocated; preallocated entries are borrowed */
        for (size_t i = 0; i < b->n_out; i++) b->results[i] = NULL;
        return st;
    }
    /* preallocated entries were borrowed: the binding holds one reference per result */
    for (size_t i = 0; i < b->n_out; i++)
        if (b->out[i].value) cort_value_retain(b->results[i]);
    b->have_results = 1;
    return NULL;
}

size_t cort_io_binding_output_count(const cort_io_binding *b) { return b ? b->n_out : 0; }

const char *cort_io_binding_output_name(const cort_io_binding *b, size_t i) {
    return b && i < b->n_out ? b->out[i].name : NULL;
}

cort_value *cort_io_binding_output(const cort_io_binding *b, size_t i) {
    return b && b->have_results && i < b->n_out ? b->results[i] : NULL;
}
