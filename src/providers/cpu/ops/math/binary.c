/* Arithmetic binary operators: Add, Sub, Mul, Div, Pow, Mod, and the shared binary driver.
 * Integer arithmetic wraps (computed in uint64); integer division or modulo by zero gives 0
 * instead of trapping. */
#include <tgmath.h>
#include "elementwise.h"
#include "elementwise_ops.h"

/* ---- shared driver ---- */

int ew_legacy_bcast_dims(const cort_node *node, int opset, size_t rank_a, const int64_t *dims_b, size_t rank_b,
                         int64_t *out, size_t *out_rank, cort_status **err) {
    *err = NULL;
    if (opset >= 7 || !cort_attr_int(node, "broadcast", 0)) return 0;
    int64_t axis = (int64_t)rank_a - (int64_t)rank_b;
    if (cort_attr_get(node, "axis")) {
        axis = cort_attr_int(node, "axis", axis);
        if (axis < 0) axis += (int64_t)rank_a;
    }
    if (axis < 0 || rank_a > CORT_MAX_RANK || axis + (int64_t)rank_b > (int64_t)rank_a) {
        *err = cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 '%s' of rank %zu cannot be broadcast at axis %lld into input 0 of rank %zu",
                               ew_input_name(node, 1), rank_b, (long long)axis, rank_a);
        return 0;
    }
    for (size_t d = 0; d < rank_a; d++) out[d] = 1;
    for (size_t d = 0; d < rank_b; d++) out[(size_t)axis + d] = dims_b[d];
    *out_rank = rank_a;
    return 1;
}

int ew_f32_bin_row(const ew_params *P, size_t n, void *out, const void *const *in, const ptrdiff_t *s) {
    float *o = (float *)out;
    const float *a = (const float *)in[0], *b = (const float *)in[1];
    int op = P->simd_op;
    if (s[0] == 1 && s[1] == 1) P->k->bin[op][EW_VV](n, o, a, b);
    else if (s[0] == 1 && s[1] == 0) P->k->bin[op][EW_VS](n, o, a, b);
    else if (s[0] == 0 && s[1] == 1) P->k->bin[op][EW_SV](n, o, a, b);
    else {
        for (size_t i = 0; i < n; i++) {
            float x = a[(ptrdiff_t)i * s[0]], y = b[(ptrdiff_t)i * s[1]];
            P->k->bin[op][EW_VV](1, o + i, &x, &y);
        }
    }
    return 0;
}

cort_status *ew_binary_run(cort_kernel_ctx *ctx, const ew_binary_desc *d, const ew_params *params) {
    const cort_value *in[2];
    CORT_TRY(ew_input(ctx, 0, &in[0]));
    CORT_TRY(ew_input(ctx, 1, &in[1]));
    cort_type t = in[0]->type;
    ew_row_fn fn = ((unsigned)t < EW_NTYPES) ? d->tbl[t] : NULL;
    if (!fn) return ew_type_error(ctx, 0, t);
    if (in[1]->type != t)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s' has type %s, expected %s like input 0 '%s'",
                               ew_input_name(ctx->node, 1), cort_type_name(in[1]->type), cort_type_name(t),
                               ew_input_name(ctx->node, 0));
    ew_params p;
    if (params) p = *params;
    else memset(&p, 0, sizeof p);
    p.k = ew_f32_best();
    if (t == CORT_TYPE_FLOAT && d->simd >= 0) {
        p.simd_op = d->simd;
        fn = ew_f32_bin_row;
        /* its vector kernels read each element before writing the same index: a dead input of the
         * output's shape (the feature map of a squeeze-excitation Mul, a residual Add) is
         * overwritten instead of a cold new buffer */
        p.in_place = 1;
    }
    const int64_t *dims[2] = { in[0]->shape, in[1]->shape };
    size_t ranks[2] = { in[0]->rank, in[1]->rank };
    int64_t legacy[CORT_MAX_RANK];
    cort_status *err = NULL;
    if (ew_legacy_bcast_dims(ctx->node, ctx->opset, in[0]->rank, in[1]->shape, in[1]->rank, legacy, &ranks[1], &err))
        dims[1] = legacy;
    if (err) return err;
    return ew_run_nary(ctx, 2, in, dims, ranks, NULL, d->bool_out ? CORT_TYPE_BOOL : t, fn, &p,
                       d->heavy ? EW_GRAIN_HEAVY : EW_GRAIN_CHEAP, NULL);
}

static cort_status *ew_infer_binary_as(cort_infer_ctx *ctx, int bool_out) {
    if (ctx->n_outputs < 1 || ctx->n_inputs < 2) return NULL;
    const cort_tinfo *a = &ctx->inputs[0];
    cort_type t = bool_out ? CORT_TYPE_BOOL : a->elem;
    if (ctx->opset < 7 && cort_attr_int(ctx->node, "broadcast", 0)) {   /* output is shaped like A */
        cort_tinfo_tensor_shape(&ctx->outputs[0], t, a->dims, a->rank);
        return NULL;
    }
    CORT_TRY(cort_infer_broadcast(ctx));
    ctx->outputs[0].kind = CORT_VKIND_TENSOR;
    ctx->outputs[0].elem = t;
    return NULL;
}
cort_status *ew_infer_binary(cort_infer_ctx *ctx) { return ew_infer_binary_as(ctx, 0); }
cort_status *ew_infer_binary_bool(cort_infer_ctx *ctx) { return ew_infer_binary_as(ctx, 1); }

