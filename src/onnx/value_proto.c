/* Standalone values (e.g. backend-test input_0.pb): TensorProto, SequenceProto, OptionalProto and
 * MapProto, parsed into values and serialized back.
 *
 * Guessing the kind (kind_hint 0) is a heuristic: a SequenceProto holding one tensor and an
 * OptionalProto holding one tensor are byte-identical, so callers that know the declared type
 * (the model's graph input/output) should pass it. Candidates are tried in the order the
 * heuristic suggests; the first one that parses wins.
 *
 * Map values: MapProto stores them as a SequenceProto. If every item is a scalar tensor of one
 * type they become a 1-D tensor (the runtime's form, e.g. ZipMap); otherwise the sequence is kept.
 * Serialization does the reverse, so both forms round-trip. */
#include <string.h>
#include "load.h"
#include "../core/alloc.h"
#include "../core/status.h"
#include "../core/types.h"

/* SequenceProto / OptionalProto DataType */
enum { ELEM_UNDEFINED = 0, ELEM_TENSOR = 1, ELEM_SPARSE = 2, ELEM_SEQUENCE = 3, ELEM_MAP = 4, ELEM_OPTIONAL = 5 };

static cort_status *parse_kind(cort_load *L, const cort_pb_path *path, const cort_pb *msg, int kind, cort_value **out);

static const char *kind_msg_name(int kind) {
    switch (kind) {
    case CORT_VKIND_SEQUENCE: return "SequenceProto";
    case CORT_VKIND_OPTIONAL: return "OptionalProto";
    case CORT_VKIND_MAP: return "MapProto";
    default: return "TensorProto";
    }
}

/* Field 3..7 of Sequence/Optional -> the item parser's kind (sparse tensors are densified). */
static cort_status *parse_item(cort_load *L, const cort_pb_path *path, const cort_pb *parent, const cort_pb_field *f,
                               long index, cort_value **out) {
    static const char *const seq_names[] = { "tensor_values", "sparse_tensor_values", "sequence_values", "map_values",
                                             "optional_values" };
    static const char *const opt_names[] = { "tensor_value", "sparse_tensor_value", "sequence_value", "map_value",
                                             "optional_value" };
    static const int kinds[] = { CORT_VKIND_TENSOR, 0, CORT_VKIND_SEQUENCE, CORT_VKIND_MAP, CORT_VKIND_OPTIONAL };
    CORT_TRY(cort_pb_expect(path, f, CORT_PB_LEN));
    unsigned k = f->num - 3;
    cort_pb_path ip;
    const char *type = k == 1 ? "SparseTensorProto" : kind_msg_name(kinds[k]);
    if (!cort_pb_path_child(&ip, path, index >= 0 ? seq_names[k] : opt_names[k], type, index))
        return cort_pb_depth_error(path, f->off);
    cort_pb m;
    cort_pb_sub(&m, parent, f);
    if (k == 1) return cort_load_sparse(L, &ip, &m, out, NULL);
    return parse_kind(L, &ip, &m, kinds[k], out);
}

static cort_status *parse_sequence(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_value **out) {
    cort_value *seq;
    CORT_TRY(cort_sequence_new(CORT_TYPE_UNDEFINED, &seq));
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    cort_status *st;
    for (;;) {
        if ((st = cort_pb_next(&r, path, &f, &got))) goto error;
        if (!got) break;
        if (f.num == 1) st = cort_pb_expect(path, &f, CORT_PB_LEN);
        else if (f.num == 2) {
            st = cort_pb_expect(path, &f, CORT_PB_VARINT);
            if (!st && f.u > ELEM_OPTIONAL) st = cort_pb_error(path, f.num, f.off, "invalid elem_type %llu", (unsigned long long)f.u);
        } else if (f.num >= 3 && f.num <= 7) {
            cort_value *item;
            st = parse_item(L, path, &r, &f, (long)seq->n_items, &item);
            if (!st) {
                st = cort_sequence_push(seq, item);
                cort_value_release(item);
            }
        }
        if (st) goto error;
    }
    *out = seq;
    return NULL;
error:
    cort_value_release(seq);
    return st;
}

