/* Comparisons: Equal, Greater, GreaterOrEqual, Less, LessOrEqual. Output bool; Equal also
 * compares bool and string tensors. */
#include <string.h>
#include "../math/elementwise.h"
#include "../math/elementwise_ops.h"

#define EW_CMP_OPS(name, OP) \
    EW_ROWS_FLOAT_TO(name, uint8_t, (uint8_t)(x OP y)) \
    EW_ROWS_SINT_TO(name, uint8_t, EW_CMP_##name) \
    EW_ROWS_UINT_TO(name, uint8_t, EW_CMP_##name) \
    static const ew_row_fn name##_tbl[EW_NTYPES] = { EW_TBL_FLOAT(name) EW_TBL_SINT(name) EW_TBL_UINT(name) \
                                                    [CORT_TYPE_BOOL] = name##_b, [CORT_TYPE_STRING] = name##_s };

#define EW_CMP_eq(T, UT, x, y) ((uint8_t)((x) == (y)))
#define EW_CMP_gt(T, UT, x, y) ((uint8_t)((x) > (y)))
#define EW_CMP_ge(T, UT, x, y) ((uint8_t)((x) >= (y)))
#define EW_CMP_lt(T, UT, x, y) ((uint8_t)((x) < (y)))
#define EW_CMP_le(T, UT, x, y) ((uint8_t)((x) <= (y)))

/* bool: normalized so any nonzero byte is true */
EW_DEFINE_BINARY_ROW(eq_b, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, (uint8_t)((x != 0) == (y != 0)))
EW_DEFINE_BINARY_ROW(gt_b, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, (uint8_t)((x != 0) > (y != 0)))
EW_DEFINE_BINARY_ROW(ge_b, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, (uint8_t)((x != 0) >= (y != 0)))
EW_DEFINE_BINARY_ROW(lt_b, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, (uint8_t)((x != 0) < (y != 0)))
EW_DEFINE_BINARY_ROW(le_b, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, (uint8_t)((x != 0) <= (y != 0)))

/* strings: byte-wise (UTF-8 code point order); NULL elements read as "" */
static inline int ew_strcmp(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }
#define EW_STR_ROW(name, OP) \
    EW_DEFINE_BINARY_ROW(name##_s, char *, char *, uint8_t, const char *, const char *, EW_ID, EW_ID, EW_ID, \
                         (uint8_t)(ew_strcmp(x, y) OP 0))
EW_STR_ROW(eq, ==)
EW_STR_ROW(gt, >)
EW_STR_ROW(ge, >=)
EW_STR_ROW(lt, <)
EW_STR_ROW(le, <=)

EW_CMP_OPS(eq, ==)
EW_CMP_OPS(gt, >)
EW_CMP_OPS(ge, >=)
EW_CMP_OPS(lt, <)
EW_CMP_OPS(le, <=)

#define EW_CMP(var, NAME, MINV, TBL) \
    static const ew_binary_desc desc_##var = { TBL, -1, 1, 0 }; \
    static cort_status *run_##var(cort_kernel_ctx *ctx) { return ew_binary_run(ctx, &desc_##var, NULL); } \
    const cort_op_def ew_op_##var = { .name = NAME, .domain = "", .min_opset = MINV, .max_opset = CORT_OPSET_MAX, \
    .types = CORT_TMASK_NUMERIC | CORT_TBIT(CORT_TYPE_BOOL) | CORT_TBIT(CORT_TYPE_STRING), \
    .infer = ew_infer_binary_bool, .run = run_##var };
EW_CMP(equal, "Equal", 1, eq_tbl)
EW_CMP(greater, "Greater", 1, gt_tbl)
EW_CMP(greater_or_equal, "GreaterOrEqual", 12, ge_tbl)
EW_CMP(less, "Less", 1, lt_tbl)
EW_CMP(less_or_equal, "LessOrEqual", 12, le_tbl)
