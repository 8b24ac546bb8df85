/* NodeProto and AttributeProto. Repeated fields are counted first so each list is one arena array. */
#include <string.h>
#include "load.h"
#include "../core/status.h"

enum {
    AT_NAME = 1, AT_F = 2, AT_I = 3, AT_S = 4, AT_T = 5, AT_G = 6, AT_FLOATS = 7, AT_INTS = 8, AT_STRINGS = 9,
    AT_TENSORS = 10, AT_GRAPHS = 11, AT_DOC = 13, AT_TP = 14, AT_TYPE_PROTOS = 15, AT_TYPE = 20, AT_REF = 21,
    AT_SPARSE = 22, AT_SPARSES = 23, AT_NFIELDS = 24
};

static const char *attr_type_name(int t) {
    static const char *const n[] = { "UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS", "STRINGS",
                                     "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS" };
    return t >= 0 && t <= 14 ? n[t] : "?";
}

/* Attribute type implied by the fields present (for old models without `type`). */
static int infer_type(const size_t *seen) {
    static const struct { int field, type; } order[] = {
        { AT_F, CORT_ATTR_FLOAT }, { AT_I, CORT_ATTR_INT }, { AT_S, CORT_ATTR_STRING }, { AT_T, CORT_ATTR_TENSOR },
        { AT_G, CORT_ATTR_GRAPH }, { AT_SPARSE, CORT_ATTR_SPARSE_TENSOR }, { AT_TP, CORT_ATTR_TYPE_PROTO },
        { AT_FLOATS, CORT_ATTR_FLOATS }, { AT_INTS, CORT_ATTR_INTS }, { AT_STRINGS, CORT_ATTR_STRINGS },
        { AT_TENSORS, CORT_ATTR_TENSORS }, { AT_GRAPHS, CORT_ATTR_GRAPHS }, { AT_SPARSES, CORT_ATTR_SPARSE_TENSORS },
        { AT_TYPE_PROTOS, CORT_ATTR_TYPE_PROTOS },
    };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (seen[order[i].field]) return order[i].type;
    return CORT_ATTR_UNDEFINED;
}

/* The field holding the value(s) of an attribute type. */
static uint32_t value_field(int type) {
    switch (type) {
    case CORT_ATTR_FLOAT: return AT_F;
    case CORT_ATTR_INT: return AT_I;
    case CORT_ATTR_STRING: return AT_S;
    case CORT_ATTR_TENSOR: return AT_T;
    case CORT_ATTR_GRAPH: return AT_G;
    case CORT_ATTR_SPARSE_TENSOR: return AT_SPARSE;
    case CORT_ATTR_TYPE_PROTO: return AT_TP;
    case CORT_ATTR_FLOATS: return AT_FLOATS;
    case CORT_ATTR_INTS: return AT_INTS;
    case CORT_ATTR_STRINGS: return AT_STRINGS;
    case CORT_ATTR_TENSORS: return AT_TENSORS;
    case CORT_ATTR_GRAPHS: return AT_GRAPHS;
    case CORT_ATTR_SPARSE_TENSORS: return AT_SPARSES;
    case CORT_ATTR_TYPE_PROTOS: return AT_TYPE_PROTOS;
    default: return 0;
    }
}

static int is_list(int type) {
    return type == CORT_ATTR_FLOATS || type == CORT_ATTR_INTS || type == CORT_ATTR_STRINGS || type == CORT_ATTR_TENSORS ||
           type == CORT_ATTR_GRAPHS || type == CORT_ATTR_SPARSE_TENSORS || type == CORT_ATTR_TYPE_PROTOS;
}

