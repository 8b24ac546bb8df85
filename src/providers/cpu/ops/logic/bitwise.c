/* Bit and logic operators: BitShift, BitwiseAnd/Or/Xor (integers), And/Or/Xor (bool). */
#include <string.h>
#include "../math/elementwise.h"
#include "../math/elementwise_ops.h"

/* ---- BitShift (unsigned): shifting by the bit width or more gives 0 ---- */
#define EW_SHL_U(T, UT, x, y) ((y) >= sizeof(T) * 8 ? (T)0 : (T)((uint64_t)(x) << (y)))
#define EW_SHR_U(T, UT, x, y) ((y) >= sizeof(T) * 8 ? (T)0 : (T)((x) >> (y)))
EW_ROWS_UINT(shl, EW_SHL_U)
EW_ROWS_UINT(shr, EW_SHR_U)
static const ew_row_fn shl_tbl[EW_NTYPES] = { EW_TBL_UINT(shl) };
static const ew_row_fn shr_tbl[EW_NTYPES] = { EW_TBL_UINT(shr) };
static const ew_binary_desc shl_desc = { shl_tbl, -1, 0, 0 };
static const ew_binary_desc shr_desc = { shr_tbl, -1, 0, 0 };

static cort_status *init_bitshift(const cort_node *n, void **st) {
    const char *dir = cort_attr_str(n, "direction", NULL);
    if (!dir)
        return cort_node_error(n, CORT_ERROR_INVALID_MODEL, "required attribute 'direction' is missing");
    int left = !strcmp(dir, "LEFT");
    if (!left && strcmp(dir, "RIGHT"))
        return cort_node_error(n, CORT_ERROR_INVALID_MODEL, "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"%s\"", dir);
    return ew_state_new(st, 0, 0, 0, left, 0);
}
static cort_status *run_bitshift(cort_kernel_ctx *ctx) {
    const ew_params *s = (const ew_params *)ctx->state;
    return ew_binary_run(ctx, (s && s->flag) ? &shl_desc : &shr_desc, NULL);
}
const cort_op_def ew_op_bitshift = { .name = "BitShift", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_UINTS, .init = init_bitshift, .free_state = ew_state_free,
    .infer = ew_infer_binary, .run = run_bitshift };

/* ---- BitwiseAnd/Or/Xor (all integer types) and And/Or/Xor (bool) ---- */
#define EW_BAND(T, UT, x, y) ((T)((x) & (y)))
#define EW_BOR(T, UT, x, y) ((T)((x) | (y)))
#define EW_BXOR(T, UT, x, y) ((T)((x) ^ (y)))
EW_ROWS_SINT(band, EW_BAND)
EW_ROWS_UINT(band, EW_BAND)
EW_ROWS_SINT(bor, EW_BOR)
EW_ROWS_UINT(bor, EW_BOR)
EW_ROWS_SINT(bxor, EW_BXOR)
EW_ROWS_UINT(bxor, EW_BXOR)
static const ew_row_fn band_tbl[EW_NTYPES] = { EW_TBL_SINT(band) EW_TBL_UINT(band) };
static const ew_row_fn bor_tbl[EW_NTYPES] = { EW_TBL_SINT(bor) EW_TBL_UINT(bor) };
static const ew_row_fn bxor_tbl[EW_NTYPES] = { EW_TBL_SINT(bxor) EW_TBL_UINT(bxor) };

/* bool inputs may hold any nonzero byte for true */
EW_DEFINE_BINARY_ROW(land_b, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, (uint8_t)((x != 0) & (y != 0)))
EW_DEFINE_BINARY_ROW(lor_b, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, (uint8_t)((x != 0) | (y != 0)))
EW_DEFINE_BINARY_ROW(lxor_b, uint8_t, uint8_t, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, EW_ID, (uint8_t)((x != 0) ^ (y != 0)))
static const ew_row_fn land_tbl[EW_NTYPES] = { [CORT_TYPE_BOOL] = land_b };
static const ew_row_fn lor_tbl[EW_NTYPES] = { [CORT_TYPE_BOOL] = lor_b };
static const ew_row_fn lxor_tbl[EW_NTYPES] = { [CORT_TYPE_BOOL] = lxor_b };

#define EW_BIT(var, NAME, MINV, MASK, TBL) \
    static const ew_binary_desc desc_##var = { TBL, -1, 0, 0 }; \
    static cort_status *run_##var(cort_kernel_ctx *ctx) { return ew_binary_run(ctx, &desc_##var, NULL); } \
    const cort_op_def ew_op_##var = { .name = NAME, .domain = "", .min_opset = MINV, .max_opset = CORT_OPSET_MAX, \
    .types = MASK, .infer = ew_infer_binary, .run = run_##var };
EW_BIT(bitwise_and, "BitwiseAnd", 18, CORT_TMASK_INTS, band_tbl)
EW_BIT(bitwise_or, "BitwiseOr", 18, CORT_TMASK_INTS, bor_tbl)
EW_BIT(bitwise_xor, "BitwiseXor", 18, CORT_TMASK_INTS, bxor_tbl)
EW_BIT(and, "And", 1, CORT_TBIT(CORT_TYPE_BOOL), land_tbl)
EW_BIT(or, "Or", 1, CORT_TBIT(CORT_TYPE_BOOL), lor_tbl)
EW_BIT(xor, "Xor", 1, CORT_TBIT(CORT_TYPE_BOOL), lxor_tbl)
