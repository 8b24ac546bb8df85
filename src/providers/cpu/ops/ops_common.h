/* Shared helpers of the 'reduce' operator family (files rd_*.c): axis handling, reading small
 * integer/float control inputs (axes, K, scales, sizes), a stable index sort, and type-generic
 * element access. Everything here is stateless. */
#ifndef CORT_CPU_RD_COMMON_H
#define CORT_CPU_RD_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include "../../../graph/op.h"

/* Input i of a kernel, or NULL when absent or missing ("" in the model). */
static inline const cort_value *rd_input(const cort_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}
/* Static info of input i, or NULL when the input is absent or missing. */
static inline const cort_tinfo *rd_tinput(const cort_infer_ctx *ctx, size_t i) {
    if (i >= ctx->n_inputs || !ctx->inputs[i].present) return NULL;
    return &ctx->inputs[i];
}

/* Maps axis in [-rank, rank) to [0, rank). Returns 0 if out of range. */
static inline int rd_axis_ok(int64_t axis, size_t rank, size_t *out) {
    int64_t r = (int64_t)rank;
    if (axis < -r || axis >= r) return 0;
    *out = (size_t)(axis < 0 ? axis + r : axis);
    return 1;
}
/* As rd_axis_ok, returning a node error naming `what` when out of range. */
cort_status *rd_axis(const cort_node *node, int64_t axis, size_t rank, const char *what, size_t *out);

/* Product of dims[a..b). */
static inline size_t rd_prod(const int64_t *dims, size_t a, size_t b) {
    size_t p = 1;
    for (size_t i = a; i < b; i++) p *= (size_t)dims[i];
    return p;
}

/* Reads a 0-D or 1-D int32/int64 tensor (input `index`, called `name`) into buf (at most cap entries). */
cort_status *rd_read_ints(const cort_node *node, const cort_value *t, size_t index, const char *name,
                          int64_t *buf, size_t cap, size_t *n);
/* Reads a 0-D or 1-D floating tensor into buf as double. */
cort_status *rd_read_floats(const cort_node *node, const cort_value *t, size_t index, const char *name,
                            double *buf, size_t cap, size_t *n);
/* Creation time: the constant int32/int64 contents of an input when known. Returns 1 if read. */
int rd_const_ints(const cort_tinfo *t, int64_t *buf, size_t cap, size_t *n);
/* Creation time: constant float contents (any float type) when known. Returns 1 if read. */
int rd_const_floats(const cort_tinfo *t, double *buf, size_t cap, size_t *n);

/* Stable merge sort of idx[0..n) by cmp (negative: a before b). tmp holds n entries. */
typedef int (*rd_cmp_fn)(const void *ctx, int64_t a, int64_t b);
void rd_sort(int64_t *idx, int64_t *tmp, size_t n, rd_cmp_fn cmp, const void *ctx);

/* Copies a whole numeric tensor into a new double array (cort_malloc; caller frees). */
cort_status *rd_to_f64(const cort_value *t, double **out);
/* As rd_to_f64 into the session's recycled scratch (free with cort_kernel_scratch_free(ctx, *out)). */
cort_status *rd_to_f64_scratch(cort_kernel_ctx *ctx, const cort_value *t, double **out);
/* Converts a whole numeric tensor into a new float array. */
cort_status *rd_to_f32(const cort_value *t, float **out);
/* Writes n doubles into a numeric buffer of type t (integers: rounded to nearest, saturated). */
void rd_store_f64_round(void *dst, cort_type t, const double *src, size_t n);

/* "[1,2,3]" of a tensor's shape into buf. */
const char *rd_shape_str(const cort_value *t, char *buf, size_t len);

/* Whether a float type kernel may use float32 internally (float, float16, bfloat16). */
static inline int rd_is_f32ish(cort_type t) {
    return t == CORT_TYPE_FLOAT || t == CORT_TYPE_FLOAT16 || t == CORT_TYPE_BFLOAT16;
}
#endif
