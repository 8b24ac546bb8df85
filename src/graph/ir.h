/* The IR: the model as loaded from the ONNX file (by src/onnx/, see onnx.h), a plain, immutable
 * tree owned by an arena. Strings are NUL-terminated copies; tensor data points into the model
 * bytes where aligned. */
#ifndef CORT_GRAPH_IR_H
#define CORT_GRAPH_IR_H
#include <stddef.h>
#include <stdint.h>
#include "cort.h"
#include "../core/value.h"

/* ONNX AttributeProto.AttributeType */
enum {
    CORT_ATTR_UNDEFINED = 0, CORT_ATTR_FLOAT = 1, CORT_ATTR_INT = 2, CORT_ATTR_STRING = 3, CORT_ATTR_TENSOR = 4,
    CORT_ATTR_GRAPH = 5, CORT_ATTR_FLOATS = 6, CORT_ATTR_INTS = 7, CORT_ATTR_STRINGS = 8, CORT_ATTR_TENSORS = 9,
    CORT_ATTR_GRAPHS = 10, CORT_ATTR_SPARSE_TENSOR = 11, CORT_ATTR_SPARSE_TENSORS = 12, CORT_ATTR_TYPE_PROTO = 13,
    CORT_ATTR_TYPE_PROTOS = 14
};

typedef struct cort_graph_ir cort_graph_ir;

/* A TypeProto, flattened. kind: tensor/sequence/optional/map. For sequence/optional, `inner` is the
 * contained type (allocated), for map `inner` is the value type and key_type the key element type. */
typedef struct cort_type_ir {
    cort_vkind kind;            /* CORT_VKIND_UNKNOWN if absent */
    cort_type  elem_type;       /* tensor element type */
    int        rank;            /* -1: shape absent */
    int64_t   *dims;            /* rank entries; -1 for symbolic/unknown */
    const char **dim_params;    /* rank entries; NULL where not symbolic */
    cort_type  key_type;        /* map */
    struct cort_type_ir *inner; /* sequence element, optional contents, map value */
} cort_type_ir;

typedef struct cort_value_info_ir {
    const char  *name;
    cort_type_ir type;
    const char  *doc;
} cort_value_info_ir;

typedef struct cort_attr_ir {
    const char *name;
    int         type;               /* CORT_ATTR_* */
    const char *ref_attr_name;      /* inside functions: refers to the caller's attribute; NULL otherwise */
    float       f;
    int64_t     i;
    const char *s;  size_t s_len;   /* bytes, also NUL-terminated */
    cort_value *t;                  /* TENSOR (and SPARSE_TENSOR converted to dense) */
    cort_graph_ir *g;
    size_t      n;                  /* element count of the list forms below */
    float      *floats;
    int64_t    *ints;
    const char **strings; size_t *string_lens;
    cort_value **tensors;
    cort_graph_ir **graphs;
    cort_type_ir *tp;               /* TYPE_PROTO(S): n entries for TYPE_PROTOS, 1 for TYPE_PROTO */
} cort_attr_ir;

typedef struct cort_node_ir {
    const char *name;           /* "" if absent */
    const char *op_type;
    const char *domain;         /* "" for ai.onnx ("ai.onnx" is normalized to "") */
    const char **inputs;  size_t n_inputs;    /* "" marks a missing optional input */
    const char **outputs; size_t n_outputs;   /* "" marks an unused optional output */
    cort_attr_ir *attrs;  size_t n_attrs;
    const char *doc;
} cort_node_ir;

typedef struct cort_initializer_ir {
    const char *name;
    cort_value *value;          /* a tensor; data in place (mapped file) or copied once */
} cort_initializer_ir;

struct cort_graph_ir {
    const char *name;
    const char *doc;
    cort_node_ir        *nodes;        size_t n_nodes;
    cort_value_info_ir  *inputs;       size_t n_inputs;     /* may include initializers (IR < 4) */
    cort_value_info_ir  *outputs;      size_t n_outputs;
    cort_value_info_ir  *value_infos;  size_t n_value_infos;
    cort_initializer_ir *initializers; size_t n_initializers;  /* sparse_initializer densified here too */
};

typedef struct cort_opset_ir { const char *domain; int64_t version; } cort_opset_ir;

typedef struct cort_function_ir {
    const char *name, *domain, *overload;
    const char **inputs;  size_t n_inputs;
    const char **outputs; size_t n_outputs;
    const char **attributes; size_t n_attributes;      /* attribute names without defaults */
    cort_attr_ir *attr_defaults; size_t n_attr_defaults; /* attribute_proto (with default values) */
    cort_node_ir *nodes; size_t n_nodes;
    cort_opset_ir *opsets; size_t n_opsets;
} cort_function_ir;

typedef struct cort_meta_ir { const char *key, *value; } cort_meta_ir;

typedef struct cort_model_ir {
    int64_t ir_version;
    const char *producer_name, *producer_version, *domain, *doc;
    int64_t model_version;
    cort_opset_ir *opsets; size_t n_opsets;
    cort_graph_ir *graph;
    cort_function_ir *functions; size_t n_functions;
    cort_meta_ir *metadata; size_t n_metadata;
    struct cort_arena *arena;        /* owns everything above except tensor values */
    /* tensors created by the loader (initializers, attribute tensors) are released with the model */
    cort_value **owned_values; size_t n_owned_values, cap_owned_values;
    /* The model bytes as a uint8 tensor: the mmapped file (release_fn = munmap) or one private
     * 64-byte-aligned copy of caller bytes. Initializers used in place are views with base = blob,
     * so a tensor handed to a user keeps the bytes alive even after the session is gone. */
    cort_value *blob;
    int blob_mapped;                      /* blob is a read-only private file mapping (pages can be dropped) */
    char *dir;                            /* folder of the model file, for external data (NULL from memory) */
} cort_model_ir;

/* Loading, parsing and serializing are the ONNX loader's: src/onnx/onnx.h. */

/* Arena: bump allocator for the IR. */
typedef struct cort_arena cort_arena;
cort_status *cort_arena_create(cort_arena **out);
void        *cort_arena_alloc(cort_arena *a, size_t size);   /* 16-byte aligned, zeroed; NULL on OOM */
char        *cort_arena_strndup(cort_arena *a, const char *s, size_t n);
void         cort_arena_free(cort_arena *a);
#endif