static cort_status *parse_optional(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_value **out) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    cort_status *st = NULL;
    cort_value *item = NULL;
    uint64_t elem = ELEM_UNDEFINED;
    for (;;) {
        if ((st = cort_pb_next(&r, path, &f, &got))) goto error;
        if (!got) break;
        if (f.num == 1) st = cort_pb_expect(path, &f, CORT_PB_LEN);
        else if (f.num == 2) {
            st = cort_pb_expect(path, &f, CORT_PB_VARINT);
            if (!st && f.u > ELEM_OPTIONAL) st = cort_pb_error(path, f.num, f.off, "invalid elem_type %llu", (unsigned long long)f.u);
            elem = f.u;
        } else if (f.num >= 3 && f.num <= 7) {
            cort_value *v;
            st = parse_item(L, path, &r, &f, -1, &v);
            if (!st) { cort_value_release(item); item = v; }   /* last one wins */
        }
        if (st) goto error;
    }
    cort_vkind kind = elem == ELEM_TENSOR || elem == ELEM_SPARSE ? CORT_VKIND_TENSOR
                    : elem == ELEM_SEQUENCE ? CORT_VKIND_SEQUENCE
                    : elem == ELEM_MAP ? CORT_VKIND_MAP
                    : elem == ELEM_OPTIONAL ? CORT_VKIND_OPTIONAL : CORT_VKIND_UNKNOWN;
    st = cort_optional_new(item, kind, CORT_TYPE_UNDEFINED, out);
error:
    cort_value_release(item);
    return st;
}

static int valid_key_type(uint64_t t) {
    return (t >= CORT_TYPE_UINT8 && t <= CORT_TYPE_STRING) || t == CORT_TYPE_UINT32 || t == CORT_TYPE_UINT64;
}

/* A sequence of scalar tensors of one type -> a 1-D tensor; NULL result if not applicable. */
static cort_status *values_as_tensor(const cort_value *seq, cort_value **out) {
    *out = NULL;
    if (!seq->n_items) return NULL;
    cort_type t = CORT_TYPE_UNDEFINED;
    for (size_t i = 0; i < seq->n_items; i++) {
        const cort_value *it = seq->items[i];
        if (it->kind != CORT_VKIND_TENSOR || it->rank != 0 || (i && it->type != t)) return NULL;
        t = it->type;
    }
    int64_t n = (int64_t)seq->n_items;
    cort_value *v;
    CORT_TRY(cort_tensor_alloc(t, &n, 1, &v));
    size_t es = cort_type_size(t);
    for (size_t i = 0; i < seq->n_items; i++) {
        if (t == CORT_TYPE_STRING) {
            const char *s = cort_string_get(seq->items[i], 0);
            cort_status *st = cort_string_set(v, i, s, strlen(s));
            if (st) { cort_value_release(v); return st; }
        } else memcpy((uint8_t *)v->data + i * es, seq->items[i]->data, es);
    }
    *out = v;
    return NULL;
}

