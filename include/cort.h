/*
 * cort — an ONNX inference runtime in C11.  This is the only public header.
 *
 * General rules (they apply to every function below unless its comment says otherwise):
 *  - Every fallible call returns a cort_status*: NULL means success.  A non-NULL status is owned by
 *    the caller and must be freed with cort_status_free().  Out-of-memory is always reported: the
 *    OOM status is a preallocated static object (freeing it is a harmless no-op).
 *  - The library never aborts, exits or prints.
 *  - Output parameters (`out`) are written only on success; on failure they are left untouched
 *    and no reference is leaked.
 *  - "Borrowed" pointers stay owned by the object they come from and are valid as long as it is.
 *  - Objects are thread-safe where said; options objects are not: configure them from one thread,
 *    then they may be shared read-only (e.g. passed to many cort_session_create calls at once).
 */
#ifndef CORT_H
#define CORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CORT_API
#else
#define CORT_API __attribute__((visibility("default")))
#endif

#define CORT_VERSION_MAJOR 0
#define CORT_VERSION_MINOR 1
#define CORT_VERSION_PATCH 0
/* "MAJOR.MINOR.PATCH"; static string. Thread-safe. */
CORT_API const char *cort_version(void);

/* ---- status: every fallible call returns cort_status*; NULL means success ---- */
typedef struct cort_status cort_status;
typedef enum cort_code {
    CORT_OK = 0,
    CORT_ERROR_INVALID_ARGUMENT,   /* bad argument, unknown input/output name, wrong dtype/shape */
    CORT_ERROR_INVALID_MODEL,      /* malformed or inconsistent model file */
    CORT_ERROR_NOT_IMPLEMENTED,    /* operator, opset version or type not supported (reported at session creation) */
    CORT_ERROR_OUT_OF_MEMORY,      /* returnable even when allocating the status itself fails */
    CORT_ERROR_IO,                 /* file cannot be read */
    CORT_ERROR_CANCELLED,          /* run stopped through cort_run_options_set_terminate */
    CORT_ERROR_RUNTIME             /* a kernel failed at run time (message names node and op) */
} cort_code;
/* The code of a status; CORT_OK for NULL. Thread-safe. */
CORT_API cort_code   cort_status_code(const cort_status *status);
/* Borrowed message, valid until the status is freed; "" for NULL. Thread-safe. */
CORT_API const char *cort_status_message(const cort_status *status);
/* Frees a status. NULL is a no-op; the static out-of-memory status is never freed. */
CORT_API void        cort_status_free(cort_status *status);
/* A new status with a copy of message (custom operators and allocators report failures with it).
 * code CORT_OK or an unknown code is stored as CORT_ERROR_RUNTIME; NULL message is "". Returns the
 * static out-of-memory status when allocation fails. The caller owns it (cort_status_free). */
CORT_API cort_status *cort_status_create(cort_code code, const char *message);
/* Static name of a code, e.g. "INVALID_ARGUMENT". */
CORT_API const char *cort_code_name(cort_code code);

/* ---- the CPU as cort sees it ----
 * The CPU is probed, and the CORT_ISA environment variable read, once per process: at the first call
 * of this function or of cort_session_create*. CORT_ISA=generic|avx2|avx512|neon caps the widest
 * kernel family (ISA level) cort uses; unset or empty means the widest this CPU supports (docs/isa.md).
 * Writes one line, e.g.
 *   "isa: avx2 (detected: avx512; flags: avx2 fma f16c avx512f avx512bw avx512dq avx512vl; l2: 1024 KB; capped by CORT_ISA=avx2)"
 * (level in use, highest level the CPU supports, its extensions, "; amx tiles in use" when the
 * int8 matrix kernels use AMX, one core's L2 cache size when the CPU reports it (cache blocking
 * sizes itself by it), and whether CORT_ISA is set; AMX needs a CPU with AMX, level avx512, the
 * environment variable CORT_AMX not "0"; on Linux the probe then asks the kernel for the tile state
 * with arch_prctl(ARCH_REQ_XCOMP_PERM), a process-wide grant that enlarges signal frames) into
 * buf like snprintf: at most `size` bytes including the terminating NUL, truncated if longer (buf
 * may be NULL when size is 0). If length is not NULL it receives the full length without the NUL.
 * Fails with CORT_ERROR_INVALID_ARGUMENT when CORT_ISA is unknown, names a level above what the CPU
 * supports or one of another architecture: the message names the value and what the CPU has, and
 * every cort_session_create* of the process fails with the same error. Thread-safe. */
CORT_API cort_status *cort_cpu_describe(char *buf, size_t size, size_t *length);