/* ---- Add, Sub, Mul, Div ---- */
#define EW_ADD_I(T, UT, x, y) ((T)((uint64_t)(x) + (uint64_t)(y)))
#define EW_SUB_I(T, UT, x, y) ((T)((uint64_t)(x) - (uint64_t)(y)))
#define EW_MUL_I(T, UT, x, y) ((T)((uint64_t)(x) * (uint64_t)(y)))
#define EW_DIV_S(T, UT, x, y) ((y) == 0 ? (T)0 : (y) == -1 ? (T)(0 - (uint64_t)(x)) : (T)((x) / (y)))
#define EW_DIV_U(T, UT, x, y) ((y) == 0 ? (T)0 : (T)((x) / (y)))
EW_ROWS_FLOAT(add, x + y)
EW_ROWS_SINT(add, EW_ADD_I)
EW_ROWS_UINT(add, EW_ADD_I)
EW_ROWS_FLOAT(sub, x - y)
EW_ROWS_SINT(sub, EW_SUB_I)
EW_ROWS_UINT(sub, EW_SUB_I)
EW_ROWS_FLOAT(mul, x * y)
EW_ROWS_SINT(mul, EW_MUL_I)
EW_ROWS_UINT(mul, EW_MUL_I)
EW_ROWS_FLOAT(div, x / y)
EW_ROWS_SINT(div, EW_DIV_S)
EW_ROWS_UINT(div, EW_DIV_U)

#define EW_TBL_NUM(name) EW_TBL_FLOAT(name) EW_TBL_SINT(name) EW_TBL_UINT(name)
static const ew_row_fn add_tbl[EW_NTYPES] = { EW_TBL_NUM(add) };
static const ew_row_fn sub_tbl[EW_NTYPES] = { EW_TBL_NUM(sub) };
static const ew_row_fn mul_tbl[EW_NTYPES] = { EW_TBL_NUM(mul) };
static const ew_row_fn div_tbl[EW_NTYPES] = { EW_TBL_NUM(div) };

#define EW_BIN(var, NAME, MINV, TBL, SIMD) \
    static const ew_binary_desc desc_##var = { TBL, SIMD, 0, 0 }; \
    static cort_status *run_##var(cort_kernel_ctx *ctx) { return ew_binary_run(ctx, &desc_##var, NULL); } \
    const cort_op_def ew_op_##var = { .name = NAME, .domain = "", .min_opset = MINV, .max_opset = CORT_OPSET_MAX, \
    .types = CORT_TMASK_NUMERIC, .infer = ew_infer_binary, .run = run_##var };
EW_BIN(add, "Add", 1, add_tbl, EW_FB_ADD)
EW_BIN(sub, "Sub", 1, sub_tbl, EW_FB_SUB)
EW_BIN(mul, "Mul", 1, mul_tbl, EW_FB_MUL)
EW_BIN(div, "Div", 1, div_tbl, EW_FB_DIV)

/* ---- Mod: fmod = 1 truncates (C fmod / %), fmod = 0 takes the divisor's sign (Python) ---- */
#define EW_FMOD_S(T, UT, x, y) ((y) == 0 || (y) == -1 ? (T)0 : (T)((x) % (y)))
#define EW_FMOD_U(T, UT, x, y) ((y) == 0 ? (T)0 : (T)((x) % (y)))
#define EW_PMOD_S(T, UT, x, y) ((T)ew_pmod_i64((int64_t)(x), (int64_t)(y)))
static inline int64_t ew_pmod_i64(int64_t x, int64_t y) {
    if (y == 0 || y == -1) return 0;
    int64_t r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
}
static inline double ew_pmod_d(double x, double y) {
    double r = fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
}
EW_ROWS_FLOAT(fmod, fmod(x, y))
EW_ROWS_SINT(fmod, EW_FMOD_S)
EW_ROWS_UINT(fmod, EW_FMOD_U)
EW_ROWS_FLOAT(pmod, ew_pmod_d(x, y))
EW_ROWS_SINT(pmod, EW_PMOD_S)
static const ew_row_fn fmod_tbl[EW_NTYPES] = { EW_TBL_NUM(fmod) };
static const ew_row_fn pmod_tbl[EW_NTYPES] = { EW_TBL_FLOAT(pmod) EW_TBL_SINT(pmod) EW_TBL_UINT(fmod) };
static const ew_binary_desc fmod_desc = { fmod_tbl, -1, 0, 0 };
static const ew_binary_desc pmod_desc = { pmod_tbl, -1, 0, 0 };

