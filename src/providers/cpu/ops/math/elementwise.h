/* Shared machinery of the elementwise operator family: per-type instantiation lists, the
 * numpy-broadcast iteration plan, and the parallel drivers every elementwise kernel runs through.
 *
 * A kernel is a "row function": it processes `n` consecutive output elements whose inputs are
 * read with an element stride each (0 = broadcast scalar, 1 = contiguous, or anything else in the
 * generic case). The drivers split the output over the thread pool and hand rows to it. */
#ifndef CORT_CPU_EW_COMMON_H
#define CORT_CPU_EW_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include "../../../../graph/op.h"
#include "../../kernels/elementwise.h"

/* Highest opset for which the entries of this family are known to be current. */
#define EW_MAX_IN 3
/* Elements per parallel task: cheap ops (add, relu) and expensive ones (exp, pow, erf). */
#define EW_GRAIN_CHEAP 16384
#define EW_GRAIN_HEAVY 4096

/* Parameters every row function may read. Built on the stack by run() from the op state. */
typedef struct ew_params {
    const ew_f32_kernels *k;    /* SIMD level chosen for this run */
    float  alpha, beta, gamma;  /* activation attributes */
    int    flag, flag2;         /* op switches (fmod, direction, detect_positive/negative, ...) */
    double lo_f, hi_f;          /* Clip bounds for float types */
    int64_t lo_i, hi_i;         /* Clip bounds for signed types */
    uint64_t lo_u, hi_u;        /* Clip bounds for unsigned types */
    double scale;               /* Mean: 1/n */
    int    simd_op;             /* EW_FU_* kernel for ew_map_simd_f32 */
    cort_value *out;            /* string outputs: the tensor whose elements are set */
    int    in_place;            /* ew_run_nary may write the output over a dead input of its shape */
} ew_params;

/* Returns nonzero on failure (only string kernels can fail: out of memory). */
typedef int (*ew_row_fn)(const ew_params *p, size_t n, void *out, const void *const *in, const ptrdiff_t *stride);
/* Contiguous map over n elements (unary ops). */
typedef void (*ew_map_fn)(const ew_params *p, size_t n, void *out, const void *in);

/* ---- broadcast plan: output dims collapsed so that consecutive dims every input walks the
 * same way are merged; the last dim is the row handed to row functions. ---- */
typedef struct ew_plan {
    size_t  rank;                                /* >= 1 */
    int64_t dims[CORT_MAX_RANK];
    size_t  n_in;
    int64_t strides[EW_MAX_IN][CORT_MAX_RANK];   /* element strides, 0 = broadcast */
    size_t  count;                               /* output elements */
} ew_plan;

/* Numpy-broadcasts the shapes of n inputs (indices in `which` name them in errors). */
cort_status *ew_broadcast_shape(const cort_node *node, size_t n, const int64_t *const *dims, const size_t *ranks,
                                const size_t *which, int64_t *out, size_t *out_rank);
void ew_plan_init(ew_plan *p, const int64_t *out_dims, size_t out_rank, size_t n_in, const int64_t *const *in_dims,
                  const size_t *in_ranks);
/* Runs fn over the whole plan (in parallel when `grain` > 0 and the output is large). */
cort_status *ew_plan_run(cort_kernel_ctx *ctx, const ew_plan *p, const void *const *in_data, const size_t *in_esize,
                         void *out, size_t out_esize, ew_row_fn fn, const ew_params *params, size_t grain);
/* Broadcasts inputs in[0..n) (their own shapes, or dims/ranks when given), allocates output 0 of
 * out_type and runs fn. `which` = input indices for messages (NULL: 0..n-1). */
cort_status *ew_run_nary(cort_kernel_ctx *ctx, size_t n, const cort_value *const *in, const int64_t *const *dims,
                         const size_t *ranks, const size_t *which, cort_type out_type, ew_row_fn fn,
                         const ew_params *params, size_t grain, cort_value **out);