/* ---- element types: values equal ONNX TensorProto.DataType ---- */
typedef enum cort_type {
    CORT_TYPE_UNDEFINED = 0, CORT_TYPE_FLOAT = 1, CORT_TYPE_UINT8 = 2, CORT_TYPE_INT8 = 3,
    CORT_TYPE_UINT16 = 4, CORT_TYPE_INT16 = 5, CORT_TYPE_INT32 = 6, CORT_TYPE_INT64 = 7,
    CORT_TYPE_STRING = 8, CORT_TYPE_BOOL = 9, CORT_TYPE_FLOAT16 = 10, CORT_TYPE_DOUBLE = 11,
    CORT_TYPE_UINT32 = 12, CORT_TYPE_UINT64 = 13, CORT_TYPE_COMPLEX64 = 14,
    CORT_TYPE_COMPLEX128 = 15, CORT_TYPE_BFLOAT16 = 16,
    /* ONNX 1.14+ types. Sub-byte types (uint4, int4, float4e2m1, uint2, int2) take ONE BYTE PER
     * ELEMENT in a cort tensor's memory: int4/int2 sign-extended in an int8, uint4/uint2 in a uint8,
     * float4e2m1 as its 4-bit code in the low bits of a byte. Only serialized forms (TensorProto,
     * .npy of the CLI) are packed, low bits first; see cort_type_pack. */
    CORT_TYPE_FLOAT8E4M3FN = 17, CORT_TYPE_FLOAT8E4M3FNUZ = 18, CORT_TYPE_FLOAT8E5M2 = 19,
    CORT_TYPE_FLOAT8E5M2FNUZ = 20, CORT_TYPE_UINT4 = 21, CORT_TYPE_INT4 = 22, CORT_TYPE_FLOAT4E2M1 = 23,
    CORT_TYPE_FLOAT8E8M0 = 24, CORT_TYPE_UINT2 = 25, CORT_TYPE_INT2 = 26
} cort_type;
/* Bytes per element in memory (strings: sizeof(char*); sub-byte types: 1); 0 for an unknown type. */
CORT_API size_t      cort_type_size(cort_type type);
/* Static lower-case ONNX name, e.g. "float", "int64", "bfloat16", "float8e4m3fn", "int4";
 * "undefined" for unknown values. */
CORT_API const char *cort_type_name(cort_type type);
/* Bits per element in ONNX's serialized form: 4 for uint4/int4/float4e2m1, 2 for uint2/int2, else
 * 8 * cort_type_size (strings: 0; unknown: 0). */
CORT_API int         cort_type_bits(cort_type type);
/* Bytes of count elements in the serialized (packed) form: ceil(count * bits / 8). Fails with
 * INVALID_ARGUMENT for an unknown type or string, or when the size overflows size_t. */
CORT_API cort_status *cort_type_packed_bytes(cort_type type, size_t count, size_t *bytes);
/* Packs count in-memory elements (count * cort_type_size bytes) into ONNX's serialized form
 * (cort_type_packed_bytes bytes; element 0 in the lowest bits, the unused bits of the last byte
 * zero), and back. For types of 8 bits and more both copy the bytes. unpack sign-extends int4/int2. */
CORT_API void        cort_type_pack(cort_type type, const void *elements, size_t count, void *packed);
CORT_API void        cort_type_unpack(cort_type type, const void *packed, size_t count, void *elements);

/* ---- session options ----
 * Not thread-safe while being modified; a session copies what it needs, so options may be freed
 * right after cort_session_create returns. */
typedef struct cort_session_options cort_session_options;
CORT_API cort_status *cort_session_options_create(cort_session_options **out);
CORT_API void         cort_session_options_free(cort_session_options *options);   /* NULL is a no-op */
/* intra-op threads for this session; 0 = one per available core; 1 = no extra thread
 * (run_async still works with 1). Negative values are rejected. */
CORT_API cort_status *cort_session_options_set_threads(cort_session_options *options, int threads);
/* 0 = no graph optimization, 1 = basic (constant folding, eliminations), 2 = all (fusions, layout).
 * Default 2. Other values are rejected. */
CORT_API cort_status *cort_session_options_set_optimization_level(cort_session_options *options, int level);
/* append an execution provider by name ("cpu", "xnnpack"); providers are tried in order,
 * the CPU provider is always the fallback. keys/values may be NULL when count is 0.
 * Unknown providers, or providers not built into this library, return CORT_ERROR_NOT_IMPLEMENTED. */
CORT_API cort_status *cort_session_options_append_provider(cort_session_options *options, const char *name,
                                                           const char *const *keys, const char *const *values,
                                                           size_t count);
/* Value for a symbolic dimension (ValueInfo dim_param) used for creation-time shape inference and
 * to validate inputs at run time. The name is copied. */
CORT_API cort_status *cort_session_options_set_dim(cort_session_options *options, const char *name, int64_t value);
/* Idle policy of the session's own intra-op pool: allow = 1 (default) lets idle workers spin for a
 * few milliseconds to catch the next parallel loop, 0 makes them sleep at once (less idle CPU, more
 * wake-up latency; ONNX Runtime's session.intra_op.allow_spinning). Ignored with a shared pool. */
CORT_API cort_status *cort_session_options_set_spinning(cort_session_options *options, int allow);
/* Per-node profiling: when enabled (default off), every run adds each top-level node's wall time and
 * call count to counters read with cort_session_node_profile. Costs two clock reads per node. */
CORT_API cort_status *cort_session_options_set_profiling(cort_session_options *options, int enable);
/* Size policy: the largest tensor, in bytes, the session may create. A model whose shape inference
 * already gives some output a bigger (or overflowing) shape fails cort_session_create with
 * CORT_ERROR_INVALID_MODEL; a bigger tensor at run time fails the run with CORT_ERROR_INVALID_ARGUMENT;
 * both messages name the node and the shape, and nothing is allocated first. 0 = the default, 1 TiB
 * (2^40); values above 2^48 bytes (what a 64-bit process can address, the limit for every tensor)
 * act as 2^48. Like every option: copied by cort_session_create, not thread-safe while being set. */
