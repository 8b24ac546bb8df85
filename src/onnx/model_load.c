/* ModelProto loading: file (mmap, zero-copy) or memory (one aligned private copy), and the
 * helpers shared by the message parsers. The IR lives in an arena; tensors are values registered
 * in model->owned_values. On any failure the partially built model is freed as a whole.
 *
 * Loader rules in one place:
 *  - Bytes: a file is mmapped (model->blob releases it with munmap); memory is copied once into a
 *    64-byte-aligned blob. raw_data naturally aligned for its element type becomes a view of the
 *    blob (retaining it); a misaligned graph initializer of 64 KB or more in a mapped file stays
 *    there as a lazy value (value.h) that graph compile copies only if something reads it in place
 *    (weights that kernels only pack never are); anything else is copied once; typed fields are
 *    converted once.
 *  - Each message is parsed in two passes over its own fields (count, then fill), so every list is
 *    one arena array and the total work is linear in the model size.
 *  - Limits: 192 nested messages (about 64 nested subgraphs), rank 16, a sparse tensor densifies
 *    to at most 64 MB + 256x the serialized size. Groups, TensorProto.segment and element types
 *    beyond bfloat16 (float8, int4, ...) are rejected. Little-endian hosts only (wire.h).
 *  - Protobuf semantics: unknown fields are skipped; for a repeated occurrence of a singular field
 *    the last one wins (embedded messages are not merged); a known field with the wrong wire type
 *    is an error. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "load.h"
#include "../core/alloc.h"
#include "../core/status.h"

cort_status *cort_load_own(cort_load *L, cort_value *v) {
    cort_model_ir *m = L->model;
    if (!m) {   /* standalone parse: nothing keeps attribute tensors; never happens for tensors we return */
        cort_value_release(v);
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "loader: tensor outside a model");
    }
    if (m->n_owned_values == m->cap_owned_values) {
        size_t cap = m->cap_owned_values ? m->cap_owned_values * 2 : 64;
        cort_value **n = cort_realloc(m->owned_values, cap * sizeof *n);
        if (!n) { cort_value_release(v); return cort_error_oom(); }
        m->owned_values = n;
        m->cap_owned_values = cap;
    }
    m->owned_values[m->n_owned_values++] = v;
    return NULL;
}

cort_status *cort_load_str(cort_load *L, const cort_pb_path *path, const cort_pb_field *f, const char **out, size_t *len) {
    CORT_TRY(cort_pb_expect(path, f, CORT_PB_LEN));
    char *s = cort_arena_strndup(L->arena, (const char *)L->buf + f->data, f->len);
    if (!s) return cort_error_oom();
    *out = s;
    if (len) *len = f->len;
    return NULL;
}

const char *cort_load_domain(const char *d) { return d && strcmp(d, "ai.onnx") ? d : ""; }

void *cort_load_array(cort_load *L, size_t n, size_t sz) {
    if (n && sz > SIZE_MAX / n) return NULL;
    return cort_arena_alloc(L->arena, n * sz);
}

enum { MP_IR = 1, MP_PRODUCER = 2, MP_PRODUCER_VERSION = 3, MP_DOMAIN = 4, MP_MODEL_VERSION = 5, MP_DOC = 6,
       MP_GRAPH = 7, MP_OPSET = 8, MP_META = 14, MP_FUNCTION = 25, MP_NFIELDS = 26 };