static cort_status *parse_map(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_value **out) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    uint64_t key_type = 0;
    size_t n_int = 0, n_str = 0;
    cort_pb vmsg = { 0 };
    int has_values = 0;
    /* pass 1: key type and counts */
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        size_t n;
        switch (f.num) {
        case 1: CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN)); break;
        case 2: CORT_TRY(cort_pb_expect(path, &f, CORT_PB_VARINT)); key_type = f.u; break;
        case 3: CORT_TRY(cort_pb_scalar_count(&r, path, &f, CORT_PB_VARINT, &n)); n_int += n; break;
        case 4: CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN)); n_str++; break;
        case 5: CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN)); cort_pb_sub(&vmsg, &r, &f); has_values = 1; break;
        default: break;
        }
    }
    if (!valid_key_type(key_type))
        return cort_pb_error(path, 2, msg->pos, "invalid map key_type %llu", (unsigned long long)key_type);
    int is_str = key_type == CORT_TYPE_STRING;
    size_t nkeys = is_str ? n_str : n_int;
    if ((is_str && n_int) || (!is_str && n_str))
        return cort_pb_error(path, is_str ? 3 : 4, msg->pos, "map keys do not match key_type %s",
                             cort_type_name((cort_type)key_type));
    cort_value *keys = NULL, *seq = NULL, *vals = NULL, *map = NULL;
    cort_status *st;
    int64_t dim = (int64_t)nkeys;
    if ((st = cort_tensor_alloc((cort_type)key_type, &dim, 1, &keys))) return st;
    r = *msg;
    size_t k = 0;
    while (k < nkeys) {
        if ((st = cort_pb_next(&r, path, &f, &got))) goto done;
        if (!got) break;
        if (is_str && f.num == 4) {
            if ((st = cort_string_set(keys, k, (const char *)r.buf + f.data, f.len))) goto done;
            k++;
        } else if (!is_str && f.num == 3) {
            if (f.wire != CORT_PB_LEN) { cort_store_i64(keys->data, keys->type, k++, (int64_t)f.u); continue; }
            size_t pos = f.data, end = f.data + f.len;
            while (pos < end && k < nkeys) {
                uint64_t x;
                if (cort_pb_varint(r.buf, &pos, end, &x)) {
                    st = cort_pb_error(path, f.num, f.off, "malformed packed varint");
                    goto done;
                }
                cort_store_i64(keys->data, keys->type, k++, (int64_t)x);
            }
        }
    }
    if (has_values) {
        cort_pb_path vp;
        if (!cort_pb_path_child(&vp, path, "values", "SequenceProto", -1)) { st = cort_pb_depth_error(path, vmsg.pos); goto done; }
        if ((st = parse_sequence(L, &vp, &vmsg, &seq))) goto done;
    } else if ((st = cort_sequence_new(CORT_TYPE_UNDEFINED, &seq))) goto done;
    if (seq->n_items != nkeys) {
        st = cort_pb_error(path, 5, msg->pos, "map has %zu keys but %zu values", nkeys, seq->n_items);
        goto done;
    }
    if ((st = values_as_tensor(seq, &vals))) goto done;
    st = cort_map_create(keys, vals ? vals : seq, &map);
    if (!st) *out = map;
done:
    cort_value_release(keys);
    cort_value_release(seq);
    cort_value_release(vals);
    return st;
}

static cort_status *parse_kind(cort_load *L, const cort_pb_path *path, const cort_pb *msg, int kind, cort_value **out) {
    switch (kind) {
    case CORT_VKIND_SEQUENCE: return parse_sequence(L, path, msg, out);
    case CORT_VKIND_OPTIONAL: return parse_optional(L, path, msg, out);
    case CORT_VKIND_MAP: return parse_map(L, path, msg, out);
    default: return cort_load_tensor(L, path, msg, out, NULL);
    }
}