CORT_API cort_status *cort_session_options_set_max_tensor_bytes(cort_session_options *options, uint64_t bytes);
/* Constant-folding budget: the bytes of folded values session creation may create beyond twice the
 * model's own initializer bytes (so a model folding a Cast of each of its weights keeps folding). A
 * node whose outputs would go over it is not folded but runs at run time; creation does not fail.
 * Default 16 MiB (2^24); 0 leaves only the allowance of twice the initializers. Level 0
 * (cort_session_options_set_optimization_level) still folds within the same budget. */
CORT_API cort_status *cort_session_options_set_fold_budget(cort_session_options *options, uint64_t bytes);

/* Profiling to a file in ONNX Runtime's chrome-trace format (a JSON array of "ph": "X" events with
 * cat "Session" — model_loading_uri, session_initialization, model_run — and cat "Node" —
 * NAME_fence_before, NAME_kernel_time with args op_name, provider, exec_plan_index, activation_size,
 * parameter_size, output_size, input_type_shape, output_type_shape, thread_scheduling_stats —
 * NAME_fence_after; ts and dur in microseconds from the session's creation). enable 0 (default)
 * costs nothing at run time. prefix (copied; NULL or "" = "onnxruntime_profile_") starts the file
 * name, which cort_session_end_profiling completes as PREFIX_YYYY-MM-DD_HH-MM-SS.json. Events are
 * kept in memory (at most 1 GiB; later ones are dropped) until that call. Independent of
 * cort_session_options_set_profiling (the counters). */
CORT_API cort_status *cort_session_options_set_profile_file(cort_session_options *options, int enable, const char *prefix);
/* Initializer `name` provided by the caller: it replaces the model's initializer of that name (same
 * element type required; the shape may differ and shape inference uses the new one) or, for a graph
 * input without initializer, makes that input a constant. Any other name fails cort_session_create
 * with INVALID_ARGUMENT. Lifetime: the options retain value (a tensor) and every session created
 * from them retains it too, so the caller may release its reference at once; a value wrapping
 * caller memory (cort_tensor_wrap) must keep that memory valid while any such session lives.
 * Adding a name twice replaces the first value. */
typedef struct cort_value cort_value;   /* declared again with the values below (C11 allows it) */
CORT_API cort_status *cort_session_options_add_initializer(cort_session_options *options, const char *name,
                                                           cort_value *value);
/* An external-data file given in memory (for weights that are encrypted on disk or downloaded):
 * tensors whose external_data location equals file_name read their bytes from these, at the
 * offset/length the model gives, instead of from a file next to the model; this also works for
 * models created from memory. The bytes are copied (the caller may free them at once). At most 64
 * files; adding a name again replaces its bytes. */
CORT_API cort_status *cort_session_options_add_external_data(cort_session_options *options, const char *file_name,
                                                             const void *bytes, size_t length);
/* Saving the optimized graph (ONNX Runtime's optimized_model_filepath): after its graph passes,
 * cort_session_create writes the graph it will run to path (copied; NULL or "" = don't) as an ONNX
 * model: standard operators, and com.microsoft FusedConv / FusedGemm / FusedMatMul (the forms ONNX
 * Runtime writes) for convolutions and matrix products with a fused activation. Constant-folded
 * values become initializers. cort (and ONNX Runtime) load the file and compute the same outputs.
 * A node cort cannot express in ONNX fails session creation with CORT_ERROR_NOT_IMPLEMENTED naming
 * it; a file that cannot be written fails it with CORT_ERROR_IO. */
CORT_API cort_status *cort_session_options_set_optimized_model_path(cort_session_options *options, const char *path);
/* With a saved optimized model: initializers of at least min_bytes bytes (numeric types) go to the
 * file file_name (copied; a plain name, written next to the model, replaced if it exists) as
 * ONNX external data, the rest stay inside the model (ONNX Runtime's
 * session.optimized_model_external_initializers_file_name / _min_size_in_bytes). NULL or "":
 * everything inside the model (the default). */
CORT_API cort_status *cort_session_options_set_optimized_model_external_data(cort_session_options *options,
                                                                             const char *file_name, uint64_t min_bytes);

/* ---- shared thread pools ----
 * One set of intra-op worker threads for many sessions (ONNX Runtime's global thread pools): no
 * per-session threads. threads = participants including the thread that runs (0 = one per
 * available core); allow_spinning as in cort_session_options_set_spinning. The pool runs one
 * parallel loop at a time: a run that finds it busy with another session's loop runs that loop on
 * its own thread, so sessions sharing it never oversubscribe the cores. Reference counted:
 * cort_thread_pool_release drops the caller's handle; options and sessions hold their own
 * references, and the workers stop when the last one is gone. Thread-safe. */
typedef struct cort_thread_pool cort_thread_pool;
CORT_API cort_status *cort_thread_pool_create(int threads, int allow_spinning, cort_thread_pool **out);
CORT_API void         cort_thread_pool_release(cort_thread_pool *pool);   /* NULL is a no-op */
CORT_API int          cort_thread_pool_threads(const cort_thread_pool *pool);
/* Sessions created from these options use pool (retained) instead of their own; their thread count
 * is the pool's (cort_session_options_set_threads is ignored). NULL: own pools again. */
CORT_API cort_status *cort_session_options_set_thread_pool(cort_session_options *options, cort_thread_pool *pool);

