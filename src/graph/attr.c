/* Attribute accessors for kernels, and node-named errors. */
#include "op.h"
#include <stdio.h>
#include <string.h>

const cort_attr_ir *cort_attr_get(const cort_node *node, const char *name) {
    const cort_node_ir *ir = node->ir;
    for (size_t i = 0; i < ir->n_attrs; i++)
        if (!strcmp(ir->attrs[i].name, name)) return &ir->attrs[i];
    return NULL;
}

int64_t cort_attr_int(const cort_node *node, const char *name, int64_t dflt) {
    const cort_attr_ir *a = cort_attr_get(node, name);
    if (!a) return dflt;
    if (a->type == CORT_ATTR_FLOAT) return (int64_t)a->f;
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