/* Orders the candidate kinds by what the top-level fields suggest (see the file comment). */
static size_t guess_order(const uint8_t *buf, size_t len, int order[4]) {
    cort_pb r;
    cort_pb_init(&r, buf, 0, len);
    cort_pb_path root = { NULL, NULL, "?", -1, 0 };
    size_t cnt[8] = { 0 };
    uint64_t v = 0;
    int tensor_only = 0;
    for (;;) {
        cort_pb_field f;
        int got;
        cort_status *st = cort_pb_next(&r, &root, &f, &got);
        if (st) { cort_status_free(st); tensor_only = 1; break; }
        if (!got) break;
        if (f.num >= 8 || (f.num == 1 && f.wire != CORT_PB_LEN) || (f.num == 2 && f.wire != CORT_PB_VARINT)) {
            tensor_only = 1;
            break;
        }
        cnt[f.num]++;
        if (f.num == 2) v = f.u;
    }
    const int T = CORT_VKIND_TENSOR, S = CORT_VKIND_SEQUENCE, O = CORT_VKIND_OPTIONAL, M = CORT_VKIND_MAP;
    int data_fields = 0;
    for (int k = 3; k <= 7; k++) data_fields += cnt[k] != 0;
    const int *pick;
    static const int t_only[] = { CORT_VKIND_TENSOR };
    static const int tsom[] = { CORT_VKIND_TENSOR, CORT_VKIND_SEQUENCE, CORT_VKIND_OPTIONAL, CORT_VKIND_MAP };
    int tmp[4];
    if (tensor_only) { pick = t_only; memcpy(order, pick, sizeof(int)); return 1; }
    if (v >= ELEM_TENSOR && v <= ELEM_OPTIONAL && data_fields <= 1 && (data_fields == 0 || cnt[v + 2])) {
        size_t n = cnt[v + 2];
        int seq_first = n > 1 || v == ELEM_TENSOR;
        tmp[0] = seq_first ? S : O; tmp[1] = seq_first ? O : S; tmp[2] = T; tmp[3] = M;
        pick = tmp;
    } else if (v == 0 && data_fields == 0) {
        tmp[0] = O; tmp[1] = S; tmp[2] = T; tmp[3] = M;
        pick = tmp;
    } else if (valid_key_type(v) && !cnt[6] && !cnt[7] && cnt[5] <= 1 && (cnt[3] || cnt[4])) {
        tmp[0] = M; tmp[1] = T; tmp[2] = S; tmp[3] = O;
        pick = tmp;
    } else pick = tsom;
    memcpy(order, pick, 4 * sizeof(int));
    return 4;
}

cort_status *cort_value_parse(const void *bytes, size_t len, int kind_hint, cort_value **out) {
    if (!out || (!bytes && len)) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "value bytes are NULL");
    if (kind_hint < 0 || kind_hint > CORT_VKIND_MAP)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "invalid kind_hint %d", kind_hint);
    cort_load L = { (const uint8_t *)bytes, NULL, NULL, NULL, NULL, len };
    cort_pb msg;
    cort_pb_init(&msg, L.buf, 0, len);
    int order[4];
    size_t n = 1;
    if (kind_hint) order[0] = kind_hint;
    else n = guess_order(L.buf, len, order);
    cort_status *first = NULL;
    for (size_t i = 0; i < n; i++) {
        cort_pb_path root = { NULL, NULL, kind_msg_name(order[i]), -1, 0 };
        cort_value *v;
        cort_status *st = parse_kind(&L, &root, &msg, order[i], &v);
        if (!st) {
            cort_status_free(first);
            *out = v;
            return NULL;
        }
        if (!first || st->code == CORT_ERROR_OUT_OF_MEMORY) {
            cort_status_free(first);
            first = st;
            if (st->code == CORT_ERROR_OUT_OF_MEMORY) break;
        } else cort_status_free(st);
    }
    return first;
}

/* ---- serialization: sizes first, so every nested message is written once, in place ---- */

static size_t len_field_size(uint32_t field, size_t n) { return cort_pb_varint_size((uint64_t)field << 3) + cort_pb_varint_size(n) + n; }

/* Bytes of t's raw_data: sub-byte types are packed in a TensorProto. */
static size_t packed_size(const cort_value *t) {
    size_t n = t->bytes;
    if (cort_type_is_subbyte(t->type)) cort_type_packed_bytes(t->type, t->count, &n);
    return n;
}