/* Prepacked weights shared between sessions. Sessions created from options given a container
 * (cort_session_options_set_prepacked_weights) look up every weight they pack at creation (conv
 * filters, Winograd transforms, fused expand convs, MatMul/Gemm B) in it and reuse the buffer another session made, so
 * N sessions of one model hold one copy of the packed weights. Buffers are found by content: a
 * 128-bit hash of the source initializer's bytes plus its byte count, the kernel family and every
 * packing parameter (shapes, Winograd tile, path, micro-kernel of the ISA level in force) must all
 * be equal, never by name, so models sharing a weight share its pack too. Each kernel still picks
 * its path from the per-ISA config; a buffer packed for another choice is simply another entry.
 * Ownership: reference counted. create returns one reference; options and every session created
 * with the container hold their own, and the buffers are freed with the last one, so the
 * container, options and sessions may be released in any order. Thread-safe: any number of
 * threads may create sessions with one container at once (lookups take its mutex; two threads
 * missing the same weight both pack it and the first stored wins). count is the number of stored
 * buffers, bytes the byte count of the initializers they were packed from (0 for NULL). */
typedef struct cort_prepacked_weights cort_prepacked_weights;
CORT_API cort_status *cort_prepacked_weights_create(cort_prepacked_weights **out);
CORT_API void         cort_prepacked_weights_release(cort_prepacked_weights *container);   /* NULL is a no-op */
CORT_API size_t       cort_prepacked_weights_count(cort_prepacked_weights *container);
CORT_API uint64_t     cort_prepacked_weights_bytes(cort_prepacked_weights *container);
/* Sessions created from these options share packed weights through container (retained; NULL:
 * each session packs its own again, the default). */
CORT_API cort_status *cort_session_options_set_prepacked_weights(cort_session_options *options,
                                                                 cort_prepacked_weights *container);

/* ---- session: thread-safe; any number of threads may run it at once ---- */
typedef struct cort_session cort_session;
/* options may be NULL (defaults). The path is not used after the call returns (the file is
 * memory-mapped; the mapping belongs to the session). Thread-safe: sessions may be created
 * concurrently from many threads. */
CORT_API cort_status *cort_session_create(const char *path, const cort_session_options *options, cort_session **out);
/* the bytes are not used after the call returns */
CORT_API cort_status *cort_session_create_from_memory(const void *bytes, size_t length,
                                                      const cort_session_options *options, cort_session **out);
/* adds a reference; returns session. Thread-safe. */
CORT_API cort_session *cort_session_retain(cort_session *session);
/* drops the caller's reference. Runs in flight keep the session alive until their callbacks return.
 * Safe to call from inside a run_async callback, including for the last reference: it does not
 * deadlock and does not leak. NULL is a no-op. Thread-safe. */
CORT_API void         cort_session_release(cort_session *session);
/* Graph inputs that are not initializers, and graph outputs. Thread-safe. */
CORT_API size_t       cort_session_input_count(const cort_session *session);
CORT_API size_t       cort_session_output_count(const cort_session *session);
/* borrowed; valid while the session lives; NULL for an index out of range */
CORT_API const char  *cort_session_input_name(const cort_session *session, size_t index);
CORT_API const char  *cort_session_output_name(const cort_session *session, size_t index);

/* Declared type of an input/output (value_info of the graph). kind: 1 tensor, 2 sequence,
 * 3 optional, 4 map, 0 unknown. For tensors *elem_type is the element type and *rank / dims the
 * declared shape (-1 in a dim for a symbolic or unknown dimension; rank -1 if unknown).
 * dims may be NULL to query the rank only; at most max_dims entries are written. Borrowed
 * symbolic names are available through cort_session_input_dim_name. Thread-safe. */
typedef struct cort_value_type {
    int       kind;
    cort_type elem_type;
    int       rank;
} cort_value_type;
CORT_API cort_status *cort_session_input_type(const cort_session *session, size_t index, cort_value_type *type,
                                              int64_t *dims, size_t max_dims);
CORT_API cort_status *cort_session_output_type(const cort_session *session, size_t index, cort_value_type *type,
                                               int64_t *dims, size_t max_dims);
/* Symbolic name of dimension `dim` of input/output `index` (borrowed), or NULL if it is not symbolic. */
CORT_API const char  *cort_session_input_dim_name(const cort_session *session, size_t index, size_t dim);
CORT_API const char  *cort_session_output_dim_name(const cort_session *session, size_t index, size_t dim);
/* Model metadata (borrowed strings living with the session; "" when absent). key: "producer_name",
 * "producer_version", "domain", "doc_string", "graph_name", "graph_doc_string", or "metadata:KEY" for
 * metadata_props entries (NULL if that key is absent). */
CORT_API const char  *cort_session_metadata(const cort_session *session, const char *key);
/* The session's execution plan (top-level graph, after optimization): node count, and for node `index`
 * its name, op type and the provider that runs it ("cpu", "xnnpack"); borrowed strings. Nodes folded
 * into constants at creation report provider "folded". Returns INVALID_ARGUMENT for a bad index. */
CORT_API size_t       cort_session_node_count(const cort_session *session);
CORT_API cort_status *cort_session_node_info(const cort_session *session, size_t index, const char **name,
                                             const char **op_type, const char **provider);