/* Loads one TENSOR / SPARSE_TENSOR / GRAPH / TYPE_PROTO occurrence (index k of the list, -1 if single). */
static cort_status *load_sub(cort_load *L, const cort_pb_path *path, const cort_pb *r, const cort_pb_field *f, long k,
                             cort_attr_ir *a) {
    static const char *const fnames[AT_NFIELDS] = {
        [AT_T] = "t", [AT_G] = "g", [AT_TENSORS] = "tensors", [AT_GRAPHS] = "graphs", [AT_TP] = "tp",
        [AT_TYPE_PROTOS] = "type_protos", [AT_SPARSE] = "sparse_tensor", [AT_SPARSES] = "sparse_tensors" };
    static const char *const tnames[AT_NFIELDS] = {
        [AT_T] = "TensorProto", [AT_G] = "GraphProto", [AT_TENSORS] = "TensorProto", [AT_GRAPHS] = "GraphProto",
        [AT_TP] = "TypeProto", [AT_TYPE_PROTOS] = "TypeProto", [AT_SPARSE] = "SparseTensorProto",
        [AT_SPARSES] = "SparseTensorProto" };
    CORT_TRY(cort_pb_expect(path, f, CORT_PB_LEN));
    cort_pb_path sp;
    if (!cort_pb_path_child(&sp, path, fnames[f->num], tnames[f->num], k)) return cort_pb_depth_error(path, f->off);
    cort_pb m;
    cort_pb_sub(&m, r, f);
    size_t i = k < 0 ? 0 : (size_t)k;
    switch (f->num) {
    case AT_T: case AT_TENSORS: case AT_SPARSE: case AT_SPARSES: {
        cort_value *v;
        if (f->num == AT_T || f->num == AT_TENSORS) CORT_TRY(cort_load_tensor(L, &sp, &m, &v, NULL));
        else CORT_TRY(cort_load_sparse(L, &sp, &m, &v, NULL));
        CORT_TRY(cort_load_own(L, v));
        if (k < 0) a->t = v;
        else a->tensors[i] = v;
        return NULL;
    }
    case AT_G: case AT_GRAPHS: {
        cort_graph_ir *g = cort_load_array(L, 1, sizeof *g);
        if (!g) return cort_error_oom();
        CORT_TRY(cort_load_graph(L, &sp, &m, g));
        if (k < 0) a->g = g;
        else a->graphs[i] = g;
        return NULL;
    }
    default:   /* AT_TP, AT_TYPE_PROTOS */
        return cort_load_type(L, &sp, &m, &a->tp[i]);
    }
}

cort_status *cort_load_attr(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_attr_ir *a) {
    size_t seen[AT_NFIELDS] = { 0 };   /* elements per field (packed lists counted per element) */
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    int declared = -1;
    memset(a, 0, sizeof *a);
    a->name = "";
    a->s = "";
    /* pass 1: scalars, strings, counts */
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        size_t n = 1;
        switch (f.num) {
        case AT_NAME: CORT_TRY(cort_load_str(L, path, &f, &a->name, NULL)); break;
        case AT_REF: CORT_TRY(cort_load_str(L, path, &f, &a->ref_attr_name, NULL)); break;
        case AT_DOC: CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN)); break;
        case AT_TYPE:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_VARINT));
            if (f.u > CORT_ATTR_TYPE_PROTOS)
                return cort_pb_error(path, f.num, f.off, "attribute '%s': invalid type %llu", a->name, (unsigned long long)f.u);
            declared = (int)f.u;
            break;
        case AT_F: {
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_I32));
            uint32_t bits = (uint32_t)f.u;
            memcpy(&a->f, &bits, 4);
            break;
        }
        case AT_I:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_VARINT));
            a->i = (int64_t)f.u;
            break;
        case AT_S: CORT_TRY(cort_load_str(L, path, &f, &a->s, &a->s_len)); break;
        case AT_FLOATS: CORT_TRY(cort_pb_scalar_count(&r, path, &f, CORT_PB_I32, &n)); break;
        case AT_INTS: CORT_TRY(cort_pb_scalar_count(&r, path, &f, CORT_PB_VARINT, &n)); break;
        case AT_T: case AT_G: case AT_STRINGS: case AT_TENSORS: case AT_GRAPHS: case AT_TP: case AT_TYPE_PROTOS:
        case AT_SPARSE: case AT_SPARSES:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            break;
        default: continue;
        }
        if (f.num < AT_NFIELDS) seen[f.num] += n;
    }
    int type = declared >= 0 && declared != CORT_ATTR_UNDEFINED ? declared : infer_type(seen);
    a->type = type;
    if (type == CORT_ATTR_UNDEFINED) {
        if (a->ref_attr_name) return NULL;
        return cort_pb_error(path, AT_TYPE, msg->pos, "attribute '%s' has no type and no value", a->name);
    }
    uint32_t vf = value_field(type);
    if (!is_list(type)) {
        if (a->ref_attr_name) return NULL;
        if (!seen[vf] && (type == CORT_ATTR_TENSOR || type == CORT_ATTR_GRAPH || type == CORT_ATTR_SPARSE_TENSOR ||
                          type == CORT_ATTR_TYPE_PROTO))
            return cort_pb_error(path, vf, msg->pos, "attribute '%s' of type %s has no value", a->name, attr_type_name(type));
        if (type == CORT_ATTR_FLOAT || type == CORT_ATTR_INT || type == CORT_ATTR_STRING) return NULL;
    }
    /* pass 2: allocate the list and load values of the type's field */
    size_t n = is_list(type) ? seen[vf] : 1;
    a->n = is_list(type) ? n : 0;
    switch (type) {
    case CORT_ATTR_FLOATS: a->floats = cort_load_array(L, n, sizeof *a->floats); if (!a->floats) return cort_error_oom(); break;
    case CORT_ATTR_INTS: a->ints = cort_load_array(L, n, sizeof *a->ints); if (!a->ints) return cort_error_oom(); break;
    case CORT_ATTR_STRINGS:
        a->strings = cort_load_array(L, n, sizeof *a->strings);
        a->string_lens = cort_load_array(L, n, sizeof *a->string_lens);
        if (!a->strings || !a->string_lens) return cort_error_oom();
        break;
    case CORT_ATTR_TENSORS: case CORT_ATTR_SPARSE_TENSORS:
        a->tensors = cort_load_array(L, n, sizeof *a->tensors);
        if (!a->tensors) return cort_error_oom();
        break;
    case CORT_ATTR_GRAPHS: a->graphs = cort_load_array(L, n, sizeof *a->graphs); if (!a->graphs) return cort_error_oom(); break;
    case CORT_ATTR_TYPE_PROTO: case CORT_ATTR_TYPE_PROTOS:
        a->tp = cort_load_array(L, n, sizeof *a->tp);
        if (!a->tp) return cort_error_oom();
        for (size_t i = 0; i < n; i++) cort_load_type_init(&a->tp[i]);
        break;
    default: break;
    }
    r = *msg;
    size_t k = 0;
    int single_done = 0;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        if (f.num != vf) continue;
        switch (type) {
        case CORT_ATTR_FLOATS: {
            size_t cnt;
            CORT_TRY(cort_pb_scalar_count(&r, path, &f, CORT_PB_I32, &cnt));
            if (cnt > n - k) return cort_pb_error(path, f.num, f.off, "more floats than counted");
            if (f.wire == CORT_PB_LEN) memcpy(a->floats + k, r.buf + f.data, f.len);
            else { uint32_t bits = (uint32_t)f.u; memcpy(a->floats + k, &bits, 4); }
            k += cnt;
            break;
        }
        case CORT_ATTR_INTS: {
            /* reuse the int64 storage as uint64 (same size and representation) */
            CORT_TRY(cort_pb_scalar_u64(&r, path, &f, CORT_PB_VARINT, (uint64_t *)a->ints, &k, n));
            break;
        }
        case CORT_ATTR_STRINGS:
            if (k >= n) return cort_pb_error(path, f.num, f.off, "more strings than counted");
            CORT_TRY(cort_load_str(L, path, &f, &a->strings[k], &a->string_lens[k]));
            k++;
            break;
        default:
            if (is_list(type)) {
                if (k >= n) return cort_pb_error(path, f.num, f.off, "more values than counted");
                CORT_TRY(load_sub(L, path, &r, &f, (long)k, a));
                k++;
            } else if (++single_done == (int)seen[vf]) {
                CORT_TRY(load_sub(L, path, &r, &f, -1, a));   /* last occurrence wins */
            }
            break;
        }
    }
    return NULL;
}

