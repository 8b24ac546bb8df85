/* TensorProto and SparseTensorProto -> tensor values.
 *
 * raw_data that is naturally aligned within the model blob is used in place (a view retaining the
 * blob); otherwise it is copied once. Typed fields (float_data, int32_data, ...) are converted into
 * an owned tensor in one pass with the loops specialized per element type. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "load.h"
#include "../core/alloc.h"
#include "../core/status.h"
#include "../core/types.h"

enum {
    TP_DIMS = 1, TP_DATA_TYPE = 2, TP_SEGMENT = 3, TP_FLOAT = 4, TP_INT32 = 5, TP_STRING = 6, TP_INT64 = 7,
    TP_NAME = 8, TP_RAW = 9, TP_DOUBLE = 10, TP_UINT64 = 11, TP_DOC = 12, TP_EXTERNAL = 13, TP_LOCATION = 14
};

typedef struct tensor_scan {
    int64_t  dims[CORT_MAX_RANK];
    size_t   rank;
    uint64_t data_type;
    int      has_type, has_raw, external;
    size_t   raw_off, raw_len;
    size_t   n_typed[TP_UINT64 + 1];
    const uint8_t *name; size_t name_len;
} tensor_scan;

/* The typed field that holds elements of type t, and how many values make one element. */
static uint32_t typed_field(cort_type t, size_t *per_elem) {
    *per_elem = 1;
    switch (t) {
    case CORT_TYPE_FLOAT: return TP_FLOAT;
    case CORT_TYPE_COMPLEX64: *per_elem = 2; return TP_FLOAT;
    case CORT_TYPE_DOUBLE: return TP_DOUBLE;
    case CORT_TYPE_COMPLEX128: *per_elem = 2; return TP_DOUBLE;
    case CORT_TYPE_INT64: return TP_INT64;
    case CORT_TYPE_UINT32: case CORT_TYPE_UINT64: return TP_UINT64;
    case CORT_TYPE_STRING: return TP_STRING;
    default: return TP_INT32;   /* int32, int16, int8, uint16, uint8, bool, float16, bfloat16 */
    }
}

static const char *typed_field_name(uint32_t f) {
    switch (f) {
    case TP_FLOAT: return "float_data";
    case TP_INT32: return "int32_data";
    case TP_STRING: return "string_data";
    case TP_INT64: return "int64_data";
    case TP_DOUBLE: return "double_data";
    default: return "uint64_data";
    }
}

static size_t type_align(cort_type t) {
    if (t == CORT_TYPE_COMPLEX64) return 4;
    if (t == CORT_TYPE_COMPLEX128) return 8;
    return cort_type_size(t);
}

static cort_status *scan_tensor(const cort_pb_path *path, const cort_pb *msg, tensor_scan *s) {
    memset(s, 0, sizeof *s);
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) return NULL;
        size_t n;
        switch (f.num) {
        case TP_DIMS: {
            CORT_TRY(cort_pb_scalar_count(&r, path, &f, CORT_PB_VARINT, &n));
            if (n > CORT_MAX_RANK - s->rank)
                return cort_pb_error_code(CORT_ERROR_NOT_IMPLEMENTED, path, f.num, f.off,
                                          "tensor rank %zu exceeds the maximum %d", s->rank + n, CORT_MAX_RANK);
            uint64_t d[CORT_MAX_RANK];
            size_t k = 0;
            CORT_TRY(cort_pb_scalar_u64(&r, path, &f, CORT_PB_VARINT, d, &k, CORT_MAX_RANK));
            for (size_t i = 0; i < k; i++) {
                if ((int64_t)d[i] < 0)
                    return cort_pb_error(path, f.num, f.off, "negative dimension %lld", (long long)(int64_t)d[i]);
                s->dims[s->rank++] = (int64_t)d[i];
            }
            break;
        }
        case TP_DATA_TYPE:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_VARINT));
            s->data_type = f.u;
            s->has_type = 1;
            break;
        case TP_SEGMENT:
            return cort_pb_error_code(CORT_ERROR_NOT_IMPLEMENTED, path, f.num, f.off,
                                      "segmented tensors (TensorProto.segment) are not supported");
        case TP_FLOAT:
            CORT_TRY(cort_pb_scalar_count(&r, path, &f, CORT_PB_I32, &n));
            s->n_typed[f.num] += n;
            break;
        case TP_INT32: case TP_INT64: case TP_UINT64:
            CORT_TRY(cort_pb_scalar_count(&r, path, &f, CORT_PB_VARINT, &n));
            s->n_typed[f.num] += n;
            break;
        case TP_DOUBLE:
            CORT_TRY(cort_pb_scalar_count(&r, path, &f, CORT_PB_I64, &n));
            s->n_typed[f.num] += n;
            break;
        case TP_STRING:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            s->n_typed[f.num]++;
            break;
        case TP_NAME:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            s->name = r.buf + f.data;
            s->name_len = f.len;
            break;
        case TP_RAW:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            s->has_raw = 1;
            s->raw_off = f.data;
            s->raw_len = f.len;
            break;
        case TP_EXTERNAL: case TP_DOC:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            break;
        case TP_LOCATION:
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_VARINT));
            if (f.u > 1) return cort_pb_error(path, f.num, f.off, "invalid data_location %llu", (unsigned long long)f.u);
            s->external = f.u == 1;
            break;
        default: break;   /* unknown fields are skipped */
        }
    }
}