/* Why the appended providers refused node `index` (e.g. "xnnpack: dilations > 1 unsupported"), borrowed;
 * NULL if no provider refused it (or none was appended). */
CORT_API const char  *cort_session_node_note(const cort_session *session, size_t index);
/* Accumulated wall time (ns) and number of executions of node `index` over all runs so far (summed
 * over concurrent runs; node time includes time spent waiting for the session's thread pool). Thread-safe.
 * Returns INVALID_ARGUMENT for a bad index and NOT_IMPLEMENTED if the session was created without
 * cort_session_options_set_profiling. cort_session_profile_reset zeroes every counter. */
CORT_API cort_status *cort_session_node_profile(const cort_session *session, size_t index, uint64_t *total_ns,
                                                uint64_t *count);
CORT_API void         cort_session_profile_reset(cort_session *session);
/* Writes the chrome-trace file of a session created with cort_session_options_set_profile_file and
 * stops recording; *file (borrowed, valid while the session lives) is its name. Later calls return
 * the same name without writing again. Without profiling *file is "" (like ONNX Runtime). Fails
 * with CORT_ERROR_IO if the file cannot be written (recording goes on). Thread-safe. */
CORT_API cort_status *cort_session_end_profiling(cort_session *session, const char **file);
/* Wall-clock time (ns since the Unix epoch) at which the session's profiling started; 0 without it. */
CORT_API int64_t      cort_session_profiling_start_ns(const cort_session *session);
/* metadata_props entries of the model: count, and borrowed key of entry `index` (NULL if out of range). */
CORT_API size_t       cort_session_metadata_count(const cort_session *session);
CORT_API const char  *cort_session_metadata_key(const cort_session *session, size_t index);
/* ModelProto.model_version. */
CORT_API int64_t      cort_session_model_version(const cort_session *session);
/* IR version and opset version imported for `domain` ("" or "ai.onnx" for the default domain; 0 if not imported). */
CORT_API int64_t      cort_session_ir_version(const cort_session *session);
CORT_API int64_t      cort_session_opset(const cort_session *session, const char *domain);

/* ---- values: reference counted; a tensor, a sequence, an optional or a map ----
 * Reference counting is thread-safe. The contents of a value are not synchronized: do not write a
 * tensor's data while a run reads it. */
typedef struct cort_value cort_value;
/* runtime-owned, zero-filled buffer (string tensors: every element is ""). rank may be 0 (scalar);
 * shape may be NULL when rank is 0. Dimensions must be >= 0. */
CORT_API cort_status *cort_tensor_create(cort_type type, const int64_t *shape, size_t rank, cort_value **out);
/* caller-owned buffer: the runtime never frees it; the caller keeps it valid until the value's
 * last reference is released (the runtime may hold references while a run is in flight).
 * bytes must be at least element_count * cort_type_size(type). For CORT_TYPE_STRING, data is an
 * array of element_count `char*` (NUL-terminated UTF-8), also caller-owned. */
CORT_API cort_status *cort_tensor_wrap(void *data, size_t bytes, cort_type type, const int64_t *shape, size_t rank,
                                       cort_value **out);
/* Borrowed; NULL for a value that is not a tensor. For strings: an array of `char*`. */
CORT_API void          *cort_tensor_data(const cort_value *value);
CORT_API cort_type      cort_tensor_type(const cort_value *value);
CORT_API size_t         cort_tensor_rank(const cort_value *value);
CORT_API const int64_t *cort_tensor_shape(const cort_value *value);   /* borrowed, rank entries */
CORT_API size_t         cort_tensor_element_count(const cort_value *value);
CORT_API size_t         cort_tensor_bytes(const cort_value *value);
/* Replaces string element `index` of a runtime-owned string tensor with a copy of s. */
CORT_API cort_status   *cort_tensor_set_string(cort_value *value, size_t index, const char *s);
/* adds a reference; returns value. NULL-safe. */
CORT_API cort_value    *cort_value_retain(cort_value *value);
CORT_API void           cort_value_release(cort_value *value);              /* NULL is a no-op */
/* 1 tensor, 2 sequence, 3 optional, 4 map, 0 for NULL. */
CORT_API int            cort_value_kind(const cort_value *value);

/* Sequences: an ordered list of values (tensors of one element type). */
/* Creates a sequence holding new references to items[0..count). elem_type is used when count is 0. */
CORT_API cort_status   *cort_sequence_create(cort_type elem_type, cort_value *const *items, size_t count, cort_value **out);
CORT_API size_t         cort_sequence_length(const cort_value *sequence);
/* borrowed item (retain it to keep it beyond the sequence's life); NULL if out of range */
CORT_API cort_value    *cort_sequence_at(const cort_value *sequence, size_t index);
CORT_API cort_type      cort_sequence_elem_type(const cort_value *sequence);
/* Optionals: contents NULL means "no value". contents is retained. For an empty optional,
 * contents_kind (1 tensor, 2 sequence) and elem_type describe the declared type. */
CORT_API cort_status   *cort_optional_create(cort_value *contents, int contents_kind, cort_type elem_type, cort_value **out);
CORT_API cort_value    *cort_optional_value(const cort_value *optional);   /* borrowed, NULL if empty */
/* Maps: keys tensor (1-D, integer or string) and values tensor or sequence, both retained. */
CORT_API cort_status   *cort_map_create(cort_value *keys, cort_value *values, cort_value **out);
CORT_API cort_value    *cort_map_keys(const cort_value *map);     /* borrowed */
CORT_API cort_value    *cort_map_values(const cort_value *map);   /* borrowed */