/* Allocates output 0 shaped like `in` with out_type and maps fn over it in parallel. */
cort_status *ew_run_map(cort_kernel_ctx *ctx, const cort_value *in, cort_type out_type, ew_map_fn fn,
                        const ew_params *params, size_t grain);

/* Checks that input i is present and a tensor; returns it. */
cort_status *ew_input(cort_kernel_ctx *ctx, size_t i, const cort_value **out);
/* "unsupported element type X for input i 'name'" */
cort_status *ew_type_error(cort_kernel_ctx *ctx, size_t i, cort_type t);
/* Name of input i ("" when absent). */
const char *ew_input_name(const cort_node *node, size_t i);

/* ---- infer helpers ---- */
cort_status *ew_infer_same_type(cort_infer_ctx *ctx, cort_type t);   /* out0 = shape of in0, type t */

/* ---- per-type instantiation lists: X(sfx, T, UT, CT, LD, ST, ENUM) ----
 * T storage type, UT unsigned twin (wrapping integer arithmetic), CT compute type,
 * LD/ST convert between storage and compute type. */
#define EW_ID(x) (x)
#define EW_FLOAT_TYPES(X) \
    X(f32, float, float, float, EW_ID, EW_ID, FLOAT) \
    X(f64, double, double, double, EW_ID, EW_ID, DOUBLE) \
    X(f16, uint16_t, uint16_t, float, cort_f16_to_f32, cort_f32_to_f16, FLOAT16) \
    X(bf16, uint16_t, uint16_t, float, cort_bf16_to_f32, cort_f32_to_bf16, BFLOAT16)
#define EW_SINT_TYPES(X) \
    X(i8, int8_t, uint8_t, int8_t, EW_ID, EW_ID, INT8) \
    X(i16, int16_t, uint16_t, int16_t, EW_ID, EW_ID, INT16) \
    X(i32, int32_t, uint32_t, int32_t, EW_ID, EW_ID, INT32) \
    X(i64, int64_t, uint64_t, int64_t, EW_ID, EW_ID, INT64)
#define EW_UINT_TYPES(X) \
    X(u8, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, UINT8) \
    X(u16, uint16_t, uint16_t, uint16_t, EW_ID, EW_ID, UINT16) \
    X(u32, uint32_t, uint32_t, uint32_t, EW_ID, EW_ID, UINT32) \
    X(u64, uint64_t, uint64_t, uint64_t, EW_ID, EW_ID, UINT64)
#define EW_INT_TYPES(X) EW_SINT_TYPES(X) EW_UINT_TYPES(X)
#define EW_NUM_TYPES(X) EW_FLOAT_TYPES(X) EW_INT_TYPES(X)
#define EW_BOOL_TYPE(X) X(b, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, BOOL)

/* Table entry "[CORT_TYPE_E] = prefix_sfx," for designated initializers. */
#define EW_TBL_ENTRY(prefix, sfx, E) [CORT_TYPE_##E] = prefix##_##sfx,
#define EW_NTYPES 17

/* ---- row function templates ----
 * Binary: EXPR uses x, y (compute type) and P (const ew_params*). */
#define EW_DEFINE_BINARY_ROW(NAME, TA, TB, TO, CTA, CTB, LDA, LDB, ST, EXPR) \
    static int NAME(const ew_params *P, size_t n, void *out_, const void *const *in_, const ptrdiff_t *s_) { \
        TO *o = (TO *)out_; const TA *a = (const TA *)in_[0]; const TB *b = (const TB *)in_[1]; \
        ptrdiff_t sa = s_[0], sb = s_[1]; (void)P; \
        if (sa == 1 && sb == 1) { \
            for (size_t i = 0; i < n; i++) { CTA x = LDA(a[i]); CTB y = LDB(b[i]); o[i] = ST(EXPR); } \
        } else if (sa == 1 && sb == 0) { \
            CTB y = LDB(b[0]); \
            for (size_t i = 0; i < n; i++) { CTA x = LDA(a[i]); o[i] = ST(EXPR); } \
        } else if (sa == 0 && sb == 1) { \
            CTA x = LDA(a[0]); \
            for (size_t i = 0; i < n; i++) { CTB y = LDB(b[i]); o[i] = ST(EXPR); } \
        } else { \
            for (size_t i = 0; i < n; i++) { \
                CTA x = LDA(a[(ptrdiff_t)i * sa]); CTB y = LDB(b[(ptrdiff_t)i * sb]); o[i] = ST(EXPR); \
            } \
        } \
        return 0; \
    }

