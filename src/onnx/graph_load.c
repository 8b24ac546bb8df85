/* GraphProto, FunctionProto, OperatorSetIdProto, StringStringEntryProto. */
#include <string.h>
#include "load.h"
#include "../core/status.h"

enum { GR_NODE = 1, GR_NAME = 2, GR_INIT = 5, GR_DOC = 10, GR_INPUT = 11, GR_OUTPUT = 12, GR_VALUE_INFO = 13,
       GR_SPARSE_INIT = 15, GR_NFIELDS = 16 };

cort_status *cort_load_graph(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_graph_ir *g) {
    size_t c[GR_NFIELDS] = { 0 };
    CORT_TRY(cort_pb_count_fields(msg, path, c, GR_NFIELDS));
    memset(g, 0, sizeof *g);
    g->name = g->doc = "";
    g->nodes = cort_load_array(L, c[GR_NODE], sizeof *g->nodes);
    g->inputs = cort_load_array(L, c[GR_INPUT], sizeof *g->inputs);
    g->outputs = cort_load_array(L, c[GR_OUTPUT], sizeof *g->outputs);
    g->value_infos = cort_load_array(L, c[GR_VALUE_INFO], sizeof *g->value_infos);
    if (c[GR_INIT] > SIZE_MAX / 2) return cort_error_oom();
    g->initializers = cort_load_array(L, c[GR_INIT] + c[GR_SPARSE_INIT], sizeof *g->initializers);
    if (!g->nodes || !g->inputs || !g->outputs || !g->value_infos || !g->initializers) return cort_error_oom();
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    size_t n_sparse = 0;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) return NULL;
        if (f.num == GR_NAME) { CORT_TRY(cort_load_str(L, path, &f, &g->name, NULL)); continue; }
        if (f.num == GR_DOC) { CORT_TRY(cort_load_str(L, path, &f, &g->doc, NULL)); continue; }
        const char *fname, *tname;
        size_t idx;
        switch (f.num) {
        case GR_NODE: fname = "node"; tname = "NodeProto"; idx = g->n_nodes; break;
        case GR_INIT: fname = "initializer"; tname = "TensorProto"; idx = g->n_initializers - n_sparse; break;
        case GR_SPARSE_INIT: fname = "sparse_initializer"; tname = "SparseTensorProto"; idx = n_sparse; break;
        case GR_INPUT: fname = "input"; tname = "ValueInfoProto"; idx = g->n_inputs; break;
        case GR_OUTPUT: fname = "output"; tname = "ValueInfoProto"; idx = g->n_outputs; break;
        case GR_VALUE_INFO: fname = "value_info"; tname = "ValueInfoProto"; idx = g->n_value_infos; break;
        default: continue;
        }
        CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
        cort_pb_path cp;
        if (!cort_pb_path_child(&cp, path, fname, tname, (long)idx)) return cort_pb_depth_error(path, f.off);
        cort_pb m;
        cort_pb_sub(&m, &r, &f);
        switch (f.num) {
        case GR_NODE:
            CORT_TRY(cort_load_node(L, &cp, &m, &g->nodes[g->n_nodes]));
            g->n_nodes++;
            break;
        case GR_INIT: case GR_SPARSE_INIT: {
            cort_initializer_ir *in = &g->initializers[g->n_initializers];
            cort_value *v;
            if (f.num == GR_INIT) {
                L->lazy = 1;
                cort_status *lst = cort_load_tensor(L, &cp, &m, &v, &in->name);
                L->lazy = 0;
                CORT_TRY(lst);
            }
            else CORT_TRY(cort_load_sparse(L, &cp, &m, &v, &in->name));
            CORT_TRY(cort_load_own(L, v));
            in->value = v;
            if (!in->name || !in->name[0]) return cort_pb_error(&cp, 0, f.data, "initializer has no name");
            g->n_initializers++;
            if (f.num == GR_SPARSE_INIT) n_sparse++;
            break;
        }
        case GR_INPUT:
            CORT_TRY(cort_load_value_info(L, &cp, &m, &g->inputs[g->n_inputs]));
            g->n_inputs++;
            break;
        case GR_OUTPUT:
            CORT_TRY(cort_load_value_info(L, &cp, &m, &g->outputs[g->n_outputs]));
            g->n_outputs++;
            break;
        default:
            CORT_TRY(cort_load_value_info(L, &cp, &m, &g->value_infos[g->n_value_infos]));
            g->n_value_infos++;
            break;
        }
    }
}