/* ---- run options: shared by reference with runs in flight ----
 * Thread-safe: set_terminate may be called from any thread at any time. */
typedef struct cort_run_options cort_run_options;
CORT_API cort_status *cort_run_options_create(cort_run_options **out);
CORT_API void         cort_run_options_free(cort_run_options *options);   /* NULL is a no-op; safe while runs using it are in flight */
/* may be called from any thread at any time; every run using these options that has not finished
 * stops at the next node boundary (or sooner) and fails with CORT_ERROR_CANCELLED. terminate = 0
 * clears the flag for runs that start afterwards. */
CORT_API void         cort_run_options_set_terminate(cort_run_options *options, int terminate);

/* ---- run ----
 * run_options may be NULL. outputs[i] == NULL on entry: the runtime allocates the output and stores
 * a new reference in outputs[i]. outputs[i] != NULL: the result is written into that tensor (its
 * type and shape must match, else CORT_ERROR_INVALID_ARGUMENT). On failure no reference is leaked
 * and entries that were NULL on entry are NULL again. Thread-safe: any number of threads may run one
 * session at once; inputs are only read. */
CORT_API cort_status *cort_session_run(cort_session *session, const cort_run_options *run_options,
                                       const char *const *input_names, cort_value *const *inputs, size_t input_count,
                                       const char *const *output_names, size_t output_count, cort_value **outputs);

/* Called exactly once per accepted run, on a runtime thread, never on the submitting thread before
 * cort_session_run_async has returned. The callback owns status (NULL on success) and one
 * reference to each outputs[i] (n_outputs equals the requested count on success, 0 on failure);
 * the outputs array itself is only valid during the call. */
typedef void (*cort_run_callback)(void *user_data, cort_status *status, cort_value **outputs, size_t n_outputs);
/* Everything it needs from its arguments is copied or retained before it returns: the caller may
 * free the name and value arrays, release the input and output values and free the run options
 * right after the call. outputs may be NULL (all allocated by the runtime) or an array whose
 * non-NULL entries are written into. Before accepting the run it checks everything that does not
 * need the run itself, with the same messages as cort_session_run: NULL arguments, unknown or
 * repeated input names, missing inputs, unknown output names, each input's kind, element type,
 * rank and static dimensions, and each preallocated output's kind, element type, rank and static
 * dimensions. A non-NULL return means the run was not accepted and the callback will not be
 * called; only what depends on running (a symbolic dimension that contradicts another, a kernel's
 * failure, cancellation) reaches the callback. Works with any thread count, including 1. */
CORT_API cort_status *cort_session_run_async(cort_session *session, const cort_run_options *run_options,
                                             const char *const *input_names, cort_value *const *inputs, size_t input_count,
                                             const char *const *output_names, size_t output_count, cort_value *const *outputs,
                                             cort_run_callback callback, void *user_data);

/* ---- I/O binding ----
 * Inputs and outputs bound by name once, then any number of runs without passing them again (ONNX
 * Runtime's IoBinding). A binding belongs to one session (it holds a reference to it) and is NOT
 * thread-safe: use one binding per thread; different bindings of one session may run concurrently.
 * Bound values are retained by the binding until they are replaced, cleared or the binding is freed,
 * so the caller may release its own references right after binding. The data of a bound input is
 * read at every run (not copied at bind time): writing into it between runs changes what the next run
 * sees, which is the point of binding. */
typedef struct cort_io_binding cort_io_binding;
/* A new, empty binding for session (retained). */
CORT_API cort_status *cort_io_binding_create(cort_session *session, cort_io_binding **out);
/* Releases every bound value, every output of the last run and the session reference. NULL is a no-op. */
CORT_API void         cort_io_binding_free(cort_io_binding *binding);
/* Binds input `name` to value (retained), replacing an earlier binding of that name. Checks at once
 * what cort_session_run would check (known input name, kind, element type, rank, static dims) and
 * fails with INVALID_ARGUMENT, leaving the binding as it was. */
CORT_API cort_status *cort_io_binding_bind_input(cort_io_binding *binding, const char *name, cort_value *value);
/* Binds output `name`. value non-NULL: a preallocated tensor (retained) every run writes into (its
 * element type and static dims are checked now, the rest at run time). value NULL: each run allocates
 * the output and the binding keeps it until the next run (cort_io_binding_output). Rebinding a name
 * replaces the earlier binding; outputs are reported in the order they were first bound. */
CORT_API cort_status *cort_io_binding_bind_output(cort_io_binding *binding, const char *name, cort_value *value);
/* Unbind every input / every output (the outputs of the last run go with them). */
CORT_API void         cort_io_binding_clear_inputs(cort_io_binding *binding);
CORT_API void         cort_io_binding_clear_outputs(cort_io_binding *binding);
/* Runs the session with the bound inputs and outputs (run_options may be NULL). Every model input
 * must be bound; with no output bound, nothing is computed for the caller but the run still happens.
 * On failure the outputs of the previous run are dropped (cort_io_binding_output returns NULL). */