static cort_status *init_mod(const cort_node *n, void **st) {
    int64_t f = cort_attr_int(n, "fmod", 0);
    if (f != 0 && f != 1)
        return cort_node_error(n, CORT_ERROR_INVALID_MODEL, "attribute 'fmod' must be 0 or 1, got %lld", (long long)f);
    return ew_state_new(st, 0, 0, 0, (int)f, 0);
}
static cort_status *run_mod(cort_kernel_ctx *ctx) {
    const ew_params *s = (const ew_params *)ctx->state;
    return ew_binary_run(ctx, (s && s->flag) ? &fmod_desc : &pmod_desc, NULL);
}
const cort_op_def ew_op_mod = { .name = "Mod", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .init = init_mod, .free_state = ew_state_free, .infer = ew_infer_binary,
    .run = run_mod };

/* ---- Pow: base type T, exponent type T1 (may differ); output type T ---- */
static inline int64_t ew_ipow(int64_t x, int64_t e) {
    if (e < 0) return x == 1 ? 1 : (x == -1 ? ((e & 1) ? -1 : 1) : 0);
    uint64_t r = 1, b = (uint64_t)x;
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}

/* same floating type for base and exponent */
EW_ROWS_FLOAT(powf, pow(x, y))
static int pow_f32_row(const ew_params *P, size_t n, void *out, const void *const *in, const ptrdiff_t *s) {
    const float *a = (const float *)in[0], *b = (const float *)in[1];
    float *o = (float *)out;
    if (s[0] == 1 && s[1] == 0 && b[0] == 2.0f) {   /* x^2 is the common case (variance, norms) */
        for (size_t i = 0; i < n; i++) o[i] = a[i] * a[i];
        return 0;
    }
    return powf_f32(P, n, out, in, s);
}
static const ew_row_fn powf_tbl[EW_NTYPES] = { [CORT_TYPE_FLOAT] = pow_f32_row, [CORT_TYPE_DOUBLE] = powf_f64,
    [CORT_TYPE_FLOAT16] = powf_f16, [CORT_TYPE_BFLOAT16] = powf_bf16 };

/* mixed types: P->flag = base type, P->flag2 = exponent type */
static int pow_mixed_row(const ew_params *P, size_t n, void *out, const void *const *in, const ptrdiff_t *s) {
    cort_type tb = (cort_type)P->flag, te = (cort_type)P->flag2;
    const void *a = in[0], *b = in[1];
    for (size_t i = 0; i < n; i++) {
        size_t ia = (size_t)((ptrdiff_t)i * s[0]), ib = (size_t)((ptrdiff_t)i * s[1]);
        if (cort_type_is_float(tb)) {
            cort_store_f64(out, tb, i, pow(cort_load_f64(a, tb, ia), cort_load_f64(b, te, ib)));
        } else if (cort_type_is_float(te)) {
            double r = pow(cort_load_f64(a, tb, ia), cort_load_f64(b, te, ib));
            cort_store_i64(out, tb, i, tb == CORT_TYPE_UINT64 ? (int64_t)ew_f2u64(r) : ew_f2i64(r));
        } else {
            int64_t e = cort_load_i64(b, te, ib);
            if (te == CORT_TYPE_UINT64 && e < 0) e = INT64_MAX & ~(int64_t)1;   /* huge even exponent */
            cort_store_i64(out, tb, i, ew_ipow(cort_load_i64(a, tb, ia), e));
        }
    }
    return 0;
}

static cort_status *run_pow(cort_kernel_ctx *ctx) {
    const cort_value *in[2];
    CORT_TRY(ew_input(ctx, 0, &in[0]));
    CORT_TRY(ew_input(ctx, 1, &in[1]));
    cort_type tb = in[0]->type, te = in[1]->type;
    if (!cort_type_is_float(tb) && !cort_type_is_int(tb)) return ew_type_error(ctx, 0, tb);
    if (!cort_type_is_float(te) && !cort_type_is_int(te)) return ew_type_error(ctx, 1, te);
    if (tb == te && cort_type_is_float(tb)) {
        static const ew_binary_desc d = { powf_tbl, -1, 0, 1 };
        return ew_binary_run(ctx, &d, NULL);
    }
    ew_params p;
    memset(&p, 0, sizeof p);
    p.flag = (int)tb;
    p.flag2 = (int)te;
    const int64_t *dims[2] = { in[0]->shape, in[1]->shape };
    size_t ranks[2] = { in[0]->rank, in[1]->rank };
    int64_t legacy[CORT_MAX_RANK];
    cort_status *err = NULL;
    if (ew_legacy_bcast_dims(ctx->node, ctx->opset, in[0]->rank, in[1]->shape, in[1]->rank, legacy, &ranks[1], &err))
        dims[1] = legacy;
    if (err) return err;
    return ew_run_nary(ctx, 2, in, dims, ranks, NULL, tb, pow_mixed_row, &p, EW_GRAIN_HEAVY, NULL);
}
const cort_op_def ew_op_pow = { .name = "Pow", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = ew_infer_binary, .run = run_pow };
