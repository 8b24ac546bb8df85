/* The ONNX loader's interface to the rest of the library: protobuf bytes -> the IR (graph/ir.h)
 * and back for single values. The loader's internals are in load.h and wire.h. */
#ifndef CORT_ONNX_ONNX_H
#define CORT_ONNX_ONNX_H
#include "../graph/ir.h"

/* Loads a model. path: mmaps the file (external data resolved relative to its folder).
 * Memory: the bytes are copied if any tensor needs them beyond the call (they are not used after return). */
cort_status *cort_model_load_file(const char *path, cort_model_ir **out);
cort_status *cort_model_load_memory(const void *bytes, size_t len, cort_model_ir **out);
void         cort_model_free(cort_model_ir *model);
/* External-data files given in memory (name as written in TensorProto.external_data "location"):
 * a tensor whose location matches one is read from those bytes, before any file is looked at. The
 * bytes are only used during the call. */
typedef struct cort_ext_data { const char *name; const void *bytes; size_t len; } cort_ext_data;
/* What the caller provides besides the model bytes: in-memory external-data files, and the names
 * of initializers it replaces (an external tensor of such a name is not read at all: it becomes
 * zeros of its shape, replaced after loading). */
typedef struct cort_load_extras {
    const cort_ext_data *ext; size_t n_ext;
    const char *const *overridden; size_t n_overridden;
} cort_load_extras;
cort_status *cort_model_load_file_ex(const char *path, const cort_load_extras *extras, cort_model_ir **out);
cort_status *cort_model_load_memory_ex(const void *bytes, size_t len, const cort_load_extras *extras,
                                       cort_model_ir **out);
/* Tells the kernel that bytes [p, p + n) of a file-mapped model are not needed for now: the whole
 * pages inside the range leave the process's resident set (madvise MADV_DONTNEED) and are read
 * back from the file if touched again. A no-op for models loaded from memory or ranges outside
 * the mapping, so it is always safe to call. */
void         cort_model_drop_pages(const cort_model_ir *model, const void *p, size_t n);

/* Parses a serialized TensorProto (e.g. a backend-test input_0.pb) into a new tensor value. */
cort_status *cort_tensor_parse(const void *bytes, size_t len, cort_value **out);
/* Parses a serialized TensorProto, SequenceProto, OptionalProto or MapProto (kind_hint: 0 = guess from
 * the file's content, else CORT_VKIND_*) into a new value. */
cort_status *cort_value_parse(const void *bytes, size_t len, int kind_hint, cort_value **out);
/* Serializes a value as a TensorProto/SequenceProto/OptionalProto/MapProto (name may be NULL).
 * *out is allocated with cort_malloc; caller frees with cort_free. */
cort_status *cort_value_serialize(const cort_value *v, const char *name, void **out, size_t *out_len);
#endif
