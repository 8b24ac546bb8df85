/* Value files (.npy / .pb), random inputs and value summaries for run/bench/demo. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "valueio.h"
#include "compare.h"
#include "npy.h"
#include "core/alloc.h"
#include "core/status.h"
#include "core/types.h"
#include "onnx/onnx.h"

cort_status *cli_load_value(const char *path, int kind_hint, cort_value **out) {
    if (cli_has_suffix(path, ".npy")) return npy_load(path, out);
    void *bytes = NULL;
    size_t len = 0;
    CORT_TRY(cli_read_file(path, &bytes, &len));
    cort_status *st = cort_value_parse(bytes, len, kind_hint, out);
    cort_free(bytes);
    if (st) st = cort_error_wrap(st, "%s: ", path);
    return st;
}

cort_status *cli_retype_input(cort_value **v, const cort_value_type *declared) {
    if (declared->kind != 1 || cort_value_kind(*v) != 1) return NULL;
    cort_type want = declared->elem_type, have = cort_tensor_type(*v);
    /* ONNX 1.12's data keeps bfloat16 as uint16 TensorProtos with the same bits (test_cast_FLOAT_to_BFLOAT16);
     * .npy has no dtype for the types added after ONNX 1.12, which cort writes as their one-byte
     * in-memory form (uint8 bit patterns, int8/uint8 values of the sub-byte integers) */
    int bf16 = want == CORT_TYPE_BFLOAT16 && have == CORT_TYPE_UINT16;
    int small = (cort_type_is_small_float(want) || cort_type_is_small_int(want)) &&
                (have == CORT_TYPE_UINT8 || have == CORT_TYPE_INT8);
    if (!bf16 && !small) return NULL;
    cort_value *t = NULL;
    CORT_TRY(cort_tensor_create(want, cort_tensor_shape(*v), cort_tensor_rank(*v), &t));
    size_t n = cort_tensor_element_count(t);
    const uint8_t *src = cort_tensor_data(*v);
    uint8_t *dst = cort_tensor_data(t);
    if (cort_type_is_small_int(want)) for (size_t i = 0; i < n; i++) cort_store_i64(dst, want, i, cort_load_i64(src, have, i));
    else if (want == CORT_TYPE_FLOAT4E2M1) for (size_t i = 0; i < n; i++) dst[i] = src[i] & 0xf;
    else if (cort_tensor_bytes(t)) memcpy(dst, src, cort_tensor_bytes(t));
    cort_value_release(*v);
    *v = t;
    return NULL;
}

cort_status *cli_save_value(const char *path, const cort_value *v, const char *name) {
    if (cli_has_suffix(path, ".npy")) {
        cort_status *st = npy_save(path, v);
        if (st) st = cort_error_wrap(st, "%s: ", path);
        return st;
    }
    void *bytes = NULL;
    size_t len = 0;
    CORT_TRY(cort_value_serialize(v, name, &bytes, &len));
    cort_status *st = cli_write_file(path, bytes, len);
    cort_free(bytes);
    return st;
}

/* ---- printing ---- */

static void print_element(FILE *f, const void *data, cort_type t, size_t i) {
    switch (t) {
    case CORT_TYPE_FLOAT: fprintf(f, "%.6g", ((const float *)data)[i]); break;
    case CORT_TYPE_DOUBLE: fprintf(f, "%.6g", ((const double *)data)[i]); break;
    case CORT_TYPE_FLOAT16: fprintf(f, "%.6g", cort_f16_to_f32(((const uint16_t *)data)[i])); break;
    case CORT_TYPE_BFLOAT16: fprintf(f, "%.6g", cort_bf16_to_f32(((const uint16_t *)data)[i])); break;
    case CORT_TYPE_INT8: fprintf(f, "%d", ((const int8_t *)data)[i]); break;
    case CORT_TYPE_INT16: fprintf(f, "%d", ((const int16_t *)data)[i]); break;
    case CORT_TYPE_INT32: fprintf(f, "%" PRId32, ((const int32_t *)data)[i]); break;
    case CORT_TYPE_INT64: fprintf(f, "%" PRId64, ((const int64_t *)data)[i]); break;
    case CORT_TYPE_UINT8: fprintf(f, "%u", ((const uint8_t *)data)[i]); break;
    case CORT_TYPE_UINT16: fprintf(f, "%u", ((const uint16_t *)data)[i]); break;
    case CORT_TYPE_UINT32: fprintf(f, "%" PRIu32, ((const uint32_t *)data)[i]); break;
    case CORT_TYPE_UINT64: fprintf(f, "%" PRIu64, ((const uint64_t *)data)[i]); break;
    case CORT_TYPE_BOOL: fprintf(f, "%s", ((const uint8_t *)data)[i] ? "true" : "false"); break;
    case CORT_TYPE_STRING: {
        const char *s = ((const char *const *)data)[i];
        fprintf(f, "\"%.32s%s\"", s ? s : "", s && strlen(s) > 32 ? "..." : "");
        break;
    }
    case CORT_TYPE_COMPLEX64:
        fprintf(f, "%.6g%+.6gi", ((const float *)data)[2 * i], ((const float *)data)[2 * i + 1]);
        break;
    case CORT_TYPE_COMPLEX128:
        fprintf(f, "%.6g%+.6gi", ((const double *)data)[2 * i], ((const double *)data)[2 * i + 1]);
        break;
    default:
        if (cort_type_is_small_float(t)) fprintf(f, "%.6g", cort_load_f64(data, t, i));
        else if (cort_type_is_small_int(t)) fprintf(f, "%" PRId64, cort_load_i64(data, t, i));
        else fputc('?', f);
    }
}

