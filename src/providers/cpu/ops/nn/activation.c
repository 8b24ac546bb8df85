/* Activation operators: Relu, LeakyRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid, HardSwish, Tanh,
 * Softplus, Softsign, ThresholdedRelu, Shrink, Mish, Clip, PRelu. float32 Relu/LeakyRelu/Sigmoid/
 * Tanh/HardSigmoid/HardSwish/Clip run the SIMD kernels of kernels/elementwise.c. */
#include <float.h>
#include <tgmath.h>
#include "../math/elementwise.h"
#include "../math/elementwise_ops.h"

/* ---- map kernels (x in the compute type, P = attributes: alpha, beta, gamma) ---- */
#define EW_RELU_S(T, UT, x) ((x) > 0 ? (x) : 0)
#define EW_SHRINK_I(T, UT, x) \
    ((T)((double)(x) < -(double)P->alpha ? ew_f2i64((double)(x) + P->beta) \
                                         : ((double)(x) > P->alpha ? ew_f2i64((double)(x) - P->beta) : 0)))

EW_MAPS_FLOAT(relu, (x > 0 ? x : 0))
EW_MAPS_SINT(relu, EW_RELU_S)
EW_MAPS_FLOAT(leaky, (x < 0 ? x * P->alpha : x))
EW_MAPS_FLOAT(elu, (x < 0 ? P->alpha * expm1(x) : x))
EW_MAPS_FLOAT(selu, (x > 0 ? P->gamma * x : P->gamma * P->alpha * expm1(x)))
EW_MAPS_FLOAT(celu, (x > 0 ? x : P->alpha * expm1(x / P->alpha)))
EW_MAPS_FLOAT(sigmoid, (x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x))))
EW_MAPS_FLOAT(hsig, fmax(0, fmin(1, P->alpha * x + P->beta)))
EW_MAPS_FLOAT(hswish, x * fmax(0, fmin(1, x / 6 + 0.5f)))
EW_MAPS_FLOAT(tanh, tanh(x))
EW_MAPS_FLOAT(softplus, (x > 0 ? x + log1p(exp(-x)) : log1p(exp(x))))
EW_MAPS_FLOAT(softsign, x / (1 + fabs(x)))
EW_MAPS_FLOAT(trelu, (x > P->alpha ? x : 0))
EW_MAPS_FLOAT(shrink, (x < -P->alpha ? x + P->beta : (x > P->alpha ? x - P->beta : 0)))
EW_MAPS_SINT(shrink, EW_SHRINK_I)
EW_MAPS_UINT(shrink, EW_SHRINK_I)
EW_MAPS_FLOAT(mish, x * tanh(x > 0 ? x + log1p(exp(-x)) : log1p(exp(x))))

#define EW_FTBL(name) static const ew_map_fn name##_tbl[EW_NTYPES] = { EW_TBL_FLOAT(name) };
EW_FTBL(leaky) EW_FTBL(elu) EW_FTBL(selu) EW_FTBL(celu) EW_FTBL(sigmoid) EW_FTBL(hsig) EW_FTBL(hswish)
EW_FTBL(tanh) EW_FTBL(softplus) EW_FTBL(softsign) EW_FTBL(trelu) EW_FTBL(mish)
static const ew_map_fn relu_tbl[EW_NTYPES] = { EW_TBL_FLOAT(relu) EW_TBL_SINT(relu) };
static const ew_map_fn shrink_tbl[EW_NTYPES] = { EW_TBL_FLOAT(shrink) EW_TBL_SINT(shrink) EW_TBL_UINT(shrink) };

/* ---- attribute parsing ---- */
static cort_status *init_leaky(const cort_node *n, void **st) {
    return ew_state_new(st, cort_attr_float(n, "alpha", 0.01f), 0, 0, 0, 0);
}
static cort_status *init_alpha1(const cort_node *n, void **st) {   /* Elu, Celu, ThresholdedRelu */
    return ew_state_new(st, cort_attr_float(n, "alpha", 1.0f), 0, 0, 0, 0);
}
static cort_status *init_celu(const cort_node *n, void **st) {
    float alpha = cort_attr_float(n, "alpha", 1.0f);
    if (alpha == 0)
        return cort_node_error(n, CORT_ERROR_INVALID_MODEL, "attribute 'alpha' must be nonzero (got %g)", (double)alpha);
    return ew_state_new(st, alpha, 0, 0, 0, 0);
}
static cort_status *init_selu(const cort_node *n, void **st) {
    return ew_state_new(st, cort_attr_float(n, "alpha", 1.67326319217681884765625f), 0,
                        cort_attr_float(n, "gamma", 1.05070102214813232421875f), 0, 0);
}
static cort_status *init_hsig(const cort_node *n, void **st) {
    return ew_state_new(st, cort_attr_float(n, "alpha", 0.2f), cort_attr_float(n, "beta", 0.5f), 0, 0, 0);
}
static cort_status *init_hswish(const cort_node *n, void **st) {   /* the SIMD kernel reads alpha/beta */
    return ew_state_new(st, 1.0f / 6, 0.5f, 0, 0, 0);
}
static cort_status *init_shrink(const cort_node *n, void **st) {
    return ew_state_new(st, cort_attr_float(n, "lambd", 0.5f), cort_attr_float(n, "bias", 0.0f), 0, 0, 0);
}

