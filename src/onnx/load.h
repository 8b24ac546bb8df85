/* Internal interface shared by the ONNX loader files (model_load.c, graph_load.c, node_load.c,
 * tensor_load.c, type_load.c, external_data.c, value_proto.c). Each message parser takes the
 * message's byte range (a cort_pb), its error path and writes one IR struct. */
#ifndef CORT_ONNX_LOAD_H
#define CORT_ONNX_LOAD_H
#include "wire.h"
#include "onnx.h"

typedef struct cort_load {
    const uint8_t *buf;     /* the whole serialized buffer */
    cort_arena    *arena;   /* IR strings/arrays; NULL when parsing a standalone value (names dropped) */
    cort_model_ir *model;   /* registry of owned tensor values; NULL for standalone values */
    cort_value    *blob;    /* buf as a value: aligned raw_data becomes a view of it; NULL = always copy */
    const char    *dir;     /* folder for external data; NULL = external data rejected */
    size_t         len;     /* bytes in buf: bounds how large a sparse tensor may densify */
    int            lazy;    /* loading a graph initializer: misaligned raw_data in a mapped file may
                             * stay there (a lazy value, see value.h) instead of being copied */
    const cort_load_extras *extras;   /* in-memory external data, overridden initializers (onnx.h); or NULL */
} cort_load;

/* Registers a loader-created value with the model (released by cort_model_free). On failure v is released. */
cort_status *cort_load_own(cort_load *L, cort_value *v);
/* Copies a LEN field into the arena as a NUL-terminated string. */
cort_status *cort_load_str(cort_load *L, const cort_pb_path *path, const cort_pb_field *f, const char **out, size_t *len);
/* "ai.onnx" -> "" (domains compare as the default domain). */
const char *cort_load_domain(const char *d);
/* Arena array of n elements of size sz (zeroed); OOM/overflow -> NULL. n == 0 gives a valid pointer. */
void *cort_load_array(cort_load *L, size_t n, size_t sz);

/* TensorProto -> new tensor value (a reference the caller owns; not registered). name may be NULL. */
cort_status *cort_load_tensor(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_value **out,
                              const char **name);
/* SparseTensorProto -> new dense tensor value. name (of the values tensor) may be NULL. */
cort_status *cort_load_sparse(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_value **out,
                              const char **name);
/* A tensor whose bytes live in an external file (TensorProto.external_data entries in tensor_msg).
 * Everything (location, offset, length, file size) is validated before the tensor is allocated. */
cort_status *cort_load_external(cort_load *L, const cort_pb_path *path, const cort_pb *tensor_msg, const char *tname,
                                cort_type type, const int64_t *dims, size_t rank, size_t bytes, cort_value **out);

cort_status *cort_load_type(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_type_ir *out);
void         cort_load_type_init(cort_type_ir *t);
cort_status *cort_load_value_info(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_value_info_ir *out);
cort_status *cort_load_node(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_node_ir *out);
cort_status *cort_load_attr(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_attr_ir *out);
cort_status *cort_load_graph(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_graph_ir *out);
cort_status *cort_load_function(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_function_ir *out);
cort_status *cort_load_opset(cort_load *L, const cort_pb_path *path, const cort_pb *msg, cort_opset_ir *out);
cort_status *cort_load_string_pair(cort_load *L, const cort_pb_path *path, const cort_pb *msg, const char **key,
                                   const char **value);
#endif