/* Converts the varints of one int32_data/int64_data/uint64_data occurrence into dst (element k on). */
static size_t decode_varints(const uint8_t *buf, size_t pos, size_t end, cort_type t, void *dst, size_t k) {
    uint64_t v;
#define VLOOP(T, EXPR) do { T *d = (T *)dst; \
        while (pos < end) { if (cort_pb_varint(buf, &pos, end, &v)) return k; d[k++] = (T)(EXPR); } } while (0)
    switch (t) {
    case CORT_TYPE_BOOL: VLOOP(uint8_t, v != 0); break;
    case CORT_TYPE_INT8: case CORT_TYPE_UINT8: VLOOP(uint8_t, v); break;
    case CORT_TYPE_FLOAT8E4M3FN: case CORT_TYPE_FLOAT8E4M3FNUZ: case CORT_TYPE_FLOAT8E5M2: case CORT_TYPE_FLOAT8E5M2FNUZ:
    case CORT_TYPE_FLOAT8E8M0: case CORT_TYPE_UINT4: case CORT_TYPE_INT4: case CORT_TYPE_FLOAT4E2M1: case CORT_TYPE_UINT2:
    case CORT_TYPE_INT2: VLOOP(uint8_t, v); break;   /* sub-byte types: one packed byte per value */
    case CORT_TYPE_INT16: case CORT_TYPE_UINT16: case CORT_TYPE_FLOAT16: case CORT_TYPE_BFLOAT16: VLOOP(uint16_t, v); break;
    case CORT_TYPE_INT32: case CORT_TYPE_UINT32: VLOOP(uint32_t, v); break;
    default: VLOOP(uint64_t, v); break;
    }
#undef VLOOP
    return k;
}

/* Second pass: copies the typed field `tf` into t (count values already checked). */
static cort_status *fill_typed(const cort_pb_path *path, const cort_pb *msg, uint32_t tf, cort_value *t) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    size_t k = 0;   /* in values (for complex: 2 per element) */
    uint8_t *dst = t->data;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        if (f.num != tf) continue;
        const uint8_t *src = r.buf + f.data;
        switch (tf) {
        case TP_FLOAT: case TP_DOUBLE: {
            size_t w = tf == TP_FLOAT ? 4 : 8;
            if (f.wire == CORT_PB_LEN) { memcpy(dst + k * w, src, f.len); k += f.len / w; }
            else { memcpy(dst + k * w, &f.u, w); k++; }   /* little-endian: low bytes of u */
            break;
        }
        case TP_STRING:
            CORT_TRY(cort_string_set(t, k, (const char *)src, f.len));
            k++;
            break;
        default:
            if (f.wire == CORT_PB_LEN) k = decode_varints(r.buf, f.data, f.data + f.len, t->type, dst, k);
            else {
                uint8_t one[10];
                size_t n = 0;
                uint64_t v = f.u;
                do { one[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)); v >>= 7; } while (v);
                k = decode_varints(one, 0, n, t->type, dst, k);
            }
            break;
        }
    }
    /* scan_tensor validated every payload, so this only trips on an internal inconsistency */
    size_t want = t->count * (t->type == CORT_TYPE_COMPLEX64 || t->type == CORT_TYPE_COMPLEX128 ? 2 : 1);
    if (cort_type_is_subbyte(t->type)) cort_type_packed_bytes(t->type, t->count, &want);   /* no overflow: count fits */
    if (k != want) return cort_pb_error(path, tf, msg->pos, "decoded %zu values, expected %zu", k, want);
    if (cort_type_is_subbyte(t->type)) cort_type_unpack(t->type, t->data, t->count, t->data);
    return NULL;
}

