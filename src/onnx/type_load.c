/* TypeProto (tensor, sparse_tensor as tensor, sequence, optional, map; opaque -> unknown),
 * TensorShapeProto and ValueInfoProto. */
#include <string.h>
#include "load.h"
#include "../core/status.h"

void cort_load_type_init(cort_type_ir *t) {
    memset(t, 0, sizeof *t);
    t->kind = CORT_VKIND_UNKNOWN;
    t->rank = -1;
}

static cort_status *check_elem_type(const cort_pb_path *path, const cort_pb_field *f) {
    CORT_TRY(cort_pb_expect(path, f, CORT_PB_VARINT));
    if (f->u > CORT_TYPE_INT2)
        return cort_pb_error_code(CORT_ERROR_NOT_IMPLEMENTED, path, f->num, f->off, "element type %llu is not supported",
                                  (unsigned long long)f->u);
    return NULL;
}

/* TensorShapeProto: dim (1) { dim_value (1), dim_param (2), denotation (3) } */
static cort_status *load_shape(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_type_ir *t) {
    size_t counts[2] = { 0, 0 };
    CORT_TRY(cort_pb_count_fields(msg, path, counts, 2));
    if (counts[1] > CORT_MAX_RANK)
        return cort_pb_error_code(CORT_ERROR_NOT_IMPLEMENTED, path, 1, msg->pos, "shape rank %zu exceeds the maximum %d",
                                  counts[1], CORT_MAX_RANK);
    size_t rank = counts[1];
    t->dims = cort_load_array(L, rank, sizeof *t->dims);
    t->dim_params = cort_load_array(L, rank, sizeof *t->dim_params);
    if (!t->dims || !t->dim_params) return cort_error_oom();
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    size_t k = 0;
    while (k < rank) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        if (f.num != 1) continue;
        CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
        cort_pb_path dp;
        if (!cort_pb_path_child(&dp, path, "dim", "TensorShapeProto.Dimension", (long)k)) return cort_pb_depth_error(path, f.off);
        cort_pb d;
        cort_pb_sub(&d, &r, &f);
        cort_pb_field df;
        int64_t value = -1;
        const char *param = NULL;
        for (;;) {
            CORT_TRY(cort_pb_next(&d, &dp, &df, &got));
            if (!got) break;
            if (df.num == 1) {   /* oneof: the last one set wins */
                CORT_TRY(cort_pb_expect(&dp, &df, CORT_PB_VARINT));
                value = (int64_t)df.u >= 0 ? (int64_t)df.u : -1;
                param = NULL;
            } else if (df.num == 2) {
                CORT_TRY(cort_load_str(L, &dp, &df, &param, NULL));
                value = -1;
            }
        }
        t->dims[k] = value;
        t->dim_params[k] = param;
        k++;
    }
    t->rank = (int)rank;
    return NULL;
}

/* Tensor/SparseTensor: elem_type (1), shape (2). */
static cort_status *load_tensor_type(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_type_ir *t) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    t->kind = CORT_VKIND_TENSOR;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) return NULL;
        if (f.num == 1) {
            CORT_TRY(check_elem_type(path, &f));
            t->elem_type = (cort_type)f.u;
        } else if (f.num == 2) {
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            cort_pb_path sp;
            if (!cort_pb_path_child(&sp, path, "shape", "TensorShapeProto", -1)) return cort_pb_depth_error(path, f.off);
            cort_pb s;
            cort_pb_sub(&s, &r, &f);
            CORT_TRY(load_shape(L, &sp, &s, t));
        }
    }
}

/* Parses a nested TypeProto field into a fresh arena cort_type_ir. */
static cort_status *load_inner(cort_load *L, const cort_pb_path *path, const cort_pb *parent, const cort_pb_field *f,
                               const char *fname, cort_type_ir **out) {
    CORT_TRY(cort_pb_expect(path, f, CORT_PB_LEN));
    cort_pb_path ip;
    if (!cort_pb_path_child(&ip, path, fname, "TypeProto", -1)) return cort_pb_depth_error(path, f->off);
    cort_type_ir *t = cort_load_array(L, 1, sizeof *t);
    if (!t) return cort_error_oom();
    cort_load_type_init(t);
    cort_pb m;
    cort_pb_sub(&m, parent, f);
    CORT_TRY(cort_load_type(L, &ip, &m, t));
    *out = t;
    return NULL;
}

/* Sequence/Optional { elem_type (1) } and Map { key_type (1), value_type (2) }. */
static cort_status *load_container(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_type_ir *t) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        if (t->kind == CORT_VKIND_MAP) {
            if (f.num == 1) {
                CORT_TRY(check_elem_type(path, &f));
                t->key_type = (cort_type)f.u;
            } else if (f.num == 2) CORT_TRY(load_inner(L, path, &r, &f, "value_type", &t->inner));
        } else if (f.num == 1) CORT_TRY(load_inner(L, path, &r, &f, "elem_type", &t->inner));
    }
    if (t->inner && t->inner->kind == CORT_VKIND_TENSOR && t->kind != CORT_VKIND_MAP) t->elem_type = t->inner->elem_type;
    return NULL;
}

cort_status *cort_load_type(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_type_ir *out) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    cort_load_type_init(out);
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) return NULL;
        const char *fname, *tname;
        cort_vkind kind;
        switch (f.num) {
        case 1: fname = "tensor_type"; tname = "TypeProto.Tensor"; kind = CORT_VKIND_TENSOR; break;
        case 8: fname = "sparse_tensor_type"; tname = "TypeProto.SparseTensor"; kind = CORT_VKIND_TENSOR; break;
        case 4: fname = "sequence_type"; tname = "TypeProto.Sequence"; kind = CORT_VKIND_SEQUENCE; break;
        case 9: fname = "optional_type"; tname = "TypeProto.Optional"; kind = CORT_VKIND_OPTIONAL; break;
        case 5: fname = "map_type"; tname = "TypeProto.Map"; kind = CORT_VKIND_MAP; break;
        case 7:   /* opaque: not representable, stays unknown */
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            cort_load_type_init(out);
            continue;
        default: continue;
        }
        CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
        cort_pb_path cp;
        if (!cort_pb_path_child(&cp, path, fname, tname, -1)) return cort_pb_depth_error(path, f.off);
        cort_pb m;
        cort_pb_sub(&m, &r, &f);
        cort_load_type_init(out);   /* oneof: the last one set wins */
        out->kind = kind;
        if (kind == CORT_VKIND_TENSOR) CORT_TRY(load_tensor_type(L, &cp, &m, out));
        else CORT_TRY(load_container(L, &cp, &m, out));
    }
}

cort_status *cort_load_value_info(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_value_info_ir *out) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    out->name = "";
    out->doc = "";
    cort_load_type_init(&out->type);
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) return NULL;
        if (f.num == 1) CORT_TRY(cort_load_str(L, path, &f, &out->name, NULL));
        else if (f.num == 3) CORT_TRY(cort_load_str(L, path, &f, &out->doc, NULL));
        else if (f.num == 2) {
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            cort_pb_path tp;
            if (!cort_pb_path_child(&tp, path, "type", "TypeProto", -1)) return cort_pb_depth_error(path, f.off);
            cort_pb m;
            cort_pb_sub(&m, &r, &f);
            CORT_TRY(cort_load_type(L, &tp, &m, &out->type));
        }
    }
}
