/* Shared helpers of the 'shape' operator family (data movement ops): input access with error
 * messages that name the node and input, integer-list reading, axis normalization, a strided N-D
 * copy engine that works on raw element bytes, and the string ownership fix-up.
 *
 * String tensors: kernels move the char* pointers like any 8-byte element (the pointers borrow the
 * input's strings), then call sh_strings_own() on the output as the very last step, which replaces
 * every pointer with an owned copy. Between the move and sh_strings_own nothing may fail. */
#ifndef CORT_CPU_SH_COMMON_H
#define CORT_CPU_SH_COMMON_H
#include "../../../../graph/op.h"

/* Transpose/Tile/DepthToSpace plans can need up to twice the tensor rank. */
#define SH_MAX_ND (2 * CORT_MAX_RANK + 2)

/* Most of the family moves bytes and accepts every element type. */
/* ... including the types added after ONNX 1.12 (unpacked in memory, one byte per element) */
#define SH_TYPES_ALL (CORT_TMASK_ALL | CORT_TMASK_NEW)

/* ---- kernel-side input access ---- */
/* Tensor name of input i ("" when absent). */
const char *sh_in_name(const cort_node *node, size_t i);
/* Input i as a tensor; fails (naming the input) when missing or not a tensor. */
cort_status *sh_input(const cort_kernel_ctx *ctx, size_t i, cort_value **out);
/* Optional input i: *out = NULL when missing; fails when present but not a tensor. */
cort_status *sh_input_opt(const cort_kernel_ctx *ctx, size_t i, cort_value **out);
/* Reads an integer tensor (any rank, flattened) of at most max elements as int64. */
cort_status *sh_read_ints(const cort_node *node, size_t input, const cort_value *t, int64_t *out, size_t max,
                          size_t *n);
/* Reads a one-element numeric (or bool) tensor as int64 (floats truncate toward zero). */
cort_status *sh_read_scalar_i64(const cort_node *node, size_t input, const cort_value *t, int64_t *out);
/* Normalizes axis from [-rank, rank) into [0, rank); `what` names it in the message ("attribute 'axis'"). */
cort_status *sh_axis(const cort_node *node, const char *what, int64_t axis, int64_t rank, int64_t *out);
/* Formats "[1,2,3]" into buf (returns buf). */
const char *sh_dims_str(const int64_t *dims, size_t rank, char *buf, size_t n);
/* Contiguous (row-major) element strides of a shape. */
void sh_strides(const int64_t *dims, size_t rank, int64_t *strides);
/* Product of dims[begin..end). */
int64_t sh_prod(const int64_t *dims, size_t begin, size_t end);

/* ---- creation-time inference helpers ---- */
/* Info of input i, or NULL when absent. */
const cort_tinfo *sh_tin(const cort_infer_ctx *ctx, size_t i);
/* 1 when the input's constant integer contents are known (at most max entries), copied to out. */
int sh_tinfo_ints(const cort_tinfo *t, int64_t *out, size_t max, size_t *n);
/* 1 when the input is a known one-element numeric constant; value as int64 / double. */
int sh_tinfo_scalar_i64(const cort_tinfo *t, int64_t *out);
/* Element type of input i (UNDEFINED when unknown). */
cort_type sh_tin_type(const cort_infer_ctx *ctx, size_t i);

/* ---- data movement ---- */
/* A strided N-D copy: for every index i of dims, dst[sum i*ds] = src[sum i*ss] (strides in elements,
 * src strides may be negative or zero). */
typedef struct sh_nd {
    int     rank;
    int64_t dims[SH_MAX_ND];
    int64_t ss[SH_MAX_ND];
    int64_t ds[SH_MAX_ND];
} sh_nd;
/* Runs the plan; merges contiguous dimensions, uses memcpy for contiguous runs, cache-blocked 2-D
 * tiles for transposes, and the pool for large copies. dst and src must not overlap. */
void sh_nd_copy(cort_pool *pool, size_t esize, void *dst, const void *src, const sh_nd *plan);
/* Sets count elements of esize bytes to *value. */
void sh_fill(void *dst, size_t count, size_t esize, const void *value);
/* Zero-fills a tensor (strings become ""). */
void sh_zero(cort_value *t);
/* Replaces every borrowed string pointer of t with an owned copy; on failure all elements not yet
 * copied are reset to "" (so releasing t is always safe). No-op for non-string tensors. */
cort_status *sh_strings_own(cort_value *t);
/* Whether a tensor's element is a string pointer. */
static inline int sh_is_str(const cort_value *t) { return t->type == CORT_TYPE_STRING; }
/* Element size used for moving (strings: the pointer). */
static inline size_t sh_esize(cort_type t) { return cort_type_size(t); }
#endif