static void print_value_body(FILE *f, const cort_value *v, size_t max_values, int depth) {
    char desc[512];
    cli_describe_value(v, desc, sizeof desc);
    switch (cort_value_kind(v)) {
    case 1: {
        size_t count = cort_tensor_element_count(v);
        const void *data = cort_tensor_data(v);
        fprintf(f, "%s = [", desc);
        for (size_t i = 0; i < count && i < max_values && data; i++) {
            if (i) fputs(", ", f);
            print_element(f, data, cort_tensor_type(v), i);
        }
        fprintf(f, "%s]", count > max_values ? ", ..." : "");
        break;
    }
    case 2: {
        size_t n = cort_sequence_length(v);
        fprintf(f, "%s", desc);
        for (size_t i = 0; i < n && i < 4 && depth < 4; i++) {
            fprintf(f, "\n%*s[%zu] ", 2 * (depth + 2), "", i);
            print_value_body(f, cort_sequence_at(v, i), max_values, depth + 1);
        }
        if (n > 4) fprintf(f, "\n%*s...", 2 * (depth + 2), "");
        break;
    }
    case 3: {
        const cort_value *c = cort_optional_value(v);
        if (!c) { fputs("optional(empty)", f); break; }
        fputs("optional: ", f);
        print_value_body(f, c, max_values, depth);
        break;
    }
    case 4:
        fputs("map keys: ", f);
        print_value_body(f, cort_map_keys(v), max_values, depth);
        fprintf(f, "\n%*svalues: ", 2 * (depth + 1), "");
        print_value_body(f, cort_map_values(v), max_values, depth + 1);
        break;
    default:
        fputs("(none)", f);
    }
}

void cli_print_value(FILE *f, const char *name, const cort_value *v, size_t max_values) {
    fprintf(f, "%s: ", name);
    print_value_body(f, v, max_values, 0);
    fputc('\n', f);
}

/* ---- random values ---- */

void cli_rng_seed(cli_rng *r, uint64_t seed) { r->state = seed; }