static cort_status *parse_model(cort_load *L, size_t len, cort_model_ir *m) {
    cort_pb_path root = { NULL, NULL, "ModelProto", -1, 0 };
    cort_pb msg;
    cort_pb_init(&msg, L->buf, 0, len);
    size_t c[MP_NFIELDS] = { 0 };
    CORT_TRY(cort_pb_count_fields(&msg, &root, c, MP_NFIELDS));
    m->producer_name = m->producer_version = m->domain = m->doc = "";
    m->opsets = cort_load_array(L, c[MP_OPSET], sizeof *m->opsets);
    m->functions = cort_load_array(L, c[MP_FUNCTION], sizeof *m->functions);
    m->metadata = cort_load_array(L, c[MP_META], sizeof *m->metadata);
    if (!m->opsets || !m->functions || !m->metadata) return cort_error_oom();
    cort_pb r = msg;
    cort_pb_field f;
    int got;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, &root, &f, &got));
        if (!got) break;
        cort_pb_path cp;
        cort_pb sub;
        switch (f.num) {
        case MP_IR: CORT_TRY(cort_pb_expect(&root, &f, CORT_PB_VARINT)); m->ir_version = (int64_t)f.u; break;
        case MP_MODEL_VERSION: CORT_TRY(cort_pb_expect(&root, &f, CORT_PB_VARINT)); m->model_version = (int64_t)f.u; break;
        case MP_PRODUCER: CORT_TRY(cort_load_str(L, &root, &f, &m->producer_name, NULL)); break;
        case MP_PRODUCER_VERSION: CORT_TRY(cort_load_str(L, &root, &f, &m->producer_version, NULL)); break;
        case MP_DOMAIN: CORT_TRY(cort_load_str(L, &root, &f, &m->domain, NULL)); break;
        case MP_DOC: CORT_TRY(cort_load_str(L, &root, &f, &m->doc, NULL)); break;
        case MP_GRAPH:
            CORT_TRY(cort_pb_expect(&root, &f, CORT_PB_LEN));
            cort_pb_path_child(&cp, &root, "graph", "GraphProto", -1);
            cort_pb_sub(&sub, &r, &f);
            if (!m->graph && !(m->graph = cort_load_array(L, 1, sizeof *m->graph))) return cort_error_oom();
            CORT_TRY(cort_load_graph(L, &cp, &sub, m->graph));   /* last occurrence wins (owned values accumulate) */
            break;
        case MP_OPSET:
            CORT_TRY(cort_pb_expect(&root, &f, CORT_PB_LEN));
            cort_pb_path_child(&cp, &root, "opset_import", "OperatorSetIdProto", (long)m->n_opsets);
            cort_pb_sub(&sub, &r, &f);
            CORT_TRY(cort_load_opset(L, &cp, &sub, &m->opsets[m->n_opsets]));
            m->n_opsets++;
            break;
        case MP_META: {
            CORT_TRY(cort_pb_expect(&root, &f, CORT_PB_LEN));
            cort_pb_path_child(&cp, &root, "metadata_props", "StringStringEntryProto", (long)m->n_metadata);
            cort_pb_sub(&sub, &r, &f);
            cort_meta_ir *e = &m->metadata[m->n_metadata];
            CORT_TRY(cort_load_string_pair(L, &cp, &sub, &e->key, &e->value));
            m->n_metadata++;
            break;
        }
        case MP_FUNCTION:
            CORT_TRY(cort_pb_expect(&root, &f, CORT_PB_LEN));
            cort_pb_path_child(&cp, &root, "functions", "FunctionProto", (long)m->n_functions);
            cort_pb_sub(&sub, &r, &f);
            CORT_TRY(cort_load_function(L, &cp, &sub, &m->functions[m->n_functions]));
            m->n_functions++;
            break;
        default: break;
        }
    }
    if (!m->graph) return cort_pb_error(&root, MP_GRAPH, 0, "model has no graph");
    return NULL;
}

void cort_model_free(cort_model_ir *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n_owned_values; i++) cort_value_release(m->owned_values[i]);
    cort_free(m->owned_values);
    cort_value_release(m->blob);
    cort_free(m->dir);
    cort_arena_free(m->arena);
    cort_free(m);
}