#define EW_ACT(var, NAME, MINV, MASK, INIT, TBL, SIMD, HEAVY) \
    static const ew_unary_desc desc_##var = { TBL, SIMD, 0, HEAVY }; \
    static cort_status *run_##var(cort_kernel_ctx *ctx) { return ew_unary_run(ctx, &desc_##var); } \
    const cort_op_def ew_op_##var = { .name = NAME, .domain = "", .min_opset = MINV, .max_opset = CORT_OPSET_MAX, \
    .types = MASK, .init = INIT, .free_state = ew_state_free, .infer = cort_infer_same, .run = run_##var };

#define F CORT_TMASK_FLOATS
EW_ACT(relu, "Relu", 1, F | CORT_TMASK_SINTS, NULL, relu_tbl, EW_FU_RELU, 0)
EW_ACT(leaky_relu, "LeakyRelu", 1, F, init_leaky, leaky_tbl, EW_FU_LEAKY, 0)
EW_ACT(elu, "Elu", 1, F, init_alpha1, elu_tbl, -1, 1)
EW_ACT(selu, "Selu", 1, F, init_selu, selu_tbl, -1, 1)
EW_ACT(celu, "Celu", 12, F, init_celu, celu_tbl, -1, 1)
EW_ACT(sigmoid, "Sigmoid", 1, F, NULL, sigmoid_tbl, EW_FU_SIGMOID, 1)
EW_ACT(hard_sigmoid, "HardSigmoid", 1, F, init_hsig, hsig_tbl, EW_FU_HARDSIGMOID, 0)
EW_ACT(hard_swish, "HardSwish", 14, F, init_hswish, hswish_tbl, EW_FU_HARDSWISH, 0)
EW_ACT(tanh, "Tanh", 1, F, NULL, tanh_tbl, EW_FU_TANH, 1)
EW_ACT(softplus, "Softplus", 1, F, NULL, softplus_tbl, -1, 1)
EW_ACT(softsign, "Softsign", 1, F, NULL, softsign_tbl, -1, 0)
EW_ACT(thresholded_relu, "ThresholdedRelu", 10, F, init_alpha1, trelu_tbl, -1, 0)
EW_ACT(shrink, "Shrink", 9, CORT_TMASK_NUMERIC, init_shrink, shrink_tbl, -1, 0)
EW_ACT(mish, "Mish", 18, F, NULL, mish_tbl, -1, 1)

/* ---- Clip: bounds from attributes (opset < 11) or optional scalar inputs 1 and 2 ---- */
static inline double ew_clamp_d(double x, double lo, double hi) { x = x < lo ? lo : x; return x > hi ? hi : x; }
static inline int64_t ew_clamp_i(int64_t x, int64_t lo, int64_t hi) { x = x < lo ? lo : x; return x > hi ? hi : x; }
static inline uint64_t ew_clamp_u(uint64_t x, uint64_t lo, uint64_t hi) { x = x < lo ? lo : x; return x > hi ? hi : x; }
#define EW_CLIP_S(T, UT, x) ((T)ew_clamp_i((int64_t)(x), P->lo_i, P->hi_i))
#define EW_CLIP_U(T, UT, x) ((T)ew_clamp_u((uint64_t)(x), P->lo_u, P->hi_u))
EW_MAPS_FLOAT(clip, ew_clamp_d(x, P->lo_f, P->hi_f))
EW_MAPS_SINT(clip, EW_CLIP_S)
EW_MAPS_UINT(clip, EW_CLIP_U)
static const ew_map_fn clip_tbl[EW_NTYPES] = { EW_TBL_FLOAT(clip) EW_TBL_SINT(clip) EW_TBL_UINT(clip) };

static cort_status *init_clip(const cort_node *n, void **st) {
    if (n->opset >= 11) { *st = NULL; return NULL; }
    return ew_state_new(st, cort_attr_float(n, "min", -FLT_MAX), cort_attr_float(n, "max", FLT_MAX), 0, 0, 0);
}

/* Reads bound input i (a one-element tensor of the input's type) if present. */
static cort_status *clip_bound(cort_kernel_ctx *ctx, size_t i, cort_type t, const cort_value **out) {
    *out = NULL;
    if (i >= ctx->n_inputs || !ctx->inputs[i]) return NULL;
    const cort_value *b = ctx->inputs[i];
    char sh[128];
    if (b->kind != CORT_VKIND_TENSOR || b->type != t || b->count != 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu '%s' must be a scalar of the input's type %s, got %s%s", i,
                               ew_input_name(ctx->node, i), cort_type_name(t), cort_type_name(b->type),
                               cort_shape_str(b->shape, b->rank, sh, sizeof sh));
    *out = b;
    return NULL;
}