static cort_status *tensor_error(const cort_pb_path *path, const cort_pb *msg, const tensor_scan *s, uint32_t field,
                                 const char *what) {
    char shape[256];
    cort_shape_str(s->dims, s->rank, shape, sizeof shape);
    return cort_pb_error(path, field, msg->pos, "tensor '%.*s' %s[%s]: %s", (int)(s->name_len > 200 ? 200 : s->name_len),
                         s->name ? (const char *)s->name : "", cort_type_name((cort_type)s->data_type), shape + 1, what);
}

cort_status *cort_load_tensor(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_value **out,
                              const char **name) {
    tensor_scan s;
    char what[256];
    CORT_TRY(scan_tensor(path, msg, &s));
    if (!s.has_type || s.data_type == 0) return tensor_error(path, msg, &s, TP_DATA_TYPE, "data_type is missing");
    if (s.data_type > CORT_TYPE_INT2)
        return cort_pb_error_code(CORT_ERROR_NOT_IMPLEMENTED, path, TP_DATA_TYPE, msg->pos,
                                  "tensor '%.*s': data_type %llu is not supported", (int)(s.name_len > 200 ? 200 : s.name_len),
                                  s.name ? (const char *)s.name : "", (unsigned long long)s.data_type);
    cort_type type = (cort_type)s.data_type;
    size_t esize = cort_type_size(type);
    int ovf;
    size_t count = cort_shape_count(s.dims, s.rank, &ovf);
    if (ovf || count > SIZE_MAX / 16) return tensor_error(path, msg, &s, TP_DIMS, "element count overflows");
    size_t bytes = count * esize;
    /* sub-byte types are packed in the file (ceil(count * bits / 8) bytes) and unpacked in memory */
    int packed = cort_type_is_subbyte(type);
    size_t file_bytes = bytes;
    if (packed) cort_type_packed_bytes(type, count, &file_bytes);   /* cannot overflow: <= bytes */

    const char *nm = NULL;
    if (name && L->arena) {
        nm = cort_arena_strndup(L->arena, s.name ? (const char *)s.name : "", s.name_len);
        if (!nm) return cort_error_oom();
    }

    cort_value *t = NULL;
    cort_status *st = NULL;
    if (s.external) {
        if (type == CORT_TYPE_STRING) return tensor_error(path, msg, &s, TP_LOCATION, "string tensors cannot use external data");
        char tname[128];
        snprintf(tname, sizeof tname, "%.*s", (int)s.name_len, s.name ? (const char *)s.name : "");
        if (packed) {
            cort_value *raw = NULL;
            int64_t nb = (int64_t)file_bytes;
            CORT_TRY(cort_load_external(L, path, msg, tname, CORT_TYPE_UINT8, &nb, 1, file_bytes, &raw));
            st = cort_tensor_alloc(type, s.dims, s.rank, &t);
            if (!st && raw->count && !raw->data) st = cort_value_materialize(raw);
            if (!st) cort_type_unpack(type, raw->data, count, t->data);
            cort_value_release(raw);
            if (st) goto error;
        } else
            CORT_TRY(cort_load_external(L, path, msg, tname, type, s.dims, s.rank, bytes, &t));
    } else if (s.has_raw) {
        if (type == CORT_TYPE_STRING) return tensor_error(path, msg, &s, TP_RAW, "string tensors cannot use raw_data");
        if (s.raw_len != file_bytes) {
            snprintf(what, sizeof what, "raw_data has %zu bytes, the shape needs %zu", s.raw_len, file_bytes);
            return tensor_error(path, msg, &s, TP_RAW, what);
        }
        void *src = (void *)(L->buf + s.raw_off);
        if (packed) {
            CORT_TRY(cort_tensor_alloc(type, s.dims, s.rank, &t));
            cort_type_unpack(type, src, count, t->data);
        } else if (L->blob && bytes && ((uintptr_t)src % type_align(type)) == 0) {
            CORT_TRY(cort_tensor_view(type, s.dims, s.rank, src, L->blob, &t));
        } else if (L->lazy && L->model && L->model->blob_mapped && L->blob && bytes >= CORT_LAZY_MIN_BYTES) {
            /* misaligned in a mapped file: left there until something must read it in place (a
             * weight that kernels only pack is copied by nobody; graph compile decides) */
            CORT_TRY(cort_tensor_view(type, s.dims, s.rank, NULL, L->blob, &t));
            t->lazy_src = src;
        } else {
            /* misaligned raw_data (protobuf places it anywhere): copied once, big ones into huge pages */
            CORT_TRY(cort_tensor_alloc_ex(type, s.dims, s.rank, 1, &t));
            if (bytes) memcpy(t->data, src, bytes);
            /* the copy is the tensor now: the file pages it came from need not stay resident */
            if (L->model) cort_model_drop_pages(L->model, src, bytes);
        }
    } else {
        size_t per;
        uint32_t tf = typed_field(type, &per);
        size_t need = packed ? file_bytes : count * per;
        if (s.n_typed[tf] != need) {
            snprintf(what, sizeof what, "has %zu %s values, the shape needs %zu", s.n_typed[tf], typed_field_name(tf),
                     need);
            return tensor_error(path, msg, &s, tf, what);
        }
        CORT_TRY(cort_tensor_alloc(type, s.dims, s.rank, &t));
        if (count) {
            st = fill_typed(path, msg, tf, t);
            if (st) goto error;
        }
    }
    if (name) *name = nm;
    *out = t;
    return NULL;
error:
    cort_value_release(t);
    return st;
}