CORT_API cort_status *cort_io_binding_run(cort_io_binding *binding, const cort_run_options *run_options);
/* Bound outputs: count, name (borrowed, valid until that output is unbound), and the value of the
 * last successful run (borrowed: valid until the next run, clear or free of the binding; retain it
 * to keep it longer; for a preallocated output this is the preallocated tensor). NULL before the
 * first run or for an index out of range. */
CORT_API size_t       cort_io_binding_output_count(const cort_io_binding *binding);
CORT_API const char  *cort_io_binding_output_name(const cort_io_binding *binding, size_t index);
CORT_API cort_value  *cort_io_binding_output(const cort_io_binding *binding, size_t index);

/* ---- custom operators ----
 * A kernel of the user's for (domain, op_type) over an inclusive range of the domain's opset
 * versions. Sessions created from the options offer every node to the registered ops first, so a
 * custom op may also replace a built-in one. The runtime never constant-folds a custom node and
 * never fuses it with its neighbours. Callbacks receive a cort_op_context that is valid only during
 * that call. Lifetime: the struct and its strings are copied by cort_session_options_add_custom_op;
 * `user` and the functions must stay valid while any session created from the options exists.
 * Threads: create/destroy run on the thread creating/releasing the session; infer runs at session
 * creation; compute may run concurrently for the same node (any number of threads may run one
 * session, and run_async uses worker threads), so it must treat the node state as read-only. */
typedef struct cort_op_context cort_op_context;
#define CORT_CUSTOM_OP_VERSION 1u
typedef struct cort_custom_op {
    uint32_t    version;          /* CORT_CUSTOM_OP_VERSION */
    const char *domain;           /* NULL, "" or "ai.onnx" for the default domain */
    const char *op_type;
    int         since_version;    /* >= 1 */
    int         end_version;      /* inclusive; 0 = every later version */
    void       *user;             /* passed back to every callback */
    /* Optional: per-node state made at session creation (attributes are readable here). A non-NULL
     * status fails cort_session_create with that message prefixed by the node. */
    cort_status *(*create)(void *user, const cort_op_context *node, void **state);
    void (*destroy)(void *user, void *state);                        /* optional */
    /* Optional: output element types and shapes at session creation (cort_op_input_type,
     * cort_op_set_output_type). Without it the outputs are typed when the node first runs. */
    cort_status *(*infer)(void *user, void *state, cort_op_context *ctx);
    /* Required: reads inputs (cort_op_input) and makes every output (cort_op_output). */
    cort_status *(*compute)(void *user, void *state, cort_op_context *ctx);
} cort_custom_op;
/* Registers op on the options. Fails with INVALID_ARGUMENT for a wrong version, a missing op_type
 * or compute, a bad version range, or a range overlapping one already registered for the same
 * domain and op_type. Sessions already created from the options are not affected. */
CORT_API cort_status *cort_session_options_add_custom_op(cort_session_options *options, const cort_custom_op *op);
/* Everything a custom-op library calls, as a table, so such a library needs no link against cort
 * (the process may hold cort statically, or load libcort through Python's ctypes). Static, valid for
 * the life of the process; fields are only ever appended (check version). */
typedef struct cort_custom_op_api {
    uint32_t version;                 /* CORT_CUSTOM_OP_VERSION */
    cort_status *(*add_custom_op)(cort_session_options *options, const cort_custom_op *op);
    cort_status *(*status_create)(cort_code code, const char *message);
    const char *(*op_node_name)(const cort_op_context *ctx);
    const char *(*op_type)(const cort_op_context *ctx);
    int (*op_opset)(const cort_op_context *ctx);
    size_t (*op_input_count)(const cort_op_context *ctx);
    size_t (*op_output_count)(const cort_op_context *ctx);
    int (*op_attr_int)(const cort_op_context *ctx, const char *name, int64_t *out);
    int (*op_attr_float)(const cort_op_context *ctx, const char *name, float *out);
    const char *(*op_attr_string)(const cort_op_context *ctx, const char *name);
    size_t (*op_attr_ints)(const cort_op_context *ctx, const char *name, const int64_t **out);
    size_t (*op_attr_floats)(const cort_op_context *ctx, const char *name, const float **out);
    cort_status *(*op_input_type)(const cort_op_context *ctx, size_t i, cort_type *elem, int64_t *dims, size_t max_dims,
                                  int *rank);
    cort_status *(*op_set_output_type)(cort_op_context *ctx, size_t i, cort_type elem, const int64_t *dims, int rank);
    const cort_value *(*op_input)(const cort_op_context *ctx, size_t i);
    cort_status *(*op_output)(cort_op_context *ctx, size_t i, cort_type type, const int64_t *shape, size_t rank,
                              cort_value **out);
    int (*op_threads)(const cort_op_context *ctx);
    void (*op_parallel_for)(const cort_op_context *ctx, size_t n, void (*fn)(void *arg, size_t begin, size_t end), void *arg);
    int (*op_cancelled)(const cort_op_context *ctx);
    void *(*tensor_data)(const cort_value *value);
    cort_type (*tensor_type)(const cort_value *value);
    size_t (*tensor_rank)(const cort_value *value);
    const int64_t *(*tensor_shape)(const cort_value *value);
    size_t (*tensor_element_count)(const cort_value *value);
} cort_custom_op_api;
CORT_API const cort_custom_op_api *cort_get_custom_op_api(void);
/* Loads a shared library and calls the function it exports as
 *     cort_status *cort_register_custom_ops(cort_session_options *options, const cort_custom_op_api *api);
 * which registers its ops through api->add_custom_op and returns NULL, or a status that this call
 * returns (prefixed with the path). The library stays loaded for the life of the process (sessions
 * may call into it after the options are gone). A file that cannot be loaded or lacks the symbol
 * fails with INVALID_ARGUMENT quoting the loader's message. Not thread-safe on the same options. */
