/* Checked arithmetic for sizes, strides and products of dims. A model controls every dim, every
 * repeat count, every attribute: none of their products may wrap (undefined behaviour for int64_t,
 * a silently small buffer for size_t). Two flavours:
 *   cort_*_ovf   return nonzero on overflow and leave *r unspecified: for code that reports an error;
 *   cort_dim_*   shape inference on dims where -1 means unknown: an unknown operand gives -1, an
 *                overflow saturates to CORT_DIM_HUGE, which no real tensor has and which the size
 *                policy after inference (compile.c) refuses with the node named, so infer functions
 *                need no error path of their own for it. */
#ifndef CORT_CORE_CHECKED_H
#define CORT_CORE_CHECKED_H
#include <stddef.h>
#include <stdint.h>

#define CORT_DIM_HUGE INT64_MAX
/* No tensor may be bigger than what a 64-bit process can map (2^48 bytes of virtual address space
 * on x86-64 and aarch64 with 4-level page tables); half of size_t on 32-bit targets. Requests above
 * it are invalid shapes, not out-of-memory. */
#define CORT_MAX_ADDRESSABLE_BYTES (SIZE_MAX > 0xffffffffu ? (size_t)((uint64_t)1 << 48) : SIZE_MAX / 2)

static inline int cort_mul_i64_ovf(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }
static inline int cort_add_i64_ovf(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
static inline int cort_sub_i64_ovf(int64_t a, int64_t b, int64_t *r) { return __builtin_sub_overflow(a, b, r); }
static inline int cort_mul_size_ovf(size_t a, size_t b, size_t *r) { return __builtin_mul_overflow(a, b, r); }
static inline int cort_add_size_ovf(size_t a, size_t b, size_t *r) { return __builtin_add_overflow(a, b, r); }

/* Product of dims[0..rank) as int64_t; nonzero if a dim is negative or the product overflows
 * (a zero dim anywhere gives 0, whatever the others are). */
static inline int cort_dims_prod_ovf(const int64_t *dims, size_t rank, int64_t *r) {
    int64_t p = 1;
    int zero = 0, ovf = 0;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return 1;
        if (!dims[i]) zero = 1;
        else if (!ovf && cort_mul_i64_ovf(p, dims[i], &p)) ovf = 1;
    }
    if (zero) { *r = 0; return 0; }
    *r = p;
    return ovf;
}

/* Inference dims: -1 (or any negative) is unknown. */
static inline int64_t cort_dim_mul(int64_t a, int64_t b) {
    int64_t r;
    if (a < 0 || b < 0) return -1;
    return cort_mul_i64_ovf(a, b, &r) ? CORT_DIM_HUGE : r;
}
static inline int64_t cort_dim_add(int64_t a, int64_t b) {
    int64_t r;
    if (a < 0 || b < 0) return -1;
    return cort_add_i64_ovf(a, b, &r) ? CORT_DIM_HUGE : r;
}
/* a + b where b may be negative (pads, offsets): unknown a stays unknown; the result is clamped to
 * [0, CORT_DIM_HUGE] only where overflow happened, a negative result is returned as is for the
 * caller to judge. */
static inline int64_t cort_dim_add_signed(int64_t a, int64_t b) {
    int64_t r;
    if (a < 0) return -1;
    if (cort_add_i64_ovf(a, b, &r)) return b > 0 ? CORT_DIM_HUGE : INT64_MIN;
    return r;
}
#endif