/* ---- SparseTensorProto: values [NNZ], indices [NNZ] (linear) or [NNZ, rank], dims ---- */

static int64_t index_at(const cort_value *ix, size_t i) {
    if (ix->type == CORT_TYPE_INT32) return ((const int32_t *)ix->data)[i];
    return ((const int64_t *)ix->data)[i];
}

static cort_status *densify(const cort_pb_path *path, const cort_pb *msg, const cort_value *values,
                            const cort_value *indices, const int64_t *dims, size_t rank, size_t src_len, cort_value **out) {
    char shape[256];
    size_t nnz = values->count;
    cort_shape_str(dims, rank, shape, sizeof shape);
    if (values->rank != 1)
        return cort_pb_error(path, 1, msg->pos, "sparse tensor %s: values must be 1-D, got rank %zu", shape, values->rank);
    int linear;
    if (!indices) {
        if (nnz) return cort_pb_error(path, 2, msg->pos, "sparse tensor %s: %zu values but no indices", shape, nnz);
        linear = 1;
    } else {
        if (indices->type != CORT_TYPE_INT64 && indices->type != CORT_TYPE_INT32)
            return cort_pb_error(path, 2, msg->pos, "sparse tensor %s: indices must be int64, got %s", shape,
                                 cort_type_name(indices->type));
        if (indices->rank == 1 && indices->shape[0] == (int64_t)nnz) linear = 1;
        else if (indices->rank == 2 && indices->shape[0] == (int64_t)nnz && indices->shape[1] == (int64_t)rank) linear = 0;
        else {
            char ishape[256];
            cort_shape_str(indices->shape, indices->rank, ishape, sizeof ishape);
            return cort_pb_error(path, 2, msg->pos, "sparse tensor %s: indices shape %s, expected [%zu] or [%zu,%zu]",
                                 shape, ishape, nnz, nnz, rank);
        }
    }
    /* a few bytes must not densify into gigabytes: allow 64 MB plus 256x the serialized size */
    int ovf;
    size_t dense = cort_shape_count(dims, rank, &ovf), es0 = cort_type_size(values->type);
    size_t limit = ((size_t)64 << 20) + (src_len < (SIZE_MAX >> 9) ? src_len * 256 : SIZE_MAX >> 1);
    if (ovf || dense > limit / es0)
        return cort_pb_error(path, 3, msg->pos, "sparse tensor %s with %zu values densifies to more than %zu bytes", shape,
                             nnz, limit);
    cort_value *d;
    CORT_TRY(cort_tensor_alloc_zero(values->type, dims, rank, &d));
    size_t es = cort_type_size(values->type);
    for (size_t i = 0; i < nnz; i++) {
        int64_t lin = 0;
        if (linear) lin = index_at(indices, i);
        else
            for (size_t j = 0; j < rank; j++) {
                int64_t c = index_at(indices, i * rank + j);
                if (c < 0 || c >= dims[j]) { lin = -1; break; }
                lin = lin * dims[j] + c;
            }
        if (lin < 0 || (uint64_t)lin >= d->count) {
            cort_value_release(d);
            return cort_pb_error(path, 2, msg->pos, "sparse tensor %s: index of value %zu is out of range", shape, i);
        }
        if (values->type == CORT_TYPE_STRING) {
            const char *sv = cort_string_get(values, i);
            cort_status *st = cort_string_set(d, (size_t)lin, sv, strlen(sv));
            if (st) { cort_value_release(d); return st; }
        } else memcpy((uint8_t *)d->data + (size_t)lin * es, (const uint8_t *)values->data + i * es, es);
    }
    *out = d;
    return NULL;
}