CORT_API cort_status *cort_session_options_load_custom_op_library(cort_session_options *options, const char *path);
#define CORT_REGISTER_CUSTOM_OPS_SYMBOL "cort_register_custom_ops"
typedef cort_status *(*cort_register_custom_ops_fn)(cort_session_options *options, const cort_custom_op_api *api);

/* The context a custom op's callbacks receive. Everything returned is borrowed for the call. */
CORT_API const char *cort_op_node_name(const cort_op_context *ctx);      /* "" if unnamed */
CORT_API const char *cort_op_type(const cort_op_context *ctx);
CORT_API int         cort_op_opset(const cort_op_context *ctx);          /* the model's version of the domain */
CORT_API size_t      cort_op_input_count(const cort_op_context *ctx);    /* as written in the node */
CORT_API size_t      cort_op_output_count(const cort_op_context *ctx);
/* Attributes: 1 and *out set when present, else 0. Lists: element count (0 if absent), *out borrowed. */
CORT_API int         cort_op_attr_int(const cort_op_context *ctx, const char *name, int64_t *out);
CORT_API int         cort_op_attr_float(const cort_op_context *ctx, const char *name, float *out);
CORT_API const char *cort_op_attr_string(const cort_op_context *ctx, const char *name);   /* NULL if absent */
CORT_API size_t      cort_op_attr_ints(const cort_op_context *ctx, const char *name, const int64_t **out);
CORT_API size_t      cort_op_attr_floats(const cort_op_context *ctx, const char *name, const float **out);
/* In infer: input i's element type (CORT_TYPE_UNDEFINED if unknown), rank (-1 if unknown) and dims
 * (-1 for an unknown one) into dims[max_dims]. */
CORT_API cort_status *cort_op_input_type(const cort_op_context *ctx, size_t i, cort_type *elem, int64_t *dims,
                                         size_t max_dims, int *rank);
/* In infer: output i is a tensor of elem with shape dims[rank] (-1 = unknown dim; rank -1 = unknown shape). */
CORT_API cort_status *cort_op_set_output_type(cort_op_context *ctx, size_t i, cort_type elem, const int64_t *dims,
                                              int rank);
/* In compute: input i (NULL for a missing optional input or outside compute). Read-only. */
CORT_API const cort_value *cort_op_input(const cort_op_context *ctx, size_t i);
/* In compute: allocates output i (contents uninitialized) and returns it borrowed in *out; the
 * runtime owns it. Each output at most once; every output the graph uses must be made. */
CORT_API cort_status *cort_op_output(cort_op_context *ctx, size_t i, cort_type type, const int64_t *shape, size_t rank,
                                     cort_value **out);
/* In compute: the session's intra-op threads, and a parallel loop over [0, n) on them: fn gets
 * disjoint ranges and must not call back into the runtime's pools. Outside compute fn runs inline. */
CORT_API int  cort_op_threads(const cort_op_context *ctx);
CORT_API void cort_op_parallel_for(const cort_op_context *ctx, size_t n, void (*fn)(void *arg, size_t begin, size_t end),
                                   void *arg);
/* In compute: whether the run was cancelled (cort_run_options_set_terminate); long kernels check it. */
CORT_API int  cort_op_cancelled(const cort_op_context *ctx);

/* ---- process-wide CPU allocator ---- */
/* Statistics of the process-wide CPU allocator (thread-safe; callable at any time). */
typedef struct cort_allocator_stats {
    size_t bytes_in_use;    /* bytes currently allocated through it */
    size_t peak_bytes;      /* largest bytes_in_use seen so far */
    size_t allocations;     /* number of allocations made so far */
} cort_allocator_stats;
CORT_API cort_status *cort_allocator_get_stats(cort_allocator_stats *out);
/* Identity of the process-wide allocator that the session's `provider` ("cpu", later "xnnpack") allocates
 * from: the same non-NULL pointer for every session of the process once initialization has succeeded, and
 * it stays valid after every session is released. NULL when the session has no such provider. */
CORT_API const void  *cort_session_allocator(const cort_session *session, const char *provider);

/* A user allocator. alloc returns memory aligned to at least `alignment` (a power of two >= 64)
 * or NULL; free accepts what alloc returned. Both must be thread-safe. */
#define CORT_ALLOCATOR_VERSION 1
typedef struct cort_allocator {
    uint32_t version;                                   /* CORT_ALLOCATOR_VERSION */
    void *(*alloc)(void *context, size_t size, size_t alignment);
    void  (*free)(void *context, void *ptr);
    void  *context;
} cort_allocator;
/* Installs a user allocator for the whole process. The struct is copied; context must stay valid for
 * the life of the process. Allowed only before the first allocation through cort (any create call);
 * afterwards it fails with CORT_ERROR_INVALID_ARGUMENT. Thread-safe. */
CORT_API cort_status *cort_set_allocator(const cort_allocator *allocator);

#ifdef __cplusplus
}
#endif
#endif /* CORT_H */