cort_status *cort_load_opset(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_opset_ir *out) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    out->domain = "";
    out->version = 0;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        if (f.num == 1) CORT_TRY(cort_load_str(L, path, &f, &out->domain, NULL));
        else if (f.num == 2) {
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_VARINT));
            out->version = (int64_t)f.u;
        }
    }
    out->domain = cort_load_domain(out->domain);
    return NULL;
}

cort_status *cort_load_string_pair(cort_load *L, const cort_pb_path *path, const cort_pb *msg, const char **key,
                                   const char **value) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    *key = *value = "";
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) return NULL;
        if (f.num == 1) CORT_TRY(cort_load_str(L, path, &f, key, NULL));
        else if (f.num == 2) CORT_TRY(cort_load_str(L, path, &f, value, NULL));
    }
}

enum { FN_NAME = 1, FN_INPUT = 4, FN_OUTPUT = 5, FN_ATTRIBUTE = 6, FN_NODE = 7, FN_DOC = 8, FN_OPSET = 9, FN_DOMAIN = 10,
       FN_ATTR_PROTO = 11, FN_OVERLOAD = 13, FN_NFIELDS = 14 };

cort_status *cort_load_function(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_function_ir *fn) {
    size_t c[FN_NFIELDS] = { 0 };
    CORT_TRY(cort_pb_count_fields(msg, path, c, FN_NFIELDS));
    memset(fn, 0, sizeof *fn);
    fn->name = fn->domain = fn->overload = "";
    fn->inputs = cort_load_array(L, c[FN_INPUT], sizeof *fn->inputs);
    fn->outputs = cort_load_array(L, c[FN_OUTPUT], sizeof *fn->outputs);
    fn->attributes = cort_load_array(L, c[FN_ATTRIBUTE], sizeof *fn->attributes);
    fn->attr_defaults = cort_load_array(L, c[FN_ATTR_PROTO], sizeof *fn->attr_defaults);
    fn->nodes = cort_load_array(L, c[FN_NODE], sizeof *fn->nodes);
    fn->opsets = cort_load_array(L, c[FN_OPSET], sizeof *fn->opsets);
    if (!fn->inputs || !fn->outputs || !fn->attributes || !fn->attr_defaults || !fn->nodes || !fn->opsets)
        return cort_error_oom();
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        cort_pb_path cp;
        cort_pb m;
        switch (f.num) {
        case FN_NAME: CORT_TRY(cort_load_str(L, path, &f, &fn->name, NULL)); break;
        case FN_DOMAIN: CORT_TRY(cort_load_str(L, path, &f, &fn->domain, NULL)); break;
        case FN_OVERLOAD: CORT_TRY(cort_load_str(L, path, &f, &fn->overload, NULL)); break;
        case FN_INPUT: CORT_TRY(cort_load_str(L, path, &f, &fn->inputs[fn->n_inputs++], NULL)); break;
        case FN_OUTPUT: CORT_TRY(cort_load_str(L, path, &f, &fn->outputs[fn->n_outputs++], NULL)); break;
        case FN_ATTRIBUTE: CORT_TRY(cort_load_str(L, path, &f, &fn->attributes[fn->n_attributes++], NULL)); break;
        case FN_NODE: case FN_ATTR_PROTO: case FN_OPSET:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            cort_pb_sub(&m, &r, &f);
            if (f.num == FN_NODE) {
                if (!cort_pb_path_child(&cp, path, "node", "NodeProto", (long)fn->n_nodes)) return cort_pb_depth_error(path, f.off);
                CORT_TRY(cort_load_node(L, &cp, &m, &fn->nodes[fn->n_nodes]));
                fn->n_nodes++;
            } else if (f.num == FN_ATTR_PROTO) {
                if (!cort_pb_path_child(&cp, path, "attribute_proto", "AttributeProto", (long)fn->n_attr_defaults))
                    return cort_pb_depth_error(path, f.off);
                CORT_TRY(cort_load_attr(L, &cp, &m, &fn->attr_defaults[fn->n_attr_defaults]));
                fn->n_attr_defaults++;
            } else {
                if (!cort_pb_path_child(&cp, path, "opset_import", "OperatorSetIdProto", (long)fn->n_opsets))
                    return cort_pb_depth_error(path, f.off);
                CORT_TRY(cort_load_opset(L, &cp, &m, &fn->opsets[fn->n_opsets]));
                fn->n_opsets++;
            }
            break;
        default: break;
        }
    }
    fn->domain = cort_load_domain(fn->domain);
    return NULL;
}