/* Unary map: EXPR uses x (compute type) and P. */
#define EW_DEFINE_MAP(NAME, TI, TO, CT, LD, ST, EXPR) \
    static void NAME(const ew_params *P, size_t n, void *out_, const void *in_) { \
        TO *o = (TO *)out_; const TI *a = (const TI *)in_; (void)P; \
        for (size_t i = 0; i < n; i++) { CT x = LD(a[i]); o[i] = ST(EXPR); } \
    }

/* ---- generators: one function per type of a class, and the matching table entries ----
 * Float maps/rows take an expression in x (and y) written with <tgmath.h> generic calls; integer
 * ones take a function-like macro EF(T, UT, x[, y]) so that wrapping arithmetic can name types. */
#define EW_MAPS_FLOAT(name, EXPR) \
    EW_DEFINE_MAP(name##_f32, float, float, float, EW_ID, EW_ID, EXPR) \
    EW_DEFINE_MAP(name##_f64, double, double, double, EW_ID, EW_ID, EXPR) \
    EW_DEFINE_MAP(name##_f16, uint16_t, uint16_t, float, cort_f16_to_f32, cort_f32_to_f16, EXPR) \
    EW_DEFINE_MAP(name##_bf16, uint16_t, uint16_t, float, cort_bf16_to_f32, cort_f32_to_bf16, EXPR)
#define EW_MAPS_FLOAT_TO(name, TO, EXPR) \
    EW_DEFINE_MAP(name##_f32, float, TO, float, EW_ID, EW_ID, EXPR) \
    EW_DEFINE_MAP(name##_f64, double, TO, double, EW_ID, EW_ID, EXPR) \
    EW_DEFINE_MAP(name##_f16, uint16_t, TO, float, cort_f16_to_f32, EW_ID, EXPR) \
    EW_DEFINE_MAP(name##_bf16, uint16_t, TO, float, cort_bf16_to_f32, EW_ID, EXPR)
#define EW_MAPS_SINT(name, EF) \
    EW_DEFINE_MAP(name##_i8, int8_t, int8_t, int8_t, EW_ID, EW_ID, EF(int8_t, uint8_t, x)) \
    EW_DEFINE_MAP(name##_i16, int16_t, int16_t, int16_t, EW_ID, EW_ID, EF(int16_t, uint16_t, x)) \
    EW_DEFINE_MAP(name##_i32, int32_t, int32_t, int32_t, EW_ID, EW_ID, EF(int32_t, uint32_t, x)) \
    EW_DEFINE_MAP(name##_i64, int64_t, int64_t, int64_t, EW_ID, EW_ID, EF(int64_t, uint64_t, x))
#define EW_MAPS_UINT(name, EF) \
    EW_DEFINE_MAP(name##_u8, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EF(uint8_t, uint8_t, x)) \
    EW_DEFINE_MAP(name##_u16, uint16_t, uint16_t, uint16_t, EW_ID, EW_ID, EF(uint16_t, uint16_t, x)) \
    EW_DEFINE_MAP(name##_u32, uint32_t, uint32_t, uint32_t, EW_ID, EW_ID, EF(uint32_t, uint32_t, x)) \
    EW_DEFINE_MAP(name##_u64, uint64_t, uint64_t, uint64_t, EW_ID, EW_ID, EF(uint64_t, uint64_t, x))

#define EW_ROWS_FLOAT(name, EXPR) \
    EW_DEFINE_BINARY_ROW(name##_f32, float, float, float, float, float, EW_ID, EW_ID, EW_ID, EXPR) \
    EW_DEFINE_BINARY_ROW(name##_f64, double, double, double, double, double, EW_ID, EW_ID, EW_ID, EXPR) \
    EW_DEFINE_BINARY_ROW(name##_f16, uint16_t, uint16_t, uint16_t, float, float, cort_f16_to_f32, cort_f16_to_f32, cort_f32_to_f16, EXPR) \
    EW_DEFINE_BINARY_ROW(name##_bf16, uint16_t, uint16_t, uint16_t, float, float, cort_bf16_to_f32, cort_bf16_to_f32, cort_f32_to_bf16, EXPR)
#define EW_ROWS_FLOAT_TO(name, TO, EXPR) \
    EW_DEFINE_BINARY_ROW(name##_f32, float, float, TO, float, float, EW_ID, EW_ID, EW_ID, EXPR) \
    EW_DEFINE_BINARY_ROW(name##_f64, double, double, TO, double, double, EW_ID, EW_ID, EW_ID, EXPR) \
    EW_DEFINE_BINARY_ROW(name##_f16, uint16_t, uint16_t, TO, float, float, cort_f16_to_f32, cort_f16_to_f32, EW_ID, EXPR) \
    EW_DEFINE_BINARY_ROW(name##_bf16, uint16_t, uint16_t, TO, float, float, cort_bf16_to_f32, cort_bf16_to_f32, EW_ID, EXPR)
#define EW_ROWS_SINT_TO(name, TO, EF) \
    EW_DEFINE_BINARY_ROW(name##_i8, int8_t, int8_t, TO, int8_t, int8_t, EW_ID, EW_ID, EW_ID, EF(int8_t, uint8_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_i16, int16_t, int16_t, TO, int16_t, int16_t, EW_ID, EW_ID, EW_ID, EF(int16_t, uint16_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_i32, int32_t, int32_t, TO, int32_t, int32_t, EW_ID, EW_ID, EW_ID, EF(int32_t, uint32_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_i64, int64_t, int64_t, TO, int64_t, int64_t, EW_ID, EW_ID, EW_ID, EF(int64_t, uint64_t, x, y))
#define EW_ROWS_UINT_TO(name, TO, EF) \
    EW_DEFINE_BINARY_ROW(name##_u8, uint8_t, uint8_t, TO, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, EF(uint8_t, uint8_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_u16, uint16_t, uint16_t, TO, uint16_t, uint16_t, EW_ID, EW_ID, EW_ID, EF(uint16_t, uint16_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_u32, uint32_t, uint32_t, TO, uint32_t, uint32_t, EW_ID, EW_ID, EW_ID, EF(uint32_t, uint32_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_u64, uint64_t, uint64_t, TO, uint64_t, uint64_t, EW_ID, EW_ID, EW_ID, EF(uint64_t, uint64_t, x, y))
/* Same-type integer rows (output type = input type). */
#define EW_ROWS_SINT(name, EF) \
    EW_DEFINE_BINARY_ROW(name##_i8, int8_t, int8_t, int8_t, int8_t, int8_t, EW_ID, EW_ID, EW_ID, EF(int8_t, uint8_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_i16, int16_t, int16_t, int16_t, int16_t, int16_t, EW_ID, EW_ID, EW_ID, EF(int16_t, uint16_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_i32, int32_t, int32_t, int32_t, int32_t, int32_t, EW_ID, EW_ID, EW_ID, EF(int32_t, uint32_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_i64, int64_t, int64_t, int64_t, int64_t, int64_t, EW_ID, EW_ID, EW_ID, EF(int64_t, uint64_t, x, y))
#define EW_ROWS_UINT(name, EF) \
    EW_DEFINE_BINARY_ROW(name##_u8, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, EF(uint8_t, uint8_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_u16, uint16_t, uint16_t, uint16_t, uint16_t, uint16_t, EW_ID, EW_ID, EW_ID, EF(uint16_t, uint16_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_u32, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, EW_ID, EW_ID, EW_ID, EF(uint32_t, uint32_t, x, y)) \
    EW_DEFINE_BINARY_ROW(name##_u64, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, EW_ID, EW_ID, EW_ID, EF(uint64_t, uint64_t, x, y))

#define EW_TBL_FLOAT(name) [CORT_TYPE_FLOAT] = name##_f32, [CORT_TYPE_DOUBLE] = name##_f64, \
    [CORT_TYPE_FLOAT16] = name##_f16, [CORT_TYPE_BFLOAT16] = name##_bf16,
#define EW_TBL_SINT(name) [CORT_TYPE_INT8] = name##_i8, [CORT_TYPE_INT16] = name##_i16, \
    [CORT_TYPE_INT32] = name##_i32, [CORT_TYPE_INT64] = name##_i64,
#define EW_TBL_UINT(name) [CORT_TYPE_UINT8] = name##_u8, [CORT_TYPE_UINT16] = name##_u16, \
    [CORT_TYPE_UINT32] = name##_u32, [CORT_TYPE_UINT64] = name##_u64,

/* ---- unary ops driven by a per-type table ---- */
typedef struct ew_unary_desc {
    const ew_map_fn *tbl;   /* EW_NTYPES entries, NULL = unsupported type */
    int simd;               /* EW_FU_* kernel for float32, -1 = use the table */
    int bool_out;           /* output is bool (IsNaN, IsInf) */
    int heavy;              /* transcendental: smaller parallel grain */
} ew_unary_desc;
/* Runs a unary op; ctx->state (optional) is an ew_params with the op's attributes. */
cort_status *ew_unary_run(cort_kernel_ctx *ctx, const ew_unary_desc *d);
/* Allocates an ew_params state holding attributes. */
cort_status *ew_state_new(void **state, float alpha, float beta, float gamma, int flag, int flag2);
void ew_state_free(void *state);
/* Calls P->k->un[P->simd_op] with P->alpha, P->beta. */
void ew_map_simd_f32(const ew_params *P, size_t n, void *out, const void *in);
cort_status *ew_infer_bool_same(cort_infer_ctx *ctx);

/* ---- binary ops driven by a per-type table (inputs 0 and 1 of one type) ---- */
typedef struct ew_binary_desc {
    const ew_row_fn *tbl;   /* by element type of input 0 */
    int simd;               /* EW_FB_* for float32 (ew_f32_bin_row), -1 = use the table */
    int bool_out;           /* output is bool (comparisons) */
    int heavy;
} ew_binary_desc;
/* Runs the op on inputs 0 and 1, with the legacy broadcast/axis attributes for opset < 7.
 * params (may be NULL) supplies op attributes. */
cort_status *ew_binary_run(cort_kernel_ctx *ctx, const ew_binary_desc *d, const ew_params *params);
/* Row over float32 with P->simd_op; falls back to scalar code for strided rows. */
int ew_f32_bin_row(const ew_params *P, size_t n, void *out, const void *const *in, const ptrdiff_t *s);
/* Shape of input 1 aligned for the opset < 7 `broadcast`/`axis` attributes (returns 0 if not in use). */
int ew_legacy_bcast_dims(const cort_node *node, int opset, size_t rank_a, const int64_t *dims_b, size_t rank_b,
                         int64_t *out, size_t *out_rank, cort_status **err);
cort_status *ew_infer_binary(cort_infer_ctx *ctx);        /* type of input 0 */
cort_status *ew_infer_binary_bool(cort_infer_ctx *ctx);   /* bool */

/* Float -> integer conversions without undefined behaviour: NaN -> 0, saturating to int64/uint64;
 * narrower targets then wrap like a C integer conversion. */
static inline int64_t ew_f2i64(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}
static inline uint64_t ew_f2u64(double v) {
    if (v != v) return 0;
    if (v >= 18446744073709551615.0) return UINT64_MAX;
    if (v >= 9223372036854775808.0) return (uint64_t)v;
    return (uint64_t)ew_f2i64(v);   /* negative values wrap like the integer conversion */
}
#endif