uint64_t cli_rng_next(cli_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(cli_rng *r) {   /* [-1, 1) */
    return (double)(cli_rng_next(r) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

cort_status *cli_random_tensor(cort_type type, const int64_t *dims, size_t rank, cli_rng *r, cort_value **out) {
    cort_value *t = NULL;
    cort_status *st = cort_tensor_create(type, dims, rank, &t);
    if (st) return st;
    size_t n = cort_tensor_element_count(t);
    void *d = cort_tensor_data(t);
    for (size_t i = 0; i < n; i++) {
        uint64_t small = cli_rng_next(r) & 3;   /* small ints stay valid as indices/axes for most ops */
        switch (type) {
        case CORT_TYPE_FLOAT: ((float *)d)[i] = (float)rng_unit(r); break;
        case CORT_TYPE_DOUBLE: ((double *)d)[i] = rng_unit(r); break;
        case CORT_TYPE_FLOAT16: ((uint16_t *)d)[i] = cort_f32_to_f16((float)rng_unit(r)); break;
        case CORT_TYPE_BFLOAT16: ((uint16_t *)d)[i] = cort_f32_to_bf16((float)rng_unit(r)); break;
        case CORT_TYPE_COMPLEX64:
            ((float *)d)[2 * i] = (float)rng_unit(r);
            ((float *)d)[2 * i + 1] = (float)rng_unit(r);
            break;
        case CORT_TYPE_COMPLEX128:
            ((double *)d)[2 * i] = rng_unit(r);
            ((double *)d)[2 * i + 1] = rng_unit(r);
            break;
        case CORT_TYPE_INT8: ((int8_t *)d)[i] = (int8_t)small; break;
        case CORT_TYPE_INT16: ((int16_t *)d)[i] = (int16_t)small; break;
        case CORT_TYPE_INT32: ((int32_t *)d)[i] = (int32_t)small; break;
        case CORT_TYPE_INT64: ((int64_t *)d)[i] = (int64_t)small; break;
        case CORT_TYPE_UINT8: ((uint8_t *)d)[i] = (uint8_t)small; break;
        case CORT_TYPE_UINT16: ((uint16_t *)d)[i] = (uint16_t)small; break;
        case CORT_TYPE_UINT32: ((uint32_t *)d)[i] = (uint32_t)small; break;
        case CORT_TYPE_UINT64: ((uint64_t *)d)[i] = small; break;
        case CORT_TYPE_BOOL: ((uint8_t *)d)[i] = (uint8_t)(small & 1); break;
        case CORT_TYPE_STRING: {
            char s[4] = { 's', (char)('0' + cli_rng_next(r) % 10), 0, 0 };
            if ((st = cort_tensor_set_string(t, i, s))) goto error;
            break;
        }
        default:
            if (cort_type_is_small_float(type)) cort_store_f64(d, type, i, rng_unit(r));
            else if (cort_type_is_small_int(type)) cort_store_i64(d, type, i, (int64_t)small);
            else {
                st = cort_error(CORT_ERROR_NOT_IMPLEMENTED, "cannot generate random values of type %s", cort_type_name(type));
                goto error;
            }
        }
    }
    *out = t;
    return NULL;
error:
    cort_value_release(t);
    return st;
}

/* Shape for a declared tensor type: unknown/symbolic dims take their --dim value or 1; an unknown
 * rank becomes [1]. */
static size_t concrete_shape(const cli_session_args *args, int rank, const int64_t *dims, const char *const *names,
                             int64_t *shape) {
    if (rank < 0) { shape[0] = 1; return 1; }
    for (int i = 0; i < rank; i++) {
        shape[i] = dims[i];
        if (shape[i] < 0) shape[i] = cli_dim_value(args, names ? names[i] : NULL, 1);
    }
    return (size_t)rank;
}

/* Random value of a declared IR type (any kind). */
static cort_status *random_of_ir(const cort_type_ir *ty, const cli_session_args *args, cli_rng *r, int depth,
                                 cort_value **out) {
    int64_t shape[CORT_MAX_RANK];
    cort_value *a = NULL, *b = NULL;
    cort_status *st = NULL;
    if (!ty || depth > 8) return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "input type is not declared");
    switch (ty->kind) {
    case CORT_VKIND_TENSOR: {
        if (ty->rank > CORT_MAX_RANK) return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "rank %d is too large", ty->rank);
        size_t rank = concrete_shape(args, ty->rank, ty->dims, ty->dim_params, shape);
        return cli_random_tensor(ty->elem_type ? ty->elem_type : CORT_TYPE_FLOAT, shape, rank, r, out);
    }
    case CORT_VKIND_SEQUENCE: {
        const cort_type_ir *in = ty->inner;
        cort_type et = in && in->kind == CORT_VKIND_TENSOR ? in->elem_type : CORT_TYPE_FLOAT;
        if ((st = random_of_ir(in, args, r, depth + 1, &a))) return st;
        st = cort_sequence_create(et, &a, 1, out);
        cort_value_release(a);
        return st;
    }
    case CORT_VKIND_OPTIONAL: {
        const cort_type_ir *in = ty->inner;
        if ((st = random_of_ir(in, args, r, depth + 1, &a))) return st;
        cort_type et = in->kind == CORT_VKIND_TENSOR ? in->elem_type
                       : (in->inner && in->inner->kind == CORT_VKIND_TENSOR ? in->inner->elem_type : CORT_TYPE_FLOAT);
        st = cort_optional_create(a, (int)in->kind, et, out);
        cort_value_release(a);
        return st;
    }
    case CORT_VKIND_MAP: {
        int64_t two = 2;
        if ((st = cli_random_tensor(ty->key_type ? ty->key_type : CORT_TYPE_INT64, &two, 1, r, &a))) return st;
        if (ty->key_type == CORT_TYPE_STRING) {
            if ((st = cort_tensor_set_string(a, 0, "a")) || (st = cort_tensor_set_string(a, 1, "b"))) goto map_error;
        } else {
            /* keys must be distinct: 0 and 1 in whatever integer type */
            unsigned char *kd = cort_tensor_data(a);
            size_t ks = cort_type_size(cort_tensor_type(a));
            memset(kd, 0, 2 * ks);
            kd[ks] = 1;   /* little-endian 1 */
        }
        cort_type vt = ty->inner && ty->inner->kind == CORT_VKIND_TENSOR ? ty->inner->elem_type : CORT_TYPE_FLOAT;
        if ((st = cli_random_tensor(vt ? vt : CORT_TYPE_FLOAT, &two, 1, r, &b))) goto map_error;
        st = cort_map_create(a, b, out);
    map_error:
        cort_value_release(a);
        cort_value_release(b);
        return st;
    }
    default:
        return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "input type is not declared");
    }
}