/* Takes ownership of blob (released with the model, also on failure). */
static cort_status *load_blob(cort_value *blob, char *dir, int mapped, const cort_load_extras *extras,
                              cort_model_ir **out) {
    cort_status *st;
    cort_model_ir *m = cort_calloc(1, sizeof *m);
    if (!m) { cort_value_release(blob); cort_free(dir); return cort_error_oom(); }
    m->blob = blob;
    m->blob_mapped = mapped;
    m->dir = dir;
    if ((st = cort_arena_create(&m->arena))) goto error;
    cort_load L = { (const uint8_t *)blob->data, m->arena, m, blob, dir, blob->bytes };
    L.extras = extras;
    if ((st = parse_model(&L, blob->bytes, m))) goto error;
    *out = m;
    return NULL;
error:
    cort_model_free(m);
    return st;
}

cort_status *cort_model_load_memory(const void *bytes, size_t len, cort_model_ir **out) {
    return cort_model_load_memory_ex(bytes, len, NULL, out);
}

cort_status *cort_model_load_memory_ex(const void *bytes, size_t len, const cort_load_extras *extras,
                                       cort_model_ir **out) {
    if (!out || (!bytes && len)) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "model bytes are NULL");
    int64_t dim = (int64_t)len;
    if (len > (size_t)INT64_MAX) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "model of %zu bytes is too large", len);
    cort_value *blob;
    CORT_TRY(cort_tensor_alloc(CORT_TYPE_UINT8, &dim, 1, &blob));   /* 64-byte aligned, like the file mapping */
    if (len) memcpy(blob->data, bytes, len);
    return load_blob(blob, NULL, 0, extras, out);
}

void cort_model_drop_pages(const cort_model_ir *m, const void *p, size_t n) {
    if (!m || !m->blob_mapped || !m->blob || !p || !n) return;
    const uintptr_t base = (uintptr_t)m->blob->data, end = base + m->blob->bytes, lo = (uintptr_t)p;
    if (lo < base || lo + n > end || lo + n < lo) return;
    cort_pages_drop(p, n);
}

static void unmap_blob(void *ctx, void *data, size_t bytes) {
    (void)ctx;
    if (bytes) munmap(data, bytes);
}

cort_status *cort_model_load_file(const char *path, cort_model_ir **out) {
    return cort_model_load_file_ex(path, NULL, out);
}

cort_status *cort_model_load_file_ex(const char *path, const cort_load_extras *extras, cort_model_ir **out) {
    if (!path || !out) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "model path is NULL");
    char eb[128];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return cort_error(CORT_ERROR_IO, "cannot open model '%s': %s", path, strerror_r(errno, eb, sizeof eb));
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        close(fd);
        return cort_error(CORT_ERROR_IO, "model '%s' is not a regular file", path);
    }
    size_t len = (size_t)sb.st_size;
    void *map = NULL;
    if (len) {
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return cort_error(CORT_ERROR_IO, "cannot map model '%s' (%zu bytes): %s", path, len, strerror_r(e, eb, sizeof eb));
        }
    }
    close(fd);
    /* folder for external data: everything before the last '/' ("." if none) */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? cort_strndup(path, slash == path ? 1 : (size_t)(slash - path)) : cort_strdup(".");
    cort_value *blob = NULL;
    int64_t dim = (int64_t)len;
    cort_status *st = dir ? NULL : cort_error_oom();
    if (!st) st = cort_tensor_view(CORT_TYPE_UINT8, &dim, 1, map, NULL, &blob);
    if (st) {
        if (len) munmap(map, len);
        cort_free(dir);
        return st;
    }
    blob->release_fn = unmap_blob;
    blob->release_ctx = NULL;
    return load_blob(blob, dir, 1, extras, out);
}

cort_status *cort_tensor_parse(const void *bytes, size_t len, cort_value **out) {
    if (!out || (!bytes && len)) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "tensor bytes are NULL");
    cort_load L = { (const uint8_t *)bytes, NULL, NULL, NULL, NULL, len };
    cort_pb_path root = { NULL, NULL, "TensorProto", -1, 0 };
    cort_pb msg;
    cort_pb_init(&msg, L.buf, 0, len);
    return cort_load_tensor(&L, &root, &msg, out, NULL);
}
