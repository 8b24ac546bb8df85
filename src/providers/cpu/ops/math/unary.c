/* Unary math operators (Abs ... Atanh, Erf, Sign, IsNaN, IsInf, Not, BitwiseNot) and the shared
 * unary driver. float16/bfloat16 compute through float. */
#include <tgmath.h>
#include "elementwise.h"
#include "elementwise_ops.h"

/* ---- shared driver ---- */

cort_status *ew_state_new(void **state, float alpha, float beta, float gamma, int flag, int flag2) {
    ew_params *p = (ew_params *)cort_calloc(1, sizeof *p);
    if (!p) return cort_error_oom();
    p->alpha = alpha; p->beta = beta; p->gamma = gamma; p->flag = flag; p->flag2 = flag2;
    *state = p;
    return NULL;
}

void ew_state_free(void *state) { cort_free(state); }

void ew_map_simd_f32(const ew_params *P, size_t n, void *out, const void *in) {
    P->k->un[P->simd_op](n, (float *)out, (const float *)in, P->alpha, P->beta);
}

cort_status *ew_unary_run(cort_kernel_ctx *ctx, const ew_unary_desc *d) {
    const cort_value *x = NULL;
    CORT_TRY(ew_input(ctx, 0, &x));
    ew_map_fn fn = ((unsigned)x->type < EW_NTYPES) ? d->tbl[x->type] : NULL;
    if (!fn) return ew_type_error(ctx, 0, x->type);
    ew_params p;
    if (ctx->state) p = *(const ew_params *)ctx->state;
    else memset(&p, 0, sizeof p);
    p.k = ew_f32_best();
    if (x->type == CORT_TYPE_FLOAT && d->simd >= 0) {
        p.simd_op = d->simd;
        fn = ew_map_simd_f32;
        p.in_place = 1;   /* each vector is loaded before the same index is stored */
    }
    return ew_run_map(ctx, x, d->bool_out ? CORT_TYPE_BOOL : x->type, fn, &p,
                      d->heavy ? EW_GRAIN_HEAVY : EW_GRAIN_CHEAP);
}

cort_status *ew_infer_bool_same(cort_infer_ctx *ctx) { return ew_infer_same_type(ctx, CORT_TYPE_BOOL); }

/* ---- kernels ---- */

#define EW_ABS_S(T, UT, x) ((x) < 0 ? (T)((UT)0 - (UT)(x)) : (x))
#define EW_SELF(T, UT, x) (x)
#define EW_NEG_I(T, UT, x) ((T)((UT)0 - (UT)(x)))
#define EW_SIGN_I(T, UT, x) ((T)(((x) > 0) - ((x) < 0)))
#define EW_ERF_I(T, UT, x) ((T)ew_f2i64(erf((double)(x))))
#define EW_NOT_I(T, UT, x) ((T)~(x))

EW_MAPS_FLOAT(abs, fabs(x))
EW_MAPS_SINT(abs, EW_ABS_S)
EW_MAPS_UINT(abs, EW_SELF)
EW_MAPS_FLOAT(neg, -x)
EW_MAPS_SINT(neg, EW_NEG_I)
EW_MAPS_UINT(neg, EW_NEG_I)
EW_MAPS_FLOAT(floor, floor(x))
EW_MAPS_FLOAT(ceil, ceil(x))
EW_MAPS_FLOAT(round, rint(x))   /* half to even in the default rounding mode */
EW_MAPS_FLOAT(sqrt, sqrt(x))
EW_MAPS_FLOAT(recip, 1 / x)
EW_MAPS_FLOAT(exp, exp(x))
EW_MAPS_FLOAT(log, log(x))
EW_MAPS_FLOAT(sin, sin(x))
EW_MAPS_FLOAT(cos, cos(x))
EW_MAPS_FLOAT(tan, tan(x))
EW_MAPS_FLOAT(asin, asin(x))
EW_MAPS_FLOAT(acos, acos(x))
EW_MAPS_FLOAT(atan, atan(x))
EW_MAPS_FLOAT(sinh, sinh(x))
EW_MAPS_FLOAT(cosh, cosh(x))
EW_MAPS_FLOAT(asinh, asinh(x))
EW_MAPS_FLOAT(acosh, acosh(x))
EW_MAPS_FLOAT(atanh, atanh(x))
EW_MAPS_FLOAT(erf, erf(x))
EW_MAPS_SINT(erf, EW_ERF_I)
EW_MAPS_UINT(erf, EW_ERF_I)
EW_MAPS_FLOAT(sign, (x > 0 ? 1 : (x < 0 ? -1 : x)))   /* keeps 0, -0 and NaN */
EW_MAPS_SINT(sign, EW_SIGN_I)
#define EW_SIGN_U(T, UT, x) ((T)((x) != 0))
EW_MAPS_UINT(sign, EW_SIGN_U)
EW_MAPS_FLOAT_TO(isnan, uint8_t, (uint8_t)(x != x))
EW_MAPS_FLOAT_TO(isinf, uint8_t, (uint8_t)((P->flag && x == INFINITY) || (P->flag2 && x == -INFINITY)))
EW_DEFINE_MAP(not_b, uint8_t, uint8_t, uint8_t, EW_ID, EW_ID, (uint8_t)!x)
EW_MAPS_SINT(bnot, EW_NOT_I)
EW_MAPS_UINT(bnot, EW_NOT_I)