static cort_status *run_clip(cort_kernel_ctx *ctx) {
    const cort_value *x = NULL, *lo = NULL, *hi = NULL;
    CORT_TRY(ew_input(ctx, 0, &x));
    cort_type t = x->type;
    ew_map_fn fn = ((unsigned)t < EW_NTYPES) ? clip_tbl[t] : NULL;
    if (!fn) return ew_type_error(ctx, 0, t);
    ew_params p;
    memset(&p, 0, sizeof p);
    p.k = ew_f32_best();
    p.lo_f = -INFINITY; p.hi_f = INFINITY;
    p.lo_i = INT64_MIN; p.hi_i = INT64_MAX;
    p.lo_u = 0; p.hi_u = UINT64_MAX;
    if (ctx->opset < 11) {
        const ew_params *s = (const ew_params *)ctx->state;
        if (s) { p.lo_f = s->alpha; p.hi_f = s->beta; }
    } else {
        CORT_TRY(clip_bound(ctx, 1, t, &lo));
        CORT_TRY(clip_bound(ctx, 2, t, &hi));
        if (cort_type_is_float(t)) {
            if (lo) p.lo_f = cort_load_f64(lo->data, t, 0);
            if (hi) p.hi_f = cort_load_f64(hi->data, t, 0);
        } else if (t == CORT_TYPE_UINT64) {
            if (lo) p.lo_u = *(const uint64_t *)lo->data;
            if (hi) p.hi_u = *(const uint64_t *)hi->data;
        } else {
            if (lo) p.lo_i = p.lo_u = (uint64_t)cort_load_i64(lo->data, t, 0);
            if (hi) p.hi_i = p.hi_u = (uint64_t)cort_load_i64(hi->data, t, 0);
        }
    }
    if (t == CORT_TYPE_FLOAT) {
        p.alpha = (float)p.lo_f;   /* float bounds are exact in float (they came from float data) */
        p.beta = (float)p.hi_f;
        p.simd_op = EW_FU_CLIP;
        fn = ew_map_simd_f32;
        p.in_place = 1;
    }
    return ew_run_map(ctx, x, t, fn, &p, EW_GRAIN_CHEAP);
}

const cort_op_def ew_op_clip = { .name = "Clip", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .init = init_clip, .free_state = ew_state_free,
    .infer = cort_infer_same, .run = run_clip };

/* ---- PRelu: y = x < 0 ? slope * x : x, slope broadcast to x ---- */
#define EW_PRELU_S(T, UT, x, y) ((x) < 0 ? (T)((UT)(x) * (UT)(y)) : (x))
#define EW_PRELU_U(T, UT, x, y) ((void)(y), (x))
EW_ROWS_FLOAT(prelu, (x < 0 ? x * y : x))
EW_ROWS_SINT(prelu, EW_PRELU_S)
EW_ROWS_UINT(prelu, EW_PRELU_U)
static const ew_row_fn prelu_tbl[EW_NTYPES] = { EW_TBL_FLOAT(prelu) EW_TBL_SINT(prelu) EW_TBL_UINT(prelu) };

static cort_status *run_prelu(cort_kernel_ctx *ctx) {
    const cort_value *in[2];
    CORT_TRY(ew_input(ctx, 0, &in[0]));
    CORT_TRY(ew_input(ctx, 1, &in[1]));
    cort_type t = in[0]->type;
    ew_row_fn fn = ((unsigned)t < EW_NTYPES) ? prelu_tbl[t] : NULL;
    if (!fn) return ew_type_error(ctx, 0, t);
    if (in[1]->type != t)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s' has type %s, expected %s",
                               ew_input_name(ctx->node, 1), cort_type_name(in[1]->type), cort_type_name(t));
    const int64_t *dims[2] = { in[0]->shape, in[1]->shape };
    size_t ranks[2] = { in[0]->rank, in[1]->rank };
    int64_t chan[CORT_MAX_RANK];
    /* opset < 7: a 1-D slope of size C applies per channel (axis 1) */
    if (ctx->opset < 7 && in[1]->rank == 1 && in[0]->rank >= 2 && in[1]->shape[0] == in[0]->shape[1] &&
        in[1]->shape[0] != in[0]->shape[in[0]->rank - 1]) {
        for (size_t d = 0; d + 1 < in[0]->rank; d++) chan[d] = d == 0 ? in[1]->shape[0] : 1;
        dims[1] = chan;
        ranks[1] = in[0]->rank - 1;
    }
    ew_params p;
    memset(&p, 0, sizeof p);
    cort_value *out = NULL;
    CORT_TRY(ew_run_nary(ctx, 2, in, dims, ranks, NULL, t, fn, &p, EW_GRAIN_CHEAP, &out));
    char a[128], b[128];
    if (out->rank != in[0]->rank || memcmp(out->shape, in[0]->shape, in[0]->rank * sizeof(int64_t)) != 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 '%s' (slope) of shape %s is not broadcastable to X of shape %s",
                               ew_input_name(ctx->node, 1), cort_shape_str(in[1]->shape, in[1]->rank, a, sizeof a),
                               cort_shape_str(in[0]->shape, in[0]->rank, b, sizeof b));
    return NULL;
}

const cort_op_def ew_op_prelu = { .name = "PRelu", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS | CORT_TMASK_INTS, .infer = cort_infer_same, .run = run_prelu };