static size_t tensor_size(const cort_value *t, const char *name) {
    size_t s = 0;
    for (size_t i = 0; i < t->rank; i++) s += 1 + cort_pb_varint_size((uint64_t)t->shape[i]);
    s += 1 + cort_pb_varint_size((uint64_t)t->type);
    if (name) s += len_field_size(8, strlen(name));
    if (t->type == CORT_TYPE_STRING)
        for (size_t i = 0; i < t->count; i++) s += len_field_size(6, strlen(cort_string_get(t, i)));
    else if (t->bytes) s += len_field_size(9, packed_size(t));
    return s;
}

static void write_tensor(cort_pb_writer *w, const cort_value *t, const char *name) {
    for (size_t i = 0; i < t->rank; i++) { cort_pbw_tag(w, 1, CORT_PB_VARINT); cort_pbw_varint(w, (uint64_t)t->shape[i]); }
    cort_pbw_tag(w, 2, CORT_PB_VARINT);
    cort_pbw_varint(w, (uint64_t)t->type);
    if (name) cort_pbw_len_field(w, 8, name, strlen(name));
    if (t->type == CORT_TYPE_STRING)
        for (size_t i = 0; i < t->count; i++) {
            const char *s = cort_string_get(t, i);
            cort_pbw_len_field(w, 6, s, strlen(s));
        }
    else if (t->bytes && cort_type_is_subbyte(t->type)) {
        cort_pbw_tag(w, 9, CORT_PB_LEN);
        cort_pbw_varint(w, packed_size(t));
        const uint8_t *e = t->data;
        for (size_t i = 0; i < t->count; i += 64) {   /* packed through a small buffer: no allocation */
            uint8_t buf[64];
            size_t n = t->count - i < 64 ? t->count - i : 64, nb;
            cort_type_packed_bytes(t->type, n, &nb);
            cort_type_pack(t->type, e + i, n, buf);
            cort_pbw_bytes(w, buf, nb);
        }
    } else if (t->bytes) cort_pbw_len_field(w, 9, t->data, t->bytes);
}

static size_t value_size(const cort_value *v, const char *name);
static void write_value(cort_pb_writer *w, const cort_value *v, const char *name);

/* Field number of an item inside Sequence/Optional, and its DataType. */
static uint32_t item_field(const cort_value *v) {
    switch (v->kind) {
    case CORT_VKIND_SEQUENCE: return 5;
    case CORT_VKIND_MAP: return 6;
    case CORT_VKIND_OPTIONAL: return 7;
    default: return 3;
    }
}
static uint64_t kind_elem(cort_vkind k) {
    switch (k) {
    case CORT_VKIND_TENSOR: return ELEM_TENSOR;
    case CORT_VKIND_SEQUENCE: return ELEM_SEQUENCE;
    case CORT_VKIND_MAP: return ELEM_MAP;
    case CORT_VKIND_OPTIONAL: return ELEM_OPTIONAL;
    default: return ELEM_UNDEFINED;
    }
}
static uint64_t seq_elem(const cort_value *s) { return s->n_items ? kind_elem(s->items[0]->kind) : ELEM_TENSOR; }

/* Map values as a sequence: a 1-D tensor is split into scalar tensors on the fly. */
static size_t map_value_item_size(const cort_value *vals, size_t i) {
    if (vals->kind == CORT_VKIND_SEQUENCE) return value_size(vals->items[i], NULL);
    size_t s = 1 + cort_pb_varint_size((uint64_t)vals->type);   /* data_type; a scalar has no dims */
    if (vals->type == CORT_TYPE_STRING) s += len_field_size(6, strlen(cort_string_get(vals, i)));
    else s += len_field_size(9, cort_type_size(vals->type));
    return s;
}
static size_t map_values_count(const cort_value *vals) {
    return vals->kind == CORT_VKIND_SEQUENCE ? vals->n_items : vals->kind == CORT_VKIND_TENSOR ? vals->count : 0;
}
static size_t map_values_size(const cort_value *vals) {
    size_t s = 2;   /* elem_type */
    for (size_t i = 0; i < map_values_count(vals); i++) s += len_field_size(item_field(vals->kind == CORT_VKIND_SEQUENCE ? vals->items[i] : vals), map_value_item_size(vals, i));
    return s;
}
static size_t map_keys_payload(const cort_value *keys) {
    size_t s = 0;
    for (size_t i = 0; i < keys->count; i++) s += cort_pb_varint_size((uint64_t)cort_load_i64(keys->data, keys->type, i));
    return s;
}