#define EW_TBL_NUM(name) EW_TBL_FLOAT(name) EW_TBL_SINT(name) EW_TBL_UINT(name)
static const ew_map_fn abs_tbl[EW_NTYPES] = { EW_TBL_NUM(abs) };
static const ew_map_fn neg_tbl[EW_NTYPES] = { EW_TBL_NUM(neg) };
static const ew_map_fn erf_tbl[EW_NTYPES] = { EW_TBL_NUM(erf) };
static const ew_map_fn sign_tbl[EW_NTYPES] = { EW_TBL_NUM(sign) };
static const ew_map_fn not_tbl[EW_NTYPES] = { [CORT_TYPE_BOOL] = not_b };
static const ew_map_fn bnot_tbl[EW_NTYPES] = { EW_TBL_SINT(bnot) EW_TBL_UINT(bnot) };
#define EW_FTBL(name) static const ew_map_fn name##_tbl[EW_NTYPES] = { EW_TBL_FLOAT(name) };
EW_FTBL(floor) EW_FTBL(ceil) EW_FTBL(round) EW_FTBL(sqrt) EW_FTBL(recip) EW_FTBL(exp) EW_FTBL(log)
EW_FTBL(sin) EW_FTBL(cos) EW_FTBL(tan) EW_FTBL(asin) EW_FTBL(acos) EW_FTBL(atan) EW_FTBL(sinh) EW_FTBL(cosh)
EW_FTBL(asinh) EW_FTBL(acosh) EW_FTBL(atanh) EW_FTBL(isnan) EW_FTBL(isinf)

static cort_status *init_isinf(const cort_node *node, void **state) {
    return ew_state_new(state, 0, 0, 0, (int)cort_attr_int(node, "detect_positive", 1),
                        (int)cort_attr_int(node, "detect_negative", 1));
}

/* EW_UNARY(var, "Name", min_opset, type mask, init, table, simd kernel, bool out, heavy, infer) */
#define EW_UNARY(var, NAME, MINV, MASK, INIT, TBL, SIMD, BOOLOUT, HEAVY, INFER) \
    static const ew_unary_desc desc_##var = { TBL, SIMD, BOOLOUT, HEAVY }; \
    static cort_status *run_##var(cort_kernel_ctx *ctx) { return ew_unary_run(ctx, &desc_##var); } \
    const cort_op_def ew_op_##var = { .name = NAME, .domain = "", .min_opset = MINV, .max_opset = CORT_OPSET_MAX, \
    .types = MASK, .init = INIT, .free_state = ew_state_free, .infer = INFER, .run = run_##var };

#define F CORT_TMASK_FLOATS
#define N CORT_TMASK_NUMERIC
EW_UNARY(abs, "Abs", 1, N, NULL, abs_tbl, EW_FU_ABS, 0, 0, cort_infer_same)
EW_UNARY(neg, "Neg", 1, N, NULL, neg_tbl, EW_FU_NEG, 0, 0, cort_infer_same)
EW_UNARY(floor, "Floor", 1, F, NULL, floor_tbl, -1, 0, 0, cort_infer_same)
EW_UNARY(ceil, "Ceil", 1, F, NULL, ceil_tbl, -1, 0, 0, cort_infer_same)
EW_UNARY(round, "Round", 11, F, NULL, round_tbl, -1, 0, 0, cort_infer_same)
EW_UNARY(sqrt, "Sqrt", 1, F, NULL, sqrt_tbl, -1, 0, 0, cort_infer_same)
EW_UNARY(reciprocal, "Reciprocal", 1, F, NULL, recip_tbl, -1, 0, 0, cort_infer_same)
EW_UNARY(exp, "Exp", 1, F, NULL, exp_tbl, EW_FU_EXP, 0, 1, cort_infer_same)
EW_UNARY(log, "Log", 1, F, NULL, log_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(sin, "Sin", 7, F, NULL, sin_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(cos, "Cos", 7, F, NULL, cos_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(tan, "Tan", 7, F, NULL, tan_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(asin, "Asin", 7, F, NULL, asin_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(acos, "Acos", 7, F, NULL, acos_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(atan, "Atan", 7, F, NULL, atan_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(sinh, "Sinh", 9, F, NULL, sinh_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(cosh, "Cosh", 9, F, NULL, cosh_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(asinh, "Asinh", 9, F, NULL, asinh_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(acosh, "Acosh", 9, F, NULL, acosh_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(atanh, "Atanh", 9, F, NULL, atanh_tbl, -1, 0, 1, cort_infer_same)
EW_UNARY(erf, "Erf", 9, N, NULL, erf_tbl, EW_FU_ERF, 0, 1, cort_infer_same)
EW_UNARY(sign, "Sign", 9, N, NULL, sign_tbl, -1, 0, 0, cort_infer_same)
EW_UNARY(isnan, "IsNaN", 9, F, NULL, isnan_tbl, -1, 1, 0, ew_infer_bool_same)
EW_UNARY(isinf, "IsInf", 10, F, init_isinf, isinf_tbl, -1, 1, 0, ew_infer_bool_same)
EW_UNARY(not, "Not", 1, CORT_TBIT(CORT_TYPE_BOOL), NULL, not_tbl, -1, 0, 0, cort_infer_same)
EW_UNARY(bitwise_not, "BitwiseNot", 18, CORT_TMASK_INTS, NULL, bnot_tbl, -1, 0, 0, cort_infer_same)