cort_status *cort_load_node(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_node_ir *node) {
    size_t counts[8] = { 0 };
    CORT_TRY(cort_pb_count_fields(msg, path, counts, 8));
    memset(node, 0, sizeof *node);
    node->name = node->domain = node->doc = "";
    node->inputs = cort_load_array(L, counts[1], sizeof *node->inputs);
    node->outputs = cort_load_array(L, counts[2], sizeof *node->outputs);
    node->attrs = cort_load_array(L, counts[5], sizeof *node->attrs);
    if (!node->inputs || !node->outputs || !node->attrs) return cort_error_oom();
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        switch (f.num) {
        case 1: CORT_TRY(cort_load_str(L, path, &f, &node->inputs[node->n_inputs++], NULL)); break;
        case 2: CORT_TRY(cort_load_str(L, path, &f, &node->outputs[node->n_outputs++], NULL)); break;
        case 3: CORT_TRY(cort_load_str(L, path, &f, &node->name, NULL)); break;
        case 4: CORT_TRY(cort_load_str(L, path, &f, &node->op_type, NULL)); break;
        case 6: CORT_TRY(cort_load_str(L, path, &f, &node->doc, NULL)); break;
        case 7: CORT_TRY(cort_load_str(L, path, &f, &node->domain, NULL)); break;
        case 5: {
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            cort_pb_path ap;
            if (!cort_pb_path_child(&ap, path, "attribute", "AttributeProto", (long)node->n_attrs))
                return cort_pb_depth_error(path, f.off);
            cort_pb m;
            cort_pb_sub(&m, &r, &f);
            CORT_TRY(cort_load_attr(L, &ap, &m, &node->attrs[node->n_attrs]));
            node->n_attrs++;
            break;
        }
        default: break;
        }
    }
    node->domain = cort_load_domain(node->domain);
    if (!node->op_type || !node->op_type[0])
        return cort_pb_error(path, 4, msg->pos, "node '%s' has no op_type", node->name);
    return NULL;
}