cort_status *cort_load_sparse(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_value **out,
                              const char **name) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    cort_pb vmsg = { 0 }, imsg = { 0 };
    int has_v = 0, has_i = 0;
    int64_t dims[CORT_MAX_RANK];
    size_t rank = 0;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        if (f.num == 1 || f.num == 2) {
            CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
            cort_pb_sub(f.num == 1 ? &vmsg : &imsg, &r, &f);
            *(f.num == 1 ? &has_v : &has_i) = 1;
        } else if (f.num == 3) {
            size_t n;
            CORT_TRY(cort_pb_scalar_count(&r, path, &f, CORT_PB_VARINT, &n));
            if (n > CORT_MAX_RANK - rank)
                return cort_pb_error_code(CORT_ERROR_NOT_IMPLEMENTED, path, f.num, f.off,
                                          "sparse tensor rank exceeds the maximum %d", CORT_MAX_RANK);
            uint64_t d[CORT_MAX_RANK];
            size_t k = 0;
            CORT_TRY(cort_pb_scalar_u64(&r, path, &f, CORT_PB_VARINT, d, &k, CORT_MAX_RANK));
            for (size_t i = 0; i < k; i++) {
                if ((int64_t)d[i] < 0) return cort_pb_error(path, f.num, f.off, "negative dimension");
                dims[rank++] = (int64_t)d[i];
            }
        }
    }
    if (!has_v) return cort_pb_error(path, 1, msg->pos, "sparse tensor has no values");
    cort_pb_path vp, ip;
    if (!cort_pb_path_child(&vp, path, "values", "TensorProto", -1)) return cort_pb_depth_error(path, vmsg.pos);
    if (!cort_pb_path_child(&ip, path, "indices", "TensorProto", -1)) return cort_pb_depth_error(path, imsg.pos);
    /* values/indices are temporaries: never views (they die here) */
    cort_load tmp = *L;
    tmp.blob = NULL;
    cort_value *values = NULL, *indices = NULL, *dense = NULL;
    cort_status *st = cort_load_tensor(&tmp, &vp, &vmsg, &values, name);
    if (!st && has_i) st = cort_load_tensor(&tmp, &ip, &imsg, &indices, NULL);
    if (!st) st = densify(path, msg, values, indices, dims, rank, L->len, &dense);
    cort_value_release(values);
    cort_value_release(indices);
    if (st) return st;
    *out = dense;
    return NULL;
}