static const cort_value_info_ir *find_graph_input(const cort_model_ir *m, const char *name) {
    for (size_t i = 0; m->graph && i < m->graph->n_inputs; i++)
        if (strcmp(m->graph->inputs[i].name, name) == 0) return &m->graph->inputs[i];
    return NULL;
}

cort_status *cli_fill_random_inputs(cort_session *s, const char *model_path, const cli_session_args *args,
                                    cli_rng *r, cort_value **inputs) {
    cort_model_ir *model = NULL;
    cort_status *st = NULL;
    size_t n = cort_session_input_count(s);
    for (size_t k = 0; k < n; k++) {
        if (inputs[k]) continue;
        const char *name = cort_session_input_name(s, k);
        cli_io_type ty;
        memset(&ty, 0, sizeof ty);
        if ((st = cort_session_input_type(s, k, &ty.t, ty.dims, 16))) goto error;
        if (ty.t.kind == 1 && ty.t.rank <= 16 && ty.t.elem_type != CORT_TYPE_UNDEFINED) {
            const char *names[16] = {0};
            int64_t shape[16];
            for (int d = 0; d < ty.t.rank; d++) names[d] = cort_session_input_dim_name(s, k, (size_t)d);
            size_t rank = concrete_shape(args, ty.t.rank, ty.dims, names, shape);
            st = cli_random_tensor(ty.t.elem_type, shape, rank, r, &inputs[k]);
        } else {
            /* containers: the session reports only the kind, the loaded model has the full type */
            if (!model && (st = cort_model_load_file(model_path, &model))) goto error;
            const cort_value_info_ir *vi = find_graph_input(model, name);
            st = random_of_ir(vi ? &vi->type : NULL, args, r, 0, &inputs[k]);
        }
        if (st) {
            st = cort_error_wrap(st, "random value for input %zu '%s': ", k, name);
            goto error;
        }
    }
error:
    cort_model_free(model);
    return st;
}

cort_status *cli_load_input_dir(cort_session *s, const char *dir, cort_value **inputs, size_t *n_found) {
    size_t n = cort_session_input_count(s);
    *n_found = 0;
    for (size_t k = 0; k < n; k++) {
        if (inputs[k]) continue;
        char name[64];
        cort_value_type ty = {0, CORT_TYPE_UNDEFINED, -1};
        cort_status *st = cort_session_input_type(s, k, &ty, NULL, 0);
        if (st) return st;
        for (int ext = 0; ext < 2 && !inputs[k]; ext++) {
            snprintf(name, sizeof name, "input_%zu.%s", k, ext ? "npy" : "pb");
            char *path = cli_path_join(dir, name);
            if (!path) return cort_error_oom();
            if (cli_file_exists(path)) {
                st = cli_load_value(path, ty.kind, &inputs[k]);
                if (!st) st = cli_retype_input(&inputs[k], &ty);
                if (!st) (*n_found)++;
            }
            cort_free(path);
            if (st) return st;
        }
    }
    return NULL;
}