static size_t value_size(const cort_value *v, const char *name) {
    size_t s = name ? len_field_size(1, strlen(name)) : 0;
    switch (v->kind) {
    case CORT_VKIND_TENSOR: return tensor_size(v, name);
    case CORT_VKIND_SEQUENCE:
        s += 1 + cort_pb_varint_size(seq_elem(v));
        for (size_t i = 0; i < v->n_items; i++) s += len_field_size(item_field(v->items[i]), value_size(v->items[i], NULL));
        return s;
    case CORT_VKIND_OPTIONAL:
        s += 1 + cort_pb_varint_size(v->elem ? kind_elem(v->elem->kind) : kind_elem(v->opt_kind));
        if (v->elem) s += len_field_size(item_field(v->elem), value_size(v->elem, NULL));
        return s;
    case CORT_VKIND_MAP: {
        const cort_value *k = v->map_keys;
        s += 1 + cort_pb_varint_size((uint64_t)k->type);
        if (k->type == CORT_TYPE_STRING)
            for (size_t i = 0; i < k->count; i++) s += len_field_size(4, strlen(cort_string_get(k, i)));
        else if (k->count) s += len_field_size(3, map_keys_payload(k));
        return s + len_field_size(5, map_values_size(v->map_values));
    }
    default: return s;
    }
}

static void write_value(cort_pb_writer *w, const cort_value *v, const char *name) {
    if (v->kind == CORT_VKIND_TENSOR) { write_tensor(w, v, name); return; }
    if (name) cort_pbw_len_field(w, 1, name, strlen(name));
    switch (v->kind) {
    case CORT_VKIND_SEQUENCE:
        cort_pbw_tag(w, 2, CORT_PB_VARINT);
        cort_pbw_varint(w, seq_elem(v));
        for (size_t i = 0; i < v->n_items; i++) {
            cort_pbw_tag(w, item_field(v->items[i]), CORT_PB_LEN);
            cort_pbw_varint(w, value_size(v->items[i], NULL));
            write_value(w, v->items[i], NULL);
        }
        break;
    case CORT_VKIND_OPTIONAL:
        cort_pbw_tag(w, 2, CORT_PB_VARINT);
        cort_pbw_varint(w, v->elem ? kind_elem(v->elem->kind) : kind_elem(v->opt_kind));
        if (v->elem) {
            cort_pbw_tag(w, item_field(v->elem), CORT_PB_LEN);
            cort_pbw_varint(w, value_size(v->elem, NULL));
            write_value(w, v->elem, NULL);
        }
        break;
    case CORT_VKIND_MAP: {
        const cort_value *k = v->map_keys, *vals = v->map_values;
        cort_pbw_tag(w, 2, CORT_PB_VARINT);
        cort_pbw_varint(w, (uint64_t)k->type);
        if (k->type == CORT_TYPE_STRING)
            for (size_t i = 0; i < k->count; i++) {
                const char *s = cort_string_get(k, i);
                cort_pbw_len_field(w, 4, s, strlen(s));
            }
        else if (k->count) {
            cort_pbw_tag(w, 3, CORT_PB_LEN);
            cort_pbw_varint(w, map_keys_payload(k));
            for (size_t i = 0; i < k->count; i++) cort_pbw_varint(w, (uint64_t)cort_load_i64(k->data, k->type, i));
        }
        cort_pbw_tag(w, 5, CORT_PB_LEN);
        cort_pbw_varint(w, map_values_size(vals));
        cort_pbw_tag(w, 2, CORT_PB_VARINT);
        cort_pbw_varint(w, vals->kind == CORT_VKIND_SEQUENCE ? seq_elem(vals) : ELEM_TENSOR);
        for (size_t i = 0; i < map_values_count(vals); i++) {
            if (vals->kind == CORT_VKIND_SEQUENCE) {
                cort_pbw_tag(w, item_field(vals->items[i]), CORT_PB_LEN);
                cort_pbw_varint(w, value_size(vals->items[i], NULL));
                write_value(w, vals->items[i], NULL);
                continue;
            }
            cort_pbw_tag(w, 3, CORT_PB_LEN);
            cort_pbw_varint(w, map_value_item_size(vals, i));
            cort_pbw_tag(w, 2, CORT_PB_VARINT);
            cort_pbw_varint(w, (uint64_t)vals->type);
            if (vals->type == CORT_TYPE_STRING) {
                const char *s = cort_string_get(vals, i);
                cort_pbw_len_field(w, 6, s, strlen(s));
            } else {
                size_t es = cort_type_size(vals->type);
                cort_pbw_len_field(w, 9, (const uint8_t *)vals->data + i * es, es);
            }
        }
        break;
    }
    default: break;
    }
}

/* Rejects shapes the writer cannot express (checked up front so writing cannot fail midway). */
static cort_status *check_serializable(const cort_value *v, int depth) {
    if (!v) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "serialize: NULL value");
    if (depth > CORT_PB_MAX_DEPTH) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "serialize: value nested too deeply");
    switch (v->kind) {
    case CORT_VKIND_TENSOR:
        if (!cort_type_size(v->type))
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "serialize: tensor has unsupported type %d", (int)v->type);
        if (v->bytes && !v->data) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "serialize: tensor has no data");
        return NULL;
    case CORT_VKIND_SEQUENCE:
        for (size_t i = 0; i < v->n_items; i++) CORT_TRY(check_serializable(v->items[i], depth + 1));
        return NULL;
    case CORT_VKIND_OPTIONAL: return v->elem ? check_serializable(v->elem, depth + 1) : NULL;
    case CORT_VKIND_MAP:
        if (!v->map_keys || !v->map_values || v->map_keys->kind != CORT_VKIND_TENSOR || !valid_key_type(v->map_keys->type))
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "serialize: map keys must be an integer or string tensor");
        CORT_TRY(check_serializable(v->map_keys, depth + 1));
        if (v->map_values->kind != CORT_VKIND_SEQUENCE && v->map_values->kind != CORT_VKIND_TENSOR)
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "serialize: map values must be a tensor or a sequence");
        CORT_TRY(check_serializable(v->map_values, depth + 1));
        if (map_values_count(v->map_values) != v->map_keys->count)
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "serialize: map has %zu keys but %zu values", v->map_keys->count,
                              map_values_count(v->map_values));
        return NULL;
    default: return cort_error(CORT_ERROR_INVALID_ARGUMENT, "serialize: value of unknown kind %d", (int)v->kind);
    }
}

cort_status *cort_value_serialize(const cort_value *v, const char *name, void **out, size_t *out_len) {
    if (!out || !out_len) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "serialize: out is NULL");
    CORT_TRY(check_serializable(v, 0));
    size_t n = value_size(v, name);
    cort_pb_writer w = { NULL, 0, 0, 0 };
    if (n > SIZE_MAX - 16) return cort_error_oom();
    w.buf = cort_malloc(n + 16);   /* slack: the varint writer reserves 10 bytes at a time */
    if (!w.buf) return cort_error_oom();
    w.cap = n + 16;
    write_value(&w, v, name);
    if (w.oom || w.len != n) {
        int oom = w.oom;
        cort_free(w.buf);
        return oom ? cort_error_oom() : cort_error(CORT_ERROR_RUNTIME, "serialize: wrote %zu bytes, expected %zu", w.len, n);
    }
    *out = w.buf;
    *out_len = n;
    return NULL;
}
